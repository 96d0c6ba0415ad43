"""YAML (and so Kubernetes manifests) into position-carrying Nodes.

PyYAML's composer keeps marks for every node; using the libyaml C loader when it
is present keeps a large manifest set fast.

The Nodes are what the real readers construct: merge keys (`<<: *anchor`, `<<: [*a, *b]`)
are applied as PyYAML's SafeLoader, go-yaml and so kubectl and docker compose apply them
(the mapping's own keys win over merged ones, an earlier merge source over a later one),
and a merged or aliased value keeps the position where its text is written (the anchor).
What the Nodes cannot show is kept beside them in a `YamlReading`: the keys a mapping
names twice (each reader has its own verdict on those) and the anchored text that aliases
use in other places (a fix that edits it changes every place).
"""

from __future__ import annotations

import sys

import yaml

from gpulint.formats.errors import ParseError
from gpulint.model import LineIndex, Node, SharedText, Span, place_offsets
from gpulint.record import Frozen, Record, freeze
from gpulint.resources import yaml_loader

_STR = "tag:yaml.org,2002:str"
_SCALAR, _MAPPING, _SEQUENCE = yaml.ScalarNode, yaml.MappingNode, yaml.SequenceNode
_QUOTES = ("'", '"')


_SAFE = yaml_loader()
_MAP, _SEQ = _SAFE.DEFAULT_MAPPING_TAG, _SAFE.DEFAULT_SEQUENCE_TAG


# The scalars the safe loader's resolver gives a tag other than str by a fixed word (its bool,
# null, merge, value and yaml patterns), each also with the one line break the patterns' `$`
# lets through (a `! "yes\n"` scalar is resolved as written); tests/test_yaml_resolve.py
# holds them against PyYAML's own resolver.
_WORDS = {
    **{word: "tag:yaml.org,2002:bool" for word in (
        "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
        "on", "On", "ON", "off", "Off", "OFF")},
    **{word: "tag:yaml.org,2002:null" for word in ("~", "null", "Null", "NULL")},
    "<<": "tag:yaml.org,2002:merge",
    "=": "tag:yaml.org,2002:value",
    **{word: "tag:yaml.org,2002:yaml" for word in ("!", "&", "*")},
}
_WORDS.update({word + "\n": tag for word, tag in _WORDS.items()})
_WORDS[""] = "tag:yaml.org,2002:null"  # the null pattern's empty alternative ("\n" alone starts with no pattern's character)


class _Loader(_SAFE):
    """The safe loader with its tag resolver's per-scalar work cut to a dict look-up (and the
    number patterns for a scalar that starts like a number): the composer asks it for every
    node of every file."""

    # the resolver's patterns that are not a fixed word: ints, floats and timestamps, by the
    # scalar's first character (the safe loader has no resolvers for any first character)
    _numbers = {first: tuple((tag, pattern) for tag, pattern in resolvers if tag not in _WORDS.values())
                for first, resolvers in _SAFE.yaml_implicit_resolvers.items()
                if first is not None and first in tuple("+-.0123456789")}

    def resolve(self, kind, value, implicit):
        if kind is _SCALAR:
            return _scalar_tag(value, implicit)
        # a collection's tag, as the resolver gives it without path resolvers
        if kind is _MAPPING:
            return _MAP
        if kind is _SEQUENCE:
            return _SEQ
        return super().resolve(kind, value, implicit)

    # The composer calls these two around every node to follow path resolvers, which the safe
    # loader has none of: a built-in that takes the same arguments and changes nothing costs
    # the composer a tenth of the Python methods that return at once ({}.get(parent, index)
    # looks `parent`, a node or None, up in an empty dict).
    descend_resolver = staticmethod({}.get)
    ascend_resolver = staticmethod([].clear)


_LOADER = _Loader
_NUMBERS = _Loader._numbers


def _scalar_tag(value: str, implicit: tuple[bool, bool]) -> str:
    """The tag the safe loader's resolver gives an untagged scalar (`implicit`: plain, quoted)."""
    if implicit[0]:
        tag = _WORDS.get(value)
        if tag is not None:
            return tag
        for tag, pattern in _NUMBERS.get(value[:1], ()):
            if pattern.match(value):
                return tag
    return _STR

_TAGS = {
    "tag:yaml.org,2002:int": "int",
    "tag:yaml.org,2002:float": "float",
    "tag:yaml.org,2002:bool": "bool",
    "tag:yaml.org,2002:null": "null",
}
_constructor = yaml.constructor.SafeConstructor()


def _scalar(node: yaml.ScalarNode) -> tuple[object, str]:
    tag = _TAGS.get(node.tag, "str")
    if tag == "str":
        return node.value, tag
    try:
        return _constructor.yaml_constructors[node.tag](_constructor, node), tag
    except Exception:  # an odd scalar is still a value; keep its text
        return node.value, "str"


def _over_budget(node: yaml.Node) -> ParseError:
    return ParseError("invalid YAML: alias expansion over the limit (aliases here expand to "
                      "more nodes than gpulint reads; is this an alias bomb?)",
                      node.start_mark.line + 1, node.start_mark.column + 1)


_MERGE = "tag:yaml.org,2002:merge"  # the tag PyYAML's resolver gives a plain `<<` key
_MERGE_WORDS = tuple(word for word, tag in _WORDS.items() if tag == _MERGE)


class Duplicate(Frozen):
    """A key a mapping names twice: where it is first written, and where again."""

    __slots__ = ("key", "first", "second")

    key: str
    first: Span
    second: Span

    def __init__(self, key: str, first: Span, second: Span) -> None:
        freeze(self, key, first, second)


class YamlReading(Record):
    """What a YAML stream holds besides its values (filled by `parse_yaml_documents`)."""

    __slots__ = ("duplicates", "shared")

    duplicates: list[Duplicate]
    shared: list[SharedText]

    def __init__(self, duplicates: list[Duplicate] | None = None, shared: list[SharedText] | None = None) -> None:
        self.duplicates = [] if duplicates is None else duplicates
        self.shared = [] if shared is None else shared


def convert(root: yaml.Node, index: LineIndex, reading: YamlReading | None = None) -> Node:
    """The composed tree as Nodes, positions kept as places (offsets) until asked for,
    merge keys applied; duplicate keys are noted in `reading`.

    Aliases share one composed node, so a few hundred bytes of nested aliases ("billion
    laughs") expand to billions of nodes: a document may expand to at most twice as many
    nodes as it has characters (a file without aliases has fewer nodes than characters)."""
    left = max(50_000, 2 * len(index.text))
    mapping, sequence, scalar = yaml.MappingNode, yaml.SequenceNode, yaml.ScalarNode
    reading = reading if reading is not None else YamlReading()
    intern = sys.intern
    new = object.__new__
    noted: set[int] = set()  # the later keys already noted (an aliased mapping is built again)

    def duplicate(key: str, first: yaml.Node, second: yaml.Node) -> None:
        if second.start_mark.index not in noted:
            noted.add(second.start_mark.index)
            reading.duplicates.append(Duplicate(key, index.span(first.start_mark.index, first.end_mark.index),
                                                index.span(second.start_mark.index, second.end_mark.index)))

    def sources(value: yaml.Node) -> list[yaml.Node]:
        """The mappings a merge key's value names, earliest first (an alias is the very
        node it refers to); anything else is an error for every reader."""
        items = value.value if type(value) is sequence else [value]
        if any(type(item) is not mapping for item in items):
            raise ParseError("invalid YAML: map merge requires a mapping or a sequence of mappings "
                             "as the value (`<<: *anchor` or `<<: [*a, *b]`)",
                             value.start_mark.line + 1, value.start_mark.column + 1)
        return items

    # Most nodes are plain string scalars: the loops below build those themselves, as `build`
    # would (the same budget, depth and order), and set the Node's fields one by one on a bare
    # instance (`new(Node)`), which takes half the time of calling Node(...) (its fields are
    # model.Node's __slots__, all of them set). Keys and string values are interned: a tree
    # kept for the whole run repeats the same few hundred keys (and many values) thousands of
    # times, and an interned key is found by identity.
    def build_mapping(node: yaml.MappingNode, depth: int) -> dict[str, Node]:
        nonlocal left
        own: dict[str, Node] = {}
        keys: dict[str, yaml.Node] = {}
        merges: list[yaml.Node] = []
        merge_key = None
        inline = depth < 200  # a child (at depth + 1) past 200 is `build`'s null
        for key_node, value_node in node.value:
            if type(key_node) is scalar:
                if key_node.tag == _MERGE:
                    if merge_key is not None:
                        duplicate("<<", merge_key, key_node)
                    merge_key = key_node
                    merges.extend(sources(value_node))
                    continue
                key = intern(str(key_node.value))
            else:
                key = str(key_node)
            if key in keys:
                duplicate(key, keys[key], key_node)
            keys[key] = key_node
            # the key's place (`model.place(start, end, trim=True)`, written out: every key pays it)
            key_span = key_node.start_mark.index << 33 | key_node.end_mark.index << 1 | 1
            if inline and type(value_node) is scalar and value_node.tag == _STR:
                left -= 1
                if left < 0:
                    raise _over_budget(value_node)
                own[key] = child = new(Node)  # Node(...) written out, see `new` above
                child.value = intern(value_node.value)
                child._span = value_node.start_mark.index << 33 | value_node.end_mark.index << 1 | 1
                child._key_span = key_span
                child.tag = "str"
                child.quoted = value_node.style in _QUOTES
                child._index = index
            else:
                own[key] = build(value_node, key_span, depth + 1)
        if not merges:
            return own
        # the mapping's own keys first, then what the merge sources add, earlier sources
        # winning (a new entry written into this mapping goes into its own text)
        out = dict(own)
        for source in merges:
            for key, child in build(source, None, depth + 1).value.items():
                out.setdefault(key, child)
        return out

    def build_sequence(node: yaml.SequenceNode, depth: int) -> list[Node]:
        nonlocal left
        items: list[Node] = []
        inline = depth < 200
        for item in node.value:
            if inline and type(item) is scalar and item.tag == _STR:
                left -= 1
                if left < 0:
                    raise _over_budget(item)
                child = new(Node)  # Node(...) written out, see `new` above
                child.value = intern(item.value)
                child._span = item.start_mark.index << 33 | item.end_mark.index << 1 | 1
                child._key_span = None
                child.tag = "str"
                child.quoted = item.style in _QUOTES
                child._index = index
                items.append(child)
            else:
                items.append(build(item, None, depth + 1))
        return items

    def build(node: yaml.Node, key_span: int | None, depth: int) -> Node:
        nonlocal left
        left -= 1
        if left < 0:
            raise _over_budget(node)
        span = node.start_mark.index << 33 | node.end_mark.index << 1 | 1  # as a key's place
        if depth > 200:  # recursive aliases
            return Node(None, span, key_span, "null", False, index)
        kind = type(node)
        if kind is scalar:
            if node.tag == _STR:  # most scalars: nothing to construct
                return Node(intern(node.value), span, key_span, "str", node.style in _QUOTES, index)
            value, tag = _scalar(node)
            return Node(value, span, key_span, tag, node.style in _QUOTES, index)
        if kind is mapping:
            return Node(build_mapping(node, depth), span, key_span, "map", False, index)
        return Node(build_sequence(node, depth), span, key_span, "seq", False, index)

    try:
        return build(root, None, 0)
    finally:
        # the two builders call each other through their closures, a cycle that would hold
        # the reading and the line index until the cycle collector ran: emptied here, they are
        # freed by reference counting
        del build, build_mapping, build_sequence


def _shared(text: str) -> list[SharedText]:
    """The anchored nodes of a stream that aliases use, with where each alias is written
    (from the parser's events: the composed tree no longer shows the aliases)."""
    anchors: dict[str, list] = {}  # name -> [start, end, alias offsets], the latest definition
    found: list[list] = []
    open_nodes: list[list | None] = []
    for event in yaml.parse(text, Loader=_LOADER):
        kind = type(event)
        if kind is yaml.AliasEvent:
            target = anchors.get(event.anchor)
            if target is not None:
                if not target[3]:
                    found.append(target)
                target[3].append(event.start_mark.index)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            entry = [event.anchor, event.start_mark.index, -1, []] if event.anchor else None
            if entry is not None:
                anchors[event.anchor] = entry
            open_nodes.append(entry)
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            entry = open_nodes.pop()
            if entry is not None:
                entry[2] = event.end_mark.index
        elif kind is yaml.ScalarEvent and event.anchor:
            anchors[event.anchor] = [event.anchor, event.start_mark.index, event.end_mark.index, []]
        elif kind is yaml.DocumentStartEvent:
            anchors = {}  # an anchor does not reach past its document
    out = []
    for name, start, end, uses in found:
        end = max(start + 1, len(text[start:end].rstrip()) + start)
        out.append(SharedText(name, start, end, tuple(uses)))
    return out


# Deeper than this, a node is read as null (`convert`: the depth recursive aliases reach).
_DEPTH = 200


class _Unusual(Exception):
    """A stream `_built` leaves to the composer and `convert`: anchors or aliases, a merge
    key, a key that is no scalar, or nesting deeper than `_DEPTH`."""


def _built(text: str, index: LineIndex, reading: YamlReading | None) -> list[Node | None]:
    """The documents of a stream as `convert` builds them, built from the parser's events
    without composing them first: a composed node and its two marks take twice the memory of
    the Node made from it, so a 170 KB spec held both at once (8 MB), and composing took half
    the time. Raises _Unusual for what only the composer reads (aliases share nodes, merge
    keys copy them); positions, tags, quoting, duplicate keys and errors are the composer's."""
    loader = _LOADER(text)
    try:
        return _from_events(loader.get_event, index, reading)
    finally:
        loader.dispose()


def _from_events(get, index: LineIndex, reading: YamlReading | None) -> list[Node | None]:
    new = object.__new__
    intern = sys.intern
    scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
    mapping_start, sequence_start = yaml.MappingStartEvent, yaml.SequenceStartEvent
    mapping_end, sequence_end = yaml.MappingEndEvent, yaml.SequenceEndEvent
    stream_end = yaml.StreamEndEvent
    words, numbers = _WORDS, _NUMBERS
    docs: list[Node | None] = []
    open_nodes: list[tuple] = []  # (node, the outer value, its key waiting for a value, its key's place)
    value = None  # the innermost open collection's value (a dict or list); None at a document's top
    key = None  # in a mapping: the key read, whose value comes next
    key_place = 0
    while True:
        event = get()
        kind = type(event)
        if kind is scalar_event:
            if event.anchor is not None:
                raise _Unusual
            tag = event.tag
            # the place of a key and of a scalar (`model.place(start, end, trim=True)`, written out)
            place = event.start_mark.index << 33 | event.end_mark.index << 1 | 1
            if key is None and value.__class__ is dict:  # a key: its tag matters only for a merge key
                if tag == _MERGE or (tag is None or tag == "!") and event.implicit[0] and event.value in _MERGE_WORDS:
                    raise _Unusual
                key, key_place = intern(event.value), place
                if reading is not None and key in value:
                    first = value[key]._key_span
                    reading.duplicates.append(Duplicate(
                        key, index.span(*place_offsets(first)),
                        index.span(event.start_mark.index, event.end_mark.index)))
                continue
            if len(open_nodes) >= _DEPTH:
                raise _Unusual
            if tag is None or tag == "!":  # `_scalar_tag`, written out: once per scalar of a run
                text = event.value
                tag = _STR
                if event.implicit[0]:
                    tag = words.get(text)
                    if tag is None:
                        tag = _STR
                        for number, pattern in numbers.get(text[:1], ()):
                            if pattern.match(text):
                                tag = number
                                break
            node = new(Node)  # Node(...) written out, as `convert` does
            if tag == _STR:
                node.value, node.tag = intern(event.value), "str"
            else:
                node.value, node.tag = _scalar(yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark,
                                                               event.style))
            node._span = place
            node.quoted = event.style in _QUOTES
            node._index = index
        elif kind is mapping_start or kind is sequence_start:
            if event.anchor is not None or (key is None and value.__class__ is dict) or len(open_nodes) >= _DEPTH:
                raise _Unusual
            node = new(Node)
            node.value = {} if kind is mapping_start else []
            node._span = event.start_mark.index  # its end comes with its end event
            node.tag = "map" if kind is mapping_start else "seq"
            node.quoted = False
            node._index = index
        elif kind is mapping_end or kind is sequence_end:
            node, value, key, key_place = open_nodes.pop()
            node._span = node._span << 33 | event.end_mark.index << 1 | 1
            continue
        elif kind is alias_event:
            raise _Unusual
        elif kind is stream_end:
            return docs
        else:  # the stream's and documents' starts and ends
            continue
        # the node read (a scalar, or a collection opened) goes in its place
        if value is None:
            node._key_span = None
            docs.append(node)
        elif key is None:
            node._key_span = None
            value.append(node)
        else:
            node._key_span = key_place
            value[key] = node
            key = None
        if kind is not scalar_event:
            open_nodes.append((node, value, key, key_place))
            value, key = node.value, None


def parse_yaml_documents(text: str, index: LineIndex, reading: YamlReading | None = None) -> list[Node | None]:
    """Every document of a YAML stream; empty documents are None. `reading`, when given,
    receives the duplicate keys and the anchored text aliases share."""
    try:
        noted = len(reading.duplicates) if reading is not None else 0
        try:
            docs = _built(text, index, reading)
        except _Unusual:
            if reading is not None:  # read again whole
                del reading.duplicates[noted:]
            docs = [None if root is None else convert(root, index, reading)
                    for root in yaml.compose_all(text, Loader=_LOADER)]
        if reading is not None and "*" in text and "&" in text:  # an alias needs an anchor
            reading.shared = _shared(text)
        return docs
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if mark is None:
            raise ParseError(f"invalid YAML: {problem}") from None
        raise ParseError(f"invalid YAML: {problem}", mark.line + 1, mark.column + 1) from None
    except yaml.YAMLError as exc:
        raise ParseError(f"invalid YAML: {exc}") from None

"""Reading a file and parsing it into a Document of its kind.

A file that does not parse becomes a GL001 finding at the parser's position (a
templated one, GL004) and the run goes on.
"""

from __future__ import annotations

from gpulint.discover import kind_by_content, kind_by_name, may_need_content, strip_template_suffix
from gpulint.model import Document, Finding, Span
from gpulint.parse.errors import ParseError
from gpulint.template import has_template_syntax, neutralise


# The third-party parsers gpulint reads files with, by module: the pip package to install.
PARSER_PACKAGES = {"dockerfile_parse": "dockerfile-parse", "yaml": "PyYAML"}


class ParserMissing(Exception):
    """The package that parses this kind of file is not installed."""

    def __init__(self, package: str) -> None:
        super().__init__(package)
        self.package = package


def decode(data: bytes) -> tuple[str, bool, bool]:
    """Text with LF line ends, and whether the file had a BOM and CRLF line ends."""
    text = data.decode("utf-8")
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    crlf: bool | tuple[str, ...] = "\r\n" in text
    if crlf:
        if "\n" in text.replace("\r\n", ""):  # mixed: remember each line's own end
            crlf = tuple(text.splitlines(keepends=True))
        text = text.replace("\r\n", "\n")
    return text, bom, crlf


def encode(doc: Document, text: str) -> bytes:
    if isinstance(doc.crlf, tuple):
        text = _keep_line_ends(doc.text, doc.crlf, text)
    elif doc.crlf:
        text = text.replace("\n", "\r\n")
    return (("\ufeff" if doc.bom else "") + text).encode("utf-8")


def _keep_line_ends(old: str, raw_lines: tuple[str, ...], new: str) -> str:
    """`new` (LF ends) written with the line ends of the original file: unchanged lines
    keep theirs, changed and added lines take the end of the line they replace or follow."""
    import difflib

    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend(raw_lines[i1:i2])
            continue
        near = raw_lines[min(i1, len(raw_lines) - 1)] if raw_lines else "\n"
        end = "\r\n" if near.endswith("\r\n") else "\n"
        out.extend(line[:-1] + end if line.endswith("\n") else line for line in new_lines[j1:j2])
    return "".join(out)


def classify(name: str, text: str | None) -> str | None:
    kind = kind_by_name(name)
    if kind is None and text is not None and (may_need_content(name) or "." not in name):
        kind = kind_by_content(name, text)
    return kind


def read(path, kind: str) -> Document | None:
    """A file outside the linted set, read and parsed as `kind` (a Dockerfile that
    `[tool.gpulint.images]` names); None when it cannot be read or does not parse."""
    import os

    from gpulint.discover import MAX_BYTES, display_path

    try:
        if os.path.getsize(path) > MAX_BYTES:
            return None
        with open(path, "rb") as handle:
            text, bom, crlf = decode(handle.read())
    except (OSError, UnicodeDecodeError):
        return None
    _, templated = strip_template_suffix(os.path.basename(path))
    doc = Document(display_path(path), os.path.abspath(path), kind, text, templated=templated, bom=bom, crlf=crlf)
    try:
        return doc if parse(doc) is None else None
    except ParserMissing:
        return None


def _parse_error(doc: Document, exc: ParseError, code: str, message: str) -> Finding:
    span = Span.point(exc.line, exc.column)
    return Finding(code=code, slug="", severity="", path=doc.path, span=span, message=message)


def parse(doc: Document) -> Finding | None:
    """Fill doc.tree; return the GL001/GL004 finding when the file does not parse."""
    text = doc.text
    templated = doc.templated or (doc.kind in ("kubernetes", "containerd", "nvidia-toolkit")
                                 and has_template_syntax(text))
    doc.templated = templated
    if templated:
        text = neutralise(text)
    try:
        doc.tree = parse_text(doc.kind, text, doc)
    except ParseError as exc:
        if templated:
            return _parse_error(doc, exc, "GL004",
                                f"templated file not checked: it does not parse once template "
                                f"expressions are set aside ({exc.message})")
        return _parse_error(doc, exc, "GL001", exc.message)
    except ModuleNotFoundError as exc:
        if exc.name not in PARSER_PACKAGES:
            raise
        raise ParserMissing(PARSER_PACKAGES[exc.name]) from None
    except RecursionError:
        return _parse_error(doc, ParseError("nested too deeply"), "GL001",
                            "the file is nested too deeply to check")
    except (ValueError, OverflowError, MemoryError) as exc:  # a parser's own limit, past its checks
        return _parse_error(doc, ParseError(str(exc)), "GL001",
                            f"the file could not be read: {type(exc).__name__}: {str(exc)[:200]}")
    doc.parsed = doc.tree is not None
    incomplete = [] if templated else doc.cache.get("k8s.incomplete", ())
    for node in incomplete[:1]:  # the other objects are still checked
        missing, present = (("apiVersion", "kind") if node.get("apiVersion") is None
                            else ("kind", "apiVersion"))
        return Finding("GL001", "", "", doc.path, node.get(present).key_span or node.span,
                       f"a Kubernetes object without `{missing}`: kubectl rejects it "
                       f"(`{missing} not set`) and gpulint cannot check it")
    return None


def parse_text(kind: str, text: str, doc: Document):
    index = doc.index
    if kind == "containerd":
        from gpulint.parse.tomlpos import parse_toml

        return parse_toml(text, index)
    if kind == "daemon-json":
        from gpulint.parse.jsonpos import parse_json

        tree = parse_json(text, index)
        if not tree.is_map:
            raise ParseError("daemon.json must hold one JSON object", tree.span.line, tree.span.column)
        return tree
    if kind == "dockerfile":
        from gpulint.parse.dockerfile import parse_dockerfile

        return parse_dockerfile(text, index)
    if kind == "kubernetes":
        return _kubernetes(text, doc)
    if kind == "nvidia-toolkit":
        from gpulint.parse.tomlpos import parse_toml

        return parse_toml(text, index)
    if kind == "cdi":
        return _cdi(text, doc)
    if kind == "gpu-operator-values":
        from gpulint.parse.yamlpos import parse_yaml_documents

        roots = [r for r in parse_yaml_documents(text, doc.index) if r is not None]
        if not roots or not roots[0].is_map:
            raise ParseError("GPU Operator values must be a YAML mapping")
        return roots[0]
    if kind == "compose":
        from gpulint.parse.yamlpos import parse_yaml_documents

        roots = [r for r in parse_yaml_documents(text, doc.index) if r is not None]
        if len(roots) > 1 or (roots and not roots[0].is_map):
            raise ParseError("a Compose file must hold one YAML mapping")
        return roots[0] if roots else None
    if kind == "commands":
        from gpulint.parse.commands import parse_commands

        return parse_commands(doc, text)
    raise ValueError(f"unknown kind {kind}")


def _cdi(text: str, doc: Document):
    if text.lstrip().startswith("{"):
        from gpulint.parse.jsonpos import parse_json

        roots = [parse_json(text, doc.index)]
    else:
        from gpulint.parse.yamlpos import parse_yaml_documents

        roots = [r for r in parse_yaml_documents(text, doc.index) if r is not None]
    if len(roots) != 1 or not roots[0].is_map:
        raise ParseError("a CDI spec must hold one mapping")
    return roots[0]


def _kubernetes(text: str, doc: Document) -> list:
    stripped = text.lstrip()
    base, _ = strip_template_suffix(doc.path)
    if base.lower().endswith(".json") or (stripped.startswith("{") and not base.lower().endswith((".yaml", ".yml"))):
        from gpulint.parse.jsonpos import parse_json

        roots = [parse_json(text, doc.index)]
    else:
        from gpulint.parse.yamlpos import parse_yaml_documents

        roots = parse_yaml_documents(text, doc.index)
    objects: list = []
    incomplete: list = []
    for root in roots:
        _collect_objects(root, objects, incomplete)
    doc.cache["k8s.incomplete"] = incomplete
    return objects


def _collect_objects(node, out: list, incomplete: list) -> None:
    """Kubernetes objects of a document; the items of `List` kinds are flattened.
    Mappings with only one of `apiVersion` and `kind` go to `incomplete`."""
    if node is None or not node.is_map:
        return
    if (node.get("apiVersion") is None) != (node.get("kind") is None):
        incomplete.append(node)
        return
    kind = node.get("kind")
    items = node.get("items")
    if kind is not None and str(kind.value).endswith("List") and items is not None and items.is_seq:
        for item in items.value:
            _collect_objects(item, out, incomplete)
        return
    if node.get("apiVersion") is not None and kind is not None:
        out.append(node)

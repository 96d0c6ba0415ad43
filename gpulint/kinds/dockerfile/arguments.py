"""GL001: instructions BuildKit refuses for their arguments (too few, too many, or not of
the form the instruction takes), so that `docker build` reads nothing of the file.

BuildKit reads an instruction in two steps, and both refuse a Dockerfile:

- its parser (moby/buildkit frontend/dockerfile/parser): `splitCommand` takes the leading
  `--name=value` flags off (`extractBuilderFlags`, split_command.go), and the line parser
  the `dispatch` table of parser.go names for the keyword splits the rest into arguments
  (line_parsers.go). Two of them refuse a line themselves: `parseNameVal` (ENV, LABEL:
  "ENV must have two arguments", "Syntax error - can't find = in ...") and `parseJSON` (a
  JSON array of other things than strings). ONBUILD's trigger is read by the same parser
  (`parseSubCommand`), so these refuse an `ONBUILD ENV A` too.
- `instructions.Parse` (frontend/dockerfile/instructions/parse.go): one `parseXxx` function
  per keyword counts those arguments (`parseUser`: "USER requires exactly one argument",
  `parseCopy`: "COPY requires at least two arguments ...", `parseBuildStageName`: "FROM
  requires either one or three arguments", ...), and BuildKit prints the first refusal as
  "dockerfile parse error on line N: <message>" (`parseError.Error`). ONBUILD's trigger is
  not counted there (`parseOnBuild` keeps it as text: it is read when a build uses the
  image), only named: no ONBUILD, FROM or MAINTAINER trigger.

RUN, CMD and ENTRYPOINT are counted by neither: `RUN`, `CMD` and `ENTRYPOINT` with no
arguments are accepted (`parseRun`, `parseCmd`, `parseEntrypoint`), and so is `ARG a b=2`
(several names, `parseArg`). Heredoc bodies are no arguments; the `<<EOF` word that opens
one is (`COPY <<EOF /dst` has two).

ARGUMENTS below is that table: for each keyword, the line parser that splits its arguments
and the count (or form) its `parseXxx` function requires.
"""

from __future__ import annotations

from gpulint.kinds.dockerfile.parse import Instruction
from gpulint.model import Document
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding

# keyword: (line parser in parser.go's `dispatch` table, what instructions/parse.go requires)
ARGUMENTS: dict[str, tuple[str, str]] = {
    "ADD": ("maybe-json-list", "at-least-two"),        # parseMaybeJSONToList, parseAdd
    "ARG": ("name-or-name-value", "at-least-one"),     # parseNameOrNameVal, parseArg
    "CMD": ("maybe-json", "any"),                      # parseMaybeJSON, parseCmd
    "COPY": ("maybe-json-list", "at-least-two"),       # parseMaybeJSONToList, parseCopy
    "ENTRYPOINT": ("maybe-json", "any"),               # parseMaybeJSON, parseEntrypoint
    "ENV": ("name-value", "at-least-one"),             # parseEnv (parseNameVal), parseKvps
    "EXPOSE": ("whitespace", "at-least-one"),          # parseStringsWhitespaceDelimited, parseExpose
    "FROM": ("whitespace", "one-or-three"),            # parseStringsWhitespaceDelimited, parseBuildStageName
    "HEALTHCHECK": ("health", "healthcheck"),          # parseHealthConfig, parseHealthcheck
    "LABEL": ("name-value", "at-least-one"),           # parseLabel (parseNameVal), parseKvps
    "MAINTAINER": ("string", "exactly-one"),           # parseString, parseMaintainer
    "ONBUILD": ("sub-command", "onbuild"),             # parseSubCommand, parseOnBuild
    "RUN": ("maybe-json", "any"),                      # parseMaybeJSON, parseRun
    "SHELL": ("maybe-json", "json-at-least-one"),      # parseMaybeJSON, parseShell
    "STOPSIGNAL": ("string", "exactly-one"),           # parseString, parseStopSignal
    "USER": ("string", "exactly-one"),                 # parseString, parseUser
    "VOLUME": ("maybe-json-list", "volumes"),          # parseMaybeJSONToList, parseVolume
    "WORKDIR": ("string", "exactly-one"),              # parseString, parseWorkdir
}

_ANY_FORM = ("maybe-json", "any")

# instructions/parse.go's messages (errAtLeastOneArgument, errExactlyOneArgument, ...)
AT_LEAST_ONE = "{} requires at least one argument"
EXACTLY_ONE = "{} requires exactly one argument"
NO_DESTINATION = ("{} requires at least two arguments, but only one was provided. "
                  "Destination could not be determined")
BLANK_NAMES = "{} names can not be blank"

_WHITESPACE = lazy(r"[\t\v\f\r ]+")  # parser.go's reWhitespace


class _NotStrings(Exception):
    """parseJSON: "when using JSON array syntax, arrays must be comprised of strings only"."""


def _go_space(ch: str) -> bool:
    return ch.isspace()


def after_flags(line: str, escape: str) -> str:
    """What `extractBuilderFlags` leaves of an instruction's arguments once it has taken the
    leading `--flag` words off (quotes and the escape character group a flag's value; a
    word `--` ends the flags), trimmed as `splitCommand` trims it."""
    if not line.lstrip().startswith("--"):  # no flags, as most instructions have (lstrip: _go_space's)
        return line.strip()
    n = len(line)
    pos = 0
    while pos < n:
        while pos < n and _go_space(line[pos]):
            pos += 1
        if pos == n:
            return ""
        if not line.startswith("--", pos):
            return line[pos:].strip()
        word: list[str] = []
        quote = ""
        while pos < n:
            ch = line[pos]
            if quote:
                if ch == quote:
                    quote = ""
                elif ch == escape:
                    if pos + 1 == n:
                        quote = ""
                        pos += 1
                        continue
                    pos += 1
                    ch = line[pos]
                    word.append(ch)
                else:
                    word.append(ch)
                pos += 1
                continue
            if _go_space(ch):
                break
            if ch in "'\"":
                quote = ch
            elif ch == escape:
                if pos + 1 < n:
                    pos += 1
                    word.append(line[pos])
            else:
                word.append(ch)
            pos += 1
        if quote == "" and pos < n and "".join(word) == "--":
            return line[pos:].strip()
    return ""


def words(rest: str, escape: str) -> list[str]:
    """parseWords: space-delimited words, quotes kept and grouping, the escape character
    keeping the character after it (both kept)."""
    if escape not in rest and "'" not in rest and '"' not in rest:
        return rest.split()  # nothing groups: the runs of what is not space (as _go_space tells)
    out: list[str] = []
    word: list[str] = []
    blank_ok = False
    quote = ""
    in_word = False
    n = len(rest)
    pos = 0
    while pos < n:
        ch = rest[pos]
        if not in_word:
            if _go_space(ch):
                pos += 1
                continue
            in_word = True
        if quote:
            if ch == quote:
                quote = ""
            elif ch == escape and quote != "'":
                if pos + 1 == n:
                    pos += 1
                    continue
                word.append(ch)
                pos += 1
                ch = rest[pos]
            word.append(ch)
            pos += 1
            continue
        if _go_space(ch):
            if blank_ok or word:
                out.append("".join(word))
            word, blank_ok, in_word = [], False, False
            pos += 1
            continue
        if ch in "'\"":
            quote = ch
            blank_ok = True
        if ch == escape:
            if pos + 1 == n:
                pos += 1
                continue
            word.append(ch)
            pos += 1
            ch = rest[pos]
        word.append(ch)
        pos += 1
    if in_word and (blank_ok or word):
        out.append("".join(word))
    return out


def _no_constant(name: str):
    raise ValueError(name)  # Go's encoding/json reads no NaN or Infinity


def json_array(rest: str) -> list[str] | None:
    """parseJSON: the strings of a JSON array (None when the text is no JSON array, which
    the line parsers then read otherwise); raises _NotStrings for an array of other things."""
    rest = rest.lstrip()
    if not rest.startswith("["):
        return None
    import json  # here: a Dockerfile with no JSON form imports none at start-up

    try:
        value = json.loads(rest, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, list):
        return None
    if not all(isinstance(v, str) for v in value):
        raise _NotStrings
    return value


def _whitespace(rest: str) -> list[str]:
    return [w for w in _WHITESPACE.split(rest) if w] if rest else []


def _go_quote(text: str) -> str:
    import json

    return json.dumps(text, ensure_ascii=False)


class Refusal(Exception):
    """BuildKit's message; `parser`: its parser refuses the line (else instructions.Parse)."""

    def __init__(self, message: str, parser: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.parser = parser


def _line_parser(keyword: str, rest: str, escape: str) -> tuple[list[str], bool]:
    """(arguments, JSON form) as the keyword's line parser in parser.go's dispatch table
    splits `rest` (the arguments after the flags); raises Refusal where it refuses them."""
    reader = ARGUMENTS[keyword][0]
    try:
        if reader == "string":
            return ([rest] if rest else []), False
        if reader == "whitespace":
            return _whitespace(rest), False
        if reader == "name-or-name-value":
            return words(rest, escape), False
        if reader == "maybe-json":
            if not rest:
                return [], False
            array = json_array(rest)
            return (array, True) if array is not None else ([rest], False)
        if reader == "maybe-json-list":
            array = json_array(rest)
            return (array, True) if array is not None else (_whitespace(rest), False)
        if reader == "health":
            cut = next((i for i, c in enumerate(rest) if c.isspace()), len(rest))
            typ, command = rest[:cut], rest[cut:].lstrip()
            if not typ:
                return [], False
            array = json_array(command) if command else None
            if array is not None:
                return [typ, *array], True
            return [typ] + ([command] if command else []), False
        if reader == "name-value":
            found = words(rest, escape)
            if not found:
                return [], False
            if "=" not in found[0]:
                if len(_WHITESPACE.split(rest, 1)) < 2:
                    raise Refusal(f"{keyword} must have two arguments", parser=True)
                name, value = _WHITESPACE.split(rest, 1)
                return [name, value, ""], False
            out = []
            for word in found:
                if "=" not in word:
                    raise Refusal(f"Syntax error - can't find = in {_go_quote(word)}. "
                                  f"Must be of the form: name=value", parser=True)
                out += [*word.split("=", 1), "="]
            return out, False
    except _NotStrings:
        raise Refusal("when using JSON array syntax, arrays must be comprised of strings only",
                      parser=True) from None
    return ([rest] if rest else []), False  # sub-command: read by refusal()


def _split(line: str, escape: str) -> tuple[str, str]:
    """splitCommand: the keyword as written and what the flags leave of the arguments."""
    parts = _WHITESPACE.split(line.strip(), 1)
    return parts[0], (after_flags(parts[1], escape) if len(parts) == 2 else "")


def split_arguments(keyword: str, args_text: str, escape: str = "\\") -> tuple[list[str], bool]:
    """(arguments, JSON form) of an instruction as BuildKit's parser hands them on (the flags
    taken off; ENV and LABEL: name, value, separator for each pair); raises Refusal where the
    parser refuses them."""
    return _line_parser(keyword.upper(), after_flags(args_text, escape), escape)


def refusal(keyword: str, args_text: str, escape: str = "\\") -> tuple[str, bool] | None:
    """BuildKit's refusal of an instruction for its arguments (`args_text`: what follows the
    keyword, continuations joined, no heredoc bodies): (its message, whether its parser
    refuses the line rather than instructions.Parse), or None."""
    keyword = keyword.upper()
    form = ARGUMENTS.get(keyword)
    if form is None:
        return None
    if form == _ANY_FORM and "[" not in args_text:
        return None  # RUN, CMD, ENTRYPOINT: only a JSON array of other things than strings is refused
    rest = after_flags(args_text, escape)
    try:
        if keyword == "ONBUILD":
            if not rest:
                raise Refusal(AT_LEAST_ONE.format("ONBUILD"))
            trigger, inner = _split(rest, escape)
            if trigger.upper() in ARGUMENTS and trigger.upper() != "ONBUILD":
                _line_parser(trigger.upper(), inner, escape)  # the parser reads the trigger
            if trigger.upper() == "ONBUILD":
                raise Refusal("Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed")
            if trigger.upper() in ("MAINTAINER", "FROM"):
                raise Refusal(f"{trigger.upper()} isn't allowed as an ONBUILD trigger")
            return None
        args, as_json = _line_parser(keyword, rest, escape)
        _count(keyword, args, as_json)
    except Refusal as exc:  # plain data out: the exception's traceback holds the frames
        return exc.message, exc.parser
    return None


def _count(keyword: str, args: list[str], as_json: bool) -> None:
    """What instructions/parse.go's parseXxx function for the keyword requires."""
    rule = ARGUMENTS[keyword][1]
    if rule == "any":
        return
    if rule == "at-least-one":
        if not args:
            raise Refusal(AT_LEAST_ONE.format(keyword))
        if keyword in ("ENV", "LABEL") and any(not args[i] for i in range(0, len(args), 3)):
            raise Refusal(BLANK_NAMES.format(keyword))  # parseKvps
        if keyword == "ARG" and any(a.startswith("=") for a in args):
            raise Refusal(BLANK_NAMES.format(keyword))  # parseArg
    elif rule == "exactly-one":
        if len(args) != 1:
            raise Refusal(EXACTLY_ONE.format(keyword))
    elif rule == "at-least-two":
        if len(args) < 2:
            raise Refusal(NO_DESTINATION.format(keyword))
    elif rule == "one-or-three":
        if not (len(args) == 1 or (len(args) == 3 and args[1].lower() == "as")):
            raise Refusal("FROM requires either one or three arguments")
    elif rule == "volumes":
        if not args:
            raise Refusal(AT_LEAST_ONE.format(keyword))
        if any(not a.strip() for a in args):
            raise Refusal("VOLUME specified can not be an empty string")
    elif rule == "json-at-least-one":
        if not args:  # `SHELL` and `SHELL []`
            raise Refusal(AT_LEAST_ONE.format(keyword))
        if not as_json:
            raise Refusal(f"{keyword} requires the arguments to be in JSON form")
    elif rule == "healthcheck":
        if not args:
            raise Refusal(AT_LEAST_ONE.format(keyword))
        typ = args[0].upper()
        if typ == "NONE":
            if len(args) > 1:
                raise Refusal("HEALTHCHECK NONE takes no arguments")
        elif typ == "CMD":
            if len(args) == 1:
                raise Refusal("Missing command after HEALTHCHECK CMD")
        else:
            raise Refusal(f"Unknown type {_go_quote(args[0].upper())} in HEALTHCHECK (try CMD)")


def arguments_text(ins: Instruction) -> str:
    """The instruction's arguments as BuildKit's parser has them: without heredoc bodies."""
    value = ins.value
    if ins.heredocs:
        value = value[:len(value) - sum(len(b) + 1 for b in ins.heredocs)]
    return value


@check("GL001", kinds=("dockerfile",))
def refused_arguments(doc: Document, ctx: Context):
    """Each instruction BuildKit refuses for its arguments, at its keyword."""
    if doc.templated:
        return
    df = doc.tree
    text = doc.text
    for ins in df.instructions:
        found = refusal(ins.keyword, arguments_text(ins), df.escape)
        if found is None:
            continue
        lead = len(text[ins.start:ins.end]) - len(text[ins.start:ins.end].lstrip())
        start = ins.start + lead
        end = start
        while end < ins.end and not text[end].isspace():
            end += 1
        message, by_parser = found
        if by_parser:
            said = f"BuildKit's parser refuses the file: \"{message}\""
        else:
            said = (f"BuildKit refuses the file: \"dockerfile parse error on line {ins.line}: "
                    f"{message}\"")
        yield finding(doc, "GL001", doc.index.span(start, end),
                      f"{said}; `docker build` reads none of it")

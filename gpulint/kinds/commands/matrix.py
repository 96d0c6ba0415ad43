"""CI job matrices expanded into their combinations, and the text of a job with one
combination's values in place.

GitHub Actions (`jobs.<id>.strategy.matrix`): the axes' product, less the `exclude`
entries that match, then each `include` entry added to every combination whose axis
values it matches (its other keys added or overwriting ones an earlier entry added), or
made a combination of its own where it matches none. `${{ matrix.x }}` is replaced
before the shell reads a step, wherever it is written (a key the combination lacks
reads as the empty string, a YAML number as the number GitHub reads).

GitLab CI (`<job>.parallel.matrix`): a list of mappings, each the product of its
values (a string or a list of strings); the runner exports each combination's
variables, which `image:`/`services:` and the shell read as `$VAR` or `${VAR}` (the
shell also as `${VAR:-default}`).

A value is put in only where it stays what the shell would read: one plain word, or
plain words where the shell splits it. A matrix written as an expression
(`${{ fromJSON(...) }}`), or larger than the CI service runs, is not expanded:
`Matrix.unknown` says why.
"""

from __future__ import annotations

import itertools
import re

from gpulint.model import Node
from gpulint.record import Frozen, freeze, replace
from gpulint.regex import lazy

GITHUB_LIMIT = 256  # jobs one GitHub Actions matrix may generate
GITLAB_LIMIT = 200  # jobs one GitLab `parallel: matrix` may generate
_PRODUCT_LIMIT = 4096  # combinations worth building before `exclude` narrows them

# `${{ matrix.cuda }}`, `${{ matrix.os.name }}`, `${{ matrix['cuda'] }}`
_GITHUB_REF = lazy(r"""\$\{\{\s*matrix((?:\.[A-Za-z_][\w-]*|\[\s*'[^']*'\s*\])+)\s*\}\}""", re.IGNORECASE)
_PROPERTY = lazy(r"""\.([A-Za-z_][\w-]*)|\[\s*'([^']*)'\s*\]""")
MATRIX_REF = lazy(r"\$\{\{[^}]*\bmatrix\b[^}]*\}\}", re.IGNORECASE)
_GITLAB_REF = lazy(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
# the shell's `${VAR:-default}` and `${VAR-default}`
_SHELL_DEFAULT = lazy(r"\$\{([A-Za-z_]\w*)(:?)-([^}$`]*)\}")
# a value that reads as one shell word wherever it is put, or as words split at its
# blanks where the shell splits it (anything else is left unjudged)
_PLAIN = lazy(r"[\w.,:/@+=%-]*")
_WORDS = lazy(r"[\w.,:/@+=%\- ]*")


def _fits(text: str | None, split: bool) -> bool:
    return text is not None and (_WORDS if split else _PLAIN).fullmatch(text) is not None


class Value(Frozen):
    """One variable of a combination: its name, the text that replaces a reference to
    it, and the node where the value is written."""

    __slots__ = ("name", "text", "node", "variable")

    name: str
    text: str | None  # None: an object or list, which no reference here renders
    node: Node | None  # None: a key the combination lacks, which reads as the empty string
    variable: bool  # a CI variable every run of the job has (GitLab `variables:`, GitHub `env:`)

    def __init__(self, name: str, text: str | None, node: Node | None, variable: bool = False) -> None:
        freeze(self, name, text, node, variable)

    @property
    def label(self) -> str:
        return f"{self.name}={self.text}" if self.node is not None else f"{self.name} unset"


Combination = tuple[Value, ...]


class Matrix(Frozen):
    __slots__ = ("style", "node", "combinations", "unknown", "left")

    style: str  # "github" or "gitlab"
    node: Node | None  # the `matrix` value (None: variables made from one)
    combinations: tuple[Combination, ...]
    unknown: str | None  # why it is not expanded
    # a reference left as written in an expanded matrix: an expression over its values
    # (`${{ matrix.cuda || '12.8.1' }}`), or a value that is not one plain word
    left: str | None

    def __init__(self, style: str, node: Node | None, combinations: tuple[Combination, ...] = (),
                 unknown: str | None = None, left: str | None = None) -> None:
        freeze(self, style, node, combinations, unknown, left)

    def refers(self, text: str) -> bool:
        """Whether `text` names a variable of this matrix."""
        if self.style == "github":
            return MATRIX_REF.search(text) is not None
        return "$" in text


class Use(Frozen):
    """A matrix value put into a word written at file offsets [start, end)."""

    __slots__ = ("value", "start", "end")

    value: Value
    start: int
    end: int

    def __init__(self, value: Value, start: int, end: int) -> None:
        freeze(self, value, start, end)


# ------------------------------------------------------------------ GitHub Actions


def github_matrix(job: Node) -> Matrix | None:
    node = job.get("strategy", "matrix") if job.is_map else None
    if node is None:
        return None
    if not node.is_map:
        return Matrix("github", node, unknown=_not_a("it", "a mapping of values", node))
    axes: list[tuple[str, list[Node]]] = []
    lists: dict[str, list[Node]] = {"include": [], "exclude": []}
    for key, value in node.items():
        if not value.is_seq:
            what = f"`{key}`" if key in lists else f"`{key}` (its values)"
            return Matrix("github", value, unknown=_not_a(what, "a list", value))
        if key in lists:
            odd = next((item for item in value.value if not item.is_map), None)
            if odd is not None:
                return Matrix("github", odd, unknown=_not_a(f"an entry of `{key}`", "a mapping", odd))
            lists[key] = value.value
        else:
            axes.append((key, value.value))
    size = 1
    for _, values in axes:
        size *= len(values)
    if size > _PRODUCT_LIMIT:
        return Matrix("github", node, unknown=f"its axes make {size} combinations")
    combos = [dict((key, _github_value(key, item)) for key, item in zip((k for k, _ in axes), chosen))
              for chosen in itertools.product(*(values for _, values in axes))] if axes else []
    combos = [c for c in combos if not any(_matches(c, entry, None) for entry in lists["exclude"])]
    combos = _github_include(combos, lists["include"], {key for key, _ in axes})
    if len(combos) > GITHUB_LIMIT:
        return Matrix("github", node, unknown=f"it makes {len(combos)} jobs, more than the {GITHUB_LIMIT} "
                      "GitHub runs for one matrix")
    return Matrix("github", node, tuple(tuple(c.values()) for c in combos))


def _not_a(what: str, shape: str, node: Node) -> str:
    if isinstance(node.value, str) and "${{" in node.value:
        return f"{what} is written as an expression"
    return f"{what} is not {shape}"


def _github_include(combos: list[dict[str, Value]], include: list[Node], axes: set[str]):
    added = []
    for entry in include:
        matched = False
        for combo in combos:
            if _matches(combo, entry, axes):
                matched = True
                combo.update((key, _github_value(key, item)) for key, item in entry.items() if key not in axes)
        if not matched:
            added.append({key: _github_value(key, item) for key, item in entry.items()})
    return combos + added


def _matches(combo: dict[str, Value], entry: Node, axes: set[str] | None) -> bool:
    """Whether a combination holds the values an `exclude` entry names (every key), or an
    `include` entry names for the matrix's own axes."""
    return all(key in combo and combo[key].node.plain() == item.plain()
               for key, item in entry.items() if axes is None or key in axes)


def _github_value(name: str, node: Node) -> Value:
    return Value(name, github_text(node), node)


def github_text(node: Node) -> str | None:
    """How `${{ matrix.x }}` renders a value: a YAML number as a number (`12.10` reads as
    12.1, `12.0` as 12), null as the empty string."""
    if not node.is_scalar:
        return None
    value = node.value
    if node.tag == "float" and isinstance(value, float) and value == value and abs(value) != float("inf"):
        return str(int(value)) if value.is_integer() else repr(value)
    if node.tag == "null":
        return ""
    return node.str()


def plain_reference(text: str) -> bool:
    """Whether `text` is a reference to one matrix value (`${{ matrix.cuda }}`)."""
    return _GITHUB_REF.fullmatch(text) is not None


def github_substitute(text: str, combo: Combination, split: bool = False) -> tuple[str, list[Value]]:
    """`text` with `${{ matrix.x }}` (and `matrix.x.y` into an object) replaced, and the
    values used; a reference to a key the combination lacks reads as the empty string,
    as on GitHub. A value that would not stay one plain word is left as written."""
    by_name = {value.name.lower(): value for value in combo}
    used: list[Value] = []

    def replace(match: re.Match) -> str:
        path = [found[1] or found[2] for found in _PROPERTY.finditer(match[1])]
        value = by_name.get(path[0].lower())
        node, text = (value.node, value.text) if value is not None else (None, "")
        for part in path[1:] if node is not None else ():
            node = next((child for key, child in node.items() if key.lower() == part.lower()), None)
            text = github_text(node) if node is not None else ""
        if not _fits(text, split):
            return match[0]
        used.append(value if value is not None and len(path) == 1 else Value(".".join(path), text, node))
        return text

    return _GITHUB_REF.sub(replace, text), used


# ------------------------------------------------------------------ GitLab CI


def gitlab_matrix(job: Node) -> Matrix | None:
    node = job.get("parallel", "matrix") if job.is_map else None
    if node is None:
        return None
    if not node.is_seq or not all(entry.is_map for entry in node.value):
        return Matrix("gitlab", node, unknown="it is not a list of variable mappings")
    combos: list[Combination] = []
    for entry in node.value:
        axes = []
        for key, value in entry.items():
            items = value.value if value.is_seq else [value]
            if not all(item.is_scalar for item in items):
                return Matrix("gitlab", value, unknown=f"the values of `{key}` are not strings")
            axes.append([Value(key, item.str() or "", item) for item in items])
        combos += itertools.islice(itertools.product(*axes), _PRODUCT_LIMIT + 1)
        if len(combos) > GITLAB_LIMIT:
            return Matrix("gitlab", node, unknown=f"it makes more than the {GITLAB_LIMIT} jobs GitLab runs "
                          "for one `parallel: matrix`")
    return Matrix("gitlab", node, tuple(combos))


def with_variables(matrix: Matrix | None, variables: tuple[Value, ...]) -> Matrix | None:
    """A GitLab job's matrix with the job's `variables:` added to each combination (a
    matrix value of the same name wins), or the variables alone as one combination."""
    if not variables:
        return matrix
    if matrix is None:
        return Matrix("gitlab", None, (variables,))
    if matrix.unknown is not None:
        return matrix
    return replace(matrix, combinations=tuple(
        combo + tuple(v for v in variables if v.name not in {value.name for value in combo})
        for combo in matrix.combinations))


def gitlab_substitute(text: str, combo: Combination, shell: bool, split: bool = False) -> tuple[str, list[Value]]:
    """`text` with the combination's `$VAR` and `${VAR}` replaced, and the values used;
    for the shell (`shell`), `${VAR:-default}` and `${VAR-default}` too."""
    by_name = {value.name: value for value in combo}
    used: list[Value] = []

    def replace(match: re.Match) -> str:
        value = by_name.get(match[1] or match[2])
        if value is None or not _fits(value.text, split):
            return match[0]
        used.append(value)
        return value.text

    def defaulted(match: re.Match) -> str:
        value = by_name.get(match[1])
        if value is None or not _fits(value.text, split):
            return match[0]
        if match[2] and not value.text:  # `:-` reads the default for an empty value too
            return match[3]
        used.append(value)
        return value.text

    if shell:
        text = _SHELL_DEFAULT.sub(defaulted, text)
    return _GITLAB_REF.sub(replace, text), used


def substitute(matrix: Matrix, text: str, combo: Combination, shell: bool,
               split: bool) -> tuple[str, list[Value]]:
    """`text` with a combination's values in place; `shell`: where the shell reads it,
    `split`: where the shell splits a value at its blanks."""
    if matrix.style == "github":
        return github_substitute(text, combo, split)
    return gitlab_substitute(text, combo, shell, split)

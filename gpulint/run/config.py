"""`[tool.gpulint]` in pyproject.toml, or `.gpulint.toml`.

The nearest config walking up from the folder that holds the linted paths (the current
directory for `gpulint .`) wins; `--config`
overrides and `--isolated` ignores them all. Validation uses jsonschema, whose
import is slow, so a config whose content already passed is remembered by hash.
"""

from __future__ import annotations

from pathlib import Path

from gpulint import __version__
from gpulint.formats.documents import MAX_BYTES
from gpulint.formats.errors import ParseError
from gpulint.model import LineIndex, Node
from gpulint.record import Record
from gpulint.resources import cache_dir, prune
from gpulint.run.discover import DEFAULT_EXCLUDES
from gpulint.run.watchdog import DEFAULT_SECONDS

SCHEMA_PATH = Path(__file__).with_name("config-schema.json")


_UNREAD = object()  # Settings.tree not read yet (None: no file, or it does not read)


class ConfigError(Exception):
    """A configuration problem: the run stops with exit code 2."""


class Settings(Record):
    __slots__ = ("select", "extend_select", "ignore", "per_file_ignores", "severity", "failure_threshold",
                 "preview", "exclude", "extend_exclude", "respect_gitignore", "force_exclude",
                 "max_file_size", "file_timeout", "fleet", "images", "path", "base", "_tree")
    _memo = ("_tree",)

    select: tuple[str, ...] | None
    extend_select: tuple[str, ...]
    ignore: tuple[str, ...]
    per_file_ignores: dict[str, tuple[str, ...]]
    severity: dict[str, str]
    failure_threshold: str
    preview: bool
    exclude: tuple[str, ...]
    extend_exclude: tuple[str, ...]
    respect_gitignore: bool
    force_exclude: bool
    max_file_size: int  # larger files and stdin are reported (GL006), not read
    file_timeout: float  # seconds for one file's work; past it, GL006 (0: none)
    fleet: dict
    images: dict[str, str]
    path: Path | None  # the config file, when there is one
    base: Path  # relative paths in the config start here

    def __init__(self, select: tuple[str, ...] | None = None, extend_select: tuple[str, ...] = (),
                 ignore: tuple[str, ...] = (), per_file_ignores: dict[str, tuple[str, ...]] | None = None,
                 severity: dict[str, str] | None = None, failure_threshold: str = "warning",
                 preview: bool = False, exclude: tuple[str, ...] = DEFAULT_EXCLUDES,
                 extend_exclude: tuple[str, ...] = (), respect_gitignore: bool = True,
                 force_exclude: bool = False, max_file_size: int = MAX_BYTES,
                 file_timeout: float = DEFAULT_SECONDS, fleet: dict | None = None,
                 images: dict[str, str] | None = None, path: Path | None = None, base: Path | None = None) -> None:
        self.select = select
        self.extend_select = extend_select
        self.ignore = ignore
        self.per_file_ignores = {} if per_file_ignores is None else per_file_ignores
        self.severity = {} if severity is None else severity
        self.failure_threshold = failure_threshold
        self.preview = preview
        self.exclude = exclude
        self.extend_exclude = extend_exclude
        self.respect_gitignore = respect_gitignore
        self.force_exclude = force_exclude
        self.max_file_size = max_file_size
        self.file_timeout = file_timeout
        self.fleet = {} if fleet is None else fleet
        self.images = {} if images is None else images
        self.path = path
        self.base = Path.cwd() if base is None else base
        self._tree = _UNREAD

    @property
    def excludes(self) -> tuple[str, ...]:
        return tuple(self.exclude) + tuple(self.extend_exclude)

    @property
    def tree(self) -> Node | None:
        """The gpulint table of the configuration file with positions, for findings that
        point into it. Kept with the settings of one run, so a later run in the same
        process sees an edited file. None without a file, or when it no longer reads."""
        if self._tree is _UNREAD:
            self._tree = self._read_tree()
        return self._tree

    def _read_tree(self) -> Node | None:
        if self.path is None:
            return None
        from gpulint.formats.tomlpos import parse_toml

        try:
            text = self.path.read_text(encoding="utf-8-sig")
            root = parse_toml(text, LineIndex(text))
        except (OSError, ParseError):
            return None
        return root.get("tool", "gpulint") if self.path.name == "pyproject.toml" else root


def config_in(folder: Path) -> Path | None:
    """The configuration file in this folder itself: `.gpulint.toml`, else a pyproject.toml
    with a [tool.gpulint] table."""
    candidate = folder / ".gpulint.toml"
    if candidate.is_file():
        return candidate
    candidate = folder / "pyproject.toml"
    try:
        if candidate.is_file() and "tool.gpulint" in candidate.read_text(encoding="utf-8", errors="replace"):
            return candidate
    except OSError:
        pass
    return None


def find_config(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        found = config_in(folder)
        if found is not None:
            return found
    return None


def _table(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc.strerror}") from None
    try:
        from gpulint.formats.tomlpos import load_toml

        data = load_toml(text)
    except ParseError as exc:
        raise ConfigError(f"{path}:{exc.line}:{exc.column}: {exc.message}") from None
    if path.name == "pyproject.toml":
        return data.get("tool", {}).get("gpulint", {})
    return data


def validate(table: dict, path: Path) -> None:
    # a configuration passes for the schema that judged it: the marker names gpulint's version
    # and the schema too, so another installation's verdict is never taken for this one's
    import hashlib
    import json

    schema_text = SCHEMA_PATH.read_text(encoding="utf-8")
    stamp = json.dumps([__version__, schema_text, table], sort_keys=True, default=str)
    marker = cache_dir() / f"config-{hashlib.sha256(stamp.encode()).hexdigest()[:32]}"
    if marker.exists():
        return
    import jsonschema

    schema = json.loads(schema_text)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(table),
                    key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        where = ".".join(str(p) for p in error.absolute_path) or "[tool.gpulint]"
        steps = list(error.absolute_path)
        hint, key = "", False
        if error.validator == "additionalProperties":
            expected = sorted(error.schema.get("properties", {}))
            hint = f"; expected one of: {', '.join(expected)}" if expected else ""
            extra = [key for key in error.instance if key not in error.schema.get("properties", {})]
            steps, key = steps + extra[:1], bool(extra)  # the unexpected key itself
        raise ConfigError(f"{path}{_position(path, steps, key)}: {where}: {error.message}{hint}")
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass  # no writable cache: validate again next time
    else:
        prune("config-")


def _position(path: Path, steps: list, key: bool = False) -> str:
    """`:line:column` of the value at `steps` (its key, with `key`) in the configuration
    file, so an editor and the reader land on it; "" where it cannot tell."""
    node = Settings(path=path).tree
    for step in steps:
        if node is not None and node.is_map and isinstance(step, str):
            node = node.get(step)
        elif node is not None and node.is_seq and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            return ""
    if node is None or not steps:
        return ""
    span = node.key_span if key and node.key_span is not None else node.span
    return f":{span.line}:{span.column}"


def load_settings(config: str | None = None, isolated: bool = False, start: Path | None = None) -> Settings:
    """The settings of a run: `config`, else the nearest configuration walking up from `start`
    (the folder holding the linted paths; the current one by default)."""
    if isolated:
        return Settings()
    path = Path(config) if config else find_config(start or Path.cwd())
    if path is None:
        return Settings()
    if config and not path.is_file():
        raise ConfigError(f"{config}: config file not found")
    table = _table(path)
    validate(table, path)
    path = path.resolve()
    settings = Settings(path=path, base=path.parent)
    for key, value in table.items():
        attr = key.replace("-", "_")
        if isinstance(value, list):
            value = tuple(value)
        elif attr == "per_file_ignores":
            value = {glob: tuple(codes) for glob, codes in value.items()}
        setattr(settings, attr, value)
    return settings

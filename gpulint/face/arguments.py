"""What every gpulint command shares: the argument parser (usage errors exit with 2 and a
short message), the lint options and the settings they make, and writing a report.

Imports inside functions: the rule catalog and the configuration reader load when the
settings are made, not when `--help` prints.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from gpulint import __version__
from gpulint.kinds import NAMES as KINDS
from gpulint.knowledge.cuda import GPU_CLASSES
from gpulint.report import FORMATS

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_USAGE = EXIT_ERROR


def _untranslated() -> None:
    """argparse asks gettext for each of its own messages, and gettext imports `locale` and
    looks for argparse's catalog, under every name of the user's language, in Python's locale
    folder, on every call (about 2 ms of a one-file run). Where that folder does not exist
    (CPython installs none there), no catalog can be found: argparse's messages are its own."""
    if not os.path.isdir(os.path.join(sys.base_prefix, "share", "locale")):
        argparse._ = lambda message: message
        argparse.ngettext = lambda singular, plural, n: singular if n == 1 else plural


_untranslated()


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` finds it: $COLUMNS, else the
    terminal of stdout, else 80."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return 80


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, which it also makes for every `add_argument` (to check the
    metavar): argparse's own asks `shutil` for the width, and importing shutil (with bz2,
    lzma and zlib) costs a one-file lint run about 2 ms."""

    def __init__(self, prog, indent_increment=2, max_help_position=24, width=None):
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):  # argparse exits with 2 already; keep its message short
        self.print_usage(sys.stderr)
        print(f"gpulint: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


class UsageError(Exception):
    pass


def version_text() -> str:
    lines = [f"gpulint {__version__}"]
    for label, loader in (("CUDA/driver data", "gpulint.knowledge.cuda:cuda_as_of"),
                          ("CUDA image data", "gpulint.knowledge.images:images_as_of")):
        module, _, name = loader.partition(":")
        try:
            import importlib

            lines.append(f"{label} as of {getattr(importlib.import_module(module), name)()}")
        except (ImportError, AttributeError, FileNotFoundError):
            pass
    return "\n".join(lines)


def lint_parser() -> argparse.ArgumentParser:
    p = Parser(prog="gpulint", description="A static linter for the GPU container stack: "
                "containerd config.toml, Docker daemon.json, Dockerfiles and Kubernetes manifests.",
                epilog="Other commands: `gpulint rule CODE`, `gpulint rules`, `gpulint cuda VERSION`, "
                "`gpulint driver VERSION`, `gpulint image REF [--driver VERSION]`, `gpulint mig [MODEL]`, "
                "`gpulint doctor`, "
                "`gpulint completion bash|zsh|fish`, `gpulint server` (a language server). "
                "`gpulint check PATH...` lints too, for a path named like a command.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="files or directories to lint (default: .); `-` reads stdin")
    p.add_argument("--version", action="store_true", help="print the version and the data dates")
    sel = p.add_argument_group("rule selection")
    sel.add_argument("--select", help="comma-separated codes, prefixes (GL1) or slugs; replaces the config")
    sel.add_argument("--extend-select", help="codes to add to the selection")
    sel.add_argument("--ignore", help="codes to leave out (added to the config's ignore)")
    sel.add_argument("--preview", action="store_true", default=None, help="also run preview rules")
    out = p.add_argument_group("output")
    out.add_argument("--format", choices=FORMATS, default="text")
    out.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE")
    out.add_argument("--report", action="append", default=[], metavar="FORMAT=FILE",
                     help="also write the report in FORMAT to FILE, from the same run (repeatable): "
                     "`--format github --report sarif=gpulint.sarif` annotates a pull request and "
                     "feeds code scanning at once")
    out.add_argument("--no-show-source", action="store_true", help="text: omit the source lines")
    out.add_argument("--show-suppressed", action="store_true",
                     help="also report findings silenced inline, marked (SARIF `suppressions`, "
                     "JSON `suppressed`)")
    out.add_argument("--failure-threshold", choices=("error", "warning", "info", "none"),
                     help="lowest severity that makes the exit code 1 (default: warning)")
    out.add_argument("--exit-zero", action="store_true",
                     help="exit 0 even with findings (--failure-threshold none)")
    out.add_argument("--quiet", "-q", action="store_true",
                     help="text: the findings only, no summary")
    out.add_argument("--statistics", action="store_true",
                     help="counts per rule instead of the findings (text or json); with --output, "
                     "or another format, the report is written and the counts printed beside it")
    out.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                     help="text colour; auto: on a terminal, unless NO_COLOR is set (non-empty) "
                     "or TERM=dumb; FORCE_COLOR (non-empty) forces it")
    fx = p.add_argument_group("fixes")
    fx.add_argument("--fix", action="store_true", help="apply safe fixes")
    fx.add_argument("--unsafe-fixes", action="store_true",
                    help="with --fix or --diff, also apply unsafe fixes; alone, count them as fixable")
    fx.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; write nothing")
    fx.add_argument("--show-fixes", action="store_true",
                    help="with --fix, list what was fixed, per file and rule")
    cfg = p.add_argument_group("configuration")
    cfg.add_argument("--config", metavar="PATH", help="use this config file")
    cfg.add_argument("--isolated", action="store_true", help="ignore every config file")
    cfg.add_argument("--no-cache", action="store_true",
                     help="read the project's files for cross-file context afresh, without the index "
                          "kept in the cache folder")
    cfg.add_argument("--cache-dir", metavar="DIR",
                     help="where gpulint keeps its cache (default: $GPULINT_CACHE_DIR, else the "
                          "platform's cache folder)")
    cfg.add_argument("--exclude", help="comma-separated patterns to exclude, gitignore syntax "
                     "(added to the config)")
    cfg.add_argument("--max-file-size", type=int, metavar="BYTES", default=None,
                     help="the largest file (and stdin) to read; larger ones are reported as GL006 "
                          "(default 4194304)")
    cfg.add_argument("--file-timeout", type=float, metavar="SECONDS", default=None,
                     help="the most time to spend on one file; past it the file is reported as "
                          "GL006 and the run goes on (default 10; 0: no limit)")
    cfg.add_argument("--jobs", "-j", type=int, metavar="N", default=None,
                     help="processes for parsing and per-file checks, gpulint's own included: N - 1 "
                          "workers beside it (default: the CPUs available, one for a small set of "
                          "files); the output does not change")
    cfg.add_argument("--force-exclude", action="store_true", default=None,
                     help="apply excludes and .gitignore to files named on the command line too "
                     "(for pre-commit)")
    cfg.add_argument("--no-respect-gitignore", action="store_true",
                     help="also lint files that .gitignore or .git/info/exclude leave out")
    cfg.add_argument("--baseline", metavar="FILE",
                     help="report only findings that FILE (from --baseline-write) does not know")
    cfg.add_argument("--baseline-write", metavar="FILE",
                     help="record today's findings in FILE, then report as with --baseline FILE")
    cfg.add_argument("--no-inline-suppressions", action="store_true",
                     help="ignore `# gpulint: disable` comments and annotations")
    cfg.add_argument("--kind", choices=KINDS,
                     help="treat every file as this kind")
    cfg.add_argument("--stdin-filename", metavar="NAME", help="the name of the file read from stdin")
    fleet = p.add_argument_group("fleet facts")
    fleet.add_argument("--driver", metavar="VERSION",
                       help="NVIDIA driver on the nodes (535.104.05, or a branch: 535)")
    fleet.add_argument("--gpu-class", choices=GPU_CLASSES, help="GPU class of the nodes")
    fleet.add_argument("--kubernetes-version", metavar="VERSION",
                       help="Kubernetes release of the cluster (1.34): which DRA API versions it serves")
    return p


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (value or "").split(",") if v.strip())


def _check_selectors(args, settings) -> None:
    """Every selector must name at least one rule: a typo must not switch gpulint off."""
    from gpulint import catalog
    from gpulint.run.config import ConfigError

    for option in ("select", "extend_select", "ignore"):
        for selector in _split(getattr(args, option)):
            if not catalog.resolve_selector(selector):
                flag = "--" + option.replace("_", "-")
                raise UsageError(f"{flag}: {catalog.unknown_selector_message(selector)}")
    table = settings.tree
    if table is None:
        return
    for key, node in _config_selectors(table):
        name = node.str() or ""
        if not catalog.resolve_selector(name):
            from gpulint.paths import display_path

            raise ConfigError(f"{display_path(settings.path)}:{node.span.line}:{node.span.column}: "
                              f"{key}: {catalog.unknown_selector_message(name)}")


def _config_selectors(table):
    """(key, node) for every selector written in the configuration, in file order."""
    from gpulint.model import Node, sequence

    out = []
    for key in ("select", "extend-select", "ignore"):
        out.extend((key, node) for node in sequence(table.get(key)))
    ignores = table.get("per-file-ignores")
    for pattern, codes in ignores.items() if ignores is not None else ():
        out.extend((f"per-file-ignores.\"{pattern}\"", node) for node in sequence(codes))
    severity = table.get("severity")
    for name, level in severity.items() if severity is not None else ():
        out.append(("severity", Node(name, level.key_span or level.anchor)))
    return sorted(out, key=lambda item: (item[1].span.line, item[1].span.column))


def _config_start(args) -> Path:
    """Where the configuration is looked up: the folder holding every linted path (the file
    stdin stands for), so `gpulint ../repo-b/Dockerfile` uses repo-b's configuration as
    `cd ../repo-b && gpulint Dockerfile` does."""
    paths = getattr(args, "paths", None) or ["."]
    if paths == ["-"]:
        paths = [args.stdin_filename] if getattr(args, "stdin_filename", None) else ["."]
    folders = [os.path.abspath(p) if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in paths]
    try:
        return Path(os.path.commonpath(folders))
    except ValueError:  # paths on different drives
        return Path.cwd()


def settings_from(args):
    from gpulint.run.config import load_settings

    if args.config and args.isolated:  # one would silently undo the other
        raise UsageError("--config cannot be used with --isolated, which ignores every configuration file")
    settings = load_settings(args.config, args.isolated, _config_start(args))
    _check_selectors(args, settings)
    if args.select is not None:
        settings.select = _split(args.select)
        if not settings.select:  # `--select ""` would switch every rule off without a word
            raise UsageError("--select names no rule: give codes (GL105), prefixes (GL1) or slugs")
    settings.extend_select += _split(args.extend_select)
    settings.ignore += _split(args.ignore)
    if args.preview:
        settings.preview = True
    if args.failure_threshold:
        settings.failure_threshold = args.failure_threshold
    # `gpulint doctor` shares this with a smaller set of options
    if getattr(args, "exit_zero", False):
        settings.failure_threshold = "none"
    settings.extend_exclude += _split(args.exclude)
    if getattr(args, "force_exclude", False):
        settings.force_exclude = True
    if getattr(args, "max_file_size", None) is not None:
        if args.max_file_size < 1:
            raise UsageError("--max-file-size must be a positive number of bytes")
        settings.max_file_size = args.max_file_size
    if getattr(args, "file_timeout", None) is not None:
        if not args.file_timeout >= 0 or args.file_timeout == float("inf"):
            raise UsageError("--file-timeout must be a number of seconds (0: no limit)")
        settings.file_timeout = args.file_timeout
    if getattr(args, "no_respect_gitignore", False):
        settings.respect_gitignore = False
    return settings


def emit(text: str | Iterable[str], output: str | None) -> None:
    """The report written to `output` (stdout when None): a string, or its pieces in turn
    (`report.pieces`), which are then never joined in memory."""
    pieces = (text,) if isinstance(text, str) else text
    if output:
        path = Path(output)
        try:  # a report path in a folder CI has not created yet (reports/gpulint.sarif)
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                for piece in pieces:
                    handle.write(piece)
        except OSError as exc:
            raise UsageError(f"--output {output}: cannot write the report: "
                             f"{exc.strerror or exc}") from None
    else:
        try:
            for piece in pieces:
                sys.stdout.write(piece)
            sys.stdout.flush()
        except BrokenPipeError:
            # the reader left (`gpulint . | head -1`): the rest of the report goes nowhere,
            # and the run still ends with its own exit status
            _stdout_to_nowhere()


def _stdout_to_nowhere() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # not a file descriptor (in-process callers)
        pass

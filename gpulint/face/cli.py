"""Command line: argument parsing and exit codes; the work happens elsewhere.

    gpulint [PATHS...]          lint (default: .)
    gpulint rule GL105          a rule's documentation
    gpulint rules               every rule
    gpulint cuda 12.4.1         the drivers a CUDA release needs
    gpulint driver 535.104.05   what a driver runs, and its branch's lifecycle
    gpulint image REF           an image's CUDA and the driver it needs
    gpulint mig [MODEL]         the MIG profiles of a GPU model (or the models)
    gpulint doctor [PATHS...]   this node's GPU stack, layer by layer (read-only)
    gpulint completion SHELL    a completion script for bash, zsh or fish
    gpulint server              a language server on stdio, for editors (`gpulint[lsp]`)
    gpulint check [PATHS...]    lint, for a path named like one of these commands

Imports inside functions: each command loads only what it runs (`gpulint rule` does not
import the engine, a lint run does not import `doctor`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gpulint.face.arguments import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    Parser,
    UsageError,
    emit,
    lint_parser,
    settings_from,
    version_text,
)


def _sources(args, settings):
    from gpulint.run.engine import Source, collect_sources

    paths = args.paths or ["."]
    if "-" in paths:
        if len(paths) > 1:
            raise UsageError("`-` (stdin) cannot be combined with other paths")
        name = args.stdin_filename or "stdin"
        if not args.kind and not args.stdin_filename:
            raise UsageError("reading stdin needs --stdin-filename NAME or --kind KIND")
        # at most one byte past the limit: a larger input is reported, never held whole
        data = sys.stdin.buffer.read(settings.max_file_size + 1)
        return [Source(Path(name), text=data, kind=args.kind, named=True,
                       truncated=len(data) > settings.max_file_size)]
    try:
        return collect_sources(paths, settings)
    except FileNotFoundError as exc:
        raise UsageError(f"{exc.args[0]}: no such file or directory") from None


def project_root(path, settings=None) -> Path | None:
    """The project a linted path belongs to: the nearest folder at or above it that holds
    `.git` or gpulint's configuration (`.gpulint.toml`, a pyproject.toml with [tool.gpulint],
    or the file `--config` names); None outside any. Found from the path, not from the
    current folder, so `gpulint ../other-repo/Dockerfile` reads the other repository."""
    from gpulint.paths import folders_up
    from gpulint.run.config import config_in

    config = settings.path.parent if settings is not None and settings.path is not None else None
    for folder in folders_up(path):
        if (folder / ".git").exists() or folder == config or config_in(folder) is not None:
            return folder
    return None


def _context(args, settings, sources):
    """The parsed files of the project that other files' checks consult, read for
    cross-file context, so a pre-commit call that names only the changed files, or an
    editor that sends its buffer on stdin under `--stdin-filename`, judges them as
    `gpulint .` would. The project is the one holding each linted path; the file on disk
    that stdin stands for is replaced by stdin's text. They come through the project's
    index in the cache folder (`gpulint.run.index`) unless `--no-cache`."""
    if args.isolated:
        return []
    from gpulint.paths import inside
    from gpulint.run.index import project_context
    from gpulint.stored import StoredKind

    if args.paths == ["-"]:
        if not args.stdin_filename:
            return []
        named, folders = [args.stdin_filename], []
    else:
        named = args.paths or ["."]
        folders = [os.path.abspath(p) for p in named if os.path.isdir(p)]
    by_folder: dict[str, Path | None] = {}  # pre-commit names many files of few folders
    for path in named:
        folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        if folder not in by_folder:
            by_folder[folder] = project_root(folder, settings)
    roots = dict.fromkeys(r for r in by_folder.values() if r is not None)
    linted: set[str] | None = None  # worked out for a project not linted whole only
    out: dict[str, object] = {}
    for root in roots:
        if any(inside(os.path.abspath(root), folder) for folder in folders):
            continue  # this project is linted whole already
        if linted is None:
            linted = {os.path.abspath(s.where) for s in sources}
            if args.paths == ["-"]:
                linted.add(os.path.abspath(args.stdin_filename))
        for doc in project_context(root, settings, linted, remember=not args.no_cache):
            if isinstance(doc, StoredKind) and len(roots) > 1:  # nested projects: each file once
                for member in doc.members():
                    out.setdefault(member.abspath, member)
            else:
                out.setdefault(doc.key if isinstance(doc, StoredKind) else doc.abspath, doc)
    return list(out.values())


def _valid_driver(value: str) -> bool:
    """A driver version or branch written plainly (no distribution suffix, no spaces)."""
    from gpulint.crossfile.fleet import driver_version

    return driver_version(value) == value


def _check_driver_branch(value: str) -> None:
    """A branch older than every one gpulint knows is a typo (`--driver 100`): an error; a
    newer or unlisted one is judged as written, with a warning that says so."""
    from gpulint.knowledge.cuda import branch, branch_numbers
    from gpulint.numbers import whole

    if branch(value) is not None:
        return
    known = branch_numbers()
    number = whole(value.split(".")[0])
    if number < known[0]:
        raise UsageError(f"--driver {value}: there is no NVIDIA driver branch R{number}; gpulint knows "
                         f"R{known[0]} to R{known[-1]}")
    print(f"gpulint: warning: --driver {value}: gpulint does not know branch R{number} (it knows "
          f"R{known[0]} to R{known[-1]}); images are judged against it as the newest driver"
          if number > known[-1] else
          f"gpulint: warning: --driver {value}: R{number} is not a driver branch gpulint knows; "
          f"images are judged against it like R{max(b for b in known if b < number)}", file=sys.stderr)


def lint(argv: list[str]) -> int:
    args = lint_parser().parse_args(argv)
    if args.version:
        print(version_text())
        return EXIT_CLEAN
    from gpulint.knowledge.dra import kubernetes_minor

    if args.cache_dir:  # through the environment, so worker processes use it too
        os.environ["GPULINT_CACHE_DIR"] = os.path.abspath(args.cache_dir)
    from gpulint.report import pieces, render
    from gpulint.run.config import ConfigError
    from gpulint.run.engine import Options, exit_code, print_internal_errors, run

    try:
        settings = settings_from(args)
        if args.driver and not _valid_driver(args.driver):
            raise UsageError(f"--driver {args.driver}: expected a driver version such as "
                             f"535.104.05 or a branch such as 535")
        if args.driver:
            _check_driver_branch(args.driver)
        if args.kubernetes_version and kubernetes_minor(args.kubernetes_version) is None:
            raise UsageError(f"--kubernetes-version {args.kubernetes_version}: expected a release "
                             f"such as 1.34 or 1.34.2")
        if args.jobs is not None and args.jobs < 1:
            raise UsageError("--jobs must be a positive number of processes")
        reports = _reports(args)
        sources = _sources(args, settings)
    except (ConfigError, UsageError) as exc:
        print(f"gpulint: {exc}", file=sys.stderr)
        return EXIT_ERROR
    facts = {k: v for k, v in (("driver", args.driver), ("gpu_class", args.gpu_class),
                               ("kubernetes_version", args.kubernetes_version)) if v}
    streaming = _streams(args, reports)
    options = Options(inline_suppressions=not args.no_inline_suppressions, kind=args.kind, facts=facts,
                      context=_context(args, settings, sources), jobs=args.jobs,
                      stream=_write_lines if streaming else None)
    try:
        result = run(sources, settings, options)
    except OSError as exc:
        print(f"gpulint: {exc}", file=sys.stderr)
        return EXIT_ERROR

    fixed, fixed_codes, unwritten = 0, None, []
    stdin = bool(sources) and sources[0].text is not None and args.paths == ["-"]
    if args.fix or args.diff:
        before = result
        result, fixed, changed, originals = _fix_loop(result, sources, settings, options,
                                                      args.unsafe_fixes)
        fixed_codes = _gone(before, result)
        if args.diff:
            from gpulint.run.fix import unified_diff

            emit("".join(unified_diff(originals[p], t) for p, t in sorted(changed.items())
                          if p in originals), args.output)
            print_internal_errors(result)
            return EXIT_ERROR if result.internal_errors else (EXIT_FINDINGS if changed else EXIT_CLEAN)
        if stdin:  # the input itself, byte for byte, where nothing was fixed
            from gpulint.formats.documents import encode

            data = next((encode(originals[path], text) for path, text in changed.items()
                         if path in originals), sources[0].text)
            sys.stdout.flush()
            if hasattr(sys.stdout, "buffer"):
                sys.stdout.buffer.write(data)
                if sources[0].truncated:  # the rest of an input past the size limit, as it came
                    import shutil

                    shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)
                sys.stdout.buffer.flush()
            else:  # a text stream (gpulint called in-process)
                rest = sys.stdin.buffer.read() if sources[0].truncated else b""
                sys.stdout.write((data + rest).decode("utf-8", "surrogateescape"))
            sys.stderr.write(render("text", result, show_source=False, fixed=fixed))
            _write_reports(args, reports, result, fixed)
            return exit_code(result, settings.failure_threshold)
        unwritten = _write_all(originals, changed)
        if unwritten:  # the report below still shows these files' findings
            for line in unwritten:
                print(f"gpulint: {line}", file=sys.stderr)
            result = run(sources, settings, options)
            fixed = max(0, len(before.findings) - len(result.findings))

    _baseline(args, result)
    _write_reports(args, reports, result, fixed)
    color = args.format == "text" and use_color(args.color, bool(args.output), sys.stdout.isatty())
    # --statistics alone prints the counts in place of the findings (text or JSON); with a
    # report file, or a format made for a machine, the report is written as asked and the
    # counts go beside it: to stdout when the report goes to a file, else to stderr
    counts_only = args.statistics and not args.output and args.format in ("text", "json")
    if args.statistics:
        from gpulint.report.statistics import render as statistics

        counts = statistics(result, args.format if counts_only else "text", args.unsafe_fixes)
    notes: list[str] = []  # what a report left out, said on stderr
    if counts_only:
        report = counts
    elif streaming:
        report = ""  # written file by file as the run went
    else:
        # written piece by piece: a large run's report is never whole in memory
        report = pieces(args.format, result, show_source=not args.no_show_source, color=color,
                        fixed=fixed, unsafe_fixes=args.unsafe_fixes,
                        show_suppressed=args.show_suppressed, quiet=args.quiet, notes=notes)
    if args.show_fixes and fixed_codes and args.format == "text":
        from itertools import chain

        from gpulint.report.text import fixes_listing

        report = chain((report,) if isinstance(report, str) else report, (fixes_listing(fixed_codes),))
    emit(report, args.output)
    for note in notes:
        print(f"gpulint: {note}", file=sys.stderr)
    if args.statistics and not counts_only:
        (sys.stdout if args.output else sys.stderr).write(counts)
    print_internal_errors(result)
    if unwritten:
        return EXIT_ERROR
    return exit_code(result, settings.failure_threshold)


def _streams(args, reports) -> bool:
    """JSON Lines to stdout are written file by file while the run goes on (a fleet-wide scan
    piped into another tool), unless something needs the whole result first."""
    return args.format == "json-lines" and not (
        args.output or args.fix or args.diff or args.statistics or args.baseline or args.baseline_write
        or args.show_suppressed or reports)


def _write_lines(findings, documents) -> None:
    from gpulint.report.ci import json_lines_of

    sys.stdout.write(json_lines_of([f for f in findings if f.suppressed is None], documents))
    sys.stdout.flush()


def _reports(args) -> list[tuple[str, str]]:
    """--report FORMAT=FILE, each checked before anything runs."""
    from gpulint.report import FORMATS

    out = []
    for value in args.report:
        fmt, sep, path = value.partition("=")
        if not sep or not path:
            raise UsageError(f"--report {value}: expected FORMAT=FILE, such as sarif=gpulint.sarif")
        if fmt not in FORMATS:
            raise UsageError(f"--report {value}: unknown format `{fmt}`; one of: {', '.join(FORMATS)}")
        out.append((fmt, path))
    if out and args.diff:
        raise UsageError("--report writes lint reports; --diff prints fixes only")
    return out


def _write_reports(args, reports, result, fixed) -> None:
    """The further reports of this run, each rendered from the same result as the main one."""
    from gpulint.report import pieces

    for fmt, path in reports:
        notes: list[str] = []
        text = pieces(fmt, result, show_source=not args.no_show_source, fixed=fixed,
                      unsafe_fixes=args.unsafe_fixes, show_suppressed=args.show_suppressed,
                      quiet=args.quiet, notes=notes)
        try:
            emit(text, path)
        except UsageError as exc:
            raise UsageError(str(exc).replace("--output", "--report", 1)) from None
        for note in notes:
            print(f"gpulint: {path}: {note}", file=sys.stderr)


def _baseline(args, result) -> None:
    if not (args.baseline or args.baseline_write):
        return
    from gpulint.run import baseline

    try:
        if args.baseline_write:
            count = baseline.write(args.baseline_write, result)
            print(f"gpulint: wrote {count} finding{'' if count == 1 else 's'} to {args.baseline_write}",
                  file=sys.stderr)
        path = args.baseline_write or args.baseline
        if path:
            baseline.apply(path, result)
    except baseline.BaselineError as exc:
        raise UsageError(str(exc)) from None


def use_color(choice: str, to_file: bool, tty: bool) -> bool:
    """--color, then no-color.org: NO_COLOR (non-empty) wins, FORCE_COLOR (non-empty)
    forces, TERM=dumb and anything but a terminal turn colour off."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return tty and not to_file and os.environ.get("TERM") != "dumb"


def _gone(before, after):
    """(path, code) -> how many fixable findings the fixes made disappear."""
    from collections import Counter

    left = Counter((f.path, f.code) for f in after.active)
    had = Counter((f.path, f.code) for f in before.active if f.fix is not None)
    return {key: n - left.get(key, 0) for key, n in sorted(had.items()) if n > left.get(key, 0)}


def _fix_loop(result, sources, settings, options, unsafe):
    """Fix every file, re-linting the fixed text, until nothing more applies (run/fix)."""
    from gpulint.formats.documents import encode
    from gpulint.run.engine import Source, run
    from gpulint.run.fix import fix_until_settled

    originals = {d.abspath: d for d in result.documents}

    def rerun(changed):
        again = []
        for source in sources:
            key = os.path.abspath(source.path)
            if key in changed:
                again.append(Source(source.path, text=encode(originals[key], changed[key]),
                                    kind=source.kind))
            else:
                again.append(source)
        return run(again, settings, options)

    return fix_until_settled(result, rerun, unsafe,
                             lambda message: print(f"gpulint: {message}", file=sys.stderr))


def _write_all(originals, changed) -> list[str]:
    """Write every fixed file (a symlink's target once); the files left unwritten, with why."""
    from gpulint.run.fix import NotWritten, write_in_place

    written, failed = set(), []
    for path, text in changed.items():
        if os.path.realpath(originals[path].abspath) in written:
            continue
        try:
            written.add(write_in_place(originals[path], text))
        except NotWritten as exc:
            failed.append(f"{originals[path].path}: not fixed: {exc}")
    return failed


def show_rule(argv: list[str]) -> int:
    p = Parser(prog="gpulint rule", description="Print a rule's documentation.")
    p.add_argument("code", help="a code (GL105) or slug")
    p.add_argument("--format", choices=("text", "json"), default="text")
    args = p.parse_args(argv)
    from gpulint import catalog
    from gpulint.ruledoc import rule_json, rule_text

    codes = [c for c in catalog.resolve_selector(args.code) if c.upper() == args.code.upper()] \
        or [catalog.by_slug().get(args.code)]
    code = codes[0]
    if code is None or code not in catalog.load_catalog():
        print(f"gpulint: unknown rule `{args.code}`; `gpulint rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    rule = catalog.load_catalog()[code]
    if args.format == "json":
        import json

        print(json.dumps(rule_json(rule), indent=2))
    else:
        print(rule_text(rule))
    return EXIT_CLEAN


def list_rules(argv: list[str]) -> int:
    p = Parser(prog="gpulint rules", description="List every rule.")
    p.add_argument("--format", choices=("text", "json"), default="text")
    args = p.parse_args(argv)
    from gpulint import catalog
    from gpulint.ruledoc import rule_json

    rules = catalog.load_catalog().values()
    if args.format == "json":
        import json

        print(json.dumps([rule_json(r) for r in rules], indent=2))
        return EXIT_CLEAN
    for rule in rules:
        flags = "".join((" (fix)" if rule.fixable != "never" else "",
                         " (preview)" if rule.preview else ""))
        print(f"{rule.code}  {rule.severity:<7}  {rule.slug:<36} {rule.title}{flags}")
    return EXIT_CLEAN


def _doctor(argv):
    from gpulint.face.doctor import doctor_command

    return doctor_command(argv)


def _explain(name):
    def command(argv):
        from gpulint.face import explain

        return getattr(explain, f"{name}_command")(argv)

    return command


def _mig(argv):
    from gpulint.face.mig import mig_command

    return mig_command(argv)


def _server(argv):
    from gpulint.face.lsp import server_command

    return server_command(argv)


def _completion(argv):
    from gpulint.face.completion import completion_command

    return completion_command(argv, list(COMMANDS))


# The first word picks a command; anything else is a path to lint. A folder named like a
# command is linted with `gpulint check NAME` or `gpulint ./NAME`.
COMMANDS = {
    "check": lint, "rule": show_rule, "rules": list_rules,
    "doctor": _doctor, "cuda": _explain("cuda"), "driver": _explain("driver"),
    "image": _explain("image"), "mig": _mig, "completion": _completion, "server": _server,
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen_cache = os.environ.get("GPULINT_CACHE_DIR")  # `--cache-dir` holds for this call only
    try:
        if argv and argv[0] in COMMANDS:
            if argv[0] != "check" and os.path.exists(argv[0]):
                print(f"gpulint: `{argv[0]}` is a command here; to lint the path {argv[0]}, run "
                      f"`gpulint check {argv[0]}` or `gpulint ./{argv[0]}`", file=sys.stderr)
            return COMMANDS[argv[0]](argv[1:])
        return lint(argv)
    except UsageError as exc:
        print(f"gpulint: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception:  # a bug in gpulint: say so, exit 2, never a bare traceback
        import traceback

        print("gpulint: internal error, please report it:\n" + traceback.format_exc(), file=sys.stderr)
        return EXIT_ERROR
    finally:
        if chosen_cache is None:
            os.environ.pop("GPULINT_CACHE_DIR", None)
        else:
            os.environ["GPULINT_CACHE_DIR"] = chosen_cache

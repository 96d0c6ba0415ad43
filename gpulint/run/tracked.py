"""The project around the linted files as git's index (the staging area) holds it, for a call
pre-commit makes.

pre-commit lints what is about to be committed, and sets `PRE_COMMIT` in its hooks'
environment. In such a call, inside a git work tree, the files other files' checks consult are
the tracked ones, read as they are staged (`git cat-file --batch`), and what changed since
gpulint's index was made is read off git's index file where entries changed in place only
(`gitindex`: the file checksummed block by block against a snapshot, the blocks that differ
parsed), else git's answer: `git diff-index --cached` against the commit the index was made
at, with the blob each changed path has now. Nothing is walked or stat'ed, so a warm call
costs reading git's index file and the index's listing, whatever the repository's size.
Untracked files and changes not staged are not consulted. Where git is missing or fails, the
caller walks the project instead (`run/index`).

The index (`stored.write_index`) holds the commit C it was made at, the paths whose staged
blob differed from C then (and those blobs), the snapshot of git's index file that difference
was told from, the ignore files' times, and the consulted files grouped by kind, each with the
offset and length of its pickled document. A later call finds what differs from C now: a path
whose staged blob is not the one the index saw (staged, changed again, or put back as C has
it) is read again, and only then is the index written: the documents read again are appended
to it with a new listing, made against the current commit, so the difference stays small. A
call that had to ask git appends a new listing too, with a new snapshot, so that the next one
need not.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpulint.run import gitindex
from gpulint.run.engine import Source, context_document
from gpulint.stored import Stored, StoredKind, append_index, read_index, write_index

# git's empty tree: what a repository without a commit is compared with
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# the modes of the files read: plain and executable (not links, not submodules)
REGULAR = (b"100644", b"100755")
# in a difference: the path is as the commit has it (absent from git's answer)
AS_COMMITTED = None
# in the difference an index keeps: the path is to be read again, whatever git says of it;
# what follows is what it is staged as (a blob, "" for no file, AS_STAGED_COMMITTED)
UNSEEN = "?"
AS_STAGED_COMMITTED = "="
# files read from git per call
CHUNK = 2000


class GitFailed(Exception):
    """git is missing, this is no work tree, or git said no."""


def wanted() -> bool:
    """Whether this call is one pre-commit makes."""
    return bool(os.environ.get("PRE_COMMIT"))


def _environment(own_index: bool = False) -> dict[str, str]:
    """git's environment for this call (`own_index`: the repository's own index, whatever
    index the commit being made uses)."""
    env = dict(os.environ)
    if own_index:
        env.pop("GIT_INDEX_FILE", None)
    # git names the index being committed (`git commit -a`, `git commit PATHS`) in the hook's
    # environment, possibly relative to the folder the hook runs in; git runs here from the
    # project's root
    for name in ("GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"):
        if env.get(name) and not os.path.isabs(env[name]):
            env[name] = os.path.abspath(env[name])
    env["GIT_OPTIONAL_LOCKS"] = "0"  # reading only: never refresh the index a commit holds
    return env


def _git(top: str, *args: str, data: bytes | None = None, own_index: bool = False) -> bytes:
    """What `git -C top ARGS` writes, given `data` on its input. Raises GitFailed."""
    command = ["git", "-C", top, *args]
    if hasattr(os, "posix_spawnp"):  # the warm path: no subprocess module
        given = _filled_pipe(data) if data else None
        if not data or given is not None:
            return _spawned(command, given, own_index)
    import subprocess

    try:
        done = subprocess.run(command, input=data or b"", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=_environment(own_index))
    except OSError as exc:
        raise GitFailed(str(exc)) from None
    if done.returncode != 0:
        raise GitFailed(" ".join(args))
    return done.stdout


def _filled_pipe(data: bytes) -> int | None:
    """The reading end of a pipe that holds all of `data`, or None where it does not fit in
    the pipe's buffer (then a reader must run beside the writer)."""
    read, write = os.pipe()
    try:
        os.set_blocking(write, False)
        written = os.write(write, data)
    except BlockingIOError:
        written = 0
    finally:
        os.close(write)
    if written != len(data):
        os.close(read)
        return None
    return read


def _spawned(command: list[str], given: int | None, own_index: bool = False) -> bytes:
    """What `command` writes, reading the pipe `given` (else nothing). Raises GitFailed."""
    read, write = os.pipe()
    stdin = (os.POSIX_SPAWN_DUP2, given, 0) if given is not None else (os.POSIX_SPAWN_OPEN, 0, os.devnull,
                                                                       os.O_RDONLY, 0)
    try:
        pid = os.posix_spawnp("git", command, _environment(own_index), file_actions=[
            stdin, (os.POSIX_SPAWN_DUP2, write, 1), (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    except OSError as exc:
        os.close(read)
        raise GitFailed(str(exc)) from None
    finally:
        os.close(write)
        if given is not None:
            os.close(given)
    chunks = []
    try:
        while chunk := os.read(read, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(read)
        _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise GitFailed(" ".join(command[3:]))
    return b"".join(chunks)


def _commit(top: str) -> str:
    """The commit checked out, or the empty tree in a repository without one."""
    try:
        return _git(top, "rev-parse", "-q", "--verify", "HEAD^{commit}").decode().strip()
    except GitFailed:
        _git(top, "rev-parse", "--show-toplevel")  # still a work tree: no commit yet
        return EMPTY_TREE


def _difference(top: str, commit: str) -> dict[str, str]:
    """The paths under `top` (relative to it, with /) whose staged content differs from
    `commit`'s: each with its staged blob, or "" where it is not staged as a file (removed,
    in a conflict, a link, a submodule)."""
    out = _git(top, "diff-index", "--cached", "--raw", "-z", "--no-abbrev", "--no-renames", "--relative",
               commit, "--")
    parts = out.split(b"\0")
    changed = {}
    for meta, path in zip(parts[0::2], parts[1::2]):
        fields = meta.split()
        if len(fields) != 5:
            raise GitFailed("diff-index: unexpected output")
        blob = fields[3].decode() if fields[1] in REGULAR and fields[4] not in (b"D", b"U") else ""
        changed[os.fsdecode(path)] = blob
    return changed


def _index_file(path: str) -> str:
    """The index file this call's git reads: the one the commit being made uses, where git
    names one, else the repository's own (`path`)."""
    named = os.environ.get("GIT_INDEX_FILE")
    return os.path.abspath(named) if named else path


def _git_state(top: str) -> tuple | None:
    """How a later call finds what changed in git's index without asking git (`gitindex`):
    the repository's own index file, `top`'s folder in the work tree, and the snapshot of the
    index this call's git reads (None where it is left to git)."""
    try:
        hashing, path, prefix = _git(top, "rev-parse", "--show-object-format", "--git-path", "index", "--show-prefix",
                                     own_index=True).decode().split("\n")[:3]
    except (GitFailed, ValueError, UnicodeDecodeError):  # a git before 2.29 does not tell the hash
        return None
    if hashing != "sha1":  # entries of another length (`gitindex.HASH`)
        return None
    path = os.path.join(top, path)
    data = gitindex.read(_index_file(path))
    return (path, prefix, gitindex.snapshot(data) if data is not None else None)


def _now(top: str, commit: str, then: dict[str, str], state: tuple | None) -> tuple[dict[str, str], tuple | None, bool]:
    """The difference from `commit` now (as `_difference` gives it), the state of git's index
    it was told from, and whether git told it with a state the next call can use: read from
    the index file where its entries changed in place only since `state` was taken (a path
    still unseen is as staged then), else git's answer."""
    # read once, for either answer: where git answers, the snapshot is of the file as it was
    # before git read it (a change staged meanwhile is seen again by the next call)
    data = gitindex.read(_index_file(state[0])) if state is not None else None
    if data is not None and state[2] is not None and _git_found():
        found = gitindex.changes(data, state[2])
        if found is not None:
            entries, snap = found
            now = {}
            for path, value in then.items():
                value = _staged_then(value)
                if value is not AS_COMMITTED:
                    now[path] = value
            prefix = state[1]
            for path, blob in entries:
                if path.startswith(prefix):
                    now[path[len(prefix):]] = blob
            return now, (state[0], prefix, snap), False
    now = _difference(top, commit)
    snap = gitindex.snapshot(data) if data is not None else None
    return now, (state[0], state[1], snap) if state is not None else None, snap is not None


def _git_found() -> bool:
    """Whether git is on the PATH: a call without it walks the project (as when git fails),
    even where the index file would tell what changed."""
    return any(os.access(os.path.join(folder or ".", "git"), os.X_OK)
               for folder in os.environ.get("PATH", os.defpath).split(os.pathsep))


def _unseen(value: str | None) -> str:
    """A path's mark in the difference an index keeps, while the index has not read it."""
    return UNSEEN + (AS_STAGED_COMMITTED if value is AS_COMMITTED else value)


def _staged_then(value: str) -> str | None:
    """What a path of the difference an index keeps was staged as when the index was made:
    its blob, "" for no file, AS_COMMITTED (a path still unseen as it was marked)."""
    if not value.startswith(UNSEEN):
        return value
    value = value[len(UNSEEN):]
    return AS_COMMITTED if value == AS_STAGED_COMMITTED else value


def _staged_files(top: str) -> list[tuple[str, str]]:
    """(path relative to `top`, blob) of each file staged under `top`."""
    out = []
    for record in _git(top, "ls-files", "-s", "-z").split(b"\0"):
        meta, _, path = record.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[2] == b"0" and fields[0] in REGULAR:
            out.append((os.fsdecode(path), fields[1].decode()))
    return out


def _contents(top: str, objects: list[str]) -> list[bytes | None]:
    """The content of each object (a blob, or `COMMIT:./PATH`, the file as committed), None for
    one git does not have."""
    if not objects:
        return []
    out = _git(top, "cat-file", "--batch", data="".join(f"{o}\n" for o in objects).encode())
    found: list[bytes | None] = []
    at = 0
    for _ in objects:
        end = out.index(b"\n", at)
        fields = out[at:end].split(b" ")
        at = end + 1
        if len(fields) != 3 or not fields[2].isdigit():  # "<name> missing", "<name> ambiguous"
            found.append(None)
            continue
        size = int(fields[2])
        found.append(out[at:at + size] if fields[1] == b"blob" else None)
        at += size + 1
    return found


def _marks(paths) -> list:
    """(path, modification time) of the ignore files that decide which paths are read."""
    out = []
    for path in paths:
        try:
            out.append((path, os.stat(path).st_mtime_ns))
        except OSError:
            out.append((path, None))
    return out


def _ignore_file(path: str) -> bool:
    return path == ".gitignore" or path.endswith("/.gitignore")


def _ignore_files(top: str, staged: list[str]) -> list[str]:
    """The ignore files the walk would read for `top`: the tracked `.gitignore` files under it
    and its own, those of the folders above it up to the repository's root, and
    `.git/info/exclude`."""
    found = [os.path.join(top, p) for p in staged if _ignore_file(p)]
    if ".gitignore" not in staged:
        found.append(os.path.join(top, ".gitignore"))
    folder = top
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            found.append(os.path.join(folder, ".git", "info", "exclude"))
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
        found.append(os.path.join(folder, ".gitignore"))
    return found


def tracked_context(top: str, stamp: str, where: Path, mapped: set[str], admitted, remember: bool,
                    leave_out: set[str]) -> list[Stored | StoredKind]:
    """The files under the folder `top` that other files' checks consult, as staged, those
    whose absolute paths are in `leave_out` excepted: each tracked file whose path (relative,
    with /) `admitted` accepts, through the index at `where` when `remember`. Raises
    GitFailed where git cannot answer."""
    if remember:
        header, documents = read_index(where)
        if header is not None and len(header) == 9 and header[:2] == ("git", stamp):
            try:
                found = _warm(top, header, documents, mapped, admitted, where, stamp, leave_out)
            except GitFailed:  # the commit is gone (a rewritten history ...): made afresh
                found = None
            if found is not None:
                return found
        if documents is not None:
            documents.close()
    return [held for held in _cold(top, stamp, where, mapped, admitted, remember) if held.abspath not in leave_out]


def _read(top: str, paths: list[str], objects: list[str], mapped: set[str]) -> dict[str, Stored]:
    """The consulted ones among `paths`, read from git as `objects` name them."""
    out = {}
    for start in range(0, len(paths), CHUNK):  # a whole project's text is never held at once
        chunk = paths[start:start + CHUNK]
        for rel, data in zip(chunk, _contents(top, objects[start:start + CHUNK])):
            if data is None:
                continue
            absolute = os.path.join(top, *rel.split("/"))
            doc = context_document(Source(Path(absolute), text=data), mapped)
            if doc is not None:
                out[rel] = Stored(absolute, doc.kind, doc=doc)
    return out


def _cold(top, stamp, where, mapped, admitted, remember) -> list[Stored]:
    state = _git_state(top) if remember else None  # before git reads the index: a change after it is seen again
    staged = _staged_files(top)
    chosen = [(rel, blob) for rel, blob in staged if "\n" not in rel and admitted(rel)]
    commit = _commit(top)
    difference = _difference(top, commit) if remember else {}
    held = _read(top, [rel for rel, _ in chosen], [blob for _, blob in chosen], mapped)
    if remember:
        by_kind: dict[str, list] = {}
        for rel in sorted(held):
            by_kind.setdefault(held[rel].kind, []).append((rel, held[rel]))
        _save(where, stamp, commit, difference, _marks(_ignore_files(top, [rel for rel, _ in staged])),
              by_kind, None, state)
    return list(held.values())


def _warm(top, header, documents, mapped, admitted, where, stamp, leave_out) -> list | None:
    _, _, commit, then, marks, groups, listed, places, state = header
    if _marks(path for path, _ in marks) != marks:
        return None  # an ignore file changed: which files are read may have changed
    now, state, asked = _now(top, commit, then, state)
    prefix = top.rstrip(os.sep) + os.sep

    def absolute(rel: str) -> str:
        return prefix + rel if os.sep == "/" else prefix + rel.replace("/", os.sep)

    # the paths whose staged content is not what the index saw, among those it may hold (a
    # changed Dockerfile no image mapping names changes nothing here: the index is not written)
    changed = [p for p in now.keys() | then.keys() if now.get(p, AS_COMMITTED) != then.get(p, AS_COMMITTED)]
    # a linted file is judged as it is linted, not as indexed: the index learns of its change
    # from a later call that does not lint it (read and parsed here, it would be twice)
    waiting = [p for p in changed if not _ignore_file(p) and absolute(p) in leave_out]
    changed = [p for p in changed if (_ignore_file(p) or ("\n" not in p and absolute(p) not in leave_out
                                                         and admitted(p)))]
    if any(_ignore_file(p) for p in changed):
        return None

    def new_listing() -> bool:
        """The same documents, with a new listing appended: False where the index is to be
        written whole."""
        try:
            return append_index(where, documents, [], sum(at[1::2]),
                                lambda _: _header(stamp, commit, now, marks, groups, listed, places, state))
        except OSError:
            return True

    skip = leave_out | {absolute(rel) for rel in changed} if changed else leave_out
    paths: list[str] = []
    at = memoryview(places).cast("Q")

    def members(first: int, count: int, kind: str) -> list[Stored]:
        if not paths and listed:
            paths.extend(listed.split("\n"))
        out = []
        for i in range(first, first + count):
            path = absolute(paths[i])
            if path not in skip:
                out.append(Stored(path, kind, at=(documents, at[2 * i], at[2 * i + 1])))
        return out

    # each kind's records made when a check asks for it
    out: list = []
    first = 0
    for kind, count in groups:
        out.append(StoredKind(kind, f"{top}\0{kind}", lambda f=first, c=count, k=kind: members(f, c, k)))
        first += count
    if not changed:
        if asked:  # git answered: the state of its index kept, so that the next call need not ask
            now.update({p: _unseen(now.get(p)) for p in waiting})
            new_listing()
        return out
    reread = sorted(p for p in changed if now.get(p) != "")
    # the staged blob git named, or the committed one where the path is staged as committed
    fresh = _read(top, reread, [now.get(p) or f"{commit}:./{p}" for p in reread], mapped)
    out.extend(held for held in fresh.values() if held.abspath not in leave_out)
    current = _commit(top)
    if current != commit:  # made against the current commit: the difference stays small
        commit, now = current, _difference(top, current)
    now.update({p: _unseen(now.get(p)) for p in waiting})
    within = f"\n{listed}\n"
    gone = {rel for rel in changed if f"\n{rel}\n" in within}
    if not gone and not fresh and new_listing():  # what the index holds is the same: a new listing only
        return out
    # the unchanged documents where they are, the changed ones appended
    if not paths and listed:
        paths.extend(listed.split("\n"))
    by_kind: dict[str, list] = {}
    first = 0
    for kind, count in groups:
        by_kind[kind] = [(paths[i], (at[2 * i], at[2 * i + 1]))
                         for i in range(first, first + count) if paths[i] not in gone]
        first += count
    for rel, held in fresh.items():
        by_kind.setdefault(held.kind, []).append((rel, held))
    _save(where, stamp, commit, now, marks, by_kind, documents, state)
    return out


def _save(where: Path, stamp: str, commit: str, difference: dict, marks: list, by_kind: dict[str, list],
          previous, state: tuple | None) -> None:
    """The index: the commit, the difference from it, the ignore files' times, and the
    consulted files by kind, `by_kind` giving each kind's (path, record) pairs (a record as
    `stored.write_index` takes it): their paths one per line, then each one's offset and
    length (8 bytes each, as this machine orders them: an index never leaves it)."""
    from array import array

    groups = [(kind, len(members)) for kind, members in by_kind.items() if members]
    listed = "\n".join(rel for members in by_kind.values() for rel, _ in members)

    def header(places: list[int]) -> tuple:
        return _header(stamp, commit, difference, marks, groups, listed, array("Q", places).tobytes(), state)

    try:
        write_index(where, header, [record for members in by_kind.values() for _, record in members], previous)
    except Exception:  # noqa: BLE001 - a document that does not pickle: the index is only a cache
        return
    from gpulint.resources import prune

    prune("index-")


def _header(stamp: str, commit: str, difference: dict, marks: list, groups: list, listed: str,
            places: bytes, state: tuple | None) -> tuple:
    """An index's listing, as `_warm` reads it."""
    return ("git", stamp, commit, difference, marks, groups, listed, places, state)

"""The project around the linted files as git's index (the staging area) holds it, for a call
pre-commit makes.

pre-commit lints what is about to be committed, and sets `PRE_COMMIT` in its hooks'
environment. In such a call, inside a git work tree, the files other files' checks consult are
the tracked ones, read as they are staged (`git cat-file --batch`), and what changed since
gpulint's index was made is git's answer: `git diff-index --cached` against the commit the
index was made at, with the blob each changed path has now. Nothing is walked or stat'ed, so
a warm call costs one git call and the index's listing, whatever the repository's size.
Untracked files and changes not staged are not consulted. Where git is missing or fails, the
caller walks the project instead (`run/index`).

The index (`stored.write_index`) holds the commit C it was made at, the paths whose staged
blob differed from C then (and those blobs), the ignore files' times, and the consulted files
grouped by kind, each with the offset and length of its pickled document. A later call asks
git what differs from C now: a path whose staged blob is not the one the index saw (staged,
changed again, or put back as C has it) is read again, and only then is the index written;
it is then made against the current commit, so the difference stays small.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpulint.run.engine import Source, context_document
from gpulint.stored import Stored, StoredKind, read_index, write_index

# git's empty tree: what a repository without a commit is compared with
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
# the modes of the files read: plain and executable (not links, not submodules)
REGULAR = (b"100644", b"100755")
# in a difference: the path is as the commit has it (absent from git's answer)
AS_COMMITTED = None
# files read from git per call
CHUNK = 2000


class GitFailed(Exception):
    """git is missing, this is no work tree, or git said no."""


def wanted() -> bool:
    """Whether this call is one pre-commit makes."""
    return bool(os.environ.get("PRE_COMMIT"))


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    # git names the index being committed (`git commit -a`, `git commit PATHS`) in the hook's
    # environment, possibly relative to the folder the hook runs in; git runs here from the
    # project's root
    for name in ("GIT_INDEX_FILE", "GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY"):
        if env.get(name) and not os.path.isabs(env[name]):
            env[name] = os.path.abspath(env[name])
    env["GIT_OPTIONAL_LOCKS"] = "0"  # reading only: never refresh the index a commit holds
    return env


def _git(top: str, *args: str, data: bytes | None = None) -> bytes:
    """What `git -C top ARGS` writes, given `data` on its input. Raises GitFailed."""
    command = ["git", "-C", top, *args]
    if data is None and hasattr(os, "posix_spawnp"):  # the warm path: no subprocess module
        read, write = os.pipe()
        try:
            pid = os.posix_spawnp("git", command, _environment(), file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, write, 1),
                (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
        except OSError as exc:
            os.close(read)
            raise GitFailed(str(exc)) from None
        finally:
            os.close(write)
        chunks = []
        try:
            while chunk := os.read(read, 1 << 16):
                chunks.append(chunk)
        finally:
            os.close(read)
            _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise GitFailed(" ".join(args))
        return b"".join(chunks)
    import subprocess

    try:
        done = subprocess.run(command, input=data or b"", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=_environment())
    except OSError as exc:
        raise GitFailed(str(exc)) from None
    if done.returncode != 0:
        raise GitFailed(" ".join(args))
    return done.stdout


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
    """The content of each object (a blob, or `:./PATH`, the file as staged), None for
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
            documents[0].close()
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
    staged = _staged_files(top)
    chosen = [(rel, blob) for rel, blob in staged if "\n" not in rel and admitted(rel)]
    commit = _commit(top)
    difference = _difference(top, commit) if remember else {}
    held = _read(top, [rel for rel, _ in chosen], [blob for _, blob in chosen], mapped)
    if remember:
        _save(where, stamp, commit, difference, _marks(_ignore_files(top, [rel for rel, _ in staged])), held)
    return list(held.values())


def _warm(top, header, documents, mapped, admitted, where, stamp, leave_out) -> list | None:
    _, _, commit, then, marks, groups, paths, places, _ = header
    if _marks(path for path, _ in marks) != marks:
        return None  # an ignore file changed: which files are read may have changed
    now = _difference(top, commit)
    # the paths whose staged content is not what the index saw, among those it may hold (a
    # changed Dockerfile no image mapping names changes nothing here: the index is not written)
    changed = [p for p in now.keys() | then.keys() if now.get(p, AS_COMMITTED) != then.get(p, AS_COMMITTED)
               and (_ignore_file(p) or ("\n" not in p and admitted(p)))]
    handle, base = documents
    prefix = top.rstrip(os.sep) + os.sep

    def members(first: int, count: int, kind: str, skip=leave_out) -> list[Stored]:
        out = []
        for i in range(first, first + count):
            absolute = prefix + paths[i] if os.sep == "/" else prefix + paths[i].replace("/", os.sep)
            if absolute not in skip:
                out.append(Stored(absolute, kind, at=(handle, base + places[2 * i], places[2 * i + 1])))
        return out

    if not changed:  # each kind's records made when a check asks for it
        out, first = [], 0
        for kind, count in groups:
            out.append(StoredKind(kind, f"{top}\0{kind}", lambda f=first, c=count, k=kind: members(f, c, k)))
            first += count
        return out
    if any(_ignore_file(p) for p in changed):
        return None
    held: dict[str, Stored] = {}
    first = 0
    for kind, count in groups:
        for member, rel in zip(members(first, count, kind, ()), paths[first:first + count]):
            held[rel] = member
        first += count
    for rel in changed:
        held.pop(rel, None)
    reread = sorted(p for p in changed if now.get(p) != "")
    held.update(_read(top, reread, [f":./{p}" for p in reread], mapped))
    current = _commit(top)
    if current != commit:  # made against the current commit: the difference stays small
        commit, now = current, _difference(top, current)
    _save(where, stamp, commit, now, marks, held)
    return [member for member in held.values() if member.abspath not in leave_out]


def _save(where: Path, stamp: str, commit: str, difference: dict, marks: list, held: dict[str, Stored]) -> None:
    by_kind: dict[str, list[str]] = {}
    for rel in sorted(held):
        by_kind.setdefault(held[rel].kind, []).append(rel)
    groups, paths, places, blobs, offset = [], [], [], [], 0
    try:
        for kind, members in by_kind.items():
            groups.append((kind, len(members)))
            for rel in members:
                blob = held[rel].blob
                paths.append(rel)
                places += (offset, len(blob))
                blobs.append(blob)
                offset += len(blob)
        write_index(where, ("git", stamp, commit, difference, marks, groups, paths, places, offset), blobs)
    except Exception:  # noqa: BLE001 - a document that does not pickle: the index is only a cache
        return
    from gpulint.resources import prune

    prune("index-")

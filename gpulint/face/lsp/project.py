"""The workspace as the language server sees it. Each open file belongs to the project that
`gpulint - --stdin-filename FILE` reads around it (the nearest folder above it holding `.git`
or gpulint's configuration; else the workspace folder holding it). A project has its settings,
the files other files' checks consult (parsed once and kept: the index), and sees the editor's
unsaved buffers. Linting an open file is one engine run on its buffer, with its project's
index standing for the rest of the project.

Nothing here speaks the protocol: `server.py` does, and calls this.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpulint.face.arguments import UsageError, lint_parser, settings_from
from gpulint.paths import inside
from gpulint.run.config import ConfigError, Settings
from gpulint.run.engine import Options, Result, Source, context_document, run

# the names of gpulint's configuration files: a change to one reloads the settings
CONFIG_NAMES = ("pyproject.toml", ".gpulint.toml")


class Project:
    def __init__(self, root: Path | None, facts: dict | None = None, buffers: dict[str, str] | None = None) -> None:
        self.root = root
        self.facts = dict(facts or {})  # --driver, --gpu-class from initializationOptions
        # absolute path -> the open file's text in the editor (shared by the projects)
        self.buffers: dict[str, str] = {} if buffers is None else buffers
        self.index: dict[str, object] = {}  # absolute path -> Document other files' checks consult
        # the settings, as `gpulint ROOT` finds them; a configuration that does not read leaves
        # gpulint's defaults, and `config_error` says why
        self.settings, self.config_error = Settings(), None
        if root is not None:  # outside any project no configuration applies, as for the CLI
            try:
                self.settings = settings_from(lint_parser().parse_args([str(root)]))
            except (ConfigError, UsageError) as exc:
                self.config_error = str(exc)
            if self.settings.path is None:  # patterns are anchored at the project, not where the editor started
                self.settings.base = root
        self.rebuild()

    def is_config(self, path: str) -> bool:
        """Whether a change to `path` can change the settings."""
        if self.settings.path is not None and os.path.abspath(path) == str(self.settings.path):
            return True
        return os.path.basename(path) in CONFIG_NAMES and (
            self.root is None or inside(os.path.abspath(path), str(self.root)))

    # -- the index --------------------------------------------------------------------------

    def rebuild(self) -> None:
        from gpulint.run.discover import walk

        self.index = {}
        if self.root is None:
            return
        settings = self.settings
        for path in walk([str(self.root)], settings.excludes, base=settings.base,
                         gitignore=settings.respect_gitignore):
            self.refresh(os.path.abspath(path), walked=True)
        for path in self.buffers:
            self.refresh(path)

    def tracked(self, path: str) -> bool:
        """Whether `gpulint ROOT` would read `path`: in the workspace, not excluded or
        git-ignored."""
        from gpulint.run.discover import walk

        if self.root is None or not inside(path, str(self.root)):
            return False
        if not os.path.isfile(path):  # gone, or a buffer not saved yet
            return path in self.buffers and not os.path.lexists(path)
        settings = self.settings
        return bool(walk([path], settings.excludes, base=settings.base, gitignore=settings.respect_gitignore,
                         force_exclude=True))

    def refresh(self, path: str, walked: bool = False) -> bool:
        """Read `path` again (its buffer where it is open, else the disk) into the index;
        whether what other files' checks see changed. `walked`: found by walking the
        workspace, so known to be one `gpulint ROOT` reads."""
        from gpulint.crossfile.imagemap import mapped_paths

        text = self.buffers.get(path)
        source = Source(Path(path), text=None if text is None else text.encode("utf-8"), display=path)
        doc = context_document(source, mapped_paths(self.settings)) if walked or self.tracked(path) else None
        old = self.index.pop(path, None)
        if doc is not None:
            self.index[path] = doc
        return (old.text if old is not None else None) != (doc.text if doc is not None else None)

    # -- linting ----------------------------------------------------------------------------

    def lint(self, path: str, text: str) -> Result:
        """The findings of the open file `path` whose editor text is `text`."""
        context = [doc for where, doc in self.index.items() if where != path]
        options = Options(facts=dict(self.facts), context=context, jobs=1)
        source = Source(Path(path), text=text.encode("utf-8", "surrogatepass"), display=path, named=True)
        return run([source], self.settings, options)


class Projects:
    """The projects of the files the editor opens, made on first use."""

    def __init__(self, folders: list[Path], facts: dict | None = None) -> None:
        self.folders = folders  # the editor's workspace folders
        self.facts = dict(facts or {})
        self.buffers: dict[str, str] = {}
        self.by_root: dict[Path | None, Project] = {}
        self._roots: dict[str, Path | None] = {}  # folder -> its project's root (cleared on changes)

    def root_of(self, path: str) -> Path | None:
        from gpulint.face.cli import project_root

        folder = os.path.dirname(path)
        if folder not in self._roots:
            root = project_root(path)
            if root is None:
                root = next((f for f in self.folders if inside(path, str(f))), None)
            self._roots[folder] = root
        return self._roots[folder]

    def of(self, path: str) -> Project:
        root = self.root_of(path)
        if root not in self.by_root:
            self.by_root[root] = Project(root, self.facts, self.buffers)
        return self.by_root[root]

    def holding(self, path: str) -> list[Project]:
        """The projects whose index may hold `path`: those under whose root it lies."""
        return [p for p in self.by_root.values() if p.root is not None and inside(path, str(p.root))]

    def forget(self) -> None:
        """A configuration or a `.git` changed, came or went: the projects are made again,
        and which project a file belongs to is worked out again."""
        self._roots = {}
        self.by_root = {}

"""The workspace as the language server sees it: its settings, the files other files' checks
consult (parsed once and kept: the index), and the editor's unsaved buffers. Linting an
open file is one engine run on its buffer, as `gpulint - --stdin-filename PATH` would do,
with the index standing for the rest of the project.

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
    def __init__(self, root: Path | None, facts: dict | None = None) -> None:
        self.root = root
        self.facts = dict(facts or {})  # --driver, --gpu-class from initializationOptions
        self.buffers: dict[str, str] = {}  # absolute path -> the open file's text in the editor
        self.index: dict[str, object] = {}  # absolute path -> Document other files' checks consult
        self.settings = Settings()
        self.config_error: str | None = None
        self.reload()

    # -- settings ---------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the settings again (as `gpulint ROOT` finds them) and rebuild the index. A
        configuration that does not read keeps gpulint's defaults, and says why in
        `config_error`."""
        start = str(self.root) if self.root is not None else os.getcwd()
        try:
            self.settings = settings_from(lint_parser().parse_args([start]))
            self.config_error = None
        except (ConfigError, UsageError) as exc:
            self.settings = Settings()
            self.config_error = str(exc)
        if self.settings.path is None:  # patterns are anchored at the workspace, not where the editor started
            self.settings.base = Path(start)
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

"""`gpulint server`: a language server on stdio, on the same engine as the command line.

pygls and lsprotocol come with the optional extra `gpulint[lsp]`; they are imported by this
command only, so a lint run never pays for them.
"""

from __future__ import annotations

import sys

from gpulint.face.arguments import EXIT_CLEAN, EXIT_ERROR, Parser


def server_command(argv: list[str]) -> int:
    p = Parser(prog="gpulint server",
               description="Run gpulint as a language server on stdin/stdout (LSP), for editors: "
                           "findings as you type, quick fixes, rule hovers. Needs `gpulint[lsp]`.")
    p.parse_args(argv)
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError as exc:
        print(f"gpulint: `gpulint server` needs the language server packages ({exc.name} is not "
              f"installed): pip install 'gpulint[lsp]'", file=sys.stderr)
        return EXIT_ERROR
    from gpulint.face.lsp.server import serve

    serve()
    return EXIT_CLEAN

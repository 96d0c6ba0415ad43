"""`gpulint completion bash|zsh|fish`: a completion script built from the argument
parser, so a new option completes without editing three scripts.

    gpulint completion bash > /etc/bash_completion.d/gpulint
    gpulint completion zsh > "${fpath[1]}/_gpulint"
    gpulint completion fish > ~/.config/fish/completions/gpulint.fish

Imports inside functions: the catalog and the lint parser load only when a script is printed.
"""

from __future__ import annotations

import sys

SHELLS = ("bash", "zsh", "fish")


_SELECTORS = ("--select", "--extend-select", "--ignore")


def _options():
    """(flags, choices, help, takes a value) of every lint option; selectors complete
    to the rule codes."""
    from gpulint import catalog
    from gpulint.face.arguments import lint_parser

    out = []
    for action in lint_parser()._actions:
        if not action.option_strings:
            continue
        takes = action.nargs != 0
        choices = list(action.choices or ())
        if action.option_strings[0] in _SELECTORS:
            choices = ["ALL", *catalog.load_catalog()]
        out.append((action.option_strings, choices, action.help or "", takes))
    return out


def bash(commands: list[str]) -> str:
    options = _options()
    words = " ".join(flag for flags, *_ in options for flag in flags)
    cases = "\n".join(f"        {'|'.join(flags)}) COMPREPLY=($(compgen -W \"{' '.join(choices)}\" -- \"$cur\")); return;;"
                      for flags, choices, _, _ in options if choices)
    files = "|".join(flag for flags, choices, _, takes in options if takes and not choices for flag in flags)
    return f"""# bash completion for gpulint (gpulint completion bash)
_gpulint() {{
    local cur prev
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    case "$prev" in
{cases}
        {files}) COMPREPLY=($(compgen -f -- "$cur")); return;;
        completion) COMPREPLY=($(compgen -W "{' '.join(SHELLS)}" -- "$cur")); return;;
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "{words}" -- "$cur"))
    elif [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "{' '.join(commands)}" -- "$cur") $(compgen -f -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -F _gpulint gpulint
"""


def _zsh_escape(text: str) -> str:
    return text.replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def zsh(commands: list[str]) -> str:
    specs = []
    for flags, choices, help_text, takes in _options():
        value = f":value:({' '.join(choices)})" if choices else (":file:_files" if takes else "")
        names = "{" + ",".join(flags) + "}" if len(flags) > 1 else flags[0]
        specs.append(f"    '{names}[{_zsh_escape(help_text)}]{value}'" if len(flags) == 1
                     else f"    {names}'[{_zsh_escape(help_text)}]{value}'")
    commands = " ".join(commands)
    return "#compdef gpulint\n# zsh completion for gpulint (gpulint completion zsh)\n" \
           "_arguments -s \\\n" + " \\\n".join(specs) + \
           f" \\\n    '1: :({commands})' \\\n    '*:path:_files'\n"


def fish(commands: list[str]) -> str:
    lines = ["# fish completion for gpulint (gpulint completion fish)",
             f"complete -c gpulint -n '__fish_use_subcommand' -a '{' '.join(commands)}'",
             f"complete -c gpulint -n '__fish_seen_subcommand_from completion' -f -a '{' '.join(SHELLS)}'"]
    for flags, choices, help_text, takes in _options():
        parts = ["complete -c gpulint"]
        for flag in flags:
            parts.append(f"-l {flag[2:]}" if flag.startswith("--") else f"-s {flag[1:]}")
        if choices:
            parts.append(f"-x -a '{' '.join(choices)}'")
        elif takes:
            parts.append("-r -F")
        parts.append("-d '" + help_text.replace("\\", "\\\\").replace("'", "\\'") + "'")
        lines.append(" ".join(parts))
    return "\n".join(lines) + "\n"


def completion_command(argv: list[str], commands: list[str]) -> int:
    """Print the completion script for a shell; `commands` are gpulint's command words."""
    from gpulint.face.arguments import EXIT_ERROR, Parser

    p = Parser(prog="gpulint completion", description="Print a shell completion script.")
    p.add_argument("shell", choices=SHELLS)
    args = p.parse_args(argv)
    sys.stdout.write({"bash": bash, "zsh": zsh, "fish": fish}[args.shell](commands))
    return 0 if args.shell in SHELLS else EXIT_ERROR

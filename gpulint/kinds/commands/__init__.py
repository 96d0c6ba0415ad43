"""GPU container command lines (`docker run --gpus`, `nerdctl`, `podman`, `ctr`, `crictl
pull`) in shell scripts, Makefiles, docs and CI files."""

from gpulint.kinds.commands import recognise
from gpulint.registry import Kind

KIND = Kind("commands", precedence=80, wants=recognise.wants, by_content=recognise.by_content,
            parse="gpulint.kinds.commands.parse:parse", families=("gpulint.kinds.commands.checks", "gpulint.kinds.commands.helm"),
            shared="never")

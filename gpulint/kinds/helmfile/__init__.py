"""Helmfile state files (`helmfile.yaml`, `helmfile.d/*.yaml`): the releases of NVIDIA's
charts they install, their inline values and `set`/`setString` entries judged where they are
written."""

from gpulint.kinds.helmfile import recognise
from gpulint.registry import Kind

KIND = Kind("helmfile", precedence=65, by_name=recognise.by_name, by_folder=recognise.by_folder,
            wants=recognise.wants, by_content=recognise.by_content,
            parse="gpulint.kinds.helmfile.parse:parse", families=("gpulint.kinds.helmfile.checks",),
            templated=True, shared="never", block_strings=True)

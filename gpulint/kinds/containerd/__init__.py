"""containerd's config.toml, its drop-ins and k3s/RKE2 templates."""

from gpulint.kinds.containerd import recognise
from gpulint.registry import Kind

KIND = Kind("containerd", precedence=30, by_folder=recognise.by_folder, wants=recognise.wants, by_content=recognise.by_content,
            parse="gpulint.kinds.containerd.parse:parse",
            families=tuple(f"gpulint.kinds.containerd.{m}" for m in ("checks", "runtimes", "tables", "plugins", "merge", "decoded")),
            templated=True, kept="gpulint.kinds.containerd.facts:kept_part", block_strings=True)

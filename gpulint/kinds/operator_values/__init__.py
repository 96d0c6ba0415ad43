"""The GPU Operator Helm chart's values; the compatibility checks read them (crossfile)."""

from gpulint.kinds.operator_values import recognise
from gpulint.registry import Kind

KIND = Kind("gpu-operator-values", precedence=70, wants=recognise.wants, by_content=recognise.by_content,
            parse="gpulint.kinds.operator_values.parse:parse",
            families=("gpulint.kinds.operator_values.checks", "gpulint.kinds.operator_values.injection"),
            block_strings=True)

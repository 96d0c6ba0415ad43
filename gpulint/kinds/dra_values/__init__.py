"""The NVIDIA DRA driver Helm chart's values; the Kubernetes DRA checks read which device
classes it creates and which feature gates it turns on (`ctx.fact("dra-driver-values")`)."""

from gpulint.kinds.dra_values import recognise
from gpulint.registry import Kind

KIND = Kind("dra-driver-values", precedence=72, wants=recognise.wants, by_content=recognise.by_content,
            parse="gpulint.kinds.dra_values.parse:parse", block_strings=True)

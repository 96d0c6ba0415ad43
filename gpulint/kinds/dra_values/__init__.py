"""The NVIDIA DRA driver Helm chart's values; the Kubernetes DRA checks read which device
classes it creates and which feature gates it turns on (`ctx.fact("dra-driver-values")`), and
its own checks judge the API version it renders DeviceClasses in."""

from gpulint.kinds.dra_values import recognise
from gpulint.registry import Kind

KIND = Kind("dra-driver-values", precedence=72, wants=recognise.wants, by_content=recognise.by_content,
            parse="gpulint.kinds.dra_values.parse:parse", families=("gpulint.kinds.dra_values.checks",),
            block_strings=True)

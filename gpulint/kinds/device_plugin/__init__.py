"""The NVIDIA device plugin's (and GPU Feature Discovery's) config file: on its own, in a
ConfigMap's `data` or in the device plugin chart's `config.map` values."""

from gpulint.kinds.device_plugin import recognise
from gpulint.registry import Kind

KIND = Kind("device-plugin", precedence=45, wants=recognise.wants, by_content=recognise.by_content,
            parse="gpulint.kinds.device_plugin.parse:parse",
            families=("gpulint.kinds.device_plugin.checks",), shared="always",
            templated=True)

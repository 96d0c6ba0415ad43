"""What joins file kinds: Pod -> RuntimeClass -> node config, image -> CUDA -> node
driver. The modules here may read every kind's facts; a kind's checks reach the joined
facts through `ctx.fact(name)`, never by importing another kind.
"""

from __future__ import annotations

# facts joined across kinds: name -> the function that computes it from the Context
FACTS = {
    "node-configs": "gpulint.crossfile.nodes:node_configs",
    "kubelet-cgroup-driver": "gpulint.crossfile.nodes:kubelet_cgroup_driver",
    "devcontainer-dockerfiles": "gpulint.crossfile.devcontainers:built_dockerfiles",
    "device-plugin-releases": "gpulint.crossfile.plugin_releases:plugin_releases",
    "dra-driver-values": "gpulint.crossfile.dra_driver:driver_values",
}

# rule families that join kinds -> the file kinds that make them worth importing
FAMILIES: dict[str, tuple[str, ...]] = {
    "gpulint.crossfile.checks": ("kubernetes",),
    "gpulint.crossfile.sharing": ("device-plugin", "gpu-operator-values", "kubernetes"),
    "gpulint.crossfile.held_plugin_configs": ("gpu-operator-values", "kubernetes"),
    "gpulint.crossfile.mps": ("device-plugin", "kubernetes"),
    "gpulint.crossfile.held_mig_configs": ("gpu-operator-values", "kubernetes"),
    "gpulint.crossfile.mig_config_names": ("gpu-operator-values", "kubernetes", "commands"),
    "gpulint.crossfile.compat": ("kubernetes", "dockerfile", "gpu-operator-values", "compose", "commands",
                                 "devcontainer"),
    "gpulint.crossfile.units": ("systemd", "daemon-json"),
    "gpulint.crossfile.operator_driver_crd": ("kubernetes", "gpu-operator-values", "commands"),
    "gpulint.crossfile.operator_toolkit": ("gpu-operator-values", "kubernetes"),
    "gpulint.crossfile.dra_device_plugin": ("dra-driver-values", "commands"),
}


def families(kind_names) -> list[str]:
    return [module for module, needs in FAMILIES.items() if set(kind_names).intersection(needs)]

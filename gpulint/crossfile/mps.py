"""GL459: a device plugin config that shares GPUs with MPS, run by device plugin DaemonSets
the linted manifests deploy themselves (not the plugin's Helm chart or the GPU Operator, which
set the MPS root and run the MPS control daemon):

- the plugin refuses an MPS config without an MPS root (`flags.mpsRoot`, `--mps-root` or
  MPS_ROOT): "using MPS requires --mps-root to be specified" (cmd/nvidia-device-plugin/main.go
  validateFlags), and exits;
- with a root but no MPS control daemon (`mps-control-daemon`, which the chart deploys as a
  DaemonSet of its own), the plugin waits for a daemon that never comes ("error waiting for
  MPS daemon") and advertises nothing.

Only the linted manifests are consulted: the check speaks when every linted plugin DaemonSet
that reads a config file (CONFIG_FILE, `--config-file`) lacks what MPS needs, and says nothing
where no such DaemonSet is linted.
"""

from __future__ import annotations

from gpulint.crossfile.held_plugin_configs import held_configs
from gpulint.kinds.device_plugin.facts import configs, flag, folded
from gpulint.kinds.device_plugin.parse import CHART_VALUES
from gpulint.kinds.kubernetes.facts import (
    Container,
    PodSpec,
    env_vars,
    pod_specs,
    scalar_str,
)
from gpulint.model import Document, sequence
from gpulint.regex import lazy
from gpulint.registry import Context, check, finding, related

_PLUGIN_IMAGE = lazy(r"(?:^|/)k8s-device-plugin[:@]")
_RELEASE = lazy(r"(?:^|/)k8s-device-plugin:v?(\d+)\.(\d+)")
MPS_SINCE = (0, 15)  # the first device plugin release that shares with MPS
_CONTROL_DAEMON = lazy(r"mps-control-daemon")


def _words(container: Container) -> list[str]:
    return [str(item.value) for key in ("command", "args") for item in sequence(container.node.get(key))
            if item.is_scalar and item.value is not None]


def _is_control_daemon(container: Container) -> bool:
    return any(_CONTROL_DAEMON.search(w) for w in [container.name or "", *_words(container)])


def _knows_mps(image: str) -> bool:
    """Older plugins drop `sharing.mps` as a key they do not know (GL451 says so)."""
    match = _RELEASE.search(image)
    return match is None or (int(match[1]), int(match[2])) >= MPS_SINCE


def _given(container: Container, env: str, flag: str) -> bool:
    """Whether the container sets a plugin option, as its environment variable or its flag."""
    if any(name == env and value is not None and scalar_str(value) for name, _, value in env_vars(container)):
        return True
    return any(w == flag or w.startswith(flag + "=") for w in _words(container))


def _reads_config(container: Container) -> bool:
    """A plugin started without a config file runs no MPS."""
    return _given(container, "CONFIG_FILE", "--config-file")


def _has_mps_root(container: Container) -> bool:
    return _given(container, "MPS_ROOT", "--mps-root")


class _Deployments:
    """The device plugin containers of the linted DaemonSets, and whether any linted
    workload runs the MPS control daemon."""

    __slots__ = ("plugins", "control_daemon")

    def __init__(self, plugins: list[tuple[PodSpec, Container]], control_daemon: bool) -> None:
        self.plugins = plugins
        self.control_daemon = control_daemon


def _deployments(ctx: Context) -> _Deployments:
    def compute() -> _Deployments:
        plugins, control_daemon = [], False
        for doc in ctx.of_kind("kubernetes"):
            if doc.templated:
                continue  # a chart's templates: its values decide, not these lines
            for pod in pod_specs(doc):
                for container in pod.containers:
                    if _is_control_daemon(container):
                        control_daemon = True
                    elif pod.kind == "DaemonSet" and _PLUGIN_IMAGE.search(container.image or "") \
                            and container.section == "containers" and _knows_mps(container.image) \
                            and _reads_config(container):
                        plugins.append((pod, container))
        return _Deployments(plugins, control_daemon)

    return ctx.memo("crossfile.mps-deployments", compute)


def _mps_configs(doc: Document):
    if CHART_VALUES in doc.cache:
        return  # the plugin's chart values: the chart sets the root and runs the control daemon
    held = held_configs(doc) if doc.kind == "kubernetes" else configs(doc)
    for config in held:
        mps = folded(config.root, "sharing", "mps")
        if mps is not None and mps.is_map and mps.value:
            yield config, mps


@check("GL459", kinds=("device-plugin", "kubernetes"))
def mps_without_its_daemon(doc: Document, ctx: Context):
    found = list(_mps_configs(doc))
    if not found:
        return
    deployed = _deployments(ctx)
    if not deployed.plugins:
        return
    without_root = [(pod, c) for pod, c in deployed.plugins if not _has_mps_root(c)]
    for config, mps in found:
        name = f"device plugin config `{config.name}`" if config.name else "this device plugin config"
        where = [related(pod.doc, c.node.key_span if c.node.key_span else c.node.span,
                         f"device plugin container `{c.name or '?'}` of DaemonSet `{pod.name or '?'}`")
                 for pod, c in deployed.plugins]
        root = flag(config.root, "mpsRoot")
        if (root is None or not scalar_str(root)) and len(without_root) == len(deployed.plugins):
            yield finding(doc, "GL459", mps.key_span,
                          f"{name} shares GPUs with MPS, but neither it (`flags.mpsRoot`) nor the linted "
                          f"device plugin DaemonSets (MPS_ROOT, `--mps-root`) set the MPS root: the plugin "
                          f"exits at start (`using MPS requires --mps-root to be specified`); deploy the "
                          f"plugin with its Helm chart, which sets the root and runs the MPS control daemon, "
                          f"or set MPS_ROOT=/run/nvidia/mps and deploy the control daemon",
                          related=where)
        elif not deployed.control_daemon:
            yield finding(doc, "GL459", mps.key_span,
                          f"{name} shares GPUs with MPS, but no linted workload runs the MPS control daemon "
                          f"(`mps-control-daemon`, which the device plugin's Helm chart deploys as a DaemonSet "
                          f"of its own): the plugin waits for it (`error waiting for MPS daemon`) and "
                          f"advertises no GPUs; deploy the plugin with its Helm chart or run the control "
                          f"daemon beside it", severity="warning", related=where)

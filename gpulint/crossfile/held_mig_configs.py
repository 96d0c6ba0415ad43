"""GL461-GL465 and GL467 on the MIG configs that files of other kinds hold: the GPU Operator
chart's `migManager.config.data` (a map of ConfigMap keys to config text since chart v24.6.0,
which the chart turns into the ConfigMap `migManager.config.name`) and ConfigMaps in a manifest
beside other objects (the MIG manager's DaemonSet). They are judged as mig-config files are, at
their lines in the file."""

from __future__ import annotations

from gpulint.crossfile.held import judge_held
from gpulint.formats.errors import ParseError
from gpulint.formats.template import neutralise
from gpulint.kinds.mig_config import checks
from gpulint.kinds.mig_config.facts import HELD, configs
from gpulint.kinds.mig_config.parse import Config, configmap_name, held
from gpulint.model import Document, Node
from gpulint.registry import Context, check

_RULES = (checks.decode_refused, checks.profile_unknown, checks.over_capacity, checks.disabled_with_devices,
          checks.entries_overlap, checks.filter_unreadable)


def chart_config(doc: Document) -> Node | None:
    """The chart values' `migManager.config` table."""
    tree = doc.tree
    config = tree.get("migManager", "config") if tree is not None and tree.is_map else None
    return config if config is not None and config.is_map else None


def held_configs(doc: Document) -> list[Config]:
    """The MIG configs the values or the manifest hold (memoised on the document)."""
    if HELD not in doc.cache:
        doc.cache[HELD], doc.cache[HELD + ".errors"] = _read(doc)
    return doc.cache[HELD]


def _read(doc: Document) -> tuple[list[Config], list[ParseError]]:
    if doc.kind == "gpu-operator-values":
        config = chart_config(doc)
        name = config.get("name") if config is not None else None
        holders = [(config.get("data"), name.value if name is not None and isinstance(name.value, str) else "")] \
            if config is not None else []
    else:
        holders = [(obj.get("data"), configmap_name(obj)) for obj in doc.tree or ()
                   if obj.is_map and configmap_name(obj)]
    found, errors = [], []
    # the text the tree was read from: a template's expressions set aside (only where a
    # config may be held: most manifests hold none)
    text = (neutralise(doc.text) if doc.templated else doc.text) if holders else ""
    for data, configmap in holders:
        try:
            found.extend(held(text, doc, data, configmap))
        except ParseError as exc:
            errors.append(exc)
    return found, errors


@check("GL461", "GL462", "GL463", "GL464", "GL465", "GL467", kinds=("gpu-operator-values", "kubernetes"))
def mig_config_held(doc: Document, ctx: Context):
    if held_configs(doc) or doc.cache[HELD + ".errors"]:
        yield from judge_held(doc, ctx, doc.cache[HELD + ".errors"], "GL461",
                              "mig-parted cannot read it and the MIG manager applies no config", _RULES)


def all_linted_configs(ctx: Context) -> list[Config]:
    return ctx.memo("crossfile.all-mig-configs", lambda: [
        *(c for doc in ctx.of_kind("kubernetes") for c in held_configs(doc)),
        *(c for doc in ctx.of_kind("gpu-operator-values") for c in held_configs(doc)),
        *(c for doc in ctx.of_kind("mig-config") for c in configs(doc))])

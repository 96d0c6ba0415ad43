"""Kubernetes manifests (YAML or JSON; `List` kinds flattened)."""

from gpulint.kinds.kubernetes import recognise
from gpulint.registry import Kind

KIND = Kind("kubernetes", precedence=50, wants=recognise.wants, by_content=recognise.by_content,
            parse="gpulint.kinds.kubernetes.parse:parse", families=("gpulint.kinds.kubernetes.checks", "gpulint.kinds.kubernetes.scheduling",
                                                                "gpulint.kinds.kubernetes.dra_checks",
                                                                "gpulint.kinds.kubernetes.operator_objects",
                                                                "gpulint.kinds.kubernetes.operator_helmchart",
                                                                "gpulint.kinds.kubernetes.operator_toolkit_env",
                                                                "gpulint.kinds.kubernetes.quota",
                                                                "gpulint.kinds.kubernetes.plugin_pods"),
            templated=True, shared="if-defines",
            defines_shared="gpulint.kinds.kubernetes.facts:may_define_shared_object",
            kept="gpulint.kinds.kubernetes.facts:shared_objects", block_strings=True)

"""`gpulint mig [MODEL]`: the GPU models whose MIG profiles gpulint knows, or one model's
profiles with their compute and memory slices and how many of each fit (rules/mig-profiles.yaml).

Exit codes: 0 answered, 1 no such model, 2 usage errors."""

from __future__ import annotations

import json
import sys

EXIT_OK, EXIT_UNKNOWN = 0, 1


def _parser():
    from gpulint.face.arguments import Parser

    p = Parser(prog="gpulint mig", description="The MIG profiles of each MIG-capable GPU model.")
    p.add_argument("model", nargs="?", metavar="MODEL",
                   help="a model (H100-80GB, A30, `H200 NVL`) or its PCI device ID (0x233010DE); "
                        "without it, every model")
    p.add_argument("--format", choices=("text", "json"), default="text")
    return p


def _model_facts(model) -> dict:
    from gpulint.knowledge import mig

    return {"model": model.name, "products": list(model.names), "device_ids": list(model.device_ids),
            "compute_slices": model.compute_slices, "memory_slices": model.memory_slices,
            "profiles": [p._asdict() for p in model.profiles.values()],
            "source": "; ".join(mig.data()["sources"][key.strip()] for key in model.source.split(","))}


def _find(name: str):
    from gpulint.knowledge import mig

    found = mig.model(name)
    if found is None and mig.device_id(name) is not None:
        models = mig.models_with_id(mig.device_id(name))
        found = models[0] if models else None
    return found


def mig_command(argv: list[str]) -> int:
    from gpulint.knowledge import mig

    args = _parser().parse_args(argv)
    if args.model is None:
        data = {"as_of": mig.data()["as_of"], "models": [_model_facts(m) for m in mig.models().values()]}
        width = max(len(m.name) for m in mig.models().values())
        lines = [f"{m.name:<{width}}  {m.compute_slices} compute slices, {len(m.profiles)} profiles"
                 + (f"  ({', '.join(m.names)})" if m.names else "") for m in mig.models().values()]
        lines.append("`gpulint mig MODEL` lists a model's profiles")
    else:
        model = _find(args.model)
        if model is None:
            print(f"gpulint: no MIG-capable GPU model {args.model} is known; the models are "
                  f"{', '.join(mig.models())} (MIG data as of {mig.data()['as_of']})", file=sys.stderr)
            return EXIT_UNKNOWN
        data = _model_facts(model)
        memory = f", {model.memory_slices} memory slices" if model.memory_slices else ""
        lines = [f"{model.name}" + (f" ({', '.join(model.names)})" if model.names else ""),
                 f"  device IDs: {', '.join(model.device_ids)}",
                 f"  {model.compute_slices} compute slices{memory}",
                 "  profile           compute  memory  at most  starts at memory slice"]
        lines += [f"  {p.name:<17} {p.compute:>7}  {p.memory if p.memory is not None else '-':>6}  {p.max:>7}"
                  f"  {','.join(map(str, p.starts)) if p.starts is not None else '-'}"
                  for p in model.profiles.values()]
        lines.append(f"  source: {data['source']}")
    print(json.dumps(data, indent=2) if args.format == "json" else "\n".join(lines))
    return EXIT_OK

"""The study files of the SmolLM2 runs, made from the examples (on a GPU: lm_gpu_smollm2.sh).

    python3 benchmarks/lm_gpu_configs.py OUT_DIR [--smoke | --cpu]

Each is the example's quick form with SmolLM2-135M-Instruct as the agent on CUDA: one seed, the
frozen simulator and the plain randomized ensemble (the best ensemble of the tiny-model runs'
design), a warm start and GRPO sized for a pretrained model (full fine-tuning learning rates,
tokens per turn for SmolLM2's tokenizer, whose JSON tool blocks take more tokens than the tiny
model's). ``--smoke`` shrinks everything to a few calls on the CPU, to check the run's path
before device time is spent on it. ``--cpu`` is what two CPU cores finish in about 90 minutes
(measured, docs/results/lm-agents.md): a warm start on 160 calls (23 minutes), 2 GRPO steps of
2 groups x 4 calls (10-12 minutes a step, the two conditions side by side), the programmatic
held-out families only (a replayed patient's call is long to play on a CPU), ``micro_batch`` 1
(two sub-runs at 2 each were killed for memory on a 24 GB machine: 12-14 GB a process).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

EXAMPLES = {"intake": "examples/lm-collapse.yaml", "support": "examples/lm-support.yaml"}
KEEP = ("frozen-small", "ensemble-randomized")


def gpu_study(example: Path, smoke: bool) -> dict[str, object]:
    """The GPU form, or with ``smoke`` its few-call check on a CPU."""
    study = yaml.safe_load(example.read_text())
    study.pop("quick", None)
    study["seeds"] = [0]
    study["conditions"] = [c for c in study["conditions"] if c["name"] in KEEP]
    study["agent"].update(
        model="smollm2",
        device="cpu" if smoke else "cuda",
        steps=1 if smoke else 6,
        groups=1 if smoke else 4,
        group_size=2 if smoke else 8,
        micro_batch=1 if smoke else 8,
        lr=2e-5,
        beta=0.05,
        max_new_tokens=128,
        warm_start={
            "episodes": 4 if smoke else 600,
            "epochs": 1 if smoke else 2,
            "lr": 5e-5,
            "batch": 2 if smoke else 8,
            "style_rate": 0.3,
        },
    )
    study["eval"] = {"episodes_per_member": 1 if smoke else 2, "per_family": {}}
    if smoke:
        ens = study["ensemble"]
        ens["heldout"] = ens["heldout"][:1]
        ens["members_per_family"] = 1
        ens["members"] = {}
        study["train"]["max_turns"] = 6
    else:
        real = study["ensemble"]["heldout"][-1]
        study["eval"]["per_family"] = {real: 1}
    study["name"] = f"{study['name']}-smollm2"
    return study


def cpu_study(example: Path) -> dict[str, object]:
    """The two-core form: the GPU form cut to what two CPU cores finish in about 90 minutes."""
    study = gpu_study(example, smoke=False)
    agent = study["agent"]
    assert isinstance(agent, dict)
    agent.update(device="cpu", steps=2, groups=2, group_size=4, micro_batch=1, temperature=0.7)
    agent["max_new_tokens"] = 192  # SmolLM2's read-backs: 99th percentile 165 tokens, longest 245
    agent["warm_start"].update(episodes=160, epochs=1, lr=1e-4)
    ensemble = study["ensemble"]
    assert isinstance(ensemble, dict)
    real = ensemble["heldout"][-1]
    ensemble["heldout"] = ensemble["heldout"][:-1]
    ensemble["members"].pop(real, None)
    study["eval"] = {"episodes_per_member": 1, "per_family": {}}
    study["name"] = f"{study['name']}-cpu"
    return study


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--smoke", action="store_true")
    form.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for scenario, example in EXAMPLES.items():
        target = args.out / f"{scenario}.yaml"
        study = cpu_study(Path(example)) if args.cpu else gpu_study(Path(example), args.smoke)
        target.write_text(yaml.safe_dump(study, sort_keys=False))
        print(target)


if __name__ == "__main__":
    main()

"""The study files of the SmolLM2 GPU run (benchmarks/lm_gpu_smollm2.sh), made from the examples.

    python3 benchmarks/lm_gpu_configs.py OUT_DIR [--smoke]

Each is the example's quick form with SmolLM2-135M-Instruct as the agent on CUDA: one seed, the
frozen simulator and the plain randomized ensemble (the best ensemble of the tiny-model runs'
design), a warm start and GRPO sized for a pretrained model (full fine-tuning learning rates,
tokens per turn for SmolLM2's tokenizer, whose JSON tool blocks take more tokens than the tiny
model's). ``--smoke`` shrinks everything to a few calls on the CPU, to check the run's path
before device time is spent on it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

EXAMPLES = {"intake": "examples/lm-collapse.yaml", "support": "examples/lm-support.yaml"}
KEEP = ("frozen-small", "ensemble-randomized")


def gpu_study(example: Path, smoke: bool) -> dict[str, object]:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for scenario, example in EXAMPLES.items():
        target = args.out / f"{scenario}.yaml"
        target.write_text(yaml.safe_dump(gpu_study(Path(example), args.smoke), sort_keys=False))
        print(target)


if __name__ == "__main__":
    main()

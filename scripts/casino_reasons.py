"""Derive the negotiation scenario's short list of campers' reasons from CaSiNo.

CaSiNo (Chawla et al., NAACL 2021; CC BY 4.0) has each participant write why they need their
high, medium and low priority item. This picks, per item, the first short, single-sentence
reasons that name the item, from the training split only, and prints them as the YAML the
scenario reads (``scenarios/negotiation/data/reasons.yaml``). The corpus itself is never copied.

    python scripts/casino_reasons.py $SIM2HUMAN_DATA/casino/casino_train.json > \
        src/sim2human/scenarios/negotiation/data/reasons.yaml
"""

from __future__ import annotations

import json
import sys

ISSUES = ("food", "water", "firewood")
PER_ISSUE = 8
MAX_CHARS = 90


def reasons(path: str) -> dict[str, list[str]]:
    with open(path, encoding="utf-8") as f:
        dialogues = json.load(f)
    out: dict[str, list[str]] = {i: [] for i in ISSUES}
    for d in dialogues:
        for info in d["participant_info"].values():
            for level, issue in info["value2issue"].items():
                text = " ".join(info["value2reason"][level].split()).strip()
                key = issue.lower()
                if level != "High" or len(out[key]) >= PER_ISSUE:
                    continue
                ok = len(text) <= MAX_CHARS and key in text.lower() and text.count(".") <= 1
                if ok and text.isascii() and text not in out[key]:
                    out[key].append(text.rstrip(".") + ".")
    return out


def main() -> None:
    print("# Campers' reasons for needing an item, derived by scripts/casino_reasons.py from")
    print("# CaSiNo (Chawla et al., NAACL 2021; https://github.com/kushalchawla/CaSiNo),")
    print("# casino_train.json participants' value2reason, CC BY 4.0. Short list only.")
    for issue, lines in reasons(sys.argv[1]).items():
        print(f"{issue}:")
        for line in lines:
            print(f"  - {json.dumps(line)}")


if __name__ == "__main__":
    main()

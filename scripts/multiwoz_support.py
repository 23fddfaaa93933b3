"""Write the `support` scenario's corpus-derived parts from MultiWOZ 2.1 (val + test).

    PYTHONPATH=src python scripts/multiwoz_support.py            # rewrite the files
    PYTHONPATH=src python scripts/multiwoz_support.py --forms    # also print mined surface forms

Reads the corpus where `sim2human.corpora.multiwoz` finds it ($SIM2HUMAN_DATA or
../shared/data/multiwoz21-convlab2) and writes, under src/sim2human/scenarios/data/support/:

- `food.txt`: every cuisine a restaurant goal names (val + test), minus those holding an area or
  price word ("north american" would read as the area "north");
- `times.txt`: every booking time the goals name, each with its 12-hour alias ("7:30 pm"); a
  vocabulary keeps words and digits only, so "19:30" is the value "19 30" (read from "19:30");
- the `profiles:` rows of `scenario.yaml` (between its BEGIN/END markers): the restaurant goals
  of the *val* split with all six slots (area, pricerange, food, day, people, time), one row each.

The test split is left to the held-out replay family (`multiwoz-heldout`), so no goal a replayed
caller plays is a training profile. `--forms` prints the commonest one-slot user informs and
system requests (value replaced by `{v}`), which is where the file's `say` and `ask` came from.
"""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

from sim2human.corpora import multiwoz

OUT = Path(__file__).resolve().parents[1] / "src/sim2human/scenarios/data/support"
AREAS = ("centre", "north", "south", "east", "west")
PRICES = ("cheap", "moderate", "expensive")
SLOTS = ("area", "pricerange", "food", "day", "people", "time")
BEGIN, END = "# BEGIN generated profiles", "# END generated profiles"
HEADER = "# Written by scripts/multiwoz_support.py from MultiWOZ 2.1 ({src}); do not edit.\n"


def twelve_hour(t: str) -> str:
    h, m = (int(x) for x in t.split(":"))
    return f"{h % 12 or 12}:{m:02d} {'pm' if h >= 12 else 'am'}"


def spoken(t: str) -> str:
    """A time as the vocabulary holds it: names keep words and digits only ("19:30" -> "19 30")."""
    return t.replace(":", " ")


def goals() -> list[tuple[str, multiwoz.Goal]]:
    return [
        (d.split, g)
        for split in multiwoz.SPLITS
        for d in multiwoz.load(split)
        if (g := d.goals.get("restaurant")) is not None
    ]


def foods(found: list[tuple[str, multiwoz.Goal]]) -> list[str]:
    clash = set(AREAS) | set(PRICES)
    names = {g.info["food"] for _, g in found if "food" in g.info}
    return sorted(n for n in names if not clash & set(n.split()))


def times(found: list[tuple[str, multiwoz.Goal]]) -> list[str]:
    names = {
        g.book["time"] for _, g in found if re.fullmatch(r"\d{1,2}:\d\d", g.book.get("time", ""))
    }
    return sorted(names, key=lambda t: tuple(int(x) for x in t.split(":")))


def rows(found: list[tuple[str, multiwoz.Goal]], food: set[str], time: set[str]) -> list[str]:
    out = []
    for split, g in found:
        v = {**g.info, **g.book}
        if split != "val" or any(s not in v for s in SLOTS):
            continue
        if v["food"] not in food or v["time"] not in time or v["area"] not in AREAS:
            continue
        if (
            v["pricerange"] not in PRICES
            or not v["people"].isdigit()
            or not 1 <= int(v["people"]) <= 8
        ):
            continue
        out.append(
            f"    - {{area: {v['area']}, pricerange: {v['pricerange']}, food: {v['food']}, "
            f"day: {v['day']}, people: {int(v['people'])}, time: {spoken(v['time'])}}}"
        )
    return out


def write_profiles(lines: list[str]) -> None:
    path = OUT / "scenario.yaml"
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN + "\n")
    _, _, tail = rest.partition(END)
    body = "profiles:\n  rows:\n" + "\n".join(lines) + "\n"
    path.write_text(f"{head}{BEGIN}\n{body}{END}{tail}", encoding="utf-8")


def print_forms() -> None:
    inform: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    ask: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for split in multiwoz.SPLITS:
        for d in multiwoz.load(split):
            for t in d.turns:
                if t.domains <= {"restaurant", "booking"} and len(t.text) < 70:
                    (ask if t.speaker == "system" else inform)[",".join(sorted(t.domains))][
                        t.text
                    ] += 1
    for name, table in (("user", inform), ("system", ask)):
        for dom, c in table.items():
            print(f"## {name} {dom}")
            for text, n in c.most_common(25):
                print(f"{n:4d}  {text}")


def main(argv: list[str]) -> int:
    found = goals()
    food, time = foods(found), times(found)
    header = HEADER.format(src=multiwoz.SOURCE)
    (OUT / "food.txt").write_text(header + "\n".join(food) + "\n", encoding="utf-8")
    (OUT / "times.txt").write_text(
        header + "\n".join(f"{t}|{twelve_hour(t)}" for t in time) + "\n", encoding="utf-8"
    )
    lines = rows(found, set(food), set(time))
    write_profiles(lines)
    print(f"{len(food)} foods, {len(time)} times, {len(lines)} profile rows (val goals)")
    if "--forms" in argv:
        print_forms()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

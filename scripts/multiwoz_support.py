"""Write the `support` scenario's corpus-derived parts from MultiWOZ 2.1 (val + test).

    PYTHONPATH=src python scripts/multiwoz_support.py            # rewrite the files
    PYTHONPATH=src python scripts/multiwoz_support.py --forms    # also print mined surface forms

Reads the corpus where `sim2human.corpora.multiwoz` finds it ($SIM2HUMAN_DATA or
../shared/data/multiwoz21-convlab2) and writes, under src/sim2human/scenarios/support/:

- `food.txt`: every cuisine a restaurant goal names (val + test), minus those holding an area or
  price word ("north american" would read as the area "north");
- `times.txt`: every booking time the goals name, each with its 12-hour alias ("7:30 pm"); a
  vocabulary keeps words and digits only, so "19:30" is the value "19 30" (read from "19:30");
- the `profiles:` rows of `scenario.yaml` (between its BEGIN/END markers): the restaurant, hotel
  and train goals of the *val* split with every slot their domain takes here (`SLOTS`), one row
  each; a goal whose first booking request fails (`fail_book`: a restaurant's time, a hotel's
  stay) is a change call (`task: time change`, `old_time` the time first asked for, `time` the
  one it changed to; `CHANGES`), every other goal a new booking (a failed day, in two test goals
  and no val goal with every slot, is no change the file has: no row);
- the `say:` lines of its `destination` and `departure` fields: the val split's commonest train
  user turns stating that station with one of the field's `markers` (hand-written in the file)
  and nothing else the scenario reads but the domain (`say_forms`).

The test split is left to the held-out replay family (`multiwoz-heldout`), so no goal a replayed
caller plays is a training profile. `--forms` prints the commonest one-slot user informs and
system requests (value replaced by `{v}`), which is where the file's `say` and `ask` came from.
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

from sim2human.corpora import multiwoz
from sim2human.scenarios.files.load import load_scenario_file
from sim2human.scenarios.files.markers import carries, marks
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.scenarios.support.replay import CHANGES, SLOTS, change_fields

OUT = Path(__file__).resolve().parents[1] / "src/sim2human/scenarios/support"
AREAS = ("centre", "north", "south", "east", "west")
PRICES = ("cheap", "moderate", "expensive")
DOMAINS = ("restaurant", "hotel", "train")
ORDER = (
    "domain",
    "task",
    "area",
    "pricerange",
    "food",
    "destination",
    "departure",
    "day",
    "people",
    "old_time",
    "time",
    "old_stay",
    "stay",
)
BEGIN, END = "# BEGIN generated profiles", "# END generated profiles"
HEADER = "# Written by scripts/multiwoz_support.py from MultiWOZ 2.1 ({src}); do not edit.\n"


def clock(t: str) -> str | None:
    """A goal's time as ``H:MM`` ("09:15" -> "9:15"), or None when it is not a clock time."""
    if not re.fullmatch(r"\d{1,2}:\d\d", t):
        return None
    h, m = (int(x) for x in t.split(":"))
    return f"{h}:{m:02d}" if h < 24 and m < 60 else None


def twelve_hour(t: str) -> str:
    h, m = (int(x) for x in t.split(":"))
    return f"{h % 12 or 12}:{m:02d} {'pm' if h >= 12 else 'am'}"


def spoken(t: str) -> str:
    """A time as the vocabulary holds it: names keep words and digits only ("19:30" -> "19 30")."""
    return t.replace(":", " ")


Found = list[tuple[str, str, dict[str, str], dict[str, str]]]
"""(split, domain, the goal's slots merged, its ``fail_book``) of every goal of a supported
domain."""


def goals() -> Found:
    return [
        (d.split, dom, {**g.info, **g.book}, g.fail_book)
        for split in multiwoz.SPLITS
        for d in multiwoz.load(split)
        for dom in DOMAINS
        if (g := d.goals.get(dom)) is not None
    ]


def foods(found: Found) -> list[str]:
    clash = set(AREAS) | set(PRICES)
    names = {v["food"] for _, dom, v, _ in found if dom == "restaurant" and "food" in v}
    return sorted(n for n in names if not clash & set(n.split()))


def stations(found: Found) -> list[str]:
    return sorted(
        {
            v[k]
            for _, dom, v, _ in found
            if dom == "train"
            for k in ("departure", "destination")
            if k in v
        }
    )


def times(found: Found) -> list[str]:
    """Every clock time a goal names: a restaurant's booking time (also the one first asked
    for, ``fail_book``) and a train's departure."""
    slot = {"restaurant": "time", "train": "leaveAt"}
    said = [
        t
        for _, dom, v, fail in found
        if dom in slot
        for t in (v.get(slot[dom], ""), fail.get("time", "") if dom == "restaurant" else "")
    ]
    names = {c for t in said if (c := clock(t)) is not None}
    return sorted(names, key=lambda t: tuple(int(x) for x in t.split(":")))


def vocabularies(found: Found) -> dict[str, set[str]]:
    """The category fields' values a row may hold (the rest are not listed: any value goes)."""
    return {
        "area": set(AREAS),
        "pricerange": set(PRICES),
        "food": set(foods(found)),
        "destination": set(stations(found)),
        "time": set(times(found)),
    }


def row(
    dom: str, v: dict[str, str], vocab: dict[str, set[str]], fail: dict[str, str] | None = None
) -> dict[str, object] | None:
    """The profile of one val goal, or None when it lacks a slot, names a value the file
    leaves out or changes what the file cannot (its ``fail_book`` gives the change)."""
    changed = change_fields(dom, fail or {})
    if changed is None:
        return None
    out: dict[str, object] = {"domain": dom, "task": changed.pop("task")}
    for field, value in changed.items():  # the booking as first asked for
        if field == "old_stay" and not (value.isdigit() and 1 <= int(value) <= 8):
            return None
        if field == "old_time" and (value := clock(value) or "") not in vocab["time"]:
            return None
        out[field] = int(value) if field == "old_stay" else spoken(value)
    for field, slot in SLOTS[dom].items():
        value = v.get(slot)
        if value is None:
            return None
        if field in ("people", "stay"):
            if not value.isdigit() or not 1 <= int(value) <= 8:
                return None
            out[field] = int(value)
            continue
        if field == "time":
            value = clock(value) or ""
        if value not in vocab.get(field, {value}):
            return None
        out[field] = spoken(value) if field == "time" else value
    return {f: out[f] for f in ORDER if f in out}


def rows(found: Found, vocab: dict[str, set[str]]) -> list[str]:
    out = []
    for dom in DOMAINS:
        for split, d, v, fail in found:
            if split == "val" and d == dom and (r := row(dom, v, vocab, fail)) is not None:
                out.append("    - {" + ", ".join(f"{k}: {x}" for k, x in r.items()) + "}")
    return out


STATIONS = ("destination", "departure")
"""The fields whose ``say`` wordings are mined from the val split's user turns (each must carry
its markers: they share the station vocabulary)."""
_OPENER = re.compile(r"^(?:(?:yes|yeah|ok|okay|great|thanks|thank you)[,.!]?\s+)+", re.I)


def say_forms(scenario: FileScenario, field: str, n: int = 3) -> list[str]:
    """The ``n`` commonest val-split user turns of a train call that state the goal's ``field``
    (its value replaced by ``{v}``), keeping those that carry one of the field's markers and say
    nothing else the scenario reads but the domain (so a caller's line gives that field only)."""
    before, after = marks(scenario.spec.fields).by_field[field]
    other = {"destination": "departure", "departure": "destination"}[field]
    counts: collections.Counter[str] = collections.Counter()
    for d in multiwoz.load("val"):  # never the test split: its calls are the held-out family
        g = d.goals.get("train")
        value = {**g.info, **g.book}.get(field) if g is not None else None
        if g is None or value is None:
            continue
        said = re.compile(rf"\b{re.escape(value)}\b", re.I)
        for t in d.turns:
            if t.speaker == "user" and "train" in t.domains and said.search(t.text):
                form = said.sub("{v}", _OPENER.sub("", t.text).replace(" also ", " "), count=1)
                if other not in form and carries(form, before, after):
                    counts[form[0].upper() + form[1:]] += 1
    out = []
    for form, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        heard = scenario.extract(form.format(v="ely"), scenario.empty_record(), None)
        if {f for f, v in heard.items() if v is not None} <= {field, "domain"}:
            out.append(form)
    return out[:n]


def write_says(forms: dict[str, list[str]]) -> None:
    """Each mined field's ``say:`` line in scenario.yaml, replaced by its mined wordings."""
    path = OUT / "scenario.yaml"
    text = path.read_text(encoding="utf-8")
    for field, says in forms.items():
        block = re.search(rf"^  {field}:\n(?:    .*\n)+", text, re.M)
        assert block is not None, field
        line = f"    say: {json.dumps(says)}"
        new = re.sub(r"^    say: .*$", line, block[0], count=1, flags=re.M)
        text = text[: block.start()] + new + text[block.end() :]
    path.write_text(text, encoding="utf-8")


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
                if (
                    len(t.domains - {"booking"}) == 1
                    and t.domains & set(DOMAINS)
                    and len(t.text) < 70
                ):
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
    food, station, time = foods(found), stations(found), times(found)
    header = HEADER.format(src=multiwoz.SOURCE)
    (OUT / "food.txt").write_text(header + "\n".join(food) + "\n", encoding="utf-8")
    (OUT / "stations.txt").write_text(header + "\n".join(station) + "\n", encoding="utf-8")
    (OUT / "times.txt").write_text(
        header + "\n".join(f"{t}|{twelve_hour(t)}" for t in time) + "\n", encoding="utf-8"
    )
    lines = rows(found, vocabularies(found))
    write_profiles(lines)
    support = load_scenario_file(OUT / "scenario.yaml", name="support")  # markers hand-written
    write_says({f: say_forms(support, f) for f in STATIONS})
    per = {dom: sum(f"domain: {dom}," in ln for ln in lines) for dom in DOMAINS}
    changes = {t: sum(f"task: {t}," in ln for ln in lines) for _, t, _ in CHANGES.values()}
    print(
        f"{len(food)} foods, {len(station)} stations, {len(time)} times, {len(lines)} profile "
        f"rows (val goals: {', '.join(f'{n} {d}' for d, n in per.items())}; changes: "
        f"{', '.join(f'{n} {t}' for t, n in changes.items())})"
    )
    if "--forms" in argv:
        print_forms()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

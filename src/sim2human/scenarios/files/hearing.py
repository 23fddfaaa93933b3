"""The checks of a scenario file that need its built readers: every ``say`` template of every
field (and every yes and no sentence), said with a value of the field, is heard as that value
when the field was asked. A template the scenario cannot read back is a silent mistake: its
callers would never get that answer across, whatever the agent did. Run on every load
(``files.load``), after the key checks, so each miss is one ``FILE:LINE`` line, exit 2.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import numpy as np

from sim2human.scenarios.files.lines import KeyPath
from sim2human.scenarios.files.reading import FieldReader, say_with
from sim2human.scenarios.files.scenario import FileScenario
from sim2human.scenarios.files.schema import (
    CategoryField,
    DateField,
    ListField,
    NumberField,
    YesNoField,
)
from sim2human.types import Value

Problem = tuple[KeyPath, str]


def hearing_problems(scenario: FileScenario) -> Iterator[Problem]:
    """Each ``say``, ``said_yes`` and ``said_no`` line that its own field does not hear."""
    for name, reader in scenario.readers.items():
        f = reader.spec
        if isinstance(f, YesNoField):
            for key, answer in (("said_yes", True), ("said_no", False)):
                for i, line in enumerate(getattr(f, key)):
                    yield from _heard(scenario, name, (key, i), line, answer)
            continue
        value = _sample(reader)
        if value is None:
            continue
        said = reader.words(value, 0.0, np.random.default_rng(0))
        for i, template in enumerate(f.say):
            yield from _heard(scenario, name, ("say", i), say_with(template, said), value)


def _heard(
    scenario: FileScenario, name: str, at: tuple[str, int], line: str, value: Value
) -> Iterator[Problem]:
    got = scenario.extract(line, scenario.empty_record(), name).get(name)
    if got != value:
        yield (
            ("fields", name, *at),
            f"said as {line!r}, the field hears {got!r}, not {value!r}: reword this line "
            "so the value stands clear of other fields' words",
        )


def _sample(reader: FieldReader) -> Value | None:
    """A value of the field to say (None: its vocabulary is not loaded)."""
    f = reader.spec
    if isinstance(f, NumberField):
        lo, hi = f.range
        return max(lo, min(hi, 3 if lo <= 3 else lo))
    if isinstance(f, DateField):
        return date.fromordinal((f.range[0].toordinal() + f.range[1].toordinal()) // 2).isoformat()
    if reader.vocab is None:
        return None
    first = reader.vocab.canonical[0]
    if isinstance(f, ListField):
        return (first,) if f.size[1] >= 1 else None
    assert isinstance(f, CategoryField)
    return first

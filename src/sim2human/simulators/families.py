"""The built-in simulator families, by name: the persona families of ``data/families.yaml``
(one entry each) and the replay families of real patients (``replay.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from sim2human.errors import ConfigError, UsageError, first_problem
from sim2human.simulators.base import Family
from sim2human.simulators.replay_families import REPLAY_FAMILIES
from sim2human.simulators.restyled import RESTYLED
from sim2human.store.loading import parse_yaml

FAMILIES_FILE = "data/families.yaml"
FITTED_FILE = "data/fitted-aci.yaml"
"""Families fitted to real patients' behaviour (``sim2human fit-family`` writes this file)."""


def load_families(text: str, where: Path) -> dict[str, Family]:
    """Families from a YAML list of ``Family`` fields; a bad entry is one error naming it."""
    entries: Any = parse_yaml(text, where)
    if not isinstance(entries, list):
        raise ConfigError(f"{where}: expected a list of families")
    out: dict[str, Family] = {}
    for i, entry in enumerate(entries):
        name = entry.get("name", f"#{i}") if isinstance(entry, Mapping) else f"#{i}"
        try:
            family = Family.model_validate(entry)
        except ValidationError as err:
            loc, msg = first_problem(err)
            raise ConfigError(f"{where}: family {name!r}: {loc}{': ' * bool(loc)}{msg}") from None
        if family.name in out:
            raise ConfigError(f"{where}: family {family.name!r} is defined twice")
        out[family.name] = family
    return out


def _builtin(file: str = FAMILIES_FILE) -> dict[str, Family]:
    source = resources.files("sim2human.simulators").joinpath(file)
    return load_families(source.read_text(encoding="utf-8"), Path(str(source)))


FITTED: dict[str, Family] = _builtin(FITTED_FILE)
FAMILIES: dict[str, Family] = _builtin()
if twice := sorted(set(FITTED) & set(FAMILIES)):  # pragma: no cover (a packaging mistake)
    raise ConfigError(f"{FITTED_FILE}: families {twice} are also in {FAMILIES_FILE}")
FAMILIES.update(FITTED)  # fitted-aci: trait ranges fitted to ACI-Bench train patients
if twice := sorted(set(RESTYLED) & set(FAMILIES)):  # pragma: no cover (a packaging mistake)
    raise ConfigError(f"restyled families {twice} are also in {FAMILIES_FILE} or {FITTED_FILE}")
FAMILIES.update(RESTYLED)  # restyled-, retrieved-, refitted-aci: train patients' words (cached)
FAMILIES.update(REPLAY_FAMILIES)  # real patients' words: aci-train, aci-heldout (replay.py)
TRAIN_FAMILIES = ("cooperative", "chatty", "anxious")
HELDOUT_FAMILIES = ("elderly-confused", "noisy-line", "terse-guarded")


def unknown_family(name: str) -> str:
    """The one message for a family name nobody registered, listing the known ones."""
    return f"unknown simulator family {name!r} (known: {', '.join(FAMILIES)})"


def known_family(name: str) -> str:
    """``name``, or a ValueError for a config validator (pydantic adds where it was)."""
    if name not in FAMILIES:
        raise ValueError(unknown_family(name))
    return name


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise UsageError(unknown_family(name)) from None

"""The built-in families come from one YAML file; a bad entry is one error naming it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sim2human.errors import UsageError
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import FAMILIES, HELDOUT_FAMILIES, TRAIN_FAMILIES, load_families


def test_every_named_family_is_defined() -> None:
    for name in ("standard", *TRAIN_FAMILIES, *HELDOUT_FAMILIES, "aci-train", "aci-heldout"):
        assert FAMILIES[name].name == name


def test_a_family_is_one_yaml_entry() -> None:
    text = "- name: shy\n  cooperativeness: [0.3, 0.5]\n  noise: {typos: [0.0, 0.1]}\n"
    shy = load_families(text, Path("families.yaml"))["shy"]
    assert shy.cooperativeness == (0.3, 0.5) and shy.noise == {"typos": (0.0, 0.1)}
    assert shy.patience == FAMILIES["cooperative"].patience  # unset fields take the defaults


def test_a_signed_zero_in_a_family_range_samples_like_zero() -> None:
    text = "- name: shy\n  jargon_confusion: [0.0, -0.0]\n  noise: {typos: [0.0, -0.0]}\n"
    shy = load_families(text, Path("families.yaml"))["shy"]
    pool = QuirkPool(liked=("hello",), triggers=("hi",))
    traits = shy.sample(0, pool).traits
    assert traits.jargon_confusion == 0.0 and traits.noise == {"typos": 0.0}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "- name: shy\n  cooperativeness: [0.9, 0.3]\n",
            "family 'shy': cooperativeness: low end 0.9 is above",
        ),
        ("- name: shy\n  patients: [3, 4]\n", "family 'shy': patients: unknown key"),
        ("- name: a\n- name: a\n", "family 'a' is defined twice"),
        ("name: a\n", "expected a list of families"),
    ],
)
def test_bad_family_entries_are_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        load_families(text, Path("families.yaml"))


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_pool_without_triggers_draws_no_trigger_and_the_same_member(name: str) -> None:
    """A scenario with no style acts has no trigger phrasing: members draw none (this raised
    'a cannot be empty' for every family), and every other trait is the draw a pool with
    triggers gives (the trigger's coin is tossed either way)."""
    with_triggers = QuirkPool(liked=("hello",), triggers=("you're in good hands",))
    without = QuirkPool(liked=("hello",), triggers=())
    for seed in range(6):
        a = FAMILIES[name].sample(seed, with_triggers)
        b = FAMILIES[name].sample(seed, without)
        assert b.traits.quirks.trigger is None
        assert b.traits.model_copy(
            update={"quirks": b.traits.quirks.model_copy(update={"trigger": None})}
        ) == a.traits.model_copy(
            update={"quirks": a.traits.quirks.model_copy(update={"trigger": None})}
        )

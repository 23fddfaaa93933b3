"""Scenarios are looked up by name; an unknown name is one error listing the known ones."""

from __future__ import annotations

import pytest

from sim2human.errors import UsageError
from sim2human.scenarios.catalog import SCENARIOS, get_scenario


def test_every_registered_scenario_builds_under_its_name() -> None:
    for name in SCENARIOS:
        assert get_scenario(name).name == name


def test_unknown_scenario_names_the_known_ones() -> None:
    with pytest.raises(
        UsageError,
        match=r"unknown scenario 'hotel-booking' \(known: intake, negotiation, pizza, support\)",
    ):
        get_scenario("hotel-booking")

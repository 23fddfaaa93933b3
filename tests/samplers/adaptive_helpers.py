"""Helpers shared by the adaptive tests (a unique module name: tests have no packages)."""

from __future__ import annotations

from typing import Any

from sim2human.simulators.base import SimulatorSpec


def with_traits(spec: SimulatorSpec, new_id: str, **traits: Any) -> SimulatorSpec:
    """A copy of ``spec`` with a new id and some traits replaced."""
    return spec.model_copy(update={"id": new_id, "traits": spec.traits.model_copy(update=traits)})

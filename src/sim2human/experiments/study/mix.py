"""What a condition takes from one more family: ``mix``, members mixed into its training draws,
and ``select``, validation members that choose its checkpoint; and the check that neither is
ever a held-out family or split."""

from __future__ import annotations

from pydantic import Field, field_validator

from sim2human.simulators.families import known_family
from sim2human.simulators.replay import REPLAY_FAMILIES
from sim2human.types import FrozenConfig

MAX_MEMBERS: int = 10_000
"""A bound on work only (``ensemble_config.MAX_MEMBERS_PER_FAMILY``)."""


class FromFamily(FrozenConfig):
    """Members of one more family, named by ``family`` (a known one)."""

    family: str

    @field_validator("family")
    @classmethod
    def _known(cls, name: str) -> str:
        return known_family(name)


class MixIn(FromFamily):
    """Members of one more family mixed into a condition's training draws (real patients'
    words: ``aci-train``): ``share`` of its episodes play one of ``members`` of them, drawn as
    the ensemble draws a family's members (so the same visits whichever study holds them)."""

    members: int = Field(16, ge=1, le=MAX_MEMBERS)
    share: float = Field(0.25, gt=0, le=1)


class SelectOn(FromFamily):
    """Checkpoint selection on validation members of ``family`` (``experiments.study.validation``):
    ``members`` of them drawn as a ``mix``'s are, from their own seeds, each played
    ``per_member`` times at every probe point."""

    members: int = Field(32, ge=1, le=MAX_MEMBERS)
    per_member: int = Field(2, ge=1, le=100)


def mix_not_heldout(name: str, family: str, heldout: tuple[str, ...], key: str = "mix") -> None:
    """A family mixed into training (or validating it: ``key`` ``select``) is never held out,
    nor replays a split a held-out family replays."""
    if family in heldout:
        raise ValueError(
            f"condition {name!r}: {key}.family {family!r} is a held-out family (held-out "
            "families measure transfer to users never trained on)"
        )
    mixed = REPLAY_FAMILIES.get(family)
    for held in (REPLAY_FAMILIES.get(h) for h in heldout):
        if mixed is None or held is None or held.corpus != mixed.corpus:
            continue
        if shared := sorted(set(mixed.splits) & set(held.splits)):
            raise ValueError(
                f"condition {name!r}: {key}.family {family!r} replays split(s) {shared} of "
                f"held-out family {held.name!r}"
            )

"""Ensembles: weighted simulator members with a train / held-out split by family."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sim2human import seeding
from sim2human.errors import UsageError
from sim2human.simulators.base import Family, QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family


@dataclass(frozen=True)
class Ensemble:
    """Members to train on and members to hold out; the two never share a family."""

    train: tuple[SimulatorSpec, ...]
    heldout: tuple[SimulatorSpec, ...]
    train_families: tuple[Family, ...]
    heldout_families: tuple[Family, ...]

    def __post_init__(self) -> None:
        shared = {f.name for f in self.train_families} & {f.name for f in self.heldout_families}
        if shared:
            raise UsageError(f"ensemble: families {sorted(shared)} are both train and held-out")

    @classmethod
    def from_families(
        cls,
        train: Sequence[str],
        heldout: Sequence[str],
        members_per_family: int,
        pool: QuirkPool,
        seed: int = 0,
        members: Mapping[str, int | str] | None = None,
        heldout_pool: QuirkPool | None = None,
    ) -> Ensemble:
        """Draw ``members_per_family`` specs from each family (``members``: other counts for some
        families, by name). Member k of a family has seed ``base + k``, ``base`` the seed of
        stream ``member`` at the family's name: the same whichever other families the study
        holds, whatever its split, distinct for every k (a ``replay`` member plays encounter
        ``seed mod n``: consecutive seeds are distinct visits, so ``all``, a count of the
        family's ``size()``, plays each of its dialogues once). Held-out members draw their
        quirks from ``heldout_pool`` (default ``pool``): ``QuirkPool.held_apart`` gives one
        disjoint from the training members'."""
        if members_per_family < 1:
            raise UsageError("ensemble.members_per_family must be at least 1")
        tf = tuple(get_family(n) for n in train)
        hf = tuple(get_family(n) for n in heldout)

        def count(f: Family) -> int:
            n = (members or {}).get(f.name, members_per_family)
            if n != "all":
                return int(n)
            if (size := f.size()) is None:
                raise UsageError(f"ensemble.members: {f.name}: 'all' needs a replay family")
            return size

        def draw(families: tuple[Family, ...], pool: QuirkPool) -> tuple[SimulatorSpec, ...]:
            return tuple(
                f.sample(seeding.seed(seed, "member", f.name) + k, pool)
                for f in families
                for k in range(count(f))
            )

        return cls(draw(tf, pool), draw(hf, heldout_pool or pool), tf, hf)

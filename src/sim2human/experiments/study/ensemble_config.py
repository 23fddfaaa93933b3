"""The ``ensemble:`` section of a study file (``EnsembleConfig``) and the seed type every
section shares; ``experiments.study.config`` re-exports both."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from sim2human.simulators.families import known_family
from sim2human.simulators.human_replay import HumanReplayMembers
from sim2human.simulators.llm import LLMMembers
from sim2human.simulators.replay import REPLAY_FAMILIES
from sim2human.types import FrozenConfig

__all__ = ["ALL", "MAX_MEMBERS_PER_FAMILY", "MAX_SEED", "EnsembleConfig", "LLMEnsemble", "Seed"]

MAX_SEED = 2**32 - 1
"""numpy's SeedSequence takes any non-negative int; 32 bits is plenty and keeps ids readable."""
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
MAX_MEMBERS_PER_FAMILY = 10_000
"""A bound on work only: member seeds are named streams (``seeding``), which do not collide."""
ALL = "all"
MemberCount = Annotated[int, Field(ge=1, le=MAX_MEMBERS_PER_FAMILY)] | Literal["all"]
"""A family's member count, or ``all`` (a held-out ``replay`` family: each dialogue once)."""


class LLMEnsemble(FrozenConfig):
    """``llm`` members: training ones (for mixed ensembles) and held-out ones (for evaluation)."""

    train: LLMMembers | None = None
    heldout: LLMMembers | None = None

    @model_validator(mode="after")
    def _disjoint(self) -> LLMEnsemble:
        if self.train is None or self.heldout is None:
            return self
        for what in ("families", "prompts"):
            shared = set(getattr(self.train, what)) & set(getattr(self.heldout, what))
            if shared:
                raise ValueError(f"{what} {sorted(shared)} are both train and held-out")
        return self


class EnsembleConfig(FrozenConfig):
    train: tuple[str, ...] = ("cooperative", "chatty", "anxious")
    heldout: tuple[str, ...] = ("elderly-confused", "noisy-line", "terse-guarded")
    members_per_family: int = Field(4, ge=1, le=MAX_MEMBERS_PER_FAMILY)
    members: dict[str, MemberCount] = Field(default_factory=dict)
    """Member counts for some families, overriding ``members_per_family`` (say, more real
    patients: each ``aci-heldout`` member is one visit); ``all`` for a held-out ``replay``
    family: every dialogue of its corpus splits, each once (``aci-heldout: all``, 137 visits)."""
    seed: Seed = 0
    llm: LLMEnsemble | None = None
    human_replay: HumanReplayMembers | None = None
    """Recorded human calls (``sim2human human serve``) as training or held-out members."""

    @field_validator("train", "heldout")
    @classmethod
    def _known(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            known_family(name)
        if not names:
            raise ValueError("needs at least one family")
        if len(set(names)) != len(names):
            raise ValueError(f"a family is listed twice: {list(names)}")
        return names

    @model_validator(mode="after")
    def _members_named(self) -> EnsembleConfig:
        shared = [name for name in self.train if name in self.heldout]
        if shared:
            raise ValueError(
                f"families {shared} are both train and held-out: held-out families measure "
                "transfer to users never trained on"
            )
        unknown = sorted(set(self.members) - {*self.train, *self.heldout})
        if unknown:
            raise ValueError(f"members: {unknown} not in ensemble.train or ensemble.heldout")
        for name, count in self.members.items():
            if count == ALL and (name not in self.heldout or name not in REPLAY_FAMILIES):
                raise ValueError(
                    f"members: {name}: 'all' is for a held-out replay family (every recorded "
                    f"dialogue evaluated once; replay families: {', '.join(REPLAY_FAMILIES)}); "
                    "give a number of members"
                )
        return self

    def train_members(self) -> int:
        """How many persona and replay members the families give to training (``all`` is
        refused for a training family)."""
        return sum(int(self.members.get(name, self.members_per_family)) for name in self.train)

"""Study configs: YAML validated by pydantic. Unknown keys are errors, named with their path."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from sim2human.errors import ConfigError, UsageError, first_problem
from sim2human.judging import JudgingConfig
from sim2human.llm.runtime import LLMSettings
from sim2human.samplers import sampler_args
from sim2human.simulators.base import LLMParams
from sim2human.simulators.families import FAMILIES
from sim2human.simulators.human_replay import HumanReplayMembers
from sim2human.simulators.llm import LLMMembers
from sim2human.simulators.noise import validate_ranges
from sim2human.train import PPOConfig
from sim2human.types import Frozen

SamplerName = Literal["fixed", "uniform", "randomized", "must", "plr", "evolve"]


class SimulatorRef(Frozen):
    """One fixed simulator: a family draw with a seed; capacity/temperature may be overridden."""

    family: str
    seed: int = 0
    capacity: float | None = Field(None, ge=0, le=1)
    temperature: float | None = Field(None, ge=0)
    llm: LLMParams | None = None
    """Set to make this an ``llm`` member: a chat model plays the family's traits."""

    @field_validator("family")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in FAMILIES:
            raise ValueError(f"unknown simulator family {name!r} (known: {', '.join(FAMILIES)})")
        return name


class Condition(Frozen):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
    sampler: SamplerName
    simulator: SimulatorRef | None = None
    llm_share: float = Field(0.0, ge=0, le=1)
    """Share of training episodes played by ``ensemble.llm.train`` members (a mixed ensemble)."""
    llm_block: int = Field(4, ge=1)
    """Those episodes come in runs of this many, so that they share training batches and keep
    the endpoint's slots busy together (see ``samplers.MixedSampler``)."""
    episodes: int | None = Field(None, ge=1)
    """This condition's training episodes, if not ``train.episodes`` (LLM episodes cost seconds:
    a condition trained only on an LLM gets the budget the wall clock allows)."""
    batch_episodes: int | None = Field(None, ge=1)
    perturb: dict[str, tuple[float, float]] | None = None
    """Domain randomisation of noise: perturbation name -> [low, high] severity, drawn per
    training episode and layered onto the member's own noise (evaluation stays unperturbed)."""

    @field_validator("perturb")
    @classmethod
    def _ranges(
        cls, ranges: dict[str, tuple[float, float]] | None
    ) -> dict[str, tuple[float, float]] | None:
        if ranges is None:
            return None
        try:
            return validate_ranges(ranges)
        except UsageError as err:
            raise ValueError(str(err)) from None

    sampler_args: dict[str, Any] = Field(default_factory=dict)
    """Settings of an adaptive sampler (``must``, ``plr``, ``evolve``); unknown keys are errors."""
    oracle_gold: bool = False
    """Let the sampler read training episodes' gold outcomes (never the trainer)."""
    judging: JudgingConfig | None = None
    """Ensemble judging: train on a conservative aggregate of k members' judgements."""

    @model_validator(mode="after")
    def _fixed_needs_simulator(self) -> Condition:
        if self.sampler == "fixed" and self.simulator is None:
            raise ValueError(f"condition {self.name!r}: sampler 'fixed' needs a 'simulator'")
        try:
            sampler_args(self.sampler, self.sampler_args, f"condition {self.name!r}: sampler_args")
        except (ConfigError, UsageError) as err:
            raise ValueError(str(err)) from None
        if self.judging is not None and self.sampler == "fixed":
            raise ValueError(f"condition {self.name!r}: judging needs an ensemble, not 'fixed'")
        return self


class LLMEnsemble(Frozen):
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


class EnsembleConfig(Frozen):
    train: tuple[str, ...] = ("cooperative", "chatty", "anxious")
    heldout: tuple[str, ...] = ("elderly-confused", "noisy-line", "terse-guarded")
    members_per_family: int = Field(4, ge=1)
    seed: int = 0
    llm: LLMEnsemble | None = None
    human_replay: HumanReplayMembers | None = None
    """Recorded human calls (``sim2human human serve``) as training or held-out members."""

    @field_validator("train", "heldout")
    @classmethod
    def _known(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if name not in FAMILIES:
                raise ValueError(
                    f"unknown simulator family {name!r} (known: {', '.join(FAMILIES)})"
                )
        if not names:
            raise ValueError("needs at least one family")
        return names


class EvalConfig(Frozen):
    episodes_per_member: int = Field(10, ge=1)
    llm_episodes_per_member: int | None = Field(None, ge=1)
    """Per ``llm`` member (default: ``episodes_per_member``): LLM episodes cost seconds each."""
    bootstrap: int = Field(1000, ge=100)
    curve_episodes_per_member: int = Field(4, ge=1)
    """Held-out episodes per member at each ``train.eval_every`` checkpoint (the first seeds of
    the final evaluation's)."""


class StudyConfig(Frozen):
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    scenario: Literal["intake"] = "intake"
    seeds: tuple[int, ...] = Field(min_length=1)
    train: PPOConfig = PPOConfig()
    ensemble: EnsembleConfig = EnsembleConfig()
    eval: EvalConfig = EvalConfig()
    conditions: tuple[Condition, ...] = Field(min_length=1)
    reference_agents: tuple[Literal["scripted"], ...] = ("scripted",)
    llm: LLMSettings = LLMSettings()
    """Named endpoints (``local`` = the embedded model), the response cache, concurrency."""
    quick: dict[str, Any] | None = None
    """Overrides applied by ``--quick`` (fewer seeds and episodes; same conditions)."""

    @model_validator(mode="after")
    def _unique_names(self) -> StudyConfig:
        names = [c.name for c in self.conditions]
        if len(set(names)) != len(names):
            raise ValueError(f"condition names must be unique, got {names}")
        llm_train = self.ensemble.llm.train if self.ensemble.llm else None
        for c in self.conditions:
            if c.llm_share > 0 and llm_train is None:
                raise ValueError(f"condition {c.name!r}: llm_share needs ensemble.llm.train")
        return self


def load_study(path: Path, *, quick: bool = False) -> StudyConfig:
    """Read and validate a study file; ``quick`` applies its ``quick:`` overrides."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such study file") from None
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{path}: a study file must be a mapping of keys, got {type(raw).__name__}"
        )
    if quick:
        overrides = raw.get("quick") or {}
        if not isinstance(overrides, dict):
            raise ConfigError(f"{path}: 'quick' must be a mapping of overrides")
        raw = _merge(raw, overrides)
    return parse_study(raw, str(path))


def parse_study(raw: dict[str, Any], where: str = "study") -> StudyConfig:
    try:
        return StudyConfig.model_validate(raw)
    except ValidationError as err:
        loc, msg = first_problem(err)
        raise ConfigError(f"{where}: {loc}: {msg}" if loc else f"{where}: {msg}") from None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out

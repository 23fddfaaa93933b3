"""Study configs: YAML validated by pydantic. Unknown keys are errors, named with their path.

Everything is checked before anything is built or trained: the file itself (``store.loading``: a
regular UTF-8 file, no duplicate keys, bounded nesting and alias expansion), every number finite
(``FrozenConfig``) and every knob that can hang or exhaust under a stated bound (the ``le=``
bounds here and in the models of lower layers, ``MAX_FREE_INT`` for free-form integers), names
short enough to be file names, seeds distinct and non-negative, and what a worker would refuse
only later (held-out families that are also trained on, ``must``'s floor above what its members
can share, a response cache that is not a file): ``--check`` then catches all of it.

The study file's schema is one module because it is one concept read top to bottom: the seed
and the ``ensemble:`` section (``EnsembleConfig``), what a condition takes from one more family
(``mix``: members mixed into its training draws; ``select``: validation members that choose its
checkpoint; neither ever a held-out family or split), the paths a study file names (relative to
the study file, stored absolute so a worker, a resumed run and ``diagnose`` find the same
files), then the conditions and the study itself.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from sim2human.errors import ConfigError, RunDirError, UsageError, first_problem
from sim2human.llm.runtime import LLMSettings
from sim2human.population.panel import JudgingConfig
from sim2human.samplers.build import known_sampler, sampler_args
from sim2human.scenarios.catalog import DEFAULT_SCENARIO, known_scenario
from sim2human.scenarios.refs import allowing, is_path
from sim2human.simulators.base import MAX_TEMPERATURE, LLMParams
from sim2human.simulators.families import known_family
from sim2human.simulators.human_replay import HumanReplayMembers
from sim2human.simulators.llm import LLMMembers
from sim2human.simulators.llm_reading import refuse_llm_users
from sim2human.simulators.llm_templates import is_template_ref
from sim2human.simulators.noise import validate_ranges
from sim2human.simulators.replay_families import REPLAY_FAMILIES
from sim2human.store.layout import CONFIG_YAML
from sim2human.store.loading import existing_dir, read_yaml
from sim2human.train.config import (
    MAX_BATCH,
    MAX_EPISODES,
    AgentConfig,
    PolicyAgentConfig,
    PPOConfig,
)
from sim2human.types import FrozenConfig

# long module: the study file's schema, one section after another (the module docstring)

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

    members: int = Field(16, ge=1, le=MAX_MEMBERS_PER_FAMILY)
    share: float = Field(0.25, gt=0, le=1)


class SelectOn(FromFamily):
    """Checkpoint selection on validation members of ``family`` (``experiments.study.validation``):
    ``members`` of them drawn as a ``mix``'s are, from their own seeds, each played
    ``per_member`` times at every probe point."""

    members: int = Field(32, ge=1, le=MAX_MEMBERS_PER_FAMILY)
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


def beside_study(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """A scenario file or prompt template named by a relative path is the one next to the
    study file (in the study and in its ``quick`` overrides)."""
    out = _prompts_beside(raw, path.parent)
    assert isinstance(out, dict)
    ref = raw.get("scenario")
    if isinstance(ref, str) and is_path(ref) and not Path(ref).expanduser().is_absolute():
        out["scenario"] = str(path.parent / ref)
    if isinstance(quick := raw.get("quick"), dict):
        out["quick"] = beside_study(quick, path)
    return out


def _prompts_beside(value: Any, folder: Path) -> Any:
    """``value`` with every relative template path under a ``prompt`` / ``prompts`` key made
    absolute in ``folder`` (they sit in conditions' simulators and in ``ensemble.llm``)."""
    if isinstance(value, list):
        return [_prompts_beside(v, folder) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: _prompts_beside(v, folder) for k, v in value.items()}
    if isinstance(prompt := value.get("prompt"), str):
        out["prompt"] = _beside(prompt, folder)
    if isinstance(prompts := value.get("prompts"), list):
        out["prompts"] = [_beside(p, folder) if isinstance(p, str) else p for p in prompts]
    return out


def _beside(prompt: str, folder: Path) -> str:
    if is_template_ref(prompt) and not Path(prompt).expanduser().is_absolute():
        return str(folder / prompt)
    return prompt


Role = Literal["frozen", "baseline", "candidate"]
"""What a condition is in the study's argument, read by the reports instead of its name:
``frozen`` trains on one fixed simulator (the practice under test), ``baseline`` is the plain
ensemble others are compared with, ``candidate`` is a proposed cure."""
DEFAULT_ROLES: dict[str, Role] = {"fixed": "frozen", "uniform": "baseline"}
"""A condition without a ``role`` gets its sampler's here (any other sampler: ``candidate``)."""


def default_role(sampler: object) -> Role:
    return DEFAULT_ROLES.get(str(sampler), "candidate")


MAX_PER_MEMBER = 10_000
MAX_BOOTSTRAP = 100_000
MAX_NAME = 100
"""Characters in a study or condition name: each is part of a file name (``runs/<time>-<name>``,
``conditions/<name>``), and most file systems stop at 255 bytes."""
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME)]
MAX_FREE_INT = 10_000_000
"""Any integer in ``sampler_args``, ``judging`` or ``ensemble.llm`` (sizes, windows, counts)."""


class SimulatorRef(FrozenConfig):
    """One fixed simulator: a family draw with a seed; capacity/temperature may be overridden."""

    family: str
    seed: Seed = 0
    capacity: float | None = Field(None, ge=0, le=1)
    temperature: float | None = Field(None, ge=0, le=MAX_TEMPERATURE)
    llm: LLMParams | None = None
    """Set to make this an ``llm`` member: a chat model plays the family's traits."""

    @field_validator("family")
    @classmethod
    def _known(cls, name: str) -> str:
        return known_family(name)


class Condition(FrozenConfig):
    name: Name = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")
    sampler: str
    """A name in ``samplers.build.SAMPLERS``."""
    role: Role = "candidate"
    """When not given, its sampler's (``DEFAULT_ROLES``): configs written before roles load."""
    compare_to: str | None = None
    """The condition this one is judged against (default: the study's first ``baseline``, or
    for a ``perturb`` condition its sampler's unperturbed one)."""
    simulator: SimulatorRef | None = None
    llm_share: float = Field(0.0, ge=0, le=1)
    """Share of training episodes played by ``ensemble.llm.train`` members (a mixed ensemble)."""
    mix: MixIn | None = None
    """Members of another family mixed into training (see ``MixIn``); never a held-out one."""
    select: SelectOn | None = None
    """Keep the probe checkpoint with the best gold on validation members of this family (see
    ``experiments.study.validation``); never a held-out family. None: the last weights."""
    llm_block: int = Field(4, ge=1, le=MAX_BATCH)
    """Those episodes come in runs of this many, so that they share training batches and keep
    the endpoint's slots busy together (see ``samplers.MixedSampler``)."""
    episodes: int | None = Field(None, ge=1, le=MAX_EPISODES)
    """This condition's training episodes, if not ``train.episodes`` (LLM episodes cost seconds:
    a condition trained only on an LLM gets the budget the wall clock allows)."""
    batch_episodes: int | None = Field(None, ge=1, le=MAX_BATCH)
    perturb: dict[str, tuple[float, float]] | None = None
    """Domain randomisation of noise: perturbation name -> [low, high] severity, drawn per
    training episode and layered onto the member's own noise (evaluation stays unperturbed)."""
    perturb_ramp: float = Field(0.0, ge=0, le=1)
    """A curriculum for ``perturb``: over this share of the training episodes every range opens
    from its low end to its full width, linearly (0: the full ranges from the first episode)."""

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

    @model_validator(mode="before")
    @classmethod
    def _role_from_sampler(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("role") is None:
            return {**data, "role": default_role(data.get("sampler"))}
        return data

    @field_validator("sampler")
    @classmethod
    def _known_sampler(cls, name: str) -> str:
        try:
            return known_sampler(name)
        except UsageError as err:
            raise ValueError(str(err)) from None

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


class EvalConfig(FrozenConfig):
    episodes_per_member: int = Field(10, ge=1, le=MAX_PER_MEMBER)
    llm_episodes_per_member: int | None = Field(None, ge=1, le=MAX_PER_MEMBER)
    """Per ``llm`` member (default: ``episodes_per_member``): LLM episodes cost seconds each."""
    bootstrap: int = Field(1000, ge=100, le=MAX_BOOTSTRAP)
    curve_episodes_per_member: int = Field(4, ge=1, le=MAX_PER_MEMBER)
    """Held-out episodes per member at each ``train.eval_every`` checkpoint (the first seeds of
    the final evaluation's)."""
    per_family: dict[str, Annotated[int, Field(ge=1, le=MAX_PER_MEMBER)]] = Field(
        default_factory=dict
    )
    """Final-evaluation episodes per member of some held-out families, overriding
    ``episodes_per_member`` (say ``aci-heldout: 1`` with ``members: {aci-heldout: all}``: one
    call per visit per seed, every visit played, about the cost of 16 visits x 8)."""


WARM_START_AGENT = "warm-start"
"""The reference agent that is an ``lm`` study's warm start (``warm_start_reference``)."""


def warm_start_label(seed: int) -> str:
    """The ``condition`` of the episodes study seed ``seed``'s warm start played as a reference:
    one directory holds every seed's, and this keeps their ids apart."""
    return f"{WARM_START_AGENT}-seed-{seed}"


def warm_start_seed(label: str) -> int | None:
    """The study seed of a warm start's episode (``warm_start_label``'s inverse), or None for
    an episode of another agent."""
    head = f"{WARM_START_AGENT}-seed-"
    rest = label.removeprefix(head)
    return int(rest) if label.startswith(head) and rest.isdigit() else None


class StudyConfig(FrozenConfig):
    name: Name = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    scenario: str = DEFAULT_SCENARIO
    """A name in ``scenarios.catalog.SCENARIOS``, a scenario file's path (relative to the study
    file; stored absolute), ``module:Name`` of a Python scenario class, or a packaged scenario's
    entry-point name (``scenarios.refs``)."""
    seeds: tuple[Seed, ...] = Field(min_length=1, max_length=1000)
    train: PPOConfig = PPOConfig()
    agent: AgentConfig = PolicyAgentConfig()
    """What is trained: the policy network over the scenario's acts (PPO, the default), or a
    language model writing its own words (``kind: lm``, GRPO). ``train.max_turns`` bounds the
    calls of either."""
    ensemble: EnsembleConfig = EnsembleConfig()
    eval: EvalConfig = EvalConfig()
    conditions: tuple[Condition, ...] = Field(min_length=1, max_length=100)
    reference_agents: tuple[Literal["scripted", "warm-start"], ...] = ("scripted",)
    """Agents evaluated beside the conditions, untrained by the study: the scenario's
    ``scripted`` reference agent, and for an ``lm`` agent its ``warm-start`` (each seed's
    supervised start, before GRPO), so a table shows what RL changed, not only where it ended.
    Default: ``scripted``, and ``warm-start`` too for an ``lm`` agent."""
    llm: LLMSettings = LLMSettings()
    """Named endpoints (``local`` = the embedded model), the response cache, concurrency."""
    quick: dict[str, Any] | None = None
    """Overrides applied by ``--quick`` (fewer seeds and episodes; same conditions)."""

    @field_validator("scenario")
    @classmethod
    def _known_scenario(cls, name: str) -> str:
        try:
            return known_scenario(name)
        except UsageError as err:
            raise ValueError(str(err)) from None

    @field_validator("seeds")
    @classmethod
    def _distinct(cls, seeds: tuple[int, ...]) -> tuple[int, ...]:
        if len(set(seeds)) != len(seeds):
            twice = sorted({s for s in seeds if seeds.count(s) > 1})
            raise ValueError(
                f"seeds must be distinct: {twice} listed more than once (each seed is one "
                "sub-run; a repeat would store every episode twice)"
            )
        return seeds

    @model_validator(mode="before")
    @classmethod
    def _lm_warm_start_by_default(cls, data: Any) -> Any:
        """An ``lm`` study that names no reference agents gets its warm start as one."""
        if not isinstance(data, dict) or "reference_agents" in data:
            return data
        agent = data.get("agent")
        kind = agent.get("kind") if isinstance(agent, dict) else getattr(agent, "kind", None)
        return {**data, "reference_agents": ["scripted", "warm-start"]} if kind == "lm" else data

    @model_validator(mode="after")
    def _warm_start_of_an_lm_agent(self) -> StudyConfig:
        if "warm-start" in self.reference_agents and self.agent.kind != "lm":
            raise ValueError(
                "reference_agents: 'warm-start' is an lm agent's supervised start before GRPO; "
                "this study's agent is the PPO policy (agent.kind: ppo), which has none"
            )
        if len(set(self.reference_agents)) != len(self.reference_agents):
            raise ValueError(f"reference_agents: listed twice in {list(self.reference_agents)}")
        return self

    @model_validator(mode="after")
    def _handle_time_for_ppo(self) -> StudyConfig:
        if self.agent.kind == "lm" and self.train.turn_cost > 0:
            raise ValueError(
                "train.turn_cost weighs handle time in the PPO agent's reward; an lm agent's "
                "GRPO trains on the proxy alone"
            )
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> StudyConfig:
        names = [c.name for c in self.conditions]
        if len(set(names)) != len(names):
            raise ValueError(f"condition names must be unique, got {names}")
        llm_train = self.ensemble.llm.train if self.ensemble.llm else None
        for c in self.conditions:
            if c.compare_to is not None and (c.compare_to == c.name or c.compare_to not in names):
                others = ", ".join(n for n in names if n != c.name) or "none"
                raise ValueError(
                    f"condition {c.name!r}: compare_to {c.compare_to!r} is not another condition "
                    f"of this study (conditions: {others})"
                )
            if c.llm_share > 0 and llm_train is None:
                raise ValueError(f"condition {c.name!r}: llm_share needs ensemble.llm.train")
            if c.perturb_ramp > 0 and not c.perturb:
                raise ValueError(f"condition {c.name!r}: perturb_ramp needs a perturb block")
            if c.mix is not None:
                mix_not_heldout(c.name, c.mix.family, self.ensemble.heldout)
            if c.select is not None:
                mix_not_heldout(c.name, c.select.family, self.ensemble.heldout, "select")
                if self.agent.kind == "lm":
                    raise ValueError(
                        f"condition {c.name!r}: select chooses among the PPO agent's probe "
                        "checkpoints; an lm agent's sub-run keeps its last weights"
                    )
            if c.mix is not None and c.sampler == "fixed":
                raise ValueError(f"condition {c.name!r}: mix needs an ensemble, not 'fixed'")
            _fits_members(c, self.ensemble)
        odd = sorted(set(self.eval.per_family) - set(self.ensemble.heldout))
        if odd:
            raise ValueError(
                f"eval.per_family: {odd} not in ensemble.heldout (it sets the held-out "
                "evaluation's episodes per member of some held-out families)"
            )
        llm = self.ensemble.llm
        if (llm and (llm.train or llm.heldout)) or any(
            c.simulator and c.simulator.llm for c in self.conditions
        ):
            refuse_llm_users(self.scenario)
        return self


def _fits_members(c: Condition, ensemble: EnsembleConfig) -> None:
    """What a sampler or judging panel would refuse only once built, from the member count."""
    if ensemble.human_replay is not None and ensemble.human_replay.split == "train":
        return  # recorded calls add members whose number only the database knows
    n = ensemble.train_members()
    share = float(c.sampler_args.get("min_share", 0.0)) if c.sampler == "must" else 0.0
    if share * n >= 1.0:
        raise ValueError(
            f"condition {c.name!r}: sampler_args.min_share {share} x {n} training members "
            "is 1 or more (the floors alone would take every episode)"
        )
    if c.sampler == "evolve" and n < 2:
        raise ValueError(f"condition {c.name!r}: sampler 'evolve' needs two training members")
    if c.judging is not None and n < 2:
        raise ValueError(f"condition {c.name!r}: judging needs two training members")


def load_study(
    path: Path, *, quick: bool = False, seeds: tuple[int, ...] | None = None
) -> StudyConfig:
    """Read and validate a study file; ``quick`` applies its ``quick:`` overrides, then
    ``seeds`` (``study --seeds``) replaces the seeds. The file is the user's own, so a
    ``module:Name`` it names is imported from the working directory too (``scenarios.refs``;
    a stored config, read by ``parse_study``, is not).

    The overrides are validated either way: a run without ``--quick`` stores them, and one that
    does not survive the worker's JSON round trip (NaN reads back as null) would make the stored
    config differ from the file's, which ``--resume`` then refuses.
    """
    raw = read_yaml(path, "study file")
    if not isinstance(raw, dict):
        raise ConfigError(
            f"{path}: a study file must be a mapping of keys, got {type(raw).__name__}"
        )
    raw = beside_study(raw, path)
    overrides = raw.get("quick") or {}
    if not isinstance(overrides, dict):
        raise ConfigError(f"{path}: 'quick' must be a mapping of overrides")
    chosen = {} if seeds is None else {"seeds": list(seeds)}
    where = f"{path} with --seeds" if chosen else str(path)
    with allowing(Path.cwd()):  # the user's own file: its module:Name is imported from here
        if quick:
            cfg = parse_study(_merge(_merge(raw, overrides), chosen), where)
        else:
            cfg = parse_study(_merge(raw, chosen), where)
            if overrides:
                parse_study(_merge(raw, overrides), f"{path}: with its quick overrides")
    check_cache(cfg, str(path))
    return cfg


def load_run_config(run_dir: Path) -> StudyConfig:
    """The study config a run directory stored (``config.yaml``), as a reader reads it."""
    path = existing_dir(run_dir) / CONFIG_YAML
    if not path.exists():
        raise RunDirError(f"{run_dir}: not a study run directory (no config.yaml)")
    raw = read_yaml(path, "stored study config")
    if not isinstance(raw, dict):
        raise RunDirError(f"{path}: not a study config (a mapping of keys)")
    return parse_study(raw, str(path))


def check_cache(cfg: StudyConfig, where: str = "study") -> None:
    """``llm.cache`` must be a regular file or not exist yet: SQLite would fail on anything
    else only once the first LLM request is cached, deep in a worker."""
    cache = cfg.llm.cache
    if cache is None:
        return
    try:
        st = cache.stat()
    except FileNotFoundError:
        return
    except OSError as err:
        raise ConfigError(f"{where}: llm.cache: {cache}: {err.strerror or err}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise ConfigError(
            f"{where}: llm.cache: {cache} is {kind}; name a SQLite file (or null for no cache)"
        )


def parse_study(raw: dict[str, Any], where: str = "study") -> StudyConfig:
    try:
        cfg = StudyConfig.model_validate(raw)
    except ValidationError as err:
        loc, msg = first_problem(err)
        raise ConfigError(f"{where}: {loc}: {msg}" if loc else f"{where}: {msg}") from None
    check_limits(cfg, where)
    return cfg


def check_limits(cfg: StudyConfig, where: str = "study") -> None:
    """The size bounds pydantic does not already hold (free-form integers)."""
    values: list[tuple[str, Any, int]] = []
    for i, c in enumerate(cfg.conditions):
        values += _ints(f"conditions.{i}.sampler_args", c.sampler_args)
        if c.judging is not None:
            values += _ints(f"conditions.{i}.judging", c.judging.model_dump())
    if cfg.ensemble.llm is not None:
        values += _ints("ensemble.llm", cfg.ensemble.llm.model_dump())
    for name, value, limit in values:
        if isinstance(value, int) and abs(value) > limit:
            raise ConfigError(f"{where}: {name}: {value} is above the limit of {limit}")


def _ints(prefix: str, value: Any) -> list[tuple[str, Any, int]]:
    if isinstance(value, dict):
        return [v for k, item in value.items() for v in _ints(f"{prefix}.{k}", item)]
    if isinstance(value, list | tuple):
        return [v for i, item in enumerate(value) for v in _ints(f"{prefix}.{i}", item)]
    if isinstance(value, int) and not isinstance(value, bool):
        return [(prefix, value, MAX_FREE_INT)]
    return []


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out

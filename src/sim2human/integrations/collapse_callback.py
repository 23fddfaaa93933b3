"""A collapse check inside the user's own TRL run: a ``transformers.TrainerCallback``.

Every ``every`` steps it plays the policy being trained (``trl.PolicyAgent``: the model as its
GRPO rollouts speak, greedy) on the population's training members, its held-out families and a
sample of replayed real callers where the study has them (``real_callers``), on the study's
evaluation seeds through ``rollout.evaluate``, the machinery ``sim2human study`` and
``eval-agent`` evaluate with. Then it

- logs the check's numbers (``collapse_rule``: training proxy and gold, held-out gold with its CI,
  the proxy-gold gap, the drop, per-family gold, real callers' gold) as ``sim2human/...``: through
  the trainer's ``log`` when the callback knows its trainer (``attach``), so ``state.log_history``,
  TensorBoard, W&B and every other ``report_to`` sink get them; into ``state.log_history`` alone
  when it does not;
- stores the check's episodes as one condition of a run directory (``conditions/step-<N>/``,
  ``store.layout.check_condition``) with every check's verdict in ``checks.jsonl``, so
  ``sim2human report``, ``diagnose`` and ``view`` read the run, a row per check;
- stops training (``control.should_training_stop``) when the rule (``CollapseRule``) calls
  ``patience`` checks in a row collapse and ``rule.stop`` is on.

The check runs in the main process only (``state.is_world_process_zero``). Under several
processes its stop is not passed to the others, which would wait for the stopped one: run it
single-process, or let the rule warn only (``stop=False``).

verl: no equivalent here. Its PPO trainer (``RayPPOTrainer.fit``) takes no callbacks: the loop
runs to ``total_training_steps`` and evaluates only through its own ``_validate``, every
``trainer.test_freq`` steps, on a validation dataset. The policy's weights live in its
FSDP/Megatron workers and its turns come from its rollout servers, so this process cannot play
it. The nearest thing is a validation dataset of held-out rows (``rows.eval_rows``) played
through ``verl.SimulatedUserAgentLoop``, which logs gold beside the reward. A stop on collapse
would need a subclass of verl's trainer that overrides ``fit``, which is not a seam verl offers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sim2human import seeding
from sim2human.agents.base import Agent
from sim2human.errors import UsageError
from sim2human.integrations._extra import require
from sim2human.integrations.collapse_rule import Check, CollapseRule, judge_check
from sim2human.integrations.population import Population
from sim2human.integrations.runlog import RunLog
from sim2human.integrations.trl import PolicyAgent
from sim2human.metrics.outcomes import GOLDS
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.core import headline_metric
from sim2human.simulators.base import SimulatorSpec
from sim2human.simulators.kinds import kind_of
from sim2human.store.layout import CHECKS_LOG, RunLayout, check_condition
from sim2human.store.rundir import JsonlWriter
from sim2human.types import Episode

_transformers = require("transformers", "trl")
TrainerCallback: Any = _transformers.TrainerCallback
Trainer: Any = _transformers.Trainer

log = logging.getLogger(__name__)

AgentFactory = Callable[[Any, Any], Agent]
"""``(model, processing_class) -> Agent``: who is played at a check (default ``PolicyAgent``)."""


class CollapseCheck(TrainerCallback):  # type: ignore[misc]
    """Held-out families and real callers every ``every`` steps; see the module docstring."""

    def __init__(
        self,
        pop: Population,
        *,
        out: Path | str,
        every: int = 50,
        per_member: int = 2,
        real_callers: Sequence[SimulatorSpec] = (),
        rule: CollapseRule | None = None,
        agent: AgentFactory | None = None,
        max_new_tokens: int = 64,
        trainer: Any = None,
    ) -> None:
        if every < 1 or per_member < 1:
            raise UsageError(f"every and per_member must be at least 1 (got {every}, {per_member})")
        self.pop = pop
        self.out = Path(out)
        self.every = every
        self.per_member = per_member
        self.real_callers = tuple(real_callers)
        self.rule = rule or CollapseRule()
        self.agent = agent
        self.max_new_tokens = max_new_tokens
        self.trainer = trainer
        self.checks: list[Check] = []
        self.stopped_at: int | None = None
        self._streak = 0

    def attach(self, trainer: Any) -> CollapseCheck:
        """Add this callback to ``trainer`` and log through it (so TensorBoard, W&B ... see the
        numbers); returns the callback."""
        self.trainer = trainer
        trainer.add_callback(self)
        return self

    def on_step_end(
        self,
        args: Any,
        state: Any,
        control: Any,
        model: Any = None,
        processing_class: Any = None,
        **_: Any,
    ) -> Any:
        step = int(state.global_step)
        if step % self.every or not state.is_world_process_zero:
            return control
        if self.checks and self.checks[-1].step == step:
            return control  # the trainer may call a step's end more than once
        check = self.run(step, model, processing_class)
        self._log(state, check)
        self._streak = self._streak + 1 if check.collapse else 0
        if check.collapse and self.rule.stop and self._streak >= self.rule.patience:
            control.should_training_stop = True
            self.stopped_at = step
            log.warning("sim2human: training stopped: %s", check.headline)
        elif check.collapse:
            log.warning("sim2human: %s", check.headline)
        return control

    def run(self, step: int, model: Any = None, tokenizer: Any = None) -> Check:
        """One check now: play, judge, store (callable outside a trainer too)."""
        agent = (
            self.agent(model, tokenizer)
            if self.agent is not None
            else PolicyAgent(model, tokenizer, self.pop, self.max_new_tokens)
        )
        training = bool(getattr(model, "training", False))
        if model is not None and training:
            model.eval()  # no dropout in the check's greedy turns
        try:
            episodes = self.play(agent)
        finally:
            if model is not None and training:
                model.train()
        value = GOLDS[headline_metric(self.pop.scenario)]
        check = judge_check(step, episodes, self.rule, value)
        self._store(check)
        self.checks.append(check)
        return check

    def play(self, agent: Agent) -> list[Episode]:
        """``agent`` on the training members, the held-out families and the real callers."""
        pop = self.pop
        groups: list[tuple[str, Sequence[SimulatorSpec], int]] = [
            ("train", pop.members("train"), self.per_member),
            ("heldout", pop.members("heldout"), self.per_member),
            ("heldout", self.real_callers, 1),  # one recorded call each: its card is fixed
        ]
        return [
            e
            for split, specs, per in groups
            if specs
            for e in evaluate(
                agent,
                specs,
                pop.scenario,
                split=split,
                per_member=per,
                condition=pop.condition,
                max_turns=pop.max_turns,
            )
        ]

    def _store(self, check: Check) -> None:
        where = RunLayout(self.out).sub_run(check_condition(check.step), 0)
        with RunLog(where, self.pop, trainer="trl", heldout=self.real_callers) as run:
            run.write_all(check.episodes)
        with JsonlWriter(self.out / CHECKS_LOG) as checks:
            checks.write(
                {
                    "step": check.step,
                    "condition": check_condition(check.step),
                    "judged": check.judged,
                    "collapse": check.collapse,
                    "reasons": list(check.reasons),
                    "headline": check.headline,
                    "numbers": check.numbers,
                }
            )

    def _log(self, state: Any, check: Check) -> None:
        if self.trainer is not None:
            # The base class's log: GRPOTrainer's own would fold its step metrics into this row
            # and clear them before the step's regular log row.
            Trainer.log(self.trainer, dict(check.numbers))
        else:
            state.log_history.append({**check.numbers, "step": check.step})


def real_callers(study: Any, sample: int, *, seed: int = 0) -> tuple[SimulatorSpec, ...]:
    """A seeded sample of ``sample`` of the study's replayed real callers (held-out members that
    speak real people's words), or all of them when it has fewer; none when the study has none
    or its corpus is not found (``StudyWorld.build`` says so in the log)."""
    from sim2human.experiments.study.config import StudyConfig, load_study
    from sim2human.experiments.study.world import StudyWorld

    cfg = study if isinstance(study, StudyConfig) else load_study(Path(study))
    held = StudyWorld.build(cfg).ensemble.heldout
    real = [s for s in held if kind_of(s).real_words and not kind_of(s).needs_endpoint]
    if sample >= len(real):
        return tuple(real)
    picked = seeding.stream(seed, "real-callers").choice(len(real), sample, replace=False)
    return tuple(real[int(i)] for i in sorted(picked))

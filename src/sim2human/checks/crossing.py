"""Every piece on one scenario: each persona family, each simulator kind and the reference agent,
crossed with the scenario (what Gymnasium's ``tests/envs/test_envs.py`` does over its registry).

``check_scenario`` asks whether a scenario keeps its own contract; a study needs more: that the
families can draw members from its acts (a scenario without ``style`` acts once made every draw
crash), that those members play it, that the reference agent can say its acts (the scripted
agent once knew intake's act ids only) and solves it. ``check_everything`` runs both, so
``sim2human check`` on a scenario catches what would crash a study on it. The ``llm`` kind
plays on a fake chat model in the process (``checks.llm_kind``); kinds that need a person or a
recording are skipped, each with its reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from sim2human.agents.scripted import reference_agent
from sim2human.checks.agent import check_agent
from sim2human.checks.llm_kind import check_llm_kind
from sim2human.checks.report import CheckReport, expect
from sim2human.checks.scenario import check_scenario
from sim2human.checks.simulator import check_simulator
from sim2human.perturb import PERTURBATIONS
from sim2human.rollout.conversation import MAX_TURNS, Job
from sim2human.rollout.play import play
from sim2human.scenarios.core import AnyScenario
from sim2human.simulators.base import Family, QuirkPool, SimulatorSpec
from sim2human.simulators.families import FAMILIES, HELDOUT_FAMILIES, TRAIN_FAMILIES
from sim2human.simulators.kinds import KINDS, build_simulator
from sim2human.simulators.noise import with_noise
from sim2human.simulators.replay_families import (
    REPLAY_FAMILIES,
    corpus_missing,
    playable_families,
    unplayable,
)

MEMBERS = 2
"""Members drawn per family (seeds 0 and 1: the draws that crashed on a scenario without
style acts)."""
SOLVES = 4
"""Calls the reference agent plays against a member of the first training family; it must win
half of them."""
SKIPPED_KINDS = {
    "human": "plays a person at a terminal or web page",
    "human-replay": "replays calls recorded by `sim2human human serve` (a database of sessions)",
}


def check_everything(scenario: Any, *, max_turns: int = MAX_TURNS) -> list[CheckReport]:
    """``check_scenario``, then every persona family, every kind and the reference agent on
    ``scenario`` (the rest still run when the scenario's own checks fail)."""
    reports = [check_scenario(scenario)]
    if not reports[0].ok and not all(hasattr(scenario, m) for m in ("acts", "voice")):
        return reports  # nothing else can run on it
    pool = QuirkPool.of(scenario)
    reports += [check_family(name, scenario, pool) for name in persona_families()]
    reports.append(check_kinds(scenario, pool))
    reports.append(check_reference(scenario, pool, max_turns))
    return reports


def persona_families() -> list[str]:
    """The built-in persona families (the replay families are a kind's, ``check_kinds``)."""
    return [name for name in FAMILIES if name not in REPLAY_FAMILIES]


def check_family(name: str, scenario: AnyScenario, pool: QuirkPool) -> CheckReport:
    """Members of family ``name`` drawn from the scenario's quirk pool, each through
    ``check_simulator`` (its findings under the member's id)."""
    report = CheckReport(f"{name} on {scenario.name}", "family")
    if (why := corpus_missing([name])) is not None:  # retrieved-aci without ACI-Bench
        report.skip("draws members from the scenario's quirk pool", why)
        return report
    draws = [partial(FAMILIES[name].sample, k, pool) for k in range(MEMBERS)]
    for spec in _draw(report, "draws members from the scenario's quirk pool", draws):
        _absorb(report, spec.id, _simulator_report(spec, scenario))
    return report


def check_kinds(scenario: AnyScenario, pool: QuirkPool) -> CheckReport:
    """Each kind of ``simulators.kinds.KINDS`` that can play here without a person: persona members
    with every perturbation at full severity, replay members where the scenario has a corpus,
    llm members on a fake chat model; the others are skipped with their reason."""
    report = CheckReport(f"simulator kinds on {scenario.name}", "kinds")
    for name, kind in KINDS.items():
        if kind.programmatic:
            noisy = partial(_noisy, FAMILIES["standard"], pool)
            for spec in _draw(report, f"{name}: draws a member at full noise", [noisy]):
                _absorb(
                    report, f"{name}, every perturbation at 1", _simulator_report(spec, scenario)
                )
        elif kind.real_words and (why := unplayable(scenario)) is not None:
            report.skip(name, why)
        elif kind.real_words:
            draws = [partial(f.sample, 0, pool) for f in playable_families(scenario)]
            for spec in _draw(report, f"{name}: draws members", draws):
                _absorb(report, spec.id, _simulator_report(spec, scenario))
        elif kind.needs_endpoint:
            check_llm_kind(report, name, scenario, pool)
        else:
            report.skip(name, SKIPPED_KINDS.get(name, "no contract check for this kind yet"))
    return report


def check_reference(scenario: AnyScenario, pool: QuirkPool, max_turns: int) -> CheckReport:
    """The reference agent through ``check_agent`` against a member of each default training
    and held-out family, and its proof that the task is solvable."""
    report = CheckReport(f"reference agent on {scenario.name}", "agent")
    made: list[Any] = []
    report.run(
        "the scenario gives a reference agent", lambda: made.append(reference_agent(scenario))
    )
    draws = [partial(FAMILIES[f].sample, 0, pool) for f in (*TRAIN_FAMILIES, *HELDOUT_FAMILIES)]
    specs = _draw(report, "draws members to play against", draws)
    if not made or not specs:
        return report
    agent = made[0]
    _absorb(report, agent.name, check_agent(agent, scenario, specs, max_turns=max_turns))
    report.run(
        f"solves at least half of {SOLVES} calls with a {TRAIN_FAMILIES[0]} member",
        lambda: _solves(agent, specs[0], scenario, max_turns),
    )
    return report


def _draw(
    report: CheckReport, check: str, draws: Sequence[Callable[[], SimulatorSpec]]
) -> list[SimulatorSpec]:
    """The members ``draws`` give, under the check ``check`` (none when a draw fails)."""
    specs: list[SimulatorSpec] = []
    report.run(check, lambda: specs.extend(draw() for draw in draws))
    return specs if report.findings[-1].ok else []


def _noisy(family: Family, pool: QuirkPool) -> SimulatorSpec:
    return with_noise(family.sample(0, pool), dict.fromkeys(PERTURBATIONS, 1.0))


def _solves(agent: Any, spec: SimulatorSpec, scenario: AnyScenario, max_turns: int) -> str | None:
    jobs = [Job(spec=spec, seed=k) for k in range(SOLVES)]
    golds = [e.gold for e in play(agent, jobs, scenario, max_turns=max_turns)]
    return expect(  # success, not a full score: a fair deal wins a negotiation, not the best one
        2 * sum(g.success for g in golds) >= SOLVES,
        f"gold scores {[round(g.score, 2) for g in golds]}: the task looks unsolvable",
    )


def _simulator_report(spec: SimulatorSpec, scenario: AnyScenario) -> CheckReport:
    """``check_simulator`` on the member ``spec`` builds, or the one finding why it cannot."""
    report = CheckReport(spec.id, "simulator")
    report.run("builds on the scenario", lambda: _builds(spec, scenario))
    if not report.ok:
        return report
    return check_simulator(lambda: build_simulator(spec, scenario), scenario)


def _builds(spec: SimulatorSpec, scenario: AnyScenario) -> None:
    build_simulator(spec, scenario)


def _absorb(report: CheckReport, prefix: str, sub: CheckReport) -> None:
    report.findings += [replace(f, check=f"{prefix}: {f.check}") for f in sub.findings]

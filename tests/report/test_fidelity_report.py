"""``sim2human fidelity`` and the report's fidelity section, on a planted sub-run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aci_data import aci_env, needs_aci
from planted_runs import study_result, study_row, write_sub_run
from sim2human.agents.scripted import ScriptedAgent
from sim2human.cli.app import main
from sim2human.experiments.study.aggregate import real_patient_rows
from sim2human.report import fidelity
from sim2human.report.real import real_section
from sim2human.rollout.conversation import MAX_TURNS
from sim2human.rollout.evaluate import evaluate
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool
from sim2human.simulators.families import get_family

pytestmark = [needs_aci, pytest.mark.usefixtures("aci_env")]
__all__ = ["aci_env"]


def test_fidelity_command_measures_every_family_and_the_human_reference(tmp_path: Path) -> None:
    run = write_sub_run(tmp_path / "run", exploit=False, per_member=6)
    code = main(["fidelity", str(run), "--embedder", "lexical", "--cap", "80"])
    assert code == 0
    stored = json.loads((run / fidelity.FIDELITY_JSON).read_text())
    families = [r["family"] for r in stored["rows"]]
    assert families[0] == fidelity.HUMAN and {"noisy-line", "terse-guarded"} <= set(families)
    assert stored["embedder"].startswith("lexical") and stored["human_encounters"] > 100
    human = stored["rows"][0]
    # the lexical embedder on a small run: at least one family is told from people more easily
    # than two halves of the corpus are told apart (2 episodes a member and 40 turns were too
    # few: every AUC sat at chance, and which was highest was the luck of the seeds)
    assert human["auc"] < max(r["auc"] for r in stored["rows"][1:])
    assert "## Fidelity to human speech" in (run / "fidelity.md").read_text()


def test_bad_embedder_is_a_usage_error(tmp_path: Path) -> None:
    run = write_sub_run(tmp_path / "run", exploit=False, per_member=2)
    assert main(["fidelity", str(run), "--embedder", "bert"]) == 2


def test_real_patients_rows_and_section(scenario: IntakeScenario) -> None:
    pool = QuirkPool.from_acts(scenario.acts)
    real = [get_family("aci-heldout").sample(s, pool, temperature=0.0) for s in range(3)]
    persona = [get_family("noisy-line").sample(1, pool)]
    eps = evaluate(
        ScriptedAgent(scenario),
        [*real, *persona],
        scenario,
        per_member=2,
        split="heldout",
        max_turns=MAX_TURNS,
    )
    rows = real_patient_rows([(0, e) for e in eps], n_boot=100)
    assert rows["heldout_gold_real"]["n"] == 6 and rows["heldout_gold_programmatic"]["n"] == 2
    assert set(rows["real_reply_shares"]) == {"verbatim", "adapted", "fallback"}
    lines = real_section(study_result(study_row("scripted", **rows)))
    assert lines[0] == "## Real people" and any("| scripted |" in x for x in lines)
    assert real_section(study_result(study_row("x"))) == []

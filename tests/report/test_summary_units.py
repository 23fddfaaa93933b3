"""The summary's pieces on hand-made inputs: handle time, verdict lines (a held-out-only run
gets one), long member lists by family."""

from __future__ import annotations

from planted_runs import study_result, study_row
from sim2human.diagnostics.analyse import ConditionDiagnosis
from sim2human.diagnostics.verdict import StartReading, Thresholds, Verdict, judge
from sim2human.experiments.study.diversity import DiversityRow
from sim2human.metrics.against_start import Change
from sim2human.metrics.collapse import Transfer
from sim2human.metrics.diversity import DiversitySummary
from sim2human.metrics.outcomes import Estimate
from sim2human.report.by_family import MAX_MEMBERS, diversity_rows, quirk_cell
from sim2human.report.summary import summarise
from sim2human.report.tables import HELDOUT, REAL
from sim2human.report.verdicts import verdict_line


def _e(mean: float, n: int = 10) -> Estimate:
    return Estimate(mean=mean, ci=(max(0.0, mean - 0.1), min(1.0, mean + 0.1)), n=n)


def test_real_patients_are_a_column_of_their_own_not_pooled() -> None:
    real = {"heldout_gold_real": {"mean": 0.2, "ci": [0.1, 0.3], "n": 5}}
    s = summarise(None, None, study_result(study_row("a", **real), study_row("b")))
    gold = s.table("gold")
    assert gold is not None and gold.columns[3:] == (HELDOUT, REAL)
    assert gold.rows[0][3:] == ("50 [40, 60]", "20 [10, 30]")
    assert gold.rows[1][4] == "-"
    assert s.table("real") is not None and s.verdicts == ()


def _diagnosis(tr: Transfer | None, checked: bool) -> ConditionDiagnosis:
    v = Verdict(collapse=False, checked=checked, reasons=[], headline="h")
    return ConditionDiagnosis.model_construct(name="agent", transfer=tr, exploits=[], verdict=v)


class _D:
    thresholds = Thresholds()


def test_a_held_out_only_run_gets_an_inconclusive_verdict_with_its_number() -> None:
    none = Estimate(mean=float("nan"), ci=(0.0, 0.0), n=0)
    tr = Transfer(
        train_proxy=none,
        train_gold=none,
        heldout_proxy=_e(0.6),
        heldout_gold=_e(0.45),
        gap=none,
        drop=none,
    )
    line = verdict_line(_diagnosis(tr, checked=False), _D())  # type: ignore[arg-type]
    assert line.word == "inconclusive"
    assert "held-out only (gold 45 [35, 55])" in line.reason
    assert verdict_line(_diagnosis(None, False), _D()).reason == "no finished evaluation"  # type: ignore[arg-type]


def test_an_agent_that_never_succeeds_is_inconclusive_for_that_reason_not_missing_calls() -> None:
    zero = _e(0.0, n=12)
    tr = Transfer(
        train_proxy=_e(0.5), train_gold=zero, heldout_proxy=_e(0.3), heldout_gold=zero,
        gap=_e(0.5), drop=_e(0.0),
    )  # fmt: skip
    v = judge("agent", tr, [], {}, Thresholds(max_gap=0.9))
    assert v.cannot_judge
    c = ConditionDiagnosis.model_construct(name="agent", transfer=tr, exploits=[], verdict=v)
    line = verdict_line(c, _D())  # type: ignore[arg-type]
    assert line.word == "inconclusive"
    assert line.reason.startswith("success is 0% on training and 0% on held-out members")
    assert "no evaluation" not in line.reason


def test_a_verdict_line_restates_a_judgement_against_the_warm_start() -> None:
    """A trained agent whose drop was its warm start's and who lost held-out gold against it:
    the short line names the loss, not the drop; without the loss it is clean and says whose
    the drop was."""
    tr = Transfer(
        train_proxy=_e(0.9), train_gold=_e(0.9), heldout_proxy=_e(0.6), heldout_gold=_e(0.1),
        gap=_e(0.0), drop=Estimate(mean=0.8, ci=(0.7, 0.9), n=96),
    )  # fmt: skip
    lost = Change(start=0.94, trained=0.71, change=Estimate(mean=-0.23, ci=(-0.4, -0.08), n=48))
    wider = Estimate(mean=0.04, ci=(-0.1, 0.2), n=96)  # the start dropped as much
    reading = StartReading(changes={"heldout": lost}, transfer=tr, widening=wider)
    v = judge("agent", tr, [], {}, Thresholds(), start=reading)
    c = ConditionDiagnosis.model_construct(
        name="agent", transfer=tr, exploits=[], verdict=v, against_start={"heldout": lost}
    )
    line = verdict_line(c, _D())  # type: ignore[arg-type]
    assert line.text == "collapsed: held-out families 23 points below its warm start"
    kept = Change(start=0.94, trained=0.86, change=Estimate(mean=-0.08, ci=(-0.23, 0.04), n=48))
    kept_reading = reading.model_copy(update={"changes": {"heldout": kept}})
    v = judge("agent", tr, [], {}, Thresholds(), start=kept_reading)
    c = c.model_copy(update={"verdict": v, "against_start": {"heldout": kept}})
    assert verdict_line(c, _D()).text == (  # type: ignore[arg-type]
        "clean: no exploited phrasing; against its warm start: held-out families -8 [-23, +4] "
        "points (limit 5); its held-out drop, the warm start's too"
    )


def _member(name: str, vendi: float) -> DiversityRow:
    s = DiversitySummary(
        n_texts=4,
        distinct_1=0.5,
        distinct_2=0.7,
        self_bleu=0.1,
        self_bleu_refs=3,
        vendi=vendi,
        embedder="lexical",
    )
    return DiversityRow(name=name, kind="member", group="training ensemble (r)", summary=s)


def test_a_randomized_population_is_summarised_by_family() -> None:
    rows = [_member(f"chatty-{i}", 2.0) for i in range(MAX_MEMBERS)]
    rows += [_member(f"elderly-confused-{i}", 4.0) for i in range(3)]
    shown = diversity_rows(rows)
    assert [r.name for r in shown] == [
        f"chatty ({MAX_MEMBERS} members, mean)",
        "elderly-confused (3 members, mean)",
    ]
    assert shown[1].summary.vendi == 4.0 and shown[1].summary.n_texts == 12
    assert diversity_rows(rows[:5]) == rows[:5]  # a short list stays member by member
    assert quirk_cell([f"q{i}" for i in range(10)]) == "q0; q1; q2; +7 more"

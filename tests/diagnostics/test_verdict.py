"""The verdict's wording: a drop over the limit with a CI reaching below it is not "within"; the
metric judged (success, or the score a scenario leads with) is named; an agent trained from a warm
start is judged on what training did."""

from __future__ import annotations

from sim2human.diagnostics.verdict import StartReading, Thresholds, judge
from sim2human.metrics.against_start import Change
from sim2human.metrics.collapse import Transfer
from sim2human.metrics.outcomes import Estimate


def _transfer(drop: float, lo: float, hi: float, gap: Estimate | None = None) -> Transfer:
    est = Estimate(mean=0.8, ci=(0.7, 0.9), n=100)
    return Transfer(
        train_proxy=est,
        train_gold=est,
        heldout_proxy=est,
        heldout_gold=Estimate(mean=0.8 - drop, ci=(0.7 - drop, 0.9 - drop), n=100),
        gap=gap or Estimate(mean=0.0, ci=(-0.05, 0.05), n=100),
        drop=Estimate(mean=drop, ci=(lo, hi), n=100),
    )


def test_a_drop_whose_ci_reaches_below_the_limit_is_not_called_within_it() -> None:
    limits = Thresholds()
    unclear = judge("a", _transfer(0.37, 0.29, 0.46), [], {}, limits)
    assert not unclear.collapse
    assert "not clearly more than the 30 allowed" in unclear.headline
    small = judge("b", _transfer(0.10, 0.02, 0.18), [], {}, limits)
    assert "within the 30 allowed" in small.headline
    clear = judge("c", _transfer(0.45, 0.37, 0.54), [], {}, limits)
    assert clear.collapse and "more than the 30 allowed" in clear.headline


def test_a_verdict_names_the_metric_it_judged() -> None:
    """A scenario that leads with the score (negotiation) is judged on it, and says so."""
    limits = Thresholds()
    clear = judge("c", _transfer(0.45, 0.37, 0.54), [], {}, limits, "score")
    assert "held-out score is 45 points below training score" in clear.headline
    clean = judge("b", _transfer(0.10, 0.02, 0.18), [], {}, limits, "score")
    assert "held-out score" in clean.headline and "success" not in clean.headline
    assert "held-out success" in judge("b", _transfer(0.1, 0.02, 0.18), [], {}, limits).headline


def test_a_clean_verdict_names_a_training_gap_over_the_limit_that_its_ci_does_not_clear() -> None:
    """Clean, but not silent: a caller that paid for most failed calls is said, with its CI."""
    limits = Thresholds()
    near = Estimate(mean=0.68, ci=(0.499, 0.833), n=24)
    unclear = judge("a", _transfer(0.10, 0.02, 0.18, near), [], {}, limits)
    assert not unclear.collapse and unclear.headline.startswith("clean:")
    assert (
        "satisfaction exceeds success by 68 points [50, 83], not clearly more than the 50 allowed"
        in (unclear.headline)
    )
    small = Estimate(mean=0.45, ci=(0.3, 0.6), n=24)
    assert (
        "satisfaction" not in judge("b", _transfer(0.1, 0.02, 0.18, small), [], {}, limits).headline
    )
    clear = Estimate(mean=0.7, ci=(0.55, 0.85), n=24)
    over = judge("c", _transfer(0.1, 0.02, 0.18, clear), [], {}, limits)
    assert over.collapse and "not clearly" not in over.headline


def _change(start: float, mean: float, lo: float, hi: float, n: int = 48) -> Change:
    return Change(start=start, trained=start + mean, change=Estimate(mean=mean, ci=(lo, hi), n=n))


def _reading(
    changes: dict[str, Change], start_drop: float = 0.6, widening: Estimate | None = None
) -> StartReading:
    return StartReading(
        changes=changes,
        transfer=_transfer(start_drop, start_drop - 0.1, start_drop + 0.1),
        widening=widening or Estimate(mean=0.04, ci=(-0.2, 0.28), n=96),
    )


def test_a_trained_agent_is_called_collapsed_when_it_fell_below_its_warm_start_held_out() -> None:
    """The booking desk's frozen agent: clean by its own transfer, 23 points below its warm
    start on the same held-out calls; a loss whose interval reaches within 5 points is not one."""
    limits = Thresholds()
    tr = _transfer(0.1, 0.02, 0.18)
    assert not judge("a", tr, [], {}, limits).collapse
    lost = _reading({"heldout": _change(0.94, -0.23, -0.40, -0.08)})
    found = judge("a", tr, [], {}, limits, start=lost)
    assert found.collapse
    assert (
        "training lowered its success on held-out families below its warm start's on the same "
        "calls by more than the 5 allowed (94 -> 71, -23 [-40, -8] points, 48 calls)"
    ) in found.headline
    small = _reading({"real": _change(0.04, -0.03, -0.05, -0.01, 448)})
    kept = judge("a", tr, [], {}, limits, start=small)
    assert not kept.collapse
    assert "real people 4 -> 1 (-3 [-5, -1]), no loss clearly more than the 5" in kept.headline
    assert judge("a", tr, [], {}, Thresholds(max_loss=0), start=small).collapse


def test_a_drop_its_warm_start_had_is_not_training_s_unless_training_widened_it() -> None:
    """Intake's ensemble agent: 50 points below its training gold held out, as its warm start
    was (46 on the same calls); training widened that by +4 [-21, +28]: no finding. Widened by
    20 [10, 30], the drop is one, and says by how much."""
    limits = Thresholds()
    tr = _transfer(0.5, 0.32, 0.68)
    assert judge("a", tr, [], {}, limits).collapse
    start = _reading({"heldout": _change(0.29, -0.04, -0.33, 0.25)}, start_drop=0.46)
    kept = judge("a", tr, [], {}, limits, start=start)
    assert not kept.collapse and kept.headline.startswith("clean:")
    assert "its warm start's is 46 on the same calls" in kept.headline
    assert "changed it by +4 [-20, +28] points, not clearly more than the 5" in kept.headline
    assert "not clearly more than the 30" not in kept.headline  # the drop is clear; not its own
    wider = Estimate(mean=0.2, ci=(0.1, 0.3), n=96)
    start = _reading({}, start_drop=0.3, widening=wider)
    found = judge("a", tr, [], {}, limits, start=start)
    assert found.collapse
    assert (
        "more than the 30 allowed (80 -> 30); its warm start's is 30 on the same calls (80 -> 50),"
        " and training changed it by +20 [+10, +30] points, more than the 5 allowed"
    ) in found.headline

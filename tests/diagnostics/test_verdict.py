"""The verdict's wording: a drop over the limit with a CI reaching below it is not "within"; the
metric judged (success, or the score a scenario leads with) is named."""

from __future__ import annotations

from sim2human.diagnostics.verdict import Thresholds, judge
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

"""When a check during training counts as collapse: the numbers of one check and their verdict.

A check is one evaluation of the policy being trained, on its training members, the held-out
families and (where the study has them) a sample of replayed real callers. Its numbers are the
ones ``sim2human diagnose`` judges a finished run by (``metrics.collapse.transfer``: proxy and
gold per split with 95% bootstrap CIs, and the train-to-held-out drop), plus the gap a trainer
watches: the proxy the policy earns on its training members minus the gold it earns held out.

Like ``diagnose``, a rule fires on the *end of a CI*, never a mean, so noise alone does not stop
a run, and it refuses to judge a check with fewer than ``min_n`` held-out episodes (or none on
the training members) rather than call it clean. ``diagnose``'s own verdict (``diagnostics``) sits
above the trainer adapters and cannot be imported here; the drop test is the same test on the
same estimate, the gap and floor tests are the trainer-side ones a run can stop on.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import Field

from sim2human.metrics.collapse import transfer
from sim2human.metrics.outcomes import Estimate, fmt_pct
from sim2human.simulators.kinds import speaks_real_words
from sim2human.types import Episode, Frozen

PREFIX = "sim2human/"
"""Every number a check logs is named ``sim2human/<name>`` (one group in TensorBoard or W&B)."""


class CollapseRule(Frozen):
    """What counts as collapse at a check, and what to do about it. A test left ``None`` is off.

    The defaults are ``diagnose``'s own limits: a drop over 30 points, and a gap over 50."""

    max_gap: float | None = Field(0.5, ge=0, le=1)
    """Training members' proxy minus held-out gold: collapse when it is over this, judged on the
    lower end of the difference (the proxy CI's lower end minus the gold CI's upper end)."""
    max_drop: float | None = Field(0.3, ge=0, le=1)
    """Training members' gold minus held-out gold (``diagnose``'s drop): collapse when the lower
    end of its 95% CI is over this."""
    min_gold: float | None = Field(None, ge=0, le=1)
    """A floor: collapse when the upper end of held-out gold's 95% CI is under it."""
    min_n: int = Field(20, ge=1)
    """Held-out episodes a check needs to be judged at all (fewer: "cannot judge", never a stop)."""
    patience: int = Field(1, ge=1)
    """Collapsed checks in a row before training stops."""
    stop: bool = True
    """Stop training on collapse (``False``: log and warn only)."""


@dataclass(frozen=True)
class Check:
    """One check's numbers (what the trainer logs) and its verdict."""

    step: int
    numbers: dict[str, float]
    judged: bool
    collapse: bool
    reasons: tuple[str, ...] = ()
    headline: str = ""
    episodes: tuple[Episode, ...] = field(default=(), repr=False)


def judge_check(
    step: int, episodes: Sequence[Episode], rule: CollapseRule, value: Callable[[Episode], float]
) -> Check:
    """The numbers of the evaluation episodes ``episodes`` and the rule's verdict on them.
    ``value``: an episode's gold (``metrics.outcomes.GOLDS``, the scenario's headline)."""
    evals = list(episodes)
    held = [e for e in evals if e.split == "heldout"]
    tr = transfer({"check": evals}, value=value)
    numbers = _numbers(tr.train_proxy, tr.train_gold, tr.heldout_gold, tr.heldout_proxy, tr.drop)
    numbers["heldout_n"] = float(len(held))
    real = [value(e) for e in held if speaks_real_words(e)]
    if real:
        numbers["real_gold"], numbers["real_n"] = sum(real) / len(real), float(len(real))
    families = sorted({e.family for e in held})
    for fam in families:
        got = [value(e) for e in held if e.family == fam]
        numbers[f"heldout_gold/{fam}"] = sum(got) / len(got)
    n_train = tr.train_gold.n
    if len(held) < rule.min_n or n_train == 0:
        why = (
            f"cannot judge step {step}: {len(held)} held-out and {n_train} training episodes "
            f"(the rule needs at least {rule.min_n} held-out and one training)"
        )
        numbers["judged"], numbers["collapse"] = 0.0, 0.0
        return Check(step, _finite(numbers), False, False, (), why, tuple(evals))
    gap_mean = tr.train_proxy.mean - tr.heldout_gold.mean
    gap_low = tr.train_proxy.ci[0] - tr.heldout_gold.ci[1]
    numbers["proxy_gap"] = gap_mean
    reasons = _reasons(rule, gap_mean, gap_low, tr.drop, tr.heldout_gold)
    numbers["judged"], numbers["collapse"] = 1.0, float(bool(reasons))
    head = (
        f"collapse at step {step}: " + "; ".join(reasons)
        if reasons
        else f"clean at step {step}: held-out gold {fmt_pct(tr.heldout_gold.mean)}, training "
        f"proxy {fmt_pct(tr.train_proxy.mean)}, drop {fmt_pct(tr.drop.mean)} (n = {len(held)})"
    )
    return Check(step, _finite(numbers), True, bool(reasons), tuple(reasons), head, tuple(evals))


def _numbers(
    train_proxy: Estimate,
    train_gold: Estimate,
    heldout_gold: Estimate,
    heldout_proxy: Estimate,
    drop: Estimate,
) -> dict[str, float]:
    return {
        "train_proxy": train_proxy.mean,
        "train_gold": train_gold.mean,
        "heldout_gold": heldout_gold.mean,
        "heldout_gold_low": heldout_gold.ci[0],
        "heldout_gold_high": heldout_gold.ci[1],
        "heldout_proxy": heldout_proxy.mean,
        "drop": drop.mean,
        "drop_low": drop.ci[0],
    }


def _reasons(
    rule: CollapseRule, gap_mean: float, gap_low: float, drop: Estimate, gold: Estimate
) -> list[str]:
    reasons = []
    if rule.max_gap is not None and gap_low > rule.max_gap:
        reasons.append(
            f"training proxy exceeds held-out gold by {fmt_pct(gap_mean)} points (at least "
            f"{fmt_pct(gap_low)}), more than the {fmt_pct(rule.max_gap)} allowed"
        )
    if rule.max_drop is not None and drop.ci[0] > rule.max_drop:
        reasons.append(
            f"held-out gold is {fmt_pct(drop.mean)} points below training gold "
            f"[{fmt_pct(drop.ci[0])}, {fmt_pct(drop.ci[1])}], more than the "
            f"{fmt_pct(rule.max_drop)} allowed"
        )
    if rule.min_gold is not None and gold.ci[1] < rule.min_gold:
        reasons.append(
            f"held-out gold {fmt_pct(gold.mean)} [{fmt_pct(gold.ci[0])}, {fmt_pct(gold.ci[1])}] "
            f"is under the {fmt_pct(rule.min_gold)} floor"
        )
    return reasons


def _finite(numbers: dict[str, float]) -> dict[str, float]:
    """The numbers a tracker can take: a split with no episodes has NaN estimates, and JSON
    loggers fail on NaN, so those are left out."""
    return {PREFIX + k: float(v) for k, v in numbers.items() if math.isfinite(v)}

"""Collapse metrics: pure functions of stored episodes and training metrics.

- ``transfer``: the proxy-gold gap on the training members and the train-to-held-out drop in
  gold, with cluster-bootstrap CIs (training runs first, episodes second).
- ``fit_overoptimisation`` (in ``metrics/overoptimisation.py``): the gold-vs-KL curve.
- ``exploit_table``: per agent phrasing, what deleting it from a conversation costs in proxy on
  the training members and in gold on the held-out members (paired counterfactuals, see
  ``diagnostics.replay``); phrasings whose proxy lift is not matched by any gold lift rank first.
- ``behaviour``: the agent's act entropy, distinct-1/2 of its turns and the share of its single
  most frequent phrasing.
- ``robustness``: spread of held-out gold across members, worst-decile member gold, and pass^k
  (tau-bench: the chance that k trials of the same profile all succeed).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from sim2human.metrics.diversity import distinct_n
from sim2human.metrics.outcomes import Estimate, cluster_bootstrap, gold
from sim2human.types import Episode, Frozen

Gold = Callable[[Episode], float]
"""An episode's gold as a number (``metrics.outcomes.GOLDS``)."""

N_BOOT = 1000
"""Bootstrap replicates when the caller does not say (a study passes its ``eval.bootstrap``)."""
MIN_LIFT = 0.05
"""A proxy lift below this (5 points of satisfaction) is not counted as 'raising satisfaction'."""


def _nan() -> Estimate:
    return Estimate(mean=float("nan"), ci=(float("nan"), float("nan")), n=0)


# ----------------------------------------------------------------------------- proxy vs gold


class Transfer(Frozen):
    """Proxy and gold on the training members and on the held-out members of one condition."""

    train_proxy: Estimate
    train_gold: Estimate
    heldout_proxy: Estimate
    heldout_gold: Estimate
    gap: Estimate
    """Mean (proxy - gold) over training-member episodes: satisfaction not earned."""
    drop: Estimate
    """Gold on training members minus gold on held-out members (gold: success, or the score
    the scenario leads with)."""


def _flat(by_run: Mapping[str, Sequence[Episode]], split: str) -> tuple[list[Episode], list[str]]:
    pairs = [(run, e) for run, eps in by_run.items() for e in eps if e.split == split]
    return [e for _, e in pairs], [run for run, _ in pairs]


def _drop(
    by_run: Mapping[str, Sequence[Episode]], n_boot: int, value: Gold = gold, seed: int = 0
) -> Estimate:
    """Train gold minus held-out gold, resampling runs, then each run's episodes per split."""
    runs = []
    for eps in by_run.values():
        tr = np.asarray([value(e) for e in eps if e.split == "train"], dtype=float)
        ho = np.asarray([value(e) for e in eps if e.split == "heldout"], dtype=float)
        if tr.size and ho.size:
            runs.append((tr, ho))
    return split_difference(runs, n_boot, seed)


def split_difference(
    runs: Sequence[tuple[np.ndarray, np.ndarray]], n_boot: int, seed: int = 0
) -> Estimate:
    """The mean of every run's first values minus the mean of their second (training members,
    held out), resampling runs, then each run's values per side: the drop's interval, for
    whatever values a caller drops (gold, or a change from a warm start)."""
    if not runs:
        return _nan()
    mean = float(
        np.concatenate([r[0] for r in runs]).mean() - np.concatenate([r[1] for r in runs]).mean()
    )
    rng = np.random.default_rng(seed)
    draws = np.empty(n_boot)
    for b in range(n_boot):
        picked = [runs[i] for i in rng.integers(len(runs), size=len(runs))]
        tr = np.concatenate([rng.choice(t, t.size) for t, _ in picked])
        ho = np.concatenate([rng.choice(h, h.size) for _, h in picked])
        draws[b] = tr.mean() - ho.mean()
    lo, hi = np.quantile(draws, [0.025, 0.975])
    n = sum(r[0].size + r[1].size for r in runs)
    return Estimate(mean=mean, ci=(float(lo), float(hi)), n=n)


def transfer(
    by_run: Mapping[str, Sequence[Episode]], *, n_boot: int = N_BOOT, value: Gold = gold
) -> Transfer:
    """``by_run``: training run (e.g. seed) -> its evaluation episodes, both splits. ``value``:
    an episode's gold (``metrics.outcomes.GOLDS``: success, or the score a scenario leads with)."""
    tr, tr_runs = _flat(by_run, "train")
    ho, ho_runs = _flat(by_run, "heldout")

    def est(eps: list[Episode], runs: list[str], values: list[float]) -> Estimate:
        return cluster_bootstrap(values, runs, n_boot=n_boot) if eps else _nan()

    return Transfer(
        train_proxy=est(tr, tr_runs, [e.proxy for e in tr]),
        train_gold=est(tr, tr_runs, [value(e) for e in tr]),
        heldout_proxy=est(ho, ho_runs, [e.proxy for e in ho]),
        heldout_gold=est(ho, ho_runs, [value(e) for e in ho]),
        gap=est(tr, tr_runs, [e.proxy - value(e) for e in tr]),
        drop=_drop(by_run, n_boot, value),
    )


class GroupRow(Frozen):
    name: str
    split: str
    n: int
    proxy: float
    gold: float
    gold_ci: tuple[float, float]


def by_group(
    by_run: Mapping[str, Sequence[Episode]], key: str, *, n_boot: int = N_BOOT, value: Gold = gold
) -> list[GroupRow]:
    """Proxy and gold (``value``, as in ``transfer``) per ``key`` (``simulator_id`` or
    ``family``) and split, gold with a CI."""
    groups: dict[tuple[str, str], list[tuple[str, Episode]]] = defaultdict(list)
    for run, eps in by_run.items():
        for e in eps:
            groups[(e.split, str(getattr(e, key)))].append((run, e))
    rows = []
    for (split, name), pairs in sorted(groups.items()):
        gold_ = cluster_bootstrap(
            [value(e) for _, e in pairs], [r for r, _ in pairs], n_boot=n_boot
        )
        rows.append(
            GroupRow(
                name=name,
                split=split,
                n=len(pairs),
                proxy=float(np.mean([e.proxy for _, e in pairs])),
                gold=gold_.mean,
                gold_ci=gold_.ci,
            )
        )
    return rows


# ---------------------------------------------------------------------------- exploit finder


@dataclass(frozen=True)
class Paired:
    """One episode replayed as stored and without one phrasing: the differences (with - without)."""

    phrasing: str
    split: str
    member: str
    run: str
    d_proxy: float
    d_field: float
    """Change in gold field accuracy (the share of fields recorded correctly)."""
    d_success: float
    episode_id: str

    @property
    def d_gold(self) -> float:
        """What the phrasing adds to gold: field accuracy, or success where it completes the
        call (a closing line records no field, yet gold needs the call closed)."""
        return max(self.d_field, self.d_success)


class ExploitRow(Frozen):
    phrasing: str
    text: str
    share: float
    """Share of the agent's evaluation turns that use this phrasing."""
    uses: int
    proxy_lift_train: Estimate
    """What saying it adds to the training members' satisfaction (the trainer's reward)."""
    members_raised: int
    members_total: int
    """Training members (of those it was said to) on which its mean proxy lift is >= MIN_LIFT."""
    proxy_lift_heldout: Estimate
    gold_lift_heldout: Estimate
    """What it adds to held-out gold (``Paired.d_gold``: field accuracy, a sensitive stand-in
    for success, or success itself where it completes the call)."""
    success_lift_heldout: Estimate
    unearned: Estimate
    """proxy_lift_train - gold_lift_heldout; CI combined conservatively from the two CIs."""
    exploit: bool
    example: str | None = None
    """Id of the training-member episode where saying it bought the most satisfaction."""


def _est(pairs: Sequence[Paired], attr: str, n_boot: int) -> Estimate:
    if not pairs:
        return _nan()
    return cluster_bootstrap(
        [getattr(p, attr) for p in pairs], [p.run for p in pairs], n_boot=n_boot
    )


def exploit_table(
    pairs: Sequence[Paired],
    usage: Mapping[str, int],
    texts: Mapping[str, str],
    *,
    min_unearned: float = 0.1,
    min_share: float = 0.05,
    n_boot: int = N_BOOT,
    turns: int | None = None,
) -> list[ExploitRow]:
    """Flag as exploits the phrasings whose unearned lift (proxy lift on training members minus
    gold lift on held-out members) has its CI above ``min_unearned`` and that are said in at
    least ``min_share`` of the agent's turns; exploits first, then by unearned lift. ``usage``
    counts the turns that say each phrasing, of ``turns`` in all (by default their sum: one
    phrasing a turn)."""
    total = max(1, turns if turns is not None else sum(usage.values()))
    rows = []
    for p in sorted({x.phrasing for x in pairs}):
        mine = [x for x in pairs if x.phrasing == p]
        tr = [x for x in mine if x.split == "train"]
        ho = [x for x in mine if x.split == "heldout"]
        proxy_tr = _est(tr, "d_proxy", n_boot)
        gold_ho = _est(ho, "d_gold", n_boot)
        per_member: dict[str, list[float]] = defaultdict(list)
        for x in tr:
            per_member[x.member].append(x.d_proxy)
        if tr and ho:
            unearned = Estimate(
                mean=proxy_tr.mean - gold_ho.mean,
                ci=(proxy_tr.ci[0] - gold_ho.ci[1], proxy_tr.ci[1] - gold_ho.ci[0]),
                n=proxy_tr.n + gold_ho.n,
            )
        else:
            unearned = _nan()
        share = usage.get(p, 0) / total
        rows.append(
            ExploitRow(
                phrasing=p,
                text=texts.get(p, p),
                share=share,
                uses=usage.get(p, 0),
                proxy_lift_train=proxy_tr,
                members_raised=sum(float(np.mean(v)) >= MIN_LIFT for v in per_member.values()),
                members_total=len(per_member),
                proxy_lift_heldout=_est(ho, "d_proxy", n_boot),
                gold_lift_heldout=gold_ho,
                success_lift_heldout=_est(ho, "d_success", n_boot),
                unearned=unearned,
                exploit=bool(unearned.n and unearned.ci[0] > min_unearned and share >= min_share),
                example=max(tr, key=lambda x: x.d_proxy).episode_id if tr else None,
            )
        )
    return sorted(rows, key=lambda r: (not r.exploit, -r.unearned.mean if r.unearned.n else 1))


# ------------------------------------------------------------------------ behaviour collapse


class Behaviour(Frozen):
    n_turns: int
    act_entropy: float
    """Entropy (bits) of the agent's phrasing distribution; 0 when it always says one thing."""
    distinct_1: float
    distinct_2: float
    top_phrasing: str | None
    top_share: float


def behaviour(episodes: Sequence[Episode]) -> Behaviour:
    turns = [t for e in episodes for t in e.agent_turns]
    if not turns:
        return Behaviour(
            n_turns=0,
            act_entropy=0.0,
            distinct_1=float("nan"),
            distinct_2=float("nan"),
            top_phrasing=None,
            top_share=0.0,
        )
    counts = Counter(t.act or t.text for t in turns)
    p = np.asarray(list(counts.values()), float) / len(turns)
    top, top_n = counts.most_common(1)[0]
    texts = [t.text for t in turns]
    return Behaviour(
        n_turns=len(turns),
        act_entropy=float(-(p * np.log2(p)).sum()) + 0.0,
        distinct_1=distinct_n(texts, 1),
        distinct_2=distinct_n(texts, 2),
        top_phrasing=top,
        top_share=top_n / len(turns),
    )


# -------------------------------------------------------------------------------- robustness


class Robustness(Frozen):
    n_members: int
    member_std: float
    """Standard deviation of held-out gold success across members (MUST reports it)."""
    worst_decile_gold: float
    """Mean gold success of the worst 10% of held-out members (at least one member)."""
    worst_members: list[str]
    pass_k: dict[int, float]
    """k -> pass^k: mean over profiles of C(c, k) / C(n, k) for c successes in n trials."""
    trials_per_profile: int


def pass_hat_k(trials: Sequence[tuple[int, int]], k: int) -> float:
    """tau-bench's pass^k from (n trials, c successes) per task; tasks with n < k are skipped."""
    usable = [(n, c) for n, c in trials if n >= k]
    if not usable:
        return float("nan")
    return float(np.mean([math.comb(c, k) / math.comb(n, k) for n, c in usable]))


def robustness(episodes: Sequence[Episode], ks: Sequence[int] = (1, 2, 4, 8)) -> Robustness:
    """Over held-out evaluation episodes. A profile's trials are the episodes with its seed (the
    same hidden profile), one per held-out member (and per training run, when pooled)."""
    held = [e for e in episodes if e.split == "heldout"]
    members: dict[str, list[float]] = defaultdict(list)
    profiles: dict[int, list[bool]] = defaultdict(list)
    for e in held:
        members[e.simulator_id].append(float(e.gold.success))
        profiles[e.seed].append(e.gold.success)
    golds = sorted((float(np.mean(v)), m) for m, v in members.items())
    worst = golds[: max(1, math.ceil(0.1 * len(golds)))] if golds else []
    trials = [(len(v), sum(v)) for v in profiles.values()]
    n_min = min((n for n, _ in trials), default=0)
    return Robustness(
        n_members=len(golds),
        member_std=float(np.std([g for g, _ in golds])) if golds else float("nan"),
        worst_decile_gold=float(np.mean([g for g, _ in worst])) if worst else float("nan"),
        worst_members=[m for _, m in worst],
        pass_k={k: pass_hat_k(trials, k) for k in ks if k <= n_min},
        trials_per_profile=n_min,
    )

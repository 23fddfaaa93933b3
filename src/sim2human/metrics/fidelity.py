"""How far a simulator family's user turns are from human speech: pure functions of texts.

Every number compares a family's turns with a human reference (held-out ACI-Bench patient
turns). The reference row, two disjoint halves of the human turns compared with each other, says
what "as human as humans" looks like for each number at that sample size.

- ``length_w1``: Wasserstein-1 distance between the turn-length distributions (words).
- ``mattr``: moving-average type-token ratio (window ``MATTR_WINDOW`` tokens): lexical diversity.
- ``disfluency``: fillers (uh, um ...) and immediate word repetitions per 100 words.
- ``hedge``: share of turns with a hedge (I think, maybe, not sure ...).
- ``answer`` / ``ask`` / ``wander``: share of turns that give a field value the scenario's
  extractor reads (or a plain yes/no), that ask something back, or that do neither.
- ``frechet``: Fréchet distance between Gaussians fitted to the two sets' sentence embeddings.
- ``auc``: distinguishability. An L2-regularised logistic regression on the embeddings tells the
  family's turns from human ones, scored on held-out folds; 0.5 = indistinguishable, 1 = always
  told apart. Written with numpy (Newton steps on at most a few hundred rows x 384 dimensions
  take milliseconds) rather than adding scikit-learn to the core dependencies for one model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Final

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from sim2human.metrics.tokens import tokenize

Matrix = npt.NDArray[np.float64]
MATTR_WINDOW: Final = 50
PCA_DIMS: Final = 32
FILLERS: Final = frozenset({"uh", "um", "umm", "uhm", "er", "erm", "hmm", "mm", "ah"})
HEDGES: Final = re.compile(
    r"\b(i think|i guess|i suppose|i believe|maybe|probably|perhaps|not sure|i don't know|"
    r"kind of|sort of|kinda|i'd say|i would say|roughly|about|around|a little|a bit|i mean)\b"
)
_YES_NO: Final = re.compile(r"^\W*(yes|yeah|yep|no|nope|nah|correct|right)\b")


class FidelityRow(BaseModel):
    """One family against the human reference (``auc``/``frechet`` None when too few turns)."""

    family: str
    n_turns: int
    mean_words: float
    length_w1: float
    mattr: float
    disfluency: float
    hedge: float
    answer: float
    ask: float
    wander: float
    frechet: float | None
    auc: float | None


def wasserstein_1d(a: Sequence[float], b: Sequence[float]) -> float:
    """W1 between two empirical distributions: the area between their quantile functions."""
    if not len(a) or not len(b):
        return float("nan")
    qs = np.linspace(0.0, 1.0, 2 * max(len(a), len(b)) + 1)
    qa, qb = np.quantile(np.asarray(a, float), qs), np.quantile(np.asarray(b, float), qs)
    return float(np.trapezoid(np.abs(qa - qb), qs))


def mattr(texts: Sequence[str], window: int = MATTR_WINDOW) -> float:
    """Mean type-token ratio over every ``window``-token stretch of the texts run together."""
    tokens = [t for text in texts for t in tokenize(text)]
    if not tokens:
        return float("nan")
    if len(tokens) <= window:
        return len(set(tokens)) / len(tokens)
    counts: dict[str, int] = {}
    for t in tokens[:window]:
        counts[t] = counts.get(t, 0) + 1
    ratios = [len(counts) / window]
    for out, new in zip(tokens, tokens[window:], strict=False):
        counts[out] -= 1
        if not counts[out]:
            del counts[out]
        counts[new] = counts.get(new, 0) + 1
        ratios.append(len(counts) / window)
    return float(np.mean(ratios))


def disfluency_rate(texts: Sequence[str]) -> float:
    """Fillers plus immediate repetitions ("i, i went") per 100 words."""
    events = words = 0
    for text in texts:
        toks = tokenize(text)
        words += len(toks)
        events += sum(t in FILLERS for t in toks)
        events += sum(a == b and a not in FILLERS for a, b in pairwise(toks))
    return 100 * events / words if words else float("nan")


def hedge_rate(texts: Sequence[str]) -> float:
    return float(np.mean([bool(HEDGES.search(t.lower())) for t in texts])) if texts else 0.0


def act_shares(texts: Sequence[str], reads_value: Callable[[str], bool]) -> dict[str, float]:
    """Shares of turns that answer (a value is read, or a yes/no), ask back, or wander."""
    if not texts:
        return {"answer": float("nan"), "ask": float("nan"), "wander": float("nan")}
    kinds = [
        "answer" if reads_value(t) or _YES_NO.match(t.lower()) else "ask" if "?" in t else "wander"
        for t in texts
    ]
    return {k: kinds.count(k) / len(kinds) for k in ("answer", "ask", "wander")}


def frechet_distance(x: Matrix, y: Matrix) -> float:
    """||mu_x - mu_y||^2 + Tr(Sx) + Tr(Sy) - 2 Tr((Sx^1/2 Sy Sx^1/2)^1/2).

    The cross term is the nuclear norm of the centred ``Xc Yc^T`` over sqrt((nx-1)(ny-1)): the
    nonzero eigenvalues of ``Sx Sy`` are the squared singular values of that small nx-by-ny
    matrix, so a table of a few hundred turns never solves a dimension-by-dimension problem
    (a 2048-dimensional lexical embedding took 2.4 s per eigensolve); with fewer dimensions
    than turns, the dimension-sized solve is the smaller one.
    """
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    nx, ny = len(x) - 1, len(y) - 1
    mean_gap = float(((x.mean(axis=0) - y.mean(axis=0)) ** 2).sum())
    traces = float((xc**2).sum()) / nx + float((yc**2).sum()) / ny
    if x.shape[1] < min(len(x), len(y)):  # few features: the textbook dimension-sized solve
        w, v = np.linalg.eigh(xc.T @ xc / nx)
        root = (v * np.sqrt(np.clip(w, 0.0, None))) @ v.T
        cross = np.sqrt(np.clip(np.linalg.eigvalsh(root @ (yc.T @ yc / ny) @ root), 0, None)).sum()
    else:
        cross = np.linalg.svd(xc @ yc.T, compute_uv=False).sum() / np.sqrt(nx * ny)
    return float(max(0.0, mean_gap + traces - 2 * cross))


def principal_scores(data: Matrix, k: int) -> Matrix:
    """The rows of centred ``data`` on its top ``k`` principal axes, from the rows' Gram matrix
    (rows x rows: small here, where the features are many), through a symmetric eigensolve:
    robust where an SVD of repeated rows is not."""
    w, u = np.linalg.eigh(data @ data.T)
    top = np.argsort(w)[::-1][:k]
    scores: Matrix = u[:, top] * np.sqrt(np.clip(w[top], 0.0, None))
    return scores


def _fit_logistic(x: Matrix, y: npt.NDArray[np.float64], l2: float, steps: int = 25) -> Matrix:
    """Newton's method on the L2-penalised log-loss (bias unpenalised)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    penalty = np.full(xb.shape[1], l2)
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ w, -30, 30)))
        grad = xb.T @ (p - y) + penalty * w
        hess = (xb.T * (p * (1 - p))) @ xb + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w


def auc_score(scores: npt.NDArray[np.float64], labels: npt.NDArray[np.float64]) -> float:
    """Area under the ROC curve by the rank-sum (Mann-Whitney) formula, ties counted half."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def distinguishability_auc(
    x: Matrix, human: Matrix, folds: int = 5, l2: float = 1.0, seed: int = 0
) -> float:
    """Held-out-fold AUC of a logistic regression telling ``x`` rows from ``human`` rows.

    Both sets are cut to the same size first (a classifier must not win by the base rate); each
    row is scored by a model that never saw it. The rows are first projected on the pooled data's
    top ``PCA_DIMS`` principal components (label-free, so nothing about the held-out labels
    leaks): a 100-fold cheaper fit that over-fits less. Needs at least ``folds`` rows per side.
    """
    scored = distinguishability_scores(x, human, folds, l2, seed)
    return float("nan") if scored is None else auc_score(*scored)


def distinguishability_scores(
    x: Matrix, human: Matrix, folds: int = 5, l2: float = 1.0, seed: int = 0
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None:
    """The held-out-fold scores behind ``distinguishability_auc`` and their labels (1: ``x``),
    or None with fewer than ``folds`` rows a side."""
    rng = np.random.default_rng(seed)
    n = min(len(x), len(human))
    if n < folds:
        return None
    xs = x[rng.permutation(len(x))[:n]]
    hs = human[rng.permutation(len(human))[:n]]
    data = np.vstack([xs, hs])
    # Copies of one row (the same text on both sides) share a fold: a model that saw a copy with
    # the other label would score its twin below chance, and identical sets would read AUC << 0.5.
    _, group = np.unique(data.round(9), axis=0, return_inverse=True)
    fold = rng.permutation(group.max() + 1)[group.ravel()] % folds
    data = principal_scores(data - data.mean(axis=0), PCA_DIMS)
    labels = np.concatenate([np.ones(n), np.zeros(n)])
    scores = np.zeros(2 * n)
    for k in range(folds):
        test = fold == k
        w = _fit_logistic(data[~test], labels[~test], l2)
        scores[test] = data[test] @ w[:-1] + w[-1]
    return scores, labels


def auc_interval(
    scores: npt.NDArray[np.float64],
    labels: npt.NDArray[np.float64],
    rng: np.random.Generator,
    n_boot: int = 1000,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``auc_score``, resampling each label's rows (turns)."""
    pos, neg = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    draws = []
    for _ in range(n_boot):
        idx = np.concatenate([rng.choice(pos, len(pos)), rng.choice(neg, len(neg))])
        draws.append(auc_score(scores[idx], labels[idx]))
    lo, hi = np.quantile(draws, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def fidelity_row(
    family: str,
    texts: Sequence[str],
    human: Sequence[str],
    emb: Matrix | None,
    human_emb: Matrix | None,
    reads_value: Callable[[str], bool],
    seed: int = 0,
) -> FidelityRow:
    """Every number for one family (``emb``: its turns' embeddings, in ``texts`` order)."""
    lengths = [len(tokenize(t)) for t in texts]
    enough = emb is not None and human_emb is not None and min(len(emb), len(human_emb)) >= 10
    return FidelityRow(
        family=family,
        n_turns=len(texts),
        mean_words=float(np.mean(lengths)) if lengths else float("nan"),
        length_w1=wasserstein_1d(lengths, [len(tokenize(t)) for t in human]),
        mattr=mattr(texts),
        disfluency=disfluency_rate(texts),
        hedge=hedge_rate(texts),
        **act_shares(texts, reads_value),
        frechet=frechet_distance(emb, human_emb) if enough else None,  # type: ignore[arg-type]
        auc=distinguishability_auc(emb, human_emb, seed=seed) if enough else None,  # type: ignore[arg-type]
    )

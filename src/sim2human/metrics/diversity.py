"""How varied a simulator's (or an ensemble's) user turns are.

A single frozen simulator says the same few things; an optimiser learns those few things. These
metrics put a number on that, over a list of texts (the user turns of one simulator, or of all the
members of an ensemble pooled together):

- ``distinct_n``: unique n-grams / total n-grams (Li et al. 2016), lexical, in [0, 1].
- ``self_bleu``: mean smoothed sentence BLEU of each text against other texts of the same set
  (Zhu et al. 2018); high means repetitive. Each hypothesis is scored against a FIXED number
  ``n_refs`` of references sampled from the other texts, because BLEU against multiple references
  takes the best match per n-gram, so self-BLEU against "all the others" rises with the number of
  texts and two simulators with different turn counts could not be compared.
- ``vendi_score``: the Vendi score (Friedman & Dieng 2022), the exponential of the Shannon entropy
  of the eigenvalues of ``K / n`` where ``K`` is the cosine-similarity kernel of the embeddings;
  read it as the effective number of distinct texts, in [1, n]. Semantic when the embeddings come
  from MiniLM, lexical with the fallback embedder (see ``embeddings``).

All three use ``tokens.tokenize`` (lowercase, punctuation stripped, whitespace split).

Sentence BLEU is written here (about 30 lines) rather than taken from ``sacrebleu``: sacrebleu
would add lxml, portalocker, tabulate and colorama to the core dependencies, re-tokenise every
reference on every call, and impose its own tokeniser where every metric here must share one.
``_sentence_bleu`` reproduces ``sacrebleu.sentence_bleu`` (exp smoothing, effective order,
closest reference length, ties to the shorter) on pre-tokenised text; the tests pin that with
values computed by sacrebleu 2.6.0 (``tokenize="none"``), on a 0-1 scale instead of 0-100.

Ensembles: pool the members' texts (ideally the same number of turns per member) and call
``diversity_summary`` on the pool, or use ``ensemble_diversity``. When the members differ, the
ensemble's Vendi score should exceed every member's: that is what "a diverse ensemble" means and
it is worth checking for a new one. It is not a theorem: a member with few very different turns
pooled with a large repetitive member can score higher alone, since Vendi weights texts equally.
Vendi is the one to read for an ensemble: the lexical ratios barely see differences between
members. distinct-n of a pool of members with disjoint vocabularies is the length-weighted mean of
theirs, and self-BLEU of a pool stays near the mean of the members' as long as each hypothesis
draws at least one reference from its own member (it takes the best match over references).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from sim2human.errors import UsageError
from sim2human.metrics.embeddings import EmbedFn, embed
from sim2human.metrics.tokens import ngrams, tokenize
from sim2human.types import Frozen

__all__ = [
    "DEFAULT_N_REFS",
    "DiversitySummary",
    "distinct_n",
    "diversity_summary",
    "ensemble_diversity",
    "self_bleu",
    "vendi_score",
]

DEFAULT_N_REFS = 10
"""References per hypothesis in self-BLEU; a set needs at least ``n_refs + 1`` texts."""

Seed = int | np.random.Generator


def _check_texts(texts: Sequence[str], what: str) -> None:
    if isinstance(texts, str):
        raise UsageError(f"{what} takes a sequence of texts, not one string")
    if len(texts) == 0:
        raise UsageError(f"{what} needs at least one text, got none")


def distinct_n(texts: Sequence[str], n: int) -> float:
    """Unique ``n``-grams / total ``n``-grams over all ``texts`` (n-grams never cross texts).

    NaN when no text has ``n`` tokens (the ratio is undefined, and 0 or 1 would both be a claim).
    Each distinct text is tokenised once: an agent's turns repeat a few phrasings thousands of
    times.
    """
    _check_texts(texts, "distinct_n")
    if n < 1:
        raise UsageError(f"distinct_n needs n >= 1, got {n}")
    seen: set[tuple[str, ...]] = set()
    total = 0
    for text, times in Counter(texts).items():
        grams = list(ngrams(tokenize(text), n))
        total += times * len(grams)
        seen.update(grams)
    return len(seen) / total if total else math.nan


# -------------------------------------------------------------------------------- self-BLEU

_Stats = tuple[list[Counter[tuple[str, ...]]], int]  # n-gram counts per order, length in tokens


def _stats(text: str, max_n: int) -> _Stats:
    tokens = tokenize(text)
    return [Counter(ngrams(tokens, n)) for n in range(1, max_n + 1)], len(tokens)


def _sentence_bleu(hyp: _Stats, refs: Sequence[_Stats], max_n: int) -> float:
    """sacrebleu's sentence BLEU (exp smoothing, effective order) in [0, 1]."""
    hyp_counts, hyp_len = hyp
    correct = [0] * max_n
    total = [max(0, hyp_len - n) for n in range(max_n)]
    for n in range(max_n):
        for gram, count in hyp_counts[n].items():
            correct[n] += min(count, max(ref[0][n].get(gram, 0) for ref in refs))
    if not any(correct):
        return 0.0
    ref_len = min((abs(hyp_len - length), length) for _, length in refs)[1]
    log_sum, order, smooth = 0.0, 0, 1.0
    for n in range(max_n):
        if total[n] == 0:
            break
        order = n + 1
        if correct[n] == 0:
            smooth *= 2
            log_sum += math.log(1.0 / (smooth * total[n]))
        else:
            log_sum += math.log(correct[n] / total[n])
    brevity = 1.0 if hyp_len >= ref_len else math.exp(1 - ref_len / hyp_len)
    return brevity * math.exp(log_sum / order)


def self_bleu(
    texts: Sequence[str],
    n_refs: int = DEFAULT_N_REFS,
    seed: Seed = 0,
    max_n: int = 4,
) -> float:
    """Mean sentence BLEU of each text against ``n_refs`` others drawn without replacement.

    Every text is a hypothesis once. Its references are a uniform sample of exactly ``n_refs`` of
    the other texts (by position, so duplicates of it elsewhere in the list do count), drawn from
    ``seed`` (an int or a ``numpy.random.Generator``). Needs ``len(texts) > n_refs``. Near 1 for a
    simulator that repeats itself, near 0 for one whose turns share no words.
    """
    _check_texts(texts, "self_bleu")
    if n_refs < 1 or max_n < 1:
        raise UsageError(f"self_bleu needs n_refs >= 1 and max_n >= 1, got {n_refs}, {max_n}")
    if len(texts) <= n_refs:
        raise UsageError(
            f"self_bleu with n_refs={n_refs} needs at least {n_refs + 1} texts, got {len(texts)}; "
            "pass a smaller n_refs (and use the same one for every simulator you compare)"
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    stats = [_stats(text, max_n) for text in texts]
    scores = []
    for i, hyp in enumerate(stats):
        picks = rng.choice(len(texts) - 1, size=n_refs, replace=False)
        refs = [stats[j + (j >= i)] for j in picks]  # index i itself is skipped
        scores.append(_sentence_bleu(hyp, refs, max_n))
    return float(np.mean(scores))


# ------------------------------------------------------------------------------------ Vendi


def vendi_score(embeddings: npt.ArrayLike) -> float:
    """Vendi score of the rows of ``embeddings``: exp(entropy of the eigenvalues of K / n).

    ``K`` is the cosine-similarity kernel (rows are L2-normalised here). Equals 1 for n identical
    rows and n for n orthogonal ones. Computed from the smaller of the n x n and d x d Gram
    matrices, which share their non-zero eigenvalues, so it scales to many texts.
    """
    x = np.asarray(embeddings, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] == 0:
        raise UsageError(f"vendi_score needs a non-empty 2-d matrix, got shape {x.shape}")
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    if not np.all(np.isfinite(norms)) or np.any(norms == 0):
        raise UsageError("vendi_score needs finite, non-zero embedding rows")
    x = x / norms
    n, d = x.shape
    gram = x @ x.T if n <= d else x.T @ x
    eigenvalues = np.linalg.eigvalsh(gram / n)
    p = eigenvalues[eigenvalues > 1e-12]
    p = p / p.sum()
    return float(min(float(n), max(1.0, math.exp(-float(np.sum(p * np.log(p)))))))


# ---------------------------------------------------------------------------------- summary


class DiversitySummary(Frozen):
    """The diversity of one simulator's (or one pooled ensemble's) texts."""

    n_texts: int
    distinct_1: float
    distinct_2: float
    self_bleu: float
    self_bleu_refs: int
    """References per hypothesis: compare self-BLEU only between summaries with the same value."""
    vendi: float
    embedder: str
    """Which embedder the Vendi score used (e.g. ``all-MiniLM-L6-v2`` or the lexical fallback)."""


def _summary(
    texts: Sequence[str], vectors: npt.NDArray[np.float64], embedder: str, n_refs: int, seed: Seed
) -> DiversitySummary:
    return DiversitySummary(
        n_texts=len(texts),
        distinct_1=distinct_n(texts, 1),
        distinct_2=distinct_n(texts, 2),
        self_bleu=self_bleu(texts, n_refs=n_refs, seed=seed),
        self_bleu_refs=n_refs,
        vendi=vendi_score(vectors),
        embedder=embedder,
    )


def _embed(texts: Sequence[str], embed_fn: EmbedFn | None) -> tuple[npt.NDArray[np.float64], str]:
    vectors, name = (embed_fn or embed)(texts)
    if len(vectors) != len(texts):
        raise UsageError(f"embed_fn returned {len(vectors)} rows for {len(texts)} texts")
    return vectors, name


def diversity_summary(
    texts: Sequence[str],
    *,
    embed_fn: EmbedFn | None = None,
    n_refs: int = DEFAULT_N_REFS,
    seed: Seed = 0,
) -> DiversitySummary:
    """All the diversity metrics of ``texts``: one simulator's user turns, or an ensemble's pool.

    ``embed_fn`` defaults to ``embeddings.embed`` (MiniLM when installed, else the lexical
    fallback; the summary names which). ``seed`` drives the self-BLEU reference sampling.
    """
    _check_texts(texts, "diversity_summary")
    vectors, name = _embed(texts, embed_fn)
    return _summary(texts, vectors, name, n_refs, seed)


def ensemble_diversity(
    members: Mapping[str, Sequence[str]],
    *,
    embed_fn: EmbedFn | None = None,
    n_refs: int = DEFAULT_N_REFS,
    seed: int = 0,
) -> dict[str, DiversitySummary]:
    """One summary per member plus ``"ensemble"`` for all members' texts pooled.

    Texts are embedded once. Give members the same number of texts: the pooled scores weight
    every text equally, so a member with more turns dominates them.
    """
    if not members:
        raise UsageError("ensemble_diversity needs at least one member")
    if "ensemble" in members:
        raise UsageError("'ensemble' is reserved for the pooled summary; rename that member")
    pooled = [text for texts in members.values() for text in texts]
    _check_texts(pooled, "ensemble_diversity")
    vectors, name = _embed(pooled, embed_fn)
    seeds = np.random.SeedSequence(seed).spawn(len(members) + 1)
    out: dict[str, DiversitySummary] = {}
    start = 0
    for (member, texts), member_seed in zip(members.items(), seeds, strict=False):
        _check_texts(texts, f"ensemble_diversity (member {member!r})")
        rows = vectors[start : start + len(texts)]
        out[member] = _summary(texts, rows, name, n_refs, np.random.default_rng(member_seed))
        start += len(texts)
    out["ensemble"] = _summary(pooled, vectors, name, n_refs, np.random.default_rng(seeds[-1]))
    return out

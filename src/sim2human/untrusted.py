"""What a text or a count from outside the process becomes before it is stored or shown.

An endpoint's answer is untrusted data, and a valid-looking JSON body can still hold what no
store of ours takes: the escape ``"\\ud800"`` (a lone surrogate: a server that cut an emoji's
UTF-16 pair in two) decodes to a Python ``str`` that UTF-8 cannot encode, so the LLM cache, the
episode log and the call page's database each failed on it (``UnicodeEncodeError``), and a
``usage`` of ``10**30`` overflowed SQLite's INTEGER (``OverflowError``) while a negative one was
summed as it was. One policy, applied once where such a text enters (``llm.responses``, the
parse of every completion, embedded model included) and again by the call page's store as its
last guard, so the cache, the episodes, the web page and the logs all see the same valid text:

- a lone surrogate becomes U+FFFD (the replacement character), as a decoder with
  ``errors="replace"`` would have made of the bytes; two that make a pair (a ``str`` built
  without JSON's joining) become the one character they encode; a NUL becomes U+FFFD too
  (SQLite's ``substr`` and ``length`` end a text at its first NUL, so the cache gave back
  ``"a"`` for ``"a\\x00b"``: a cached answer that differs from the fresh one); every other
  character is kept;
- a count is clamped to ``[0, MAX_COUNT)``: below zero is 0 (no endpoint uses fewer than no
  tokens), at or above ``MAX_COUNT`` is ``MAX_COUNT - 1``.
"""

from __future__ import annotations

import re

MAX_COUNT = 2**31
"""Counts are kept below this: a signed 32-bit integer, which every store and sum holds."""

_UNFIT = re.compile("[\x00\ud800-\udfff]")
"""A NUL or any surrogate code point (none can be encoded as UTF-8, paired or not)."""


def valid_text(text: str) -> str:
    """``text`` with every lone surrogate and NUL replaced by U+FFFD and each surrogate pair
    joined; the same object when it has none (the common case costs one regex scan)."""
    if _UNFIT.search(text) is None:
        return text
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return joined.replace("\x00", "\ufffd")


def bounded_count(value: int) -> int:
    """``value`` clamped to ``[0, MAX_COUNT)``."""
    return min(max(int(value), 0), MAX_COUNT - 1)

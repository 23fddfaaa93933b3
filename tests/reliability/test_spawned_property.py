"""One property run through the study's own spawned workers (``executors.in_processes``, the
``multiprocessing`` spawn context a study's sub-runs run in): endpoint bodies with surrogates,
NULs and counts far outside any machine integer, parsed, cached and stored in the worker, come
back to the parent valid. The in-process property (``test_endpoint_text_property``) cannot show
that a worker's own imports and pickling keep the policy; a crash there was a dead sub-run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from endpoint_worker import complete
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim2human.experiments.executors.pool import in_processes
from sim2human.testing import completion
from sim2human.types import Turn

MAX_COUNT = 2**31  # sim2human.untrusted.MAX_COUNT (spelled here so the test runs on older code)

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, exclude_categories=())
texts = st.text(st.one_of(st.characters(), surrogates, st.just("\x00")), min_size=1, max_size=30)
counts = st.integers(-(2**70), 2**70)
bodies = st.lists(st.tuples(texts, counts, counts), min_size=1, max_size=4)


@settings(
    max_examples=4,  # each example spawns a worker (about two seconds)
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=bodies)
def test_bodies_played_in_a_spawned_worker_come_back_valid(
    tmp_path_factory: pytest.TempPathFactory, drawn: list[tuple[str, int, int]]
) -> None:
    folder: Path = tmp_path_factory.mktemp("spawned")
    calls = [
        (json.dumps(completion(text, p, c)).encode(), str(folder / f"cache-{i}.sqlite"))
        for i, (text, p, c) in enumerate(drawn)
    ]
    results = in_processes(complete, calls, 1)
    assert len(results) == len(drawn)
    for text, prompt, done, line, same in results:
        text.encode("utf-8")
        assert "\x00" not in text and same
        assert 0 <= prompt < MAX_COUNT and 0 <= done < MAX_COUNT
        assert Turn.model_validate_json(line).text == text

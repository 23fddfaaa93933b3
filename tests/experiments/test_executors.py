"""Work in spawned processes: results in call order, and a failing call is raised."""

from __future__ import annotations

import pytest

from sim2human.experiments.executors import in_processes


def test_results_come_back_in_call_order() -> None:
    assert in_processes(pow, [(2, 10), (3, 2), (5, 1)], workers=2) == [1024, 9, 5]


def test_a_failing_call_is_raised() -> None:
    with pytest.raises(ZeroDivisionError):
        in_processes(divmod, [(1, 1), (1, 0)], workers=2)

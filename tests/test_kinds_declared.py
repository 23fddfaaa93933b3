"""Kinds declare themselves: no module outside ``simulators/`` tests a simulator kind's name.

A caller asks the kind (``Kind.needs_endpoint``, ``programmatic``, ``real_words``, ``profile``)
through ``simulators.kinds.needs_endpoint``, ``is_programmatic``, ``speaks_real_words`` ... so a new
kind is one row of ``KINDS`` and not a hunt through every package for ``== "replay"``.

Read with ``ast``: a comparison (``==``, ``!=``, ``in``, ``not in``) between something called
``kind`` (``spec.kind``, ``e.kind``, a variable ``kind``) and a kind's name, or a tuple of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sim2human import seeding
from sim2human.scenarios.intake.scenario import IntakeScenario
from sim2human.simulators.base import QuirkPool, SimulatorSpec
from sim2human.simulators.families import get_family
from sim2human.simulators.kinds import (
    KINDS,
    Kind,
    episode_kind,
    is_programmatic,
    member_profile,
    needs_endpoint,
)
from sim2human.types import Episode

SRC = Path(__file__).resolve().parents[1] / "src" / "sim2human"


def _names(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in KINDS else []
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for e in node.elts for n in _names(e)]
    return []


def _is_kind(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "kind") or (
        isinstance(node, ast.Name) and node.id == "kind"
    )


def name_tests(path: Path, root: Path = SRC.parent) -> list[str]:
    """``path:line kind == 'name'`` for each test of a kind's name in the module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        if any(_is_kind(s) for s in sides):
            for name in (n for s in sides for n in _names(s)):
                found.append(f"{path.relative_to(root)}:{node.lineno} kind vs {name!r}")
    return found


def test_no_module_outside_simulators_tests_a_kind_name() -> None:
    outside = [p for p in sorted(SRC.rglob("*.py")) if "simulators" not in p.parts]
    found = [f for p in outside for f in name_tests(p)]
    assert not found, "ask the kind (simulators.kinds.KINDS) instead:\n" + "\n".join(found)


def test_the_rule_sees_a_name_test(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        'def f(e, kind):\n    return e.kind == "replay" or kind in ("llm", "x") or e.x == "llm"\n',
        encoding="utf-8",
    )
    assert name_tests(tmp_path / "m.py", tmp_path) == [
        "m.py:2 kind vs 'replay'",
        "m.py:2 kind vs 'llm'",
    ]


def _episode(kind: str) -> Episode:
    return Episode.model_construct(kind=kind)  # only the kind is read


def _persona() -> SimulatorSpec:
    return get_family("cooperative").sample(0, QuirkPool.from_acts(IntakeScenario().acts))


def test_each_kind_answers_the_four_questions() -> None:
    by = {name: k for name, k in KINDS.items()}
    assert [n for n, k in by.items() if k.needs_endpoint] == ["llm"]
    assert [n for n, k in by.items() if k.programmatic] == ["persona", "restyled"]
    assert [n for n, k in by.items() if k.real_words] == ["replay"]
    assert sorted(n for n, k in by.items() if k.fixed_profiles) == ["human-replay", "replay"]
    persona = _persona()
    assert is_programmatic(persona) and not needs_endpoint(persona)
    assert needs_endpoint(persona.model_copy(update={"kind": "llm"}))


def test_an_unknown_stored_kind_reads_as_a_plain_kind() -> None:
    assert episode_kind(_episode("from-the-future")) == Kind()
    assert episode_kind(_episode("replay")).real_words


@pytest.mark.parametrize("seed", [0, 7])
def test_a_persona_member_draws_its_profile_from_the_episode_seed(seed: int) -> None:
    scenario = IntakeScenario()
    spec = _persona()
    drawn = scenario.sample_profile(seeding.stream(seed, "profile"))
    assert member_profile(spec, scenario, seed) == drawn

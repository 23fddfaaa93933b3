"""The run directory's names are spelled once, in ``store.layout``: a module that writes
``"summary.json"`` (or joins ``/ "conditions"``) itself fails here, so a reader and the writer
cannot drift apart.

Read with ``ast``: a file name anywhere in a string (a literal, an f-string's text) counts, and a
folder name counts where it is joined onto a path (``path / "conditions"``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from sim2human.store import layout
from sim2human.store.layout import RunLayout, sub_run_relative

SRC = Path(__file__).resolve().parents[1] / "src" / "sim2human"
HOME = SRC / "store" / "layout.py"


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.Constant)]
    return []


def _names_a_file(text: str) -> bool:
    return any(text == f or text.endswith("/" + f) for f in layout.FILES)


def spelled(path: Path, root: Path = SRC.parent) -> list[str]:
    """``path:line 'name'`` for each run-directory name the module spells itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and n.body
        and isinstance(n.body[0], ast.Expr)
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in docs:
            continue  # a docstring may name the files it is about
        names = [s for s in _strings(node) if _names_a_file(s)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            names += [s for s in _strings(node.right) if s in layout.FOLDERS]
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Path" and node.args:
            names += [s for s in _strings(node.args[0]) if s in layout.FOLDERS]
        found += [f"{path.relative_to(root)}:{node.lineno} {s!r}" for s in names]  # type: ignore[attr-defined]
    return sorted(set(found))


def test_no_module_but_the_layout_spells_a_run_directory_name() -> None:
    found = [f for p in sorted(SRC.rglob("*.py")) if p != HOME for f in spelled(p)]
    assert not found, "take these from sim2human.store.layout:\n" + "\n".join(found)


def test_the_rule_sees_a_spelled_name(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        '"""Reads summary.json."""\n'
        "def f(run, c):\n"
        '    """From ``summary.json``."""\n'
        '    return run / "conditions" / c / "summary.json", f"{c}/study.json", "conditions"\n'
        '    return Path("reference") / c\n',
        encoding="utf-8",
    )
    assert spelled(tmp_path / "m.py", tmp_path) == [
        "m.py:4 '/study.json'",
        "m.py:4 'conditions'",
        "m.py:4 'summary.json'",
        "m.py:5 'reference'",
    ]


def test_the_layout_builds_the_paths_the_runs_have() -> None:
    run = RunLayout(Path("/r"))
    assert run.sub_run("ppo", 2) == Path("/r/conditions/ppo/seed-2")
    assert sub_run_relative("ppo", 2) == Path("conditions/ppo/seed-2")
    assert run.reference("intake") == Path("/r/reference/intake")
    assert run.diagnosis() == Path("/r/diagnosis.json")
    assert run.diagnosis("ppo") == Path("/r/diagnosis.ppo.json")
    assert layout.report_stem("ppo") == "report.ppo"
    assert len(set(layout.FILES)) == len(layout.FILES)

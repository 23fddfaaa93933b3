"""The house's size rules (ARCHITECTURE.md, "Sizes"): one concept per module, and a module over
400 lines says why in a ``# long module: <why>`` comment; no function over 60 lines unless a
``# long: <why>`` comment on the line above its ``def`` says why.

Both measures count every line from the first to the last (signature, docstring and blank lines
included), as a reader meets them.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "sim2human"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def long_functions(path: Path, root: Path = SRC.parent) -> list[str]:
    """``path:line name (n lines)`` for each function over the limit without a written reason."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        n = (node.end_lineno or node.lineno) - node.lineno + 1
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        above = lines[first - 2].strip() if first >= 2 else ""
        if n > MAX_FUNCTION_LINES and not above.startswith("# long:"):
            found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({n} lines)")
    return found


def long_module(path: Path, root: Path = SRC.parent) -> str | None:
    """``path (n lines)`` when the module is over the limit without a written reason."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if len(lines) <= MAX_MODULE_LINES or any(ln.startswith("# long module:") for ln in lines):
        return None
    return f"{path.relative_to(root)} ({len(lines)} lines)"


def test_no_module_is_over_400_lines_without_a_reason() -> None:
    big = [m for p in sorted(SRC.rglob("*.py")) if (m := long_module(p)) is not None]
    assert not big, "split these where a concept splits, or say why (# long module: ...):\n" + (
        "\n".join(big)
    )


def test_the_rule_sees_a_long_module_and_its_reason(tmp_path: Path) -> None:
    body = "\n".join(f"x{i} = {i}" for i in range(401))
    (tmp_path / "m.py").write_text(body + "\n", encoding="utf-8")
    assert long_module(tmp_path / "m.py", tmp_path) == "m.py (401 lines)"
    (tmp_path / "m.py").write_text("# long module: one table\n" + body + "\n", encoding="utf-8")
    assert long_module(tmp_path / "m.py", tmp_path) is None


def test_no_function_is_over_60_lines_without_a_reason() -> None:
    long = [f for p in sorted(SRC.rglob("*.py")) for f in long_functions(p)]
    assert not long, "split these, or say why above the def (# long: ...):\n" + "\n".join(long)


def test_the_rule_sees_a_long_function_and_its_reason(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(61))
    (tmp_path / "m.py").write_text(f"def f() -> None:\n{body}\n", encoding="utf-8")
    assert long_functions(tmp_path / "m.py", tmp_path) == ["m.py:1 f (62 lines)"]
    (tmp_path / "m.py").write_text(f"# long: a table\ndef f() -> None:\n{body}\n")
    assert long_functions(tmp_path / "m.py", tmp_path) == []

"""ARCHITECTURE.md's table of floors is the layer test's table: a package moved to another floor,
added or removed in one place and not the other fails here."""

from __future__ import annotations

import re
from pathlib import Path

from test_layers import LAYERS

PAGE = Path(__file__).resolve().parents[1] / "ARCHITECTURE.md"
ROW = re.compile(r"^\| (\d+) \| `([\w.]+)` \|", re.MULTILINE)


def floors(text: str) -> dict[str, int]:
    return {name: int(level) for level, name in ROW.findall(text)}


def test_the_page_lists_every_floor_of_the_layer_test() -> None:
    page = floors(PAGE.read_text(encoding="utf-8"))
    missing = sorted(set(LAYERS) - set(page))
    extra = sorted(set(page) - set(LAYERS))
    moved = sorted(
        f"{m}: page L{page[m]}, test L{LAYERS[m]}"
        for m in page.keys() & LAYERS.keys()
        if page[m] != LAYERS[m]
    )
    assert not (missing or extra or moved), f"missing {missing}, extra {extra}, moved {moved}"


def test_the_comparison_can_fail() -> None:
    assert floors("| 3 | `sim2human.x` | y |\n| 0 | `sim2human` | z |") == {
        "sim2human.x": 3,
        "sim2human": 0,
    }

"""``scenario check`` on any edit of a scenario file: one line and exit 2, or the checks' verdict
(0 or 1), never a traceback. The strategy starts from the skeleton that ``scenario new`` writes
(a file that passes) and edits it: a key set to any YAML value (huge and non-finite numbers,
long strings, nesting, surrogate escapes), a key removed, or the text cut, tabbed or spliced.
The audit's 29 hand-written bad files were the only test of this surface before.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim2human.cli.app import main

SKELETON = resources.files("sim2human.scenarios").joinpath("skeleton")
BASE: dict[str, Any] = yaml.safe_load(SKELETON.joinpath("scenario.yaml").read_text("utf-8"))

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=20)
    | st.sampled_from(["{v}", "{secret}", "{v.__class__}", "2027-02-30", "\\ud800", "a" * 5000]),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=3)
    ),
    max_leaves=8,
)


def paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path into ``doc`` (mapping keys and list indices)."""
    out = [prefix] if prefix else []
    items = (
        doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else []
    )
    for key, value in items:
        out += paths(value, (*prefix, key))
    return out


PATHS = paths(BASE)


def edited(doc: Any, path: tuple[Any, ...], value: Any, remove: bool) -> Any:
    """A copy of ``doc`` with ``path`` set to ``value`` (or removed)."""
    if not path:
        return value
    head, *rest = path
    copy = dict(doc) if isinstance(doc, dict) else list(doc)
    if remove and not rest:
        del copy[head]
        return copy
    copy[head] = edited(copy[head], tuple(rest), value, remove)
    return copy


@st.composite
def scenario_texts(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["set", "set", "remove", "cut", "tab", "splice"]))
    text = SKELETON.joinpath("scenario.yaml").read_text("utf-8").replace("__NAME__", "fuzz")
    if kind in ("set", "remove"):
        path = draw(st.sampled_from(PATHS))
        doc = edited(BASE, path, draw(values), kind == "remove")
        return yaml.safe_dump(doc, allow_unicode=False, sort_keys=False).replace("__NAME__", "fuzz")
    at = draw(st.integers(0, len(text)))
    if kind == "cut":
        return text[:at]
    if kind == "tab":
        return text[:at] + "\t" + text[at:]
    return text[:at] + draw(st.text(max_size=40)) + text[at:]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=scenario_texts())
def test_scenario_check_never_tracebacks(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    folder: Path = tmp_path_factory.mktemp("scen")
    (folder / "areas.txt").write_text(SKELETON.joinpath("areas.txt").read_text("utf-8"))
    path = folder / "fuzz.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    capsys.readouterr()
    code = main(["scenario", "check", str(path)])  # an exception here fails the property
    err = capsys.readouterr().err
    assert code in (0, 1, 2), err
    assert "Traceback" not in err
    if code == 2:
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        assert len(errors) == 1, err

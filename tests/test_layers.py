"""The house rule (docs: ARCHITECTURE.md, "The layers"): a module imports only its own layer or
lower ones, and no two modules import each other, however indirectly.

Imports are read with ``ast`` from every file under ``src/sim2human`` (imports inside functions
and under ``TYPE_CHECKING`` count: a dodged import is still a dependency).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# Lowest first. A module's layer is that of the longest dotted prefix listed here.
LAYERS: dict[str, int] = {
    # L0 vocabulary and storage
    "sim2human": 0,  # __init__: the curated public API is the one exception, checked below
    "sim2human.types": 0,
    "sim2human.errors": 0,
    "sim2human.redact": 0,
    "sim2human.untrusted": 0,
    "sim2human.seeding": 0,
    "sim2human.store": 0,  # the storage wing: layout, rundir, lock, loading, calls, collector
    "sim2human.outputs": 0,
    "sim2human.escape": 0,
    "sim2human.examples": 0,
    # L1 leaves
    "sim2human.perturb": 1,
    "sim2human.metrics": 1,
    "sim2human.corpora": 1,
    "sim2human.llm": 1,
    "sim2human.scenarios": 1,
    # L2 who plays the user, who plays the agent
    "sim2human.simulators": 2,
    # A scenario's real people live in its folder but build simulators: its corpus row and
    # replay members (``simulators/replay_corpus.py``) sit at the simulators' layer.
    "sim2human.scenarios.intake.replay": 2,
    "sim2human.scenarios.intake.replay_card": 2,
    "sim2human.scenarios.support.replay": 2,
    "sim2human.scenarios.negotiation.replay": 2,
    "sim2human.agents": 2,
    # L3 populations and who plays next
    "sim2human.population": 3,  # the population wing: ensemble, panel
    "sim2human.samplers": 3,
    # L4 playing conversations
    "sim2human.rollout": 4,
    # L5 training and stress
    "sim2human.train": 5,
    "sim2human.stress": 5,
    "sim2human.testing": 5,
    "sim2human.checks": 5,  # checks.py and testing.py come from main
    # L6 orchestration over run directories. Integrations sit here, not at L5 as first
    # drawn: a population is built from a study's config.
    "sim2human.experiments": 6,
    # Intake's grounding tools fit families to its corpus by running studies: in its folder,
    # at this layer.
    "sim2human.scenarios.intake.grounding": 6,
    "sim2human.integrations": 6,
    # L7 diagnosis of a run directory
    "sim2human.diagnostics": 7,
    # L8 rendering
    "sim2human.report": 8,
    "sim2human.viewer": 8,  # the run viewer: HTML pages of a run's episodes
    # L9 the command and the web app
    "sim2human.cli": 9,
    "sim2human.__main__": 9,  # python -m sim2human: the command, as sim2human.cli
    "sim2human.webapp": 9,
}


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted((SRC / "sim2human").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def layer(module: str) -> int:
    prefixes = [p for p in LAYERS if module == p or module.startswith(p + ".")]
    assert prefixes, f"{module} has no layer: add it to LAYERS in {__file__}"
    return LAYERS[max(prefixes, key=len)]


def imports(module: str) -> list[tuple[str, int]]:
    """The sim2human modules ``module`` imports, with line numbers (``from pkg import mod``
    resolves to the submodule when ``mod`` is one)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, *([node.module] if node.module else [])])
            for a in node.names:
                sub = f"{base}.{a.name}"
                found.append((sub if sub in MODULES else base, node.lineno))
    return [(m, line) for m, line in found if m == "sim2human" or m.startswith("sim2human.")]


GRAPH = {m: imports(m) for m in MODULES}


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer(module)


def upward_imports(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    return [
        f"{m}:{line} (L{layer(m)}) imports {t} (L{layer(t)})"
        for m, targets in graph.items()
        if m != "sim2human"  # the public API re-exports from every layer
        for t, line in targets
        if layer(t) > layer(m)
    ]


def import_cycles(edges: dict[str, list[str]]) -> list[str]:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []
    found: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        path.append(m)
        for t in edges.get(m, []):
            if state.get(t) == 1:
                found.append(" -> ".join([*path[path.index(t) :], t]))
            elif t not in state:
                visit(t)
        path.pop()
        state[m] = 2

    for m in edges:
        if m not in state:
            visit(m)
    return found


def test_no_upward_import() -> None:
    upward = upward_imports(GRAPH)
    assert not upward, "upward imports:\n" + "\n".join(upward)


def with_packages(module: str, targets: set[str]) -> set[str]:
    """``targets`` and the packages above each that ``module`` is not inside: importing
    ``a.b.c`` from elsewhere runs ``a.b``'s ``__init__`` first, so a package ``__init__`` that
    imports much is an edge of every import from outside into it. (Inside, the ``__init__`` is
    already running and is no new edge.)"""
    out = set(targets)
    for t in targets:
        parts = t.split(".")
        above = {".".join(parts[:k]) for k in range(2, len(parts))}
        out.update(p for p in above if not module.startswith(p + "."))
    return out


def test_no_import_cycle() -> None:
    edges = {
        m: sorted(t for t in with_packages(m, {t for t, _ in ts}) if t in MODULES and t != m)
        for m, ts in GRAPH.items()
    }
    edges["sim2human"] = []  # nothing inside the package imports the public API
    cycles = import_cycles(edges)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_a_package_init_is_an_edge_from_outside_only() -> None:
    corpus = "sim2human.simulators.replay_corpus"
    assert with_packages("sim2human.scenarios.intake.replay", {corpus}) == {
        corpus,
        "sim2human.simulators",
    }
    assert with_packages("sim2human.simulators.replay", {corpus}) == {corpus}


def test_the_checks_can_fail() -> None:
    graph = {
        "sim2human.llm.runtime": [("sim2human.rollout.play", 3)],
        "sim2human.rollout.play": [("sim2human.llm.runtime", 5)],
    }
    assert upward_imports(graph) == [
        "sim2human.llm.runtime:3 (L1) imports sim2human.rollout.play (L4)"
    ]
    cycle = import_cycles({m: [t for t, _ in ts] for m, ts in graph.items()})
    assert cycle == ["sim2human.llm.runtime -> sim2human.rollout.play -> sim2human.llm.runtime"]


def test_reading_a_study_config_imports_no_torch() -> None:
    """A YAML loads, and ``sim2human --help`` answers, without the ~3 s torch import."""
    code = (
        "import sys, sim2human.experiments.study.config, sim2human.train.config, sim2human.cli; "
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


# Within the orchestration layer, the wings of ``sim2human.experiments`` (its __init__ says
# which module is which): the executors run work of any kind, a study runs on them, and the
# research verbs read studies.
WINGS = {
    "sim2human.experiments.executors": 0,
    "sim2human.experiments.study": 1,
    "sim2human.experiments.research": 2,
}


def wing(module: str) -> int | None:
    return next((w for p, w in WINGS.items() if module == p or module.startswith(p + ".")), None)


def test_the_experiments_wings_stand_in_order() -> None:
    upward = [
        f"{m}:{line} imports {t}"
        for m, targets in GRAPH.items()
        if (mine := wing(m)) is not None
        for t, line in targets
        if (theirs := wing(t)) is not None and theirs > mine
    ]
    assert not upward, "a wing imports one above it:\n" + "\n".join(upward)
    assert {p for p in MODULES if p.startswith("sim2human.experiments.")} == {
        m for m in MODULES if wing(m) is not None
    }, "every module of sim2human.experiments lives in a wing"

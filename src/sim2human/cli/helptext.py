"""Help screens: one reflowed paragraph per paragraph, plain backticks, an example per verb.

typer's rich help keeps a docstring's single line breaks after its first paragraph, so a
docstring wrapped at 100 columns reflows mid-sentence in an 80-column terminal; and ``x``
(reStructuredText) shows both backticks. ``document`` rewrites every registered command's and
group's help once, when the app is built, so ``sim2human V --help`` and a test's ``CliRunner``
see the same text. ``EXAMPLES`` holds each verb's example (its epilog) unless its docstring
has one; a verb with neither fails ``tests/cli/test_help.py``.
"""

from __future__ import annotations

import inspect
import re

import typer

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
"""Every command's help flags (click contexts inherit them from the root)."""

EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("sim2human demo", "sim2human study examples/collapse.yaml --quick --out runs/quick"),
    "study": (
        "sim2human study examples/collapse.yaml --quick --out runs/quick",
        "sim2human study my-study.yaml --check",
        "sim2human study my-study.yaml --json --quiet > result.json",
        "sim2human study my-study.yaml --log-to tensorboard  # then: tensorboard --logdir RUN",
    ),
    "demo": ("sim2human demo --out runs/demo",),
    "report": ("sim2human report runs/quick", "sim2human report /archive/run --out /tmp/r"),
    "diagnose": (
        "sim2human diagnose runs/quick --condition frozen --fail-on-collapse",
        "sim2human diagnose runs/quick --json",
    ),
    "stress": (
        "sim2human stress runs/quick --episodes-per-member 1 --no-search",
        "sim2human stress runs/quick --conditions scripted,llm "
        "--llm-base-url http://127.0.0.1:8080/v1 --llm-model my-agent  # an endpoint agent",
    ),
    "eval-agent": (
        "sim2human eval-agent examples/collapse.yaml --base-url http://127.0.0.1:8080/v1 "
        "--model my-agent --episodes 1",
        "sim2human eval-agent examples/support.yaml --base-url http://127.0.0.1:8080/v1 "
        "--model my-agent --sample 20 --label v2 --out runs/v2  # 20 real callers",
    ),
    "fidelity": ("sim2human fidelity runs/quick",),
    "predictivity": ("sim2human predictivity runs/quick --probes 3",),
    "fit-family": ("sim2human fit-family --out my-fitted.yaml --rounds 4 --population 8",),
    "restyle-family": ("sim2human restyle-family --out my-restyled.yaml --candidates 2",),
    "retrieve-family": ("sim2human retrieve-family --out my-retrieved.yaml --per-line 4",),
    "export": ("sim2human export runs/quick --format openai-chat --out sft.jsonl",),
    "check": (
        "sim2human check my_package.agents:make_agent",
        "sim2human check my_package.agents:make_agent --scenario support",
    ),
    "model": ("sim2human model serve --port 8790",),
    "model serve": ("sim2human model serve --port 8790",),
    "model bench": ("sim2human model bench --parallel 4",),
    "human": ("sim2human human serve runs/quick --port 8765",),
    "human serve": (
        "SIM2HUMAN_ADMIN_TOKEN=secret sim2human human serve runs/quick --port 8765",
        "SIM2HUMAN_ADMIN_TOKEN=secret sim2human human serve runs/quick --llm-base-url "
        "http://127.0.0.1:8080/v1 --llm-model my-agent --llm-system-prompt prompt.txt",
    ),
    "human play": (
        "sim2human human play runs/quick --agent scripted",
        "sim2human human play runs/quick --agent llm --llm-base-url http://127.0.0.1:8080/v1 "
        "--llm-model my-agent",
    ),
    "human export": ("sim2human human export runs/quick/human.sqlite --out runs/people",),
    "human compare": ("sim2human human compare runs/quick",),
    "scenario": ("sim2human scenario new hotel --out scenarios",),
    "scenario check": ("sim2human scenario check scenarios/hotel.yaml",),
    "scenario new": ("sim2human scenario new hotel --out scenarios",),
}

_RST_LITERAL = re.compile(r"``([^`]+)``")


def tidy(text: str) -> str:
    """Paragraphs joined onto one line each (the terminal wraps them), ``x`` as `x`."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    joined = (" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)
    return "\n\n".join(_RST_LITERAL.sub(r"`\1`", p) for p in joined if p)


def epilog(examples: tuple[str, ...]) -> str:
    """The examples, one a line, under a label."""
    label = "Example" if len(examples) == 1 else "Examples"
    return "\n".join([f"{label}:", *(f"  $ {e}" for e in examples)])


def _command_name(info: typer.models.CommandInfo) -> str:
    if info.name:
        return info.name
    assert info.callback is not None
    return info.callback.__name__.replace("_", "-")


def document(app: typer.Typer, path: str = "") -> None:
    """Tidy the help of ``app`` (named ``path``) and of everything registered under it, and
    give each the example ``EXAMPLES`` holds for it."""
    info = app.info
    callback = app.registered_callback.callback if app.registered_callback else None
    own = info.help if isinstance(info.help, str) else (callback.__doc__ if callback else None)
    if own:
        info.help = tidy(own)
    if path in EXAMPLES:
        info.epilog = epilog(EXAMPLES[path])
    for command in app.registered_commands:
        name = f"{path} {_command_name(command)}".strip()
        doc = command.help or (command.callback.__doc__ if command.callback else None)
        if doc:
            command.help = tidy(doc)
        if name in EXAMPLES and "Example" not in (command.help or ""):
            command.epilog = epilog(EXAMPLES[name])
    for group in app.registered_groups:
        if group.typer_instance is not None and isinstance(group.name, str):
            document(group.typer_instance, f"{path} {group.name}".strip())

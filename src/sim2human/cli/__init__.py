"""The command: thin verbs over the layers below (``app`` is the typer app and ``main``)."""

from typing import Any


def __getattr__(name: str) -> Any:
    """``sim2human.cli.main``, the entry point installs made before the command became a
    package still name (imported on use: the verbs' modules stay light to import)."""
    if name == "main":
        from sim2human.cli.app import main

        return main
    raise AttributeError(f"module 'sim2human.cli' has no attribute {name!r}")

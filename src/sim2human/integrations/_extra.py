"""Importing an optional extra with one clear error naming what to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from sim2human.errors import ModelUnavailableError


def require(module: str, extra: str) -> ModuleType:
    """``import module``, or an error that says which extra provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ModelUnavailableError(
            f"{module} is not installed (needed by sim2human.integrations.{extra}): "
            f"pip install 'sim2human[{extra}]'  ({err})"
        ) from None

"""sim2human: train and test conversational agents against populations of simulated users."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]

"""The command never imports code from the working directory by accident.

``python -m sim2human`` (and ``python -m sim2human.cli``) starts with the working directory
first on ``sys.path``; ``cd RUN && python -m sim2human view .`` would then find a module shipped
inside a downloaded run before an installed one. ``not_importable`` drops that entry before the
command imports anything more; a study that names its own ``module:Name`` allows the working
directory explicitly (``scenarios.refs.allow``). The ``sim2human`` script never had it there.
What the package imported before its ``__main__`` ran is Python's doing: ``python -P`` (or
``PYTHONSAFEPATH=1``) keeps the working directory off ``sys.path`` from the start.
"""

from __future__ import annotations

import sys
from pathlib import Path


def not_importable() -> None:
    """Remove the first ``sys.path`` entry when it is the working directory (``python -m``)."""
    if sys.path and (sys.path[0] in ("", ".") or _is_here(sys.path[0])):
        del sys.path[0]


def _is_here(entry: str) -> bool:
    try:
        return Path(entry).resolve() == Path.cwd().resolve()
    except OSError:  # a working directory that was removed
        return False

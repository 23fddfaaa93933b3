"""How the readers (``diagnose``, ``fidelity``, ``report``, ``export``) reach a run directory.

A reader never needs to write the run it reads. With ``--out DIR`` (a folder outside the run)
it only reads the run (``lock.read_lock``: an archived, read-only run, or a study still
running) and writes into DIR. Without ``--out``, or with one inside the run, it writes into
the run when it can have the writer's lock, as before; when it cannot (the run is read-only to
this user, or another process holds its lock) ``Reader.store`` is None and the command either
prints without storing (``diagnose``, ``fidelity``) or refuses in one line that names ``--out``
(``report``, ``export``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from sim2human.errors import UsageError
from sim2human.store.loading import existing_dir, output_dir
from sim2human.store.lock import Access, read_lock, write_or_read_lock


@dataclass(frozen=True)
class Reader:
    access: Access
    store: Path | None
    """Where the command may write its files: ``--out``, the run itself, or nowhere (None)."""

    @property
    def into_run(self) -> bool:
        """Whether ``store`` lies in the run (its writes then pass ``inside=`` the run)."""
        return self.store is not None and inside(self.store, self.access.run_dir)

    def unstored(self, what: str) -> str:
        """The note of a command that prints ``what`` instead of storing it in the run."""
        run, writer = self.access.run_dir, self.access.writer
        why = (
            f"{run}: {writer}: reading what has finished"
            if writer
            else f"{run} {self.access.why_not}"
        )
        return f"{why}; {what} is printed, not stored (give --out DIR to store it)"

    def refusal(self, flag: str) -> UsageError:
        """``RUN is read-only: give --out DIR outside it`` and the like, for a command that
        cannot do without writing."""
        return UsageError(f"{self.access.run_dir} {self.access.why_not}: give {flag} outside it")


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or lies under it (symlinks resolved)."""
    p, r = path.resolve(), root.resolve()
    return p == r or r in p.parents


def noter(console: Console, run_dir: Path, label: str = "note") -> Callable[[str], None]:
    """One line per note, naming the run."""

    def note(msg: str) -> None:
        console.print(f"{label}: {run_dir}: {msg}", highlight=False, soft_wrap=True)

    return note


@contextmanager
def reading(
    run_dir: Path,
    out: Path | None,
    command: str,
    note: Callable[[str], None],
    *,
    out_is_dir: bool = True,
) -> Iterator[Reader]:
    """Reach ``run_dir`` for ``command`` (see the module docstring); ``out`` is ``--out``: a
    folder (``out_is_dir``) or a file, whose folder then counts. An ``--out`` inside the run
    writes into the run, so it needs the writer's lock like no ``--out`` at all."""
    existing_dir(run_dir, "run directory")
    folder = out if out is None or out_is_dir else out.parent
    if folder is None or inside(folder, run_dir):
        with write_or_read_lock(run_dir, command, note=note) as access:
            if access.writable and out_is_dir and folder is not None:
                output_dir(folder)
            yield Reader(access, (folder or run_dir) if access.writable else None)
        return
    if out_is_dir:
        output_dir(folder)
    with read_lock(run_dir, note=note) as access:
        yield Reader(access, folder)

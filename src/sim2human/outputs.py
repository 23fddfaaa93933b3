"""Writing output files: whole or not at all, never through a symlink, a full disk in one line.

Every file sim2human writes for a person or a later reader (reports, ``study.json``, configs,
exports, checkpoints) goes through here:

- **Atomic.** The bytes go to a fresh temporary file beside the target (``O_EXCL``, so never an
  existing file or link), are flushed to disk, and the temporary file is renamed over the target.
  A reader sees the old file or the new one, never half of one; a crash or a full disk leaves
  the old one in place.
- **Symlink-safe.** A rename replaces a symlink at the target itself, so nothing is written
  through a link. With ``inside=`` (a run directory) the target's real parent must also lie
  inside that directory, so a linked sub-folder cannot aim a write elsewhere.
- **Clear errors.** A target that is a directory, a FIFO or a device, a missing permission and
  ``ENOSPC`` each become one :class:`OutputError` naming the path (exit 2 for a usage error,
  1 for a full disk), never a traceback.

The standard library has the pieces (``tempfile.mkstemp``, ``os.replace``); no well-kept
package adds the ``inside=`` check and the error mapping, so this small module does.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from sim2human.errors import Sim2HumanError


class OutputError(Sim2HumanError):
    """An output file could not be written; the message names the path and why."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def describe_os_error(path: Path, err: OSError) -> OutputError:
    """One line for an ``OSError`` met while writing ``path``: a full disk names the disk."""
    if err.errno == errno.ENOSPC:
        return OutputError(f"{path}: no space left on the disk that holds it", exit_code=1)
    if err.errno == errno.EDQUOT:
        return OutputError(f"{path}: disk quota exceeded", exit_code=1)
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return OutputError(f"{path}: cannot write here ({err.strerror})")
    if err.errno == errno.ENAMETOOLONG:
        return OutputError(f"{path}: file name too long")
    return OutputError(f"{path}: cannot write ({err.strerror or err})", exit_code=1)


def check_target(path: Path, inside: Path | None = None) -> None:
    """Refuse a target that no atomic write can replace, before any work is done.

    A missing target is fine; a regular file or a symlink is replaced (the link itself, never
    what it points to); a directory, a FIFO, a socket or a device is a usage error."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise describe_os_error(path, err) from None
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise OutputError(f"{path}: is {kind}; give the path of a file to write")
    if inside is not None:
        real_parent = path.parent.resolve()
        real_root = inside.resolve()
        if real_parent != real_root and real_root not in real_parent.parents:
            raise OutputError(
                f"{path}: its folder leads outside {inside} (through a symlink); refusing to write"
            )


@contextlib.contextmanager
def atomic_open(
    path: Path, mode: str = "w", *, inside: Path | None = None, file_mode: int = 0o644
) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` for writing; on a clean exit it replaces ``path``.

    ``mode`` is ``"w"`` (text, UTF-8) or ``"wb"``. On an exception the temporary file is removed
    and ``path`` is untouched."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes only, not {mode!r}")
    check_target(path, inside)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise describe_os_error(path, err) from None
    tmp = Path(tmp_name)
    try:
        os.fchmod(fd, file_mode & ~_umask())
        encoding = "utf-8" if mode == "w" else None
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise describe_os_error(path, err) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str, *, inside: Path | None = None) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path, "w", inside=inside) as f:
        f.write(text)


def write_bytes(path: Path, data: bytes, *, inside: Path | None = None) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb", inside=inside) as f:
        f.write(data)


def write_with(
    path: Path, save: Callable[[IO[bytes]], None], *, inside: Path | None = None
) -> None:
    """Let ``save`` write a binary file (``torch.save(obj, f)``, say) and replace ``path`` with it
    atomically. A library error that hides a full disk (torch's ``unexpected pos``) is checked
    against the free space and reported as a full disk when that is what it was."""
    try:
        with atomic_open(path, "wb", inside=inside) as f:
            save(f)
    except OutputError:
        raise
    except RuntimeError as err:
        if _disk_full(path.parent):
            raise OutputError(f"{path}: no space left on the disk that holds it", 1) from None
        raise err


def _disk_full(folder: Path, margin: int = 1 << 20) -> bool:
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < margin


def _umask() -> int:
    """The process umask, read without changing it (``os.umask`` would, racing other threads)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022

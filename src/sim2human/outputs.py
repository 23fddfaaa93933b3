"""Writing output files: whole or not at all, never through a symlink, a full disk in one line.

Every file sim2human writes for a person or a later reader (reports, ``study.json``, configs,
exports, checkpoints, plots) goes through here:

- **Atomic.** The bytes go to a fresh temporary file beside the target (``O_EXCL``, so never an
  existing file or link), are flushed to disk, and the temporary file is renamed over the target.
  A reader sees the old file or the new one, never half of one; a crash or a full disk leaves
  the old one in place. ``write_all`` does this for a set of files (a report's HTML, Markdown and
  JSON): each is staged first and none replaced unless all of them could be written.
- **Symlink-safe.** A rename replaces a symlink at the target itself, so nothing is written
  through a link. With ``inside=`` (a run directory) the target's real parent must also lie
  inside that directory, so a linked sub-folder cannot aim a write elsewhere. Append-only logs
  (``open_append``) open with ``O_NOFOLLOW`` and refuse a link; ``remove`` deletes a link as a
  link and never a folder that leads outside the run.
- **Clear errors.** A target that is a directory, a FIFO or a device, a missing permission and
  ``ENOSPC`` each become one :class:`OutputError` naming the path (exit 2 for a usage error,
  1 for a full disk), never a traceback. A FIFO or a device (``/dev/null`` included) is refused
  before anything is opened, so a write never blocks on a pipe with no reader: every output is
  a file that a rename can replace. A stream (``--out /dev/stdout``) is not an output
  file: it can hold half a file and cannot keep the old one, so it is refused too.

The standard library has the pieces (``tempfile.mkstemp``, ``os.replace``); no well-kept
package adds the ``inside=`` check and the error mapping, so this small module does.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
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
        return OutputError(
            f"{path}: no space left on the disk that holds it ({_mount_point(path)}); "
            "free some space and run again",
            exit_code=1,
        )
    if err.errno == errno.EDQUOT:
        return OutputError(f"{path}: disk quota exceeded", exit_code=1)
    if err.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return OutputError(f"{path}: cannot write here ({err.strerror})")
    if err.errno == errno.ENAMETOOLONG:
        return OutputError(f"{path}: file name too long")
    if err.errno == errno.EISDIR:
        return OutputError(f"{path}: is a directory; give the path of a file to write")
    if err.errno == errno.ENOTDIR:
        return OutputError(f"{path}: a part of its folder is a file, not a folder")
    if err.errno == errno.ELOOP:
        return OutputError(f"{path}: is a symlink (or its folder is a symlink loop); refusing it")
    if err.errno == errno.ENXIO:
        return OutputError(f"{path}: is not a regular file; give the path of a file to write")
    return OutputError(f"{path}: cannot write ({err.strerror or err})", exit_code=1)


def check_target(path: Path, inside: Path | None = None) -> None:
    """Refuse a target that no atomic write can replace, before any work is done.

    A missing target is fine; a regular file or a symlink is replaced (the link itself, never
    what it points to); a directory, a FIFO, a socket or a device is a usage error, and so is a
    link to one: ``/dev/stdout`` links to ``/proc/self/fd/1``, and replacing that link (as
    root) would put a file in ``/dev`` instead of writing to the stream."""
    st = _lstat(path)
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise OutputError(f"{path}: is {kind}; give the path of a file to write")
    if st is not None and stat.S_ISLNK(st.st_mode):
        _check_link_target(path)
    if inside is not None:
        check_inside(path.parent, inside, what=path)


def _check_link_target(link: Path) -> None:
    try:
        target = os.stat(link)  # follows the link
    except (OSError, RuntimeError):  # dangling, or a loop: the link itself is replaced
        return
    if not stat.S_ISREG(target.st_mode):
        raise OutputError(f"{link}: links to something that is not a file; give a file's path")


def check_inside(folder: Path, inside: Path, *, what: Path | None = None) -> None:
    """Refuse ``folder`` unless its real path (symlinks resolved, missing parts allowed) is
    ``inside``'s real path or lies below it."""
    try:
        real, root = folder.resolve(), inside.resolve()
    except (OSError, RuntimeError):  # a symlink loop (RuntimeError before Python 3.13)
        raise OutputError(f"{what or folder}: its folder is a symlink loop") from None
    if real != root and root not in real.parents:
        raise OutputError(
            f"{what or folder}: its folder leads outside {inside} (through a symlink); "
            "refusing to write"
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
    fd, tmp = _temporary(path, file_mode)
    try:
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


def write_all(files: Sequence[tuple[Path, str | bytes]], *, inside: Path | None = None) -> None:
    """Write several files (``str`` as UTF-8) so that either all are replaced or none is: each
    goes to its own temporary file first, and the renames start only when every one of them is
    on disk. A full disk half-way leaves every old file as it was. The old files are kept under
    a second name (a hard link) until every rename has happened, so a rename that fails half-way
    through the set (or any exception there) puts back the ones already replaced: a reader never
    finds a new report.md beside an old report.html."""
    for path, _ in files:
        check_target(path, inside)
    staged: list[tuple[Path, Path]] = []
    kept: dict[Path, Path | None] = {}
    replaced: list[Path] = []
    current = files[0][0]
    try:
        for path, data in files:
            current = path
            fd, tmp = _temporary(path, 0o644)
            staged.append((tmp, path))
            with os.fdopen(fd, "wb") as f:
                f.write(data.encode("utf-8") if isinstance(data, str) else data)
                f.flush()
                os.fsync(f.fileno())
        for _, path in staged:
            current = path
            kept[path] = _keep_old(path)
        for tmp, path in staged:
            current = path
            os.replace(tmp, path)
            replaced.append(path)
    except BaseException as err:
        _roll_back(replaced, kept)
        if isinstance(err, OSError):
            raise describe_os_error(current, err) from None
        raise
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        for old in kept.values():
            if old is not None:
                old.unlink(missing_ok=True)


def _keep_old(path: Path) -> Path | None:
    """A second name (a hard link beside it, of a symlink the link itself) for what is at
    ``path`` before a set replaces it, or None when nothing is there."""
    if not os.path.lexists(path):
        return None
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent)
    os.close(fd)
    os.unlink(name)
    os.link(path, name, follow_symlinks=False)
    return Path(name)


def _roll_back(replaced: list[Path], kept: dict[Path, Path | None]) -> None:
    """Undo a set's renames: each replaced target gets its old file back, and one that had none
    is removed, so the folder holds the old set as it was."""
    for path in replaced:
        old = kept.get(path)
        with contextlib.suppress(OSError):
            if old is None:
                path.unlink()
            else:
                os.replace(old, path)


def write_with(
    path: Path, save: Callable[[IO[bytes]], None], *, inside: Path | None = None
) -> None:
    """Let ``save`` write a binary file (``torch.save(obj, f)``, ``fig.savefig(f)``) and replace
    ``path`` with it atomically. A library error that hides a full disk (torch's ``unexpected
    pos``, raised while handling the ``ENOSPC``) is reported as the full disk it was."""
    with atomic_open(path, "wb", inside=inside) as f:
        try:
            save(f)
        except RuntimeError as err:
            hidden = _os_error_in(err)
            if hidden is not None:
                raise describe_os_error(path, hidden) from None
            if _disk_full(path.parent):  # checked while the partial file still holds the space
                raise describe_os_error(path, OSError(errno.ENOSPC, "disk full")) from None
            raise


def open_append(path: Path, *, inside: Path | None = None) -> int:
    """A file descriptor for appending to the log ``path`` (created if missing, mode 0644 less
    the umask). Never through a symlink (``O_NOFOLLOW``), never a FIFO or a device (opened
    non-blocking, then checked), and with ``inside`` never in a folder that leads outside it."""
    st = _lstat(path)
    if st is not None and stat.S_ISLNK(st.st_mode):
        raise OutputError(f"{path}: is a symlink; refusing to append to a log through it")
    check_target(path, inside)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except OSError as err:
        raise describe_os_error(path, err) from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the lstat and the open
        os.close(fd)
        raise OutputError(f"{path}: is not a regular file; refusing to append to it")
    os.set_blocking(fd, True)
    return fd


def remove(path: Path, *, inside: Path) -> None:
    """Make sure ``path`` is gone and can be made again inside ``inside``: delete it (a folder
    with everything in it, a file, or a symlink: the link itself, never what it points to) if
    it exists, and refuse a path whose folder leads outside ``inside``, present or not, so a
    linked folder of a run can aim neither a deletion nor the writes after it elsewhere."""
    check_inside(path.parent, inside, what=path)
    st = _lstat(path)
    if st is None:
        return
    try:
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)
        else:
            path.unlink()
    except OSError as err:
        raise OutputError(f"{path}: cannot remove it ({err.strerror or err})") from None


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return path.lstat()
    except FileNotFoundError:
        return None
    except OSError as err:
        raise describe_os_error(path, err) from None


def _temporary(path: Path, file_mode: int) -> tuple[int, Path]:
    """A new, empty temporary file beside ``path`` (its folder created if missing)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise describe_os_error(path, err) from None
    try:
        os.fchmod(fd, file_mode & ~_umask())
    except OSError as err:
        os.close(fd)
        Path(name).unlink(missing_ok=True)
        raise describe_os_error(path, err) from None
    return fd, Path(name)


def _os_error_in(err: BaseException) -> OSError | None:
    """The ``OSError`` an exception was raised while handling, if any (its ``__context__``)."""
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, OSError):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _disk_full(folder: Path, margin: int = 1 << 16) -> bool:
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < margin


def _mount_point(path: Path) -> Path:
    """The mount point of the disk that holds ``path`` (its nearest existing folder's)."""
    here = Path(os.path.abspath(path))
    while not here.exists() and here != here.parent:
        here = here.parent
    with contextlib.suppress(OSError):
        dev = here.stat().st_dev
        while here != here.parent and here.parent.stat().st_dev == dev:
            here = here.parent
    return here


def _umask() -> int:
    """The process umask, read without changing it (``os.umask`` would, racing other threads)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022

"""Atomic writes: one file (`write_atomic`), or a whole directory of outputs as one set (`OutputSet`).

A single file is written to a temporary file beside it, flushed to disk, then renamed over it. A set
(the configurations, BOM and cabling plan of `render`) is written to a staging directory beside its
target, put on disk as a whole (one syncfs on Linux) and swapped in with one rename (RENAME_EXCHANGE on
Linux), so a kill at any moment leaves the old set or the new set, never a mix. Temporary files and
staging directories left by a killed run are removed by the next run; a failed run removes its own. The
set keeps a manifest of the files clusterplan wrote: files of an earlier set that are no longer produced
go, files clusterplan did not write stay (they are hard-linked into the new set, so they are the same
files).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from validator.base.errors import ToolError
from validator.base.paths import walk

MANIFEST = ".clusterplan-manifest.json"
STAGING = ".clusterplan-staging"
OLD = ".clusterplan-old"
MAX_FOREIGN = 10_000     # entries of other people's files carried into a new set before we refuse


def _atomic(path: Path, fill: Callable[[BinaryIO], object]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fill(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _remove_stale_temporaries(path: Path) -> None:
    """Temporary files of `path` left by a run that was killed (its process no longer exists)."""
    prefix = f".{path.name}."
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            name = entry.name
            if name.startswith(prefix) and name.endswith(".tmp") and entry.is_file(follow_symlinks=False):
                pid = name[len(prefix):].split(".", 1)[0]
                if pid.isdigit() and not _alive(int(pid)):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(entry.path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:     # exists, owned by someone else
        return True
    return True


def write_atomic(path: Path, data: str | bytes) -> None:
    payload = data.encode("utf-8") if isinstance(data, str) else data
    _atomic(path, lambda fh: fh.write(payload))


def write_atomic_lines(path: Path, lines: Iterable[str]) -> None:
    """Stream text into a temporary file beside `path`, then rename it over `path`."""
    def fill(fh: BinaryIO) -> None:
        for line in lines:
            fh.write(line.encode("utf-8"))

    _atomic(path, fill)


def read_manifest(directory: Path) -> dict[str, str]:
    """The files (relative path -> sha256) clusterplan wrote in `directory`, from its manifest."""
    try:
        data = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
        files = data["files"]
        return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


class OutputSet:
    """A directory of outputs written as one set.

        with OutputSet(target) as out:
            out.write("configs/a.cfg", text)
            out.commit()        # nothing is visible at `target` before this; all of it after

    Leaving the block without `commit()` (an error, a template that fails) leaves `target` as it was.
    """

    def __init__(self, target: Path) -> None:
        self.target = Path(os.path.realpath(target))
        self.staging = self.target.parent / f".{self.target.name}{STAGING}"
        self.old = self.target.parent / f".{self.target.name}{OLD}"
        self.files: dict[str, str] = {}
        self._lock: int | None = None
        self._made: set[Path] = set()     # staging directories made so far (by this process)

    def __enter__(self) -> OutputSet:
        if self.target.exists() and not self.target.is_dir():
            raise ToolError(f"{self.target}: exists and is not a directory")
        if (self.target / ".git").exists() or Path.cwd().resolve().is_relative_to(self.target):
            raise ToolError(f"{self.target}: is a repository or holds the working directory; outputs are "
                            "swapped in as a whole set, so write them to a directory of their own")
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _lock(self.target.parent)
        _recover(self.target, self.staging, self.old)
        self.staging.mkdir()
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
        if self._lock is not None:
            os.close(self._lock)    # releases the lock

    @property
    def written(self) -> list[str]:
        return list(self.files)

    def _path(self, rel: str) -> Path:
        pure = PurePosixPath(rel)
        parts = pure.parts
        if not parts or pure.is_absolute() or any(p in ("", ".", "..") for p in parts) or rel == MANIFEST:
            raise ValueError(f"not a relative output path: {rel!r}")
        path = self.staging.joinpath(*parts)
        if path.parent not in self._made:     # once per directory (a 100k-GPU render writes 7,500 files)
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        return path

    def write(self, rel: str, data: str | bytes) -> None:
        self.write_chunks(rel, [data.encode("utf-8") if isinstance(data, str) else data])

    def write_lines(self, rel: str, lines: Iterable[str]) -> None:
        self.write_chunks(rel, (line.encode("utf-8") for line in lines))

    def create(self, rel: str) -> BinaryIO:
        """A new file of the set, open for writing; `record` its SHA-256 once it is written."""
        return open(self._path(rel), "xb")

    def record(self, rel: str, digest: str) -> None:
        self.files[rel] = digest

    def write_chunks(self, rel: str, chunks: Iterable[bytes]) -> None:
        digest = hashlib.sha256()
        with open(self._path(rel), "xb") as fh:
            for chunk in chunks:
                digest.update(chunk)
                fh.write(chunk)
        self.files[rel] = digest.hexdigest()     # made durable with the whole set, in commit()

    def commit(self) -> None:
        """Carry the files clusterplan did not write into the new set, write the manifest, and swap."""
        ours = _still_ours(self.target) | {MANIFEST}
        _carry_foreign(self.target, self.staging, ours | set(self.files))
        manifest = {"generator": "clusterplan", "version": 1, "files": dict(sorted(self.files.items()))}
        with open(self.staging / MANIFEST, "x", encoding="utf-8") as fh:
            fh.write(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        _sync_set(self.staging, [*self.files, MANIFEST])
        _swap(self.staging, self.target, self.old)
        _fsync_dir(self.target.parent)


def _still_ours(target: Path) -> set[str]:
    """The files of the previous set that hold what its manifest says clusterplan wrote (SHA-256): the
    manifest is a file of the repository, so a path it lists whose content differs (a file a pull request
    listed, or one edited since) is somebody else's and is carried into the new set, never dropped."""
    out = set()
    for rel, digest in read_manifest(target).items():
        path = target / rel
        try:
            if not path.is_symlink() and path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == digest:
                out.add(rel)
        except (OSError, ValueError):
            continue
    return out


def _lock(directory: Path) -> int | None:
    """An exclusive lock on `directory` (two runs writing beside each other wait for each other)."""
    try:
        import fcntl
    except ImportError:   # not POSIX: no lock
        return None
    fd = os.open(directory, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def _recover(target: Path, staging: Path, old: Path) -> None:
    """Undo what a killed run left: a staging directory (incomplete, or the old set after a swap), and
    on systems without an atomic exchange, the old set moved aside before the new one was in place."""
    if old.exists() and not target.exists():
        os.rename(old, target)
    for leftover in (staging, old):
        if leftover.is_symlink() or leftover.is_file():
            leftover.unlink()
        elif leftover.exists():
            shutil.rmtree(leftover)


def _carry_foreign(target: Path, staging: Path, ours: set[str]) -> None:
    """Hard-link every file in `target` that clusterplan did not write (and does not write now) into the
    staging directory, so that the swap leaves them where they were, untouched."""
    if not target.is_dir():
        return
    carried = 0
    for top, dirs, names in walk(target):
        rel_top = Path(top).relative_to(target)
        for name in sorted(dirs) + sorted(names):
            rel = (rel_top / name).as_posix()
            src, dst = Path(top) / name, staging / rel_top / name
            info = os.lstat(src)
            if stat.S_ISDIR(info.st_mode):
                if not any(os.scandir(src)):     # an empty directory of someone else's; others follow their files
                    dst.mkdir(parents=True, exist_ok=True)
                continue
            if rel in ours:
                continue
            _refuse_collision(target, staging, rel_top / name)
            carried += 1
            if carried > MAX_FOREIGN:
                raise ToolError(f"{target} holds more than {MAX_FOREIGN:,} files clusterplan did not write; "
                                "write the outputs to a directory of their own")
            _link(src, dst, info)


def _refuse_collision(target: Path, staging: Path, rel: Path) -> None:
    """A file clusterplan did not write, kept in the set, must not stand where the new set has a file or
    a directory (a committed directory or symlink named like an output): a clear error, nothing swapped."""
    for part in [*reversed(rel.parents[:-1]), rel]:
        there = staging / part
        if os.path.lexists(there) and (part == rel or not there.is_dir() or there.is_symlink()):
            raise ToolError(f"{target / rel}: clusterplan did not write it and it stands where an output goes "
                            f"({(target / part).as_posix()} is an output {'file' if there.is_file() else 'directory'}"
                            "); move it away or write the outputs to a directory of their own")


def _link(src: Path, dst: Path, info: os.stat_result) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(src), dst)
    elif stat.S_ISREG(info.st_mode):
        try:
            os.link(src, dst, follow_symlinks=False)
        except OSError:    # a file system without hard links: a copy, with its times and mode
            shutil.copy2(src, dst, follow_symlinks=False)
    else:
        raise ToolError(f"{src}: a FIFO, socket or device in an output directory; write the outputs to a "
                        "directory of their own")


def _directories(root: Path) -> Iterator[Path]:
    for top, _dirs, _names in walk(root):
        yield Path(top)


def _sync_set(staging: Path, files: list[str]) -> None:
    """Every file and directory of the staged set on disk before the swap makes it visible: one
    syncfs(2) of the file system holding it on Linux (an fsync per file cost about 0.5 s per 800 files
    of a 100k-GPU render), else an fsync of each file and directory."""
    if not _syncfs(staging):
        for rel in files:
            with open(staging / rel, "rb") as fh:
                os.fsync(fh.fileno())
        for directory in _directories(staging):
            _fsync_dir(directory)


def _syncfs(directory: Path) -> bool:
    """syncfs(2) on the file system of `directory`: True once it has written everything; False where
    the call is not available (not Linux, no C library)."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        syncfs = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    fd = os.open(directory, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), str(directory))
    finally:
        os.close(fd)
    return True


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):     # not every platform can open a directory
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _swap(staging: Path, target: Path, old: Path) -> None:
    """Put `staging` at `target` in one step: a rename when there is nothing there yet, else an atomic
    exchange (the old set ends up at the staging path and is removed). Without an exchange call, the old
    set is moved aside first; a kill between the two renames is undone by the next run (`_recover`)."""
    if not target.exists():
        os.rename(staging, target)
        return
    if _exchange(staging, target):
        shutil.rmtree(staging, ignore_errors=True)
        return
    os.rename(target, old)
    os.rename(staging, target)
    shutil.rmtree(old, ignore_errors=True)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths (Linux renameat2 RENAME_EXCHANGE); False where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (38, 22, 95):   # ENOSYS, EINVAL, EOPNOTSUPP: the kernel or file system cannot
        return False
    raise OSError(err, os.strerror(err), str(b))

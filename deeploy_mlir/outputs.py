"""Where deeploy-mlir writes, and how: every output path is checked before any
work starts, and every output appears whole or not at all.

Checks (each a one-line DeeployError, exit code 2, before anything is read or
written):

- a directory output (`lower -o`, `run`/`test --keep`) is never empty, the
  current directory or one holding it, a directory holding an input (the model,
  `--data`, `--params`, `--board` files; a new directory inside the model's is
  fine), a symbolic link, a file, or a path under a file or where we cannot
  write; an existing directory is replaced only if it is a previous output of
  deeploy-mlir (it holds the `.deeploy-mlir` marker, or a `manifest.json` of
  ours) or empty, or if `--force` is given (which does not reach inside an
  input directory);
- a file output (`--json`, `--emit-ir`, `report --plot`) is never empty, a
  directory or anything but a regular file, an input, an existing file inside
  an input directory, inside the directory output (which is replaced whole),
  or in a directory that does not exist or cannot be written.

Writing: a directory output is written into a new hidden directory beside the
target (`.NAME.deeploy-mlir-new-PID-TOKEN`) and exchanged with the target in
one `renameat2(RENAME_EXCHANGE)` call when everything succeeded (where the
file system cannot exchange: the old output is renamed aside, the new one in,
with SIGINT/SIGTERM held back in between); the old output is deleted last.
A file output is written to a hidden file beside it and `os.replace`d. Killed
at any moment, the target holds the old output or the new one (or nothing,
on file systems without the exchange, between the two renames), never a
mixture; hidden leftovers of a killed run are deleted by the next run that
writes the same target.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import secrets
import shutil
import signal
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deeploy_mlir.errors import DeeployError

#: the file that marks a directory as an output of deeploy-mlir
MARKER = ".deeploy-mlir"
MARKER_TEXT = (
    "This directory was written by deeploy-mlir. The next deeploy-mlir run that writes here\n"
    "replaces it whole: keep no files of your own in it.\n"
)
_TAG = "deeploy-mlir"


@dataclass(frozen=True)
class Input:
    """A file or directory a command reads, and the name to call it by."""

    what: str  # "the model", "--data", ...
    path: str


def inputs_of(pairs: Iterable[tuple[str, str | os.PathLike[str] | None]]) -> list[Input]:
    """The given (name, path) pairs, without the absent ones."""
    return [Input(w, os.fspath(p)) for w, p in pairs if p is not None and os.fspath(p) != ""]


def _label(option: str, path: str) -> str:
    # `-o` names its directory alone (the option is obvious); the others name the option
    return path if option == "-o" else f"{option} {path}"


def _where(path: str) -> tuple[Path, str]:
    """`path` made absolute: the real (symlink-free) parent, and the last name."""
    ap = os.path.abspath(path)
    parent, name = os.path.split(ap)
    return Path(os.path.realpath(parent)), name


def _cwd() -> Path | None:
    try:
        return Path(os.path.realpath(os.getcwd()))
    except OSError:  # the current directory was deleted
        return None


def _within(inner: Path, outer: Path) -> bool:
    """inner is outer or lies below it."""
    return inner == outer or outer in inner.parents


def _nearest_existing(d: Path) -> Path:
    while not os.path.lexists(d) and d != d.parent:
        d = d.parent
    return d


def _probe(label: str, where: Path, name: str) -> None:
    """Create and delete a hidden directory in `where`: the one sure way to know
    that we may write there (permissions, read-only mounts, /proc, root)."""
    if not where.is_dir():
        raise DeeployError(f"{label}: {where} is not a directory")
    probe = where / _temp_name(name, "probe")
    try:
        os.mkdir(probe)
    except OSError as e:
        raise DeeployError(f"{label}: cannot write in {where} ({e.strerror})") from None
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(probe)


def _temp_name(name: str, role: str) -> str:
    # NAME_MAX is 255 bytes: a long target name is cut in the hidden names
    return f"{_prefix(name)}{role}-{os.getpid()}-{secrets.token_hex(4)}"


def _prefix(name: str) -> str:
    short = os.fsencode(name)[:120].decode(errors="ignore") if len(name) > 30 else name
    return f".{short}.{_TAG}-"


def is_previous_output(d: Path) -> bool:
    """d holds deeploy-mlir's marker, or a manifest.json of ours (outputs
    written before the marker existed)."""
    if (d / MARKER).is_file():
        return True
    man = d / "manifest.json"
    try:
        if not man.is_file() or man.stat().st_size > 64 << 20:
            return False
        doc = json.loads(man.read_text())
    except (OSError, ValueError):
        return False
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("version"), int)
        and isinstance(doc.get("memory"), dict)
        and isinstance(doc.get("buffers"), list)
    )


def _replaceable(label: str, target: Path, force: bool) -> None:
    """An existing `target` may be replaced: a directory that is a previous
    output, empty, or `force`."""
    if target.is_symlink():
        raise DeeployError(f"{label}: is a symbolic link (name the directory itself)")
    if not target.exists():
        return
    if not target.is_dir():
        raise DeeployError(f"{label}: exists and is not a directory")
    if force or is_previous_output(target):
        return
    try:
        empty = next(os.scandir(target), None) is None
    except OSError as e:
        raise DeeployError(f"{label}: cannot read it ({e.strerror})") from None
    if not empty:
        raise DeeployError(
            f"{label}: exists and is not a deeploy-mlir output (no {MARKER} marker); "
            "give --force to replace it and everything in it"
        )


def check_dir_output(
    path: str, option: str, inputs: Sequence[Input], *, force: bool = False
) -> Path:
    """The absolute target of directory output `path` (option `option`), or
    a one-line error: see the module's docstring."""
    if path == "":
        raise DeeployError(f"{option}: empty path (name the output directory)")
    label = _label(option, path)
    parent, name = _where(path)
    if not name:
        raise DeeployError(f"{label}: is the root directory")
    target = parent / name
    if os.path.lexists(target) and not target.is_symlink() and not target.is_dir():
        raise DeeployError(f"{label}: exists and is not a directory")
    cwd = _cwd()
    if cwd is not None and target == cwd:
        raise DeeployError(f"{label}: is the current directory")
    if cwd is not None and _within(cwd, target):
        raise DeeployError(f"{label}: holds the current directory")
    for inp in inputs:
        real = Path(os.path.realpath(inp.path))
        if real == target:
            raise DeeployError(f"{label}: is {inp.what} (an input: never replaced)")
        if _within(real, target):
            raise DeeployError(f"{label}: holds {inp.what} {inp.path} (an input: never replaced)")
        if force and _within(target, real) and real.is_dir():  # --force stops at the inputs
            try:
                _replaceable(label, target, False)
            except DeeployError:
                raise DeeployError(
                    f"{label}: is inside {inp.what} {inp.path} and is not a deeploy-mlir "
                    "output (--force does not replace an input directory's files)"
                ) from None
    _replaceable(label, target, force)
    _probe(label, _nearest_existing(parent), name)
    return target


def check_file_output(
    path: str, option: str, inputs: Sequence[Input], *, within: Path | None = None
) -> Path:
    """The absolute target of file output `path` (option `option`), or a
    one-line error: see the module's docstring. `within`: the command's
    directory output, if any."""
    if path == "":
        raise DeeployError(f"{option}: empty path (name the output file)")
    label = f"{option} {path}"
    if os.path.isdir(path):
        raise DeeployError(f"{label}: is a directory")
    if os.path.lexists(path) and os.path.exists(path) and not os.path.isfile(path):
        raise DeeployError(f"{label}: exists and is not a regular file")
    target = Path(os.path.realpath(path))  # a symlink: the file it names is replaced
    if within is not None and _within(target, within):
        raise DeeployError(
            f"{label}: is inside the output directory {within}, which is replaced whole "
            "(write it elsewhere)"
        )
    given_parent = os.path.dirname(path) or "."
    if not os.path.isdir(given_parent):
        if os.path.lexists(given_parent):
            raise DeeployError(f"{label}: {given_parent} is not a directory")
        raise DeeployError(f"{label}: the directory {given_parent} does not exist")
    for inp in inputs:
        real = Path(os.path.realpath(inp.path))
        if _within(real, target):
            raise DeeployError(f"{label}: is {inp.what} (an input: never replaced)")
        if _within(target, real) and os.path.lexists(target):
            raise DeeployError(
                f"{label}: would replace a file inside {inp.what} {inp.path} (write a new file)"
            )
    _probe(label, target.parent, target.name)
    return target


# --------------------------------------------------------------------------
# writing


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def clean_stale(target: Path) -> list[Path]:
    """Delete the hidden leftovers of killed runs that wrote `target` (those
    whose process is gone): the paths deleted."""
    prefix = _prefix(target.name)
    gone: list[Path] = []
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return gone
    for e in entries:
        if not e.name.startswith(prefix):
            continue
        parts = e.name[len(prefix) :].split("-")
        if len(parts) != 3 or not parts[1].isdigit() or _pid_alive(int(parts[1])):
            continue
        p = Path(e.path)
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()
        gone.append(p)
    return gone


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap a and b in one step (Linux renameat2); False where the system or
    the file system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


_HELD = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM that arrive in the block take effect after it
    (Ctrl-C cannot stop a replacement between its two renames). Python-level
    handlers, not a signal mask: a mask would hold the signal back from the
    main thread only, and another thread (BLAS, Z3) would take it."""
    pending: list[int] = []

    def hold(signum: int, frame: object) -> None:
        pending.append(signum)

    saved: list[tuple[int, Any]] = []
    try:
        for sig in _HELD:
            saved.append((sig, signal.signal(sig, hold)))
    except ValueError:  # not the main thread: nothing can be held
        pass
    try:
        yield
    finally:
        for sig, handler in saved:
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        for sig in dict.fromkeys(pending):
            signal.raise_signal(sig)


def _commit_dir(stage: Path, target: Path, force: bool) -> None:
    """Put the finished `stage` at `target`, replacing what is there; the old
    output is deleted last."""
    _replaceable(str(target), target, force)  # again: the target may have changed meanwhile
    (stage / MARKER).write_text(MARKER_TEXT)
    aside: Path | None = None
    try:
        with _signals_held():
            if not os.path.lexists(target):
                os.rename(stage, target)
            elif _exchange(stage, target):
                aside = stage  # the old output, now at the hidden name
            else:
                aside = target.parent / _temp_name(target.name, "old")
                os.rename(target, aside)
                try:
                    os.rename(stage, target)
                except BaseException:
                    os.rename(aside, target)
                    aside = None
                    raise
    finally:  # also when a held Ctrl-C arrives as the signals are released
        if aside is not None:
            shutil.rmtree(aside, ignore_errors=True)


@contextlib.contextmanager
def staged_dir(target: Path, *, force: bool = False) -> Iterator[Path]:
    """A new hidden directory beside `target` to write the output into; on
    leaving the block without an exception it replaces `target` (see
    _commit_dir), with one it is deleted. Missing parents of `target` are
    created, and deleted again if the block fails."""
    target = Path(os.path.abspath(target))
    made: list[Path] = []
    d = target.parent
    while not os.path.lexists(d) and d != d.parent:
        made.append(d)
        d = d.parent
    stage: Path | None = None
    done = False
    try:
        for m in reversed(made):
            try:
                os.mkdir(m)
            except OSError as e:
                raise DeeployError(f"{target}: cannot create {m} ({e.strerror})") from None
        stage = target.parent / _temp_name(target.name, "new")
        try:
            os.mkdir(stage)
        except OSError as e:
            raise DeeployError(
                f"{target}: cannot write in {target.parent} ({e.strerror})"
            ) from None
        yield stage
        _commit_dir(stage, target, force)
        done = True
        clean_stale(target)
    finally:
        if not done:
            if stage is not None:
                shutil.rmtree(stage, ignore_errors=True)
            for m in made:  # innermost first; only if still empty
                with contextlib.suppress(OSError):
                    os.rmdir(m)


@contextlib.contextmanager
def staged_file(target: Path) -> Iterator[Path]:
    """A hidden path beside `target` (same suffix) to write the file to; on
    leaving the block without an exception it replaces `target`."""
    target = Path(os.path.abspath(target))
    tmp = target.parent / (_temp_name(target.name, "new") + target.suffix)
    done = False
    try:
        yield tmp
        if not tmp.is_file():
            raise FileNotFoundError(f"{tmp} was not written")
        os.replace(tmp, target)
        done = True
        clean_stale(target)
    finally:
        if not done:
            with contextlib.suppress(OSError):
                tmp.unlink()


def write_file(target: Path, text: str) -> None:
    """Write `text` to `target` whole or not at all."""
    with staged_file(target) as tmp:
        tmp.write_text(text)

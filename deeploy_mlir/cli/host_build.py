"""`make host` with the runtime's objects compiled once: the host build of a
generated project (`run`, `test`, `sweep --on host`) compiles the project's
runtime sources (runtime/kernels/*.c, runtime/host/pmsis_host.c) into a
cache keyed by their content, then compiles the generated sources and links
them with the cached objects, with the compiler and flags the project's
Makefile gives its `host` rule (asked from make itself: $(CC), $(CFLAGS),
$(NUM_CORES), $(SRCS), $(INCS)). The program is the one `make host` builds: gcc
compiles each file separately in either case; the runtime's files include
only runtime headers, so they are compiled without the project directory on
the include path and the key (the compiler's identity and version, the
flags, every file under runtime/include, runtime/host and runtime/kernels)
covers everything they read.

The cache is $DEEPLOY_MLIR_CACHE, else $XDG_CACHE_HOME/deeploy-mlir, else
~/.cache/deeploy-mlir (host-runtime/KEY/*.o); DEEPLOY_MLIR_CACHE=off (or a
directory that cannot be written) builds with `make host` as before. An
entry is written in a temporary directory and renamed into place, so
concurrent runs never see half an entry."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

#: the runtime's sources of the host rule besides $(SRCS)'s runtime/kernels/*.c
HOST_RUNTIME = ("runtime/host/pmsis_host.c",)
#: the runtime's files an object may read (the key)
KEYED_DIRS = ("runtime/include", "runtime/host", "runtime/kernels")
_QUERY = ("CC", "CFLAGS", "NUM_CORES", "SRCS", "INCS")


def cache_root() -> Path | None:
    """The cache directory, or None when caching is off."""
    env = os.environ.get("DEEPLOY_MLIR_CACHE")
    if env is not None:
        return None if env.strip().lower() in ("", "0", "off", "no") else Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "deeploy-mlir"
    try:
        return Path.home() / ".cache" / "deeploy-mlir"
    except RuntimeError:  # no home directory: no cache
        return None


def make_variables(project_dir: Path) -> dict[str, str] | None:
    """The host rule's variables as make sees them (environment overrides
    included), or None when make cannot say."""
    rule = "dm-print-%: ; @echo '$*=$($*)'"
    r = subprocess.run(
        ["make", "-s", "--no-print-directory", "-C", str(project_dir), "--eval", rule]
        + [f"dm-print-{v}" for v in _QUERY],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        return None
    out = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    return out if set(_QUERY) <= set(out) else None


def _compiler_identity(cc: list[str]) -> str:
    path = shutil.which(cc[0])
    if path is None:
        return ""
    st = Path(path).resolve().stat()
    r = subprocess.run([*cc, "--version"], capture_output=True, text=True)
    return f"{Path(path).resolve()}:{st.st_size}:{st.st_mtime_ns}:{r.stdout}"


def runtime_key(project_dir: Path, cc: list[str], flags: list[str]) -> str:
    h = hashlib.sha256()
    h.update(_compiler_identity(cc).encode())
    h.update(b"\0".join(a.encode() for a in (*cc, *flags)))
    for d in KEYED_DIRS:
        for f in sorted((project_dir / d).rglob("*")):
            if f.is_file():
                h.update(f"\0{f.relative_to(project_dir).as_posix()}\0".encode())
                h.update(f.read_bytes())
    return h.hexdigest()[:40]


def _object_name(src: str) -> str:
    return src.replace("/", "__").removesuffix(".c") + ".o"


def _compile_all(
    project_dir: Path, cc: list[str], flags: list[str], srcs: list[str], out: Path
) -> None:
    inc = ["-Iruntime/include", "-Iruntime/host"]
    jobs = max(1, min(4, os.cpu_count() or 1))
    running: list[tuple[str, subprocess.Popen[str]]] = []

    def finish(src: str, p: subprocess.Popen[str]) -> None:
        _, err = p.communicate()
        if p.returncode != 0:
            lines = err.splitlines()
            first = next((ln.strip() for ln in lines if "error" in ln), lines[-1] if lines else "")
            raise RuntimeError(f"building the generated C failed: {first}\n{err}")

    try:
        for src in srcs:
            cmd = [*cc, *flags, *inc, "-c", src, "-o", str(out / _object_name(src))]
            running.append(
                (src, subprocess.Popen(cmd, cwd=project_dir, stderr=subprocess.PIPE, text=True))
            )
            if len(running) == jobs:
                finish(*running.pop(0))
        while running:
            finish(*running.pop(0))
    finally:
        for _, p in running:
            p.kill()
            p.communicate()


def runtime_objects(
    project_dir: Path, cc: list[str], flags: list[str], srcs: list[str]
) -> list[Path] | None:
    """The runtime's objects from the cache (compiled into it when missing),
    or None when there is no usable cache."""
    root = cache_root()
    if root is None:
        return None
    entry = root / "host-runtime" / runtime_key(project_dir, cc, flags)
    objs = [entry / _object_name(s) for s in srcs]
    if all(o.is_file() for o in objs):
        return objs
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".new-", dir=entry.parent))
    except OSError:
        return None
    try:
        _compile_all(project_dir, cc, flags, srcs, tmp)
        try:
            os.rename(tmp, entry)  # atomic; another run may have put it there first
        except OSError:
            if not all(o.is_file() for o in objs):
                raise
    finally:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
    return objs


def build_host(project_dir: Path) -> bool:
    """Build build/host/network from the cached runtime objects; False when
    the cache is off or make cannot describe the rule (then `make host`)."""
    v = make_variables(project_dir)
    if v is None:
        return False
    cc = shlex.split(v["CC"])
    flags = [*shlex.split(v["CFLAGS"]), f"-DNUM_CORES={v['NUM_CORES']}"]
    srcs = shlex.split(v["SRCS"])
    runtime = [s for s in srcs if s.startswith("runtime/")] + list(HOST_RUNTIME)
    own = [s for s in srcs if not s.startswith("runtime/")]
    if not cc or not all((project_dir / s).is_file() for s in runtime):
        return False
    objs = runtime_objects(project_dir, cc, flags, runtime)
    if objs is None:
        return False
    (project_dir / "build" / "host").mkdir(parents=True, exist_ok=True)
    inc = [*shlex.split(v["INCS"]), "-Iruntime/host"]
    cmd = [*cc, *flags, *inc, *own, *map(str, objs), "-o", "build/host/network", "-lm"]
    r = subprocess.run(cmd, cwd=project_dir, capture_output=True, text=True)
    if r.returncode != 0:
        lines = (r.stdout + r.stderr).splitlines()
        first = next((ln.strip() for ln in lines if "error" in ln), lines[-1] if lines else "")
        raise RuntimeError(f"building the generated C failed: {first}\n{r.stdout}{r.stderr}")
    return True

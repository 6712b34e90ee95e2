"""The host build's runtime cache (deeploy_mlir/cli/host_build.py): `run`
on the host compiles runtime_c's objects once per content, compiler and
flags, and links each project with them. The program prints what `make
host` builds prints, bit for bit; a second build reuses the objects; a
changed runtime file, other flags (CFLAGS) or another compiler version make
a new entry; DEEPLOY_MLIR_CACHE=off builds with make as before."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES, run_cli, training_args

from deeploy_mlir.cli.host_build import build_host
from deeploy_mlir.cli.run import build_and_run

MLP = EXAMPLES / "mlp_small"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("hb") / "p"
    r = run_cli("lower", MLP, "-o", p, "-q", *training_args(MLP))
    assert r.code == 0, r.err
    return p


def _copy(project: Path, to: Path) -> Path:
    shutil.copytree(project, to)
    shutil.rmtree(to / "build", ignore_errors=True)
    return to


def _entries(cache: Path) -> list[Path]:
    d = cache / "host-runtime"
    return sorted(p for p in d.iterdir() if not p.name.startswith(".")) if d.is_dir() else []


def test_cached_build_prints_what_make_host_prints(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("DEEPLOY_MLIR_CACHE", str(cache))
    monkeypatch.delenv("CFLAGS", raising=False)
    cached = build_and_run(_copy(project, tmp_path / "a"), "host")
    (entry,) = _entries(cache)
    objs = sorted(entry.glob("*.o"))
    n_kernels = len(list((project / "runtime" / "kernels").glob("*.c")))
    assert len(objs) == n_kernels + 1  # + the PMSIS emulation
    stamps = [o.stat().st_mtime_ns for o in objs]
    # make host, as the Makefile says, in a copy
    made = _copy(project, tmp_path / "b")
    r = subprocess.run(["make", "-s", "-C", str(made), "host"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([str(made / "build/host/network")], capture_output=True, text=True)
    assert run.returncode == 0
    assert cached == run.stdout + run.stderr
    assert "DONE" in cached and "PARAM" in cached
    # again: the same entry, its objects not rebuilt
    assert build_and_run(_copy(project, tmp_path / "c"), "host") == cached
    assert _entries(cache) == [entry]
    assert [o.stat().st_mtime_ns for o in objs] == stamps


def test_the_key_follows_sources_and_flags(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("DEEPLOY_MLIR_CACHE", str(cache))
    monkeypatch.delenv("CFLAGS", raising=False)
    assert build_host(_copy(project, tmp_path / "a"))
    assert len(_entries(cache)) == 1
    # a changed kernel: a new entry, compiled from the changed file
    b = _copy(project, tmp_path / "b")
    gemm = b / "runtime" / "kernels" / "gemm.c"
    gemm.write_text(gemm.read_text() + "\n#error changed kernel\n")
    with pytest.raises(RuntimeError, match="changed kernel"):
        build_host(b)
    # other flags (the environment's CFLAGS, which the Makefile takes)
    monkeypatch.setenv("CFLAGS", "-std=gnu11 -ffp-contract=off -O1 -Wall -Wextra -Werror")
    assert build_host(_copy(project, tmp_path / "d"))
    assert len(_entries(cache)) == 2
    assert not any(p.name.startswith(".new-") for p in (cache / "host-runtime").iterdir())


def test_cache_off_builds_with_make(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPLOY_MLIR_CACHE", "off")
    p = _copy(project, tmp_path / "a")
    assert not build_host(p)
    out = build_and_run(p, "host")
    assert "DONE" in out
    assert (p / "build" / "host" / "network").is_file()

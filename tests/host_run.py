"""Lower a model with deeploy-mlir and run it on the host emulation, quickly.

The runtime (runtime_c/kernels and the PMSIS emulation) is compiled once per
test session with the flags of the generated Makefile's `host` rule and
linked with each project's own sources (Network.c, TrainingNetwork.c,
OptimizerNetwork.c, harness.c): the same C, built the same way, without
recompiling the kernels for every configuration. `make host` itself is what
`deeploy-mlir run` uses (tests/test_end_to_end.py, and one test per conv test
file)."""

from __future__ import annotations

import contextlib
import functools
import io
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from deeploy_mlir.cli import main, parse_run_output

ROOT = Path(__file__).resolve().parents[1]
RUNTIME = ROOT / "runtime_c"
#: the generated Makefile's host rule: $(CFLAGS) -DNUM_CORES=$(NUM_CORES) (8)
HOST_CFLAGS = (
    "-std=gnu11",
    "-ffp-contract=off",
    "-O2",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-DNUM_CORES=8",
)
GENERATED = ("Network.c", "TrainingNetwork.c", "OptimizerNetwork.c", "harness.c")


#: the sanitizer build of tests/test_sanitizers.py (any finding aborts)
SANITIZE_CFLAGS = (
    "-std=gnu11",
    "-ffp-contract=off",
    "-O1",
    "-g",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-DNUM_CORES=8",
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
)


@functools.cache
def runtime_objects(cflags: tuple[str, ...] = HOST_CFLAGS) -> tuple[Path, ...]:
    """The runtime's object files, compiled once per flag set (two at a time)."""
    out = Path(tempfile.mkdtemp(prefix="dm-runtime-"))
    srcs = [*sorted((RUNTIME / "kernels").glob("*.c")), RUNTIME / "host" / "pmsis_host.c"]
    inc = ["-I", str(RUNTIME / "include"), "-I", str(RUNTIME / "host")]
    objs: list[Path] = []
    running: list[subprocess.Popen[bytes]] = []
    for src in srcs:
        obj = out / f"{src.stem}.o"
        objs.append(obj)
        cmd = ["gcc", *cflags, *inc, "-c", str(src), "-o", str(obj)]
        running.append(subprocess.Popen(cmd, stderr=subprocess.PIPE))
        if len(running) == 2:
            _finish(running.pop(0))
    for p in running:
        _finish(p)
    return tuple(objs)


def _finish(p: subprocess.Popen[bytes]) -> None:
    _, err = p.communicate()
    if p.returncode != 0:
        raise RuntimeError(f"compiling the runtime failed: {err.decode()}")


@dataclass
class HostRun:
    #: every float graph output: [mini-batches, elements]
    outs: dict[str, np.ndarray]
    #: the parameters after training, flat
    params: dict[str, np.ndarray]
    project: Path
    stdout: str

    def source(self, name: str = "TrainingNetwork.c") -> str:
        return (self.project / name).read_text()


def lower(model: Path, project: Path, *options: str) -> None:
    """`deeploy-mlir lower MODEL -o PROJECT OPTIONS...` in this process."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["lower", str(model), "-o", str(project), *options])
    if code != 0:
        raise AssertionError(f"deeploy-mlir lower failed ({code}): {err.getvalue().strip()}")


def build_and_run(project: Path, sanitize: bool = False) -> HostRun:
    """Build the project's generated C against the session's runtime objects
    and run it; `sanitize`: with ASan/UBSan (SANITIZE_CFLAGS), and a finding
    is a failure."""
    cflags = SANITIZE_CFLAGS if sanitize else HOST_CFLAGS
    exe = project / "network_fast"
    inc = ["-I", str(project), "-I", str(project / "runtime" / "include")]
    inc += ["-I", str(project / "runtime" / "host")]
    srcs = [str(project / f) for f in GENERATED]
    objs = [str(o) for o in runtime_objects(cflags)]
    r = subprocess.run(
        ["gcc", *cflags, *inc, *srcs, *objs, "-o", str(exe), "-lm"],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        raise AssertionError(f"building the generated C failed:\n{r.stderr}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DM_HOST")}
    if sanitize:
        env |= {"ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "print_stacktrace=1"}
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600, env=env)
    if run.returncode != 0:
        tail = (run.stdout + run.stderr).strip().splitlines()[-5:]
        raise AssertionError(f"the program failed ({run.returncode}): " + "\n".join(tail))
    if sanitize:
        assert "runtime error" not in run.stderr and "AddressSanitizer" not in run.stderr
    outs, params = parse_run_output(run.stdout)
    return HostRun(
        {k: np.array(v, dtype=np.float32) for k, v in outs.items()},
        params,
        project,
        run.stdout + run.stderr,
    )


def lower_and_run(model: Path, project: Path, *options: str, sanitize: bool = False) -> HostRun:
    lower(model, project, *options)
    return build_and_run(project, sanitize)

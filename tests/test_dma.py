"""DMA end to end: every example, tiled at 16 KiB of L1, single and double
buffered, with its weights in L2 and forced to L3, trains on the host
emulation to onnxruntime-training's numbers; the emulation lands each async
copy at its wait (so a missing or late wait gives wrong numbers or an abort)
and counts the bytes and transfers of every hop, which must be the same for
single and double buffering (double buffering moves the same boxes, earlier),
except the L2 -> L1 fetches of loop-invariant input tiles, which double
buffering does once per loop and single buffering once per tile.

Also: a rank-3 transposing L3 -> L2 copy decomposed for GAP9, whose L3 RAM
request holds one transfer at a time: with the per-sub-copy waits the emitted
C moves the right bytes; with them disabled (`wait_each=false`) the
emulation catches the reused request."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    STACKS,
    example_dirs,
    load_expected,
    model_dirs,
    run_cli,
    stacks_of,
    train_like_expected,
)
from xdsl.passes import ModulePass

from deeploy_mlir.passes.dma_decompose import DmaDecompose

pytestmark = pytest.mark.usefixtures("fast_build")

EXAMPLES = example_dirs()


def _train(d: Path, tmp: Path, *opts: object) -> dict:
    """An arena budget of exactly 16,384 bytes (--l1 adds the model's stacks)."""
    return train_like_expected(d, tmp, "--l1", stacks_of(d) + 16384, *opts)


@pytest.mark.parametrize("target", ["pulp-open", "gap9"])
@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_single_and_double_buffering_match_and_move_the_same_bytes(
    d: Path, target: str, tmp_path: Path
) -> None:
    from deeploy_mlir.config import CompileConfig
    from deeploy_mlir.pipeline import pipeline, print_pipeline

    double = _train(d, tmp_path, "--target", target, "--buffering", "double")
    # the same tiles (chosen for two buffers per tile), single-buffered
    cfg = CompileConfig(target=target, l1=16384, buffering="single", tile_buffers=2)
    same_tiles = print_pipeline(pipeline(cfg))
    assert "buffers=2" in same_tiles and "dma-multibuffer" not in same_tiles
    single = _train(d, tmp_path, "--target", target, "--pass-pipeline", same_tiles)
    assert single["dma"]["L2->L1"]["bytes"] > 0
    # the same write-backs and L3 hops; into L1, double buffering fetches an
    # input tile that holds the same box in every iteration of its loop once
    # (dma-multibuffer), single buffering once per iteration: never more
    fetch = "L2->L1"
    assert {k: v for k, v in single["dma"].items() if k != fetch} == {
        k: v for k, v in double["dma"].items() if k != fetch
    }
    for unit in ("bytes", "transfers"):
        assert double["dma"][fetch][unit] <= single["dma"][fetch][unit]
    # and with the tiles chosen for one buffer the numbers hold as well
    _train(d, tmp_path, "--target", target, "--buffering", "single")


@pytest.mark.parametrize("buffering", ["single", "double", "double-l3"])
@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_weights_forced_to_l3(d: Path, buffering: str, tmp_path: Path) -> None:
    got = _train(d, tmp_path, "--target", "gap9", "--weights-in-l3", "--buffering", buffering)
    # every parameter is fetched from L3 at least once per training step
    exp = load_expected(d)
    n_mb = exp["steps"] * exp["accum"]
    param_bytes = sum(np.array(v, dtype=np.float32).nbytes for v in exp["params"].values())
    assert got["dma"]["L3->L2"]["bytes"] >= n_mb * param_bytes
    assert got["dma"]["L2->L3"]["bytes"] >= exp["steps"] * param_bytes  # SGD writes them


def test_an_l2_budget_too_small_puts_tensors_in_l3(tmp_path: Path) -> None:
    d = EXAMPLES[-1]
    # untiled, mlp_wide plans 37,476 bytes of L2 with no budget (`report --json`;
    # accumulate-fuse took its gradient temporaries): 30,000 is too small
    rep = run_cli("report", d, "--json", "--tiling", "none", "--l2", 30000)
    assert rep.code == 0, rep.err
    doc = json.loads(rep.out)
    assert doc["memory"]["L2"]["arena_bytes"] <= 30000
    assert doc["memory"]["L3"]["arena_bytes"] > 0
    _train(d, tmp_path, "--l2", 30000)


@pytest.mark.parametrize("d", EXAMPLES, ids=[d.name for d in EXAMPLES])
def test_l1_as_l2_gives_the_same_numbers(d: Path, tmp_path: Path) -> None:
    """L1 buffers in L2 and memcpy for the L2 <-> L1 copies: the same numbers
    (checked in _train), and no cluster-DMA transfer at all."""
    got = _train(d, tmp_path, "--l1-as-l2", "--target", "gap9")
    assert "L2->L1" not in got.get("dma", {}) or got["dma"]["L2->L1"]["transfers"] == 0
    proj = tmp_path / "proj"
    r = run_cli("lower", d, "-o", proj, "--l1", STACKS + 16384, "--l1-as-l2")
    assert r.code == 0, r.err
    text = (proj / "TrainingNetwork.c").read_text()
    assert "memcpy(" in text and "pi_cl_dma_cmd" not in text
    assert "pi_l2_malloc((int)MEMORYARENA_L1)" in (proj / "Network.c").read_text()


# -- the shared-request bug ------------------------------------------------

RANK3 = """
func.func @f(%a: memref<2x3x4xf32, "L3">, %b: memref<4x3x2xf32, "L2">) {
  %c0 = arith.constant 0 : index
  %t = dma.copy %a[%c0, %c0, %c0] -> %b[%c0, %c0, %c0] sizes [2, 3, 4] perm [2, 1, 0]
       : memref<2x3x4xf32, "L3">, memref<4x3x2xf32, "L2">
  dma.wait %t
  func.return
}
"""

MAIN = r"""
#include <stdio.h>
#include <string.h>
#include "pmsis.h"
#include "bsp/ram.h"
#include "bsp/ram/hyperram.h"
#include "dm_dma.h"

uint32_t dm_arena_L3;
struct pi_device dm_ram;

static void body(uint32_t a, float *b)
{
%s
}

int main(void)
{
    struct pi_hyperram_conf conf;
    float src[24], dst[24];
    pi_hyperram_conf_init(&conf);
    pi_open_from_conf(&dm_ram, &conf);
    if (pi_ram_open(&dm_ram) != 0) return 1;
    if (pi_ram_alloc(&dm_ram, &dm_arena_L3, sizeof src) != 0) return 1;
    for (int i = 0; i < 24; i++) src[i] = (float)i;
    pi_ram_write(&dm_ram, dm_arena_L3, src, sizeof src);
    body(dm_arena_L3, dst);
    for (int i = 0; i < 24; i++) printf("%%g\n", (double)dst[i]);
    return 0;
}
"""


def _statements(ir: str, passes: tuple[ModulePass, ...], args: list[str]) -> list[str]:
    """The C statements of the one function of `ir` after `passes`."""
    from xdsl.parser import Parser

    from deeploy_mlir.emitters.c import function_statements
    from deeploy_mlir.pipeline import make_context

    ctx = make_context()
    module = Parser(ctx, ir).parse_module()
    for p in passes:
        p.apply(ctx, module)
    fn = next(iter(module.ops))
    return function_statements(fn, args)  # type: ignore[arg-type]


def _build_and_run(tmp: Path, main: str) -> subprocess.CompletedProcess[str]:
    from deeploy_mlir.emitters.c import runtime_dir

    src = tmp / "main.c"
    src.write_text(main)
    rt = runtime_dir()
    exe = tmp / "main"
    build = subprocess.run(
        [
            "gcc",
            "-std=gnu11",
            "-ffp-contract=off",
            "-Wall",
            "-Wextra",
            "-Werror",
            f"-I{rt / 'host'}",
            f"-I{rt / 'include'}",
            str(src),
            str(rt / "host" / "pmsis_host.c"),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    return subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)


def _emit_and_run(tmp: Path, wait_each: bool) -> subprocess.CompletedProcess[str]:
    passes = (DmaDecompose(engine="gap9", wait_each=wait_each),)
    return _build_and_run(tmp, MAIN % "\n".join(_statements(RANK3, passes, ["a", "b"])))


def test_per_subcopy_waits_make_the_shared_request_safe(tmp_path: Path) -> None:
    r = _emit_and_run(tmp_path, wait_each=True)
    assert r.returncode == 0, r.stderr
    got = np.array([float(x) for x in r.stdout.split()], dtype=np.float32)
    want = np.arange(24, dtype=np.float32).reshape(2, 3, 4).transpose(2, 1, 0).ravel()
    np.testing.assert_array_equal(got, want)


def test_without_the_waits_the_emulation_catches_the_reused_request(tmp_path: Path) -> None:
    r = _emit_and_run(tmp_path, wait_each=False)
    assert r.returncode != 0
    assert "reused while a transfer is in flight" in r.stderr, r.stderr


# -- the cluster DMA's transfer ids ------------------------------------------

# Rows 0..19, columns 0..2 of the first two of four planes of a
# memref<20x4x6xf32> in L2 into an L1 tile: per row two runs of 12 bytes, 24
# apart -- rank 3 for mchan (rank 2), so dma-decompose peels box dim 0 into 20
# sub-copies of 2 rows each, all on one request.
RANK3_MCHAN = """
func.func @f(%a: memref<20x4x6xf32, "L2">, %b: memref<20x2x3xf32, "L1">) {
  %c0 = arith.constant 0 : index
  %t = dma.copy %a[%c0, %c0, %c0] -> %b[%c0, %c0, %c0] sizes [20, 2, 3]
       : memref<20x4x6xf32, "L2">, memref<20x2x3xf32, "L1">
  dma.wait %t
  func.return
}
"""

MAIN_MCHAN = r"""
#include <stdio.h>
#include "pmsis.h"
#include "dm_dma.h"

static void body(float *a, float *b)
{
%s
}

int main(void)
{
    static float src[20 * 4 * 6], dst[20 * 2 * 3];
    for (int i = 0; i < 20 * 4 * 6; i++) src[i] = (float)i;
    body(src, dst);
    for (int i = 0; i < 20 * 2 * 3; i++) printf("%%g\n", (double)dst[i]);
    return 0;
}
"""


def test_mchan_sub_copies_do_not_leak_transfer_ids(tmp_path: Path) -> None:
    """Each mchan transfer holds one of 16 transfer ids until the wait on its
    command, and a wait frees only the command's latest: the emitter waits for
    the previous sub-copy on the command before issuing the next, so 20
    sub-copies on one command run (and move the bytes numpy says). With those
    waits taken out of the emitted C, the emulation stops at the 17th issue,
    as the board would stall."""
    lines = _statements(RANK3_MCHAN, (DmaDecompose(engine="pulp-open"),), ["a", "b"])
    issues = [ln for ln in lines if "pi_cl_dma_cmd_2d(" in ln]
    assert len(issues) == 1  # one issue, in the loop of 20
    guards = [ln for ln in lines if "pi_cl_dma_cmd_wait(" in ln and ln.lstrip().startswith("if")]
    assert len(guards) == 1
    r = _build_and_run(tmp_path, MAIN_MCHAN % "\n".join(lines))
    assert r.returncode == 0, r.stderr
    got = np.array([float(x) for x in r.stdout.split()], dtype=np.float32)
    want = np.arange(20 * 4 * 6, dtype=np.float32).reshape(20, 4, 6)[:, :2, :3]
    np.testing.assert_array_equal(got, want.ravel())
    assert "dm-host: dma L2->L1 transfers=20 bytes=480" in r.stderr
    leaky = [ln for ln in lines if ln not in guards]
    r = _build_and_run(tmp_path, MAIN_MCHAN % "\n".join(leaky))
    assert r.returncode == 3
    assert "all 16 cluster-DMA transfer ids are taken (16 of them" in r.stderr, r.stderr


# -- determinism ---------------------------------------------------------------


def test_multibuffered_compile_is_byte_identical_across_hash_seeds(tmp_path: Path) -> None:
    """dma-multibuffer and dma-decompose order what they emit by the IR, not by
    hashes: cct, tiled at an L1 arena of 16 KiB and double buffered with its
    weights in L3, with tile-select's fallback to one buffer off so that
    every op keeps its rings (the cycle model finds one buffer faster for
    every op at this budget), compiles to the same bytes under three
    PYTHONHASHSEED values: the project and the IR (which holds no timing)."""
    import os
    import sys

    d = next(e for e in model_dirs() if e.name == "cct")
    l1 = ["--l1", str(stacks_of(d) + 16384)]
    r = subprocess.run(
        [
            *(sys.executable, "-m", "deeploy_mlir.cli", "lower", str(d)),
            *("-o", str(tmp_path / "x"), *l1, "--weights-in-l3"),
            *("--buffering", "double", "--print-pipeline"),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    # every op double-buffered (tile-select's fallback to one buffer off: at
    # this budget the cycle model finds one buffer faster for every op)
    p = r.stdout.strip().splitlines()[-1].replace("tile-select{", "tile-select{fallback=false ")
    assert "fallback=false" in p
    outs = []
    for seed in ("0", "1", "4242"):
        out = tmp_path / f"p{seed}"
        ir = tmp_path / f"ir{seed}.mlir"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        opts = [*l1, "--pass-pipeline", p, "--emit-ir", str(ir)]
        r = subprocess.run(
            [sys.executable, "-m", "deeploy_mlir.cli", "lower", str(d), "-o", str(out), *opts],
            capture_output=True,
            text=True,
            env=env,
        )
        assert r.returncode == 0, r.stderr
        files = {
            f.relative_to(out).as_posix(): f.read_bytes() for f in out.rglob("*") if f.is_file()
        }
        text = ir.read_text()
        outs.append((files, text))
    text = outs[0][1]
    assert "dma.request count 2" in text and "dma.slot" in text  # rings were made
    assert all(o == outs[0] for o in outs[1:])

"""runtime_c's kernels on GVSoC siracusa's 8-core cluster, in parallel: gemm
(and the transposed forms its gradients use), conv2d and its input and weight
gradients (the general and the depthwise 3x3 paths), softmax (its division
by multiply-adds), reduce_sum's column sums and layer norm, on ragged sizes (no
dimension a multiple of the team), at 1, 2, 3 and 8 cores, each twice with
the team's cores started in two different orders
(runtime_c/gvsoc's dm_gvsoc_fork_delay: core i starts i*D, then (7-i)*D,
busy-wait iterations late). Every run must give the bits of the host
emulation's run of the same team size: a kernel that races (two cores
writing one element, a core reading what another writes) gives bits that
depend on the order. The output buffers start as a NaN pattern, so a
skipped element shows.

A second test checks the DMA: mlp_wide, tiled, trains on GVSoC single- and
double-buffered with the same tiles, and the double-buffered steps take
fewer cycles (transfers overlap compute)."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, run_cli, stacks_of, training_args
from gvsoc_program import (
    RUNS,
    assert_one_result_per_kernel,
    c_floats,
    results,
    run_host_and_gvsoc,
    team_program,
)

from deeploy_mlir.passes.tile_select import TileSelect
from deeploy_mlir.pipeline import parse_pipeline, print_pipeline

RNG = np.random.default_rng(18)

# gemm: Y[M,N] = A[M,K] @ B[K,N] (+ C); conv: NCHW, 3x3, pad 1, stride 1 / 2
M, N, K = 13, 7, 9
#: where the K-tiled gemm splits K (three tiles of 4, 1 and 4 steps)
K_CUTS = (4, 5)
CB, CI, CH, CW, CO = 2, 3, 9, 7, 5
# depthwise (groups = channels), 3x3, stride 1, pad 1: two 8-column tiles that overlap
DB, DC, DH, DW = 2, 3, 9, 11
# softmax rows x len; reduce_sum over dim 0 of R0 x R1 x R2 (column sums);
# layer norm rows x cols (a remainder of 2 past the 4-column steps)
SR, SL = 9, 13
R0, R1, R2 = 6, 2, 19
LR, LC = 7, 22


GLOBALS = r"""
%(data)s
static float Y[%(ysize)d];

static void poison(void)
{
    uint32_t nan = 0x7fc0dead;
    for (unsigned i = 0; i < %(ysize)du; i++) memcpy(&Y[i], &nan, 4);
}
"""

#: the statements run for each team size n and start order
BODY = r"""
            dm_gemm_args_t g = {0};
            g.A = gA; g.B = gB; g.C = gC; g.Y = Y; g.M = %(M)d; g.N = %(N)d; g.K = %(K)d;
            g.alpha = 1.0f; g.beta = 1.0f; g.c_stride_m = %(N)d; g.c_stride_n = 1;
            poison(); pi_cl_team_fork(n, dm_gemm_fp32, &g);
            dump("gemm", n, order, Y, %(M)d * %(N)d);
            /* dB = A^T dY: A as [K,M] read transposed (here gA is [M,K]: K x N output) */
            dm_gemm_args_t ga = {0};
            ga.A = gA; ga.B = gB2; ga.C = NULL; ga.Y = Y; ga.M = %(K)d; ga.N = %(N)d; ga.K = %(M)d;
            ga.trans_a = 1; ga.alpha = 1.0f; ga.beta = 0.0f;
            poison(); pi_cl_team_fork(n, dm_gemm_fp32, &ga);
            dump("gemm_ta", n, order, Y, %(K)d * %(N)d);
            /* dA = dY B^T: B read transposed */
            dm_gemm_args_t gb = {0};
            gb.A = gB2; gb.B = gB; gb.C = NULL; gb.Y = Y; gb.M = %(M)d; gb.N = %(K)d; gb.K = %(N)d;
            gb.trans_b = 1; gb.alpha = 1.0f; gb.beta = 0.0f;
            poison(); pi_cl_team_fork(n, dm_gemm_fp32, &gb);
            dump("gemm_tb", n, order, Y, %(M)d * %(K)d);
            /* the same product with alpha and C, whole and in three K tiles
             * (acc_Y: from Y's partial sums; partial: raw sums before the last) */
            g.alpha = 0.5f; g.beta = -2.0f;
            poison(); pi_cl_team_fork(n, dm_gemm_fp32, &g);
            dump("gemm_alpha", n, order, Y, %(M)d * %(N)d);
            static const float *const kA[3] = {gAk0, gAk1, gAk2}, *const kB[3] = {gBk0, gBk1, gBk2};
            static const uint32_t kK[3] = {%(K0)d, %(K1)d, %(K2)d};
            poison();
            for (int kt = 0; kt < 3; kt++) {
                dm_gemm_args_t gk = g;
                gk.A = kA[kt]; gk.B = kB[kt]; gk.K = kK[kt];
                gk.acc_Y = kt > 0; gk.partial = kt < 2;
                pi_cl_team_fork(n, dm_gemm_fp32, &gk);
            }
            dump("gemm_ktiles", n, order, Y, %(M)d * %(N)d);
            for (int s = 1; s <= 2; s++) {
                unsigned oh = (%(CH)du - 1u) / (unsigned)s + 1u;
                unsigned ow = (%(CW)du - 1u) / (unsigned)s + 1u;
                dm_conv2d_args_t cv = {0};
                cv.X = cX; cv.W = cWt; cv.B = cBias; cv.Y = Y;
                cv.batch = %(CB)d; cv.in_ch = %(CI)d; cv.in_h = %(CH)d; cv.in_w = %(CW)d;
                cv.out_ch = %(CO)d; cv.k_h = 3; cv.k_w = 3; cv.out_h = oh; cv.out_w = ow;
                cv.groups = 1; cv.stride_h = (uint32_t)s; cv.stride_w = (uint32_t)s;
                cv.dil_h = 1; cv.dil_w = 1; cv.pad_top = 1; cv.pad_left = 1;
                poison(); pi_cl_team_fork(n, dm_conv2d_fp32, &cv);
                dump(s == 1 ? "conv_s1" : "conv_s2", n, order, Y, %(CB)du * %(CO)du * oh * ow);
                dm_conv2d_grad_args_t gr = {0};
                gr.dY = cdY; gr.X = cX; gr.W = cWt; gr.dX = Y; gr.dW = NULL; gr.dB = NULL;
                gr.batch = %(CB)d; gr.in_ch = %(CI)d; gr.in_h = %(CH)d; gr.in_w = %(CW)d;
                gr.out_ch = %(CO)d; gr.k_h = 3; gr.k_w = 3; gr.out_h = oh; gr.out_w = ow;
                gr.groups = 1; gr.stride_h = (uint32_t)s; gr.stride_w = (uint32_t)s;
                gr.dil_h = 1; gr.dil_w = 1; gr.pad_top = 1; gr.pad_left = 1;
                poison(); pi_cl_team_fork(n, dm_conv2d_grad_input_fp32, &gr);
                dump(s == 1 ? "conv_dx_s1" : "conv_dx_s2", n, order, Y,
                     %(CB)d * %(CI)d * %(CH)d * %(CW)d);
                gr.dX = NULL; gr.dW = Y; gr.dB = &Y[%(CO)d * %(CI)d * 9];
                poison(); pi_cl_team_fork(n, dm_conv2d_grad_weight_fp32, &gr);
                dump(s == 1 ? "conv_dw_s1" : "conv_dw_s2", n, order, Y,
                     %(CO)d * %(CI)d * 9 + %(CO)d);
            }
            /* depthwise 3x3, stride 1, pad 1, width >= 8: conv.c's own path */
            dm_conv2d_args_t dv = {0};
            dv.X = dX_; dv.W = dWt; dv.B = dBias; dv.Y = Y;
            dv.batch = %(DB)d; dv.in_ch = %(DC)d; dv.in_h = %(DH)d; dv.in_w = %(DW)d;
            dv.out_ch = %(DC)d; dv.k_h = 3; dv.k_w = 3; dv.out_h = %(DH)d; dv.out_w = %(DW)d;
            dv.groups = %(DC)d; dv.stride_h = 1; dv.stride_w = 1;
            dv.dil_h = 1; dv.dil_w = 1; dv.pad_top = 1; dv.pad_left = 1;
            poison(); pi_cl_team_fork(n, dm_conv2d_fp32, &dv);
            dump("dw", n, order, Y, %(DB)d * %(DC)d * %(DH)d * %(DW)d);
            dm_conv2d_grad_args_t dg = {0};
            dg.dY = ddY; dg.X = dX_; dg.W = dWt; dg.dX = Y; dg.dW = NULL; dg.dB = NULL;
            dg.batch = %(DB)d; dg.in_ch = %(DC)d; dg.in_h = %(DH)d; dg.in_w = %(DW)d;
            dg.out_ch = %(DC)d; dg.k_h = 3; dg.k_w = 3; dg.out_h = %(DH)d; dg.out_w = %(DW)d;
            dg.groups = %(DC)d; dg.stride_h = 1; dg.stride_w = 1;
            dg.dil_h = 1; dg.dil_w = 1; dg.pad_top = 1; dg.pad_left = 1;
            poison(); pi_cl_team_fork(n, dm_conv2d_grad_input_fp32, &dg);
            dump("dw_dx", n, order, Y, %(DB)d * %(DC)d * %(DH)d * %(DW)d);
            dg.dX = NULL; dg.dW = Y; dg.dB = &Y[%(DC)d * 9];
            poison(); pi_cl_team_fork(n, dm_conv2d_grad_weight_fp32, &dg);
            dump("dw_dw", n, order, Y, %(DC)d * 9 + %(DC)d);
            /* softmax (the division by fmaf), reduce_sum's column path, layer norm */
            dm_softmax_args_t sm = {0};
            sm.X = sX; sm.Y = Y; sm.outer = %(SR)d; sm.len = %(SL)d; sm.inner = 1;
            poison(); pi_cl_team_fork(n, dm_softmax_fp32, &sm);
            dump("softmax", n, order, Y, %(SR)d * %(SL)d);
            dm_reduce_args_t rd = {0};
            rd.X = rX; rd.Y = Y; rd.rank = 3; rd.reduce_mask = 1;
            rd.shape[0] = %(R0)d; rd.shape[1] = %(R1)d; rd.shape[2] = %(R2)d;
            poison(); pi_cl_team_fork(n, dm_reduce_sum_fp32, &rd);
            dump("reduce_cols", n, order, Y, %(R1)d * %(R2)d);
            dm_layernorm_args_t ln = {0};
            ln.X = lX; ln.scale = lS; ln.bias = lB; ln.Y = Y;
            ln.mean = &Y[%(LR)d * %(LC)d]; ln.inv_std = &Y[%(LR)d * %(LC)d + %(LR)d];
            ln.rows = %(LR)d; ln.cols = %(LC)d; ln.epsilon = 1e-5f;
            poison(); pi_cl_team_fork(n, dm_layernorm_fp32, &ln);
            dump("layernorm", n, order, Y, %(LR)d * %(LC)d + 2 * %(LR)d);
"""


def _program() -> str:
    ohw = CH * CW  # stride 1 output is the largest
    ga = RNG.standard_normal((M, K)).astype(np.float32)
    gb = RNG.standard_normal((K, N)).astype(np.float32)
    # three K tiles (K_CUTS), each copied contiguous as a tile buffer is
    bounds = [0, *K_CUTS, K]
    tiles = []
    for t, (k0, k1) in enumerate(itertools.pairwise(bounds)):
        tiles.append(c_floats(f"gAk{t}", np.ascontiguousarray(ga[:, k0:k1])))
        tiles.append(c_floats(f"gBk{t}", np.ascontiguousarray(gb[k0:k1])))
    data = "".join(
        [
            c_floats("gA", ga),
            c_floats("gB", gb),
            *tiles,
            c_floats("gC", RNG.standard_normal((M, N)).astype(np.float32)),
            c_floats("gB2", RNG.standard_normal((M, N)).astype(np.float32)),
            c_floats("cX", RNG.standard_normal((CB, CI, CH, CW)).astype(np.float32)),
            c_floats("cWt", RNG.standard_normal((CO, CI, 3, 3)).astype(np.float32)),
            c_floats("cBias", RNG.standard_normal(CO).astype(np.float32)),
            c_floats("cdY", RNG.standard_normal((CB, CO, CH, CW)).astype(np.float32)),
            c_floats("dX_", RNG.standard_normal((DB, DC, DH, DW)).astype(np.float32)),
            c_floats("dWt", RNG.standard_normal((DC, 1, 3, 3)).astype(np.float32)),
            c_floats("dBias", RNG.standard_normal(DC).astype(np.float32)),
            c_floats("ddY", RNG.standard_normal((DB, DC, DH, DW)).astype(np.float32)),
            # exps from 1 down to the subnormals (softmax's division path and
            # its fallback below 2^-100)
            c_floats("sX", RNG.uniform(-110.0, 0.0, (SR, SL)).astype(np.float32)),
            c_floats("rX", RNG.standard_normal((R0, R1, R2)).astype(np.float32)),
            c_floats("lX", (RNG.standard_normal((LR, LC)) * 2 + 1).astype(np.float32)),
            c_floats("lS", RNG.standard_normal(LC).astype(np.float32)),
            c_floats("lB", RNG.standard_normal(LC).astype(np.float32)),
        ]
    )
    ysize = max(
        M * N, K * N, M * K, CB * CO * ohw, CB * CI * CH * CW, CO * CI * 9 + CO, DB * DC * DH * DW
    )
    subs = {
        "data": data,
        "ysize": ysize,
        "M": M,
        "N": N,
        "K": K,
        "K0": K_CUTS[0],
        "K1": K_CUTS[1] - K_CUTS[0],
        "K2": K - K_CUTS[1],
        "CB": CB,
        "CI": CI,
        "CH": CH,
        "CW": CW,
        "CO": CO,
        "DB": DB,
        "DC": DC,
        "DH": DH,
        "DW": DW,
        "SR": SR,
        "SL": SL,
        "R0": R0,
        "R1": R1,
        "R2": R2,
        "LR": LR,
        "LC": LC,
    }
    return team_program("dm_kernels.h", GLOBALS % subs, BODY % subs)


def test_kernels_parallel_same_bits_as_host_no_race(tmp_path: Path) -> None:
    host_out, text = run_host_and_gvsoc(tmp_path, _program())
    want = results(host_out)
    assert len(want) == RUNS * 17
    got = results(text)
    assert set(got) == set(want)
    for key, bits in want.items():
        assert "7fc0dead" not in bits, f"{key}: the host run left an element unwritten"
        assert got[key] == bits, f"{key}: GVSoC's bits differ from the host emulation's"
    # K in tiles (acc_Y, partial) gives the whole product's bits
    for (kernel, n, order), bits in got.items():
        if kernel == "gemm_ktiles":
            assert bits == got[("gemm_alpha", n, order)], f"K tiles differ at {n} cores"
    assert got[("gemm_alpha", 8, 0)] != got[("gemm", 8, 0)]  # alpha and C did change Y
    # the orders and team sizes give one result per kernel (the kernels do not
    # split a sum across cores)
    assert_one_result_per_kernel(got)


#: the model and L1 arenas of the DMA test. Since accumulate-fuse (the
#: weight gradients' gemms write their accumulation buffers, copied in and
#: out per tile, in place: dma-multibuffer keeps those loops single-buffered),
#: mlp_wide at the same tiles measured before dma-multibuffer fetched loop-
#: invariant input tiles once: arena 16,384 double 863,418 against single
#: 862,850 (0.07% slower); 8,192: 1,066,044 against 1,072,120 (0.57% faster);
#: 4,096: 1,761,858 against 1,747,508 (0.8% slower). The cause, measured
#: per probe (bench/gvsoc.py --profile): the tiles are small, each copy's
#: transfer (about 130 cycles for 1 KiB) ends while the next copies are
#: issued (156 cycles each), so the waits cost their own instructions and
#: there is no transfer time to hide; double buffering's ring arithmetic and
#: the kernels' cycles moved by the ring layout (+-200 cycles a call on the
#: same code) decide. dma-multibuffer now fetches a loop-invariant input
#: tile once per loop (single buffering once per tile: fc1's input under its
#: N tiles), work single buffering does and double buffering does not; with
#: it, measured: 4,096 1,729,207 against 1,747,508 (1.0% faster), 8,192
#: 1,048,922 against 1,072,120 (2.2%), 16,384 857,832 against 862,850 (0.6%).
#: No tolerance: GVSoC is deterministic (a run gives the same cycles every
#: time), so double <= single is asserted as measured. The smallest margin
#: (5,018 cycles, 0.6%, at 16,384) is about 25 of the layout effects above
#: (200 cycles on one kernel call), not of a size one call's placement moves.
OVERLAP_MODEL, OVERLAP_ARENAS = "mlp_wide", (4096, 8192, 16384)


def _pipelines(d: Path, l1: int) -> dict[str, str]:
    """Double buffering's pass pipeline (`lower --print-pipeline`) with its
    tile-select made to keep two buffers for every op, and the same without
    dma-multibuffer (bench/gvsoc.py's single@double): the same tiles, single-
    or double-buffered. Left to itself, tile-select keeps single-buffered
    tiles where the cycle model finds them faster -- every op of the examples
    at these budgets, so that double buffering's default program is single
    buffering's. The tiles for two buffers in the arena are the tiles for one
    buffer in half of it (tile-select{buffers=1}, which weighs no single-
    buffered alternative)."""
    r = run_cli(
        *("lower", d, "-o", "unused", "--tiling", "tiled", "--buffering", "double"),
        *("--l1", str(l1), "--print-pipeline"),
    )
    assert r.code == 0, r.err
    passes = list(parse_pipeline(r.out.strip()))
    assert "dma-multibuffer" in [q.name for q in passes]
    sel = [i for i, q in enumerate(passes) if isinstance(q, TileSelect)]
    assert len(sel) == 1
    ts = passes[sel[0]]
    assert isinstance(ts, TileSelect) and ts.buffers == 2
    passes[sel[0]] = dataclasses.replace(ts, l1=ts.l1 // 2, buffers=1)
    return {
        "double": print_pipeline(passes),
        "single@double": print_pipeline([q for q in passes if q.name != "dma-multibuffer"]),
    }


def _cycles_and_tiles(
    tmp: Path, buffering: str, arena: int
) -> tuple[int, list[tuple[str, int]], int]:
    d = EXAMPLES / OVERLAP_MODEL
    out, keep = tmp / f"{buffering}.json", tmp / buffering
    # --l1: the arena's budget and the program's own cluster stacks
    l1 = stacks_of(d) + arena
    opts = ["--pass-pipeline", _pipelines(d, l1)[buffering], "--l1", str(l1)]
    r = run_cli("run", d, *training_args(d), *opts, "--on", "gvsoc", "--json", out, "--keep", keep)
    assert r.code == 0, r.err
    man = json.loads((keep / "manifest.json").read_text())
    # the tiles: each L1 buffer's name and bytes (a double-buffered ring holds
    # two tiles: name_ring, twice the bytes)
    tiles, rings = [], 0
    for b in man["buffers"]:
        if b["level"] == "L1":
            ring = b["name"].endswith("_ring")
            rings += ring
            tiles.append((b["name"].removesuffix("_ring"), b["bytes"] // (2 if ring else 1)))
    return sum(json.loads(out.read_text())["bench"]["train_cycles"]), sorted(tiles), rings


@pytest.mark.parametrize("arena", OVERLAP_ARENAS)
def test_double_buffering_overlaps_dma_on_gvsoc(tmp_path: Path, arena: int) -> None:
    """Double buffering against single buffering of the same tiles (its
    pipeline without dma-multibuffer): the same tiles and copies, and the
    double-buffered run takes no more cycles on GVSoC, at every arena (no
    tolerance: the simulator is deterministic, and the margin the invariant
    fetches give is above the layout's noise, see OVERLAP_ARENAS)."""
    single, tiles_s, rings_s = _cycles_and_tiles(tmp_path, "single@double", arena)
    double, tiles_d, rings_d = _cycles_and_tiles(tmp_path, "double", arena)
    print(f"{OVERLAP_MODEL} arena {arena} train cycles: single@double {single}, double {double}")
    assert tiles_s == tiles_d, "the two runs must use the same tiles"
    # something to overlap: double buffering's tiles are rings of two
    assert rings_s == 0 < rings_d
    assert double <= single

"""bench/step_kernels.py: the kernel calls of a step read from emitted C,
each counted by the trip counts of the loops around it."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import step_kernels as S  # noqa: E402

# the shape of the emitted step functions: a tile loop (3 trips) around a
# ring loop (2 trips, step 1) and a loop of step 2 (5 trips: 0, 2, 4, 6, 8)
SOURCE = """
void RunTrainingNetwork(void)
{
    for (uint32_t i1_1 = 0u; i1_1 < 3u; i1_1 += 1u) {
        for (uint32_t i2_2 = 0u; i2_2 < 2u; i2_2 += 1u) {
            if (((i2_2 + 1u) < 2u)) {
                pi_cl_dma_cmd(1, 2, 3, 4, &c);
            }
            { /* training.gemm */
                dm_gemm_args_t args = {
                    .A = ((float *)(dm_arena_L1 + 0u)),
                    .B = ((float *)(dm_arena_L1 + 64u)),
                    .C = NULL,
                    .Y = (((float *)(dm_arena_L1 + 128u)) + (i2_2 % 2u) * 16u),
                    .M = 43u,
                    .N = 64u,
                    .K = 64u,
                    .trans_a = 1u,
                    .trans_b = 0u,
                    .alpha = 1.e+00f,
                    .beta = 1.e+00f,
                };
                pi_cl_team_fork(NUM_CORES, dm_gemm_fp32, &args);
            }
        }
    }
    for (uint32_t i1_3 = 0u; i1_3 < 9u; i1_3 += 2u) {
        { /* training.conv2d_grad (dW, dB) */
            dm_conv2d_grad_args_t args = {
                .dY = ((float *)(dm_arena_L1 + 0u)),
                .X = ((float *)(dm_arena_L1 + 64u)),
                .W = ((float *)(dm_arena_L1 + 128u)),
                .dX = NULL,
                .dW = ((float *)(dm_arena_L1 + 256u)),
                .dB = NULL,
                .batch = 1u,
                .in_ch = 3u,
                .in_h = 8u,
                .in_w = 8u,
                .out_ch = 4u,
                .k_h = 3u,
                .k_w = 3u,
                .out_h = 8u,
                .out_w = 8u,
                .groups = 1u,
                .stride_h = 1u,
                .stride_w = 1u,
                .dil_h = 1u,
                .dil_w = 1u,
                .pad_top = 1u,
                .pad_left = 1u,
            };
            pi_cl_team_fork(NUM_CORES, dm_conv2d_grad_weight_fp32, &args);
        }
    }
    { /* training.relu */
        dm_unary_args_t args = {
            .X = ((float *)(dm_arena_L1 + 0u)),
            .size = 16u,
        };
        pi_cl_team_fork(NUM_CORES, dm_relu_fp32, &args);
    }
}
"""


def test_calls_are_counted_by_the_loops_around_them() -> None:
    calls = S.step_calls(SOURCE)
    by_fn = {c.fn: (c, n) for c, n in calls.items()}
    assert set(by_fn) == {"dm_gemm_fp32", "dm_conv2d_grad_weight_fp32", "dm_relu_fp32"}
    gemm, n = by_fn["dm_gemm_fp32"]
    assert n == 3 * 2
    assert (gemm.get("M"), gemm.get("N"), gemm.get("K"), gemm.get("trans_a")) == (43, 64, 64, 1)
    assert gemm.op == "training.gemm"
    assert set(gemm.pointers) == {"A", "B", "Y"}  # C is NULL, Y an expression
    dw, n = by_fn["dm_conv2d_grad_weight_fp32"]
    assert n == 5
    assert dw.op == "training.conv2d_grad (dW, dB)"
    assert set(dw.pointers) == {"dY", "X", "W", "dW"}
    assert by_fn["dm_relu_fp32"][1] == 1  # after the loops: once


def test_probe_case_sizes_the_buffers_from_the_fields() -> None:
    calls = S.step_calls(SOURCE)
    cases = {c.fn: S.probe_case(c) for c in calls if c.fn in S.FAMILIES}
    g = cases["dm_gemm_fp32"]
    assert g.macs == 43 * 64 * 64
    assert "a.A = l1f(2752u" in g.decl and "a.B = l1f(4096u" in g.decl
    assert "a.Y = l1f(2752u" in g.decl and "a.C =" not in g.decl
    assert g.shape == "M43 N64 K64 A^T B"
    w = cases["dm_conv2d_grad_weight_fp32"]
    assert w.family == "conv_dw" and w.macs == 4 * 8 * 8 * 3 * 9
    assert "a.dW = l1f(108u" in w.decl and "a.dX" not in w.decl

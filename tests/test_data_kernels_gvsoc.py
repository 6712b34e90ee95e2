"""The data-movement kernels' fast paths (tests/test_data_kernels.py) on
GVSoC siracusa's 8-core cluster: the 3x3 maxpool with and without indices
(padding on every border, odd sizes), its gradient split into row bands (3
planes for up to 8 cores), the 4-row blocked 2-D transpose and the row
copies of a 4-D permutation, a broadcast binary add and relu_grad, at 1, 2,
3 and 8 cores, each with the team's cores started in two orders
(dm_gvsoc_fork_delay, as tests/test_gvsoc_kernels.py). Every run must give
the host emulation's bits, every team the same bits: a core writing
another's element, or reading what another writes, would show. Outputs
start as a NaN pattern, so a skipped element shows too."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from gvsoc_program import (
    RUNS,
    assert_one_result_per_kernel,
    c_floats,
    results,
    run_host_and_gvsoc,
    team_program,
)

RNG = np.random.default_rng(31)

#: maxpool 3x3 stride 2 pad 1 on P planes of H x W (odd), outputs OH x OW
#: with one more row and column than the floor formula (bottom/right padding)
P, H, W = 3, 11, 9
OH, OW = (H + 2 - 3) // 2 + 2, (W + 2 - 3) // 2 + 2
#: transposes: [TA, TB] -> [TB, TA]; [1, 2, TR, TC] perm (0, 2, 1, 3)
TA, TB, TR, TC = 13, 10, 7, 9
YSIZE = max(P * OH * OW * 3, P * H * W, TA * TB, 2 * TR * TC)

GLOBALS = r"""
%(data)s
static float Y[%(ysize)d];
static int64_t IDX[%(P)d * %(OH)d * %(OW)d], IDX2[%(P)d * %(OH)d * %(OW)d];

static void poison(void)
{
    uint32_t nan = 0x7fc0dead;
    for (unsigned i = 0; i < %(ysize)du; i++) memcpy(&Y[i], &nan, 4);
    memset(IDX, 0x5a, sizeof(IDX));
}
"""

#: the statements run for each team size n and start order
BODY = r"""
            dm_pool2d_args_t mp = {0};
            mp.X = pX; mp.Y = Y; mp.indices = IDX; mp.planes = %(P)d; mp.in_h = %(H)d;
            mp.in_w = %(W)d; mp.out_h = %(OH)d; mp.out_w = %(OW)d; mp.k_h = 3; mp.k_w = 3;
            mp.stride_h = 2; mp.stride_w = 2; mp.dil_h = 1; mp.dil_w = 1;
            mp.pad_top = 1; mp.pad_left = 1;
            poison(); pi_cl_team_fork(n, dm_maxpool2d_fp32, &mp);
            dump("maxpool", n, order, Y, %(P)du * %(OH)du * %(OW)du);
            dump("maxpool_idx", n, order, IDX, 2u * %(P)du * %(OH)du * %(OW)du);
            mp.indices = NULL;
            poison(); pi_cl_team_fork(n, dm_maxpool2d_fp32, &mp);
            dump("maxpool_noidx", n, order, Y, %(P)du * %(OH)du * %(OW)du);
            /* the gradient of the indices the forward wrote (team 1's run) */
            dm_pool2d_args_t f = mp;
            f.Y = Y + %(P)d * %(OH)d * %(OW)d; f.indices = IDX2;
            pi_cl_team_fork(1, dm_maxpool2d_fp32, &f);
            dm_pool2d_grad_args_t g = {0};
            g.dY = pDY; g.indices = IDX2; g.dX = Y; g.planes = %(P)d; g.in_h = %(H)d;
            g.in_w = %(W)d; g.out_h = %(OH)d; g.out_w = %(OW)d; g.k_h = 3; g.k_w = 3;
            g.stride_h = 2; g.stride_w = 2; g.dil_h = 1; g.dil_w = 1; g.pad_top = 1;
            g.pad_left = 1;
            poison(); pi_cl_team_fork(n, dm_maxpool2d_grad_fp32, &g);
            dump("maxpool_grad", n, order, Y, %(P)du * %(H)du * %(W)du);
            dm_transpose_args_t tr = {0};
            tr.X = pT; tr.Y = Y; tr.rank = 2; tr.shape[0] = %(TA)d; tr.shape[1] = %(TB)d;
            tr.perm[0] = 1; tr.perm[1] = 0;
            poison(); pi_cl_team_fork(n, dm_transpose_fp32, &tr);
            dump("transpose_2d", n, order, Y, %(TA)du * %(TB)du);
            dm_transpose_args_t tr4 = {0};
            tr4.X = pT; tr4.Y = Y; tr4.rank = 4; tr4.shape[0] = 1; tr4.shape[1] = 2;
            tr4.shape[2] = %(TR)d; tr4.shape[3] = %(TC)d;
            tr4.perm[0] = 0; tr4.perm[1] = 2; tr4.perm[2] = 1; tr4.perm[3] = 3;
            poison(); pi_cl_team_fork(n, dm_transpose_fp32, &tr4);
            dump("transpose_rows", n, order, Y, 2u * %(TR)du * %(TC)du);
            dm_binary_args_t b = {0};
            b.A = pT; b.B = pX; b.Y = Y; b.rank = 2; b.shape[0] = %(TA)d; b.shape[1] = %(TB)d;
            b.a_strides[0] = %(TB)d; b.a_strides[1] = 1; b.b_strides[0] = 0; b.b_strides[1] = 1;
            b.op = DM_BINARY_ADD;
            poison(); pi_cl_team_fork(n, dm_binary_fp32, &b);
            dump("binary_bcast", n, order, Y, %(TA)du * %(TB)du);
            dm_relu_grad_args_t rg = {0};
            rg.dY = pT; rg.X = pX; rg.dX = Y; rg.size = %(TA)d * %(TB)d;
            poison(); pi_cl_team_fork(n, dm_relu_grad_fp32, &rg);
            dump("relu_grad", n, order, Y, %(TA)du * %(TB)du);
"""


def _program() -> str:
    x = np.floor(RNG.standard_normal(P * H * W) * 2).astype(np.float32)  # ties
    x[::13] = -0.0
    dy = RNG.standard_normal(P * OH * OW).astype(np.float32)
    tx = RNG.standard_normal(TA * TB).astype(np.float32)
    data = c_floats("pX", x) + c_floats("pDY", dy) + c_floats("pT", tx)
    subs = {"data": data, "ysize": YSIZE, "P": P, "H": H, "W": W, "OH": OH, "OW": OW}
    subs |= {"TA": TA, "TB": TB, "TR": TR, "TC": TC}
    return team_program("dm_kernels.h", GLOBALS % subs, BODY % subs)


def test_data_kernels_parallel_same_bits_as_host_no_race(tmp_path: Path) -> None:
    host_out, text = run_host_and_gvsoc(tmp_path, _program())
    want = results(host_out)
    assert len(want) == RUNS * 8
    got = results(text)
    assert set(got) == set(want)
    for key, bits in want.items():
        if key[0] != "maxpool_idx":
            assert "7fc0dead" not in bits, f"{key}: the host run left an element unwritten"
        else:
            assert "5a5a5a5a" not in bits, f"{key}: an index left unwritten"
        assert got[key] == bits, f"{key}: GVSoC's bits differ from the host emulation's"
    assert_one_result_per_kernel(got)

"""gemm.c's micro-tiles in the cycle model (deeploy_mlir/cost/kernels.py
`gemm_micro_tiles`, `gemm_share`; the board's `gemm_tiles`, measured by
bench/micro_tiles.py). Every count here is derived by hand from
runtime_c/kernels/gemm.c's dealing: dm_tiles (M, N >= 4, M not a multiple of
32 on 8 cores) deals the ceil(M/4) x ceil(N/4) tiles of 4 x 4 by dm_chunk
(ceil(units / 8) consecutive units a core); dm_rows deals the rows by
dm_chunk, per 4 rows N // 4 tiles of 4 x 4 and N % 4 of 4 x 1, per row left
N // 4 of 1 x 4 and N % 4 of 1 x 1."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from deeploy_mlir.cost.kernels import chunk_of, gemm_micro_tiles, gemm_share
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.targets.boards import GemmTiles, load_board


def test_dm_chunk_deals_consecutive_ceil_chunks() -> None:
    # 12 units on 8 cores: chunks of 2, cores 0-5 two each, 6-7 none
    assert [chunk_of(12, 8, c) for c in range(8)] == [2, 2, 2, 2, 2, 2, 0, 0]
    # 9 units: chunks of 2: 2, 2, 2, 2, 1, 0, 0, 0
    assert [chunk_of(9, 8, c) for c in range(8)] == [2, 2, 2, 2, 1, 0, 0, 0]


@pytest.mark.parametrize(
    ("m", "n", "core", "tiles"),
    [
        (8, 3, 0, (0, 0, 3)),  # N < 4: one row a core, three 1 x 1
        (24, 3, 7, (0, 0, 9)),  # three rows a core, N < 4: nine 1 x 1
        (32, 6, 3, (1, 2, 0)),  # M = 32: four rows a core, one 4 x 4, two 4 x 1
        (40, 3, 0, (0, 3, 3)),  # five rows: a block of 4 (three 4 x 1), a row (three 1 x 1)
        (2, 64, 1, (0, 16, 0)),  # M < 4: a row to cores 0 and 1, sixteen 1 x 4
        (2, 64, 2, (0, 0, 0)),
        (8, 6, 3, (1, 0, 0)),  # 2 x 2 tiles of 4 x 4: cores 0-3 one each
        (8, 6, 4, (0, 0, 0)),
        (43, 64, 0, (22, 0, 0)),  # 11 x 16 = 176 tiles: 22 a core (the CCT's tile)
    ],
)
def test_micro_tiles_as_gemm_c_deals_them(
    m: int, n: int, core: int, tiles: tuple[int, int, int]
) -> None:
    assert gemm_micro_tiles(m, n, 8, core) == tiles


def test_weights_of_one_leave_the_plain_split() -> None:
    """Without the board's weights the share is the busiest core's outputs:
    ceil(tiles / 8) x 16, or ceil(M / 8) rows of N."""
    assert gemm_share(43, 64, 8) == Fraction(22 * 16, 43 * 64)
    assert gemm_share(8, 3, 8) == Fraction(1, 8)
    assert gemm_share(8, 6, 8) == Fraction(16, 48)


def test_weighted_shares_derived_by_hand() -> None:
    e, s, a = Fraction(13, 10), Fraction(2), Fraction(3, 4)
    t = GemmTiles(1.3, 2.0, 0.75)
    # 8 x 3: three 1 x 1 a core, every partner as busy: 3 s of 24
    assert gemm_share(8, 3, 8, t) == 3 * s / 24
    # 32 x 6: one 4 x 4 and two 4 x 1 a core: 16 + 2 x 4 e of 192
    assert gemm_share(32, 6, 8, t) == (16 + 8 * e) / 192
    # 8 x 6: four 4 x 4 tiles on cores 0-3, partners 4-7 idle: 16 a of 48
    assert gemm_share(8, 6, 8, t) == 16 * a / 48
    # 12 x 12: 9 tiles, cores 0-3 two, core 4 one: core 0 shares one tile's
    # time with core 4 and runs the second alone (16 + 16 a); core 1's
    # partner 5 idles (32 a, less)
    assert gemm_share(12, 12, 8, t) == (16 + 16 * a) / 144
    # 2 x 64: cores 0, 1 sixteen 1 x 4 each, partners idle: 64 e a of 128
    assert gemm_share(2, 64, 8, t) == 64 * e * a / 128


def test_the_measured_board_prefers_fewer_busier_cores_to_one_by_one_tiles() -> None:
    """mlp_wide's fc2 (M 8, N 24, K 64, y = x w^T) at an L1 arena of 4,096
    bytes: tiles of N 3 (8 tiles; each core one row of three 1 x 1) against
    N 6 (4 tiles; cores 0-3 one 4 x 4 each). Measured on GVSoC
    (bench/micro_tiles.py's probes, warm calls): 1,560 and 2,916 cycles a
    call, 12,480 against 11,664 for the product. With siracusa's gemm_tiles
    the kernel's cycles rank them so; with every weight 1 the other way."""
    from deeploy_mlir.cost.events import compute_cycles

    b = load_board("siracusa")

    def product(n: int, tiles: GemmTiles | None) -> int:
        share = gemm_share(8, n, 8, tiles)
        return (24 // n) * compute_cycles(b, "gemm", 8 * n * 64, 1, 0, 8 * n, 0, share)

    assert product(6, b.gemm_tiles) < product(3, b.gemm_tiles)
    assert product(6, None) > product(3, None)


def test_board_checks_gemm_tiles(tmp_path: Path) -> None:
    base = load_board("siracusa")
    assert base.gemm_tiles.single > 1  # measured: 1 x 1 tiles cost more than the body
    text = (
        "name: b\ncores: 8\nclock_hz: 1\nlevels: {L1: 1024, L2: 4096, L3: 8192}\n"
        "engines:\n  d: {hop: L2-L1, bandwidth: 8, setup: 1, rank: 2, shared_request: false}\n"
        "  r: {hop: L3-L2, bandwidth: 1, setup: 1, rank: 2, shared_request: true}\n"
        "kernels: {gemm: {macs_per_cycle_per_core: 1}, conv: {macs_per_cycle_per_core: 1},"
        " elementwise: {macs_per_cycle_per_core: 1}, reduce: {macs_per_cycle_per_core: 1},"
        " loss: {macs_per_cycle_per_core: 1}, optimizer: {macs_per_cycle_per_core: 1}}\n"
    )
    f = tmp_path / "b.yaml"
    f.write_text(text)
    assert load_board(str(f)).gemm_tiles == GemmTiles()
    f.write_text(text + "gemm_tiles: {single: 0}\n")
    with pytest.raises(DeeployError, match=r"gemm_tiles\.single must be > 0"):
        load_board(str(f))
    f.write_text(text + "conv_tiles: {narrow: -1}\n")
    with pytest.raises(DeeployError, match=r"conv_tiles\.narrow must be > 0"):
        load_board(str(f))
    f.write_text(text + "gemm_tiles: {wide: 2}\n")
    with pytest.raises(DeeployError, match=r"gemm_tiles\.wide is not a known field"):
        load_board(str(f))


def test_narrow_channel_blocks_on_narrow_planes_cost_their_weight() -> None:
    """conv.c's one-channel path (`narrow_macs`): the forward splits its
    output channels, the input gradient its input channels, in blocks of 4;
    the last channels % 4 go one at a time, column by column on planes
    narrower than 8. Derived by hand with narrow = 5: 3 of 3 channels on a
    4 x 4 plane: every MAC 5x; 6 channels: 2 of 6; 8 channels (two blocks of
    4) or a plane 8 wide: none."""
    from deeploy_mlir.cost.kernels import Fork, narrow_macs
    from deeploy_mlir.dialects import training as T
    from deeploy_mlir.targets.boards import ConvTiles

    t = ConvTiles(5.0)
    fwd = Fork("conv", (), (), 1, (T.CONV_M, T.CONV_OW))
    sizes = [2, 3, 8, 4, 4, 3, 3, 4, 4]  # N M C OH OW KH KW IH IW
    assert narrow_macs(fwd, sizes, 6912, t) == 6912 * 5
    sizes[T.CONV_M] = 6  # blocks 4 + 2: 2 / 6 of the MACs 5x
    assert narrow_macs(fwd, sizes, 13824, t) == 13824 + 13824 * 2 // 6 * 4
    sizes[T.CONV_M] = 8
    assert narrow_macs(fwd, sizes, 18432, t) == 18432
    sizes[T.CONV_M], sizes[T.CONV_OW] = 3, 8  # 8 wide: conv.c's 1 x 8 tiles
    assert narrow_macs(fwd, sizes, 1000, t) == 1000
    dx = Fork("conv_dx", (), (), 1, (T.CONV_CG, T.CONV_IW))
    assert narrow_macs(dx, [2, 8, 3, 4, 4, 3, 3, 4, 4], 6912, t) == 6912 * 5
    assert narrow_macs(dx, [2, 8, 3, 4, 4, 3, 3, 4, 4], 6912, ConvTiles()) == 6912
    # a fork not of that path (dW, strided, grouped): none
    assert narrow_macs(Fork("conv_dw", (), ()), [2, 8, 3, 4, 4, 3, 3, 4, 4], 6912, t) == 6912


def test_conv_forks_name_their_channel_and_width_dims() -> None:
    """The forward's fork: output channels (M) and output width; the input
    gradient's: input channels (CG) and input width; the weight gradient's:
    none (its units are channel blocks x taps, not this path)."""
    from xdsl.parser import Parser

    from deeploy_mlir.cost.kernels import op_forks
    from deeploy_mlir.dialects import training as T
    from deeploy_mlir.pipeline import make_context

    text = """func.func @training_step(%x: memref<2x3x4x4xf32, "L1">, %w: memref<8x3x3x3xf32, "L1">,
        %dy: memref<2x8x4x4xf32, "L1">, %dx: memref<2x3x4x4xf32, "L1">,
        %dw: memref<8x3x3x3xf32, "L1">) {
      training.conv2d_grad ins(%dy, %x, %w : memref<2x8x4x4xf32, "L1">, memref<2x3x4x4xf32, "L1">,
          memref<8x3x3x3xf32, "L1">) outs(%dx, %dw : memref<2x3x4x4xf32, "L1">,
          memref<8x3x3x3xf32, "L1">) {grads = ["dX", "dW"], pads = array<i64: 1, 1, 1, 1>}
      func.return
    }"""
    m = Parser(make_context(), text).parse_module()
    op = next(o for o in m.walk() if isinstance(o, T.Conv2dGradOp))
    dx, dw = op_forks(op)
    assert (dx.family, dx.narrow) == ("conv_dx", (T.CONV_CG, T.CONV_IW))
    assert (dw.family, dw.narrow) == ("conv_dw", None)

"""The cycle model of an emitted schedule (deeploy_mlir.cost.schedule): a
hand-written two-op schedule (a double-buffered gemm tile loop fed from L3,
then a relu) against cycles derived here from each board's numbers; the MAC
count of every op family against hand counts; what the walker refuses.

Expected values come from the board files and the formulas of the docstrings
(setup + ceil(bytes / bandwidth), ceil(MACs / (throughput x cores))), never
from the model's own output."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from deeploy_mlir.cost.events import compute_cycles
from deeploy_mlir.cost.kernels import kernel_family, op_forks, op_macs, op_outputs, term_sum
from deeploy_mlir.cost.schedule import schedule_cost
from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.pipeline import make_context
from deeploy_mlir.targets.boards import Board, available_boards, load_board


def plain(board: Board) -> Board:
    """`board` without the per-transfer issue and per-call cycles (the
    arithmetic these hand computations check; test_issue_and_call_cycles
    checks those two)."""
    return replace(
        board,
        engines={n: replace(e, issue=0, copies=()) for n, e in board.engines.items()},
        kernels={n: replace(k, call=0, per_output=0.0, cold=0) for n, k in board.kernels.items()},
    )


BOARDS = [plain(load_board(n)) for n in available_boards()]


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def dma(board: Board, hop: str, nbytes: int) -> int:
    """setup + ceil(bytes / bandwidth) of the engine serving `hop` ("L2-L1" ...)."""
    (e,) = [e for e in board.engines.values() if "-".join(e.hop) == hop]
    return e.setup + math.ceil(nbytes / e.bandwidth)


def mac(board: Board, family: str, macs: int) -> int:
    return math.ceil(macs / (board.kernels[family].macs_per_cycle_per_core * board.cores))


# w (8x8 f32, 256 B) lives in L3: staged into L2, then copied to L1. The gemm
# y = a w^T runs in two row tiles of a (4x8 in L2 -> tiles of 2x8, 64 B) on a
# ring of two L1 slots: tile 0 is fetched before the loop, tile 1 is prefetched
# (scf.if i + 1 < 2) while tile 0 computes; each output tile (2x8, 64 B) is
# written back on its own request and waited for. Then relu on y in L2.
TWO_OPS = """
func.func @training_step(%a: memref<4x8xf32, "L2">, %w: memref<8x8xf32, "L3">,
                         %y: memref<4x8xf32, "L2">) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %wl2 = memref.alloc() : memref<8x8xf32, "L2">
  %t0 = dma.copy %w[%c0, %c0] -> %wl2[%c0, %c0] sizes [8, 8]
        : memref<8x8xf32, "L3">, memref<8x8xf32, "L2">
  dma.wait %t0
  %wt = memref.alloc() : memref<8x8xf32, "L1">
  %ring = memref.alloc() : memref<2x2x8xf32, "L1">
  %yt = memref.alloc() : memref<2x8xf32, "L1">
  %req = dma.request count 2
  %t1 = dma.copy %wl2[%c0, %c0] -> %wt[%c0, %c0] sizes [8, 8]
        : memref<8x8xf32, "L2">, memref<8x8xf32, "L1">
  %s0 = dma.slot %ring[%c0] : memref<2x2x8xf32, "L1"> -> memref<2x8xf32, "L1">
  %p0 = dma.copy %a[%c0, %c0] -> %s0[%c0, %c0] sizes [2, 8] on %req[%c0]
        : memref<4x8xf32, "L2">, memref<2x8xf32, "L1">
  dma.wait %t1
  scf.for %i = %c0 to %c2 step %c1 {
    %k = arith.remui %i, %c2 : index
    %s = dma.slot %ring[%k] : memref<2x2x8xf32, "L1"> -> memref<2x8xf32, "L1">
    dma.wait %req[%k]
    %n = arith.addi %i, %c1 : index
    %more = arith.cmpi ult, %n, %c2 : index
    scf.if %more {
      %kn = arith.remui %n, %c2 : index
      %sn = dma.slot %ring[%kn] : memref<2x2x8xf32, "L1"> -> memref<2x8xf32, "L1">
      %row = arith.muli %n, %c2 : index
      %p = dma.copy %a[%row, %c0] -> %sn[%c0, %c0] sizes [2, 8] on %req[%kn]
           : memref<4x8xf32, "L2">, memref<2x8xf32, "L1">
    }
    training.gemm ins(%s, %wt : memref<2x8xf32, "L1">, memref<8x8xf32, "L1">)
                  outs(%yt : memref<2x8xf32, "L1">) {trans_b}
    %orow = arith.muli %i, %c2 : index
    %o = dma.copy %yt[%c0, %c0] -> %y[%orow, %c0] sizes [2, 8]
         : memref<2x8xf32, "L1">, memref<4x8xf32, "L2">
    dma.wait %o
  }
  dma.wait %req
  training.relu ins(%y : memref<4x8xf32, "L2">) outs(%y : memref<4x8xf32, "L2">)
  func.return
}
func.func @optimizer_step(%w: memref<8x8xf32, "L2">, %g: memref<8x8xf32, "L2">,
                          %lr: memref<1xf32, "L2">) {
  training.sgd ins(%w, %g, %lr : memref<8x8xf32, "L2">, memref<8x8xf32, "L2">, memref<1xf32, "L2">)
               outs(%w : memref<8x8xf32, "L2">)
  func.return
}
"""


@pytest.mark.parametrize("board", BOARDS, ids=[b.name for b in BOARDS])
def test_a_hand_computed_two_op_schedule(board: Board) -> None:
    cost = schedule_cost(parse(TWO_OPS), board)
    r = dma(board, "L3-L2", 256)  # w: L3 -> L2
    m_w = dma(board, "L2-L1", 256)  # w: L2 -> L1
    m_a = dma(board, "L2-L1", 64)  # one tile of a
    m_y = dma(board, "L2-L1", 64)  # one tile of y
    # M N K of one tile: gemm splits its M = 2 rows over the cores, so the
    # cluster takes one core's row: 8 x 8 MACs at one core's throughput; the
    # row is two 1 x 4 micro-tiles (`edge` x the body's cycles a MAC) on
    # cores 0 and 1, whose FPU partners 4 and 5 idle (`alone`)
    gt = board.gemm_tiles
    weight = Fraction(repr(gt.edge)) * Fraction(repr(gt.alone))
    rate = Fraction(repr(board.kernels["gemm"].macs_per_cycle_per_core))
    c = math.ceil(8 * 8 * weight / rate)
    e = mac(board, "elementwise", 4 * 8)
    # the cluster waits for w in L2 (r), then w in L1 (r + m_w; tile 0 queues
    # behind it on the cluster DMA) and tile 0: t0 = r + m_w + m_a. Tile 1's
    # copy starts at t0 (the queue is empty) while tile 0 computes; tile 0's
    # write-back starts when both the gemm and tile 1's copy are done.
    t0 = r + m_w + m_a
    t1 = max(t0 + m_a, t0 + c) + m_y
    # tile 1 landed at t0 + m_a <= t1: no stall; its write-back follows its gemm
    t2 = t1 + c + m_y
    train = cost["train"]
    assert train.cycles == t2 + e
    mchan = next(n for n, x in board.engines.items() if x.hop == ("L2", "L1"))
    ram = next(n for n, x in board.engines.items() if x.hop == ("L3", "L2"))
    assert train.timeline.dma_busy == {mchan: m_w + 2 * m_a + 2 * m_y, ram: r}
    assert train.timeline.compute_busy == 2 * c + e
    assert train.timeline.roofline == max(2 * c + e, m_w + 2 * m_a + 2 * m_y, r)
    gemm, relu = train.ops
    assert (gemm.calls, gemm.macs, gemm.compute) == (2, 256, 2 * c)
    # stalls: before tile 0 (t0), before tile 1 (the wait for tile 0's write-back)
    assert gemm.stall == t0 + (t1 - t0 - c)
    assert (relu.calls, relu.compute, relu.stall) == (1, e, m_y)
    assert train.tail == 0
    assert train.hops == {
        "L3->L2": [1, 256],
        "L2->L1": [3, 256 + 2 * 64],
        "L1->L2": [2, 2 * 64],
    }
    # the optimizer step: one SGD on L2 (one "MAC" per element)
    opt = cost["optimizer"]
    assert opt.cycles == mac(board, "optimizer", 64) and opt.transfers == 0


def test_single_buffering_the_same_copies_is_slower_by_the_overlap() -> None:
    """Without the prefetch (tile 1 fetched inside iteration 1, after tile 0's
    write-back) the schedule loses exactly the overlap of tile 1's copy. The
    board's gemm runs at half its calibrated rate, so that the kernel is
    longer than the copy whatever the calibration says (the copy then hides
    whole under it: the loss is the copy)."""
    board = load_board("siracusa")
    gemm = board.kernels["gemm"]
    slow = replace(gemm, macs_per_cycle_per_core=gemm.macs_per_cycle_per_core / 2)
    board = replace(board, kernels={**board.kernels, "gemm": slow})
    single = TWO_OPS.replace("%more = arith.cmpi ult, %n, %c2", "%more = arith.cmpi ugt, %n, %c2")
    single = single.replace(
        "    dma.wait %req[%k]\n",
        "    %mine = arith.muli %i, %c2 : index\n"
        "    %fetch = arith.cmpi ugt, %i, %c0 : index\n"
        "    scf.if %fetch {\n"
        "      %q = dma.copy %a[%mine, %c0] -> %s[%c0, %c0] sizes [2, 8] on %req[%k]\n"
        '           : memref<4x8xf32, "L2">, memref<2x8xf32, "L1">\n'
        "    }\n"
        "    dma.wait %req[%k]\n",
    )
    d, s = schedule_cost(parse(TWO_OPS), board), schedule_cost(parse(single), board)
    # a tile of a: 2 whole rows, one contiguous (1-D) copy into L1
    setup, bw = board.engine_between("L2", "L1").copy_cost("in-1d")
    m_a = setup + math.ceil(Fraction(64) / Fraction(repr(bw)))
    c = mac(board, "gemm", 128)
    assert m_a < c  # the regime of the claim
    assert s["train"].hops == d["train"].hops  # the same copies
    assert s["train"].cycles - d["train"].cycles == m_a
    assert s["train"].timeline.roofline == d["train"].timeline.roofline


def test_waits_on_requests_nothing_was_issued_on_return_at_once() -> None:
    text = """
    func.func @training_step(%a: memref<8xf32, "L2">) {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %t = memref.alloc() : memref<8xf32, "L1">
      %req = dma.request count 3
      %p = dma.copy %a[%c0] -> %t[%c0] sizes [8] on %req[%c0]
          : memref<8xf32, "L2">, memref<8xf32, "L1">
      dma.wait %req[%c2]
      training.relu ins(%t : memref<8xf32, "L1">) outs(%t : memref<8xf32, "L1">)
      dma.wait %req
      training.relu ins(%t : memref<8xf32, "L1">) outs(%t : memref<8xf32, "L1">)
      func.return
    }
    """
    b = load_board("gap9_evk")
    cost = schedule_cost(parse(text), b)["train"]
    # the first relu starts at 0 (slot 2 is idle); the wait on the whole ring
    # covers slot 0's copy, so the second relu starts when it has landed
    e, m = mac(b, "elementwise", 8), dma(b, "L2-L1", 32)
    assert e < m
    assert [o.stall for o in cost.ops] == [0, m - e]
    assert cost.cycles == m + e


@pytest.mark.parametrize(
    ("text", "err"),
    [
        (
            'func.func @training_step(%n: index, %a: memref<8xf32, "L2">) {\n'
            "  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n"
            "  scf.for %i = %c0 to %n step %c1 {\n  }\n  func.return\n}",
            "cost model: @training_step: scf.for uses a value that is not a static index",
        ),
        (
            'func.func @training_step(%a: memref<8xf32, "L2">) {\n'
            '  %v = "test.op"() : () -> index\n  func.return\n}',
            "cost model: cannot run test.op (not part of a schedule)",
        ),
    ],
    ids=["dynamic_trip_count", "unknown_op"],
)
def test_what_the_walker_refuses(text: str, err: str) -> None:
    ctx = make_context()
    ctx.allow_unregistered = True
    module = Parser(ctx, text).parse_module()
    with pytest.raises(DeeployError, match=err.replace("(", r"\(").replace(")", r"\)")):
        schedule_cost(module, load_board("siracusa"))


# --------------------------------------------------------------------------
# MACs per op family

OPS = """
func.func @ops(%x: tensor<2x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %wd: tensor<4x1x3x3xf32>,
               %wg: tensor<6x2x3x3xf32>, %dy: tensor<2x6x8x8xf32>, %a: tensor<5x7xf32>,
               %b: tensor<3x7xf32>, %l: tensor<5xi64>, %d: tensor<2x4x4x4xf32>,
               %i: tensor<2x4x4x4xi64>,
               %lr: tensor<1xf32>, %m: tensor<7x3xf32>) {
  %g = training.gemm ins(%a, %b : tensor<5x7xf32>, tensor<3x7xf32>) {trans_b} -> tensor<5x3xf32>
  %mm = training.matmul ins(%a, %m : tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  %c = training.conv2d ins(%x, %w : tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>)
      {pads = array<i64: 1, 1, 1, 1>}
      -> tensor<2x6x8x8xf32>
  %cd = training.conv2d ins(%x, %wd : tensor<2x4x8x8xf32>, tensor<4x1x3x3xf32>)
      {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      -> tensor<2x4x4x4xf32>
  %cg = training.conv2d ins(%x, %wg : tensor<2x4x8x8xf32>, tensor<6x2x3x3xf32>)
      {pads = array<i64: 1, 1, 1, 1>}
      -> tensor<2x6x8x8xf32>
  %dx, %dw, %db = training.conv2d_grad ins(%dy, %x, %w
      : tensor<2x6x8x8xf32>, tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>)
      {pads = array<i64: 1, 1, 1, 1>}
      -> tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>
  %dw1 = training.conv2d_grad ins(%dy, %x, %w
      : tensor<2x6x8x8xf32>, tensor<2x4x8x8xf32>, tensor<6x4x3x3xf32>)
      {pads = array<i64: 1, 1, 1, 1>, outputs = ["dW"]}
      -> tensor<6x4x3x3xf32>
  %p, %pi = training.maxpool2d ins(%x : tensor<2x4x8x8xf32>)
      {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      -> tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>
  %pg = training.maxpool2d_grad ins(%d, %i : tensor<2x4x4x4xf32>, tensor<2x4x4x4xi64>)
      {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      -> tensor<2x4x8x8xf32>
  %av = training.avgpool2d ins(%x : tensor<2x4x8x8xf32>)
      {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}
      -> tensor<2x4x4x4xf32>
  %r = training.relu ins(%a : tensor<5x7xf32>) -> tensor<5x7xf32>
  %s = training.reduce_sum ins(%a : tensor<5x7xf32>) {axes = array<i64: 0>} -> tensor<7xf32>
  %loss, %lp = training.softmax_cross_entropy_loss ins(%a, %l : tensor<5x7xf32>, tensor<5xi64>)
      -> tensor<f32>, tensor<5x7xf32>
  %u = training.sgd ins(%a, %a, %lr : tensor<5x7xf32>, tensor<5x7xf32>, tensor<1xf32>)
      -> tensor<5x7xf32>
  func.return
}
"""

CONV = 2 * 6 * 8 * 8 * 4 * 3 * 3  # N M OH OW C/g KH KW, regular 3x3 pad 1
EXPECTED_MACS = [
    ("gemm", 5 * 3 * 7),
    ("gemm", 5 * 3 * 7),
    ("conv", CONV),
    # depthwise, stride 2: one input channel per output; conv.c's general
    # (strided) path, not its depthwise 3x3 path
    ("grouped_s", 2 * 4 * 4 * 4 * 1 * 3 * 3),
    ("conv", 2 * 6 * 8 * 8 * 2 * 3 * 3),  # 2 groups: 2 input channels per output
    ("conv", 2 * CONV + 2 * 6 * 8 * 8),  # dX and dW one conv each, dB one per dY element
    ("conv", CONV),
    ("maxpool", 2 * 4 * 4 * 4 * 2 * 2),  # window taps
    ("maxpool_grad", 2 * 4 * 4 * 4 * 2 * 2),
    ("reduce", 2 * 4 * 4 * 4 * 3 * 3),  # average pooling: the reduce family
    ("elementwise", 35),
    ("reduce_sum", 35),
    ("loss", 35),
    ("optimizer", 35),
]


def test_macs_and_families_of_every_op_family() -> None:
    fn = next(o for o in parse(OPS).ops if isinstance(o, func.FuncOp))
    ops = [o for o in fn.body.block.ops if isinstance(o, T.TrainingComputeOp)]
    assert [(kernel_family(o), op_macs(o)) for o in ops] == EXPECTED_MACS


def test_conv_gradient_forks_and_outputs() -> None:
    """conv2d_grad's input gradient and its weight and bias gradients are
    kernel calls of their own families; each counts the elements of the
    outputs it writes (dX [2,4,8,8]; dW [6,4,3,3] and dB [6])."""
    fn = next(o for o in parse(OPS).ops if isinstance(o, func.FuncOp))
    ops = [o for o in fn.body.block.ops if isinstance(o, T.TrainingComputeOp)]
    grad, dw_only = ops[5], ops[6]
    forks = op_forks(grad)
    sizes = grad.iteration_space().dims
    got = [(f.family, term_sum(f.macs, sizes), term_sum(f.outputs, sizes), f.calls) for f in forks]
    assert got == [
        ("conv_dx", CONV, 2 * 4 * 8 * 8, 1),
        ("conv_dw", CONV + 2 * 6 * 8 * 8, 6 * 4 * 3 * 3 + 6, 1),
    ]
    assert op_outputs(grad) == 2 * 4 * 8 * 8 + 6 * 4 * 3 * 3 + 6
    (f,) = op_forks(dw_only)
    assert (f.family, term_sum(f.outputs, sizes)) == ("conv_dw", 6 * 4 * 3 * 3)
    # an op of one kernel call: its own family, all its outputs
    relu = ops[10]
    (f,) = op_forks(relu)
    assert (f.family, term_sum(f.outputs, relu.iteration_space().dims)) == ("elementwise", 35)


COLD = """
func.func @training_step(%a: memref<64xf32, "L1">, %b: memref<64xf32, "L1">,
                         %lr: memref<1xf32, "L1">) {
  training.relu ins(%a : memref<64xf32, "L1">) outs(%b : memref<64xf32, "L1">)
  training.relu ins(%b : memref<64xf32, "L1">) outs(%a : memref<64xf32, "L1">)
  training.sgd ins(%a, %b, %lr : memref<64xf32, "L1">, memref<64xf32, "L1">, memref<1xf32, "L1">)
      outs(%b : memref<64xf32, "L1">)
  training.relu ins(%b : memref<64xf32, "L1">) outs(%a : memref<64xf32, "L1">)
  func.return
}
"""


def test_a_call_after_another_kernels_is_cold() -> None:
    """The first relu and the relu after the sgd follow another kernel (or
    none): cold; the second relu follows a relu: warm."""
    board = load_board("siracusa")
    cost = schedule_cost(parse(COLD), board)
    relu0, relu1, sgd, relu2 = cost["train"].ops
    warm = compute_cycles(board, "elementwise", 64, 1, 0, 64, 0)
    cold = compute_cycles(board, "elementwise", 64, 1, 0, 64, 1)
    assert board.kernels["elementwise"].cold > 0 and cold > warm
    assert (relu0.compute, relu1.compute, relu2.compute) == (cold, warm, cold)
    assert sgd.compute == compute_cycles(board, "optimizer", 64, 1, 0, 64, 1)

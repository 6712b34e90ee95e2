"""What each training op costs the cluster: its kernel family (whose throughput
a board gives, `targets.boards.KERNEL_FAMILIES`) and its MAC count.

MACs are a function of the op's iteration space (`IterationSpaceInterface`),
so a tile of an op costs what its tile shapes say:

- gemm / matmul: M·N·K (the space is (M, N, K)); batch_matmul: that per
  batch (its space is (batch.., M, N, K): every dim's product);
- conv2d: N·M·OH·OW·(C/groups)·KH·KW -- the space without the input-position
  dims of its sliding windows (and the whole-channel dim of grouped convs);
  conv2d_grad: that once per dX and dW it computes, plus N·M·OH·OW for dB;
- pooling and its gradients: the window taps, N·C·OH·OW·KH·KW; global average
  pooling: N·C·H·W;
- elementwise ops, accumulation and SGD: one per output element; reduce_sum
  and the loss ops: one per input element (their spaces are those shapes);
  split and concat: one per element moved (each part's elements); gather:
  one per output element; gather_grad: one per dX element (the zeroing) and
  one per dY element (the adds);
  any other op: the product of its iteration-space dims.

For families that do not multiply-accumulate, one "MAC" is one element
operation, as the board files say.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from xdsl.ir.affine import AffineDimExpr

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.targets.boards import ConvTiles, GemmTiles

#: kernel family of each compute op, by op name (the board gives a
#: throughput per family). Softmax, gelu and its gradient (exp, erf in
#: software) have families of their own (a board without them: the loss
#: family's); so do layer norm and its gradient (norm, norm_grad), max
#: pooling and its gradient (maxpool, maxpool_grad) and the sum and mean
#: reductions (reduce_sum) (a board without them: the reduce family's, as
#: softmax's gradient, a reduction and a scale per row, and the other
#: pooling ops); broadcasting binary ops, transposes and batched matmuls
#: their own (a board without them: elementwise's and gemm's)
FAMILY: dict[str, str] = {
    "training.gemm": "gemm",
    "training.matmul": "gemm",
    "training.batch_matmul": "batch_matmul",
    "training.conv2d": "conv",
    "training.conv2d_grad": "conv",
    "training.binary": "binary",
    "training.relu": "elementwise",
    "training.relu_grad": "elementwise",
    "training.copy": "elementwise",
    "training.reshape": "elementwise",
    "training.transpose": "transpose",
    "training.accumulate": "elementwise",
    "training.reduce_sum": "reduce_sum",
    "training.reduce_mean": "reduce_sum",
    "training.layer_norm": "norm",
    "training.layer_norm_grad": "norm_grad",
    "training.maxpool2d": "maxpool",
    "training.maxpool2d_grad": "maxpool_grad",
    "training.avgpool2d": "reduce",
    "training.avgpool2d_grad": "reduce",
    "training.global_avgpool": "reduce",
    "training.global_avgpool_grad": "reduce",
    "training.softmax_cross_entropy_loss": "loss",
    "training.softmax_cross_entropy_loss_grad": "loss",
    "training.softmax": "softmax",
    "training.softmax_grad": "reduce",
    "training.gelu": "gelu",
    "training.gelu_grad": "gelu_grad",
    "training.sgd": "optimizer",
    "training.batch_norm": "reduce",
    "training.batch_norm_grad": "reduce",
    # dm_unary_ext_fp32 / dm_unary_grad_fp32: one switch on the kind per
    # element, and the activations they exist for (sigmoid, tanh, SiLU) call
    # expf: the loss family's throughput
    "training.unary": "loss",
    "training.unary_grad": "loss",
    "training.compare": "elementwise",
    "training.logical": "elementwise",
    "training.not": "elementwise",
    "training.where": "elementwise",
    "training.cast": "elementwise",
    "training.clip": "elementwise",
    "training.adamw": "optimizer",
    "training.step_count": "elementwise",
    "training.log_softmax": "loss",
    "training.log_softmax_grad": "loss",
    "training.dropout": "elementwise",
    "training.dropout_grad": "elementwise",
    "training.split": "elementwise",
    "training.concat": "elementwise",
    "training.gather": "elementwise",
    "training.gather_grad": "elementwise",
    # dm_lstm_*: dot products in plain loops (no register tiles), as a reduction
    "training.lstm": "reduce",
    "training.lstm_grad": "reduce",
}
# the GRU's kernels are scalar dot products, sigmoid and tanh per gate
FAMILY["training.gru"] = "reduce"
FAMILY["training.gru_grad"] = "reduce"


def kernel_family(op: T.TrainingComputeOp) -> str:
    """The op's family. A depthwise convolution (one input and one output
    channel per group) is "depthwise" where runtime_c/kernels/conv.c's
    depthwise 3x3 path takes it (`dm_dw_fast`: 3x3, stride 1, dilation 1,
    pad 1, same size, width >= 8), else "grouped" (the general path, one
    channel at a time: measured much slower per MAC); a strided convolution
    (not depthwise-path) is "conv_s" or "grouped_s"."""
    fam = FAMILY.get(op.name)
    if fam is None:
        raise DeeployError(f"cost model: no kernel family for {op.name}")
    if isinstance(op, T.Conv2dOp | T.Conv2dGradOp):
        g = op.geometry()
        if g.depthwise and _dw_fast(g):
            return "depthwise"
        base = "grouped" if g.depthwise else "conv"
        # a strided convolution: conv.c's paths for stride > 1, measured
        # much slower per MAC
        return f"{base}_s" if max(g.window.strides) > 1 else base
    return fam


def _dw_fast(g: T.ConvGeometry) -> bool:
    w = g.window
    return (
        (g.kh, g.kw) == (3, 3)
        and tuple(w.strides) == (1, 1)
        and tuple(w.dilations) == (1, 1)
        and tuple(w.pads[:2]) == (1, 1)
        and (g.oh, g.ow) == (g.h, g.w)
        and g.w >= 8
    )


def mac_terms(op: T.TrainingComputeOp) -> list[tuple[int, tuple[int, ...]]]:
    """The MACs of `op` as a sum of terms (coefficient, loop dims whose sizes
    multiply): the same terms give the MACs of a tile from its tile sizes
    (tile-select scores tiles with them)."""
    if not isinstance(op, T.IterationSpaceInterface):
        raise DeeployError(f"cost model: {op.name} has no iteration space")
    space = op.iteration_space()
    skip = {w.in_dim for w in space.windows}
    if isinstance(op, T.Conv2dOp | T.Conv2dGradOp) and len(space.dims) > T.CONV_IC:
        skip.add(T.CONV_IC)  # the whole channel dim of a grouped conv
    dims = tuple(d for d in range(len(space.dims)) if d not in skip)
    if isinstance(op, T.SplitOp | T.ConcatOp | T.GatherOp | T.GatherGradOp):
        return _row_copy_terms(op, space.dims)
    if isinstance(op, T.GRUOp | T.GRUGradOp):
        return _gru_terms(op)
    if isinstance(op, T.LstmOp | T.LstmGradOp):
        return op.cost_terms()
    if isinstance(op, T.Conv2dGradOp):
        grads = op.grads()
        passes = sum(1 for x in ("dX", "dW") if x in grads)
        terms = [(passes, dims)] if passes else []
        if "dB" in grads:
            terms.append((1, (T.CONV_N, T.CONV_M, T.CONV_OH, T.CONV_OW)))
        return terms
    return [(1, dims)]


def output_terms(op: T.TrainingComputeOp) -> list[tuple[int, tuple[int, ...]]]:
    """The output elements `op` writes as terms (coefficient, loop dims whose
    sizes multiply), one per output (its index map's dims): the same terms
    give a tile's outputs from its tile sizes."""
    if not isinstance(op, T.IterationSpaceInterface):
        raise DeeployError(f"cost model: {op.name} has no iteration space")
    space = op.iteration_space()
    terms: list[tuple[int, tuple[int, ...]]] = []
    for m in space.maps[len(op.ins) :]:  # the inputs' maps, then the outputs'
        dims = tuple(r.position for r in m.results if isinstance(r, AffineDimExpr))
        terms.append((1, dims))
    return terms


def op_outputs(op: T.TrainingComputeOp) -> int:
    """The output elements of one call of `op` (`output_terms`)."""
    assert isinstance(op, T.IterationSpaceInterface)
    sizes = op.iteration_space().dims
    return sum(c * math.prod(sizes[d] for d in ds) for c, ds in output_terms(op))


Terms = tuple[tuple[int, tuple[int, ...]], ...]


@dataclass(frozen=True)
class Fork:
    """The kernel calls of one call of an op that share a kernel family: its
    MACs and output elements as terms over the op's loop dims (a tile's from
    its tile sizes) and the calls (cluster forks) they take."""

    family: str
    macs: Terms
    outputs: Terms
    calls: int = 1
    #: conv.c's one-channel path (`narrow_macs`): (the channel dim its
    #: blocks of 4 split, the width dim), None: not a conv of that path
    narrow: tuple[int, int] | None = None


def op_forks(op: T.TrainingComputeOp) -> list[Fork]:
    """The kernel calls of `op` by family: conv2d_grad's input gradient
    (family "<conv family>_dx") and its weight and bias gradients ("..._dw")
    are kernels of their own, measured unlike the forward; any other op is
    one Fork of its family with all its calls (`op_calls`)."""
    fam = kernel_family(op)
    outs = tuple(output_terms(op))
    if isinstance(op, T.Conv2dGradOp):
        grads = op.grads()
        by = dict(zip(grads, outs, strict=True))
        # mac_terms' first term: the space without the windows' input dims
        space = mac_terms(op)[0][1] if "dX" in grads or "dW" in grads else ()
        forks = []
        if "dX" in grads:
            nar = (T.CONV_CG, T.CONV_IW) if fam == "conv" else None
            forks.append(Fork(f"{fam}_dx", ((1, space),), (by["dX"],), 1, nar))
        if "dW" in grads or "dB" in grads:
            m: list[tuple[int, tuple[int, ...]]] = [(1, space)] if "dW" in grads else []
            if "dB" in grads:
                m.append((1, (T.CONV_N, T.CONV_M, T.CONV_OH, T.CONV_OW)))
            o = tuple(by[g] for g in ("dW", "dB") if g in by)
            forks.append(Fork(f"{fam}_dw", tuple(m), o))
        return forks
    nar = (T.CONV_M, T.CONV_OW) if fam == "conv" and isinstance(op, T.Conv2dOp) else None
    return [Fork(fam, tuple(mac_terms(op)), outs, op_calls(op), nar)]


def narrow_macs(
    f: Fork, sizes: tuple[int, ...] | list[int] | dict[int, int], macs: int, t: ConvTiles
) -> int:
    """`macs` of fork `f` at loop sizes `sizes` as its kernel's time counts
    them: in runtime_c/kernels/conv.c (forward, input gradient; stride 1,
    one group) the last channels % 4 of the channels its blocks of 4 split
    run one channel at a time (MB 1), and on planes narrower than 8 columns
    column by column (`dm_conv_rows`/`dm_dgrad_rows`' edge tiles): their
    share of the MACs, channels % 4 of channels, costs `t.narrow` x."""
    if f.narrow is None or t.narrow == 1.0:
        return macs
    ch, width = (int(sizes[d]) for d in f.narrow)
    if width >= 8 or ch % 4 == 0 or ch <= 0:
        return macs
    extra = Fraction(macs * (ch % 4), ch) * (Fraction(repr(t.narrow)) - 1)
    return macs + math.ceil(extra)


def term_sum(terms: Terms, sizes: tuple[int, ...]) -> int:
    """The count `terms` give for loop sizes `sizes`."""
    return sum(c * math.prod(sizes[d] for d in ds) for c, ds in terms)


def _row_copy_terms(
    op: T.TrainingComputeOp, dims: tuple[int, ...]
) -> list[tuple[int, tuple[int, ...]]]:
    """The elements split, concat, gather and gather_grad move (their spaces:
    gather_split.py): each part's dims for split and concat, Y's for gather
    (not X's axis), dX's and dY's for gather_grad."""
    if isinstance(op, T.SplitOp | T.ConcatOp):
        axis = op.axis_value()
        r = len(dims) - (len(op.outs or op.res) if isinstance(op, T.SplitOp) else len(op.ins))
        rest = tuple(d for d in range(r) if d != axis)
        return [(1, (*rest, r + k)) for k in range(len(dims) - r)]
    if isinstance(op, T.GatherOp):
        return [(1, tuple(range(len(dims) - 1)))]
    assert isinstance(op, T.GatherGradOp)
    axis = op.axis_value()
    r = len(T.shape_of(op.output_types()[0]))
    dy = (*range(axis), *range(r, len(dims)), *range(axis + 1, r))
    return [(1, tuple(range(r))), (1, dy)]


def _gru_terms(op: T.GRUOp | T.GRUGradOp) -> list[tuple[int, tuple[int, ...]]]:
    """gru: the input and the recurrent products of each gate, S·N·3H·(I + H);
    gru_grad: those of dX and dW, of dR and the recurrent gradient, the
    candidate gate's recurrent product again (for dar), and dB."""
    S, N, IN, G, H, B = T.GRU_S, T.GRU_N, T.GRU_I, T.GRU_G, T.GRU_H, T.GRU_B
    if isinstance(op, T.GRUOp):
        return [(1, (S, N, G, IN)), (1, (S, N, G, H))]
    return [(2, (S, N, G, IN)), (2, (S, N, G, H)), (1, (S, N, H, H)), (1, (S, N, B))]


def op_macs(op: T.TrainingComputeOp) -> int:
    """The MACs of one call of `op` (see the module docstring)."""
    terms = mac_terms(op)
    assert isinstance(op, T.IterationSpaceInterface)
    sizes = op.iteration_space().dims
    return sum(c * math.prod(sizes[d] for d in ds) for c, ds in terms)


def op_calls(op: T.TrainingComputeOp) -> int:
    """Kernel calls (cluster forks) one call of `op` makes in the emitted C:
    conv2d_grad one for dX and one for dW/dB, the loss op two (the rows'
    log-probabilities, then the reduction), batch_norm and its gradient two,
    any other op one."""
    if isinstance(op, T.Conv2dGradOp):
        g = op.grads()
        return int("dX" in g) + int("dW" in g or "dB" in g)
    if op.name == "training.softmax_cross_entropy_loss":
        return 2
    if isinstance(op, T.LayerNormGradOp):  # dScale/dBias, then dX (kernels/norm_loss.py)
        g = op.grads()
        return max(1, int("dScale" in g or "dBias" in g) + int("dX" in g))
    if op.name in ("training.batch_norm", "training.batch_norm_grad"):
        return 2  # the per-channel statistics (sums), then the elementwise pass
    if isinstance(op, T.AdamWOp) and op.is_buffer_form:  # a dm_copy per output not in place
        return 1 + sum(op.outs[o] is not op.ins[k] for o, k in ((0, 0), (1, 2), (2, 3)))
    if isinstance(op, T.GRUOp | T.GRUGradOp):
        return 2  # the input projections or the recurrence, then the rest
    if isinstance(op, T.SplitOp):
        return op.n_outs()
    if isinstance(op, T.ConcatOp):
        return len(op.ins)
    if isinstance(op, T.LstmOp | T.LstmGradOp):
        return op.cost_calls()
    return 1


@dataclass(frozen=True)
class Split:
    """How an op's kernel deals its work to the cores, as the busiest core's
    share of its MACs and outputs (`share`). kind "units": the product of
    the sizes of `dims` in whole units, dm_chunk (runtime_c/include/
    dm_common.h: ceil(units / cores) to a core); "gemm": the M x N outputs of
    one product (`dims` = (M, N)) as runtime_c/kernels/gemm.c splits them
    (`gemm_share`, its micro-tiles weighted by the board's `GemmTiles`),
    once per product of a batched matmul (each product is split alone)."""

    kind: str
    dims: tuple[int, ...]

    def share(
        self, sizes: tuple[int, ...] | list[int], cores: int, tiles: GemmTiles | None = None
    ) -> Fraction:
        """The busiest core's share for loop sizes `sizes` (the op's or a tile's)."""
        return self.share_of(tuple(int(sizes[d]) for d in self.dims), cores, tiles)

    def share_of(
        self, vals: tuple[int, ...], cores: int, tiles: GemmTiles | None = None
    ) -> Fraction:
        """The busiest core's share for the sizes `vals` of `dims`."""
        if self.kind == "gemm":
            return gemm_share(vals[0], vals[1], cores, tiles)
        units = math.prod(vals)
        return Fraction(-(-units // cores), units) if units else Fraction(1, cores)


def chunk_of(total: int, cores: int, core: int) -> int:
    """The units dm_chunk (runtime_c/include/dm_common.h) gives `core`:
    consecutive chunks of ceil(total / cores), the last cores possibly none."""
    chunk = -(-total // cores)
    return max(0, min(total, (core + 1) * chunk) - min(total, core * chunk))


def gemm_micro_tiles(m: int, n: int, cores: int, core: int) -> tuple[int, int, int]:
    """The micro-tiles runtime_c/kernels/gemm.c gives `core` of an M x N
    product (F build, DM_GEMM_NR 4): (4 x 4, 4 x 1 and 1 x 4, 1 x 1). With M
    and N >= 4 and M not a multiple of 4 x cores, its dm_chunk of the
    ceil(M / 4) x ceil(N / 4) tiles of 4 x 4 (a last row or column moved
    inside Y: still a 4 x 4); else its dm_chunk of the rows, per 4 rows
    N // 4 tiles of 4 x 4 and N % 4 of 4 x 1, per remaining row N // 4 of
    1 x 4 and N % 4 of 1 x 1."""
    if m >= 4 and n >= 4 and m % (4 * cores):
        return chunk_of(-(-m // 4) * -(-n // 4), cores, core), 0, 0
    blocks, rest = divmod(chunk_of(m, cores, core), 4)
    n4, n1 = divmod(n, 4)
    return blocks * n4, blocks * n1 + rest * n4, rest * n1


def gemm_share(m: int, n: int, cores: int, tiles: GemmTiles | None = None) -> Fraction:
    """The busiest core's share of an M x N product's outputs (and MACs) as
    runtime_c/kernels/gemm.c deals them (`gemm_micro_tiles`), its MACs
    weighted by what they cost (`GemmTiles`, the board's): per core its
    4 x 4 MACs, `edge` x its 4 x 1 and 1 x 4 ones, `single` x its 1 x 1 ones;
    the part of a core's work beyond its FPU partner's (the core cores / 2
    away) runs `alone` x as long. Without `tiles` (every weight 1): with M
    and N >= 4 and M not a multiple of 4 x cores, ceil(tiles / cores) x 16
    outputs (a moved last tile computes some outputs twice), else ceil(M /
    cores) rows of N."""
    if m <= 0 or n <= 0:
        return Fraction(1, cores)
    t = tiles or GemmTiles()
    edge, single, alone = Fraction(repr(t.edge)), Fraction(repr(t.single)), Fraction(repr(t.alone))
    work: list[Fraction] = []
    for c in range(cores):
        t44, t4, t1 = gemm_micro_tiles(m, n, cores, c)
        work.append(16 * t44 + 4 * edge * t4 + single * t1)
    busiest = max(work)
    if alone != 1 and cores % 2 == 0:
        h = cores // 2
        busiest = max(
            min(w, work[(c + h) % cores]) + alone * max(Fraction(0), w - work[(c + h) % cores])
            for c, w in enumerate(work)
        )
    return busiest / (m * n)


def op_split(op: T.TrainingComputeOp) -> Split | None:
    """How the kernel of `op` splits its work over the cores (None: an even
    split): gemm and matmul as gemm.c splits an M x N product (their spaces
    are (M, N, K)), batch_matmul the same per product (its space (batch..,
    M, N, K)); the loss ops the batch rows (loss.c; their spaces are the
    logits' [batch, classes]); reduce_sum and reduce_mean their outputs
    (reduce.c, reduce_mean.c: dm_chunk of the output elements)."""
    if not isinstance(op, T.IterationSpaceInterface):
        return None
    if op.name in ("training.gemm", "training.matmul"):
        return Split("gemm", (0, 1))
    if op.name == "training.batch_matmul":
        nb = len(op.iteration_space().dims) - 3
        return Split("gemm", (nb, nb + 1))
    if op.name in _ROW_SPLIT:
        return Split("units", (0,))
    if op.name in ("training.reduce_sum", "training.reduce_mean"):
        return Split("units", output_terms(op)[0][1])
    return None


def op_share(op: T.TrainingComputeOp, cores: int, tiles: GemmTiles | None = None) -> Fraction:
    """The busiest core's share of one call of `op` (`op_split`; gemm's
    micro-tiles weighted by `tiles`, the board's)."""
    split = op_split(op)
    if split is None:
        return Fraction(1, cores)
    assert isinstance(op, T.IterationSpaceInterface)
    return split.share(op.iteration_space().dims, cores, tiles)


#: ops whose kernel splits the first dim of the op's space over the cores
_ROW_SPLIT = (
    "training.softmax_cross_entropy_loss",
    "training.softmax_cross_entropy_loss_grad",
)

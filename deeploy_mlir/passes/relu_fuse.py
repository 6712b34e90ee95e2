"""relu-fuse{mask conv}: ReLUs folded into the convolutions that feed them.

Runs on the tensor form, first (before training-inplace-alias). Two
rewrites, each exact (the same bits in the interpreter, on the host and on
the board):

* `mask`: a `training.relu_grad` whose mask operand is the input X of a
  `training.relu` (onnxruntime-training's ReluGrad reads X) reads the
  ReLU's output A instead. A > 0 exactly when X > 0: A is X where X > 0,
  and +0 or -0 (or NaN: numpy's maximum keeps it, runtime_c's kernel gives
  +0) elsewhere, none of which is > 0. X is then no longer needed by the
  backward pass: ReluGrad's mask stays alive in A, which the next layer's
  weight gradient usually reads anyway.
* `conv`: a `training.conv2d` whose output only a `training.relu` reads
  (after `mask`) gets the property `relu` and its result replaces the
  ReLU's; the kernel (dm_conv2d_fp32, `relu` field) applies max(Y, 0) to
  each output row once its sum is complete, with the bits of dm_relu_fp32.
  The ReLU's round trip through memory (in L3, a fetch and a store of the
  whole activation) disappears.

A convolution whose output is returned, or read by anything but the ReLU,
keeps its ReLU; with `remarks`, such a ReLU carries its reason as
`relufuse.left`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import TENSOR, require


def _read_masks_from_outputs(block: Block) -> None:
    """Every relu_grad whose mask is a relu's input reads that relu's output."""
    relu_of: dict[SSAValue, SSAValue] = {}
    for o in block.ops:
        if isinstance(o, T.ReluOp):
            relu_of.setdefault(o.ins[0], o.results[0])
    for o in list(block.ops):
        if isinstance(o, T.ReluGradOp) and o.ins[1] in relu_of:
            ops = list(o.operands)
            ops[1] = relu_of[o.ins[1]]
            o.operands = ops


def _pool_fusions(
    pool: T.MaxPool2dOp,
) -> list[tuple[T.MaxPool2dGradOp, T.ReluGradOp]] | None:
    """The (maxpool2d_grad, relu_grad) pairs that drop `pool`'s Indices into
    masked positions, when every reader of its Indices is such a
    maxpool2d_grad, read only by a relu_grad whose mask is the pool's input
    (None otherwise)."""
    if pool.relu_mask is not None or len(pool.results) != 2:
        return None
    x = pool.ins[0]
    out: list[tuple[T.MaxPool2dGradOp, T.ReluGradOp]] = []
    for use in pool.results[1].uses:
        grad = use.operation
        if not isinstance(grad, T.MaxPool2dGradOp) or use.index != 1:
            return None
        readers = [u for u in grad.results[0].uses]
        if len(readers) != 1:
            return None
        rg = readers[0].operation
        if not isinstance(rg, T.ReluGradOp) or readers[0].index != 0 or rg.ins[1] is not x:
            return None
        out.append((grad, rg))
    return out or None


def _fold_into_pools(block: Block) -> None:
    """relu_grad(maxpool2d_grad(dY, I), A) with I = maxpool2d(A)'s Indices:
    the pool marks (-1) the indices whose Y is not > 0 (`relu_mask`) and the
    relu_grad goes: the contributions it would zero are the ones dropped."""
    for o in list(block.ops):
        if not isinstance(o, T.MaxPool2dOp):
            continue
        pairs = _pool_fusions(o)
        if pairs is None:
            continue
        o.properties["relu_mask"] = UnitAttr()
        for grad, rg in pairs:
            _replace_by(rg, grad.results[0])


def _replace_by(op: Operation, y: SSAValue) -> None:
    """Erase `op`, its one result's uses reading `y`, which takes its name."""
    name = op.results[0].name_hint
    op.results[0].replace_all_uses_with(y)
    op.detach()
    op.erase()
    if name is not None:
        y.name_hint = name


def _why_not(relu: T.ReluOp) -> str | None:
    """Why `relu` cannot be folded into its input's producer (None: it can)."""
    x = relu.ins[0]
    conv = x.owner
    if not isinstance(conv, T.Conv2dOp):
        return "its input is not a conv2d's output"
    if conv.relu is not None:
        return "its conv2d applies a ReLU already"
    readers = {u.operation for u in x.uses}
    if readers != {relu}:
        names = sorted({r.name for r in readers if r is not relu})
        return f"the conv2d's output is also read by {', '.join(names)}"
    return None


def _fold_into_convs(block: Block, remarks: bool) -> None:
    for o in list(block.ops):
        if not isinstance(o, T.ReluOp):
            continue
        why = _why_not(o)
        if why is not None:
            if remarks:
                o.attributes["relufuse.left"] = StringAttr(why)
            continue
        conv = o.ins[0].owner
        assert isinstance(conv, T.Conv2dOp)
        conv.properties["relu"] = UnitAttr()
        _replace_by(o, conv.results[0])


@dataclass(frozen=True)
class ReluFuse(ModulePass):
    name = "relu-fuse"

    #: ReluGrad reads the ReLU's output A instead of its input X (A > 0 iff X > 0)
    mask: bool = True
    #: relu_grad(maxpool2d_grad(dY, I), A), I = maxpool2d(A)'s Indices: the
    #: pool marks the indices whose max is not > 0 (maxpool2d's `relu_mask`)
    pool: bool = True
    #: a conv2d read only by a ReLU applies it at its store (conv2d's `relu`)
    conv: bool = True
    #: mark each ReLU left alone with its reason (`relufuse.left`)
    remarks: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require(op, self.name, TENSOR)
        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            block = fn.body.block
            if self.mask:
                _read_masks_from_outputs(block)
            if self.pool:
                _fold_into_pools(block)
            if self.conv:
                _fold_into_convs(block, self.remarks)

"""transpose-fold{operands,results}: matrix transposes folded into the matrix
products that read or write them.

Runs on the tensor form, first in the default pipeline (before
training-inplace-alias and training-bufferize, so accumulate-fuse later sees
the products themselves). A *matrix transpose* is a `training.transpose`
that swaps the last two dims and keeps the others in place (perm [1, 0] on a
matrix, [.., n-1, n-2] on a batch of them). The products are `training.gemm`,
`training.matmul` and `training.batch_matmul`, whose transpose flags read an
operand stored [K, M] (A) or [N, K] (B).

* `operands`: a matrix transpose every use of which is operand A or B of a
  product goes: each product reads the transpose's input with that operand's
  flag flipped (a `matmul`, which has no flags, becomes a `gemm` with alpha 1
  and no C). The CCT's weights, transposed for the forward MatMul and its
  gradient's FusedMatMul, are read where they are.
* `results`: a product without C whose only use is a matrix transpose
  computes the transposed product instead, Y^T = B'^T A'^T: operands swapped,
  trans_a = not trans_b, trans_b = not trans_a (alpha kept). The CCT's
  weight gradients, computed transposed and transposed back before their
  accumulation, are computed in the weight's layout, and accumulate-fuse
  then fuses the accumulation into the product.

The bits do not change: a transpose copies, and the gemm kernel
(runtime_c/kernels/gemm.c, which batch_matmul runs per batch) sums every
output over k = 0..K-1 in order with one fmaf per term from 0, in all four
forms; the transposed product sums the same products (fmaf(b, a, acc) ==
fmaf(a, b, acc)) in the same order, then multiplies by the same alpha.
Products with C (its transposed broadcast would need a C of its own), and
transposes with any other perm or use, are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, ModuleOp, UnitAttr, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from deeploy_mlir.dialects import training as T
from deeploy_mlir.dialects.forms import TENSOR, require

#: the products whose operands A (#0) and B (#1) a transpose can fold into
_PRODUCTS = (T.GemmOp, T.MatmulOp, T.BatchMatmulOp)


def _matrix_transpose(op: Operation) -> bool:
    """`op` is a transpose swapping the last two dims only (no `onto`)."""
    if not isinstance(op, T.TransposeOp) or len(op.ins) != 1 or op.onto is not None:
        return False
    perm = op.perm_list()
    n = len(perm)
    return n >= 2 and perm == [*range(n - 2), n - 1, n - 2]


def _flags(op: T.TrainingComputeOp) -> tuple[bool, bool]:
    if isinstance(op, T.GemmOp | T.BatchMatmulOp):
        return op.trans_a is not None, op.trans_b is not None
    return False, False


def _rebuilt(
    op: T.TrainingComputeOp, ins: list[SSAValue], trans: tuple[bool, bool], ty: Attribute
) -> T.TrainingComputeOp:
    """`op`'s product (gemm for a matmul) on `ins` with flags `trans` and result type `ty`."""
    props: dict[str, Attribute | None] = {
        "trans_a": UnitAttr() if trans[0] else None,
        "trans_b": UnitAttr() if trans[1] else None,
    }
    if isinstance(op, T.GemmOp | T.BatchMatmulOp):
        props |= {"alpha": op.alpha, "beta": op.beta}
        cls: type[T.TrainingComputeOp] = type(op)
    else:
        props |= {"alpha": FloatAttr(1.0, f32)}
        cls = T.GemmOp
    new = cls(ins, [ty], properties=props)
    new.attributes.update(op.attributes)
    return new


def _replace(old: Operation, new: Operation, result: SSAValue) -> None:
    """`new` in place of `old`; `result` (replaced by new's) names it."""
    Rewriter.insert_op(new, InsertPoint.before(old))
    new.results[0].name_hint = result.name_hint
    result.replace_all_uses_with(new.results[0])


def fold_operands(t: T.TransposeOp) -> bool:
    """Fold matrix transpose `t` into the products that read it, if every use is one."""
    uses = list(t.res[0].uses)
    if not uses or any(
        not isinstance(u.operation, _PRODUCTS) or u.index not in (0, 1) for u in uses
    ):
        return False
    for user in {id(u.operation): u.operation for u in uses}.values():
        assert isinstance(user, T.TrainingComputeOp)
        ins = list(user.ins)
        trans = list(_flags(user))
        for i in (0, 1):
            if ins[i] is t.res[0]:
                ins[i] = t.ins[0]
                trans[i] = not trans[i]
        new = _rebuilt(user, ins, (trans[0], trans[1]), user.res[0].type)
        _replace(user, new, user.res[0])
        Rewriter.erase_op(user)
    Rewriter.erase_op(t)
    return True


def fold_result(p: T.TrainingComputeOp) -> bool:
    """Compute product `p` transposed when its only use is a matrix transpose."""
    if len(p.ins) != 2 or len(p.res) != 1:
        return False
    uses = list(p.res[0].uses)
    if len(uses) != 1 or not _matrix_transpose(t := uses[0].operation):
        return False
    assert isinstance(t, T.TransposeOp)
    ta, tb = _flags(p)
    new = _rebuilt(p, [p.ins[1], p.ins[0]], (not tb, not ta), t.res[0].type)
    _replace(t, new, t.res[0])
    Rewriter.erase_op(t)
    Rewriter.erase_op(p)
    return True


@dataclass(frozen=True)
class TransposeFold(ModulePass):
    name = "transpose-fold"

    #: fold transposes into the products that read them (flip the operand's flag)
    operands: bool = True
    #: products whose only use is a transpose compute the transposed product
    results: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require(op, self.name, TENSOR)
        for fn in op.ops:
            if not isinstance(fn, func.FuncOp) or not fn.body.blocks:
                continue
            block = fn.body.block
            changed = True
            while changed:
                changed = False
                for o in list(block.ops):
                    if o.parent is None:  # erased by an earlier fold of this sweep
                        continue
                    if self.operands and _matrix_transpose(o):
                        assert isinstance(o, T.TransposeOp)
                        changed |= fold_operands(o)
                    elif self.results and isinstance(o, _PRODUCTS):
                        changed |= fold_result(o)

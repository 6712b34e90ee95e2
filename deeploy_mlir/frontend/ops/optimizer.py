"""Gradient accumulation and the optimizer step.

* com.microsoft ``InPlaceAccumulatorV2`` (buffer, gradient, lazy_reset_grad):
  `training.accumulate`; its output 0 is only a completion flag, the buffer
  itself is the state, returned as the new value of its argument.
* ``SGD`` (Deeploy's convention: attribute ``lr``, returns the updated
  weight): `training.sgd` in @training_step.
* onnxruntime-training's optimizer_model.onnx (one com.microsoft
  ``SGDOptimizerV2`` over sequences of parameters and gradients) is not
  imported node by node: `optimizer_function` builds @optimizer_step from the
  trainable parameters, one `training.sgd` each. `step_block` and
  `step_function` are the frame it shares with adamw.py's builder, and
  `not_in_training_graph` both optimizers' handlers.
"""

from __future__ import annotations

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import (
    KIND_LR,
    MS,
    ONNX_DTYPES_BY_NP,
    ArgInfo,
    Importer,
    Result,
    arg_attrs,
    attrs,
    handles,
    node_label,
    result_attrs,
    ssa_name,
    tensor_type,
)


@handles(f"{MS}:InPlaceAccumulatorV2")
def accumulate(im: Importer, node: pb.NodeProto) -> None:
    buf_name = node.input[0]
    if buf_name not in im.arg_index:
        raise DeeployError(
            f"{node_label(node)}: the accumulation buffer '{buf_name}' must be a graph input"
        )
    if len(node.input) < 3 or not node.input[2]:
        raise DeeployError(f"{node_label(node)}: the lazy_reset_grad input is required")
    (res,) = im.emit(node, T.AccumulateOp, [im.value(node, i) for i in range(3)])
    # output 0 is only a completion flag; the buffer itself is the state
    im.dropped.add(node.output[0])
    if len(node.output) > 1 and node.output[1]:
        im.env[node.output[1]] = res
    im.add_result(res, buf_name, updates=im.arg_index[buf_name])


@handles("SGD", attributes={"lr": pb.AttributeProto.FLOAT})
def sgd(im: Importer, node: pb.NodeProto) -> None:
    a = attrs(node)
    if "lr" not in a:
        raise DeeployError(f"{node_label(node)}: SGD needs an 'lr' attribute")
    w_name = node.input[0]
    if w_name not in im.arg_index:
        raise DeeployError(f"{node_label(node)}: the updated weight '{w_name}' must be a parameter")
    if not float(a["lr"]) > 0:
        raise DeeployError(f"{node_label(node)}: lr must be positive, got {float(a['lr']):g}")
    lr = im.constant(np.array([a["lr"]], dtype=np.float32))
    (res,) = im.emit(node, T.SgdOp, [im.value(node, 0), im.value(node, 1), lr])
    im.env[node.output[0]] = res
    im.add_result(res, node.output[0], updates=im.arg_index[w_name])


def not_in_training_graph(node: pb.NodeProto) -> DeeployError:
    """The error for an optimizer node met in a training graph. The handlers
    of SGDOptimizerV2 and AdamWOptimizer only mark the ops as supported for
    the unsupported-op check: an optimizer_model.onnx's node is expanded by
    its builder (`optimizer_function`, adamw.py's `adamw_function`) and never
    reaches its handler."""
    return DeeployError(
        f"{node_label(node)}: {node.op_type} belongs in optimizer_model.onnx "
        "(onnxruntime-training's artifacts), not in the training graph"
    )


@handles(f"{MS}:SGDOptimizerV2")
def sgd_v2(im: Importer, node: pb.NodeProto) -> None:
    raise not_in_training_graph(node)


def step_block(args: list[ArgInfo]) -> tuple[list[Attribute], Block, Builder]:
    """The argument types of a step function over `args`, its block (each
    argument named after its ArgInfo) and a builder at the block's end."""
    types: list[Attribute] = [tensor_type(a.shape, ONNX_DTYPES_BY_NP[a.dtype]) for a in args]
    block = Block(arg_types=types)
    for a, v in zip(args, block.args, strict=True):
        v.name_hint = ssa_name(a.name)
    return types, block, Builder(InsertPoint.at_end(block))


def step_function(
    types: list[Attribute], b: Builder, args: list[ArgInfo], results: list[Result]
) -> func.FuncOp:
    """@optimizer_step: `step_block`'s block, which `b` builds, returning
    `results`."""
    values: list[SSAValue] = [r.value for r in results]
    b.insert(func.ReturnOp(*values))
    block = b.insertion_point.block
    return func.FuncOp(
        "optimizer_step",
        (types, [v.type for v in values]),
        Region(block),
        arg_attrs=arg_attrs(args),
        res_attrs=result_attrs(results),
    )


def optimizer_function(
    im: Importer, train_args: list[ArgInfo], trainable: list[str], style: str
) -> func.FuncOp:
    """@optimizer_step: (learning_rate, (param, grad)*) -> the new params, for
    onnxruntime-training graphs; no arguments for Deeploy's (SGD is in the
    training step)."""
    by_name = {a.name: a for a in train_args}
    args: list[ArgInfo] = []
    if style == "ort" and trainable:
        args.append(ArgInfo("learning_rate", KIND_LR, (1,), np.float32))
        for p in trainable:
            args.append(by_name[p])
            args.append(by_name[f"{p}_grad.accumulation.buffer"])
    types, block, b = step_block(args)
    results: list[Result] = []
    if args:
        _check_optimizer(im)
        lr = block.args[0]
        for i, p in enumerate(trainable):
            w, g = block.args[1 + 2 * i], block.args[2 + 2 * i]
            op = b.insert(T.SgdOp([w, g, lr], [w.type]))
            results.append(Result(op.res[0], p, updates=1 + 2 * i))
    return step_function(types, b, args, results)


def _check_optimizer(im: Importer) -> None:
    if im.opt is None:
        raise DeeployError(
            f"{im.source}: onnxruntime-training graph without optimizer_model.onnx beside it"
        )
    kinds = [n.op_type for n in im.opt.graph.node]
    if kinds != ["SGDOptimizerV2"]:
        raise DeeployError(
            f"optimizer_model.onnx: expected one SGDOptimizerV2 or AdamWOptimizer node, got "
            f"{', '.join(kinds)}"
        )

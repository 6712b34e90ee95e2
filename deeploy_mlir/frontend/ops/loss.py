"""Losses: SoftmaxCrossEntropyLoss and com.microsoft SoftmaxCrossEntropyLossGrad
in both conventions (with ignore_index: torch always writes -100), LogSoftmax
and com.microsoft LogSoftmaxGrad_13, Dropout and com.microsoft DropoutGrad
(ratio and training_mode constants; not in training mode or with ratio 0 the
output is the input).

* onnxruntime-training: the loss has (loss, log_prob) outputs; the gradient
  takes (dY, log_prob, labels).
* Deeploy: the loss's only output is the log-probabilities, and the gradient
  takes (log_prob, labels) with no dY. Deeploy's kernel scales by 1/B twice
  ("one for the loss norm, one for the gradient norm"), whatever the
  reduction: the gradient of a mean loss with dY = 1/B.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, f32, i64

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import (
    MS,
    Importer,
    Props,
    attrs,
    handles,
    node_label,
    ssa_name,
)


def _reduction(node: pb.NodeProto) -> StringAttr:
    a = attrs(node)
    red = a.get("reduction", b"mean")
    red = red.decode() if isinstance(red, bytes) else str(red)
    if red not in T.REDUCTIONS:
        raise DeeployError(f"{node_label(node)}: reduction '{red}' is not supported (mean, sum)")
    return StringAttr(red)


def _props(node: pb.NodeProto) -> Props:
    """reduction, and ignore_index when the node has it (torch always writes -100)."""
    props: Props = {"reduction": _reduction(node)}
    ii = attrs(node).get("ignore_index")
    if ii is not None:
        props["ignore_index"] = IntegerAttr(int(ii), i64)
    return props


@handles("SoftmaxCrossEntropyLoss")
def sce(im: Importer, node: pb.NodeProto) -> None:
    if len(node.input) > 2 and node.input[2]:
        raise DeeployError(f"{node_label(node)}: class weights are not supported")
    loss, log_prob = im.emit(
        node,
        T.SoftmaxCrossEntropyLossOp,
        [im.value(node, 0), im.value(node, 1)],
        _props(node),
        n_results=2,
    )
    outs = [o for o in node.output]
    if len(outs) == 1 and _is_log_prob(im, node, outs[0]):
        # Deeploy's convention: the only output is the log-probabilities
        loss.name_hint, log_prob.name_hint = None, ssa_name(outs[0])
        im.env[outs[0]] = log_prob
        return
    im.bind(node, [loss, log_prob])


def _is_log_prob(im: Importer, node: pb.NodeProto, name: str) -> bool:
    if len(im.value_shapes.get(name, ())) == 2:
        return True
    return any(
        n.op_type == "SoftmaxCrossEntropyLossGrad" and len(n.input) == 2 and n.input[0] == name
        for n in im.train.graph.node
    )


@handles(f"{MS}:SoftmaxCrossEntropyLossGrad", schema="SoftmaxCrossEntropyLoss")
def sce_grad(im: Importer, node: pb.NodeProto) -> None:
    if len(node.input) == 2:
        # Deeploy: (log_prob, labels), no dY; see the module's docstring
        lp, lab = im.value(node, 0), im.value(node, 1)
        b = T.shape_of(lp.type)[0] if T.shape_of(lp.type) else 1
        per = 1.0 / b if _reduction(node).data == "mean" else 1.0 / (b * b)
        dy = im.constant(np.array(per, dtype=np.float32))
    else:
        if len(node.input) > 3 and node.input[3]:
            raise DeeployError(f"{node_label(node)}: class weights are not supported")
        dy, lp, lab = im.value(node, 0), im.value(node, 1), im.value(node, 2)
    im.bind(
        node,
        im.emit(node, T.SoftmaxCrossEntropyLossGradOp, [dy, lp, lab], _props(node)),
    )


# --------------------------------------------------------------------------
# LogSoftmax and com.microsoft LogSoftmaxGrad_13
# --------------------------------------------------------------------------


def _log_softmax_axis(im: Importer, node: pb.NodeProto, rank: int) -> Props:
    """The normalized axis (default -1; before opset 13 the input is flattened
    to 2-D at the axis, default 1, which is a log-softmax along the axis only
    when it is the last one)."""
    old = node.op_type == "LogSoftmax" and im.opset() < 13
    axis = int(attrs(node).get("axis", 1 if old else -1))
    if not -rank <= axis < rank:
        raise DeeployError(f"{node_label(node)}: axis {axis} is out of range for rank {rank}")
    axis %= rank
    if old and axis != rank - 1:
        raise DeeployError(
            f"{node_label(node)}: LogSoftmax before opset 13 flattens its input to 2-D at axis "
            f"{axis}; only the last axis ({rank - 1}) is supported for rank {rank}"
        )
    return {"axis": IntegerAttr(axis, i64)}


@handles("LogSoftmax")
def log_softmax(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    props = _log_softmax_axis(im, node, len(T.shape_of(x.type)))
    im.bind(node, im.emit(node, T.LogSoftmaxOp, [x], props))


@handles(f"{MS}:LogSoftmaxGrad_13", schema="LogSoftmax")
def log_softmax_grad(im: Importer, node: pb.NodeProto) -> None:
    dy, y = im.value(node, 0), im.value(node, 1)
    props = _log_softmax_axis(im, node, len(T.shape_of(y.type)))
    im.bind(node, im.emit(node, T.LogSoftmaxGradOp, [dy, y], props))


# --------------------------------------------------------------------------
# Dropout and com.microsoft DropoutGrad
# --------------------------------------------------------------------------


def _static_scalar(im: Importer, node: pb.NodeProto, i: int, what: str) -> np.ndarray | None:
    """Input #i's value (None: the input is not given); it must be a constant."""
    if i >= len(node.input) or not node.input[i]:
        return None
    name = node.input[i]
    if name not in im.inits:
        raise DeeployError(
            f"{node_label(node)}: the {what} '{name}' must be a constant (an initializer), "
            "it is computed at run time"
        )
    arr = np.asarray(im.inits[name])
    if arr.size != 1:
        raise DeeployError(
            f"{node_label(node)}: the {what} must be a scalar, got shape {list(arr.shape)}"
        )
    return arr.reshape(())


def _dropout_ratio(im: Importer, node: pb.NodeProto, ratio_in: int, mode_in: int) -> float:
    """The ratio of elements dropped: 0 when not in training mode (ONNX's
    default: training_mode false, ratio 0.5)."""
    mode = _static_scalar(im, node, mode_in, "training_mode")
    if mode is None or not bool(mode):
        return 0.0
    r = _static_scalar(im, node, ratio_in, "ratio")
    ratio = float(r) if r is not None else float(attrs(node).get("ratio", 0.5))
    if not 0.0 <= ratio < 1.0:
        raise DeeployError(f"{node_label(node)}: ratio {ratio} is not in [0, 1)")
    return ratio


@handles("Dropout", optional_outputs=True)
def dropout(im: Importer, node: pb.NodeProto) -> None:
    x = im.value(node, 0)
    ratio = _dropout_ratio(im, node, 1, 2)
    wants_mask = len(node.output) > 1 and bool(node.output[1])
    if ratio == 0.0 and not wants_mask:
        im.bind(node, [x])  # keeps every element, scale 1: Y is X
        return
    props: Props = {"ratio": FloatAttr(ratio, f32)}
    im.bind(node, im.emit(node, T.DropoutOp, [x], props, n_results=2))


@handles(f"{MS}:DropoutGrad", schema="Dropout")
def dropout_grad(im: Importer, node: pb.NodeProto) -> None:
    dy, mask = im.value(node, 0), im.value(node, 1)
    ratio = _dropout_ratio(im, node, 2, 3) if len(node.input) > 3 else None
    if ratio is None:  # no training_mode input: DropoutGrad is the training-mode gradient
        r = _static_scalar(im, node, 2, "ratio")
        ratio = float(r) if r is not None else 0.5
    if ratio == 0.0:
        im.bind(node, [dy])  # every element kept, scale 1
        return
    props: Props = {"ratio": FloatAttr(ratio, f32)}
    im.bind(node, im.emit(node, T.DropoutGradOp, [dy, mask], props))

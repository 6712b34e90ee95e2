"""Losses: SoftmaxCrossEntropyLoss and com.microsoft SoftmaxCrossEntropyLossGrad
in both conventions.

* onnxruntime-training: the loss has (loss, log_prob) outputs; the gradient
  takes (dY, log_prob, labels).
* Deeploy: the loss's only output is the log-probabilities, and the gradient
  takes (log_prob, labels) with no dY. Deeploy's kernel scales by 1/B twice
  ("one for the loss norm, one for the gradient norm"), whatever the
  reduction: the gradient of a mean loss with dY = 1/B.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.dialects.builtin import StringAttr

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend.core import MS, Importer, attrs, handles, node_label, ssa_name


def _reduction(node: onnx.NodeProto) -> StringAttr:
    a = attrs(node)
    red = a.get("reduction", b"mean")
    red = red.decode() if isinstance(red, bytes) else str(red)
    if red not in T.REDUCTIONS:
        raise DeeployError(f"{node_label(node)}: reduction '{red}' is not supported (mean, sum)")
    if "ignore_index" in a:
        raise DeeployError(f"{node_label(node)}: ignore_index is not supported")
    return StringAttr(red)


@handles("SoftmaxCrossEntropyLoss")
def sce(im: Importer, node: onnx.NodeProto) -> None:
    if len(node.input) > 2 and node.input[2]:
        raise DeeployError(f"{node_label(node)}: class weights are not supported")
    loss, log_prob = im.emit(
        node,
        T.SoftmaxCrossEntropyLossOp,
        [im.value(node, 0), im.value(node, 1)],
        {"reduction": _reduction(node)},
        n_results=2,
    )
    outs = [o for o in node.output]
    if len(outs) == 1 and _is_log_prob(im, node, outs[0]):
        # Deeploy's convention: the only output is the log-probabilities
        loss.name_hint, log_prob.name_hint = None, ssa_name(outs[0])
        im.env[outs[0]] = log_prob
        return
    im.bind(node, [loss, log_prob])


def _is_log_prob(im: Importer, node: onnx.NodeProto, name: str) -> bool:
    if len(im.value_shapes.get(name, ())) == 2:
        return True
    return any(
        n.op_type == "SoftmaxCrossEntropyLossGrad" and len(n.input) == 2 and n.input[0] == name
        for n in im.train.graph.node
    )


@handles(f"{MS}:SoftmaxCrossEntropyLossGrad", schema="SoftmaxCrossEntropyLoss")
def sce_grad(im: Importer, node: onnx.NodeProto) -> None:
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
        im.emit(
            node, T.SoftmaxCrossEntropyLossGradOp, [dy, lp, lab], {"reduction": _reduction(node)}
        ),
    )

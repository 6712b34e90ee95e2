"""Batch normalization in training mode, as onnxruntime-training's generator
writes it: com.microsoft BatchNormInternal (training_mode 1; outputs Y, the
new running mean and variance, the saved mean and inverse standard
deviation) and com.microsoft BatchNormalizationGrad.

The running mean and variance are initializers of training_model.onnx
(onnxruntime-training neither feeds them nor writes them back: its checkpoint
holds the parameters only). Here they are state of the training step:
`running_stats` names them, the driver makes them arguments of kind
running_stat (initial value: the initializer, or the checkpoint's or
--params' array of that name), and the node's new running statistics are
returned as those arguments' new values, like an updated parameter."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import FloatAttr, f32

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import MS, Importer, Props, attrs, handles, node_label, ssa_name

_FLOAT, _INT = pb.AttributeProto.FLOAT, pb.AttributeProto.INT


def running_stats(graph: pb.GraphProto) -> list[str]:
    """The running mean and variance (inputs #3 and #4) of the graph's
    BatchNormInternal nodes, in node order, each once."""
    out: list[str] = []
    for n in graph.node:
        if n.op_type == "BatchNormInternal" and n.domain == MS:
            out += [s for s in n.input[3:5] if s and s not in out]
    return out


def _float_attr(node: pb.NodeProto, name: str, default: float) -> FloatAttr:
    v = float(attrs(node).get(name, default))
    if not math.isfinite(v):
        raise DeeployError(f"{node_label(node)}: attribute {name} must be finite, got {v}")
    return FloatAttr(v, f32)


@handles(
    f"{MS}:BatchNormInternal",
    attributes={"epsilon": _FLOAT, "momentum": _FLOAT, "training_mode": _INT},
)
def batch_norm(im: Importer, node: pb.NodeProto) -> None:
    if int(attrs(node).get("training_mode", 1)) != 1:
        raise DeeployError(
            f"{node_label(node)}: only training_mode 1 is supported (an inference batch "
            "normalization is folded into the layer before it at export)"
        )
    ins = [im.value(node, i) for i in range(5)]
    props: Props = {
        "epsilon": _float_attr(node, "epsilon", 1e-5),
        "momentum": _float_attr(node, "momentum", 0.9),
    }
    res = im.emit(node, T.BatchNormOp, ins, props, n_results=5)
    outs = list(node.output) + [""] * (5 - len(node.output))
    for i, v in enumerate(res):
        if outs[i]:
            v.name_hint = ssa_name(outs[i])
            im.env[outs[i]] = v
    for k in (1, 2):
        stat = node.input[k + 2]
        i = im.arg_index.get(stat)
        if i is None:
            continue  # a constant (not state of the step): its new value is dropped
        if any(r.updates == i for r in im.results):
            raise DeeployError(
                f"{node_label(node)}: running statistic '{stat}' is updated by two nodes"
            )
        # the new running statistic is the state argument's next value
        im.add_result(res[k], outs[k] or f"{stat}.new", updates=i)


@handles(f"{MS}:BatchNormalizationGrad", attributes={"epsilon": _FLOAT})
def batch_norm_grad(im: Importer, node: pb.NodeProto) -> None:
    ins = [im.value(node, i) for i in range(5)]
    props: Props = {"epsilon": _float_attr(node, "epsilon", 1e-5)}
    im.bind(node, im.emit(node, T.BatchNormGradOp, ins, props, n_results=3))

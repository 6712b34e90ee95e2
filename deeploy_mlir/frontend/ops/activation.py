"""Unary activations and elementwise functions (`training.unary`): Sigmoid,
Tanh, LeakyRelu, com.microsoft QuickGelu (torch's SiLU after
onnxruntime-training's fusion: alpha 1), Abs, Sign, Neg, Log, Exp, Sqrt,
Reciprocal; and the gradients onnxruntime-training writes for them
(`training.unary_grad`): com.microsoft SigmoidGrad, TanhGrad, LeakyReluGrad,
QuickGeluGrad. (Abs's gradient is Sign and Mul; Log's, Neg's and
Reciprocal's are Div, Neg and Mul nodes.)"""

from __future__ import annotations

from xdsl.dialects.builtin import FloatAttr, StringAttr, f32

from deeploy_mlir.dialects import training as T
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import MS, Importer, Props, attrs, handles

#: ONNX op type -> the kind of `training.unary` (LeakyRelu and QuickGelu,
#: which take alpha, are handled below)
_UNARY = {
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Abs": "abs",
    "Sign": "sign",
    "Neg": "neg",
    "Log": "log",
    "Exp": "exp",
    "Sqrt": "sqrt",
    "Reciprocal": "reciprocal",
}
#: the alpha ONNX (LeakyRelu) and onnxruntime (QuickGelu) default to
LEAKY_RELU_ALPHA = 0.01
QUICK_GELU_ALPHA = 1.702
_ALPHA = {"alpha": pb.AttributeProto.FLOAT}


def _props(kind: str, alpha: float | None = None) -> Props:
    return {
        "kind": StringAttr(kind),
        "alpha": None if alpha is None else FloatAttr(float(alpha), f32),
    }


def _alpha(node: pb.NodeProto, default: float) -> float:
    return float(attrs(node).get("alpha", default))


@handles(*_UNARY)
def unary(im: Importer, node: pb.NodeProto) -> None:
    props = _props(_UNARY[node.op_type])
    im.bind(node, im.emit(node, T.UnaryOp, [im.value(node, 0)], props))


@handles("LeakyRelu")
def leaky_relu(im: Importer, node: pb.NodeProto) -> None:
    props = _props("leaky_relu", _alpha(node, LEAKY_RELU_ALPHA))
    im.bind(node, im.emit(node, T.UnaryOp, [im.value(node, 0)], props))


@handles(f"{MS}:QuickGelu", attributes=_ALPHA)
def quick_gelu(im: Importer, node: pb.NodeProto) -> None:
    props = _props("quick_gelu", _alpha(node, QUICK_GELU_ALPHA))
    im.bind(node, im.emit(node, T.UnaryOp, [im.value(node, 0)], props))


def _grad(im: Importer, node: pb.NodeProto, props: Props) -> None:
    """dX from (dY, Z): Z is the forward op's output (SigmoidGrad, TanhGrad,
    LeakyReluGrad) or input (QuickGeluGrad), as onnxruntime's schemas say."""
    ins = [im.value(node, 0), im.value(node, 1)]
    im.bind(node, im.emit(node, T.UnaryGradOp, ins, props))


@handles(f"{MS}:SigmoidGrad", f"{MS}:TanhGrad", attributes={})
def sigmoid_tanh_grad(im: Importer, node: pb.NodeProto) -> None:
    _grad(im, node, _props("sigmoid" if node.op_type == "SigmoidGrad" else "tanh"))


@handles(f"{MS}:LeakyReluGrad", attributes=_ALPHA)
def leaky_relu_grad(im: Importer, node: pb.NodeProto) -> None:
    _grad(im, node, _props("leaky_relu", _alpha(node, LEAKY_RELU_ALPHA)))


@handles(f"{MS}:QuickGeluGrad", attributes=_ALPHA)
def quick_gelu_grad(im: Importer, node: pb.NodeProto) -> None:
    _grad(im, node, _props("quick_gelu", _alpha(node, QUICK_GELU_ALPHA)))

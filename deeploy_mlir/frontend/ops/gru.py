"""A forward GRU layer as onnxruntime-training's generator writes it for
torch's nn.GRU: com.microsoft GRUTraining (X, W, R, B, sequence_lens,
initial_h -> Y, Y_h, zrh) and com.microsoft GRUGrad (X, W, R, B,
sequence_lens, initial_h, Y, zrh, dY, dY_h -> dX, dW, dR, dB, dH0), onto
`training.gru` / `training.gru_grad` (dialects/training/gru.py).

Supported is what torch exports and onnxruntime's CPU kernels run: one
direction (forward), sigmoid and tanh, no clip, linear_before_reset = 1,
no sequence lengths. Anything else is refused naming the attribute or
input. An absent B, initial_h, dY or dY_h is zeros (a constant), as in
onnxruntime."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import MS, Importer, attrs, handles, node_label

_A = pb.AttributeProto
_ATTRS: dict[str, int] = {
    "activation_alpha": int(_A.FLOATS),
    "activation_beta": int(_A.FLOATS),
    "activations": int(_A.STRINGS),
    "clip": int(_A.FLOAT),
    "direction": int(_A.STRING),
    "hidden_size": int(_A.INT),
    "linear_before_reset": int(_A.INT),
}


def _text(v: object) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _check_attrs(im: Importer, node: pb.NodeProto) -> int:
    """The hidden size, after refusing what is not supported."""
    a = attrs(node)
    where = node_label(node)
    direction = _text(a.get("direction", "forward"))
    if direction != "forward":
        raise DeeployError(f"{where}: direction '{direction}' is not supported (only forward)")
    acts = [_text(v).lower() for v in a.get("activations", [b"Sigmoid", b"Tanh"])]
    if acts != ["sigmoid", "tanh"]:
        raise DeeployError(
            f"{where}: activations {acts} are not supported (only the default Sigmoid, Tanh)"
        )
    for k in ("activation_alpha", "activation_beta", "clip"):
        if k in a:
            raise DeeployError(f"{where}: attribute {k} is not supported")
    if int(a.get("linear_before_reset", 0)) != 1:
        raise DeeployError(
            f"{where}: linear_before_reset {int(a.get('linear_before_reset', 0))} is not "
            "supported (only 1, torch's nn.GRU)"
        )
    if len(node.input) > 4 and node.input[4]:
        raise DeeployError(
            f"{where}: input sequence_lens '{node.input[4]}' is not supported "
            "(every sequence has X's length)"
        )
    if "hidden_size" not in a:
        raise DeeployError(f"{where}: attribute hidden_size is missing")
    return int(a["hidden_size"])


def _optional(im: Importer, node: pb.NodeProto, i: int, shape: tuple[int, ...]) -> SSAValue:
    """Input #i, or zeros of `shape` when it is absent."""
    if len(node.input) > i and node.input[i]:
        return im.value(node, i)
    return im.constant(np.zeros(shape, np.float32))


def _inputs(im: Importer, node: pb.NodeProto) -> list[SSAValue]:
    """X, W, R, B, initial_h (absent B, initial_h: zeros)."""
    hidden = _check_attrs(im, node)
    x = im.value(node, 0)
    xs = T.shape_of(x.type)
    if len(xs) != 3:
        raise DeeployError(f"{node_label(node)}: X must have rank 3 ([S, N, I]), got {list(xs)}")
    r = im.value(node, 2)
    if T.shape_of(r.type) != (1, 3 * hidden, hidden):
        raise DeeployError(
            f"{node_label(node)}: R must have shape [1, {3 * hidden}, {hidden}] "
            f"(hidden_size {hidden}), got {list(T.shape_of(r.type))}"
        )
    b = _optional(im, node, 3, (1, 6 * hidden))
    h0 = _optional(im, node, 5, (1, xs[1], hidden))
    return [x, im.value(node, 1), r, b, h0]


@handles(f"{MS}:GRUTraining", attributes=_ATTRS)
def gru(im: Importer, node: pb.NodeProto) -> None:
    ins = _inputs(im, node)
    im.bind(node, im.emit(node, T.GRUOp, ins, n_results=3))


@handles(f"{MS}:GRUGrad", attributes=_ATTRS, optional_outputs=True)
def gru_grad(im: Importer, node: pb.NodeProto) -> None:
    ins = _inputs(im, node)
    s, n, _ = T.shape_of(ins[0].type)
    h = T.shape_of(ins[2].type)[2]
    for i, what in ((6, "Y"), (7, "zrh")):
        if len(node.input) <= i or not node.input[i]:
            raise DeeployError(f"{node_label(node)}: input {what} (#{i}) is required")
    ins += [im.value(node, 6), im.value(node, 7)]
    ins.append(_optional(im, node, 8, (s, 1, n, h)))
    ins.append(_optional(im, node, 9, (1, n, h)))
    # dA (result #5) is the kernels' own: no ONNX output names it
    im.bind(node, im.emit(node, T.GRUGradOp, ins, n_results=6)[:5])

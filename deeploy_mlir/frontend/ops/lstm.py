"""A one-layer forward LSTM as onnxruntime-training's generator writes it
for nn.LSTM: com.microsoft LSTMTraining (inputs X, W, R, B, sequence_lens,
initial_h, initial_c, P; outputs Y, Y_h, Y_c, all_cell_states, iofc) and
com.microsoft LSTMGrad (onnxruntime 1.19's 12 inputs X, W, R,
sequence_lens, initial_h, initial_c, Y, all_cell_states, iofc, dY, dY_h,
dY_c; outputs dX, dW, dR, dB, dH0, dC0), onto `training.lstm` and
`training.lstm_grad`.

What onnxruntime's kernels refuse is refused here, one line naming the
attribute or input: a direction other than forward, sequence_lens,
peepholes (P), input_forget 1, activations other than sigmoid, tanh,
tanh (or their alpha / beta), clip. An absent B, initial_h or initial_c,
and an absent dY, dY_h or dY_c, is a zero constant."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import SSAValue

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import MS, Importer, attrs, handles, node_label, ssa_name

_A = pb.AttributeProto
LSTM_ATTRS = {
    "activation_alpha": _A.FLOATS,
    "activation_beta": _A.FLOATS,
    "activations": _A.STRINGS,
    "clip": _A.FLOAT,
    "direction": _A.STRING,
    "hidden_size": _A.INT,
    "input_forget": _A.INT,
}
DEFAULT_ACTIVATIONS = ["sigmoid", "tanh", "tanh"]


def _text(v: object) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _hidden_size(node: pb.NodeProto) -> int:
    """The node's hidden_size after the refusals of unsupported attributes."""
    a = attrs(node)
    label = node_label(node)
    direction = _text(a.get("direction", "forward"))
    if direction != "forward":
        raise DeeployError(
            f"{label}: attribute direction '{direction}' is not supported (only forward)"
        )
    if int(a.get("input_forget", 0)) != 0:
        raise DeeployError(f"{label}: attribute input_forget 1 is not supported (only 0)")
    if "clip" in a:
        raise DeeployError(f"{label}: attribute clip is not supported (no clipping only)")
    acts = [_text(s).lower() for s in a.get("activations", DEFAULT_ACTIVATIONS)]
    if acts != DEFAULT_ACTIVATIONS:
        raise DeeployError(
            f"{label}: attribute activations {acts} is not supported (only sigmoid, tanh, tanh)"
        )
    for k in ("activation_alpha", "activation_beta"):
        if k in a:
            raise DeeployError(f"{label}: attribute {k} is not supported (default activations)")
    if "hidden_size" not in a:
        raise DeeployError(f"{label}: attribute hidden_size is missing")
    h = int(a["hidden_size"])
    if h <= 0:
        raise DeeployError(f"{label}: attribute hidden_size must be positive, got {h}")
    return h


def _given(node: pb.NodeProto, i: int) -> bool:
    return i < len(node.input) and bool(node.input[i])


def _refuse_input(node: pb.NodeProto, i: int, what: str) -> None:
    if _given(node, i):
        raise DeeployError(f"{node_label(node)}: input {what} is not supported")


def _or_zeros(im: Importer, node: pb.NodeProto, i: int, shape: tuple[int, ...]) -> SSAValue:
    """Input #i, or zeros of `shape` when the node leaves it out."""
    if _given(node, i):
        return im.value(node, i)
    return im.constant(np.zeros(shape, np.float32))


def _geometry(im: Importer, node: pb.NodeProto) -> tuple[int, int]:
    """(S, B) from X, which must have rank 3."""
    x = T.shape_of(im.value(node, 0).type)
    if len(x) != 3:
        raise DeeployError(
            f"{node_label(node)}: X must have rank 3 ([seq, batch, input]), got {T.fmt_shape(x)}"
        )
    return x[0], x[1]


@handles(f"{MS}:LSTMTraining", attributes=LSTM_ATTRS, optional_outputs=True)
def lstm(im: Importer, node: pb.NodeProto) -> None:
    h = _hidden_size(node)
    _refuse_input(node, 4, "sequence_lens (varying sequence lengths)")
    _refuse_input(node, 7, "P (peephole weights)")
    if len(node.input) > 8:
        raise DeeployError(f"{node_label(node)}: LSTMTraining has at most 8 inputs")
    if len(node.output) > 5:
        raise DeeployError(f"{node_label(node)}: LSTMTraining has 5 outputs")
    _, b = _geometry(im, node)
    ins = [im.value(node, i) for i in range(3)]
    ins.append(_or_zeros(im, node, 3, (1, 8 * h)))
    ins += [_or_zeros(im, node, i, (1, b, h)) for i in (5, 6)]
    props = {"hidden_size": IntegerAttr(h, i64)}
    res = im.emit(node, T.LstmOp, ins, props, n_results=5)
    im.bind(node, res)


@handles(f"{MS}:LSTMGrad", attributes=LSTM_ATTRS, optional_outputs=True)
def lstm_grad(im: Importer, node: pb.NodeProto) -> None:
    h = _hidden_size(node)
    if len(node.input) > 12:
        raise DeeployError(
            f"{node_label(node)}: LSTMGrad with {len(node.input)} inputs is not supported "
            "(onnxruntime 1.19's has 12: X, W, R, sequence_lens, initial_h, initial_c, Y, "
            "all_cell_states, iofc, dY, dY_h, dY_c)"
        )
    _refuse_input(node, 3, "sequence_lens (varying sequence lengths)")
    if len(node.output) > 6:
        raise DeeployError(f"{node_label(node)}: output #6 (dP, peephole weights) is not supported")
    for i, what in ((6, "Y"), (7, "all_cell_states"), (8, "iofc")):
        if not _given(node, i):
            raise DeeployError(f"{node_label(node)}: input {what} (#{i}) is missing")
    s, b = _geometry(im, node)
    ins = [im.value(node, i) for i in range(3)]
    ins += [_or_zeros(im, node, i, (1, b, h)) for i in (4, 5)]
    ins += [im.value(node, i) for i in (6, 7, 8)]
    ins.append(_or_zeros(im, node, 9, (s, 1, b, h)))
    ins += [_or_zeros(im, node, i, (1, b, h)) for i in (10, 11)]
    names = [*node.output, "", "", "", "", "", ""][:6]
    wanted = [(g, n) for g, n in zip(T.LSTM_GRADS[:4], names[:4], strict=True) if n]
    wanted += [("dH0", names[4]), ("dC0", names[5]), ("dA", "")]
    props = {
        "hidden_size": IntegerAttr(h, i64),
        "outputs": ArrayAttr([StringAttr(g) for g, _ in wanted]),
    }
    res = im.emit(node, T.LstmGradOp, ins, props, n_results=len(wanted))
    for (_, name), v in zip(wanted, res, strict=True):
        if name:
            v.name_hint = ssa_name(name)
            im.env[name] = v

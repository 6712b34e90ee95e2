"""Products: Gemm, MatMul and com.microsoft FusedMatMul.

* ``Gemm`` of rank-2 operands (C of rank <= 2) is ``gemm``; Deeploy's exporter
  also multiplies batched operands with it (over their last two dims):
  ``batch_matmul``.
* ``FusedMatMul`` (A, B; transA, transB, alpha; transBatchA = transBatchB =
  0) is ``alpha * A' @ B'`` with numpy's batch broadcasting: ``gemm`` when both
  operands have rank 2, else ``batch_matmul``.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import FloatAttr, UnitAttr, f32

from deeploy_mlir.dialects import training as T
from deeploy_mlir.errors import DeeployError
from deeploy_mlir.frontend import onnx_proto as pb
from deeploy_mlir.frontend.core import MS, Importer, Props, attrs, handles, node_label


@handles("Gemm")
def gemm(im: Importer, node: pb.NodeProto) -> None:
    a = attrs(node)
    ins = [im.value(node, 0), im.value(node, 1)]
    beta = float(a.get("beta", 1.0))
    if len(node.input) > 2 and node.input[2] and beta != 0.0:
        ins.append(im.value(node, 2))
    props: Props = {
        "trans_a": UnitAttr() if a.get("transA", 0) else None,
        "trans_b": UnitAttr() if a.get("transB", 0) else None,
        "alpha": FloatAttr(float(a.get("alpha", 1.0)), f32),
        "beta": FloatAttr(beta, f32),
    }
    ranks = [len(T.shape_of(v.type)) for v in ins]
    # Deeploy's Gemm also multiplies batched operands (over their last two dims)
    cls = T.GemmOp if ranks[:2] == [2, 2] and ranks[2:] in ([], [0], [1], [2]) else None
    im.bind(node, im.emit(node, cls or T.BatchMatmulOp, ins, props))


@handles("MatMul")
def matmul(im: Importer, node: pb.NodeProto) -> None:
    ins = [im.value(node, 0), im.value(node, 1)]
    ranks = [len(T.shape_of(v.type)) for v in ins]
    if ranks == [2, 2]:
        im.bind(node, im.emit(node, T.MatmulOp, ins))
        return
    if min(ranks) < 2:
        raise DeeployError(
            f"{node_label(node)}: MatMul of rank-1 operands is not supported, got ranks {ranks}"
        )
    im.bind(node, im.emit(node, T.BatchMatmulOp, ins))


@handles(f"{MS}:FusedMatMul")
def fused_matmul(im: Importer, node: pb.NodeProto) -> None:
    a = attrs(node)
    for k in ("transBatchA", "transBatchB"):
        if int(a.get(k, 0)) != 0:
            raise DeeployError(f"{node_label(node)}: {k} = {a[k]} is not supported (only 0)")
    ins = [im.value(node, 0), im.value(node, 1)]
    ranks = [len(T.shape_of(v.type)) for v in ins]
    if min(ranks) < 2:
        raise DeeployError(
            f"{node_label(node)}: FusedMatMul of rank-1 operands is not supported, got ranks "
            f"{ranks}"
        )
    alpha = float(a.get("alpha", 1.0))
    if not np.isfinite(alpha):
        raise DeeployError(f"{node_label(node)}: alpha must be a finite number, got {alpha}")
    props: Props = {
        "trans_a": UnitAttr() if int(a.get("transA", 0)) else None,
        "trans_b": UnitAttr() if int(a.get("transB", 0)) else None,
        "alpha": FloatAttr(alpha, f32),
        "beta": FloatAttr(0.0, f32),
    }
    cls = T.GemmOp if ranks == [2, 2] else T.BatchMatmulOp
    im.bind(node, im.emit(node, cls, ins, props))

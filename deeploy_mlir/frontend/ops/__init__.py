"""The ONNX op families of the importer. Each module registers its handlers
with `deeploy_mlir.frontend.core.handles` when it is imported; importing this
package imports them all. A new family is a new module here plus its line in
FAMILIES."""

from __future__ import annotations

from deeploy_mlir.frontend.ops import (
    conv,
    elementwise,
    gather_split,
    linalg,
    loss,
    optimizer,
    shape,
    transformer,
)

FAMILIES = (elementwise, linalg, loss, optimizer, conv, shape, transformer, gather_split)

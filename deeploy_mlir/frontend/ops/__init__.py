"""The ONNX op families of the importer. Each module registers its handlers
with `deeploy_mlir.frontend.core.handles` when it is imported; importing this
package imports them all. A new family is a new module here plus its line in
FAMILIES."""

from __future__ import annotations

from deeploy_mlir.frontend.ops import activation
from deeploy_mlir.frontend.ops import batchnorm
from deeploy_mlir.frontend.ops import conv
from deeploy_mlir.frontend.ops import elementwise
from deeploy_mlir.frontend.ops import linalg
from deeploy_mlir.frontend.ops import logic
from deeploy_mlir.frontend.ops import loss
from deeploy_mlir.frontend.ops import optimizer
from deeploy_mlir.frontend.ops import shape
from deeploy_mlir.frontend.ops import transformer

FAMILIES = (
    elementwise,
    linalg,
    loss,
    optimizer,
    conv,
    shape,
    transformer,
    activation,
    batchnorm,
    logic,
)

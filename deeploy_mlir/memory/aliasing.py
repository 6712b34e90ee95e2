"""The in-place decisions and state updates that travel in the IR between
training-inplace-alias and training-bufferize: `INPLACE` (the
``#training.inplace<k, ...>`` decision, one entry per result, -1 = own buffer),
`inplace_of`, `set_inplace` and `updates_of` (result index -> the argument it is
the new value of) are the training dialect's typed view of that metadata
(dialects/training/meta.py); this module names them for the passes.
"""

from __future__ import annotations

from deeploy_mlir.dialects.training import INPLACE, inplace_of, set_inplace, updates_of

__all__ = ["INPLACE", "inplace_of", "set_inplace", "updates_of"]

"""`python -m deeploy_mlir.cli`: the deeploy-mlir command."""

from deeploy_mlir.cli import entry

entry()

"""Targets: the boards deeploy-mlir compiles for (boards/*.yaml)."""

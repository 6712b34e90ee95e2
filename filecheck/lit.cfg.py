# lit configuration for the FileCheck tests of deeploy-mlir (run through pytest:
# tests/test_filecheck.py). Tools come from the installed package: deeploy-opt,
# and filecheck (the Python port of LLVM FileCheck).
import os

import lit.formats

config.name = "deeploy-mlir"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["Inputs"]  # noqa: F821
config.environment["PATH"] = os.environ.get("PATH", "")  # noqa: F821
if "PYTHONPATH" in os.environ:  # a checkout run without installing it
    config.environment["PYTHONPATH"] = os.environ["PYTHONPATH"]  # noqa: F821

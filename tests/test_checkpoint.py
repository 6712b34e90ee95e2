"""The built-in checkpoint reader (frontend/checkpoint.py: no onnxruntime,
no torch) gives exactly what onnxruntime-training's own CheckpointState gives,
for every bundled example and model; a file it does not handle is left to
onnxruntime-training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES

from deeploy_mlir.frontend.checkpoint import read_checkpoint_file as _read_checkpoint_flatbuffer
from deeploy_mlir.frontend.graph import load_checkpoint

DIRS = sorted(d for d in EXAMPLES.glob("*/") if (d / "checkpoint").is_file())


@pytest.mark.parametrize("d", DIRS, ids=[d.name for d in DIRS])
def test_fast_reader_equals_onnxruntime_training(d: Path) -> None:
    from onnxruntime.training.api import CheckpointState

    fast = _read_checkpoint_flatbuffer(d / "checkpoint")
    assert fast is not None
    state = CheckpointState.load_checkpoint(str(d / "checkpoint"))
    ref = {name: np.array(p.data) for name, p in state.parameters}
    assert set(fast) == set(ref)
    for k, want in ref.items():
        assert fast[k].dtype == want.dtype and fast[k].shape == want.shape, k
        assert np.array_equal(fast[k], want), k


def test_a_file_it_does_not_handle_goes_to_onnxruntime(tmp_path: Path) -> None:
    bad = tmp_path / "checkpoint"
    bad.write_bytes(b"not a flatbuffer at all")
    assert _read_checkpoint_flatbuffer(bad) is None
    from deeploy_mlir.errors import DeeployError

    with pytest.raises(DeeployError, match="not an onnxruntime-training checkpoint"):
        load_checkpoint(bad)


def test_without_the_ort_extra_an_unreadable_checkpoint_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint the built-in reader leaves (here: not a FlatBuffer) with
    onnxruntime absent is one error naming the extra that reads it."""
    import sys

    from deeploy_mlir.errors import DeeployError

    bad = tmp_path / "checkpoint"
    bad.write_bytes(b"not a flatbuffer at all")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    monkeypatch.setitem(sys.modules, "onnxruntime.training", None)
    monkeypatch.setitem(sys.modules, "onnxruntime.training.api", None)
    with pytest.raises(DeeployError) as e:
        load_checkpoint(bad)
    msg = str(e.value)
    assert "pip install 'deeploy-mlir[ort]'" in msg and "\n" not in msg
    assert str(bad) in msg


def test_reader_imports_neither_onnxruntime_nor_torch() -> None:
    import subprocess
    import sys

    from conftest import EXAMPLES as ex

    code = (
        "import sys; from pathlib import Path;"
        "from deeploy_mlir.frontend.onnx_import import import_model;"
        f"m = import_model({str(ex / 'mlp_small')!r});"
        "assert m.params, 'no parameters';"
        "print(sorted(k for k in sys.modules if k.split('.')[0] in ('torch', 'onnxruntime')))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout

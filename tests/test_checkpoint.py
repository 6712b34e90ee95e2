"""The checkpoint reader that avoids importing onnxruntime (and with it
torch) gives exactly what onnxruntime-training's own CheckpointState gives,
for every bundled example and model; a file it does not handle is left to
onnxruntime-training."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES

from deeploy_mlir.frontend.onnx_import import _load_checkpoint, _read_checkpoint_flatbuffer

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
        _load_checkpoint(bad)

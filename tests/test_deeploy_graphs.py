"""Deeploy's own test folders (../shared/models/deeploy: network.onnx,
inputs.npz, outputs.npz) through `deeploy-mlir test`: one step of each graph,
built with gcc against the PMSIS host emulation, every graph output compared
with the outputs Deeploy's suite ships (absolute tolerance 1e-4, as Deeploy's
runner). The expected numbers are Deeploy's, not ours.

Configurations: untiled (each op's whole tensors in L1) and tiled at L1 =
64,000 and 128,000 bytes with an L2 budget of 1,024,000 bytes, with L2 as the
home level and with L3 as the home level (`--home L3`: every tensor that lives
across the step in L3, staged through L2 in tiles), single and double
buffered: the whole matrix for Transformer_Train (plus L1 = 16,000 bytes,
where its ops are really split into tiles) and the CCT2 models; the single-op
folders untiled, at 64,000 bytes home L2 double buffered and home L3 single
buffered. CCT2's second convolution (X 1x64x16x16, W
128x64x3x3) needs 68,864 bytes of L1 with whole input planes and its smallest
channel tiles, more than 64,000 bytes (and than each of the two buffers at
128,000 bytes): there tile-select splits its output rows, each input tile
being the rows the windows read (the halo included), and the first and last
row tiles get their own pads.

The C is built with -O0 here to keep the file fast (the numbers are the same
bits as -O2: no -ffast-math, and the kernels contract with explicit fmaf);
tests/test_end_to_end.py builds with the Makefile's -O2."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import SHARED_MODELS, STACKS

from deeploy_mlir.cli import main

if not SHARED_MODELS.is_dir():
    pytest.skip(f"{SHARED_MODELS} is absent: Deeploy's test folders", allow_module_level=True)

SINGLE_OPS = [
    "FP32_GEMM_Regular",
    "FP32_GEMM_TransB",
    "FP32_ReLU",
    "FP32_Conv_Regular_2D_Bias",
    "SoftmaxCrossEntropy",
    "SoftmaxCrossEntropyGrad",
    "SoftmaxGrad",
]

L2 = "1024000"
UNTILED = ["--tiling", "untiled", "--l1", L2, "--l2", L2]


def tiled(l1: int, home: str, buffering: str) -> list[str]:
    """`l1`: the L1 arena's budget (--l1 adds the cluster stacks)."""
    return ["--l1", str(STACKS + l1), "--l2", L2, "--home", home, "--buffering", buffering]


MATRIX: dict[str, list[str]] = {"untiled": UNTILED}
for _l1 in (64000, 128000):
    for _home in ("L2", "L3"):
        for _buf in ("single", "double"):
            MATRIX[f"l1={_l1}-home={_home}-{_buf}"] = tiled(_l1, _home, _buf)

EXTRA = {
    f"l1=16000-home={h}-{b}": tiled(16000, h, b) for h in ("L2", "L3") for b in ("single", "double")
}
#: the single-op folders: untiled, and the smallest L1 with each home level
#: (double and single buffered); the three graphs: the whole matrix
SINGLE_OP_CONFIGS = ["untiled", "l1=64000-home=L2-double", "l1=64000-home=L3-single"]
CASES = [(d, c) for d in SINGLE_OPS for c in SINGLE_OP_CONFIGS]
CASES += [(d, c) for d in ["Transformer_Train", "CCT2_LP", "CCT2_FT1"] for c in MATRIX]
CASES += [("Transformer_Train", c) for c in EXTRA]
CONFIGS = {**MATRIX, **EXTRA}

SUMMARY = re.compile(r": (\d+)/(\d+) outputs match \(atol 0\.0001, largest \|difference\| (\S+)\)")


@pytest.fixture(autouse=True)
def _fast_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CFLAGS", "-std=gnu11 -ffp-contract=off -O0 -Wall -Wextra -Werror")


@pytest.mark.parametrize(("folder", "config"), CASES, ids=[f"{d}-{c}" for d, c in CASES])
def test_deeploy_folder_matches_its_outputs(
    folder: str, config: str, capsys: pytest.CaptureFixture[str]
) -> None:
    d = SHARED_MODELS / folder
    code = main(["test", str(d), *CONFIGS[config]])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    m = SUMMARY.search(out)
    assert m is not None, out
    n_ok, n, worst = int(m.group(1)), int(m.group(2)), float(m.group(3))
    assert n_ok == n >= 1 and worst <= 1e-4, out
    # one line per graph output, each within the tolerance
    assert out.count("  ok\n") == n, out


def test_a_wrong_expected_output_is_a_mismatch(tmp_path: Path, capsys) -> None:
    """The comparison can fail: outputs.npz perturbed by 1e-3 in one element
    gives exit code 1 and MISMATCH for that output only."""
    import shutil

    import numpy as np

    src = SHARED_MODELS / "SoftmaxGrad"
    d = tmp_path / "SoftmaxGrad"
    shutil.copytree(src, d)
    with np.load(src / "outputs.npz") as z:
        arrays = {k: np.array(z[k]) for k in z.files}
    key = next(iter(arrays))
    arrays[key].reshape(-1)[3] += 1e-3
    np.savez(d / "outputs.npz", **arrays)
    code = main(["test", str(d), "--tiling", "none"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "MISMATCH" in out and "0/1 outputs match" in out
    # a looser tolerance accepts it
    assert main(["test", str(d), "--tiling", "none", "--atol", "2e-3"]) == 0

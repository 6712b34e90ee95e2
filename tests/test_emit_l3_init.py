"""The initial values of tensors whose home is L3 (data.h's DM_L3_INIT): they
are marked for the section .dm_l3_init (which the GVSoC link script places
in the L2 heap, docs/architecture.md) and the harness writes them to L3 before
it writes anything to L2. A project without L3 homes has no such mark.
tests/test_gvsoc.py checks the built ELF and the numbers on GVSoC."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import EXAMPLES, STACKS

from deeploy_mlir.cli.compile import compile_model
from deeploy_mlir.cli.parser import build_parser
from deeploy_mlir.emitters.c import render

MLP = EXAMPLES / "mlp_small"


def _files(tmp: Path, *opts: str) -> dict[str, str]:
    args = build_parser().parse_args(
        ["lower", str(MLP), "-o", str(tmp / "unused"), "--data", str(MLP / "data.npz"), *opts]
    )
    return render(compile_model(args, need_data=False, notes=False).project)  # type: ignore[arg-type]


def _levels(files: dict[str, str]) -> dict[str, str]:
    """Buffer name -> level of the manifest's weights."""
    man = json.loads(files["manifest.json"])
    return {b["name"]: b["level"] for b in man["buffers"] if b["kind"] == "weight"}


def test_l3_weights_are_marked_and_written_first(tmp_path: Path) -> None:
    files = _files(tmp_path, "--weights-in-l3", "--tiling", "tiled", "--l1", str(STACKS + 1400))
    levels = _levels(files)
    assert set(levels.values()) == {"L3"}, "the case must put the weights in L3"
    data = files["data.h"]
    marked = set(re.findall(r"static const float dm_init_(\w+)\[\d+\] DM_L3_INIT = \{", data))
    assert marked == {re.sub(r"\W", "_", n) for n in levels}  # c_ident of each name
    assert '#define DM_L3_INIT __attribute__((section(".dm_l3_init")))' in data
    # the harness: every L3 write of an initial value before the first write to L2
    body = files["harness.c"].split("static void dm_train(void *arg)", 1)[1]
    lines = [ln.strip() for ln in body.splitlines()]
    first_l2 = next(
        i for i, ln in enumerate(lines) if ln.startswith(("memcpy(DM_BUF", "memset(DM_BUF"))
    )
    inits = [i for i, ln in enumerate(lines) if re.match(r"dm_l3_write\(DM_BUF_\w+, dm_init_", ln)]
    assert len(inits) == len(levels) and max(inits) < first_l2


def test_no_mark_without_l3_homes(tmp_path: Path) -> None:
    files = _files(tmp_path)
    assert set(_levels(files).values()) == {"L2"}
    assert "DM_L3_INIT" not in files["data.h"]
    assert "dm_l3_write" not in files["harness.c"]

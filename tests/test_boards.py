"""The shipped boards load and describe both DMA hops; `deeploy-mlir board`
prints them (the bad board files are in tests/bad_inputs)."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

from deeploy_mlir.targets.boards import available_boards, load_board


def test_the_shipped_boards() -> None:
    assert available_boards() == ["gap9_evk", "pulp_slowram", "siracusa"]


@pytest.mark.parametrize("name", ["gap9_evk", "pulp_slowram", "siracusa"])
def test_board_loads_and_prints(name: str) -> None:
    b = load_board(name)
    assert b.name == name
    assert {e.hop for e in b.engines.values()} == {("L2", "L1"), ("L3", "L2")}
    assert b.levels["L1"] < b.levels["L2"] < b.levels["L3"]
    r = run_cli("board", name, "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["cores"] == b.cores and doc["levels"] == b.levels


def test_only_gap9s_l3_request_is_shared() -> None:
    # GAP9's pi_cl_ram_req_t holds one transfer (see the dma-decompose tests)
    shared = {n: load_board(n).engines["ram"].shared_request for n in available_boards()}
    assert shared == {"gap9_evk": True, "pulp_slowram": False, "siracusa": False}


def test_the_slow_ram_board_is_slower() -> None:
    slow, fast = load_board("pulp_slowram"), load_board("siracusa")
    assert slow.engines["ram"].bandwidth < fast.engines["ram"].bandwidth

"""The shipped boards load and describe both DMA hops; `deeploy-mlir board`
prints them. Every bad board file is one DeeployError line naming the file and
the field (the same cases through the CLI are in tests/bad_inputs)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from board_edits import DELETE, edited, siracusa
from conftest import run_cli

from deeploy_mlir.errors import DeeployError
from deeploy_mlir.targets.boards import (
    BOARDS_DIR,
    KERNEL_FAMILIES,
    OPTIONAL_FAMILIES,
    available_boards,
    load_board,
)


def test_the_shipped_boards() -> None:
    assert available_boards() == ["gap9_evk", "pulp_slowram", "siracusa", "siracusa_zfinx"]


@pytest.mark.parametrize("name", ["gap9_evk", "pulp_slowram", "siracusa", "siracusa_zfinx"])
def test_board_loads_and_prints(name: str) -> None:
    b = load_board(name)
    assert b.name == name
    assert {e.hop for e in b.engines.values()} == {("L2", "L1"), ("L3", "L2")}
    assert b.levels["L1"] < b.levels["L2"] < b.levels["L3"]
    r = run_cli("board", name, "--json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["cores"] == b.cores and doc["levels"] == b.levels


def test_every_l3_request_holds_one_transfer() -> None:
    # pi_cl_ram_req_t holds one transfer in pulp-sdk and gap_sdk alike (see the
    # dma-decompose tests); the cluster DMA command may be reused in flight
    for n in available_boards():
        b = load_board(n)
        assert b.engines["ram"].shared_request, n
        assert not b.engines["mchan"].shared_request, n


def test_the_slow_ram_board_is_slower() -> None:
    slow, fast = load_board("pulp_slowram"), load_board("siracusa")
    assert slow.engines["ram"].bandwidth < fast.engines["ram"].bandwidth


# --------------------------------------------------------------------------
# load_board directly: every field a user can get wrong is one DeeployError
# line naming the file and the field path


def _error(path: Path) -> str:
    with pytest.raises(DeeployError) as e:
        load_board(str(path))
    msg = str(e.value)
    assert "\n" not in msg
    return msg


BAD_FIELDS: list[tuple[str, dict[str, object], str]] = [
    # unknown keys
    ("unknown_key", {"voltage": 0.8}, "voltage is not a known field"),
    ("unknown_level", {"levels.L4": 1024}, "levels.L4 is not a known field"),
    (
        "unknown_engine_key",
        {"engines.mchan.latency": 3},
        "engines.mchan.latency is not a known field",
    ),
    (
        "unknown_family",
        {"kernels.gemn": {"macs_per_cycle_per_core": 1.0}},
        "kernels.gemn is not a known field",
    ),
    (
        "unknown_kernel_key",
        {"kernels.gemm.simd": True},
        "kernels.gemm.simd is not a known field",
    ),
    # missing fields
    ("missing_name", {"name": DELETE}, "name is missing"),
    ("missing_cores", {"cores": DELETE}, "cores is missing"),
    ("missing_l3", {"levels.L3": DELETE}, "levels.L3 is missing"),
    ("missing_setup", {"engines.ram.setup": DELETE}, "engines.ram.setup is missing"),
    ("missing_family", {"kernels.loss": DELETE}, "kernels.loss is missing"),
    (
        "missing_throughput",
        {"kernels.conv.macs_per_cycle_per_core": DELETE},
        "kernels.conv.macs_per_cycle_per_core is missing",
    ),
    ("no_l3_engine", {"engines.ram": DELETE}, "engines has no engine for the L3-L2 hop"),
    # wrong types
    ("name_number", {"name": 5}, "name must be a non-empty string, got 5"),
    ("cores_text", {"cores": "8"}, "cores must be an integer, got '8'"),
    ("cores_bool", {"cores": True}, "cores must be an integer, got True"),
    ("clock_float", {"clock_hz": 3.6e8}, "clock_hz must be an integer, got 360000000.0"),
    ("l1_float", {"levels.L1": 1.5}, "levels.L1 must be an integer, got 1.5"),
    ("l2_text", {"levels.L2": "2MiB"}, "levels.L2 must be an integer, got '2MiB'"),
    ("levels_list", {"levels": [1, 2, 3]}, "levels must be a mapping, got list"),
    ("engines_list", {"engines": ["mchan"]}, "engines must be a non-empty mapping of engine names"),
    ("engines_empty", {"engines": {}}, "engines must be a non-empty mapping of engine names"),
    ("engine_number", {"engines.mchan": 8}, "engines.mchan must be a mapping, got int"),
    ("kernel_number", {"kernels.gemm": 0.5}, "kernels.gemm must be a mapping, got float"),
    ("kernels_empty", {"kernels": None}, "kernels must be a mapping, got nothing"),
    (
        "bandwidth_text",
        {"engines.ram.bandwidth": "fast"},
        "engines.ram.bandwidth must be a number, got 'fast'",
    ),
    ("setup_float", {"engines.ram.setup": 2.5}, "engines.ram.setup must be an integer, got 2.5"),
    (
        "shared_text",
        {"engines.ram.shared_request": "maybe"},
        "engines.ram.shared_request must be true or false, got 'maybe'",
    ),
    ("rank_text", {"engines.ram.rank": "2"}, "engines.ram.rank must be 1 or 2, got '2'"),
    ("rank_bool", {"engines.ram.rank": True}, "engines.ram.rank must be 1 or 2, got True"),
    (
        "hop_bad",
        {"engines.ram.hop": "L3-L1"},
        "engines.ram.hop must be one of L2-L1, L3-L2, got 'L3-L1'",
    ),
    (
        "hop_twice",
        {"engines.ram.hop": "L2-L1"},
        "engines.ram.hop L2-L1 is already served by engine 'mchan'",
    ),
    # values out of range
    (
        "bandwidth_zero",
        {"engines.mchan.bandwidth": 0},
        "engines.mchan.bandwidth must be > 0, got 0",
    ),
    (
        "bandwidth_negative",
        {"engines.ram.bandwidth": -1.5},
        "engines.ram.bandwidth must be > 0, got -1.5",
    ),
    (
        "bandwidth_inf",
        {"engines.ram.bandwidth": float("inf")},
        "engines.ram.bandwidth must be a finite number, got inf",
    ),
    (
        "bandwidth_nan",
        {"engines.ram.bandwidth": float("nan")},
        "engines.ram.bandwidth must be a finite number, got nan",
    ),
    (
        "bandwidth_huge",
        {"engines.ram.bandwidth": 10**400},
        f"engines.ram.bandwidth must be a finite number, got {10**400}",
    ),
    (
        "throughput_zero",
        {"kernels.gemm.macs_per_cycle_per_core": 0},
        "kernels.gemm.macs_per_cycle_per_core must be > 0, got 0",
    ),
    ("setup_negative", {"engines.mchan.setup": -30}, "engines.mchan.setup must be >= 0, got -30"),
    ("rank_three", {"engines.mchan.rank": 3}, "engines.mchan.rank must be 1 or 2, got 3"),
    ("rank_zero", {"engines.mchan.rank": 0}, "engines.mchan.rank must be 1 or 2, got 0"),
    ("cores_zero", {"cores": 0}, "cores must be >= 1, got 0"),
    ("isa_bad", {"isa": "rv64"}, "isa must be one of f, zfinx, got 'rv64'"),
    ("isa_number", {"isa": 5}, "isa must be one of f, zfinx, got 5"),
    ("isa_f_clang", {"isa": "f-clang"}, "isa must be one of f, zfinx, got 'f-clang'"),
    ("clock_zero", {"clock_hz": 0}, "clock_hz must be >= 1, got 0"),
    ("l1_zero", {"levels.L1": 0}, "levels.L1 must be >= 1, got 0"),
    ("l2_negative", {"levels.L2": -4}, "levels.L2 must be >= 1, got -4"),
    (
        "l3_4gib",
        {"levels.L3": 1 << 32},
        "levels.L3 must be < 4 GiB (4294967296 bytes), got 4294967296",
    ),
    (
        "l3_huge",
        {"levels.L3": 1 << 70},
        f"levels.L3 must be < 4 GiB (4294967296 bytes), got {1 << 70}",
    ),
]


@pytest.mark.parametrize(
    ("changes", "err"), [(c, e) for _, c, e in BAD_FIELDS], ids=[n for n, _, _ in BAD_FIELDS]
)
def test_bad_field(tmp_path: Path, changes: dict[str, object], err: str) -> None:
    f = tmp_path / "b.yaml"
    f.write_text(yaml.safe_dump(edited(siracusa(), changes)))
    assert _error(f) == f"board '{f}': {err}"


def test_the_message_names_a_relative_file_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    doc = siracusa()  # the L3 engine renamed: the message uses the user's name
    doc["engines"]["l3_ram"] = doc["engines"].pop("ram") | {"bandwidth": 0}
    Path("x.yaml").write_text(yaml.safe_dump(doc))
    assert _error(Path("x.yaml")) == "board 'x.yaml': engines.l3_ram.bandwidth must be > 0, got 0"


def test_the_largest_32_bit_size_is_accepted(tmp_path: Path) -> None:
    f = tmp_path / "b.yaml"
    f.write_text(yaml.safe_dump(edited(siracusa(), {"levels.L3": (1 << 32) - 1})))
    assert load_board(str(f)).levels["L3"] == (1 << 32) - 1


@pytest.mark.parametrize(
    ("text", "err"),
    [
        ("cores: [8\n", "not valid YAML at line 2"),  # an unclosed list, found at the end
        ("- 8\n", "the file must be a mapping, got list"),
        ("just words\n", "the file must be a mapping, got str"),
        ("", "the file is empty"),
        ("# only a comment\n", "the file is empty"),
    ],
    ids=["not_yaml", "a_list", "a_string", "empty", "only_a_comment"],
)
def test_bad_file(tmp_path: Path, text: str, err: str) -> None:
    f = tmp_path / "b.yaml"
    f.write_text(text)
    assert _error(f) == f"board '{f}': {err}"


def test_not_utf8(tmp_path: Path) -> None:
    f = tmp_path / "b.yaml"
    f.write_bytes(b"name: \xff\xfe\n")
    assert _error(f) == f"board '{f}': not valid YAML (not UTF-8 text)"


def test_missing_file_and_directory(tmp_path: Path) -> None:
    assert _error(tmp_path / "none.yaml") == (
        f"board '{tmp_path}/none.yaml': cannot read it (No such file or directory)"
    )
    (tmp_path / "d.yaml").mkdir()
    assert (
        _error(tmp_path / "d.yaml") == f"board '{tmp_path}/d.yaml': cannot read it (Is a directory)"
    )


def test_unknown_board_name() -> None:
    with pytest.raises(DeeployError) as e:
        load_board("sirakusa")
    assert (
        str(e.value)
        == "unknown board 'sirakusa' (available: gap9_evk, pulp_slowram, siracusa, siracusa_zfinx)"
    )


# --------------------------------------------------------------------------
# the shipped boards


@pytest.mark.parametrize("name", ["gap9_evk", "pulp_slowram", "siracusa", "siracusa_zfinx"])
def test_shipped_board_is_complete(name: str) -> None:
    b = load_board(name)
    assert load_board(str(BOARDS_DIR / f"{name}.yaml")) == b  # by name == by path
    assert set(b.kernels) == set(KERNEL_FAMILIES) | set(OPTIONAL_FAMILIES)
    assert b.engine_between("L1", "L2") is b.engines["mchan"]
    assert b.engine_between("L3", "L2") is b.engines["ram"]
    assert all(0 < size < 1 << 32 for size in b.levels.values())


@pytest.mark.parametrize("name", ["gap9_evk", "pulp_slowram", "siracusa", "siracusa_zfinx"])
def test_every_number_says_where_it_comes_from(name: str) -> None:
    numbers = 0
    for line in (BOARDS_DIR / f"{name}.yaml").read_text().splitlines():
        if re.search(r":\s*-?[\d.]+\}?\s*$", line.split("#")[0]):
            numbers += 1
            assert "#" in line, f"{name}.yaml: no comment on {line.strip()!r}"
    # cores, clock; levels; per engine (bandwidth, setup, rank); per family;
    # siracusa's calibrated file also gives mchan's issue and its 4 copy
    # kinds, and every optional family (depthwise, grouped, the strided
    # convolutions, the conv gradients, binary, transpose, batch_matmul);
    # and ram's issue, its 4 copy kinds, queue and chunk; siracusa (the F
    # build's micro-tiles) also gemm_tiles' edge, single and alone and
    # conv_tiles' narrow
    calibrated = name in ("siracusa", "siracusa_zfinx")
    extra = 1 + 4 + len(OPTIONAL_FAMILIES) + 1 + 4 + 2 if calibrated else 0
    extra += 3 + 1 if name == "siracusa" else 0
    assert numbers == 2 + 3 + 2 * 3 + 6 + extra


def test_gap9_computes_on_8_of_its_9_cores() -> None:
    assert load_board("gap9_evk").cores == 8


def test_engine_between_unknown_levels() -> None:
    with pytest.raises(ValueError, match="board 'siracusa' has no engine between L3 and L1"):
        load_board("siracusa").engine_between("L3", "L1")


def test_optional_fields_default_and_are_checked(tmp_path: Path) -> None:
    """issue and call default to 0, depthwise to conv's throughput; each is
    validated like the other numbers."""
    b = load_board("gap9_evk")  # gives none of them
    assert b.engines["mchan"].issue == 0
    assert b.kernels["gemm"].call == 0
    assert b.kernels["depthwise"] == b.kernels["conv"]
    s = load_board("siracusa")
    assert s.kernels["depthwise"] != s.kernels["conv"]
    for path, bad, msg in (
        ("engines.mchan.issue", -1, "must be >= 0"),
        ("kernels.gemm.call", 1.5, "must be an integer"),
        ("kernels.depthwise.macs_per_cycle_per_core", 0, "must be > 0"),
    ):
        f = tmp_path / "b.yaml"
        f.write_text(yaml.safe_dump(edited(siracusa(), {path: bad})))
        assert _error(f).startswith(f"board '{f}': {path} {msg}"), _error(f)


def test_per_output_cold_and_copy_kinds_default_and_are_checked(tmp_path: Path) -> None:
    """per_output, cold and an engine's copies are optional (0, 0, none: the
    engine's setup and bandwidth for every kind); the conv gradient and
    grouped families stand in from their parents; each is validated."""
    b = load_board("gap9_evk")
    assert b.kernels["gemm"].per_output == 0 and b.kernels["gemm"].cold == 0
    mchan = b.engines["mchan"]
    assert mchan.copies == ()
    assert mchan.copy_cost("in-2d") == (mchan.setup, mchan.bandwidth)
    for child, parent in (("grouped", "depthwise"), ("conv_dx", "conv"), ("grouped_dw", "grouped")):
        assert b.kernels[child] == b.kernels[parent]
    s = load_board("siracusa")
    kinds = {k for k, _, _ in s.engines["mchan"].copies}
    assert kinds == {"in-1d", "in-2d", "out-1d", "out-2d"}
    k, setup, bw = s.engines["mchan"].copies[0]
    assert s.engines["mchan"].copy_cost(k) == (setup, bw)
    for path, bad, msg in (
        ("kernels.gemm.per_output", -1, "must be >= 0"),
        ("kernels.gemm.cold", 2.5, "must be an integer"),
        ("engines.mchan.copies.in-3d", {"setup": 1, "bandwidth": 1}, "is not a known field"),
        ("engines.mchan.copies.in-1d.bandwidth", 0, "must be > 0"),
        ("engines.mchan.copies.in-1d.setup", -3, "must be >= 0"),
    ):
        f = tmp_path / "b.yaml"
        f.write_text(yaml.safe_dump(edited(siracusa(), {path: bad})))
        assert _error(f).startswith(f"board '{f}': {path} {msg}"), _error(f)


def test_queue_chunk_and_row_transfers_default_and_are_checked(tmp_path: Path) -> None:
    """An engine's queue (unbounded), chunk (0: any size) and row_transfers
    (false) are optional; siracusa's L3 engine gives them as runtime_c/gvsoc's
    ram_gvsoc.c runs its copies; each is validated."""
    e = load_board("gap9_evk").engines["ram"]
    assert (e.queue, e.chunk, e.row_transfers) == (None, 0, False)
    r = load_board("siracusa").engines["ram"]
    assert (r.queue, r.chunk, r.row_transfers) == (8, 32768, True)
    for path, bad, msg in (
        ("engines.ram.queue", -1, "must be >= 0"),
        ("engines.ram.chunk", 1.5, "must be an integer"),
        ("engines.ram.row_transfers", 1, "must be"),
    ):
        f = tmp_path / "b.yaml"
        f.write_text(yaml.safe_dump(edited(siracusa(), {path: bad})))
        assert _error(f).startswith(f"board '{f}': {path} {msg}"), _error(f)


# --------------------------------------------------------------------------
# the cores' float ISA: siracusa (the F GVSoC build) and siracusa_zfinx (the
# chip's Zfinx cores) are one chip, kernels apart


def test_isa_defaults_to_f_and_siracusa_zfinx_is_the_same_chip() -> None:
    f, z = load_board("siracusa"), load_board("siracusa_zfinx")
    assert (f.isa, z.isa, load_board("gap9_evk").isa) == ("f", "zfinx", "f")
    # cores, clock, memories and DMA engines are the chip's (calibrate.py
    # --isa zfinx copies them from siracusa.yaml); the kernels are the ISA's
    assert (z.cores, z.clock_hz, z.levels, z.engines) == (f.cores, f.clock_hz, f.levels, f.engines)
    assert z.kernels != f.kernels
    assert set(z.kernels) == set(f.kernels)


def test_board_prints_a_non_default_isa() -> None:
    r = run_cli("board", "siracusa_zfinx")
    assert r.code == 0, r.err
    assert "float ISA: zfinx" in r.out
    assert "float ISA" not in run_cli("board", "siracusa").out
    assert json.loads(run_cli("board", "siracusa_zfinx", "--json").out)["isa"] == "zfinx"

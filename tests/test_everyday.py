"""Everyday use (issue 22): the top-level help, --version, the harness's
decimal floats, the generated README's grammar, minimal-l1's buffering, an
empty --pass-pipeline, --emit-ir on a failed lower, one spelling of the kind
names, and the progress display (silent off a terminal, shown on one)."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, ROOT, STACKS, run_cli, stacks_of

from deeploy_mlir.cli import parse_run_output

COMMANDS = ("lower", "run", "report", "minimal-l1", "board", "test", "sweep")
MLP = EXAMPLES / "mlp_small"
WIDE = EXAMPLES / "mlp_wide"
ANSI = re.compile(r"\x1b\[")


def test_help_lists_every_command_with_one_line() -> None:
    r = run_cli("--help")
    assert r.code == 0
    # argparse's list of sub-commands: "    NAME   one line of help"
    listed = {}
    for line in r.out.splitlines():
        m = re.match(r"^    ([a-z0-9-]+)\s{2,}(\S.*)$", line)
        if m:
            listed[m.group(1)] = m.group(2)
    assert set(COMMANDS) <= set(listed), listed
    # and the description's table names each with its one line
    for c in COMMANDS:
        assert re.search(rf"^  {re.escape(c)}\s+\S", r.out, re.M), c


def test_version() -> None:
    r = run_cli("--version")
    assert r.code == 0 and re.fullmatch(r"deeploy-mlir \d+\.\d+\.\d+\S*\n", r.out), r.out


# -- the harness's floats ---------------------------------------------------


def _print_float_source() -> str:
    text = (ROOT / "deeploy_mlir/emitters/templates/common/harness.c.j2").read_text()
    start = text.index("static uint32_t dm_bits")
    end = text.index("static inline void dm_print_floats")
    return text[start:end]


def test_decimal_form_is_the_value(tmp_path: Path) -> None:
    """The harness's float printer (built alone with gcc) against Python's
    %.6e of the same float32 values: special values exactly, the others to
    the 7 digits printed."""
    values = np.array(
        [1.0, -2.5, 0.0, -0.0, 0.1, 9.9999999, 3.4028235e38, 1.17549435e-38, 1.4e-45,
         -7.654321e-12, np.inf, -np.inf, np.nan, 123456.789],
        dtype=np.float32,
    )  # fmt: skip
    rng = np.random.default_rng(22)  # every magnitude float32 has, both signs
    spread = rng.choice([-1.0, 1.0], 300) * 10.0 ** rng.uniform(-44, 38, 300)
    edges = [10.0, 100.0, 1e10, 9.9999995, 0.99999994, 1e-5, 1e-40]
    values = np.concatenate([values, np.asarray(edges, np.float32), spread.astype(np.float32)])
    words = ", ".join(f"0x{int(b):08x}u" for b in values.view(np.uint32))
    src = tmp_path / "t.c"
    src.write_text(
        "#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n"
        + _print_float_source()
        + f"int main(void) {{ static const uint32_t w[] = {{{words}}};\n"
        "for (unsigned i = 0; i < sizeof w / sizeof w[0]; i++) {\n"
        '  float f; memcpy(&f, &w[i], 4); dm_print_float(f); printf("\\n"); }\n'
        "return 0; }\n"
    )
    exe = tmp_path / "t"
    subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o", exe, src], check=True)
    lines = subprocess.run([exe], capture_output=True, text=True, check=True).stdout.split("\n")
    assert len(lines) == len(values) + 1  # the last: after the final newline
    for v, line in zip(values, lines, strict=False):
        m = re.fullmatch(r" ([0-9a-f]{8})\((\S+)\)", line)
        assert m, line
        assert int(m.group(1), 16) == int(np.array(v).view(np.uint32)), line
        dec = m.group(2)
        if np.isnan(v):
            assert dec == "nan"
        elif np.isinf(v):
            assert dec == ("inf" if v > 0 else "-inf")
        elif v == 0:
            assert dec == format(float(v), ".6e"), line  # signed zero kept
        else:
            assert abs(float(dec) - float(v)) <= 1e-6 * abs(float(v)), (line, float(v))
            if float(v) in (1.0, -2.5, 0.1, 123456.789):
                assert dec == format(float(v), ".6e"), line


def test_run_output_has_decimals_and_parses(tmp_path: Path) -> None:
    out = tmp_path / "p"
    r = run_cli("lower", MLP, "-o", out, "--data", MLP / "data.npz", "--steps", "1", "--accum", "2")
    assert r.code == 0, r.err
    run = subprocess.run(["make", "-s", "-C", out, "run-host"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    outs, params = parse_run_output(run.stdout)
    loss_lines = [ln for ln in run.stdout.splitlines() if ln.startswith("OUT ")]
    assert len(loss_lines) == 2
    for ln in loss_lines:
        bits, dec = re.fullmatch(r"OUT \d+ \d+ \S+ ([0-9a-f]{8})\(([^)]+)\)", ln).groups()  # type: ignore[union-attr]
        v = float(np.array(int(bits, 16), dtype=np.uint32).view(np.float32))
        assert abs(float(dec) - v) <= 1e-6 * abs(v)
    want = json.loads((MLP / "expected.json").read_text())["losses"][:2]
    got = [v[0] for v in next(iter(outs.values()))]
    np.testing.assert_allclose(got, want, rtol=1e-4)
    assert params and all(np.isfinite(p).all() for p in params.values())


def test_parse_run_output_takes_both_forms() -> None:
    text = "OUT 0 0 loss 3f800000(1.000000e+00)\nPARAM w 40000000 c0400000(-3.000000e+00)\nDONE\n"
    outs, params = parse_run_output(text)
    assert outs == {"loss": [[1.0]]}
    assert params["w"].tolist() == [2.0, -3.0]


# -- generated README -------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "accum", "want"),
    [
        (1, 1, ["| 1 mini-batch of training data", "trains 1 step x 1 mini-batch,"]),
        (2, 3, ["| 6 mini-batches of training data", "trains 2 steps x 3 mini-batches,"]),
    ],
)
def test_generated_readme_grammar(tmp_path: Path, steps: int, accum: int, want: list[str]) -> None:
    out = tmp_path / "p"
    r = run_cli("lower", MLP, "-o", out, "--steps", str(steps), "--accum", str(accum), "-q")
    assert r.code == 0, r.err
    text = (out / "README.md").read_text()
    for w in want:
        assert w in text, text
    assert not re.search(r"\b1 (mini-batches|steps|kernel calls)\b", text), text


# -- minimal-l1 -------------------------------------------------------------


def test_minimal_l1_names_its_buffering() -> None:
    r = run_cli("minimal-l1", MLP, "--buffering", "single")
    assert r.code == 0, r.err
    assert "single buffering" in r.out, r.out
    assert "double buffering" in run_cli("minimal-l1", MLP).out
    # the JSON keeps its members (issue contract): {"tiled": B, "untiled": B}
    j = json.loads(run_cli("minimal-l1", MLP, "--json", "--buffering", "single").out)
    d = json.loads(run_cli("minimal-l1", MLP, "--json").out)
    assert set(j) == set(d) == {"tiled", "untiled"}
    # README's figures for mlp_small: arenas of 244 bytes single, 488 double
    # (two of each tile); minimal-l1 gives the --l1 to pass, the cluster
    # stacks included (mlp_small's own: sized for the kernels it forks)
    S = stacks_of(MLP)
    assert j["tiled"] == S + 244 and d["tiled"] == S + 488
    assert f"{j['tiled']} bytes" in r.out


# -- --pass-pipeline "" -------------------------------------------------------


@pytest.mark.parametrize("spec", ["", "  "])
def test_empty_pass_pipeline_is_an_error(tmp_path: Path, spec: str) -> None:
    out = tmp_path / "p"
    r = run_cli("lower", MLP, "-o", out, "--pass-pipeline", spec)
    assert r.code == 2
    assert r.err.count("\n") == 1 and "--pass-pipeline" in r.err, r.err
    assert "Traceback" not in r.err and not out.exists()


# -- --emit-ir on a failed lower ----------------------------------------------


def test_emit_ir_on_failure_is_the_ir_before_the_failing_pass(tmp_path: Path) -> None:
    from xdsl.dialects.builtin import ModuleOp

    from deeploy_mlir.config import CompileConfig
    from deeploy_mlir.frontend.onnx_import import import_model
    from deeploy_mlir.pipeline import pipeline, run_pipeline

    out, ir = tmp_path / "p", tmp_path / "failed.mlir"
    # an arena of 100 bytes: smaller than any gemm tile, tile-select fails
    r = run_cli("lower", WIDE, "-o", out, "--l1", str(stacks_of(WIDE) + 100), "--emit-ir", ir)
    assert r.code == 2
    lines = r.err.splitlines()
    assert len(lines) == 2, r.err
    assert lines[0] == f"deeploy-mlir: note: wrote the IR before pass tile-select to {ir}"
    assert lines[1].startswith("deeploy-mlir: error:") and "L1" in lines[1]
    assert not out.exists()
    # independently: the passes before tile-select, run here, give that IR
    passes = pipeline(CompileConfig(l1=100, l2=2097152, l3=8388608))
    names = [p.name for p in passes]
    prefix = passes[: names.index("tile-select")]
    module: ModuleOp = import_model(WIDE).module.clone()
    run_pipeline(module, prefix)
    assert ir.read_text() == str(module) + "\n"


def test_emit_ir_success_unchanged(tmp_path: Path) -> None:
    ir = tmp_path / "ok.mlir"
    r = run_cli("lower", MLP, "-o", tmp_path / "p", "--emit-ir", ir)
    assert r.code == 0 and "func.func @training_step" in ir.read_text()
    assert "wrote the IR before" not in r.err


# -- kind names -------------------------------------------------------------


def test_kind_names_are_spelled_one_way(tmp_path: Path) -> None:
    out = tmp_path / "p"
    assert run_cli("lower", MLP, "-o", out, "--board", "siracusa", "-q").code == 0
    man = json.loads((out / "manifest.json").read_text())
    kinds = {b["kind"] for b in man["buffers"]}
    assert "optimizer_state" in kinds and "optimizer_state" in man["footprint"]
    r = run_cli("report", MLP, "--board", "siracusa")
    assert r.code == 0
    assert "optimizer_state" in r.out
    for text in (r.out, json.dumps(man), (ROOT / "docs" / "manifest.md").read_text()):
        assert "optimizer state" not in text


# -- progress ---------------------------------------------------------------


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    r = run_cli(
        "lower",
        WIDE,
        "-o",
        tmp_path / "p",
        "--l1",
        str(STACKS + 2048),
        "--data",
        WIDE / "data.npz",
        "--steps",
        "5",
        "--accum",
        "2",
    )
    assert r.code == 0
    assert r.err == "", r.err
    r = run_cli("report", WIDE, "--json", "--l1", str(STACKS + 2048))
    assert r.code == 0 and r.err == ""
    json.loads(r.out)
    # all 10 mini-batches of the data used: no note about unused ones either
    r = run_cli("run", MLP, "--data", MLP / "data.npz", "--steps", "5", "--accum", "2")
    assert r.code == 0 and r.err == "" and len(r.out.splitlines()) == 10


def _under_pty(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal (stdout a pipe)."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    p = subprocess.Popen(
        [sys.executable, "-m", "deeploy_mlir.cli", *args],
        stdout=subprocess.PIPE,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif p.poll() is not None:
            break
    os.close(master)
    assert p.stdout is not None
    out = p.stdout.read().decode()
    p.wait()
    return p.returncode, out, b"".join(chunks).decode(errors="replace")


def test_progress_on_a_terminal(tmp_path: Path) -> None:
    code, out, err = _under_pty(
        [
            "run",
            str(WIDE),
            "--data",
            str(WIDE / "data.npz"),
            "--l1",
            str(STACKS + 2048),
            "--steps",
            "5",
            "--accum",
            "2",
        ],
        tmp_path,
    )
    assert code == 0, err
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", err)
    assert f"done import {WIDE}" in plain, plain
    assert re.search(r"done pass \d+/\d+ training-inplace-alias", plain), plain
    assert "done pass" in plain and "tile-select" in plain
    # tile selection per op, with the op count (mlp_wide's steps: 31 ops in all)
    m = re.findall(r"tile selection: op (\d+)/(\d+)", plain)
    assert m and all(int(a) <= int(b) for a, b in m), plain
    assert "done C build (make host)" in plain
    assert "done training (host)" in plain
    # the losses still go to stdout, alone
    assert len(out.splitlines()) == 10 and all(ln.startswith("step ") for ln in out.splitlines())
    code, out_q, err_q = _under_pty(
        [
            "run",
            str(WIDE),
            "--data",
            str(WIDE / "data.npz"),
            "--l1",
            str(STACKS + 2048),
            "--steps",
            "5",
            "--accum",
            "2",
            "-q",
        ],
        tmp_path,
    )
    assert code == 0 and err_q == "" and out_q == out


# -- start-up: what each command imports ----------------------------------------


def test_cli_choices_agree_with_the_passes() -> None:
    import typing

    from deeploy_mlir import cli
    from deeploy_mlir.config import CompileConfig
    from deeploy_mlir.passes.memory_regime import REGIMES
    from deeploy_mlir.pipeline import BUFFERINGS, TILINGS

    assert (cli.TILINGS, cli.BUFFERINGS, cli.REGIMES) == (TILINGS, BUFFERINGS, REGIMES)
    hints = typing.get_type_hints(CompileConfig)
    assert typing.get_args(hints["tiling"]) == TILINGS
    assert typing.get_args(hints["buffering"]) == BUFFERINGS


def _imported_modules(args: list[str], tmp: Path, env: dict[str, str] | None = None) -> set[str]:
    """Every module imported by one CLI call (in a fresh process)."""
    code = (
        "import sys\n"
        "from deeploy_mlir.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(' '.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp, check=True, env=env
    )
    return set(r.stderr.strip().splitlines()[-1].split())


def _imported(args: list[str], tmp: Path, env: dict[str, str] | None = None) -> set[str]:
    """Top-level packages imported by one CLI call (in a fresh process)."""
    return {m.split(".")[0] for m in _imported_modules(args, tmp, env)}


HEAVY = {"xdsl", "numpy", "onnx", "z3", "matplotlib", "jinja2", "onnxruntime", "torch", "rich"}


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["board", "siracusa"]])
def test_light_commands_import_nothing_heavy(tmp_path: Path, args: list[str]) -> None:
    assert not (_imported(args, tmp_path) & HEAVY)


def test_lower_imports_what_it_uses(tmp_path: Path) -> None:
    # a single ONNX file whose every op's best tiles fit: no Z3, no plots, no
    # checkpoint reader
    tt = ROOT.parent / "shared" / "models" / "deeploy" / "FP32_GEMM_Regular" / "network.onnx"
    # an empty cache directory (deeploy_mlir/cache.py): the first compile asks
    # onnx itself for its op schemas' attribute types and keeps them there
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    lower = ["lower", str(tt), "--l1", str(STACKS + 128000)]
    got = _imported([*lower, "-o", str(tmp_path / "a0")], tmp_path, env)
    assert "onnx" in got
    assert list((tmp_path / "cache" / "deeploy-mlir").glob("onnx-schemas-*.json"))
    # later compiles read the protobuf classes alone: not the onnx package
    # (its C++ extension, its schema registry, onnx.hub's urllib/http/ssl)
    mods = _imported_modules([*lower, "-o", str(tmp_path / "a")], tmp_path, env)
    got = {m.split(".")[0] for m in mods}
    assert (tmp_path / "a" / "Network.c").is_file()
    assert {"xdsl", "numpy", "google", "jinja2"} <= got
    assert not (got & {"onnx", "z3", "matplotlib", "onnxruntime", "torch", "flatbuffers", "rich"})
    # nor what the compile does not use: xdsl's universe (its targets and
    # pass registry), the standard library's ssl, http and subprocess
    assert not (mods & {"xdsl.universe", "xdsl.targets"}), mods
    assert not (got & {"ssl", "http", "email", "subprocess"}), got
    # typing_extensions >= 4.16: xdsl's @deprecated functions no longer pull in asyncio
    assert "asyncio" not in got
    # an artifact: the checkpoint reader (flatbuffers), still no onnxruntime
    args = ["lower", str(MLP), "-o", str(tmp_path / "b"), "--buffering", "single"]
    args += ["--l1", str(stacks_of(MLP) + 600)]
    got = _imported(args, tmp_path)
    assert (tmp_path / "b" / "Network.c").is_file()
    # 600 B: tiles have to be searched for, by the scan of the front (no Z3)
    assert "flatbuffers" in got
    assert not (got & {"z3", "matplotlib", "onnxruntime", "torch"}), got
    # Z3 only when asked for (--rlimit implies it)
    for extra in (["--solver", "z3"], ["--rlimit", "100000"]):
        got = _imported([*args, "-o", str(tmp_path / extra[0][2:]), *extra], tmp_path)
        assert "z3" in got

"""Where the Zfinx GVSoC is looked up (deeploy_mlir.targets.gvsoc.find_setup
with isa "zfinx"), and the one-line errors when it is not there."""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_mlir.errors import DeeployError
from deeploy_mlir.targets import gvsoc


def test_zfinx_gvsoc_missing_names_the_build_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GVSOC_ZFINX_HOME", str(tmp_path / "nowhere"))
    with pytest.raises(DeeployError, match=r"build-gvsoc-zfinx\.sh") as e:
        gvsoc.find_setup("zfinx")
    assert "\n" not in str(e.value)


def test_unknown_isa_is_a_one_line_error() -> None:
    with pytest.raises(DeeployError, match="must be one of f, zfinx, f-clang, not 'rv64'"):
        gvsoc.find_setup("rv64")


def test_zfinx_setup_uses_its_own_gvsoc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """GVSOC_ZFINX_HOME picks the simulator; the F setup keeps GVSOC_HOME's."""
    for name in ("zf", "f"):
        (tmp_path / name / "bin").mkdir(parents=True)
        (tmp_path / name / "bin" / "gvsoc").write_text("")
    prt = tmp_path / "prt" / "kernel"
    prt.mkdir(parents=True)
    (prt / "crt0.S").write_text("")
    monkeypatch.setenv("GVSOC_ZFINX_HOME", str(tmp_path / "zf"))
    monkeypatch.setenv("GVSOC_HOME", str(tmp_path / "f"))
    monkeypatch.setenv("PULP_RUNTIME_HOME", str(tmp_path / "prt"))
    monkeypatch.setattr(gvsoc.shutil, "which", lambda name: f"/usr/bin/{name}")
    z, f = gvsoc.find_setup("zfinx"), gvsoc.find_setup()
    assert (z.gvsoc, z.isa) == (tmp_path / "zf" / "bin" / "gvsoc", "zfinx")
    assert (f.gvsoc, f.isa) == (tmp_path / "f" / "bin" / "gvsoc", "f")

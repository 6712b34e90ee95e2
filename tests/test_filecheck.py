"""Runs the lit/FileCheck suite under filecheck/ once and reports each file as
its own pytest case, so the whole suite ends in one pytest summary."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "filecheck"
FILES = sorted(p.relative_to(SUITE).as_posix() for p in SUITE.rglob("*.mlir"))


@pytest.fixture(scope="session")
def lit_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bool, str]]:
    xml = tmp_path_factory.mktemp("lit") / "results.xml"
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from lit.main import main; main()",
            "-q",
            "--xunit-xml-output",
            str(xml),
            str(SUITE),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    out: dict[str, tuple[bool, str]] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        # classname is "<suite>.<directory>", name the file
        folder = case.get("classname", "").partition(".")[2]
        name = f"{folder}/{case.get('name', '')}" if folder else case.get("name", "")
        failure = case.find("failure")
        out[name] = (failure is None, failure.text or "" if failure is not None else "")
    return out


def test_suite_is_not_empty() -> None:
    assert len(FILES) >= 3


@pytest.mark.parametrize("path", FILES)
def test_filecheck(path: str, lit_results: dict[str, tuple[bool, str]]) -> None:
    assert path in lit_results, f"lit did not run {path}"
    ok, text = lit_results[path]
    assert ok, text

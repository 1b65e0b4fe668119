"""The code base stays ruff clean (ruff is part of the test extra)."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is installed with the test extra")
def test_ruff_clean() -> None:
    result = subprocess.run(["ruff", "check", "src", "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

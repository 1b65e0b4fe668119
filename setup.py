"""The build's one step beyond pyproject.toml: the package is stamped with the commit of the
checkout it was built from (``debatekit/_build.json``), so that a run's log names its source after
a non-editable ``pip install .`` too (:func:`debatekit.experiments.logs.git_commit`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

STAMP = "_build.json"


def source_commit(checkout: Path) -> str | None:
    """HEAD of the git checkout at ``checkout`` (``+dirty`` with uncommitted changes to tracked
    files), or None when it is not one or git cannot say."""
    try:
        head, dirty = (
            subprocess.run(
                ["git", "-C", str(checkout), *args], capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
            for args in (["rev-parse", "HEAD"], ["status", "--porcelain", "--untracked-files=no"])
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "") if head else None


class StampedBuild(build_py):
    """``build_py``, then the stamp written beside the built package (never into the source tree)."""

    def run(self) -> None:
        super().run()
        if not self.editable_mode:  # an editable install reads its checkout's git itself
            stamp = Path(self.build_lib) / "debatekit" / STAMP
            stamp.write_text(json.dumps({"git_commit": source_commit(Path(__file__).resolve().parent)}) + "\n")


setup(cmdclass={"build_py": StampedBuild})

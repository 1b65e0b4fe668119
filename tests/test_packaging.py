"""Packaging (issue 13, point 6): the LICENSE matches pyproject's licence and ships in the
distribution's metadata, every data file of the package (py.typed, the judge's and the report's
templates, the plan TOMLs, the prompts) is inside it, the extras exist, and CITATION.cff is valid
CFF 1.2.0 naming the papers.

The distribution is built offline from a copy of the project: a real wheel when this environment
can build one without fetching anything (``wheel`` or setuptools >= 70.1 installed), otherwise
``setup.py egg_info build_py``, which apply the same package-data and licence-file rules the wheel
is assembled from, and the same stamp of the source's commit."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from debatekit.experiments.logs import git_commit

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE = ROOT / "src" / "debatekit"
STAMP = "debatekit/_build.json"


@dataclass(frozen=True)
class Built:
    """What a distribution of the project installs: files relative to site-packages, and the
    licence text its metadata carries (None without one)."""

    files: set[str]
    license: str | None
    stamp: dict | None
    """The source commit the build stamped into the package (``debatekit/_build.json``)."""


def project_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(ROOT / "src", copy / "src", ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, copy / name)
    return copy


def can_build_wheels() -> bool:
    if importlib.util.find_spec("setuptools") is None:
        return False
    return any(importlib.util.find_spec(name) for name in ("wheel", "setuptools.command.bdist_wheel"))


def build(tmp_path: Path, copy: Path | None = None) -> Built:
    if importlib.util.find_spec("setuptools") is None:
        pytest.skip("no setuptools in this environment to build with offline (pyproject's package-data is checked)")
    copy = copy or project_copy(tmp_path)
    if can_build_wheels():
        out = tmp_path / "dist"
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w",
                        str(out), str(copy)], check=True, capture_output=True, timeout=300)  # fmt: skip
        [wheel] = out.glob("debatekit-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
            licenses = [n for n in names if ".dist-info/" in n and n.rsplit("/", 1)[-1] == "LICENSE"]
            text = archive.read(licenses[0]).decode() if licenses else None
            stamp = json.loads(archive.read(STAMP)) if STAMP in names else None
        return Built(names, text, stamp)
    egg, lib = tmp_path / "egg", tmp_path / "lib"
    egg.mkdir()
    subprocess.run([sys.executable, "-W", "ignore", "setup.py", "-q", "egg_info", "--egg-base", str(egg), "build_py",
                    "--build-lib", str(lib)], cwd=copy, check=True, capture_output=True, timeout=300)  # fmt: skip
    names = {path.relative_to(lib).as_posix() for path in lib.rglob("*") if path.is_file()}
    [info] = egg.glob("*.egg-info")
    declared = "License-File: LICENSE" in (info / "PKG-INFO").read_text(encoding="utf-8")
    stamp = json.loads((lib / STAMP).read_text()) if STAMP in names else None
    return Built(names, (copy / "LICENSE").read_text(encoding="utf-8") if declared else None, stamp)


def data_files() -> set[str]:
    """Every file of the package that is not Python source, relative to site-packages."""
    return {
        path.relative_to(PACKAGE.parent).as_posix()
        for path in PACKAGE.rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"} and "__pycache__" not in path.parts
    }


def test_the_license_file_is_the_one_pyproject_names() -> None:
    assert PYPROJECT["project"]["license"] == {"text": "Apache-2.0"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text and "END OF TERMS" in text


def test_package_data_covers_every_data_file() -> None:
    patterns = PYPROJECT["tool"]["setuptools"]["package-data"]["debatekit"]
    files = {name.removeprefix("debatekit/") for name in data_files()}
    assert {"py.typed", "llm/prompts/judge.txt", "judge/templates/judge.html"} <= files
    assert any(name.startswith("problems/plans/") and name.endswith(".toml") for name in files)
    uncovered = [name for name in files if not any(Path(name).match(pattern) for pattern in patterns)]
    assert uncovered == []


def test_the_distribution_holds_the_license_and_every_data_file(tmp_path: Path) -> None:
    built = build(tmp_path)
    assert data_files() <= built.files
    assert "debatekit/py.typed" in built.files and "debatekit/api.py" in built.files
    assert built.license == (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert built.stamp == {"git_commit": None}  # a copy that is no git checkout: no commit to name


def test_a_build_from_a_checkout_stamps_its_commit_which_an_installed_copy_reports(tmp_path: Path) -> None:
    copy = project_copy(tmp_path)
    git = ["git", "-C", str(copy), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "a checkout"]):
        subprocess.run([*git, *args], check=True, capture_output=True, timeout=60)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    built = build(tmp_path, copy)
    assert built.stamp == {"git_commit": head}
    installed = tmp_path / "site-packages" / "debatekit"
    installed.mkdir(parents=True)
    assert git_commit(installed) is None  # no stamp: nothing to say (an enclosing checkout is not its source)
    (installed / "_build.json").write_text(json.dumps(built.stamp))
    assert git_commit(installed) == head
    (installed / "_build.json").write_text("[1,")
    assert git_commit(installed) is None


def test_the_extras() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"llm", "judge", "ray", "all"} <= set(extras)
    assert {req.split(">")[0] for req in extras["ray"]} >= {"ray", "pyarrow"}
    [everything] = extras["all"]
    named = set(everything.split("[", 1)[1].rstrip("]").split(","))
    assert everything.startswith("debatekit[") and {"llm", "judge", "ray"} <= named and named <= set(extras)


PAPERS = {
    "Scalable AI Safety via Doubly-Efficient Debate": ("arXiv:2311.14125", 2023),
    "Avoiding Obfuscation with Prover-Estimator Debate": ("arXiv:2506.13609", 2025),
    "Debate is efficient with your time": ("arXiv:2602.08630", 2026),
}


def test_citation_cff_names_the_software_and_the_papers() -> None:
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert {"cff-version", "message", "title", "authors"} <= set(cff)  # CFF 1.2.0's required keys
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["version"] == PYPROJECT["project"]["version"]
    assert cff["license"] == PYPROJECT["project"]["license"]["text"]
    references = {ref["title"]: ref for ref in cff["references"]}
    assert len(references) == 4
    for ref in [cff, *references.values()]:
        assert ref["authors"] and all("name" in a or "family-names" in a for a in ref["authors"])
    for title, (arxiv, year) in PAPERS.items():
        paper = references[title]
        assert paper["type"] == "article" and paper["year"] == year
        assert {"type": "other", "value": arxiv} in paper["identifiers"]
        assert paper["authors"][0] == {"family-names": "Brown-Cohen", "given-names": "Jonah"}
    [lean] = [ref for title, ref in references.items() if title not in PAPERS]
    assert lean["type"] == "software" and lean["repository-code"] == "https://github.com/google-deepmind/debate"

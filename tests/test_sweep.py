"""Sweeps (issue 13, point 2): grids expand into cells with stable ids; the local pool, this
process and a real local Ray cluster give identical tables; a stopped sweep resumes with only
the missing cells; ``--json``'s shape; a grid file's mistakes are one line and status 2."""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from debatekit.cli.main import main
from debatekit.experiments.backends import BackendError, local, ray_cluster
from debatekit.experiments.grid import expand, load, settings
from debatekit.experiments.sweep import finished, run_sweep
from debatekit.runs.spec import RunSpec

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

# 2 sizes x 2 truths x 4 Bobs x 7 seeds = 112 cells of 5 debates each.
BIG = """
protocol = "cross-exam"
problem = "parity"
size = [8, 16]
truth = ["yes", "no"]
bob = ["honest", "point-random", "point-output", "accept"]
seed = [0, 1, 2, 3, 4, 5, 6]
trials = 5
"""
SMALL = """
trials = 4
truth = ["yes", "no"]
[[grid]]
protocol = "cross-exam"
problem = "parity"
size = 8
bob = ["honest", "point-random"]
[[grid]]
protocol = "stochastic"
problem = "noisy-majority"
size = 12
constants = ["planned", "lean"]
"""


def cli(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def grid_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(text)
    return path


def comparable(path: Path) -> Any:
    """The results table without its timings and paths."""
    table = pq.read_table(path)
    return table.drop_columns([c for c in table.column_names if c.endswith(("_s", "_path"))])


# ---- grids and ids


def test_a_grid_expands_to_the_product_of_its_axes_in_id_order() -> None:
    cells = expand({"protocol": "cross-exam", "problem": "parity", "size": [8, 16], "truth": ["yes", "no"],
                    "bob": ["honest", "accept"], "seed": [0, 1, 2], "trials": 5})  # fmt: skip
    assert len(cells) == 2 * 2 * 2 * 3
    assert [c.id for c in cells] == sorted(c.id for c in cells)
    assert len({c.id for c in cells}) == len(cells)
    assert {(c.size, c.truth, c.bob, c.seed) for c in cells} == {
        (size, truth, bob, seed) for size in (8, 16) for truth in ("yes", "no") for bob in ("honest", "accept")
        for seed in (0, 1, 2)
    }  # fmt: skip
    assert {(c.alice, c.trials, c.constants) for c in cells} == {("honest", 5, None)}


def test_ids_are_stable_and_depend_only_on_the_cells_parameters() -> None:
    one = {"protocol": "cross-exam", "problem": "parity", "size": 16, "trials": 5}
    (cell,) = expand(one)
    assert cell == RunSpec("cross-exam", "parity", 16, "yes", "honest", "honest", None, (), 0, 5)
    assert cell.id == "7e7595a36e31"  # a digest of the canonical parameters: the same in every version
    (reordered,) = expand(dict(reversed(one.items())) | {"seed": 0, "truth": True})
    assert reordered.id == cell.id
    (more,) = expand(one | {"trials": 6})
    assert more.id != cell.id


def test_grids_union_and_default_size(tmp_path: Path) -> None:
    cells = load(grid_file(tmp_path, SMALL))
    assert len(cells) == 2 * 2 + 2 * 2
    assert {c.constants for c in cells if c.protocol == "stochastic"} == {"planned", "lean"}
    assert expand({"protocol": "cross-exam", "problem": "parity"})[0].size == 64  # parity's default size


def test_params_multiply_and_overrides_fix_them() -> None:
    base = {"protocol": "prover-estimator", "problem": "obfuscated-primality", "size": 8, "params": {"q": [2, 4]}}
    assert sorted(dict(c.params)["q"] for c in expand(base)) == ["2", "4"]
    assert [dict(c.params)["q"] for c in expand(base, {"q": "3"})] == ["3"]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('protocol = "cross-exam"\nproblem = "parity"\nsizes = [8]\n', "unknown key 'sizes'"),
        ('protocol = "cross-exmm"\nproblem = "parity"\n', "unknown protocol"),
        ('protocol = "cross-exam"\nproblem = "parrity"\n', "unknown problem"),
        ('protocol = "cross-exam"\nproblem = "parity"\nbob = "sneaky"\n', "sneaky"),
        ('protocol = "cross-exam"\nproblem = "parity"\nsize = -3\n', "size"),
        ('protocol = "cross-exam"\nproblem = "parity"\ntruth = "maybe"\n', "truth"),
        ('protocol = "cross-exam"\nproblem = "parity"\ntrials = 0\n', "trials"),
        ('protocol = "cross-exam"\nproblem = "parity"\nconstants = "lean"\n', "constants"),
        ('protocol = "cross-exam"\nproblem = "parity"\n[params]\nnope = 1\n', "nope"),
        ('protocol = "cross-exam"\nproblem = "palindrome"\n', "does not support"),
        ('protocol = "cross-exam"\nproblem = ["parity"\n', "not valid TOML"),
        ('problem = "parity"\n', "no protocol"),
    ],
)
def test_grid_mistakes_are_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, says: str
) -> None:
    code, out, err = cli(capsys, "sweep", grid_file(tmp_path, text), "--out", tmp_path / "out", "--workers", 1)
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and says in err and "grid.toml" in err
    assert not (tmp_path / "out" / "cells").exists()  # nothing ran


def test_set_replaces_an_axis_in_every_grid_and_makes_a_grid_alone() -> None:
    both = settings(["size=8,16", "trials=3", "seed=0,1"])
    assert both == {"size": [8, 16], "trials": 3, "seed": [0, 1]}
    grids = [{"protocol": "cross-exam", "problem": "parity", "size": 4},
             {"protocol": "bisection", "problem": "palindrome"}]  # fmt: skip
    grid = {"trials": 9, "truth": ["yes", "no"], "grid": grids}
    cells = expand(grid, None, both)
    assert len(cells) == 2 * 2 * 2 * 2  # two grids, each size, truth and seed
    assert {(c.size, c.trials, c.seed) for c in cells} == {(n, 3, s) for n in (8, 16) for s in (0, 1)}
    alone = expand({}, None, settings(["protocol=cross-exam", "problem=parity,majority", "truth=yes,no"]))
    assert sorted((c.problem, c.truth.value) for c in alone) == [
        (p, t) for p in ("majority", "parity") for t in ("no", "yes")
    ]


def test_a_sweep_of_set_axes_alone_runs_and_resumes_in_its_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ("sweep", "--set", "protocol=cross-exam", "--set", "problem=parity", "--set", "size=4,8", "--set",
            "trials=3", "--workers", 1, "--json")  # fmt: skip
    code, out, err = cli(capsys, *argv)
    first = json.loads(out)
    assert code == 0, err
    assert (first["cells"], first["ran"]) == (2, 2) and {r["size"] for r in first["results"]} == {4, 8}
    code, out, _ = cli(capsys, *argv)
    assert (code, json.loads(out)["ran"], json.loads(out)["skipped"]) == (0, 0, 2)  # the same folder, resumed
    [folder] = (tmp_path / "debatekit-sweeps").iterdir()
    assert folder.name.startswith("set-")


@pytest.mark.parametrize(
    "sets",
    [("protocl=cross-exam",), ("size=a", "protocol=cross-exam"), ("trials=3,4",), ("problem=parity",), ("=x",)],
)
def test_set_mistakes_are_one_line_and_status_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, sets) -> None:
    code, out, err = cli(capsys, "sweep", *(part for s in sets for part in ("--set", s)), "--out", tmp_path / "o")
    assert (code, out) == (2, "") and len(err.strip().splitlines()) == 1 and ("--set" in err or "no protocol" in err)


def test_command_line_mistakes_are_status_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    grid = grid_file(tmp_path, SMALL)
    for extra in (("--shard", "3/3"), ("--shard", "x"), ("--address", "auto"), ("--workers", 0), ("-P", "=1")):
        code, out, err = cli(capsys, "sweep", grid, "--out", tmp_path / "out", *extra)
        assert (code, out) == (2, ""), extra
        assert len(err.strip().splitlines()) == 1


def _enormous(path: Path) -> None:
    with path.open("wb") as stream:
        stream.truncate(65 * 2**20)  # sparse: past the readers' 64 MiB


@pytest.mark.parametrize(
    ("name", "spoil", "reason"),
    [
        ("summary.json", lambda p: p.write_text('{"accept_rate": '), "not valid JSON"),
        ("summary.json", lambda p: p.write_text("[" * 100_000 + "]" * 100_000), "nested deeper"),
        ("summary.json", _enormous, "larger than"),
        ("summary.json", lambda p: p.write_text("[1, 2]"), "not a cell's summary"),
        ("summary.parquet", lambda p: p.write_bytes(b"PAR1 not parquet"), "not a cell's row"),
    ],
)
def test_a_finished_cells_spoilt_file_is_one_line_naming_it_and_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, spoil: Callable[[Path], None], reason: str
) -> None:
    """The merge reads every finished cell's files again (a folder on disk is untrusted)."""
    grid, out = (
        grid_file(tmp_path, 'protocol = "cross-exam"\nproblem = "parity"\nsize = 8\ntrials = 2\n'),
        tmp_path / "o",
    )
    assert cli(capsys, "sweep", grid, "--out", out, "--workers", 1)[0] == 0
    (cell,) = (out / "cells").iterdir()
    spoil(cell / name)
    code, stdout, err = cli(capsys, "sweep", grid, "--out", out, "--workers", 1)
    assert (code, stdout) == (2, "")
    (line,) = err.strip().splitlines()
    assert str(cell / name) in line and reason in line


@pytest.mark.parametrize("workers", [1, 2])
def test_a_cell_that_cannot_be_played_is_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, workers: int
) -> None:
    grid = grid_file(tmp_path, 'protocol = "bisection"\nproblem = "palindrome"\nsize = 100000\ntrials = 2\n')
    code, out, err = cli(capsys, "sweep", grid, "--out", tmp_path / "out", "--workers", workers)
    assert (code, out) == (2, "")
    assert len(err.strip().splitlines()) == 1 and "--size" in err and "cell " in err


def test_a_missing_ray_is_a_backend_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(BackendError, match="pip install"), ray_cluster(None, 1, tmp_path):
        pass


# ---- running


def test_json_shape_and_the_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = cli(capsys, "sweep", grid_file(tmp_path, SMALL), "--out", out, "--workers", 1, "--json")
    assert code == 0, err
    data = json.loads(stdout)
    assert set(data) == {"cells", "ran", "skipped", "results", "results_path", "stale", "pruned"}
    assert (data["cells"], data["ran"], data["skipped"]) == (8, 8, 0)
    ids = [r["id"] for r in data["results"]]
    assert ids == sorted(ids) == [c.id for c in load(grid_file(tmp_path, SMALL))]
    run_fields = {"protocol", "problem", "size", "truth", "alice", "bob", "trials", "seed", "accept_rate",
                  "accept_ci", "honest_win_rate", "verifier_queries_max", "verifier_queries_mean",
                  "verifier_bits_read_max", "alice_queries_mean", "bob_queries_mean", "guarantee",
                  "params"}  # fmt: skip
    for result in data["results"]:
        assert run_fields <= set(result)
        assert {"constants", "id"} <= set(result)
        assert result["elapsed_s"] > 0
        records = Path(result["debates_path"]).read_text().splitlines()[1:]  # after the run's header
        assert [json.loads(line)["debate"] for line in records] == list(range(4))
    table = pq.read_table(Path(data["results_path"]))
    assert table.column("id").to_pylist() == ids
    assert table.column("accept_rate").to_pylist() == [r["accept_rate"] for r in data["results"]]
    assert "guarantee_soundness" in table.column_names


def test_one_cell_equals_the_run_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    grid = 'protocol = "cross-exam"\nproblem = "parity"\nsize = 16\nbob = "point-random"\nseed = 4\ntrials = 30\n'
    code, stdout, _ = cli(capsys, "sweep", grid_file(tmp_path, grid), "--out", tmp_path / "o", "--workers", 1, "--json")
    (result,) = json.loads(stdout)["results"]
    code, alone, _ = cli(capsys, "run", "cross-exam", "--problem", "parity", "--size", 16, "--bob", "point-random",
                         "--seed", 4, "--trials", 30, "--json", "--no-log")  # fmt: skip
    assert code == 0
    assert json.loads(alone).items() <= result.items()


def interrupted_after(k: int) -> Callable[[Callable[[Any], Any], Sequence[Any]], Iterator[Any]]:
    """A mapper that plays ``k`` cells in this process, then is interrupted (as by Ctrl-C)."""

    def mapper(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
        for item in items[:k]:
            yield fn(item)
        raise KeyboardInterrupt

    return mapper


def test_a_stopped_sweep_resumes_with_only_the_missing_cells(tmp_path: Path) -> None:
    cells = load(grid_file(tmp_path, SMALL))
    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run_sweep(cells, out, interrupted_after(3))
    kept = {c.id for c in cells if finished(out, c)}
    assert len(kept) == 3
    assert pq.read_table(out / "results.parquet").num_rows == 3  # merged even when stopped
    played: list[str] = []
    with local(1) as serial:

        def counting(fn: Callable[[Any], Any], items: Sequence[Any]) -> Iterator[Any]:
            played.extend(item.id for item in items)
            return serial(fn, items)

        result = run_sweep(cells, out, counting)
    assert (result.ran, result.skipped, len(result.results)) == (5, 3, 8)
    assert sorted(played) == sorted({c.id for c in cells} - kept)
    with local(1) as serial:
        fresh = run_sweep(cells, tmp_path / "fresh", serial)
    assert comparable(out / "results.parquet").equals(comparable(tmp_path / "fresh" / "results.parquet"))
    assert [r["accept_rate"] for r in result.results] == [r["accept_rate"] for r in fresh.results]


def test_shards_cover_the_grid_once(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    grid, out = grid_file(tmp_path, SMALL), tmp_path / "out"
    ran = []
    for i in range(3):
        code, stdout, err = cli(capsys, "sweep", grid, "--out", out, "--workers", 1, "--shard", f"{i}/3", "--json")
        assert code == 0, err
        data = json.loads(stdout)
        ran.append(data["ran"])
        assert data["skipped"] == 0
    assert ran == [3, 3, 2]
    code, stdout, _ = cli(capsys, "sweep", grid, "--out", out, "--workers", 1, "--json")
    assert json.loads(stdout) | {"results": None} == {"cells": 8, "ran": 0, "skipped": 8, "results": None,
                                                      "results_path": str(out / "results.parquet"),
                                                      "stale": [], "pruned": False}  # fmt: skip


def test_two_shards_on_two_machines_merge_into_the_table_of_one_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """README's job array: each shard in a folder of its own (a machine's), their cells copied into
    one folder, and a sweep there plays nothing and writes the table one run writes."""
    grid = grid_file(tmp_path, SMALL)
    for i in range(2):
        code, stdout, err = cli(capsys, "sweep", grid, "--out", tmp_path / f"shard{i}", "--workers", 1, "--shard",
                                f"{i}/2", "--json")  # fmt: skip
        assert code == 0, err
        assert json.loads(stdout)["ran"] == 4
        shutil.copytree(tmp_path / f"shard{i}" / "cells", tmp_path / "merged" / "cells", dirs_exist_ok=True)
    code, stdout, err = cli(capsys, "sweep", grid, "--out", tmp_path / "merged", "--workers", 1, "--json")
    assert code == 0, err
    assert (json.loads(stdout)["ran"], json.loads(stdout)["skipped"]) == (0, 8)
    code, _, err = cli(capsys, "sweep", grid, "--out", tmp_path / "one", "--workers", 1)
    assert code == 0, err
    merged = comparable(tmp_path / "merged" / "results.parquet")
    assert merged.num_rows == 8 and merged.equals(comparable(tmp_path / "one" / "results.parquet"))


def test_the_readmes_pyarrow_reading_of_a_sweep_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", readme, re.S) if "results.parquet" in block]
    grid = 'trials = 30\nprotocol = "stochastic"\nproblem = "noisy-majority"\nsize = 12\ntruth = "no"\n'
    grid += 'alice = ["honest", "under-threshold"]\n'
    assert cli(capsys, "sweep", grid_file(tmp_path, grid), "--out", tmp_path / "sweep-out", "--workers", 1)[0] == 0
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, *rows = done.stdout.splitlines()
    table = pq.read_table(tmp_path / "sweep-out" / "results.parquet")
    assert first.startswith("2 cells: id, protocol,")
    lost = [r for r in table.to_pylist() if r["honest_win_rate"] < 1]
    assert lost  # stochastic debate's soundness is below 1 at this size
    assert [ast.literal_eval(row)["id"] for row in rows] == [r["id"] for r in lost]


def test_a_sweep_folder_keeps_its_grid_cells_version_and_commit(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from debatekit.experiments.logs import git_commit, version

    grid, out = grid_file(tmp_path, SMALL), tmp_path / "out"
    code, _, err = cli(capsys, "sweep", grid, "--out", out, "--workers", 1, "--shard", "0/8", "--set", "seed=3")
    assert code == 0, err
    grid.write_text(BIG)  # the copy is the file as swept, not a link to it
    assert (out / "grid.toml").read_text() == SMALL
    kept = json.loads((out / "sweep.json").read_text())
    assert (kept["version"], kept["git_commit"]) == (version(), git_commit())
    assert (kept["grid"], kept["sets"], kept["params"]) == (str(grid), ["seed=3"], [])
    cells = [RunSpec.from_json(cell) for cell in kept["cells"]]
    assert [cell.id for cell in cells] == [cell["id"] for cell in kept["cells"]]
    assert cells == load(grid_file(tmp_path, SMALL), sets=["seed=3"])


def test_stale_cells_are_reported_and_pruned(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    sweep = ("sweep", "--set", "protocol=cross-exam", "--set", "problem=parity", "--set", "size=8", "--set",
             "trials=2", "--out", out, "--workers", 1)  # fmt: skip
    code, _, err = cli(capsys, *sweep, "--set", "seed=0,1,2", "--json")
    assert code == 0, err
    before = {path.name for path in (out / "cells").iterdir()}
    code, stdout, err = cli(capsys, *sweep, "--set", "seed=1,4")
    assert code == 0, err
    now = {cell.id for cell in expand({}, sets=settings([*sweep[2:10:2], "seed=1,4"]))}
    gone = sorted(before - now)
    assert len(gone) == 2 and "2 stale cell folders not in this grid (--prune removes them)" in stdout
    assert {path.name for path in (out / "cells").iterdir()} == before | now
    code, stdout, err = cli(capsys, *sweep, "--set", "seed=1,4", "--prune", "--json")
    assert code == 0, err
    data = json.loads(stdout)
    assert (data["stale"], data["pruned"], data["skipped"]) == (gone, True, 2)
    assert {path.name for path in (out / "cells").iterdir()} == now
    assert pq.read_table(out / "results.parquet").column("id").to_pylist() == sorted(now)


@pytest.fixture(scope="module")
def big_serial(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 112-cell sweep, played in this process: the reference table."""
    folder = tmp_path_factory.mktemp("big")
    with local(1) as serial:
        run_sweep(load(grid_file(folder, BIG)), folder / "serial", serial)
    return folder


def test_the_local_pool_gives_the_same_table(capsys: pytest.CaptureFixture[str], big_serial: Path) -> None:
    out = big_serial / "pool"
    code, stdout, err = cli(capsys, "sweep", big_serial / "grid.toml", "--out", out, "--workers", 2, "--json")
    assert code == 0, err
    assert json.loads(stdout)["ran"] == 112
    reference = comparable(big_serial / "serial" / "results.parquet")
    assert reference.num_rows == 112
    assert comparable(out / "results.parquet").equals(reference)


def test_a_local_ray_cluster_gives_the_same_table(capsys: pytest.CaptureFixture[str], big_serial: Path) -> None:
    pytest.importorskip("ray")
    out = big_serial / "ray"
    code, stdout, err = cli(capsys, "sweep", big_serial / "grid.toml", "--out", out, "--backend", "ray",
                            "--workers", 2, "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(stdout)["ran"] == 112
    assert comparable(out / "results.parquet").equals(comparable(big_serial / "serial" / "results.parquet"))
    assert (out / "ray").is_dir()  # the cluster's files stayed under the sweep's folder


def test_workers_are_capped_like_concurrency(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--workers above 256 (--concurrency's cap) is one line and status 2 on either backend, before
    any pool or cluster starts; the default, the machine's cores, is capped at 256."""
    from debatekit.experiments import backends
    from debatekit.runs.spec import MAX_CONCURRENCY

    started: list[int] = []

    @contextlib.contextmanager
    def pool(workers: int) -> Iterator[None]:
        started.append(workers)
        raise BackendError("not started here")
        yield

    monkeypatch.setattr(backends, "local", pool)
    monkeypatch.setattr(backends, "ray_cluster", lambda address, workers, temp: pool(workers))
    grid = grid_file(tmp_path, SMALL)
    for backend in ("local", "ray"):
        code, out, err = cli(capsys, "sweep", grid, "--out", tmp_path / "out", "--backend", backend, "--workers", 257)
        assert (code, out) == (2, "")
        assert err.count("\n") == 1 and "--workers must be from 1 to 256" in err, err
    assert started == []
    monkeypatch.setattr(os, "cpu_count", lambda: 1000)
    assert cli(capsys, "sweep", grid, "--out", tmp_path / "out")[0] == 2  # the pool that would start: refused here
    assert started == [MAX_CONCURRENCY] == [256]


# ---- which records a cell keeps


def test_records_none_failures_and_all(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """All: every debate; failures: the first SAMPLE and the first MOST_FAILURES the truth lost, a
    record that replays; none: no file. (Alice lying just inside the threshold wins some 7% here.)"""
    from debatekit.experiments import sweep
    from debatekit.experiments.sweep import Records

    monkeypatch.setattr(sweep, "SAMPLE", 5)
    monkeypatch.setattr(sweep, "MOST_FAILURES", 2)
    cells = expand({"protocol": "stochastic", "problem": "noisy-majority", "size": 12, "truth": "no",
                    "alice": "under-threshold", "trials": 80})  # fmt: skip
    paths = {}
    for records in Records:
        with local(1) as serial:
            result = run_sweep(cells, tmp_path / records, serial, records=records)
        (summary,) = result.results
        assert summary["records"] == records
        paths[records] = summary["debates_path"]
    assert paths["none"] is None and not (tmp_path / "none" / "cells" / cells[0].id / "debates.jsonl").exists()
    every = [json.loads(line) for line in Path(paths["all"]).read_text().splitlines()[1:]]
    assert sorted(d["debate"] for d in every) == list(range(80))
    lost = sorted(d["debate"] for d in every if d["verdict"] != 0)
    assert len(lost) > 2  # else the cap is not tested
    kept = Path(paths["failures"]).read_text().splitlines()
    assert kept[0] == Path(paths["all"]).read_text().splitlines()[0]  # the same header
    assert [json.loads(line)["debate"] for line in kept[1:]] == sorted({*range(5), *lost[:2]})
    assert Path(paths["failures"]).stat().st_size < Path(paths["all"]).stat().st_size / 5
    code, stdout, err = cli(capsys, "replay", paths["failures"], "--json")
    assert code == 0, err
    assert json.loads(stdout)["reproduced"] == len(kept) - 1
    tables = [comparable(tmp_path / records / "results.parquet").drop_columns(["records"]) for records in Records]
    assert tables[0].equals(tables[1]) and tables[1].equals(tables[2])


def test_records_is_a_choice(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = cli(capsys, "sweep", grid_file(tmp_path, SMALL), "--out", tmp_path / "o", "--records", "some")
    assert code == 2 and "--records" in err and len(err.strip().splitlines()) == 1

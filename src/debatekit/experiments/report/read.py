"""Reading a report's sources into its rows (:mod:`.rows`): a log folder, one run folder (``run``,
``solve``, ``plan --frontier``, ``demo`` and ``experiment judge-accuracy`` logs) or a sweep folder
(``results.parquet``, already flat)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from debatekit.experiments.logs import RUN_FILE, SUMMARY_FILE
from debatekit.experiments.report.rows import (
    Accuracy,
    AccuracyArm,
    BitsPoint,
    Exact,
    Frontier,
    FrontierPoint,
    Report,
    Run,
)
from debatekit.experiments.sweep import RESULTS_FILE, flat
from debatekit.files import FileMistake, read_json, read_jsonl
from debatekit.protocols.stochastic.params import Constants, Proof


class ReportError(ValueError):
    """A path that holds no runs to report."""


def read(path: Path) -> Report:
    """The rows under ``path``: a sweep folder (``results.parquet``), one run folder (``run.json``)
    or a folder of run folders; :class:`ReportError` when it holds none."""
    if not path.is_dir():
        raise ReportError(f"no such folder: {str(path)!r}")
    report = Report(title=path.resolve().name)
    if (path / RESULTS_FILE).exists():
        report.runs = read_sweep(path)
    elif (path / RUN_FILE).exists():
        report.extend(read_run_folder(path))
    else:
        for folder in sorted(p for p in path.iterdir() if (p / RUN_FILE).exists()):
            report.extend(read_run_folder(folder))
    if report.empty:
        raise ReportError(f"{str(path)!r} holds no finished runs (a log folder, a run folder or a sweep folder)")
    return report


def read_sweep(folder: Path) -> list[Run]:
    """A sweep's cells, one :class:`Run` each, from its ``results.parquet`` (already flat)."""
    import pyarrow.parquet as pq

    rows = pq.read_table(folder / RESULTS_FILE).to_pylist()
    return [run_from(row, str(row["id"]), _payoffs(row.get("debates_path"), row)) for row in rows]


def read_run_folder(folder: Path) -> Report:
    """One logged run: ``run`` (a :class:`Run`), ``solve`` (an :class:`Exact`), ``plan --frontier``
    (a :class:`Frontier`), ``demo`` (its rows) or ``judge-accuracy`` (an :class:`Accuracy`); an
    unfinished or unreadable one is noted as skipped."""
    report = Report(title=folder.name)
    try:
        head = read_json(folder / RUN_FILE)
        summary = read_json(folder / SUMMARY_FILE)
        config = head["config"]
        command = config.get("command", "run")
        if command == "run" and "items" in summary:  # over a dataset: a row an item played
            for item in summary["items"]:
                if "skipped" not in item:
                    report.runs.append(run_from(flat(config) | flat(item), f"{folder.name}/{item['id']}", ()))
        elif command == "run":
            row = flat(config) | flat(summary)
            report.runs.append(run_from(row, folder.name, _payoffs(head.get("record_path"), row)))
        elif command == "solve" and "value" in summary:
            report.exact.append(exact_from(summary | {"seed": config.get("seed")}, folder.name))
        elif command == "plan" and "frontier" in summary:
            report.frontiers.append(frontier_from(summary, folder.name))
            report.captions["frontier.png"] = "Planned, not played: certified by exact binomial tails (no seed)."
        elif command == "demo" and "rows" in summary:
            report.extend(from_demo(summary, folder.name))
        elif command == "judge-accuracy" and "arms" in summary:
            report.accuracies.append(accuracy_from(summary, folder.name))
        else:
            report.skipped.append(f"{folder.name} ({command}: nothing to draw)")
    except ReportError:
        raise
    except FileMistake as err:
        if (folder / RUN_FILE).is_file() and (folder / SUMMARY_FILE).is_file():
            raise ReportError(str(err)) from None
        report.skipped.append(f"{folder.name} (unfinished: {err.reason})")  # its summary not written yet
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        report.skipped.append(f"{folder.name} ({type(err).__name__}: unfinished or unreadable)")
    return report


def run_from(row: dict[str, Any], source: str, payoffs: tuple[float, ...] = ()) -> Run:
    """A :class:`Run` from a flat row (``run --json``'s fields, nested ones joined by ``_``)."""
    T = _int(row.get("T"))
    alice_samples, bob_samples = row.get("parameters_alice_samples"), row.get("parameters_bob_samples")
    rewards = tuple(
        (key.removeprefix("rewards_mean_"), float(value))
        for key, value in row.items()
        if key.startswith("rewards_mean_") and value is not None
    )
    ci = row.get("payoff_ci")
    return Run(
        source=source,
        protocol=str(row["protocol"]),
        constants=row.get("constants"),
        problem=str(row["problem"]),
        size=_int(row.get("size")),
        T=T,
        truth=str(row["truth"]),
        alice=str(row["alice"]),
        bob=str(row["bob"]),
        seed=_int(row.get("seed")),
        trials=int(row["trials"]),
        accept_rate=row.get("accept_rate"),
        honest_win_rate=float(row["honest_win_rate"]),
        verifier_queries_max=_int(row.get("verifier_queries_max")),
        alice_queries_mean=row.get("alice_queries_mean"),
        bob_queries_mean=row.get("bob_queries_mean"),
        verifier_bits_read_max=_int(row.get("verifier_bits_read_max")),
        completeness=row.get("guarantee_completeness"),
        soundness=row.get("guarantee_soundness"),
        queries_bound=_int(row.get("guarantee_verifier_queries")),
        bits_bound=_int(row.get("guarantee_bits_read")),
        alice_queries_bound=None if alice_samples is None or T is None else int(alice_samples) * T,
        bob_queries_bound=None if bob_samples is None or T is None else int(bob_samples) * T,
        K=row.get("K"),
        payoff_mean=row.get("payoff_mean"),
        payoff_ci=None if ci is None else (float(ci[0]), float(ci[1])),
        payoff_bound=row.get("payoff_bound"),
        payoff_bound_promised=row.get("payoff_bound_promised"),
        payoff_bound_kind=row.get("payoff_bound_kind"),
        reward_unit=row.get("reward_unit"),
        rewards=rewards,
        payoffs=payoffs,
        payoff_holds=row.get("payoff_holds"),
        payoff_note=row.get("payoff_bound_note") or row.get("payoff_bound_statement"),
        params=tuple(
            sorted(
                (key.removeprefix("params_"), str(value))
                for key, value in row.items()
                if key.startswith("params_") and key != "params_constants" and value is not None
            )
        ),
        oracle=_oracle(row),
    )


def _oracle(row: dict[str, Any]) -> str | None:
    """The oracles by side as one description, from a row's ``oracles_*`` columns, with how models
    generated (``generation_*``) and the prompts they read where a run set them (so runs that
    differ in these are rows apart)."""
    oracle = row.get("oracles_oracle")
    prover, verifier = row.get("oracles_prover_oracle") or oracle, row.get("oracles_verifier_oracle") or oracle
    said = (None if prover is None else str(prover)) if prover == verifier else f"prover {prover}, verifier {verifier}"
    generation = ", ".join(f"{key.removeprefix('generation_')}={value}" for key, value in sorted(row.items())
                           if key.startswith("generation_") and value is not None)  # fmt: skip
    prompts = f"prompts {row['prompts']}" if row.get("prompts") else ""
    return "; ".join(part for part in (said, f"generation {generation}" if generation else "", prompts) if part) or None


def exact_from(data: dict[str, Any], source: str) -> Exact:
    """An :class:`Exact` from what ``solve --json`` prints (with the seed, when known)."""
    return Exact(
        source, str(data["protocol"]), str(data["problem"]), int(data["size"]), str(data["truth"]),
        _int(data.get("seed")), str(data["honest"]), float(data["value"]), float(data["guarantee"]),
    )  # fmt: skip


def frontier_from(data: dict[str, Any], source: str) -> Frontier:
    """A :class:`Frontier` from what ``plan --frontier --json`` prints."""
    points = tuple(
        FrontierPoint(proof, int(row[proof]["prover_budget"][0]), int(row[proof]["verifier_queries"]))
        for row in data["frontier"]
        for proof in Proof
    )
    constants = tuple(
        (name, int(data[name]["alice_queries_per_step"]), int(data[name]["verifier_queries"]))
        for name in (Constants.lean.value, Constants.paper.value)
        if name in data
    )
    return Frontier(source, float(data["K"]), int(data["T"]), points, constants)


def accuracy_from(data: dict[str, Any], source: str) -> Accuracy:
    """An :class:`Accuracy` from what ``experiment judge-accuracy --json`` prints."""
    arms = tuple(map(_arm, data["arms"]))
    return Accuracy(source, str(data["judge"]), str(data["debaters"]), str(data["dataset"]), int(data["trials"]),
                    _int(data.get("seed")), arms)  # fmt: skip


def _arm(arm: dict[str, Any]) -> AccuracyArm:
    sides = {str(seat): {side: int(count) for side, count in told.items()} for seat, told in arm["sides"].items()}
    accuracy = None if arm["accuracy"] is None else float(arm["accuracy"])
    ci = (float(arm["ci"][0]), float(arm["ci"][1]))
    return AccuracyArm(str(arm["name"]), accuracy, ci, int(arm["n"]), int(arm["correct"]), int(arm["undecided"]), sides)


def from_demo(data: dict[str, Any], source: str = "demo") -> Report:
    """The rows of a demo's results (``results.json``, or a demo log's ``summary.json``)."""
    report = Report(title=source)
    seed = {"seed": data.get("seed")}
    for row in data["rows"] + data.get("exact_runs", []):
        role, name = row["adversary"].split(":", 1)
        known = {
            "alice": name if role == "alice" else "honest", "bob": name if role == "bob" else "honest",
            "guarantee_completeness": row.get("completeness"), "guarantee_soundness": row.get("soundness"),
            "guarantee_verifier_queries": row["queries_bound"], "guarantee_bits_read": row["bits_bound"],
            "oracles_oracle": "builtin",
        }  # fmt: skip
        report.runs.append(run_from(row | known | seed, source))
    for p in data.get("prover_estimator", []):
        known = {
            "payoff_bound_kind": p["bound_kind"], "payoff_bound_promised": p["holds"] is not None,
            "payoff_holds": p["holds"], "payoff_bound_note": p["promise"], "oracles_oracle": "builtin",
        }  # fmt: skip
        report.runs.append(run_from(p | seed | known, p["experiment"]))
    report.exact = [exact_from(s | seed, source) for s in data.get("exact", [])]
    report.bits = [
        BitsPoint(s["protocol"], s["problem"], int(s["size"]), int(s["verifier_bits_read_max"]), int(s["bits_bound"]))
        for s in data.get("scaling", [])
    ]
    if report.bits:
        report.captions["bits_read.png"] = "Sizes not in the table are the demo's scaling runs (every adversary)."
    return report


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _payoffs(record_path: str | None, row: dict[str, Any]) -> tuple[float, ...]:
    """Per-debate payoffs from a run's records, for the protocols with payoffs; none from a sweep
    cell that kept only some of its debates (``--records failures``: a sample skewed to failures)."""
    if row.get("payoff_mean") is None or not record_path or not Path(record_path).is_file():
        return ()
    if row.get("records", "all") != "all":
        return ()
    try:
        return tuple(float(r["payoff"]) for n, r in read_jsonl(record_path) if not (n == 1 and "header" in r))
    except (KeyError, TypeError, ValueError) as err:  # FileMistake names the file and line
        raise ReportError(str(err) if isinstance(err, FileMistake) else f"{record_path}: not a run's records") from None

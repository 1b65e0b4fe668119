"""The report: each plot of :data:`PLOTS` (its ``series``, its ``draw`` and a one-line note, in the
HTML instead of the plot, naming the runs that would produce it) drawn into a folder, and one
self-contained ``report.html`` (Jinja2, ``experiments/templates``; each PNG embedded as a data URI
and also written beside it) with a table of every run and one of every judge-accuracy arm."""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any

from debatekit.experiments.report.draw import (
    draw_accept,
    draw_accuracy,
    draw_bits,
    draw_exact,
    draw_frontier,
    draw_payoffs,
    draw_queries_K,
    draw_queries_T,
    draw_rates,
    draw_rewards,
)
from debatekit.experiments.report.rows import Report, Run
from debatekit.experiments.report.series import (
    Rate,
    Row,
    accept_series,
    accuracy_note,
    accuracy_series,
    bits_series,
    datasets,
    exact_note,
    exact_series,
    frontier_series,
    labels,
    payoff_series,
    queries_K_series,
    queries_T_series,
    rates_series,
    rewards_series,
    table,
)

REPORT_FILE = "report.html"


@dataclass(frozen=True)
class Plot:
    """One plot: its file, title, what it needs (the note when absent), its data, its drawing, and
    the runs its caption counts."""

    file: str
    title: str
    needs: str
    series: Callable[[Report], Any]
    draw: Callable[[Any, Path], None]
    runs: Callable[[Report], list[Run]]
    note: Callable[[Any], str] = lambda series: ""
    """More caption from the series (what a drawing with no spread means)."""


@dataclass(frozen=True)
class Figure:
    """A drawn plot as the HTML shows it (``png`` is the file's base64); ``note`` instead when not drawn."""

    file: str
    title: str
    caption: str = ""
    png: str = ""
    note: str = ""


def _with(*fields: str) -> Callable[[Report], list[Run]]:
    """The runs whose ``fields`` are all known."""
    return lambda report: [r for r in report.runs if all(getattr(r, name) is not None for name in fields)]


PLOTS = (
    Plot("rates.png", "Honest-win and accept rates per protocol, problem and adversary",
         "runs with accept or honest-win rates", rates_series, draw_rates, _with("honest_win_rate")),
    Plot("accept_vs_T.png", "Accept rate against T per adversary",
         "runs of one protocol and problem at several sizes (e.g. a sweep over size)", accept_series, draw_accept,
         _with("accept_rate", "T")),
    Plot("queries_vs_T.png", "Verifier and prover queries against T",
         "runs of one protocol and problem at several sizes", queries_T_series, draw_queries_T,
         _with("verifier_queries_max", "T")),
    Plot("queries_vs_K.png", "Verifier and prover queries against K",
         "stochastic-debate runs on problems with different Lipschitz constants K", queries_K_series,
         draw_queries_K, _with("verifier_queries_max", "K")),
    Plot("bits_read.png", "Bits read against n", "runs of one protocol and problem at several sizes",
         bits_series, draw_bits, _with("verifier_bits_read_max", "bits_bound", "size")),
    Plot("frontier.png", "The planner's frontier: verifier queries against prover budget",
         "`debatekit plan --frontier` logs", frontier_series, draw_frontier, lambda report: []),
    Plot("payoffs.png", "Prover-estimator and naive recursion: A's payoffs",
         "prover-estimator or naive-recursive runs", payoff_series, draw_payoffs, _with("payoff_mean")),
    Plot("rewards.png", "Per-round rewards", "prover-estimator or naive-recursive run logs (their rewards_mean)",
         rewards_series, draw_rewards, rewards_series),
    Plot("exact_vs_mc.png", "Exact against Monte Carlo values",
         "`solve` logs beside `run` logs of the same protocol, problem, size and truth", exact_series, draw_exact,
         lambda report: _beside_exact(report), exact_note),
    Plot("accuracy.png", "Judge accuracy per arm: direct, consultancy and each protocol",
         "`debatekit experiment judge-accuracy` logs", accuracy_series, draw_accuracy, lambda report: [],
         accuracy_note),
)  # fmt: skip


def _beside_exact(report: Report) -> list[Run]:
    """The runs pooled into the rows that ``exact_vs_mc.png`` draws."""
    drawn = {(row.label, row.problem, row.size, row.truth, row.adversary) for _, row in exact_series(report)}
    named = labels(report.runs)
    return [r for r in report.runs if (named[r], r.problem, r.size, r.truth, r.adversary) in drawn]


def caption(runs: list[Run]) -> str:
    """Seeds and debates per run of the runs a plot draws."""
    if not runs:
        return ""
    seeds = sorted({r.seed for r in runs if r.seed is not None})
    trials = sorted({r.trials for r in runs})
    count = f"{trials[0]}" if len(trials) == 1 else f"{trials[0]}–{trials[-1]}"
    seed = ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(map(str, seeds)) if seeds else "seed not recorded"
    return f"{len(runs)} runs; {seed}; {count} debates per run."


def draw_all(report: Report, folder: Path) -> list[Figure]:
    """Each plot of :data:`PLOTS` the data hold, drawn into ``folder``; a note for the others."""
    figures = []
    for plot in PLOTS:
        data = plot.series(report)
        if not data:
            figures.append(Figure(plot.file, plot.title, note=f"Not drawn: needs {plot.needs}."))
            continue
        plot.draw(data, folder / plot.file)
        said = (caption(plot.runs(report)), plot.note(data), report.captions.get(plot.file, ""))
        text = " ".join(filter(None, said))
        figures.append(embed(folder / plot.file, plot.title, text))
    return figures


def series_json(report: Report) -> dict[str, Any]:
    """``report --json``: every run as read, the table (runs alike but for seed pooled, with what
    holds), and each plot's series, the data it draws (None, with the note the HTML shows instead,
    where the data do not hold it)."""
    plots = []
    for plot in PLOTS:
        data = plot.series(report)
        plots.append({"file": plot.file, "title": plot.title, "series": _jsonable(data) if data else None,
                      "note": "" if data else f"Not drawn: needs {plot.needs}."})  # fmt: skip
    rows = table(report)
    return {"runs": [_jsonable(run) for run in report.runs], "table": _jsonable(rows),
            "datasets": _jsonable(datasets(rows)), "plots": plots}  # fmt: skip


def _jsonable(value: Any) -> Any:
    """A series as JSON data: dataclasses as objects (a pooled rate with its ``rate``), a dict with
    tuple keys as a list of ``{"key": [...], "value": ...}``, a non-finite float as None."""
    if is_dataclass(value) and not isinstance(value, type):
        data = {f.name: _jsonable(getattr(value, f.name)) for f in fields(value)}
        if isinstance(value, Rate):
            return data | {"rate": value.rate}
        return data | {"adversary": value.adversary, "verdict": value.verdict} if isinstance(value, Row) else data
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value):
            return {key: _jsonable(item) for key, item in value.items()}
        return [{"key": _jsonable(key), "value": _jsonable(item)} for key, item in value.items()]
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def embed(path: Path, title: str, text: str) -> Figure:
    """A PNG already written, as a :class:`Figure` with its bytes for a data URI."""
    return Figure(path.name, title, text, base64.b64encode(path.read_bytes()).decode("ascii"))


def write(report: Report, folder: Path, extra: Iterable[Figure] = ()) -> Path:
    """Draw ``report``'s plots into ``folder`` and write ``report.html`` there (with ``extra``
    figures after the others, such as the demo's reward gap); return its path."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    folder.mkdir(parents=True, exist_ok=True)
    figures = draw_all(report, folder) + list(extra)
    env = Environment(loader=PackageLoader("debatekit.experiments"), autoescape=select_autoescape())
    rows = table(report)
    html = env.get_template("report.html").render(report=report, rows=rows, pooled=datasets(rows), figures=figures,
                                                  fmt=_fmt)  # fmt: skip
    path = folder / REPORT_FILE
    path.write_text(html, encoding="utf-8")
    return path


def _fmt(value: Any, digits: int = 3) -> str:
    """A table cell: numbers to ``digits`` significant figures, None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)

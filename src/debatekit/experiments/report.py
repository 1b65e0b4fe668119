"""Reports: what a log folder, one run folder or a sweep folder holds, as normalised rows, drawn as
the plots researchers ask for and written as one self-contained ``report.html`` (each PNG embedded
as a data URI and also written beside it).

The readers turn every source into the same rows: :class:`Run` (a ``run`` log, a sweep cell, a demo
row), :class:`Exact` (a ``solve`` log, the demo's exact rows), :class:`Frontier` (a ``plan
--frontier`` log) and :class:`BitsPoint` (the most bits read at one size). Each plot in
:data:`PLOTS` has a ``series`` function returning exactly what it draws (tests compare it with the
rows read), a ``draw`` function (the only place matplotlib is imported, with the Agg backend) and a
one-line note, in the HTML instead of the plot, naming the runs that would produce it. Rates carry
Wilson 95% intervals (:func:`debatekit.analysis.stats.wilson`); bounds are drawn dashed, on top.
"""

from __future__ import annotations

import base64
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from debatekit.analysis.stats import wilson
from debatekit.experiments.logs import RUN_FILE, SUMMARY_FILE
from debatekit.experiments.sweep import RESULTS_FILE, flat
from debatekit.files import FileMistake, read_json, read_jsonl
from debatekit.protocols.stochastic.params import Constants

REPORT_FILE = "report.html"
WIDTH_IN, DPI = 8.0, 100  # 800 px wide: the width a README shows, drawn at its own size
TRUTH_COLOURS = {"yes": "tab:blue", "no": "tab:red"}
BOUND_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.6, "zorder": 6}


class ReportError(ValueError):
    """A path that holds no runs to report."""


@dataclass(frozen=True)
class Run:
    """One Monte Carlo run (a ``run`` log, a sweep cell or a demo row); None where its source does not say."""

    source: str
    protocol: str
    constants: str | None
    problem: str
    size: int | None
    T: int | None
    truth: str
    alice: str
    bob: str
    seed: int | None
    trials: int
    accept_rate: float | None
    honest_win_rate: float
    verifier_queries_max: int | None = None
    alice_queries_mean: float | None = None
    bob_queries_mean: float | None = None
    verifier_bits_read_max: int | None = None
    completeness: float | None = None
    soundness: float | None = None
    queries_bound: int | None = None
    bits_bound: int | None = None
    alice_queries_bound: int | None = None
    bob_queries_bound: int | None = None
    K: float | None = None
    payoff_mean: float | None = None
    payoff_ci: tuple[float, float] | None = None
    payoff_bound: float | None = None
    payoff_bound_kind: str | None = None
    payoff_bound_promised: bool | None = None
    """False where the theorem promises nothing (vacuous, or its hypotheses fail): no bound drawn."""
    reward_unit: float | None = None
    rewards: tuple[tuple[str, float], ...] = ()
    """Mean reward per round in the order the rounds are played (``initial``, then round d down to 0)."""
    payoffs: tuple[float, ...] = ()
    """Per-debate payoffs, when the run kept its records."""

    @property
    def label(self) -> str:
        return self.protocol if self.constants is None else f"{self.protocol} ({self.constants})"

    @property
    def adversary(self) -> str:
        """The players that are not honest (``bob:point-random``), or ``both honest``."""
        others = [f"{role}:{name}" for role, name in (("alice", self.alice), ("bob", self.bob)) if name != "honest"]
        return ", ".join(others) or "both honest"

    def interval(self, rate: float) -> tuple[float, float]:
        """Wilson 95% interval of ``rate`` over this run's debates."""
        return wilson(round(rate * self.trials), self.trials)


@dataclass(frozen=True)
class Exact:
    """The honest side's exact win probability against the best adversary (``solve``)."""

    source: str
    protocol: str
    problem: str
    size: int
    truth: str
    seed: int | None
    honest: str
    value: float
    guarantee: float


@dataclass(frozen=True)
class FrontierPoint:
    proof: str
    prover_budget: int
    """Alice's queries per step."""
    verifier_queries: int


@dataclass(frozen=True)
class Frontier:
    """``plan --frontier``: verifier queries against the prover budget under each proof, and the
    fixed constants (Lean's, the paper's) as (Alice's queries per step, verifier queries)."""

    source: str
    K: float
    T: int
    points: tuple[FrontierPoint, ...]
    constants: tuple[tuple[str, int, int], ...]


@dataclass(frozen=True)
class BitsPoint:
    protocol: str
    problem: str
    n: int
    bits_read_max: int
    bound: int


@dataclass
class Report:
    """Everything a report draws; ``bits`` adds points to those the runs give (the demo's scaling runs)."""

    title: str
    runs: list[Run] = field(default_factory=list)
    exact: list[Exact] = field(default_factory=list)
    frontiers: list[Frontier] = field(default_factory=list)
    bits: list[BitsPoint] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Run folders that could not be read (unfinished, unreadable or of another command)."""
    captions: dict[str, str] = field(default_factory=dict)
    """More caption per plot file (what the runs do not say, such as the demo's scaling runs)."""

    def extend(self, other: Report) -> None:
        self.runs += other.runs
        self.exact += other.exact
        self.frontiers += other.frontiers
        self.bits += other.bits
        self.skipped += other.skipped
        self.captions |= other.captions

    @property
    def empty(self) -> bool:
        return not (self.runs or self.exact or self.frontiers or self.bits)


# -- reading ------------------------------------------------------------------------------------------


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
    (a :class:`Frontier`) or ``demo`` (its rows); an unfinished or unreadable one is noted as skipped."""
    report = Report(title=folder.name)
    try:
        head = read_json(folder / RUN_FILE)
        summary = read_json(folder / SUMMARY_FILE)
        config = head["config"]
        command = config.get("command", "run")
        if command == "run":
            row = flat(config) | flat(summary)
            report.runs.append(run_from(row, folder.name, _payoffs(head.get("record_path"), row)))
        elif command == "solve" and "value" in summary:
            report.exact.append(exact_from(summary | {"seed": config.get("seed")}, folder.name))
        elif command == "plan" and "frontier" in summary:
            report.frontiers.append(frontier_from(summary, folder.name))
            report.captions["frontier.png"] = "Planned, not played: certified by exact binomial tails (no seed)."
        elif command == "demo" and "rows" in summary:
            report.extend(from_demo(summary, folder.name))
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
    )


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
        for proof in ("direct", "lean")
    )
    constants = tuple(
        (name, int(data[name]["alice_queries_per_step"]), int(data[name]["verifier_queries"]))
        for name in (Constants.lean.value, Constants.paper.value)
        if name in data
    )
    return Frontier(source, float(data["K"]), int(data["T"]), points, constants)


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
        }  # fmt: skip
        report.runs.append(run_from(row | known | seed, source))
    for p in data.get("prover_estimator", []):
        known = {"payoff_bound_kind": p["bound_kind"], "payoff_bound_promised": p["holds"] is not None}
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
    """Per-debate payoffs from a run's records, for the protocols with payoffs."""
    if row.get("payoff_mean") is None or not record_path or not Path(record_path).is_file():
        return ()
    try:
        return tuple(float(r["payoff"]) for n, r in read_jsonl(record_path) if not (n == 1 and "header" in r))
    except (KeyError, TypeError, ValueError) as err:  # FileMistake names the file and line
        raise ReportError(str(err) if isinstance(err, FileMistake) else f"{record_path}: not a run's records") from None


# -- series: exactly what each plot draws ---------------------------------------------------------


@dataclass(frozen=True)
class Rate:
    """A rate pooled over runs, with its Wilson 95% interval and the theorem's promise where it makes one."""

    successes: int
    trials: int
    low: float
    high: float
    promise: float | None = None

    @property
    def rate(self) -> float:
        return self.successes / self.trials


def _pool(runs: Iterable[Run], rate: Callable[[Run], float | None], promise: float | None = None) -> Rate | None:
    counted = [(round(value * r.trials), r.trials) for r in runs if (value := rate(r)) is not None]
    if not counted:
        return None
    successes, trials = sum(s for s, _ in counted), sum(n for _, n in counted)
    return Rate(successes, trials, *wilson(successes, trials), promise)


def _promise(runs: list[Run], truth: str) -> float | None:
    """The accept rate the theorem promises: at least c on yes instances, at most s on no ones (the
    weakest over pooled runs); None when vacuous, or when the side the truth is with (Alice on yes,
    Bob on no) is not the built-in honest strategy in every pooled run: the theorems promise
    nothing to a dishonest side (a user's own honest strategy gets no tick: the log cannot say)."""
    if truth == "yes":
        if any(r.alice != "honest" for r in runs):
            return None
        values = [r.completeness for r in runs if r.completeness is not None and r.completeness > 0]
        return min(values) if values else None
    if any(r.bob != "honest" for r in runs):
        return None
    values = [r.soundness for r in runs if r.soundness is not None and r.soundness < 1]
    return max(values) if values else None


def rates_series(report: Report) -> dict[tuple[str, str], dict[str, dict[str, Rate]]]:
    """(protocol, adversary) → truth → {"accept", "honest win"}: rates pooled over problems, sizes and seeds."""
    groups: dict[tuple[str, str], dict[str, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for r in report.runs:
        groups[(r.label, r.adversary)][r.truth].append(r)
    out: dict[tuple[str, str], dict[str, dict[str, Rate]]] = {}
    for key in sorted(groups):
        out[key] = {}
        for truth, runs in sorted(groups[key].items(), key=lambda item: item[0] != "yes"):
            rates = {"accept": _pool(runs, lambda r: r.accept_rate, _promise(runs, truth)),
                     "honest win": _pool(runs, lambda r: r.honest_win_rate)}  # fmt: skip
            out[key][truth] = {name: rate for name, rate in rates.items() if rate is not None}
    return out


def accept_series(report: Report) -> dict[tuple[str, str, str], dict[str, dict[int, Rate]]]:
    """(protocol, problem, truth) → adversary → T → accept rate (pooled over seeds), for groups with
    several T."""
    groups: dict[tuple[str, str, str], dict[str, dict[int, list[Run]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for r in report.runs:
        if r.accept_rate is not None and r.T is not None:
            groups[(r.label, r.problem, r.truth)][r.adversary][r.T].append(r)
    out = {}
    for key in sorted(groups):
        if len({T for by_T in groups[key].values() for T in by_T}) < 2:
            continue
        out[key] = {
            adversary: {T: rate for T in sorted(by_T) if (rate := _pool(by_T[T], lambda r: r.accept_rate,
                                                                           _promise(by_T[T], key[2])))}
            for adversary, by_T in sorted(groups[key].items())
        }  # fmt: skip
    return out


ROLE_MARKERS = (("o", 10), ("s", 7), ("^", 5))  # measured lines that coincide stay visible
QUERY_ROLES = (  # role, measured, bound
    ("verifier (max)", lambda r: r.verifier_queries_max, lambda r: r.queries_bound),
    ("alice (mean)", lambda r: r.alice_queries_mean, lambda r: r.alice_queries_bound),
    ("bob (mean)", lambda r: r.bob_queries_mean, lambda r: r.bob_queries_bound),
)


def _queries_series(
    report: Report, axis: Callable[[Run], float | None], group: Callable[[Run], tuple[str, ...]]
) -> dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]]:
    """group → role → [(x, most queries measured at x, least bound at x)], for groups with several x."""
    groups: dict[tuple[str, ...], dict[float, list[Run]]] = defaultdict(lambda: defaultdict(list))
    for r in report.runs:
        if (x := axis(r)) is not None and r.verifier_queries_max is not None:
            groups[group(r)][x].append(r)
    out = {}
    for key in sorted(groups):
        by_x = groups[key]
        if len(by_x) < 2:
            continue
        out[key] = {}
        for role, measured, bound in QUERY_ROLES:
            points = []
            for x in sorted(by_x):
                values = [v for r in by_x[x] if (v := measured(r)) is not None]
                bounds = [b for r in by_x[x] if (b := bound(r)) is not None]
                if values:
                    points.append((x, max(values), min(bounds) if bounds else None))
            if points:
                out[key][role] = points
    return out


def queries_T_series(report: Report) -> dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]]:
    """(protocol, problem) → role → [(T, queries, bound)]."""
    return _queries_series(report, lambda r: r.T, lambda r: (r.label, r.problem))


def queries_K_series(report: Report) -> dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]]:
    """(protocol, problem) → role → [(K, queries, bound)], for problems whose K varies (with size)."""
    return _queries_series(report, lambda r: r.K, lambda r: (r.label, r.problem))


def bits_series(report: Report) -> dict[tuple[str, str], list[BitsPoint]]:
    """(protocol, problem) → the most bits read at each n, with the bound, for groups with several n."""
    points = report.bits + [
        BitsPoint(r.protocol, r.problem, r.size, r.verifier_bits_read_max, r.bits_bound)
        for r in report.runs
        if r.size is not None and r.verifier_bits_read_max is not None and r.bits_bound is not None
    ]
    groups: dict[tuple[str, str], dict[int, list[BitsPoint]]] = defaultdict(lambda: defaultdict(list))
    for p in points:
        groups[(p.protocol, p.problem)][p.n].append(p)
    return {
        key: [BitsPoint(*key, n, max(p.bits_read_max for p in by_n[n]), min(p.bound for p in by_n[n]))
              for n in sorted(by_n)]
        for key, by_n in sorted(groups.items())
        if len(by_n) > 1
    }  # fmt: skip


def frontier_series(report: Report) -> list[Frontier]:
    return sorted(report.frontiers, key=lambda f: (f.K, f.T))


def payoff_series(report: Report) -> dict[str, list[Run]]:
    """protocol → its runs with payoffs (A's mean payoff, interval, bound; per-debate payoffs when kept)."""
    out: dict[str, list[Run]] = defaultdict(list)
    for r in report.runs:
        if r.payoff_mean is not None and r.payoff_ci is not None:
            out[r.protocol].append(r)
    return dict(sorted(out.items()))


def rewards_series(report: Report) -> list[Run]:
    """The runs with per-round mean rewards."""
    return [r for r in report.runs if r.rewards]


def exact_series(report: Report) -> list[tuple[Exact, Run]]:
    """Each exact value (against the best adversary) beside the Monte Carlo run, of the same protocol,
    problem, size and truth (and seed, when both say), whose adversary did best against the honest side."""
    out = []
    for e in sorted(report.exact, key=lambda e: (e.protocol, e.problem, e.size, e.truth != "yes")):
        runs = [r for r in report.runs if (r.protocol, r.problem, r.size, r.truth) == (e.protocol, e.problem,
                e.size, e.truth) and (e.seed is None or r.seed is None or e.seed == r.seed)]  # fmt: skip
        if runs:
            out.append((e, min(runs, key=lambda r: (r.honest_win_rate, r.adversary))))
    return out


# -- drawing ------------------------------------------------------------------------------------------


def _figure(rows: int, columns: int, height: float, heights: list[float] | None = None) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(rows, columns, figsize=(WIDTH_IN, height), squeeze=False,
                             gridspec_kw={"height_ratios": heights} if heights else None)  # fmt: skip
    return fig, axes


def _symlog(ax: Any, values: list[float], axis: str = "x", linthresh: float = 1.0) -> bool:
    """A symmetric log ``axis`` with a tick every few decades, written as plain numbers (linear when the
    values span less than a decade beyond ``linthresh``); whether it is symmetric log."""
    from matplotlib.ticker import FuncFormatter, NullLocator

    ax.margins(**{axis: 0.04})
    top = max([abs(v) for v in values] + [linthresh])
    if top <= 10 * linthresh:
        return False
    getattr(ax, f"set_{axis}scale")("symlog", linthresh=linthresh)
    decades = math.ceil(math.log10(top / linthresh))
    step = max(1, math.ceil(decades / 3))
    powers = [linthresh * 10**k for k in range(0 if step == 1 else step, decades + 1, step)]
    ticks = [0.0, linthresh] + [p for p in powers if p <= top * 10] + [-p for p in powers if -p >= min(values) * 10]
    getattr(ax, f"set_{axis}ticks")(sorted(set(ticks)))
    scale = getattr(ax, f"{axis}axis")
    scale.set_minor_locator(NullLocator())
    scale.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    return True


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def _panels(count: int, height: float, legend: float = 0.0) -> tuple[Any, list[Any]]:
    """``count`` panels, two to a row, ``height`` inches each, and ``legend`` inches below them."""
    columns = 1 if count == 1 else 2
    rows = math.ceil(count / columns)
    fig, axes = _figure(rows, columns, height * rows + legend)
    flat_axes = list(axes.flat)
    for ax in flat_axes[count:]:
        ax.set_visible(False)
    return fig, flat_axes[:count]


def _legend_below(fig: Any, handles: list[Any], labels: list[str], columns: int) -> None:
    """A legend under the panels, and the panels laid out above it."""
    fig.legend(handles, labels, loc="lower center", ncol=columns, fontsize=9, frameon=False)
    rows = math.ceil(len(labels) / columns)
    fig.tight_layout(rect=(0, (0.3 * rows + 0.1) / fig.get_figheight(), 1, 1))


def draw_rates(series: dict[tuple[str, str], dict[str, dict[str, Rate]]], path: Path) -> None:
    """Dot plot: under a heading per protocol, one line per adversary, yes above no; accept and
    honest-win panels."""
    slots: list[tuple[str, tuple[str, str] | None]] = []  # (tick label, key; None for a heading)
    for key in series:
        if not any(label == key[0] and heading is None for label, heading in slots):
            slots.append((key[0], None))
        slots.append((key[1], key))
    fig, axes = _figure(1, 2, 1.7 + 0.24 * len(slots))
    offsets = {"yes": -0.17, "no": 0.17}
    for ax, metric in zip(axes[0], ("accept", "honest-win"), strict=True):
        for y, (_, key) in enumerate(slots):
            if key is None:
                ax.axhline(y, color="grey", linewidth=0.6, alpha=0.5)
                continue
            for truth, rates in series[key].items():
                rate = rates.get(metric.replace("-", " "))
                if rate is None:
                    continue
                at = y + offsets.get(truth, 0)
                ax.errorbar(rate.rate, at, xerr=[[rate.rate - rate.low], [rate.high - rate.rate]], fmt="o",
                            markersize=4, capsize=2, color=TRUTH_COLOURS.get(truth, "grey"), zorder=3)  # fmt: skip
                if rate.promise is not None:
                    ax.plot([rate.promise] * 2, [at - 0.15, at + 0.15], **BOUND_STYLE | {"linewidth": 1.2})
        ax.set_ylim(len(slots) - 0.5, -0.5)
        ax.set_xlim(-0.03, 1.03)
        ax.set_xlabel(f"{metric} rate (fraction)")
        ax.grid(axis="x", alpha=0.3)
        ax.set_yticks(range(len(slots)))
        ax.tick_params(axis="y", length=0)
    axes[0][0].set_yticklabels([label for label, _ in slots], fontsize=8)
    for tick, (_, key) in zip(axes[0][0].get_yticklabels(), slots, strict=True):
        if key is None:
            tick.set_fontweight("bold")
    axes[0][1].set_yticklabels([])
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", color=c, linestyle="") for c in TRUTH_COLOURS.values()]
    handles.append(Line2D([], [], **BOUND_STYLE))
    labels = ["truth yes (95% Wilson)", "truth no (95% Wilson)", "theorem: accept >= c (yes), <= s (no)"]
    _legend_below(fig, handles, labels, 3)
    _save(fig, path)


def draw_accept(series: dict[tuple[str, str, str], dict[str, dict[int, Rate]]], path: Path) -> None:
    """One panel per (protocol, problem, truth), one line per adversary (nudged sideways so that equal
    rates stay apart), the promise dashed on top."""
    fig, axes = _panels(len(series), 3.4)
    for ax, (key, by_adversary) in zip(axes, series.items(), strict=True):
        promises: dict[int, float] = {}
        for k, (adversary, by_T) in enumerate(by_adversary.items()):
            nudge = 10 ** (0.02 * (k - (len(by_adversary) - 1) / 2))
            rates = list(by_T.values())
            errors = [[r.rate - r.low for r in rates], [r.high - r.rate for r in rates]]
            ax.errorbar([T * nudge for T in by_T], [r.rate for r in rates], yerr=errors, fmt="o-", markersize=4,
                        capsize=2, label=adversary)  # fmt: skip
            promises |= {T: r.promise for T, r in by_T.items() if r.promise is not None}
        if promises:
            Ts = sorted(promises)
            ax.plot(Ts, [promises[T] for T in Ts], label="theorem's promise", **BOUND_STYLE)
        protocol, problem, truth = key
        ax.set_title(f"{protocol} on {problem}, truth {truth}", fontsize=10)
        _log_ticks(ax, sorted({T for by_T in by_adversary.values() for T in by_T}))
        ax.set_xlabel("T (machine steps)")
        ax.set_ylabel("accept rate (95% Wilson)")
        ax.set_ylim(-0.05, 1.05)
        ax.legend(fontsize=8, loc="center right")
    fig.tight_layout()
    _save(fig, path)


def _log_ticks(ax: Any, xs: list[float], base: float = 10) -> None:
    """A log x axis ticked at the values drawn, written out in full."""
    from matplotlib.ticker import NullFormatter

    ax.set_xscale("log", base=base)
    low, high = min(xs), max(xs)
    ticks = [low]
    for x in xs:  # labels at least 1/8 of the axis apart
        if math.log(x / ticks[-1]) >= math.log(high / low) / 8:
            ticks.append(x)
    ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(low / (high / low) ** 0.08, high * (high / low) ** 0.08)


def _draw_queries(series: dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]], path: Path,
                  xlabel: str, log_x: bool) -> None:  # fmt: skip
    from matplotlib.ticker import FuncFormatter

    fig, axes = _panels(len(series), 3.3, legend=1.0)
    for ax, (key, roles) in zip(axes, series.items(), strict=True):
        for k, (role, points) in enumerate(roles.items()):
            colour, (marker, size) = f"C{k}", ROLE_MARKERS[k]
            xs = [x for x, _, _ in points]
            ax.plot(xs, [q for _, q, _ in points], marker=marker, markersize=size, fillstyle="none", color=colour,
                    label=f"{role}, measured", zorder=3)  # fmt: skip
            bounded = [(x, b) for x, _, b in points if b is not None]
            if bounded:
                style = BOUND_STYLE | {"color": colour}
                ax.plot(*zip(*bounded, strict=True), marker="x", label=f"{role}, theorem's bound", **style)
        ax.set_title(" on ".join(key), fontsize=10)
        xs = sorted({x for points in roles.values() for x, _, _ in points})
        if log_x:
            _log_ticks(ax, xs)
        ax.set_yscale("symlog", linthresh=1)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _: f"{y:g}"))
        ax.set_xlabel(xlabel)
        ax.set_ylabel("oracle queries per debate")
        ax.margins(y=0.12)
    named = {label: handle for ax in axes for handle, label in zip(*ax.get_legend_handles_labels(), strict=True)}
    _legend_below(fig, list(named.values()), list(named), 2)
    _save(fig, path)


def draw_queries_T(series: dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]],
                   path: Path) -> None:  # fmt: skip
    _draw_queries(series, path, "T (machine steps)", log_x=True)


def draw_queries_K(series: dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]],
                   path: Path) -> None:  # fmt: skip
    _draw_queries(series, path, "K (Lipschitz constant of the machine at the oracle)", log_x=False)


def draw_bits(series: dict[tuple[str, str], list[BitsPoint]], path: Path) -> None:
    fig, axes = _panels(len(series), 3.4)
    for ax, ((protocol, problem), points) in zip(axes, series.items(), strict=True):
        ns = [p.n for p in points]
        ax.plot(ns, [p.bits_read_max for p in points], "o-", color="C0", label="bits read (max, every adversary)")
        ax.plot(ns, [p.bound for p in points], marker="x", label="theorem's bound", **BOUND_STYLE)
        ax.plot(ns, [math.log2(n) for n in ns], ":", color="C2", label="log2 n (Corollary 4's floor)")
        _log_ticks(ax, ns, base=2)
        ax.set_xlabel("n (input bits)")
        ax.set_ylabel("bits the verifier read")
        ax.set_title(f"{protocol} on {problem}", fontsize=10)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    _save(fig, path)


CONSTANTS_NAMES = {
    Constants.lean.value: "Lean's constants (Hoeffding)",
    Constants.paper.value: "the paper's constants (Figure 2)",
}


def draw_frontier(series: list[Frontier], path: Path) -> None:
    fig, axes = _panels(len(series), 3.8)
    for ax, f in zip(axes, series, strict=True):
        for k, proof in enumerate(("direct", "lean")):
            points = [p for p in f.points if p.proof == proof]
            ax.plot([p.prover_budget for p in points], [p.verifier_queries for p in points], "o-", color=f"C{k}",
                    label=f"planned, {proof} proof")  # fmt: skip
        for (name, budget, queries), marker in zip(f.constants, ("*", "P"), strict=False):
            ax.plot(budget, queries, marker, markersize=11, color="black", linestyle="", zorder=5,
                    label=CONSTANTS_NAMES.get(name, name))  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("prover budget (Alice's queries per step)")
        ax.set_ylabel("verifier queries per debate")
        ax.set_title(f"K = {f.K:g}, T = {f.T}", fontsize=10)
        ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)


def _unit(r: Run) -> float:
    return r.reward_unit or 1.0


def draw_payoffs(series: dict[str, list[Run]], path: Path) -> None:
    """One panel per protocol: A's mean payoff with its 95% interval (and each debate's, when kept),
    in units of r^(d+1) for prover-estimator debate."""
    heights = [1.1 + 0.26 * len(runs) for runs in series.values()]  # title and axis, then a line per run
    fig, axes = _figure(len(series), 1, 0.7 + sum(heights), heights)
    for ax, (protocol, runs) in zip(axes[:, 0], series.items(), strict=True):
        drawn = []
        for y, r in enumerate(runs):
            unit, (low, high) = _unit(r), r.payoff_ci or (r.payoff_mean, r.payoff_mean)
            colour = TRUTH_COLOURS.get(r.truth, "grey")
            if r.payoffs:
                each = [p / unit for p in r.payoffs]
                ax.plot(each, [y + 0.25] * len(each), "|", markersize=9, color=colour, alpha=0.4)
                drawn += each
            mean = (r.payoff_mean or 0.0) / unit
            ax.errorbar(mean, y, xerr=[[mean - low / unit], [high / unit - mean]], fmt="o", markersize=4,
                        capsize=2, color=colour, zorder=3)  # fmt: skip
            drawn += [low / unit, high / unit]
            if r.payoff_bound is not None and r.payoff_bound_promised is not False:
                ax.plot([r.payoff_bound / unit] * 2, [y - 0.35, y + 0.35], **BOUND_STYLE)
                drawn.append(r.payoff_bound / unit)
        ax.set_yticks(range(len(runs)))
        ax.set_yticklabels([f"{r.alice} vs {r.bob} ({r.problem}, {r.truth})" for r in runs], fontsize=8)
        ax.set_ylim(len(runs) - 0.5, -0.5)
        scale = "; symmetric log scale" if _symlog(ax, drawn) else ""
        unit_name = "r^(d+1)" if protocol == "prover-estimator" else "reward"
        ax.set_xlabel(f"A's payoff per debate (units of {unit_name}{scale})")
        ax.set_title(protocol, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", color=c, linestyle="") for c in TRUTH_COLOURS.values()]
    handles += [Line2D([], [], **BOUND_STYLE)]
    labels = ["truth yes: mean (95% CI)", "truth no: mean (95% CI)", "theorem's bound"]
    if any(r.payoffs for runs in series.values() for r in runs):
        handles.append(Line2D([], [], marker="|", color="grey", linestyle=""))
        labels.append("each debate")
    _legend_below(fig, handles, labels, 2)
    _save(fig, path)


def draw_rewards(series: list[Run], path: Path) -> None:
    fig, axes = _figure(1, 1, 4.2)
    ax = axes[0][0]
    drawn = []
    for r in series:
        names = [name for name, _ in r.rewards]
        values = [value / _unit(r) for _, value in r.rewards]
        ax.plot(names, values, "o-", label=f"{r.protocol}: {r.alice} vs {r.bob} ({r.truth}, n={r.size})")
        drawn += values
    _symlog(ax, drawn, "y")
    ax.set_xlabel("round (in the order played: initial, then round d down to 0)")
    ax.set_ylabel("mean reward to A (units of r^(d+1))")
    ax.tick_params(axis="x", labelrotation=45, labelsize=8)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)


def draw_exact(series: list[tuple[Exact, Run]], path: Path) -> None:
    """One line per instance: the exact value against the best adversary above the Monte Carlo
    honest-win rate against the strongest built-in adversary (95% Wilson), the guarantee dashed."""
    fig, axes = _figure(1, 1, 1.5 + 0.45 * len(series))
    ax = axes[0][0]
    lows = []
    for y, (e, r) in enumerate(series):
        low, high = r.interval(r.honest_win_rate)
        lows += [low, e.value, e.guarantee]
        ax.plot(e.value, y - 0.15, "D", color="black", markersize=6, zorder=4)
        ax.errorbar(r.honest_win_rate, y + 0.15, xerr=[[r.honest_win_rate - low], [high - r.honest_win_rate]],
                    fmt="o", markersize=5, capsize=2, color="tab:blue", zorder=3)  # fmt: skip
        ax.annotate(r.adversary, (low, y + 0.15), xytext=(-5, 0), textcoords="offset points", ha="right",
                    va="center", fontsize=7, color="tab:blue")  # fmt: skip
        ax.plot([e.guarantee] * 2, [y - 0.4, y + 0.4], **BOUND_STYLE)
    ax.set_yticks(range(len(series)))
    ax.set_yticklabels([f"{e.protocol}, {e.problem}, n={e.size}, truth {e.truth}" for e, _ in series], fontsize=8)
    ax.set_ylim(len(series) - 0.5, -0.5)
    ax.set_xlim(max(0.0, min(lows) - 0.25), 1.02)
    ax.set_xlabel("P[honest side wins] (probability)")
    ax.grid(axis="x", alpha=0.3)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="D", color="black", linestyle=""),
               Line2D([], [], marker="o", color="tab:blue", linestyle=""), Line2D([], [], **BOUND_STYLE)]  # fmt: skip
    labels = ["exact, best adversary", "Monte Carlo, strongest built-in adversary (named)", "theorem's guarantee"]
    _legend_below(fig, handles, labels, 2)
    _save(fig, path)


# -- the report ---------------------------------------------------------------------------------------


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
    Plot("rates.png", "Honest-win and accept rates per protocol and adversary",
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
         lambda report: [r for _, r in exact_series(report)]),
)  # fmt: skip


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
        text = " ".join(filter(None, (caption(plot.runs(report)), report.captions.get(plot.file, ""))))
        figures.append(embed(folder / plot.file, plot.title, text))
    return figures


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
    html = env.get_template("report.html").render(report=report, figures=figures, fmt=_fmt)
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

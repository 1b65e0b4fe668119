"""Drawing each plot (matplotlib with the Agg backend, imported on use: the only place it is): 800 px
wide, bounds dashed on top, rates with their Wilson 95% intervals."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

from debatekit.analysis.calibration import Calibration
from debatekit.experiments.report.rows import Accuracy, BitsPoint, Exact, Frontier, Run
from debatekit.experiments.report.series import Rate, Rates, Row, exact_note
from debatekit.protocols.stochastic.params import Constants, Proof

WIDTH_IN, DPI = 8.0, 100  # 800 px wide: the width a README shows, drawn at its own size
TRUTH_COLOURS = {"yes": "tab:blue", "no": "tab:red"}
BOUND_STYLE = {"color": "black", "linestyle": "--", "linewidth": 1.6, "zorder": 6}
ROLE_MARKERS = (("o", 10), ("s", 7), ("^", 5))  # measured lines that coincide stay visible
TICK_FONT_PX = 10 * DPI / 72  # matplotlib's default tick labels, 10 points


def figure(rows: int, columns: int, height: float, heights: list[float] | None = None) -> tuple[Any, Any]:
    """A figure of ``rows`` by ``columns`` panels, 800 px wide and ``height`` inches tall (rows in
    the ratio ``heights``), and its axes as a 2-D array."""
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


def save(fig: Any, path: Path) -> None:
    """Write ``fig`` to ``path`` as a PNG and close it."""
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=DPI)
    plt.close(fig)


def _panels(count: int, height: float, legend: float = 0.0) -> tuple[Any, list[Any]]:
    """``count`` panels, two to a row, ``height`` inches each, and ``legend`` inches below them."""
    columns = 1 if count == 1 else 2
    rows = math.ceil(count / columns)
    fig, axes = figure(rows, columns, height * rows + legend)
    flat_axes = list(axes.flat)
    for ax in flat_axes[count:]:
        ax.set_visible(False)
    return fig, flat_axes[:count]


def _legend_below(fig: Any, handles: list[Any], labels: list[str], columns: int) -> None:
    """A legend under the panels, and the panels laid out above it."""
    fig.legend(handles, labels, loc="lower center", ncol=columns, fontsize=9, frameon=False)
    rows = math.ceil(len(labels) / columns)
    fig.tight_layout(rect=(0, (0.3 * rows + 0.1) / fig.get_figheight(), 1, 1))


def draw_rates(series: dict[tuple[str, str], dict[str, Rates]], path: Path) -> None:
    """Dot plot: under a heading per protocol and problem, one line per adversary, yes above no; accept
    and honest-win panels; where a line has no accept rate, the reason in words in its place."""
    slots: list[tuple[str, tuple[str, str] | None]] = []  # (tick label, key; None for a heading)
    for key in series:
        if not any(label == key[0] and heading is None for label, heading in slots):
            slots.append((key[0], None))
        slots.append((key[1], key))
    fig, axes = figure(1, 2, 1.7 + 0.17 * len(slots))
    offsets = {"yes": -0.17, "no": 0.17}
    for ax, metric in zip(axes[0], ("accept", "honest-win"), strict=True):
        for y, (_, key) in enumerate(slots):
            if key is None:
                ax.axhline(y, color="grey", linewidth=0.6, alpha=0.5)
                continue
            for truth, rates in series[key].items():
                rate = rates.accept if metric == "accept" else rates.honest_win
                at = y + offsets.get(truth, 0)
                if rate is None:
                    continue
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
    for reason, first, last in _unrated(slots, series):
        axes[0][0].text(0.5, (first + last) / 2, textwrap.fill(reason, 38), ha="center", va="center", fontsize=8,
                        color="dimgrey", bbox={"facecolor": "white", "edgecolor": "lightgrey"})  # fmt: skip
    axes[0][0].set_yticklabels([label for label, _ in slots], fontsize=7)
    for tick, (_, key) in zip(axes[0][0].get_yticklabels(), slots, strict=True):
        if key is None:
            tick.set_fontweight("bold")
    axes[0][1].set_yticklabels([])
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", color=c, linestyle="") for c in TRUTH_COLOURS.values()]
    handles.append(Line2D([], [], **BOUND_STYLE))
    labels = ["truth yes (95% Wilson)", "truth no (95% Wilson)", "theorem: accept >= c (yes), <= s (no)"]
    _legend_below(fig, handles, labels, 3)
    save(fig, path)


def _unrated(slots: list[tuple[str, tuple[str, str] | None]], series: dict[tuple[str, str], dict[str, Rates]]
             ) -> list[tuple[str, int, int]]:  # fmt: skip
    """The runs of consecutive lines with no accept rate, each with its reason: (reason, first, last line)."""
    spans: list[tuple[str, int, int]] = []
    for y, (_, key) in enumerate(slots):
        reasons = {rates.no_accept for rates in series[key].values() if rates.accept is None} if key else set()
        if len(reasons) != 1:
            continue
        (reason,) = reasons
        if spans and spans[-1][0] == reason and spans[-1][2] >= y - 2:
            spans[-1] = (reason, spans[-1][1], y)
        else:
            spans.append((reason, y, y))
    return spans


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
    save(fig, path)


def _log_ticks(ax: Any, xs: list[float], base: float = 10) -> None:
    """A log x axis ticked at the values drawn, written out in full, each label clear of the one
    before it (a label's width estimated from its characters at the axis' width); one value alone
    is ticked on a plain axis."""
    from matplotlib.ticker import NullFormatter

    low, high = min(xs), max(xs)
    if low == high:
        ax.set_xticks([low], [f"{low:g}"])
        ax.set_xlim(low * 0.5, low * 1.5)
        return
    ax.set_xscale("log", base=base)
    span = math.log(high / low) * 1.16  # the limits below add 8% each side
    width_px = ax.get_position().width * ax.figure.get_figwidth() * ax.figure.dpi
    size_px = TICK_FONT_PX * 0.62  # a digit's width
    ticks = [low]
    for x in xs:
        gap = ((len(f"{ticks[-1]:g}") + len(f"{x:g}")) / 2 + 1) * size_px
        if math.log(x / ticks[-1]) / span * width_px >= gap:
            ticks.append(x)
    ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(low / (high / low) ** 0.08, high * (high / low) ** 0.08)


def _draw_queries(series: dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]], path: Path,
                  xlabel: str, log_x: bool) -> None:  # fmt: skip
    """One panel per protocol and problem, a line per role with its bound dashed (across the panel where
    there is one x); the y axis symmetric log where queries span decades, else whole numbers."""
    from matplotlib.ticker import MaxNLocator

    fig, axes = _panels(len(series), 3.3, legend=1.0)
    for ax, (key, roles) in zip(axes, series.items(), strict=True):
        values = []
        for k, (role, points) in enumerate(roles.items()):
            colour, (marker, size) = f"C{k}", ROLE_MARKERS[k]
            xs = [x for x, _, _ in points]
            ax.plot(xs, [q for _, q, _ in points], marker=marker, markersize=size, fillstyle="none", color=colour,
                    label=f"{role}, measured", zorder=3)  # fmt: skip
            bounded = [(x, b) for x, _, b in points if b is not None]
            values += [q for _, q, _ in points] + [b for _, b in bounded]
            style = BOUND_STYLE | {"color": colour}
            if len(bounded) == 1 and len(xs) == 1:
                ax.axhline(bounded[0][1], label=f"{role}, theorem's bound", **style)
            elif bounded:
                ax.plot(*zip(*bounded, strict=True), marker="x", label=f"{role}, theorem's bound", **style)
        stochastic = key[0].split()[0] == "stochastic"
        title = " on ".join(key) + ("\nverifier's bound: O(K²) samples, flat in T" if stochastic else "")
        ax.set_title(title, fontsize=10)
        xs = sorted({x for points in roles.values() for x, _, _ in points})
        if log_x:
            _log_ticks(ax, xs)
        top = max([*values, 1])
        if _symlog(ax, values, "y"):
            ax.set_ylim(0, top * 4)
        else:
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylim(-0.08 * top, top * 1.08)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("oracle queries per debate")
    named = {label: handle for ax in axes for handle, label in zip(*ax.get_legend_handles_labels(), strict=True)}
    _legend_below(fig, list(named.values()), list(named), 2)
    save(fig, path)


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
    save(fig, path)


CONSTANTS_NAMES = {
    Constants.lean.value: "Lean's constants (Hoeffding)",
    Constants.paper.value: "the paper's constants (Figure 2)",
}


def draw_frontier(series: list[Frontier], path: Path) -> None:
    fig, axes = _panels(len(series), 3.8)
    for ax, f in zip(axes, series, strict=True):
        for k, proof in enumerate(Proof):
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
    save(fig, path)


def _unit(r: Run | Row) -> float:
    return r.reward_unit or 1.0


def draw_payoffs(series: dict[str, list[Row]], path: Path) -> None:
    """One panel per protocol, a line per row of the table: A's mean payoff with its 95% interval (and
    each debate's, when kept), in units of r^(d+1) for prover-estimator debate; the theorem's bound
    dashed only where it promises one, "no promise" in the line's label elsewhere."""
    heights = [1.1 + 0.26 * len(rows) for rows in series.values()]  # title and axis, then a line per row
    fig, axes = figure(len(series), 1, 0.7 + sum(heights), heights)
    for ax, (protocol, rows) in zip(axes[:, 0], series.items(), strict=True):
        drawn = []
        for y, r in enumerate(rows):
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
            if r.payoff_bound is not None:
                ax.plot([r.payoff_bound / unit] * 2, [y - 0.35, y + 0.35], **BOUND_STYLE)
                drawn.append(r.payoff_bound / unit)
        ax.set_yticks(range(len(rows)))
        promised = ("" if r.payoff_bound is not None else ": no promise" for r in rows)
        ax.set_yticklabels([f"{r.alice} vs {r.bob} ({r.problem}, truth {r.truth}){said}" for r, said
                            in zip(rows, promised, strict=True)], fontsize=8)  # fmt: skip
        ax.set_ylim(len(rows) - 0.5, -0.5)
        scale = "; symmetric log scale" if _symlog(ax, drawn) else ""
        unit_name = "r^(d+1)" if any(r.reward_unit for r in rows) else "reward"
        ax.set_xlabel(f"A's payoff per debate\n(units of {unit_name}{scale})")
        ax.set_title(protocol, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="o", color=c, linestyle="") for c in TRUTH_COLOURS.values()]
    handles += [Line2D([], [], **BOUND_STYLE)]
    labels = ["truth yes: mean (95% CI)", "truth no: mean (95% CI)", "theorem's bound (where it promises one)"]
    if any(r.payoffs for rows in series.values() for r in rows):
        handles.append(Line2D([], [], marker="|", color="grey", linestyle=""))
        labels.append("each debate")
    _legend_below(fig, handles, labels, 2)
    save(fig, path)


def draw_rewards(series: list[Run], path: Path) -> None:
    fig, axes = figure(1, 1, 4.2)
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
    save(fig, path)


def draw_exact(series: list[tuple[Exact, Row]], path: Path) -> None:
    """One line per instance: the exact value against the best adversary above the Monte Carlo
    honest-win rate against the strongest built-in adversary (95% Wilson), the guarantee dashed; where
    every value is 1, the reason there is no spread, written above the lines."""
    note = exact_note(series)
    fig, axes = figure(1, 1, 1.5 + 0.45 * len(series) + (0.6 if note else 0))
    ax = axes[0][0]
    lows = []
    for y, (e, r) in enumerate(series):
        rate, low, high = r.honest_win.rate, r.honest_win.low, r.honest_win.high
        lows += [low, e.value, e.guarantee]
        ax.plot(e.value, y - 0.15, "D", color="black", markersize=6, zorder=4)
        ax.errorbar(rate, y + 0.15, xerr=[[rate - low], [high - rate]], fmt="o", markersize=5, capsize=2,
                    color="tab:blue", zorder=3)  # fmt: skip
        ax.annotate(f"{r.adversary}, {r.trials} debates", (low, y + 0.15), xytext=(-5, 0), textcoords="offset points",
                    ha="right", va="center", fontsize=7, color="tab:blue")  # fmt: skip
        ax.plot([e.guarantee] * 2, [y - 0.4, y + 0.4], **BOUND_STYLE)
    ax.set_yticks(range(len(series)))
    ax.set_yticklabels([f"{e.protocol}, {e.problem}, n={e.size}, truth {e.truth}" for e, _ in series], fontsize=8)
    ax.set_ylim(len(series) - 0.5, -0.5)
    ax.set_xlim(max(0.0, min(lows) - 0.25), 1.02)
    ax.set_xlabel("P[honest side wins] (probability)")
    ax.grid(axis="x", alpha=0.3)
    if note:
        fig.suptitle(textwrap.fill(note, 135), x=0.01, ha="left", fontsize=8)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker="D", color="black", linestyle=""),
               Line2D([], [], marker="o", color="tab:blue", linestyle=""), Line2D([], [], **BOUND_STYLE)]  # fmt: skip
    labels = ["exact, best adversary", "Monte Carlo, strongest built-in adversary (named)", "theorem's guarantee"]
    _legend_below(fig, handles, labels, 2)
    save(fig, path)


def draw_reliability(model: Calibration, chance: Calibration, label: str, path: Path) -> None:
    """The reliability diagram of a model of the judge: each non-empty bin's mean prediction against
    the mean truth, sized by its count, on the diagonal of perfect calibration; the scores and the
    always-0.5 baseline's in the title."""
    fig, axes = figure(1, 1, 6.0)
    ax = axes[0][0]
    ax.plot([0, 1], [0, 1], **BOUND_STYLE, label="perfect calibration")
    most = max(b.n for b in model.bins)
    ax.scatter([b.predicted for b in model.bins], [b.observed for b in model.bins],
               s=[40 + 400 * b.n / most for b in model.bins], color="tab:blue", zorder=7, label=label)  # fmt: skip
    for b in model.bins:
        ax.annotate(str(b.n), (b.predicted, b.observed), textcoords="offset points", xytext=(8, -4), fontsize=8)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("the model's P[yes] (bin mean)")
    ax.set_ylabel("ground-truth P[yes] (bin mean)")
    ax.set_title(f"Brier {model.brier:.3f} (always 0.5: {chance.brier:.3f}), ECE {model.ece:.3f}, "
                 f"log-loss {model.log_loss:.3f}, n = {model.n}", fontsize=10)  # fmt: skip
    ax.legend(loc="upper left")
    fig.tight_layout()
    save(fig, path)


def draw_accuracy(series: list[Accuracy], path: Path) -> None:
    """The judge's accuracy per arm as bars with their Wilson intervals, n under each arm's name, one
    panel per experiment (``experiment judge-accuracy --plot``, and the report's ``accuracy.png``)."""
    fig, axes = figure(len(series), 1, 4.5 * len(series))
    for ax, experiment in zip(axes[:, 0], series, strict=True):
        arms = [arm for arm in experiment.arms if arm.n and arm.accuracy is not None]
        at = range(len(arms))
        accuracy = [arm.accuracy for arm in arms]
        ax.bar(at, accuracy, color="tab:blue", zorder=3)
        low = [a - arm.ci[0] for a, arm in zip(accuracy, arms, strict=True)]
        high = [arm.ci[1] - a for a, arm in zip(accuracy, arms, strict=True)]
        ax.errorbar(at, accuracy, yerr=[low, high], fmt="none", color="black", capsize=6, zorder=4)
        ax.set_xticks(list(at), [f"{arm.name}\nn = {arm.n}" for arm in arms])
        ax.axhline(0.5, **BOUND_STYLE, label="chance")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("judge accuracy (95% Wilson interval)")
        title = f"judge {experiment.judge}, debaters {experiment.debaters} on {experiment.dataset}"
        ax.set_title(title + (f" ({experiment.source})" if experiment.source else ""), fontsize=10)
        ax.legend(loc="lower right")
    fig.tight_layout()
    save(fig, path)

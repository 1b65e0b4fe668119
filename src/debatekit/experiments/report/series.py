"""What each plot draws, exactly (tests compare it with the rows read): the report's table (:func:`table`:
one :class:`Row` per protocol, problem, size, truth, players, oracles, constants and parameters, its
seeds pooled with Wilson 95% intervals (:func:`debatekit.analysis.stats.wilson`) and checked against
the theorem's promise), and each plot's points, taken from that table."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from debatekit.analysis.stats import accept_promise, reaches, wilson
from debatekit.experiments.report.rows import Accuracy, BitsPoint, Exact, Frontier, Report, Run, adversary


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
    yes = truth == "yes"
    if any((r.alice if yes else r.bob) != "honest" for r in runs):
        return None
    values = [bound for r in runs if (bound := accept_promise(yes, r.completeness, r.soundness)) is not None]
    return (min if yes else max)(values) if values else None


def labels(runs: Iterable[Run]) -> dict[Run, str]:
    """Each run's protocol label (with its constants), followed by what tells it apart from the other
    runs of that protocol: the oracles and the ``-P`` parameters that differ among them (nothing where
    all agree)."""
    by_protocol: dict[str, list[Run]] = defaultdict(list)
    for r in runs:
        by_protocol[r.label].append(r)
    out = {}
    for label, group in by_protocol.items():
        oracles = {r.oracle for r in group}
        names = sorted({name for r in group for name, _ in r.params})
        varying = [name for name in names if len({dict(r.params).get(name) for r in group}) > 1]
        for r in group:
            parts = [f"oracle {r.oracle or 'not recorded'}"] if len(oracles) > 1 else []
            parts += [f"{name}={dict(r.params).get(name, 'default')}" for name in varying]
            out[r] = f"{label} [{', '.join(parts)}]" if parts else label
    return out


@dataclass(frozen=True)
class Row:
    """One row of the report's table: the runs alike in all but seed and source, pooled (a run that
    repeats a seed already pooled is the same debates, counted once)."""

    label: str
    """The protocol, its constants, and what tells the row apart from its protocol's others (:func:`labels`)."""
    protocol: str
    problem: str
    size: int | None
    T: int | None
    truth: str
    alice: str
    bob: str
    oracle: str | None
    params: tuple[tuple[str, str], ...]
    seeds: tuple[int, ...]
    runs: int
    trials: int
    accept: Rate | None
    honest_win: Rate
    accept_promise: float | None
    """The accept rate the theorem promises (at least c on yes, at most s on no), or None."""
    verifier_queries_max: int | None
    queries_bound: int | None
    alice_queries_mean: float | None
    bob_queries_mean: float | None
    alice_queries_bound: int | None
    bob_queries_bound: int | None
    bits_read_max: int | None
    bits_bound: int | None
    completeness: float | None
    soundness: float | None
    K: float | None
    payoff_mean: float | None
    payoff_ci: tuple[float, float] | None
    payoff_bound: float | None
    """The theorem's bound on A's payoff where it promises one (None where it promises nothing)."""
    payoff_bound_kind: str | None
    reward_unit: float | None
    payoffs: tuple[float, ...]
    holds: bool | None
    """Whether every promise that applies holds (None: no promise applies)."""
    promise: str
    """What was checked, or why there is no promise."""
    no_accept: str
    """Why there is no accept rate (empty where there is one)."""

    @property
    def adversary(self) -> str:
        return adversary(self.alice, self.bob)

    @property
    def honest_win_rate(self) -> float:
        return self.honest_win.rate

    @property
    def verdict(self) -> str:
        """The table's holds cell: yes, NO or no promise."""
        return "no promise" if self.holds is None else ("yes" if self.holds else "NO")


def _key(r: Run, label: str) -> tuple:
    """What a row is one of; the table's order: protocol, problem, truth (yes first), players, size."""
    return (label, r.problem, r.truth != "yes", r.truth, r.adversary, r.size or 0, r.oracle or "", r.params)


def table(report: Report) -> list[Row]:
    """The report's table: one :class:`Row` per protocol (with constants), problem, size, truth,
    players, oracles and parameters, ordered by protocol, problem, truth (yes first), players and
    size; seeds pooled."""
    named = labels(report.runs)
    groups: dict[tuple, list[Run]] = defaultdict(list)
    for r in report.runs:
        groups[_key(r, named[r])].append(r)
    rows = []
    for key in sorted(groups):
        runs, seen = [], set()
        for r in sorted(groups[key], key=lambda r: -r.trials):
            if r.seed is None or r.seed not in seen:
                runs.append(r)
                seen.add(r.seed)
        rows.append(_row(key[0], runs))
    return rows


def _least(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None


def _most(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return max(known) if known else None


def _row(label: str, runs: list[Run]) -> Row:
    first = runs[0]
    rated = all(r.accept_rate is not None for r in runs)
    promise = _promise(runs, first.truth) if rated else None
    accept = _pool(runs, lambda r: r.accept_rate, promise) if rated else None
    mean, ci = _pooled_payoff(runs)
    promised = mean is not None and all(r.payoff_bound_promised is not False and r.payoff_bound is not None
                                        for r in runs)  # fmt: skip
    kind = first.payoff_bound_kind
    bound = (_least if kind == "completeness" else _most)(r.payoff_bound for r in runs) if promised else None
    row = dict(
        label=label, protocol=first.protocol, problem=first.problem, size=first.size, T=first.T, truth=first.truth,
        alice=first.alice, bob=first.bob, oracle=first.oracle, params=first.params,
        seeds=tuple(sorted(r.seed for r in runs if r.seed is not None)), runs=len(runs),
        trials=sum(r.trials for r in runs), accept=accept, honest_win=_pool(runs, lambda r: r.honest_win_rate),
        accept_promise=promise,
        verifier_queries_max=_most(r.verifier_queries_max for r in runs),
        queries_bound=_least(r.queries_bound for r in runs),
        alice_queries_mean=_mean(runs, lambda r: r.alice_queries_mean),
        bob_queries_mean=_mean(runs, lambda r: r.bob_queries_mean),
        alice_queries_bound=_least(r.alice_queries_bound for r in runs),
        bob_queries_bound=_least(r.bob_queries_bound for r in runs),
        bits_read_max=_most(r.verifier_bits_read_max for r in runs), bits_bound=_least(r.bits_bound for r in runs),
        completeness=_least(r.completeness for r in runs), soundness=_most(r.soundness for r in runs), K=first.K,
        payoff_mean=mean, payoff_ci=ci, payoff_bound=bound, payoff_bound_kind=kind, reward_unit=first.reward_unit,
        payoffs=tuple(p for r in runs for p in r.payoffs),
        no_accept="" if accept is not None else _no_accept(runs),
    )  # fmt: skip
    holds, said = _holds(row, runs)
    return Row(**row, holds=holds, promise=said)


def _mean(runs: list[Run], value: Callable[[Run], float | None]) -> float | None:
    """The mean over every pooled debate of a per-run mean (None unless every run says)."""
    values = [(v, r.trials) for r in runs if (v := value(r)) is not None]
    if len(values) < len(runs):
        return None
    return sum(v * n for v, n in values) / sum(n for _, n in values)


def _pooled_payoff(runs: list[Run]) -> tuple[float | None, tuple[float, float] | None]:
    """A's mean payoff over every pooled debate and its normal 95% interval: each run's standard
    error read back from its interval's half-width, weighted by its share of the debates."""
    if any(r.payoff_mean is None or r.payoff_ci is None for r in runs):
        return None, None
    if len(runs) == 1:
        return runs[0].payoff_mean, runs[0].payoff_ci
    total = sum(r.trials for r in runs)
    mean = sum(r.payoff_mean * r.trials for r in runs) / total  # type: ignore[operator]
    half = math.sqrt(sum((r.trials / total * (r.payoff_ci[1] - r.payoff_ci[0]) / 2) ** 2 for r in runs))  # type: ignore[index]
    return mean, (mean - half, mean + half)


def _no_accept(runs: list[Run]) -> str:
    """Why a row has no accept rate."""
    if all(r.payoff_mean is not None for r in runs):
        return f"no accept rate: {runs[0].protocol} is scored by A's payoff (see payoffs.png)"
    return "no accept rate recorded"


def _holds(row: dict, runs: list[Run]) -> tuple[bool | None, str]:
    """Whether the promises that apply hold, and what they are (or why none applies): the accept
    rate's (its Wilson interval reaches c on yes, s on no), the payoff's (the source's own test, else
    its 95% interval reaches the bound), and the verifier's query and bit budgets."""
    checks: list[tuple[str, bool]] = []
    why = []
    accept, promise, truth = row["accept"], row["accept_promise"], row["truth"]
    if promise is not None:
        said = f"accept >= c = {promise:.3g}" if truth == "yes" else f"accept <= s = {promise:.3g}"
        checks.append((said, reaches(truth == "yes", promise, (accept.low, accept.high))))
    elif accept is not None:
        side = "alice" if truth == "yes" else "bob"
        dishonest = any(getattr(r, side) != "honest" for r in runs)
        why.append(f"the theorem promises nothing to a dishonest {side}" if dishonest else "vacuous guarantee")
    if row["payoff_bound"] is not None:
        bound, (low, high) = row["payoff_bound"], row["payoff_ci"]
        judged = runs[0].payoff_holds if len(runs) == 1 else None
        at_least = row["payoff_bound_kind"] == "completeness"
        ok = judged if judged is not None else (high >= bound if at_least else low <= bound)
        checks.append((f"A's payoff {'>=' if at_least else '<='} {bound:.3g}", ok))
    elif row["payoff_mean"] is not None:
        why.append(next((r.payoff_note for r in runs if r.payoff_note), "no payoff bound"))
    promised = bool(checks)
    for name, measured, bound in (("verifier queries", "verifier_queries_max", "queries_bound"),
                                  ("bits read", "bits_read_max", "bits_bound")):  # fmt: skip
        if row[measured] is not None and row[bound] is not None:
            checks.append((f"{name} <= {row[bound]}", row[measured] <= row[bound]))
    failed = [name for name, ok in checks if not ok]
    if failed:
        return False, "fails: " + "; ".join(failed)
    if not promised:
        return None, "no promise: " + ("; ".join(why) or "none recorded")
    return True, "; ".join(name for name, _ in checks)


@dataclass(frozen=True)
class Pooled:
    """A dataset's items pooled (:mod:`debatekit.runs.dataset`): the table's rows of one protocol,
    players, oracles and parameters on the items ``DATASET#ID`` of one dataset, as the accept rate on
    its yes items and on its no items, and the rate at which the verdict is the truth."""

    label: str
    dataset: str
    alice: str
    bob: str
    oracle: str | None
    params: tuple[tuple[str, str], ...]
    items: int
    holds: tuple[int, int]
    """The items' rows whose promise holds, of those with one."""
    accept_yes: Rate | None
    accept_no: Rate | None
    correct: Rate


def datasets(rows: Iterable[Row]) -> list[Pooled]:
    """The table's ``rows`` (:func:`table`) on datasets' items, pooled by dataset (and all that tells
    rows apart but the item)."""
    from debatekit.problems.dataset import item_of

    groups: dict[tuple, list[Row]] = defaultdict(list)
    for row in rows:
        found = item_of(row.problem)
        if found is not None and row.accept is not None:
            groups[(row.label, found[0], row.alice, row.bob, row.oracle, row.params)].append(row)
    out = []
    for key, rows in groups.items():
        yes, no = (_sum(on, lambda row: row.accept) if (on := [row for row in rows if row.truth == truth]) else None
                   for truth in ("yes", "no"))  # fmt: skip
        right = (yes.successes if yes else 0) + (no.trials - no.successes if no else 0)
        n = (yes.trials if yes else 0) + (no.trials if no else 0)
        judged = [row.holds for row in rows if row.holds is not None]
        out.append(Pooled(*key, len({row.problem for row in rows}), (sum(judged), len(judged)), yes, no,
                          Rate(right, n, *wilson(right, n))))  # fmt: skip
    return out


@dataclass(frozen=True)
class Rates:
    """One line of ``rates.png``: its rows' accept and honest-win rates pooled (the weakest promise),
    or why there is no accept rate."""

    accept: Rate | None
    honest_win: Rate
    no_accept: str = ""


def rates_series(report: Report) -> dict[tuple[str, str], dict[str, Rates]]:
    """(protocol label on problem, adversary) → truth → the table's rows pooled over size, in the table's order."""
    groups: dict[tuple[str, str], dict[str, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for row in table(report):
        groups[(f"{row.label} on {row.problem}", row.adversary)][row.truth].append(row)
    out: dict[tuple[str, str], dict[str, Rates]] = {}
    for key, by_truth in groups.items():
        out[key] = {}
        for truth, rows in sorted(by_truth.items(), key=lambda item: item[0] != "yes"):
            out[key][truth] = Rates(_sum(rows, lambda row: row.accept), _sum(rows, lambda row: row.honest_win),
                                    next((row.no_accept for row in rows if row.no_accept), ""))  # fmt: skip
    return out


def _sum(rows: list[Row], rate: Callable[[Row], Rate | None]) -> Rate | None:
    """The rows' rates summed (None unless every row has one), with the weakest promise among them."""
    rates = [rate(row) for row in rows]
    if any(r is None for r in rates):
        return None
    successes, trials = sum(r.successes for r in rates), sum(r.trials for r in rates)  # type: ignore[union-attr]
    promises = [r.promise for r in rates if r.promise is not None]  # type: ignore[union-attr]
    weakest = None if len(promises) < len(rates) else (min if rows[0].truth == "yes" else max)(promises)
    return Rate(successes, trials, *wilson(successes, trials), weakest)


def accept_series(report: Report) -> dict[tuple[str, str, str], dict[str, dict[int, Rate]]]:
    """(protocol label, problem, truth) → adversary → T → the table's accept rate, for groups with several T."""
    groups: dict[tuple[str, str, str], dict[str, dict[int, list[Row]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for row in table(report):
        if row.accept is not None and row.T is not None:
            groups[(row.label, row.problem, row.truth)][row.adversary][row.T].append(row)
    out = {}
    for key, by_adversary in groups.items():
        if len({T for by_T in by_adversary.values() for T in by_T}) < 2:
            continue
        out[key] = {adversary: {T: _sum(by_T[T], lambda row: row.accept) for T in sorted(by_T)}
                    for adversary, by_T in by_adversary.items()}  # fmt: skip
    return out  # type: ignore[return-value]


QUERY_ROLES = (  # role, measured, bound
    ("verifier (max)", lambda row: row.verifier_queries_max, lambda row: row.queries_bound),
    ("alice (mean)", lambda row: row.alice_queries_mean, lambda row: row.alice_queries_bound),
    ("bob (mean)", lambda row: row.bob_queries_mean, lambda row: row.bob_queries_bound),
)


def _queries_series(
    report: Report, axis: Callable[[Row], float | None]
) -> dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]]:
    """(protocol label, problem) → role → [(x, most queries measured at x, least bound at x)] from the
    table's rows; groups whose queries matter (a bound above 1: stochastic debate's O(K²) samples) first,
    even at one x, then the others drawn at several x."""
    groups: dict[tuple[str, ...], dict[float, list[Row]]] = defaultdict(lambda: defaultdict(list))
    for row in table(report):
        if (x := axis(row)) is not None and row.verifier_queries_max is not None:
            groups[(row.label, row.problem)][x].append(row)
    out = {}
    for key, by_x in groups.items():
        roles = {}
        for role, measured, bound in QUERY_ROLES:
            points = []
            for x in sorted(by_x):
                values = [v for row in by_x[x] if (v := measured(row)) is not None]
                bounds = [b for row in by_x[x] if (b := bound(row)) is not None]
                if values:
                    points.append((x, max(values), min(bounds) if bounds else None))
            if points:
                roles[role] = points
        if len(by_x) > 1 or _matter(roles):
            out[key] = roles
    return dict(sorted(out.items(), key=lambda item: -_most(b for points in item[1].values() for _, _, b in points)
                       if _matter(item[1]) else 0))  # fmt: skip


def _matter(roles: dict[str, list[tuple[float, float, float | None]]]) -> bool:
    """Whether queries matter to a group: a bound above 1."""
    return any((b or 0) > 1 for points in roles.values() for _, _, b in points)


def queries_T_series(report: Report) -> dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]]:
    """(protocol, problem) → role → [(T, queries, bound)], stochastic debate's first."""
    return _queries_series(report, lambda row: row.T)


def queries_K_series(report: Report) -> dict[tuple[str, ...], dict[str, list[tuple[float, float, float | None]]]]:
    """(protocol, problem) → role → [(K, queries, bound)], for problems whose K varies (with size)."""
    return {key: roles for key, roles in _queries_series(report, lambda row: row.K).items()
            if len({x for points in roles.values() for x, _, _ in points}) > 1}  # fmt: skip


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


def payoff_series(report: Report) -> dict[str, list[Row]]:
    """protocol → the table's rows with payoffs (A's mean payoff, interval, the bound where promised;
    per-debate payoffs when kept)."""
    out: dict[str, list[Row]] = defaultdict(list)
    for row in table(report):
        if row.payoff_mean is not None and row.payoff_ci is not None:
            out[row.protocol].append(row)
    return dict(sorted(out.items()))


def rewards_series(report: Report) -> list[Run]:
    """The runs with per-round mean rewards."""
    return [r for r in report.runs if r.rewards]


def exact_series(report: Report) -> list[tuple[Exact, Row]]:
    """Each exact value (against the best adversary) beside the table's row, of the same protocol,
    problem, size and truth (and seed, when both say), whose adversary did best against the honest side."""
    rows = table(report)
    out = []
    for e in sorted(report.exact, key=lambda e: (e.protocol, e.problem, e.size, e.truth != "yes")):
        found = [row for row in rows if (row.protocol, row.problem, row.size, row.truth) == (e.protocol, e.problem,
                 e.size, e.truth) and (e.seed is None or not row.seeds or e.seed in row.seeds)]  # fmt: skip
        if found:
            out.append((e, min(found, key=lambda row: (row.honest_win_rate, row.adversary))))
    return out


def exact_note(series: list[tuple[Exact, Row]]) -> str:
    """What a plot of exact values whose every point sits at its guarantee of 1 says instead of a spread."""
    if not series or any(e.value != 1 or e.guarantee != 1 for e, _ in series):
        return ""
    return (f"Every one of the {len(series)} exact values is 1, as the guarantee (1) says: these protocols are "
            "deterministic with perfect completeness and soundness, so no adversary ever wins and there is no gap "
            "between exact and Monte Carlo to show; each interval says how many debates back the same.")  # fmt: skip


def accuracy_series(report: Report) -> list[Accuracy]:
    """The judge-accuracy experiments with an arm that decided a debate (or judged an item), as read."""
    return [experiment for experiment in report.accuracies if any(arm.n for arm in experiment.arms)]


def accuracy_note(series: list[Accuracy]) -> str:
    """The accuracy plot's caption: the seeds and trials behind its bars."""
    if not series:
        return ""
    seeds = sorted({e.seed for e in series if e.seed is not None})
    trials = sorted({e.trials for e in series})
    return (f"{len(series)} experiment{'' if len(series) == 1 else 's'}; seed{'' if len(seeds) == 1 else 's'} "
            f"{', '.join(map(str, seeds)) or 'not recorded'}; {', '.join(map(str, trials))} debates per item and "
            "protocol, consultancy half of them (rounded up) on each side; n decided debates (direct: items "
            "judged) under each arm.")  # fmt: skip

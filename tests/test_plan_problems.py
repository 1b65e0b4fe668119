"""Natural-language problems (issue 11, item 2): plan files, their validation, and the built-in
plans (the caffeine meta-analysis of the doubly-efficient debate paper's Section 6, a code
review, and a claim tree for the recursive protocols).

Ground truth is checked against computations written here, independently of the module's
backward induction: the one transcript of a deterministic plan, the sum over all 2^n answers of
a stochastic plan's questions, :func:`~debatekit.analysis.lipschitz.enumerate_bounds`'s 2^T
prefixes for K. Debates run through the command line and must keep the promise their JSON
guarantee states (Theorem 5.3: the honest side always wins; Theorem 6.2: the accept rate's
Wilson interval reaches the promised completeness, or soundness; Lemma A.5: honest A's mean
payoff is at least (1 - ε) r^(d+1))."""

from __future__ import annotations

import itertools
import json
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from debatekit.analysis.lipschitz import enumerate_bounds
from debatekit.analysis.montecarlo import Oracles, make_instance, run
from debatekit.cli.main import main
from debatekit.ledger import Role
from debatekit.machine.decomposition import LeafOracle
from debatekit.machine.transcript import StepKind
from debatekit.oracle import KnownOracle, Question
from debatekit.problems import PROBLEMS, InstanceError
from debatekit.problems.plan import Ask, ClaimTree, Plan
from debatekit.problems.plan_file import BUILTIN, PLANS, PlanError, load, plan_problem, register_plan
from debatekit.protocols.registry import PROTOCOLS, protocols_of
from debatekit.protocols.stochastic.params import Constants
from debatekit.protocols.stochastic.spec import StochasticParams

PLAN_FILES = {file.name.rpartition(".")[0]: file for file in PLANS.iterdir() if file.name.endswith(".toml")}
CASES = [(name, truth) for name in BUILTIN for truth in (True, False)]


def plans(name: str) -> dict[bool, Plan]:
    return {plan.truth: plan for plan in load(PLAN_FILES[name])}


def minimal() -> dict[str, Any]:
    """A valid plan: two questions, the second reading the first, and their AND."""
    return {
        "title": "Do A and B hold?",
        "answer": "both",
        "truth": "yes",
        "steps": [
            {"id": "a", "kind": "question", "claim": "A holds", "text": "Does A hold?", "p_yes": 1.0},
            {"id": "b", "kind": "question", "claim": "B holds", "text": "Does B hold?", "p_yes": 1, "reads": ["a"]},
            {"id": "both", "kind": "and", "claim": "A and B hold", "reads": ["a", "b"]},
        ],
    }


def write(tmp_path: Path, data: Any, name: str = "mine.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_the_builtin_plans_are_registered_with_their_protocols() -> None:
    assert set(BUILTIN) == {"caffeine", "code-review", "bike-lanes"} == set(PLAN_FILES)
    assert protocols_of(PROBLEMS["caffeine"]) == ("cross-exam", "stochastic", "prover-estimator", "naive-recursive")
    assert protocols_of(PROBLEMS["bike-lanes"]) == ("cross-exam", "stochastic", "prover-estimator", "naive-recursive")
    assert protocols_of(PROBLEMS["code-review"]) == ("stochastic",)  # its judge is not deterministic
    for name in BUILTIN:
        size = len(plans(name)[True].steps)
        assert (PROBLEMS[name].min_size, PROBLEMS[name].default_size, PROBLEMS[name].max_size) == (size,) * 3


def test_a_minimal_plan_loads(tmp_path: Path) -> None:
    (plan,) = load(write(tmp_path, minimal()))
    assert (plan.name, plan.truth, plan.probability, plan.deterministic) == ("mine", True, 1.0, True)
    assert [s.reads for s in plan.steps] == [(), (0,), (0, 1)]
    assert plan.machine().rule(1, (1,)) == Question("Does B hold?", ("Step 1 (A holds): yes",))


def test_json_and_toml_plans_are_the_same_plan(tmp_path: Path) -> None:
    """The caffeine file, converted to JSON key for key, loads as the same two instances."""
    data = tomllib.loads(PLAN_FILES["caffeine"].read_text())
    from_json = load(write(tmp_path, data, "caffeine.json"))
    assert [p.steps for p in from_json] == [p.steps for p in load(PLAN_FILES["caffeine"])]
    assert [(p.name, p.truth, p.probability) for p in from_json] == [("caffeine", True, 1.0), ("caffeine", False, 0.0)]


def _set(path: tuple, value: Any):
    def change(data: dict) -> None:
        *parents, last = path
        for key in parents:
            data = data[key]
        data[last] = value

    return change


def _drop(*path: Any):
    def change(data: dict) -> None:
        *parents, last = path
        for key in parents:
            data = data[key]
        del data[last]

    return change


MISTAKES = [
    ("unknown kind", _set(("steps", 2, "kind"), "xor"), "step 3 ('both'): unknown kind 'xor'; the kinds are"),
    ("no kind", _drop("steps", 2, "kind"), "step 3 ('both'): unknown kind None"),
    ("missing step", _set(("steps", 1, "reads"), ["c"]), "step 2 ('b'): reads 'c', which is no step of the plan"),
    (
        "later step",
        lambda d: (_set(("steps", 1, "reads"), [])(d), _set(("steps", 0, "reads"), ["b"])(d)),
        "step 1 ('a'): reads 'b', a later step (step 2): read only earlier steps",
    ),
    ("cycle", _set(("steps", 0, "reads"), ["b"]), "step 1 ('a'): its reads form a cycle: 'a' -> 'b' -> 'a'"),
    ("self", _set(("steps", 2, "reads"), ["a", "both"]), "step 3 ('both'): its reads form a cycle: 'both' -> 'both'"),
    ("reads twice", _set(("steps", 2, "reads"), ["a", "a"]), "step 3 ('both'): reads a step twice"),
    ("p_yes > 1", _set(("steps", 0, "p_yes"), 1.5), "step 1 ('a'): p_yes must be a probability in [0, 1], got 1.5"),
    ("p_yes < 0", _set(("steps", 0, "p_yes"), -0.2), "step 1 ('a'): p_yes must be a probability in [0, 1], got -0.2"),
    ("p_yes bool", _set(("steps", 0, "p_yes"), True), "step 1 ('a'): p_yes must be a probability in [0, 1], got True"),
    (
        "p_yes text",
        _set(("steps", 0, "p_yes"), "0.9"),
        "step 1 ('a'): p_yes must be a probability in [0, 1], got '0.9'",
    ),
    ("no p_yes", _drop("steps", 0, "p_yes"), "step 1 ('a'): a question needs p_yes"),
    ("no text", _drop("steps", 0, "text"), "step 1 ('a'): missing text"),
    ("missing answer", _drop("answer"), "missing answer: name the step whose value is the answer"),
    ("unknown answer", _set(("answer",), "z"), "answer 'z' is no step of the plan"),
    ("early answer", _set(("answer",), "a"), "answer 'a' is step 1, but the answer must be the last step"),
    ("repeated id", _set(("steps", 1, "id"), "a"), "step 2: repeats the id 'a' of step 1"),
    ("no id", _drop("steps", 1, "id"), "step 2: needs an id"),
    ("repeated text", _set(("steps", 1, "text"), "Does A hold?"), "step 2 ('b'): asks step 1's question"),
    ("not of two", _set(("steps", 2, "kind"), "not"), "step 3 ('both'): not reads exactly one step, got 2"),
    ("empty and", _set(("steps", 2, "reads"), []), "step 3 ('both'): and reads at least one step"),
    (
        "k too big",
        lambda d: (_set(("steps", 2, "kind"), "at-least")(d), _set(("steps", 2, "k"), 3)(d)),
        "step 3 ('both'): at-least needs k, a whole number from 1 to the 2 steps it reads, got 3",
    ),
    ("k missing", _set(("steps", 2, "kind"), "at-least"), "step 3 ('both'): at-least needs k"),
    ("stray k", _set(("steps", 2, "k"), 1), "step 3 ('both'): k belongs to at-least steps, not and steps"),
    ("text on and", _set(("steps", 2, "text"), "?"), "step 3 ('both'): text belongs to questions, not and steps"),
    ("typo", _set(("steps", 2, "reeds"), []), "step 3 ('both'): unknown key 'reeds'"),
    ("top typo", _set(("anwser",), "both"), "unknown key 'anwser'; a plan has only"),
    ("no steps", _set(("steps",), []), "steps must be a non-empty list"),
    ("no title", _drop("title"), "missing title"),
    ("bad truth", _set(("truth",), "maybe"), "truth must be 'yes' or 'no'"),
    ("bad name", _set(("name",), "My Plan"), "name 'My Plan' must be lowercase letters, digits and hyphens"),
    (
        "wrong truth",
        _set(("steps", 1, "p_yes"), 0.0),
        "states truth 'yes', but its ground truth gives P[answer = yes] = 0, which is not above 2/3",
    ),
    (
        "no promise",
        _set(("steps", 1, "p_yes"), 0.5),
        "P[answer = yes] = 0.5, which is not above 2/3 (Theorem 6.2's promise)",
    ),
    ("variant's truth", _set(("variant",), {"truth": "yes"}), "variant: states the plan's own truth 'yes'"),
    (
        "variant's step",
        _set(("variant",), {"truth": "no", "steps": {"c": {"p_yes": 0.0}}}),
        "variant: changes 'c', which is no step of the plan",
    ),
    (
        "variant's p_yes",
        _set(("variant",), {"truth": "no", "steps": {"a": {"p_yes": 2}}}),
        "variant: step 1 ('a'): p_yes must be a probability in [0, 1], got 2",
    ),
    (
        "variant on and",
        _set(("variant",), {"truth": "no", "steps": {"both": {"p_yes": 0.0}}}),
        "variant: step 3 ('both'): text and p_yes belong to questions, not and steps",
    ),
    (
        "variant's answer",
        _set(("variant",), {"truth": "no", "steps": {"a": {"text": "Does A really hold?"}}}),
        "variant: states truth 'no', but its ground truth gives P[answer = yes] = 1",
    ),
]


@pytest.mark.parametrize(("mistake", "change", "message"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_each_mistake_is_one_clear_error(tmp_path: Path, mistake: str, change, message: str) -> None:
    data = minimal()
    change(data)
    path = write(tmp_path, data)
    with pytest.raises(PlanError) as raised:
        load(path)
    assert str(raised.value).startswith(f"{path}: "), raised.value
    assert message in str(raised.value), raised.value
    assert isinstance(raised.value, InstanceError) and isinstance(raised.value, ValueError)


def test_a_valid_variant_loads(tmp_path: Path) -> None:
    data = minimal() | {"variant": {"truth": "no", "note": "B fails.", "steps": {"b": {"p_yes": 0.0}}}}
    plan, variant = load(write(tmp_path, data))
    assert (variant.truth, variant.probability, variant.note) == (False, 0.0, "B fails.")
    assert variant.steps[0] == plan.steps[0] and variant.steps[1].text == plan.steps[1].text


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("plan.yaml", "title: x", "a plan file is .toml or .json, not 'plan.yaml'"),
        ("plan.toml", "title = ", "not valid TOML"),
        ("plan.json", "{", "not valid JSON"),
        ("plan.json", "[1, 2]", "a plan is a table of keys"),
    ],
)
def test_file_mistakes(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(PlanError) as raised:
        load(path)
    assert str(raised.value).startswith(f"{path}:") and message in str(raised.value), raised.value


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="cannot read it"):
        load(tmp_path / "absent.toml")


def test_a_plan_without_an_instance_of_a_truth_is_a_one_line_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run asks for the 'no' instance of a plan that states only 'yes': PlanError is an
    InstanceError, which the command line prints as one line with status 2."""
    path = write(tmp_path, minimal() | {"name": "only-yes"})
    found = plan_problem(path)
    monkeypatch.setitem(PROBLEMS, found.name, found)
    capsys.readouterr()
    code = main(["run", "cross-exam", "--problem", "only-yes", "--truth", "no", "--trials", "2"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == f"debatekit: error: {path}: the plan has no 'no' instance; add a [variant] stating it\n"


def test_a_name_is_registered_once() -> None:
    with pytest.raises(PlanError, match="a problem named 'caffeine' is already registered"):
        register_plan(PLAN_FILES["caffeine"])


def test_the_judge_knows_only_its_plans_questions() -> None:
    judge = plans("caffeine")[True].judge()
    with pytest.raises(ValueError, match="is not a question of the plan caffeine"):
        judge.probability(Question("Is coffee tasty?"))
    with pytest.raises(ValueError, match="is not a question of the plan caffeine"):
        judge.probability(("flaw-a", ()))


@pytest.mark.parametrize(("name", "truth"), CASES)
def test_the_answer_is_the_stated_ground_truth(name: str, truth: bool) -> None:
    """Deterministic plans: the one transcript ends in the stated answer. Stochastic ones: the
    exact P[M = 1], summed over every answer to every question, is the plan's and keeps the
    promise (> 2/3 for yes, < 1/3 for no)."""
    plan = plans(name)[truth]
    instance = PROBLEMS[name].instance(len(plan.steps), truth, np.random.default_rng(0))
    machine, judge = instance.machine, instance.oracle
    assert machine is not None and instance.answer == int(truth)
    asked = [t for t in range(machine.length) if machine.kind(t) is StepKind.ORACLE]
    texts = [plan.steps[t].text for t in asked]  # type: ignore[union-attr]
    p_yes = {text: judge.probability(Question(text)) for text in texts}
    total = 0.0
    for answers in itertools.product((0, 1), repeat=len(texts)):
        given = dict(zip(texts, answers, strict=True))
        weight = float(np.prod([p_yes[q] if a else 1 - p_yes[q] for q, a in given.items()]))
        if weight:
            y = machine.run(instance.x, lambda query, given=given: given[query.text], np.random.default_rng(0))
            total += weight * y[-1]
    assert total == pytest.approx(plan.probability, abs=1e-12)
    if plan.deterministic:
        assert total == int(truth)
    else:
        assert total > 2 / 3 if truth else total < 1 / 3
    if name == "code-review":  # the arithmetic in the file's comment
        assert total == pytest.approx(0.95 * 0.96 * 0.90 * 0.974 if truth else 0.10 * 0.96 * 0.90 * 0.787)


@pytest.mark.parametrize(("name", "truth"), [(n, t) for n, t in CASES if n != "caffeine"])
def test_k_is_the_enumerated_hybrid_bound(name: str, truth: bool) -> None:
    """K by the live-step induction equals the hybrid bound over all 2^T prefixes, and is no less
    than the enumerated lower bound (T <= 18; caffeine's T = 26 is too long to enumerate)."""
    instance = make_instance(PROBLEMS[name], PROBLEMS[name].default_size, truth, 0)
    bounds = enumerate_bounds(instance)
    assert instance.lipschitz == pytest.approx(bounds.upper, abs=1e-9)
    assert bounds.lower <= instance.lipschitz


def _all_questions(plan: Plan) -> set[Question]:
    """Every question the plan can ask: each question step with every value of its relevant coordinates."""
    return {
        plan.question(step, *bits)
        for step in plan.steps
        if isinstance(step, Ask)
        for bits in itertools.product((0, 1), repeat=len(step.reads))
    }


@pytest.mark.parametrize(("name", "truth"), CASES)
def test_every_query_is_a_question_with_its_context_lines(name: str, truth: bool) -> None:
    plan = plans(name)[truth]
    machine = plan.machine()
    for t, step in enumerate(plan.steps):
        if not isinstance(step, Ask):
            assert machine.kind(t) is StepKind.COMPUTE
            continue
        assert machine.kind(t) is StepKind.ORACLE and machine.relevant(t) == step.reads
        for bits in itertools.product((0, 1), repeat=len(step.reads)):
            query = machine.rule(t, bits)
            lines = tuple(
                f"Step {r + 1} ({plan.steps[r].claim}): {'yes' if b else 'no'}"
                for r, b in zip(step.reads, bits, strict=True)
            )
            assert query == Question(step.text, lines) and hash(query) == hash(Question(step.text, lines))
            assert plan.judge().probability(query) == step.p_yes  # keyed on the text: any context
    assert len(_all_questions(plan)) == sum(2 ** len(s.reads) for s in plan.steps if isinstance(s, Ask))


def test_a_context_line_reads_as_the_issue_shows() -> None:
    machine = plans("caffeine")[True].machine()
    assert machine.rule(1, (1,)).context == ("Step 1 (Study A has a clear methodological flaw): yes",)  # type: ignore[union-attr]
    assert machine.rule(11, (0,)).context == ("Step 11 (Study C has a clear methodological flaw): no",)  # type: ignore[union-attr]


class Recording(KnownOracle):
    """The ground truth, noting every query; every seat's copy of the instance shares it."""

    def __init__(self, judge: KnownOracle):
        self.judge, self.queries = judge, []

    def probability(self, query: Any) -> float:
        self.queries.append(query)
        return self.judge.probability(query)

    @property
    def deterministic(self) -> bool | None:
        return self.judge.deterministic

    def __deepcopy__(self, memo: dict) -> Recording:
        return self


@pytest.mark.parametrize(("name", "protocol"), [("caffeine", "cross-exam"), ("code-review", "stochastic")])
def test_a_debate_asks_only_the_plans_questions(name: str, protocol: str) -> None:
    plan = plans(name)[True]
    instance = make_instance(PROBLEMS[name], len(plan.steps), True, 0)
    spec = (
        PROTOCOLS[protocol]
        if protocol == "cross-exam"
        else PROTOCOLS[protocol].with_params(StochasticParams(Constants.lean))
    )
    recording = Recording(instance.oracle)  # type: ignore[arg-type]
    honest = (spec.honest(Role.ALICE), spec.honest(Role.BOB))
    result = run(spec, instance, *honest, trials=3, seed=0, oracles=Oracles(recording, recording))
    assert result.honest_win_rate > 0 and recording.queries
    assert set(recording.queries) <= _all_questions(plan)


@pytest.mark.parametrize("truth", [True, False])
def test_the_claim_tree_is_the_plans_decomposition(truth: bool) -> None:
    """bike-lanes is a uniform tree (q = 3, d = 2): its leaves are its questions, judged by the
    ground truth on the same Question the machine asks, and its root's truth is the answer."""
    plan = plans("bike-lanes")[truth]
    instance = make_instance(PROBLEMS["bike-lanes"], len(plan.steps), truth, 0)
    tree = instance.recursive_decomposition()
    assert isinstance(tree, ClaimTree) and (tree.depth, tree.width) == (2, 3)
    assert tree.truth(tree.root(), tree.depth) == plan.probability == int(truth)
    leaves = [leaf for middle in tree.split(tree.root(), 2) for leaf in tree.split(middle, 1)]
    machine = plan.machine()
    for leaf in leaves:
        t = next(t for t, s in enumerate(plan.steps) if s.id == leaf)
        assert tree.leaf(leaf) == () and tree.question(leaf) == machine.rule(t, ())
        assert LeafOracle(tree).probability((leaf, ())) == plan.steps[t].p_yes  # type: ignore[union-attr]
    assert len(leaves) == sum(isinstance(s, Ask) for s in plan.steps) == 9


def test_a_stochastic_claim_tree_agrees_with_the_ground_truth(tmp_path: Path) -> None:
    """A majority of three ANDs of three uncertain questions each: the tree's truth (children independent)
    and the plan's backward induction are two computations of one probability; the plan is
    decomposed for prover-estimator debate, but not deterministic enough for cross-examination."""
    ps = [0.9, 0.95, 0.8, 0.97, 0.99, 0.85, 0.92, 0.96, 0.9]
    steps: list[dict[str, Any]] = [
        {"id": f"q{i}", "kind": "question", "text": f"Question {i}?", "p_yes": p} for i, p in enumerate(ps)
    ]
    steps += [{"id": f"and{j}", "kind": "and", "reads": [f"q{3 * j + i}" for i in range(3)]} for j in range(3)]
    order = [*steps[0:3], steps[9], *steps[3:6], steps[10], *steps[6:9], steps[11]]
    order.append({"id": "top", "kind": "majority", "reads": ["and0", "and1", "and2"]})
    data = {"title": "Most of three?", "answer": "top", "truth": "yes", "steps": order}
    (plan,) = load(write(tmp_path, data))
    tree = ClaimTree.of(plan, plan.judge())
    assert tree is not None and (tree.depth, tree.width) == (2, 3)
    assert tree.truth("top", 2) == pytest.approx(plan.probability, abs=1e-12)
    assert protocols_of(plan_problem(write(tmp_path, data))) == ("stochastic", "prover-estimator")
    order[-1]["reads"] = ["and0", "and1", "q8"]  # no longer uniform
    assert ClaimTree.shape(load(write(tmp_path, data | {"steps": order}))[0]) is None


def test_plans_that_are_no_tree_have_none() -> None:
    assert ClaimTree.shape(plans("caffeine")[True]) is None and ClaimTree.shape(plans("code-review")[True]) is None


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    capsys.readouterr()
    code = main(["run", *argv, "--trials", "20", "--seed", "3", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def assert_promise_kept(data: dict) -> None:
    """The JSON guarantee: certainty where it promises it, else the accept rate's Wilson interval
    reaches the promised completeness (yes) or soundness (no)."""
    g = data["guarantee"]
    if (g["completeness"], g["soundness"]) == (1.0, 0.0):
        assert data["honest_win_rate"] == 1.0
    elif data["truth"] == "yes":
        assert data["accept_ci"][1] >= g["completeness"] > 0.5
    else:
        assert data["accept_ci"][0] <= g["soundness"] < 0.5
    assert data["verifier_queries_max"] <= g["verifier_queries"]
    assert data["verifier_bits_read_max"] <= g["bits_read"]


@pytest.mark.parametrize("truth", ["yes", "no"])
@pytest.mark.parametrize("name", ["caffeine", "bike-lanes"])
def test_cross_examination_on_a_deterministic_plan(capsys: pytest.CaptureFixture[str], name: str, truth: str) -> None:
    data = run_json(capsys, "cross-exam", "--problem", name, "--truth", truth)
    assert (data["guarantee"]["completeness"], data["guarantee"]["soundness"]) == (1.0, 0.0)
    assert data["accept_rate"] == (1.0 if truth == "yes" else 0.0)
    assert_promise_kept(data)


@pytest.mark.parametrize(("name", "truth"), CASES)
def test_stochastic_debate_on_every_plan(capsys: pytest.CaptureFixture[str], name: str, truth: bool) -> None:
    answer = "yes" if truth else "no"
    data = run_json(capsys, "stochastic", "--problem", name, "--truth", answer, "--constants", "lean")
    assert data["guarantee"]["completeness"] > 0.6 and data["guarantee"]["soundness"] < 0.4
    assert_promise_kept(data)


def test_stochastic_debate_with_planned_constants(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "stochastic", "--problem", "code-review", "--truth", "yes")
    assert "planned constants" in data["guarantee"]["statement"]
    assert_promise_kept(data)


@pytest.mark.parametrize("truth", ["yes", "no"])
@pytest.mark.parametrize("protocol", ["prover-estimator", "naive-recursive"])
def test_the_recursive_protocols_on_the_claim_tree(
    capsys: pytest.CaptureFixture[str], protocol: str, truth: str
) -> None:
    """Honest A against honest B: she wins every debate, and her mean payoff meets the
    completeness bound (Lemma A.5's (1 - ε) r^(d+1); naive recursion's 1)."""
    data = run_json(capsys, protocol, "--problem", "bike-lanes", "--truth", truth)
    assert (data["depth"], data["width"]) == (2, 3)
    assert data["payoff_bound_kind"] == "completeness"
    assert data["payoff_mean"] >= data["payoff_bound"] > 0
    assert data["honest_win_rate"] == 1.0 and data["accept_rate"] == (1.0 if truth == "yes" else 0.0)

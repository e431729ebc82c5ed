"""Property-based tests: BARK on random valid BoFire domains (Hypothesis).

``problems()`` draws a domain (1-6 inputs of every supported kind, 0-2 constraints built to
hold at a drawn point of the domain, 1-3 outputs with every objective type), experiments
(ties, constant columns, duplicates, values on the bounds, a few NaN outputs), a batch size
and a seed. The property: after ``tell``, ``ask(n)`` returns n distinct candidates inside
the inputs' bounds and allowed categories that satisfy every constraint (BoFire's
``is_fulfilled`` with tol 1e-5) with finite predictions, and a reloaded surrogate predicts
the same; or ``ask`` raises one of the errors that name their cause
(``InfeasibleDomainError`` and its subclasses ``InfeasibleOutputLimitError`` and
``LibraryExhaustedError``).

Profiles (``HYPOTHESIS_PROFILE``): ``ci`` (the default) tries 15 examples, derandomized, so
CI is short and repeatable; ``long`` tries 300 fresh random examples (or
``HYPOTHESIS_LONG_EXAMPLES``)::

    HYPOTHESIS_PROFILE=long nice python -m pytest tests/test_properties.py \
        --hypothesis-show-statistics -p no:cacheprovider

A failure found by the long profile belongs in a plain regression test with its minimal
example (``tests/test_property_regressions.py``).
"""

from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import bofire.strategies.api as strategies
import bofire.surrogates.api as surrogates
import numpy as np
import pandas as pd
import pytest
from bofire.data_models.acquisition_functions.api import (
    qEHVI,
    qEI,
    qLogEHVI,
    qLogEI,
    qLogNEHVI,
    qLogNEI,
    qNEHVI,
    qNEI,
    qPI,
    qUCB,
)
from bofire.data_models.constraints.api import (
    LinearEqualityConstraint,
    LinearInequalityConstraint,
    NChooseKConstraint,
    NonlinearEqualityConstraint,
    NonlinearInequalityConstraint,
    ProductEqualityConstraint,
    ProductInequalityConstraint,
)
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalDescriptorInput,
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import (
    CloseToTargetObjective,
    MaximizeObjective,
    MaximizeSigmoidObjective,
    MinimizeObjective,
    MinimizeSigmoidObjective,
    TargetObjective,
)
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

import bofire_bark  # noqa: F401  (registration)
from bofire_bark.data_models import BARKSettings, BARKStrategy
from bofire_bark.optimize import (
    InfeasibleDomainError,
    InfeasibleOutputLimitError,
    LibraryExhaustedError,
)
from bofire_bark.supported import GOAL_OBJECTIVES

settings.register_profile(
    "ci", derandomize=True, max_examples=15, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(  # HYPOTHESIS_LONG_EXAMPLES: a shorter (or longer) long run
    "long", max_examples=int(os.environ.get("HYPOTHESIS_LONG_EXAMPLES", "300")), deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
PROFILE = settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

TINY = BARKSettings(n_trees=5, n_chains=2, n_samples=2, thinning=2, burn_in=20,
                    max_sampling_sweeps=0)
# BoFire sorts input keys as strings ("x10" before "x2"): mixed names exercise the order
NAMES = ("x1", "x10", "x2", "temp", "b", "Z")
TOL = 1e-5


@dataclass
class Problem:
    domain: Domain
    experiments: pd.DataFrame
    n: int
    seed: int
    options: dict = field(default_factory=dict)  # acquisition_function, scalarization
    # a point of the domain where every constraint holds (they were built to): the domain is
    # feasible, so only an output limit or an exhausted library may refuse an ask
    witness: dict = field(default_factory=dict)

    def __repr__(self) -> str:  # what a failure prints: enough to rebuild the example
        return (f"Problem(n={self.n}, seed={self.seed}, options={self.options!r},\n"
                f"witness={self.witness!r},\n"
                f"domain={self.domain.model_dump_json()},\n"
                f"experiments={self.experiments.to_dict(orient='list')})")


# ---------------------------------------------------------------------------- inputs
@st.composite
def continuous_inputs(draw, key):
    lower = draw(st.sampled_from([-3.0, 0.0, 0.0, 0.5, 2.0, 10.0]))
    width = draw(st.sampled_from([0.0, 1e-3, 1.0, 5.0, 100.0]))
    # allow_zero: 0 or a value in the bounds (BoFire: only with 0 outside the bounds)
    allow_zero = draw(st.booleans()) if lower > 0 and width > 0 else False
    return ContinuousInput(key=key, bounds=(lower, lower + width), allow_zero=allow_zero)


@st.composite
def discrete_inputs(draw, key):
    values = draw(st.lists(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.5, 10.0]), min_size=2,
                           max_size=4, unique=True))
    return DiscreteInput(key=key, values=sorted(values))


def _allowed(draw, n):
    if draw(st.booleans()):
        return None
    allowed = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if not any(allowed):  # a single allowed category
        allowed[draw(st.integers(0, n - 1))] = True
    return allowed


@st.composite
def categorical_inputs(draw, key):
    n = draw(st.integers(2, 4))
    return CategoricalInput(key=key, categories=list("ABCD"[:n]), allowed=_allowed(draw, n))


@st.composite
def descriptor_inputs(draw, key):
    n = draw(st.integers(2, 3))
    k = draw(st.integers(1, 2))
    # few values: categories tied on a descriptor (BoFire wants each descriptor to vary)
    values = [[draw(st.sampled_from([0.0, 1.0, 2.5])) for _ in range(k)] for _ in range(n)]
    for j in range(k):
        if len({row[j] for row in values}) == 1:
            values[-1][j] += 1.0
    return CategoricalDescriptorInput(key=key, categories=[f"c{i}" for i in range(n)],
                                      descriptors=[f"{key}_d{j}" for j in range(k)],
                                      values=values, allowed=_allowed(draw, n))


KINDS = (continuous_inputs, continuous_inputs, continuous_inputs, discrete_inputs,
         categorical_inputs, descriptor_inputs)


def point_values(feature) -> list:
    """Values of ``feature`` a point of the domain may take (bounds, 0 when allowed)."""
    if isinstance(feature, ContinuousInput):
        lo, hi = feature.bounds
        vals = [lo, hi, (lo + hi) / 2]
        return vals + [0.0] if feature.allow_zero else vals
    if isinstance(feature, DiscreteInput):
        return list(feature.values)
    return feature.get_allowed_categories()


# ----------------------------------------------------------------------- constraints
def _linear(draw, conts, point, equality):
    feats = draw(st.lists(st.sampled_from(conts), min_size=2, max_size=len(conts),
                          unique=True))
    coefs = [draw(st.sampled_from([-2.0, -1.0, -0.5, 0.5, 1.0, 3.0])) for _ in feats]
    lhs = math.fsum(c * point[f] for c, f in zip(coefs, feats, strict=True))
    if equality:
        return LinearEqualityConstraint(features=feats, coefficients=coefs, rhs=lhs)
    slack = draw(st.sampled_from([0.0, 0.1, 1.0]))
    return LinearInequalityConstraint(features=feats, coefficients=coefs, rhs=lhs + slack)


def _nchoosek(draw, inputs, point):
    zeroable = [f.key for f in inputs.get(ContinuousInput)
                if f.bounds[0] == 0 or (f.bounds[0] > 0 and f.allow_zero)]
    if len(zeroable) < 2:
        return None
    feats = draw(st.lists(st.sampled_from(zeroable), min_size=2, max_size=len(zeroable),
                          unique=True))
    active = sum(abs(point[f]) > 1e-6 for f in feats)
    lo = draw(st.integers(0, active))
    hi = draw(st.integers(active, len(feats)))
    return NChooseKConstraint(features=feats, min_count=lo, max_count=hi,
                              none_also_valid=draw(st.booleans()))


NONLINEAR = (("{a} * {b}", lambda a, b: a * b),
             ("{a}**2 + {b}**2", lambda a, b: a**2 + b**2),
             ("exp({a} / 50) - {b}", lambda a, b: math.exp(a / 50) - b))


def _nonlinear(draw, conts, point):
    a, b = draw(st.lists(st.sampled_from(conts), min_size=2, max_size=2, unique=True))
    form, value = draw(st.sampled_from(NONLINEAR))
    rhs = value(point[a], point[b]) + draw(st.sampled_from([0.0, 0.5]))
    return NonlinearInequalityConstraint(expression=form.format(a=a, b=b) + f" - ({rhs!r})",
                                         features=[a, b])


def _product(draw, conts, point):
    feats = draw(st.lists(st.sampled_from(conts), min_size=2, max_size=2, unique=True))
    exps = [draw(st.sampled_from([1.0, 2.0, 3.0])) for _ in feats]
    sign = draw(st.sampled_from([1, -1]))
    value = sign * math.prod(point[f] ** e for f, e in zip(feats, exps, strict=True))
    return ProductInequalityConstraint(features=feats, exponents=exps, sign=sign,
                                       rhs=value + draw(st.sampled_from([0.0, 0.5])))


def _nonlinear_equality(draw, conts, point):
    a, b = draw(st.lists(st.sampled_from(conts), min_size=2, max_size=2, unique=True))
    form, value = draw(st.sampled_from(NONLINEAR))
    rhs = value(point[a], point[b])
    return NonlinearEqualityConstraint(expression=form.format(a=a, b=b) + f" - ({rhs!r})",
                                       features=[a, b])


def _product_equality(draw, conts, point):
    feats = draw(st.lists(st.sampled_from(conts), min_size=2, max_size=2, unique=True))
    exps = [draw(st.sampled_from([1.0, 2.0])) for _ in feats]
    sign = draw(st.sampled_from([1, -1]))
    value = sign * math.prod(point[f] ** e for f, e in zip(feats, exps, strict=True))
    return ProductEqualityConstraint(features=feats, exponents=exps, sign=sign, rhs=value)


@st.composite
def constraints_at(draw, inputs, point, mip: bool = False):
    """0-2 supported constraints that all hold at ``point``; nonlinear and product
    equalities (which need the MIP: one Maximize/Minimize output) when ``mip``."""
    conts = inputs.get_keys(ContinuousInput)
    out = []
    if len(conts) < 2:
        return out
    kinds = ["lin_ineq", "lin_eq", "nchoosek", "nonlinear", "product"]
    kinds += ["nl_eq", "prod_eq"] if mip else []
    # uniform (integers() favours 0, and most domains then had no constraint)
    for _ in range(draw(st.sampled_from([0, 1, 2]))):
        kind = draw(st.sampled_from(kinds))
        if kind == "lin_ineq":
            c = _linear(draw, conts, point, equality=False)
        elif kind == "lin_eq":
            c = _linear(draw, conts, point, equality=True)
        elif kind == "nchoosek":
            c = _nchoosek(draw, inputs, point)
        elif kind == "nonlinear":
            c = _nonlinear(draw, conts, point)
        elif kind == "product":
            c = _product(draw, conts, point)
        elif kind == "nl_eq":
            c = _nonlinear_equality(draw, conts, point)
        else:
            c = _product_equality(draw, conts, point)
        if c is not None:
            out.append(c)
    return out


# --------------------------------------------------------------------------- outputs
@st.composite
def objectives(draw, goal: bool):
    kinds = ["max", "min", "close"] + ([] if goal else ["max_sig", "min_sig", "target"])
    kind = draw(st.sampled_from(kinds))
    t = draw(st.sampled_from([-1.0, 0.0, 1.0, 3.0]))
    if kind == "max":
        return MaximizeObjective()
    if kind == "min":
        return MinimizeObjective()
    if kind == "close":
        return CloseToTargetObjective(target_value=t, exponent=draw(st.sampled_from([1.0, 2.0])))
    if kind == "max_sig":
        return MaximizeSigmoidObjective(tp=t, steepness=draw(st.sampled_from([0.5, 10.0])))
    if kind == "min_sig":
        return MinimizeSigmoidObjective(tp=t, steepness=draw(st.sampled_from([0.5, 10.0])))
    return TargetObjective(target_value=t, tolerance=draw(st.sampled_from([0.0, 1.0])),
                           steepness=draw(st.sampled_from([0.5, 10.0])))


# ----------------------------------------------------------------------- experiments
@st.composite
def experiment_rows(draw, inputs, point, n):
    rows = []
    for _ in range(n):
        row = {}
        for f in inputs.get():
            choices = point_values(f)
            if isinstance(f, ContinuousInput) and f.bounds[1] > f.bounds[0]:
                inner = st.floats(*f.bounds, allow_nan=False)
                row[f.key] = draw(st.one_of(st.sampled_from(choices), inner))
            elif isinstance(f, CategoricalInput):  # measured before a category was disallowed
                row[f.key] = draw(st.sampled_from(f.categories))
            else:
                row[f.key] = draw(st.sampled_from(choices))
        if draw(st.booleans()):
            row = {k: point[k] for k in row}
        rows.append(row)
    # BoFire's tell refuses a fixed input whose data all sit at its fixed value, and a
    # disallowed category absent from the data: the first rows were measured before
    for f in inputs.get(ContinuousInput):
        if f.bounds[0] == f.bounds[1]:
            rows[0][f.key] = f.bounds[0] + 1.0
    for f in inputs.get(CategoricalInput):
        banned = [c for c in f.categories if c not in f.get_allowed_categories()]
        for i, c in enumerate(banned):
            rows[i][f.key] = c
    return rows


@st.composite
def problems(draw):
    keys = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True))
    inputs = Inputs(features=[draw(draw(st.sampled_from(KINDS))(k)) for k in keys])
    point = {f.key: draw(st.sampled_from(point_values(f))) for f in inputs.get()}
    n_out = draw(st.sampled_from([1, 1, 2, 3]))  # one output half the time: rules, MIP
    outputs = [ContinuousOutput(key=f"y{i}", objective=draw(objectives(goal=i == 0)))
               for i in range(n_out)]
    maxmin = [o for o in outputs if isinstance(o.objective, MaximizeObjective
                                               | MinimizeObjective)]
    single = n_out == 1 and len(maxmin) == 1
    constraints = draw(constraints_at(inputs, point, mip=single))
    mip = any(isinstance(c, NonlinearEqualityConstraint | ProductEqualityConstraint)
              for c in constraints)
    # the acquisition functions the data model accepts for these outputs (the MIP: qUCB)
    acqfs = [qUCB(beta=draw(st.sampled_from([0.0, 1.0, 3.8416])))]
    if single and not mip:
        acqfs += [qEI(), qLogEI(), qNEI(), qLogNEI(), qPI()]
    elif len(maxmin) >= 2 and len(maxmin) == sum(
            type(o.objective) in GOAL_OBJECTIVES for o in outputs):
        acqfs += [qEHVI(), qLogEHVI(), qNEHVI(), qLogNEHVI()]
    options = {"acquisition_function": draw(st.sampled_from(acqfs)),
               "scalarization": draw(st.sampled_from(["chebyshev", "weighted_sum"]))}
    domain = Domain(inputs=inputs, outputs=Outputs(features=outputs),
                    constraints=Constraints(constraints=constraints))

    n_rows = draw(st.integers(3, 10))
    X = pd.DataFrame(draw(experiment_rows(inputs, point, n_rows)))
    if draw(st.booleans()):  # duplicated rows
        X = pd.concat([X, X.iloc[:draw(st.integers(1, n_rows))]], ignore_index=True)
    for out in outputs:
        y = [draw(st.one_of(st.sampled_from([0.0, 1.0, 1.0, -2.5]),
                            st.floats(-10, 10, allow_nan=False))) for _ in range(len(X))]
        if draw(st.booleans()):  # a constant output
            y = [y[0]] * len(X)
        # a few NaN outputs, never in the first two rows: each output keeps 2 valid values
        nan = draw(st.lists(st.integers(2, len(X) - 1), max_size=2))
        y = [math.nan if i in nan else v for i, v in enumerate(y)]
        X[out.key] = y
        X[f"valid_{out.key}"] = 1
    return Problem(domain, X, draw(st.integers(1, 3)), draw(st.integers(0, 2**31 - 1)),
                   options, point)


# ------------------------------------------------------------------------ properties
def tiny_strategy(domain: Domain, seed: int, **options):
    return strategies.map(BARKStrategy(domain=domain, seed=seed, surrogate_specs=TINY,
                                       time_limit=1.0, n_start_points=200, **options))


def check_candidates(domain: Domain, cands: pd.DataFrame, n: int,
                     announced_repeats: bool = False) -> None:
    """n candidates inside bounds and allowed categories, every constraint held (tolerance
    ``TOL``), finite predictions of every output; distinct unless ``announced_repeats`` (the
    strategy warned that the batch repeats a candidate)."""
    assert len(cands) == n
    keys = domain.inputs.get_keys()
    for f in domain.inputs.get():
        col = cands[f.key]
        if isinstance(f, ContinuousInput):
            x = col.to_numpy(float)
            inside = (x >= f.bounds[0] - TOL) & (x <= f.bounds[1] + TOL)
            if f.allow_zero:
                inside |= np.abs(x) <= TOL
            assert inside.all(), f"{f.key} = {x} outside {f.bounds} (allow_zero={f.allow_zero})"
        elif isinstance(f, DiscreteInput):
            assert np.isin(col.to_numpy(float), f.values).all(), (f.key, col.tolist())
        else:
            assert set(col) <= set(f.get_allowed_categories()), (f.key, col.tolist())
    if len(domain.constraints):
        ok = domain.constraints.is_fulfilled(cands[keys], tol=TOL)
        assert ok.all(), f"constraints violated by\n{cands[keys]}"
    as_text = cands[keys].apply(lambda c: c.round(9) if c.dtype.kind == "f" else c).astype(str)
    # a repeat the strategy announced is a known limitation (test_property_regressions.py)
    if as_text.duplicated().any():
        assert announced_repeats, f"repeated candidates, never announced\n{cands[keys]}"
    for key in domain.outputs.get_keys():
        for col in (f"{key}_pred", f"{key}_sd"):
            assert np.isfinite(cands[col].to_numpy(float)).all(), (col, cands[col].tolist())


def ask_or_clear_error(problem: Problem):
    """(strategy, candidates) of tell-then-ask; candidates None after an error that names
    its cause."""
    strategy = tiny_strategy(problem.domain, problem.seed, **problem.options)
    strategy.tell(problem.experiments)
    try:
        return strategy, strategy.ask(problem.n)
    except InfeasibleDomainError as err:
        assert len(str(err)) > 20, repr(err)  # a sentence, not a bare name
        # the witness satisfies every constraint: "no feasible point" would be wrong
        assert isinstance(err, InfeasibleOutputLimitError | LibraryExhaustedError), (
            f"{type(err).__name__} though the domain is feasible at {problem.witness}: {err}")
        return strategy, None


class _Repeats(logging.Handler):
    """Notes the strategy's warning that a batch repeats a candidate."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen = False

    def emit(self, record):
        self.seen |= "repeats an earlier candidate" in record.getMessage()


@PROFILE
@given(problem=problems())
def test_ask_gives_valid_candidates_or_a_clear_error(problem):
    repeats = _Repeats()
    log = logging.getLogger("bofire_bark.strategy")
    log.addHandler(repeats)
    try:
        strategy, cands = ask_or_clear_error(problem)
    finally:
        log.removeHandler(repeats)
    domain = problem.domain
    if cands is not None:
        check_candidates(domain, cands, problem.n, announced_repeats=repeats.seen)
    # the fitted surrogate reloaded from its dump predicts the same
    X = cands if cands is not None else problem.experiments
    X = X[domain.inputs.get_keys()]
    for sur in strategy.surrogates.values():
        reloaded = surrogates.map(sur.settings.model_copy(update={"dump": sur.dumps()}))
        pd.testing.assert_frame_equal(sur.predict(X), reloaded.predict(X))


# ------------------------------------------------------- the same seed in a new process
def fixed_problem() -> Problem:
    """A fixed drawn example with some of everything (the simplest such, derandomized)."""
    def rich(p: Problem) -> bool:
        kinds = {type(f) for f in p.domain.inputs.get()}
        free = [f for f in p.domain.inputs.get(ContinuousInput) if f.bounds[1] > f.bounds[0]]
        goals = all(isinstance(f.objective, MaximizeObjective | MinimizeObjective)
                    for f in p.domain.outputs.get())  # no output limit to miss
        return (len(kinds) >= 3 and len(free) >= 2 and len(p.domain.constraints) >= 1
                and len(p.domain.outputs) >= 2 and goals and p.n >= 2)

    # the first such example drawn, unshrunk: shrinking took minutes and ended degenerate
    return find(problems(), rich, settings=settings(
        derandomize=True, database=None, max_examples=5000, phases=[Phase.generate]))


def write_case(p: Problem, path: Path) -> Path:
    """The strategy's spec, experiments and batch size of ``p`` as JSON (Python floats
    round-trip exactly): a new process rebuilds the case without Hypothesis, whose draws
    depend on the modules a process has loaded."""
    spec = BARKStrategy(domain=p.domain, seed=p.seed, surrogate_specs=TINY, time_limit=1.0,
                        n_start_points=200, **p.options)
    path.write_text(json.dumps({"spec": spec.model_dump_json(), "n": p.n,
                                "experiments": p.experiments.to_dict(orient="list")}))
    return path


_CHILD = """
import json, sys
import bofire.strategies.api as strategies
import pandas as pd
import bofire_bark
from bofire_bark.data_models import BARKStrategy
case = json.loads(open(sys.argv[1]).read())
s = strategies.map(BARKStrategy.model_validate_json(case["spec"]))
s.tell(pd.DataFrame(case["experiments"]))
cands = s.ask(case["n"])[s.domain.inputs.get_keys()]
print("CANDIDATES" + json.dumps(cands.to_dict(orient="list")))
"""


def run_cases(path: Path, count: int, env: dict) -> list[pd.DataFrame]:
    """Run ``count`` new processes at once on the case at ``path``; their candidates."""
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env)
             for _ in range(count)]
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=1800)
        assert proc.returncode == 0, stderr[-3000:]
        line = next(ln for ln in stdout.splitlines() if ln.startswith("CANDIDATES"))
        out.append(pd.DataFrame(json.loads(line[len("CANDIDATES"):])))
    return out


def ask_here(path: Path) -> pd.DataFrame:
    case = json.loads(path.read_text())
    s = strategies.map(BARKStrategy.model_validate_json(case["spec"]))
    s.tell(pd.DataFrame(case["experiments"]))
    return s.ask(case["n"])[s.domain.inputs.get_keys()]


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True),
                                  check_dtype=False, rtol=1e-12, atol=1e-12)


def test_same_seed_same_candidates_in_a_new_process(tmp_path):
    case = write_case(fixed_problem(), tmp_path / "case.json")
    (there,) = run_cases(case, 1, dict(os.environ))
    _same(ask_here(case), there)


@pytest.mark.skipif(os.environ.get("BOFIRE_BARK_SKIP_COLD_CACHE") == "1",
                    reason="compiles every kernel twice into a new cache")
def test_two_processes_share_one_new_numba_cache(tmp_path):
    """Two processes start at once on one empty NUMBA_CACHE_DIR: both compile and write it,
    both succeed, with the same candidates as this process."""
    case = write_case(fixed_problem(), tmp_path / "case.json")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    first, second = run_cases(case, 2, env)
    assert any((tmp_path / "numba").rglob("*.nbi"))  # the children did use the shared dir
    here = ask_here(case)
    _same(first, here)
    _same(second, here)

"""Benchmark functions of the BARK paper (Boyne et al., ICML 2025) as BoFire ``Benchmark``s.

All problems are minimized and have one output ``y`` (with BoFire's ``valid_y`` column).

| class | D | features |
|---|---|---|
| ``TreeFunction`` | 10 | x in [0, 1]^10 |
| ``TreeFunctionCat`` | 20 | x in [0, 1]^10, h in {c0..c4}^10 (categorical) |
| ``DiscreteAckley`` | 13 | x in [-1, 1]^3, i in {-1, 1}^10 (discrete) |
| ``DiscreteRosenbrock`` | 10 | x in [-5, 10]^4, i in {-5, 0, 5, 10}^6 (discrete) |
| ``PestControl`` | 25 | h in {none, pest1, ..., pest4}^25 (categorical) |
| ``StyblinskiTang`` | 10 | x in [-5, 5]^10 (``Hartmann`` is BoFire's own, 6-D) |
| ``Hartmann6Spurious`` | 6 + k | Hartmann6 and k inputs in [0, 1] it ignores (BoFire's wrapper) |
| ``MixedConstrained`` | 5 | 3 fractions (sum 1), temperature, catalyst; x1 t <= 0.35 |

The paper's hyperparameter-tuning benchmarks (its appendix table of applied benchmarks, from
Dreczkowski et al. 2023, MCBO) train a model at every evaluation and minimize a validation
error. They sit in ``TUNING_BENCHMARKS``, apart from ``BENCHMARKS``, so that studies that
default to every entry of ``BENCHMARKS`` (``benchmarks.mixing``) do not take them up unasked;
``make_benchmark`` builds both, and the BO study runs them by name (``benchmarks.bo``'s
``TUNING_BENCHMARKS``).

| class | D | features |
|---|---|---|
| ``SVRBench`` | 53 | log10 eps, C, gamma; h in {exclude, include}^50 (categorical) |
| ``XGBoostMNIST`` | 8 | 4 continuous, max depth in {1..10}, 3 categorical (2 each) |

The paper's fourth applied benchmark, CCOBench (Dreifuerst et al. 2021, coverage and capacity
of a cellular network: 15 transmit powers in [30, 50] dBm and 15 antenna downtilts in
{0..5}, D = 30), is not here and not run: its objective (the shares of the area with weak
coverage and with over-coverage, from received-power and interference maps; one objective
needs the two weighed, e.g. averaged as Daulton et al. 2022 do) is computed from precomputed
power maps of a radio-propagation simulator, one per downtilt angle, that the authors publish
in their own repository and that no package ships (and this machine reaches only package
registries). Adding it needs those power-map files (and their licence) and the coverage
formulation written from Dreifuerst et al.'s description.

Feature keys are chosen so that BoFire's key sort (by type, then key as a string) keeps the
natural order (single digits or zero-padded numbers).

``get_optima`` returns the global minimum where it is known exactly or computed reliably;
the tree functions' minimum is solved exactly as a small MIP (SCIP); PestControl and the
tuning benchmarks have no known optimum (regret is then taken against the best value any run
found, see ``benchmarks.plots``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from bofire.benchmarks.api import Benchmark, Hartmann
from bofire.benchmarks.benchmark import SpuriousFeaturesWrapper
from bofire.data_models.constraints.api import (
    LinearEqualityConstraint,
    NonlinearInequalityConstraint,
)
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import MinimizeObjective

__all__ = [
    "BENCHMARKS",
    "DiscreteAckley",
    "DiscreteRosenbrock",
    "Hartmann6",
    "Hartmann6Spurious",
    "MixedConstrained",
    "PestControl",
    "SVRBench",
    "StyblinskiTang",
    "TUNING_BENCHMARKS",
    "TreeFunction",
    "TreeFunctionCat",
    "XGBoostMNIST",
    "ackley",
    "make_benchmark",
    "rosenbrock",
]


def _outputs() -> Outputs:
    return Outputs(features=[ContinuousOutput(key="y", objective=MinimizeObjective())])


def _result(candidates: pd.DataFrame, y: np.ndarray) -> pd.DataFrame:
    """BoFire's output frame, on the candidates' own index (so ``f(..., return_complete)``
    concatenates row by row whatever the index)."""
    return pd.DataFrame({"y": np.asarray(y, dtype=np.float64), "valid_y": 1},
                        index=candidates.index)


# --------------------------------------------------------------------------------------------
# Functions drawn from the BART prior
# --------------------------------------------------------------------------------------------


class TreeFunction(Benchmark):
    """A sum-of-trees function drawn from BARK's (BART's) prior: 10 continuous inputs.

    The forest structure comes from the engine's own prior sampler
    (``bofire_bark.engine.priors.sample_prior_forest``, depth prior ``alpha (1 + d)^-beta``,
    split rules uniform over each node's subspace) with a seeded generator state; every leaf
    gets a value drawn from N(0, 1/m). The function is the sum over the m trees of the value
    of the leaf that x reaches, so its prior variance at any point is 1. Deterministic given
    ``seed``; different seeds give different functions.
    """

    n_continuous = 10
    n_categorical = 0
    n_categories = 5

    def __init__(self, seed: int = 0, n_trees: int = 50, alpha: float = 0.95,
                 beta: float = 2.0, **kwargs) -> None:
        super().__init__(**kwargs)
        features = [ContinuousInput(key=f"x{i}", bounds=(0.0, 1.0))
                    for i in range(self.n_continuous)]
        features += [CategoricalInput(key=f"h{i}",
                                      categories=[f"c{k}" for k in range(self.n_categories)])
                     for i in range(self.n_categorical)]
        self._domain = Domain(inputs=Inputs(features=features), outputs=_outputs())
        self.seed = seed
        self.n_trees = n_trees
        self._draw(seed, n_trees, alpha, beta)

    def _draw(self, seed: int, m: int, alpha: float, beta: float) -> None:
        from bofire_bark.engine.priors import draw_prior_forest
        from bofire_bark.engine.rng import seed_states
        from bofire_bark.space import SplitSpace

        self._space = SplitSpace.from_inputs(self.domain.inputs)
        space = self._space.engine_arrays()
        # capacity 64 to start: the leaf values below are drawn per node slot
        forest = draw_prior_forest(seed_states(seed, 1)[0], space, m, alpha, beta, capacity=64)
        self._forest = forest
        self._kinds = space[0]
        # leaf values: one N(0, 1/m) per node slot (only leaves are ever read)
        rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(2)[1])
        self._leaf_values = rng.normal(0.0, 1.0 / math.sqrt(m), size=forest["feat"].shape)

    @property
    def forest(self) -> dict[str, np.ndarray]:
        """The forest arrays (see ``bofire_bark.engine.forest``)."""
        return self._forest

    def split_features(self) -> np.ndarray:
        """Feature index of every internal node (columns in ``domain.inputs.get_keys()``)."""
        feat = self._forest["feat"]
        return feat[feat >= 0]

    def evaluate_encoded(self, X: np.ndarray) -> np.ndarray:
        """f at rows of the engine's encoding of the inputs (N, D)."""
        from bofire_bark.engine.forest import route_all

        f = self._forest
        X = np.ascontiguousarray(X, dtype=np.float64)
        leaves = np.empty((f["feat"].shape[0], len(X)), dtype=np.int64)
        route_all(f["feat"], f["thr"], f["mask"], f["left"], f["right"], self._kinds, X, leaves)
        trees = np.arange(leaves.shape[0])[:, None]
        return self._leaf_values[trees, leaves].sum(axis=0)

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        return _result(candidates, self.evaluate_encoded(self._space.encode(candidates)))

    def get_optima(self) -> pd.DataFrame:
        """The exact global minimum (cached), proven by the acquisition's own grid
        branch-and-bound: the forest's leaf values are the mean of a one-sample "posterior"
        and the UCB weight is 0, so the search minimizes exactly this function."""
        if getattr(self, "_optimum", None) is None:
            self._optimum = self._solve_minimum()
        return self._optimum.copy()

    def _solve_minimum(self) -> pd.DataFrame:
        import types

        from bofire_bark.engine.forest import assign_columns
        from bofire_bark.optimize import grid as bnb
        from bofire_bark.optimize.constraints import active_delta, input_box
        from bofire_bark.optimize.ensemble import build_ensemble
        from bofire_bark.optimize.problem import AcquisitionProblem
        from bofire_bark.settings import AcquisitionSettings

        f = self._forest
        samples = {k: f[k][None] for k in ("feat", "thr", "mask", "left", "right")}
        samples["sigma2"] = np.array([1.0])
        box = input_box(self.domain, self._space)
        m, cap = f["feat"].shape
        lcol = np.full((m, cap), -1, dtype=np.int64)
        n_leaves = assign_columns(f["feat"], lcol, np.empty((m * cap, 2), dtype=np.int64))
        beta = np.zeros(n_leaves)
        beta[lcol[lcol >= 0]] = self._leaf_values[lcol >= 0]
        systems = types.SimpleNamespace(systems=[(lcol, np.zeros((n_leaves, n_leaves)), beta,
                                                   np.zeros((m, 0), dtype=np.int64))],
                                        X_known=np.zeros((0, len(self._kinds))))
        posterior = types.SimpleNamespace(samples=samples, kinds=self._kinds,
                                          X=np.zeros((0, len(self._kinds))))
        problem = AcquisitionProblem(box, build_ensemble(samples, box), (), 0.0, -1.0, (),
                                     active_delta(box))
        res = bnb.search_problem(problem, systems, posterior, AcquisitionSettings(
            time_limit=600.0, mip_gap=0.0, abs_gap=0.0), numba_loop=True)
        if res.status != "optimal":
            raise RuntimeError(f"tree-function minimum: search ended '{res.status}'")
        point = self._space.decode(res.x[None])
        row = point.iloc[0].to_dict()
        row["y"] = float(self.evaluate_encoded(res.x[None])[0])
        if abs(row["y"] + res.value) > 1e-9:
            raise RuntimeError("tree-function search and evaluation disagree")
        return pd.DataFrame([row])


class TreeFunctionCat(TreeFunction):
    """``TreeFunction`` on 10 continuous and 10 categorical inputs (5 categories each).

    Categorical splits send a random non-empty proper subset of the categories that reach a
    node to the left, so the categories change the value wherever such a split is on the
    path of x.
    """

    n_continuous = 10
    n_categorical = 10


# --------------------------------------------------------------------------------------------
# Partially discretized classics
# --------------------------------------------------------------------------------------------


def ackley(z: np.ndarray, a: float = 20.0, b: float = 0.2, c: float = 2 * math.pi) -> np.ndarray:
    """Ackley function on rows of ``z`` (N, d); 0 at the origin."""
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    d = z.shape[1]
    r = np.sqrt((z**2).sum(axis=1) / d)
    return -a * np.exp(-b * r) - np.exp(np.cos(c * z).sum(axis=1) / d) + a + math.e


def rosenbrock(z: np.ndarray) -> np.ndarray:
    """Rosenbrock function on rows of ``z`` (N, d); 0 at (1, ..., 1)."""
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    return (100.0 * (z[:, 1:] - z[:, :-1] ** 2) ** 2 + (1.0 - z[:, :-1]) ** 2).sum(axis=1)


class DiscreteAckley(Benchmark):
    """13-D Ackley on (x, i): x in [-1, 1]^3 continuous, i in {-1, 1}^10 (binary, as +-1).

    The origin is not in the space (the binaries are never 0). By symmetry every binary
    pattern is equally good and, with the binaries fixed, x = 0 minimizes both Ackley terms,
    so the minimum is ``ackley([0, 0, 0, 1, ..., 1]) = 20 (1 - exp(-0.2 sqrt(10/13)))``
    (about 3.2178).
    """

    n_continuous = 3
    n_binary = 10

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        features = [ContinuousInput(key=f"x{i}", bounds=(-1.0, 1.0))
                    for i in range(self.n_continuous)]
        features += [DiscreteInput(key=f"i{i}", values=[-1.0, 1.0])
                     for i in range(self.n_binary)]
        self._domain = Domain(inputs=Inputs(features=features), outputs=_outputs())

    def vector(self, candidates: pd.DataFrame) -> np.ndarray:
        keys = [f"x{i}" for i in range(self.n_continuous)]
        keys += [f"i{i}" for i in range(self.n_binary)]
        return candidates[keys].to_numpy(dtype=np.float64)

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        return _result(candidates, ackley(self.vector(candidates)))

    def get_optima(self) -> pd.DataFrame:
        row = {f"x{i}": 0.0 for i in range(self.n_continuous)}
        row.update({f"i{i}": 1.0 for i in range(self.n_binary)})
        z = np.array([list(row.values())])
        row["y"] = float(ackley(z)[0])
        return pd.DataFrame([row])


class DiscreteRosenbrock(Benchmark):
    """10-D Rosenbrock on (x, i): x in [-5, 10]^4 continuous, i in {-5, 0, 5, 10}^6 discrete.

    (1, ..., 1) is not in the space. The integer chain is best at i = 0 (each of i1..i5 then
    costs (1 - 0)^2 and every i_{k+1} - i_k^2 term vanishes; any 5 or 10 costs at least
    (1 - 5)^2 plus a coupling term far larger), and the continuous block then minimizes
    ``sum_k<4 [100 (x_{k+1} - x_k^2)^2 + (1 - x_k)^2] + 100 x4^4 + (1 - x4)^2``; the
    minimum below (about 6.2375) is ``discrete_rosenbrock_optimum()`` (many local solves; a
    test reruns it with fewer).
    """

    n_continuous = 4
    n_discrete = 6
    _OPT_X = (0.8265926, 0.6822064, 0.4623076, 0.2045625)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        features = [ContinuousInput(key=f"x{i}", bounds=(-5.0, 10.0))
                    for i in range(self.n_continuous)]
        features += [DiscreteInput(key=f"i{i}", values=[-5.0, 0.0, 5.0, 10.0])
                     for i in range(self.n_discrete)]
        self._domain = Domain(inputs=Inputs(features=features), outputs=_outputs())

    def vector(self, candidates: pd.DataFrame) -> np.ndarray:
        keys = [f"x{i}" for i in range(self.n_continuous)]
        keys += [f"i{i}" for i in range(self.n_discrete)]
        return candidates[keys].to_numpy(dtype=np.float64)

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        return _result(candidates, rosenbrock(self.vector(candidates)))

    def get_optima(self) -> pd.DataFrame:
        row = {f"x{i}": v for i, v in enumerate(self._OPT_X)}
        row.update({f"i{i}": 0.0 for i in range(self.n_discrete)})
        row["y"] = float(rosenbrock(np.array([list(row.values())]))[0])
        return pd.DataFrame([row])


class StyblinskiTang(Benchmark):
    """Styblinski-Tang, ``0.5 sum(x^4 - 16 x^2 + 5 x)`` on [-5, 5]^dim (SFU library);
    minimum ``-39.16617 dim`` at x_i = -2.903534."""

    X_OPT = -2.9035340276

    def __init__(self, dim: int = 10, **kwargs) -> None:
        super().__init__(**kwargs)
        self.dim = dim
        self._domain = Domain(
            inputs=Inputs(features=[ContinuousInput(key=f"x{i}", bounds=(-5.0, 5.0))
                                    for i in range(dim)]),
            outputs=_outputs())

    @staticmethod
    def value(z: np.ndarray) -> np.ndarray:
        z = np.atleast_2d(np.asarray(z, dtype=np.float64))
        return 0.5 * (z**4 - 16.0 * z**2 + 5.0 * z).sum(axis=1)

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        z = candidates[[f"x{i}" for i in range(self.dim)]].to_numpy(dtype=np.float64)
        return _result(candidates, self.value(z))

    def get_optima(self) -> pd.DataFrame:
        row = {f"x{i}": self.X_OPT for i in range(self.dim)}
        row["y"] = float(self.value(np.full((1, self.dim), self.X_OPT))[0])
        return pd.DataFrame([row])


class Hartmann6(Hartmann):
    """BoFire's 6-D Hartmann (minimum -3.32237), with outputs on the candidates' index
    (BoFire's own returns a fresh 0..n-1 index, which misaligns ``return_complete``)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(dim=6, **kwargs)

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        out = super()._f(candidates.reset_index(drop=True))
        out.index = candidates.index
        return out


class Hartmann6Spurious(SpuriousFeaturesWrapper):
    """Hartmann6 with ``n_spurious`` extra inputs ``x_spurious_<i>`` in [0, 1] that the value
    ignores (BoFire's ``SpuriousFeaturesWrapper``), plus the optimum the wrapper leaves out:
    Hartmann6's, whatever the spurious inputs (reported at 0.5)."""

    def __init__(self, n_spurious: int = 20, **kwargs) -> None:
        super().__init__(Hartmann6(), n_spurious_features=n_spurious, **kwargs)

    def get_optima(self) -> pd.DataFrame:
        opt = self._benchmark.get_optima()
        for key in self.domain.inputs.get_keys():
            if key not in opt:
                opt[key] = 0.5
        return opt


# --------------------------------------------------------------------------------------------
# Pest control
# --------------------------------------------------------------------------------------------


class PestControl(Benchmark):
    """Pest control over 25 stages, 5 choices each (Oh et al. 2019, COMBO; used again by
    Dreczkowski et al. 2023, MCBO): minimize money spent on pesticides plus the expected
    number of stages at which the pest fraction is above a threshold.

    Written here from the published description of the dynamics (not from any code):

    - The pest fraction p of each of 100 simulated sites starts from Beta(1, 30).
    - Each stage, with no control the pest spreads: ``p <- p + s (1 - p)``, with a spread
      rate s ~ Beta(1, 17/3); with pesticide k the pest is cut back: ``p <- (1 - c) p`` with
      a control rate c ~ Beta(1, b_k).
    - Pests develop tolerance: every use of pesticide k raises b_k by ``r_k / 25``, lowering
      its future effect. Initial b = (2, 3, 3, 5)/7 and r = (1, 2.5, 2, 0.5)/7 for pesticides
      1..4.
    - Prices are (1.0, 0.8, 0.7, 0.5) per use, less a bulk discount: pesticide k costs
      ``price_k (1 - discount_k n_k / 25)`` per use when it is used n_k times over the 25
      stages, discount = (0.2, 0.3, 0.3, 0.0).
    - Cost = sum of prices paid + sum over stages of the fraction of sites whose pest
      fraction is above U = 0.1 at the start of the stage.

    Determinism: the random rates come from one generator seeded with ``seed`` (default 0)
    for every evaluation, with all draws made in the same order whatever x is (the control
    rates of all four pesticides are drawn at every stage, used or not). So the objective is
    a deterministic function of x (common random numbers). The reference implementations
    re-seed differently, so absolute values differ from published curves; the structure and
    parameters are the published ones.
    """

    n_stages = 25
    n_simulations = 100
    choices = ("none", "pest1", "pest2", "pest3", "pest4")
    threshold = 0.1
    _price = np.array([1.0, 0.8, 0.7, 0.5])
    _discount = np.array([0.2, 0.3, 0.3, 0.0])
    _beta0 = np.array([2.0, 3.0, 3.0, 5.0]) / 7.0
    _tolerance = np.array([1.0, 2.5, 2.0, 0.5]) / 7.0

    def __init__(self, seed: int = 0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seed = seed
        self.keys = [f"s{i:02d}" for i in range(self.n_stages)]
        self._domain = Domain(
            inputs=Inputs(features=[CategoricalInput(key=k, categories=list(self.choices))
                                    for k in self.keys]),
            outputs=_outputs())
        rng = np.random.default_rng(seed)
        n = self.n_simulations
        self._p0 = rng.beta(1.0, 30.0, size=n)
        self._spread = rng.beta(1.0, 17.0 / 3.0, size=(self.n_stages, n))
        # control-rate draws through the inverse CDF of Beta(1, b): 1 - (1 - u)^(1/b),
        # with one uniform per (stage, pesticide, site) so b may change with tolerance
        self._u = rng.uniform(size=(self.n_stages, 4, n))

    def score(self, choice: np.ndarray) -> float:
        """Cost of one schedule: ``choice`` (25,) ints in 0..4 (0 = no pesticide)."""
        choice = np.asarray(choice, dtype=np.int64)
        b = self._beta0.copy()
        counts = np.bincount(choice, minlength=5)[1:]
        p = self._p0.copy()
        cost = 0.0
        for t, k in enumerate(choice):
            cost += float(np.mean(p > self.threshold))
            if k == 0:
                p = p + self._spread[t] * (1.0 - p)
            else:
                j = k - 1
                rate = 1.0 - (1.0 - self._u[t, j]) ** (1.0 / b[j])
                p = (1.0 - rate) * p
                b[j] += self._tolerance[j] / self.n_stages
                cost += self._price[j] * (1.0 - self._discount[j] * counts[j] / self.n_stages)
        return cost

    def codes(self, candidates: pd.DataFrame) -> np.ndarray:
        lookup = {c: i for i, c in enumerate(self.choices)}
        return np.vectorize(lookup.__getitem__)(candidates[self.keys].to_numpy(dtype=object))

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        codes = self.codes(candidates).reshape(len(candidates), self.n_stages)
        return _result(candidates, [self.score(row) for row in codes])


# --------------------------------------------------------------------------------------------
# A constrained mixed problem
# --------------------------------------------------------------------------------------------


class MixedConstrained(Benchmark):
    """A toy formulation problem: three fractions, a temperature and a catalyst.

    Inputs: ``x1, x2, x3`` in [0, 1] with ``x1 + x2 + x3 = 1`` (linear equality), ``t`` in
    [0, 1], ``catalyst`` in {A, B, C}. Nonlinear inequality ``x1 * t <= 0.35`` (e.g. a heat
    budget of the most reactive component). Minimize

        y = 2 (x1 - a)^2 + 2 (x2 - b)^2 + (t - t0)^2 + 0.1 sin(6 x3) + offset

    with (a, b, t0, offset) per catalyst: A (0.7, 0.2, 0.9, -0.3), B (0.2, 0.5, 0.3, 0.0),
    C (0.4, 0.4, 0.6, -0.1). A's unconstrained optimum violates the nonlinear constraint,
    and the best point of A on its boundary (with x3 = 0; y about -0.1220) is still the
    global optimum (B: 0.0452, C: -0.0600), so a method must both choose the right category
    and respect the constraint. The optimum below is ``mixed_constrained_optimum()`` (many
    SLSQP solves per catalyst; a test reruns it with fewer).
    """

    params = {"A": (0.7, 0.2, 0.9, -0.3), "B": (0.2, 0.5, 0.3, 0.0), "C": (0.4, 0.4, 0.6, -0.1)}
    _OPT = {"x1": 0.67686942, "x2": 0.32313058, "x3": 0.0, "t": 0.35 / 0.67686942,
            "catalyst": "A"}

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._domain = Domain(
            inputs=Inputs(features=[
                ContinuousInput(key="x1", bounds=(0.0, 1.0)),
                ContinuousInput(key="x2", bounds=(0.0, 1.0)),
                ContinuousInput(key="x3", bounds=(0.0, 1.0)),
                ContinuousInput(key="t", bounds=(0.0, 1.0)),
                CategoricalInput(key="catalyst", categories=list(self.params)),
            ]),
            outputs=_outputs(),
            constraints=Constraints(constraints=[
                LinearEqualityConstraint(features=["x1", "x2", "x3"],
                                         coefficients=[1.0, 1.0, 1.0], rhs=1.0),
                NonlinearInequalityConstraint(features=["x1", "t"],
                                              expression="x1 * t - 0.35"),
            ]))

    @classmethod
    def value(cls, x1, x2, x3, t, catalyst) -> np.ndarray:
        p = np.array([cls.params[c] for c in np.atleast_1d(catalyst)])
        a, b, t0, off = p.T
        return (2.0 * (x1 - a) ** 2 + 2.0 * (x2 - b) ** 2 + (t - t0) ** 2
                + 0.1 * np.sin(6.0 * x3) + off)

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        c = candidates
        y = self.value(*(c[k].to_numpy(dtype=np.float64) for k in ("x1", "x2", "x3", "t")),
                       c["catalyst"].to_numpy())
        return _result(candidates, y)

    def get_optima(self) -> pd.DataFrame:
        o = self._OPT
        y = self.value(o["x1"], o["x2"], o["x3"], o["t"], [o["catalyst"]])
        return pd.DataFrame([{**o, "y": float(y[0])}])


# --------------------------------------------------------------------------------------------
# Hyperparameter tuning (the paper's applied benchmarks from MCBO)
# --------------------------------------------------------------------------------------------


class SVRBench(Benchmark):
    """Feature selection and hyperparameters of an epsilon-SVR (the paper's SVRBench, from
    Dreczkowski et al. 2023, MCBO): 3 continuous inputs on a log10 scale and 50 binary ones.

    - ``log_epsilon`` in [-2, 0], ``log_C`` in [-2, 2], ``log_gamma`` in [-1, 1]: the SVR's
      ``epsilon = 10^log_epsilon``, ``C = 10^log_C`` and RBF ``gamma = 10^log_gamma / k``
      with k the number of features included (MCBO's scaling of gamma).
    - ``h00`` .. ``h49`` in {exclude, include} (categorical, as the paper's table writes
      them): whether the SVR sees feature j.

    Minimized: the validation mean squared error of the SVR (in the target's units), averaged
    over five random 70/30 train/validation splits (``random_state`` 0..4). Per split, the
    target is standardized with the training rows' mean and deviation and the features are
    min-max scaled on the training rows (both as MCBO does); with no feature included the
    prediction is the training mean.

    Data (differs from the paper): MCBO uses the UCI slice-localization set (its 50 features
    that an XGBoost regressor ranks most important on 10,000 sampled rows), which needs a
    download. Here the data is scikit-learn's in-package diabetes set (442 patients, 10
    features), expanded deterministically to 50 features: the 10 standardized features and
    their 55 products of degree 2 (squares and pairs), of which the 50 with the largest
    absolute correlation with the target on all rows are kept, most correlated first (a
    ranking on all rows, as MCBO ranks on its sample). So the pool mixes informative and weak
    features, and leaving some out can help. One evaluation takes 0.03-0.2 s of CPU (five fits
    on 309 rows; the most with C = 100 and gamma = 10). Deterministic: the splits are fixed
    and libsvm's fit has no randomness.
    """

    n_features = 50
    n_splits = 5
    validation_share = 0.3
    categories = ("exclude", "include")

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.keys = [f"h{j:02d}" for j in range(self.n_features)]
        features = [ContinuousInput(key="log_epsilon", bounds=(-2.0, 0.0)),
                    ContinuousInput(key="log_C", bounds=(-2.0, 2.0)),
                    ContinuousInput(key="log_gamma", bounds=(-1.0, 1.0))]
        features += [CategoricalInput(key=k, categories=list(self.categories))
                     for k in self.keys]
        self._domain = Domain(inputs=Inputs(features=features), outputs=_outputs())
        self.X, self.y, self.feature_names = self.data()
        from sklearn.model_selection import train_test_split

        self._splits = [train_test_split(self.X, self.y, test_size=self.validation_share,
                                         random_state=s) for s in range(self.n_splits)]

    @classmethod
    def data(cls) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """The 50 features (442, 50), the target and the features' names (``"bmi"``,
        ``"bmi*s5"``, ...), most correlated with the target first."""
        from sklearn.datasets import load_diabetes

        raw = load_diabetes(scaled=False)
        Z = (raw.data - raw.data.mean(axis=0)) / raw.data.std(axis=0)
        names = list(raw.feature_names)
        cols, col_names = [Z[:, i] for i in range(Z.shape[1])], list(names)
        for i in range(Z.shape[1]):
            for j in range(i, Z.shape[1]):
                cols.append(Z[:, i] * Z[:, j])
                col_names.append(f"{names[i]}*{names[j]}")
        F = np.column_stack(cols)
        y = np.asarray(raw.target, dtype=np.float64)
        Fc = F - F.mean(axis=0)
        corr = np.abs(Fc.T @ (y - y.mean())) / (np.linalg.norm(Fc, axis=0)
                                                 * np.linalg.norm(y - y.mean()))
        # stable sort: ties (none in this data) keep the order of construction
        order = np.argsort(-corr, kind="stable")[:cls.n_features]
        return F[:, order], y, [col_names[k] for k in order]

    def score(self, mask: np.ndarray, log_epsilon: float, log_C: float,
              log_gamma: float) -> float:
        """Mean validation MSE over the splits for one point (``mask``: 50 booleans)."""
        from sklearn.preprocessing import MinMaxScaler
        from sklearn.svm import SVR

        mask = np.asarray(mask, dtype=bool)
        errors = []
        for X_tr, X_va, y_tr, y_va in self._splits:
            mean, std = y_tr.mean(), y_tr.std()
            if not mask.any():
                pred = np.full(len(y_va), mean)
            else:
                scaler = MinMaxScaler().fit(X_tr[:, mask])
                svr = SVR(epsilon=10.0**log_epsilon, C=10.0**log_C,
                          gamma=10.0**log_gamma / mask.sum())
                svr.fit(scaler.transform(X_tr[:, mask]), (y_tr - mean) / std)
                pred = svr.predict(scaler.transform(X_va[:, mask])) * std + mean
            errors.append(np.mean((y_va - pred) ** 2))
        return float(np.mean(errors))

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        masks = candidates[self.keys].to_numpy(dtype=object) == "include"
        logs = candidates[["log_epsilon", "log_C", "log_gamma"]].to_numpy(dtype=np.float64)
        return _result(candidates, [self.score(m, *v) for m, v in zip(masks, logs, strict=True)])


class XGBoostMNIST(Benchmark):
    """Hyperparameters of an XGBoost classifier of handwritten digits (the paper's
    XGBoostMNIST, from Dreczkowski et al. 2023, MCBO): 4 continuous, 1 discrete and 3
    categorical inputs.

    - ``log_learning_rate`` in [-5, 0] (``learning_rate = 10^log_learning_rate``),
      ``min_split_loss`` in [0, 10], ``subsample`` in [0.001, 1], ``reg_lambda`` in [0, 5]
      (the paper's table names x3 "min split loss" a second time; MCBO's x3 is the row
      subsample ratio, with these bounds).
    - ``max_depth`` in {1, ..., 10} (discrete).
    - ``booster`` in {gbtree, dart}, ``grow_policy`` in {depthwise, lossguide},
      ``objective`` in {multi:softmax, multi:softprob} (categorical).

    Minimized: the validation error, 1 - accuracy on the validation rows.

    Data: scikit-learn's in-package 8x8 digits (1,797 images, 64 pixels, 10 classes), which is
    also what MCBO loads for its "mnist" task (not the 28x28 MNIST). MCBO trains on a
    stratified 70% (1,257 images); here a stratified split (``random_state`` 0) trains on
    400 images and validates on the other 1,397, because XGBoost's dart booster costs about
    the square of the rounds times the rows (about 14 s of CPU per evaluation on 1,257 rows,
    about 3.5 s on 400; gbtree takes about 0.2 s). The other settings are XGBoost's
    defaults, written out so that a change of default does not change the benchmark: 100
    rounds, ``tree_method="hist"``, one thread, ``random_state=0`` (subsampling and dart's
    draws), so an evaluation is deterministic for a given XGBoost build. Needs ``xgboost``
    (the ``lab`` extra: ``xgboost-cpu``).
    """

    n_train = 400
    n_rounds = 100
    continuous = {"log_learning_rate": (-5.0, 0.0), "min_split_loss": (0.0, 10.0),
                  "subsample": (0.001, 1.0), "reg_lambda": (0.0, 5.0)}
    choices = {"booster": ("gbtree", "dart"), "grow_policy": ("depthwise", "lossguide"),
               "objective": ("multi:softmax", "multi:softprob")}

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        features = [ContinuousInput(key=k, bounds=b) for k, b in self.continuous.items()]
        features.append(DiscreteInput(key="max_depth", values=[float(d) for d in range(1, 11)]))
        features += [CategoricalInput(key=k, categories=list(c)) for k, c in self.choices.items()]
        self._domain = Domain(inputs=Inputs(features=features), outputs=_outputs())
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

        digits = load_digits()
        self.X_train, self.X_val, self.y_train, self.y_val = train_test_split(
            digits.data, digits.target, train_size=self.n_train, stratify=digits.target,
            random_state=0)

    def params(self, row: pd.Series) -> dict:
        """XGBoost's keyword arguments for one candidate row."""
        params = {k: float(row[k]) for k in self.continuous if k != "log_learning_rate"}
        params["learning_rate"] = 10.0 ** float(row["log_learning_rate"])
        params["max_depth"] = int(round(float(row["max_depth"])))
        params.update({k: str(row[k]) for k in self.choices})
        return params

    def score(self, params: dict) -> float:
        """1 - validation accuracy of a classifier trained with ``params``."""
        try:
            from xgboost import XGBClassifier
        except ImportError as err:
            raise ImportError("XGBoostMNIST needs xgboost: pip install 'bofire-bark[lab]' "
                              "(or xgboost-cpu)") from err
        model = XGBClassifier(n_estimators=self.n_rounds, tree_method="hist", n_jobs=1,
                              random_state=0, **params)
        model.fit(self.X_train, self.y_train)
        return float(np.mean(model.predict(self.X_val) != self.y_val))

    def _f(self, candidates: pd.DataFrame) -> pd.DataFrame:
        return _result(candidates, [self.score(self.params(row))
                                    for _, row in candidates.iterrows()])


# --------------------------------------------------------------------------------------------
# Where the typed-in optima come from (tests rerun these at reduced effort)
# --------------------------------------------------------------------------------------------


def discrete_rosenbrock_optimum(n_starts: int = 200, seed: int = 0) -> tuple[np.ndarray, float]:
    """``DiscreteRosenbrock._OPT_X`` and its value: the best of ``n_starts`` L-BFGS-B solves
    of the continuous block with every integer at 0 (the best integer chain, see the class)."""
    from scipy.optimize import minimize

    n_int = DiscreteRosenbrock.n_discrete

    def f(x):
        return float(rosenbrock(np.r_[x, np.zeros(n_int)][None])[0])

    rng = np.random.default_rng(seed)
    best = None
    for _ in range(n_starts):
        r = minimize(f, rng.uniform(-5, 10, DiscreteRosenbrock.n_continuous), method="L-BFGS-B",
                     bounds=[(-5.0, 10.0)] * DiscreteRosenbrock.n_continuous,
                     options={"ftol": 1e-15, "gtol": 1e-10})
        if best is None or r.fun < best.fun:
            best = r
    return best.x, float(best.fun)


def mixed_constrained_optimum(n_starts: int = 50, seed: int = 0) -> tuple[dict, float]:
    """``MixedConstrained._OPT`` and its value: the best of ``n_starts`` SLSQP solves per
    catalyst over (x1, x2, t), x3 = 1 - x1 - x2, under both constraints."""
    from scipy.optimize import minimize

    cons = [{"type": "ineq", "fun": lambda v: 0.35 - v[0] * v[2]},
            {"type": "ineq", "fun": lambda v: 1.0 - v[0] - v[1]}]
    rng = np.random.default_rng(seed)
    best = (None, np.inf)
    for cat in MixedConstrained.params:
        def g(v, cat=cat):
            return float(MixedConstrained.value(v[0], v[1], 1 - v[0] - v[1], v[2], [cat])[0])

        for _ in range(n_starts):
            r = minimize(g, rng.uniform(0, 0.5, 3), method="SLSQP", bounds=[(0, 1)] * 3,
                         constraints=cons, options={"ftol": 1e-14, "maxiter": 500})
            if r.success and r.fun < best[1]:
                x1, x2, t = r.x
                best = ({"x1": x1, "x2": x2, "x3": max(0.0, 1 - x1 - x2), "t": t,
                         "catalyst": cat}, float(r.fun))
    return best


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------

BENCHMARKS = {
    "TreeFunction": TreeFunction,
    "TreeFunctionCat": TreeFunctionCat,
    "DiscreteAckley": DiscreteAckley,
    "DiscreteRosenbrock": DiscreteRosenbrock,
    "PestControl": PestControl,
    "Hartmann6": Hartmann6,
    "StyblinskiTang10": lambda: StyblinskiTang(dim=10),
    "Hartmann6Spurious20": lambda: Hartmann6Spurious(n_spurious=20),
    "MixedConstrained": MixedConstrained,
}

# Opt-in by name (see the module docstring): they train a model per evaluation, and
# XGBoostMNIST needs xgboost.
TUNING_BENCHMARKS = {
    "SVRBench": SVRBench,
    "XGBoostMNIST": XGBoostMNIST,
}


def make_benchmark(name: str) -> Benchmark:
    """A benchmark by its name in ``BENCHMARKS`` or ``TUNING_BENCHMARKS`` (fixed seeds: one
    function per name)."""
    known = {**BENCHMARKS, **TUNING_BENCHMARKS}
    try:
        return known[name]()
    except KeyError:
        raise ValueError(f"unknown benchmark {name!r}; choose from {sorted(known)}") from None

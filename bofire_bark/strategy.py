"""The BARK strategy as a BoFire functional class: tell fits, ask solves the acquisition MIP."""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import replace

import numpy as np
import pandas as pd
from bofire.data_models.domain.api import Outputs
from bofire.data_models.features.api import ContinuousOutput
from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective
from bofire.strategies.predictives.predictive import PredictiveStrategy

from bofire_bark.data_models.strategy import BARKStrategy as DataModel
from bofire_bark.data_models.surrogate import BARKSurrogate as SurrogateDataModel
from bofire_bark.jit import compiling
from bofire_bark.optimize.outputs import objective_outputs
from bofire_bark.supported import GOAL_OBJECTIVES, acquisition_rule
from bofire_bark.surrogate import BARKSurrogate, _bar, log_outside_bounds

logger = logging.getLogger(__name__)


def surrogate_data_model(data_model: DataModel, output=None,
                         index: int = 0) -> SurrogateDataModel:
    """The surrogate's data model for one output: the strategy's settings on the domain's
    inputs.

    ``output`` defaults to the first goal declared in the domain. The strategy's seed seeds the
    chains unless the surrogate settings carry their own; the ``index``-th modelled output
    (from 0) gets a seed derived from it, so outputs' chains differ and runs replay.
    """
    settings = data_model.surrogate_specs.model_dump(exclude={"type"})
    if settings.get("seed") is None:
        settings["seed"] = data_model.seed
    if settings["seed"] is not None and index > 0:
        settings["seed"] = int(np.random.SeedSequence([settings["seed"], index])
                               .generate_state(1)[0])
    if output is None:
        output = default_output(data_model.domain)
    return SurrogateDataModel(inputs=data_model.domain.inputs,
                              outputs=Outputs(features=[output]), **settings)


class BARKStrategy(PredictiveStrategy):
    """Bayesian optimization with BARK (Boyne et al., ICML 2025).

    ``tell`` fits BARK's posterior of every output with an objective (continuing the chains
    after the first fit; each output on its own valid measurements); ``ask(n)`` maximizes the
    acquisition averaged over all posterior samples globally, n times, each time conditioning
    every sample's GP on the points already chosen (and on BoFire's pending candidates) so the
    batch spreads out. ``acquisition_function`` (BoFire's qUCB, qEI, qLogEI, qNEI, qLogNEI,
    qPI) picks the rule for one objective (``bofire_bark.optimize.rules``). With several
    objectives or output limits the acquisition combines the outputs' integrated UCBs
    (``bofire_bark.optimize.outputs``), with fresh Chebyshev weights for every candidate.

    A finite domain within ``LIBRARY_LIMIT`` points is enumerated instead
    (``bofire_bark.optimize.library``): the exact best candidate, never a point already
    measured or pending unless ``allow_repeats``.

    Attributes:
        surrogates: Output key -> that output's ``BARKSurrogate`` (its own chains, seed and
            diagnostics), for every output of the domain: ``surrogates["yield"].predict``,
            ``.feature_relevance()``, ``.to_inference_data()``, ``.last_fit``.
        surrogate: ``surrogates`` of the default output: the first output with a goal
            (Maximize, Minimize, CloseToTarget) in the order the domain declares them (not
            BoFire's ``outputs.get()``, which sorts by key). ``feature_relevance``,
            ``last_fit`` and ``model_of`` take ``output=`` for another; with several outputs
            the choice is logged at INFO when the strategy is built.
        last_results: The search results (``summary()``) of the last ask, one per candidate.
    """

    def __init__(self, data_model: DataModel, **kwargs):
        super().__init__(data_model=data_model, **kwargs)
        self.acquisition_function = data_model.acquisition_function
        # the search's settings, built once; each solve replaces only the seed
        self.settings = acquisition_settings(data_model)
        self.plan = None  # which search answers an ask: decided at the first ask, then kept
        self.scalarization = data_model.scalarization
        self.ref_point = data_model.ref_point
        self.progress_bar = data_model.progress_bar
        self.allow_repeats = data_model.allow_repeats
        self._library = None  # the enumerated feasible points, built at the first ask
        # every output is modelled (BoFire's candidates carry predictions of all of them);
        # the acquisition uses those with an objective
        self.surrogates = {
            f.key: BARKSurrogate(surrogate_data_model(data_model, f, k))
            for k, f in enumerate(self.domain.outputs.get())}
        modelled = objective_outputs(self.domain)
        for surrogate in self.surrogates.values():
            surrogate.progress_bar = self.progress_bar
            surrogate.warn_outside_bounds = len(self.surrogates) == 1  # else _fit warns once
        goal = default_output(self.domain)
        if len(self.surrogates) > 1:
            logger.info(
                "BARK: %d outputs, one model each (strategy.surrogates[key]); "
                "strategy.surrogate, feature_relevance() and last_fit() use %r, the first goal "
                "declared in the domain, unless given output=", len(self.surrogates), goal.key)
        # the first goal's surrogate: the model of a single-objective strategy
        self.surrogate = self.surrogates[goal.key]
        self.space = self.surrogate.space
        self.output_key = goal.key
        self.sign = 1.0 if isinstance(goal.objective, MaximizeObjective) else -1.0
        self.single = len(modelled) == 1 and type(goal.objective) in (
            MaximizeObjective, MinimizeObjective)
        self.last_results: list = []
        self._caller: int | None = None  # the thread inside ask or tell (_one_caller)
        self._caller_lock = threading.Lock()

    @contextlib.contextmanager
    def _one_caller(self, what: str):
        """Refuse a second thread while one is inside ``ask`` or ``tell`` (its own nested
        calls pass): a strategy holds experiments, pending candidates, chains and a seed
        stream, and two threads interleaving them would mix runs silently."""
        me = threading.get_ident()
        with self._caller_lock:
            if self._caller not in (None, me):
                raise RuntimeError(
                    f"BARKStrategy.{what}: this strategy is in use by another thread; a "
                    "strategy is not thread-safe: give each thread its own "
                    "(strategies.map(data_model)) or hold a lock around ask and tell")
            outer = self._caller is None
            self._caller = me
        try:
            yield
        finally:
            if outer:
                with self._caller_lock:
                    self._caller = None

    def ask(self, *args, **kwargs) -> pd.DataFrame:
        with self._one_caller("ask"):
            return super().ask(*args, **kwargs)

    def tell(self, *args, **kwargs):
        with self._one_caller("tell"):
            return super().tell(*args, **kwargs)

    @property
    def input_preprocessing_specs(self):
        return {}  # BARK splits raw inputs; categories stay strings

    def has_sufficient_experiments(self) -> bool:
        """Two valid measurements of every output (each output's own rows)."""
        if self.experiments is None:
            return False
        return all(
            len(self.domain.outputs.preprocess_experiments_one_valid_output(
                key, self.experiments)) >= 2 for key in self.surrogates)

    def _fit(self, experiments: pd.DataFrame) -> None:
        if len(self.surrogates) > 1:
            log_outside_bounds(self.space, self.space.encode(experiments))
        # each surrogate keeps the rows where its own output is valid
        for key, surrogate in self.surrogates.items():
            surrogate.fit(experiments)
            top = surrogate.feature_relevance().head(3)
            measure = "split_prob" if top["split_prob"].notna().any() else "split_share"
            logger.info("BARK '%s': most relevant inputs (%s) %s", key, measure, ", ".join(
                f"{name} {value:.2f}" for name, value in top[measure].items()))
        if len(self.surrogates) > 1:
            # each output has its own chains: a fit costs about the sum of the outputs' fits
            fits = {key: sur.last_fit for key, sur in self.surrogates.items()}
            logger.info("BARK: fitted %d outputs in %.1f s (%s)", len(fits),
                        sum(f.seconds for f in fits.values()), ", ".join(
                            f"{key} {f.seconds:.1f} s over {f.sweeps} sweeps"
                            for key, f in fits.items()))

    def model_of(self, output: str | None = None) -> BARKSurrogate:
        """The fitted-or-not ``BARKSurrogate`` of ``output`` (default: ``self.surrogate``, the
        first goal declared in the domain); the same object as ``surrogates[output]``.

        Raises:
            ValueError: ``output`` is not an output of the domain.
        """
        if output is None:
            return self.surrogate
        if output not in self.surrogates:
            raise ValueError(f"output: no model of output {output!r}; outputs: "
                             f"{list(self.surrogates)}")
        return self.surrogates[output]

    def feature_relevance(self, output: str | None = None, detail: bool = False
                          ) -> pd.DataFrame:
        """``BARKSurrogate.feature_relevance`` of an output's model (default: the first goal
        declared in the domain): one row per BoFire input, most relevant first; ``detail``:
        one row per descriptor or fingerprint bit, with the bits' substructures."""
        return self.model_of(output).feature_relevance(detail=detail)

    def last_fit(self, output: str | None = None):
        """What the last fit of an output's model did (``diagnostics.FitDiagnostics``: sweeps,
        seconds, R-hat, ESS; None before the first fit); default: the first goal declared."""
        return self.model_of(output).last_fit

    def fit_summary(self) -> pd.DataFrame:
        """One row per output (index ``output``, modelled order) of its last fit:
        ``n_points``, ``sweeps`` per chain, ``seconds``, the largest ``rhat`` and ``warned``
        (NaN and False before a fit); a fit's cost is about the sum of ``seconds``."""
        rows = {}
        for key, sur in self.surrogates.items():
            f = sur.last_fit
            rows[key] = {"n_points": np.nan if f is None else f.n_points,
                         "sweeps": np.nan if f is None else f.sweeps,
                         "seconds": np.nan if f is None else f.seconds,
                         "rhat": np.nan if f is None else max(f.rhat.values(),
                                                               default=np.nan),
                         "warned": False if f is None else f.warned}
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("output")

    def _predict(self, transformed: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(n, outputs) means and sds in the order of BoFire's prediction columns."""
        X = transformed[self.domain.inputs.get_keys()]
        keys = self.domain.outputs.get_keys(ContinuousOutput)
        preds = np.empty((len(X), len(keys)))
        sds = np.empty((len(X), len(keys)))
        for i, key in enumerate(keys):
            mean, sd = self.surrogates[key]._predict(X)
            preds[:, i], sds[:, i] = mean.ravel(), sd.ravel()
        return preds, sds

    def _ask(self, candidate_count: int | None = None) -> pd.DataFrame:
        n = candidate_count or 1
        if any(sur.posterior is None for sur in self.surrogates.values()):
            raise RuntimeError("BARKStrategy has no fitted model: tell it experiments first")
        pending = []
        if self.candidates is not None and len(self.candidates):
            pending.append(self.space.encode(self.candidates))
        library = self.library()
        measured = None
        if library is not None and not self.allow_repeats and self.experiments is not None:
            measured = self.space.encode(self.experiments)
        from bofire_bark.optimize.entry import Batch

        batch = Batch(n)  # the searches of this ask share their work
        chosen = []
        self.last_results = []
        with _bar(self.progress_bar, n, "BARK ask") as bar, compiling("the ask", "engine",
                                                                      "optimize"):
            for i in range(n):
                result = self._solve(pending, library, measured, batch)
                # a repeat of a point already in the batch (the acquisition can still peak in
                # the same cell after conditioning): condition on it once more and re-solve
                for _ in range(2):
                    if not _repeats(result.x, pending):
                        break
                    pending.append(result.x.reshape(1, -1))
                    result = self._solve(pending, library, measured, batch)
                if _repeats(result.x, pending):
                    logger.warning("BARK ask %d/%d repeats an earlier candidate of this batch",
                                   i + 1, n)
                self.last_results.append(result)
                logger.info("BARK ask %d/%d: %s", i + 1, n, result.summary())
                chosen.append(result.candidate)
                pending.append(result.x.reshape(1, -1))
                bar.update(1)
        return pd.concat(chosen, ignore_index=True)[self.domain.inputs.get_keys()]

    def search_plan(self):
        """Which search answers this strategy's asks (``space.finite.plan_search``), decided
        once."""
        if self.plan is None:
            from bofire_bark.space.finite import plan_search

            self.plan = plan_search(self.domain, self.settings, self.space)
        return self.plan

    def library(self):
        """The feasible points of the domain when the plan enumerates it, else None (built
        once); why a finite domain is not enumerated is logged at every ask."""
        plan = self.search_plan()
        if plan.note is not None:
            logger.info("BARK ask: %s", plan.note)
        if plan.search != "library":
            return None
        if self._library is None:
            from bofire_bark.optimize.library import build_library

            self._library = build_library(self.domain, self.space)
            logger.info("BARK ask: the finite domain is enumerated (%d of its %d points "
                        "satisfy the constraints)", len(self._library.X), self._library.size)
        return self._library

    def _solve(self, pending: list[np.ndarray], library=None,
               measured: np.ndarray | None = None, batch=None):
        # a fresh seed from BoFire's seed stream for every solve: successive asks differ,
        # yet a strategy built with the same seed replays the same run
        from bofire_bark.optimize import solve_acquisition

        seed = self._get_seed()
        pending = np.vstack(pending) if pending else None
        exclude = None
        if library is not None and not self.allow_repeats:
            blocks = [b for b in (measured, pending) if b is not None]
            exclude = np.vstack(blocks) if blocks else None
        acq = self.acquisition(seed)
        if self.rule == "ucb" and len(acq.goals) > 1:
            logger.info("BARK acquisition weights %s", dict(zip(
                [g.key for g in acq.goals], np.round(acq.weights, 3).tolist(), strict=True)))
        return solve_acquisition(self.search_plan(), self.posteriors(), acq, self.domain,
                                 self.space, self.acquisition_settings(seed), pending=pending,
                                 library=library, exclude=exclude, batch=batch)

    @property
    def rule(self) -> str:
        """The acquisition rule (``optimize.rules``) of ``acquisition_function``."""
        return self.settings.rule

    @property
    def kappa(self) -> float:
        """The UCB's weight (qUCB's sqrt(beta); 1.96, unused, under another rule)."""
        return self.settings.kappa

    @property
    def solver(self) -> str:
        return self.settings.solver

    def acquisition_settings(self, seed: int | None = None):
        """The ``optimize.AcquisitionSettings`` of a solve: this strategy's, with ``seed``."""
        return replace(self.settings, seed=seed)

    def posteriors(self) -> dict:
        """Output key -> fitted ``engine.Posterior`` of every output."""
        return {key: sur.posterior for key, sur in self.surrogates.items()}

    def acquisition(self, seed: int | None = None):
        """The acquisition over the modelled outputs, Chebyshev weights drawn from ``seed``
        (``bofire_bark.optimize.outputs``)."""
        from bofire_bark.optimize.outputs import draw_weights, output_acquisition

        n_goals = sum(type(f.objective) in GOAL_OBJECTIVES
                      for f in objective_outputs(self.domain))
        weights = draw_weights(n_goals, np.random.default_rng(seed))
        return output_acquisition(self.domain, self.posteriors(), weights, self.scalarization,
                                  reference=self.reference_point())

    def reference_point(self) -> dict[str, float] | None:
        """``ref_point`` in the outputs' units, moving values taken from the experiments by
        BoFire's own ``infer_ref_point``; None when not given (the search infers it as Mobo
        does)."""
        if self.ref_point is None:
            return None
        from bofire.data_models.strategies.api import ExplicitReferencePoint, FixedReferenceValue
        from bofire.utils.multiobjective import infer_ref_point

        ref = self.ref_point
        if not isinstance(ref, ExplicitReferencePoint):
            ref = ExplicitReferencePoint(
                values={k: FixedReferenceValue(value=v) for k, v in ref.items()})
        experiments = self.domain.outputs.preprocess_experiments_all_valid_outputs(
            self.experiments)
        return {k: float(v) for k, v in infer_ref_point(
            self.domain, experiments, return_masked=False, reference_point=ref).items()}


def default_output(domain):
    """The output a strategy reports on when not told which: the first output with a goal
    (``GOAL_OBJECTIVES``) in the order the user declared them (``domain.outputs.features``;
    BoFire's ``outputs.get()`` sorts by key, which would pick ``cost`` before ``yield``)."""
    goals = [f for f in domain.outputs.features
             if f.objective is not None and type(f.objective) in GOAL_OBJECTIVES]
    if not goals:
        raise ValueError(f"domain: no output has a goal objective; outputs: "
                         f"{domain.outputs.get_keys()}")
    return goals[0]


def acquisition_settings(data_model: DataModel):
    """The data model's ``acquisition_optimizer`` unchanged, with the rule and weight of its
    ``acquisition_function`` (seed None: each solve sets its own)."""
    from bofire_bark.settings import AcquisitionSettings

    rule, kappa = acquisition_rule(data_model.acquisition_function)
    return AcquisitionSettings.from_search(data_model.acquisition_optimizer, rule=rule,
                                           kappa=kappa, seed=None,
                                           output_limits=data_model.output_limits)


def _repeats(x: np.ndarray, pending: list[np.ndarray]) -> bool:
    """Whether encoded point ``x`` equals a row of the pending blocks."""
    return any(np.any(np.all(np.isclose(block, x, rtol=0.0, atol=1e-9), axis=1))
               for block in pending)

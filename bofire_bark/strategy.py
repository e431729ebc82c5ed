"""The BARK strategy as a BoFire functional class: tell fits, ask solves the acquisition MIP."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from bofire.data_models.objectives.api import MaximizeObjective
from bofire.strategies.predictives.predictive import PredictiveStrategy

from bofire_bark.data_models.strategy import BARKStrategy as DataModel
from bofire_bark.data_models.surrogate import BARKSurrogate as SurrogateDataModel
from bofire_bark.surrogate import BARKSurrogate, _bar

logger = logging.getLogger(__name__)


def surrogate_data_model(data_model: DataModel) -> SurrogateDataModel:
    """The surrogate's data model: the strategy's settings on the domain's inputs and output.

    The strategy's seed seeds the chains unless the surrogate settings carry their own.
    """
    settings = data_model.surrogate_specs.model_dump(exclude={"type"})
    if settings.get("seed") is None:
        settings["seed"] = data_model.seed
    return SurrogateDataModel(inputs=data_model.domain.inputs,
                              outputs=data_model.domain.outputs, **settings)


class BARKStrategy(PredictiveStrategy):
    """Bayesian optimization with BARK (Boyne et al., ICML 2025).

    ``tell`` fits BARK's posterior (continuing the chains after the first fit); ``ask(n)``
    maximizes the integrated UCB over all posterior samples with a MIP, n times, each time
    conditioning every sample's GP on the points already chosen (and on BoFire's pending
    candidates) so the batch spreads out.
    """

    def __init__(self, data_model: DataModel, **kwargs):
        super().__init__(data_model=data_model, **kwargs)
        self.kappa = data_model.kappa
        self.solver = data_model.solver
        self.time_limit = data_model.time_limit
        self.mip_gap = data_model.mip_gap
        self.abs_gap = data_model.abs_gap
        self.n_start_points = data_model.n_start_points
        self.progress_bar = data_model.progress_bar
        self.surrogate = BARKSurrogate(surrogate_data_model(data_model))
        self.surrogate.progress_bar = self.progress_bar
        self.space = self.surrogate.space
        output = self.domain.outputs.get_by_objective()[0]
        self.output_key = output.key
        self.sign = 1.0 if isinstance(output.objective, MaximizeObjective) else -1.0
        self.last_results: list = []

    @property
    def input_preprocessing_specs(self):
        return {}  # BARK splits raw inputs; categories stay strings

    def has_sufficient_experiments(self) -> bool:
        if self.experiments is None:
            return False
        valid = self.domain.outputs.preprocess_experiments_all_valid_outputs(self.experiments)
        return len(valid) >= 2

    def _fit(self, experiments: pd.DataFrame) -> None:
        self.surrogate.fit(experiments)

    def _predict(self, transformed: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        return self.surrogate._predict(transformed[self.domain.inputs.get_keys()])

    def _ask(self, candidate_count: int | None = None) -> pd.DataFrame:
        n = candidate_count or 1
        posterior = self.surrogate.posterior
        if posterior is None:
            raise RuntimeError("BARKStrategy has no fitted model: tell it experiments first")
        pending = []
        if self.candidates is not None and len(self.candidates):
            pending.append(self.space.encode(self.candidates))
        chosen = []
        self.last_results = []
        with _bar(self.progress_bar, n, "BARK ask") as bar:
            for i in range(n):
                result = self._solve(posterior, pending)
                # a repeat of a point already in the batch (the acquisition can still peak in
                # the same cell after conditioning): condition on it once more and re-solve
                for _ in range(2):
                    if not _repeats(result.x, pending):
                        break
                    pending.append(result.x.reshape(1, -1))
                    result = self._solve(posterior, pending)
                if _repeats(result.x, pending):
                    logger.warning("BARK ask %d/%d repeats an earlier candidate of this batch",
                                   i + 1, n)
                self.last_results.append(result)
                logger.info("BARK ask %d/%d: %s", i + 1, n, result.summary())
                chosen.append(result.candidate)
                pending.append(result.x.reshape(1, -1))
                bar.update(1)
        return pd.concat(chosen, ignore_index=True)[self.domain.inputs.get_keys()]

    def _solve(self, posterior, pending: list[np.ndarray]):
        from bofire_bark.optimize import optimize_acquisition

        # a fresh seed from BoFire's seed stream for every solve: successive asks differ,
        # yet a strategy built with the same seed replays the same run
        return optimize_acquisition(
            posterior, self.domain, self.space, kappa=self.kappa, sign=self.sign,
            pending=np.vstack(pending) if pending else None, solver=self.solver,
            time_limit=self.time_limit, mip_gap=self.mip_gap, abs_gap=self.abs_gap,
            n_random=self.n_start_points,
            seed=self._get_seed())


def _repeats(x: np.ndarray, pending: list[np.ndarray]) -> bool:
    """Whether encoded point ``x`` equals a row of the pending blocks."""
    return any(np.any(np.all(np.isclose(block, x, rtol=0.0, atol=1e-9), axis=1))
               for block in pending)

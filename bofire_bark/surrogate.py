"""The BARK surrogate as a BoFire functional class: fit, predict, dump and load."""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd
from bofire.surrogates.surrogate import Surrogate
from bofire.surrogates.trainable import TrainableSurrogate

from bofire_bark import diagnostics
from bofire_bark.data_models.surrogate import BARKSettings
from bofire_bark.data_models.surrogate import BARKSurrogate as DataModel
from bofire_bark.engine import Chain, MCMCSettings, Posterior, fit_posterior, sample_prior, store
from bofire_bark.engine.smooth import SEPARATE, SmoothKernel, bins_of, category_d2
from bofire_bark.jit import compiling
from bofire_bark.kinds import CATEGORICAL, CONTINUOUS
from bofire_bark.space import SplitSpace

logger = logging.getLogger(__name__)


def mcmc_settings(settings: BARKSettings) -> MCMCSettings:
    """The engine's settings from the data model's."""
    return MCMCSettings(
        n_trees=settings.n_trees, alpha=settings.alpha, beta=settings.beta,
        noise_nu=settings.noise_nu, noise_q=settings.noise_q, noise_prior=settings.noise_prior,
        noise_loc=settings.noise_loc, noise_scale=settings.noise_scale,
        noise_step=settings.noise_step,
        likelihood=settings.likelihood, split_prior=settings.split_prior,
        label_swap_every=settings.label_swap_every,
    )


def category_encoding(space: SplitSpace, d: int) -> np.ndarray | None:
    """(C, p) how the smooth share sees the categories of categorical input ``d``: its
    descriptors scaled to [0, 1] when it splits by descriptors (or molecular features), as
    BoFire's GP encodes them; None for a plain categorical input, whose categories the smooth
    share keeps apart (``smooth_kernel``)."""
    table = space.descriptors[d]
    if table is None:
        return None
    span = np.ptp(table, axis=0)
    return (table - table.min(axis=0)) / np.where(span > 0, span, 1.0)


def smooth_kernel(space: SplitSpace, X: np.ndarray, y: np.ndarray, n_bins: int,
                  categories: bool = False) -> SmoothKernel:
    """The smooth share's kernel for a fit on encoded ``X``, outputs ``y``: every continuous
    input that can vary, one RBF length per column, and with ``categories`` every categorical
    input with two categories or more. An input with descriptors joins the RBF with one length
    per descriptor (``category_encoding``); a plain one is a factor that is 1 for the same
    category and 0 (``SEPARATE``) otherwise, so the smooth share correlates points only within
    one combination of plain categories: an untried combination gets the share's full prior
    variance, and the sampled share weighs that against the forest, which does share across
    combinations (BoFire's GP has a Hamming kernel of fitted lengths there; why a fixed
    factor: docs/results/chemistry.md, "Plain categories kept apart"). The lengths are the maximum a
    posteriori lengths of BoTorch's ``SingleTaskGP`` with its defaults (an RBF kernel with the
    dimension-scaled log-normal length prior of Hvarfner et al. 2024 and a log-normal noise
    prior, BoFire's GP defaults too) on the binned coordinates and every categorical input
    with two categories or more, by its descriptors or one-hot as BoFire's GP encodes it (also
    where the share leaves the categories out: fitted on the continuous coordinates alone, a
    category's effect reads as a fast wiggle and shrinks their lengths); with fewer than 3
    points the prior's median lengths."""
    kinds, lower, upper = space.kinds, space.lower, space.upper
    cols = np.flatnonzero((kinds == CONTINUOUS) & (upper > lower))
    all_cats = np.flatnonzero((kinds == CATEGORICAL) & (space.n_values > 1))
    cat_cols = all_cats if categories else np.zeros(0, np.int64)
    tables = [category_encoding(space, int(c)) for c in all_cats]
    # a fit only when some length is used (continuous coordinates or descriptors)
    fit = bool(len(cols)) or (categories and any(t is not None for t in tables))
    fit_tables = [np.eye(int(space.n_values[c])) if t is None else t
                  for c, t in zip(all_cats, tables, strict=True)]
    width = len(cols) + sum(t.shape[1] for t in fit_tables)
    lengths = np.full(width, np.exp(np.sqrt(2.0) + 0.5 * np.log(max(width, 1))))  # prior median
    if fit and len(y) >= 3 and np.ptp(y) > 0:
        import torch
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from gpytorch.mlls import ExactMarginalLogLikelihood

        codes = np.asarray(X, np.float64)[:, all_cats].astype(np.int64)
        Z = np.concatenate([(bins_of(X, cols, lower[cols], upper[cols], n_bins) + 0.5)
                            / int(n_bins)]
                           + [t[codes[:, j]] for j, t in enumerate(fit_tables)], axis=1)
        gp = SingleTaskGP(torch.as_tensor(Z, dtype=torch.float64),
                          torch.tensor(np.array(y, dtype=np.float64)[:, None]))
        # one thread: on matrices this small torch's threads only contend, with each other
        # and with the chains (benchmarks/smooth_fit_speed.py)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
        finally:
            torch.set_num_threads(threads)
        fitted = gp.covar_module.lengthscale.detach().numpy().reshape(-1)
        # a failed fit keeps the prior's lengths rather than stop the ask
        if len(fitted) == width and np.all(np.isfinite(fitted)) and np.all(fitted > 0):
            lengths = fitted
    n_codes = int(max(space.n_values[cat_cols], default=1))
    cat_d2 = np.zeros((len(cat_cols), n_codes, n_codes))
    at = len(cols)
    for j, (t, fit_t) in enumerate(zip(tables, fit_tables, strict=True)):
        if categories and t is None:
            c = int(space.n_values[cat_cols[j]])
            cat_d2[j, :c, :c] = SEPARATE * (1.0 - np.eye(c))
        elif categories:
            cat_d2[j, :len(t), :len(t)] = category_d2(t, lengths[at:at + t.shape[1]])
        at += fit_t.shape[1]
    return SmoothKernel(cols, lower[cols], upper[cols], lengths[:len(cols)], n_bins, cat_cols,
                        cat_d2)


def log_outside_bounds(space: SplitSpace, X: np.ndarray) -> None:
    """One warning naming the continuous inputs with encoded rows ``X`` outside their bounds
    (BoFire accepts such data; BARK keeps it)."""
    outside = space.outside_bounds(X)
    if outside:
        logger.warning(
            "BARK: experiments outside the inputs' bounds are kept (%s); the trees split "
            "inside the bounds, so they count as at the nearest bound", ", ".join(
                f"{key}: {n} of {len(X)} rows" for key, n in outside.items()))


def log_nan_outputs(experiments: pd.DataFrame, keys: list[str]) -> None:
    """A warning per output that is NaN in rows marked valid, naming the rows: BoFire's
    filter drops them from the fit without a word, which hides a broken measurement."""
    for key in keys:
        valid = experiments.get(f"valid_{key}")
        flagged = experiments[key].isna() if valid is None else (
            experiments[key].isna() & (valid > 0))
        rows = list(experiments.index[flagged.to_numpy()])
        if rows:
            shown = ", ".join(repr(r) for r in rows[:10]) + (", ..." if len(rows) > 10 else "")
            logger.warning(
                "BARK: output '%s' is NaN in %d row(s) marked valid (valid_%s = 1): %s; they are "
                "left out of the fit (mark a failed experiment with valid_%s = 0)",
                key, len(rows), key, shown, key)


def _bar(enabled: bool, total: int, desc: str):
    """A tqdm progress bar, or a silent stand-in with the same ``update``."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, disable=not enabled, leave=False)


class BARKSurrogate(Surrogate, TrainableSurrogate):
    """BARK: GP with a forest kernel whose trees and noise are sampled by MCMC.

    ``predict`` returns the posterior mixture's mean and standard deviation of a new
    observation (noise included, as BoFire's GP surrogates do), in the output's units.
    Refits continue the chains from their last state (``warm_start``), with
    ``warm_start_burn_in`` sweeps discarded, as BO between iterations does.
    """

    def __init__(self, data_model: DataModel, **kwargs):
        self.settings = data_model
        self.space = SplitSpace.from_inputs(data_model.inputs, data_model.categorical_encodings,
                                            data_model.descriptor_subset_splits)
        self.engine_space = self.space.engine_space()  # built once: every fit uses it
        self.posterior: Posterior | None = None
        self.chains: list[Chain] | None = None
        self.n_fits = 0
        self.last_fit: diagnostics.FitDiagnostics | None = None  # what the last fit did
        self.progress_bar = False  # set by the strategy when the user asks for one
        self.warn_outside_bounds = True  # a strategy with several outputs warns once itself
        self.smooth: SmoothKernel | None = None  # the smooth share's kernel of the last fit
        # every log line names the output: a strategy fits one surrogate per output
        self.tag = f"BARK '{data_model.outputs.get_keys()[0]}'"
        super().__init__(data_model=data_model, **kwargs)

    @property
    def model(self) -> Posterior | None:
        return self.posterior

    @model.setter
    def model(self, value: Posterior | None) -> None:
        self.posterior = value

    def _prepare_data_for_predict(self, X: pd.DataFrame) -> pd.DataFrame:
        # BARK encodes raw inputs itself (categories as strings); no numeric transform.
        return self.inputs.validate_experiments(X, strict=False)[self.inputs.get_keys()]

    # ------------------------------------------------------------------------- fitting
    def _preprocess_experiments(self, experiments: pd.DataFrame) -> pd.DataFrame:
        log_nan_outputs(experiments, self.outputs.get_keys())
        return super()._preprocess_experiments(experiments)

    def _fit(self, X: pd.DataFrame, Y: pd.DataFrame, **kwargs) -> None:
        s = self.settings
        Xe = self.space.encode(X)
        if self.warn_outside_bounds:
            log_outside_bounds(self.space, Xe)
        y = Y.to_numpy(dtype=float).ravel()
        bad = np.flatnonzero(~np.isfinite(y))
        if len(bad):  # BoFire lets inf through; name the output and the row before numba
            key = self.outputs.get_keys()[0]
            raise ValueError(
                f"output '{key}' has a non-finite value ({y[bad[0]]}) in row {Y.index[bad[0]]!r}"
                f" ({len(bad)} such rows): BARK needs finite measurements (a failed experiment "
                f"is marked with valid_{key} = 0)")
        space = self.engine_space
        start = time.perf_counter()
        warm = s.warm_start and self.chains is not None  # continue the chains
        # validation refuses smooth_share with prior_only
        self.smooth = (smooth_kernel(self.space, Xe, y, s.smooth_bins, s.smooth_categories)
                       if s.smooth_share else None)
        sampled, table = 0, None
        with compiling("the fit", "engine"):
            if s.prior_only:
                seed = None if s.seed is None else s.seed + self.n_fits
                self.posterior = sample_prior(Xe, y, space, mcmc_settings(s),
                                              n_samples=s.total_samples, seed=seed)
            else:
                logger.info("%s: %s %d chains on %d points (%s)", self.tag,
                            "continuing" if warm else "starting", s.n_chains, len(y),
                            "no burn-in" if warm and
                            not s.warm_start_burn_in else "with burn-in")
                with _bar(self.progress_bar, s.n_chains * (s.n_samples + 1), "BARK MCMC") as bar:
                    self.posterior = fit_posterior(
                        Xe, y, space, mcmc_settings(s), n_chains=s.n_chains,
                        n_samples=s.n_samples, thinning=s.thinning,
                        burn_in=s.warm_start_burn_in if warm else s.burn_in, seed=s.seed,
                        chains=self.chains if warm else None, progress=bar.update,
                        smooth=self.smooth)
                self.chains = self.posterior.chains
                sampled, table = self._continue_while_unmixed(Xe, y, space)
        self.n_fits += 1
        seconds = time.perf_counter() - start
        logger.info("%s: fitted %d samples in %.2f s", self.tag, self.posterior.n_samples,
                    seconds)
        if not s.prior_only:
            self._log_convergence(warm, table)
        self.last_fit = diagnostics.FitDiagnostics(
            n_points=len(y), n_chains=0 if s.prior_only else s.n_chains,
            sweeps=0 if s.prior_only else (s.warm_start_burn_in if warm else s.burn_in)
            + sampled, seconds=seconds,
            rhat={} if table is None else table.rhat.to_dict(),
            ess_bulk={} if table is None else table.ess_bulk.to_dict())

    def _continue_while_unmixed(self, Xe: np.ndarray, y: np.ndarray, space
                                ) -> tuple[int, pd.DataFrame | None]:
        """Sweeps per chain sampled after burn-in (``n_samples * thinning``, then, while the
        chains disagree and ``max_sampling_sweeps`` allows, a new sampling window with twice
        the thinning each time: the chains continue, the earlier windows were burn-in) and
        the convergence table of the last window."""
        s = self.settings
        thinning = s.thinning
        total = s.n_samples * thinning
        table = diagnostics.convergence(self.posterior)
        while total + s.n_samples * 2 * thinning <= s.max_sampling_sweeps:
            if table is None or not (table.rhat > diagnostics.RHAT_WARN).any():
                break
            thinning *= 2
            logger.info("%s: chains disagree (R-hat %.2f); sampling %d more sweeps per "
                        "chain", self.tag, table.rhat.max(), s.n_samples * thinning)
            self.posterior = fit_posterior(
                Xe, y, space, mcmc_settings(s), n_chains=s.n_chains, n_samples=s.n_samples,
                thinning=thinning, burn_in=0, seed=s.seed, chains=self.chains,
                smooth=self.smooth)
            self.chains = self.posterior.chains
            total += s.n_samples * thinning
            table = diagnostics.convergence(self.posterior)
        return total, table

    def _log_convergence(self, warm: bool, table: pd.DataFrame | None) -> None:
        s = self.settings
        if table is None:
            logger.info("%s: install bofire-bark[diagnostics] (ArviZ) for R-hat and ESS",
                        self.tag)
            return
        logger.info("%s chains: %s", self.tag, ", ".join(
            f"{var} R-hat {row.rhat:.3f} ESS {row.ess_bulk:.0f}" for var, row in table.iterrows()))
        bad = table[table.rhat > diagnostics.RHAT_WARN]
        if len(bad):
            logger.warning(
                "%s: chains have not mixed (R-hat %s > %.1f): raise max_sampling_sweeps "
                "(now %d), thinning (now %d) or %s (now %d)", self.tag,
                ", ".join(f"{v} {r:.2f}" for v, r in bad.rhat.items()), diagnostics.RHAT_WARN,
                s.max_sampling_sweeps, s.thinning, "warm_start_burn_in" if warm else "burn_in",
                s.warm_start_burn_in if warm else s.burn_in)

    # ------------------------------------------------------------------- what it learned
    def feature_relevance(self, detail: bool = False) -> pd.DataFrame:
        """Which inputs the forest splits on, most relevant first: one row per BoFire input
        (index ``input``); an input split by its descriptors or fingerprint bits counts all
        of them, summed draw by draw.

        ``split_prob`` (sparse prior ``split_prior="dirichlet"``: posterior mean of the
        probability that a split picks the input, 90 % interval in ``split_prob_q05`` /
        ``split_prob_q95``; NaN under the uniform prior) and ``split_share`` (posterior mean
        share of the forest's splits on the input, with its 90 % interval), over every sweep
        after burn-in; ``variables``: the descriptors or bits the row sums (1 for a plain
        input).

        Args:
            detail: One row per split variable instead (index ``split_variable``: the input's
                key, or ``key_descriptor`` for each descriptor or bit, as BoFire names
                descriptor-encoded columns), with its ``input`` and, for the bits of BoFire's
                ``Fingerprints`` (alone or in ``FingerprintsFragments``), a ``substructure``
                column: the atom environments (SMILES fragments, radius-0 atoms as
                ``[CH3]``-like atoms) that set the bit in the input's molecules, several when
                the hash folds different environments onto one bit. Fragment and Mordred
                descriptors are named by their own names; other rows are NaN.
        """
        rel = diagnostics.feature_relevance(self._fitted(), self.space.split_variable_names(),
                                            self.space.split_variable_inputs(), detail=detail)
        if detail:
            names = self.bit_substructures()
            if names:
                rel["substructure"] = [names.get(v) for v in rel.index]
        return rel

    def bit_substructures(self) -> dict[str, str]:
        """Split variable name (``key_fingerprint_k``) -> the substructures that set that
        fingerprint bit in the input's molecules, for every molecular input split by BoFire's
        ``Fingerprints`` (``space.molecules.bit_substructures``); empty without one."""
        from bofire_bark.space.molecules import bit_substructures
        from bofire_bark.space.split_space import check_encodings

        encodings = check_encodings(self.inputs, self.settings.categorical_encodings)
        out = {}
        for d, key in enumerate(self.space.keys):
            names = self.space.descriptor_names[d]
            if names is None:
                continue
            found = bit_substructures(self.space.categories[d], encodings[key], names)
            out.update({f"{key}_{name}": text for name, text in found.items()})
        return out

    def to_inference_data(self):
        """The MCMC traces as an ArviZ ``InferenceData`` (``az.rhat``, ``az.plot_trace``...)."""
        return diagnostics.to_inference_data(self._fitted(),
                                             self.space.split_variable_names())

    def _fitted(self) -> Posterior:
        if self.posterior is None:
            raise RuntimeError("BARKSurrogate is not fitted: call fit first")
        return self.posterior

    def _predict(self, transformed_X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        pred = self._fitted().predict(self.space.encode(transformed_X))
        return pred["mean"].reshape(-1, 1), np.sqrt(pred["var"]).reshape(-1, 1)

    # ------------------------------------------------------------------ dump and load
    def _dumps(self) -> str:
        return store.dumps(self._fitted(), self.n_fits)

    def loads(self, data: str) -> None:
        """Restore a ``dumps`` text; every array is checked against this surrogate's inputs
        and settings before any kernel reads it (``engine.store``): a damaged or foreign dump
        is a ``ValueError`` naming the array, never a crash."""
        s = self.settings
        n_samples = s.total_samples if s.prior_only else s.n_samples
        n_chains = 1 if s.prior_only else s.n_chains
        self.posterior, self.n_fits = store.loads(
            data, self.engine_space, mcmc_settings(s), n_chains, n_samples,
            smooth_share=s.smooth_share)
        self.smooth = self.posterior.smooth
        self.chains = self.posterior.chains or None

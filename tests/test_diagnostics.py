"""Input relevance and MCMC diagnostics: what the user reads off a fitted BARK model."""

from __future__ import annotations

import logging

import arviz as az
import numpy as np
import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain
from bofire.data_models.features.api import (
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
)

from bofire_bark import diagnostics
from bofire_bark.engine import Chain, MCMCSettings, fit_posterior
from bofire_bark.engine.rng import seed_states

N_INPUTS = 6


def unit_space(d):
    return (np.zeros(d, np.int64), np.zeros(d), np.ones(d), np.zeros(d, np.int64))


def two_input_problem(n=50, seed=0):
    """y depends on inputs 0 and 1 of six."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, N_INPUTS))
    y = np.sin(6 * X[:, 0]) + 2 * (X[:, 1] > 0.5) + 0.1 * rng.standard_normal(n)
    return X, y


def test_rhat_near_one_for_a_long_flat_likelihood_run():
    """Under a flat likelihood every chain samples the prior: R-hat of the noise variance and
    of the tree size are near 1 and the ESS is in the hundreds (8,000 draws; the noise walk
    is slow on the heavy InvGamma tail)."""
    X, y = two_input_problem()
    settings = MCMCSettings(n_trees=20, likelihood="flat", split_prior="uniform")
    post = fit_posterior(X, y, unit_space(N_INPUTS), settings, n_chains=4, n_samples=20,
                         thinning=100, burn_in=200, seed=3)
    idata = diagnostics.to_inference_data(post, [f"x{j}" for j in range(N_INPUTS)])
    rhat = az.rhat(idata, var_names=["noise_var", "leaves_per_tree"])
    ess = az.ess(idata, var_names=["noise_var", "leaves_per_tree"])
    for var in ("noise_var", "leaves_per_tree"):
        assert float(rhat[var]) < 1.02, (var, float(rhat[var]))
        assert float(ess[var]) > 100, (var, float(ess[var]))


def chains_started_apart(X, y, sigma2s, settings):
    chains = []
    for state, s2 in zip(seed_states(4, len(sigma2s)), sigma2s, strict=True):
        chain = Chain(unit_space(X.shape[1]), settings, state)
        chain.sigma2[0] = s2
        chains.append(chain)
    return chains


def test_rhat_flags_chains_started_apart_and_stopped_early():
    X, y = two_input_problem()
    settings = MCMCSettings(n_trees=10, noise_step=0.02)  # a slow noise walk
    chains = chains_started_apart(X, y, [1e-3, 1e-3, 3.0, 3.0], settings)
    post = fit_posterior(X, y, unit_space(N_INPUTS), settings, chains=chains, n_samples=2,
                         thinning=20, burn_in=0)
    table = diagnostics.convergence(post)
    assert table.loc["noise_var", "rhat"] > 1.5, table
    # the same start, run long, mixes: the flag comes from the start, not the statistic
    chains = chains_started_apart(X, y, [1e-3, 1e-3, 3.0, 3.0], MCMCSettings(n_trees=10))
    post = fit_posterior(X, y, unit_space(N_INPUTS), MCMCSettings(n_trees=10), chains=chains,
                         n_samples=10, thinning=50, burn_in=500)
    table = diagnostics.convergence(post)
    assert table.loc["noise_var", "rhat"] < 1.1, table


def test_inference_data_has_every_traced_quantity():
    X, y = two_input_problem()
    names = [f"x{j}" for j in range(N_INPUTS)]
    post = fit_posterior(X, y, unit_space(N_INPUTS), MCMCSettings(split_prior="dirichlet"),
                         n_chains=2, n_samples=3, thinning=10, burn_in=50, seed=1)
    idata = diagnostics.to_inference_data(post, names)
    ds = idata.posterior
    assert ds.sizes["chain"] == 2 and ds.sizes["draw"] == 30
    assert list(ds["split_prob"].coords["input"].values) == names
    np.testing.assert_allclose(ds["noise_var"].values,
                               post.traces[..., 1] * post.y_std**2)
    # the last draw of chain 0 is its last kept sample
    assert ds["noise_var"].values[0, -1] == pytest.approx(
        post.samples["sigma2"][2] * post.y_std**2)
    summary = az.summary(idata, var_names=["log_marginal_likelihood", "noise_var"])
    assert set(summary.index) == {"log_marginal_likelihood", "noise_var"}


# ------------------------------------------------------------------ through BoFire
def domain():
    inputs = [ContinuousInput(key=f"x{j}", bounds=(0, 1)) for j in range(N_INPUTS - 1)]
    inputs.append(CategoricalInput(key="c", categories=["a", "b", "c"]))
    return Domain.from_lists(inputs, [ContinuousOutput(key="y")])


def experiments(n=40, seed=0):
    rng = np.random.default_rng(seed)
    data = pd.DataFrame({f"x{j}": rng.random(n) for j in range(N_INPUTS - 1)})
    data["c"] = rng.choice(["a", "b", "c"], n)
    data["y"] = (np.sin(6 * data.x0) + 2.0 * (data.c == "b") + 0.1 * rng.standard_normal(n))
    data["valid_y"] = 1
    return data


@pytest.fixture(scope="module")
def sparse_strategy():
    import bofire.strategies.api as strategies

    from bofire_bark.data_models import BARKSettings, BARKStrategy

    spec = BARKStrategy(domain=domain(), seed=5, surrogate_specs=BARKSettings(
        split_prior="dirichlet", burn_in=300, thinning=25, n_chains=2))
    strategy = strategies.map(spec)
    strategy.tell(experiments())
    return strategy


def test_strategy_reports_the_inputs_that_matter(sparse_strategy, caplog):
    rel = sparse_strategy.feature_relevance()
    assert list(rel.index[:2]) == ["x0", "c"] or list(rel.index[:2]) == ["c", "x0"], rel
    assert rel.loc[["x0", "c"], "split_prob"].sum() > 0.7, rel
    assert (rel.split_prob_q05 <= rel.split_prob).all() and (
        rel.split_prob <= rel.split_prob_q95).all()
    assert rel.split_share.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no model of output 'z'"):
        sparse_strategy.feature_relevance("z")
    with caplog.at_level(logging.INFO, logger="bofire_bark"):
        sparse_strategy.tell(experiments(5, seed=1))
    text = caplog.text
    assert "most relevant inputs (split_prob)" in text
    top = text.split("most relevant inputs (split_prob)")[1].splitlines()[0]
    assert "x0" in top and "c " in top, top
    assert "R-hat" in text


def test_last_fit_diagnostics_for_a_pipeline(sparse_strategy):
    """What the last fit did, as numbers a pipeline can log (the strategy told 40 points, then
    5 more in the test above or not, depending on order: read the surrogate's own counts)."""
    sur = sparse_strategy.surrogate
    fit = sur.last_fit
    assert fit.n_points == len(sur.posterior.y) and fit.n_chains == 2
    first = sur.n_fits == 1
    # burn-in, then sampling windows of 4 x 25, 4 x 50, ... while the chains disagree
    windows = np.cumsum([100 * 2**k for k in range(8)])
    assert fit.sweeps - (300 if first else 0) in windows
    assert 0 < fit.seconds < 600
    table = diagnostics.convergence(sur.posterior)
    assert fit.rhat == pytest.approx(table.rhat.to_dict())
    assert fit.ess_bulk == pytest.approx(table.ess_bulk.to_dict())
    assert set(fit.rhat) == set(diagnostics.CONVERGENCE_VARS)
    assert fit.warned == bool((table.rhat > diagnostics.RHAT_WARN).any())


def test_uniform_prior_reports_shares_of_splits():
    import bofire.surrogates.api as surrogates

    from bofire_bark.data_models import BARKSurrogate

    spec = BARKSurrogate(inputs=domain().inputs, outputs=domain().outputs, seed=2,
                         burn_in=200, thinning=20, n_chains=2, split_prior="uniform")
    sur = surrogates.map(spec)
    sur.fit(experiments())
    rel = sur.feature_relevance()
    assert rel.split_prob.isna().all()
    assert set(rel.index[:2]) == {"x0", "c"}, rel
    assert rel.split_share.sum() == pytest.approx(1.0)


def test_reloaded_sparse_surrogate_continues_like_the_original(sparse_strategy):
    """The split weights travel with the dump: a reloaded surrogate continued on new data
    gives the same samples as the original continued."""
    import bofire.surrogates.api as surrogates

    sur = sparse_strategy.surrogate
    reloaded = surrogates.map(sur.settings.model_copy(update={"dump": sur.dumps()}))
    for c_orig, c_new in zip(sur.chains, reloaded.chains, strict=True):
        np.testing.assert_array_equal(c_orig.tree_prior.log_w, c_new.tree_prior.log_w)
    more = pd.concat([experiments(), experiments(5, seed=1)], ignore_index=True)
    # the strategy's surrogate has seen two tells; continue both copies from here
    sur.fit(more)
    reloaded.fit(more)
    np.testing.assert_array_equal(sur.posterior.samples["split_prob"],
                                  reloaded.posterior.samples["split_prob"])
    np.testing.assert_array_equal(sur.posterior.samples["feat"],
                                  reloaded.posterior.samples["feat"])


@pytest.mark.parametrize("cap", [0, 4 * (1 + 2 + 4 + 8 + 16 + 32 + 64)])
def test_sampling_goes_on_while_the_chains_disagree(cap, caplog):
    """A 4-sweep sampling window cannot show agreement; with max_sampling_sweeps the fit
    samples again with doubled thinning until R-hat <= 1.1 or the cap: the windows add up to
    4 (1 + 2 + 4 + ...) sweeps, the sample count stays, and the last window's chains agree
    unless the next window would pass the cap. With the cap at 0 nothing changes."""
    import bofire.surrogates.api as surrogates

    from bofire_bark.data_models import BARKSurrogate

    spec = BARKSurrogate(inputs=domain().inputs, outputs=domain().outputs, seed=3, n_trees=20,
                         burn_in=0, thinning=1, n_chains=4, n_samples=4, split_prior="uniform",
                         max_sampling_sweeps=cap)
    sur = surrogates.map(spec)
    with caplog.at_level(logging.INFO, logger="bofire_bark"):
        sur.fit(experiments(30))
    fit = sur.last_fit
    assert sur.posterior.n_samples == 16
    windows = [4 * 2**k for k in range(8)]
    sums = np.cumsum(windows)
    assert fit.sweeps in sums
    k = int(np.flatnonzero(sums == fit.sweeps)[0])
    assert sur.posterior.traces.shape[1] == windows[k]  # the traces are the last window's
    if cap == 0:
        assert fit.sweeps == 4 and fit.warned
    else:
        assert fit.sweeps > 4 and "sampling 8 more sweeps per chain" in caplog.text
        assert not fit.warned or fit.sweeps + windows[k + 1] > cap

"""The smooth screen's kernel algebra against the library: with no smooth share, its dense
forest-kernel GP must predict what BARK's leaf-space prediction does for the same samples."""

from __future__ import annotations

import numpy as np


def test_share_zero_predicts_as_the_library():
    from benchmarks.chem_bo import strategy_of
    from benchmarks.chem_suite import Mixture
    from benchmarks.smooth_screen import Hybrid, _candidates

    problem = Mixture()
    X = problem.initial(0)
    frame = X.copy()
    frame["cost"] = problem.evaluate(X)
    strategy = strategy_of("mixture", "bark", problem.domain(), 0, {"surrogate_specs": {
        "n_chains": 2, "n_samples": 4, "burn_in": 50, "thinning": 5}})
    strategy.tell(frame)
    cand = _candidates("mixture", problem, strategy.domain, frame, "cost", True,
                       np.random.default_rng(0)).head(50)
    hybrid = Hybrid(strategy, frame, cand)
    _, means, variances = hybrid.fit(0.0, 0.3)
    post = strategy.posteriors()["cost"]
    m_lib, v_lib = post.predict_each(strategy.surrogates["cost"].space.encode(cand))
    assert np.allclose(means, m_lib[hybrid.picks], atol=1e-8)
    assert np.allclose(variances, v_lib[hybrid.picks], atol=1e-8)
    _, means_s, _ = hybrid.fit(0.5, 0.3)
    assert not np.allclose(means_s, means)  # the share changes the prediction


def test_gp_ucb_arm_minimizes_the_gp_mean_at_kappa_zero(monkeypatch):
    """The GP arm's rule on a minimized output: at kappa 0 its pick is the candidate with the
    lowest mean of BoFire's own prediction (a sign or encoding slip picks another)."""
    from benchmarks import smooth_screen
    from benchmarks.chem_bo import strategy_of
    from benchmarks.chem_suite import Mixture

    problem = Mixture()
    X = problem.initial(1)
    frame = X.copy()
    frame["cost"] = problem.evaluate(X)
    strategy = strategy_of("mixture", "sobo", problem.domain(), 0)
    strategy.tell(frame)
    monkeypatch.setattr(smooth_screen, "KAPPA", 0.0)
    pick = smooth_screen.proposer("mixture", "gp_ucb", None)(strategy, problem, frame, 1, 1)
    cand = smooth_screen._candidates("mixture", problem, strategy.domain, frame, "cost", True,
                                     np.random.default_rng([1, 1]))
    mean = strategy.predict(cand)["cost_pred"].to_numpy()
    assert np.allclose(pick.to_numpy(float), cand.iloc[[int(np.argmin(mean))]].to_numpy(float))


def test_gp_correlation_rows_of_measured_points_repeat_the_training_block():
    """A candidate equal to a measured point has that point's correlations (the candidates and
    the measured rows go through the same encoding), and the training block is a correlation
    matrix (unit diagonal, symmetric, positive definite)."""
    from benchmarks.chem_bo import make_problem, strategy_of
    from benchmarks.smooth_screen import gp_correlation

    problem = make_problem("crosscoupling")
    X = problem.initial(0)
    frame = X.copy()
    gp = strategy_of("crosscoupling", "sobo", problem.domain(set()), 0)
    key = gp.domain.outputs.get_keys()[0]
    frame[key] = problem.evaluate(X)
    gp.tell(frame)
    K = gp_correlation(gp, frame, X.iloc[[3, 0]].reset_index(drop=True))
    n = len(frame)
    assert K.shape == (n + 2, n)
    assert np.allclose(K[n], K[3]) and np.allclose(K[n + 1], K[0])
    assert np.allclose(np.diag(K[:n]), 1.0) and np.allclose(K[:n], K[:n].T)
    assert np.linalg.eigvalsh(K[:n]).min() > -1e-9
    assert K[:n][~np.eye(n, dtype=bool)].max() < 1.0  # distinct points, not all one

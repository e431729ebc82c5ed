"""Pinned chains: the same seed gives the same chains, bit for bit, as the engine of a3522af.

The digests below were computed with the engine at commit a3522af (before its arguments were
grouped into structures) by running this file as a script. They cover every move type, both
likelihood forms and the prior-only form, node and leaf-column storage growth, noise steps,
periodic refreshes, running in pieces, and ``fit_posterior`` with prediction.

The chains are deterministic given the seed, but accept decisions compare floating-point
likelihoods, some summed with reassociation allowed (``likelihood._FAST``); a CPU whose vector
width differs could round them differently. The log-likelihoods are hence compared to a
relative 1e-9 here (they were bit-identical on the machine that made the refactor).
"""

from __future__ import annotations

import hashlib
import sys

import numpy as np

from bofire_bark.engine import Chain, MCMCSettings, fit_posterior, standardize
from bofire_bark.engine.forest import FOREST_KEYS
from bofire_bark.engine.rng import seed_states

# The pinned chains are the uniform split prior's (the engine's default before issue 24 made
# the library's "dirichlet" the one default).
UNIFORM = MCMCSettings(split_prior="uniform")


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()[:16]


def _problem(n: int, seed: int, pure_noise: bool = False):
    """Continuous x0, discrete x1 (5 values), categorical x2 (70 categories: two mask words).

    Outputs depend on all three, or are ``pure_noise`` (then trees follow their prior, deep).
    """
    space = (
        np.array([0, 1, 2], np.int64),
        np.array([0.0, 0.0, 0.0]),
        np.array([1.0, 4.0, 69.0]),
        np.array([0, 5, 70], np.int64),
    )
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.random(n), rng.integers(0, 5, n), rng.integers(0, 70, n)])
    y = (2.0 * (X[:, 0] > 0.4) + 0.5 * X[:, 1] - (X[:, 2] % 3 == 1)
         + 0.3 * rng.standard_normal(n))
    if pure_noise:
        y = rng.standard_normal(n)
    return space, X.astype(float), standardize(y)[0]


# (likelihood, N, pure noise, settings, pieces of sweeps): capacity 4 makes node storage grow;
# the leaf case's 10 deep trees (pure noise, beta 0.5) outgrow the first 64 leaf columns.
CASES = {
    "n": ("n", 40, False, {"n_trees": 20, "refresh_every": 7}, (25, 1, 34)),
    "leaf": ("leaf", 150, True, {"n_trees": 10, "beta": 0.5, "refresh_every": 7}, (30, 30, 30)),
    "flat": ("flat", 30, False, {"n_trees": 10}, (40,)),
    # the sparse split prior's weight updates, and x2 split by three descriptors: pinned after
    # the one-pass splittability tests, the same digests as the engine of 1822e7b before them
    "dirichlet": ("n", 40, False, {"n_trees": 20, "split_prior": "dirichlet"}, (25, 1, 34)),
    "descriptors": ("n", 40, False, {"n_trees": 20, "split_prior": "dirichlet"}, (30, 30)),
}


def _descriptor_space(space):
    """x2's 70 categories described by a bit, a count and a value (seeded)."""
    from bofire_bark.engine.forest import split_variables

    rng = np.random.default_rng(70)
    table = np.column_stack([rng.random(70) < 0.3, rng.integers(0, 4, 70), rng.random(70)])
    return split_variables(*space, descriptors=[None, None, (table.astype(float), False)])


def chain_result(name: str) -> tuple[dict[str, str], tuple[float, float]]:
    likelihood, n, pure_noise, kw, pieces = CASES[name]
    space, X, y = _problem(n, seed=n, pure_noise=pure_noise)
    if name == "descriptors":
        space = _descriptor_space(space)
    chain = Chain(space, MCMCSettings(likelihood=likelihood, **{"split_prior": "uniform", **kw}),
                  seed_states(11, 1)[0], capacity=4)
    chain.set_data(X, y)
    for k in pieces:
        chain.run(k)
    grew = chain.forest["feat"].shape[1] > 4 and (
        likelihood != "leaf" or len(chain.lik.leaf.Ginv) > 64)
    digests = {
        "grew": str(grew),
        "forest": _digest(*(chain.forest[k] for k in FOREST_KEYS), chain.leaf_of),
        "sigma2": float(chain.sigma2[0]).hex(),
        "state": _digest(chain.state),
        "stats": _digest(chain.stats),
    }
    return digests, chain.loglik()


def fit_result() -> tuple[dict[str, str], np.ndarray]:
    space, X, y = _problem(60, seed=3)
    post = fit_posterior(X, y, space, UNIFORM, n_chains=2, n_samples=2, thinning=5, burn_in=20,
                         seed=4, n_jobs=1)
    mean, var = post.predict_each(X[:10])
    return {"samples": _digest(*(post.samples[k] for k in sorted(post.samples)))}, np.stack(
        [mean, var])


PINNED = {
    "n": {"grew": "True", "forest": "9a54ca11df82ff5d", "sigma2": "0x1.2c4caa3f92a1ep-4",
          "state": "c89f9ad2d99d30ea", "stats": "f7f1c09ad4b3e29d"},
    "leaf": {"grew": "True", "forest": "3c61e4950f8c290f", "sigma2": "0x1.1effa13774048p-1",
             "state": "5b36bdd21c5eb6cf", "stats": "1eb5994c1fe1b632"},
    "flat": {"grew": "True", "forest": "42186c3a9c32d3c9", "sigma2": "0x1.42067f2e4e9f1p-3",
             "state": "4a1f1627b56340f8", "stats": "24cc730043e73b3e"},
    "dirichlet": {"grew": "True", "forest": "11251968031b7638", "sigma2": "0x1.ceb71618aeeafp-4",
                  "state": "f21693333d535d3d", "stats": "1456c124df39c6bb"},
    "descriptors": {"grew": "True", "forest": "7fab0b43c0625e26",
                    "sigma2": "0x1.39dd37fc3becbp-2", "state": "478c17afc281778a",
                    "stats": "13c797afbc0ed7f0"},
    "fit": {"samples": "52fcedee09d89ee9"},
}
PINNED_LOGLIK = {
    "n": (48.09904833425067, -57.5890588151417),
    "leaf": (211.39572822098003, -32.239171184818204),
    "flat": (0.0, 0.0),
    "dirichlet": (29.87357906321646, -47.2235940913262),
    "descriptors": (52.99783839275807, -29.673756109109224),
}
PINNED_PREDICTION_SUM = [
    [-1.3473841788487402, -7.00377297450869, -0.9139093168038748, 3.3058729379725107,
     -6.666727798813939, 4.134151720481493, 1.5856044140989587, -4.986278947466177,
     5.884220372860562, -1.9365899147772434],
    [0.2927702965408213, 0.25646777492360634, 0.2841303576900225, 0.2783695970788056,
     0.3104496821073456, 0.3148517574613142, 0.27045413012673203, 0.24591047317404757,
     0.27187267182796676, 0.21190051373454413],
]


def _assert_chain(name: str) -> None:
    digests, loglik = chain_result(name)
    assert digests == PINNED[name]
    np.testing.assert_allclose(loglik, PINNED_LOGLIK[name], rtol=1e-9)


def test_pinned_n_space_chain():
    _assert_chain("n")


def test_pinned_leaf_space_chain():
    _assert_chain("leaf")


def test_pinned_prior_only_chain():
    _assert_chain("flat")


def test_pinned_sparse_prior_chain():
    _assert_chain("dirichlet")


def test_pinned_descriptor_chain():
    _assert_chain("descriptors")


def test_pinned_fit_and_prediction():
    digests, pred = fit_result()
    assert digests == PINNED["fit"]
    np.testing.assert_allclose(pred.sum(axis=1), PINNED_PREDICTION_SUM, rtol=1e-9)


if __name__ == "__main__":  # print the values to pin (and exact log-likelihoods)
    out = {name: chain_result(name) for name in CASES}
    for name, (d, ll) in out.items():
        print(name, d, [float(v).hex() for v in ll], repr(ll))
    d, pred = fit_result()
    print("fit", d, _digest(pred), repr(pred.sum(axis=1).tolist()))
    sys.exit(0)

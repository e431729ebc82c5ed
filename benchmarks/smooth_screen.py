"""Would a smooth share of the kernel win BO runs? Issue 35's kernel lever, screened in the loop.

``mixture_trap --hybrid`` showed, on one posterior, that ``(1 - share) K_forest + share
K_rbf(length)`` both fits the mixture's points better (summed log marginal likelihood) and
makes the GP's optimum reachable at a GP-like kappa. This study asks the next question before
the kernel is built into the engine and the search: does it find better points in BO?

Each iteration tells BARK (defaults) every point measured and takes ``SAMPLES`` of its
posterior samples (``strategy.posteriors()``); each sample's kernel becomes the hybrid above
(an RBF on the continuous inputs scaled to [0, 1], both parts of scale 1, the sample's noise
kept) and the candidate is the best of ``N_RANDOM`` random feasible points and ``N_LOCAL``
perturbations of the best three measured ones under the integrated UCB of BARK's default
(the mean over the samples of ``sign mu_s + 1.96 sd_s``, latent sd). Arms:

- ``forest``: share 0 (BARK's kernel, this study's random search: the control);
- ``smooth``: share and length chosen every iteration by the samples' summed log marginal
  likelihood over ``SHARES`` x ``LENGTHS`` (share 0 among them);
- ``half``: share 0.5, the length chosen so. (The trees fit the data under the forest alone,
  which favours share 0 in ``smooth``'s choice: this arm keeps the smooth part regardless.)

Four more arms take BoFire's GP (``SoboStrategy``'s defaults, told the same points) through the
same random search, to say which part of Sobo's lead on these problems the search, the rule and
the model each hold:

- ``gp_nei``: the GP under Sobo's own rule (qLogNEI, ``calc_acquisition``): Sobo with this
  study's search instead of BoTorch's optimizer;
- ``gp_ucb``: the GP under BARK's rule (``sign mu + 1.96 sd``, latent sd);
- ``gpk``: ``smooth`` with the GP's fitted kernel (BoFire's defaults: its ARD lengths, fitted to
  the same points each iteration) as the smooth part instead of the isotropic RBF, the share
  chosen by the samples' summed log marginal likelihood;
- ``gpk_noise``: ``gpk`` with the GP's fitted noise variance in every sample instead of the
  forest's (BARK's samples, fitted under the forest alone, carry the misfit of a smooth
  response as noise).

The trees were sampled under the forest alone, so this screens the kernel; it is not a fit of
it. Paired by seed with each other, and with the chemistry suite's ``bark`` (the grid search)
and ``sobo`` on the same initial points (the suite's seeds and designs).

    PYTHONPATH=. python -m benchmarks.smooth_screen run [--problems mixture crosscoupling]
        [--arms forest smooth] [--seeds 8] [--out results/smooth_screen]
    PYTHONPATH=. python -m benchmarks.smooth_screen summary [--out results/smooth_screen]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks._common import REPO, markdown_table, publish

DEFAULT_OUT = REPO / "results" / "smooth_screen"
PROBLEMS = ("mixture", "crosscoupling")
ARMS = ("forest", "smooth", "half", "gp_nei", "gp_ucb", "gpk", "gpk_noise")
GP_ARMS = ("gp_nei", "gp_ucb")
# arms fitted with the smooth share in the MCMC, run from branch ``smooth-kernel`` (its engine
# and this module's arms there): share 0.5 and length 0.3 held, or sampled from there (under
# kappa 3 in bayes_k3; under the log-normal noise prior in bayes_ln)
FITTED = ("joint", "bayes", "bayes_k3", "bayes_ln")
# arms of the library's own smooth share (``surrogate_specs.smooth_share``: the share sampled
# with the trees, one BoTorch-fitted length per continuous input), through this random search:
# arm -> the strategy's changes
SHARE_ARMS = {"share": {"surrogate_specs": {"smooth_share": True}},
              "share_ln": {"surrogate_specs": {"smooth_share": True,
                                               "noise_prior": "lognormal"}}}
# the mixture's trap is ingredient 1 alone (cost 1.2): a run below this left it
LEFT_TRAP = 1.1
SHARES = (0.0, 0.25, 0.5, 0.75)
LENGTHS = (0.1, 0.2, 0.4, 0.8)
SAMPLES = 32
N_RANDOM = 3000
N_LOCAL = 600
KAPPA = 1.96


def _scaled(domain, X: pd.DataFrame) -> np.ndarray:
    """The continuous inputs of ``X`` scaled to [0, 1] by their bounds (the RBF's inputs)."""
    from bofire.data_models.features.api import ContinuousInput

    cols = [(f.key, *f.bounds) for f in domain.inputs.get(ContinuousInput)]
    if not cols:
        return np.zeros((len(X), 0))
    return np.column_stack([(X[k].to_numpy(float) - lo) / max(hi - lo, 1e-12)
                            for k, lo, hi in cols])


def _candidates(name: str, problem, domain, frame: pd.DataFrame, y_key: str, lower: bool,
                rng) -> pd.DataFrame:
    """Random feasible points and perturbations of the best three measured ones."""
    keys = problem.keys
    if name == "mixture":
        best = frame.sort_values(y_key, ascending=lower).head(3)[keys].to_numpy(float)
        from benchmarks.chem_suite import MAX_USED

        d = len(keys)
        rows = [np.eye(d)]
        used = rng.choice(np.arange(1, MAX_USED + 1), size=N_RANDOM, p=[0.1, 0.3, 0.6])
        R = np.zeros((N_RANDOM, d))
        for i, k in enumerate(used):
            idx = rng.choice(d, size=k, replace=False)
            R[i, idx] = rng.dirichlet(np.ones(k))
        rows.append(R)
        for b in best:  # move within the point's ingredients, or swap a little in
            L = np.repeat(b[None], N_LOCAL // 3, axis=0)
            support = np.flatnonzero(b > 1e-6)
            for i in range(len(L)):
                if len(support) < MAX_USED and rng.random() < 0.5:
                    extra = rng.choice(np.setdiff1d(np.arange(d), support))
                    L[i, extra] = rng.uniform(0, 0.3)
                idx = np.flatnonzero(L[i] > 0)
                L[i, idx] *= np.exp(rng.normal(0, 0.2, len(idx)))
                L[i] /= L[i].sum()
            rows.append(L)
        return pd.DataFrame(np.vstack(rows), columns=keys)
    from bofire.data_models.features.api import CategoricalInput, ContinuousInput

    cont = domain.inputs.get(ContinuousInput)
    cats = domain.inputs.get(CategoricalInput)
    out = {f.key: rng.uniform(*f.bounds, N_RANDOM) for f in cont}
    out.update({f.key: rng.choice(f.categories, N_RANDOM) for f in cats})
    local = frame.sort_values(y_key, ascending=lower).head(3)
    parts = [pd.DataFrame(out)]
    for _, r in local.iterrows():
        n = N_LOCAL // 3
        p = {f.key: np.clip(r[f.key] + rng.normal(0, 0.1, n) * (f.bounds[1] - f.bounds[0]),
                            *f.bounds) for f in cont}
        p.update({f.key: np.where(rng.random(n) < 0.2, rng.choice(f.categories, n),
                                  r[f.key]) for f in cats})
        parts.append(pd.DataFrame(p))
    return pd.concat(parts, ignore_index=True)[keys]


class Hybrid:
    """``samples`` of a told strategy's posterior samples (every one: None) with the forest
    kernel among the training points and to the candidates ``cand``, and the squared distances
    of the scaled continuous inputs, from which ``fit`` makes the hybrid kernel of any
    (share, length)."""

    def __init__(self, strategy, frame: pd.DataFrame, cand: pd.DataFrame,
                 samples: int | None = SAMPLES):
        from bofire_bark.engine.forest import Forest, route_all

        key = strategy.domain.outputs.get_keys()[0]
        post = strategy.posteriors()[key]
        space = strategy.surrogates[key].space
        n = len(post.y)
        X = np.vstack([post.X, space.encode(cand)])
        Z = _scaled(strategy.domain, pd.concat([frame[cand.columns], cand], ignore_index=True))
        sq = (Z**2).sum(axis=1)
        self.d2 = np.maximum(sq[:, None] + sq[None, :n] - 2 * Z @ Z[:n].T, 0.0)  # (N + n, N)
        count = post.n_samples if samples is None else samples
        self.picks = np.unique(np.linspace(0, post.n_samples - 1, count).round().astype(int))
        self.noise = post.samples["sigma2"][self.picks]
        Kf = []
        for s in self.picks:
            f = Forest.of_sample(post.samples, s)
            leaf = route_all(f.feat, f.thr, f.mask, f.left, f.right, post.kinds, X,
                             np.empty((f.feat.shape[0], len(X)), dtype=np.int64))
            K = np.zeros((len(X), n))
            for t in range(len(leaf)):
                K += leaf[t][:, None] == leaf[t][None, :n]
            Kf.append(K / len(leaf))
        self.Kf, self.y, self.n = np.array(Kf), post.y, n
        # a smooth correlation (N + n, N) given from outside (``gp_correlation``), used when
        # ``fit`` gets no length
        self.smooth: np.ndarray | None = None

    def fit(self, share: float, length: float | None):
        """(summed log ML of the samples, per-sample means and latent variances (S, n) at the
        candidates) under ``(1 - share) K_forest + share K_rbf(length)`` (``self.smooth``
        instead of the RBF when ``length`` is None)."""
        n, y = self.n, self.y
        smooth = self.smooth if length is None else np.exp(-0.5 * self.d2 / length**2)
        Kx = (1 - share) * self.Kf + share * smooth[None]
        log_ml, means, variances = 0.0, [], []
        for i in range(len(Kx)):
            L = np.linalg.cholesky(Kx[i, :n] + self.noise[i] * np.eye(n))
            a = np.linalg.solve(L.T, np.linalg.solve(L, y))
            log_ml += -0.5 * y @ a - np.log(np.diag(L)).sum()
            kc = Kx[i, n:]
            V = np.linalg.solve(L, kc.T)
            means.append(kc @ a)
            variances.append(np.maximum(1.0 - (V**2).sum(axis=0), 0.0))
        return log_ml, np.array(means), np.array(variances)


def gp_correlation(gp, frame: pd.DataFrame, cand: pd.DataFrame) -> np.ndarray:
    """(N + n, N) correlation of a told BoFire GP strategy's fitted kernel (its ARD lengths,
    without an output scale) between the rows of ``frame`` then ``cand`` and those of
    ``frame``."""
    import torch

    rows = pd.concat([frame[cand.columns], cand], ignore_index=True)
    T = gp.domain.inputs.transform(rows, gp.input_preprocessing_specs).to_numpy(float)
    model = gp.model
    kernel = getattr(model.covar_module, "base_kernel", model.covar_module)
    with torch.no_grad():
        Z = torch.from_numpy(T)
        if getattr(model, "input_transform", None) is not None:
            Z = model.input_transform(Z)
        return kernel(Z, Z[:len(frame)]).to_dense().numpy()


def hybrid_choice(strategy, frame: pd.DataFrame, cand: pd.DataFrame, lower: bool,
                  shares=SHARES, lengths=LENGTHS, smooth: np.ndarray | None = None,
                  noise: float | None = None) -> tuple[int, float, float]:
    """Index of the candidate with the best integrated UCB under the hybrid kernel whose
    (share, length) has the highest summed log marginal likelihood, and that pair
    (``smooth``: the correlation to use instead of the RBF, the length then None; ``noise``:
    one noise variance for every sample instead of each sample's own)."""
    hybrid = Hybrid(strategy, frame, cand)
    if smooth is not None:
        hybrid.smooth, lengths = smooth, (None,)
    if noise is not None:
        hybrid.noise = np.full_like(hybrid.noise, noise)
    fits = [(hybrid.fit(s, ln), s, ln) for s in shares for ln in (
        lengths if s > 0 else lengths[:1])]
    (_, means, variances), share, length = max(fits, key=lambda f: f[0][0])
    sign = -1.0 if lower else 1.0
    acq = np.zeros(len(cand))
    for mean, var in zip(means, variances, strict=True):
        acq += sign * mean + KAPPA * np.sqrt(var)
    return int(np.argmax(acq)), share, length


def _setup(name: str, strategy, problem, frame: pd.DataFrame, seed: int, it: int):
    """(whether the output is minimized, this iteration's candidates) of a propose call."""
    key = strategy.domain.outputs.get_keys()[0]
    lower = bool(getattr(problem, "minimize", False))
    return lower, _candidates(name, problem, strategy.domain, frame, key, lower,
                              np.random.default_rng([seed, it]))


def proposer(name: str, arm: str, folder: Path):
    """``chem_bo.run_one``'s ``propose`` for ``arm``; each choice's (share, length) goes to
    ``folder / "choices.csv"``."""
    from benchmarks.max_phases import _append

    shares = {"forest": (0.0,), "half": (0.5,)}.get(arm, SHARES)

    def propose_gp(strategy, problem, frame: pd.DataFrame, seed: int, it: int) -> pd.DataFrame:
        import torch

        lower, cand = _setup(name, strategy, problem, frame, seed, it)
        if arm == "gp_nei":
            acq = strategy.calc_acquisition(cand).ravel()
        else:
            X = strategy.domain.inputs.transform(cand, strategy.input_preprocessing_specs)
            with torch.no_grad():
                post = strategy.model.posterior(torch.from_numpy(X.to_numpy(float)))
            mean, sd = post.mean.numpy().ravel(), np.sqrt(post.variance.numpy().ravel())
            acq = (-mean if lower else mean) + KAPPA * sd
        return cand.iloc[[int(np.argmax(acq))]].reset_index(drop=True)

    if arm in GP_ARMS:
        return propose_gp

    def propose_gpk(strategy, problem, frame: pd.DataFrame, seed: int, it: int):
        from benchmarks.chem_bo import strategy_of

        lower, cand = _setup(name, strategy, problem, frame, seed, it)
        gp = strategy_of(name, "sobo", strategy.domain, seed + 1000 * it)
        gp.tell(frame)
        # gpk_noise: the GP's noise variance (of its standardized output) for every sample
        noise = (float(gp.model.likelihood.noise.detach().reshape(-1)[0])
                 if arm == "gpk_noise" else None)
        i, share, _ = hybrid_choice(strategy, frame, cand, lower, noise=noise,
                                    smooth=gp_correlation(gp, frame, cand))
        _append(Path(folder) / "choices.csv", [{"iteration": it, "share": share,
                                                 "length": np.nan}])
        return cand.iloc[[i]].reset_index(drop=True)

    if arm in ("gpk", "gpk_noise"):
        return propose_gpk

    def propose_share(strategy, problem, frame: pd.DataFrame, seed: int, it: int):
        lower, cand = _setup(name, strategy, problem, frame, seed, it)
        key = strategy.domain.outputs.get_keys()[0]
        post = strategy.posteriors()[key]
        X = strategy.surrogates[key].space.encode(cand)
        acq = post.systems().integrated_ucb(X, KAPPA, -1.0 if lower else 1.0)
        shares = post.samples.get("smooth_share", np.zeros(1))
        _append(Path(folder) / "choices.csv", [{"iteration": it, "share": float(shares.mean()),
                                                 "length": np.nan}])
        return cand.iloc[[int(np.argmax(acq))]].reset_index(drop=True)

    if arm in SHARE_ARMS:
        return propose_share

    def propose(strategy, problem, frame: pd.DataFrame, seed: int, it: int) -> pd.DataFrame:
        lower, cand = _setup(name, strategy, problem, frame, seed, it)
        i, share, length = hybrid_choice(strategy, frame, cand, lower, shares=shares)
        _append(Path(folder) / "choices.csv", [{"iteration": it, "share": share,
                                                 "length": length if share > 0 else np.nan}])
        return cand.iloc[[i]].reset_index(drop=True)
    return propose


def run(out: Path = DEFAULT_OUT, problems=PROBLEMS, arms=ARMS, seeds: int = 8,
        first: int = 0) -> None:
    from benchmarks import chem_bo
    from benchmarks.chem_suite import PROBLEMS as SUITE
    from benchmarks.chem_suite import Mixture

    for seed in range(first, first + seeds):
        for name in problems:
            for arm in arms:
                problem = Mixture() if name == "mixture" else chem_bo.make_problem(name)
                folder = Path(out) / "runs" / name / arm / f"seed{seed}"
                method = "sobo" if arm in GP_ARMS else "bark"
                chem_bo.run_one(problem, name, method, seed, SUITE[name].iterations, folder,
                                changes=SHARE_ARMS.get(arm), propose=proposer(name, arm, folder))
                print(name, arm, seed, "done", flush=True)


def summary(out: Path = DEFAULT_OUT) -> str:
    from scipy import stats

    from benchmarks.chem_suite import DEFAULT_OUT as SUITE_OUT
    from benchmarks.chem_suite import PROBLEMS as SUITE
    from benchmarks.chem_suite import per_run

    rows = []
    for path in sorted(Path(out).glob("runs/*/*/seed*/*/runs.csv")):
        r = pd.read_csv(path)
        name, arm, seed = path.parts[-5], path.parts[-4], int(path.parts[-3][4:])
        if r.iteration.max() < SUITE[name].iterations:
            continue
        rows.append({"problem": name, "method": arm, "seed": seed, "value": r.best.iloc[-1]})
    runs = pd.DataFrame(rows)
    suite = per_run(SUITE_OUT)
    suite = suite[suite.method.isin(["bark", "sobo"]) & suite.problem.isin(runs.problem)]
    runs = pd.concat([runs, suite[["problem", "method", "seed", "value"]]], ignore_index=True)
    table = []
    for name, g in runs.groupby("problem"):
        lower = SUITE[name].lower_is_better
        wide = g.pivot_table(index="seed", columns="method", values="value")
        order = [*ARMS, *FITTED, *SHARE_ARMS, "bark", "sobo"]
        for arm in sorted(wide, key=lambda a: order.index(a) if a in order else len(order)):
            line = {"problem": name, "method": arm, "seeds": int(wide[arm].notna().sum()),
                    "median": f"{wide[arm].median():.4f}",
                    "left the trap": (f"{int((wide[arm] < LEFT_TRAP).sum())}"
                                      if name == "mixture" else "-")}
            for ref in ("forest", "bark", "sobo"):
                if ref == arm or ref not in wide:
                    continue
                both = wide[[arm, ref]].dropna()
                diff = (both[ref] - both[arm]) * (1 if lower else -1)
                b, w = int((diff > 1e-9).sum()), int((diff < -1e-9).sum())
                p = stats.binomtest(b, b + w).pvalue if b + w else 1.0
                line[f"vs {ref} b/t/w"] = f"{b} / {len(both) - b - w} / {w}"
                line[f"p vs {ref}"] = f"{p:.3g}"
            table.append(line)
    text = ("# The smooth share screened in the loop (issue 35)\n\nGenerated by `PYTHONPATH=. "
            "python -m benchmarks.smooth_screen summary` (the protocol: the module's "
            "docstring; `joint`, `bayes`, `bayes_k3` and `bayes_ln` from branch `smooth-kernel`). "
            "Final best "
            "per seed (on the mixture also the seeds below cost 1.1, out of the trap at 1.2), "
            "runs that reached the suite's iterations only; paired by seed (better / tied / "
            "worse, two-sided sign test); `bark` and `sobo` are the chemistry suite's runs of "
            "the same seeds.\n\n"
            + markdown_table(pd.DataFrame(table).set_index("problem").fillna("-")) + "\n")
    publish(Path(out) / "summary.md", text)
    return text


def fits(seed: int = 2, iterations: int = 10, arms=("forest", "gp")) -> str:
    """The noise and lengths each model fits on the mixture's points of the suite's ``bark``
    run ``seed`` after ``iterations`` (its trap): BARK's noise variance (median over the
    samples, standardized output), the GP's noise variance and ARD lengths (BoFire's
    defaults), and for an arm fitted with the smooth share (on branch ``smooth-kernel``)
    its share, length and, with ARD, lengths (medians over the samples)."""
    from benchmarks.chem_bo import strategy_of
    from benchmarks.chem_suite import DEFAULT_OUT as SUITE_OUT
    from benchmarks.chem_suite import INGREDIENTS, Mixture

    rows = pd.read_csv(Path(SUITE_OUT) / f"runs/mixture/bark/seed{seed}/mixture/runs.csv")
    rows = rows[rows.iteration <= iterations]
    frame = rows[list(INGREDIENTS)].copy()
    frame["cost"] = rows["y"].to_numpy()
    lines = [f"mixture, suite's bark seed {seed}, first {iterations} iterations "
             f"({len(frame)} points):"]
    for arm in arms:
        if arm not in ("forest", "gp") and not (isinstance(FITTED, dict) and arm in FITTED):
            raise SystemExit(f"fits: {arm!r} is not 'forest', 'gp' or a fitted arm here (the "
                             "fitted arms run from branch smooth-kernel)")
        if arm == "gp":
            gp = strategy_of("mixture", "sobo", Mixture().domain(), seed)
            gp.tell(frame)
            kernel = getattr(gp.model.covar_module, "base_kernel", gp.model.covar_module)
            lengths = kernel.lengthscale.detach().numpy().ravel()
            noise = float(gp.model.likelihood.noise.detach().reshape(-1)[0])
            lines.append(f"- gp: noise variance {noise:.4f}, lengths "
                         + ", ".join(f"{v:.2f}" for v in lengths))
            continue
        changes = FITTED.get(arm) if isinstance(FITTED, dict) else None
        strategy = strategy_of("mixture", "bark", Mixture().domain(), seed, changes)
        strategy.tell(frame)
        samples = strategy.posteriors()["cost"].samples
        line = f"- {arm}: noise variance {np.median(samples['sigma2']):.4f}"
        for key in ("smooth_share", "smooth_length"):
            if key in samples:
                line += f", {key} {np.median(samples[key]):.2f}"
        if "smooth_scales" in samples:
            line += ", lengths " + ", ".join(
                f"{v:.2f}" for v in np.median(samples["smooth_scales"], axis=0))
        lines.append(line)
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--out", type=Path, default=DEFAULT_OUT)
    r.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=PROBLEMS)
    r.add_argument("--arms", nargs="+", default=list(ARMS), choices=[*ARMS, *SHARE_ARMS])
    r.add_argument("--seeds", type=int, default=8)
    r.add_argument("--first-seed", type=int, default=0)
    s = sub.add_parser("summary")
    s.add_argument("--out", type=Path, default=DEFAULT_OUT)
    f = sub.add_parser("fits", help=fits.__doc__.splitlines()[0])
    f.add_argument("--seed", type=int, default=2)
    f.add_argument("--iterations", type=int, default=10)
    f.add_argument("--arms", nargs="+", default=["forest", "gp"])
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.out, args.problems, args.arms, args.seeds, args.first_seed)
    elif args.command == "fits":
        print(fits(args.seed, args.iterations, args.arms))
    else:
        print(summary(args.out))


if __name__ == "__main__":
    main()

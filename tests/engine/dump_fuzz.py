"""Child process of ``test_store.py``: loads a real BARK dump corrupted in many ways, one line
of JSON per case (name, outcome, message) as each ends, so a crash names the case it hit.

Outcomes: ``error`` (a ValueError), ``valid`` (loaded; its predictions are finite and the
chains continue on new data), ``other`` (any other exception: a failure for the test).
Run: ``python tests/engine/dump_fuzz.py [n_random]``.
"""

from __future__ import annotations

import base64
import io
import json
import sys

import numpy as np
import pandas as pd


def setup():
    import bofire.surrogates.api as surrogates
    from bofire.data_models.domain.api import Inputs, Outputs
    from bofire.data_models.features.api import (
        CategoricalInput,
        ContinuousInput,
        ContinuousOutput,
        DiscreteInput,
    )

    import bofire_bark  # noqa: F401  (registers BARK)
    from bofire_bark.data_models import BARKSurrogate

    # 70 categories: masks of two 64-bit words
    inputs = Inputs(features=[
        ContinuousInput(key="x", bounds=(0.0, 1.0)),
        DiscreteInput(key="k", values=[1.0, 2.0, 4.0, 8.0]),
        CategoricalInput(key="c", categories=[f"c{i}" for i in range(70)])])
    outputs = Outputs(features=[ContinuousOutput(key="y")])
    model = BARKSurrogate(inputs=inputs, outputs=outputs, n_trees=10, n_chains=2, n_samples=2,
                          thinning=10, burn_in=300, seed=1, split_prior="dirichlet",
                          max_sampling_sweeps=0)  # the sparse prior: its arrays too
    rng = np.random.default_rng(0)
    X = inputs.sample(40, seed=2)
    y = np.sin(6 * X["x"]) + X["k"] / 4 + X["c"].str[1:].astype(int) % 3 + rng.normal(0, .1, 40)
    data = pd.concat([X, pd.DataFrame({"y": y})], axis=1)
    sur = surrogates.map(model)
    sur.fit(data)
    return surrogates, model, sur.dumps(), data


def encode(arrays: dict) -> str:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return base64.b64encode(buffer.getvalue()).decode()


def targeted(arrays: dict, rng) -> dict[str, dict]:
    """Corruptions that must be refused, each by name."""
    cases = {}

    def with_(key, fn):
        a = {k: v.copy() for k, v in arrays.items()}
        a[key] = fn(a[key])
        return a

    def internal(prefix):
        feat = arrays[f"{prefix}feat"]
        idx = np.argwhere(feat >= 0)
        return tuple(idx[rng.integers(len(idx))])

    def leaf(prefix):
        idx = np.argwhere(arrays[f"{prefix}feat"] == -1)
        return tuple(idx[len(idx) // 2])

    def set_at(where, value):
        def fn(a):
            a[where] = value
            return a
        return fn

    for prefix in ("sample_", "chain0_"):
        node = internal(prefix)
        root = (*node[:-1], 0)
        cases.update({
            f"{prefix}feat 10^6": with_(f"{prefix}feat", set_at(node, 10**6)),
            f"{prefix}feat -3": with_(f"{prefix}feat", set_at(node, -3)),
            f"{prefix}feat root free": with_(f"{prefix}feat", set_at(root, -2)),
            f"{prefix}feat leaf made a split": with_(f"{prefix}feat", set_at(leaf(prefix), 0)),
            f"{prefix}left 10^7": with_(f"{prefix}left", set_at(node, 10**7)),
            f"{prefix}left -1 on a split": with_(f"{prefix}left", set_at(node, -1)),
            f"{prefix}left cycle to root": with_(f"{prefix}left", set_at(node, 0)),
            f"{prefix}right 10^7": with_(f"{prefix}right", set_at(node, 10**7)),
            f"{prefix}right = left": with_(
                f"{prefix}right", set_at(node, arrays[f"{prefix}left"][node])),
            f"{prefix}parent wrong": with_(
                f"{prefix}parent", set_at((*node[:-1], arrays[f"{prefix}left"][node]), 10**5)),
            f"{prefix}depth wrong": with_(
                f"{prefix}depth", set_at((*node[:-1], arrays[f"{prefix}left"][node]), 7)),
            f"{prefix}thr nan": with_(f"{prefix}thr", set_at(node, np.nan)),
            f"{prefix}thr inf": with_(f"{prefix}thr", set_at(node, np.inf)),
            f"{prefix}thr 1e9": with_(f"{prefix}thr", set_at(node, 1e9)),
            f"{prefix}thr -1e9": with_(f"{prefix}thr", set_at(node, -1e9)),
        })
        feat = arrays[f"{prefix}feat"]
        for j, what in ((0, "continuous"), (1, "discrete"), (2, "categorical")):
            idx = np.argwhere(feat == j)
            if not len(idx):
                continue
            at = tuple(idx[0])
            if what == "continuous":
                cases[f"{prefix}thr continuous 1e9"] = with_(f"{prefix}thr", set_at(at, 1e9))
                cases[f"{prefix}thr continuous -0.5"] = with_(f"{prefix}thr", set_at(at, -0.5))
            if what == "discrete":
                cases[f"{prefix}thr discrete 0.5"] = with_(f"{prefix}thr", set_at(at, 0.5))
                cases[f"{prefix}thr discrete 3"] = with_(f"{prefix}thr", set_at(at, 3.0))
            if what == "categorical":
                cases[f"{prefix}mask bit 100"] = with_(
                    f"{prefix}mask", set_at((*at, 1), np.uint64(1) << np.uint64(40)))
                cases[f"{prefix}mask empty"] = with_(
                    f"{prefix}mask", set_at(at, np.zeros(2, dtype=np.uint64)))
                full = np.array([2**64 - 1, 2**6 - 1], dtype=np.uint64)
                cases[f"{prefix}mask all categories"] = with_(f"{prefix}mask", set_at(at, full))
    cases.update({
        "sample_sigma2 -1": with_("sample_sigma2", set_at(0, -1.0)),
        "sample_sigma2 0": with_("sample_sigma2", set_at(0, 0.0)),
        "sample_sigma2 nan": with_("sample_sigma2", set_at(0, np.nan)),
        "chain0_sigma2 inf": with_("chain0_sigma2", set_at(0, np.inf)),
        "sample_split_prob 2": with_("sample_split_prob", set_at((0, 0), 2.0)),
        "sample_split_concentration -1": with_("sample_split_concentration", set_at(0, -1.0)),
        "chain0_split_log_w nan": with_("chain0_split_log_w", set_at(0, np.nan)),
        "chain0_split_log_w not summing to one": with_("chain0_split_log_w", lambda a: a + 1),
        "chain0_split_conc 0": with_("chain0_split_conc", set_at(0, 0.0)),
        "chain1_state zero": with_("chain1_state", lambda a: np.zeros_like(a)),
        "X nan": with_("X", set_at((0, 0), np.nan)),
        "X category code 99": with_("X", set_at((0, 2), 99.0)),
        "X discrete index 1.5": with_("X", set_at((0, 1), 1.5)),
        "X one column short": with_("X", lambda a: a[:, :2].copy()),
        "y one short": with_("y", lambda a: a[:-1].copy()),
        "y inf": with_("y", set_at(3, np.inf)),
        "scale std 0": with_("scale", set_at(1, 0.0)),
        "n_fits -1": with_("n_fits", set_at(0, -1)),
    })
    for key in arrays:
        cases[f"{key} missing"] = {k: v for k, v in arrays.items() if k != key}
        other = np.float32 if arrays[key].dtype != np.float32 else np.float64
        cases[f"{key} as {np.dtype(other).name}"] = with_(key, lambda a, o=other: a.astype(o))
        cases[f"{key} as int32"] = with_(key, lambda a: a.astype(np.int32))
        cases[f"{key} one row short"] = with_(key, lambda a: a[:-1].copy())
        cases[f"{key} extra axis"] = with_(key, lambda a: a[None].copy())
    cases["extra array"] = {**arrays, "sample_extra": np.zeros(3)}
    cases["extra chain 2"] = {**arrays, **{k.replace("chain1", "chain2"): v for k, v in
                                          arrays.items() if k.startswith("chain1")}}
    return {name: encode(a) for name, a in cases.items()}


def texts(dump: str, arrays: dict, n_random: int, rng) -> tuple[dict, dict]:
    """(must_fail, may_pass): named dump texts."""
    must = targeted(arrays, rng)
    must["object array"] = None  # filled below: np.savez pickles object arrays
    buffer = io.BytesIO()
    np.savez(buffer, **{**arrays, "X": np.array([{"a": 1}, None], dtype=object)})
    must["object array"] = base64.b64encode(buffer.getvalue()).decode()
    must["not base64"] = dump[:100] + "!!!" + dump[100:]
    must["empty"] = ""
    must["zip of nothing"] = encode({})
    raw = base64.b64decode(dump)
    may = {}
    for i in range(n_random):
        kind = i % 4
        if kind == 0:  # flipped bytes of the archive
            b = bytearray(raw)
            for _ in range(int(rng.integers(1, 4))):
                b[int(rng.integers(len(b)))] ^= 1 << int(rng.integers(8))
            may[f"flip bytes {i}"] = base64.b64encode(bytes(b)).decode()
        elif kind == 1:  # truncated text
            may[f"truncate {i}"] = dump[:int(rng.integers(len(dump)))]
        elif kind == 2:  # one element of one array set to a nasty value
            a = {k: v.copy() for k, v in arrays.items()}
            key = list(a)[int(rng.integers(len(a)))]
            flat = a[key].reshape(-1)
            if len(flat):
                nasty = [0, 1, -1, -2, 2, 5, 31, 32, 10**6, -10**9, 2**62]
                if flat.dtype.kind == "f":
                    nasty += [np.nan, np.inf, -np.inf, 0.5, 1e300, -0.0]
                value = nasty[int(rng.integers(len(nasty)))]
                try:
                    flat[int(rng.integers(len(flat)))] = value
                except (OverflowError, ValueError):
                    flat[0] = 0
            may[f"perturb {key} {i}"] = encode(a)
        else:  # a random array swapped for another key's (shape and dtype mix-ups)
            a = dict(arrays)
            k1, k2 = (list(a)[int(j)] for j in rng.integers(len(a), size=2))
            a[k1] = arrays[k2]
            may[f"swap {k1} <- {k2} {i}"] = encode(a)
    return must, may


def run_case(surrogates, model, text: str | None, data) -> tuple[str, str]:
    try:
        sur = surrogates.map(model.model_copy(update={"dump": text}))
    except ValueError as err:
        return "error", str(err)[:300]
    except Exception as err:
        return "other", f"{type(err).__name__}: {err}"[:300]
    try:
        pred = sur.predict(data)
        if not np.isfinite(pred.to_numpy(dtype=float)).all():
            return "other", "predictions are not finite"
        sur.fit(data.iloc[:-3])  # the chains continue on new data
        if not np.isfinite(sur.predict(data).to_numpy(dtype=float)).all():
            return "other", "predictions after a refit are not finite"
    except Exception as err:
        return "other", f"after loading: {type(err).__name__}: {err}"[:300]
    return "valid", ""


def main(n_random: int = 200) -> None:
    import logging

    logging.disable(logging.WARNING)  # refits warn about mixing; not this test's business
    from bofire_bark.engine import store

    surrogates, model, dump, data = setup()
    rng = np.random.default_rng(1)
    arrays = store.read_arrays(dump)
    must, may = texts(dump, arrays, n_random, rng)
    cases = [("original", dump, "valid")]
    cases += [(name, t, "error") for name, t in must.items()]
    cases += [(name, t, "any") for name, t in may.items()]
    for name, text, expect in cases:
        outcome, message = run_case(surrogates, model, text, data)
        print(json.dumps({"case": name, "expect": expect, "outcome": outcome,
                          "message": message}), flush=True)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))

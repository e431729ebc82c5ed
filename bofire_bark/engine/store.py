"""A fitted posterior and its chains as one text (``dumps``), read back with every array checked
before a kernel sees it (``loads``).

The text is base64 of an ``.npz`` archive. Kernels index without bounds checks and walk trees
by their links, so an array that is out of range, or links that do not form trees, would read
foreign memory or loop forever. ``loads`` therefore checks, before building anything: the
archive (size declared per entry, no object arrays, every header's shape within its entry),
the keys, every dtype and shape, that links form one tree per forest rooted at node 0 with
consistent parents and depths, that split features are inputs, that each rule is one the prior
can draw at its node (a threshold inside the node's interval and the bounds, a category
subset that is non-empty, proper and within the node's categories), positive finite noise
variances, valid split-prior states and generator states, and X, y consistent with the
space. Anything else is a ``ValueError`` naming the array and the problem.
"""

from __future__ import annotations

import base64
import binascii
import io
import zipfile

import numpy as np

from bofire_bark.engine.checks import check_space, check_X, check_y
from bofire_bark.engine.forest import (
    CATEGORICAL,
    CONTINUOUS,
    DISCRETE,
    FOREST_KEYS,
    FREE,
    LEAF,
    n_words,
)
from bofire_bark.engine.likelihood import SMOOTH_SHARE
from bofire_bark.engine.model import Posterior
from bofire_bark.engine.sampler import Chain, MCMCSettings
from bofire_bark.engine.smooth import MAX_BINS, SmoothKernel

# Above this many bytes unpacked a dump is refused before it is read (a fitted model of
# 64 chains x 1000 trees is far below it).
MAX_BYTES = 2**31
DIRICHLET_KEYS = ("split_prob", "split_concentration")
CHAIN_SPLIT_KEYS = ("split_log_w", "split_conc")
SMOOTH_KEYS = ("cols", "lower", "upper", "lengths", "bins")
SMOOTH_CAT_KEYS = ("cat_cols", "cat_d2")
_INT = ("feat", "left", "right", "parent", "depth")


def dumps(posterior: Posterior, n_fits: int) -> str:
    """The posterior's samples, data, standardization and chains as base64 text."""
    arrays = {f"sample_{k}": v for k, v in posterior.samples.items()}
    arrays.update(X=posterior.X, y=posterior.y,
                  scale=np.array([posterior.y_mean, posterior.y_std]),
                  n_fits=np.array([n_fits], dtype=np.int64))
    if posterior.smooth is not None:
        k = posterior.smooth
        arrays.update(smooth_cols=k.cols, smooth_lower=k.lower, smooth_upper=k.upper,
                      smooth_lengths=k.lengths, smooth_bins=np.array([k.n_bins], np.int64),
                      smooth_cat_cols=k.cat_cols, smooth_cat_d2=k.cat_d2)
    for c, chain in enumerate(posterior.chains or []):
        for k in FOREST_KEYS:
            arrays[f"chain{c}_{k}"] = chain.forest[k]
        arrays[f"chain{c}_sigma2"] = chain.sigma2
        if chain.smooth is not None:
            arrays[f"chain{c}_share"] = chain.smooth_hyp[SMOOTH_SHARE:SMOOTH_SHARE + 1]
        arrays[f"chain{c}_state"] = chain.state
        for k, v in chain.split_state.items():
            arrays[f"chain{c}_{k}"] = v
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return base64.b64encode(buffer.getvalue()).decode()


def loads(text, space, settings: MCMCSettings, n_chains: int, n_samples: int,
          smooth_share: bool = False) -> tuple[Posterior, int]:
    """The posterior (with its chains, ready to continue) and the fit count of a ``dumps``
    text, for the split ``space`` (a ``Space`` or its four arrays) and the surrogate's
    settings; ``n_chains`` chains of which ``n_samples`` samples each were kept (a prior-only
    dump has ``n_chains * n_samples`` samples and no chains); ``smooth_share``: the kernel
    has a smooth share (``engine.smooth``), whose kernel and shares the dump then holds.

    Raises:
        ValueError: naming the array and what is wrong with it.
    """
    arrays = read_arrays(text)
    space = check_space(space)
    dirichlet = settings.split_prior == "dirichlet"
    chain_ids = sorted({int(k[5:k.index("_")]) for k in arrays
                        if k.startswith("chain") and "_" in k and k[5:k.index("_")].isdigit()})
    if chain_ids and chain_ids != list(range(n_chains)):
        raise ValueError(f"dump: chains {chain_ids}, expected 0 .. {n_chains - 1} "
                         f"(n_chains {n_chains}) or none")
    expected = {f"sample_{k}" for k in FOREST_KEYS} | {"sample_sigma2", "X", "y", "scale",
                                                       "n_fits"}
    if chain_ids:
        # samples of a fit always carry the sparse prior's state, chains too
        expected |= {f"sample_{k}" for k in DIRICHLET_KEYS} if dirichlet else set()
        for c in chain_ids:
            expected |= {f"chain{c}_{k}" for k in (*FOREST_KEYS, "sigma2", "state",
                                                    *CHAIN_SPLIT_KEYS)}
    elif dirichlet:
        expected |= {f"sample_{k}" for k in DIRICHLET_KEYS}
    if smooth_share:
        expected |= {f"smooth_{k}" for k in SMOOTH_KEYS} | {"sample_smooth_share"}
        # dumps written before categorical coordinates existed have no tables: none then
        expected |= {f"smooth_{k}" for k in SMOOTH_CAT_KEYS if "smooth_cat_cols" in arrays}
        expected |= {f"chain{c}_share" for c in chain_ids}
    missing = sorted(expected - set(arrays))
    extra = sorted(set(arrays) - expected)
    context = (f"split_prior {settings.split_prior!r}, {len(chain_ids)} chains, smooth_share "
               f"{smooth_share}")
    if missing:
        raise ValueError(f"dump: arrays {missing} are missing ({context})")
    if extra:
        raise ValueError(f"dump: unexpected arrays {extra} ({context})")

    d = len(space.var_col)  # split variables (the inputs without descriptors)
    X = check_X(_array(arrays, "X", np.float64, 2), space, "dump array X")
    try:
        y = check_y(_array(arrays, "y", np.float64, 1), len(X))
    except ValueError as err:
        raise ValueError(f"dump array {err}") from None
    scale = _array(arrays, "scale", np.float64, 1, (2,))
    if not (np.isfinite(scale).all() and scale[1] > 0.0):
        raise ValueError(f"dump array scale: expected a finite mean and a positive standard "
                         f"deviation, got {scale.tolist()}")
    n_fits = _array(arrays, "n_fits", np.int64, 1, (1,))
    if n_fits[0] < 0:
        raise ValueError(f"dump array n_fits: expected >= 0, got {int(n_fits[0])}")

    n_total = n_chains * n_samples
    samples = check_forest({k: arrays[f"sample_{k}"] for k in FOREST_KEYS}, space,
                           settings.n_trees, "sample_", n_total)
    samples["sigma2"] = _positive(_array(arrays, "sample_sigma2", np.float64, 1, (n_total,)),
                                  "sample_sigma2")
    if "sample_split_prob" in arrays:
        prob = _array(arrays, "sample_split_prob", np.float64, 2, (n_total, d))
        if not (np.isfinite(prob).all() and (prob >= 0).all() and (prob <= 1).all()):
            raise ValueError("dump array sample_split_prob: expected probabilities in [0, 1]")
        samples["split_prob"] = prob
        samples["split_concentration"] = _positive(
            _array(arrays, "sample_split_concentration", np.float64, 1, (n_total,)),
            "sample_split_concentration")

    smooth = _smooth_kernel(arrays, space) if smooth_share else None
    if smooth is not None:
        samples["smooth_share"] = _share(_array(arrays, "sample_smooth_share", np.float64, 1,
                                                (n_total,)), "sample_smooth_share")
    chains = []
    for c in chain_ids:
        state = _array(arrays, f"chain{c}_state", np.uint64, 1, (4,))
        if not state.any():
            raise ValueError(f"dump array chain{c}_state: an all-zero generator state "
                             "(it would draw zeros forever)")
        chain = Chain(space, settings, state)
        chain.forest = check_forest({k: arrays[f"chain{c}_{k}"] for k in FOREST_KEYS}, space,
                                    settings.n_trees, f"chain{c}_")
        chain.sigma2 = _positive(_array(arrays, f"chain{c}_sigma2", np.float64, 1, (1,)),
                                 f"chain{c}_sigma2")
        log_w = _array(arrays, f"chain{c}_split_log_w", np.float64, 1, (d,))
        conc = _positive(_array(arrays, f"chain{c}_split_conc", np.float64, 1, (1,)),
                         f"chain{c}_split_conc")
        active = chain.tree_prior.active
        if not (np.isfinite(log_w[active]).all() and np.isneginf(log_w[~active]).all()
                and abs(np.logaddexp.reduce(log_w[active]) if active.any() else 0.0) < 1e-6):
            raise ValueError(f"dump array chain{c}_split_log_w: expected finite log weights "
                             "summing to one over the split variables that can split, -inf "
                             "elsewhere")
        chain.restore_split_state(log_w, conc)
        if smooth is not None:
            chain.set_smooth(smooth)
            chain.smooth_hyp[SMOOTH_SHARE] = _share(
                _array(arrays, f"chain{c}_share", np.float64, 1, (1,)), f"chain{c}_share")[0]
        chains.append(chain)
    posterior = Posterior(samples, *space[:4], X, y, float(scale[0]), float(scale[1]), chains,
                          space=space, smooth=smooth)
    return posterior, int(n_fits[0])


def _share(a: np.ndarray, key: str) -> np.ndarray:
    if not ((a > 0.0) & (a < 1.0)).all():
        raise ValueError(f"dump array {key}: expected smooth shares in (0, 1)")
    return a


def _smooth_kernel(arrays, space) -> SmoothKernel:
    """The smooth share's kernel of a dump: its binned columns continuous inputs with the
    space's bounds, finite positive lengths, at least two bins; its categorical columns
    categorical inputs, each with a distance table over all its categories."""
    kinds = np.asarray(space[0])
    n_values = np.asarray(space[3])
    cols = _columns(arrays, "smooth_cols", kinds, CONTINUOUS, "continuous")
    d = len(cols)
    lower = _array(arrays, "smooth_lower", np.float64, 1, (d,))
    upper = _array(arrays, "smooth_upper", np.float64, 1, (d,))
    if not (np.array_equal(lower, np.asarray(space[1])[cols])
            and np.array_equal(upper, np.asarray(space[2])[cols])):
        raise ValueError("dump arrays smooth_lower, smooth_upper: expected the inputs' bounds")
    lengths = _positive(_array(arrays, "smooth_lengths", np.float64, 1, (d,)),
                        "smooth_lengths")
    bins = _array(arrays, "smooth_bins", np.int64, 1, (1,))
    if not 2 <= bins[0] <= MAX_BINS:
        raise ValueError(f"dump array smooth_bins: expected 2 .. {MAX_BINS}, got {bins[0]}")
    if "smooth_cat_cols" not in arrays:
        cat_cols, cat_d2 = np.zeros(0, np.int64), np.zeros((0, 1, 1))
    else:
        cat_cols = _columns(arrays, "smooth_cat_cols", kinds, CATEGORICAL, "categorical")
        cat_d2 = _array(arrays, "smooth_cat_d2", np.float64, 3)
        if (len(cat_d2) != len(cat_cols) or cat_d2.shape[1] != cat_d2.shape[2]
                or (len(cat_cols) and cat_d2.shape[1] < n_values[cat_cols].max())):
            raise ValueError("dump array smooth_cat_d2: expected one table per categorical "
                             "column, over all its categories")
    if not d + len(cat_cols):
        raise ValueError("dump arrays smooth_cols, smooth_cat_cols: expected a column")
    try:
        return SmoothKernel(cols, lower, upper, lengths, int(bins[0]), cat_cols, cat_d2)
    except ValueError as err:
        raise ValueError(f"dump array smooth_cat_d2: {err}") from None


def _columns(arrays, key: str, kinds: np.ndarray, kind: int, name: str) -> np.ndarray:
    cols = _array(arrays, key, np.int64, 1)
    if len(set(cols.tolist())) != len(cols) or not ((cols >= 0) & (cols < len(kinds))).all() \
            or not (kinds[cols] == kind).all():
        raise ValueError(f"dump array {key}: expected distinct {name} inputs")
    return cols


def read_arrays(text) -> dict[str, np.ndarray]:
    """The arrays of a dump text, each header checked before its data is read."""
    if not isinstance(text, str):
        raise ValueError(f"dump: expected base64 text, got {type(text).__name__}")
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as err:
        raise ValueError(f"dump: not valid base64 ({err})") from None
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            infos = archive.infolist()
            total = sum(info.file_size for info in infos)
            if total > MAX_BYTES:
                raise ValueError(f"dump: {total} bytes unpacked, above the {MAX_BYTES} allowed")
            arrays = {}
            for info in infos:
                name = info.filename
                if not name.endswith(".npy") or name[:-4] in arrays:
                    raise ValueError(f"dump: unexpected entry {name!r}")
                with archive.open(info) as f:
                    arrays[name[:-4]] = _read_npy(f, info.file_size, name[:-4])
    except ValueError:
        raise
    except Exception as err:  # a damaged archive raises zipfile, zlib, EOF and OS errors
        raise ValueError(f"dump: not a readable archive ({type(err).__name__}: {err})") from None
    return arrays


def _read_npy(f, size: int, key: str) -> np.ndarray:
    fmt = np.lib.format
    try:
        version = fmt.read_magic(f)
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else \
            fmt.read_array_header_2_0
        shape, fortran, dtype = read_header(f)
    except Exception as err:
        raise ValueError(f"dump array {key}: unreadable header ({err})") from None
    if dtype.hasobject or dtype.kind not in "biuf":
        raise ValueError(f"dump array {key}: dtype {dtype} is not numeric")
    count = int(np.prod(shape, dtype=np.float64))
    if count * dtype.itemsize > size:
        raise ValueError(f"dump array {key}: its header's shape {shape} needs more bytes than "
                         f"the entry holds ({size})")
    data = f.read(count * dtype.itemsize)
    if len(data) != count * dtype.itemsize:
        raise ValueError(f"dump array {key}: {len(data)} bytes of data, expected "
                         f"{count * dtype.itemsize}")
    order = "F" if fortran else "C"
    return np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy(order="C")


def _array(arrays, key: str, dtype, ndim: int, shape: tuple | None = None) -> np.ndarray:
    a = arrays[key]
    if a.dtype != np.dtype(dtype) or a.ndim != ndim or (shape is not None and a.shape != shape):
        want = f"shape {shape}" if shape is not None else f"{ndim} dimensions"
        raise ValueError(f"dump array {key}: expected {np.dtype(dtype)} with {want}, got "
                         f"{a.dtype} with shape {a.shape}")
    return np.ascontiguousarray(a)


def _positive(a: np.ndarray, key: str) -> np.ndarray:
    if not (np.isfinite(a).all() and (a > 0).all()):
        raise ValueError(f"dump array {key}: expected finite positive values")
    return a


def check_forest(forest: dict, space, n_trees: int, prefix: str = "",
                 n_stacked: int | None = None) -> dict[str, np.ndarray]:
    """Forest arrays (``n_stacked`` forests with a leading sample axis, or one) checked to be
    what the sampler can produce for ``space``: C-contiguous copies of the right dtypes.

    Raises:
        ValueError: naming the array (``prefix`` + key) and the problem.
    """
    space = check_space(space)
    lead = () if n_stacked is None else (n_stacked,)
    w = n_words(space.n_values)
    feat = forest["feat"]
    if feat.dtype != np.int64 or feat.ndim != len(lead) + 2 or feat.shape[:-1] != (*lead,
                                                                                   n_trees):
        raise ValueError(f"dump array {prefix}feat: expected int64 with shape "
                         f"({', '.join(map(str, (*lead, n_trees)))}, C), got {feat.dtype} "
                         f"with shape {feat.shape}")
    cap = feat.shape[-1]
    if cap < 1:
        raise ValueError(f"dump array {prefix}feat: no node slots")
    named = {prefix + k: v for k, v in forest.items()}
    out = {}
    for key in FOREST_KEYS:
        shape = (*lead, n_trees, cap, w) if key == "mask" else (*lead, n_trees, cap)
        dtype = {"thr": np.float64, "mask": np.uint64}.get(key, np.int64)
        out[key] = _array(named, prefix + key, dtype, len(shape), shape)
    # one row per tree from here on
    flat = {k: v.reshape(-1, *v.shape[len(lead) + 1:]) for k, v in out.items()}
    _check_links(flat, len(space.kinds), prefix)
    _check_rules(flat, space, prefix)
    return out


def _categorical_rule_ok(space, j: int, t: float, node_cats, rule) -> bool:
    """Whether threshold ``t`` names a split variable of categorical column ``j`` and, for a
    descriptor, the subset ``rule`` of the node's categories is a cut of its values."""
    first, stop = int(space.var_start[j]), int(space.var_start[j + 1])
    if t != np.round(t):
        return False
    v = first + int(t) - 1 - int(space.var_desc[first])
    if not first <= v < stop:
        return False
    if space.var_desc[v] < 0:
        return True
    codes = np.arange(int(space.n_values[j]))
    words, bits = codes >> 6, (codes & 63).astype(np.uint64)
    at_node = ((node_cats[words] >> bits) & np.uint64(1)).astype(bool)
    left = ((rule[words] >> bits) & np.uint64(1)).astype(bool)
    rank = space.rank[v, :len(codes)]
    return bool(rank[at_node & left].max() < rank[at_node & ~left].min())


def _bad(prefix: str, key: str, rows, nodes, flat_shape_trees: int, what: str):
    t, node = int(rows[0]), int(nodes[0])
    raise ValueError(f"dump array {prefix}{key}: {what} (tree {t} of {flat_shape_trees}, "
                     f"node {node}; {len(rows)} such nodes)")


def _check_links(f: dict, d: int, prefix: str) -> None:
    feat, left, right, parent, depth = (f[k] for k in _INT)
    n, cap = feat.shape
    bad = (feat < FREE) | (feat >= d)
    if bad.any():
        _bad(prefix, "feat", *np.nonzero(bad), n, f"a split feature outside 0 .. {d - 1} (or "
             f"{LEAF} leaf, {FREE} free)")
    if (feat[:, 0] == FREE).any():
        _bad(prefix, "feat", np.flatnonzero(feat[:, 0] == FREE), [0], n, "a free root")
    internal = feat >= 0
    for key, child in (("left", left), ("right", right)):
        wrong = internal & ((child < 1) | (child >= cap))
        if wrong.any():
            _bad(prefix, key, *np.nonzero(wrong), n, f"a child index outside 1 .. {cap - 1}")
        wrong = (feat == LEAF) & (child != -1)
        if wrong.any():
            _bad(prefix, key, *np.nonzero(wrong), n, "a leaf with a child")
    same = internal & (left == right)
    if same.any():
        _bad(prefix, "right", *np.nonzero(same), n, "both children the same node")
    rows, nodes = np.nonzero(internal)
    for key, child in (("left", left), ("right", right)):
        c = child[rows, nodes]
        ok = ((feat[rows, c] != FREE) & (parent[rows, c] == nodes)
              & (depth[rows, c] == depth[rows, nodes] + 1))
        if not ok.all():
            _bad(prefix, key, rows[~ok], nodes[~ok], n, "a child that is free or whose parent "
                 "or depth does not match")
    if ((parent[:, 0] != -1) | (depth[:, 0] != 0)).any():
        _bad(prefix, "parent", np.flatnonzero((parent[:, 0] != -1) | (depth[:, 0] != 0)), [0],
             n, "a root with a parent or a depth other than 0")
    rows, nodes = np.nonzero(feat[:, 1:] != FREE)
    nodes = nodes + 1
    p = parent[rows, nodes]
    inside = (p >= 0) & (p < cap)
    if not inside.all():
        _bad(prefix, "parent", rows[~inside], nodes[~inside], n, "a parent index outside the tree")
    ok = (feat[rows, p] >= 0) & ((left[rows, p] == nodes) | (right[rows, p] == nodes))
    if not ok.all():
        _bad(prefix, "parent", rows[~ok], nodes[~ok], n, "a node its parent does not link to")
    # every used node is the child of exactly one split, and depth grows by one along each
    # link: the used nodes form one tree rooted at node 0 (no cycles, nothing unreachable)


def _check_rules(f: dict, space, prefix: str) -> None:
    """Each split's rule is one the prior can draw at its node (its subspace, from the root).

    A categorical split's threshold names the split variable that drew it (0: a subset rule,
    1 + k: a cut of descriptor k, whose categories at or below the cut go left)."""
    kinds, lower, upper, n_values = space[:4]
    feat, thr, mask, left, right = f["feat"], f["thr"], f["mask"], f["left"], f["right"]
    n, cap = feat.shape
    d = len(kinds)
    w = mask.shape[-1]
    lo = np.broadcast_to(lower, (n, cap, d)).copy()
    hi = np.broadcast_to(upper, (n, cap, d)).copy()
    all_cats = np.zeros((d, w), dtype=np.uint64)
    for j in np.flatnonzero(kinds == CATEGORICAL):
        for c in range(int(n_values[j])):
            all_cats[j, c >> 6] |= np.uint64(1) << np.uint64(c & 63)
    cats = np.broadcast_to(all_cats, (n, cap, d, w)).copy()
    if not np.isfinite(thr[feat >= 0]).all():
        _bad(prefix, "thr", *np.nonzero((feat >= 0) & ~np.isfinite(thr)), n,
             "a threshold that is not finite")
    # parents before children: walk the levels of depth
    depth = f["depth"]
    for level in range(int(depth[feat != FREE].max(initial=0)) + 1):
        rows, nodes = np.nonzero((depth == level) & (feat >= 0))
        if not len(rows):
            continue
        j = feat[rows, nodes]
        t = thr[rows, nodes]
        k = kinds[j]
        node_lo, node_hi = lo[rows, nodes, j], hi[rows, nodes, j]
        node_cats = cats[rows, nodes, j]          # (r, w)
        rule = mask[rows, nodes]                  # (r, w)
        cont, disc, cat = k == CONTINUOUS, k == DISCRETE, k == CATEGORICAL
        ok = np.ones(len(rows), dtype=bool)
        ok[cont] = (node_lo[cont] <= t[cont]) & (t[cont] <= node_hi[cont]) \
            & (node_lo[cont] < node_hi[cont])
        ok[disc] = (t[disc] == np.round(t[disc])) & (node_lo[disc] <= t[disc]) \
            & (t[disc] <= node_hi[disc] - 1)
        inside = ((rule & ~node_cats) == 0).all(axis=1)
        some = (rule != 0).any(axis=1)
        proper = ((node_cats & ~rule) != 0).any(axis=1)
        ok[cat] = (inside & some & proper)[cat]
        for i in np.flatnonzero(cat & ok):
            ok[i] = _categorical_rule_ok(space, int(j[i]), t[i], node_cats[i], rule[i])
        if not ok.all():
            _bad(prefix, "thr" if not cat[~ok][0] else "mask", rows[~ok], nodes[~ok], n,
                 "a split rule outside the part of the domain that reaches its node "
                 "(a threshold outside the node's interval, or a category subset that is "
                 "empty, all of the node's categories or beyond them, a categorical split's "
                 "threshold naming no split variable of its input, or a descriptor rule "
                 "that is no cut of its descriptor)")
        for side, child in (("left", left), ("right", right)):
            c = child[rows, nodes]
            lo[rows, c] = lo[rows, nodes]
            hi[rows, c] = hi[rows, nodes]
            cats[rows, c] = cats[rows, nodes]
            go_left = side == "left"
            num = ~cat
            if go_left:
                hi[rows[num], c[num], j[num]] = t[num]
                cats[rows[cat], c[cat], j[cat]] = node_cats[cat] & rule[cat]
            else:
                shift = np.where(disc, 1.0, 0.0)
                lo[rows[num], c[num], j[num]] = t[num] + shift[num]
                cats[rows[cat], c[cat], j[cat]] = node_cats[cat] & ~rule[cat]

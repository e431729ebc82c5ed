"""Label swaps: a move that exchanges two interchangeable inputs throughout a forest.

Under the sparse split prior a chain settles on a few inputs, and on small data several such
choices explain the data about equally well; grow, prune and change moves rarely leave one
(a chain must first un-split an input its weights favour). The swap jumps between them.

Two split variables a, b are interchangeable when each is its column's only split variable
and the columns have the same rule space up to scale: both continuous (thresholds mapped
affinely between the bounds), or both discrete or both categorical with the same number of
values (cut indices and category masks kept as they are). The move picks such a pair uniformly,
makes every split on a one on b and back, and swaps their split weights s_a, s_b (sparse
prior). It is an involution, and it leaves the prior invariant:

- the Dirichlet prior of s is symmetric;
- a node's subspace on a and on b trade places, so what can split each node and the summed
  weight Z of what can split it are unchanged, and a rule's probability s_v / Z moves with
  its variable;
- a continuous threshold has density 1 / (length of the node's interval); the affine map
  scales that length and the threshold alike, so the density times the map's Jacobian is
  unchanged; cut indices and category subsets are uniform and keep their counts.

Hence the Metropolis-Hastings ratio is the likelihood ratio at the current noise, computed
here by rebuilding the likelihood state from the swapped forest (exact, no low-rank update).
When no tree splits on a or b only the weights move and the ratio is 1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from bofire_bark.engine.forest import CONTINUOUS


def interchangeable_pairs(space, splittable: np.ndarray) -> np.ndarray:
    """Pairs (column a, variable a, column b, variable b) as a (K, 4) int64 array.

    ``splittable`` (V,) bool: the variables that can split the whole domain (others never
    appear in a forest). A column with descriptor variables has no pair.
    """
    var_col = np.asarray(space.var_col)
    var_desc = np.asarray(space.var_desc)
    by_col: dict[int, list[int]] = {}
    for v, c in enumerate(var_col):
        by_col.setdefault(int(c), []).append(v)
    groups: dict[tuple, list[tuple[int, int]]] = {}
    for c, vs in by_col.items():
        v = vs[0]
        if len(vs) != 1 or var_desc[v] != -1 or not splittable[v]:
            continue
        kind = int(space.kinds[c])
        key = (kind,) if kind == CONTINUOUS else (kind, int(space.n_values[c]))
        groups.setdefault(key, []).append((c, v))
    pairs = [(*members[i], *members[j]) for members in groups.values()
             for i in range(len(members)) for j in range(i + 1, len(members))]
    return np.array(pairs, dtype=np.int64).reshape(-1, 4)


@njit(cache=True, nogil=True)
def uses_either(feat, a, b):
    """Whether any split of the forest is on column ``a`` or ``b``."""
    m, cap = feat.shape
    for t in range(m):
        for k in range(cap):
            if feat[t, k] == a or feat[t, k] == b:
                return True
    return False


@njit(cache=True, nogil=True)
def swap_columns(feat, thr, kinds, lower, upper, a, b):
    """Make every split on column ``a`` a split on ``b`` and back, in place; a continuous
    threshold maps affinely from one column's bounds to the other's."""
    cont = kinds[a] == CONTINUOUS
    scale = (upper[b] - lower[b]) / (upper[a] - lower[a]) if cont else 1.0
    m, cap = feat.shape
    for t in range(m):
        for k in range(cap):
            f = feat[t, k]
            if f == a:
                feat[t, k] = b
                if cont:
                    thr[t, k] = lower[b] + (thr[t, k] - lower[a]) * scale
            elif f == b:
                feat[t, k] = a
                if cont:
                    thr[t, k] = lower[a] + (thr[t, k] - lower[b]) / scale

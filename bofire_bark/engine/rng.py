"""A small counter-free PRNG (xoshiro256**) whose state lives in a ``uint64[4]`` array.

Why our own generator: each chain must be reproducible from a seed, run in its own thread,
and be continued later from exactly where it stopped (warm start). numba's built-in
``np.random`` state is per-thread and cannot be saved, so the chain carries its own state.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_U64 = np.uint64


@njit(cache=True, nogil=True, inline="always")
def _rotl(x, k):
    return (x << _U64(k)) | (x >> _U64(64 - k))


@njit(cache=True, nogil=True)
def next_u64(state):
    """Advance ``state`` (uint64[4]) in place and return the next 64-bit output."""
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    result = _rotl(s1 * _U64(5), 7) * _U64(9)
    t = s1 << _U64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return result


@njit(cache=True, nogil=True)
def uniform(state):
    """Uniform on the open interval (0, 1): never exactly 0, so log() and thresholds are safe."""
    return ((next_u64(state) >> _U64(11)) + 0.5) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def randint(state, n):
    """Uniform integer in [0, n) (n >= 1)."""
    k = np.int64(uniform(state) * n)
    return k if k < n else n - 1


@njit(cache=True, nogil=True)
def normal(state):
    """Standard normal draw (Box-Muller, one of the pair)."""
    u1 = uniform(state)
    u2 = uniform(state)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def seed_states(seed: int | None, n: int) -> np.ndarray:
    """Independent generator states for ``n`` chains from one seed, shape (n, 4) uint64.

    ``np.random.SeedSequence.spawn`` gives streams that are distinct for each chain and
    identical for the same seed.
    """
    children = np.random.SeedSequence(seed).spawn(n)
    states = np.stack([c.generate_state(4, dtype=np.uint64) for c in children])
    states[states.sum(axis=1) == 0, 0] = 1  # all-zero is xoshiro's only fixed point
    return np.ascontiguousarray(states)

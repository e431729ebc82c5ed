"""Session fixtures of the optimizer tests (helpers in ``acq_helpers``)."""

from __future__ import annotations

import pytest
from acq_helpers import continuous_domain, fit, mixed_domain, mixed_f


@pytest.fixture(scope="session")
def mixed():
    domain = mixed_domain()
    space, post = fit(domain, mixed_f)
    return domain, space, post


@pytest.fixture(scope="session")
def continuous3():
    domain = continuous_domain(3)
    space, post = fit(domain, lambda X: X[:, 0] - (X[:, 1] - 0.5) ** 2 + X[:, 2], n=15)
    return domain, space, post

"""Domain constraints: candidates fulfil every supported type; other types are refused by name;
an infeasible domain is a clear error found quickly."""

from __future__ import annotations

import time

import numpy as np
import pytest
from acq_helpers import continuous_domain, fit, mixed_domain
from bofire.data_models.constraints.api import (
    InterpointEqualityConstraint,
    LinearEqualityConstraint,
    LinearInequalityConstraint,
    NChooseKConstraint,
    NonlinearEqualityConstraint,
    NonlinearInequalityConstraint,
    ProductEqualityConstraint,
    ProductInequalityConstraint,
)
from bofire.data_models.domain.api import Domain, Inputs
from bofire.data_models.features.api import ContinuousInput

from bofire_bark.optimize import (
    SUPPORTED_CONSTRAINTS,
    InfeasibleDomainError,
    check_domain_supported,
    optimize_acquisition,
)

TOL = 1e-6  # BoFire's default tolerance of is_fulfilled


def solve(domain, space, post, **kwargs):
    kwargs = {"mip_gap": 0.0, "time_limit": 60.0, "isolate": False, **kwargs}
    res = optimize_acquisition(post, domain, space, **kwargs)
    assert res.objective == pytest.approx(res.ucb, rel=1e-6, abs=1e-9) or (
        res.status == "incumbent")
    return res


def with_constraints(domain, constraints):
    return Domain(inputs=domain.inputs, constraints=constraints)


LINEAR = [
    LinearEqualityConstraint(features=["x0", "x1", "x2"], coefficients=[1, 1, 1], rhs=1.0),
    LinearInequalityConstraint(features=["x0", "x1"], coefficients=[1, 1], rhs=0.5),
    LinearInequalityConstraint(features=["x0", "x2"], coefficients=[-1, 2], rhs=-0.2),
]
NONLINEAR = [
    NonlinearInequalityConstraint(expression="x0**2 + x2**2 - 0.25", features=["x0", "x2"]),
    NonlinearEqualityConstraint(expression="x0 - exp(x1) + 1", features=["x0", "x1"]),
    NonlinearInequalityConstraint(expression="sqrt(x1) + sin(x2) - log(1 + x0) - 0.7",
                                  features=["x0", "x1", "x2"]),
    ProductInequalityConstraint(features=["x0", "x2"], exponents=[1, 2], rhs=0.05),
    ProductEqualityConstraint(features=["x0", "x2"], exponents=[1, 1], rhs=0.2, sign=1),
]


@pytest.mark.parametrize("constraint", LINEAR + NONLINEAR, ids=lambda c: type(c).__name__)
def test_candidate_fulfils_constraint(continuous3, constraint):
    domain, space, post = continuous3
    domain = with_constraints(domain, [constraint])
    res = solve(domain, space, post)
    assert constraint.is_fulfilled(res.candidate, tol=TOL).all(), (constraint, res.candidate)
    assert res.status in ("optimal", "gap", "incumbent")


def test_all_constraints_together(continuous3):
    domain, space, post = continuous3
    constraints = [LINEAR[1], NONLINEAR[0], NONLINEAR[3]]
    domain = with_constraints(domain, constraints)
    res = solve(domain, space, post)
    assert domain.constraints.is_fulfilled(res.candidate, tol=TOL).all()


@pytest.fixture(scope="module")
def additive():
    """y = x0 + x1 + x2 on [0, 1]^3: minimizing wants every feature at 0."""
    domain = continuous_domain(3)
    space, post = fit(domain, lambda X: X.sum(axis=1), n=20, seed=2)
    return domain, space, post


@pytest.mark.parametrize("none_also_valid", [True, False])
def test_nchoosek_min_count_and_none(additive, none_also_valid):
    domain, space, post = additive
    c = NChooseKConstraint(features=["x0", "x1", "x2"], min_count=1, max_count=2,
                           none_also_valid=none_also_valid)
    res = solve(with_constraints(domain, [c]), space, post, kappa=0.0, sign=-1.0)
    assert c.is_fulfilled(res.candidate, tol=TOL).all()
    active = int((res.candidate[["x0", "x1", "x2"]].abs() > TOL).to_numpy().sum())
    assert active in ((0, 1, 2) if none_also_valid else (1, 2))
    # minimizing the sum: the all-zero point is as good as it gets when it is allowed
    at_zero = post.systems().integrated_ucb(np.zeros((1, 3)), 0.0, -1.0)[0]
    if none_also_valid:
        assert res.ucb >= at_zero - 1e-9


@pytest.mark.parametrize("none_also_valid", [True, False])
def test_nchoosek_none_is_the_only_choice(additive, none_also_valid):
    """With the sum capped below the smallest active value, only 'none' is feasible."""
    domain, space, post = additive
    c = NChooseKConstraint(features=["x0", "x1", "x2"], min_count=2, max_count=3,
                           none_also_valid=none_also_valid)
    cap = LinearInequalityConstraint(features=["x0", "x1", "x2"], coefficients=[1, 1, 1],
                                     rhs=1e-7)
    domain = with_constraints(domain, [c, cap])
    if none_also_valid:
        res = solve(domain, space, post, kappa=1.0)
        assert (res.candidate.to_numpy() == 0.0).all()
        assert domain.constraints.is_fulfilled(res.candidate, tol=TOL).all()
    else:
        with pytest.raises(InfeasibleDomainError):
            optimize_acquisition(post, domain, space, isolate=False, time_limit=30.0)


def test_nchoosek_max_count(additive):
    domain, space, post = additive
    c = NChooseKConstraint(features=["x0", "x1", "x2"], min_count=0, max_count=1,
                           none_also_valid=False)
    domain = with_constraints(domain, [c])
    res = solve(domain, space, post, kappa=0.0, sign=1.0)
    assert c.is_fulfilled(res.candidate, tol=TOL).all()
    assert int((res.candidate.to_numpy() > TOL).sum()) == 1  # maximizing wants one, at 1


def test_semicontinuous_feature_takes_zero_or_its_range():
    inputs = Inputs(features=[ContinuousInput(key="a", bounds=(0.3, 1.0), allow_zero=True),
                              ContinuousInput(key="b", bounds=(0, 1))])
    domain = Domain(inputs=inputs)
    X = np.column_stack([np.r_[np.zeros(5), np.linspace(0.3, 1, 7)], np.linspace(0, 1, 12)])
    space, post = fit(domain, lambda X: -X[:, 0] + 0.1 * X[:, 1], X=X)
    low = solve(domain, space, post, kappa=0.0, sign=1.0)
    assert low.candidate["a"].iloc[0] == 0.0
    high = solve(domain, space, post, kappa=0.0, sign=-1.0)
    assert 0.3 <= high.candidate["a"].iloc[0] <= 1.0


def test_discrete_feature_in_linear_constraint():
    c = LinearInequalityConstraint(features=["x1", "d"], coefficients=[1, 1], rhs=1.5)
    domain = mixed_domain([c])
    # the unconstrained optimum has d = 3 (see mixed_f)
    space, post = fit(mixed_domain(), lambda X: X[:, 2] + X[:, 0])
    res = solve(domain, space, post, kappa=0.0)
    assert c.is_fulfilled(res.candidate, tol=TOL).all()
    assert res.candidate["d"].iloc[0] in (0.5, 1.0)


def test_unsupported_constraints_are_refused_by_name():
    domain = continuous_domain(3, [InterpointEqualityConstraint(features=["x0"])])
    with pytest.raises(ValueError, match="InterpointEqualityConstraint"):
        check_domain_supported(domain)
    assert InterpointEqualityConstraint not in SUPPORTED_CONSTRAINTS


def test_untranslatable_expression_names_the_constraint():
    c = NonlinearInequalityConstraint(expression="erf(x0) - 0.5", features=["x0", "x1"])
    with pytest.raises(ValueError, match=r"NonlinearInequalityConstraint.*'erf'"):
        check_domain_supported(continuous_domain(3, [c]))


def test_callable_expression_is_refused():
    def g(x0, x1):
        return x0 - x1

    c = NonlinearInequalityConstraint(expression=g, features=["x0", "x1"])
    with pytest.raises(ValueError, match="callable"):
        check_domain_supported(continuous_domain(3, [c]))


@pytest.mark.parametrize("isolate", [False, True])
def test_infeasible_domain_is_a_clear_error_quickly(continuous3, isolate):
    domain, space, post = continuous3
    c = LinearInequalityConstraint.from_greater_equal(features=["x0", "x1"],
                                                      coefficients=[1, 1], rhs=3.0)
    domain = with_constraints(domain, [c])
    start = time.perf_counter()
    with pytest.raises(InfeasibleDomainError, match="admit no candidate"):
        optimize_acquisition(post, domain, space, time_limit=100.0, isolate=isolate)
    assert time.perf_counter() - start < 20.0


def test_light_lists_match_the_translator():
    from bofire_bark.optimize.constraints import SUPPORTED_CONSTRAINTS as used
    from bofire_bark.optimize.mip.constraints import FUNCTIONS
    from bofire_bark.supported import TRANSLATABLE_FUNCTIONS

    assert set(FUNCTIONS) == TRANSLATABLE_FUNCTIONS
    assert used is SUPPORTED_CONSTRAINTS

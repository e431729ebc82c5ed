"""Data model of the BARK strategy (pydantic only: no numba or pyomo here)."""

from __future__ import annotations

import functools
import operator
from dataclasses import fields
from typing import Annotated, ClassVar, Literal

from bofire.data_models.acquisition_functions.api import qUCB
from bofire.data_models.constraints.api import (
    CategoricalExcludeConstraint,
    Constraint,
    NonlinearEqualityConstraint,
    NonlinearInequalityConstraint,
)
from bofire.data_models.domain.api import Domain
from bofire.data_models.features.api import ContinuousOutput, Feature
from bofire.data_models.objectives.api import MaximizeObjective, MinimizeObjective, Objective
from bofire.data_models.strategies.api import ExplicitReferencePoint, PredictiveStrategy
from bofire.data_models.strategies.convergence_criteria.api import ConvergenceCriterion
from pydantic import Field, field_validator, model_validator

from bofire_bark.data_models.surrogate import SUPPORTED_INPUTS, BARKSettings, check_smooth_share

# Defaults and what the searches can express are declared at the bottom of the package
# (no optimizer import here).
from bofire_bark.defaults import DEFAULT_BETA, LIBRARY_LIMIT, MIP_SOLVERS
from bofire_bark.settings import OUTPUT_LIMITS, SearchSettings
from bofire_bark.space.finite import EQUALITIES_NEEDING_MIP, plan_search, several_outputs
from bofire_bark.space.split_space import check_encodings
from bofire_bark.supported import (
    ACQUISITION_RULES,
    GOAL_OBJECTIVES,
    HYPERVOLUME_ACQUISITIONS,
    LIBRARY_CONSTRAINTS,
    LIMIT_OBJECTIVES,
    SCALARIZATIONS,
    SUPPORTED_CONSTRAINTS,  # noqa: F401 (re-exported)
    acquisition_rule,
)

# the types BARK answers, defined once in ``supported``
AnyBARKAcquisitionFunction = functools.reduce(
    operator.or_, {**ACQUISITION_RULES, **HYPERVOLUME_ACQUISITIONS})
# spec keys of the search's settings before ``acquisition_optimizer`` (moved into it)
SEARCH_KEYS = frozenset(f.name for f in fields(SearchSettings))
ACQUISITION_NAMES = tuple(t.__name__ for t in {**ACQUISITION_RULES, **HYPERVOLUME_ACQUISITIONS})


class BARKStrategy(PredictiveStrategy):
    """Bayesian optimization with BARK and a global search over an acquisition function.

    ``acquisition_function`` is one of BoFire's: the acquisition is the average over posterior
    samples of the rule applied to each sample's GP (``bofire_bark.optimize.rules``).
    ``qUCB(beta)``: ``mu_s + sqrt(beta) * sigma_s`` for a MaximizeObjective (``mu_s -
    sqrt(beta) * sigma_s`` minimized for a MinimizeObjective); the default beta 3.8416 is
    kappa = 1.96 (a 97.5 % one-sided bound per sample), BoFire's EntingStrategy default.
    ``qEI`` / ``qLogEI``: the expected improvement over the best measurement; ``qNEI`` /
    ``qLogNEI``: over each sample's best posterior mean at the measured (and pending) points;
    ``qPI``: the probability of improvement. Two or more Maximize/Minimize objectives:
    ``qEHVI`` / ``qLogEHVI`` (``qNEHVI`` / ``qLogNEHVI`` with the front of posterior means),
    the expected hypervolume improvement (``bofire_bark.optimize.hypervolume``), or qUCB
    with ``scalarization``. Each is exact per sample (no Monte Carlo: ``n_mc_samples``,
    ``prune_baseline``, qPI's smoothing ``tau`` and qEHVI's approximation ``alpha`` do not
    apply). ``kappa``, the UCB's weight before this field, is still accepted: it becomes
    ``qUCB(beta=kappa**2)``.

    Several outputs: every output with an objective gets its own BARK posterior. Maximize,
    Minimize and CloseToTarget objectives are combined by ``scalarization`` (random weights
    per candidate for "chebyshev"); MaximizeSigmoid, MinimizeSigmoid and Target objectives are
    output limits, constraints of the same search that the output's upper confidence bound
    must meet (``bofire_bark.optimize.outputs``), or, under a hypervolume rule with
    ``output_limits="probability"``, weights: each sample's improvement times its probability
    of meeting every limit (``bofire_bark.optimize.hypervolume``). Outputs without an objective
    are modelled for their predictions (BoFire's candidates carry them) and left out of the
    acquisition.
    """

    # keys a spec may give besides the fields (moved into them by the validators below)
    SPEC_ALIASES: ClassVar[frozenset] = SEARCH_KEYS | {"kappa"}

    type: Literal["BARKStrategy"] = "BARKStrategy"
    surrogate_specs: BARKSettings = Field(default_factory=BARKSettings)
    acquisition_function: Annotated[AnyBARKAcquisitionFunction, Field(
        discriminator="type", description="BoFire's acquisition function: qUCB (default, beta "
        "3.8416: kappa 1.96), qEI, qLogEI, qNEI, qLogNEI or qPI for one objective; qUCB "
        "(with scalarization) or qEHVI, qLogEHVI, qNEHVI, qLogNEHVI for several.")] = Field(
        default_factory=lambda: qUCB(beta=DEFAULT_BETA))
    acquisition_optimizer: Annotated[SearchSettings, Field(
        description="How the acquisition is searched (bofire_bark.settings.SearchSettings): "
        "solver ('auto': the finite domain enumerated, else the grid branch-and-bound, or the "
        "MIP when a nonlinear equality needs it), time_limit, mip_gap, abs_gap, max_time, "
        "extend_gap, n_start_points, n_starts, n_sweeps, isolate, n_cuts, grid (the grid "
        "search's GridSettings) and tie_break (the point of the candidate's grid cell: "
        "'none', the search's, 'farthest' from the measured and pending points, or 'smooth', "
        "where a smooth share's continuous extension scores best). "
        "The same keys at the top level of a spec are accepted and "
        "moved here.")] = Field(default_factory=SearchSettings)
    scalarization: Annotated[Literal[SCALARIZATIONS], Field(
        description="How several objectives become one acquisition under qUCB: 'chebyshev' "
        "(augmented Chebyshev with random weights per candidate, the rule of BoFire's "
        "QparegoStrategy) or 'weighted_sum' (the objectives' w). Not used by the hypervolume "
        "rules.")] = "chebyshev"
    output_limits: Annotated[Literal[OUTPUT_LIMITS], Field(
        description="How output limits (MaximizeSigmoid, MinimizeSigmoid, Target objectives) "
        "enter the hypervolume rules: 'optimistic' (a candidate's upper confidence bound "
        "meets every limit; the only choice under qUCB) or 'probability' (each posterior "
        "sample's hypervolume improvement weighed by its probability of meeting every "
        "limit, as BoFire's Mobo weighs its constraints).")] = "optimistic"
    ref_point: Annotated[ExplicitReferencePoint | dict[str, float] | None, Field(
        description="The hypervolume rules' reference point, as MoboStrategy's field: output "
        "key -> value in the output's units for every Maximize / Minimize objective, or "
        "BoFire's ExplicitReferencePoint (fixed or moving values). None (default): the worst "
        "value of the front (the measured points that meet every output limit) minus 10 % of "
        "its range, as BoTorch's infer_reference_point.")] = None
    allow_repeats: Annotated[bool, Field(
        description="Finite domains (enumerated): whether a point already measured (a row of "
        "the experiments) or pending (BoFire's candidates, the batch so far) may be proposed "
        "again. False (default): never, so BO over a library spends no pick on a known item; "
        "when every feasible point is known, ask raises LibraryExhaustedError. Set "
        "allow_repeats=True to allow replicates. Larger domains (grid search) do not "
        "exclude points.")] = False
    progress_bar: bool = False

    @property
    def kappa(self) -> float | None:
        """The UCB's weight sqrt(beta) under qUCB (None under another rule)."""
        name, kappa = acquisition_rule(self.acquisition_function)
        return kappa if name == "ucb" else None

    @model_validator(mode="before")
    @classmethod
    def map_kappa(cls, data):
        """``kappa`` (the UCB's weight before ``acquisition_function``) becomes
        ``qUCB(beta=kappa**2)``, so specs written with it load and ask as before."""
        if not isinstance(data, dict) or "kappa" not in data:
            return data
        data = dict(data)
        kappa = data.pop("kappa")
        if not isinstance(kappa, (int, float)) or not kappa >= 0 or kappa == float("inf"):
            raise ValueError(f"kappa: the UCB weight must be a finite number >= 0, got {kappa!r}")
        ucb = qUCB(beta=float(kappa) ** 2)
        given = data.get("acquisition_function")
        if given is None:
            data["acquisition_function"] = ucb
        elif not (given == ucb or (isinstance(given, dict) and given.get("type") == "qUCB"
                                   and qUCB(**given) == ucb)):
            raise ValueError(
                f"kappa={kappa} and acquisition_function={given!r} are both given: kappa is "
                "the UCB's weight, acquisition_function=qUCB(beta=kappa**2); give one of them")
        return data

    @model_validator(mode="before")
    @classmethod
    def map_search_keys(cls, data):
        """The search's settings at the top level (``time_limit``, ``solver``, ... as every
        spec before ``acquisition_optimizer`` wrote them) move into ``acquisition_optimizer``;
        a key given in both places with different values is refused."""
        if not isinstance(data, dict) or not SEARCH_KEYS & data.keys():
            return data
        data = dict(data)
        given = data.get("acquisition_optimizer")
        nested = (dict(given) if isinstance(given, dict) else {} if given is None
                  else {f.name: getattr(given, f.name) for f in fields(SearchSettings)})
        for key in sorted(SEARCH_KEYS & data.keys()):
            value = data.pop(key)
            if given is not None and key in nested and nested[key] != value:
                raise ValueError(
                    f"{key}={value!r} and acquisition_optimizer.{key}={nested[key]!r} are both "
                    f"given: give {key} once (in acquisition_optimizer)")
            nested[key] = value
        data["acquisition_optimizer"] = nested
        return data

    @field_validator("acquisition_function", mode="before")
    @classmethod
    def validate_acquisition_type(cls, value):
        """A BoFire acquisition function BARK does not answer is named (pydantic's union
        error would list every member)."""
        kind = value.get("type") if isinstance(value, dict) else type(value).__name__
        if kind not in ACQUISITION_NAMES:
            raise ValueError(
                f"acquisition_function {kind}: BARKStrategy answers "
                f"{', '.join(ACQUISITION_NAMES)}")
        return value

    @model_validator(mode="after")
    def validate_acquisition_outputs(self):
        """qEI, qLogEI, qNEI, qLogNEI, qPI: one Maximize/Minimize objective; the hypervolume
        rules: two or more Maximize/Minimize objectives (output limits allowed)."""
        name, _ = acquisition_rule(self.acquisition_function)
        kind = type(self.acquisition_function).__name__
        if self.output_limits != "optimistic" and type(
                self.acquisition_function) not in HYPERVOLUME_ACQUISITIONS:
            raise ValueError(f"output_limits '{self.output_limits}': only the hypervolume "
                             "rules (qEHVI, qLogEHVI, qNEHVI, qLogNEHVI) weigh output limits "
                             f"by probability; acquisition_function {kind} meets them "
                             "optimistically (output_limits='optimistic')")
        if self.ref_point is not None and type(
                self.acquisition_function) not in HYPERVOLUME_ACQUISITIONS:
            raise ValueError(f"ref_point: only the hypervolume rules (qEHVI, qLogEHVI, qNEHVI, "
                             f"qLogNEHVI) use a reference point; acquisition_function {kind} "
                             "does not")
        if name == "ucb":
            return self
        modelled = [f for f in self.domain.outputs.get() if f.objective is not None]
        if type(self.acquisition_function) in HYPERVOLUME_ACQUISITIONS:
            goals = [f for f in modelled if type(f.objective) in GOAL_OBJECTIVES]
            if len(goals) < 2 or any(type(f.objective) not in (
                    MaximizeObjective, MinimizeObjective) for f in goals):
                raise ValueError(
                    f"acquisition_function {kind}: the hypervolume needs two or more "
                    "MaximizeObjective / MinimizeObjective outputs (and no "
                    f"CloseToTargetObjective); the domain's: "
                    f"{[(f.key, type(f.objective).__name__) for f in goals]}")
            if self.ref_point is not None:
                given = (self.ref_point.values if isinstance(self.ref_point,
                                                             ExplicitReferencePoint)
                         else self.ref_point)
                if sorted(given) != sorted(f.key for f in goals):
                    raise ValueError(
                        f"ref_point: keys {sorted(given)} do not match the objectives "
                        f"{sorted(f.key for f in goals)} (one value per Maximize / Minimize "
                        "objective)")
        elif len(modelled) > 1 or type(modelled[0].objective) not in (MaximizeObjective,
                                                                       MinimizeObjective):
            raise ValueError(
                f"acquisition_function {kind}: several objectives, CloseToTarget objectives "
                "and output limits take qUCB or a hypervolume rule (qEHVI, qLogEHVI, qNEHVI, "
                f"qLogNEHVI; outputs with objectives: {[f.key for f in modelled]})")
        return self

    def is_constraint_implemented(self, my_type: type[Constraint]) -> bool:
        """The searches' constraints; categorical exclusions on enumerated domains only
        (``validate_exclusions_enumerated``)."""
        return my_type in LIBRARY_CONSTRAINTS

    @classmethod
    def is_feature_implemented(cls, my_type: type[Feature]) -> bool:
        return my_type in SUPPORTED_INPUTS or my_type is ContinuousOutput

    @classmethod
    def is_objective_implemented(cls, my_type: type[Objective]) -> bool:
        return my_type in GOAL_OBJECTIVES + LIMIT_OBJECTIVES

    @classmethod
    def is_criterion_implemented(cls, my_type: type[ConvergenceCriterion]) -> bool:
        return my_type.is_applicable_to_singleobjective()

    @field_validator("domain")
    @classmethod
    def validate_objectives_supported(cls, domain: Domain) -> Domain:
        """At least one goal; every objective of a type BARK knows (named when not)."""
        goals = []
        for feat in domain.outputs.get():
            obj = feat.objective
            if obj is None:
                continue
            if type(obj) not in GOAL_OBJECTIVES + LIMIT_OBJECTIVES:
                raise ValueError(
                    f"BARKStrategy cannot use the {type(obj).__name__} of output "
                    f"'{feat.key}'; supported: "
                    f"{', '.join(t.__name__ for t in GOAL_OBJECTIVES + LIMIT_OBJECTIVES)}")
            if type(obj) in GOAL_OBJECTIVES:
                goals.append(feat.key)
        if not goals:
            raise ValueError(
                "BARKStrategy needs at least one output with a MaximizeObjective, "
                "MinimizeObjective or CloseToTargetObjective (sigmoid and target objectives "
                f"are output limits); the domain's outputs: {domain.outputs.get_keys()}")
        return domain

    @model_validator(mode="after")
    def validate_categorical_encodings(self):
        """The surrogate settings' encodings name categorical inputs that can take them; the
        defaults of the others are filled in (on a copy: a settings object the caller passed
        may serve another domain)."""
        specs = self.surrogate_specs
        encodings = check_encodings(self.domain.inputs, specs.categorical_encodings)
        if encodings != specs.categorical_encodings:
            # object.__setattr__: assignment would validate the whole strategy again
            object.__setattr__(self, "surrogate_specs", specs.model_copy(
                update={"categorical_encodings": encodings}))
        return self

    @model_validator(mode="after")
    def validate_smooth_share(self):
        """A smooth share (``surrogate_specs.smooth_share``) is searched by the grid search or
        the library enumeration: refuse a MIP solver and the constraints that need one."""
        check_smooth_share(self.surrogate_specs, self.domain.inputs)
        if not self.surrogate_specs.smooth_share:
            if self.acquisition_optimizer.tie_break == "smooth":
                raise ValueError("acquisition_optimizer.tie_break: 'smooth' ranks the points "
                                 "of a cell by the smooth share's continuous extension and "
                                 "needs surrogate_specs.smooth_share=True")
            return self
        solver = self.acquisition_optimizer.solver
        if solver in MIP_SOLVERS:
            raise ValueError(f"surrogate_specs.smooth_share: solver '{solver}' (a MIP) cannot "
                             "hold the smooth part; use solver 'auto' or 'bnb'")
        for i, c in enumerate(self.domain.constraints.get()):
            if isinstance(c, EQUALITIES_NEEDING_MIP):
                raise ValueError(f"constraint {i} ({type(c).__name__}): it needs the MIP, which "
                                 "cannot hold surrogate_specs.smooth_share")
        return self

    @model_validator(mode="after")
    def validate_search(self):
        """What the planned search (``space.finite.plan_search``, the one place that decides
        it) can hold: the MIP maximizes qUCB of one Maximize/Minimize objective; a
        CategoricalExcludeConstraint is tested point by point, so the domain must be
        enumerated (finite, within ``LIBRARY_LIMIT`` points, solver 'auto')."""
        constraints = self.domain.constraints.get()
        excludes = [i for i, c in enumerate(constraints)
                    if isinstance(c, CategoricalExcludeConstraint)]
        opt = self.acquisition_optimizer
        name, _ = acquisition_rule(self.acquisition_function)
        several = several_outputs(self.domain)
        may_need_mip = opt.solver in MIP_SOLVERS or any(
            isinstance(c, EQUALITIES_NEEDING_MIP) for c in constraints)
        if not excludes and not (may_need_mip and (name != "ucb" or several)):
            return self  # no plan can refuse this (and building one may featurize molecules)
        plan = plan_search(self.domain, opt)
        if plan.search == "mip" and (name != "ucb" or several):
            kind = type(self.acquisition_function).__name__
            if opt.solver in MIP_SOLVERS and name != "ucb":
                raise ValueError(f"acquisition_function {kind}: solver '{opt.solver}' (a MIP) "
                                 "maximizes qUCB only; use solver 'auto' or 'bnb'")
            if opt.solver in MIP_SOLVERS:
                raise ValueError(
                    f"solver '{opt.solver}' takes one Maximize/Minimize objective; several "
                    "objectives, CloseToTarget objectives and output limits need solver "
                    "'auto' or 'bnb'")
            i = next(i for i, c in enumerate(constraints)
                     if isinstance(c, EQUALITIES_NEEDING_MIP))
            what = (f"it needs the MIP, which maximizes qUCB only, not {kind}" if name != "ucb"
                    else "several objectives, CloseToTarget objectives and output limits are "
                    "optimized by the grid search, which cannot hold a nonlinear equality")
            raise ValueError(f"constraint {i} ({type(constraints[i]).__name__}): {what}")
        if excludes and plan.search != "library":
            if plan.size is None:
                why = ("the domain has continuous inputs; BARK applies categorical exclusions "
                       "only on finite domains (every input categorical or discrete), which "
                       "it enumerates")
            elif plan.size > LIBRARY_LIMIT:
                why = (f"the finite domain has {plan.size} points, above the enumeration limit "
                       f"of {LIBRARY_LIMIT}; BARK applies categorical exclusions only on "
                       "domains it enumerates (narrow the allowed categories or values)")
            else:
                why = (f"solver '{opt.solver}' cannot hold it; solver 'auto' enumerates the "
                       "finite domain and applies it")
            raise ValueError(f"constraint {excludes[0]} (CategoricalExcludeConstraint): {why}")
        return self

    @field_validator("domain")
    @classmethod
    def validate_expressions(cls, domain: Domain) -> Domain:
        """Nonlinear expressions must parse into functions of the inputs the optimizer can
        express: checked here with the optimizer's own parser."""
        from bofire_bark.expressions import parse_constraint

        keys = domain.inputs.get_keys()
        for i, c in enumerate(domain.constraints.get()):
            if isinstance(c, (NonlinearEqualityConstraint, NonlinearInequalityConstraint)):
                try:
                    parse_constraint(c, keys)
                except ValueError as err:
                    raise ValueError(f"constraint {i}: {err}") from err
        return domain

"""Build the JSON strategy specs in this folder from BoFire data models.

Run ``python specs/build_specs.py`` to regenerate; the JSON files are what pipelines load.
"""

from __future__ import annotations

import json
from pathlib import Path

from bofire.data_models.constraints.api import (
    LinearEqualityConstraint,
    NChooseKConstraint,
    NonlinearInequalityConstraint,
)
from bofire.data_models.domain.api import Constraints, Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalDescriptorInput,
    CategoricalInput,
    ContinuousInput,
    ContinuousOutput,
    DiscreteInput,
)
from bofire.data_models.objectives.api import (
    MaximizeObjective,
    MinimizeObjective,
    MinimizeSigmoidObjective,
)

from bofire_bark import load_spec  # importing bofire_bark registers BARK with BoFire
from bofire_bark.data_models import BARKSettings, BARKStrategy

HERE = Path(__file__).parent


def reaction() -> BARKStrategy:
    """(a) A reaction: solvent and catalyst, temperature, residence time, equivalents."""
    domain = Domain(
        inputs=Inputs(features=[
            CategoricalInput(key="solvent", categories=["MeCN", "DMF", "THF", "toluene", "EtOH"]),
            CategoricalInput(key="catalyst", categories=["Pd(OAc)2", "Pd2dba3", "NiCl2", "CuI"]),
            ContinuousInput(key="temperature", bounds=(25.0, 120.0), unit="degC"),
            ContinuousInput(key="residence_time", bounds=(1.0, 60.0), unit="min"),
            DiscreteInput(key="equivalents", values=[1.0, 1.2, 1.5, 2.0, 3.0]),
        ]),
        outputs=Outputs(features=[
            ContinuousOutput(key="yield", objective=MaximizeObjective(w=1.0), unit="%")]),
    )
    return BARKStrategy(domain=domain, seed=7)


def formulation() -> BARKStrategy:
    """(b) A formulation: six fractions summing to one, at most three used, minimize cost."""
    keys = [f"ingredient_{i}" for i in range(1, 7)]
    domain = Domain(
        inputs=Inputs(features=[ContinuousInput(key=k, bounds=(0.0, 1.0)) for k in keys]),
        outputs=Outputs(features=[
            ContinuousOutput(key="cost", objective=MinimizeObjective(w=1.0))]),
        constraints=Constraints(constraints=[
            LinearEqualityConstraint(features=keys, coefficients=[1.0] * 6, rhs=1.0),
            NChooseKConstraint(features=keys, min_count=1, max_count=3, none_also_valid=False),
        ]),
    )
    return BARKStrategy(domain=domain, seed=11)


def process() -> BARKStrategy:
    """(c) A process: pressure and flow coupled by a nonlinear safety limit."""
    domain = Domain(
        inputs=Inputs(features=[
            ContinuousInput(key="pressure", bounds=(1.0, 10.0), unit="bar"),
            ContinuousInput(key="flow", bounds=(0.1, 5.0), unit="mL/min"),
            ContinuousInput(key="temperature", bounds=(20.0, 80.0), unit="degC"),
            CategoricalInput(key="reactor", categories=["coil", "packed_bed"]),
        ]),
        outputs=Outputs(features=[
            ContinuousOutput(key="space_time_yield", objective=MaximizeObjective(w=1.0))]),
        constraints=Constraints(constraints=[
            NonlinearInequalityConstraint(expression="pressure * flow - 20",
                                          features=["pressure", "flow"]),
        ]),
    )
    return BARKStrategy(domain=domain, seed=3)


def benchmark() -> BARKStrategy:
    """(d) A plain continuous domain (Hartmann-6 shaped), smaller sampling budget."""
    domain = Domain(
        inputs=Inputs(features=[ContinuousInput(key=f"x_{i}", bounds=(0.0, 1.0))
                                for i in range(6)]),
        outputs=Outputs(features=[ContinuousOutput(key="y", objective=MinimizeObjective())]),
    )
    return BARKStrategy(domain=domain, seed=0,
                        surrogate_specs=BARKSettings(n_chains=2, burn_in=500, thinning=50))


def pipeline() -> BARKStrategy:
    """(e) A coupling step with several outputs: maximize yield, minimize cost, keep the
    impurity under its specification limit (0.5 %), and log the colour (no objective)."""
    domain = Domain(
        inputs=Inputs(features=[
            CategoricalInput(key="base", categories=["K2CO3", "Cs2CO3", "Et3N", "DBU"]),
            CategoricalInput(key="ligand", categories=["XPhos", "SPhos", "PPh3"]),
            ContinuousInput(key="temperature", bounds=(40.0, 110.0), unit="degC"),
            ContinuousInput(key="catalyst_loading", bounds=(0.5, 5.0), unit="mol%"),
            DiscreteInput(key="equivalents", values=[1.0, 1.2, 1.5, 2.0]),
        ]),
        outputs=Outputs(features=[
            ContinuousOutput(key="yield", objective=MaximizeObjective(w=1.0), unit="%"),
            ContinuousOutput(key="cost", objective=MinimizeObjective(w=1.0), unit="EUR/kg"),
            ContinuousOutput(key="impurity", unit="%",
                             objective=MinimizeSigmoidObjective(tp=0.5, steepness=20.0)),
            ContinuousOutput(key="colour", objective=None, unit="APHA"),
        ]),
    )
    return BARKStrategy(domain=domain, seed=5)


def screening() -> BARKStrategy:
    """(f) A screen of ten conditions of which a few matter: the sparse split prior learns
    which (``feature_relevance()``)."""
    domain = Domain(
        inputs=Inputs(features=[
            CategoricalInput(key="solvent", categories=["MeCN", "DMF", "THF", "toluene"]),
            CategoricalInput(key="catalyst", categories=["Pd(OAc)2", "Pd2dba3", "NiCl2", "CuI"]),
            CategoricalInput(key="base", categories=["K2CO3", "Cs2CO3", "Et3N"]),
            ContinuousInput(key="temperature", bounds=(25.0, 120.0), unit="degC"),
            ContinuousInput(key="residence_time", bounds=(1.0, 60.0), unit="min"),
            ContinuousInput(key="concentration", bounds=(0.05, 1.0), unit="M"),
            ContinuousInput(key="stirring_rate", bounds=(200.0, 1200.0), unit="rpm"),
            ContinuousInput(key="water_content", bounds=(0.0, 2.0), unit="%"),
            DiscreteInput(key="equivalents", values=[1.0, 1.2, 1.5, 2.0, 3.0]),
            DiscreteInput(key="vial_position", values=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
        ]),
        outputs=Outputs(features=[
            ContinuousOutput(key="yield", objective=MaximizeObjective(w=1.0), unit="%")]),
    )
    return BARKStrategy(domain=domain, seed=11,
                        surrogate_specs=BARKSettings(split_prior="dirichlet"))


# (permittivity at 20-25 degC, boiling point degC, dipole moment D): common handbook values
SOLVENTS = {
    "water": (80.1, 100.0, 1.85), "DMSO": (46.7, 189.0, 3.96), "MeCN": (37.5, 82.0, 3.92),
    "DMF": (36.7, 153.0, 3.82), "MeOH": (32.7, 65.0, 1.70), "NMP": (32.2, 202.0, 4.09),
    "EtOH": (24.5, 78.0, 1.69), "acetone": (20.7, 56.0, 2.88), "iPrOH": (19.9, 82.0, 1.66),
    "n-BuOH": (17.5, 118.0, 1.66), "pyridine": (12.4, 115.0, 2.22), "DCM": (8.93, 40.0, 1.60),
    "THF": (7.58, 66.0, 1.75), "2-MeTHF": (6.97, 80.0, 1.38), "AcOH": (6.2, 118.0, 1.74),
    "EtOAc": (6.02, 77.0, 1.78), "CHCl3": (4.81, 61.0, 1.04), "Et2O": (4.33, 35.0, 1.15),
    "toluene": (2.38, 111.0, 0.36), "benzene": (2.27, 80.0, 0.0), "dioxane": (2.21, 101.0, 0.45),
    "cyclohexane": (2.02, 81.0, 0.0), "heptane": (1.92, 98.0, 0.0), "hexane": (1.88, 69.0, 0.0),
}


def library() -> BARKStrategy:
    """(g) A solvent screen over a finite library: 24 solvents described by permittivity,
    boiling point and dipole moment, at four temperatures. The forest splits on the
    descriptors (an untried solvent is predicted from similar ones) and every one of the 96
    points is scored (the domain is enumerated); measured points are not proposed again."""
    domain = Domain(
        inputs=Inputs(features=[
            CategoricalDescriptorInput(
                key="solvent", categories=list(SOLVENTS),
                descriptors=["permittivity", "boiling_point", "dipole_moment"],
                values=[list(v) for v in SOLVENTS.values()]),
            DiscreteInput(key="temperature", values=[25.0, 40.0, 60.0, 80.0], unit="degC"),
        ]),
        outputs=Outputs(features=[
            ContinuousOutput(key="yield", objective=MaximizeObjective(w=1.0), unit="%")]),
    )
    return BARKStrategy(domain=domain, seed=5)


SPECS = {"reaction": reaction, "formulation": formulation, "process": process,
         "continuous_benchmark": benchmark, "pipeline": pipeline, "screening": screening,
         "library": library}


def main() -> None:
    for name, build in SPECS.items():
        spec = build()
        path = HERE / f"{name}.json"
        path.write_text(json.dumps(json.loads(spec.model_dump_json()), indent=2) + "\n")
        # what pipelines do with the file: read it as data, and get the same strategy back
        if load_spec(path).model_dump_json() != spec.model_dump_json():
            raise RuntimeError(f"{path} does not load back as the spec it was written from")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()

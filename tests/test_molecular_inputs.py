"""Molecular inputs: BoFire's featurizers give each SMILES a descriptor row (fingerprint bits:
"has substructure k"), and the forest splits on them as on any descriptor input."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from bofire.data_models.domain.api import Domain, Inputs, Outputs
from bofire.data_models.features.api import (
    CategoricalInput,
    CategoricalMolecularInput,
    ContinuousOutput,
)
from bofire.data_models.molfeatures.api import Fingerprints, Fragments
from bofire.data_models.objectives.api import MaximizeObjective

from bofire_bark.data_models.strategy import BARKStrategy as StrategyModel
from bofire_bark.data_models.surrogate import BARKSurrogate as SurrogateModel
from bofire_bark.space import split_space
from bofire_bark.surrogate import BARKSurrogate

pytest.importorskip("rdkit", reason="molecular inputs need the [chem] extra")

ALCOHOLS = ["C" * n + "O" for n in range(1, 11)]  # methanol .. decanol
FAST = {"n_chains": 2, "n_samples": 4, "thinning": 50, "burn_in": 400, "seed": 1}


def molecules(allowed=None):
    return Inputs(features=[CategoricalMolecularInput(key="m", categories=ALCOHOLS,
                                                      allowed=allowed)])


def outputs():
    return Outputs(features=[ContinuousOutput(key="y", objective=MaximizeObjective())])


def chain_data(held_out=(3, 7)):
    """y = 10 for five carbons or more: a substructure that only longer chains have."""
    seen = [s for s in ALCOHOLS if len(s) - 1 not in held_out]
    df = pd.DataFrame({"m": np.repeat(seen, 2)})
    df["y"] = [10.0 if len(s) - 1 >= 5 else 0.0 for s in df.m]
    return df


@pytest.mark.parametrize("encoding,follows", [(None, True), ("ONE_HOT", False)])
def test_an_untried_molecule_follows_its_fingerprint_neighbours(encoding, follows):
    """Propanol and heptanol are never tried: by default (Fingerprints()) their predictions
    follow the alcohols that share their substructures; read as labels they do not."""
    encodings = {} if encoding is None else {"m": encoding}
    model = BARKSurrogate(SurrogateModel(inputs=molecules(), outputs=outputs(),
                                         categorical_encodings=encodings, **FAST))
    model.fit(chain_data())
    pred = model.predict(pd.DataFrame({"m": ["CCCO", "CCCCCCCO"]}))["y_pred"]
    if follows:
        assert pred.iloc[0] < 3.0 and pred.iloc[1] > 7.0, pred.tolist()
        assert all(name.startswith("m_") for name in model.space.split_variable_names())
    else:
        assert pred.iloc[1] - pred.iloc[0] < 4.0, pred.tolist()


def test_featurizers_give_descriptor_tables():
    feature = molecules().get_by_key("m")
    table, names = split_space.descriptor_table(feature, Fingerprints(n_bits=256))
    assert table.shape[0] == len(ALCOHOLS) and len(names) == table.shape[1] > 0
    assert set(np.unique(table)) <= {0.0, 1.0}  # bits
    frag, frag_names = split_space.descriptor_table(
        feature, Fragments(fragments=["fr_Al_OH", "fr_unbrch_alkane"]))
    assert frag.shape == (len(ALCOHOLS), len(frag_names)) and len(frag_names) >= 1


def test_without_rdkit_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "rdkit", None)  # import rdkit now fails
    monkeypatch.setattr(split_space, "_TABLES", {})
    with pytest.raises(ValueError, match=r"'m'.*RDKit.*pip install \".\[chem\]\" in a clone"):
        SurrogateModel(inputs=molecules(), outputs=outputs())
    # labels need no RDKit
    SurrogateModel(inputs=molecules(), outputs=outputs(), categorical_encodings={"m": "ONE_HOT"})


def test_a_smiles_rdkit_cannot_parse_is_named():
    bad = CategoricalMolecularInput.model_construct(key="m", categories=["CCO", "C1CC", "CO"],
                                                    allowed=None)
    with pytest.raises(ValueError, match=r"'m'.*SMILES 'C1CC'"):
        split_space.descriptor_table(bad, Fingerprints())


def test_a_featurizer_on_a_plain_categorical_input_is_refused():
    plain = Inputs(features=[CategoricalInput(key="c", categories=["a", "b"])])
    with pytest.raises(ValueError, match="'c'.*no CategoricalMolecularInput"):
        SurrogateModel(inputs=plain, outputs=outputs(),
                       categorical_encodings={"c": Fingerprints()})


def test_strategy_spec_with_a_featurizer_round_trips_and_asks():
    from bofire.strategies.api import map as map_strategy

    from bofire_bark import load_spec

    allowed = [len(s) - 1 not in (1, 2) for s in ALCOHOLS]  # in the data, not proposed
    domain = Domain(inputs=molecules(allowed), outputs=outputs())
    spec = StrategyModel(domain=domain, time_limit=2.0, surrogate_specs={
        **FAST, "categorical_encodings": {"m": Fingerprints(n_bits=512)}})
    again = load_spec(spec.model_dump_json())
    assert again == spec
    strategy = map_strategy(again)
    strategy.tell(chain_data(held_out=(6, 7, 8, 9, 10)))
    pick = strategy.ask(1)["m"].iloc[0]
    assert pick in [s for s, a in zip(ALCOHOLS, allowed, strict=True) if a]
    # the untried alcohols of five carbons or more (hexanol .. decanol) score higher
    assert len(pick) - 1 >= 6, pick


def test_relevance_per_input_and_named_bits():
    """A chemist's question, "does the molecule matter more than t?", is one row per input;
    in detail each bit names the substructure that sets it, checked against RDKit's own
    substructure search for the bit of a CH2 group."""
    from bofire.data_models.features.api import ContinuousInput
    from rdkit import Chem

    inputs = Inputs(features=[molecules().get_by_key("m"),
                              ContinuousInput(key="t", bounds=(0, 1))])
    data = chain_data()
    data["t"] = np.linspace(0, 1, len(data))
    model = BARKSurrogate(SurrogateModel(inputs=inputs, outputs=outputs(), **FAST))
    model.fit(data)
    rel = model.feature_relevance()
    d = model.space.feature_index("m")
    n_bits = len(model.space.descriptor_names[d])
    assert list(rel.index) == ["m", "t"], rel
    assert rel.loc["m", "variables"] == n_bits > 1 and rel.loc["t", "variables"] == 1
    detail = model.feature_relevance(detail=True)
    assert len(detail) == n_bits + 1 and (detail.input == "m").sum() == n_bits
    named = detail.substructure.dropna()
    assert len(named) == n_bits and pd.isna(detail.loc["t", "substructure"])
    ch2 = [v for v, text in named.items() if "[CH2]" in text.split(" | ")]
    assert ch2, named
    col = model.space.descriptor_names[d].index(ch2[0].removeprefix("m_"))
    has_bit = model.space.descriptors[d][:, col] > 0
    has_ch2 = [Chem.MolFromSmiles(s).HasSubstructMatch(Chem.MolFromSmarts("[CH2;D2]"))
               for s in ALCOHOLS]
    np.testing.assert_array_equal(has_bit, has_ch2)

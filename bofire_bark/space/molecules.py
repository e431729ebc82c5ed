"""Descriptor tables of molecules (a ``CategoricalMolecularInput`` split by BoFire's
featurizer), computed with RDKit, an optional dependency (the ``[chem]`` extra); the tables are
cached by ``split_space.descriptor_table``."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from bofire.data_models.features.api import CategoricalInput
from bofire.data_models.molfeatures.api import MolFeatures

CHEM_EXTRA = 'pip install ".[chem]" in a clone of bofire-bark'


def _molecular_table(feature: CategoricalInput, featurizer: MolFeatures
                     ) -> tuple[np.ndarray, tuple[str, ...]]:
    try:
        from rdkit import Chem
    except ImportError:
        raise ValueError(f"Input {feature.key!r}: splitting molecules by "
                         f"{type(featurizer).__name__} needs RDKit: {CHEM_EXTRA} (or encode "
                         "the input as ONE_HOT)") from None
    for smiles in feature.categories:
        if Chem.MolFromSmiles(smiles) is None:
            raise ValueError(f"Input {feature.key!r}: RDKit cannot parse the SMILES "
                             f"{smiles!r}")
    frame = featurizer.get_descriptor_values(pd.Series(list(feature.categories)))
    table = frame.to_numpy(dtype=np.float64)
    finite = np.isfinite(table).all(axis=0)
    if not finite.all():
        # a descriptor the featurizer could not compute for some molecule says nothing about
        # the others: left out, and said so
        logging.getLogger("bofire_bark").info(
            "BARK: input %r: %d of %d %s descriptors are missing for some molecule and are "
            "not used", feature.key, int((~finite).sum()), len(finite),
            type(featurizer).__name__)
    names = tuple(str(c) for c in frame.columns)
    return table[:, finite], tuple(n for n, ok in zip(names, finite, strict=True) if ok)

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


def _fingerprints(featurizer: MolFeatures) -> list:
    """The ``Fingerprints`` a featurizer computes (itself, or the parts of a composite such as
    ``FingerprintsFragments``)."""
    from bofire.data_models.molfeatures.api import Fingerprints

    parts = getattr(featurizer, "features", None) or [featurizer]
    return [p for p in parts if isinstance(p, Fingerprints)]


def _environment(mol, atom: int, radius: int) -> str:
    """The atom environment of a Morgan bit as a SMILES fragment; a radius-0 environment
    (one atom) keeps its hydrogens, which is what tells such bits apart."""
    from rdkit import Chem

    if radius == 0:
        a = mol.GetAtomWithIdx(atom)
        symbol = a.GetSymbol().lower() if a.GetIsAromatic() else a.GetSymbol()
        h = a.GetTotalNumHs()
        return f"[{symbol}{'H' if h else ''}{h if h > 1 else ''}]"
    bonds = list(Chem.FindAtomEnvironmentOfRadiusN(mol, radius, atom))
    atoms = sorted({i for b in bonds for i in (mol.GetBondWithIdx(b).GetBeginAtomIdx(),
                                               mol.GetBondWithIdx(b).GetEndAtomIdx())})
    return Chem.MolFragmentToSmiles(mol, atomsToUse=atoms, bondsToUse=bonds,
                                    rootedAtAtom=atom)


def bit_substructures(smiles, featurizer, names) -> dict[str, str]:
    """Descriptor name (``fingerprint_k``) -> the substructures that set bit k in these
    molecules, for the bits of BoFire's ``Fingerprints`` among ``names``.

    BoFire's featurizer hashes Morgan environments (RDKit's ``GetMorganFingerprintAsBitVect``
    with its ``bond_radius`` and ``n_bits``) and keeps no record of them; the same call with
    RDKit's ``bitInfo`` recovers them, so the bits here are the bits BoFire computed.
    Environments are listed smallest first, ``" | "``-separated (more than one when the hash
    folds several onto one bit), at most four. Fragment and Mordred descriptors are left
    out (their names say what they count); no featurizer with fingerprints (or no RDKit):
    an empty dict.
    """
    parts = _fingerprints(featurizer) if isinstance(featurizer, MolFeatures) else []
    if not parts or smiles is None:
        return {}
    try:
        from rdkit import Chem
        from rdkit.Chem import AllChem
    except ImportError:
        return {}
    fp = parts[0]  # names are unique in a composite, so it has one Fingerprints at most
    wanted = {n for n in names if n.startswith("fingerprint_")}
    found: dict[str, set[str]] = {n: set() for n in wanted}
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        info: dict = {}
        AllChem.GetMorganFingerprintAsBitVect(mol, radius=fp.bond_radius, nBits=fp.n_bits,
                                              bitInfo=info)
        for bit, envs in info.items():
            name = f"fingerprint_{bit}"
            if name in found:
                found[name].update(_environment(mol, a, r) for a, r in envs)
    return {n: " | ".join(sorted(v, key=lambda t: (len(t), t))[:4])
            for n, v in found.items() if v}

"""Boxes per second of the UCB's grid search at this checkout, on cached posteriors of
``benchmarks.acq_cases`` (built by ``python -m benchmarks.acquisition_proof``): run it from two
checkouts in turn (``PYTHONPATH=<checkout> python results/acquisition/rules/ucb_speed.py``) to
compare the bound kernel before and after a change on the same posteriors.

Prints one line: the median over the cases of boxes per second of ``optimize_acquisition`` at
the defaults (one ask per case, the same seed).
"""

from __future__ import annotations

import logging
import sys
import warnings

import numpy as np

from benchmarks.acq_cases import case_names, make_case
from bofire_bark.optimize import optimize_acquisition

CASES = case_names()[::5]


def main() -> None:
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    rates = []
    for i, name in enumerate(CASES):
        case = make_case(name)
        r = optimize_acquisition(case.posterior, case.domain, case.space, sign=case.sign,
                                 seed=i)
        rates.append(r.nodes / max(r.solve_time, 1e-9))
    print(f"{len(CASES)} cases: median boxes/s {np.median(rates):.1f}", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()

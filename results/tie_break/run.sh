#!/bin/bash
# The tie_break="farthest" lever (issue 35), planned before the runs: the chemistry suite's
# arm bark_far on the problems whose search is the grid (CrossCoupling, the mixture,
# ReactionSynergy; MAX and the photoswitches are enumerated libraries, untouched), 8 seeds,
# paired by seed with `bark` and `sobo`; the MO study's BARK-NEHVI-LN-Far on CrossCoupling
# (8 seeds, paired with BARK-NEHVI-LN and Mobo); the seven BO study benchmarks (8 seeds,
# paired with results/bo_defaults_22, today's defaults). Run from the repository root.
cd "$(dirname "$0")/../.."
export PYTHONPATH=.
while pgrep -f "methods bark_far --problems crosscoupling --seeds 4" > /dev/null; do sleep 30; done
nice python -m benchmarks.chem_suite run --methods bark_far --problems crosscoupling mixture reaction_synergy --seeds 4 --n-jobs 1
nice python -m benchmarks.chem_suite run --methods bark_far --problems crosscoupling mixture reaction_synergy --seeds 8 --n-jobs 1
nice python -m benchmarks.bo_rerun run --out results/bo_far --benchmarks Hartmann6 DiscreteAckley TreeFunctionCat PestControl TreeFunction DiscreteRosenbrock StyblinskiTang10 --seeds 8 --split-prior dirichlet --tie-break farthest --n-jobs 1

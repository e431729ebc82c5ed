#!/bin/sh
# The study's queue (issue 35), one process at a time, niced; every step resumes from its CSV.
# Step 0, started first from a detached worktree at 6e3d5dd (today's defaults, before the new
# setting existed; the branch's default is bit-identical: tests/engine/test_engine_pinned.py):
#   cd ../wt-noise-base && PYTHONPATH=. nice -n 10 python -m benchmarks.interaction bo \
#       --out $R/results/noise_prior/interaction --seeds 12 --start no_pair
set -e
R=$(cd "$(dirname "$0")/../.." && pwd)
cd "$R"
export PYTHONPATH="$R"
OUT=results/noise_prior
# (a) ReactionSynergy BO, starts without the pair, the new prior, the same 12 seeds
nice -n 10 python -m benchmarks.interaction bo --out $OUT/interaction --seeds 12 \
    --start no_pair --set noise_prior=lognormal
# posterior noise sd on ReactionSynergy (Measure A fits, 14 random points without the pair)
nice -n 10 python -m benchmarks.interaction uncertainty --out $OUT/uncertainty/inverse_gamma \
    --seeds 12 --points 14 --configs dirichlet --set max_sampling_sweeps=12800
nice -n 10 python -m benchmarks.interaction uncertainty --out $OUT/uncertainty/lognormal \
    --seeds 12 --points 14 --configs dirichlet --set max_sampling_sweeps=12800 noise_prior=lognormal
# (b) CrossCoupling's yield, both arms from the same code, paired by seed
nice -n 10 python -m benchmarks.chem_bo run --out $OUT/chem_bo --problem crosscoupling \
    --methods bark bark_lognormal --seeds 5 --iterations 20

#!/bin/sh
# Extension, decided at 08:08 once the first arm's 12 seeds had taken about a minute each
# (after 2 of the log-normal arm's 12 seeds had finished): ReactionSynergy seeds 12-23 for both
# arms, then CrossCoupling seeds 5-9 (cut off if time runs out; complete pairs only count).
# Runs after run.sh, the same way (the inverse gamma arm from the worktree at 6e3d5dd).
set -e
R=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${BASE:-$R/../wt-noise-base}
OUT=$R/results/noise_prior
cd "$BASE" && PYTHONPATH="$BASE" nice -n 10 python -m benchmarks.interaction bo \
    --out $OUT/interaction --seeds 12 --first-seed 12 --start no_pair
cd "$R" && export PYTHONPATH="$R"
nice -n 10 python -m benchmarks.interaction bo --out $OUT/interaction --seeds 12 \
    --first-seed 12 --start no_pair --set noise_prior=lognormal
nice -n 10 python -m benchmarks.chem_bo run --out $OUT/chem_bo --problem crosscoupling \
    --methods bark bark_lognormal --seeds 5 --first-seed 5 --iterations 20

#!/bin/sh
# run2.sh cut for time at 09:08 (after its inverse gamma seeds 12-13): the inverse gamma arm is
# stopped once seed 17 is done (a partial seed 18 is dropped), then the log-normal arm runs
# seeds 12-17; CrossCoupling seeds 5-9 are not run.
R=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$R/results/noise_prior
CSV="$OUT/interaction/bo/max_sampling_sweeps=12800,split_prior=dirichlet,start=no_pair/iterations.csv"
PID=$1  # the inverse gamma arm's process (run2.sh's first command)
while ! grep -q "seed 17:" "$OUT/queue2.log"; do sleep 10; done
kill "$PID"; sleep 2
python -c "import pandas as pd; d = pd.read_csv('$CSV'); d[d.seed <= 17].to_csv('$CSV', index=False)"
cd "$R" && PYTHONPATH="$R" nice -n 10 python -m benchmarks.interaction bo \
    --out $OUT/interaction --seeds 6 --first-seed 12 --start no_pair --set noise_prior=lognormal

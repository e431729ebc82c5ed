"""Regenerate the published benchmark results.

    python -m benchmarks {regression,bo,plots,mo,mo-plots,mo-compare,split-prior,chem-suite,
                          all} [options]

``regression``: the paper's UCI model-fit table (BARK vs BoFire's SingleTaskGP);
``bo``: the Bayesian-optimization study (resumable, one CSV per run); ``plots``: figures and
tables from the BO CSVs; ``mo`` and ``mo-plots``: the multi-objective study and its
hypervolume plot and table (``mo.py``), ``mo-compare`` one method's runs against an
earlier version's kept aside; ``split-prior {regression,bo,report}``: the uniform
against the sparse Dirichlet split prior (``split_prior.py``); ``chem-suite {run,summary}``:
BARK and its levers against Sobo and random picks on five chemistry problems
(``chem_suite.py``, also ``python -m benchmarks.chem_suite``); ``all``: regression, bo and
plots in turn.
``--small`` is a spot check that finishes in minutes (reduced MCMC budgets, fewer splits,
benchmarks, seeds and iterations) and writes under the git-ignored ``out/small/``, leaving the
tracked ``results/`` alone.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> None:
    from benchmarks import bo, chem_suite, mo, plots, regression, split_prior

    parser = argparse.ArgumentParser(prog="python -m benchmarks",
                                     description=__doc__.splitlines()[1].strip())
    sub = parser.add_subparsers(dest="command", required=True)
    regression.add_arguments(sub.add_parser("regression", help="UCI model-fit table"))
    bo.add_arguments(sub.add_parser("bo", help="Bayesian-optimization study"))
    plots.add_arguments(sub.add_parser("plots", help="BO plots and tables"))
    mo.add_arguments(sub.add_parser("mo", help="multi-objective BO study"))
    mo.add_plot_arguments(sub.add_parser("mo-plots", help="multi-objective plot and table"))
    mo.add_compare_arguments(sub.add_parser("mo-compare", help="one method's runs against "
                                            "an earlier version's, paired by seed"))
    split_prior.add_arguments(sub.add_parser("split-prior", help="uniform vs Dirichlet split "
                                             "prior: regression, bo, report"))
    chem_suite.add_arguments(sub.add_parser("chem-suite", help="chemistry suite: BARK, its "
                                            "levers, Sobo and random; run, summary"))
    everything = sub.add_parser("all", help="regression, bo and plots")
    everything.add_argument("--small", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "regression":
        regression.run_from_args(args)
    elif args.command == "bo":
        bo.run_from_args(args)
    elif args.command == "plots":
        plots.run_from_args(args)
    elif args.command == "mo":
        mo.run_from_args(args)
    elif args.command == "mo-plots":
        mo.plots_from_args(args)
    elif args.command == "mo-compare":
        mo.compare_from_args(args)
    elif args.command == "split-prior":
        split_prior.run_from_args(args)
    elif args.command == "chem-suite":
        chem_suite.run_from_args(args)
    else:
        small = ["--small"] if args.small else []
        regression.run_from_args(_defaults(regression, small))
        bo.run_from_args(_defaults(bo, small))
        plots.run_from_args(_defaults(plots, small))


def _defaults(module, extra: list[str]):
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return parser.parse_args(extra)


if __name__ == "__main__":
    main(sys.argv[1:])

"""The acquisition as one Pyomo MIP (the paper's formulation), for what the grid search cannot
hold (nonlinear equality constraints) or when a MIP solver is asked for.

Modules: ``trees`` (tree constraints), ``objective`` (mu, sigma cones, objective, from
``sample_gp``), ``constraints`` (domain constraints from ``specs``), ``model`` (assembly,
start), ``solvers`` (solver choice, SCIP in a worker process), ``decode`` (solution to point),
``_scip_child`` (the worker's entry).
"""

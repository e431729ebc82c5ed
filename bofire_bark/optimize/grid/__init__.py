"""The grid branch-and-bound: BARK's acquisition maximized with a proof over the grid of split
thresholds, without Pyomo.

Modules, one per job: ``settings`` (``GridSettings``), ``model`` (the posterior flattened into
the ``BoundModel`` the kernels read), ``bound`` (numba: a box's upper bound and split),
``boxes`` (``Grid``, ``MultiGrid``: root, bound, branch), ``pruning`` (constraints on boxes and
points), ``points`` (a point of a box), ``loop`` (numba: the box loop without constraints),
``driver`` (``search``: the Python loop, and the numba loop run in chunks).
"""

from bofire_bark.optimize.grid.boxes import Grid, HypervolumeGrid, MultiGrid
from bofire_bark.optimize.grid.driver import SearchResult, build_grid, search, search_problem
from bofire_bark.optimize.grid.model import BoundModel, GridModel, grid_model
from bofire_bark.optimize.grid.pruning import Constraints
from bofire_bark.optimize.grid.settings import GridSettings
from bofire_bark.optimize.result import relative_gap

__all__ = ["BoundModel", "Constraints", "Grid", "GridModel", "GridSettings", "HypervolumeGrid",
           "MultiGrid",
           "SearchResult", "build_grid", "grid_model", "relative_gap", "search", "search_problem"]

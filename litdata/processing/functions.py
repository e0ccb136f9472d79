"""``from litdata.processing.functions import optimize, map`` (LitData's import path)."""

from litdata.processing.map import map
from litdata.processing.merge import merge_datasets
from litdata.processing.optimize import optimize
from litdata.processing.walk import walk

__all__ = ["map", "merge_datasets", "optimize", "walk"]

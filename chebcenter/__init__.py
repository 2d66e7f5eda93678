"""chebcenter: minimax Chebyshev centers of box slices.

The Chebyshev center of a bounded set Q is the center of the smallest ball
that *encloses* Q (``argmin_c max_{x in Q} ||x - c||``): the best worst-case
estimate of an unknown x known to lie in Q. This is not the center of the
largest inscribed ball that LP libraries compute under the same name.
"""

from __future__ import annotations

from . import theory
from ._errors import DASK_HINT, ChebcenterError, InvalidInputError, MissingBackendError, import_dask
from ._warmup import cold_steps as cold_warmup_steps
from ._warmup import start_helper as start_warmup_helper
from ._warmup import steps_of as warmup_steps_of
from ._warmup import warmup
from .methods import METHODS
from .results import BatchResult, CenterResult, FeatureRanges, Status
from .sets import BoxSlice, Polytope, QuadraticSet, chebyshev_center

__version__ = "0.1.0"  # the one version string: pyproject.toml and vflattack read it

__all__ = [
    "BatchResult",
    "BoxSlice",
    "CenterResult",
    "ChebcenterError",
    "DASK_HINT",
    "FeatureRanges",
    "InvalidInputError",
    "METHODS",
    "MissingBackendError",
    "Polytope",
    "QuadraticSet",
    "Status",
    "chebyshev_center",
    "cold_warmup_steps",
    "import_dask",
    "start_warmup_helper",
    "theory",
    "warmup",
    "warmup_steps_of",
]

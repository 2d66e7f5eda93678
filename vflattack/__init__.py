"""vflattack: privacy audits of vertical federated logistic regression.

The application layer on top of :mod:`chebcenter` (scores -> (A, b) ->
Chebyshev centers). Its API (models, white-box, black-box and agnostic
attacks, defences, datasets, CLI) is specified in the project's open issues
and lands with them; this release ships only :mod:`chebcenter`.
"""

__version__ = "0.1.0"

__all__: list[str] = []

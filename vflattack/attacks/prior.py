"""The adversary's prior: what it knows about the passive features before any score.

The prior-aware attacks (docs/theory.md §1.6) use it: ``prior`` moves the prior mean onto
S_F, ``gaussian`` is the MAP under the Gaussian prior restricted to S_F. Both run through
:func:`vflattack.whitebox_attack`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import InvalidInputError, as_2d

__all__ = ["PRIOR_METHODS", "Prior"]

#: prior-aware attacks (docs/theory.md §1.6): the prior mean moved onto S_F (``prior``), and
#: the MAP under the Gaussian prior N(mu, Sigma) restricted to S_F (``gaussian``), which is also
#: the Sigma-projection of the Gaussian conditional mean of x given A x = b'
PRIOR_METHODS = ("prior", "gaussian")


@dataclass(frozen=True)
class Prior:
    """What an adversary knows about the passive features before any score: a mean and a covariance.

    :meth:`from_data` estimates them from auxiliary passive records (by default the
    training split, which the ``mean`` baseline already assumes), with a ridge
    ``shrinkage * mean variance * I`` so that the covariance is positive definite even when
    a feature is constant in the data.
    """

    mean: np.ndarray
    cov: np.ndarray

    @classmethod
    def from_data(cls, X: Any, shrinkage: float = 1e-3) -> Prior:
        """Sample mean and (ridged) covariance of the rows of ``X``.

        ``cov = S + shrinkage * (tr S / d) I`` with S the sample covariance.

        Examples
        --------
        >>> import numpy as np
        >>> p = Prior.from_data(np.array([[0.0, 1.0], [1.0, 1.0], [0.5, 1.0]]))
        >>> p.mean.tolist(), bool(np.all(np.linalg.eigvalsh(p.cov) > 0))   # the constant feature is ridged
        ([0.5, 1.0], True)
        """
        X = as_2d("X", X)
        if X.shape[0] < 2:
            raise InvalidInputError(f"X must have at least 2 rows to estimate a covariance; got {X.shape[0]}")
        if not (np.isfinite(shrinkage) and shrinkage > 0):
            raise InvalidInputError(f"shrinkage must be a positive number; got {shrinkage!r}")
        cov = np.atleast_2d(np.cov(X, rowvar=False))
        ridge = shrinkage * max(float(np.trace(cov)) / cov.shape[0], 1e-12)
        return cls(X.mean(axis=0), cov + ridge * np.eye(cov.shape[0]))

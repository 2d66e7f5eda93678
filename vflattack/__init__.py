"""vflattack: privacy audits of vertical federated logistic regression.

The application layer on top of :mod:`chebcenter`: a split logistic regression
(:class:`VFLModel`), its confidence scores turned into the linear system
``A x = b'`` (docs/theory.md §3), and attacks that hand that system to chebcenter's
estimators to reconstruct the passive party's features.
"""

from __future__ import annotations

import chebcenter as _chebcenter

from . import datasets
from ._errors import DatasetError, InvalidInputError, VflattackError
from ._reportdir import verify_report
from .agnostic import (
                       AdversaryModel,
                       agnostic_attack,
                       agnostic_decomposition,
                       refine_adversary_model,
                       train_adversary_model,
)
from .attacks import BASELINES, DEFAULT_METHODS, PRIOR_METHODS, AttackResult, Prior, whitebox_attack
from .blackbox import blackbox_attack, blackbox_projections
from .defence import Defence, adversary_mse, orthogonal_defence
from .mapping import LinearSystem, ScoreFlag, difference_matrix, scores_to_system
from .model import VFLModel, train_vfl_model

__version__ = _chebcenter.__version__  # one version string for the distribution (pyproject reads it)

__all__ = [
    "AdversaryModel",
    "AttackResult",
    "BASELINES",
    "DEFAULT_METHODS",
    "DatasetError",
    "Defence",
    "InvalidInputError",
    "LinearSystem",
    "PRIOR_METHODS",
    "Prior",
    "ScoreFlag",
    "VFLModel",
    "VflattackError",
    "adversary_mse",
    "agnostic_attack",
    "agnostic_decomposition",
    "blackbox_attack",
    "blackbox_projections",
    "datasets",
    "difference_matrix",
    "orthogonal_defence",
    "refine_adversary_model",
    "scores_to_system",
    "train_adversary_model",
    "train_vfl_model",
    "verify_report",
    "whitebox_attack",
]

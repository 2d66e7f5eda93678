"""vflattack: privacy audits of vertical federated logistic regression.

The application layer on top of :mod:`chebcenter`: a split logistic regression
(:class:`VFLModel`), its confidence scores turned into the linear system
``A x = b'`` (SPEC §3), and attacks that hand that system to chebcenter's
estimators to reconstruct the passive party's features.
"""

from __future__ import annotations

from . import datasets
from .attacks import BASELINES, DEFAULT_METHODS, AttackResult, whitebox_attack
from .mapping import LinearSystem, ScoreFlag, difference_matrix, scores_to_system
from .model import VFLModel, train_vfl_model

__version__ = "0.1.0"

__all__ = sorted([
    "AttackResult",
    "BASELINES",
    "DEFAULT_METHODS",
    "LinearSystem",
    "ScoreFlag",
    "VFLModel",
    "datasets",
    "difference_matrix",
    "scores_to_system",
    "train_vfl_model",
    "whitebox_attack",
])

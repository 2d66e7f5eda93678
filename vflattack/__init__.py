"""vflattack: privacy audits of vertical federated logistic regression.

The application layer on top of :mod:`chebcenter`, in layers that import one way only
(docs/architecture.md): a split logistic regression (:class:`VFLModel`, :mod:`.model`);
its confidence scores turned into the linear system ``A x = b'`` (docs/theory.md §3,
:mod:`.system`); the attacks that hand that system to chebcenter's estimators
(:mod:`.attacks`); the audits that measure how much leaks (:mod:`.audit`, returning a
:class:`Result`); the reports that format and write them (:mod:`.report`); the command
line (:mod:`.cli`).
"""

from __future__ import annotations

import chebcenter as _chebcenter

from . import attacks, audit, datasets, report
from ._errors import DatasetError, InvalidInputError, UnreadableReleaseWarning, VflattackError
from .api import AuditConfig, AuditResult, DesignConfig, KnownInputConfig, LogConfig, ThreatConfig, audit_log
from .attacks import (
    BASELINES,
    DEFAULT_METHODS,
    PRIOR_METHODS,
    AdversaryModel,
    AttackResult,
    Defence,
    Prior,
    adversary_mse,
    agnostic_attack,
    agnostic_decomposition,
    blackbox_attack,
    blackbox_projections,
    orthogonal_defence,
    refine_adversary_model,
    train_adversary_model,
    whitebox_attack,
)
from .audit import (
    DesignResult,
    Result,
    attack_frame,
    design_release,
    run_audit,
    run_known_input,
    run_release_sweep,
    run_threat_audit,
)
from .audit.privacy import party_radii
from .model import VFLModel, train_vfl_model
from .release import Release, release_to_bounds
from .report import render, verify_report
from .system import LinearSystem, ScoreFlag, difference_matrix, scores_to_system

__version__ = _chebcenter.__version__  # one version string for the distribution (pyproject reads it)

__all__ = [
    "read_model",
    "FeatureBounds",
    "AdversaryModel",
    "AttackResult",
    "AuditConfig",
    "AuditResult",
    "DesignConfig",
    "KnownInputConfig",
    "LogConfig",
    "ThreatConfig",
    "BASELINES",
    "DEFAULT_METHODS",
    "DatasetError",
    "DesignResult",
    "VFLClassifier",
    "Defence",
    "InvalidInputError",
    "LinearSystem",
    "PRIOR_METHODS",
    "Prior",
    "Release",
    "Result",
    "ScoreFlag",
    "UnreadableReleaseWarning",
    "VFLModel",
    "VflattackError",
    "adversary_mse",
    "agnostic_attack",
    "agnostic_decomposition",
    "attack_frame",
    "attacks",
    "audit",
    "audit_log",
    "blackbox_attack",
    "blackbox_projections",
    "datasets",
    "design_release",
    "difference_matrix",
    "from_sklearn",
    "orthogonal_defence",
    "refine_adversary_model",
    "release_to_bounds",
    "party_radii",
    "render",
    "report",
    "run_audit",
    "run_release_sweep",
    "run_known_input",
    "run_threat_audit",
    "scores_to_system",
    "train_adversary_model",
    "train_vfl_model",
    "verify_report",
    "whitebox_attack",
]



class _AuditPackage(type(audit)):
    """``vflattack.audit`` is the audits' package and, called, the typed audit:
    ``va.audit(va.AuditConfig(...))`` is :func:`vflattack.api.audit`, while
    ``va.audit.run_audit`` and the package's other names stay where they are."""

    def __call__(self, config):
        from .api import audit as run

        return run(config)


audit.__class__ = _AuditPackage


def _moved(fn, old: str):
    import functools
    import warnings

    @functools.wraps(fn)
    def shim(*args, **kwargs):
        warnings.warn(f"{old} is now vflattack.audit_log (the log audit computes, so it left the report layer); "
                      "the old name goes in the next release", DeprecationWarning, stacklevel=2)
        return fn(*args, **kwargs)
    return shim


report.audit_log = _moved(audit_log, "vflattack.report.audit_log")


def __getattr__(name: str):
    # the scikit-learn estimator imports scikit-learn: only when it is asked for
    if name in ("VFLClassifier", "from_sklearn"):
        from . import estimator

        return getattr(estimator, name)
    if name in ("FeatureBounds", "units"):   # the features' box in the data's units (vflattack.units)
        import importlib

        units = importlib.import_module(f"{__name__}.units")
        return units if name == "units" else units.FeatureBounds
    if name in ("importers", "read_model"):   # the framework importers (vflattack.importers), on first use
        import importlib

        importers = importlib.import_module(f"{__name__}.importers")
        return importers if name == "importers" else importers.read_model
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

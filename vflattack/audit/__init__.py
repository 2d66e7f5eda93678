"""The audits: the protocol, and the experiments that measure how much leaks.

Every audit starts from :func:`~vflattack.audit.protocol.build_scenario` (load, split,
train, score) and returns a :class:`~vflattack.audit.protocol.Result`: records and the
configuration. This layer computes; :mod:`vflattack.report` formats and writes.

* :mod:`.whitebox`: ``run_audit``, the white-box audit behind ``vflattack audit``;
* :mod:`.sweep`: ``run_release_sweep``, the precision sweep (one audit per release);
* :mod:`.threats`: ``run_threat_audit``, black-box, agnostic and the defence trade-off;
* :mod:`.known_input`: ``run_known_input``, the known-input attack on perturbation;
* :mod:`.design`: ``design_release``, the finest release that meets a certified target;
* :mod:`.privacy`: per-record minimax radii, feature ranges and leakage;
* :mod:`.logs`: ``attack_log``, a prediction log on disk, out of core, on Dask.
"""

from __future__ import annotations

from .design import Candidate, DesignResult, Target, design_release
from .known_input import perturb, run_known_input
from .logs import attack_frame, attack_log, read_log, write_log
from .privacy import Exposure, exposure, privacy_summary
from .protocol import PREDICT_FRACTION, Result, Scenario, build_scenario, load_data, resolve_columns, split_columns, split_rows
from .sweep import DEFAULT_SWEEP, SweepRecord, run_release_sweep
from .threats import ThreatRecord, run_threat_audit
from .whitebox import AuditRecord, run_audit

__all__ = [
    "AuditRecord", "Candidate", "DEFAULT_SWEEP", "DesignResult", "Exposure", "PREDICT_FRACTION", "Result",
    "Scenario", "ThreatRecord", "attack_frame", "attack_log", "build_scenario", "exposure", "read_log", "load_data",
    "perturb", "privacy_summary", "resolve_columns", "run_audit", "run_known_input", "run_release_sweep",
    "run_threat_audit", "split_columns", "split_rows", "SweepRecord", "Target", "design_release", "write_log",
]

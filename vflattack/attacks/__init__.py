"""The attacks: what an adversary reconstructs from what the active party saw.

Each attack turns its view into chebcenter's input (through :mod:`vflattack.system`) and
calls chebcenter's estimators; none re-implements an estimator.

* :mod:`.whitebox`: the adversary knows the whole model (``whitebox_attack``), with the
  baselines and the prior-aware estimators;
* :mod:`.prior`: the adversary's prior (:class:`Prior`);
* :mod:`.blackbox`: it knows ``W_act`` and the signs of ``J w_pas`` only;
* :mod:`.agnostic`: it never sees the target's score (adversary model AM, refined RAM);
* :mod:`.defence`: the score-preserving orthogonal defence the passive party can deploy;
* :mod:`.known_input`: the known-input attack on distance-preserving perturbation;
* :mod:`.privee`: the recovery of PRIVEE's scores from one batch (registered with the
  release table on import: :func:`vflattack.release.register_recovery`).
"""

from __future__ import annotations

from . import privee  # noqa: F401  (registers the PRIVEE recovery with the release table)
from .agnostic import AdversaryModel, agnostic_attack, agnostic_decomposition, refine_adversary_model, train_adversary_model
from .blackbox import blackbox_attack, blackbox_projections
from .defence import Defence, adversary_mse, orthogonal_defence
from .known_input import attack_orthogonal_defence, known_input_attack
from .prior import PRIOR_METHODS, Prior
from .whitebox import BASELINES, DEFAULT_METHODS, AttackResult, default_estimator, reconstruct, whitebox_attack

__all__ = [
    "AdversaryModel", "AttackResult", "BASELINES", "DEFAULT_METHODS", "Defence", "PRIOR_METHODS", "Prior",
    "adversary_mse", "agnostic_attack", "agnostic_decomposition", "attack_orthogonal_defence", "blackbox_attack",
    "blackbox_projections", "default_estimator", "known_input_attack", "orthogonal_defence", "reconstruct",
    "refine_adversary_model", "train_adversary_model", "whitebox_attack",
]

"""The white-box attack: every chebcenter estimator on ``A x = b'`` (docs/theory.md §3), plus baselines."""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import chebcenter as cc

from .._errors import UnreadableReleaseWarning
from .._validate import InvalidInputError
from ..model import VFLModel
from ..release import BoundedSystem, Release, _Recovered, release_to_bounds, verdict
from ..system import LinearSystem, scores_to_system
from .prior import PRIOR_METHODS, Prior

__all__ = ["AttackResult", "BASELINES", "DEFAULT_METHODS", "PRIOR_METHODS", "Prior", "default_estimator",
           "reconstruct", "whitebox_attack"]

#: what an adversary can do without any score: a uniform random guess in the box,
#: and the training-set feature mean (when the caller supplies it)
BASELINES = ("random", "mean")
_NAMES = {None: "INVALID_SCORES", **{s: s.name for s in cc.Status}}
DEFAULT_METHODS = ("half", "ls", "half_star", "cls", "rcc1", "rcc2", "exact")


@dataclass
class AttackResult:
    """Reconstructions of the passive features, one (N, d) array per method.

    Attributes
    ----------
    reconstructions : dict[str, ndarray]
        ``{method: (N, d)}``; NaN rows where the method returned no center.
    status : dict[str, ndarray]
        ``{method: (N,) object array}`` of :class:`chebcenter.Status`
        (``None`` where the row's scores were invalid).
    radii : dict[str, ndarray]
        The radius each method certifies (NaN for baselines).
    score_flags : ndarray
        :class:`vflattack.system.ScoreFlag` bits per row (0 = valid).
    times : dict[str, float]
        Seconds per method for the whole batch.
    system : LinearSystem
        The ``(A, B', flags)`` the estimators were run on.
    """

    reconstructions: dict
    status: dict
    radii: dict
    score_flags: np.ndarray
    times: dict
    system: LinearSystem | BoundedSystem | None = None
    extras: dict = field(default_factory=dict)
    #: ``{method: (N,)}`` the proven lower bound on the minimax radius r* each method
    #: certifies (``exact``'s and ``auto``'s dual bound, NaN where it certifies none); the
    #: methods that certify none are absent
    radius_lower: dict = field(default_factory=dict)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(self.reconstructions)

    def common_rows(self) -> np.ndarray:
        """Rows every method reconstructed (the rows the MSEs are computed on).

        A method that reconstructed no row at all (e.g. ``exact`` past its size
        guard: TOO_LARGE everywhere) does not shrink the common set; its MSE is
        NaN and its statuses say why.
        """
        ok = self.score_flags == 0
        for X in self.reconstructions.values():
            done = np.all(np.isfinite(X), axis=1)
            if done.any():
                ok &= done
        return ok

    def status_counts(self) -> dict:
        """``{method: {status name: rows}}`` (invalid score rows count as ``INVALID_SCORES``)."""
        out = {}
        for name in self.status:
            keys, nums = np.unique(np.array(self.status_names(name), dtype=object).astype(str), return_counts=True)
            out[name] = {str(k): int(v) for k, v in zip(keys, nums)}
        return out

    def status_names(self, method: str) -> list:
        """The status name of each row of ``method``.

        Parameters
        ----------
        method : str
            One of the attack's methods (a key of ``status``).

        Returns
        -------
        list of str
            ``chebcenter.Status`` names, ``INVALID_SCORES`` for rows whose scores were invalid.
            A table lookup: an enum member's ``.name`` costs a descriptor call per row, 0.3 s
            of a 25 000-row log partition.
        """
        if method not in self.status:
            raise InvalidInputError(f"method must be one of {sorted(self.status)}; got {method!r}")
        return [_NAMES[s] for s in self.status[method]]

    def mse(self, X_true: Any, per_feature: bool = False, rows: Any = None) -> dict:
        """Per-feature MSE ``(1/(N d)) sum ||X_n - Xhat_n||^2`` per method (docs/theory.md §2).

        Computed on ``rows`` (default: :meth:`common_rows`, so every method is
        scored on the same predictions). ``per_feature=True`` gives the (d,)
        vector of per-column mean squared errors instead.
        """
        X_true = np.asarray(X_true, dtype=float)
        some = next(iter(self.reconstructions.values()))
        if X_true.shape != some.shape:
            raise InvalidInputError(f"X_true must have shape {some.shape}; got {X_true.shape}")
        mask = self.common_rows() if rows is None else np.asarray(rows)
        out = {}
        for name, X in self.reconstructions.items():
            err = (X[mask] - X_true[mask]) ** 2
            if not np.all(np.isfinite(err)) or err.size == 0:
                out[name] = np.full(X.shape[1], np.nan) if per_feature else float("nan")
            else:
                out[name] = err.mean(axis=0) if per_feature else float(err.mean())
        return out


def default_estimator(model: VFLModel) -> str:
    """The seeds' estimator: ``ls`` when rank(A) = d (it is then exact), else ``half_star``.

    Examples
    --------
    >>> import numpy as np
    >>> default_estimator(VFLModel(np.zeros((3, 1)), np.eye(3)[:, :2], np.zeros(3)))   # rank 2 = d
    'ls'
    """
    return "ls" if model.domain_slice(False).rank == model.n_passive else "half_star"


def reconstruct(A: np.ndarray | cc.BoxSlice, B: np.ndarray | None, valid: np.ndarray, methods: Sequence[str], *,
                lo: float = 0.0, hi: float = 1.0, prior_mean: Any = None, prior: Prior | None = None,
                rng: Any = 0, method_options: Mapping[str, Mapping] | None = None, progress: Any = None,
                bounds: tuple | None = None):
    """Run estimators on ``A x = B[n]`` for the valid rows (shared by every attack).

    ``A`` is the matrix or, better, a :class:`chebcenter.BoxSlice` already built on it
    (e.g. :attr:`VFLModel.box_slice`, factored once per model; its box is used and
    ``lo``/``hi`` are ignored). Calls each method on the whole batch: chebcenter's methods,
    the baselines (``random``, ``mean``: needs ``prior_mean`` or ``prior``) and the
    prior-aware attacks (``prior``, ``gaussian``: need ``prior``). With ``bounds=(L, U)``
    (and ``B`` None) the sets are ``L[n] <= A x <= U[n]`` (a release that is not exact,
    :mod:`vflattack.release`). Returns ``(reconstructions, status, radii, times)``.
    """
    prob = A if isinstance(A, cc.BoxSlice) else cc.BoxSlice(A, lo=lo, hi=hi)
    lo, hi = prob.lo, prob.hi
    N, d = (B if bounds is None else bounds[0]).shape[0], prob.d
    method_options = dict(method_options or {})
    known = cc.METHODS + BASELINES + PRIOR_METHODS
    unknown = [m for m in methods if m not in known]
    if unknown:
        raise InvalidInputError(f"methods must be among {known}; got {unknown}")
    if prior is not None and not isinstance(prior, Prior):
        raise InvalidInputError(f"prior must be a vflattack.Prior (Prior.from_data(X_aux)); got {type(prior).__name__}")
    if prior_mean is None and prior is not None:
        prior_mean = prior.mean
    if "mean" in methods and prior_mean is None:
        raise InvalidInputError("method 'mean' needs prior_mean or prior (the training-set feature mean)")
    needs = [m for m in methods if m in PRIOR_METHODS]
    if needs and prior is None:
        raise InvalidInputError(f"methods {needs} need prior= (vflattack.Prior.from_data on auxiliary passive data)")
    if prior is not None and prior.mean.shape != (d,):
        raise InvalidInputError(f"prior must describe {d} passive features; got a mean of shape {prior.mean.shape}")
    gen = np.random.default_rng(rng)
    recon, status, radii, times, lowers = {}, {}, {}, {}, {}
    for name in methods:
        t0 = time.perf_counter()
        X = np.full((N, d), np.nan)
        st = np.full(N, None, dtype=object)
        rad = np.full(N, np.nan)
        if name == "random":
            X[valid] = lo + (hi - lo) * gen.random((int(valid.sum()), d))
            st[valid] = cc.Status.OPTIMAL
        elif name == "mean":
            X[valid] = np.broadcast_to(np.asarray(prior_mean, dtype=float), (int(valid.sum()), d))
            st[valid] = cc.Status.OPTIMAL
        elif valid.any():
            opts = dict(method_options.get(name, {}))
            if name in PRIOR_METHODS:
                opts.update(anchor=prior.mean, metric=None if name == "prior" else prior.cov)
            method = "project" if name in PRIOR_METHODS else name
            if method == "exact":   # the attack reads centers and radii: the support points would be 100 MB per 1e5 rows
                opts.setdefault("return_support", False)
            if bounds is None:
                br = prob.centers(B[valid], method=method, on_inconsistent="project", **opts)
            else:
                br = prob.centers(method=method, lower=bounds[0][valid], upper=bounds[1][valid], **opts)
            X[valid], st[valid], rad[valid] = br.centers, br.status, br.radii
            if "radius_lower" in br.extras:
                lowers[name] = np.full(N, np.nan)
                lowers[name][valid] = br.extras["radius_lower"]
        recon[name], status[name], radii[name] = X, st, rad
        times[name] = time.perf_counter() - t0
        if progress is not None:
            progress.update(1)
    return recon, status, radii, times, lowers


def whitebox_attack(model: VFLModel, scores: Any, Y: Any,
                    methods: Sequence[str] = DEFAULT_METHODS, *, prior_mean: Any = None,
                    prior: Prior | None = None, log_scores: bool = False, rng: Any = 0,
                    method_options: Mapping[str, Mapping] | None = None,
                    progress: Any = None, release: Release | None = None) -> AttackResult:
    """Reconstruct the passive features from scores, knowing ``W_act, W_pas, b``.

    If most rows are not valid under ``release`` (e.g. a defence's output taken as
    scores), an :class:`vflattack.UnreadableReleaseWarning` says so and names the release
    kinds that fit the data (:func:`vflattack.release.verdict`); the line is also in
    ``result.extras["verdict"]``.

    Builds ``A = J W_pas`` and ``b'_n = c'_n - J W_act y_n - J b`` (docs/theory.md §3),
    factors A once and runs every requested chebcenter method on the batch;
    ``"random"`` (uniform in [0, 1]^d, seeded by ``rng``) and ``"mean"`` (the
    training-set feature mean ``prior_mean``) are the baselines an adversary
    has without scores; ``"prior"`` and ``"gaussian"`` combine the scores with a
    :class:`Prior` (``prior=``, e.g. ``Prior.from_data(X_train)``): the prior mean projected
    onto S_F, and the MAP under the Gaussian prior (docs/theory.md §1.6). Rows whose
    scores are invalid are flagged, not used.
    An inconsistent ``b'`` (noisy scores with rank A < k - 1) is projected
    onto Col(A) (``on_inconsistent="project"``; residual in the status extras).
    ``release`` (a :class:`vflattack.Release`) says how the scores were published: when it
    is not exact, ``scores`` is what was published (rounded probabilities, labels, ...) and
    the sets are the release's interval rows over every pair of classes
    (:func:`vflattack.release.release_to_bounds`), which always hold the record.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> m = VFLModel(rng.standard_normal((3, 2)), rng.standard_normal((3, 4)), np.zeros(3))
    >>> Y, X = rng.random((50, 2)), rng.random((50, 4))
    >>> res = whitebox_attack(m, m.predict_proba(Y, X), Y, methods=("half", "half_star"))
    >>> mse = res.mse(X); mse["half_star"] <= mse["half"]
    True
    """
    if not isinstance(model, VFLModel):
        raise InvalidInputError(f"model must be a VFLModel; got {type(model).__name__}")
    if model.link != "softmax" and log_scores:
        if model.link != "ovr":
            raise InvalidInputError(f"log_scores applies to probabilities (links softmax and ovr); this model's link "
                                    f"is {model.link!r}: pass its outputs")
        if release is not None and not release.exact:
            raise InvalidInputError("log_scores applies to exact scores; a release says how its values were published")
        # log sigmoid(z) -> sigmoid(z): exp's result is within |dl| + 1 ulp (relative) of the exact
        # one, and the logged l carries at most one ulp of its own, eps |l|: each value is bounded
        # by 4 eps (|l| + 2) of it, audited as bounded noise of those widths
        ls = np.asarray(scores, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            scores = np.exp(ls)
            release = _Recovered("noise", 0.0, half=4.0 * np.finfo(float).eps * (np.abs(ls) + 2.0) * scores)
    if model.link != "softmax" or (release is not None and not release.exact):
        release = release if release is not None else Release()
        bounded = with_domain_rows(model, release_to_bounds(model, scores, Y, release))
        extras = _unreadable(release, bounded.valid, scores, model.n_classes)
        recon, status, radii, times, lowers = reconstruct(
            model.domain_slice(True), None, bounded.valid, tuple(methods), prior_mean=prior_mean, prior=prior,
            rng=rng, method_options=method_options, progress=progress, bounds=(bounded.L, bounded.U))
        if model.link != "softmax":
            extras.update(_float32_hint(model, release, scores, status, bounded.valid))
        return AttackResult(recon, status, radii, bounded.flags, times, bounded, extras, lowers)
    system = with_domain_rows(model, scores_to_system(model, scores, Y, log_scores=log_scores))
    extras = _unreadable(None, system.valid, scores, model.n_classes) if not log_scores else {}
    recon, status, radii, times, lowers = reconstruct(
        model.domain_slice(False), np.nan_to_num(system.B), system.valid, tuple(methods), prior_mean=prior_mean,
        prior=prior, rng=rng, method_options=method_options, progress=progress)
    return AttackResult(recon, status, radii, system.flags, times, system, extras, lowers)


def with_domain_rows(model: VFLModel, system: Any) -> Any:
    """``system`` (a :class:`LinearSystem` or a :class:`BoundedSystem`) with the model's one-hot
    groups' rows ``s G x = s`` below the rows the scores give (itself when there is no group;
    ``s`` is :meth:`VFLModel.domain_scale`): the sets :meth:`VFLModel.domain_slice` solves
    over. Refused rows stay NaN."""
    if not model.onehot:
        return system
    import dataclasses

    bounded = isinstance(system, BoundedSystem)
    G, scale = model.domain_rows(bounded)
    ones = np.where(system.valid[:, None], scale, np.nan) * np.ones((1, G.shape[0]))
    A = np.vstack([system.A, G])
    if bounded:
        outer = None if system.outer is None else np.hstack([system.outer, np.zeros(ones.shape, dtype=bool)])
        return dataclasses.replace(system, A=A, L=np.hstack([system.L, ones]), U=np.hstack([system.U, ones]),
                                   pairs=tuple(system.pairs) + tuple(("onehot", g) for g in model.onehot), outer=outer)
    return dataclasses.replace(system, A=A, B=np.hstack([system.B, ones]))


def _float32_hint(model, release, published, status, valid) -> dict:
    """A link model taken at float64 whose published values are all float32 numbers, with rows
    INFEASIBLE: say that float32 rounding is the likely cause and what to audit with instead."""
    if model.precision == "float32" or not release.exact:
        return {}
    V = np.asarray(published, dtype=float)
    fin = V[np.isfinite(V)]
    if fin.size == 0 or not np.array_equal(fin.astype(np.float32).astype(float), fin):
        return {}
    infeasible = max((int(np.sum(st == cc.Status.INFEASIBLE)) for st in status.values()), default=0)
    if infeasible == 0:
        return {}
    line = (f"{infeasible} of {int(valid.size)} rows are INFEASIBLE when the published values are taken as exact "
            f"float64, and every value is a float32 number: the deployment computes in float32. Audit with "
            f"precision='float32' (--precision float32), or a bound on the values' error (--release noise:T)")
    warnings.warn(line, UnreadableReleaseWarning, stacklevel=3)
    return {"verdict": line}


def _unreadable(release, valid, scores, k) -> dict:
    """Most rows not valid under ``release``: warn with the verdict (which kinds fit the data
    instead) and keep it in the result's extras, rather than return a table of NaN."""
    line = verdict(release, valid, scores, k)
    if line is None:
        return {}
    warnings.warn(line, UnreadableReleaseWarning, stacklevel=3)
    return {"verdict": line}

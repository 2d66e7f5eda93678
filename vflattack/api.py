"""The typed audits: ``va.audit(config)``.

:class:`AuditConfig` holds what an audit runs on (the dataset or your data, the releases, the
methods, the seeds, the prediction split, where to write the report); :func:`audit` runs it
(:func:`vflattack.audit.run_audit` for one release, :func:`vflattack.audit.run_release_sweep`
for several) and returns an :class:`AuditResult`, whose ``records`` are typed
(:class:`vflattack.audit.AuditRecord`, or :class:`vflattack.audit.SweepRecord` for a sweep) and
which renders and writes its own report. :class:`ThreatConfig`, :class:`KnownInputConfig`,
:class:`LogConfig` and :class:`DesignConfig` describe the other audits the same way, and
``audit`` runs each. :func:`audit_log` audits a prediction log inside its
report directory. Both sit above the report layer, which they use.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ._validate import InvalidInputError
from .attacks import BASELINES, DEFAULT_METHODS, PRIOR_METHODS, Prior
from .audit import PREDICT_FRACTION, Result, run_audit, run_release_sweep
from .audit.logfiles import read_table
from .audit.logs import attack_log
from .model import VFLModel
from .release import Release
from .report import LogAuditReport, render, report_dir, write_reports

__all__ = ["AuditConfig", "AuditResult", "DesignConfig", "KnownInputConfig", "LogConfig", "ThreatConfig", "audit",
           "audit_log"]


@dataclass(frozen=True)
class AuditConfig:
    """What a white-box audit runs on.

    Parameters
    ----------
    dataset : str
        A dataset of :mod:`vflattack.datasets` (default: breast_cancer, bundled), or the name
        given to ``data``.
    data : (features, labels), optional
        Your own data instead (features in [0, 1]).
    n_passive, passive_columns
        The passive party's number of columns (one audit per value), or its columns by index
        or name.
    releases : sequence of str or Release
        What the deployment publishes: one release is one audit, several are the precision
        sweep (each audited, then compared).
    methods, seeds, n_predictions, predict_fraction, data_dir, prior_data, tau, radius_threshold
        As for :func:`vflattack.audit.run_audit`.
    out : path, optional
        Where :func:`audit` writes the report directory (atomically), if anywhere.
    progress : bool
        A progress bar.
    link, precision, yhat_scale : optional
        What the deployment publishes of the logits and how (:class:`vflattack.VFLModel`):
        ``softmax`` (default), ``ovr``, ``identity`` or a SecretFlow-Serving link.
    parties : int or sequence of sequences of int, optional
        The passive parties: a number of equal blocks of the passive columns, or blocks of
        indices into them; each party is reported on its own.
    colluding : sequence of str, optional
        The parties whose features the active party also knows (``P1``, ...).
    """

    dataset: str = "breast_cancer"
    data: tuple | None = None
    n_passive: tuple = (10,)
    passive_columns: tuple | None = None
    releases: tuple = ("exact",)
    methods: tuple = DEFAULT_METHODS + BASELINES + PRIOR_METHODS
    seeds: tuple = (0,)
    n_predictions: int | None = None
    predict_fraction: float = PREDICT_FRACTION
    data_dir: Any = None
    prior_data: Any = field(default=None, repr=False)
    tau: float = 0.1
    radius_threshold: float = 0.1
    out: Any = None
    progress: bool = False
    link: str = "softmax"
    parties: Any = None
    colluding: tuple = ()
    precision: str | None = None
    yhat_scale: float = 1.0

    def __post_init__(self) -> None:
        if isinstance(self.colluding, str):
            object.__setattr__(self, "colluding", (self.colluding,))
        object.__setattr__(self, "colluding", tuple(self.colluding))
        for name in ("n_passive", "releases", "methods", "seeds"):
            value = getattr(self, name)
            if isinstance(value, (str, int)) or value is None:
                value = (value,)
            object.__setattr__(self, name, tuple(value))
        if self.passive_columns is not None:
            object.__setattr__(self, "passive_columns", tuple(self.passive_columns))
        rels = tuple(r if isinstance(r, Release) else Release.parse(r) for r in self.releases)
        if not rels:
            raise InvalidInputError("releases must name at least one release (e.g. ('exact',) or ('round:2', 'label'))")
        object.__setattr__(self, "releases", rels)


@dataclass
class AuditResult(Result):
    """An audit's :class:`~vflattack.audit.protocol.Result` with its typed records, which
    renders (:meth:`report`) and writes (:meth:`write`) its own report."""

    def report(self):
        return render(self)

    def write(self, out: Any) -> list:
        """Write the report directory (a sweep's audits in their subdirectories)."""
        from .report.sweep import release_dirname

        rep = self.report()
        placed = [("", rep)] + [(release_dirname(p.config["release"]), render(p)) for p in self.parts]
        return write_reports(out, placed)


@dataclass(frozen=True)
class ThreatConfig:
    """The black-box, agnostic and defence audits (:func:`vflattack.audit.run_threat_audit`):
    its options, by name, and ``out``."""

    dataset: str = "breast_cancer"
    n_passive: int = 10
    seeds: tuple = (0,)
    data_dir: Any = None
    n_predictions: int | None = None
    n_observed: int = 100
    lam: float = 1.0
    epsilons: tuple = ()
    defence_kinds: tuple = ("optimised",)
    relative: bool = False
    blackbox: bool = True
    defence_rows: int = 2000
    data: tuple | None = None
    predict_fraction: float = PREDICT_FRACTION
    out: Any = None


@dataclass(frozen=True)
class KnownInputConfig:
    """The known-input attack on distance-preserving perturbation
    (:func:`vflattack.audit.run_known_input`): its options, by name, and ``out``."""

    dataset: str = "digits"
    data_dir: Any = None
    known: int = 4
    epsilon: float = 0.07
    trials: int = 10
    records: int | None = None
    translation: bool = False
    normalize: bool = False
    vfl: bool = False
    passive: int = 8
    seed: int = 0
    predict_fraction: float = PREDICT_FRACTION
    decimals: int | None = None
    out: Any = None
    progress: bool = False


@dataclass(frozen=True)
class LogConfig:
    """The audit of a prediction log (:func:`audit_log`): the model, the log, ``out`` (required:
    the reconstructions are written there) and the options of :func:`vflattack.audit.attack_log`."""

    model: VFLModel
    log: Any
    out: Any
    passive_log: Any = None
    methods: tuple = DEFAULT_METHODS + BASELINES
    prior: Prior | None = None
    method_options: dict | None = None
    client: Any = None
    progress: bool = False
    release: Release | None = None
    source: dict | None = None
    bounds: Any = None
    block_rows: int | None = None


@dataclass(frozen=True)
class DesignConfig:
    """The release design (:func:`vflattack.design_release`): the model and the records, the
    target, the options by name, and ``out``."""

    model: VFLModel
    Y: Any
    target: Any
    X: Any = None
    scores: Any = None
    kinds: tuple = ("round", "sig", "gaussian")
    confidence: float = 0.95
    prior: Prior | None = None
    rng: Any = 0
    leakage_curve: bool = False
    progress: bool = False
    out: Any = None


def _options(config, drop=("out",)) -> dict:
    return {f.name: getattr(config, f.name) for f in fields(config) if f.name not in drop}


def audit(config: Any) -> Any:
    """Run the audit ``config`` describes; write its report to ``config.out`` if given.

    ``config`` is an :class:`AuditConfig` (the white-box audit or the precision sweep: an
    :class:`AuditResult`), a :class:`ThreatConfig` or a :class:`KnownInputConfig` (an
    :class:`AuditResult` of their records), a :class:`LogConfig` (the log audit's report) or a
    :class:`DesignConfig` (a :class:`vflattack.audit.DesignResult`).

    Examples
    --------
    >>> import vflattack as va
    >>> res = va.audit(va.AuditConfig(dataset="wine", n_passive=(3,), methods=("half_star", "rcc2")))
    >>> type(res.records[0]).__name__, res.records[0].n_passive
    ('AuditRecord', 3)
    """
    if isinstance(config, (ThreatConfig, KnownInputConfig)):
        from .audit import run_known_input, run_threat_audit

        run = run_threat_audit if isinstance(config, ThreatConfig) else run_known_input
        opts = _options(config)
        res = run(opts.pop("dataset"), **opts)
        out = AuditResult(res.kind, res.records, res.config, res.parts)
        if config.out is not None:
            out.write(config.out)
        return out
    if isinstance(config, LogConfig):
        opts = _options(config, drop=("model", "log", "out"))
        return audit_log(config.model, config.log, config.out, **opts)
    if isinstance(config, DesignConfig):
        from .audit import design_release

        opts = _options(config, drop=("model", "Y", "X", "out"))
        res = design_release(config.model, config.Y, config.X, **opts)
        if config.out is not None:
            write_reports(config.out, [("", render(res))])
        return res
    if not isinstance(config, AuditConfig):
        raise InvalidInputError(f"config must be a vflattack.AuditConfig, ThreatConfig, KnownInputConfig, LogConfig "
                                f"or DesignConfig; got {type(config).__name__}")
    options = dict(methods=config.methods, seeds=config.seeds, n_predictions=config.n_predictions,
                   data_dir=config.data_dir, predict_fraction=config.predict_fraction, progress=config.progress,
                   passive_columns=config.passive_columns, prior_data=config.prior_data, tau=config.tau,
                   radius_threshold=config.radius_threshold, data=config.data, link=config.link,
                   parties=config.parties, colluding=config.colluding, precision=config.precision,
                   yhat_scale=config.yhat_scale)
    if len(config.releases) > 1:
        res = run_release_sweep(config.dataset, n_passive=config.n_passive, releases=config.releases, **options)
    else:
        rel = config.releases[0]
        res = run_audit(config.dataset, n_passive=config.n_passive, release=None if rel.exact else rel, **options)
    out = AuditResult(res.kind, res.records, res.config, res.parts)
    if config.out is not None:
        out.write(config.out)
    return out


def _in_unit_coordinates(model: VFLModel, passive_log: Any, bounds: Any, scratch: Any) -> tuple:
    """The model in unit coordinates, and the passive log moved to them (a Parquet file in
    ``scratch``; its ids as they were)."""
    import pandas as pd

    from .units import FeatureBounds

    if not isinstance(bounds, FeatureBounds):
        raise InvalidInputError(f"bounds must be a vflattack.units.FeatureBounds; got {type(bounds).__name__}")
    unit = bounds.unit_model(model)
    if passive_log is None:
        return unit, None
    df = read_table(passive_log)
    cols = [f"x{j}" for j in range(model.n_passive)]
    missing = [c for c in cols + ["id"] if c not in df.columns]
    if missing:
        raise InvalidInputError(f"passive_log {str(passive_log)!r} lacks the columns {missing[:8]}")
    out = pd.DataFrame({"id": df["id"].to_numpy()})
    U = bounds.to_unit(df[cols].to_numpy(float))
    for j, c in enumerate(cols):
        out[c] = U[:, j]
    path = pathlib.Path(scratch) / "passive_unit.parquet"
    out.to_parquet(path, index=False)
    return unit, str(path)


def _add_data_units(result: Any, bounds: Any) -> None:
    for rec in result.records:
        per = rec.get("mse_per_feature")
        if per is None:
            continue
        data = bounds.mse_in_units(per)
        rec["mse_per_feature_data_units"] = data.tolist()
        rec["mse_data_units"] = float(np.mean(data))
    result.config["bounds"] = bounds.to_dict()
    result.config["units"] = ("unit coordinates u = (x - lo) / (hi - lo): MSE relative to each feature's range; "
                              "mse_data_units in the data's own units; reconstructions are in u")


def audit_log(model: VFLModel, log: Any, out: Any, *, passive_log: Any = None,
              methods: Sequence[str] = DEFAULT_METHODS + BASELINES, prior: Prior | None = None,
              method_options: dict | None = None, client: Any = None, progress: bool = False,
              release: Any = None, source: dict | None = None, bounds: Any = None,
              block_rows: int | None = None) -> LogAuditReport:
    """Audit the prediction log ``log`` (Parquet or CSV) of ``model``; write the report into ``out``.

    The report directory (written atomically, manifest last) holds ``report.json``,
    ``mse.csv`` and ``reconstructions/part.*.parquet`` (per prediction: id, score flags, every
    method's reconstruction ``<method>_x<j>`` and status ``<method>_status``). With
    ``passive_log`` the MSE per feature is computed on the rows joined on ``id``; the
    ``mean`` baseline and the prior-aware attacks need ``prior``. ``client``: a
    ``dask.distributed.Client``, or a ``concurrent.futures.Future`` of one (waited for once the log
    is checked; the CLI starts its cluster that way), default the active Dask scheduler. ``release`` (a
    :class:`vflattack.Release`) says how the logged scores were published (default exact).
    ``source`` replaces entries of the report's configuration (the CLI names the files a
    framework's log was read from, :mod:`vflattack.importers.logs`, instead of their
    converted copies). ``bounds`` (:class:`vflattack.units.FeatureBounds`) gives the passive
    features' ranges in the data's units: the log is audited in unit coordinates
    ``u = (x - lo) / (hi - lo)`` (the reconstructions are written in them), and every MSE is
    reported both relative to each feature's range and in the data's units
    (``mse_data_units``, ``mse_per_feature_data_units``). ``block_rows`` overrides the
    partitions' size (default: sized to the cluster, :func:`vflattack.audit.attack_log`).

    Examples
    --------
    >>> import numpy as np, tempfile, pathlib, vflattack as va
    >>> rng = np.random.default_rng(0)
    >>> model = va.VFLModel(rng.standard_normal((3, 1)), rng.standard_normal((3, 2)), np.zeros(3))
    >>> Y, X = rng.random((40, 1)), rng.random((40, 2))
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> preds, passive = va.audit.write_log(model, Y, X, tmp / "logs", partitions=2)
    >>> rep = va.audit_log(model, preds, tmp / "report", passive_log=passive, methods=("ls",))
    >>> rep.records[0]["rows_scored"], rep.records[0]["mse"] < 1e-20    # rank A = d: exact
    (40, True)
    """
    import tempfile

    with report_dir(out) as tmp, tempfile.TemporaryDirectory(prefix="vflattack-units-") as scratch:
        if bounds is not None:
            bounds = bounds.with_binary(model.binary_columns)   # 0/1 features' range is known
            model, passive_log = _in_unit_coordinates(model, passive_log, bounds, scratch)
        parts_dir = tmp / "reconstructions"
        parts_dir.mkdir()
        result = attack_log(model, log, parts_dir, passive_log=passive_log, methods=methods, prior=prior,
                            method_options=method_options, client=client, progress=progress, release=release,
                            unit_widths=None if bounds is None else bounds.width, block_rows=block_rows)
        result.config.update(source or {})
        if bounds is not None:
            _add_data_units(result, bounds)
        report = LogAuditReport(result.records, result.config)
        report.write_into(tmp)
    return report

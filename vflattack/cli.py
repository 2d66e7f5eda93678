"""``vflattack``: audit how much of the passive party's data a VFL model leaks.

Subcommands:

* ``vflattack audit``: train a split logistic regression on a dataset, score the
  prediction rows, reconstruct the passive features with every estimator and
  print the MSE table (with the theory's bounds). With no arguments it runs on
  scikit-learn's bundled breast-cancer data (no download).
* ``vflattack sweep``: the papers' experiment, MSE against the number of passive
  features d for each dataset, written as tables and plots.
* ``vflattack design``: the finest release (decimals, significant digits, noise) that
  meets a certified target, on a dataset or on a model file and its prediction log.
"""

from __future__ import annotations

import argparse
import sys

import chebcenter as cc

from . import datasets
from ._validate import as_out_dir
from .attacks import BASELINES, DEFAULT_METHODS, PRIOR_METHODS
from .audit import PREDICT_FRACTION, run_audit
from .report import render, write_reports
from .report.sweep import release_dirname

ALL_METHODS = cc.METHODS + BASELINES + PRIOR_METHODS
#: the sweep's estimators: the cheap ones (exact and rcc1 over d = 1..10 on five datasets take hours)
SWEEP_METHODS = ("half", "ls", "half_star", "rcc2", "random", "mean")


def _release(text: str):
    from .release import Release

    if text == "sweep":   # the precision sweep's releases, expanded in main
        return text
    try:
        return Release.parse(text)
    except cc.InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _releases(given):
    """The --release values, with 'sweep' expanded (duplicates dropped, order kept)."""
    from .audit import DEFAULT_SWEEP

    out = []
    for rel in given or [_release("exact")]:
        out += [_release(t) for t in DEFAULT_SWEEP] if rel == "sweep" else [rel]
    return list({r.spec: r for r in out}.values())


def _parties(text):
    """``--parties``: a number of parties, or ';'-separated blocks of indices (``a-b`` ranges)."""
    if text is None:
        return None
    text = str(text).strip()
    if text.isdigit():
        return int(text)
    blocks = []
    try:
        for blk in text.split(";"):
            cols = []
            for item in blk.split(","):
                a, _, b = item.strip().partition("-")
                cols.extend(range(int(a), int(b) + 1) if b else [int(a)])
            blocks.append(cols)
    except ValueError:
        raise cc.InvalidInputError(f"--parties must be a number of parties or blocks of column indices such as "
                                   f"'0,1,2;3,4;5-9'; got {text!r}") from None
    return blocks


def _int_at_least(low: int, what: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}; got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be {what}; got {value}")
        return value

    return parse


_positive_int = _int_at_least(1, "a positive integer")
_nonneg_int = _int_at_least(0, "an integer >= 0")


def _float_in(low: float, high: float = float("inf"), low_open: bool = True, high_open: bool = False):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number; got {text!r}") from None
        ok = (value > low if low_open else value >= low) and (value < high if high_open else value <= high) and value == value
        if not ok:
            interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
            raise argparse.ArgumentTypeError(f"must be a number in {interval}; got {text}")
        return value
    return parse


_MODEL_HELP = ("the deployment's model: a file of VFLModel.save, or an export named by its kind: "
               "fate:GUEST.json,HOST.json[,HOST2.json] (FATE 2.x CoordinatedLR), secretflow:PKG.tar.gz[,PKG2...] "
               "(SecretFlow-Serving packages, one per party), npz:BOTTOMS.npz (linear bottom models); a bare "
               "path's kind is detected from its content; a pickle is refused, never loaded")


def _add_predict_fraction(p):
    p.add_argument("--predict-fraction", type=_float_in(0.0, 1.0, high_open=True), default=PREDICT_FRACTION, metavar="F",
                   help=f"share of the records held out as predictions; the model trains on the rest "
                        f"(default {PREDICT_FRACTION:g}, the papers' 80/20 split)")


def _add_shared_options(p, methods, predictions):
    """The options audit and sweep share; ``methods`` and ``predictions`` are their true defaults."""
    p.add_argument("--data-dir", default=None,
                   help="folder holding the UCI files as <dir>/<folder>/<file> (default: $VFLATTACK_DATA "
                        "or ~/.cache/vflattack; missing files are downloaded and checksum-verified)")
    p.add_argument("--methods", nargs="+", choices=ALL_METHODS, default=list(methods), metavar="METHOD",
                   help=f"estimators to run, among {', '.join(ALL_METHODS)} (default: {' '.join(methods)})")
    p.add_argument("--seeds", nargs="+", type=int, default=[0],
                   help="seeds of the column shuffle, row split and training (default: 0)")
    p.add_argument("--predictions", type=_positive_int, default=predictions, metavar="N",
                   help="use at most N prediction rows (default: "
                        + ("all of the prediction split)" if predictions is None else f"{predictions})"))
    _add_predict_fraction(p)
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write the report (JSON, CSV, PNG plots) and manifest.json into DIR (new, empty, or a "
                        "previous report, which is replaced; written atomically)")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--compile-jobs", type=_positive_int, default=2, metavar="N",
                   help="on a machine whose numba cache is cold, compile the kernels the audit reaches last in "
                        "a second process while this one works (default 2; 1: compile everything here)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vflattack", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_audit(sub)
    _add_sweep(sub)
    _add_known_input(sub)
    _add_design(sub)
    _add_export_log(sub)
    return parser


def _subparser(sub, name, help, builder, **kw):
    """The subcommand ``name``, described by its builder's docstring (argparse rewraps it)."""
    return sub.add_parser(name, help=help, description=" ".join(builder.__doc__.split()), **kw)


def _add_audit(sub) -> None:
    """Train a VFL logistic regression, attack its confidence scores (white-box) and print the
    per-feature MSE of every estimator, with the bounds of docs/theory.md §2. Protocol: columns min-max
    scaled, seeded shuffle, the last d columns passive, 80/20 train/prediction split."""
    audit = _subparser(sub, "audit", "attack one dataset and print the MSE per estimator", _add_audit)
    audit.add_argument("--dataset", default="breast_cancer", choices=datasets.NAMES,
                       help="dataset (default: breast_cancer, bundled with scikit-learn)")
    audit.add_argument("--passive", nargs="+", type=_positive_int, default=[10], metavar="D",
                       help="number(s) of passive features d (default: 10); several values draw the MSE-vs-d plot")
    audit.add_argument("--passive-columns", nargs="+", default=None, metavar="COL",
                       help="the passive party's columns by index or feature name (overrides --passive)")
    audit.add_argument("--release", nargs="+", default=None, type=_release, metavar="RELEASE",
                       help="what the deployment published (default exact): round:K, loground:K, clip:EPS, label, "
                            "top1:K, noise:DELTA, gaussian:SIGMA[:CONF], gaussian:eps=E,delta=D[,sens=S][:CONF], "
                            "laplace:B[:CONF], rank, topk:K:D, roundnorm:D, sig:S, float32; several values run the "
                            "precision sweep (each audited, then compared: sweep.csv, a plot); 'sweep' is exact round:4 "
                            "round:3 round:2 round:1 label (docs/vflattack.md, 'Releases')")
    deploy = audit.add_argument_group(
        "the deployment (docs/vflattack.md, \"What each framework publishes, and how to audit it\")")
    deploy.add_argument("--link", default="softmax", metavar="NAME",
                        help="what is published of the logits: softmax (default), ovr (FATE 2.x one-vs-rest "
                             "sigmoids; alias sigmoid), identity (the logits: FATE's host logit, a linear bottom "
                             "model), or a SecretFlow-Serving link by its name (t1, seg3, LF_SIGMOID_T5, exp, ...)")
    deploy.add_argument("--parties", default=None, metavar="SPEC",
                        help="the passive parties: a number P (equal contiguous blocks of the passive columns) or "
                             "blocks of indices into them separated by ';' (e.g. '0,1,2;3,4;5-9'); each is "
                             "reported on its own")
    deploy.add_argument("--collude", nargs="+", default=[], metavar="P",
                        help="parties whose features the active party also knows (P1, P2, ...)")
    deploy.add_argument("--precision", default=None, choices=["float64", "float32"],
                        help="the arithmetic the deployment computes its published values in (default float64; "
                             "float32 for a torch bottom model such as Flower's example)")
    deploy.add_argument("--yhat-scale", type=_float_in(0.0), default=1.0, metavar="S",
                        help="SecretFlow's yhat_scale: the published value is S * link(z) (default 1)")
    audit.add_argument("--attacks", nargs="+", default=["whitebox"], choices=["whitebox", "blackbox", "agnostic"],
                       help="threat models: whitebox (knows W_act, W_pas, b; the default), blackbox (knows W_act and "
                            "the signs of J w_pas; one passive feature, MSE vs number of predictions), agnostic "
                            "(never sees the target's score: adversary model AM and refined RAM)")
    audit.add_argument("--defence", nargs="+", default=[], choices=["random", "optimised"],
                       help="score-preserving defences: disclose W_pas R (R orthogonal: random or optimised against "
                            "the adversary) and report adversary MSE vs distortion budget")
    audit.add_argument("--epsilons", nargs="+", type=_float_in(0.0), default=[0.05, 0.1, 0.25, 0.5, 1.0], metavar="E",
                       help="distortion budgets as fractions of ||W_pas||_F (default: 0.05 0.1 0.25 0.5 1)")
    audit.add_argument("--observed", type=_positive_int, default=100, metavar="N",
                       help="real scores the agnostic adversary observed earlier to refine its model (default 100)")
    logs = audit.add_argument_group(
        "auditing a prediction log on disk (Dask; needs the [distributed] extra)",
        "With --model and --log the audit reads a model file and a log of predictions instead of training "
        "a model: Parquet or CSV with columns id, y0.., p0.. (or logp0..); the passive party's log "
        "(id, x0..) gives the MSE. --out is required; reconstructions are written as Parquet parts. "
        "--prior-file then holds passive records (x0..) for the prior-aware attacks.")
    logs.add_argument("--model", default=None, metavar="SPEC", help=_MODEL_HELP)
    logs.add_argument("--log", default=None, metavar="PATH", help="the prediction log (Parquet file/directory or CSV), "
                      "or a framework's layout: fate:PREDICTIONS.csv,GUEST_DATA.csv, secretflow:LOG.csv (id, the "
                      "features by name, pred_y), named:LOG (the features by name, p0..)")
    logs.add_argument("--passive-log", default=None, metavar="PATH", help="the passive party's log, joined on id (id, "
                      "x0.. or the features by name), or tables:T1.csv[,T2.csv] (one per passive party, each in its "
                      "own column names)")
    logs.add_argument("--bounds", default=None, metavar="SPEC",
                      help="the passive features' ranges in the data's units (default: the unit box [0, 1]^d): a JSON "
                           "file ({\"lo\": [..], \"hi\": [..]} or {\"features\": {NAME: [lo, hi]}}), or observed[:M], "
                           "each feature's observed range in the passive log widened by M of it (default 0.05; not a "
                           "guarantee). MSE is then reported relative to each range and in the data's units")
    logs.add_argument("--onehot", action="append", default=None, metavar="COLS",
                      help="a one-hot group of passive features, by name or index (e.g. --onehot "
                           "color_red,color_green,color_blue); repeat for each group. Each group sums to 1 in every "
                           "record: one more row of every set, certified like the rest")
    logs.add_argument("--binary", default=None, metavar="COLS",
                      help="passive features that are 0 or 1 (names or indices, comma-separated); the report gives "
                           "the share of rows whose 0/1 features rounding the reconstruction reads exactly")
    logs.add_argument("--scheduler", default=None, metavar="ADDRESS",
                      help="attach to a running dask.distributed scheduler (default: start a local cluster)")
    logs.add_argument("--workers", type=_positive_int, default=2, help="local cluster: worker processes (default 2)")
    logs.add_argument("--block-rows", type=_positive_int, default=None, metavar="N",
                      help="rows per partition (default: sized to the cluster: at least 4 partitions per worker, "
                           "about 1 s of work each, at most 25 000 rows)")
    audit.add_argument("--prior-file", default=None, metavar="CSV",
                       help="auxiliary records the adversary holds (the dataset's columns, scaled to [0, 1]; a header "
                            "row is skipped) for the prior-aware attacks; default: the training split")
    audit.add_argument("--tau", type=_float_in(0.0, 1.0, low_open=False), default=0.1,
                       help="a feature is pinned when its range over S_F is at most TAU of its side (default 0.1)")
    audit.add_argument("--radius-threshold", type=_float_in(0.0, low_open=False), default=0.1, metavar="R",
                       help="report the share of records whose minimax radius r*/sqrt(d) is at most R (default 0.1)")
    audit.add_argument("--lam", type=_float_in(0.0, low_open=False), default=1.0,
                       help="weight of the observed-score loss in the RAM (default 1)")
    _add_shared_options(audit, DEFAULT_METHODS + BASELINES + PRIOR_METHODS, None)


def _add_sweep(sub) -> None:
    """For each dataset, run the audit for d = 1 .. max passive features and write the MSE-vs-d curves
    (table, JSON, CSV, plots)."""
    sweep = _subparser(sub, "sweep", "the papers' experiment: MSE vs number of passive features, per dataset",
                       _add_sweep)
    sweep.add_argument("--datasets", nargs="+", default=list(datasets.SKLEARN),
                       choices=datasets.NAMES + ("papers",), metavar="NAME",
                       help=f"datasets (default: those bundled with scikit-learn, {' '.join(datasets.SKLEARN)}: offline; "
                            f"'papers' is the papers' five UCI datasets, {' '.join(datasets.UCI)}, read from --data-dir "
                            f"or downloaded with a checksum)")
    sweep.add_argument("--max-passive", type=_positive_int, default=10, metavar="D",
                       help="largest d (default 10; capped at the dataset's feature count - 1)")
    sweep.add_argument("--step", type=_positive_int, default=1, help="step between d values (default 1)")
    _add_shared_options(sweep, SWEEP_METHODS, 1000)


def _add_known_input(sub) -> None:
    """Perturb a dataset by a random rotation (+ translation) and a secret permutation, give the
    attacker a few original records, and report linking, the breach probability rho(eps) of the best
    record, the realised error and the time. With --vfl: attack the orthogonal defence of a VFL
    model (needs d <= k - 1 passive features)."""
    ki = _subparser(sub, "known-input",
                    "known-input attack on distance-preserving perturbation (and on the VFL defence)", _add_known_input)
    ki.add_argument("--dataset", default="digits", choices=datasets.NAMES,
                    help="records to perturb (default digits: 64 features, bundled with scikit-learn; the papers' "
                         "pendigits has 16 and needs its UCI files, from --data-dir or a checksummed download)")
    ki.add_argument("--data-dir", default=None,
                    help="folder holding the UCI files (default: $VFLATTACK_DATA or ~/.cache/vflattack)")
    ki.add_argument("--known", type=_positive_int, default=4, help="number of known original records (default 4)")
    ki.add_argument("--epsilon", type=_float_in(0.0), default=0.07, help="relative error of a breach (default 0.07)")
    ki.add_argument("--trials", type=_positive_int, default=10, help="independent perturbations/attacker draws (default 10)")
    ki.add_argument("--records", type=_positive_int, default=None, metavar="M", help="use at most M records (default all)")
    ki.add_argument("--translation", action="store_true", help="perturb with a random translation as well")
    ki.add_argument("--normalize", action="store_true", help="min-max scale the records first (default: raw values)")
    ki.add_argument("--decimals", type=_nonneg_int, default=None, metavar="K",
                    help="round the perturbed release to K decimals, as real releases are; the attacker reads the "
                         "precision off the data and links within 2 (0.5 10^-K) sqrt(n) (default: full precision)")
    ki.add_argument("--vfl", action="store_true", help="attack the VFL orthogonal defence instead")
    ki.add_argument("--passive", type=_positive_int, default=8, help="--vfl: passive features d (default 8)")
    ki.add_argument("--seed", type=int, default=0)
    _add_predict_fraction(ki)
    ki.add_argument("--out", default=None, metavar="DIR",
                    help="write known_input.json and manifest.json into DIR (atomically, as for audit)")
    ki.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _add_design(sub) -> None:
    """Evaluate every candidate release (decimals and significant digits 1..8, a grid of noise scales)
    on the prediction rows and report the finest that meets the target: radius=TAU (every record's
    certified minimax radius r*/sqrt(d) >= TAU), leakage=EPS (the best prior-aware attack at most
    EPS below the prior's MSE, measured) or pinned=P (no feature range of width <= P). Records the
    label alone does not protect are listed apart (docs/vflattack.md, 'Privacy by design')."""
    de = _subparser(sub, "design", "the finest release that meets a certified privacy target", _add_design,
                    epilog="Exit status: 0 when a release meets the target, 4 when none of the kinds asked for does, "
                           "1 or 2 on a data or input error.")
    de.add_argument("--target", required=True, metavar="TARGET", type=_target,
                    help="radius=TAU, leakage=EPS or pinned=P")
    de.add_argument("--kinds", nargs="+", default=["round", "sig", "gaussian"], metavar="KIND",
                    choices=["round", "sig", "roundnorm", "gaussian", "laplace"],
                    help="release kinds to search (default: round sig gaussian; also roundnorm, laplace)")
    de.add_argument("--confidence", type=_float_in(0.0, 1.0, high_open=True), default=0.95,
                    help="noise releases: the certificates hold with this probability per record (default 0.95)")
    de.add_argument("--leakage-curve", action="store_true",
                    help="measure the leakage beyond the prior on every candidate (default: the chosen release, "
                         "one step finer and the label)")
    de.add_argument("--dataset", default="breast_cancer", choices=datasets.NAMES,
                    help="dataset (default: breast_cancer, bundled with scikit-learn)")
    de.add_argument("--passive", type=_positive_int, default=10, metavar="D", help="passive features d (default 10)")
    de.add_argument("--seed", type=int, default=0, help="seed of the split, the training and the noise draws")
    de.add_argument("--data-dir", default=None, help="folder holding the UCI files (as for audit)")
    _add_predict_fraction(de)
    de.add_argument("--predictions", type=_positive_int, default=None, metavar="N",
                    help="use at most N prediction rows (or log rows) (default: all)")
    de.add_argument("--model", default=None, metavar="SPEC", help=_MODEL_HELP + " (with --log)")
    de.add_argument("--log", default=None, metavar="PATH",
                    help="a prediction log of exact scores (id, y0.., p0.. or logp0..; Parquet or CSV), or a "
                         "framework's layout as for audit --log (fate:PREDICTIONS,GUEST_DATA, secretflow:LOG, named:LOG)")
    de.add_argument("--passive-log", default=None, metavar="PATH",
                    help="the passive party's log (id, x0.., or tables:T1[,T2..] as for audit): the leakage is "
                         "measured with it")
    de.add_argument("--prior-file", default=None, metavar="CSV",
                    help="with --log: passive records (x0..) the adversary's prior comes from (default: the "
                         "passive log's records)")
    de.add_argument("--out", default=None, metavar="DIR",
                    help="write design.json, curve.csv, records.csv, the plot and report.html into DIR")
    de.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _add_export_log(sub) -> None:
    """Train the split model on a dataset (the audit's protocol) and write DIR/model.json,
    DIR/predictions.parquet (id, y.., logp..), DIR/passive.parquet (id, x..) for the prediction rows
    and DIR/prior.csv (the training rows' passive features): what a deployment would hand an
    auditor."""
    ex = _subparser(sub, "export-log", "write a model file and prediction logs from a dataset (to try the log audit)",
                    _add_export_log)
    ex.add_argument("--dataset", default="breast_cancer", choices=datasets.NAMES)
    ex.add_argument("--data-dir", default=None)
    ex.add_argument("--passive", type=_positive_int, default=10, help="passive features d (default 10)")
    ex.add_argument("--seed", type=int, default=0)
    _add_predict_fraction(ex)
    ex.add_argument("--partitions", type=_positive_int, default=4, help="Parquet parts per log (default 4)")
    ex.add_argument("--release", nargs=1, default=None, type=_release, metavar="RELEASE",
                    help="log the scores as this release publishes them (default exact log-probabilities): round:K "
                         "writes p0.. rounded, label writes label, top1:K writes label and p_top, ...")
    ex.add_argument("--out", required=True, metavar="DIR", help="a new or empty directory")


def _read_prior(path):
    """The --prior-file CSV as a float array (a non-numeric first row is a header)."""
    import numpy as np

    try:
        with open(path) as fh:
            first = fh.readline()
        skip = 0 if all(_is_number(c) for c in first.strip().split(",")) else 1
        data = np.loadtxt(path, delimiter=",", skiprows=skip, ndmin=2)
    except (OSError, ValueError) as exc:
        raise cc.InvalidInputError(f"--prior-file {path!r} could not be read as a numeric CSV: {exc}") from None
    return data


def _target(text: str):
    from .audit import Target

    try:
        return Target.parse(text)
    except cc.InvalidInputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _design(args, progress) -> int:
    """``vflattack design``: on a dataset's prediction rows, or on a model file and its log."""
    from .api import DesignConfig, audit
    from .attacks import Prior
    from .audit import build_scenario, load_data, read_log

    if bool(args.model) != bool(args.log):
        return _fail(cc.InvalidInputError("--model and --log go together: a model file and its prediction log"))
    helper = None
    try:
        if args.log:
            import tempfile

            from .importers import read_model
            from .importers.logs import canonical_logs

            model = read_model(args.model)
            with tempfile.TemporaryDirectory(prefix="vflattack-log-") as tmp:   # a framework's layout, converted
                log, passive_log = canonical_logs(model, args.log, args.passive_log, tmp)
                Y, P, X = read_log(model, log, passive_log=passive_log, rows=args.predictions)
            prior = (Prior.from_data(_read_prior(args.prior_file)) if args.prior_file
                     else Prior.from_data(X) if X is not None and X.shape[0] >= 2 else None)
            where = {"model": args.model, "log": args.log, "passive_log": args.passive_log}
        else:
            F, labels, _ = load_data(args.dataset, args.data_dir)
            sc = build_scenario(F, labels, args.seed, n_passive=args.passive, predict_fraction=args.predict_fraction,
                                n_predictions=args.predictions)
            model, Y, X, P = sc.model, sc.Y, sc.X, None
            prior = Prior.from_data(sc.X_train)
            where = {"dataset": args.dataset, "seed": args.seed}
        helper = cc.start_warmup_helper(_RELEASE_HELPER_STEPS)
        res = audit(DesignConfig(model=model, Y=Y, X=X, scores=P, target=args.target, kinds=tuple(args.kinds),
                                 confidence=args.confidence, prior=prior, rng=args.seed,
                                 leakage_curve=args.leakage_curve, progress=progress))
    except (datasets.DatasetError, cc.InvalidInputError, cc.MissingBackendError) as exc:
        return _fail(exc)
    finally:
        if helper is not None:
            helper.stop()
    result = res.to_result()
    result.config.update(where)
    report = render(result)
    print(report.table())
    if args.out is not None:
        try:
            _write(args.out, [("", report)])
        except cc.InvalidInputError as exc:
            return _fail(exc)
    return 0 if res.met else 4


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _export_log(args, progress: bool = False) -> int:
    import pathlib

    import numpy as np

    from .audit import build_scenario, load_data, write_log

    out = pathlib.Path(args.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        return _fail(cc.InvalidInputError(f"--out {args.out!r} must be a new or empty directory"))
    try:
        releases = _releases(args.release)
        if len(releases) > 1:
            raise cc.InvalidInputError("--release takes one value with export-log")
        F, labels, _ = load_data(args.dataset, args.data_dir)
        sc = build_scenario(F, labels, args.seed, n_passive=args.passive, predict_fraction=args.predict_fraction)
        out.mkdir(parents=True, exist_ok=True)
        sc.model.save(out / "model.json")
        write_log(sc.model, sc.Y, sc.X, out, ids=sc.predict, partitions=args.partitions, release=releases[0],
                  rng=args.seed)
        np.savetxt(out / "prior.csv", sc.X_train, delimiter=",",
                   header=",".join(f"x{j}" for j in range(args.passive)), comments="")
    except (datasets.DatasetError, cc.InvalidInputError, cc.MissingBackendError) as exc:
        return _fail(exc)
    print(f"wrote {out / 'model.json'}, {out / 'predictions.parquet'}, {out / 'passive.parquet'} and "
          f"{out / 'prior.csv'} ({sc.predict.size} predictions, d = {args.passive})")
    return 0


def _audit_log(args, progress) -> int:
    if not (args.model and args.log):
        return _fail(cc.InvalidInputError("--model and --log go together: a model file and its prediction log"))
    if args.out is None:
        return _fail(cc.InvalidInputError("--out is required with --log (the reconstructions are written there)"))
    import tempfile

    from .api import LogConfig, audit
    from .attacks import Prior
    from .importers import read_model
    from .importers.logs import canonical_logs

    try:
        model = _with_encoding(read_model(args.model), args.onehot, args.binary)
        prior = Prior.from_data(_read_prior(args.prior_file)) if args.prior_file else None
        client, cluster = _client(args)
    except (cc.InvalidInputError, cc.MissingBackendError) as exc:
        return _fail(exc)
    try:
        releases = _releases(args.release)
        if len(releases) > 1:
            raise cc.InvalidInputError("--release takes one value with --log (the release the log was written with)")
        with tempfile.TemporaryDirectory(prefix="vflattack-log-") as tmp:   # a framework's layout, converted
            log, passive_log = canonical_logs(model, args.log, args.passive_log, tmp)
            bounds = _bounds(args.bounds, model, passive_log)
            report = audit(LogConfig(model=model, log=log, out=args.out, passive_log=passive_log,
                                     methods=tuple(args.methods), prior=prior, client=client, progress=progress,
                                     release=None if releases[0].exact else releases[0], bounds=bounds,
                                     block_rows=args.block_rows,
                                     source={"log": args.log, "passive_log": args.passive_log, "model": args.model}))
    except (cc.InvalidInputError, cc.MissingBackendError) as exc:
        return _fail(exc)
    finally:
        _close(client, cluster)
    print(report.table())
    print(f"wrote {args.out} (report.json, mse.csv, reconstructions/, manifest.json)")
    if report.config.get("verdict"):   # the audit could not model the release: not a result to act on
        print(f"vflattack: {report.config['verdict']}", file=sys.stderr)
        return 3
    return 0


def _with_encoding(model, onehot, binary):
    """The model with ``--onehot`` groups and ``--binary`` columns (names, or passive column
    indices) added to the encoding its file holds."""
    def cols(text, flag):
        items = [c.strip() for c in str(text).split(",") if c.strip()]
        if not items:
            raise cc.InvalidInputError(f"{flag} needs comma-separated passive features; got {text!r}")
        return [int(c) if c.isdigit() else c for c in items]

    if not onehot and not binary:
        return model
    # added to the encoding a model file may already hold, never replacing it
    groups = [list(g) for g in model.onehot] + [cols(g, "--onehot") for g in onehot or []]
    bins = list(model.binary) + (cols(binary, "--binary") if binary else [])
    return model.with_domain(onehot=groups or None, binary=bins or None)


def _bounds(spec, model, passive_log):
    """``--bounds``: None, a JSON file's ranges, or ``observed[:M]`` on the passive log."""
    from .units import FeatureBounds

    if spec is None:
        return None
    kind, _, margin = spec.partition(":")
    if kind != "observed":
        return FeatureBounds.from_json(spec, model)
    if passive_log is None:
        raise cc.InvalidInputError("--bounds observed reads the ranges off the passive log: give --passive-log")
    try:
        m = float(margin) if margin else 0.05
    except ValueError:
        raise cc.InvalidInputError(f"--bounds observed:M needs a number M >= 0; got {margin!r}") from None
    from .audit.logfiles import read_table

    df = read_table(passive_log)
    cols = [f"x{j}" for j in range(model.n_passive)]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise cc.InvalidInputError(f"--passive-log lacks the columns {missing[:8]}")
    return FeatureBounds.observed(df[cols].to_numpy(float), margin=m)


#: what each worker of the CLI's local cluster imports as it starts, while this process reads and
#: checks the log (its partitions need them all: the attack, and the Parquet reader and writer;
#: not pandas, which a worker reads a Parquet log without: vflattack.audit.logfiles)
WORKER_IMPORTS = ("vflattack.audit.logs", "pyarrow.parquet")
#: and the environment it starts with: Arrow's system allocator, which gives back what a
#: partition's Parquet reading and writing freed (its default, mimalloc, kept it: a worker's
#: peak 410 -> 339 MB at 200 000 rows and 2 workers, the partitions' time unchanged)
WORKER_ENV = {"ARROW_DEFAULT_MEMORY_POOL": "system"}


def _client(args):
    """A dask.distributed client: the given scheduler, or a local cluster of worker processes
    started in the background: ``(a Future of the client, a Future of the cluster or None)``.
    The cluster starts while this process reads the model and the log, checks the kernel cache
    and imports what the audit needs (0.65 s of its start measured at 2 workers, on 2 cores);
    its workers import what the partitions need as they start (:data:`WORKER_IMPORTS`), not on
    their first task."""
    import concurrent.futures

    from chebcenter import import_dask

    (distributed,) = import_dask("log audits on a cluster", "distributed")
    if args.scheduler:
        done: concurrent.futures.Future = concurrent.futures.Future()
        done.set_result(distributed.Client(args.scheduler))
        return done, None

    def start():
        # ":0": the scheduler's HTTP server on a free port; with None it still tries 8787 and warns
        # when another cluster holds it (a second audit on the machine, a test run beside one)
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                           host="127.0.0.1", dashboard_address=":0", silence_logs=40,
                                           preload=list(WORKER_IMPORTS), env=dict(WORKER_ENV))
        started.set_result(cluster)
        return distributed.Client(cluster)

    started: concurrent.futures.Future = concurrent.futures.Future()
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="vflattack-cluster")
    client = pool.submit(start)
    pool.shutdown(wait=False)
    client.add_done_callback(lambda f: f.exception() is None or started.done() or started.set_result(None))
    return client, started


def _close(client, cluster) -> None:
    """Close the client and the local cluster ``_client`` started (each a Future), once started."""
    try:
        client.result().close()
    except Exception:   # it never started: the error was the audit's to report
        pass
    if cluster is not None and cluster.result() is not None:
        cluster.result().close()


def _fail(exc: Exception) -> int:
    print(f"vflattack: {exc}", file=sys.stderr)
    return 1 if isinstance(exc, datasets.DatasetError) else 2


def _write(out, reports) -> None:
    """Write ``[(subdirectory, report)]`` into one atomically published report directory."""
    paths = write_reports(out, reports)
    for p in paths[:-1]:
        print(f"wrote {p}")
    print(f"wrote {paths[-1]} (the report is complete)")


#: what the default audit's helper compiles while the audit itself works through the closed
#: forms, cls and rcc1's certificate: the exact method (the audit reaches it next, and its
#: batch route is the largest compilation, the critical path of a cold audit). The audit
#: waits for it instead of compiling it a second time, and compiles the metric projection
#: (the prior-aware attacks) and the feature ranges, which it reaches after exact, while it
#: would wait (docs/benchmarks.md, "Cold start")
_HELPER_STEPS = ("exact",)
_MEANWHILE_STEPS = ("project", "ranges")
#: a release audit solves interval sets, whose kernels no step above compiles: its helper
#: compiles the usual steps ahead and the audit does not wait for it
_RELEASE_HELPER_STEPS = ("exact", "ranges", "project", "rcc1")


def _compile_helper(args):
    """One child process compiling what the audit reaches last, if the cache is cold for this
    CPU and ``--compile-jobs`` allows it (chebcenter.start_warmup_helper); else None."""
    if getattr(args, "compile_jobs", 1) < 2:
        return None
    releases = getattr(args, "release", None) or []
    exact = args.command == "audit" and all(r == "exact" or getattr(r, "exact", False) for r in releases)
    if exact:   # the child's problem has the audit's shape, so that it takes the audit's routes
        k = datasets.CLASSES.get(args.dataset)
        d = len(args.passive_columns) if args.passive_columns else args.passive[0]
        shape = None if k is None else (min(k - 1, d), d)
        helper = cc.start_warmup_helper(_HELPER_STEPS, shape=shape, own=True, meanwhile=_MEANWHILE_STEPS)
    else:
        helper = cc.start_warmup_helper(_RELEASE_HELPER_STEPS)
    if helper is not None:
        print("vflattack: first run on this machine: compiling the kernels, partly in a second process "
              "(--compile-jobs 1 to compile in this one)", file=sys.stderr, flush=True)
    return helper


def main(argv=None) -> int:
    """Entry point of the ``vflattack`` console script; returns the exit code: parse the
    arguments, check ``--out`` before any work, run the subcommand (which computes, then
    prints and writes its report)."""
    args = build_parser().parse_args(argv)
    progress = not getattr(args, "no_progress", False)
    if args.out is not None:  # before any work: an unusable --out fails now, not after the computation
        try:
            as_out_dir(args.out)
        except cc.InvalidInputError as exc:
            return _fail(exc)
    if args.command == "audit" and (args.model or args.log):
        return _audit_log(args, progress)
    if args.command == "audit" and (args.onehot or args.binary or args.bounds):
        return _fail(cc.InvalidInputError("--onehot, --binary and --bounds describe a deployment's passive features: "
                                          "they go with --model and --log"))
    return _COMMANDS[args.command](args, progress)


def _known_input(args, progress) -> int:
    from .api import KnownInputConfig, audit

    try:
        result = audit(KnownInputConfig(
            dataset=args.dataset, data_dir=args.data_dir, known=args.known, epsilon=args.epsilon, trials=args.trials,
            records=args.records, translation=args.translation, normalize=args.normalize, vfl=args.vfl,
            passive=args.passive, seed=args.seed, predict_fraction=args.predict_fraction, decimals=args.decimals,
            progress=progress))
    except (datasets.DatasetError, cc.InvalidInputError) as exc:
        return _fail(exc)
    return _render(args, [result])


def _audit(args, progress) -> int:
    """``vflattack audit`` on a dataset: the white-box audit (or the precision sweep), and the
    threat and defence audits asked for."""
    if ((set(args.attacks) - {"whitebox"} or args.defence)
            and any(r != "exact" and not getattr(r, "exact", False) for r in args.release or [])):
        return _fail(cc.InvalidInputError(
            "--release applies to the white-box audit (and its prior-aware attacks); the black-box, agnostic and "
            "defence audits model adversaries of exact scores: run them without --release"))
    results = []
    helper = _compile_helper(args)
    try:
        if "whitebox" in args.attacks:
            from .api import AuditConfig, audit

            results.append(audit(AuditConfig(
                dataset=args.dataset, n_passive=args.passive, passive_columns=args.passive_columns,
                releases=_releases(args.release), methods=args.methods, seeds=args.seeds,
                n_predictions=args.predictions, predict_fraction=args.predict_fraction, data_dir=args.data_dir,
                prior_data=_read_prior(args.prior_file) if args.prior_file else None, tau=args.tau,
                radius_threshold=args.radius_threshold, progress=progress, link=args.link,
                parties=_parties(args.parties), colluding=tuple(args.collude), precision=args.precision,
                yhat_scale=args.yhat_scale)))
        if set(args.attacks) - {"whitebox"} or args.defence:
            from .api import ThreatConfig, audit

            for d in args.passive:
                results.append(audit(ThreatConfig(
                    dataset=args.dataset, n_passive=d, seeds=tuple(args.seeds), data_dir=args.data_dir,
                    n_predictions=args.predictions, n_observed=args.observed, lam=args.lam,
                    epsilons=tuple(args.epsilons) if args.defence else (), defence_kinds=tuple(args.defence),
                    relative=True, blackbox="blackbox" in args.attacks, predict_fraction=args.predict_fraction)))
    except (datasets.DatasetError, cc.InvalidInputError) as exc:
        return _fail(exc)
    finally:
        if helper is not None:
            helper.stop()
    return _render(args, results, several_d=len(args.passive) > 1)


def _sweep(args, progress) -> int:
    """``vflattack sweep``: the audit for d = 1 .. max passive features on each dataset."""
    results = []
    helper = _compile_helper(args)
    try:
        names = [n for name in args.datasets for n in (datasets.UCI if name == "papers" else (name,))]
        for name in dict.fromkeys(names):
            F, _ = datasets.load(name, args.data_dir)
            ds = list(range(1, min(args.max_passive, F.shape[1] - 1) + 1, args.step))
            results.append(run_audit(name, n_passive=ds, methods=args.methods, seeds=args.seeds,
                                     n_predictions=args.predictions, data_dir=args.data_dir,
                                     predict_fraction=args.predict_fraction, progress=progress))
    except (datasets.DatasetError, cc.InvalidInputError) as exc:
        return _fail(exc)
    finally:
        if helper is not None:
            helper.stop()
    return _render(args, results)


def _render(args, results, several_d: bool = False) -> int:
    """Print each result's report (and a sweep's audits); with ``--out``, write them into one
    report directory (a subdirectory per dataset, per d for threat audits, per release)."""
    import pathlib

    reports = [render(r) for r in results]
    for res, rep in zip(results, reports):
        print(rep.table())
        print()
        for part in res.parts:   # the sweep's audits, one per release
            print(render(part).table())
            print()
    if args.out is None:
        return 0
    several_datasets = len({rep.config.get("dataset") for rep in reports}) > 1
    placed = []
    for res, rep in zip(results, reports):
        sub = pathlib.Path(rep.config["dataset"]) if several_datasets else pathlib.Path()
        if several_d and rep.kind == "threats":
            sub = sub / f"d{rep.config['n_passive']}"
        placed.append((sub, rep))
        placed += [(sub / release_dirname(part.config["release"]), render(part)) for part in res.parts]
    try:
        _write(args.out, placed)
    except cc.InvalidInputError as exc:  # --out changed under us while computing
        return _fail(exc)
    return 0


#: each subcommand's runner (``audit --log`` is the log audit's, :func:`_audit_log`)
_COMMANDS = {"audit": _audit, "sweep": _sweep, "known-input": _known_input, "design": _design,
             "export-log": _export_log}


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

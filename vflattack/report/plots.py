"""PNG plots of an audit (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import pathlib

import numpy as np


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _finish(fig, ax, path, *, xlabel, ylabel, title, legend_cols=2, grid="both") -> pathlib.Path:
    """Labels, legend, grid, layout, save as PNG and close."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, ncol=legend_cols)
    ax.grid(alpha=0.3, which=grid) if grid != "y" else ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _plt().close(fig)
    return pathlib.Path(path)


def plot_mse_vs_passive(records, path) -> pathlib.Path:
    """MSE per estimator against the number of passive features d, with the von
    Neumann bounds on MSE(half*) (docs/theory.md §2.3) drawn as a shaded band."""
    plt = _plt()
    ds = sorted({r.n_passive for r in records})
    methods = list(records[0].mse)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for m in methods:
        vals = [np.array([r.mse[m] for r in records if r.n_passive == d], dtype=float) for d in ds]
        mean = [float(np.mean(v[np.isfinite(v)])) if np.isfinite(v).any() else np.nan for v in vals]
        if np.isfinite(mean).any():   # a method with no finite MSE (the naive attack on labels) has no curve
            ax.plot(ds, mean, marker="o", label=m, linestyle="--" if m in ("random", "mean") else "-")
    lo = [np.mean([r.bounds["half_star"][0] for r in records if r.n_passive == d and r.bounds]) for d in ds]
    hi = [np.mean([r.bounds["half_star"][1] for r in records if r.n_passive == d and r.bounds]) for d in ds]
    ax.fill_between(ds, lo, hi, color="grey", alpha=0.2, label="half* bounds (von Neumann)")
    return _finish(fig, ax, path, xlabel="passive features d", ylabel="MSE per feature",
                   title=f"{records[0].dataset}: reconstruction error of the passive features")


def plot_mse_per_feature(records, path) -> pathlib.Path:
    """Per-feature MSE for the largest d (first seed), with standard-error bars over predictions."""
    plt = _plt()
    d = max(r.n_passive for r in records)
    rec = [r for r in records if r.n_passive == d][0]
    methods = [m for m in rec.mse_per_feature if np.all(np.isfinite(rec.mse_per_feature[m]))]
    width = 0.8 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(max(7, 0.6 * d * max(len(methods), 1) / 3), 4.5))
    x = np.arange(d)
    for i, m in enumerate(methods):
        ax.bar(x + i * width, rec.mse_per_feature[m], width, yerr=rec.mse_per_feature_se[m], capsize=2, label=m)
    ax.set_xticks(x + 0.4 - width / 2, [str(c) for c in rec.passive_columns], fontsize=7)
    return _finish(fig, ax, path, xlabel="passive feature (column index in the dataset)", ylabel="MSE",
                   title=f"{rec.dataset}, d = {d}, seed {rec.seed}: per-feature error (± s.e.)", legend_cols=3, grid="y")


def plot_tradeoff(records, path) -> pathlib.Path:
    """Privacy vs interpretability: adversary MSE against the distortion budget epsilon."""
    plt = _plt()
    rec = records[0]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    styles = {"optimised": "-", "random": ":"}
    for kind in sorted({t["kind"] for t in rec.tradeoff}):
        pts = sorted((t for t in rec.tradeoff if t["kind"] == kind), key=lambda t: t["epsilon"])
        eps = [0.0] + [t["epsilon"] for t in pts]
        for adv, colour in (("whitebox", "C0"), ("am", "C1"), ("ram", "C2")):
            ax.plot(eps, [rec.mse[adv]] + [t[adv] for t in pts], styles.get(kind, "-"), color=colour, marker="o",
                    label=f"{adv} ({kind})")
    ax.axhline(rec.mse["mean"], color="grey", linestyle="--", label="training-mean guess")
    return _finish(fig, ax, path, xlabel="distortion budget epsilon = max ||W_pas - W_pas R||_F", ylabel="adversary MSE per feature",
                   title=f"{rec.dataset}, d = {rec.n_passive}: privacy vs interpretability")


def plot_blackbox(records, path) -> pathlib.Path:
    """Black-box MSE (one passive feature) against the number of predictions, log-log."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    for rec in records:
        n, m = zip(*rec.blackbox)
        ax.loglog(n, np.maximum(m, 1e-16), marker="o", label=f"seed {rec.seed}")
    return _finish(fig, ax, path, xlabel="number of predictions N", ylabel="MSE",
                   title=f"{records[0].dataset}: black-box reconstruction of one feature", legend_cols=1)


def plot_radius_histogram(records, path) -> pathlib.Path:
    """Histogram of the per-record minimax radius r*/sqrt(d) (upper bounds), one series per d."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    by_d: dict = {}
    for r in records:
        if r.arrays:
            v = r.arrays["radius_upper"]
            by_d.setdefault(r.n_passive, []).append(v[np.isfinite(v)])
    for d, parts in sorted(by_d.items()):
        ax.hist(np.concatenate(parts), bins=30, alpha=0.5, label=f"d = {d}")
    thr = records[0].privacy.get("radius", {}).get("threshold")
    if thr is not None:
        ax.axvline(thr, color="k", linestyle="--", label=f"threshold {thr:g}")
    return _finish(fig, ax, path, xlabel="minimax radius r* / sqrt(d) of the record (no estimate can promise less)",
                   ylabel="records", title=f"{records[0].dataset}: what the scores guarantee, record by record",
                   legend_cols=1, grid="y")


def plot_feature_ranges(records, path) -> pathlib.Path:
    """Per feature (largest d, first seed): the interval widths over records, and the pinned share."""
    plt = _plt()
    d = max(r.n_passive for r in records)
    rec = [r for r in records if r.n_passive == d and r.arrays][0]
    width = rec.arrays["upper"] - rec.arrays["lower"]
    width = width[np.all(np.isfinite(width), axis=1)]
    fig, ax = plt.subplots(figsize=(max(7, 0.5 * d), 4.5))
    ax.boxplot(width, positions=np.arange(d), widths=0.6, showfliers=False)
    ax2 = ax.twinx()
    ax2.plot(np.arange(d), rec.privacy["pinned"], "o", color="C3", label=f"pinned within {rec.privacy['tau']:.0%}")
    ax2.set_ylabel("share of records pinned", color="C3")
    ax2.set_ylim(0, 1)
    ax.set_xticks(np.arange(d), [str(c) for c in rec.passive_columns], fontsize=7)
    ax2.legend(fontsize=7, loc="upper right")
    return _finish(fig, ax, path, xlabel="passive feature (column index in the dataset)",
                   ylabel="width of [min x_i, max x_i] over S_F", legend_cols=1, grid="y",
                   title=f"{rec.dataset}, d = {d}, seed {rec.seed}: what the scores pin down, feature by feature")


def plot_release_sweep(rows, path) -> pathlib.Path:
    """The precision sweep of one (dataset, d): against the release (most precise first), the
    best attack's and the naive attack's MSE beside the prior, the median certified radius
    r*/sqrt(d), the pinned share and the leakage beyond the prior."""
    plt = _plt()
    x = np.arange(len(rows))
    labels = [s["release"] for s in rows]
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.5), sharex=True)
    ax = axes[0, 0]
    ax.plot(x, [s["best_mse"] for s in rows], marker="o", label="best release-aware attack")
    ax.plot(x, [s["naive_mse"] for s in rows], marker="s", linestyle=":", label="naive (published value as exact; the rows it can use)")
    ax.plot(x, [s["prior_mse"] for s in rows], linestyle="--", color="grey", label="prior alone")
    ax.set_ylabel("MSE per feature")
    ax.legend(fontsize=7)
    panels = ((axes[0, 1], "radius_median", "median r*/sqrt(d) (certified)"),
              (axes[1, 0], "pinned_share", "pinned share of features"),
              (axes[1, 1], "leakage", "leakage beyond the prior (MSE)"))
    for a, key, label in panels:
        a.plot(x, [s[key] for s in rows], marker="o")
        a.set_ylabel(label)
    axes[1, 1].axhline(0.0, color="grey", linewidth=0.8)
    for a in axes.ravel():
        a.grid(alpha=0.3)
        a.set_xticks(x, labels, rotation=30, fontsize=8)
    fig.suptitle(f"{rows[0]['dataset']}, d = {rows[0]['n_passive']}: does the release protect?")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return pathlib.Path(path)


def plot_design_curve(rows, config, path) -> pathlib.Path:
    """The release design's curve: per kind, against its parameter (finer to the right), the
    smallest certified value over the records (or the measured leakage) with the target as a
    line, filled where the candidate meets it, the chosen release starred; on the right axis
    the share of predicted classes the release keeps."""
    plt = _plt()
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    target_kind, _, tau = config["target"].partition("=")
    tau = float(tau)
    ylabel = {"radius": "smallest certified r*/sqrt(d)", "pinned": "narrowest feature range",
              "leakage": "leakage beyond the prior (MSE)"}[target_kind]
    fig, axes = plt.subplots(1, len(kinds), figsize=(4.2 * len(kinds), 3.8), squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        mine = [r for r in rows if r["kind"] == kind]
        x = np.array([r["parameter"] for r in mine], dtype=float)
        y = np.array([np.nan if r["worst"] is None else r["worst"] for r in mine], dtype=float)
        meets = np.array([bool(r["meets"]) for r in mine])
        ax.plot(x, y, color="0.5", linewidth=1, zorder=1)
        ax.scatter(x[meets], y[meets], color="tab:green", zorder=2, label="meets")
        ax.scatter(x[~meets], y[~meets], facecolors="none", edgecolors="tab:red", zorder=2, label="fails")
        chosen = [i for i, r in enumerate(mine) if r["release"] == config.get("release")]
        if chosen:
            ax.scatter(x[chosen], y[chosen], marker="*", s=220, color="gold", edgecolors="k", zorder=3,
                       label="chosen")
        ax.axhline(tau, color="k", linestyle="--", linewidth=1, label=f"target {config['target']}")
        if kind in ("gaussian", "laplace"):
            ax.set_xscale("log")
            ax.invert_xaxis()          # finer (less noise) to the right, as for decimals
        if target_kind != "leakage" and np.nanmin(np.where(y > 0, y, np.nan), initial=np.inf) < tau / 10:
            ax.set_yscale("log")
        ax.set_xlabel(f"{kind}: {_PARAM_NAMES.get(kind, 'parameter')} (finer to the right)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        right = ax.twinx()
        right.plot(x, [r["agreement"] for r in mine], color="tab:blue", linestyle=":", marker=".",
                   label="top class kept")
        right.set_ylim(0, 1.02)
        right.set_ylabel("share of predicted classes kept", color="tab:blue")
        handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
        ax.legend(handles=handles, fontsize=7, loc="best")
    fig.suptitle(f"release design, target {config['target']}: chosen {config.get('release') or 'none'}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return pathlib.Path(path)


_PARAM_NAMES = {"round": "decimals", "roundnorm": "decimals", "sig": "significant digits", "gaussian": "sigma",
                "laplace": "scale b"}

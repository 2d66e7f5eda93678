"""The defence table behind docs/vflattack.md, "Do the published defences protect?".

Usage: ``python experiments/defences.py DATA_DIR [OUT.json]``. For the five UCI datasets and
digits, at d = 4 passive features, 150 predictions and seed 0, runs
:func:`vflattack.run_release_sweep` over exact scores and the published defences (PRIVEE,
PRIVEE++, rank only, top-1 and top-3 with 2 decimals, rounding to 2 decimals with and without
renormalising, float32, and the Gaussian mechanism at epsilon 0.5, 1 and 4 with delta 1e-5 and
sensitivity 0.01 on the scores), and prints one markdown table: per dataset and defence, the
leakage beyond the prior that is left as a share of the exact scores' leakage, the median
certified radius r*/sqrt(d), and the share of predictions whose published top class is the
exact one (the model accuracy the defence keeps). The estimators are the closed forms, cls,
rcc2 and the two prior-aware attacks; the radii come from the exposure (exact where cheap,
else rcc1's bound). Not a speed measurement: the numbers are reconstruction errors.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

import vflattack as va

DATASETS = ("bank", "adult", "satellite", "pendigits", "grid", "digits")
DEFENCES = {"exact": "exact", "PRIVEE": "privee:1", "PRIVEE++": "priveeplus", "rank only": "rank",
            "top-1": "topk:1:2", "top-3": "topk:3:2", "round 2": "round:2", "round 2 + renorm": "roundnorm:2",
            "float32": "float32"}
DEFENCES.update({f"DP eps {e:g}": f"gaussian:eps={e:g},delta=1e-05,sens=0.01:0.95" for e in (0.5, 1, 4)})
METHODS = ("ls", "half_star", "cls", "rcc2", "mean", "prior", "gaussian")


def main(argv):
    data_dir = argv[0] if argv else None
    out = argv[1] if len(argv) > 1 else None
    rows = []
    for name in DATASETS:
        t0 = time.perf_counter()
        res = va.run_release_sweep(name, n_passive=(4,), releases=list(DEFENCES.values()), methods=METHODS, seeds=(0,),
                                   n_predictions=150, data_dir=data_dir)
        base = res.records[0]
        for label, rec in zip(DEFENCES, res.records):
            share = rec.leakage / base.leakage if base.leakage > 0 else float("nan")
            rows.append({"dataset": name, "defence": label, "release": rec.release, "leakage": rec.leakage,
                         "leakage_share": share, "radius_median": rec.radius_median, "agreement": rec.agreement,
                         "attacked": rec.attacked, "n_predictions": rec.n_predictions})
        print(f"{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    print(table(rows))
    if out:
        with open(out, "w") as fh:
            json.dump(rows, fh, indent=1)


def table(rows) -> str:
    """Datasets as rows, defences as columns; a cell: leakage share left / median r*/sqrt(d) / accuracy kept."""
    labels = list(DEFENCES)[1:]
    out = ["| dataset | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for name in DATASETS:
        cells = []
        for label in labels:
            r = next(x for x in rows if x["dataset"] == name and x["defence"] == label)
            share = "—" if not np.isfinite(r["leakage_share"]) else f"{r['leakage_share']:.0%}"
            cells.append(f"{share} / {r['radius_median']:.3f} / {r['agreement']:.0%}")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(out)


if __name__ == "__main__":
    main(sys.argv[1:])

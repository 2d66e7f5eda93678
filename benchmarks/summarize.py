"""Turn a pytest-benchmark JSON file into the per-row ratio tables quoted in the README.

Usage::

    python -m pytest benchmarks --benchmark-enable --benchmark-only --benchmark-json=bench.json
    python benchmarks/summarize.py bench.json
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict


def _by_size(results):
    """``((size1, size2), {variant: values})`` of a parametrised test's results
    (params ``(variant, size1, size2)``), sizes in numeric order."""
    sizes = sorted({(p[1], p[2]) for p in results}, key=lambda t: (int(t[0]), int(t[1])))
    return [(size, {p[0]: v for p, v in results.items() if (p[1], p[2]) == size}) for size in sizes]


def _params(name: str) -> tuple[str, tuple]:
    m = re.match(r"(\w+)\[(.*)\]", name)
    return (m.group(1), tuple(m.group(2).split("-"))) if m else (name, ())


def main(path: str) -> None:
    data = json.load(open(path))
    rows = defaultdict(dict)
    for b in data["benchmarks"]:
        test, params = _params(b["name"])
        rows[test][params] = b["extra_info"] | {"mean": b["stats"]["mean"]}

    def us(x):
        return f"{x * 1e6:,.2f} µs" if x < 1e-3 else f"{x * 1e3:,.1f} ms" if x < 1 else f"{x:,.2f} s"

    print("## half_star per row: chebcenter batch (N = 1e4 / 1e6) vs numpy per-row loop (N = 1e4)\n")
    print("| d | m | chebcenter N=1e4 | chebcenter N=1e6 | numpy loop | speed-up (1e4) |")
    print("|---|---|---|---|---|---|")
    for (d, m), base in sorted(rows["test_half_star_numpy_loop"].items(), key=lambda kv: (int(kv[0][0]), int(kv[0][1]))):
        ours = rows["test_half_star_chebcenter"].get(("10000", d, m))
        big = rows["test_half_star_chebcenter"].get(("1000000", d, m))
        if ours:
            print(f"| {d} | {m} | {us(ours['per_row'])} | {us(big['per_row']) if big else '—'} | "
                  f"{us(base['per_row'])} | {base['per_row'] / ours['per_row']:,.0f}× |")

    print("\n## rcc2 / cls per row vs scipy bvls and a fresh cvxpy QP\n")
    print("| d | m | rcc2 (numba) | cls (compiled BVLS) | scipy bvls loop | cvxpy QP per row | rcc2 vs bvls | cls vs bvls "
          "| rcc2 vs cvxpy | rcc2 max dev vs cvxpy | cls max dev vs scipy |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    proj = rows["test_projection"]
    for d, m in sorted({(p[1], p[2]) for p in proj}, key=lambda t: (int(t[0]), int(t[1]))):
        g = {p[0]: v for p, v in proj.items() if (p[1], p[2]) == (d, m)}
        if len(g) == 4:
            r = g["chebcenter_rcc2"]["per_row"]
            c = g["chebcenter_cls"]["per_row"]
            print(f"| {d} | {m} | {us(r)} | {us(c)} | {us(g['scipy_bvls']['per_row'])} | "
                  f"{us(g['cvxpy_fresh_qp']['per_row'])} | {g['scipy_bvls']['per_row'] / r:,.0f}× | "
                  f"{g['scipy_bvls']['per_row'] / c:,.0f}× | "
                  f"{g['cvxpy_fresh_qp']['per_row'] / r:,.0f}× | {g['chebcenter_rcc2'].get('max_dev_vs_cvxpy', float('nan')):.1e} | "
                  f"{g['chebcenter_cls'].get('max_dev_vs_scipy', float('nan')):.1e} |")

    print("\n## rcc1 per row (compiled routes: a batch of 64 rows, d = 200: 4) vs cvxpy, per core and on 2 threads\n")
    print("| d | m | barrier, 1 thread | barrier, 2 threads | cvxpy SCS (parametric) | fresh SCS | fresh Clarabel "
          "| barrier vs parametric SCS, per core | same, 2 threads | default route, 1 thread "
          "| default vs fastest fresh, per core | same, 2 threads | barrier max dev vs SCS |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rc = rows["test_rcc1"]
    na = "—"
    for d, m in sorted({(p[1], p[2]) for p in rc}, key=lambda t: (int(t[0]), int(t[1]))):
        g = {p[0]: v for p, v in rc.items() if (p[1], p[2]) == (d, m)}
        t = {k: v["per_row"] for k, v in g.items()}
        fresh = min([v for k, v in t.items() if k.startswith("cvxpy")], default=float("nan"))
        scs = t.get("chebcenter_cvxpy_scs", float("nan"))

        def cell(key, t=t):
            return us(t[key]) if key in t else na

        def ratio(base, key, t=t):  # a partial run (pytest -k) leaves cells empty, never a crash
            return f"{base / t[key]:,.0f}×" if key in t and base == base else na

        dev = g.get("chebcenter_no_fast_path@1", {}).get("max_dev_vs_sdp", float("nan"))
        print(f"| {d} | {m} | {cell('chebcenter_no_fast_path@1')} | {cell('chebcenter_no_fast_path@2')} | "
              f"{cell('chebcenter_cvxpy_scs')} | {cell('cvxpy_fresh_scs')} | {cell('cvxpy_fresh_clarabel')} | "
              f"{ratio(scs, 'chebcenter_no_fast_path@1')} | {ratio(scs, 'chebcenter_no_fast_path@2')} | "
              f"{cell('chebcenter@1')} | {ratio(fresh, 'chebcenter@1')} | {ratio(fresh, 'chebcenter@2')} | {dev:.1e} |")

    print("\n## exact per row (vertex count, certified gap) and brute force + SOCP baseline\n")
    print("| d | m | chebcenter | vertices | gap | brute force + SOCP | speed-up |")
    print("|---|---|---|---|---|---|---|")
    base = rows.get("test_exact_brute_force_baseline", {})
    for (d, m), v in sorted(rows["test_exact_chebcenter"].items(), key=lambda kv: (int(kv[0][0]), int(kv[0][1]))):
        b = base.get((d, m))
        print(f"| {d} | {m} | {us(v['per_row'])} | {v['n_vertices'][0]:,} | {v['gap']:.0e} | "
              f"{us(b['per_row']) if b else '—'} | {(b['per_row'] / v['per_row']) if b else float('nan'):,.0f}× |")

    print("\n## vertex enumeration alone vs scipy's qhull on the null-space rewrite (one row)\n")
    print("| d | m | vertices | chebcenter | qhull | speed-up |")
    print("|---|---|---|---|---|---|")
    for (d, m), g in _by_size(rows["test_vertex_enumeration"]):
        if len(g) == 2:
            print(f"| {d} | {m} | {g['chebcenter']['n_vertices']:,} | {us(g['chebcenter']['per_row'])} | "
                  f"{us(g['qhull']['per_row'])} | {g['qhull']['per_row'] / g['chebcenter']['per_row']:,.1f}× |")

    print("\n## exact past enumeration: branch and bound, rank 1 (one row)\n")
    print("| d = p + 1 | gap_tol | time | status | lower | upper | nodes | rounds | enumeration |")
    print("|---|---|---|---|---|---|---|---|---|")
    bnb = {(k[0], "-".join(k[1:])): v for k, v in rows["test_exact_branch_and_bound"].items()}  # "1e-06" has a dash
    for (d, tol), v in sorted(bnb.items(), key=lambda kv: (-float(kv[0][1]), int(kv[0][0]))):
        enum = f"{us(v['enumeration'])}, r = {v['enum_radius']:.10f}" if "enumeration" in v else "out of reach"
        print(f"| {d} | {tol} | {us(v['per_row'])} | {v['status']} | {v['lower']:.10f} | {v['upper']:.10f} | "
              f"{v['nodes']:,} | {v['rounds']} | {enum} |")

    if "test_cold_start_every_method" in rows:
        print("\n## cold start: the first use of every method in a fresh process, empty numba cache\n")
        cs = rows["test_cold_start_every_method"]
        steps = [k for k in next(iter(cs.values())) if k not in ("mean", "total")]
        print("| background warm-up | total | " + " | ".join(steps) + " |")
        print("|---|---|" + "---|" * len(steps))
        for (mode,), v in sorted(cs.items()):
            print(f"| {mode} | {v['total']:.1f} s | " + " | ".join(f"{v[k]:.2f} s" for k in steps) + " |")
    if "test_feature_ranges" in rows:
        print("\n## feature ranges, N = 10^4 at d = 10, per row: compiled (1 / 2 threads) vs HiGHS per LP\n")
        print("| rank | compiled, 1 thread | compiled, 2 threads | HiGHS per LP (20 LPs) | per core | 2 threads | max dev |")
        print("|---|---|---|---|---|---|---|")
        fr = rows["test_feature_ranges"]
        for rank in sorted({p[1] for p in fr}, key=int):
            g = {p[0]: v for p, v in fr.items() if p[1] == rank}
            one, two, hi = g["chebcenter@1"], g["chebcenter@2"], g["highs_per_lp"]
            print(f"| {rank} | {us(one['per_row'])} | {us(two['per_row'])} | {us(hi['per_row'])} | "
                  f"{hi['per_row'] / one['per_row']:,.0f}× | {hi['per_row'] / two['per_row']:,.0f}× | "
                  f"{one.get('max_dev_vs_highs', float('nan')):.1e} |")
    if "test_node_lp" in rows:
        print("\n## branch-and-bound node LP: compiled bounded simplex vs HiGHS (one node)\n")
        print("| rank | d | compiled | HiGHS | ratio |")
        print("|---|---|---|---|---|")
        for (r, d), g in _by_size(rows["test_node_lp"]):
            print(f"| {r} | {d} | {us(g['compiled']['per_node'])} | {us(g['highs']['per_node'])} | "
                  f"{g['highs']['per_node'] / g['compiled']['per_node']:,.0f}× |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench.json")

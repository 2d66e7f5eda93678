"""exact: compiled enumeration + MEB vs brute force (itertools + numpy) + an SOCP MEB."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest
from conftest import planted, quiet

import chebcenter as cc
from chebcenter.bench.cases import qhull_vertices

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
from reference import brute_vertices, meb_socp  # noqa: E402


@pytest.mark.parametrize("d,m", [(8, 1), (8, 5), (12, 1), (12, 5), (16, 1), (16, 5), (16, 9)])
def test_exact_chebcenter(benchmark, d, m):
    A, X, B = planted(d, m, 3)
    P = cc.BoxSlice(A)
    res = benchmark.pedantic(P.centers, args=(B, "exact"), kwargs={"algorithm": "enumerate"}, rounds=2, iterations=1)
    benchmark.extra_info.update(per_row=benchmark.stats.stats.mean / 3, n=3,
                                n_vertices=res.extras["n_vertices"].tolist(),
                                gap=float(np.max(res.radii - res.extras["radius_lower"])))


@pytest.mark.parametrize("d,m", [(8, 1), (8, 5), (12, 5)])
def test_exact_brute_force_baseline(benchmark, d, m):
    A, X, B = planted(d, m, 1)

    def run():
        V = brute_vertices(A, B[0], np.zeros(d), np.ones(d))
        return quiet(lambda: meb_socp(V))

    c, t = benchmark.pedantic(run, rounds=1, iterations=1)
    r = cc.BoxSlice(A).center(B[0], method="exact")
    benchmark.extra_info.update(per_row=benchmark.stats.stats.mean, radius_dev=abs(t - r.radius))


def _qhull_vertices(P, q):
    """The baseline: scipy's qhull on the null-space rewrite (chebcenter.bench.cases)."""
    return qhull_vertices(P.W, P.lo, P.hi, q)


@pytest.mark.parametrize("d,m", [(12, 3), (14, 3), (14, 5), (16, 3), (16, 5)])
@pytest.mark.parametrize("route", ["chebcenter", "qhull"])
def test_vertex_enumeration(benchmark, d, m, route):
    from chebcenter.methods.exact import slice_vertices

    A, X, B = planted(d, m, 1, seed=d * m)
    P = cc.BoxSlice(A)
    q = P.A_pinv @ B[0]
    fn = (lambda: slice_vertices(P, q, 10**6)) if route == "chebcenter" else (lambda: _qhull_vertices(P, q))
    V = benchmark.pedantic(fn, rounds=3, iterations=1, warmup_rounds=1)
    benchmark.extra_info.update(per_row=benchmark.stats.stats.mean, n_vertices=int(V.shape[0]))


@pytest.mark.parametrize("d,gap_tol", [(16, 1e-6), (20, 1e-6), (26, 1e-6), (20, 1e-4), (26, 1e-4), (31, 1e-4)])
def test_exact_branch_and_bound(benchmark, d, gap_tol):
    """Past enumeration (rank 1): certified radius to gap_tol; d = 16 also enumerates."""
    A, X, B = planted(d, 1, 1, seed=d)
    P = cc.BoxSlice(A)
    res = benchmark.pedantic(P.centers, args=(B, "exact"), kwargs={"algorithm": "bnb", "gap_tol": gap_tol},
                             rounds=1, iterations=1, warmup_rounds=0)
    info = dict(per_row=benchmark.stats.stats.mean, status=str(res.status[0]),
                upper=float(res.radii[0]), lower=float(res.extras["radius_lower"][0]),
                nodes=int(res.extras["bnb_nodes"][0]), rounds=int(res.extras["bnb_rounds"][0]))
    if d <= 16:
        import time

        t0 = time.perf_counter()
        ref = P.centers(B, "exact", algorithm="enumerate")
        info.update(enumeration=time.perf_counter() - t0, enum_radius=float(ref.radii[0]))
    benchmark.extra_info.update(info)

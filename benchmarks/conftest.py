"""Benchmark fixtures: warm every numba kernel once so no timing includes compilation.

Run with ``python -m pytest benchmarks --benchmark-enable --benchmark-only``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chebcenter as cc


@pytest.fixture(scope="session", autouse=True)
def warm_jit():
    A = np.array([[1.0, -2.0, 0.5]])
    P = cc.BoxSlice(A)
    for method in ("half_star", "rcc2", "exact", "cls", "rcc1"):
        P.centers(np.array([[0.2], [5.0]]), method=method)


def planted(d, m, n, seed=0):
    """A (m x d) standard normal, X uniform in [0,1]^d, B = X A^T."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    X = rng.random((n, d))
    return A, X, X @ A.T


def quiet(fn):
    """Run ``fn`` with solver warnings silenced (cvxpy baselines warn about DPP etc.)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


@pytest.fixture(scope="session", autouse=True)
def warm_bnb():
    """Compile the branch-and-bound kernels outside the timings."""
    A = np.array([[1.0, -2.0, 0.5, 0.3]])
    cc.BoxSlice(A).centers(np.array([[0.2]]), method="exact", algorithm="bnb")

"""Public names, result types, single vs batch, validation messages."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

import chebcenter as cc

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_public_names():
    assert cc.METHODS == ("half", "ls", "half_star", "cls", "rcc1", "rcc2", "exact", "auto", "project")
    assert list(cc.__all__) == sorted(cc.__all__)
    for name in cc.__all__:
        assert hasattr(cc, name)
    assert {s.name for s in cc.Status} == {"OPTIMAL", "INACCURATE", "INFEASIBLE", "TOO_LARGE", "SOLVER_ERROR", "INVALID_INPUT"}
    assert issubclass(cc.InvalidInputError, ValueError)
    assert issubclass(cc.MissingBackendError, ImportError)


def test_chebcenter_never_imports_vflattack():
    for path in (ROOT / "chebcenter").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n.split(".")[0] == "vflattack" for n in names), path


@pytest.mark.parametrize("method", cc.METHODS)
def test_single_equals_batch_row_and_results_are_frozen(method):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 5))
    X = rng.random((4, 5))
    B = X @ A.T
    P = cc.BoxSlice(A)
    br = P.centers(B, method=method)
    assert isinstance(br, cc.BatchResult) and len(br) == 4
    assert br.centers.shape == (4, 5) and br.radii.shape == (4,) and br.status.shape == (4,)
    assert all(isinstance(s, cc.Status) for s in br.status)
    assert np.all(br.status == cc.Status.OPTIMAL)
    r = P.center(B[2], method=method)
    assert isinstance(r, cc.CenterResult) and r.method == method
    np.testing.assert_allclose(r.center, br.centers[2], atol=1e-7)
    np.testing.assert_allclose(br[2].center, br.centers[2])
    with pytest.raises(AttributeError):
        r.center = np.zeros(5)
    with pytest.raises(ValueError):
        r.center[0] = 1.0
    with pytest.raises(ValueError):
        br.centers[0, 0] = 1.0
    if cc.methods.REGISTRY[method].lies_in == "S_F":
        assert r.in_slice()
    if method == "half":  # the midpoint is not on this slice
        assert not r.in_slice()
    assert (r.gap <= 1e-9) if method in ("exact", "auto") else np.isnan(r.gap)   # auto: exact on this slice
    c2 = cc.chebyshev_center(A, B[2], method=method)
    np.testing.assert_allclose(c2.center, r.center, atol=1e-7)


def test_result_repr_and_counts():
    P = cc.BoxSlice([[1.0, 1.0]])
    br = P.centers([[1.0], [5.0]], method="half_star")
    assert br.counts() == {"OPTIMAL": 1, "INFEASIBLE": 1}
    assert "INFEASIBLE" in repr(br)
    assert str(cc.Status.OPTIMAL) == "OPTIMAL"
    assert br[1].max_violation > 0 or np.isnan(br[1].box_violation)


@pytest.mark.parametrize("call,match", [
    (lambda: cc.BoxSlice([1.0, 2.0]), r"A must be a 2-D array.*1-D"),
    (lambda: cc.BoxSlice([[1.0, np.nan]]), r"A must be finite.*nan"),
    (lambda: cc.BoxSlice([["a", "b"]]), r"A must be an array of real numbers"),
    (lambda: cc.BoxSlice(np.zeros((1, 0))), r"A must have at least one column"),
    (lambda: cc.BoxSlice([[1.0, 1.0]], lo=1.0, hi=0.0), r"lo must be <= hi.*lo\[0\] = 1.0 > hi\[0\] = 0.0"),
    (lambda: cc.BoxSlice([[1.0, 1.0]], lo=[0, 0, 0]), r"lo must be a scalar or an array of shape \(2,\); got shape \(3,\)"),
    (lambda: cc.BoxSlice([[1.0, 1.0]], hi=np.inf), r"hi must be finite"),
    (lambda: cc.BoxSlice([[1.0, 1.0]], feas_tol=-1), r"feas_tol must be a positive"),
    (lambda: cc.BoxSlice([[1.0, 1.0]], rank_tol=-1.0), r"rank_tol must be a finite number >= 0"),
    (lambda: cc.BoxSlice([[1.0, 1.0]]).center([1.0, 2.0]), r"b must have shape \(1,\) to match A; got shape \(2,\)"),
    (lambda: cc.BoxSlice([[1.0, 1.0]]).center([[1.0], [2.0]]), r"use .centers for a batch"),
    (lambda: cc.BoxSlice([[1.0, 1.0]]).center([np.nan]), r"b must be finite"),
    (lambda: cc.BoxSlice([[1.0, 1.0], [1, 0]]).centers([1.0, 2.0]), r"B must have shape \(N, 2\)"),
    (lambda: cc.BoxSlice([[1.0, 1.0]]).center([1.0], method="chebyshev"), r"method must be one of .*'exact'.*got 'chebyshev'"),
    (lambda: cc.BoxSlice([[1.0, 1.0]]).center([1.0], method="rcc1", solver="mosek"), r"solver must be one of"),
    (lambda: cc.BoxSlice([[1.0, 1.0]]).center([1.0], method="half", solver="scs"), r"unknown option\(s\) \['solver'\] for method 'half'"),
    (lambda: cc.BoxSlice([[1.0, 1.0]]).center([1.0], method="exact", max_vertices=0), r"max_vertices must be an integer >= 1"),
    (lambda: cc.BoxSlice([[1.0, 1.0]]).center([1.0], on_inconsistent="ignore"), r"on_inconsistent must be one of"),
])
def test_bad_input_raises_named_errors(call, match):
    with pytest.raises(cc.InvalidInputError, match=match):
        call()


def test_a_box_slice_factors_its_matrix_once(monkeypatch):
    """A is factored by one SVD, shared by the public factors and the core the methods see
    (it was factored twice). With fixed coordinates the core's matrix is A's free columns,
    another matrix: the full A's factors are then computed only when read. (Stacks of r x r
    bases, factored for the forward-error bound, are other matrices and are not counted.)"""
    calls = []
    real = np.linalg.svd

    def counting(*args, **kwargs):
        if np.ndim(args[0]) == 2:
            calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(np.linalg, "svd", counting)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((2, 5))
    P = cc.BoxSlice(A)
    P.centers(rng.random((3, 5)) @ A.T, "half_star")
    assert (P.rank, P.Vr.shape, P.W.shape) == (2, (2, 5), (5, 3)) and len(calls) == 1
    np.testing.assert_allclose(P.A_pinv, np.linalg.pinv(A), atol=1e-12)   # the factors are A's own
    calls.clear()
    Q = cc.BoxSlice(A, lo=[0, 0, 0.5, 0, 0], hi=[1, 1, 0.5, 1, 1])      # x_2 fixed
    Q.centers(np.full((1, 5), 0.5) @ A.T, "half_star")
    assert len(calls) == 1
    assert Q.W.shape == (5, 3) and len(calls) == 2


def _extra_cases():
    rng = np.random.default_rng(3)
    A = rng.standard_normal((2, 5))
    B = rng.random((12, 5)) @ A.T
    B[3] = np.nan                       # INVALID_INPUT
    B[4] = 50.0                         # INFEASIBLE
    lo, hi = np.zeros(5), np.ones(5)
    lo[2] = hi[2] = 0.5                 # a fixed coordinate: the free-coordinate extras are mapped back
    for name in cc.METHODS:
        yield name, A, B, lo, hi, {}
    yield "exact", A, B, lo, hi, {"return_vertices": True}
    yield "exact", A, B, lo, hi, {"algorithm": "bnb"}
    yield "exact", A, B, lo, hi, {"algorithm": "enumerate"}
    yield "project", A, B, lo, hi, {"anchor": np.full(5, 0.2), "metric": np.diag(np.arange(1.0, 6.0))}
    yield "rcc1", A, B, lo, hi, {"solver": "clarabel"}
    yield "half_star", A, B, np.full(5, 0.5), np.full(5, 0.5), {}    # every coordinate fixed


@pytest.mark.parametrize("case", list(_extra_cases()), ids=lambda c: f"{c[0]}-{sorted(c[5])}")
def test_every_extra_a_method_returns_is_declared_with_its_dtype_and_shape(case):
    """``MethodSpec.all_extras`` is the schema of ``BatchResult.extras``: Dask builds its
    output from it and the mapping to the user's coordinates reads its units."""
    name, A, B, lo, hi, options = case
    res = cc.BoxSlice(A, lo, hi).centers(B, name, **options)
    declared = {e.name: e for e in cc.methods.REGISTRY[name].all_extras(options)}
    assert set(res.extras) <= set(declared)
    for key, val in res.extras.items():
        e = declared[key]
        assert val.dtype == np.dtype(e.dtype), key
        assert val.shape == (B.shape[0],) + e.trailing_shape(5), key
        if e.unit == "free_coordinates":
            assert np.all(val[np.isfinite(val[:, 0]), 2] == 0.0)      # zero on the fixed coordinate
        if e.unit == "points":
            for row in val:
                assert row is None or (np.ndim(row) == 2 and np.shape(row)[1] == 5 and np.allclose(np.asarray(row)[:, 2], 0.5))


def test_the_docs_list_every_declared_extra():
    from chebcenter.methods.ranges import RANGES

    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "chebcenter.md").read_text()
    section = text.split("## Per-row extras", 1)[1].split("\n## ", 1)[0]
    for spec in [*cc.methods.REGISTRY.values(), RANGES]:
        for e in spec.all_extras():
            assert f"| `{e.name}` |" in section and e.unit in section, e.name


def test_one_default_method_for_a_row_a_batch_and_a_dask_array():
    import inspect

    from chebcenter import distributed

    defaults = {f.__qualname__: inspect.signature(f).parameters["method"].default
                for f in (cc.BoxSlice.center, cc.BoxSlice.centers, distributed.centers, cc.chebyshev_center)}
    assert set(defaults.values()) == {"auto"}, defaults
    P = cc.BoxSlice([[1.0, 1.0, 0.5]])
    one, batch = P.center([0.8]), P.centers(np.array([[0.8]]))
    assert one.extras["method"] == batch.extras["method"][0] == "exact"
    np.testing.assert_array_equal(one.center, batch.centers[0])


def test_chebyshev_center_takes_boxslices_order_and_warns_on_the_old_one():
    A = [[1.0, 1.0]]
    new = cc.chebyshev_center(A, [3.0], 0.0, 2.0, method="exact")
    with pytest.warns(DeprecationWarning, match="chebyshev_center\\(A, b, lo, hi, method=...\\)"):
        old = cc.chebyshev_center(A, [3.0], "exact", 0.0, 2.0)
    np.testing.assert_allclose(old.center, new.center)
    np.testing.assert_allclose(new.center, [1.5, 1.5], atol=1e-9)
    with pytest.warns(DeprecationWarning):
        only_method = cc.chebyshev_center(A, [0.5], "rcc2")
    np.testing.assert_allclose(only_method.center, cc.chebyshev_center(A, [0.5], method="rcc2").center)


def test_rcc2_speaks_rcc1s_solver_vocabulary():
    P = cc.BoxSlice([[1.0, 1.0, 0.5]])
    ref = P.center([0.8], method="rcc2")
    for solver in ("auto", "numba", "clarabel", "scs"):
        r = P.center([0.8], method="rcc2", solver=solver)
        # SCS stops at its default accuracy (about 1e-4 here); the others at 1e-8 or better
        np.testing.assert_allclose(r.center, ref.center, atol=1e-3 if solver == "scs" else 1e-6)
    with pytest.warns(DeprecationWarning, match="solver='cvxpy' is now solver='clarabel'"):
        old = P.center([0.8], method="rcc2", solver="cvxpy")
    np.testing.assert_allclose(old.center, ref.center, atol=1e-6)
    with pytest.raises(cc.InvalidInputError, match="solver must be one of"):
        P.center([0.8], method="rcc2", solver="cvx")

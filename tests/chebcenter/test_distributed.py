"""Dask batches on a real cluster: a LocalCluster with 2 worker processes on loopback,
started and stopped here. Every method equals the in-memory batch row for row, bad rows
included; a worker killed mid-run does not change the answer. The workers are processes on
this machine, so they run the client's compiled kernels on the same bytes: there the
closed forms, rcc2 and project are bit-identical by construction (docs/theory.md §6.7;
tests/chebcenter/test_reproducible.py checks the same over random blockings in one process). rcc1
and exact agree within their solver tolerance."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import chebcenter as cc

distributed = pytest.importorskip("distributed", reason="the [distributed] extra is not installed")
import dask.array as da  # noqa: E402

from chebcenter.distributed import centers  # noqa: E402

BIT_IDENTICAL = ("half", "ls", "half_star", "rcc2", "cls", "project")
#: rcc1's warm starts run in fixed chunks inside a block (docs/theory.md §6): block boundaries
#: may change the Newton path. The relaxation's value is unique, so radii agree to the
#: solver's tolerance (rtol 1e-6, the rule of tests/chebcenter/test_reliability.py::test_5); where eta is
#: flat the center is only determined to about the square root of it (measured: 1.4e-6)
SOLVER_TOL = 1e-6
CENTER_TOL = 1e-5


def _batch(seed=0, N=600, d=8, m=2):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, d))
    X = rng.random((N, d))
    X[::5, :3] = np.round(X[::5, :3])      # corner-touching slices
    B = X @ A.T
    B[7] = np.nan                           # INVALID_INPUT
    B[11] = 40.0 * (-1.0) ** np.arange(m)    # INFEASIBLE
    return A, B


@pytest.mark.parametrize("method", cc.METHODS)
def test_every_method_equals_the_in_memory_batch(client, method):
    A, B = _batch()
    P = cc.BoxSlice(A)
    ref = P.centers(B, method)
    lazy = centers(P, da.from_array(B, chunks=(97, 2)), method)
    got = lazy.compute()
    np.testing.assert_array_equal(got.status_codes, ref.status_codes)
    assert lazy.counts() == ref.counts()
    if method in BIT_IDENTICAL:
        np.testing.assert_array_equal(got.centers, ref.centers)
        np.testing.assert_array_equal(got.radii, ref.radii)
    else:
        np.testing.assert_allclose(got.centers, ref.centers, atol=CENTER_TOL, equal_nan=True)
        np.testing.assert_allclose(got.radii, ref.radii, rtol=SOLVER_TOL, atol=1e-8, equal_nan=True)
    assert set(ref.extras) <= set(got.extras) == {e.name for e in cc.methods.REGISTRY[method].all_extras({})}
    for key, val in got.extras.items():
        if np.asarray(val).dtype.kind == "f" and key in ref.extras and method in BIT_IDENTICAL:
            np.testing.assert_array_equal(val, ref.extras[key])


def test_the_output_schema_is_declared_not_probed(monkeypatch):
    """Building the lazy result reads the method's declared extras; it solves nothing."""
    A, B = _batch(N=50)
    P = cc.BoxSlice(A)

    def solved(*a, **k):
        raise AssertionError("building the graph solved a row")

    monkeypatch.setattr(cc.BoxSlice, "centers", solved)
    lazy = centers(P, da.from_array(B, chunks=(20, 2)), "exact", return_vertices=True)
    declared = cc.methods.REGISTRY["exact"].all_extras({"return_vertices": True})
    assert [e.name for e in declared] == list(lazy.extras) and "vertices" in lazy.extras
    assert "vertices" not in centers(P, da.from_array(B, chunks=(20, 2)), "exact").extras
    assert lazy.extras["n_vertices"].dtype == np.int64 and lazy.extras["support"].dtype == object


def test_the_problem_reaches_each_worker_once(client):
    A, B = _batch(seed=1, N=1000)
    P = cc.BoxSlice(A)
    lazy = centers(P, da.from_array(B, chunks=(50, 2)), "half_star")
    graph = dict(lazy.centers.__dask_graph__())
    problems = [k for k, v in graph.items() if isinstance(v, cc.BoxSlice)
                or (hasattr(v, "value") and isinstance(getattr(v, "value", None), cc.BoxSlice))]
    assert len(problems) == 1          # one key for the factored problem ...
    from dask.core import get_dependencies
    blocks = [k for k in graph if str(k).startswith("_solve_block")]
    assert len(blocks) == 20           # ... shared by the 20 block tasks, each depending on it
    assert all(problems[0] in get_dependencies(graph, k) for k in blocks)
    np.testing.assert_array_equal(lazy.centers.compute(), P.centers(B, "half_star").centers)


def test_a_worker_killed_mid_run_does_not_change_the_answer(client):
    A, B = _batch(seed=2, N=3000, d=30, m=3)
    P = cc.BoxSlice(A)
    ref = P.centers(B, "rcc1", fast_path=False)
    lazy = centers(P, da.from_array(B, chunks=(100, 3)), "rcc1", fast_path=False)
    undisturbed = lazy.centers.compute(scheduler="threads")   # the same graph, in this process
    future = client.compute(lazy.centers)
    victim = sorted(client.scheduler_info()["workers"])[0]

    state = {}

    def finished_blocks(dask_scheduler):
        return sum(ts.state == "memory" for key, ts in dask_scheduler.tasks.items() if "solve_block" in str(key))

    def kill():
        deadline = time.monotonic() + 120.0   # wait until some blocks are done (not a fixed sleep:
        while time.monotonic() < deadline:   # the solver's speed must not decide the test)
            if client.run_on_scheduler(finished_blocks) >= 2 or future.done():
                break
            time.sleep(0.01)
        state["running"] = not future.done()
        try:
            client.run(os._exit, 1, workers=[victim])
        except Exception as exc:  # the worker dies while answering: that is the point
            state["closed"] = type(exc).__name__

    t = threading.Thread(target=kill)
    t.start()
    got = future.result(timeout=600)
    t.join()
    assert state["running"], "the computation finished before the kill: make the batch larger"
    assert victim not in client.scheduler_info()["workers"]
    np.testing.assert_array_equal(got, undisturbed)      # identical to the same graph without the kill
    np.testing.assert_allclose(got, ref.centers, atol=CENTER_TOL, equal_nan=True)


def test_errors_are_named_before_any_work():
    P = cc.BoxSlice([[1.0, 1.0]])
    with pytest.raises(cc.InvalidInputError, match=r"B must have shape \(N, 1\)"):
        centers(P, da.zeros((4, 3), chunks=2))
    with pytest.raises(cc.InvalidInputError, match="method must be one of"):
        centers(P, da.zeros((4, 1), chunks=2), "nope")
    with pytest.raises(cc.InvalidInputError, match="unknown option"):
        centers(P, da.zeros((4, 1), chunks=2), "half", solver="scs")


def test_without_dask_the_entry_point_names_the_extra(monkeypatch):
    import builtins

    import chebcenter.distributed as cd

    real = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name == "dask" or name.startswith("dask."):
            raise ImportError("no dask here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(cc.MissingBackendError, match=r'pip install -e "\.\[distributed\]"'):
        cd.centers(cc.BoxSlice([[1.0, 1.0]]), np.zeros((2, 1)))

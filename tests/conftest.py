"""Shared test configuration: hypothesis profiles, the ``numerics`` marker and the Dask
cluster fixture."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# Deterministic by default (same examples every run); "ci" explores more.
settings.register_profile("default", derandomize=True, max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", derandomize=False, max_examples=150, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


#: the numerically sensitive modules: compiled kernels, solvers, certificates, tolerances.
#: They carry the marker ``numerics``; CI runs them a second time compiled for another CPU
#: target (``NUMBA_CPU_NAME=generic python -m pytest -m numerics``: numba caches each target
#: apart, so this runs other machine code on the same data), and so can anyone who wants
#: to know whether the numbers hold on another kind of CPU.
NUMERICS_MODULES = frozenset({
    "test_auto", "test_batch_exact", "test_bnb", "test_certified", "test_cls", "test_degenerate", "test_differential",
    "test_batch_slab", "test_cuts", "test_exact", "test_interval_certified", "test_kernels",
    "test_project", "test_properties", "test_ranges", "test_rcc2_intervals", "test_relax", "test_reliability", "test_reproducible",
    "test_sets", "test_sets_scale", "test_theory", "test_va_model_attack", "test_va_prior", "test_va_threats",
    "test_image", "test_va_frameworks", "test_va_onehot", "test_va_pinned", "test_routes", "test_thin_intervals",
})


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = getattr(item, "module", None)   # doctest items have none
        if module is not None and module.__name__.rpartition(".")[2] in NUMERICS_MODULES:
            item.add_marker(pytest.mark.numerics)


@pytest.fixture(scope="module")
def client():
    """A dask.distributed client on a LocalCluster of 2 worker processes on loopback, one per
    test module that asks for it (skipped without the [distributed] extra)."""
    distributed = pytest.importorskip("distributed", reason="the [distributed] extra is not installed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=":0", silence_logs=40)
    # ":0": the scheduler's HTTP server on a free port; with None it still tries 8787 and warns
    # when another cluster holds it (a second audit on the machine, a test run beside one)
    cl = distributed.Client(cluster)
    yield cl
    cl.close()
    cluster.close()

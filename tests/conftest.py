"""Shared test configuration: hypothesis profiles and the tolerance table."""

from __future__ import annotations

import os

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
    "test_auto", "test_bnb", "test_certified", "test_cls", "test_degenerate", "test_differential", "test_exact", "test_kernels",
    "test_project", "test_properties", "test_ranges", "test_relax", "test_reliability", "test_reproducible",
    "test_sets", "test_sets_scale", "test_theory", "test_va_model_attack", "test_va_prior", "test_va_threats",
})


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        module = getattr(item, "module", None)   # doctest items have none
        if module is not None and module.__name__.rpartition(".")[2] in NUMERICS_MODULES:
            item.add_marker(pytest.mark.numerics)

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

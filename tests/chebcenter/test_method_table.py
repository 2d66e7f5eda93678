"""The one method table: what each ``MethodSpec`` declares is what the library does.

BoxSlice's methods, the general sets' methods, the warm-up steps and the docs' table are
derived from ``chebcenter.methods.TABLE``; each test here checks one derivation against
behaviour (a call accepted or refused, a kernel that exists, the page's text), not against
the table's own output alone.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import chebcenter as cc
from chebcenter import _warmup
from chebcenter.methods import (
    REGISTRY,
    ROWS,
    SET_KINDS,
    SOLVERS,
    TABLE,
    MethodSpec,
    SetRoute,
    WarmupStep,
    method_table,
    set_methods,
    warmup_steps,
)

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "chebcenter.md"


def test_the_docs_print_the_table_that_python_m_chebcenter_methods_prints():
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(r"<!-- method table: .*? -->\n(.*?)\n<!-- end of the method table -->", text, re.S)
    assert found, "docs/chebcenter.md lost its method table markers"
    assert found.group(1) == method_table(), "regenerate it: python -m chebcenter methods"
    assert len(found.group(1).splitlines()) == len(TABLE) + 2   # the header, its rule, a row per method


def test_box_slice_methods_are_the_table_rows_that_serve_rows():
    assert cc.METHODS == tuple(s.name for s in TABLE if s.rows and s.estimates)
    P = cc.BoxSlice([[1.0, 1.0]])
    for spec in TABLE:
        if spec.name in cc.METHODS:
            assert P.center([1.0], spec.name).status.ok
        elif spec.estimates:   # a method of the general sets only is refused, by name
            with pytest.raises(cc.InvalidInputError, match="method"):
                P.center([1.0], spec.name)


@pytest.mark.parametrize("kind, cls", [("polytope", cc.Polytope), ("quadratic", cc.QuadraticSet)])
def test_general_set_methods_come_from_the_table(kind, cls):
    # a polytope reduces to a box slice with interval rows: their estimators serve it too
    assert cls.METHODS == tuple(s.name for s in TABLE
                                if kind in s.sets or (kind == "polytope" and "interval" in s.rows and s.estimates))
    assert set(set_methods(kind)) == set(cls.METHODS)


def _unit_square():
    return cc.Polytope(np.vstack([np.eye(2), -np.eye(2)]), np.ones(4))


def test_every_polytope_method_answers_and_the_others_are_refused_by_name():
    """[-1, 1]^2: every estimator's center is 0 and its radius sqrt 2 (the box's own
    half-diagonal, which is the minimax radius), the closed forms' within the bounding box's
    widening (1e-6 of its width 2, plus 1e-9: 2e-6 relative, so 3e-6 holds it); exact's to
    rounding; the inscribed ball's radius is 1."""
    S = _unit_square()
    assert {"exact", "rcc1", "rcc2", "cls", "half", "auto", "inscribed"} <= set(cc.Polytope.METHODS)
    for name in cc.Polytope.METHODS:
        r = S.center(name)
        want = 1.0 if name == "inscribed" else np.sqrt(2.0)
        tol = 1e-12 if name in ("exact", "auto", "inscribed") else 3e-6
        assert r.status.ok and np.allclose(r.center, 0.0, atol=1e-9), name
        assert want * (1 - 1e-12) <= r.radius <= want * (1 + tol), name
    for name in ("ranges", "nope"):
        with pytest.raises(cc.InvalidInputError, match="method"):
            S.center(name)
    ball = cc.QuadraticSet([np.eye(2)], [[0.0, 0.0]], [-1.0])
    with pytest.raises(cc.InvalidInputError, match="NP-hard"):
        ball.center("exact")


@pytest.mark.parametrize("spec", [s for s in TABLE if s.solvers], ids=lambda s: s.name)
def test_each_solver_option_takes_exactly_the_declared_solvers_of_the_one_vocabulary(spec):
    assert set(spec.solvers) <= set(SOLVERS) and "auto" in spec.solvers
    assert spec.options["solver"] == "auto"   # one default for every method
    check = spec.validators["solver"]
    for value in SOLVERS:
        if value in spec.solvers:
            assert check("solver", value) in spec.solvers
        else:
            with pytest.raises(cc.InvalidInputError, match="solver"):
                check("solver", value)


def test_set_routes_take_the_vocabulary_too():
    for spec in TABLE:
        for route in spec.sets.values():
            if "solver" in route.options:
                assert set(route.solvers) <= set(SOLVERS) and route.options["solver"] == "auto"
    S = cc.QuadraticSet([np.eye(2)], [[0.0, 0.0]], [-1.0])   # the unit disc
    a, c = S.center("rcc1", solver="auto"), S.center("rcc1", solver="clarabel")
    assert a.radius == c.radius   # auto is clarabel on a quadratic set: the same solver, the same bytes in
    with pytest.raises(cc.InvalidInputError, match="solver"):
        S.center("rcc1", solver="numba")
    # a polytope is a box slice: the box slices' rcc1 solvers, numba among them
    assert _unit_square().center("rcc1", solver="numba").status is cc.Status.OPTIMAL


def test_a_spec_that_breaks_the_vocabulary_is_refused_when_declared():
    f = lambda ctx: None  # noqa: E731
    with pytest.raises(ValueError, match="solvers"):
        MethodSpec("x", f, lies_in="S_F", certifies="-", options={"solver": "auto"}, solvers=("auto", "gurobi"))
    with pytest.raises(ValueError, match="declares its solvers"):
        MethodSpec("x", f, lies_in="S_F", certifies="-", options={"solver": "auto"})
    with pytest.raises(ValueError, match="default"):
        MethodSpec("x", f, lies_in="S_F", certifies="-", options={"solver": "numba"}, solvers=("auto", "scs"))
    with pytest.raises(ValueError, match="rows"):
        MethodSpec("x", f, lies_in="S_F", certifies="-", rows=("equality", "ellipsoid"))
    with pytest.raises(ValueError, match="sets"):
        MethodSpec("x", f, lies_in="S_F", certifies="-", sets={"zonotope": SetRoute(f)})
    with pytest.raises(ValueError, match="rows"):
        WarmupStep("x", rows="zonotope")
    assert MethodSpec("x", None, lies_in="S_F", certifies="-").rows == ()   # no function: no rows


def test_the_warmup_steps_are_the_tables():
    declared = [step.name for _, step in warmup_steps()]
    assert _warmup.STEPS == tuple(declared) and len(set(declared)) == len(declared)
    assert _warmup.ORDER == tuple(step.name for spec in TABLE for step in spec.warmup if step.always)
    for name in REGISTRY:   # every estimator has a step its first use compiles
        assert any(step.always for step in REGISTRY[name].warmup), name


def test_every_declared_kernel_is_a_compiled_kernel():
    kernels = _warmup._step_kernels()
    assert set(kernels) == set(_warmup.STEPS)
    for step, found in kernels.items():
        for k in found:
            assert hasattr(k, "py_func") and hasattr(k, "_cache"), f"{step}: {k!r} is not a cached numba kernel"


def test_every_declared_problem_is_built_and_its_rows_are_solvable():
    rng = np.random.default_rng(0)
    names = {p for _, step in warmup_steps() for p in step.problems}
    for name in names:
        S, B, noise = _warmup._problem(name, rng, 3, 8)
        if B is None:
            assert isinstance(S, cc.QuadraticSet)
        else:
            assert isinstance(S, cc.BoxSlice) and B.shape[1] == S.m and noise > 0
    with pytest.raises(ValueError, match="problem"):
        _warmup._problem("nope", rng, 3, 8)


def test_the_row_kinds_and_set_kinds_are_the_documented_ones():
    assert ROWS == ("equality", "interval") and SET_KINDS == ("polytope", "quadratic")
    for spec in TABLE:
        for step in spec.warmup:
            if step.rows == "interval":
                assert "interval" in spec.rows
            elif step.rows in SET_KINDS:
                assert step.rows in spec.sets

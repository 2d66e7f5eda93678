"""Both packages follow the layers of docs/architecture.md: no module imports from a layer
above its own, counting imports inside functions and under ``TYPE_CHECKING``; and the default
audit, followed call by call from the CLI to the report, goes down the layers.

The graph is read from the source (``ast``), not from ``sys.modules``, so an import that
only runs on some path still counts.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: chebcenter, bottom to top; a module belongs to the first prefix it matches (longest first)
CHEBCENTER_LAYERS = (
    ("chebcenter._errors", "chebcenter._core", "chebcenter.kernels.jit", "chebcenter.kernels.parallel",
     "chebcenter.results"),
    ("chebcenter._core.validate",),
    ("chebcenter.kernels", "chebcenter._core.cvxpy_forms"),
    ("chebcenter._core.normalised", "chebcenter._core.lifting"),
    ("chebcenter.methods",),
    ("chebcenter.methods.dispatch",),
    ("chebcenter.sets",),
    ("chebcenter.theory", "chebcenter.distributed", "chebcenter._warmup"),
    ("chebcenter", "chebcenter.cli", "chebcenter.bench", "chebcenter.__main__"),
)

#: vflattack, bottom to top (docs/architecture.md)
VFLATTACK_LAYERS = (
    ("vflattack._errors",),
    ("vflattack._validate",),
    ("vflattack.links",),
    ("vflattack.datasets", "vflattack.model", "vflattack.estimator"),
    ("vflattack.system", "vflattack.release", "vflattack.outputs"),
    ("vflattack.attacks",),
    ("vflattack.audit",),
    ("vflattack.report",),
    ("vflattack", "vflattack.api", "vflattack.cli", "vflattack.bench", "vflattack.__main__"),
)


def _module_name(path: pathlib.Path, root: pathlib.Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: pathlib.Path, root: pathlib.Path = ROOT) -> set[str]:
    """Every module named by an import statement anywhere in the file (absolute names)."""
    name = _module_name(path, root)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if node.module or not node.level:
                found.add(target)
            # "from . import sets" names the module chebcenter.sets, not the package
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def layer_of(module: str, layers) -> int | None:
    best, best_len = None, -1
    for k, prefixes in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = k, len(prefix)
    return best


def upward_edges(package: str, layers, root: pathlib.Path = ROOT) -> list[str]:
    bad = []
    for path in sorted((root / package).rglob("*.py")):
        src = _module_name(path, root)
        here = layer_of(src, layers)
        assert here is not None, f"{src} has no layer: add it to the table and to docs/architecture.md"
        for target in sorted(imports_of(path, root)):
            if not target.startswith(package):
                continue
            there = layer_of(target, layers)
            if there is not None and there > here:
                bad.append(f"{src} (layer {here}) imports {target} (layer {there})")
    return bad


def test_the_walker_finds_relative_function_level_and_type_checking_imports(tmp_path):
    """The walker itself, on a made-up package with each kind of import."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import top\n")
    (pkg / "low.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .top import T\n")
    (pkg / "top.py").write_text("def f():\n    from .sub import helper\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "helper.py").write_text("from .. import low\n")
    layers = (("pkg.low", "pkg.sub"), ("pkg.top",), ("pkg",))
    assert imports_of(pkg / "top.py", tmp_path) >= {"pkg.sub", "pkg.sub.helper"}
    helper = imports_of(pkg / "sub" / "helper.py", tmp_path)
    assert "pkg.low" in helper and "pkg" not in helper
    assert upward_edges("pkg", layers, tmp_path) == ["pkg.low (layer 0) imports pkg.top (layer 1)",
                                           "pkg.low (layer 0) imports pkg.top.T (layer 1)"]


def test_chebcenter_imports_only_downward():
    assert upward_edges("chebcenter", CHEBCENTER_LAYERS) == []


def test_vflattack_imports_only_downward():
    assert upward_edges("vflattack", VFLATTACK_LAYERS) == []


def test_the_default_audit_goes_down_the_layers(tmp_path):
    """Follow ``vflattack audit --out DIR`` call by call (``sys.setprofile``): every call
    between vflattack modules goes to the caller's layer or below, callbacks included; the top
    layer enters each room once, in layer order (checks, release, audit, report); the top
    layer (the CLI and the typed audit it calls) hands the computation to the audit layer once; the audit never calls the report layer
    and the report layer calls nothing that computes (audit, attacks, system)."""
    import sys

    from vflattack.cli import main

    calls = []

    def profile(frame, event, arg):
        if event == "call":
            callee = frame.f_globals.get("__name__", "")
            caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
            if callee.startswith("vflattack") and caller.startswith("vflattack") and caller != callee:
                calls.append((caller, callee, frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        code = main(["audit", "--predictions", "30", "--no-progress", "--compile-jobs", "1",
                     "--out", str(tmp_path / "report")])
    finally:
        sys.setprofile(None)
    assert code == 0
    layer = {m: layer_of(m, VFLATTACK_LAYERS) for c in calls for m in c[:2]}
    assert not [c for c in calls if layer[c[1]] > layer[c[0]]], "a call goes up the layers"
    unit = {m: m.split(".")[1] if m.count(".") else m for m in layer}
    top = ("vflattack.cli", "vflattack.api")   # the CLI builds an AuditConfig, vflattack.api.audit runs it
    from_top = [(unit[b], f) for a, b, f in calls if a in top and unit[b] == "audit"]
    assert from_top == [("audit", "run_audit")]
    # the rooms the top layer enters, in call order: each once, parse -> run -> render (the
    # argument checks, what a --release names, the audit, the report)
    rooms = [unit[b] for a, b, _ in calls if a in top and b not in top]
    entered = [r for k, r in enumerate(rooms) if k == 0 or r != rooms[k - 1]]
    assert entered == ["_validate", "release", "audit", "report"], entered
    order = [layer_of(f"vflattack.{r}", VFLATTACK_LAYERS) for r in entered]
    assert order == sorted(order) and len(set(entered)) == len(entered)   # each once, in layer order
    assert not [c for c in calls if unit[c[0]] == "audit" and unit[c[1]] == "report"]
    assert not [c for c in calls if unit[c[0]] == "report" and unit[c[1]] in ("audit", "attacks", "system")]
    assert {"audit", "attacks", "system", "model", "report"} <= set(unit.values())


def test_chebcenter_keeps_at_most_twelve_modules_at_its_top_level_and_a_layer_for_each_package():
    top = sorted(p.name for p in (ROOT / "chebcenter").glob("*.py"))
    assert len(top) <= 12, top
    packages = sorted(p.parent.name for p in (ROOT / "chebcenter").glob("*/__init__.py"))
    assert packages == ["_core", "bench", "kernels", "methods", "sets"]
    for name in packages:   # each package's modules are in the table (the longest prefix decides)
        for path in (ROOT / "chebcenter" / name).glob("*.py"):
            assert layer_of(_module_name(path, ROOT), CHEBCENTER_LAYERS) is not None, path


@pytest.mark.parametrize("path", sorted((ROOT / "chebcenter").rglob("*.py")), ids=lambda p: p.name)
def test_chebcenter_never_imports_vflattack(path):
    """chebcenter is a standalone library: the privacy layer sits on top of it, never below."""
    assert not any(t == "vflattack" or t.startswith("vflattack.") for t in imports_of(path))

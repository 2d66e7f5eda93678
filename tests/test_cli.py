"""The main job: python -m chebcenter demo."""

from __future__ import annotations

import subprocess
import sys

import chebcenter as cc
from chebcenter.cli import main


def test_demo_prints_every_method(capsys):
    assert main(["demo", "--d", "6", "--m", "2", "--n", "5"]) == 0
    out = capsys.readouterr().out
    for name in cc.METHODS:
        assert f"\n{name} " in out
    assert "OPTIMAL:5" in out


def test_module_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "chebcenter", "demo", "--n", "3", "--methods", "half_star", "exact"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "exact" in proc.stdout and "rcc1" not in proc.stdout.split("\n", 3)[-1].split("exact has")[0]


def test_bad_arguments_exit_with_usage():
    proc = subprocess.run([sys.executable, "-m", "chebcenter", "demo", "--d", "0"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "--d and --n must be >= 1" in proc.stderr

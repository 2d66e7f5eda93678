"""The README's Python blocks run as written (the quickstart stays true)."""

from __future__ import annotations

import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a Python quickstart"
    for code in blocks:
        namespace: dict = {}
        exec(compile(code, str(README), "exec"), namespace)


def test_readme_shows_the_two_commands_first():
    text = README.read_text()
    first_screen = "\n".join(text.splitlines()[:15])
    assert "python -m chebcenter demo" in first_screen
    assert "python -m pytest" in first_screen
    ci = (README.parent / ".ci" / "run").read_text()
    assert 'pip install -e ".[test]"' in ci and "python -m pytest" in ci

"""The README's and the docs' Python blocks run as written (the quickstarts stay true)."""

from __future__ import annotations

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)       # a block that writes files writes them here
    blocks = _blocks(README)
    assert blocks, "the README has a Python quickstart"
    for code in blocks:
        namespace: dict = {}
        exec(compile(code, str(README), "exec"), namespace)


#: the pages with Python blocks (a page without one has nothing to run, and is not a test)
CODE_PAGES = [p for p in PAGES[1:] if _blocks(p)]


def test_the_docs_have_python_examples():
    assert {"vflattack.md", "chebcenter.md"} <= {p.name for p in CODE_PAGES}


@pytest.mark.parametrize("page", CODE_PAGES, ids=lambda p: p.name)
def test_docs_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    blocks = _blocks(page)
    assert blocks
    for code in blocks:
        namespace: dict = {}
        exec(compile(code, str(page), "exec"), namespace)


def test_readme_shows_the_two_commands_first():
    text = README.read_text()
    first_screen = "\n".join(text.splitlines()[:15])
    assert "python -m chebcenter demo" in first_screen
    assert "python -m pytest" in first_screen
    ci = (README.parent / ".ci" / "run").read_text()
    install = re.search(r'pip install -e "[^"]+"', first_screen).group(0)
    assert install in ci and "python -m pytest" in ci     # CI installs exactly as the README says


def test_docs_links_resolve():
    """Every relative Markdown link points at a file, and every #anchor at a heading."""
    def anchors(path):
        out = set()
        for line in path.read_text().splitlines():
            if line.startswith("#"):
                title = line.lstrip("#").strip().lower()
                slug = re.sub(r"[^\w\- ]", "", title).replace(" ", "-")
                out.add(slug)
        return out

    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if target.startswith(("http://", "https://")):
                continue
            file, _, anchor = target.partition("#")
            dest = (page.parent / file).resolve() if file else page
            assert dest.exists(), f"{page.name}: link to missing {target}"
            if anchor and dest.suffix == ".md":
                assert anchor in anchors(dest), f"{page.name}: no heading for #{anchor} in {dest.name}"

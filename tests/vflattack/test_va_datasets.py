"""Loaders against the shared UCI files; the download path against a local server."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import pathlib
import threading
import zipfile

import numpy as np
import pytest

import vflattack as va
from vflattack import datasets

SHARED = pathlib.Path(__file__).resolve().parents[3] / "shared" / "datasets"
needs_shared = pytest.mark.skipif(not SHARED.exists(), reason=f"the project's shared datasets are not at {SHARED}")

SHAPES = {"bank": (41188, 19, 2), "adult": (45222, 14, 2), "satellite": (6435, 36, 6),
          "pendigits": (10992, 16, 10), "grid": (10000, 12, 2),
          "breast_cancer": (569, 30, 2), "digits": (1797, 64, 10), "wine": (178, 13, 3)}


@pytest.mark.parametrize("name", list(SHAPES))
def test_loader_shapes_and_normalisation(name):
    if name in datasets.UCI and not SHARED.exists():
        pytest.skip("shared datasets absent")
    F, y, names = va.datasets.load(name, SHARED, download=False, return_names=True)
    n, f, k = SHAPES[name]
    assert F.shape == (n, f) and y.shape == (n,) and len(set(y.tolist())) == k and len(names) == f
    assert datasets.CLASSES[name] == k   # what the CLI sizes its compile helper by, before loading
    assert F.min() == 0.0 and F.max() == 1.0 and np.all(np.isfinite(F))


@needs_shared
def test_label_leaks_are_dropped():
    _, _, names = va.datasets.load("bank", SHARED, download=False, return_names=True)
    assert "duration" not in names and "age" in names
    _, y, names = va.datasets.load("grid", SHARED, download=False, return_names=True)
    assert "stab" not in names and set(y.tolist()) == {"stable", "unstable"}


@needs_shared
def test_missing_file_without_download_and_bad_checksum(tmp_path):
    with pytest.raises(datasets.DatasetError, match="missing"):
        va.datasets.load("grid", tmp_path, download=False)
    (tmp_path / "grid-stability").mkdir()
    (tmp_path / "grid-stability" / "Data_for_UCI_named.csv").write_text("tau1,stab,stabf\n1,2,stable\n")
    with pytest.raises(datasets.DatasetError, match="does not match its recorded sha256"):
        va.datasets.load("grid", tmp_path)
    with pytest.raises(va.datasets.DatasetError):
        va.datasets.load("grid", tmp_path)
    with pytest.raises(ValueError, match="name must be one of"):
        va.datasets.load("iris")


def _zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


@pytest.fixture
def file_server(tmp_path):
    """A loopback HTTP server over tmp_path/www (bounded: shut down after the test)."""
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@needs_shared
def test_download_from_a_local_server_verifies_and_loads(tmp_path, file_server):
    root, url = file_server
    src = SHARED / "pendigits"
    (root / "81").mkdir()
    (root / "81" / "pen+based+recognition+of+handwritten+digits.zip").write_bytes(
        _zip({n: (src / n).read_bytes() for n in ("pendigits.tra", "pendigits.tes")}))
    data = tmp_path / "data"
    F, y = va.datasets.load("pendigits", data, base_url=url)
    assert F.shape == (10992, 16)
    digest = hashlib.sha256((data / "pendigits" / "pendigits.tra").read_bytes()).hexdigest()
    assert digest == datasets.UCI["pendigits"].files[0].sha256[0]


@needs_shared
def test_download_rejects_a_tampered_archive(tmp_path, file_server):
    root, url = file_server
    (root / "471").mkdir()
    (root / "471" / "electrical+grid+stability+simulated+data.zip").write_bytes(
        _zip({"Data_for_UCI_named.csv": b"tampered"}))
    with pytest.raises(datasets.DatasetError, match="has sha256"):
        va.datasets.fetch("grid", tmp_path / "data", base_url=url)
    assert not (tmp_path / "data" / "grid-stability" / "Data_for_UCI_named.csv").exists()


def test_download_failure_says_what_to_do(tmp_path, file_server):
    _, url = file_server  # serves nothing: 404
    with pytest.raises(datasets.DatasetError, match="could not download 'adult'.*VFLATTACK_DATA"):
        va.datasets.fetch("adult", tmp_path, base_url=url)


@needs_shared
def test_nested_archive_through_a_mocked_opener(tmp_path):
    """Bank ships as bank+marketing.zip > bank-additional.zip > bank-additional/…csv."""
    csv = (SHARED / "bank-marketing" / "bank-additional-full.csv").read_bytes()
    inner = _zip({"bank-additional/bank-additional-full.csv": csv})
    outer = _zip({"bank.zip": b"", "bank-additional.zip": inner})
    seen = []

    def opener(u):
        seen.append(u)
        return io.BytesIO(outer)

    folder = va.datasets.fetch("bank", tmp_path, opener=opener)
    assert seen == [datasets.UCI_BASE + "222/bank+marketing.zip"]
    assert (folder / "bank-additional-full.csv").read_bytes() == csv


def test_data_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("VFLATTACK_DATA", str(tmp_path))
    assert datasets.data_home() == tmp_path
    assert datasets.data_home("/x") == pathlib.Path("/x")

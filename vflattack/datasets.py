"""Datasets of the papers, min-max normalised to [0, 1] per column.

``load(name, data_dir=None)`` returns ``(features, labels)``:

=============== ================================== ========= ======== =========
name            source                             rows      features classes
=============== ================================== ========= ======== =========
bank            UCI 222, bank-additional-full.csv  41,188    19       2
adult           UCI 2, adult.data + adult.test     45,222    14       2
satellite       UCI 146, sat.trn + sat.tst         6,435     36       6
pendigits       UCI 81, pendigits.tra + .tes       10,992    16       10
grid            UCI 471, Data_for_UCI_named.csv    10,000    12       2
breast_cancer   scikit-learn (bundled)             569       30       2
digits          scikit-learn (bundled)             1,797     64       10
wine            scikit-learn (bundled)             178       13       3
=============== ================================== ========= ======== =========

Encoding (the documented way): categorical columns become integer codes of
their categories in sorted order (so each dataset keeps the papers' column
count), then every column is min-max scaled over the whole dataset (constant
columns become 0). Label leaks are dropped: ``duration`` for bank (known only
after the call), ``stab`` for grid (``stabf`` is its sign). Adult rows with a
missing value (``?``) are dropped (30,162 + 15,060 remain); bank keeps
``unknown`` as a category.

Files are read from ``data_dir`` (argument, else the ``VFLATTACK_DATA``
environment variable, else ``~/.cache/vflattack``), laid out as
``<data_dir>/<folder>/<file>`` (the layout of the project's shared datasets).
A missing file is downloaded from the UCI archive and accepted only if its
sha256 matches the recorded one; a present file is verified too
(``verify=False`` skips that).
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import pathlib
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._errors import DatasetError, InvalidInputError

__all__ = ["CLASSES", "DatasetError", "NAMES", "UCI", "load", "minmax", "data_home", "fetch"]

UCI_BASE = "https://archive.ics.uci.edu/static/public/"


@dataclass(frozen=True)
class _File:
    name: str
    sha256: tuple[str, ...]
    member: tuple[str, ...]  # path inside the archive (nested archives: one entry per level)


@dataclass(frozen=True)
class _Source:
    folder: str
    archive: str  # relative to UCI_BASE
    files: tuple[_File, ...]


UCI: dict[str, _Source] = {
    "bank": _Source("bank-marketing", "222/bank+marketing.zip", (
        _File("bank-additional-full.csv",
              ("74adfc578bf77a7ff4bb1ba4a9f8709d9e3c6907342959c2c8416847e0afb4d8",),
              ("bank-additional.zip", "bank-additional/bank-additional-full.csv")),)),
    "adult": _Source("adult", "2/adult.zip", (
        _File("adult.data", ("5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",), ("adult.data",)),
        _File("adult.test", ("a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",), ("adult.test",)))),
    "satellite": _Source("statlog-satellite", "146/statlog+landsat+satellite.zip", (
        _File("sat.trn", ("e896dc88a960fa2404160fc4c3cb3dc53fcf4afd80ba920bf2d261bd42d12613",), ("sat.trn",)),
        # the known copy has CRLF line endings; UCI's original is most likely the LF one
        _File("sat.tst", ("0045be0391420a35a69e8d2b0a4ff4b032a4aa03feebba0d89b9aa3e2d42c212",
                          "4b9167b8a92baafafed7c8809aef86d0683a5e685c19d98d119fa6974f0f2479"), ("sat.tst",)))),
    "pendigits": _Source("pendigits", "81/pen+based+recognition+of+handwritten+digits.zip", (
        _File("pendigits.tra", ("e2b9eb9f0d0467e2b64a4816a3420edf2b8043447576f4b84337aba44a9f97d3",), ("pendigits.tra",)),
        _File("pendigits.tes", ("8bd03229c5c5291fefe43e45465dd948d2645bf23328b9d993e0b777666b2015",), ("pendigits.tes",)))),
    "grid": _Source("grid-stability", "471/electrical+grid+stability+simulated+data.zip", (
        _File("Data_for_UCI_named.csv",
              ("7afc3154fed9cd65258b3403b60381fe6b0d832bf817a1ea4866395d05a84a83",), ("Data_for_UCI_named.csv",)),)),
}
SKLEARN = ("breast_cancer", "digits", "wine")
NAMES = tuple(UCI) + SKLEARN
#: each dataset's number of classes k, known before it is read (what a program sizes ahead
#: of loading, e.g. the audit's compile helper; a test checks it against the loaded labels)
CLASSES = {"bank": 2, "adult": 2, "satellite": 6, "pendigits": 10, "grid": 2,
           "breast_cancer": 2, "digits": 10, "wine": 3}


def data_home(data_dir: Any = None) -> pathlib.Path:
    """The data directory: argument, else ``$VFLATTACK_DATA``, else ``~/.cache/vflattack``."""
    if data_dir is None:
        data_dir = os.environ.get("VFLATTACK_DATA") or pathlib.Path.home() / ".cache" / "vflattack"
    return pathlib.Path(data_dir).expanduser()


def _sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _extract(blob: bytes, member: tuple[str, ...]) -> bytes:
    for part in member:
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            names = zf.namelist()
            match = [n for n in names if n == part or n.endswith("/" + part)]
            if not match:
                raise DatasetError(f"the archive has no member {part!r} (members: {names[:10]})")
            blob = zf.read(match[0])
    return blob


def fetch(name: str, data_dir: Any = None, *, base_url: str | None = None,
          opener: Callable[[str], Any] | None = None) -> pathlib.Path:
    """Download dataset ``name`` from the UCI archive into ``data_dir`` and verify it.

    ``base_url`` (default UCI's) and ``opener`` (default ``urllib.request.urlopen``)
    can be replaced, e.g. by a mirror or a test server. Every file must match
    its recorded sha256 or nothing is written. Returns the dataset folder.
    """
    src = UCI[name]
    folder = data_home(data_dir) / src.folder
    url = (base_url or UCI_BASE).rstrip("/") + "/" + src.archive
    opener = opener or (lambda u: urllib.request.urlopen(u, timeout=60))
    try:
        with opener(url) as resp:
            blob = resp.read()
    except OSError as exc:
        raise DatasetError(
            f"could not download {name!r} from {url} ({exc}); put the files "
            f"{[f.name for f in src.files]} in {folder} or set VFLATTACK_DATA") from exc
    payloads = {}
    for f in src.files:
        data = _extract(blob, f.member)
        digest = hashlib.sha256(data).hexdigest()
        if digest not in f.sha256:
            raise DatasetError(f"{f.name} downloaded from {url} has sha256 {digest}, expected {f.sha256[0]}")
        payloads[f.name] = data
    folder.mkdir(parents=True, exist_ok=True)
    for fname, data in payloads.items():
        (folder / fname).write_bytes(data)
    return folder


def _paths(name: str, data_dir: Any, verify: bool, download: bool, **fetch_kw) -> dict:
    src = UCI[name]
    folder = data_home(data_dir) / src.folder
    missing = [f for f in src.files if not (folder / f.name).exists()]
    if missing:
        if not download:
            raise DatasetError(f"{name!r}: missing {[f.name for f in missing]} in {folder}")
        fetch(name, data_dir, **fetch_kw)
    out = {}
    for f in src.files:
        path = folder / f.name
        if verify and _sha256(path) not in f.sha256:
            raise DatasetError(f"{path} does not match its recorded sha256 {f.sha256[0]} "
                               "(a modified copy?); pass verify=False to use it anyway")
        out[f.name] = path
    return out


def minmax(F: np.ndarray) -> np.ndarray:
    """Min-max scale each column to [0, 1] (constant columns become 0).

    Examples
    --------
    >>> minmax(np.array([[1.0, 5.0], [3.0, 5.0]])).tolist()
    [[0.0, 0.0], [1.0, 0.0]]
    """
    F = np.asarray(F, dtype=np.float64)
    lo, hi = F.min(axis=0), F.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.clip((F - lo) / span, 0.0, 1.0)


def _encode(columns: list[list[str]], categorical: set[int]) -> np.ndarray:
    out = []
    for j, col in enumerate(columns):
        if j in categorical:
            cats = {c: i for i, c in enumerate(sorted(set(col)))}
            out.append(np.array([cats[c] for c in col], dtype=np.float64))
        else:
            out.append(np.array(col, dtype=np.float64))
    return np.column_stack(out)


def _read_csv(path, **kw) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return [row for row in csv.reader(fh, **kw) if row and any(c.strip() for c in row)]


def _bank(p):
    rows = _read_csv(p["bank-additional-full.csv"], delimiter=";")
    header, rows = rows[0], rows[1:]
    drop = header.index("duration")
    label = [r[-1] for r in rows]
    names = [h for i, h in enumerate(header[:-1]) if i != drop]
    cols = [[r[i] for r in rows] for i in range(len(header) - 1) if i != drop]
    categorical = {i for i, col in enumerate(cols) if not _is_number(col[0])}
    return _encode(cols, categorical), np.array(label), names


_ADULT = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
          "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country"]


def _adult(p):
    rows = []
    for key in ("adult.data", "adult.test"):
        for r in _read_csv(p[key], skipinitialspace=True):
            if len(r) != 15 or "?" in r:
                continue  # the test file's first line, and rows with missing values
            rows.append(r[:14] + [r[14].rstrip(".")])
    cols = [[r[i] for r in rows] for i in range(14)]
    categorical = {1, 3, 5, 6, 7, 8, 9, 13}
    return _encode(cols, categorical), np.array([r[14] for r in rows]), list(_ADULT)


def _whitespace(paths, sep=None):
    data = []
    for path in paths:
        with open(path) as fh:
            for line in fh:
                if line.strip():
                    data.append([float(v) for v in (line.split(sep) if sep else line.split())])
    return np.array(data)


def _satellite(p):
    D = _whitespace([p["sat.trn"], p["sat.tst"]])
    return D[:, :-1], D[:, -1].astype(int), [f"band{j}" for j in range(36)]


def _pendigits(p):
    D = _whitespace([p["pendigits.tra"], p["pendigits.tes"]], sep=",")
    return D[:, :-1], D[:, -1].astype(int), [f"{ax}{j}" for j in range(8) for ax in "xy"]


def _grid(p):
    rows = _read_csv(p["Data_for_UCI_named.csv"])
    header, rows = rows[0], rows[1:]
    keep = [i for i, h in enumerate(header) if h not in ("stab", "stabf")]
    F = np.array([[float(r[i]) for i in keep] for r in rows])
    return F, np.array([r[header.index("stabf")] for r in rows]), [header[i] for i in keep]


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


_PARSERS = {"bank": _bank, "adult": _adult, "satellite": _satellite, "pendigits": _pendigits, "grid": _grid}


def load(name: str, data_dir: Any = None, *, normalize: bool = True, verify: bool = True,
         download: bool = True, return_names: bool = False, **fetch_kw):
    """Load a dataset as ``(features, labels)`` (``(features, labels, names)`` with
    ``return_names=True``); features are min-max scaled to [0, 1] unless
    ``normalize=False``. See the module docstring for sources and encoding.

    Examples
    --------
    >>> F, y = load("wine")
    >>> F.shape, float(F.min()), float(F.max()), len(set(y))
    ((178, 13), 0.0, 1.0, 3)
    """
    if name not in NAMES:
        raise InvalidInputError(f"name must be one of {NAMES}; got {name!r}")
    if name in SKLEARN:
        from sklearn import datasets as skd
        bunch = getattr(skd, f"load_{name}")()
        F, y, names = bunch.data.astype(np.float64), bunch.target, [str(n) for n in bunch.feature_names]
    else:
        F, y, names = _PARSERS[name](_paths(name, data_dir, verify, download, **fetch_kw))
    F = minmax(F) if normalize else F
    return (F, y, names) if return_names else (F, y)

"""Report directories written atomically, with a manifest written last.

A report is built in a hidden temporary sibling of its final path and renamed into
place only when every file is written; ``manifest.json`` (each file's size and SHA-256)
is the last file written before the rename. So a directory at the final path is always
a complete report, and an interrupted run (an exception, Ctrl-C) leaves nothing behind
but the previous report, if there was one. A run killed outright (SIGKILL, power loss)
can leave a ``.<name>.partial-*`` sibling, never a report that looks complete.

The final path may be new, an empty directory, or a previous report (a directory
holding our ``manifest.json``), which is replaced. Anything else is refused, so a
report never overwrites a user's files.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator

import chebcenter

from .._validate import MANIFEST
from .._validate import as_out_dir as check_out_dir
from .._validate import is_report as _is_report
from ..datasets import _sha256

__all__ = ["MANIFEST", "check_out_dir", "report_dir", "verify_report", "write_manifest"]



def write_manifest(root: pathlib.Path, extra: dict | None = None) -> pathlib.Path:
    """``manifest.json`` listing every file under ``root`` (path, bytes, sha256)."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.name != MANIFEST)
    payload = {"tool": "vflattack", "version": chebcenter.__version__, "complete": True,
               "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "command": sys.argv[1:],
               **(extra or {}),
               "files": [{"path": p.relative_to(root).as_posix(), "bytes": p.stat().st_size, "sha256": _sha256(p)}
                         for p in files]}
    out = root / MANIFEST
    out.write_text(json.dumps(payload, indent=1))
    return out


@contextlib.contextmanager
def report_dir(final: str | os.PathLike, extra: dict | None = None) -> Iterator[pathlib.Path]:
    """Yield a temporary directory to write a report into; publish it at ``final`` on success.

    On success the manifest is written last and the directory renamed to ``final`` (a
    previous report there is moved aside first and removed after). On any exception,
    KeyboardInterrupt included, the temporary directory is removed and ``final`` is left
    as it was.
    """
    final = check_out_dir(final)
    final.absolute().parent.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=f".{final.name}.partial-", dir=final.absolute().parent))
    try:
        yield tmp
        write_manifest(tmp, extra)
        old = None
        if final.exists():
            old = final.absolute().parent / f".{final.name}.old-{os.getpid()}-{time.monotonic_ns()}"
            os.replace(final, old)
        try:
            os.replace(tmp, final)
        except BaseException:
            if old is not None:
                os.replace(old, final)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def verify_report(path: str | os.PathLike) -> bool:
    """Whether ``path`` holds a complete, unaltered report.

    A report directory ends with ``manifest.json``, written last: every file's path, size
    and SHA-256. The report is complete when the manifest is there and every file it
    lists exists with that SHA-256.

    Parameters
    ----------
    path : str or os.PathLike
        The report directory (``vflattack audit --out DIR``).

    Returns
    -------
    bool
        False for a missing directory, one without a manifest, or a file that is missing
        or changed; never raises for those.

    Examples
    --------
    >>> import vflattack as va
    >>> va.verify_report("no-such-report")
    False
    """
    root = pathlib.Path(path)
    if not _is_report(root):
        return False
    payload = json.loads((root / MANIFEST).read_text())
    return all((root / f["path"]).is_file() and _sha256(root / f["path"]) == f["sha256"] for f in payload["files"])

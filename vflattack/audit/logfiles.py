"""Prediction logs read out of core: partitions that follow the file, and a join by id that
holds neither log in memory.

A Parquet log (a file, or a directory of ``*.parquet`` files) is cut into one partition per
row group, the unit its writer chose; a row group of more than ``block_rows`` rows is cut
into blocks of ``block_rows``. A CSV log is cut into blocks of ``block_rows`` lines, found by
one pass over the file that records byte offsets (the header is read once). A partition is
a small description (:class:`Part`), so a task that reads it on a worker holds that
partition only.

The passive party's log is joined per partition: the worker reads the passive rows whose
``id`` is among the partition's ids, from Parquet one row group at a time (its own rows first
when the logs are aligned; groups whose id statistics miss the partition's range are skipped)
or from CSV in chunks; neither log is ever materialised whole.

A worker reads its partition of a Parquet log as :class:`Columns` (NumPy arrays straight from
pyarrow: :func:`read_columns`, :func:`passive_columns`), never through pandas, which it would
import for nothing (37 MB a worker); :func:`read_part` and :func:`passive_rows` give the same
rows as pandas DataFrames.
"""

from __future__ import annotations

import dataclasses
import io
import pathlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validate import InvalidInputError

__all__ = ["BLOCK_ROWS", "Columns", "Part", "columns_of", "partitions", "passive_columns", "passive_rows", "read_columns",
           "read_part", "read_table", "write_columns"]

#: the most rows a partition holds when the file does not cut it smaller (a row group)
BLOCK_ROWS = 25_000


@dataclass(frozen=True)
class Part:
    """One partition of a log: ``kind`` "parquet" (row group ``group``, batch ``batch`` of
    ``block`` rows in it) or "csv" (``rows`` lines from byte ``offset``, ``nbytes`` long);
    ``start`` is its first row's position in the whole log (its files in order)."""

    kind: str
    file: str
    rows: int
    group: int = 0
    batch: int = 0
    block: int = 0
    offset: int = 0
    nbytes: int = 0
    start: int = 0


class Columns:
    """Named columns of equal length as NumPy arrays: a partition as a worker holds it.

    ``Columns.of(table)`` takes a pyarrow Table or RecordBatch (nulls become NaN in numeric
    columns, None in text ones, as pandas reads them) or a pandas DataFrame. ``frame[name]``
    is a column, ``name in frame`` and ``frame.columns`` as in pandas; :meth:`matrix` stacks
    columns as floats; :meth:`left_join` adds another table's columns by ``id``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> c = Columns.of(pa.table({"id": [3, 1], "x0": [0.5, None]}))
    >>> c.columns, len(c), c.matrix(["x0"]).ravel().tolist()
    (['id', 'x0'], 2, [0.5, nan])
    """

    def __init__(self, data: dict) -> None:
        self.data = {k: np.asarray(v) for k, v in data.items()}
        sizes = {v.shape[0] for v in self.data.values()}
        if len(sizes) > 1:
            raise ValueError(f"columns of different lengths: {sorted(sizes)}")
        self._n = sizes.pop() if sizes else 0

    @classmethod
    def of(cls, table: Any) -> Columns:
        """The columns of a pyarrow Table or RecordBatch, or of a pandas DataFrame (Columns: itself)."""
        if isinstance(table, Columns):
            return table
        if hasattr(table, "schema") and hasattr(table, "column"):   # pyarrow
            return cls({name: _numpy_of(table.column(i)) for i, name in enumerate(table.schema.names)})
        return cls({name: table[name].to_numpy() for name in table.columns})

    @property
    def columns(self) -> list[str]:
        return list(self.data)

    def __len__(self) -> int:
        return self._n

    def __contains__(self, name: object) -> bool:
        return name in self.data

    def __getitem__(self, name: str) -> np.ndarray:
        return self.data[name]

    def matrix(self, names: list[str]) -> np.ndarray:
        """The columns ``names`` as an (n, len(names)) float array."""
        if not names:
            return np.empty((self._n, 0))
        return np.column_stack([np.asarray(self.data[c], dtype=float) for c in names])

    def head(self, n: int) -> Columns:
        return Columns({k: v[:n] for k, v in self.data.items()})

    def take(self, rows: np.ndarray) -> Columns:
        """The rows ``rows`` (a boolean mask or indices)."""
        return Columns({k: v[rows] for k, v in self.data.items()})

    @staticmethod
    def concat(parts: list[Columns], names: list[str]) -> Columns:
        """The rows of ``parts`` one after another (columns ``names``; none: empty columns)."""
        if not parts:
            return Columns({c: np.empty(0) for c in names})
        return Columns({c: np.concatenate([p[c] for p in parts]) for c in names})

    def left_join(self, other: Columns, where: str) -> Columns:
        """These rows, in order, with ``other``'s columns beside them, matched on ``id``: NaN (or
        None, for text) where ``other`` has no row of that id. ``other``'s ids must be unique
        (``where`` names it in the error), and of the same kind as these (numbers or text)."""
        left, right = np.asarray(self.data["id"]), np.asarray(other["id"])
        if len(right) and len(left):
            _same_kind(left.dtype.kind in "biuf", right.dtype.kind in "biuf", where)
        left, right, usable_l, usable_r = _join_keys(left, right)
        # a null id (None in text, NaN in numbers) joins nothing, as it names no record
        keep_r = np.flatnonzero(usable_r)
        order = keep_r[np.argsort(right[keep_r], kind="stable")]
        ranked = right[order]
        twice = np.flatnonzero(ranked[1:] == ranked[:-1]) if ranked.size > 1 else np.zeros(0, dtype=np.int64)
        if twice.size:
            raise InvalidInputError(f"{where} holds the id {ranked[twice[:1]].tolist()[0]!r} more than once: "
                                    "a prediction's passive row must be unique")
        named = np.flatnonzero(usable_l)
        at = np.minimum(np.searchsorted(ranked, left[named]), max(ranked.size - 1, 0))
        hit = np.zeros(left.size, dtype=bool)
        if ranked.size:
            hit[named] = ranked[at] == left[named]
        rows = order[at[hit[named]]]
        out = dict(self.data)
        for name, col in other.data.items():
            if name == "id":
                continue
            full = np.full(left.size, np.nan) if col.dtype.kind in "biuf" else np.full(left.size, None, dtype=object)
            full[hit] = col[rows]
            out[name] = full
        return Columns(out)


#: the fixed-width Arrow types read straight from their buffers, by name (pyarrow's own
#: conversions, ``to_numpy`` and ``pa.array``, import pandas on their first use)
_FIXED = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
          "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "halffloat": np.float16,
          "float": np.float32, "double": np.float64}


def _valid(buf, offset: int, n: int) -> np.ndarray | None:
    """An Arrow validity bitmap as booleans (None: every entry valid)."""
    if buf is None:
        return None
    return np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")[offset:offset + n].astype(bool)


def _numpy_of(arr) -> np.ndarray:
    """A pyarrow Array or ChunkedArray as NumPy, as pandas reads it (a number column with nulls
    as floats with NaN; text and every other type as an object array, None for null), without
    importing pandas."""
    if hasattr(arr, "chunks"):   # one array: a chunk with nulls and one without read alike
        arr = arr.combine_chunks()
    n, offset, name = len(arr), arr.offset, str(arr.type)
    if name in _FIXED:
        bufs = arr.buffers()
        values = np.frombuffer(bufs[1], dtype=_FIXED[name])[offset:offset + n] if n else np.empty(0, _FIXED[name])
        valid = _valid(bufs[0], offset, n) if arr.null_count else None
        if valid is None:
            return values.copy()
        out = values.astype(np.float64)
        out[~valid] = np.nan
        return out
    if name == "bool":   # bit-packed; with nulls an object array, as pandas reads it
        bufs = arr.buffers()
        values = _valid(bufs[1], offset, n)
        valid = _valid(bufs[0], offset, n) if arr.null_count else None
        if valid is None:
            return values
        out = values.astype(object)
        out[~valid] = None
        return out
    return np.array(arr.to_pylist() + [None], dtype=object)[:-1]   # [None]: never a 2-D array of lists


def _arrow_of(values: np.ndarray):
    """A NumPy column as a pyarrow Array, as pandas writes it (NaN as null in a float column;
    text as UTF-8 strings and bytes as binary, None or NaN as null; other objects as pyarrow
    infers them), without importing pandas for numbers, text or bytes."""
    import pyarrow as pa

    values = np.asarray(values)
    n = values.shape[0]
    if values.dtype.kind == "b":
        return pa.Array.from_buffers(pa.bool_(), n, [None, pa.py_buffer(np.packbits(values, bitorder="little"))])
    if values.dtype.kind in "iuf":   # pa.int64(), pa.float64(), ...: the same names as NumPy's
        data = np.ascontiguousarray(values, dtype=values.dtype.newbyteorder("="))   # Arrow's buffers are native
        nan = np.isnan(data) if data.dtype.kind == "f" else None
        valid = pa.py_buffer(np.packbits(~nan, bitorder="little")) if nan is not None and nan.any() else None
        return pa.Array.from_buffers(getattr(pa, data.dtype.name)(), n, [valid, pa.py_buffer(data)])
    if values.dtype.kind == "U":   # NumPy text (the statuses): no null, sorted in C
        nulls = np.zeros(n, dtype=bool)
        distinct, which = np.unique(values, return_inverse=True)
        distinct = distinct.tolist()
    else:
        values = values.astype(object)
        nulls = _null(values)
        present = values[~nulls]
        filled = values.copy()
        filled[nulls] = present[0] if present.size else ""
        try:   # each distinct value encoded once (a status column holds a handful in thousands of rows)
            distinct, which = np.unique(filled, return_inverse=True)
        except TypeError:   # values of several types
            distinct = None
    if distinct is not None and all(isinstance(t, str) for t in distinct):
        kind, encoded = pa.string(), [t.encode() for t in distinct]
    elif distinct is not None and all(isinstance(t, bytes) for t in distinct):
        kind, encoded = pa.binary(), list(distinct)
    else:   # dates, decimals, ...: pyarrow infers their type (and may import pandas for it)
        return pa.array(list(np.where(nulls, None, values)))
    lengths = np.array([len(t) for t in encoded], dtype=np.int32)[which]
    lengths[nulls] = 0
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    valid = pa.py_buffer(np.packbits(~nulls, bitorder="little")) if nulls.any() else None
    data = pa.py_buffer(b"".join(np.array(encoded + [b""], dtype=object)[:-1][which[~nulls]]))
    return pa.Array.from_buffers(kind, n, [valid, pa.py_buffer(offsets), data])


def write_columns(columns: dict, path: Any) -> None:
    """Named NumPy columns of equal length as one Parquet file, as pandas' ``to_parquet`` writes
    them (:func:`_arrow_of`: NaN and None as null, text as strings), with pyarrow alone.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "part.parquet"
    >>> write_columns({"id": np.array([1, 2]), "x0": np.array([0.5, np.nan]),
    ...                "status": np.array(["OPTIMAL", "INFEASIBLE"])}, path)
    >>> back = read_columns(partitions(path)[0], ["id", "x0", "status"])
    >>> back["x0"].tolist(), back["status"].tolist()
    ([0.5, nan], ['OPTIMAL', 'INFEASIBLE'])
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = list(columns)
    pq.write_table(pa.Table.from_arrays([_arrow_of(columns[k]) for k in names], names=names), str(path))


def _same_kind(left_numeric: bool, right_numeric: bool, where: str) -> None:
    """Refuse to join ids of different kinds (numbers against text), naming ``where``."""
    if left_numeric != right_numeric:
        kinds = ["numbers" if k else "text" for k in (left_numeric, right_numeric)]
        raise InvalidInputError(f"the prediction log's ids are {kinds[0]} and {where}'s {kinds[1]}: "
                                "they cannot be joined")


def _join_keys(left: np.ndarray, right: np.ndarray) -> tuple:
    """``(left, right, usable_left, usable_right)``: the ids as keys NumPy compares exactly, and
    where each side holds an id that can match. A null never matches; signed against unsigned
    integers compare as unsigned, a negative id matching nothing (NumPy would compare them as
    float64, which merges distinct ids past 2^53)."""
    usable_l, usable_r = ~_null(left), ~_null(right)
    kinds = {left.dtype.kind, right.dtype.kind}
    if kinds == {"i", "u"}:
        if left.dtype.kind == "i":
            usable_l &= left >= 0
        else:
            usable_r &= right >= 0
        left, right = left.astype(np.uint64), right.astype(np.uint64)
    return left, right, usable_l, usable_r


def _isin(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Where ``values`` is one of ``ids``, compared as the join compares them (:func:`_join_keys`)."""
    a, b, usable_a, usable_b = _join_keys(np.asarray(values), np.asarray(ids))
    return usable_a & np.isin(a, b[usable_b])


def _null(ids: np.ndarray) -> np.ndarray:
    """Where ``ids`` hold no id: None (text) or NaN (numbers)."""
    if ids.dtype.kind == "f":
        return np.isnan(ids)
    if ids.dtype.kind == "O":   # None, or NaN (the one value unequal to itself), elementwise
        return np.equal(ids, None) | (ids != ids)
    return np.zeros(ids.shape, dtype=bool)


def _files(path: Any) -> tuple[str, list[pathlib.Path]]:
    p = pathlib.Path(path)
    if not p.exists():
        raise InvalidInputError(f"log {str(path)!r} does not exist")
    if p.is_dir():
        pq_files = sorted(f for f in p.rglob("*.parquet") if f.is_file())
        csv_files = sorted(f for f in p.rglob("*.csv") if f.is_file())
        if not (pq_files or csv_files):
            raise InvalidInputError(f"log {str(path)!r} is a directory with no .parquet or .csv file")
        return ("parquet", pq_files) if pq_files else ("csv", csv_files)
    return ("csv" if p.suffix == ".csv" else "parquet"), [p]


def read_table(path: Any):
    """The whole log at ``path`` (Parquet file or directory, or CSV) as a pandas DataFrame."""
    import pandas as pd

    kind, files = _files(path)
    try:
        frames = [pd.read_parquet(f) if kind == "parquet" else pd.read_csv(f) for f in files]
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"log {str(path)!r} cannot be read: {exc}") from None
    return pd.concat(frames, ignore_index=True)


def columns_of(path: Any) -> list[str]:
    """The column names of a log (its first file's schema or header)."""
    kind, files = _files(path)
    if kind == "parquet":
        import pyarrow.parquet as pq

        return list(pq.ParquetFile(files[0]).schema_arrow.names)
    with open(files[0], "rb") as fh:
        return [c.strip() for c in fh.readline().decode().strip().split(",")]


def partitions(path: Any, block_rows: int = BLOCK_ROWS) -> list[Part]:
    """The partitions of the log at ``path`` (module docstring): one per Parquet row group of at
    most ``block_rows`` rows (a larger group gives ``ceil(rows / block_rows)``), or blocks of
    ``block_rows`` CSV lines. Raises InvalidInputError for a missing path or a bad ``block_rows``.

    Examples
    --------
    >>> import tempfile, pathlib, pandas as pd
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> pd.DataFrame({"id": range(250), "p0": 0.5}).to_csv(path, index=False)
    >>> [p.rows for p in partitions(path, block_rows=100)]
    [100, 100, 50]
    >>> read_part(partitions(path, block_rows=100)[2], ["id"])["id"].iloc[0]
    np.int64(200)
    """
    if isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1:
        raise InvalidInputError(f"block_rows must be a positive integer; got {block_rows!r}")
    kind, files = _files(path)
    parts = []
    for f in files:
        if kind == "parquet":
            import pyarrow.parquet as pq

            meta = pq.ParquetFile(f).metadata
            for g in range(meta.num_row_groups):
                n = meta.row_group(g).num_rows
                for b in range(max(1, -(-n // block_rows))):
                    parts.append(Part("parquet", str(f), min(block_rows, n - b * block_rows), group=g, batch=b,
                                      block=block_rows))
        else:
            parts += _csv_blocks(f, block_rows)
    parts = [p for p in parts if p.rows > 0]
    starts = np.cumsum([0] + [p.rows for p in parts[:-1]])
    return [dataclasses.replace(p, start=int(s)) for p, s in zip(parts, starts)]


def _csv_blocks(f: pathlib.Path, block_rows: int) -> list[Part]:
    parts = []
    with open(f, "rb") as fh:
        fh.readline()
        start, rows = fh.tell(), 0
        for line in iter(fh.readline, b""):
            if line.strip():
                rows += 1
            if rows == block_rows:
                end = fh.tell()
                parts.append(Part("csv", str(f), rows, offset=start, nbytes=end - start))
                start, rows = end, 0
        if rows:
            parts.append(Part("csv", str(f), rows, offset=start, nbytes=fh.tell() - start))
    return parts


def _read(part: Part, columns: list[str]):
    """The partition ``part``'s ``columns``: a pyarrow RecordBatch (Parquet) or a pandas
    DataFrame (CSV, read by pandas as a whole log is)."""
    if part.kind == "parquet":
        import pyarrow.parquet as pq

        pf = pq.ParquetFile(part.file)
        for b, batch in enumerate(pf.iter_batches(batch_size=part.block, row_groups=[part.group], columns=columns)):
            if b == part.batch:
                return batch
        raise InvalidInputError(f"log {part.file!r} changed while it was audited (row group {part.group})")
    import pandas as pd

    with open(part.file, "rb") as fh:
        header = fh.readline()
        fh.seek(part.offset)
        chunk = fh.read(part.nbytes)
    return pd.read_csv(io.BytesIO(header + chunk), usecols=columns)[columns]


def read_part(part: Part, columns: list[str]):
    """The partition ``part`` as a pandas DataFrame of ``columns``."""
    got = _read(part, columns)
    return got.to_pandas() if hasattr(got, "to_pandas") else got


def read_columns(part: Part, columns: list[str]) -> Columns:
    """The partition ``part``'s ``columns`` as :class:`Columns` (a Parquet log is read without
    pandas: :func:`write_columns` has an example)."""
    return Columns.of(_read(part, columns))


def _aligned_rows(files, ids, want, part):
    """The passive rows at the partition's own position (rows ``part.start`` to ``part.start
    + part.rows`` of the passive log, its files in order), if they hold every id of ``ids``;
    else None. Logs written side by side, one line per prediction, are aligned so, and then
    a partition reads one row group of the passive log instead of every group whose id
    range overlaps (with ids in random order, all of them: at 10^7 rows, 400
    partitions times 100 groups)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if part is None or part.kind != "parquet":
        return None
    start, stop = part.start, part.start + part.rows
    tables, first = [], 0
    for f in files:
        pf = pq.ParquetFile(f)
        for g in range(pf.metadata.num_row_groups):
            n = pf.metadata.row_group(g).num_rows
            if first < stop and first + n > start:
                t = pf.read_row_group(g, columns=want, use_threads=False)
                tables.append(t.slice(max(0, start - first), min(n, stop - first) - max(0, start - first)))
            first += n
            if first >= stop:
                break
        if first >= stop:
            break
    if not tables:
        return None
    got = Columns.of(pa.concat_tables(tables))
    keep = _isin(got["id"], ids)
    if keep.sum() < np.unique(ids).size:
        return None
    return got.take(keep)


def _parquet_rows(files, ids, want, part=None):
    """:func:`passive_rows` on Parquet files: the rows at the partition's own position if
    they hold every id (:func:`_aligned_rows`); else only the row groups whose ``id``
    statistics overlap ``[min(ids), max(ids)]`` are read (all of them where a group has
    none), one at a time, each filtered to ``ids`` before the next. A pyarrow dataset scan
    with the same filter read ahead and held 190 MB for 1 000 ids of a 10^6-row passive log.
    Returns :class:`Columns`."""
    import pyarrow.parquet as pq

    aligned = _aligned_rows(files, ids, want, part)
    if aligned is not None:
        return aligned
    lo, hi = ids[[ids.argmin(), ids.argmax()]].tolist()   # Python numbers: exact against the statistics
    out = []
    for f in files:
        pf = pq.ParquetFile(f)
        col = pf.schema_arrow.get_field_index("id")
        for g in range(pf.metadata.num_row_groups):
            stats = pf.metadata.row_group(g).column(col).statistics
            if stats is not None and stats.has_min_max and (stats.max < lo or stats.min > hi):
                continue
            group = Columns.of(pf.read_row_group(g, columns=want, use_threads=False))
            out.append(group.take(_isin(group["id"], ids)))
    return Columns.concat(out, want)


def passive_rows(path: Any, ids, columns: list[str], part: Part | None = None):
    """The rows of the passive log at ``path`` whose ``id`` is in ``ids``: ``id`` and
    ``columns``, as a pandas DataFrame. ``part``: the prediction-log partition the ids come
    from; its rows of the passive log are tried first (logs written side by side are aligned)."""
    import pandas as pd

    return pd.DataFrame(passive_columns(path, ids, columns, part).data)


def passive_columns(path: Any, ids, columns: list[str], part: Part | None = None) -> Columns:
    """:func:`passive_rows` as :class:`Columns` (a Parquet passive log is read without pandas;
    a CSV one with pandas, in chunks). Null ids are dropped from ``ids`` (they join nothing);
    ids of another kind than the passive log's (numbers against text) raise InvalidInputError.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np, pyarrow as pa, pyarrow.parquet as pq
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "passive.parquet"
    >>> pq.write_table(pa.table({"id": [5, 7, 9], "x0": [0.5, 0.7, 0.9]}), path)
    >>> rows = passive_columns(path, np.array([9, 5]), ["x0"])
    >>> sorted(zip(rows["id"].tolist(), rows["x0"].tolist()))
    [(5, 0.5), (9, 0.9)]
    """
    kind, files = _files(path)
    ids = np.asarray(ids)
    ids = ids[~_null(ids)]   # a null id joins nothing (Columns.left_join)
    want = ["id"] + columns
    if ids.size == 0:
        return Columns.concat([], want)
    if kind == "parquet":
        import pyarrow.parquet as pq
        import pyarrow.types as pt

        t = pq.ParquetFile(files[0]).schema_arrow.field("id").type
        _same_kind(ids.dtype.kind in "biuf", pt.is_integer(t) or pt.is_floating(t), "the passive log")
        return _parquet_rows(files, ids, want, part)
    import pandas as pd

    out = []
    for f in files:
        for chunk in pd.read_csv(f, usecols=want, chunksize=BLOCK_ROWS):
            out.append(Columns.of(chunk[chunk["id"].isin(ids)][want]))
    return Columns.concat(out, want)

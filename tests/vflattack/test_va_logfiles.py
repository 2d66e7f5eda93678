"""Prediction logs out of core: partitions follow the Parquet row groups (or CSV blocks), never
the file, and the passive rows of a partition are read by id (vflattack.audit.logfiles)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyarrow", reason="the [distributed] extra is not installed")
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import chebcenter as cc  # noqa: E402
from vflattack.audit.logfiles import columns_of, partitions, passive_rows, read_part  # noqa: E402


def _frame(n=230, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"id": rng.permutation(10 * n)[:n], "y0": rng.random(n), "p0": rng.random(n)})


@pytest.mark.parametrize("block", [100_000, 20, 7])
def test_parquet_partitions_follow_the_row_groups(tmp_path, block):
    df = _frame()
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), tmp_path / "log.parquet", row_group_size=50)
    parts = partitions(tmp_path / "log.parquet", block_rows=block)
    per_group = -(-50 // min(block, 50))
    assert len(parts) == 4 * per_group + -(-30 // min(block, 30))
    assert max(p.rows for p in parts) == min(block, 50) and sum(p.rows for p in parts) == 230
    back = pd.concat([read_part(p, ["id", "p0"]) for p in parts], ignore_index=True)
    pd.testing.assert_frame_equal(back, df[["id", "p0"]])
    assert columns_of(tmp_path / "log.parquet") == ["id", "y0", "p0"]


def test_csv_and_directory_logs(tmp_path):
    df = _frame(n=123)
    df.to_csv(tmp_path / "log.csv", index=False)
    parts = partitions(tmp_path / "log.csv", block_rows=50)
    assert [p.rows for p in parts] == [50, 50, 23]
    back = pd.concat([read_part(p, ["y0", "id"]) for p in parts], ignore_index=True)
    pd.testing.assert_frame_equal(back, pd.read_csv(tmp_path / "log.csv")[["y0", "id"]])
    (tmp_path / "dir").mkdir()
    for i in range(3):
        df.iloc[41 * i:41 * (i + 1)].to_parquet(tmp_path / "dir" / f"part.{i}.parquet", index=False)
    assert sum(p.rows for p in partitions(tmp_path / "dir")) == 123 and len(partitions(tmp_path / "dir")) == 3
    with pytest.raises(cc.InvalidInputError, match="does not exist"):
        partitions(tmp_path / "missing.parquet")
    with pytest.raises(cc.InvalidInputError, match="block_rows"):
        partitions(tmp_path / "log.csv", block_rows=0)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_passive_rows_are_read_by_id(tmp_path, fmt):
    rng = np.random.default_rng(1)
    ids = rng.permutation(1000)
    pas = pd.DataFrame({"id": ids, "x0": ids * 0.5, "x1": -ids.astype(float)})
    path = tmp_path / f"passive.{fmt}"
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pandas(pas, preserve_index=False), path, row_group_size=100)
    else:
        pas.to_csv(path, index=False)
    want = rng.choice(1000, 37, replace=False)
    got = passive_rows(path, want, ["x0", "x1"]).sort_values("id").reset_index(drop=True)
    assert got["id"].tolist() == sorted(want.tolist())
    np.testing.assert_array_equal(got["x0"], got["id"] * 0.5)
    assert passive_rows(path, np.array([5000]), ["x0"]).shape[0] == 0


def _count_group_reads(monkeypatch):
    """The indices of the row groups that Parquet reads from now on, in a list."""
    reads = []
    real = pq.ParquetFile.read_row_group

    def counting(self, i, *args, **kwargs):
        reads.append(i)
        return real(self, i, *args, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", counting)
    return reads


@pytest.mark.parametrize("aligned", [True, False])
def test_passive_rows_of_aligned_logs_come_from_the_partitions_own_rows(tmp_path, monkeypatch, aligned):
    """Logs written side by side (same ids, same order) are joined from the partition's own row
    range of the passive log: 1 or 2 row groups read, not all 10; a passive log in another
    order falls back to the id search and gives the same rows."""
    rng = np.random.default_rng(2)
    ids = rng.permutation(1000)
    pq.write_table(pa.table({"id": ids, "y0": ids * 1.0}), tmp_path / "pred.parquet", row_group_size=100)
    order = ids if aligned else rng.permutation(ids)
    pq.write_table(pa.table({"id": order, "x0": order * 0.25}), tmp_path / "pas.parquet", row_group_size=100)
    reads = _count_group_reads(monkeypatch)
    parts = partitions(tmp_path / "pred.parquet", block_rows=40)
    part = parts[7]                       # row group 2, rows 80..99 of it (a cut block)
    df = read_part(part, ["id"])
    reads.clear()
    got = passive_rows(tmp_path / "pas.parquet", df["id"].to_numpy(), ["x0"], part)
    assert sorted(got["id"].tolist()) == sorted(df["id"].tolist())
    np.testing.assert_array_equal(got["x0"], got["id"] * 0.25)
    assert (reads == [2]) if aligned else (reads[0] == 2 and len(reads) > 5)   # its own group, then the search


def test_a_partition_knows_its_row_offset_in_a_log_of_several_files(tmp_path, monkeypatch):
    """A prediction log split over 3 files, the passive log in one file in the same order: a
    partition of the third file is joined from its own rows of the passive log (one row
    group read), which needs its position in the whole log, not in its file."""
    rng = np.random.default_rng(3)
    ids = rng.permutation(900)
    (tmp_path / "pred").mkdir()
    for i in range(3):
        chunk = ids[300 * i:300 * (i + 1)]
        pq.write_table(pa.table({"id": chunk, "y0": chunk * 1.0}), tmp_path / "pred" / f"part.{i}.parquet",
                       row_group_size=100)
    pq.write_table(pa.table({"id": ids, "x0": ids * 0.5}), tmp_path / "pas.parquet", row_group_size=100)
    parts = partitions(tmp_path / "pred", block_rows=100)
    assert [p.start for p in parts] == list(range(0, 900, 100))
    reads = _count_group_reads(monkeypatch)
    part = parts[7]                          # file 2, row group 1: rows 700..799 of the log
    df = read_part(part, ["id"])
    reads.clear()
    got = passive_rows(tmp_path / "pas.parquet", df["id"].to_numpy(), ["x0"], part)
    assert sorted(got["id"].tolist()) == sorted(df["id"].tolist())
    np.testing.assert_array_equal(got["x0"], got["id"] * 0.5)
    assert reads == [7]


# A worker reads and writes Parquet without pandas: its own conversions, held to pyarrow's
# (pandas-backed) ones on every kind of column a log holds, and its join to pandas' merge.

_ARROW_COLUMNS = [pa.array([1.5, None, 3.0]), pa.array([1, None, 3]), pa.array([1, 2, 3], pa.int32()),
                  pa.array(["a", None, "ccc"]), pa.array(["é", "日本", ""]), pa.array([True, False, True]),
                  pa.array([True, None, False]), pa.array([1.0, 2.0, 3.0, 4.0]).slice(1, 2),
                  pa.array([1, None, 3, 4]).slice(1, 3), pa.array([False] * 9 + [True]).slice(8),
                  pa.chunked_array([[1.0, None], [2.0]]), pa.chunked_array([["x"], ["y", None]]),
                  pa.chunked_array([[1, None], [2, 3]]), pa.chunked_array([], pa.int64()),
                  pa.array([], pa.float64()), pa.array([1, 2], pa.uint8()), pa.array([0.5, 1.5], pa.float32())]


@pytest.mark.parametrize("i", range(len(_ARROW_COLUMNS)))
def test_a_column_is_read_as_pandas_reads_it(i):
    from vflattack.audit.logfiles import _numpy_of

    col = _ARROW_COLUMNS[i]
    mine, ref = _numpy_of(col), col.to_pandas().to_numpy()
    assert mine.shape == ref.shape
    if ref.dtype.kind in "biuf":
        assert mine.dtype == ref.dtype
        np.testing.assert_array_equal(mine, ref)
    else:   # text, or booleans with nulls: objects, a null None where pandas holds NaN or None
        assert mine.dtype == object
        assert [None if pd.isna(v) else v for v in ref] == list(mine)


def test_columns_are_written_as_pandas_writes_them(tmp_path):
    from vflattack.audit.logfiles import write_columns

    cols = {"id": np.array(["a", None, "b", "é日"], dtype=object), "x": np.array([1.0, np.nan, 2.0, 3.0]),
            "status": np.array(["OPTIMAL", "INFEASIBLE", "x", "OPTIMAL"], dtype=object),
            "n": np.array([1, 2, 3, 4]), "b": np.array([True, False, True, True]), "u": np.array(["p", "q", "r", ""])}
    write_columns(cols, tmp_path / "mine.parquet")
    pd.DataFrame(cols).to_parquet(tmp_path / "ref.parquet", index=False)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "mine.parquet"), pd.read_parquet(tmp_path / "ref.parquet"))
    # NaN in a float column is written as null, as pandas writes it
    assert pq.read_table(tmp_path / "mine.parquet").column("x").null_count == 1


@pytest.mark.parametrize("ids", ["numbers", "text"])
def test_the_join_by_id_is_pandas_left_merge(ids):
    from vflattack.audit.logfiles import Columns

    rng = np.random.default_rng(2)
    left_ids, right_ids = rng.permutation(40)[:25], rng.permutation(40)[:30]
    if ids == "text":
        left_ids, right_ids = left_ids.astype(str).astype(object), right_ids.astype(str).astype(object)
    left = pd.DataFrame({"id": left_ids, "y0": rng.random(25)})
    right = pd.DataFrame({"id": right_ids, "x0": rng.random(30), "x1": rng.random(30)})
    got = Columns.of(left).left_join(Columns.of(right), "the passive log")
    ref = left.merge(right, on="id", how="left")
    assert got.columns == list(ref.columns)
    np.testing.assert_array_equal(got["id"], ref["id"].to_numpy())
    np.testing.assert_array_equal(got.matrix(["y0", "x0", "x1"]), ref[["y0", "x0", "x1"]].to_numpy(float))
    assert np.isnan(got["x0"]).sum() == np.isnan(ref["x0"].to_numpy(float)).sum() > 0   # some ids have no passive row


def test_a_null_id_joins_nothing():
    """A prediction without an id gets no passive row, and a passive row without one is never
    joined (pandas' merge pairs NaN with NaN; a null names no record)."""
    from vflattack.audit.logfiles import Columns

    for left_ids, right_ids in ((np.array(["a", None, "b"], dtype=object), np.array([None, "b", "a"], dtype=object)),
                                (np.array([1.0, np.nan, 2.0]), np.array([np.nan, 2.0, 1.0]))):
        got = Columns({"id": left_ids}).left_join(Columns({"id": right_ids, "x0": np.array([9.0, 2.0, 1.0])}), "P")
        np.testing.assert_array_equal(got["x0"], [1.0, np.nan, 2.0])


def test_the_join_refuses_repeated_or_mismatched_ids():
    from vflattack.audit.logfiles import Columns

    left = Columns({"id": np.array([1, 2]), "y0": np.zeros(2)})
    with pytest.raises(cc.InvalidInputError, match="the passive log holds the id 2 more than once"):
        left.left_join(Columns({"id": np.array([2, 5, 2]), "x0": np.zeros(3)}), "the passive log")
    with pytest.raises(cc.InvalidInputError, match="ids are numbers and the passive log's text"):
        left.left_join(Columns({"id": np.array(["1", "2"], dtype=object), "x0": np.zeros(2)}), "the passive log")


def test_a_worker_audits_a_parquet_partition_without_importing_pandas(tmp_path):
    """A fresh interpreter (a worker) attacks and writes one partition of a Parquet log with its
    passive rows joined: pandas, 37 MB a worker, is never imported."""
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    n = 60
    pq.write_table(pa.table({"id": np.arange(n), "y0": rng.random(n), "p0": np.full(n, 0.4), "p1": np.full(n, 0.6)}),
                   tmp_path / "log.parquet")
    pq.write_table(pa.table({"id": np.arange(n)[::-1], "x0": rng.random(n), "x1": rng.random(n)}),
                   tmp_path / "passive.parquet")
    code = f"""
import sys, numpy as np, vflattack as va
from vflattack.audit import logs
m = va.VFLModel(np.ones((2, 1)), np.array([[0.0, 0.0], [1.0, 2.0]]), np.zeros(2))
part = logs.partitions({str(tmp_path / 'log.parquet')!r})[0]
s = logs._attack_partition(part, m, ("half",), None, None, {str(tmp_path / 'out.parquet')!r}, ["id", "y0", "p0", "p1"],
                           {str(tmp_path / 'passive.parquet')!r}, ["x0", "x1"])
print(s["rows"], s["scored"], "pandas" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(n), str(n), "False"]
    back = pd.read_parquet(tmp_path / "out.parquet")
    assert back["id"].tolist() == list(range(n)) and set(back["half_status"]) == {"OPTIMAL"}


def test_what_an_independent_review_found_in_the_workers_reading_and_writing(tmp_path):
    """Each case a review of the pandas-free worker found, against what pandas did: a null text
    id of a CSV log written as null (it was the text 'nan'); binary ids written as binary (they
    crashed); int64 against uint64 ids past 2^53 joined exactly (NumPy compared them as float64:
    five of six rows unmatched); a nullable id column over two row groups read as numbers (one
    chunk with nulls, one without, was read as objects, then refused as text); a null id and ids
    of another kind on the Parquet path itself (they crashed before the join)."""
    from vflattack.audit.logfiles import Columns, _arrow_of, passive_columns, write_columns

    write_columns({"id": np.array(["a", np.nan, "c"], dtype=object)}, tmp_path / "t.parquet")
    assert pq.read_table(tmp_path / "t.parquet").column("id").to_pylist() == ["a", None, "c"]
    ids = [bytes([i]) * 15 + b"\xff" for i in range(3)]
    col = _arrow_of(np.array(ids, dtype=object))
    assert col.type == pa.binary() and col.to_pylist() == ids

    big = 1_500_000_000_000_000_000 + np.arange(6)
    left = Columns({"id": big.astype(np.int64)})
    right = Columns({"id": big[::-1].astype(np.uint64), "x0": np.arange(6.0)[::-1]})
    np.testing.assert_array_equal(left.left_join(right, "P")["x0"], np.arange(6.0))
    neg = Columns({"id": np.array([-1, 3])}).left_join(Columns({"id": np.array([2**64 - 1, 3], np.uint64),
                                                                "x0": np.array([7.0, 8.0])}), "P")
    np.testing.assert_array_equal(neg["x0"], [np.nan, 8.0])   # -1 is not 2^64 - 1

    pq.write_table(pa.table({"id": pa.array([10, 11, None, 12]), "x0": [1.0, 2.0, 3.0, 4.0]}), tmp_path / "p.parquet",
                   row_group_size=2)
    got = Columns.of(passive_columns(tmp_path / "p.parquet", np.array([10, 11, 10, 12]), ["x0"]))
    assert got["id"].dtype.kind == "f" and sorted(got["x0"].tolist()) == [1.0, 2.0, 4.0]

    pq.write_table(pa.table({"id": ["a", "b", "c"], "x0": [1.0, 2.0, 3.0]}), tmp_path / "s.parquet")
    rows = Columns.of(passive_columns(tmp_path / "s.parquet", np.array(["a", None, "c"], dtype=object), ["x0"]))
    assert sorted(rows["id"].tolist()) == ["a", "c"]
    with pytest.raises(cc.InvalidInputError, match="ids are numbers and the passive log's text"):
        passive_columns(tmp_path / "s.parquet", np.array([1, 2]), ["x0"])

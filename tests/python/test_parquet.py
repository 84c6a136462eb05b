"""Parquet through the Python door: files written by pandas, pyarrow, polars and Dask (every
codec they default to) read as the LETOR text they came from; a folder of part files reads as its
parts; the CLI's `data convert` writes what pyarrow reads back; bad files are refused by what is
wrong with them."""

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import distillrank

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

ROOT = Path(__file__).resolve().parents[2]
MQ2008 = ROOT / "target" / "data" / "mq2008" / "Fold1"
BIN = Path(os.environ.get("DISTILLRANK_BIN", ROOT / "target" / "debug" / "distillrank"))
if not BIN.is_absolute():
    BIN = ROOT / BIN


@pytest.fixture(scope="module")
def text():
    return distillrank.read_letor(MQ2008 / "vali.txt")


def frame(X, y, qid, dtype="float64"):
    columns = {"qid": qid, "label": y}
    columns.update({f"f{k + 1}": X[:, k].astype(dtype) for k in range(X.shape[1])})
    return pd.DataFrame(columns)


def same(read, text):
    for got, want, what in zip(read, text, ("X", "y", "qid")):
        np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("compression", ["snappy", "zstd", "gzip", "lz4", None])
def test_pandas_parquet_of_every_codec_reads_as_the_text(tmp_path, text, compression):
    path = tmp_path / "vali.parquet"
    frame(*text).to_parquet(path, compression=compression)
    same(distillrank.read_letor(path), text)


def test_pyarrow_float32_and_polars_parquet_read_as_the_text(tmp_path, text):
    table = pa.Table.from_pandas(frame(*text, dtype="float32"), preserve_index=False)
    pq.write_table(table, tmp_path / "arrow.parquet", row_group_size=1000)
    same(distillrank.read_letor(tmp_path / "arrow.parquet"), text)
    pl = pytest.importorskip("polars")
    pl.from_pandas(frame(*text)).write_parquet(tmp_path / "polars.parquet")
    same(distillrank.read_letor(tmp_path / "polars.parquet"), text)


def test_a_dask_folder_of_parts_reads_as_the_whole(tmp_path, text):
    dd = pytest.importorskip("dask.dataframe")
    # Dask writes part.0 ... part.10 with its index as a column: not a feature.
    dd.from_pandas(frame(*text), npartitions=11, sort=False).to_parquet(tmp_path / "vali")
    assert (tmp_path / "vali" / "part.10.parquet").exists()
    same(distillrank.read_letor(tmp_path / "vali"), text)


def test_the_cli_writes_what_pyarrow_reads_and_a_ranker_fits_on_it(tmp_path, text):
    out = tmp_path / "vali.parquet"
    subprocess.run([str(BIN), "data", "convert", MQ2008 / "vali.txt", "--out", out], check=True, capture_output=True)
    table = pq.read_table(out)
    assert table.column_names[:3] == ["qid", "label", "f1"]
    assert table.schema.field("f1").type == pa.float32()
    X, y, qid = text
    np.testing.assert_array_equal(table.column("qid").to_numpy(), qid)
    # MQ2008 writes every entry, so no feature is null.
    assert table.column("f1").null_count == 0
    ranker = distillrank.Ranker("no-distillation", epochs=1, widths=[8], backend="cpu")
    ranker.fit(table.drop_columns(["qid", "label"]), table.column("label"), qid=table.column("qid"))
    assert list(ranker.feature_names_in_[:2]) == ["f1", "f2"]
    np.testing.assert_array_equal(ranker.predict(table.drop_columns(["qid", "label"])), ranker.predict(X))


def test_read_letor_gives_the_columns_names_a_file_has_and_a_ranker_keeps_them(tmp_path, text):
    """Parquet's column names come back beside the arrays where asked (LETOR text has none); a
    frame under them fits a ranker that checks them at predict, as a frame read with pandas
    does."""
    X, y, qid = text
    named = frame(X, y, qid).rename(columns={f"f{k + 1}": f"bm25_{k}" for k in range(X.shape[1])})
    named.to_parquet(tmp_path / "named.parquet", index=False)
    *arrays, names = distillrank.read_letor(tmp_path / "named.parquet", feature_names=True)
    same(arrays, text)
    assert names == [f"bm25_{k}" for k in range(X.shape[1])]
    assert len(distillrank.read_letor(tmp_path / "named.parquet")) == 3
    assert distillrank.read_letor(MQ2008 / "vali.txt", feature_names=True)[3] is None
    with pytest.raises(ValueError, match="^feature_names: 'no', expected True or False"):
        distillrank.read_letor(MQ2008 / "vali.txt", feature_names="no")
    ranker = distillrank.Ranker("no-distillation", epochs=1, widths=[8], backend="cpu")
    ranker.fit(pd.DataFrame(arrays[0], columns=names), arrays[1], qid=arrays[2])
    assert list(ranker.feature_names_in_) == names
    with pytest.raises(ValueError, match="column 0 is 'bm25_45' where fit saw 'bm25_0'"):
        ranker.predict(pd.DataFrame(arrays[0], columns=names)[names[::-1]])


def bad_files(tmp_path, text):
    """Each kind of bad Parquet file, written by pandas: {path: what its refusal says}. `mixed` is a
    folder of parts with other columns."""
    X, y, qid = text
    cases = {
        "noqid.parquet": (frame(X, y, qid).drop(columns=["qid"]), "no 'qid' column"),
        "docid.parquet": (frame(X, y, qid).assign(docid="GX01"), "column 'docid' holds byte arrays"),
        "intfeature.parquet": (frame(X, y, qid).astype({"f3": "int64"}), "column 'f3' holds 64-bit integers"),
        "shuffled.parquet": (frame(X, y, qid).sample(frac=1.0, random_state=0), "comes back after other queries"),
        "nested.parquet": (frame(X, y, qid).assign(tags=[[0.5, 1.0]] * len(y)), r"column 'tags\.list\.\w+' is nested"),
    }
    found = {}
    for name, (df, words) in cases.items():
        df.to_parquet(tmp_path / name, index=False)
        found[tmp_path / name] = words
    folder = tmp_path / "mixed"
    folder.mkdir()
    frame(X[:100], y[:100], qid[:100]).to_parquet(folder / "part.0.parquet", index=False)
    frame(X[100:, :40], y[100:], qid[100:]).to_parquet(folder / "part.1.parquet", index=False)
    found[folder] = "part.1.parquet.*40 feature columns.*part.0.parquet.*46 feature columns"
    return found


def test_bad_parquet_files_are_refused_by_what_is_wrong(tmp_path, text):
    for path, words in bad_files(tmp_path, text).items():
        with pytest.raises(ValueError, match=words) as caught:
            distillrank.read_letor(path)
        assert path.name in str(caught.value) or "part.1.parquet" in str(caught.value)
    X, y, qid = text
    frame(X, y, qid).to_parquet(tmp_path / "brotli.parquet", compression="brotli")
    with pytest.raises(ValueError, match="brotli.parquet.*not a readable Parquet file.*Snappy"):
        distillrank.read_letor(tmp_path / "brotli.parquet")


def cli(*args):
    done = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def test_unsigned_query_ids_read_as_their_values(tmp_path):
    """A uint32 or uint64 qid column (pyarrow writes them as int32 and int64 bits with an
    unsigned type) is read as its values, where one above the signed range was called negative."""
    features = pa.array([0.5, 0.25, 0.75], pa.float64())
    labels = pa.array([1, 0, 2], pa.int32())
    big32 = pa.table({"qid": pa.array([3_000_000_000, 3_000_000_000, 7], pa.uint32()), "label": labels, "f1": features})
    pq.write_table(big32, tmp_path / "u32.parquet")
    X, y, qid = distillrank.read_letor(tmp_path / "u32.parquet")
    assert qid.tolist() == [3_000_000_000, 3_000_000_000, 7] and y.tolist() == [1, 0, 2]
    big64 = pa.table({"qid": pa.array([2**63 + 5, 2**63 + 5, 7], pa.uint64()), "label": labels, "f1": features})
    pq.write_table(big64, tmp_path / "u64.parquet")
    stats = json.loads(cli("data", "stats", tmp_path / "u64.parquet", "--json").stdout)
    assert stats["queries"] == 2 and stats["docs"] == 3, stats
    # Written back, a qid past int64 is refused by name rather than written as a negative one.
    done = subprocess.run([str(BIN), "data", "convert", tmp_path / "u64.parquet", "--out", tmp_path / "back.parquet"],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "qid 9223372036854775813 is above" in done.stderr, done.stderr


def test_an_impressions_log_in_parquet_reads_as_its_text(tmp_path):
    """The log data simulate-logs writes, as Parquet (pandas' types: int64 ids, a bool click, a
    string docid), gives the same click table through read_impressions and the same comparison
    through the sidecar that names it; a session repeated is refused by its row."""
    out = tmp_path / "logs"
    cli("data", "simulate-logs", MQ2008 / "train.txt", MQ2008 / "vali.txt", MQ2008 / "test.txt", "-o", out)
    log, data = out / "train.txt.impressions.tsv", out / "train.txt"
    want = distillrank.read_impressions(log, data)
    frame = pd.read_csv(log, sep="\t")
    frame["click"] = frame["click"].astype(bool)
    frame.to_parquet(tmp_path / "log.parquet")
    got = distillrank.read_impressions(tmp_path / "log.parquet", data)
    for key in ("impressions", "clicks", "qid"):
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
    assert got["sessions"] == want["sessions"]
    # Documents by their docid comments, as strings.
    docids = {}
    for line in data.read_text().splitlines():
        q = int(line.split("qid:")[1].split()[0])
        docids.setdefault(q, []).append(line.split("#docid = ")[1].split()[0])
    named = frame.assign(docid=[docids[q][d - 1] for q, d in zip(frame["qid"], frame["doc"])]).drop(columns=["doc"])
    named.to_parquet(tmp_path / "named.parquet")
    by_docid = distillrank.read_impressions(tmp_path / "named.parquet", data)
    np.testing.assert_array_equal(by_docid["clicks"], want["clicks"])
    # The comparison on the logs reads the Parquet log where the sidecar names it.
    runs = {}
    for name in ("train.txt.impressions.tsv", "log.parquet"):
        if name == "log.parquet":
            (out / "log.parquet").write_bytes((tmp_path / "log.parquet").read_bytes())
            sidecar = json.loads((out / "train.txt.logs.json").read_text())
            sidecar["impressions"] = name
            (out / "train.txt.logs.json").write_text(json.dumps(sidecar))
        result = tmp_path / name.replace(".", "-")
        cli("compare", "--train", data, "--valid", out / "vali.txt", "--test", out / "test.txt", "--privileged", "logs",
            "--methods", "no-distillation,ips-estimated", "--seeds", "1", "--epochs", "1", "--widths", "8", "--out", result, "--quiet")
        figures = json.loads((result / "results.json").read_text())["methods"]
        runs[name] = {m: (f.get("ndcg@8"), f.get("graded_ndcg@8")) for m, f in figures.items()}
        assert set(runs[name]) == {"no-distillation", "ips-estimated"} and None not in runs[name]["ips-estimated"], figures
    assert runs["log.parquet"] == runs["train.txt.impressions.tsv"]
    twice = pd.concat([frame, frame.iloc[:3]])
    twice.to_parquet(tmp_path / "twice.parquet")
    with pytest.raises(ValueError, match=r"twice.parquet, row \d+: session .* began at row 1"):
        distillrank.read_impressions(tmp_path / "twice.parquet", data)
    # A column the reader does not read is refused by name, not dropped; a float conversion that
    # holds whole numbers is read as the integers it holds.
    frame.assign(dwell_time=1.5).to_parquet(tmp_path / "extra.parquet")
    with pytest.raises(ValueError, match="extra.parquet: the column 'dwell_time' is not one of an impressions log's"):
        distillrank.read_impressions(tmp_path / "extra.parquet", data)
    converted = frame.assign(conversion=(frame["click"] & (frame["position"] == 1)).astype("float64"))
    converted.to_parquet(tmp_path / "converted.parquet")
    got = distillrank.read_impressions(tmp_path / "converted.parquet", data)
    np.testing.assert_array_equal(got["clicks"], want["clicks"])
    assert got["conversions"].sum() == int(converted["conversion"].sum()) > 0
    frame.drop(columns=["session"]).to_parquet(tmp_path / "nosession.parquet")
    with pytest.raises(ValueError, match="nosession.parquet: no 'session' column"):
        distillrank.read_impressions(tmp_path / "nosession.parquet", data)


def test_each_bad_parquet_file_gets_its_message_in_every_door(tmp_path, text):
    """The class walked through the doors: every kind of bad file gives the same refusal, naming the
    file and what is wrong, from `data stats`, `compare --train`, `read_letor`, a setup's files in
    `distillrank.compare` and `distillrank compare --setup`."""
    small = dict(methods=["no-distillation"], seeds=1, epochs=1, widths=[8], backend="cpu")
    for path, words in bad_files(tmp_path, text).items():
        name = path.name
        setup = distillrank.Setup(source={"files": {"train": str(path)}}, **small)
        (tmp_path / "setup.json").write_text(setup.to_json())
        doors = {}
        for door, args in {
            "data stats": ["data", "stats", path],
            "compare --train": ["compare", "--train", path, "--seeds", "1", "--epochs", "1", "--out", tmp_path / "out"],
            "compare --setup": ["compare", "--setup", tmp_path / "setup.json", "--out", tmp_path / "out"],
        }.items():
            done = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True)
            assert done.returncode != 0, (door, name)
            doors[door] = done.stderr
        for door, call in {"read_letor": lambda: distillrank.read_letor(path),
                           "distillrank.compare": lambda: distillrank.compare(setup, verbose=False)}.items():
            with pytest.raises(ValueError) as caught:
                call()
            doors[door] = str(caught.value)
        for door, message in doors.items():
            assert re.search(words, message) and (name in message or "part.1.parquet" in message), (door, name, message)
            assert "Traceback" not in message and "panicked" not in message, (door, message)

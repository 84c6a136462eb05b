#!/usr/bin/env python3
"""An impressions log summed on a Dask cluster (`distillrank.dask.click_table`), at Baidu-ULTR's
shape: many queries, lists of 10 shown documents, a few clicks per session at the top, written as
Parquet with each file holding a range of queries. Summed on a LocalCluster of 1 worker, then of
2, each worker under a memory limit smaller than the log in memory.

    python bench/dask_logs.py --rows 50000000 --dir /tmp/ultr [--memory-limit 1GiB] [--parts 50]

Writes (once, kept for later runs) DIR/data.parquet (the queries' documents: one feature, a
grade) and DIR/log/part.K.parquet, then prints one JSON object: the log's rows and bytes (on disk
and in memory), and for each cluster the wall time of `click_table`, each worker's peak RSS
(VmHWM, read on the worker at the end), the bytes that travelled from the workers to the client
(the cells with an impression) and the bytes shuffled between workers (none: the files are cut
by query, so no partition needs another's rows). The two clusters' tables must be equal, count for
count; the script checks it.

Dependencies (PyPI, for this script only): numpy, pandas, pyarrow, dask[distributed].
"""

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np


def write(directory: Path, rows: int, parts: int, seed: int = 0):
    """The data file and the log, unless they are there already."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shown, docs_per_query, sessions_per_query = 10, 20, 50
    queries = rows // (shown * sessions_per_query)
    data = directory / "data.parquet"
    log = directory / "log"
    if data.exists() and log.exists() and len(list(log.glob("*.parquet"))) == parts:
        return queries, shown, docs_per_query, sessions_per_query
    directory.mkdir(parents=True, exist_ok=True)
    log.mkdir(exist_ok=True)
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(1, queries + 1, dtype=np.int64), docs_per_query)
    grade = rng.integers(0, 5, size=len(qid)).astype(np.int32)
    feature = (grade + rng.normal(size=len(qid))).astype(np.float32)
    pq.write_table(pa.table({"qid": qid, "label": grade, "f1": feature}), data)
    # Each session shows 10 of the query's 20 documents in a random order; clicks follow the
    # grade, discounted by the rank (a position-based model).
    bounds = np.linspace(0, queries, parts + 1).astype(int)
    examine = 1.0 / np.arange(1, shown + 1)
    for k in range(parts):
        q = np.arange(bounds[k], bounds[k + 1])
        n = len(q) * sessions_per_query
        query = np.repeat(q + 1, sessions_per_query)
        session = np.arange(n, dtype=np.int64) + bounds[k] * sessions_per_query
        lists = np.argsort(rng.random((n, docs_per_query)), axis=1)[:, :shown] + 1
        grades = grade.reshape(queries, docs_per_query)[np.repeat(q, sessions_per_query)[:, None], lists - 1]
        click = rng.random((n, shown)) < examine * (2.0 ** grades - 1) / 31.0
        pq.write_table(pa.table({
            "qid": np.repeat(query, shown).astype(np.int64),
            "session": np.repeat(session, shown),
            "position": np.tile(np.arange(1, shown + 1, dtype=np.int64), n),
            "doc": lists.ravel().astype(np.int64),
            "click": click.ravel().astype(np.int64),
        }), log / f"part.{k}.parquet")
    return queries, shown, docs_per_query, sessions_per_query


def peak_rss() -> int:
    """This process's peak resident set (VmHWM), bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def run(directory: Path, workers: int, memory_limit: str):
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    import distillrank.dask

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                           dashboard_address=None, memory_limit=memory_limit)
    with cluster, Client(cluster) as client:
        log = dd.read_parquet(str(directory / "log"))
        started = time.perf_counter()
        table = distillrank.dask.click_table(log, str(directory / "data.parquet"))
        seconds = time.perf_counter() - started
        rss = client.run(peak_rss)
        # What the workers sent the client: the cells with an impression, four arrays each.
        cells = int((table["impressions"] > 0).sum())
        moved = cells * (8 + 4 + 4 + 4)
    return table, {"workers": workers, "memory_limit": memory_limit, "seconds": seconds,
                   "peak_rss_per_worker": sorted(rss.values()), "bytes_to_client": moved,
                   "bytes_shuffled": 0, "partitions": log.npartitions}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=50_000_000)
    p.add_argument("--dir", type=Path, required=True)
    p.add_argument("--parts", type=int, default=50)
    p.add_argument("--memory-limit", default="1GiB")
    args = p.parse_args()
    queries, shown, docs, sessions = write(args.dir, args.rows, args.parts)
    files = list((args.dir / "log").glob("*.parquet"))
    import pyarrow.parquet as pq

    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    report = {"rows": rows, "queries": queries, "documents": queries * docs, "shown": shown,
              "sessions_per_query": sessions, "log_bytes_on_disk": sum(os.path.getsize(f) for f in files),
              "log_bytes_in_memory": rows * 5 * 8, "runs": []}
    tables = []
    for workers in (1, 2):
        table, figures = run(args.dir, workers, args.memory_limit)
        tables.append(table)
        report["runs"].append(figures)
    same = all((tables[0][k] == tables[1][k]).all() for k in ("impressions", "clicks", "qid"))
    report["tables_equal"] = bool(same and tables[0]["sessions"] == tables[1]["sessions"])
    report["ratio_2_over_1"] = report["runs"][1]["seconds"] / report["runs"][0]["seconds"]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

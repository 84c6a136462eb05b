#!/usr/bin/env python3
"""Dask's overhead on a sweep's matrix: the same sweep by `distillrank sweep --jobs 1` and
`--jobs 2`, and by `distillrank.dask.sweep` on a LocalCluster of 1, 2 and 4 one-thread worker
processes (4 on a 2-core machine is oversubscribed, and labelled so), alternated over rounds, each timed from the command's start to its results.

    python bench/dask_sweep.py [--bin target/release/distillrank] [--rounds 2]
        [--param alpha --values 0.3,0.5,0.7] [--setup '{"seeds": 2, "epochs": 3}']

The default is the synthetic default comparison (four methods) at three values of alpha, with 2
seeds and 3 epochs a job so that a round takes minutes on 2 cores: 24 jobs a sweep. Prints one
JSON object with every time, the medians, and the ratios of each cluster's median to `--jobs`'s
with as many processes (to `--jobs 2`'s for 4 workers). The figures of every run must be equal (the script checks NDCG@8 of
every method at every value). Dependencies: dask[distributed] and the distillrank package.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def figures(points):
    """NDCG@8 of every method at every value (a sweep.json point or a results.json object)."""
    mean = lambda v: v.get("mean") if isinstance(v, dict) else v
    return [{m: mean(f.get("ndcg@8")) for m, f in p["methods"].items()} for p in points]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default="target/release/distillrank")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--param", default="alpha")
    p.add_argument("--values", default="0.3,0.5,0.7")
    p.add_argument("--workers", default="1,2,4",
                   help="cluster sizes (one-thread worker processes); more than the cores is oversubscribed")
    p.add_argument("--setup", default='{"seeds": 2, "epochs": 3, "backend": "cpu"}',
                   help="distillrank.Setup's keywords as JSON (default: the synthetic default, 2 seeds, 3 epochs)")
    args = p.parse_args()

    from dask.distributed import Client, LocalCluster

    import distillrank
    import distillrank.dask

    work = Path(tempfile.mkdtemp(prefix="dask-sweep-"))
    # The setup every run shares.
    setup_text = distillrank.Setup(**json.loads(args.setup)).to_json()
    (work / "setup.json").write_text(setup_text)
    values = [float(v) for v in args.values.split(",")]
    sizes = [int(w) for w in args.workers.split(",")]
    cores = os.cpu_count() or 1
    label = lambda w: f"dask {w} worker{'s' if w > 1 else ''}" + (" (oversubscribed)" if w > cores else "")
    times = {"jobs 1": [], "jobs 2": [], **{label(w): [] for w in sizes}}
    seen = {}
    clusters = {}
    for workers in sizes:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None)
        clusters[workers] = (cluster, Client(cluster))
    try:
        for round_ in range(args.rounds):
            for jobs in (1, 2):
                out = work / f"cli-{jobs}-{round_}"
                started = time.perf_counter()
                subprocess.run([args.bin, "sweep", "--setup", str(work / "setup.json"), "--param", args.param,
                                "--values", args.values, "--jobs", str(jobs), "--out", str(out), "--quiet"],
                               check=True, capture_output=True)
                times[f"jobs {jobs}"].append(time.perf_counter() - started)
                points = json.loads((out / "sweep.json").read_text())["points"]
                seen[f"jobs {jobs}"] = figures(points)
            for workers in sizes:
                _, client = clusters[workers]
                started = time.perf_counter()
                points = distillrank.dask.sweep(args.param, values, setup_text, client)
                times[label(workers)].append(time.perf_counter() - started)
                seen[label(workers)] = figures(points)
    finally:
        for cluster, client in clusters.values():
            client.close()
            cluster.close()
    medians = {k: statistics.median(v) for k, v in times.items()}
    report = {
        "param": args.param, "values": values, "setup": json.loads(args.setup), "rounds": args.rounds, "seconds": times,
        "median_seconds": medians,
        # Each cluster against --jobs with as many processes, or with every core where it has more.
        "ratios": {label(w): medians[label(w)] / medians[f"jobs {min(w, 2)}"] for w in sizes},
        "figures_equal": all(v == seen["jobs 1"] for v in seen.values()),
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

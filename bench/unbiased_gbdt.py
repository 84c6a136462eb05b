#!/usr/bin/env python3
"""The field's unbiased GBDT rankers on distillrank's simulated clicks: LightGBM 4.7's lambdarank
with `position` (its position-bias GAM) and XGBoost 3.x's `lambdarank_unbiased`, each beside the
same library trained on the same clicks without the correction, scored on the test file's graded
relevance by distillrank's own evaluator (`distillrank eval --labels graded --json`), so their
graded NDCG@5/@8/@10 stand beside the MLP methods of `distillrank compare --privileged logs`.

    python bench/unbiased_gbdt.py --train T [--valid V] [--test E] [--bin target/release/distillrank]
        --queries-of RESULTS.json [--out DIR] [--trees 300] [--sessions 100] [--position-bias 1]
        [--models lightgbm-lambdarank,...] [--reader sklearn|distillrank]

Without --test, the splits are the compare run's own: its test and validation queries
(`test_qids`, `valid_qids` of RESULTS.json) are held out of the training file, as `compare
--train T` held them out, and the GBDTs train on the impressions of the other queries only.

1. `distillrank data simulate-logs T V E` writes the impressions log of the training file
   (`train.impressions.tsv`: qid, session, position, doc, click), the same clicks `compare
   --privileged logs` simulates with the same settings.
2. Every impression becomes one row: the document's features x (its line of T), its click as the
   label, its displayed position; each (query, session) is one group, its rows in displayed order.
3. Four GBDTs train on those rows, 0.05 learning rate, 31 leaves, early stopping (30 rounds) on
   the validation file's conversions, the label y the MLP methods choose their epoch by (without
   a validation file, all `--trees` rounds):
   LightGBM lambdarank with and without `position`, XGBoost rank:ndcg with and without
   `lambdarank_unbiased` (pairs from the top 10, as the sessions show 10).
4. `distillrank eval` scores each saved model on the test file with graded gains 2^g - 1, on the
   test queries of a `compare` run (`--queries-of RESULTS.json`: its `test_qids`, the queries its
   group filter kept), so that every figure is over the same queries as the MLP methods'.

Prints one JSON object; the README's table is written from it. Dependencies (PyPI, for this script
only): numpy, scikit-learn, lightgbm, xgboost. `--reader distillrank` reads the LETOR files with
distillrank's own reader (the Python package) instead of scikit-learn's, which parses a
Web30K-sized file (4.4 GB) at about 1.5 MB/s; the models and their scores are the libraries' alone
either way.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import lightgbm
import numpy as np
import xgboost
from sklearn.datasets import load_svmlight_file


def group_sizes(keys):
    """The sizes of the runs of equal consecutive keys."""
    change = np.flatnonzero(np.any(keys[1:] != keys[:-1], axis=1)) + 1
    return np.diff(np.concatenate([[0], change, [len(keys)]]))


def impressions(log, X, qid, held_out=frozenset()):
    """The rows of an impressions log: features of each shown document, click, position, and the
    group sizes of its (query, session) lists, the rows of each in displayed order; the queries of
    `held_out` left out."""
    rows = np.loadtxt(log, dtype=np.int64, skiprows=1, delimiter="\t", ndmin=2, usecols=range(5))
    if held_out:
        rows = rows[~np.isin(rows[:, 0], np.fromiter(held_out, dtype=np.int64))]
    rows = rows[np.lexsort((rows[:, 2], rows[:, 1], rows[:, 0]))] if not sorted_by_list(rows) else rows
    # The first line of each query in the file (its documents are consecutive).
    qids, first = np.unique(qid, return_index=True)
    doc = first[np.searchsorted(qids, rows[:, 0])] + rows[:, 3] - 1
    return X[doc], rows[:, 4].astype(np.float32), rows[:, 2], group_sizes(rows[:, :2])


def sorted_by_list(rows):
    """Whether the log lists each session's rows together, in displayed order (as simulate-logs
    writes it; queries in the file's order)."""
    same = np.all(rows[1:, :2] == rows[:-1, :2], axis=1)
    return bool(np.all(rows[1:, 2][same] > rows[:-1, 2][same]))


def dense(a):
    """A scikit-learn sparse matrix as a dense array; a dense one as it is."""
    return a.toarray() if hasattr(a, "toarray") else a


def read(path, reader):
    """A LETOR file's features (float32) and qids, by `reader`."""
    if reader == "distillrank":
        import distillrank

        X, _, qid = distillrank.read_letor(str(path))
        return X, qid
    X, _, qid = load_svmlight_file(str(path), query_id=True, dtype=np.float32)
    return X, qid


def sizes_of(qid):
    _, starts, counts = np.unique(qid, return_index=True, return_counts=True)
    return counts[np.argsort(starts)]


def train_lightgbm(rows, valid, trees, position):
    X, click, pos, groups = rows
    data = lightgbm.Dataset(X, click, group=groups, position=pos if position else None)
    params = {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 31,
              "min_data_in_leaf": 20, "metric": "ndcg", "eval_at": [8], "verbose": -1,
              "seed": 0, "num_threads": 2}
    if valid is None:
        return lightgbm.train(params, data, trees)
    Xv, yv, qv = valid
    check = lightgbm.Dataset(Xv, yv, group=sizes_of(qv), reference=data)
    return lightgbm.train(params, data, trees, valid_sets=[check],
                          callbacks=[lightgbm.early_stopping(30, verbose=False)])


def train_xgboost(rows, valid, trees, unbiased):
    X, click, _, groups = rows
    qid = np.repeat(np.arange(len(groups)), groups)
    # Quantised as it is read (a byte a cell): a DMatrix of 13M impressions x 136 features would
    # hold 15 GB of CSR.
    dtrain = xgboost.QuantileDMatrix(X, click, qid=qid, nthread=2)
    params = {"objective": "rank:ndcg", "eval_metric": "ndcg@8", "eta": 0.05, "max_depth": 6,
              "tree_method": "hist", "nthread": 2, "seed": 0,
              "lambdarank_pair_method": "topk", "lambdarank_num_pair_per_sample": 10,
              "lambdarank_unbiased": unbiased}
    if valid is None:
        return xgboost.train(params, dtrain, trees)
    Xv, yv, qv = valid
    order = np.argsort(qv, kind="stable")
    dvalid = xgboost.QuantileDMatrix(Xv[order], yv[order], qid=qv[order], ref=dtrain, nthread=2)
    return xgboost.train(params, dtrain, trees, evals=[(dvalid, "valid")],
                         early_stopping_rounds=30, verbose_eval=False)


def evaluate(args, model, test):
    out = subprocess.run([args.bin, "eval", "--model", str(model), "--columns", "from-1",
                          "--labels", "graded", "--json", "--quiet", str(test)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True)
    p.add_argument("--valid", default=None, help="without it, every --trees round is kept")
    p.add_argument("--test", default=None,
                   help="without it, the test and validation queries of --queries-of are held out of --train")
    p.add_argument("--bin", default="target/release/distillrank")
    p.add_argument("--out", default="target/unbiased-gbdt")
    p.add_argument("--trees", type=int, default=300, help="most boosting rounds")
    p.add_argument("--sessions", type=int, default=100)
    p.add_argument("--position-bias", type=float, default=1.0)
    p.add_argument("--models", default=None,
                   help="a comma list of the models to train (default: all four)")
    p.add_argument("--reader", choices=["sklearn", "distillrank"], default="sklearn",
                   help="the LETOR reader (distillrank's: for Web30K-sized files)")
    p.add_argument("--reuse-logs", action="store_true",
                   help="take the simulated copies already in OUT/logs (a run with the same settings wrote them)")
    p.add_argument("--queries-of", required=True,
                   help="a compare run's results.json: the test queries it kept are those scored")
    args = p.parse_args()
    out = Path(args.out)
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    files = [f for f in [args.train, args.valid, args.test] if f is not None]
    started = time.perf_counter()
    reuse = args.reuse_logs and Path(str(logs / Path(args.train).name) + ".logs.json").exists()
    if not reuse:
        subprocess.run([args.bin, "data", "simulate-logs", *files, "-o", str(logs),
                        "--sessions", str(args.sessions), "--position-bias", str(args.position_bias),
                        "--quiet"], check=True, stdout=subprocess.DEVNULL)
    simulate_seconds = None if reuse else time.perf_counter() - started
    sidecar = json.loads(Path(str(logs / Path(args.train).name) + ".logs.json").read_text())
    simulated = sidecar["options"]
    if (simulated["sessions"], simulated["position_bias"]) != (args.sessions, args.position_bias):
        sys.exit(f"--reuse-logs: {logs} holds logs of {simulated['sessions']} sessions at position bias "
                 f"{simulated['position_bias']}, not {args.sessions} at {args.position_bias}")
    compared = json.loads(Path(args.queries_of).read_text())
    kept = set(compared["test_qids"])
    # Without a test file the compare run held its test and validation queries out of --train.
    split_here = args.test is None
    held_out = kept | set(compared.get("valid_qids", [])) if split_here else frozenset()
    if split_here and "valid_qids" not in compared:
        sys.exit(f"{args.queries_of} has no valid_qids: run compare again with this version")

    # The simulated copies: the original columns first, then the logs'; qids also where the
    # original file has a .query file instead.
    width = sidecar["original_features"]
    conversions = sidecar["columns"]["conversions"] - 1
    logged, qid = read(logs / Path(args.train).name, args.reader)
    X = dense(logged[:, :width])
    rows = impressions(logs / sidecar["impressions"], X, qid, held_out)
    valid = None
    if args.valid is not None or split_here:
        # The validation file's conversions y, from its simulated copy's column for them.
        if split_here:
            mine = np.isin(qid, np.fromiter(compared["valid_qids"], dtype=np.int64))
            Xv_logged, qv = logged[mine], qid[mine]
        else:
            Xv_logged, qv = read(logs / Path(args.valid).name, args.reader)
        yv = (dense(Xv_logged[:, conversions]).ravel() > 0).astype(np.float32)
        valid = (np.ascontiguousarray(dense(Xv_logged[:, :width])), yv, qv)
    del logged, X

    report = {"impressions": int(len(rows[1])), "sessions": int(len(rows[3])),
              "clicks": int(rows[1].sum()), "features": width, "models": {},
              "simulate_logs_seconds": simulate_seconds and round(simulate_seconds, 1),
              "versions": {"lightgbm": lightgbm.__version__, "xgboost": xgboost.__version__}}
    models = {
        "lightgbm-lambdarank": lambda: train_lightgbm(rows, valid, args.trees, False),
        "lightgbm-lambdarank-position": lambda: train_lightgbm(rows, valid, args.trees, True),
        "xgboost-rank-ndcg": lambda: train_xgboost(rows, valid, args.trees, False),
        "xgboost-lambdarank-unbiased": lambda: train_xgboost(rows, valid, args.trees, True),
    }
    if args.models is not None:
        chosen = args.models.split(",")
        unknown = [m for m in chosen if m not in models]
        if unknown:
            sys.exit(f"--models: unknown {unknown}, expected some of {list(models)}")
        models = {m: models[m] for m in chosen}
    test = out / "test.kept.txt"

    def original(line):
        """A line of the simulated test copy with its original columns only, each written (an
        absent feature is 0, as the models saw it in training; XGBoost would take it as missing)."""
        body, _, comment = line.partition("#")
        label, q, *features = body.split()
        values = dict(f.split(":") for f in features)
        dense = [f"{j}:{values.get(str(j), '0')}" for j in range(1, width + 1)]
        return " ".join([label, q, *dense]) + (f" #{comment}" if comment else "\n")

    with open(logs / Path(args.test or args.train).name) as source, open(test, "w") as sink:
        sink.writelines(original(line) for line in source if int(line.split()[1].split(":")[1]) in kept)
    report["test_queries"] = len(kept)
    for name, train in models.items():
        started = time.perf_counter()
        model = train()
        seconds = time.perf_counter() - started
        path = out / (f"{name}.txt" if name.startswith("lightgbm") else f"{name}.json")
        model.save_model(str(path))
        metrics = evaluate(args, path, test)
        report["models"][name] = {"train_seconds": round(seconds, 2), "eval": metrics}
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

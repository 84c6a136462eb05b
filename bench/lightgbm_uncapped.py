#!/usr/bin/env python3
"""Does LightGBM's cap of 500 trees hold back the reference? On a fold folder that
`bench/letor_folds.py` wrote (train.txt, vali.txt, test.txt, split/results.json and its seed-0
LightGBM model of the role), train LightGBM again with the same parameters and seed but up to
--trees trees (early stopping on the validation file after 30 rounds, as there), and pair each
test query's graded NDCG@8 of the students with the uncapped model's, and the uncapped model's
with the capped one's.

    python bench/lightgbm_uncapped.py --fold target/w30/fold1 --role x-alone \
        --students target/w30/fold1/compare/results.json [--trees 5000] [--reader distillrank]
    python bench/lightgbm_uncapped.py --fold target/w30/fold1 --role every-column [--seeds 5] [--trees 5000]

x-alone: LightGBM on x alone, z blanked as for the reference row (reference.txt), against the
students of a `distillrank compare` run on the same folder (its results.json: `per_query` of
each method, averaged over its seeds). every-column: LightGBM on every column (lightgbm_all-0.txt)
against the every-column students of `letor_folds.py --every-column` (every-column/seed*,
scored by `distillrank predict`, averaged over the seeds). Prints one JSON object.

Dependencies (PyPI, for this script only): numpy, scikit-learn, lightgbm.
"""

import argparse
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import lightgbm
import numpy as np

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("letor_folds", HERE / "letor_folds.py")
letor_folds = importlib.util.module_from_spec(spec)
spec.loader.exec_module(letor_folds)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fold", required=True, help="a fold folder of bench/letor_folds.py")
    p.add_argument("--role", choices=["x-alone", "every-column"], required=True)
    p.add_argument("--students", help="x-alone: the results.json of a distillrank compare on the fold")
    p.add_argument("--valid", help="the fold's validation file (default: FOLD/vali.txt, as a single split writes it)")
    p.add_argument("--test", help="the fold's test file (default: FOLD/test.txt)")
    p.add_argument("--trees", type=int, default=5000)
    p.add_argument("--seeds", type=int, default=5,
                   help="every-column: the students every-column/seed0..N-1, as letor_folds.py --seeds saved them")
    p.add_argument("--reader", choices=["sklearn", "distillrank"], default="sklearn")
    p.add_argument("--bin", default="target/release/distillrank")
    args = p.parse_args()
    for flag, value in [("--trees", args.trees), ("--seeds", args.seeds)]:
        if value < 1:
            p.error(f"{flag} {value}: expected a whole number of at least 1")
    if (args.role == "x-alone") != bool(args.students):
        p.error("--students names the compare run whose students meet LightGBM on x alone: "
                "give it with --role x-alone, and only then")
    fold = Path(args.fold)
    prefixes = [fold / "every-column" / f"seed{seed}" for seed in range(args.seeds)]
    missing = [str(prefix) for prefix in prefixes if not prefix.with_suffix(".json").exists()]
    if args.role == "every-column" and missing:
        p.error(f"{', '.join(missing)}: no saved student (run bench/letor_folds.py --every-column "
                f"--seeds {args.seeds} on the fold first)")
    test_file = Path(args.test or fold / "test.txt")
    files = [fold / "train.txt", Path(args.valid or fold / "vali.txt"), test_file]
    needed = files + ([Path(args.students), fold / "reference.txt"] if args.role == "x-alone"
                      else [fold / "split" / "results.json", fold / "lightgbm_all-0.txt"])
    absent = [str(path) for path in needed if not path.is_file()]
    if absent:
        p.error(f"{', '.join(absent)}: no such file (a fold folder of bench/letor_folds.py holds them)")
    started = time.perf_counter()
    read = [letor_folds.read_file(path, args.reader) for path in files]
    width = max(x.shape[1] for x, _, _ in read)
    # A sparse test file's last columns may be zero everywhere: the student reads them as 0.
    narrower = ["--allow-missing-features"] if read[2][0].shape[1] < read[0][0].shape[1] else []
    (X, y, qid), (Xv, yv, qv), (Xt, yt, qt) = [
        (np.pad(x, ((0, 0), (0, width - x.shape[1]))), g, q) for x, g, q in read]
    del read
    if args.role == "x-alone":
        # The students' own z, blanked as for the reference row.
        runs = json.loads(Path(args.students).read_text())
        for x in (X, Xv, Xt):
            x[:, [c - 1 for c in runs["privileged_columns"]]] = 0.0
        capped_file = fold / "reference.txt"
        test_qids = np.array(runs["test_qids"])
        students = {method: np.mean(np.array(per_query, dtype=float), axis=0)
                    for method, per_query in runs["per_query"].items()}
    else:
        capped_file = fold / "lightgbm_all-0.txt"
        # The prepared test queries of the --every-column run (its split).
        test_qids = np.array(json.loads((fold / "split" / "results.json").read_text())["test_qids"])
        per_seed = []
        for prefix in prefixes:
            scored = subprocess.run([args.bin, "predict", "--model", str(prefix), str(test_file),
                                     "--quiet", "--backend", "cpu", *narrower],
                                    check=True, capture_output=True, text=True)
            scores = np.array([float(v) for v in scored.stdout.split()])
            per_seed.append(letor_folds.per_query(scores, yt, qt, test_qids))
        students = {"student_every_column": np.mean(per_seed, axis=0)}
    # letor_folds.py's LightGBM, seed 0, with early stopping under a higher cap.
    model = letor_folds.lightgbm_ranker(X, y, qid, Xv, yv, qv, 0, cap=args.trees)
    uncapped = letor_folds.per_query(model.predict(Xt, raw_score=True), yt, qt, test_qids)
    capped_model = lightgbm.Booster(model_file=str(capped_file))
    capped = letor_folds.per_query(capped_model.predict(Xt, raw_score=True), yt, qt, test_qids)
    keep = ~np.isnan(uncapped)
    rng = np.random.default_rng(0)
    report = {"role": args.role, "trees_cap": args.trees, "trees_capped_model": capped_model.num_trees(),
              "trees": model.num_trees(), "test_queries": int(keep.sum()),
              "lightgbm_uncapped": float(uncapped[keep].mean()), "lightgbm_capped": float(capped[keep].mean()),
              "uncapped - capped": letor_folds.paired_or_why(uncapped[keep], capped[keep], rng)}
    for name, figures in students.items():
        report[name] = float(figures[keep].mean())
        report[f"{name} - uncapped"] = letor_folds.paired_or_why(figures[keep], uncapped[keep], rng)
    report.update(seconds=time.perf_counter() - started, versions={"lightgbm": lightgbm.__version__})
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

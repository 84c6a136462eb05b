#!/usr/bin/env python3
"""A GBDT as the privileged teacher: LightGBM lambdarank trained on x and z, distilled by
`distillrank compare` into an MLP student that reads x only, beside the student trained alone
and beside LightGBM trained on x alone (the serving baseline), all on the same prepared test
split, labels and evaluator, with distillrank's paired tests; then what serving costs: the
student's ONNX model (onnxruntime) against the teacher's own predict (lightgbm), on 1 and 1,000
documents.

    python bench/gbdt_teacher.py --train T --valid V --test E [--bin target/release/distillrank]
        [--seeds 5] [--widths 64,32] [--backends cpu,gpu] [--out DIR]
        [--training-labels grades --loss lambdarank] [--epochs 2] [--teacher T.txt] [--no-x-alone]

LightGBM on x alone enters the comparison as a teacher given by its scores (--teacher-scores), so
that its NDCG@8 is the comparison's own measurement (its "teacher NDCG@8"). With
`--training-labels grades` the students train on the grades, as LightGBM does, and every NDCG is
on the grades. Prints one JSON object; the tables in the README are written from it.

An XGBoost teacher (rank:ndcg, on x and z) is distilled the same way, and its predict timed
beside LightGBM's.

`--teacher` distils a LightGBM teacher this script wrote before (its `teacher.txt`) instead of
training one; `--no-x-alone` leaves out LightGBM on x alone, whose scores do not depend on the
engine; `--epochs` caps the students' epochs, so that a slow engine finishes a large file.

Files are read by scikit-learn's load_svmlight_file (sparse: an absent feature is missing, as
XGBoost and distillrank's tree reader take it); past 256 MB, whose text that reader parses on one
core for many minutes, by distillrank's own reader (the Python package, dense: absent is 0).

Dependencies (PyPI, for this script only): numpy, scikit-learn, lightgbm, xgboost (or
xgboost-cpu), onnxruntime; the distillrank package for large files.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import lightgbm
import numpy as np
import onnxruntime
import xgboost
from sklearn.datasets import load_svmlight_file


def read(path, width=None):
    """X, y, qid of a LETOR file, X at least `width` columns wide."""
    if Path(path).stat().st_size <= 256 << 20:
        return load_svmlight_file(path, query_id=True, **({"n_features": width} if width else {}))
    import distillrank

    X, y, qid = distillrank.read_letor(path)
    if width and X.shape[1] < width:
        X = np.hstack([X, np.zeros((X.shape[0], width - X.shape[1]), dtype=X.dtype)])
    return X, y, qid


def dense(X):
    return X.toarray() if hasattr(X, "toarray") else X


def groups(qid):
    _, starts, counts = np.unique(qid, return_index=True, return_counts=True)
    return counts[np.argsort(starts)]


def train_lightgbm(X, y, qid, Xv, yv, qv, seed, trees=300):
    ranker = lightgbm.LGBMRanker(
        n_estimators=trees, learning_rate=0.05, num_leaves=31, min_child_samples=20,
        random_state=seed, verbose=-1,
    )
    ranker.fit(X, y, group=groups(qid), eval_set=[(Xv, yv)], eval_group=[groups(qv)],
               eval_at=[8], callbacks=[lightgbm.early_stopping(30, verbose=False)])
    return ranker.booster_


def train_xgboost(X, y, qid, Xv, yv, qv, trees=300):
    dtrain, dvalid = xgboost.DMatrix(X, y), xgboost.DMatrix(Xv, yv)
    dtrain.set_group(groups(qid))
    dvalid.set_group(groups(qv))
    return xgboost.train(
        {"objective": "rank:ndcg", "eval_metric": "ndcg@8", "max_depth": 6, "eta": 0.05, "nthread": 1},
        dtrain, trees, evals=[(dvalid, "valid")], early_stopping_rounds=30, verbose_eval=False,
    )


def compare(args, out, *teacher):
    cmd = [args.bin, "compare", "--train", args.train, "--valid", args.valid, "--test", args.test,
           "--methods", "no-distillation,pfd", "--seeds", str(args.seeds), "--widths", args.widths,
           "--backend", out.name.split("-")[-1], "--out", str(out), "--quiet",
           "--training-labels", args.training_labels, *(["--loss", args.loss] if args.loss else []),
           *(["--epochs", str(args.epochs)] if args.epochs else []), *teacher]
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    results = json.loads((out / "results.json").read_text())
    results["wall_seconds"] = time.perf_counter() - started
    return results


def row(results, method):
    m = results["methods"][method]
    return {"mean": m["ndcg@8"]["mean"], "std": m["ndcg@8"]["std"],
            "teacher": m.get("teacher_ndcg@8", {}).get("mean")}


def timed(f, repeat):
    f()
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - started)
    return best * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True)
    p.add_argument("--valid", required=True)
    p.add_argument("--test", required=True)
    p.add_argument("--bin", default="target/release/distillrank")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--widths", default="64,32")
    p.add_argument("--backends", default="cpu")
    p.add_argument("--out", default="target/gbdt-teacher")
    p.add_argument("--no-xgboost", action="store_true", help="leave the XGBoost teacher out (a large file)")
    p.add_argument("--trees", type=int, default=300, help="most boosting rounds (early stopping on the validation file)")
    p.add_argument("--training-labels", default="gumbel", help="the students' labels: gumbel (the paper's) or grades")
    p.add_argument("--loss", default=None, help="the students' loss (the CLI's default when not given)")
    p.add_argument("--epochs", type=int, default=None, help="most epochs of each student (the CLI's default when not given)")
    p.add_argument("--teacher", default=None, help="a LightGBM teacher.txt written by an earlier run, distilled instead of a new one")
    p.add_argument("--no-x-alone", action="store_true", help="leave out LightGBM on x alone (the serving baseline)")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    X, y, qid = read(args.train)
    Xv, yv, qv = read(args.valid, X.shape[1])
    Xt, _, _ = read(args.test, X.shape[1])
    read_seconds = time.perf_counter() - started

    # The teacher sees every column: x and z.
    started = time.perf_counter()
    if args.teacher:
        teacher = lightgbm.Booster(model_file=args.teacher)
        teacher_seconds = None
    else:
        teacher = train_lightgbm(X, y, qid, Xv, yv, qv, 0, args.trees)
        teacher_seconds = time.perf_counter() - started
    teacher.save_model(str(out / "teacher.txt"))
    xgb_teacher = None if args.no_xgboost else train_xgboost(X, y, qid, Xv, yv, qv, args.trees)
    report = {"teacher_trees": teacher.num_trees(), "engines": {}, "docs": X.shape[0] + Xv.shape[0] + Xt.shape[0],
              "training_labels": args.training_labels, "loss": args.loss,
              "read_seconds": read_seconds, "lightgbm_teacher_seconds": teacher_seconds,
              "teacher_from": args.teacher, "epochs": args.epochs, "seeds": args.seeds}
    if xgb_teacher is not None:
        xgb_teacher.save_model(str(out / "teacher.json"))
        report["xgboost_trees"] = xgb_teacher.num_boosted_rounds()
    for backend in args.backends.split(","):
        pfd = compare(args, out / f"pfd-{backend}", "--teacher-model", str(out / "teacher.txt"))
        # LightGBM on x alone (the columns the comparison keeps regular), its scores of every
        # file given to the same comparison, measured by the same evaluator.
        baseline = None
        if not args.no_x_alone:
            regular = [c - 1 for c in range(1, X.shape[1] + 1) if c not in pfd["privileged_columns"]]
            alone = train_lightgbm(X[:, regular], y, qid, Xv[:, regular], yv, qv, 0, args.trees)
            paths = []
            for name, data in [("train", X), ("valid", Xv), ("test", Xt)]:
                path = out / f"x-alone.{name}.scores"
                np.savetxt(path, alone.predict(data[:, regular], raw_score=True), fmt="%.17g")
                paths.append(str(path))
            baseline = compare(args, out / f"x-alone-{backend}", "--teacher-scores", ",".join(paths))
        from_xgb = None if xgb_teacher is None else compare(
            args, out / f"xgb-{backend}", "--teacher-model", str(out / "teacher.json"))
        test = next(t for t in pfd["tests"] if t["metric"] == "ndcg@8" and t["a"] == "pfd")
        report["engines"][backend] = {
            "student_alone": row(pfd, "no-distillation"),
            "pfd_student": row(pfd, "pfd"),
            "lightgbm_x_and_z": row(pfd, "pfd")["teacher"],
            "lightgbm_x_alone": baseline and row(baseline, "pfd")["teacher"],
            "xgboost_x_and_z": from_xgb and row(from_xgb, "pfd")["teacher"],
            "pfd_student_from_xgboost": from_xgb and row(from_xgb, "pfd"),
            "xgboost_sentence": from_xgb and next(s for s in from_xgb["sentences"] if s.startswith("pfd")),
            "pfd_test": {k: test.get(k) for k in ["mean_diff", "ci95", "p", "p_holm", "n_queries", "n_seeds", "min_detectable"]},
            "sentence": next(s for s in pfd["sentences"] if s.startswith("pfd")),
            "external_teacher": pfd["external_teacher"],
            "privileged_columns": pfd["privileged_columns"],
            "wall_seconds": pfd["wall_seconds"],
        }

    # Serving: the PFD student as ONNX against the teacher's own predict, on the CPU.
    first = args.backends.split(",")[0]
    student = out / f"pfd-{first}" / "students" / "pfd"
    onnx = out / "student.onnx"
    subprocess.run([args.bin, "export", "--model", str(student), "--onnx", str(onnx)], check=True, stdout=subprocess.DEVNULL)
    session = onnxruntime.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    sample = dense(Xt[:1000])
    serving = {"student_onnx_bytes": onnx.stat().st_size,
               "teacher_model_bytes": (out / "teacher.txt").stat().st_size,
               "xgboost_model_bytes": xgb_teacher and (out / "teacher.json").stat().st_size}
    for n in [1, 1000]:
        batch = np.ascontiguousarray(np.resize(sample, (n, sample.shape[1])))
        feed = {"features": batch.astype(np.float32)}
        serving[f"student_onnx_ms_{n}"] = timed(lambda: session.run(None, feed), 200 if n == 1 else 50)
        serving[f"teacher_lightgbm_ms_{n}"] = timed(lambda: teacher.predict(batch, raw_score=True, num_threads=1), 200 if n == 1 else 50)
        if xgb_teacher is not None:
            serving[f"teacher_xgboost_ms_{n}"] = timed(lambda: xgb_teacher.inplace_predict(batch, predict_type="margin"), 200 if n == 1 else 50)
    report["serving"] = serving
    report["versions"] = {"lightgbm": lightgbm.__version__, "xgboost": xgboost.__version__,
                          "onnxruntime": onnxruntime.__version__}
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

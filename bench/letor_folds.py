#!/usr/bin/env python3
"""The LETOR protocol with LightGBM beside the students: on each fold (LETOR 4.0's rotation of
S1..S5 into train, validation and test), LightGBM lambdarank trained on x alone and on every
column, and `distillrank compare` of the student alone against the PFD student distilled from
LightGBM on x and z; per-query graded NDCG@8 pooled over the folds' test queries, with paired
tests of each student against LightGBM on x alone.

    python bench/letor_folds.py --data DIR [--folds 1,2,3,4,5] [--seeds 5] [--bin B]
        [--out DIR] [--student "--transform rank-gauss --weight-decay 0.01"] [--teacher-cross-fit K]
        [--teacher-seeds N] [--teacher-trees T] [--every-column]
    python bench/letor_folds.py --train T [--valid V] --test E ...  (one split, no folds)

DIR holds S1.txt .. S5.txt (MQ2008, MQ2007). A single split's files may give their groups in
`.query` sidecars (LightGBM's rank example); without --valid, every 10th training query is the
validation file of every model. Every model trains on the grades and every figure is
graded NDCG@8 on the comparison's own prepared test split (its test_qids), computed here for
LightGBM with the library's conventions (gains 2^g - 1, log2 discounts, ties at their expected
value, queries without a relevant document excluded), which the script checks against the
library's own figure of the same scores (a comparison's teacher NDCG@8) on the first fold.

LightGBM: up to 500 trees, learning rate 0.05, 31 leaves, early stopping after 30 rounds without a
better validation NDCG@8, one model a seed (its bagging and feature fraction are those of the seed:
0.8 each, so that seeds differ), deterministic (the same trees every run), so each is saved in the
fold's folder under --out and read back by a later run on that folder. The PFD teacher is LightGBM
on every column, seed 0; with --teacher-trees T it has exactly T trees (no early stopping), with
--teacher-seeds N it is the mean raw score of N seeds' models (those of the every-column row), one
of the three teacher options at a time. With --teacher-cross-fit K its scores of the training file
are out of fold: the training queries are cut into K parts, and each part is scored by a LightGBM
teacher trained on the other K - 1 (early stopping on the same validation file), so that no training
document's soft label comes from a model that saw its grade; the validation and test files are
scored by the teacher trained on every training query, and the comparison reads the three as
--teacher-scores. The tests pair each query's NDCG@8 averaged over the seeds: the mean difference, a
bootstrap 95% interval (10,000 resamples of the queries) and a sign-flip randomization p (10,000
flips). Each fold's comparison also holds LightGBM on x alone (seed 0, its z columns blanked) as the
library's reference row (`--reference-model`), with the library's own paired tests of each student
against it. With --every-column the script measures the student on every column instead: the
student alone on x and z (`distillrank train --features both`, one model a seed, scored on the
test file by `distillrank predict`) against LightGBM on every column, paired in the same way.
Prints one JSON object. The `--student` flags go to every `distillrank compare` (with
--every-column, to every `distillrank train`); report validation figures (`valid`) to choose
settings, test figures once the choice is made.

Dependencies (PyPI, for this script only): numpy, scikit-learn, lightgbm.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import lightgbm
import numpy as np
from sklearn.datasets import load_svmlight_file

ROTATION = [(["S1", "S2", "S3"], "S4", "S5"), (["S2", "S3", "S4"], "S5", "S1"),
            (["S3", "S4", "S5"], "S1", "S2"), (["S4", "S5", "S1"], "S2", "S3"),
            (["S5", "S1", "S2"], "S3", "S4")]
K = 8


def groups(qid):
    _, starts, counts = np.unique(qid, return_index=True, return_counts=True)
    return counts[np.argsort(starts)]


def lightgbm_ranker(X, y, qid, Xv, yv, qv, seed, trees=0, cap=500):
    """LightGBM lambdarank: up to `cap` trees with early stopping, or exactly `trees` without it."""
    ranker = lightgbm.LGBMRanker(
        n_estimators=trees or cap, learning_rate=0.05, num_leaves=31, min_child_samples=20,
        subsample=0.8, subsample_freq=1, colsample_bytree=0.8,
        random_state=seed, verbose=-1, n_jobs=2, deterministic=True, force_row_wise=True,
    )
    ranker.fit(X, y, group=groups(qid), eval_set=[(Xv, yv)], eval_group=[groups(qv)],
               eval_at=[K], callbacks=[] if trees else [lightgbm.early_stopping(30, verbose=False)])
    return ranker.booster_


def read_file(path, reader):
    """A LETOR file as (X, grades, qid), X dense f64: by scikit-learn's SVMlight reader, or by
    the distillrank package's (`--reader distillrank`, for files of gigabytes; values in f32)."""
    if reader == "distillrank":
        import distillrank
        X, y, qid = distillrank.read_letor(str(path))
        return X.astype(np.float64), y.astype(np.float64), qid
    X, y, qid = load_svmlight_file(path, query_id=True)
    return X.toarray(), y, qid


def cached_ranker(path, *args):
    """`lightgbm_ranker(*args)`, saved at `path` and read back from it by a later run on the same
    folder (LightGBM is deterministic here, so the model is the one it would train again)."""
    if path.exists():
        return lightgbm.Booster(model_file=str(path))
    model = lightgbm_ranker(*args)
    model.save_model(str(path))
    return model


def cross_fitted_scores(X, y, qid, Xv, yv, qv, parts):
    """The teacher's scores of the training rows, each from a model trained without its query:
    query q (in the file's order) falls in part q mod `parts`."""
    order = {q: i for i, q in enumerate(dict.fromkeys(qid.tolist()))}
    part = np.array([order[q] % parts for q in qid.tolist()])
    scores = np.empty(len(y))
    for k in range(parts):
        held = part == k
        model = lightgbm_ranker(X[~held], y[~held], qid[~held], Xv, yv, qv, 0)
        scores[held] = model.predict(X[held], raw_score=True)
    return scores


class Bagged:
    """The mean raw score of several LightGBM models (`--teacher-seeds`)."""

    def __init__(self, models):
        self.models = models

    def predict(self, X, raw_score=True):
        return np.mean([m.predict(X, raw_score=raw_score) for m in self.models], axis=0)


def write_scores(path, scores):
    path.write_text("".join(f"{float(s)!r}\n" for s in scores))
    return str(path)


def ndcg_at(scores, grades, k=K):
    """Graded NDCG@k of one query, ties at their expected value; None without a relevant doc."""
    gains = 2.0 ** grades - 1.0
    ideal = np.sort(gains)[::-1][:k]
    discounts = 1.0 / np.log2(np.arange(2, len(grades) + 2))
    idcg = float(ideal @ discounts[:len(ideal)])
    if idcg == 0.0:
        return None
    order = np.argsort(-scores, kind="stable")
    s, g = scores[order], gains[order]
    dcg, at = 0.0, 0
    while at < len(s) and at < k:
        end = at
        while end < len(s) and s[end] == s[at]:
            end += 1
        # Every order of the tied documents is equally likely: each position they take gets
        # their mean gain.
        dcg += g[at:end].mean() * discounts[at:min(end, k)].sum()
        at = end
    return dcg / idcg


def per_query(scores, grades, qid, qids):
    """NDCG@8 of each query of `qids`, in that order."""
    out = []
    for q in qids:
        rows = qid == q
        out.append(ndcg_at(scores[rows], grades[rows]))
    return np.array(out, dtype=float)


def paired(a, b, rng):
    """a - b per query: mean, bootstrap 95% interval, sign-flip randomization p (two-sided)."""
    d = a - b
    n = len(d)
    means = d[rng.integers(0, n, size=(10_000, n))].mean(axis=1)
    flips = (rng.integers(0, 2, size=(10_000, n)) * 2 - 1) * d
    p = (np.sum(np.abs(flips.mean(axis=1)) >= abs(d.mean()) - 1e-15) + 1) / (10_000 + 1)
    return {"mean_diff": float(d.mean()), "ci95": [float(np.quantile(means, 0.025)),
            float(np.quantile(means, 0.975))], "p": float(p), "n_queries": int(n)}


def paired_or_why(a, b, rng):
    """`paired(a, b)`, or why not: with fewer than 6 queries the smallest reachable p is above
    0.05 and no interval means anything, so the test says so instead of a number."""
    if len(a) >= 6:
        return paired(a, b, rng)
    return {"mean_diff": None, "why": f"{len(a)} test queries with a relevant document: too few to test"}


def compare(args, out, files, *extra, student=True):
    """`distillrank compare` on the fold's files: with `student`, the run's seeds and student
    flags; without, only `extra` (a tiny run that reads the preparation)."""
    own = ["--seeds", str(args.seeds), *args.student.split()] if student else []
    cmd = [args.bin, "compare", "--train", files[0], "--valid", files[1], "--test", files[2],
           "--training-labels", "grades", "--backend", args.backend,
           "--out", str(out), "--quiet", *own, *extra]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return json.loads((out / "results.json").read_text())


def group_size(flags):
    """`--min-group-size N` as the student flags give it (either spelling), else nothing."""
    words = flags.split()
    for i, word in enumerate(words):
        if word.startswith("--min-group-size="):
            return [word]
        if word == "--min-group-size" and i + 1 < len(words):
            return words[i:i + 2]
    return []


def every_column_student(args, here, files, narrower, yt, qt, test_qids):
    """The student alone on every column (`--every-column`): `distillrank train --features both`,
    one model a seed with the `--student` flags, its test file scored by `distillrank predict`.
    Returns each query's NDCG@8 averaged over the seeds, and each seed's validation figure."""
    per_seed, valid = [], []
    for seed in range(args.seeds):
        prefix = here / "every-column" / f"seed{seed}"
        prefix.parent.mkdir(parents=True, exist_ok=True)
        trained = subprocess.run(
            [args.bin, "train", "--train", files[0], "--valid", files[1], "--features", "both",
             "--training-labels", "grades", "--backend", args.backend, "--seed", str(seed),
             "--save", str(prefix), "--json", "--quiet", *args.student.split(), *narrower],
            check=True, capture_output=True, text=True)
        valid.append(json.loads(trained.stdout)["best_valid_ndcg"])
        allow = ["--allow-missing-features"] if narrower else []
        scored = subprocess.run([args.bin, "predict", "--model", str(prefix), files[2], "--quiet",
                                 "--backend", args.backend, *allow],
                                check=True, capture_output=True, text=True)
        scores = np.array([float(v) for v in scored.stdout.split()])
        per_seed.append(per_query(scores, yt, qt, test_qids))
    return np.mean(per_seed, axis=0), valid


def queries(path):
    """The (qid, line) of each document of a LETOR file: qids from its `qid:` tokens, or from its
    `.query` sidecar (one group size a line), written into the line."""
    lines = [l for l in Path(path).read_text().splitlines() if l.split("#", 1)[0].strip()]
    sidecar = Path(str(path) + ".query")
    if not sidecar.exists():
        return [(int(l.split()[1].split(":")[1]), l) for l in lines]
    out, at = [], 0
    for q, size in enumerate(int(n) for n in sidecar.read_text().split()):
        for l in lines[at:at + size]:
            grade, rest = l.split(None, 1)
            out.append((q + 1, f"{grade} qid:{q + 1} {rest}"))
        at += size
    return out


def single_split(args, out):
    """One split's files with `qid:` tokens; without --valid, every 10th training query held
    out as the validation file."""
    out.mkdir(parents=True, exist_ok=True)
    train, test = queries(args.train), queries(args.test)
    valid = queries(args.valid) if args.valid else None
    if valid is None:
        ids = sorted({q for q, _ in train})
        held = set(ids[9::10])
        valid = [(q, l) for q, l in train if q in held]
        train = [(q, l) for q, l in train if q not in held]
    paths = []
    for name, rows in [("train", train), ("vali", valid), ("test", test)]:
        path = out / f"{name}.txt"
        path.write_text("".join(l + "\n" for _, l in rows))
        paths.append(str(path))
    return paths


def fold_files(args, fold, out):
    if args.train:
        return single_split(args, out)
    train, valid, test = ROTATION[fold - 1]
    d = Path(args.data)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "train.txt", "w") as f:
        for part in train:
            f.write((d / f"{part}.txt").read_text())
    return [str(out / "train.txt"), str(d / f"{valid}.txt"), str(d / f"{test}.txt")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data")
    p.add_argument("--train")
    p.add_argument("--valid")
    p.add_argument("--test")
    p.add_argument("--folds", default="1,2,3,4,5")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--bin", default="target/release/distillrank")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--out", default="target/letor-folds")
    p.add_argument("--student", default="", help="flags of every distillrank compare (with --every-column: "
                                                  "of every distillrank train)")
    p.add_argument("--reader", choices=["sklearn", "distillrank"], default="sklearn",
                   help="how the script reads the files into arrays for LightGBM")
    p.add_argument("--one-lightgbm-per-role", action="store_true",
                   help="LightGBM on x alone and on every column: the reference and the teacher (seed 0), "
                        "not a model a seed (for files where each takes many minutes)")
    p.add_argument("--teacher-cross-fit", type=int, default=0, metavar="K",
                   help="score the training file by K teachers, each trained without the part it scores")
    p.add_argument("--teacher-trees", type=int, default=0, metavar="T",
                   help="the teacher (seed 0, every column) has exactly T trees, without early stopping")
    p.add_argument("--teacher-seeds", type=int, default=1, metavar="N",
                   help="the teacher is the mean raw score of LightGBM on every column over seeds 0..N-1 "
                        "(the models of the lightgbm_all row), given as --teacher-scores")
    p.add_argument("--every-column", action="store_true",
                   help="the student alone on every column (distillrank train "
                        "--features both, one model a seed) against LightGBM on every column (one model a seed)")
    args = p.parse_args()
    for flag, value, least in [("--teacher-cross-fit", args.teacher_cross_fit, 0),
                               ("--teacher-seeds", args.teacher_seeds, 1),
                               ("--teacher-trees", args.teacher_trees, 0)]:
        if value < least:
            p.error(f"{flag} {value}: expected a whole number of at least {least}")
    # Each of the three makes the teacher in its own way; two together would score the training
    # file by one teacher and the validation and test files by another.
    teachers = [flag for flag, chosen in [("--teacher-cross-fit", args.teacher_cross_fit > 1),
                                          ("--teacher-seeds", args.teacher_seeds > 1),
                                          ("--teacher-trees", args.teacher_trees > 0)] if chosen]
    if len(teachers) > 1:
        p.error(f"{' and '.join(teachers)} each choose the teacher: give one of them")
    if args.every_column and (teachers or args.one_lightgbm_per_role):
        given = teachers + (["--one-lightgbm-per-role"] if args.one_lightgbm_per_role else [])
        p.error(f"--every-column trains no teacher and a LightGBM model a seed: give it without {' and '.join(given)}")
    folds = [1] if args.train else [int(f) for f in args.folds.split(",")]
    out = Path(args.out)
    rng = np.random.default_rng(0)
    if args.every_column:
        pooled = {"student_every_column": [], "lightgbm_all": []}
        valid = {"student_every_column": []}
        pairs = [("student_every_column", "lightgbm_all")]
    else:
        pooled = {"student_alone": [], "pfd_student": [], "lightgbm_x_alone": [], "lightgbm_all": [],
                  "lightgbm_teacher": []}
        valid = {"student_alone": [], "pfd_student": []}
        pairs = [("student_alone", "lightgbm_x_alone"), ("pfd_student", "lightgbm_x_alone"),
                 ("pfd_student", "student_alone")]
    started = time.perf_counter()
    report = {"folds": {}, "student_flags": args.student, "seeds": args.seeds, "every_column": args.every_column,
              "teacher_cross_fit": args.teacher_cross_fit, "teacher_seeds": args.teacher_seeds,
              "teacher_trees": args.teacher_trees}
    for fold in folds:
        here = out / f"fold{fold}"
        files = fold_files(args, fold, here)
        read = [read_file(f, args.reader) for f in files]
        widths = [r[0].shape[1] for r in read]
        width = max(widths)
        # A sparse file's last columns may be zero everywhere: read as 0, as LightGBM reads them.
        narrower = ["--allow-missing-features", "true"] if min(widths) < widths[0] else []
        (X, y, qid), (Xv, yv, qv), (Xt, yt, qt) = [
            (np.pad(x, ((0, 0), (0, width - x.shape[1]))), g, q) for x, g, q in read]
        del read
        if args.every_column:
            # The comparison's prepared test split, by a tiny run of the same preparation (with
            # the student's --min-group-size, the one flag that changes which queries are kept).
            split = compare(args, here / "split", files, "--methods", "no-distillation", "--seeds", "1",
                            "--epochs", "1", "--widths", "4", *narrower, *group_size(args.student),
                            student=False)
            test_qids = np.array(split["test_qids"])
            fold_scores = {"lightgbm_all": np.mean([
                per_query(cached_ranker(here / f"lightgbm_all-{seed}.txt", X, y, qid, Xv, yv, qv, seed)
                          .predict(Xt, raw_score=True), yt, qt, test_qids)
                for seed in range(args.seeds)], axis=0)}
            fold_scores["student_every_column"], seeds_valid = every_column_student(
                args, here, files, narrower, yt, qt, test_qids)
            valid["student_every_column"] += seeds_valid
            report["folds"][fold] = {"test_queries": len(test_qids),
                                     **{k: float(np.nanmean(v.astype(float))) for k, v in fold_scores.items()}}
            for k, v in fold_scores.items():
                pooled[k].append(v.astype(float))
            continue
        teacher_file = here / (f"teacher-{args.teacher_trees}-trees.txt" if args.teacher_trees else "teacher.txt")
        teacher = cached_ranker(teacher_file, X, y, qid, Xv, yv, qv, 0, args.teacher_trees)
        if args.teacher_seeds > 1:
            teacher = Bagged([cached_ranker(here / f"lightgbm_all-{seed}.txt", X, y, qid, Xv, yv, qv, seed)
                              for seed in range(args.teacher_seeds)])
        # The privileged split the comparison will make (the same preparation, one tiny model).
        split = compare(args, here / "split", files, "--methods", "no-distillation", "--seeds", "1",
                        "--epochs", "1", "--widths", "4", *narrower, student=False)
        privileged = split["privileged_columns"]
        regular = [c - 1 for c in range(1, X.shape[1] + 1) if c not in privileged]
        # The reference row of the library's own table: LightGBM on x alone (seed 0) as a model
        # of the files' full width whose z columns were constant in training, so that it reads
        # the files' columns and never z.
        blank = [c - 1 for c in privileged]
        Xr, Xvr = X.copy(), Xv.copy()
        Xr[:, blank] = 0.0
        Xvr[:, blank] = 0.0
        reference = cached_ranker(here / "reference.txt", Xr, y, qid, Xvr, yv, qv, 0)
        del Xr, Xvr
        # The split's own z, named: a --student setting that changes the training groups (such as
        # --min-group-size) would otherwise choose z again on them.
        pinned = ["--privileged", "cols:" + ",".join(map(str, privileged))]
        if args.teacher_cross_fit > 1:
            soft = [cross_fitted_scores(X, y, qid, Xv, yv, qv, args.teacher_cross_fit),
                    teacher.predict(Xv, raw_score=True), teacher.predict(Xt, raw_score=True)]
            given = ",".join(write_scores(here / f"teacher.{name}.scores", s)
                             for name, s in zip(["train", "valid", "test"], soft))
            teacher_flags = ["--teacher-scores", given]
        elif args.teacher_seeds > 1:
            given = ",".join(write_scores(here / f"teacher.{name}.scores", teacher.predict(m, raw_score=True))
                             for name, m in zip(["train", "valid", "test"], [X, Xv, Xt]))
            teacher_flags = ["--teacher-scores", given]
        else:
            teacher_flags = ["--teacher-model", str(teacher_file)]
        runs = compare(args, here / "compare", files, "--methods", "no-distillation,pfd",
                       *teacher_flags, *pinned,
                       "--reference-model", str(here / "reference.txt"), *narrower)
        assert runs["privileged_columns"] == privileged
        test_qids = np.array(runs["test_qids"])
        fold_scores = {}
        for name, cols in [("lightgbm_x_alone", regular), ("lightgbm_all", list(range(X.shape[1])))]:
            if args.one_lightgbm_per_role:
                # The reference (z blanked) and the teacher stand for LightGBM on x alone and on
                # every column: seed 0's models of those columns.
                model = reference if name == "lightgbm_x_alone" else teacher
                Xs = Xt.copy()
                if name == "lightgbm_x_alone":
                    Xs[:, blank] = 0.0
                fold_scores[name] = per_query(model.predict(Xs, raw_score=True), yt, qt, test_qids)
                continue
            per_seed = []
            for seed in range(args.seeds):
                model = cached_ranker(here / f"{name}-{seed}.txt", X[:, cols], y, qid, Xv[:, cols], yv, qv, seed)
                per_seed.append(per_query(model.predict(Xt[:, cols], raw_score=True), yt, qt, test_qids))
            fold_scores[name] = np.mean(per_seed, axis=0)
        teacher_test = per_query(teacher.predict(Xt, raw_score=True), yt, qt, test_qids)
        fold_scores["lightgbm_teacher"] = teacher_test
        for method, key in [("no-distillation", "student_alone"), ("pfd", "pfd_student")]:
            fold_scores[key] = np.mean(np.array(runs["per_query"][method], dtype=float), axis=0)
            valid[key] += [r["student"]["best_valid_ndcg"] for r in runs["methods"][method]["runs"]]
        # This script's NDCG@8 against the library's, on the same teacher scores.
        library = runs["methods"]["pfd"]["teacher_ndcg@8"]["mean"]
        ours = float(np.nanmean(np.where(np.isnan(teacher_test.astype(float)), np.nan, teacher_test)))
        verdicts = [t for t in runs["tests"] if t["b"] == "reference" and t["metric"] == "ndcg@8"]
        report["folds"][fold] = {
            "test_queries": len(test_qids),
            "reference_ndcg8_library": runs["reference"]["run"]["test_graded_ndcg"][3][1],
            "against_reference_library": {t["a"]: [t["mean_diff"], t["ci95"], t["p_holm"]] for t in verdicts},
            "teacher_ndcg8_library": library, "teacher_ndcg8_here": ours,
            **{k: float(np.nanmean(v.astype(float))) for k, v in fold_scores.items()},
        }
        for k, v in fold_scores.items():
            pooled[k].append(v.astype(float))
    keep = None
    for k in pooled:
        pooled[k] = np.concatenate(pooled[k])
        ok = ~np.isnan(pooled[k])
        keep = ok if keep is None else keep & ok
    report["pooled"] = {k: float(v[keep].mean()) if keep.any() else None for k, v in pooled.items()}
    report["pooled_queries"] = int(keep.sum())
    report["valid"] = {k: float(np.mean(v)) for k, v in valid.items()}
    report["tests"] = {f"{a} - {b}": paired_or_why(pooled[a][keep], pooled[b][keep], rng) for a, b in pairs}
    report["seconds"] = time.perf_counter() - started
    report["versions"] = {"lightgbm": lightgbm.__version__}
    json.dump(report, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()

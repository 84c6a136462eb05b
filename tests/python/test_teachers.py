"""Teachers trained elsewhere: distillrank scores a LightGBM or XGBoost model as the library that
wrote it does. lightgbm 4.7 and xgboost 3.x (PyPI, in the test environment only: the product
depends on neither) train rankers on MQ2008, on LightGBM's rank example (sparse, a .query file,
trained by LightGBM's own file reader) and on a file of MSLR-WEB30K's shape (136 features, values
up to 10^7, a third of them absent); `distillrank predict --model` must give their `predict`
(raw scores, margins) within 1e-5 relative. Then a LightGBM teacher trained on x and z is
distilled by `compare`, whose report names the privileged columns it splits on.
"""

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

lightgbm = pytest.importorskip("lightgbm")
xgboost = pytest.importorskip("xgboost")
from sklearn.datasets import load_svmlight_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "target" / "data"
MQ2008 = DATA / "mq2008" / "Fold1"
RANK = DATA / "lightgbm_rank"
BIN = Path(os.environ.get("DISTILLRANK_BIN", ROOT / "target" / "debug" / "distillrank"))


def cli(*args):
    r = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r


def predicted(model, file, *extra):
    """distillrank predict's scores of `file` by `model`, one a line."""
    return np.array([float(v) for v in cli("predict", "--model", model, file, *extra).stdout.split()])


def groups(qid):
    """Group sizes of contiguous query ids."""
    _, starts, counts = np.unique(qid, return_index=True, return_counts=True)
    return counts[np.argsort(starts)]


def agree(ours, theirs):
    """Within 1e-5 relative (an absolute 1e-7 where a score is near 0)."""
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)


def lightgbm_ranker(X, y, qid, **params):
    return lightgbm.LGBMRanker(
        n_estimators=40, num_leaves=15, min_child_samples=5, verbose=-1, **params
    ).fit(X, y, group=groups(qid)).booster_


def xgboost_ranker(X, y, qid, objective="rank:ndcg", rounds=30):
    dtrain = xgboost.DMatrix(X, y)
    dtrain.set_group(groups(qid))
    return xgboost.train({"objective": objective, "max_depth": 5, "eta": 0.3}, dtrain, rounds)


@pytest.fixture(scope="module")
def mq2008():
    X, y, qid = load_svmlight_file(str(MQ2008 / "train.txt"), query_id=True)
    Xt, _, _ = load_svmlight_file(str(MQ2008 / "test.txt"), query_id=True, n_features=X.shape[1])
    return X, y, qid, Xt


def test_lightgbm_scores_as_lightgbm_on_mq2008(mq2008, tmp_path):
    X, y, qid, Xt = mq2008
    booster = lightgbm_ranker(X, y, qid)
    theirs = booster.predict(Xt, raw_score=True)
    booster.save_model(str(tmp_path / "model.txt"))
    (tmp_path / "dump.json").write_text(json.dumps(booster.dump_model()))
    agree(predicted(tmp_path / "model.txt", MQ2008 / "test.txt"), theirs)
    agree(predicted(tmp_path / "dump.json", MQ2008 / "test.txt"), theirs)
    # A random forest (boosting="rf"): the trees' mean, the margin LightGBM's predict() puts
    # through its link; its raw_score is their sum.
    forest = lightgbm_ranker(X, y, qid, boosting_type="rf", subsample=0.7, subsample_freq=1)
    forest.save_model(str(tmp_path / "forest.txt"))
    agree(predicted(tmp_path / "forest.txt", MQ2008 / "test.txt"),
          forest.predict(Xt, raw_score=True) / forest.num_trees())


def test_xgboost_scores_as_xgboost_on_mq2008(mq2008, tmp_path):
    X, y, qid, Xt = mq2008
    for objective in ["rank:ndcg", "rank:pairwise", "binary:logistic", "binary:logitraw"]:
        labels = (y > 0).astype(float) if objective.startswith("binary") else y
        booster = xgboost_ranker(X, labels, qid, objective)
        booster.save_model(str(tmp_path / "model.json"))
        theirs = booster.predict(xgboost.DMatrix(Xt), output_margin=True)
        agree(predicted(tmp_path / "model.json", MQ2008 / "test.txt"), theirs)


def test_ubjson_is_refused_with_what_to_save(mq2008, tmp_path):
    X, y, qid, _ = mq2008
    booster = xgboost_ranker(X, y, qid, rounds=2)
    booster.save_model(str(tmp_path / "model.ubj"))
    r = subprocess.run([str(BIN), "predict", "--model", tmp_path / "model.ubj", MQ2008 / "test.txt"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "UBJSON" in r.stderr and "model.json" in r.stderr, r.stderr


def test_the_rank_example_by_lightgbms_own_reader_and_as_sparse_arrays(tmp_path):
    # LightGBM's own reader keeps index 0: the model's column j is feature j (from-0, found by
    # the width).
    data = lightgbm.Dataset(str(RANK / "rank.train"), params={"verbose": -1})
    own = lightgbm.train({"objective": "lambdarank", "num_leaves": 15, "verbose": -1}, data, 30)
    own.save_model(str(tmp_path / "own.txt"))
    Xt, _ = load_svmlight_file(str(RANK / "rank.test"), zero_based=True, n_features=own.num_feature())
    agree(predicted(tmp_path / "own.txt", RANK / "rank.test"), own.predict(Xt, raw_score=True))
    # Arrays (column 0 is feature 1), LightGBM and XGBoost; XGBoost reads the absent entries
    # of the sparse file as missing, as its DMatrix of a sparse matrix does.
    X, y = load_svmlight_file(str(RANK / "rank.train"))
    Xt, _ = load_svmlight_file(str(RANK / "rank.test"), n_features=X.shape[1])
    qid = np.repeat(np.arange(len(sizes := np.loadtxt(RANK / "rank.train.query", dtype=int))), sizes)
    booster = lightgbm_ranker(X, y, qid)
    booster.save_model(str(tmp_path / "arrays.txt"))
    agree(predicted(tmp_path / "arrays.txt", RANK / "rank.test", "--columns", "from-1"),
          booster.predict(Xt, raw_score=True))
    booster = xgboost_ranker(X, y, qid)
    booster.save_model(str(tmp_path / "arrays.json"))
    agree(predicted(tmp_path / "arrays.json", RANK / "rank.test", "--columns", "from-1"),
          booster.predict(xgboost.DMatrix(Xt), output_margin=True))


def mslr_shaped(path, queries, seed):
    """A file of MSLR-WEB30K's shape: 136 features, grades 0..4, counts up to 10^7 and reals with
    six decimals, a third of the entries absent (and some written as 0), and one feature whose
    values differ by less than f32's step."""
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(queries):
        for _ in range(rng.integers(8, 30)):
            grade = int(rng.integers(0, 5))
            entries = []
            for f in range(1, 137):
                if rng.random() < 1 / 3:
                    continue
                if f == 136:
                    # Values closer together than f32 can tell apart at 10^7 (its step is 1):
                    # a reader in f32 would put them on the wrong side of LightGBM's splits.
                    v = f"{10**7 + grade * 0.25 + int(rng.integers(0, 2)) * 0.125:.3f}"
                elif f % 3 == 0:
                    v = f"{int(rng.integers(0, 10**7) * (1 + grade) // 5)}"
                elif f % 3 == 1:
                    v = f"{rng.random() * 10**7 * (0.5 + grade / 8):.6f}"
                else:
                    v = "0" if rng.random() < 0.2 else f"{rng.normal(grade, 2):.6f}"
                entries.append(f"{f}:{v}")
            lines.append(f"{grade} qid:{q + 1} " + " ".join(entries))
    path.write_text("\n".join(lines) + "\n")


def test_mslr_shape_with_large_values_and_missing_features(tmp_path):
    mslr_shaped(tmp_path / "train.txt", 120, 1)
    mslr_shaped(tmp_path / "test.txt", 40, 2)
    X, y, qid = load_svmlight_file(str(tmp_path / "train.txt"), query_id=True, n_features=136)
    Xt, _, _ = load_svmlight_file(str(tmp_path / "test.txt"), query_id=True, n_features=136)
    booster = lightgbm_ranker(X, y, qid)
    booster.save_model(str(tmp_path / "lgb.txt"))
    agree(predicted(tmp_path / "lgb.txt", tmp_path / "test.txt"), booster.predict(Xt, raw_score=True))
    booster = xgboost_ranker(X, y, qid)
    booster.save_model(str(tmp_path / "xgb.json"))
    agree(predicted(tmp_path / "xgb.json", tmp_path / "test.txt"),
          booster.predict(xgboost.DMatrix(Xt), output_margin=True))


def test_a_lightgbm_teacher_on_x_and_z_is_distilled_and_reported(mq2008, tmp_path):
    X, y, qid, _ = mq2008
    booster = lightgbm_ranker(X, y, qid)
    booster.save_model(str(tmp_path / "teacher.txt"))
    out = tmp_path / "out"
    cli("compare", "--bundled", "mq2008", "--teacher-model", tmp_path / "teacher.txt",
        "--methods", "no-distillation,pfd", "--seeds", 2, "--epochs", 2, "--widths", 16,
        "--backend", "cpu", "--out", out, "--quiet")
    results = json.loads((out / "results.json").read_text())
    teacher = results["external_teacher"]
    assert "LightGBM" in teacher["description"] and teacher["reads"] == "x and z"
    assert set(teacher["privileged_features"]) == set(teacher["split_features"]) & set(results["privileged_columns"])
    # The teacher's own NDCG@8 and the student's, with the paired test of PFD's gain.
    assert results["methods"]["pfd"]["teacher_ndcg@8"]["mean"] is not None
    assert any(t["a"] == "pfd" and t["b"] == "no-distillation" for t in results["tests"])


def test_the_same_teacher_gives_the_same_student_through_the_cli_and_python(mq2008, tmp_path):
    import distillrank

    X, y, qid, _ = mq2008
    booster = lightgbm_ranker(X, y, qid)
    booster.save_model(str(tmp_path / "teacher.txt"))
    out = tmp_path / "out"
    cli("compare", "--bundled", "mq2008", "--teacher-model", tmp_path / "teacher.txt",
        "--methods", "no-distillation,pfd", "--seeds", 2, "--epochs", 2, "--widths", 16,
        "--backend", "cpu", "--out", out, "--quiet")
    by_cli = json.loads((out / "results.json").read_text())
    # The Booster itself, read through its own dump.
    by_python = distillrank.compare(
        distillrank.Setup(source="mq2008", teacher=booster, methods=["no-distillation", "pfd"],
                          seeds=2, epochs=2, widths=[16], backend="cpu"),
        verbose=False,
    )
    for method in ["no-distillation", "pfd"]:
        assert by_python["methods"][method]["ndcg@8"] == by_cli["methods"][method]["ndcg@8"]
    assert by_python["methods"]["pfd"]["teacher_ndcg@8"] == by_cli["methods"]["pfd"]["teacher_ndcg@8"]


def test_a_ranker_learns_from_a_booster_or_from_scores(mq2008):
    import distillrank

    X, y, qid, _ = mq2008
    dense = X.toarray()
    booster = lightgbm_ranker(X, y, qid)
    # The extension scores arrays as LightGBM does.
    ours, notes = distillrank._distillrank.forest_scores(booster.model_to_string().encode(), "b", dense, "auto")
    assert notes == []
    agree(ours, booster.predict(dense, raw_score=True))
    ranker = distillrank.Ranker(method="pfd", teacher=booster, epochs=2, widths=[16], backend="cpu")
    ranker.fit(dense, y.astype(int), qid=qid, verbose=False)
    assert len(ranker.run_["teachers"]) == 1
    assert np.isfinite(ranker.predict(dense)).all()
    # The same scores given as an array train the same student.
    given = distillrank.Ranker(method="pfd", teacher=ours, epochs=2, widths=[16], backend="cpu")
    given.fit(dense, y.astype(int), qid=qid, verbose=False)
    np.testing.assert_array_equal(given.predict(dense), ranker.predict(dense))
    # And as a plain list of numbers: the training rows' scores, as the array is.
    listed = distillrank.Ranker(method="pfd", teacher=[float(v) for v in ours], epochs=2, widths=[16], backend="cpu")
    listed.fit(dense, y.astype(int), qid=qid, verbose=False)
    np.testing.assert_array_equal(listed.predict(dense), ranker.predict(dense))
    # Scores of the wrong length are refused by their count.
    with pytest.raises(ValueError, match="teacher scores for the"):
        distillrank.Ranker(method="pfd", teacher=ours[:-1], epochs=1, backend="cpu").fit(
            dense, y.astype(int), qid=qid, verbose=False)
    # An estimator that was never fitted is named as such, whichever library it comes from.
    for unfitted in [lightgbm.LGBMRanker(), xgboost.XGBRanker()]:
        with pytest.raises(ValueError, match=f"teacher: this {type(unfitted).__name__} is not fitted"):
            distillrank.Ranker(method="pfd", teacher=unfitted, epochs=1, backend="cpu").fit(
                dense, y.astype(int), qid=qid, verbose=False)
    # A fitted estimator is read through its booster.
    fitted = lightgbm.LGBMRanker(n_estimators=5, verbose=-1).fit(X, y, group=groups(qid))
    distillrank.Ranker(method="pfd", teacher=fitted, epochs=1, widths=[8], backend="cpu").fit(
        dense, y.astype(int), qid=qid, verbose=False)


def test_a_tree_teacher_says_in_python_what_it_says_in_the_cli(mq2008, tmp_path, caplog):
    """What the CLI says beside a tree model's scores, Ranker.fit and distillrank.dask say too,
    through the package's logger: the column mapping that `auto` chose by the splits where the
    widths did not tell (a warning, with the setting of that door that chooses it: arrays carry
    every column, and LightGBM refuses a model of another width), and an objective that does not
    rank (a warning too, whatever verbose says)."""
    import logging

    import distillrank

    X, y, qid, _ = mq2008
    dense = X.toarray()
    narrow = lightgbm.LGBMRanker(n_estimators=5, verbose=-1).fit(dense[:, :40], y, group=groups(qid)).booster_
    narrow.save_model(str(tmp_path / "narrow.txt"))
    cli_note = cli("predict", "--model", tmp_path / "narrow.txt", MQ2008 / "train.txt").stderr
    assert "the model has 40 input columns and the data 46 features" in cli_note, cli_note
    regression = lightgbm.LGBMRegressor(n_estimators=5, verbose=-1).fit(dense, y).booster_
    # XGBoost's Boosters say the same, through the same reader of their JSON.
    xgb_narrow = xgboost_ranker(dense[:, :40], y, qid, rounds=5)
    xgb_regression = xgboost_ranker(dense, y, qid, objective="reg:squarederror", rounds=5)
    mapping = ("the model has 40 input columns and the data 46 features: its columns are read "
               r"from-\d.*give teacher_columns from-1 or from-0 to choose")
    for booster, level, words, verbose in [
        (narrow, logging.WARNING, mapping, False),
        (regression, logging.WARNING, "the model's objective is regression, not a ranking objective", False),
        (xgb_narrow, logging.WARNING, mapping, False),
        (xgb_regression, logging.WARNING, "the model's objective is reg:squarederror, not a ranking objective", False),
    ]:
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="distillrank"):
            distillrank.Ranker(method="pfd", teacher=booster, epochs=1, widths=[8], backend="cpu").fit(
                dense, y.astype(int), qid=qid, verbose=verbose)
        said = [r for r in caplog.records if re.search(words, r.getMessage())]
        assert len(said) == 1 and said[0].levelno == level, caplog.text
    # Arrays carry every column, so the guess is a warning, said quiet too; given, the mapping
    # needs no word.
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="distillrank"):
        distillrank.Ranker(method="pfd", teacher=narrow, teacher_columns="from-1", epochs=1, widths=[8],
                           backend="cpu").fit(dense, y.astype(int), qid=qid, verbose=True)
    assert "input columns" not in caplog.text
    with pytest.raises(ValueError, match="^teacher_columns 'sideways': expected auto, from-1 or from-0"):
        distillrank._distillrank.forest_scores(narrow.model_to_string().encode(), "b", dense, "sideways")
    # The Ranker's keyword is checked by fit, a teacher given or not; None is its default.
    for teacher in (narrow, None):
        for columns in ("sideways", 1, True):
            with pytest.raises(ValueError, match=f"^teacher_columns {columns!r}: expected auto, from-1 or from-0"):
                distillrank.Ranker(method="pfd", teacher=teacher, teacher_columns=columns, epochs=1, widths=[8],
                                   backend="cpu").fit(dense, y.astype(int), qid=qid, verbose=False)
    distillrank.Ranker(method="pfd", teacher=narrow, teacher_columns=None, epochs=1, widths=[8],
                       backend="cpu").fit(dense, y.astype(int), qid=qid, verbose=False)


def test_a_tree_teacher_trained_on_named_columns_reads_them_by_name(mq2008, tmp_path):
    """A LightGBM or XGBoost model trained on a data frame keeps its columns' names (LightGBM
    writes spaces as underscores, in its text and its dump_model() JSON): a frame given to fit,
    or a Parquet file given to the CLI, must name them in the same order. Pandas' default labels
    (0, 1, ...) name nothing."""
    import distillrank
    pd = pytest.importorskip("pandas")
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    X, y, qid, _ = mq2008
    names = [f"feature {j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X.toarray(), columns=names)
    swapped = frame[[names[1], names[0], *names[2:]]]
    grades = y.astype(int)
    for library, booster in [
        ("LightGBM", lightgbm.LGBMRanker(n_estimators=5, verbose=-1).fit(frame, y, group=groups(qid)).booster_),
        ("XGBoost", xgboost.XGBRanker(n_estimators=5).fit(frame, y, qid=qid).get_booster()),
    ]:
        ranker = lambda: distillrank.Ranker(method="pfd", teacher=booster, epochs=1, widths=[8], backend="cpu")
        ranker().fit(frame, grades, qid=qid, verbose=False)
        with pytest.raises(ValueError, match=r'X: feature column 1 is "feature 1", which is column 2 in the model'):
            ranker().fit(swapped, grades, qid=qid, verbose=False)
        # Arrays, and a frame of pandas' default labels, are read by position.
        ranker().fit(pd.DataFrame(X.toarray()), grades, qid=qid, verbose=False)
        # The CLI on Parquet files of the frame's columns, in order and not.
        model = tmp_path / f"{library}.{'txt' if library == 'LightGBM' else 'json'}"
        booster.save_model(str(model))
        models = [model]
        if library == "LightGBM":
            # Its dump_model() JSON keeps the names as its text does.
            models.append(tmp_path / "LightGBM.dump.json")
            models[-1].write_text(json.dumps(booster.dump_model()))
        for table, path in [(frame, tmp_path / "same.parquet"), (swapped, tmp_path / "swapped.parquet")]:
            pq.write_table(pa.Table.from_pandas(table.assign(qid=qid, label=grades), preserve_index=False), path)
        for model in models:
            agree(predicted(model, tmp_path / "same.parquet"), booster.predict(
                frame if library == "LightGBM" else xgboost.DMatrix(frame),
                **({"raw_score": True} if library == "LightGBM" else {"output_margin": True})))
            refused = subprocess.run([str(BIN), "predict", "--model", model, tmp_path / "swapped.parquet"],
                                     capture_output=True, text=True)
            assert refused.returncode != 0 and 'feature column 1 is "feature 1"' in refused.stderr, refused.stderr


def test_unbiased_gbdt_bench_trains_on_every_impression_and_scores_the_compare_queries(tmp_path):
    """bench/unbiased_gbdt.py: every impression of the simulated log is one training row (471
    queries x 100 sessions of MQ2008's training file, 10 shown), LightGBM's `position` changes its
    model, and each model is scored by distillrank eval on the 52 test queries the compare run
    kept, its graded NDCG@8 equal to an independent sklearn computation on those queries."""
    import sys
    from sklearn.metrics import ndcg_score

    results = ROOT / "docs" / "results" / "clicks-mq2008" / "results.json"
    out = tmp_path / "gbdt"
    args = [ROOT / "bench" / "unbiased_gbdt.py", "--train", MQ2008 / "train.txt", "--valid", MQ2008 / "vali.txt",
            "--test", MQ2008 / "test.txt", "--queries-of", results, "--bin", BIN, "--out", out, "--trees", 20]
    r = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["sessions"] == 47100 and report["impressions"] == 417800 and report["test_queries"] == 52
    models = report["models"]
    assert set(models) == {"lightgbm-lambdarank", "lightgbm-lambdarank-position", "xgboost-rank-ndcg",
                           "xgboost-lambdarank-unbiased"}
    plain, position = (lightgbm.Booster(model_file=str(out / f"{m}.txt"))
                       for m in ["lightgbm-lambdarank", "lightgbm-lambdarank-position"])
    X, grades, qid = load_svmlight_file(str(out / "test.kept.txt"), query_id=True)
    X = X.toarray()
    assert not np.allclose(plain.predict(X[:200]), position.predict(X[:200]))
    # Gains 2^g - 1 and scores in f32, as distillrank's evaluator takes them; ties averaged by both.
    scores = plain.predict(X, raw_score=True).astype(np.float32)
    gains = 2.0 ** grades - 1
    per_query = [ndcg_score([gains[qid == q]], [scores[qid == q]], k=8) for q in np.unique(qid)]
    metrics = models["lightgbm-lambdarank"]["eval"]["metrics"]
    assert metrics["ndcg_groups"] == 52
    assert abs(dict(metrics["ndcg"])[8] - np.mean(per_query)) < 1e-6, (metrics["ndcg"], np.mean(per_query))


def test_letor_folds_bagged_teacher_is_the_mean_of_its_seeds_and_one_teacher_option_at_a_time(tmp_path):
    """bench/letor_folds.py --teacher-seeds N: the soft labels the comparison reads are the mean raw
    score of the N seeds' LightGBM models on every column, and the library's teacher NDCG@8 of them
    equals the script's own; two teacher options together, or a count out of range, are refused."""
    import sys

    script = ROOT / "bench" / "letor_folds.py"
    out = tmp_path / "folds"
    args = [script, "--train", MQ2008 / "train.txt", "--valid", MQ2008 / "vali.txt", "--test",
            MQ2008 / "test.txt", "--bin", BIN, "--out", out, "--seeds", 2, "--teacher-seeds", 2,
            "--student", "--epochs 1 --widths 4"]
    r = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["teacher_seeds"] == 2
    fold = report["folds"]["1"]
    assert abs(fold["teacher_ndcg8_library"] - fold["teacher_ndcg8_here"]) < 1e-9, fold
    here = out / "fold1"
    X, _, _ = load_svmlight_file(str(here / "train.txt"), query_id=True, n_features=46)
    models = [lightgbm.Booster(model_file=str(here / f"lightgbm_all-{s}.txt")) for s in (0, 1)]
    mean = np.mean([m.predict(X.toarray(), raw_score=True) for m in models], axis=0)
    given = np.array([float(v) for v in (here / "teacher.train.scores").read_text().split()])
    assert not np.allclose(models[0].predict(X.toarray(), raw_score=True), mean)
    np.testing.assert_allclose(given, mean, rtol=0, atol=1e-12)

    for bad, words in [(["--teacher-seeds", 3, "--teacher-trees", 100], "--teacher-seeds and --teacher-trees"),
                       (["--teacher-cross-fit", 5, "--teacher-seeds", 2], "--teacher-cross-fit and --teacher-seeds"),
                       (["--teacher-trees", -1], "--teacher-trees -1: expected a whole number of at least 0")]:
        r = subprocess.run([sys.executable, str(script), "--data", str(tmp_path), *map(str, bad)],
                           capture_output=True, text=True)
        assert r.returncode == 2 and words in r.stderr, r.stderr


def test_letor_folds_every_column_pairs_each_seeds_student_with_lightgbm_on_every_column(tmp_path):
    """bench/letor_folds.py --every-column: the student's figure is the NDCG@8 of its saved models'
    scores (one a seed, trained on every column) on the comparison's prepared test queries,
    averaged over the seeds, and LightGBM's that of its every-column models; the paired test is
    theirs; a teacher option beside it is refused."""
    import sys
    from sklearn.metrics import ndcg_score

    script = ROOT / "bench" / "letor_folds.py"
    out = tmp_path / "folds"
    args = [script, "--train", MQ2008 / "train.txt", "--valid", MQ2008 / "vali.txt", "--test",
            MQ2008 / "test.txt", "--bin", BIN, "--out", out, "--seeds", 2, "--every-column",
            "--student", "--epochs 1 --widths 8"]
    r = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    here = out / "fold1"
    test_qids = json.loads((here / "split" / "results.json").read_text())["test_qids"]
    X, grades, qid = load_svmlight_file(str(here / "test.txt"), query_id=True, n_features=46)
    X = X.toarray()
    gains = 2.0 ** grades - 1

    def figure(scores):
        return np.mean([ndcg_score([gains[qid == q]], [scores[qid == q]], k=8) for q in test_qids])

    for s in (0, 1):
        saved = json.loads((here / "every-column" / f"seed{s}.json").read_text())
        assert (saved["view"], saved["n_in"], saved["widths"]) == ("both", 46, [8]), saved
    # The students' scores are f32, as distillrank's evaluator takes them; LightGBM's f64.
    student = np.mean([figure(predicted(here / "every-column" / f"seed{s}", here / "test.txt").astype(np.float32))
                       for s in (0, 1)])
    lightgbm_all = np.mean([figure(lightgbm.Booster(model_file=str(here / f"lightgbm_all-{s}.txt"))
                                   .predict(X, raw_score=True)) for s in (0, 1)])
    assert report["pooled_queries"] == len(test_qids) == 52
    assert abs(report["pooled"]["student_every_column"] - student) < 1e-6, (report["pooled"], student)
    assert abs(report["pooled"]["lightgbm_all"] - lightgbm_all) < 1e-6, (report["pooled"], lightgbm_all)
    test = report["tests"]["student_every_column - lightgbm_all"]
    assert abs(test["mean_diff"] - (student - lightgbm_all)) < 1e-6
    assert test["ci95"][0] <= test["mean_diff"] <= test["ci95"][1]
    assert len(report["valid"]) == 1 and 0 < report["valid"]["student_every_column"] <= 1

    r = subprocess.run([sys.executable, str(script), "--data", str(tmp_path), "--every-column",
                        "--teacher-seeds", "2"], capture_output=True, text=True)
    assert r.returncode == 2 and "--every-column trains no teacher" in r.stderr, r.stderr

    # The student's --min-group-size chooses the test queries of both rows, as it does the
    # student's training and validation queries.
    args[-1] = "--epochs 1 --widths 8 --min-group-size 1"
    r = subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    every_query = json.loads((here / "split" / "results.json").read_text())["test_qids"]
    assert json.loads(r.stdout)["pooled_queries"] == len(every_query) > 52


def test_lightgbm_uncapped_retrains_the_reference_and_pairs_it_with_the_students(tmp_path):
    """bench/lightgbm_uncapped.py on a bench/letor_folds.py fold: where early stopping ends
    LightGBM before the cap (MQ2008 Fold1) the uncapped model is the capped one, tree for tree and
    score for score; with a cap below that, the capped model is the letor_folds one and the
    pairs are the students' against it; an option given with the wrong role is refused."""
    import sys

    folds, uncapped = ROOT / "bench" / "letor_folds.py", ROOT / "bench" / "lightgbm_uncapped.py"
    out = tmp_path / "folds"
    r = subprocess.run([sys.executable, *map(str, [
        folds, "--train", MQ2008 / "train.txt", "--valid", MQ2008 / "vali.txt", "--test", MQ2008 / "test.txt",
        "--bin", BIN, "--out", out, "--seeds", 1, "--student", "--epochs 1 --widths 8"])],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    fold = out / "fold1"
    students = fold / "compare" / "results.json"

    def run(*extra):
        r = subprocess.run([sys.executable, *map(str, [uncapped, "--fold", fold, "--bin", BIN, *extra])],
                           capture_output=True, text=True)
        return r.returncode, (json.loads(r.stdout) if r.returncode == 0 else r.stderr)

    code, report = run("--role", "x-alone", "--students", students)
    assert code == 0, report
    assert report["trees"] == report["trees_capped_model"] < 500, report
    assert report["uncapped - capped"]["mean_diff"] == 0.0
    assert report["lightgbm_uncapped"] == report["lightgbm_capped"]
    runs = json.loads(students.read_text())
    pfd = np.array(runs["per_query"]["pfd"], dtype=float).mean(axis=0)
    assert abs(report["pfd"] - np.nanmean(pfd)) < 1e-12
    assert abs(report["pfd - uncapped"]["mean_diff"] - (report["pfd"] - report["lightgbm_uncapped"])) < 1e-12
    # The library's own figure of the same reference model on the same queries.
    assert abs(report["lightgbm_capped"] - runs["reference"]["run"]["test_graded_ndcg"][3][1]) < 1e-9

    code, report = run("--role", "x-alone", "--students", students, "--trees", 5)
    assert code == 0 and report["trees"] <= 5 < report["trees_capped_model"], report

    for bad, words in [(["--role", "every-column", "--students", students], "give it with --role x-alone"),
                       (["--role", "x-alone"], "give it with --role x-alone"),
                       (["--role", "x-alone", "--students", students, "--trees", 0], "--trees 0"),
                       (["--role", "x-alone", "--students", students, "--seeds", 0], "--seeds 0"),
                       (["--role", "x-alone", "--students", tmp_path / "absent.json"], "absent.json: no such file"),
                       (["--role", "every-column"], "no saved student")]:
        code, stderr = run(*bad)
        assert code == 2 and words in stderr, stderr

    # every-column: the students letor_folds.py --every-column saved, the same figures it gives.
    r = subprocess.run([sys.executable, *map(str, [
        folds, "--train", MQ2008 / "train.txt", "--valid", MQ2008 / "vali.txt", "--test", MQ2008 / "test.txt",
        "--bin", BIN, "--out", out, "--seeds", 1, "--every-column", "--student", "--epochs 1 --widths 8"])],
        capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    every_column = json.loads(r.stdout)["pooled"]
    code, report = run("--role", "every-column", "--seeds", 1)
    assert code == 0, report
    assert report["trees"] == report["trees_capped_model"] < 500, report
    assert abs(report["student_every_column"] - every_column["student_every_column"]) < 1e-12
    assert abs(report["lightgbm_capped"] - every_column["lightgbm_all"]) < 1e-12

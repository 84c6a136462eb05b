"""The Ranker as scikit-learn's tools use it: exact parameters for ``clone``, fitted attributes
only after ``fit``, NDCG@k as ``score``, model selection over query groups, pickling, data frames
with their column names, LightGBM's ``eval_set`` list and progress through ``logging``.

Run by ``cargo xtask python`` with the package installed (see test_package.py).
"""

import copy
import logging
import pickle
import warnings

import joblib
import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.utils.estimator_checks import check_estimator
from sklearn.utils.validation import check_is_fitted

import distillrank

SMALL = dict(epochs=2, widths=[16, 8], backend="cpu", tau_target=2.8, labels="grades", loss="ranknet")


@pytest.fixture(scope="module")
def mq2008():
    return distillrank.mq2008()


@pytest.fixture(scope="module")
def fitted(mq2008):
    X, y, qid = mq2008["train"]
    return distillrank.Ranker(method="no-distillation", **SMALL).fit(X, y, qid=qid, verbose=False)


def test_clone_get_params_and_set_params_are_exact():
    widths = [16, 8]
    ranker = distillrank.Ranker(method="multi_teacher_pfd", widths=widths, epochs=3, alpha=0.25)
    params = ranker.get_params()
    # The values given are the objects returned, the others the library's defaults.
    assert params["widths"] is widths and params["method"] == "multi_teacher_pfd"
    assert params["lr"] == distillrank.Setup().lr and params["teacher"] is None
    twin = clone(ranker)
    assert twin is not ranker and twin.get_params() == params
    assert twin.set_params(epochs=5) is twin and twin.get_params()["epochs"] == 5
    assert ranker.get_params()["epochs"] == 3
    # A bad value is kept as set and refused by fit, by name.
    assert ranker.set_params(epochz=1).get_params()["epochz"] == 1
    with pytest.raises(ValueError, match="epochz"):
        ranker.fit(np.zeros((2, 3)), [0, 1], qid=[1, 1])


def test_fitted_attributes_appear_only_after_fit(mq2008, fitted):
    ranker = distillrank.Ranker(method="no-distillation", **SMALL)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        check_is_fitted(ranker)
    with pytest.raises(distillrank.NotFittedError, match="not fitted"):
        ranker.predict(mq2008["test"][0])
    for name in ["run_", "best_epoch_", "evals_result_", "n_features_in_"]:
        assert not hasattr(ranker, name), name
    check_is_fitted(fitted)
    assert fitted.n_features_in_ == 46 and not hasattr(fitted, "feature_names_in_")
    assert 1 <= fitted.best_epoch_ <= 2
    history = fitted.evals_result_
    assert len(history["valid_0"]["ndcg@8"]) == len(history["training"]["loss"]) == len(fitted.history_)
    assert max(history["valid_0"]["ndcg@8"]) == pytest.approx(fitted.best_valid_ndcg_)


def test_a_training_setting_set_after_fit_leaves_scoring_alone(mq2008, fitted):
    """set_params of a bad training value is refused at the next fit; the fitted model still
    predicts and scores, as it reads only the scoring settings."""
    X, y, qid = mq2008["test"]
    twin = pickle.loads(pickle.dumps(fitted))
    expected = fitted.predict(X)
    twin.set_params(epochs=-1)
    np.testing.assert_array_equal(twin.predict(X), expected)
    assert twin.score(X, y, qid=qid) == fitted.score(X, y, qid=qid)
    with pytest.raises(ValueError, match="epochs"):
        twin.fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="backend"):
        twin.set_params(epochs=2, backend="abacus").predict(X)


def test_an_ensemble_reports_each_members_epochs(mq2008):
    X, y, qid = mq2008["train"]
    ranker = distillrank.Ranker(method="no-distillation", **dict(SMALL, epochs=3, ensemble=3))
    ranker.fit(X, y, qid=qid, eval_set=[mq2008["valid"]], verbose=False)
    members = ranker.members_evals_result_
    assert len(members) == len(ranker.members_best_epoch_) == 3
    assert members[0] == ranker.evals_result_ and ranker.members_best_epoch_[0] == ranker.best_epoch_
    for curves, best in zip(members, ranker.members_best_epoch_):
        valid = curves["valid_0"]["ndcg@8"]
        assert 1 <= len(valid) == len(curves["training"]["loss"]) <= 3
        # Each member keeps its own first best epoch.
        assert best == 1 + int(np.argmax(valid))
    # The members start from their own seeds: their curves differ.
    assert members[1] != members[0] and members[2] != members[1]
    single = distillrank.Ranker(method="no-distillation", **SMALL).fit(X, y, qid=qid, verbose=False)
    assert len(single.members_evals_result_) == 1 and single.members_best_epoch_ == [single.best_epoch_]


def ndcg_reference(scores, y, qid, k):
    """NDCG@k with gains 2^y - 1, tied scores sharing their places' discounts equally (the mean
    over the orders of the ties), queries without a relevant document left out."""
    values = []
    for q in np.unique(qid):
        s, gains = scores[qid == q], 2.0 ** y[qid == q].astype(float) - 1
        discounts = 1 / np.log2(np.arange(2, len(s) + 2))
        discounts[k:] = 0
        idcg = (np.sort(gains)[::-1] * discounts).sum()
        if idcg == 0:
            continue
        dcg, place = 0.0, 0
        for value in np.unique(s)[::-1]:
            tied = gains[s == value]
            dcg += tied.mean() * discounts[place:place + len(tied)].sum()
            place += len(tied)
        values.append(dcg / idcg)
    return float(np.mean(values))


def test_score_is_ndcg_at_k(mq2008, fitted):
    X, y, qid = mq2008["test"]
    scores = fitted.predict(X)
    for k in (1, 8):
        assert fitted.score(X, y, qid=qid, k=k) == pytest.approx(ndcg_reference(scores, y, qid, k), abs=1e-9)
    with pytest.raises(ValueError, match="qid"):
        fitted.score(X, y)


def test_pickle_deepcopy_and_joblib_round_trip_to_identical_predictions(mq2008, fitted, tmp_path):
    X = mq2008["test"][0]
    expected = fitted.predict(X)
    path = tmp_path / "ranker.joblib"
    joblib.dump(fitted, path)
    for twin in [pickle.loads(pickle.dumps(fitted)), copy.deepcopy(fitted), joblib.load(path)]:
        np.testing.assert_array_equal(twin.predict(X), expected)
        assert twin.get_params() == fitted.get_params()
        assert twin.best_epoch_ == fitted.best_epoch_
    # A ranker read back from its files is fitted as scikit-learn sees it, and pickles too.
    fitted.save(str(tmp_path / "m"))
    loaded = distillrank.load(str(tmp_path / "m"))
    check_is_fitted(loaded)
    assert loaded.n_features_in_ == fitted.n_features_in_ and not hasattr(loaded, "run_")
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(loaded)).predict(X), expected)
    # An unfitted ranker pickles too, and stays unfitted.
    assert not hasattr(pickle.loads(pickle.dumps(distillrank.Ranker())), "run_")


def test_grid_search_over_query_groups(mq2008):
    X, y, qid = mq2008["train"]
    keep = qid < np.unique(qid)[150]
    X, y, qid = X[keep], y[keep], qid[keep]
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = distillrank.Ranker(method="no-distillation", **dict(SMALL, epochs=1))
        ranker.set_fit_request(qid=True, verbose=True).set_score_request(qid=True)
        search = GridSearchCV(ranker, {"widths": [[8], [16, 8]]}, cv=GroupKFold(n_splits=3))
        search.fit(X, y, qid=qid, groups=qid, verbose=False)
    scores = search.cv_results_["mean_test_score"]
    assert len(scores) == 2 and np.isfinite(scores).all() and (scores > 0).all()
    assert search.best_params_["widths"] in ([8], [16, 8])
    assert search.best_estimator_.n_features_in_ == 46


def test_data_frames_keep_their_column_names(mq2008):
    pd = pytest.importorskip("pandas")
    X, y, qid = mq2008["train"]
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    ranker = distillrank.Ranker(method="no-distillation", **dict(SMALL, epochs=1)).fit(frame, y, qid=qid, verbose=False)
    assert list(ranker.feature_names_in_) == list(frame.columns)
    expected = ranker.predict(frame)
    for module in ["polars", "pyarrow"]:
        lib = pytest.importorskip(module)
        other = lib.from_pandas(frame) if module == "polars" else lib.Table.from_pandas(frame)
        np.testing.assert_array_equal(ranker.predict(other), expected)
        swapped = frame[["f1", "f0"] + list(frame.columns[2:])]
        other = lib.from_pandas(swapped) if module == "polars" else lib.Table.from_pandas(swapped)
        with pytest.raises(ValueError, match="column 0 is 'f1' where fit saw 'f0'"):
            ranker.predict(other)


def test_eval_set_as_a_list_of_tuples_like_lightgbm(mq2008):
    (X, y, qid), valid = mq2008["train"], mq2008["valid"]
    a = distillrank.Ranker(method="no-distillation", **SMALL).fit(X, y, qid=qid, eval_set=valid, verbose=False)
    b = distillrank.Ranker(method="no-distillation", **SMALL).fit(X, y, qid=qid, eval_set=[valid], verbose=False)
    np.testing.assert_array_equal(a.predict(valid[0]), b.predict(valid[0]))
    with pytest.raises(ValueError, match="2 validation splits given"):
        distillrank.Ranker(**SMALL).fit(X, y, qid=qid, eval_set=[valid, valid], verbose=False)


def test_progress_goes_through_logging(mq2008, caplog):
    X, y, qid = mq2008["train"]
    with caplog.at_level(logging.INFO, logger="distillrank"):
        distillrank.Ranker(method="no-distillation", **SMALL).fit(X, y, qid=qid, verbose=True)
    epochs = [r for r in caplog.records if r.name == "distillrank" and "epoch" in r.getMessage()]
    assert len(epochs) >= 1 and all(r.levelno == logging.INFO for r in epochs)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="distillrank"):
        distillrank.Ranker(method="no-distillation", **SMALL).fit(X, y, qid=qid, verbose=False)
    assert not [r for r in caplog.records if r.levelno < logging.WARNING]


def test_settings_fit_does_not_read_are_warned_of(mq2008, caplog):
    """A setting nothing of the fit reads is named, as a comparison names it (results.json's
    unused_settings): the teacher's weight without a teacher, and seeds (fit trains one model)."""
    X, y, qid = mq2008["train"]
    with caplog.at_level(logging.WARNING, logger="distillrank"):
        distillrank.Ranker(method="no-distillation", alpha=0.2, seeds=3, **SMALL).fit(X, y, qid=qid, verbose=False)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(w.startswith("alpha 0.2 is not used") and "the method no-distillation learns from no teacher" in w
               for w in warned), warned
    assert any(w.startswith("seeds 3 is not used") for w in warned), warned
    assert not any("--" in w for w in warned if "is not used" in w), warned
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="distillrank"):
        distillrank.Ranker(method="self-distillation", alpha=0.2, **SMALL).fit(X, y, qid=qid, verbose=False)
    assert not [r for r in caplog.records if "alpha" in r.getMessage()]


def test_an_eval_set_of_training_queries_is_warned_of(mq2008, caplog):
    X, y, qid = mq2008["valid"]
    # Qids numbered 1..n are the array's own, compared as any others.
    _, first = np.unique(qid, return_inverse=True)
    for q in [qid, first + 1]:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="distillrank"):
            distillrank.Ranker(method="no-distillation", **SMALL).fit(X, y, qid=q, eval_set=(X, y, q), verbose=False)
        warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert any("the validation split" in w and "with the same documents as the training split" in w
                   for w in warned), warned
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="distillrank"):
        distillrank.Ranker(method="no-distillation", **SMALL).fit(*mq2008["train"][:2], qid=mq2008["train"][2],
                                                                  eval_set=mq2008["valid"], verbose=False)
    assert not [r for r in caplog.records if "with the same documents" in r.getMessage()]


def test_scikit_learns_estimator_checks_pass_or_need_query_ids():
    """Every check of ``check_estimator`` passes, or fails only because it fits or scores without
    query ids, which a ranker needs (the checks build classifier and regressor data: X and y
    alone). The checks that pass are those of the parameters, cloning, pickling an unfitted
    estimator and the representation."""
    ranker = distillrank.Ranker(method="no-distillation", epochs=1, widths=[4], backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(ranker, on_fail=None)
    passed = [r["check_name"] for r in results if r["status"] == "passed"]
    failed = {r["check_name"]: r["exception"] for r in results if r["status"] == "failed"}
    def needs_query_ids(error):
        while error is not None:
            if "qid: a query id per row is required" in str(error):
                return True
            error = error.__cause__ or error.__context__
        return False

    wrong = {name: repr(error) for name, error in failed.items() if not needs_query_ids(error)}
    assert not wrong, wrong
    for name in ["check_no_attributes_set_in_init", "check_parameters_default_constructible",
                 "check_get_params_invariance", "check_set_params"]:
        assert name in passed, (name, failed.get(name))


def test_the_stub_matches_the_package(tmp_path):
    """``__init__.pyi`` (shipped with ``py.typed``) against the installed package, by mypy's
    stubtest: every public name, signature and default."""
    import subprocess
    import sys
    from pathlib import Path

    allowlist = Path(__file__).resolve().parents[2] / "python" / "stubtest-allowlist.txt"
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "distillrank", "--allowlist", str(allowlist)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_python_reference_page_is_up_to_date(tmp_path):
    """docs/book/src/reference/python.md is what docs/book/python_reference.py generates from the
    installed package now (``cargo xtask docs`` writes it)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "python.md"
    subprocess.run([sys.executable, str(root / "docs/book/python_reference.py"), str(out)], check=True, cwd=tmp_path)
    committed = root / "docs/book/src/reference/python.md"
    assert committed.exists() and out.read_text() == committed.read_text(), (
        f"{committed} differs from what the package generates: run `cargo xtask docs`"
    )


def test_a_narrower_x_is_refused_in_pythons_words_or_read_with_zeros(mq2008, fitted):
    """The refusal names predict's own keyword, and the keyword does what it says: the missing
    last columns read as 0."""
    X = mq2008["test"][0]
    narrow = X[:, :-2]
    with pytest.raises(ValueError) as refused:
        fitted.predict(narrow)
    message = str(refused.value)
    assert "allow_missing_features=True" in message and "--" not in message, message
    padded = X.copy()
    padded[:, -2:] = 0
    np.testing.assert_array_equal(fitted.predict(narrow, allow_missing_features=True), fitted.predict(padded))


def test_the_docstring_names_the_graded_losses_from_the_entries():
    """The losses that train on the grades, as the Ranker's docstring lists them, are the
    library's entries' (every loss but RankBCE today), not a hand-written list."""
    graded = [name for name in distillrank.LOSSES if name != "rankbce"]
    doc = distillrank.Ranker.__doc__
    assert "{graded_losses}" not in doc
    for name in graded:
        assert f'``"{name}"``' in doc, name
    assert '``"rankbce"``' not in doc


def test_a_listwise_ranker_fits_scores_and_serves_by_query(mq2008, tmp_path):
    """The listwise family through the estimator: ``attention_heads`` fits, ``predict`` needs the
    query ids (each document's score depends on its query's other documents), ``score`` passes
    them, a saved and reloaded ranker scores the same, and heads that do not divide the last
    width are refused before any training, naming the setting."""
    X, y, qid = mq2008["train"]
    Xt, yt, qt = mq2008["test"]
    # A listwise student of an MLP teacher: either family for either role.
    ranker = distillrank.Ranker(method="pfd", attention_heads=2, teacher_attention_heads=0, **SMALL)
    ranker.fit(X, y, qid=qid, verbose=False)
    assert ranker.model_config_["setup"]["teacher_attention_heads"] == 0
    # The MLP teacher on X's 46 columns (16-8): no attention's parameters.
    assert ranker.run_["teachers"][0]["parameters"] == (46 * 16 + 16) + (16 * 8 + 8) + (8 + 1)
    assert ranker.model_config_["attention_heads"] == 2
    scores = ranker.predict(Xt, qid=qt)
    assert scores.shape == (len(qt),) and np.isfinite(scores).all()
    with pytest.raises(ValueError, match="qid"):
        ranker.predict(Xt)
    with pytest.raises(ValueError, match=r"qid: \d+ query ids for \d+ rows of X"):
        ranker.predict(Xt, qid=qt[:-1])
    assert ranker.score(Xt, yt, qid=qt, k=8) == pytest.approx(ndcg_reference(scores, yt, qt, 8), abs=1e-9)
    # One query's scores depend on that query alone: scored by itself, the same.
    first = qt == qt[0]
    np.testing.assert_allclose(ranker.predict(Xt[first], qid=qt[first]), scores[first], rtol=1e-6, atol=1e-6)
    ranker.save(str(tmp_path / "listwise"))
    loaded = distillrank.load(str(tmp_path / "listwise"))
    np.testing.assert_array_equal(loaded.predict(Xt, qid=qt), scores)
    with pytest.raises(ValueError, match="attention.heads.*divide"):
        distillrank.Ranker(method="no-distillation", **dict(SMALL, attention_heads=3)).fit(X, y, qid=qid, verbose=False)

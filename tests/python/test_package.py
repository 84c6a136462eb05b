"""The Python package against the library's other door, the CLI: the same data, the same scores,
the same comparisons and the same error messages.

Run by `cargo xtask python` (and `cargo xtask test`) from the repository root, with the package
installed (`pip install .`) and DISTILLRANK_BIN naming the CLI (default target/debug/distillrank).
The data are the repository's real LETOR files (tests/data/letor, unpacked into target/data) and the MQ2008 bundled in the library.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import distillrank

ROOT = Path(__file__).resolve().parents[2]
MQ2008 = ROOT / "target" / "data" / "mq2008" / "Fold1"
BIN = Path(os.environ.get("DISTILLRANK_BIN", ROOT / "target" / "debug" / "distillrank"))
if not BIN.is_absolute():
    BIN = ROOT / BIN

# The settings of every small training here: fast, on the CPU engine (bit-for-bit the CLI's), with
# MQ2008's labelling threshold (its grades are 0..2).
SMALL = dict(epochs=1, widths=[16, 8], backend="cpu", tau_target=2.8)


def cli(*args, check=True):
    """Runs the CLI; returns the completed process (stdout and stderr as text)."""
    if not BIN.exists():
        pytest.fail(f"{BIN} is missing: build it with `cargo build --bin distillrank` (or set DISTILLRANK_BIN)")
    env = dict(os.environ)
    done = subprocess.run([str(BIN), *map(str, args)], capture_output=True, text=True, env=env)
    if check and done.returncode != 0:
        pytest.fail(f"distillrank {' '.join(map(str, args))} failed:\n{done.stderr}")
    return done


def cli_error(*args):
    """The message the CLI prints for a refused command (`error: MESSAGE`)."""
    done = cli(*args, check=False)
    assert done.returncode != 0, f"distillrank {args} should fail"
    lines = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert lines, done.stderr
    return lines[-1][len("error: "):]


@pytest.fixture(scope="module")
def bundled():
    return distillrank.mq2008()


@pytest.fixture(scope="module")
def cli_model(tmp_path_factory):
    """A model trained and saved by the CLI on the bundled MQ2008."""
    prefix = tmp_path_factory.mktemp("cli") / "model"
    cli(
        "train", "--bundled", "mq2008", "--tau-target", "2.8", "--epochs", 1, "--widths", "16,8",
        "--save", prefix, "--backend", "cpu",
    )
    return prefix


def cli_scores(model, file):
    out = cli("predict", "--model", model, file, "--backend", "cpu").stdout
    return np.array([float(line) for line in out.split()], dtype=np.float64)


# Reading data.


def test_read_letor_reads_mq2008_as_the_cli_counts_it():
    X, y, qid = distillrank.read_letor(MQ2008 / "train.txt")
    stats = json.loads(cli("data", "stats", MQ2008 / "train.txt", "--json").stdout)
    assert X.shape == (9630, 46) == (stats["docs"], stats["features"])
    assert X.dtype == np.float32 and X.flags.c_contiguous
    assert y.shape == qid.shape == (9630,)
    assert set(np.unique(y)) <= {0, 1, 2}
    assert len(np.unique(qid)) == 471 == stats["queries"]
    # The first line: "0 qid:10032 1:0.056537 2:0.000000 ..."
    first = (MQ2008 / "train.txt").read_text().split("\n", 1)[0].split()
    assert int(first[0]) == y[0] and first[1] == f"qid:{qid[0]}"
    assert X[0, 0] == np.float32(float(first[2].split(":")[1]))


def test_read_letor_with_a_query_file():
    lgbm = ROOT / "target" / "data" / "lightgbm_rank"
    X, y, qid = distillrank.read_letor(lgbm / "rank.train", query=lgbm / "rank.train.query")
    assert X.shape[0] == 3005 and len(np.unique(qid)) == 201
    assert y.max() <= 4


def test_a_malformed_file_names_file_line_and_column(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5 2:0.25\n0 qid:1 1:abc 2:0.1\n")
    with pytest.raises(ValueError) as e:
        distillrank.read_letor(bad)
    message = str(e.value)
    assert f"{bad}:2:" in message
    # The CLI says the same.
    assert cli_error("data", "stats", bad) == message
    with pytest.raises(ValueError, match="No such file"):
        distillrank.read_letor(tmp_path / "missing.txt")
    # A query id past an int64 (which the CLI reads as its value) is refused by the arrays,
    # naming the file and the query.
    big = tmp_path / "big.txt"
    big.write_text("1 qid:1 1:0.5\n0 qid:9223372036854775808 1:0.1\n")
    with pytest.raises(ValueError, match=f"^{re.escape(str(big))}: qid 9223372036854775808 \\(query 2 of the file\\) is past 2\\^63 - 1"):
        distillrank.read_letor(big)


def test_the_readers_take_paths_and_speak_of_their_own_keywords(tmp_path):
    """A path that is no str or path is a TypeError (``b"f.txt"`` and ``123`` were looked up as
    the files ``b'f.txt'`` and ``123``); a file without qids is told of ``query=``, not of the
    CLI's flags."""
    for value in (b"f.txt", 123, None):
        with pytest.raises(TypeError, match="^path: expected a file's path"):
            distillrank.read_letor(value)
    with pytest.raises(TypeError, match="^data: expected a file's path"):
        distillrank.read_impressions(tmp_path / "log.tsv", 5)
    bare = tmp_path / "bare.txt"
    bare.write_text("1 1:0.5\n0 1:0.1\n")
    with pytest.raises(ValueError) as e:
        distillrank.read_letor(bare)
    assert "with query=" in str(e.value) and "--" not in str(e.value), str(e.value)


def test_a_setup_files_name_given_for_its_text_is_named_as_such(tmp_path):
    """A setup is its JSON text: a file's name in its place was refused as JSON that starts with
    an unexpected character."""
    (tmp_path / "setup.json").write_text('{"epochs": 1}')
    for call in (lambda name: distillrank.compare(name, verbose=False), distillrank.Setup.from_json):
        for name in (str(tmp_path / "setup.json"), "missing.json"):
            with pytest.raises(ValueError, match="is a file's name, and a setup is given as its JSON text"):
                call(name)


def test_the_reference_is_set_by_its_keyword_as_the_teacher_is(tmp_path):
    """``Setup(reference=...)`` sets ``data.reference``, a field of ``data`` that the defaults
    leave out (it was refused as an unknown top-level field): a path, or its section."""
    model = tmp_path / "model.txt"
    for given, field in [(str(model), {"model": str(model)}), ({"scores": ",v.txt,t.txt", "columns": "from-1"},
                                                                {"scores": ",v.txt,t.txt", "columns": "from-1"})]:
        reference = distillrank.Setup(reference=given).to_dict()["data"]["reference"]
        assert {k: reference[k] for k in field} == field, reference


def test_read_letor_reads_a_cache_as_every_command_does(tmp_path):
    """A ``.drcache`` is read as the cache it is (it was parsed as LETOR text), and gives the
    arrays of the file it caches."""
    text = tmp_path / "t.txt"
    text.write_text("2 qid:1 1:0.5 2:0.1\n0 qid:1 1:0.1 2:0.3\n1 qid:2 1:0.2 2:0.2\n0 qid:2 1:0.4 2:0.9\n")
    # The text's arrays read before the cache is made (a fresh cache beside it is read instead).
    parsed = distillrank.read_letor(text)
    subprocess.run([str(BIN), "data", "cache", str(text)], check=True, capture_output=True)
    cached = distillrank.read_letor(str(text) + ".drcache")
    assert len(cached) == len(parsed) == 3
    for ours, theirs in zip(cached, parsed):
        np.testing.assert_array_equal(ours, theirs)


def test_a_file_that_is_not_there_is_named_with_its_setting_before_anything_is_read(tmp_path):
    """As the CLI refuses it: a comparison's file that is not there, before the data are read
    (a teacher's scores used to be looked for only once they were prepared), named with the
    field of the setup that names it."""
    gone = str(tmp_path / "gone.txt")
    vali = str(MQ2008 / "vali.txt")
    for files, teacher, field in [
        ({"train": gone}, None, "source.files.train"),
        ({"train": vali, "valid": gone}, None, "source.files.valid"),
        ({"train": vali}, {"scores": gone}, "teacher.scores"),
        ({"train": vali}, gone, "teacher.model"),
    ]:
        settings = dict(source={"files": files}, seeds=1, epochs=1)
        if teacher is not None:
            settings["teacher"] = teacher
        with pytest.raises(ValueError) as e:
            distillrank.compare(distillrank.Setup(**settings), verbose=False)
        message = str(e.value)
        assert f"{gone}: No such file" in message and f"({field})" in message, message
        assert "validation split" not in message and "(--" not in message, message


def test_the_bundled_mq2008_is_fold1(bundled):
    assert set(bundled) == {"train", "valid", "test"}
    for X, y, qid in bundled.values():
        assert X.dtype == np.float32 and X.ndim == 2 and X.shape[0] == y.shape[0] == qid.shape[0]
        # The bundled copy keeps the queries with a relevant document.
        for q in np.unique(qid):
            assert y[qid == q].max() > 0


# Scores: the same as the CLI's, both ways.


def test_predictions_equal_the_clis_for_a_cli_model(cli_model):
    X, _, _ = distillrank.read_letor(MQ2008 / "test.txt")
    ours = distillrank.load(cli_model, backend="cpu").predict(X)
    assert ours.dtype == np.float32 and ours.shape == (X.shape[0],)
    np.testing.assert_allclose(ours, cli_scores(cli_model, MQ2008 / "test.txt"), rtol=0, atol=1e-6)
    # float64 input gives the same scores.
    np.testing.assert_array_equal(distillrank.load(cli_model).predict(X.astype(np.float64), backend="cpu"), ours)


def test_a_python_model_is_read_by_the_cli(bundled, tmp_path):
    X, y, qid = bundled["train"]
    ranker = distillrank.Ranker(method="no-distillation", **SMALL).fit(X, y, qid=qid, verbose=False)
    weights, config = ranker.save(tmp_path / "py")
    assert Path(weights).exists() and Path(config).exists()
    Xt, _, _ = distillrank.read_letor(MQ2008 / "test.txt")
    np.testing.assert_allclose(
        ranker.predict(Xt), cli_scores(tmp_path / "py", MQ2008 / "test.txt"), rtol=0, atol=1e-6
    )


def test_a_layer_normalised_ranker_is_read_by_the_cli_and_refuses_an_unknown_norm(bundled, tmp_path):
    X, y, qid = bundled["train"]
    ranker = distillrank.Ranker(method="no-distillation", norm="layer", **SMALL).fit(X, y, qid=qid, verbose=False)
    assert ranker.get_params()["norm"] == "layer"
    _, config = ranker.save(tmp_path / "normed")
    assert json.loads(Path(config).read_text())["norm"] == "layer"
    Xt, _, _ = distillrank.read_letor(MQ2008 / "test.txt")
    np.testing.assert_allclose(
        ranker.predict(Xt), cli_scores(tmp_path / "normed", MQ2008 / "test.txt"), rtol=0, atol=1e-6
    )
    with pytest.raises(ValueError, match="norm"):
        distillrank.Ranker(method="no-distillation", norm="batch", **SMALL).fit(X, y, qid=qid, verbose=False)


def test_fit_with_privileged_features_and_an_eval_set(bundled, tmp_path):
    X, y, qid = bundled["train"]
    Xv, yv, qv = bundled["valid"]
    # The last six columns are privileged: the teachers see them, the student does not.
    x, z = X[:, :40], X[:, 40:]
    ranker = distillrank.Ranker(method="pfd", epochs=2, widths=[16, 8], backend="cpu", tau_target=2.8, seed=3)
    assert ranker.fit(x, y, qid=qid, privileged=z, eval_set=(Xv[:, :40], yv, qv, Xv[:, 40:]), verbose=False) is ranker
    config = ranker.model_config_
    assert config["source_features"] == 40 and max(config["columns"]) <= 40
    assert 1 <= ranker.best_epoch_ <= 2 and len(ranker.history_) >= 1
    assert 0.0 <= ranker.best_valid_ndcg_ <= 1.0
    Xt, _, _ = bundled["test"]
    scores = ranker.predict(Xt[:, :40])
    assert scores.shape == (Xt.shape[0],) and scores.dtype == np.float32
    assert np.isfinite(scores).all()
    ranker.save(tmp_path / "pfd")
    loaded = distillrank.load(tmp_path / "pfd", backend="cpu")
    np.testing.assert_array_equal(loaded.predict(Xt[:, :40]), scores)
    assert loaded.model_config_ == config
    # The student reads X alone: the full width is another dataset.
    with pytest.raises(ValueError, match=r"^X: 46 columns, and the model was trained on 40: another dataset\?"):
        ranker.predict(Xt)
    # The same fit again gives the same model.
    again = distillrank.Ranker(**ranker.get_params()).fit(
        x, y, qid=qid, privileged=z, eval_set=(Xv[:, :40], yv, qv, Xv[:, 40:]), verbose=False
    )
    np.testing.assert_array_equal(again.predict(Xt[:, :40]), scores)


def test_to_onnx_gives_predicts_scores(bundled, tmp_path):
    ort = pytest.importorskip("onnxruntime")
    X, y, qid = bundled["train"]
    ranker = distillrank.Ranker(method="no-distillation", **SMALL).fit(X, y, qid=qid, verbose=False)
    path = tmp_path / "model.onnx"
    ranker.to_onnx(path, metadata={"trained_by": "test_package"})
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert session.get_modelmeta().custom_metadata_map["trained_by"] == "test_package"
    Xt, _, _ = bundled["test"]
    (scores,) = session.run(["score"], {"features": Xt})
    np.testing.assert_allclose(scores, ranker.predict(Xt), rtol=1e-5, atol=1e-5)


def test_fit_without_an_eval_set_holds_out_validation_queries(bundled):
    X, y, qid = bundled["train"]
    ranker = distillrank.Ranker(method="gend", privileged="top:10", **SMALL).fit(X, y, qid=qid, verbose=False)
    assert ranker.predict(X).shape == (X.shape[0],)


def test_class_real_data_works_at_the_first_run_whatever_its_grades(bundled):
    """Without tau_target, Python labels as every door does: the largest training grade + 0.8
    (2.8 on MQ2008's grades 0..2, 1.8 on the same data with grades clipped to 0..1), so the
    first fit has positive groups (the paper's 4.8 gave none on either)."""
    X, y, qid = bundled["train"]
    settings = {k: v for k, v in SMALL.items() if k != "tau_target"}
    for grades in (y, np.minimum(y, 1)):
        ranker = distillrank.Ranker(method="pfd", **settings).fit(X, grades, qid=qid, verbose=False)
        assert ranker.predict(X).shape == (X.shape[0],)
    # A threshold that leaves no y = 1 is refused with one that works.
    with pytest.raises(ValueError, match=r"no positive training groups.*tau_target [0-9.]+ "):
        distillrank.Ranker(method="pfd", **dict(settings, tau_target=9.0)).fit(X, y, qid=qid, verbose=False)


# Settings.


def test_settings_are_the_librarys_defaults():
    setup = distillrank.Setup()
    params = distillrank.Ranker().get_params()
    assert params["method"] == "pfd"
    assert params["epochs"] == setup.epochs and params["widths"] == setup.widths
    assert params["seed"] == setup.first_seed and params["min_group_size"] == setup.data["min_group_size"]
    # Keywords land on the fields of their name, top level or under data.
    ranker = distillrank.Ranker(method="multi_teacher_pfd", epochs=3, tau_target=3.5, seed=9, loss="softmax")
    params = ranker.get_params()
    # Values come back as given (scikit-learn's clone checks that they are the same objects).
    assert params["method"] == "multi_teacher_pfd" and params["epochs"] == 3 and params["seed"] == 9
    assert ranker.setup.methods == ["multi-teacher-pfd"]
    assert ranker.setup.data["tau_target"] == 3.5 and ranker.setup.loss == "softmax"
    assert distillrank.Ranker(**params).get_params() == params
    assert ranker.set_params(epochs=4).get_params()["epochs"] == 4


def test_setup_round_trips_through_json():
    setup = distillrank.Setup(epochs=2, seeds=2, source="mq2008", backend="cpu")
    again = distillrank.Setup.from_json(setup.to_json())
    assert again == setup and again.to_dict()["data"]["source"] == "mq2008"
    assert json.loads(distillrank.Setup().to_json()) == distillrank.Setup().to_dict()
    with pytest.raises(ValueError, match="the setup"):
        distillrank.Setup.from_json('{"epochs": "many"}')


# Comparisons: the same numbers as the CLI's results.json.


def test_compare_equals_the_clis_results(tmp_path):
    setup = distillrank.Setup(source="mq2008", seeds=2, **SMALL)
    path = tmp_path / "setup.json"
    path.write_text(setup.to_json())
    cli("compare", "--setup", path, "--out", tmp_path / "out")
    theirs = json.loads((tmp_path / "out" / "results.json").read_text())
    ours = distillrank.compare(setup, verbose=False)
    assert set(ours["methods"]) == set(theirs["methods"]) == set(setup.methods)
    for method, figures in theirs["methods"].items():
        for key, value in figures.items():
            if key.startswith("ndcg@") or key.startswith("graded_ndcg@") or key.startswith("teacher_ndcg@"):
                assert ours["methods"][method][key] == value, (method, key)
        assert len(ours["methods"][method]["runs"]) == 2
    assert ours["data"] == theirs["data"] and ours["privileged_columns"] == theirs["privileged_columns"]
    # A dict and JSON text are setups too (the runs' timings aside, the same results).
    for other in (setup.to_dict(), setup.to_json()):
        again = distillrank.compare(other, verbose=False)["methods"]
        assert {m: f["ndcg@8"] for m, f in again.items()} == {m: f["ndcg@8"] for m, f in ours["methods"].items()}


def test_graded_labels_give_the_clis_numbers_and_refuse_rankbce(tmp_path):
    """labels="grades": y is the grade, as LightGBM trains; Python's comparison equals the CLI's
    --training-labels grades, a Ranker fits on the grades, and RankBCE (which learns y in {0, 1})
    is refused by name."""
    out = tmp_path / "out"
    cli("compare", "--bundled", "mq2008", "--training-labels", "grades", "--loss", "lambdarank",
        "--methods", "no-distillation,pfd", "--seeds", 2, "--epochs", 1, "--widths", 16,
        "--backend", "cpu", "--out", out, "--quiet")
    theirs = json.loads((out / "results.json").read_text())
    setup = distillrank.Setup(source="mq2008", labels="grades", loss="lambdarank", methods=["no-distillation", "pfd"],
                              seeds=2, epochs=1, widths=[16], backend="cpu")
    ours = distillrank.compare(setup, verbose=False)
    for method in ["no-distillation", "pfd"]:
        assert ours["methods"][method]["ndcg@8"] == theirs["methods"][method]["ndcg@8"]
        # NDCG on y is the graded NDCG when y is the grade.
        assert ours["methods"][method]["ndcg@8"] == ours["methods"][method]["graded_ndcg@8"]
    train = distillrank.mq2008()["train"]
    ranker = distillrank.Ranker(method="no-distillation", labels="grades", loss="softmax", epochs=1, widths=[8])
    ranker.fit(train[0], train[1], qid=train[2])
    assert np.isfinite(ranker.predict(train[0][:50])).all()
    with pytest.raises(ValueError, match="rankbce"):
        distillrank.Ranker(method="no-distillation", labels="grades", loss="rankbce", epochs=1).fit(
            train[0], train[1], qid=train[2])
    # A global objective learns binary labels too.
    with pytest.raises(ValueError, match="objective"):
        distillrank.Ranker(method="no-distillation", labels="grades", objective="logloss", epochs=1).fit(
            train[0], train[1], qid=train[2])


def test_learning_from_clicks_gives_the_clis_numbers(tmp_path):
    """The methods that learn from clicks, on MQ2008 with clicks simulated here: Python's comparison
    equals the CLI's, the propensities included, and the verdicts are on the graded NDCG; a Ranker
    on arrays (no clicks by rank) is refused with what would work."""
    methods = ["naive", "ips", "ips-estimated", "dla", "two-tower", "full-information", "pfd"]
    out = tmp_path / "out"
    cli("compare", "--bundled", "mq2008", "--privileged", "logs", "--loss", "softmax",
        "--methods", ",".join(methods), "--seeds", 2, "--epochs", 2, "--widths", 16,
        "--backend", "cpu", "--out", out, "--quiet")
    theirs = json.loads((out / "results.json").read_text())
    setup = distillrank.Setup(source="mq2008", privileged="logs", loss="softmax", methods=methods,
                              seeds=2, epochs=2, widths=[16], backend="cpu")
    ours = distillrank.compare(setup, verbose=False)
    assert set(ours["clicks"]["learned_propensities"]) == {"dla", "two-tower"}
    for method in methods:
        for key in ["ndcg@8", "graded_ndcg@8"]:
            assert ours["methods"][method][key] == theirs["methods"][method][key], (method, key)
    assert ours["clicks"] == theirs["clicks"]
    assert ours["verdict_metric"] == theirs["verdict_metric"] == "graded_ndcg@8"
    truth, estimate = ours["clicks"]["true_propensities"], ours["clicks"]["estimated_propensities"]
    assert truth[0] == estimate[0] == 1.0 and len(truth) == len(estimate) == 10
    train = distillrank.mq2008()["train"]
    with pytest.raises(ValueError, match="privileged logs"):
        distillrank.Ranker(method="ips", loss="softmax", epochs=1).fit(train[0], train[1], qid=train[2])


def test_fit_with_positions_learns_from_the_clicks_of_each_row(tmp_path):
    """fit(X, clicks, qid=..., position=...), LightGBM's shape: each (query, session) list of MQ2008's
    simulated log is a query of ten rows, y its clicks; every method that learns from clicks trains
    on them and ranks, DLA learns propensities below 1 within its first epoch, and bad positions and clicks are refused
    naming the row and the field."""
    out = tmp_path / "logs"
    cli("data", "simulate-logs", MQ2008 / "train.txt", MQ2008 / "vali.txt", MQ2008 / "test.txt", "-o", out)
    rows = np.loadtxt(out / "train.txt.impressions.tsv", dtype=np.int64, skiprows=1, delimiter="\t", usecols=range(5))
    X, _, qid = distillrank.read_letor(MQ2008 / "train.txt")
    starts = {q: i for i, q in reversed(list(enumerate(qid)))}
    rows = rows[rows[:, 1] < 20]  # 20 sessions a query
    doc = np.array([starts[q] for q in rows[:, 0]]) + rows[:, 3] - 1
    X_rows, clicks, position = X[doc], rows[:, 4].astype(np.float64), rows[:, 2]
    lists = rows[:, 0] * 1000 + rows[:, 1]
    Xt, yt, qt = distillrank.read_letor(MQ2008 / "test.txt")
    learned = {}
    for method in ["naive", "dla", "two-tower"]:
        ranker = distillrank.Ranker(method=method, loss="softmax", epochs=3, patience=3, widths=[16], backend="cpu")
        ranker.fit(X_rows, clicks, qid=lists, position=position, verbose=False)
        scores = ranker.predict(Xt)
        assert np.isfinite(scores).all() and np.ptp(scores) > 0, method
        learned[method] = [e.get("propensities") for e in ranker.run_["student"]["history"]]
    assert learned["naive"] == [None] * 3
    # DLA learns at every step, so its propensities have moved by the end of its first epoch; the
    # two-tower model learns between epochs, so its first epoch trained on propensities of 1.
    assert min(learned["dla"][0][1:]) < 1.0, learned["dla"]
    assert learned["two-tower"][0] == [1.0] * 10 and min(learned["two-tower"][1][1:]) < 1.0
    # One impression a row shows each row's document once: EM cannot separate examination from
    # relevance, and there are no grades for full information. Both are refused by name.
    for method, why in [("ips-estimated", "EM cannot tell a rank's examination from its documents' relevance"),
                        ("ips-harvested", "a document of its own, shown once"),
                        ("full-information", "no grades beside them")]:
        with pytest.raises(ValueError, match=why) as refused:
            distillrank.Ranker(method=method, loss="softmax", epochs=1, widths=[8], backend="cpu").fit(
                X_rows, clicks, qid=lists, position=position, verbose=False)
        # Another door's flag is neither named nor left behind with its dashes stripped.
        assert method in str(refused.value) and "--" not in str(refused.value), str(refused.value)
        assert "compare privileged" not in str(refused.value), str(refused.value)
    # A method that does not learn from clicks by rank would ignore the positions: refused.
    for method in ["pfd", "no-distillation", "gend"]:
        with pytest.raises(ValueError, match=f"position: {method} does not learn from clicks by displayed rank.*"
                                             "naive, dla, two-tower") as refused:
            distillrank.Ranker(method=method, epochs=1, widths=[8], backend="cpu").fit(
                X_rows, clicks, qid=lists, position=position, verbose=False)
        assert "--" not in str(refused.value), str(refused.value)
    # Privileged logs bring their own clicks by rank, which the positions would not reach: refused.
    with pytest.raises(ValueError, match="position: privileged logs reads its clicks by rank from the logs"):
        distillrank.Ranker(method="dla", privileged="logs", epochs=1, widths=[8], backend="cpu").fit(
            X_rows, clicks, qid=lists, position=position, verbose=False)
    ranker = distillrank.Ranker(method="dla", loss="softmax", epochs=1, widths=[8], backend="cpu")
    bad = position.copy()
    bad[12] = 11
    with pytest.raises(ValueError, match=r"position, row 13: 11: expected a displayed rank in 1\.\.=\d+, the rows of query"):
        ranker.fit(X_rows, clicks, qid=lists, position=bad, verbose=False)
    bad[12] = 0
    with pytest.raises(ValueError, match="position, row 13: 0"):
        ranker.fit(X_rows, clicks, qid=lists, position=bad, verbose=False)
    two = clicks.copy()
    two[4] = 2
    with pytest.raises(ValueError, match="row 5: click 2: expected 0 or 1"):
        ranker.fit(X_rows, two, qid=lists, position=position, verbose=False)
    # A click of -1 is a bad click, not a bad grade.
    two[4] = -1
    with pytest.raises(ValueError, match=r"y, row 5: click -1: expected 0 or 1 \(with position=, y holds"):
        ranker.fit(X_rows, two, qid=lists, position=position, verbose=False)
    # A position far past its list is named as a position, not as the memory it would take.
    far = position.copy()
    far[12] = 1 << 60
    with pytest.raises(ValueError, match=r"position, row 13: 1152921504606846976: expected a displayed rank"):
        ranker.fit(X_rows, clicks, qid=lists, position=far, verbose=False)
    with pytest.raises(ValueError, match="one displayed position per row"):
        ranker.fit(X_rows, clicks, qid=lists, position=position[:-1], verbose=False)
    # The true propensities are the simulator's: rows carry none.
    with pytest.raises(ValueError, match="ips-estimated"):
        distillrank.Ranker(method="ips", loss="softmax", epochs=1, widths=[8], backend="cpu").fit(
            X_rows, clicks, qid=lists, position=position, verbose=False)


def test_read_impressions_sums_the_log_as_the_library_does(tmp_path):
    """read_impressions: the log data simulate-logs writes, summed by document and rank, equals an
    independent numpy sum of its lines; a bad line raises naming its line and field."""
    fold = ROOT / "target" / "data" / "mq2008" / "Fold1"
    out = tmp_path / "logs"
    cli("data", "simulate-logs", fold / "train.txt", fold / "vali.txt", fold / "test.txt", "-o", out)
    log, data = out / "train.txt.impressions.tsv", out / "train.txt"
    table = distillrank.read_impressions(log, data)
    rows = np.loadtxt(log, dtype=np.int64, skiprows=1, delimiter="\t", usecols=range(5))
    _, _, qid = distillrank.read_letor(data)
    starts = {q: i for i, q in reversed(list(enumerate(qid)))}
    doc = np.array([starts[q] for q in rows[:, 0]]) + rows[:, 3] - 1
    impressions = np.zeros_like(table["impressions"])
    clicks = np.zeros_like(table["clicks"])
    np.add.at(impressions, (doc, rows[:, 2] - 1), 1)
    np.add.at(clicks, (doc, rows[:, 2] - 1), rows[:, 4])
    assert (table["impressions"] == impressions).all() and (table["clicks"] == clicks).all()
    assert (table["qid"] == qid).all() and table["sessions"] == 100 and table["impressions"].shape[1] == 10
    # The same log naming its documents by the data file's docid comments reads the same.
    docids = [line.split("#docid = ")[1].split()[0] for line in data.read_text().splitlines()]
    named = tmp_path / "named.tsv"
    named.write_text("qid\tsession\tposition\tdoc\tclick\n" + "".join(
        f"{q}\t{s}\t{p}\t{docids[d]}\t{c}\n" for (q, s, p, _, c), d in zip(rows, doc)))
    by_docid = distillrank.read_impressions(named, data)
    assert (by_docid["impressions"] == table["impressions"]).all() and (by_docid["clicks"] == table["clicks"]).all()
    bad = tmp_path / "bad.tsv"
    bad.write_text("qid\tsession\tposition\tdoc\tclick\n" + f"{qid[0]}\t0\t1\t1\t2\n")
    with pytest.raises(ValueError, match="line 2: click 2"):
        distillrank.read_impressions(bad, data)


def test_class_a_model_that_does_not_rank_is_marked(tmp_path):
    """A model that gives every document of each test query one score is named in Python's
    results as in the CLI's: here GenD's teacher, whose z is the same for every document of a
    query."""
    lines = []
    for q in range(1, 121):
        for d in range(12):
            grade = d % 3
            lines.append(f"{grade} qid:{q} 1:{grade + d / 10} 2:{q % 7}")
    train = tmp_path / "per-query.txt"
    train.write_text("\n".join(lines) + "\n")
    setup = {
        "data": {"source": {"files": {"train": str(train)}}, "privileged": "cols:2", "tau_target": 2.8},
        "methods": ["no-distillation", "gend"], "seeds": 1, "epochs": 1, "widths": [4], "backend": "cpu",
    }
    results = distillrank.compare(setup, verbose=False)
    assert any(s.startswith("GenD's teacher (every seed)") for s in results["not_ranking"]), results.get("not_ranking")


def test_sweep_equals_the_clis_sweep(tmp_path):
    setup = distillrank.Setup(source="mq2008", seeds=2, methods=["no-distillation", "pfd"], **SMALL)
    path = tmp_path / "setup.json"
    path.write_text(setup.to_json())
    cli("sweep", "--param", "alpha", "--values", "0.3,0.7", "--setup", path, "--out", tmp_path / "out")
    theirs = json.loads((tmp_path / "out" / "sweep.json").read_text())
    ours = distillrank.sweep("alpha", [0.3, 0.7], setup, verbose=False)
    assert ours["param"] == theirs["param"] == "alpha"
    assert ours["values"] == theirs["values"] == [0.3, 0.7]
    assert ours["config"] == theirs["config"]
    for mine, cli_point in zip(ours["points"], theirs["points"]):
        assert mine["methods"] == cli_point["methods"]
        assert mine["tests"] == cli_point["tests"]
        assert mine["methods"]["pfd"]["gain_percent"] is not None
    assert "alpha" in distillrank.SWEEP_PARAMS and "tau_target".replace("_", "-") in distillrank.SWEEP_PARAMS
    # A value out of the swept setting's range, and an unknown parameter, are refused by name.
    with pytest.raises(ValueError, match="alpha = 1: expected"):
        distillrank.sweep("alpha", [0.5, 1.0], setup, verbose=False)
    with pytest.raises(ValueError, match="unknown parameter 'bogus'"):
        distillrank.sweep("bogus", [1.0], setup, verbose=False)


def test_a_sweep_names_what_it_replaces_and_what_nothing_reads(caplog):
    """The swept setting's value in the setup is replaced at every point, and said (the CLI
    refuses its flag beside --param); a setting no comparison reads is named, as a comparison
    names it; the folds are refused in Python's words before the first value."""
    import logging

    setup = distillrank.Setup(source="mq2008", seeds=1, methods=["no-distillation", "pfd"], alpha=0.7,
                              rd={"k": 7}, **SMALL)
    with caplog.at_level(logging.WARNING, logger="distillrank"):
        distillrank.sweep("alpha", [0.3], setup, verbose=False)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(w.startswith("alpha 0.7 is not used: the sweep of alpha sets it") for w in warned), warned
    assert any(w.startswith("rd.k 7 is not used") for w in warned), warned
    assert not any("--" in w for w in warned), warned
    with pytest.raises(ValueError) as refused:
        distillrank.sweep("alpha", [0.3], distillrank.Setup(source="mq2008_folds", **SMALL), verbose=False)
    assert "runs a comparison on each fold" in str(refused.value) and "--" not in str(refused.value)
    # distillrank.dask runs the points itself and says the same before them, from the library.
    said = distillrank._distillrank.sweep_warnings(setup.to_json(), "alpha")
    assert [w for w in said if w.startswith("alpha 0.7 is not used")] and not [w for w in said if "--" in w], said


def test_class_a_keyword_is_read_as_meant_or_refused_by_its_name(caplog, tmp_path):
    """Setup's keywords, a comparison's unread settings, a sweep's values and an export's
    metadata: each read as a user means it, or refused by its own name; never a value of two
    dropped, a string read letter by letter, nor None written as text."""
    import logging

    # Two keywords of one field: neither value wins without a word.
    for given in (dict(method="pfd", methods=["gend"]), dict(seed=3, first_seed=5)):
        with pytest.raises(ValueError, match=r"both set (methods|first_seed): give one"):
            distillrank.Setup(**given)
    # One method's name is one method, as a setup document reads it.
    assert distillrank.Setup(methods="pfd").methods == ["pfd"]
    assert distillrank.Setup(methods="self_distillation").methods == ["self-distillation"]
    # The reference is named as the reference, not as the teacher.
    with pytest.raises(TypeError, match=r"^reference: expected a model file's path"):
        distillrank.Setup(reference=5)
    # A data source beside fit's arrays would be read by nothing and recorded as the data.
    X, y, qid = distillrank.mq2008()["train"]
    for source in ("mq2008", "synthetic", {"files": {"train": "/nope.txt"}}):
        with pytest.raises(ValueError, match=r"^source .*: fit trains on X \(and eval_set\), which are the data"):
            distillrank.Ranker(source=source, **SMALL).fit(X, y, qid=qid, verbose=False)
    # An empty folds name is named as such, beside fit's arrays too.
    with pytest.raises(ValueError, match=r"the folds directory's name is empty: name a directory of"):
        distillrank.Ranker(folds="", **SMALL).fit(X, y, qid=qid, verbose=False)
    # A setting no part of the comparison reads is said, as the CLI says it.
    setup = distillrank.Setup(source="mq2008", seeds=1, methods=["no-distillation"], alpha=0.7, rd={"k": 5}, **SMALL)
    with caplog.at_level(logging.WARNING, logger="distillrank"):
        results = distillrank.compare(setup, verbose=False)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    for unread in ("alpha 0.7 is not used", "rd.k 5 is not used"):
        assert [w for w in warned if w.startswith(unread)], warned
        assert [w for w in results["unused_settings"] if w.startswith(unread)], results["unused_settings"]
    # A sweep's values are numbers: text and booleans are refused.
    for values, said in (("0.3,0.5", "is text"), ([True], "not True or False")):
        with pytest.raises(ValueError, match=f"^values: .*{said}"):
            distillrank.sweep("alpha", values, setup, verbose=False)
    # ONNX's metadata holds text.
    X, y, qid = distillrank.mq2008()["train"]
    ranker = distillrank.Ranker(method="no-distillation", labels="grades", epochs=1, widths=[8], backend="cpu")
    ranker.fit(X, y, qid=qid, verbose=False)
    for metadata in ({"b": None}, {"version": 2}, [("a", "b")]):
        with pytest.raises(TypeError, match=r"^metadata: "):
            ranker.to_onnx(str(tmp_path / "m.onnx"), metadata=metadata)
    assert not (tmp_path / "m.onnx").exists()


def test_every_loss_and_method_comes_from_the_librarys_entries():
    assert distillrank.LOSSES[:2] == ("rankbce", "ranknet") and "lambdarank" in distillrank.LOSSES
    assert distillrank.METHODS[0] == "no-distillation" and "pfd" in distillrank.METHODS
    # Each is a value the library takes.
    for loss in distillrank.LOSSES:
        assert distillrank.Setup(loss=loss).loss == loss
    assert distillrank.Setup(methods=list(distillrank.METHODS)).methods == list(distillrank.METHODS)


def test_class_one_setup_document_one_meaning_a_section_left_partly_out(tmp_path):
    partial = {
        "data": {"source": {"synthetic": {"options": {"queries": 40, "regular": 12}}}},
        "rd": {"k": 3},
        "epochs": 1,
        "seeds": 1,
        "widths": [8],
        "methods": ["no-distillation"],
    }
    ours = distillrank.Setup.from_dict(partial).to_dict()
    defaults = distillrank.Setup().to_dict()
    options = ours["data"]["source"]["synthetic"]["options"]
    default_options = defaults["data"]["source"]["synthetic"]["options"]
    assert options["queries"] == 40 and options["regular"] == 12
    assert {k: v for k, v in options.items() if k not in ("queries", "regular")} == {
        k: v for k, v in default_options.items() if k not in ("queries", "regular")
    }
    assert ours["rd"]["k"] == 3 and ours["rd"]["lambda"] == defaults["rd"]["lambda"]
    path = tmp_path / "setup.json"
    path.write_text(json.dumps(partial))
    cli("compare", "--setup", path, "--out", tmp_path / "out", "--quiet")
    theirs = json.loads((tmp_path / "out" / "setup.json").read_text())
    assert theirs["data"] == ours["data"] and theirs["rd"] == ours["rd"]


def test_a_logging_rankers_section_is_read_as_the_cli_reads_it(tmp_path):
    """The logging ranker's section, left partly out or wrong in a field, is read or refused by
    Python's Setup and the CLI's --setup in the same words, naming the field."""
    doc = lambda ranker: {"data": {"logs": {"logging_ranker": ranker}}}
    assert distillrank.Setup.from_dict(doc({"kind": "linear"})).to_dict()["data"]["logs"] == \
        distillrank.Setup().to_dict()["data"]["logs"]
    path = tmp_path / "setup.json"
    for ranker, words in [
        ({"kind": "linear", "fraction": "NaN"}, "setup field data.logs.logging_ranker.fraction: string \"NaN\""),
        ({"kind": "feature", "column": 0}, "setup field data.logs.logging_ranker.column: integer `0`"),
    ]:
        with pytest.raises(ValueError, match=re.escape(words)):
            distillrank.Setup.from_dict(doc(ranker))
        path.write_text(json.dumps(doc(ranker)))
        assert words in cli_error("compare", "--setup", path, "--out", tmp_path / "out")


def test_class_one_setup_document_one_meaning_relative_files_and_the_other_jobs_document():
    setup = {
        "data": {
            "source": {"files": {"train": "train.txt", "valid": "vali.txt", "test": "test.txt"}},
            "tau_target": 2.8,
        },
        "methods": ["no-distillation"],
        "epochs": 1,
        "seeds": 1,
        "widths": [8],
    }
    # Text or a dict has no folder its relative names are relative to: refused by field, unless
    # base names it (the CLI reads them against the setup file's folder).
    with pytest.raises(ValueError, match=r"data\.source\.files\.train: 'train\.txt' is a relative path"):
        distillrank.compare(setup, verbose=False)
    result = distillrank.compare(setup, verbose=False, base=str(MQ2008))
    assert result["methods"]["no-distillation"]["ndcg@8"]["mean"] is not None
    # A comparison's document holds no objectives' section: refused, as compare refuses the reverse.
    with pytest.raises(ValueError, match="holds a comparison and no global objectives' section"):
        distillrank.objectives({"seeds": 2, "epochs": 3}, verbose=False)


def test_a_setups_teacher_keyword_is_a_path_as_python_opens_it(tmp_path, monkeypatch):
    """``Setup(teacher="m.txt")`` reads the model against the working directory, as
    ``Ranker(teacher="m.txt")`` does (a setup document's names are read against ``base``)."""
    model = ROOT / "tests" / "data" / "mq2008-lightgbm.txt"
    (tmp_path / "m.txt").write_bytes(model.read_bytes())
    monkeypatch.chdir(tmp_path)
    setup = distillrank.Setup(source="mq2008", teacher="m.txt", methods=["pfd"], epochs=1, seeds=1, widths=[8])
    assert setup.to_dict()["data"]["teacher"]["model"] == str(tmp_path / "m.txt")
    assert distillrank.compare(setup, verbose=False)["methods"]["pfd"]["ndcg@8"]["mean"] is not None


def test_class_every_file_a_setup_names_is_read_against_base_and_an_empty_name_is_refused(tmp_path):
    """A teacher's and a reference's files are read against ``base`` as the data files are (a
    scores list name by name), refused by field without it; an empty name is refused, not read
    as none."""
    for split in ["train", "vali", "test"]:
        lines = (MQ2008 / f"{split}.txt").read_text().splitlines()
        (tmp_path / f"{split}.txt").write_text("\n".join(lines) + "\n")
        (tmp_path / f"{split}.scores").write_text("".join(f"{i % 5}\n" for i in range(len(lines))))
    setup = {
        "data": {
            "source": {"files": {"train": "train.txt", "valid": "vali.txt", "test": "test.txt"}},
            "tau_target": 2.8,
            "reference": {"scores": ",vali.scores,test.scores"},
        },
        "methods": ["no-distillation"], "epochs": 1, "seeds": 1, "widths": [8],
    }
    with pytest.raises(ValueError, match=r"data\.source\.files\.train: 'train\.txt' is a relative path"):
        distillrank.compare(setup, verbose=False)
    result = distillrank.compare(setup, verbose=False, base=str(tmp_path))
    assert result["reference"] is not None
    absolute = json.loads(json.dumps(setup))
    for split, name in [("train", "train.txt"), ("valid", "vali.txt"), ("test", "test.txt")]:
        absolute["data"]["source"]["files"][split] = str(tmp_path / name)
    with pytest.raises(ValueError, match=r"data\.reference\.scores: 'vali\.scores' is a relative path"):
        distillrank.compare(absolute, verbose=False)
    for noun in ["teacher", "reference"]:
        for kind in ["model", "scores"]:
            empty = json.loads(json.dumps(absolute))
            empty["data"].pop("reference")
            empty["data"][noun] = {kind: ""}
            with pytest.raises(ValueError, match=rf"the {noun}'s {kind} file's name is empty \({noun}\.{kind}\)"):
                distillrank.compare(empty, verbose=False)


def test_paired_test_from_python():
    a = [[0.5, 0.7, None, 0.9], [0.6, 0.8, None, 0.7]]
    b = [[0.4, 0.6, None, 0.8], [0.5, 0.5, None, 0.7]]
    result = distillrank.paired_test(a, b, seed=1, a_name="pfd", b_name="no-distillation")
    assert result["a"] == "pfd" and result["b"] == "no-distillation" and result["metric"] == "ndcg@8"
    assert result["n_queries"] == 3 and result["n_seeds"] == 2
    assert result["mean_diff"] == pytest.approx((0.1 + 0.2 + 0.05) / 3)
    with pytest.raises(ValueError):
        distillrank.paired_test(a, b[:1])
    # Each argument is named: a seed out of range, a flat list, a value that is no number.
    with pytest.raises(ValueError, match=r"^seed: -1: expected a whole number"):
        distillrank.paired_test(a, b, seed=-1)
    with pytest.raises(ValueError, match=r"^a: seed 0 is 0.5: expected one list of per-query values per seed"):
        distillrank.paired_test(a[0], b)
    with pytest.raises(ValueError, match=r"^b: seed 1, query 2: 'x' is not a number or None"):
        distillrank.paired_test(a, [b[0], [0.5, 0.5, "x", 0.7]])


# Bad input: ValueError with the CLI's words.


def test_epochs_zero_is_refused_with_the_clis_message(bundled):
    X, y, qid = bundled["train"]
    with pytest.raises(ValueError) as e:
        distillrank.Ranker(epochs=0).fit(X, y, qid=qid, verbose=False)
    # Both doors read the range from the library's table of settings: the CLI as the flag is
    # parsed, Python as the setup is checked; both name the flag and give the same range.
    from_cli = cli_error("compare", "--epochs", "0", "--out", "/nonexistent/never-written")
    expected = from_cli.split("': ", 1)[1]
    assert expected.startswith("expected a whole number in 1..="), from_cli
    # Each in its own words: the CLI's flag, Python's keyword.
    assert "--epochs" in from_cli and "epochs" in str(e.value), (from_cli, str(e.value))
    assert "--" not in str(e.value), str(e.value)
    assert str(e.value).endswith(expected), (from_cli, str(e.value))


def test_every_door_refuses_a_setting_out_of_range_with_the_same_range(tmp_path):
    setup = tmp_path / "setup.json"
    setup.write_text('{"lr": 100}')
    from_file = cli_error("compare", "--setup", setup, "--out", tmp_path / "out")
    from_flag = cli_error("compare", "--lr", "100", "--out", tmp_path / "out")
    with pytest.raises(ValueError) as from_python:
        distillrank.Setup.from_json('{"lr": 100}')
    expected = from_flag.split("': ", 1)[1]
    assert "--lr" in from_file and from_file.endswith(expected), (from_file, from_flag)
    python = str(from_python.value)
    assert "lr" in python and "--" not in python and python.endswith(expected), (python, from_flag)


def test_unknown_keywords_are_named(bundled):
    # Checked by fit (and by the setup they make), as scikit-learn's estimators check theirs.
    X, y, qid = bundled["train"]
    with pytest.raises(ValueError, match="epochz"):
        distillrank.Ranker(epochz=3).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="unknown variant `pfdd`"):
        distillrank.Ranker(method="pfdd").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="turbo"):
        distillrank.Ranker(backend="turbo").setup


def test_class_each_door_names_its_own_words_for_seeds_and_splits(tmp_path):
    # A whole number in another notation is the number; a huge one is out of range, named by the
    # keyword the user gave, not the field it fills.
    assert distillrank.Setup(seeds=1e3).seeds == 1000
    assert distillrank.Setup.from_json('{"seeds": 1000.0, "first_seed": 1e3}').first_seed == 1000
    with pytest.raises(ValueError) as huge:
        distillrank.Ranker(seed=10**30).setup
    assert "seed" in str(huge.value) and "first_seed" not in str(huge.value) and "out of range" in str(huge.value)
    with pytest.raises(ValueError, match="1000.5 is not a whole number"):
        distillrank.Setup(seeds=1000.5)
    # One training query and no validation split: fit is told of its eval_set, a comparison on
    # files of its setup's validation file.
    X = np.arange(36, dtype=np.float32).reshape(12, 3)
    y, qid = [1, 0, 0, 1] * 3, [1] * 12
    with pytest.raises(ValueError) as fit:
        distillrank.Ranker(**SMALL).fit(X, y, qid=qid, verbose=False)
    assert "eval_set" in str(fit.value) and "--" not in str(fit.value), fit.value
    train = tmp_path / "train.txt"
    train.write_text("".join(f"{g} qid:1 1:{i} 2:{i % 2}\n" for i, g in enumerate(y)))
    setup = {"data": {"source": {"files": {"train": str(train), "test": str(train)}}}, "methods": ["no-distillation"],
             "seeds": 1, "epochs": 1, "widths": [4], "backend": "cpu"}
    with pytest.raises(ValueError) as compared:
        distillrank.compare(setup, verbose=False)
    words = str(compared.value)
    assert "source.files.valid" in words and "eval_set" not in words and "--" not in words, words


def test_bad_arrays_are_refused_with_the_row(bundled):
    X, y, qid = bundled["train"]
    y = y.astype(np.float64)
    y[2] = 0.5
    with pytest.raises(ValueError, match="row 3: relevance grade 0.5"):
        distillrank.Ranker(**SMALL).fit(X, y, qid=qid, verbose=False)
    with pytest.raises(ValueError, match="relevance grade 40"):
        distillrank.Ranker(**SMALL).fit(X, np.full(len(qid), 40), qid=qid, verbose=False)
    # A qid that comes back after other queries.
    X = np.zeros((5, 3), dtype=np.float32)
    with pytest.raises(ValueError, match=r"row 5: qid 1 reappears"):
        distillrank.Ranker(**SMALL).fit(X, [1, 0, 0, 1, 0], qid=[1, 1, 2, 2, 1], verbose=False)
    Xn = np.ones((4, 2))
    Xn[1, 1] = np.nan
    with pytest.raises(ValueError, match="row 2, feature 2"):
        distillrank.Ranker(**SMALL).fit(Xn, [1, 0, 1, 0], qid=[1, 1, 2, 2], verbose=False)
    with pytest.raises(ValueError, match="qid"):
        distillrank.Ranker(**SMALL).fit(X, [1, 0, 0, 1, 0], verbose=False)
    with pytest.raises(ValueError, match="not fitted"):
        distillrank.Ranker().predict(X)


def test_class_messages_name_what_python_calls_it(bundled):
    """Python's messages name its own arrays and keywords: a NaN in ``privileged`` is the
    privileged array's (not X's), a setting JSON cannot hold is named by its keyword (not as a
    position in a JSON text), and the library's advice names keywords, not the CLI's flags."""
    X, y, qid = bundled["train"]
    Z = np.ones((X.shape[0], 2), dtype=np.float32)
    Z[5, 1] = np.nan
    with pytest.raises(ValueError, match=r"^privileged: row 6, feature 2: NaN is not a finite number"):
        distillrank.Ranker(**SMALL).fit(X, y, qid=qid, privileged=Z, verbose=False)
    Xv = X[:40].copy()
    Xv[3, 0] = np.inf
    with pytest.raises(ValueError, match=r"^eval_set's X: row 4, feature 1: inf is not a finite number"):
        distillrank.Ranker(**SMALL).fit(X, y, qid=qid, eval_set=(Xv, y[:40], qid[:40]), verbose=False)
    # Rows of different lengths: X's, not numpy's words alone.
    ragged = [[0.1, 0.2], [0.3]] * 10
    with pytest.raises(ValueError, match=r"^X: rows of different lengths: expected a 2-D array"):
        distillrank.Ranker(**SMALL).fit(ragged, [0, 1] * 10, qid=[1] * 20, verbose=False)
    for keyword in ("lr", "alpha"):
        with pytest.raises(ValueError, match=rf"^{keyword} = nan: expected a finite number"):
            distillrank.Ranker(**{keyword: float("nan")}).fit(X, y, qid=qid)
    with pytest.raises(ValueError) as refused:
        distillrank.Ranker(**dict(SMALL, tau_target=9.0)).fit(X, y, qid=qid, verbose=False)
    message = str(refused.value)
    assert "--" not in message and "tau_target" in message, message
    # A dropout in range that keeps less than one unit of the narrowest layer, the student's or
    # the teachers', and dropout or normalisation on a linear model (no hidden layer): refused
    # before anything trains, in keywords.
    for settings, words in [
        (dict(widths=[32, 8], dropout=0.9), "choose a dropout of at most 1 − 1/8 = 0.875"),
        (dict(widths=[32, 8], teacher_widths=[4], dropout=0.8), "1 − 1/4 = 0.75 (teacher_widths)"),
        (dict(widths=[], dropout=0.5), "dropout 0.5 zeroes hidden units, and a model without hidden layers"),
        (dict(widths=[], norm="layer"), "norm layer normalises hidden layers"),
    ]:
        with pytest.raises(ValueError) as refused:
            distillrank.Ranker(**dict(SMALL, **settings)).fit(X, y, qid=qid, verbose=False)
        assert words in str(refused.value) and "--" not in str(refused.value), str(refused.value)


def test_class_numpy_values_paths_and_bad_teachers_are_taken_or_refused_in_words(bundled, tmp_path):
    """Settings given as numpy numbers or arrays (what a grid from np.arange gives) are the
    numbers they hold, in every place a setup is built; a value that is no setting, a teacher
    file that is not there, teacher scores or sweep values that are not numbers, a NaN grade
    (y's, not X's) and a number beyond float32's range are refused by what Python calls them,
    never by a traceback from inside the package."""
    X, y, qid = bundled["train"]
    small = dict(SMALL, epochs=1)
    fitted = distillrank.Ranker(**dict(small, ensemble=np.int64(2), dropout=np.float32(0.0),
                                       widths=np.array([8]))).fit(X, y, qid=qid, verbose=False)
    assert fitted.predict(X[:10], qid=qid[:10]).shape == (10,)
    ranker = distillrank.Ranker(**small).set_params(epochs=np.int64(1))
    ranker.fit(X, y, qid=qid, verbose=False)
    assert distillrank.Setup(epochs=np.int64(2), widths=np.array([4, 2])).to_dict()["widths"] == [4, 2]
    with pytest.raises(ValueError, match=r"^lr = .*expected a number"):
        distillrank.Setup(lr=object())
    for missing in (tmp_path / "absent.txt", str(tmp_path)):
        with pytest.raises(ValueError, match=r"^teacher: .*expected a tree model's file"):
            distillrank.Ranker(**dict(small, method="pfd", teacher=missing)).fit(
                X, y, qid=qid, privileged=X[:, :2].copy(), verbose=False)
    with pytest.raises(ValueError, match=r"^teacher's scores of X: expected numbers"):
        distillrank.Ranker(**dict(small, method="pfd", teacher=np.array(["a"] * len(y)))).fit(
            X, y, qid=qid, privileged=X[:, :2].copy(), verbose=False)
    scores = np.zeros(len(y))
    scores[3] = np.nan
    with pytest.raises(ValueError, match=r"score of document 4 of"):
        distillrank.Ranker(**dict(small, method="pfd", teacher=scores)).fit(
            X, y, qid=qid, privileged=X[:, :2].copy(), verbose=False)
    for values, refusal in [(["x"], "expected numbers"), ((v for v in ["x"]), "expected numbers"),
                            (0.5, "expected a list of numbers, not float"),
                            (np.zeros((2, 2)), r"expected one list of numbers, got shape \(2, 2\)")]:
        with pytest.raises(ValueError, match=rf"^values: {refusal}"):
            distillrank.sweep("alpha", values, distillrank.Setup(epochs=1, seeds=1), verbose=False)
    with pytest.raises(ValueError, match=r"^teacher's scores of split 1: expected numbers"):
        distillrank.Setup(teacher=[np.array(["a", "b"])] * 3)
    grades = np.asarray(y, dtype=np.float64).copy()
    grades[3] = np.nan
    with pytest.raises(ValueError, match=r"^y: row 4: relevance grade NaN: expected"):
        distillrank.Ranker(**small).fit(X, grades, qid=qid, verbose=False)
    # Each array named as itself: y and qid are not X, and the training X must have columns.
    with pytest.raises(ValueError, match=r"^y: row 1: relevance grade 0.5"):
        distillrank.Ranker(**small).fit(X, grades * 0 + 0.5, qid=qid, verbose=False)
    with pytest.raises(ValueError, match=r"^eval_set y: row 1: relevance grade -1"):
        distillrank.Ranker(**small).fit(X, y, qid=qid, eval_set=(X, grades * 0 - 1, qid),
                                        verbose=False)
    with pytest.raises(ValueError, match=r"^qid: row \d+: qid \d+ reappears"):
        distillrank.Ranker(**small).fit(X, y, qid=np.roll(qid, 1), verbose=False)
    with pytest.raises(ValueError, match=r"^X: no feature columns"):
        distillrank.Ranker(**small).fit(X[:, :0], y, qid=qid, eval_set=(X, y, qid), verbose=False)
    huge = np.asarray(X, dtype=np.float64).copy()
    huge[1, 2] = 1e39
    with pytest.raises(ValueError, match=r"row 2, feature 3: inf is not a finite number \(or a number beyond float32"):
        distillrank.Ranker(**small).fit(huge, y, qid=qid, verbose=False)


def test_backend_auto_probes_the_gpu_quietly_without_xdg_runtime_dir():
    """Mesa's drivers complain on stderr when XDG_RUNTIME_DIR is unset (containers, ssh); the
    library keeps the probe quiet in every native door, Python's included."""
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    code = (
        "import distillrank\n"
        "X, y, q = distillrank.mq2008()['train']\n"
        "distillrank.Ranker(backend='auto', epochs=1, widths=[4]).fit(X, y, qid=q, verbose=False)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert "XDG_RUNTIME_DIR" not in done.stderr, done.stderr


def test_class_an_eval_set_whose_queries_each_hold_one_grade_is_refused(bundled):
    """As a training split is: its labels would be noise, and it could not choose an epoch."""
    X, y, qid = bundled["train"]
    Xv, yv, qv = bundled["valid"]
    flat = np.array(yv, dtype=np.float64)
    for q in np.unique(qv):
        flat[qv == q] = 1 + q % 2
    with pytest.raises(ValueError, match="no validation group holds documents of different grades"):
        distillrank.Ranker(**SMALL).fit(X, y, qid=qid, eval_set=(Xv, flat, qv), verbose=False)


def test_empty_arrays_say_there_are_no_rows():
    # Empty lists read as float64: the refusal is the library's "no rows", not a dtype.
    with pytest.raises(ValueError, match="no rows"):
        distillrank.Ranker().fit(np.zeros((0, 3), np.float32), [], qid=[])


def test_a_missing_model_file_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="missing") as missing:
        distillrank.load(tmp_path / "missing")
    assert "LightGBM" not in str(missing.value)
    # load reads saved distillrank models only, and says so of a tree model.
    lightgbm = Path(__file__).resolve().parents[1] / "data" / "mq2008-lightgbm.txt"
    with pytest.raises(ValueError, match="a LightGBM or XGBoost model, not a saved distillrank model"):
        distillrank.load(lightgbm)


# Ctrl-C.


def test_ctrl_c_stops_a_long_fit():
    script = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
import distillrank
X, y, qid = distillrank.mq2008()["train"]
print("started", flush=True)
try:
    distillrank.Ranker(method="pfd", epochs=100000, patience=100000, widths=[64, 64], backend="cpu", tau_target=2.8).fit(X, y, qid=qid)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        # Wait for the first epoch's line on stderr: training is under way.
        deadline = time.monotonic() + 120
        seen = []
        while time.monotonic() < deadline:
            line = child.stderr.readline()
            if not line:
                break
            seen.append(line)
            if "epoch" in line and "loss" in line:
                break
        assert any("epoch" in line for line in seen), "".join(seen)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=10)
        took = time.monotonic() - sent
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 3, (out, err)
    assert "interrupted" in out and "finished" not in out
    assert took < 5, f"took {took:.1f} s to stop"


def test_every_door_refuses_a_method_listed_twice(tmp_path):
    # Listed twice, a method would take both its places' runs in one job: refused by the library
    # at every door, in the same words.
    words = "method pfd is listed twice"
    from_flag = cli_error("compare", "--methods", "pfd,no-distillation,pfd", "--out", tmp_path / "a")
    setup = tmp_path / "setup.json"
    twice = json.loads(distillrank.Setup().to_json())
    twice["methods"] = ["pfd", "no-distillation", "pfd"]
    setup.write_text(json.dumps(twice))
    from_file = cli_error("compare", "--setup", setup, "--out", tmp_path / "b")
    with pytest.raises(ValueError) as from_python:
        distillrank.compare(distillrank.Setup(methods=["pfd", "pfd"]), verbose=False)
    for message in (from_flag, from_file, str(from_python.value)):
        assert words in message, message


def test_compare_on_the_letor_folds_equals_the_clis(tmp_path):
    """data.folds: the comparison on each of MQ2008's five folds, the mean over them and the tests
    on the pooled test queries, the same from Python as from the CLI; a missing part is named."""
    folds = ROOT / "target" / "data" / "mq2008"
    setup = distillrank.Setup(folds=str(folds), methods=["no-distillation", "pfd"], seeds=2,
                              labels="grades", **{**SMALL, "tau_target": None})
    path = tmp_path / "setup.json"
    path.write_text(setup.to_json())
    cli("compare", "--setup", path, "--out", tmp_path / "out")
    theirs = json.loads((tmp_path / "out" / "results.json").read_text())
    ours = distillrank.compare(setup, verbose=False)
    assert len(ours["folds"]) == 5 and ours["pooled_test_queries"] == theirs["pooled_test_queries"]
    for method in ("no-distillation", "pfd"):
        assert ours["methods"][method]["ndcg@8"] == theirs["methods"][method]["ndcg@8"]
        per_fold = ours["methods"][method]["ndcg@8"]["per_fold"]
        assert abs(ours["methods"][method]["ndcg@8"]["mean"] - sum(per_fold) / 5) < 1e-12
    assert [t["mean_diff"] for t in ours["tests"]] == [t["mean_diff"] for t in theirs["tests"]]
    parts = tmp_path / "parts"
    parts.mkdir()
    for i in (1, 2, 3, 5):
        (parts / f"S{i}.txt").write_text((folds / f"S{i}.txt").read_text())
    with pytest.raises(ValueError, match="S4.txt"):
        distillrank.compare(distillrank.Setup(folds=str(parts), **SMALL), verbose=False)
    # A part that is a copy of another: fold 1 would test on queries it trains on.
    (parts / "S4.txt").write_text((folds / "S4.txt").read_text())
    (parts / "S5.txt").write_text((folds / "S1.txt").read_text())
    with pytest.raises(ValueError, match=r"qid \d+ is in the test files of fold 1 \(.*S5.txt\) and fold 2 \(.*S1.txt\)"):
        distillrank.compare(distillrank.Setup(folds=str(parts), **SMALL), verbose=False)
    # The folds beside other data (the bundled Fold1) are refused, not run with those dropped.
    with pytest.raises(ValueError, match=r"folds.*bundled mq2008.*name one"):
        distillrank.compare(distillrank.Setup(folds=str(folds), source="mq2008", **SMALL), verbose=False)
    # The bundled MQ2008's five parts are the same folds, from the library itself.
    bundled = distillrank.Setup(source="mq2008_folds", methods=["no-distillation", "pfd"], seeds=2,
                                labels="grades", **{**SMALL, "tau_target": None})
    again = distillrank.compare(bundled, verbose=False)
    assert again["folds"][0]["train"][0] == "bundled:mq2008/S1.txt"
    for method in ("no-distillation", "pfd"):
        assert again["methods"][method]["ndcg@8"] == ours["methods"][method]["ndcg@8"]


def test_class_column_identity_frames_keep_their_column_names(tmp_path):
    """A data frame's column names at fit are the ranker's feature_names_in_: predict takes the
    same columns in the same order, and refuses them reordered or renamed (as scikit-learn does),
    naming the first that differs; an array is taken by position."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n, width = 400, 6
    X = rng.normal(size=(n, width)).astype(np.float32)
    y = (X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=n) > 0.5).astype(int) + (X[:, 0] > 1.2)
    qid = np.repeat(np.arange(n // 20), 20)
    names = [f"f{j}" for j in range(width)]
    frame = pd.DataFrame(X, columns=names)
    ranker = distillrank.Ranker("no-distillation", labels="grades", **SMALL).fit(frame, y, qid=qid, verbose=False)
    assert list(ranker.feature_names_in_) == names and ranker.n_features_in_ == width
    same = ranker.predict(frame)
    assert np.array_equal(same, ranker.predict(X))
    reordered = frame[names[::-1]]
    with pytest.raises(ValueError, match="column 0 is 'f5' where fit saw 'f0'"):
        ranker.predict(reordered)
    with pytest.raises(ValueError, match=r"missing \['f5'\]"):
        ranker.predict(frame.rename(columns={"f5": "g5"}))
    # Pandas' default column labels (0, 1, ...) name no feature, as in scikit-learn: the frame
    # is taken by position, and a saved model keeps no names for the CLI to check.
    unnamed = distillrank.Ranker("no-distillation", labels="grades", **SMALL).fit(
        pd.DataFrame(X), y, qid=qid, verbose=False)
    assert not hasattr(unnamed, "feature_names_in_")
    np.testing.assert_array_equal(unnamed.predict(frame), unnamed.predict(X))
    unnamed.save(str(tmp_path / "unnamed"))
    assert "feature_names" not in json.loads((tmp_path / "unnamed.json").read_text())
    # The eval_set's frame is checked against the training frame's.
    with pytest.raises(ValueError, match="eval_set X"):
        distillrank.Ranker("no-distillation", labels="grades", **SMALL).fit(
            frame, y, qid=qid, eval_set=(reordered, y, qid), verbose=False)


def test_a_model_output_over_what_it_is_not_is_refused(tmp_path):
    """save's prefix names a file (a folder or nothing wrote hidden `.safetensors` and `.json`);
    to_onnx does not replace a file that is not an ONNX model, as the CLI's doors refuse them."""
    X, y, qid = distillrank.mq2008()["train"]
    ranker = distillrank.Ranker("no-distillation", labels="grades", **SMALL).fit(X, y, qid=qid, verbose=False)
    for prefix in (str(tmp_path) + "/", str(tmp_path), ""):
        with pytest.raises(ValueError, match="PREFIX.safetensors"):
            ranker.save(prefix)
    assert list(tmp_path.iterdir()) == []
    data = tmp_path / "data.txt"
    data.write_text("1 qid:1 1:0.5\n")
    with pytest.raises(ValueError, match="is not an ONNX model"):
        ranker.to_onnx(str(data))
    assert data.read_text() == "1 qid:1 1:0.5\n"


def test_class_what_a_lightgbm_user_passes_is_read_as_meant_or_refused_before_training(bundled, caplog):
    """What a LightGBM or XGBoost user passes to fit and predict: a nested column (polars' List,
    Array, Struct) is refused by its name before training (it was spread over two columns and
    refused after every epoch); numbers held as objects are numbers; a missing query id is named
    by its row; a teacher's scores are any 1-D array (a Series too), never a matrix read row by
    row, and never scores of a split fit does not have; a teacher no method reads is warned of;
    predict's switch is a bool; a frame for an array-fitted ranker (or the reverse) is read by
    position with scikit-learn's warning; a paired test's overflow is refused, not a p of 0."""
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    X, y, qid = bundled["train"]
    width = X.shape[1]
    names = [f"f{j}" for j in range(width)]
    fit = lambda data, method="no-distillation", **kw: distillrank.Ranker(
        method, labels="grades", **SMALL, **kw).fit(data, y, qid=qid, verbose=False)
    frame = pl.from_pandas(pd.DataFrame(X, columns=names))
    for nested in (pl.struct(["f0", "f1"]), pl.concat_list(["f0", "f1"]),
                   pl.concat_list(["f0", "f1"]).list.to_array(2)):
        with pytest.raises(ValueError, match=r"^X: column 'f0' holds a list, array or struct in each row"):
            fit(frame.with_columns(nested.alias("f0")))
    ranker = fit(X)
    np.testing.assert_array_equal(ranker.predict(X.astype(object)), ranker.predict(X))
    # Text stays text, in an object array as in a frame's column.
    with pytest.raises(ValueError, match=r"^X: expected numbers, got dtype object"):
        ranker.predict(X.astype(str).astype(object))
    missing = pd.array(qid, dtype="Int64")
    missing[5] = pd.NA
    with pytest.raises(ValueError, match=r"^qid, row 6: a missing value"):
        distillrank.Ranker("no-distillation", **SMALL).fit(X, y, qid=missing, verbose=False)
    with pytest.raises(TypeError, match=r"^allow_missing_features: expected True or False, not 'no'"):
        ranker.predict(X[:, :-1], allow_missing_features="no")
    with pytest.warns(UserWarning, match="^X has feature names, but the model was fitted without feature names"):
        ranker.predict(pd.DataFrame(X, columns=names))
    named = fit(pd.DataFrame(X, columns=names))
    with pytest.warns(UserWarning, match="^X has no feature names, but the model was fitted with feature names"):
        named.predict(X)
    # A teacher's scores: a Series as an array; a matrix or a split too many refused.
    scores = X[:, 0].astype(np.float64) + X[:, 1]
    np.testing.assert_array_equal(
        fit(X, "pfd", teacher=pd.Series(scores)).predict(X), fit(X, "pfd", teacher=scores).predict(X))
    # A matrix whose values number the rows, read row by row, put scores on other documents.
    rows = len(scores) - len(scores) % 2
    with pytest.raises(ValueError, match=r"^teacher's scores of X: expected one list of numbers, got shape \(\d+, 2\)"):
        distillrank.Ranker("pfd", labels="grades", teacher=scores[:rows].reshape(-1, 2), **SMALL).fit(
            X[:rows], y[:rows], qid=qid[:rows], verbose=False)
    with pytest.raises(ValueError, match=r"^teacher: 2 splits of scores, and fit reads 1"):
        fit(X, "pfd", teacher=(scores, scores))
    with caplog.at_level("WARNING", logger="distillrank"):
        fit(X, "no-distillation", teacher=scores)
    warned = [r.getMessage() for r in caplog.records if r.levelno == 30]
    assert any(w.startswith("teacher= is not used") for w in warned), warned
    with pytest.raises(ValueError, match=r"past f64's range"):
        distillrank.paired_test([[1e308, -1e308, 1e308]], [[-1e308, 1e308, 0.0]])
    # In Python's words: X's columns, qid=, a seed past what JSON holds exactly.
    with pytest.raises(ValueError, match=rf"^X: {width - 1} columns, and the model was trained on {width}"):
        ranker.predict(X[:, :-1])
    with pytest.raises(ValueError, match=r"check qid= \(each query's rows share one\)"):
        distillrank.Ranker("no-distillation", min_group_size=1, **SMALL).fit(
            X, y, qid=np.arange(len(y)), verbose=False)
    with pytest.raises(ValueError, match=r"^seed = 18446744073709551616 is out of range: a whole number outside -2\^63..=2\^64 - 1"):
        distillrank.Ranker("no-distillation", seed=2**64, **SMALL).fit(X, y, qid=qid, verbose=False)


def test_a_validation_split_with_few_positive_groups_is_warned_of(bundled, caplog):
    """The epoch kept is the one best on the validation groups with a y = 1: a held-out split
    with a handful of them chooses it by chance, and says so (it said nothing, at any
    verbosity)."""
    X, y, qid = bundled["valid"]
    with caplog.at_level("WARNING", logger="distillrank"):
        distillrank.Ranker("no-distillation", **SMALL).fit(X, y, qid=qid, verbose=False)
    warned = [r.getMessage() for r in caplog.records if r.levelno == 30]
    assert any(re.match(r"the validation split has [0-4] groups? with a y = 1", w) and "--" not in w
               for w in warned), warned


def test_class_every_kind_of_table_is_its_numbers_or_refused_by_column(tmp_path):
    """A pyarrow table keeps a pandas index it was made from out of the features; boolean and
    nullable integer columns are numbers; a scipy sparse matrix is its dense values (absent
    entries 0, as LightGBM reads one); a column that holds no numbers is named; arrays of the
    wrong length are named as themselves."""
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(1)
    n, width = 400, 5
    X = rng.normal(size=(n, width)).astype(np.float32)
    X[X < -0.5] = 0.0
    y = (X[:, 0] > 0.3).astype(int) + (X[:, 1] > 1.0)
    qid = np.repeat(np.arange(n // 20), 20)
    names = [f"f{j}" for j in range(width)]
    frame = pd.DataFrame(X, columns=names)
    fit = lambda data, yy=y, q=qid: distillrank.Ranker("no-distillation", labels="grades", **SMALL).fit(
        data, yy, qid=q, verbose=False)
    expected = fit(X).predict(X)
    # A filtered frame's row labels stored by pyarrow are not a sixth feature.
    keep = np.isin(qid, np.arange(0, n // 20, 2))
    table = pa.Table.from_pandas(frame[keep])
    assert "__index_level_0__" in table.column_names
    ranker = fit(table, y[keep], qid[keep])
    assert ranker.n_features_in_ == width and list(ranker.feature_names_in_) == names
    np.testing.assert_array_equal(ranker.predict(table), fit(X[keep], y[keep], qid[keep]).predict(X[keep]))
    # Sparse: its dense values.
    np.testing.assert_array_equal(fit(sparse.csr_matrix(X)).predict(sparse.csr_matrix(X)), expected)
    # Boolean and nullable integer columns.
    mixed = frame.copy()
    mixed["flag"] = X[:, 0] > 0
    mixed["count"] = pd.array((X[:, 1] > 0).astype(int), dtype="Int64")
    numbers = np.column_stack([X, X[:, 0] > 0, X[:, 1] > 0]).astype(np.float32)
    np.testing.assert_array_equal(fit(mixed).predict(mixed), fit(numbers).predict(numbers))
    text = frame.assign(name="a")
    with pytest.raises(ValueError, match=r"^X: column 'name' holds object values that are not numbers"):
        fit(text)
    # Text of numbers is text too; dates and durations (which polars' own conversion turns into
    # microseconds) are named, in pandas, polars and pyarrow alike.
    with pytest.raises(ValueError, match=r"^X: column 'name' holds object values that are not numbers"):
        fit(frame.assign(name="1.5"))
    pl = pytest.importorskip("polars")
    dated = frame.assign(when=pd.Timestamp("2024-01-01") + pd.to_timedelta(np.arange(n), unit="D"))
    for table in (dated, pl.from_pandas(dated), pa.Table.from_pandas(dated, preserve_index=False)):
        with pytest.raises(ValueError, match=r"^X: column 'when' holds dates, times or durations"):
            fit(table)
    with pytest.raises(ValueError, match=r"^X: column 'wait' holds dates, times or durations"):
        fit(pl.from_pandas(frame).with_columns(wait=pl.duration(days=pl.lit(1))))
    with pytest.raises(ValueError, match=r"^X: a lazy frame .* give X.collect\(\)"):
        fit(pl.from_pandas(frame).lazy())
    # Two columns of one name cannot be told apart by predict's check of the columns: refused.
    twice = pd.DataFrame(X, columns=["a", "b", "a", "c", "d"])
    with pytest.raises(ValueError, match=r"^X: columns 0 and 2 are both named 'a'"):
        fit(twice)
    # A frame-fitted ranker saved and loaded keeps its columns' names, and checks them.
    ranker = fit(frame)
    prefix = str(tmp_path / "m")
    ranker.save(prefix)
    loaded = distillrank.load(prefix)
    assert list(loaded.feature_names_in_) == names
    np.testing.assert_array_equal(loaded.predict(frame), ranker.predict(frame))
    with pytest.raises(ValueError, match=r"^X: column 0 is 'f4' where fit saw 'f0'"):
        loaded.predict(frame[names[::-1]])
    # The CLI checks a Parquet file's columns against the saved names too.
    pq = pytest.importorskip("pyarrow.parquet")
    for columns, path in ((names, tmp_path / "same.parquet"), (names[::-1], tmp_path / "reversed.parquet")):
        pq.write_table(pa.Table.from_pandas(frame[columns].assign(qid=qid, label=y), preserve_index=False), path)
    scores = np.array(cli("predict", "--model", prefix, tmp_path / "same.parquet").stdout.split(), dtype=np.float32)
    np.testing.assert_array_equal(scores, ranker.predict(frame))
    assert cli_error("predict", "--model", prefix, tmp_path / "reversed.parquet").startswith(
        f"{tmp_path / 'reversed.parquet'}: feature column 1 is \"f4\", which is column 5 in the model's training data")
    # Arrays of the wrong length, each by its name.
    with pytest.raises(ValueError, match=rf"^y: {n - 1} values for {n} rows of X"):
        fit(X, y[:-1])
    with pytest.raises(ValueError, match=rf"^qid: {n - 1} values for {n} rows of X"):
        fit(X, y, qid[:-1])
    ranker = fit(X)
    with pytest.raises(ValueError, match=rf"^y: {n - 1} values for {n} rows of X"):
        ranker.score(X, y[:-1], qid=qid)
    for k in (-1, 0, 10**30, 2.5):
        with pytest.raises(ValueError, match=r"^k: .*expected a whole number of places"):
            ranker.score(X, y, qid=qid, k=k)

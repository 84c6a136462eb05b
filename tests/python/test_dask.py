"""A comparison's jobs as tasks on a Dask cluster (distillrank.dask): a LocalCluster of worker
processes on loopback gives the figures and paired tests distillrank.compare gives on one machine,
for a comparison of methods that share a teacher, on the bundled data and on files read through a
prepared cache; a sweep gives each value's comparison; `python -m distillrank compare --scheduler`
runs a setup.json there."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import distillrank

dask_distributed = pytest.importorskip("dask.distributed")
import distillrank.dask as dr_dask  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MQ2008 = ROOT / "target" / "data" / "mq2008" / "Fold1"
SMALL = dict(epochs=2, widths=[16], backend="cpu", seeds=2)


@pytest.fixture(scope="module")
def client():
    cluster = dask_distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    with dask_distributed.Client(cluster) as c:
        yield c
    cluster.close()


def same_figures(ours, theirs):
    assert ours["methods"].keys() == theirs["methods"].keys()
    for method, figures in theirs["methods"].items():
        for key in ("ndcg@8", "graded_ndcg@8", "teacher_ndcg@8"):
            assert ours["methods"][method].get(key) == figures.get(key), (method, key)
    strip = lambda tests: [(t["a"], t["b"], t["metric"], t["mean_diff"], t["p_holm"]) for t in tests]
    assert strip(ours["tests"]) == strip(theirs["tests"])


def test_a_comparison_on_the_cluster_equals_one_machines(client):
    # Self-distillation and Ranking Distillation share a teacher: one job trains both.
    setup = distillrank.Setup(
        source="mq2008", methods=["no-distillation", "self-distillation", "pfd", "ranking-distillation"],
        rd_teacher_factor=1, **SMALL,
    )
    jobs = json.loads(distillrank._distillrank.compare_jobs(setup.to_json(), None))
    assert len(jobs) == 2 * 3 and any(len(j["methods"]) == 2 for j in jobs)
    here = distillrank.compare(setup, verbose=False)
    there = dr_dask.compare(setup, client)
    same_figures(there, here)
    # The tasks ran on the cluster's workers, not in this process.
    assert len(client.scheduler_info()["workers"]) == 2


def test_files_through_a_shared_prepared_cache(client, tmp_path):
    files = {}
    for split in ("train", "vali", "test"):
        target = tmp_path / f"{split}.txt"
        target.write_bytes((MQ2008 / f"{split}.txt").read_bytes())
        files[split] = str(target)
    setup = distillrank.Setup(
        source={"files": {"train": files["train"], "valid": files["vali"], "test": files["test"]}},
        prepared_cache=True, methods=["no-distillation", "pfd"], labels="grades", tau_target=None, **SMALL,
    )
    there = dr_dask.compare(setup, client)
    assert list(tmp_path.glob("train.txt.*.drprep")), "no prepared cache beside the training file"
    same_figures(there, distillrank.compare(setup, verbose=False))


TIMED = ("seconds", "docs_per_s", "ms_per_1k_docs", "throughput", "wall_seconds")


def comparable(results):
    """results.json without what names the files or the run (the command, the data's words, the
    files' paths, the processes it ran on) and without what the clock measured."""
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in TIMED}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value
    out = strip({k: v for k, v in results.items() if k not in ("command", "data")})
    out["setup"]["data"].pop("source")
    out["setup"].pop("jobs")  # how many processes ran it: --jobs 1 against the cluster's
    return out


@pytest.mark.parametrize("parts", [1, 3, 7])
def test_results_json_is_the_clis_whatever_the_workers_and_the_parquet_parts(client, tmp_path, parts):
    """The training split as a folder of 1, 3 or 7 Parquet parts written by Dask, compared on the
    cluster (2 workers; 1 worker for 3 parts): results.json, per-query values included, is
    `distillrank compare --jobs 1`'s on the LETOR text, figure for figure."""
    dd = pytest.importorskip("dask.dataframe")
    frame, _, _, _ = mq2008_frame("train")
    folder = tmp_path / "train.parquet"
    dd.from_pandas(frame, npartitions=parts, sort=False).to_parquet(folder, write_index=False)
    assert len(list(folder.glob("*.parquet"))) == parts
    settings = dict(methods=["no-distillation", "pfd"], epochs=2, widths=[16], backend="cpu", seeds=2)
    files = lambda train: {"files": {"train": str(train), "valid": str(MQ2008 / "vali.txt"), "test": str(MQ2008 / "test.txt")}}
    on_text = distillrank.Setup(source=files(MQ2008 / "train.txt"), **settings)
    (tmp_path / "setup.json").write_text(on_text.to_json())
    cli_bin = Path(os.environ.get("DISTILLRANK_BIN", ROOT / "target" / "debug" / "distillrank"))
    done = subprocess.run([str(cli_bin if cli_bin.is_absolute() else ROOT / cli_bin), "compare", "--setup", str(tmp_path / "setup.json"),
                           "--jobs", "1", "--out", str(tmp_path / "cli"), "--quiet"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    want = comparable(json.loads((tmp_path / "cli" / "results.json").read_text()))
    assert want["per_query"] and want["methods"]
    on_parquet = distillrank.Setup(source=files(folder), **settings)
    assert comparable(dr_dask.compare(on_parquet, client)) == want
    if parts == 3:
        cluster = dask_distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                                dashboard_address=None)
        with cluster, dask_distributed.Client(cluster) as one:
            assert comparable(dr_dask.compare(on_parquet, one)) == want


def test_a_worker_killed_in_the_middle_of_a_comparison_changes_nothing():
    """A worker process killed while it trains a job: Dask runs the lost job again on a worker that
    is alive (the nanny starts a new one), and the results are those of one machine."""
    setup = distillrank.Setup(source="mq2008", methods=["no-distillation", "pfd"], epochs=6, widths=[64, 32],
                              backend="cpu", seeds=3)
    cluster = dask_distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                            dashboard_address=None)
    with cluster, dask_distributed.Client(cluster) as c:
        done = {}
        runner = threading.Thread(target=lambda: done.update(results=dr_dask.compare(setup, c)))
        runner.start()
        killed = None
        deadline = time.time() + 120
        while killed is None and runner.is_alive() and time.time() < deadline:
            busy = [worker for worker, tasks in c.processing().items() if tasks]
            if busy:
                pid = c.run(os.getpid, workers=[busy[0]])[busy[0]]
                os.kill(pid, signal.SIGKILL)
                killed = busy[0]
            time.sleep(0.02)
        runner.join(600)
        assert killed, "no worker was busy to kill"
        assert killed not in c.scheduler_info()["workers"]
    assert comparable(done["results"]) == comparable(distillrank.compare(setup, verbose=False))


def test_a_scheduler_that_does_not_answer_is_named(tmp_path):
    setup = distillrank.Setup(source="mq2008", **SMALL)
    (tmp_path / "setup.json").write_text(setup.to_json())
    done = subprocess.run(
        [sys.executable, "-m", "distillrank", "compare", "--setup", str(tmp_path / "setup.json"),
         "--scheduler", "tcp://127.0.0.1:9", "--timeout", "3"],
        capture_output=True, text=True, timeout=120, env=dict(os.environ),
    )
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "no Dask scheduler answered at tcp://127.0.0.1:9 within 3 s" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_a_sweep_gives_each_values_comparison(client):
    setup = distillrank.Setup(source="mq2008", methods=["no-distillation", "pfd"], **SMALL)
    points = dr_dask.sweep("alpha", [0.3, 0.7], setup, client)
    assert len(points) == 2
    for alpha, point in zip([0.3, 0.7], points):
        assert point["setup"]["alpha"] == alpha
        same_figures(point, distillrank.compare(distillrank.Setup(source="mq2008", methods=["no-distillation", "pfd"],
                                                                   alpha=alpha, **SMALL), verbose=False))
    with pytest.raises(ValueError, match="alpha"):
        dr_dask.sweep("alpha", [1.5], setup, client)
    # One split a point, as one machine's sweep: the folds are refused before any job.
    with pytest.raises(ValueError, match="runs a comparison on each fold"):
        dr_dask.sweep("alpha", [0.3], distillrank.Setup(source="mq2008_folds", **SMALL), client)


def test_a_sweeps_points_are_the_clis_results_json(client, tmp_path):
    """Each value of a sweep on the cluster is results.json of `distillrank compare --jobs 1` at
    that value, per-query values included."""
    settings = dict(source="mq2008", methods=["no-distillation", "pfd"], **SMALL)
    points = dr_dask.sweep("alpha", [0.3, 0.7], distillrank.Setup(**settings), client)
    cli_bin = Path(os.environ.get("DISTILLRANK_BIN", ROOT / "target" / "debug" / "distillrank"))
    for alpha, point in zip([0.3, 0.7], points):
        folder = tmp_path / f"alpha-{alpha}"
        folder.mkdir()
        (folder / "setup.json").write_text(distillrank.Setup(alpha=alpha, **settings).to_json())
        done = subprocess.run([str(cli_bin if cli_bin.is_absolute() else ROOT / cli_bin), "compare", "--setup",
                               str(folder / "setup.json"), "--jobs", "1", "--out", str(folder / "out"), "--quiet"],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        want = comparable(json.loads((folder / "out" / "results.json").read_text()))
        assert want["per_query"] and comparable(point) == want, alpha


def test_python_m_distillrank_compare_on_a_scheduler(client, tmp_path):
    setup = distillrank.Setup(source="mq2008", methods=["no-distillation", "pfd"], **SMALL)
    (tmp_path / "setup.json").write_text(setup.to_json())
    done = subprocess.run(
        [sys.executable, "-m", "distillrank", "compare", "--setup", str(tmp_path / "setup.json"),
         "--scheduler", client.scheduler.address, "--out", str(tmp_path / "results.json")],
        capture_output=True, text=True, timeout=600, env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    same_figures(json.loads((tmp_path / "results.json").read_text()), distillrank.compare(setup, verbose=False))
    # A setup that is not there, or that a setting refuses: one line naming it, no traceback.
    (tmp_path / "bad.json").write_text(json.dumps({"epochs": 0}))
    for name, words in [("absent.json", "No such file"), ("bad.json", "epochs")]:
        done = subprocess.run(
            [sys.executable, "-m", "distillrank", "compare", "--setup", str(tmp_path / name),
             "--scheduler", client.scheduler.address],
            capture_output=True, text=True, timeout=600, env=dict(os.environ),
        )
        assert done.returncode == 1 and words in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_without_a_client_or_on_folds_the_reason_is_named(client):
    with pytest.raises(ValueError, match="client"):
        dr_dask.compare(distillrank.Setup(source="mq2008"), None)
    with pytest.raises(ValueError, match=r"folds: distillrank.dask.compare and sweep send one split's jobs to the "
                                         r"cluster; the folds run one comparison a fold, on one machine"):
        dr_dask.compare(distillrank.Setup(source="mq2008_folds", **SMALL), client)


def mq2008_frame(split="test"):
    """MQ2008 Fold1's `split` as a pandas frame: the features f1..f46, `label` and `qid`."""
    pd = pytest.importorskip("pandas")
    X, y, qid = distillrank.read_letor(str(MQ2008 / f"{split}.txt"))
    frame = pd.DataFrame(X, columns=[f"f{j + 1}" for j in range(X.shape[1])])
    frame["label"] = y
    frame["qid"] = qid
    return frame, X, y, qid


def grades_ranker(**settings):
    """A ranker without distillation fitted on MQ2008 Fold1's training file, its grades as labels."""
    X, y, qid = distillrank.mq2008()["train"]
    ranker = distillrank.Ranker(method="no-distillation", labels="grades", backend="cpu", **settings)
    return ranker.fit(X, y, qid=qid, verbose=False)


def test_scoring_and_evaluation_on_the_workers_equal_one_machines(client):
    dd = pytest.importorskip("dask.dataframe")
    frame, X, y, qid = mq2008_frame()
    ranker = grades_ranker(epochs=2, widths=[16])
    # Partitions cut at query boundaries: indexed by qid, every query in one partition.
    whole = dd.from_pandas(frame.set_index("qid", drop=False), npartitions=4, sort=True)
    assert whole.npartitions > 1
    # The file lists its queries in qid order, so the frame keeps its row order.
    scores = dr_dask.predict(ranker, whole, exclude=("qid", "label")).compute()
    assert scores.dtype == "float32" and scores.to_numpy().tolist() == ranker.predict(X).tolist()
    found = dr_dask.evaluate(ranker, whole)
    assert found["queries"] == sum(v is not None for v in found["per_query"].values())
    assert abs(found["ndcg@8"] - ranker.score(X, y, qid=qid)) < 1e-12
    # Whatever the partitions (each query whole), the same per-query figures and the same mean,
    # to the last bit: they are reduced in qid order.
    for n in (1, 2, 7):
        again = dr_dask.evaluate(ranker, dd.from_pandas(frame.set_index("qid", drop=False), npartitions=n, sort=True))
        assert again == found, n
    assert dr_dask.predict(ranker, whole).compute().tolist() == scores.tolist()
    # The frame's columns are checked here, before any task: that its named columns meet a
    # ranker fitted on arrays is said once, on the client, not once a partition.
    import warnings

    dask = pytest.importorskip("dask")
    with warnings.catch_warnings(record=True) as caught, dask.config.set(scheduler="sync"):
        warnings.simplefilter("always")
        dr_dask.predict(ranker, whole, exclude=("qid", "label")).compute()
    said = [str(w.message) for w in caught if "feature names" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("frame has feature names, but the model was fitted without"), said
    # A listwise ranker is scored on the workers by each partition's queries, as one machine
    # scores them; a frame cut through a query is refused for it by name.
    listwise = grades_ranker(epochs=1, widths=[16], attention_heads=2)
    np.testing.assert_allclose(dr_dask.predict(listwise, whole).compute().to_numpy(), listwise.predict(X, qid=qid),
                               rtol=1e-6, atol=1e-6)
    assert abs(dr_dask.evaluate(listwise, whole)["ndcg@8"] - listwise.score(X, y, qid=qid)) < 1e-6
    cut = dd.from_pandas(frame.reset_index(drop=True), npartitions=7, sort=True)
    with pytest.raises(ValueError, match=r"qid \d+ has rows in partitions"):
        dr_dask.predict(listwise, cut)
    # A LightGBM model file, scored on the workers as LightGBM scores it.
    lgbm = ROOT / "tests" / "data" / "mq2008-lightgbm.txt"
    tree = dr_dask.evaluate(str(lgbm), whole)
    direct, _ = distillrank._distillrank.forest_scores(lgbm.read_bytes(), str(lgbm), X.astype("f8"), "auto")
    expected, _ = distillrank._distillrank.ndcg(direct.astype("f4").tolist(), y.astype("f8").tolist(), qid.tolist(), 8, "exclude")
    assert abs(tree["ndcg@8"] - expected) < 1e-12


def test_a_tree_models_column_mapping_is_said_once_and_chosen_by_model_columns(client, caplog, tmp_path):
    """A frame one column wider than a tree model (a column after its features): where the widths
    do not tell, the note of the mapping `auto` chose is logged once, before any task, naming
    `model_columns`; given, the mapping scores as the model scores its own columns, from its
    file or its Booster. A student's width is checked before any task."""
    import logging

    dd = pytest.importorskip("dask.dataframe")
    frame, X, y, qid = mq2008_frame()
    wider = dd.from_pandas(frame.assign(extra=0.0), npartitions=3)
    lgbm = str(ROOT / "tests" / "data" / "mq2008-lightgbm.txt")
    # Evaluated, each query whole in one partition.
    by_query = dd.from_pandas(frame.assign(extra=0.0).set_index("qid", drop=False), npartitions=3, sort=True)
    for call in (lambda: dr_dask.predict(lgbm, wider).compute(), lambda: dr_dask.evaluate(lgbm, by_query)):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="distillrank"):
            call()
        said = [r.getMessage() for r in caplog.records if "input columns" in r.getMessage()]
        assert len(said) == 1 and "46 input columns and the data 47 features" in said[0] and "model_columns" in said[0], said
    # A model whose objective does not rank is warned about, once, by evaluate too.
    lightgbm = pytest.importorskip("lightgbm")
    regression = tmp_path / "regression.txt"
    lightgbm.LGBMRegressor(n_estimators=3, verbose=-1).fit(X, y).booster_.save_model(str(regression))
    for call in (lambda: dr_dask.predict(str(regression), wider, model_columns="from-1").compute(),
                 lambda: dr_dask.evaluate(str(regression), by_query, model_columns="from-1")):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="distillrank"):
            call()
        warned = [r for r in caplog.records if "not a ranking objective" in r.getMessage()]
        assert len(warned) == 1 and warned[0].levelno == logging.WARNING, caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="distillrank"):
        scores = dr_dask.predict(lgbm, wider, model_columns="from-1").compute()
    assert "input columns" not in caplog.text
    direct, _ = distillrank._distillrank.forest_scores(open(lgbm, "rb").read(), lgbm, X.astype("f8"), "auto")
    np.testing.assert_array_equal(scores.to_numpy(), direct.astype("f4"))
    with pytest.raises(ValueError, match="^model_columns 'sideways': expected auto, from-1 or from-0"):
        dr_dask.predict(lgbm, wider, model_columns="sideways")
    # The Booster itself reads the mapping as its file does (from-0 is refused: it splits on
    # column 0), and a student's width is checked before any task, as its names are.
    booster = lightgbm.Booster(model_file=lgbm)
    np.testing.assert_array_equal(dr_dask.predict(booster, wider, model_columns="from-1").compute().to_numpy(),
                                  scores.to_numpy())
    with pytest.raises(ValueError, match="splits on column 0"):
        dr_dask.predict(booster, wider, model_columns="from-0")
    # An estimator fitted on arrays (its names LightGBM's Column_0, ...: none) scores a named
    # frame as LightGBM does; a Dataset is no model.
    _, starts, counts = np.unique(qid, return_index=True, return_counts=True)
    estimator = lightgbm.LGBMRanker(n_estimators=3, verbose=-1).fit(X, y, group=counts[np.argsort(starts)])
    np.testing.assert_allclose(dr_dask.predict(estimator, dd.from_pandas(frame, npartitions=2)).compute().to_numpy(),
                               estimator.predict(X, raw_score=True), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="^model: a fitted distillrank.Ranker"):
        dr_dask.predict(lightgbm.Dataset(X), wider)
    ranker = distillrank.Ranker(method="no-distillation", labels="grades", epochs=1, widths=[8], backend="cpu")
    ranker.fit(X, y, qid=qid, verbose=False)
    with pytest.raises(ValueError, match="^model_columns 'from-9': expected auto, from-1 or from-0"):
        dr_dask.predict(ranker, wider, model_columns="from-9")
    ranker.save(str(tmp_path / "student"))
    for model in (ranker, str(tmp_path / "student")):
        with pytest.raises(ValueError, match="^frame: the data have 47 feature columns, the model was trained on data with 46"):
            dr_dask.predict(model, wider)


def test_the_workers_check_what_one_machine_checks(client, tmp_path):
    """A ranker fitted on a frame, fitted or saved, checks the Dask frame's feature names and
    order before any task, as Ranker.predict does (pandas' default labels name none); an empty
    partition scores no row; the qid column named by ``qid=`` is no feature; a sweep's values
    and a model's file are refused by name; a frame in memory is named as not Dask's."""
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    frame, X, y, qid = mq2008_frame()
    features = [c for c in frame.columns if c.startswith("f")]
    ranker = distillrank.Ranker(method="no-distillation", labels="grades", epochs=1, widths=[8], backend="cpu")
    ranker.fit(frame[features], y, qid=qid, verbose=False)
    reordered = dd.from_pandas(frame[features[::-1] + ["label", "qid"]], npartitions=2)
    # Saved, it checks them here too, read once before any task (as a prefix or its .json).
    saved = tmp_path / "saved"
    ranker.save(str(saved))
    for model in (ranker, str(saved), str(saved) + ".json"):
        for call in (lambda: dr_dask.predict(model, reordered), lambda: dr_dask.evaluate(model, reordered)):
            with pytest.raises(ValueError, match=r"^frame: column 0 is 'f46' where fit saw 'f1'"):
                call()
    assert len(dr_dask.predict(str(saved), dd.from_pandas(frame, npartitions=2)).compute()) == len(frame)
    # Pandas' default labels name no column: read by position, as Ranker.predict reads them.
    unnamed = pd.DataFrame(frame[features].to_numpy()).assign(qid=frame["qid"].to_numpy())
    for model in (ranker, str(saved)):
        np.testing.assert_array_equal(dr_dask.predict(model, dd.from_pandas(unnamed, npartitions=2)).compute(),
                                      ranker.predict(frame[features]))
    # So does a tree model trained on the frame's named columns, before any task.
    lightgbm = pytest.importorskip("lightgbm")
    _, starts, counts = np.unique(qid, return_index=True, return_counts=True)
    named = tmp_path / "named.txt"
    lightgbm.LGBMRanker(n_estimators=3, verbose=-1).fit(
        frame[features], y, group=counts[np.argsort(starts)]).booster_.save_model(str(named))
    for call in (lambda: dr_dask.predict(str(named), reordered), lambda: dr_dask.evaluate(str(named), reordered)):
        with pytest.raises(ValueError, match=r'feature column 1 is "f46", which is column 46 in the model'):
            call()
    assert len(dr_dask.predict(str(named), dd.from_pandas(frame, npartitions=2)).compute()) == len(frame)
    # A filter that empties partitions.
    whole = dd.from_pandas(frame.set_index("qid", drop=False), npartitions=3, sort=True)
    first = int(frame["qid"].min())
    kept = whole[whole.qid == first]
    scores = dr_dask.predict(ranker, kept).compute()
    assert scores.tolist() == ranker.predict(frame[frame.qid == first][features]).tolist()
    # The query id under another name is no feature.
    renamed = dd.from_pandas(frame.rename(columns={"qid": "query"}), npartitions=2)
    np.testing.assert_array_equal(dr_dask.predict(ranker, renamed, qid="query").compute().to_numpy(),
                                  ranker.predict(frame[features]))
    with pytest.raises(ValueError, match="^values: a sweep of alpha needs at least one value"):
        dr_dask.sweep("alpha", [], distillrank.Setup(epochs=1, seeds=1), client)
    with pytest.raises(ValueError, match="values: alpha = 0.5 is given twice"):
        dr_dask.sweep("alpha", [0.5, 0.5], distillrank.Setup(epochs=1, seeds=1), client)
    with pytest.raises(ValueError, match="^values: expected numbers"):
        dr_dask.sweep("alpha", ["x"], distillrank.Setup(epochs=1, seeds=1), client)
    with pytest.raises(ValueError, match="^model: /nonexistent.txt: no such file"):
        dr_dask.predict("/nonexistent.txt", whole)
    with pytest.raises(TypeError, match="^frame: expected a Dask dataframe, not DataFrame"):
        dr_dask.predict(ranker, pd.DataFrame(frame))


def test_a_saved_model_that_cannot_be_read_is_refused_on_the_client_as_every_door_refuses_it(client, tmp_path):
    """A saved model's prefix, or either of its files, is read on the client by the library's
    loader before any task: a broken config, half a pair or weights without their header are
    refused in the words ``distillrank.load`` and the CLI use (they were Python's JSON errors, a
    tree model's, or scores). ``distillrank.load`` takes a path only."""
    import shutil

    dd = pytest.importorskip("dask.dataframe")
    frame, X, y, qid = mq2008_frame()
    features = [c for c in frame.columns if c.startswith("f")]
    ranker = distillrank.Ranker(method="no-distillation", labels="grades", epochs=1, widths=[8], backend="cpu")
    ranker.fit(X, y, qid=qid, verbose=False)
    saved = tmp_path / "saved"
    ranker.save(str(saved))
    whole = dd.from_pandas(frame, npartitions=2)
    # Its weights file names it too.
    np.testing.assert_array_equal(dr_dask.predict(str(saved) + ".safetensors", whole).compute().to_numpy(),
                                  ranker.predict(frame[features].to_numpy()))

    def broken(name: str, config: "str | None", weights: bool = True) -> str:
        prefix = tmp_path / name
        if config is not None:
            (tmp_path / f"{name}.json").write_text(config)
        if weights:
            shutil.copy(f"{saved}.safetensors", f"{prefix}.safetensors")
        return str(prefix)

    text = (tmp_path / "saved.json").read_text()
    for model, words in [
        (broken("empty", ""), "empty.json: not a distillrank model config"),
        (broken("list", "[]"), "list.json: a list, expected a distillrank model config"),
        (broken("other", text.replace('"source_features": 46', '"source_features": "abc"')),
         "other.json: not a distillrank model config: field source_features: invalid type: string"),
        (broken("alone", None), "alone.json: no such file, and the weights"),
        (broken("alone", None) + ".safetensors", "alone.json: no such file, and the weights"),
        (broken("unweighted", text, weights=False) + ".json", "unweighted.safetensors: No such file"),
    ]:
        for call in (lambda: dr_dask.predict(model, whole), lambda: dr_dask.evaluate(model, whole)):
            with pytest.raises(ValueError) as e:
                call()
            assert words in str(e.value), (model, str(e.value))
    for prefix, error in [(None, TypeError), (5, TypeError), ("", ValueError)]:
        with pytest.raises(error, match="prefix"):
            distillrank.load(prefix)


def test_a_query_split_across_partitions_is_refused_by_name(client):
    dd = pytest.importorskip("dask.dataframe")
    frame, *_ = mq2008_frame()
    # Cut by rows: some query straddles two partitions.
    cut = dd.from_pandas(frame.reset_index(drop=True), npartitions=7, sort=True)
    ranker = distillrank.Ranker(method="no-distillation", epochs=1, widths=[8], backend="cpu")
    ranker.fit(*distillrank.mq2008()["train"][:2], qid=distillrank.mq2008()["train"][2], verbose=False)
    with pytest.raises(ValueError, match=r"qid \d+ has rows in partitions \d+ and \d+.*shuffle"):
        dr_dask.evaluate(ranker, cut)
    with pytest.raises(ValueError, match="no column 'query'"):
        dr_dask.evaluate(ranker, cut, qid="query")


def test_the_clusters_click_table_is_read_impressions_on_the_same_log(client, tmp_path):
    """An impressions log as a Dask dataframe, each query in one partition but its rows shuffled
    within it: the click table summed on the workers equals the library's read_impressions on the
    log, count for count, for 1, 3 and 7 partitions; its file reads back as the same table, and a
    comparison on the logs gives the same figures from it as from the log. A query in two
    partitions, and a session that shows a document twice, are refused by name."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    out = tmp_path / "logs"
    bin_ = Path(os.environ.get("DISTILLRANK_BIN", ROOT / "target" / "debug" / "distillrank"))
    bin_ = bin_ if bin_.is_absolute() else ROOT / bin_
    subprocess.run([str(bin_), "data", "simulate-logs", MQ2008 / "train.txt", MQ2008 / "vali.txt", MQ2008 / "test.txt",
                    "-o", out], check=True, capture_output=True)
    log, data = out / "train.txt.impressions.tsv", out / "train.txt"
    want = distillrank.read_impressions(log, data)
    frame = pd.read_csv(log, sep="\t")
    shuffled = frame.sample(frac=1.0, random_state=3).set_index("qid", drop=False).sort_index(kind="stable")
    for parts in (1, 3, 7):
        cluster_frame = dd.from_pandas(shuffled, npartitions=parts, sort=True)
        got = dr_dask.click_table(cluster_frame, str(data), out=str(tmp_path / f"clicks-{parts}.bin"))
        for key in ("impressions", "clicks", "qid"):
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{key}, {parts} partitions")
        assert got["sessions"] == want["sessions"]
        again = distillrank.read_impressions(tmp_path / f"clicks-{parts}.bin", data)
        for key in ("impressions", "clicks", "qid"):
            np.testing.assert_array_equal(again[key], want[key], err_msg=f"{key} read back")
    # The comparison on the logs reads the table where the sidecar names it.
    runs = {}
    for name in ("train.txt.impressions.tsv", "clicks.bin"):
        if name == "clicks.bin":
            (out / name).write_bytes((tmp_path / "clicks-3.bin").read_bytes())
            sidecar = json.loads((out / "train.txt.logs.json").read_text())
            sidecar["impressions"] = name
            (out / "train.txt.logs.json").write_text(json.dumps(sidecar))
        result = tmp_path / name.replace(".", "-")
        done = subprocess.run([str(bin_), "compare", "--train", data, "--valid", out / "vali.txt", "--test", out / "test.txt",
                               "--privileged", "logs", "--methods", "no-distillation,ips-estimated", "--seeds", "1",
                               "--epochs", "1", "--widths", "8", "--out", result, "--quiet"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        figures = json.loads((result / "results.json").read_text())["methods"]
        runs[name] = {m: (f.get("ndcg@8"), f.get("graded_ndcg@8")) for m, f in figures.items()}
    assert runs["clicks.bin"] == runs["train.txt.impressions.tsv"] and None not in runs["clicks.bin"]["ips-estimated"]
    with pytest.raises(ValueError, match=r"qid \d+ has rows in partitions \d+ and \d+"):
        dr_dask.click_table(dd.from_pandas(frame, npartitions=5, sort=False), str(data))
    twice = pd.concat([frame, frame.iloc[:1]]).set_index("qid", drop=False).sort_index(kind="stable")
    with pytest.raises(ValueError, match="partition 0 of the impressions frame.*shows document .* again"):
        dr_dask.click_table(dd.from_pandas(twice, npartitions=2, sort=True), str(data))


def test_the_clusters_conversions_and_dwell_are_the_librarys_and_aggregate_into_the_same_columns(client, tmp_path):
    """A user's log with each click's conversion and dwell: the cluster's sums per document equal
    read_impressions' on the log for 1, 3 and 7 partitions (dwell in whole milliseconds, so the
    order of addition cannot change it), and `data aggregate-logs` writes the same log columns
    from the cluster's click table as from the log itself."""
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    out = tmp_path / "logs"
    out.mkdir()
    bin_ = Path(os.environ.get("DISTILLRANK_BIN", ROOT / "target" / "debug" / "distillrank"))
    bin_ = bin_ if bin_.is_absolute() else ROOT / bin_
    subprocess.run([str(bin_), "data", "simulate-logs", MQ2008 / "train.txt", "-o", out / "train.txt"],
                   check=True, capture_output=True)
    frame = pd.read_csv(out / "train.txt.impressions.tsv", sep="\t")
    X, y, qid = distillrank.read_letor(str(MQ2008 / "train.txt"))
    starts = {q: i for i, q in reversed(list(enumerate(qid.tolist())))}
    grade = y[[starts[q] + d - 1 for q, d in zip(frame["qid"], frame["doc"])]]
    clicked = frame["click"] == 1
    frame["conversion"] = (clicked & (grade >= 1)).astype("int64")
    frame["dwell"] = np.where(clicked, ((frame["qid"] * 7 + frame["session"] * 13) % 5000) / 1000 + 0.5, 0.0)
    log = tmp_path / "user.tsv"
    frame.to_csv(log, sep="\t", index=False)
    want = distillrank.read_impressions(log, MQ2008 / "train.txt")
    assert want["conversions"].sum() == frame["conversion"].sum()
    assert want["dwell_ms"].sum() == np.round(frame["dwell"] * 1000).sum()
    shuffled = frame.sample(frac=1.0, random_state=5).set_index("qid", drop=False).sort_index(kind="stable")
    for parts in (1, 3, 7):
        got = dr_dask.click_table(dd.from_pandas(shuffled, npartitions=parts, sort=True), str(MQ2008 / "train.txt"),
                                  out=str(tmp_path / f"clicks-{parts}.bin"))
        for key in ("impressions", "clicks", "conversions", "dwell_ms"):
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{key}, {parts} partitions")
    # Pandas' other types for the same values: a float conversion, a nullable boolean click.
    typed = shuffled.astype({"conversion": "float64", "click": "boolean"})
    got = dr_dask.click_table(dd.from_pandas(typed, npartitions=3, sort=True), str(MQ2008 / "train.txt"))
    for key in ("impressions", "clicks", "conversions", "dwell_ms"):
        np.testing.assert_array_equal(got[key], want[key], err_msg=f"{key}, pandas' other types")
    # A column the reader would not read is refused by name, not dropped.
    renamed = shuffled.rename(columns={"dwell": "dwell_time"})
    with pytest.raises(ValueError, match="the frame's column 'dwell_time' is not one of an impressions log's"):
        dr_dask.click_table(dd.from_pandas(renamed, npartitions=3, sort=True), str(MQ2008 / "train.txt"))
    columns = {}
    for name, source in (("log", log), ("table", tmp_path / "clicks-7.bin")):
        done = subprocess.run([str(bin_), "data", "aggregate-logs", MQ2008 / "train.txt", "--impressions", source,
                               "-o", tmp_path / f"{name}.txt", "--quiet"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        columns[name] = distillrank.read_letor(str(tmp_path / f"{name}.txt"))[0][:, -6:]
    np.testing.assert_array_equal(columns["table"], columns["log"])
    np.testing.assert_array_equal(columns["log"][:, 5], want["conversions"].astype("f4"))


def test_class_what_a_frame_holds_is_read_as_meant_or_refused_by_name(client, caplog):
    """What a Dask user hands the cluster is checked as one machine's Ranker checks it: the cutoff
    k, the label column, a missing query id, partitions whose columns are not the frame's; the
    client and the swept setting; and a comparison warns on the client as one machine's does."""
    import logging

    dd = pytest.importorskip("dask.dataframe")
    dask = pytest.importorskip("dask")
    pd = pytest.importorskip("pandas")
    frame, X, y, qid = mq2008_frame()
    ranker = grades_ranker(epochs=1, widths=[8])
    whole = dd.from_pandas(frame.set_index("qid", drop=False), npartitions=2, sort=True)
    # k as Ranker.score reads it: a whole number of places, refused before any task.
    for k in (2.5, True, 0, -1):
        with pytest.raises(ValueError, match=r"^k: .*expected a whole number of places"):
            dr_dask.evaluate(ranker, whole, k=k)
    with pytest.raises(ValueError, match=r"^label: the frame has no column 'grade'"):
        dr_dask.evaluate(ranker, whole, label="grade")
    text = frame.assign(label=frame["label"].astype(int).astype(str))
    with pytest.raises(ValueError, match=r"label column 'label': expected integer relevance grades"):
        dr_dask.evaluate(ranker, dd.from_pandas(text, npartitions=1, sort=False))
    # A refusal of a partition's rows names the partition, whose rows it counts from its first.
    parts = [whole.get_partition(n).compute().assign(label=lambda p: p["label"].astype(float)) for n in (0, 1)]
    parts[1].iloc[4, parts[1].columns.get_loc("label")] = float("nan")
    holed = dd.from_delayed([dask.delayed(lambda p=p: p)() for p in parts], meta=parts[0].iloc[:0])
    with pytest.raises(ValueError, match=r"^partition 1: label column 'label': its row 5: a missing value"):
        dr_dask.evaluate(ranker, holed)
    # A missing query id is named by its partition and row, not as a query split in two.
    holed = frame.assign(qid=pd.array(frame["qid"].tolist(), dtype="Int64"))
    holed.loc[2, "qid"] = pd.NA
    with pytest.raises(ValueError, match=r"qid: partition 0, its row 3: a missing value"):
        dr_dask.evaluate(ranker, dd.from_pandas(holed, npartitions=1, sort=False))
    # A partition whose columns are not the frame's (part files that differ): one column
    # renamed, or one more, would be misread or dropped.
    half = len(frame) // 2
    first, second = frame.iloc[:half], frame.iloc[half:]
    for other in (second.rename(columns={"f3": "g3"}), second.assign(f47=1.0)):
        parts = dd.from_delayed([dask.delayed(lambda p=first: p)(), dask.delayed(lambda p=other: p)()],
                                meta=first.iloc[:0], verify_meta=False)
        with pytest.raises(ValueError, match=r"^partition 1: its columns are not the frame's: missing \[.*\], unexpected"):
            dr_dask.predict(ranker, parts, exclude=("qid", "label")).compute()
    # A model that gives every document of each query one score (its inputs vary only between
    # queries) is said not to rank by Ranker.score and by the cluster's evaluate, as
    # `distillrank eval` says it.
    def flattened(X, qid):
        starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
        means = np.add.reduceat(X, starts) / np.diff(np.r_[starts, len(qid)])[:, None]
        return np.repeat(means, np.diff(np.r_[starts, len(qid)]), axis=0).astype(np.float32)

    Xt, yt, qt = distillrank.mq2008()["train"]
    flat = distillrank.Ranker(method="no-distillation", labels="grades", backend="cpu", epochs=1,
                              widths=[8]).fit(flattened(Xt, qt), yt, qid=qt, verbose=False)
    flat_test = frame.copy()
    flat_test[[f"f{j + 1}" for j in range(X.shape[1])]] = flattened(X, qid)
    for measure in (lambda: flat.score(flattened(X, qid), y, qid=qid),
                    lambda: dr_dask.evaluate(flat, dd.from_pandas(flat_test.set_index("qid", drop=False),
                                                                  npartitions=2, sort=True))):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="distillrank"):
            measure()
        warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert [w for w in warned if w.startswith("the model gives every document of each query the same score")], warned
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="distillrank"):
        dr_dask.evaluate(ranker, whole)
    assert not [r for r in caplog.records if "same score" in r.getMessage()]
    # Labels no query mixes (a query's first row alone) measure nothing: NaN from Ranker.score
    # and None from evaluate, with eval's reason, where both gave 1.0.
    one = frame.groupby("qid", sort=False).head(1)
    features = [f"f{j + 1}" for j in range(X.shape[1])]
    for measure, unmeasured in (
            (lambda: ranker.score(one[features].to_numpy(), one["label"].to_numpy(), qid=one["qid"].to_numpy()),
             lambda value: value != value),
            (lambda: dr_dask.evaluate(ranker, dd.from_pandas(one.set_index("qid", drop=False), npartitions=2,
                                                             sort=True)),
             lambda value: value["ndcg@8"] is None and value["queries"] == 0)):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="distillrank"):
            value = measure()
        assert unmeasured(value), value
        warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert distillrank._distillrank.UNMEASURABLE in warned, warned
    # The client and the swept setting, by name.
    for not_a_client in (None, "tcp://127.0.0.1:8786"):
        with pytest.raises(ValueError, match=r"^client: a dask.distributed.Client is needed"):
            dr_dask.compare(distillrank.Setup(source="mq2008", **SMALL), not_a_client)
    with pytest.raises(TypeError, match=r"^param: expected a name of distillrank.SWEEP_PARAMS"):
        dr_dask.sweep(None, [0.3], distillrank.Setup(source="mq2008", **SMALL), client)
    # A setting no comparison reads, said on the client as one machine's comparison says it.
    setup = distillrank.Setup(source="mq2008", methods=["no-distillation"], alpha=0.7, **SMALL)
    with caplog.at_level(logging.WARNING, logger="distillrank"):
        dr_dask.compare(setup, client)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [w for w in warned if w.startswith("alpha 0.7 is not used")], warned

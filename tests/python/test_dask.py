"""A comparison's jobs as tasks on a Dask cluster (distillrank.dask): a LocalCluster of worker
processes on loopback gives the figures and paired tests distillrank.compare gives on one machine,
for a comparison of methods that share a teacher, on the bundled data and on files read through a
prepared cache; a sweep gives each value's comparison; `python -m distillrank compare --scheduler`
runs a setup.json there."""

import json
import os
import subprocess
import sys
from pathlib import Path

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


def test_without_a_client_or_on_folds_the_reason_is_named(client):
    with pytest.raises(ValueError, match="client"):
        dr_dask.compare(distillrank.Setup(source="mq2008"), None)
    with pytest.raises(ValueError, match="each fold"):
        dr_dask.compare(distillrank.Setup(source="mq2008_folds", **SMALL), client)


def mq2008_frame(split="test"):
    """MQ2008 Fold1's `split` as a pandas frame: the features f1..f46, `label` and `qid`."""
    pd = pytest.importorskip("pandas")
    X, y, qid = distillrank.read_letor(str(MQ2008 / f"{split}.txt"))
    frame = pd.DataFrame(X, columns=[f"f{j + 1}" for j in range(X.shape[1])])
    frame["label"] = y
    frame["qid"] = qid
    return frame, X, y, qid


def test_scoring_and_evaluation_on_the_workers_equal_one_machines(client):
    dd = pytest.importorskip("dask.dataframe")
    frame, X, y, qid = mq2008_frame()
    train = distillrank.mq2008()["train"]
    ranker = distillrank.Ranker(method="no-distillation", labels="grades", epochs=2, widths=[16], backend="cpu")
    ranker.fit(*train[:2], qid=train[2], verbose=False)
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
    # A LightGBM model file, scored on the workers as LightGBM scores it.
    lgbm = ROOT / "tests" / "data" / "mq2008-lightgbm.txt"
    tree = dr_dask.evaluate(str(lgbm), whole)
    direct = distillrank._distillrank.forest_scores(lgbm.read_bytes(), str(lgbm), X.astype("f8"), "auto")
    expected = distillrank._distillrank.ndcg(direct.astype("f4").tolist(), y.astype("f8").tolist(), qid.tolist(), 8, "exclude")
    assert abs(tree["ndcg@8"] - expected) < 1e-12


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

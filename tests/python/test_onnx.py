"""`distillrank export` checked from outside: onnx's checker accepts the file, and onnxruntime,
fed the raw LETOR feature vectors of a file, gives the scores `distillrank predict` writes for it.

Needs numpy, onnx, onnxruntime and pytest, the package (for its list of losses), and the
`distillrank` binary: DISTILLRANK_BIN, or
target/debug/distillrank under the repository root (`cargo build --bin distillrank`). Run from the
repository root:

    DISTILLRANK_BIN=target/debug/distillrank python -m pytest tests/python/test_onnx.py -v -s
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import distillrank
import numpy as np
import onnx
import onnxruntime as ort
import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("DISTILLRANK_BIN") or REPO / "target" / "debug" / "distillrank")
MQ2008 = REPO / "target" / "data" / "mq2008" / "Fold1"
PACKAGE = distillrank
LOSSES = distillrank.LOSSES
TRANSFORMS = distillrank.TRANSFORMS
DATASETS = ["mq2008", "synthetic"]
# The tolerance of the comparison: absolute plus relative.
ATOL = 1e-5
RTOL = 1e-5


def distillrank(*args, check=True):
    if not BIN.is_file():
        pytest.fail(
            f"no distillrank binary at {BIN}: build it with `cargo build --bin distillrank` "
            "or point DISTILLRANK_BIN at one"
        )
    done = subprocess.run(
        [str(BIN), *map(str, args)], cwd=REPO, capture_output=True, text=True
    )
    if check and done.returncode != 0:
        pytest.fail(
            f"distillrank {' '.join(map(str, args))} exited {done.returncode}:\n{done.stderr}"
        )
    return done


def read_letor(path, width):
    """The raw feature matrix of a LETOR text file, float32 [docs, width]: "grade qid:Q j:v ...",
    sparse (absent columns 0), anything after '#' a comment."""
    rows = []
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        row = np.zeros(width, dtype=np.float32)
        for token in line[1:]:
            key, value = token.split(":", 1)
            if key == "qid":
                continue
            column = int(key)
            assert 1 <= column <= width, f"{path}:{number}: column {column} outside 1..={width}"
            row[column - 1] = np.float32(float(value))
        rows.append(row)
    return np.stack(rows)


def predict(prefix, file):
    out = distillrank("predict", "--model", prefix, file, "--backend", "cpu", "--quiet").stdout
    return np.array([float(s) for s in out.split()], dtype=np.float32)


@pytest.fixture(scope="session")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="session")
def synthetic_file(workdir):
    path = workdir / "synthetic.txt"
    distillrank("data", "synth", "--queries", 50, "-o", path, "--quiet")
    return path


_trained = {}


def trained(workdir, synthetic_file, dataset, loss, transform="signed-log1p", ensemble=1, norm="none", heads=0):
    """(model prefix, raw file to score) of a small student trained for one epoch (each of its
    `ensemble` members), its hidden layers normalised by `norm`, listwise with `heads` heads of
    attention (0: the MLP)."""
    key = (dataset, loss, transform, ensemble, norm, heads)
    if key not in _trained:
        prefix = workdir / f"{dataset}-{loss}-{transform}-{ensemble}-{norm}-{heads}"
        common = ["--loss", loss, "--epochs", 1, "--widths", "16,8", "--save", prefix]
        common += ["--transform", transform, "--ensemble", ensemble, "--norm", norm]
        common += ["--attention-heads", heads]
        common += ["--backend", "cpu", "--quiet"]
        if dataset == "mq2008":
            assert MQ2008.is_dir(), f"MQ2008 Fold1 is missing at {MQ2008}"
            data = ["--train", MQ2008 / "train.txt", "--valid", MQ2008 / "vali.txt"]
            # MQ2008's grades are 0..2: the threshold of its Gumbel labels (see `train --help`).
            data += ["--test", MQ2008 / "test.txt", "--tau-target", "2.8"]
            score = MQ2008 / "test.txt"
        else:
            data = ["--queries", 200, "--valid-queries", 50, "--test-queries", 50]
            score = synthetic_file
        distillrank("train", *data, *common)
        _trained[key] = (prefix, score)
    return _trained[key]


def export(prefix, path):
    done = distillrank("export", "--model", prefix, "--onnx", path)
    assert done.stdout.startswith(f"wrote {path} (") and "opset 17" in done.stdout, done.stdout
    return path


def onnx_scores(path, features):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (scores,) = session.run(["score"], {"features": features})
    return scores


def cases():
    """Every loss under the default transform, every input transform under the default loss, an
    ensemble of three, and layer normalisation alone and in an ensemble."""
    for dataset in DATASETS:
        for loss in LOSSES:
            yield dataset, loss, "signed-log1p", 1, "none"
        for transform in TRANSFORMS[1:]:
            yield dataset, LOSSES[0], transform, 1, "none"
        yield dataset, LOSSES[0], TRANSFORMS[-1], 3, "none"
        yield dataset, LOSSES[-1], "signed-log1p", 1, "layer"
        yield dataset, LOSSES[0], TRANSFORMS[-1], 3, "layer"


@pytest.mark.parametrize("dataset,loss,transform,ensemble,norm", list(cases()))
def test_onnxruntime_scores_equal_predict(workdir, synthetic_file, dataset, loss, transform, ensemble, norm):
    prefix, file = trained(workdir, synthetic_file, dataset, loss, transform, ensemble, norm)
    path = export(prefix, workdir / f"{dataset}-{loss}-{transform}-{ensemble}-{norm}.onnx")
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)

    config = json.loads(Path(f"{prefix}.json").read_text())
    meta = {p.key: p.value for p in model.metadata_props}
    assert json.loads(meta["distillrank_config"]) == config
    assert meta["source_model"] == prefix.name
    assert meta["loss"] == loss == config["loss"]
    assert meta["transform"] == config["transform"]
    assert model.producer_name == "distillrank"

    assert ("input_maps" in config) == (transform != "signed-log1p")
    assert config.get("members", 1) == ensemble
    assert meta.get("members", "1") == str(ensemble)
    assert [n.op_type for n in model.graph.node].count("Mean") == (ensemble > 1)
    assert config.get("norm", "none") == meta.get("norm", "none") == norm
    layer_norms = [n.op_type for n in model.graph.node].count("LayerNormalization")
    assert layer_norms == (2 * ensemble if norm == "layer" else 0)
    features = read_letor(file, config["source_features"])
    got = onnx_scores(path, features)
    expected = predict(prefix, file)
    assert got.dtype == np.float32
    assert got.shape == expected.shape == (features.shape[0],)
    difference = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    print(
        f"\n{dataset} {loss} {transform} ensemble {ensemble} norm {norm}: {len(expected)} documents, "
        f"max |ONNX - predict| = {difference.max():.3e} "
        f"(scores in [{expected.min():.3f}, {expected.max():.3f}])"
    )
    bad = difference > ATOL + RTOL * np.abs(expected)
    assert not bad.any(), (
        f"{bad.sum()} of {len(expected)} scores differ; first: document {np.argmax(bad)}, "
        f"ONNX {got[np.argmax(bad)]}, predict {expected[np.argmax(bad)]}"
    )


def test_opset_and_dynamic_batch(workdir, synthetic_file):
    prefix, file = trained(workdir, synthetic_file, "mq2008", "ranknet")
    path = export(prefix, workdir / "batch.onnx")
    model = onnx.load(str(path))
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    assert opset >= 17
    (features_input,) = model.graph.input
    assert features_input.name == "features"
    dims = features_input.type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and not dims[0].HasField("dim_value")
    (score_output,) = model.graph.output
    assert score_output.type.tensor_type.shape.dim[0].dim_param == "batch"

    config = json.loads(Path(f"{prefix}.json").read_text())
    features = read_letor(file, config["source_features"])
    expected = predict(prefix, file)
    for n in [1, 37]:
        got = onnx_scores(path, features[:n])
        assert got.shape == (n,)
        np.testing.assert_allclose(got, expected[:n], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_values_near_the_f32_limit_score_alike_in_the_graph(workdir, transform):
    """A column of values near f32's limit, on both sides of 0 (their gap beyond f32): each fitted
    map scores the values between and beyond them finitely, and the graph as `predict` does."""
    lines = []
    for q in range(1, 41):
        for d in range(12):
            grade = (q + d) % 3
            lines.append(f"{grade} qid:{q} 1:{grade + d / 10} 2:{(-2e38, 2e38)[(q + d) % 2]} 3:{d}")
    train = workdir / f"wide-{transform}.txt"
    train.write_text("\n".join(lines) + "\n")
    edge = workdir / f"wide-edge-{transform}.txt"
    values = [-3e38, -2e38, -1e38, 0, 1e38, 1.5e38, 2e38, 3e38]
    edge.write_text("".join(f"0 qid:1 1:1 2:{v} 3:1\n" for v in values))
    prefix = workdir / f"wide-{transform}"
    distillrank("train", "--train", train, "--epochs", 1, "--widths", 8, "--transform", transform,
                "--training-labels", "grades", "--backend", "cpu", "--quiet", "--save", prefix)
    path = export(prefix, workdir / f"wide-{transform}.onnx")
    expected = predict(prefix, edge)
    got = onnx_scores(path, read_letor(edge, 3))
    assert np.isfinite(expected).all() and np.isfinite(got).all(), (expected, got)
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    if transform == "rank-gauss":
        # The values inside the fitted range are interpolated: not all at the first knot's score.
        assert len(set(expected[1:7].tolist())) > 2, expected


def test_unknown_transform_is_refused(workdir, synthetic_file):
    prefix, _ = trained(workdir, synthetic_file, "synthetic", "ranknet")
    edited = workdir / "edited"
    shutil.copy(f"{prefix}.safetensors", f"{edited}.safetensors")
    config = json.loads(Path(f"{prefix}.json").read_text())
    config["transform"] = "standardize"
    Path(f"{edited}.json").write_text(json.dumps(config))
    target = workdir / "edited.onnx"
    done = distillrank("export", "--model", edited, "--onnx", target, check=False)
    assert done.returncode != 0
    assert "unknown transform 'standardize'" in done.stderr, done.stderr
    assert not target.exists()


def query_ids(path):
    """Each document's qid in a LETOR text file, in order."""
    return np.array([int(line.split()[1].split(":")[1]) for line in Path(path).read_text().splitlines()
                     if line.split("#", 1)[0].strip()])


@pytest.mark.parametrize("dataset,heads,ensemble,norm", [
    ("mq2008", 1, 1, "none"), ("mq2008", 4, 1, "none"), ("synthetic", 2, 2, "layer"),
])
def test_listwise_graph_scores_each_query_as_predict(workdir, synthetic_file, dataset, heads, ensemble, norm):
    """The listwise family's graph takes one query's documents, of any number: run once per
    query, onnxruntime gives `predict`'s scores. A one-document query gives the score its
    document gets alone, and the graph's scores of a query depend on the whole query (shuffled,
    they move with their documents; cut short, they change)."""
    prefix, file = trained(workdir, synthetic_file, dataset, "ranknet", "rank-gauss", ensemble, norm, heads)
    path = export(prefix, workdir / f"listwise-{dataset}-{heads}-{ensemble}-{norm}.onnx")
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    config = json.loads(Path(f"{prefix}.json").read_text())
    meta = {p.key: p.value for p in model.metadata_props}
    assert config["attention_heads"] == heads and meta["attention_heads"] == str(heads)
    assert [n.op_type for n in model.graph.node].count("Softmax") == ensemble
    assert "ONE query" in model.doc_string

    features = read_letor(file, config["source_features"])
    qids = query_ids(file)
    expected = predict(prefix, file)
    got = np.empty_like(expected)
    starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1], True])
    sizes = set()
    for a, b in zip(starts[:-1], starts[1:]):
        got[a:b] = onnx_scores(path, features[a:b])
        sizes.add(b - a)
    assert len(sizes) > 1, "queries of several lengths"
    difference = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    print(f"\nlistwise {dataset} heads {heads} ensemble {ensemble} norm {norm}: "
          f"{len(starts) - 1} queries, max |ONNX - predict| = {difference.max():.3e}")
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)

    a, b = starts[0], starts[1]
    order = np.random.default_rng(0).permutation(b - a)
    np.testing.assert_allclose(onnx_scores(path, features[a:b][order]), expected[a:b][order], rtol=RTOL, atol=ATOL)
    alone = onnx_scores(path, features[a:a + 1])
    assert alone.shape == (1,)
    assert abs(float(alone[0]) - float(expected[a])) > 1e-6, "a document scored alone differs from in its query"

    # The package scores the same model the same way, given the queries; without them it refuses.
    ranker = PACKAGE.load(str(prefix), backend="cpu")
    np.testing.assert_allclose(ranker.predict(features, qid=qids), expected, rtol=RTOL, atol=ATOL)
    with pytest.raises(ValueError, match="qid"):
        ranker.predict(features)

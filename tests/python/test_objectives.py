"""The global objectives' comparison from Python against the CLI: the same setup.json, the same
numbers, and the same words for a refused setup.

Run by `cargo xtask python` from the repository root, with the package installed and
DISTILLRANK_BIN naming the CLI (default target/debug/distillrank).
"""

import json

import pytest

import distillrank
from test_package import cli, cli_error

# A small synthetic task on the CPU engine (bit-for-bit the same on every door).
SETUP = {
    "data": {
        "synthetic": {
            "train": 600,
            "valid": 300,
            "test": 300,
            "features": 6,
            "positive_rate": 0.1,
            "noise": 0.5,
            "seed": 5,
        }
    },
    "objectives": ["logloss", "auc-pr:5", "recall-at-precision:0.7"],
    "seeds": 2,
    "epochs": 2,
    "widths": [8],
    "backend": "cpu",
}


def without_timings(value):
    """The results without what a clock measured (`seconds`) or the command that ran them."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in ("seconds", "command")}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def test_objectives_equal_the_clis_results(tmp_path):
    path = tmp_path / "setup.json"
    path.write_text(json.dumps(SETUP))
    cli("objectives", "--setup", path, "--out", tmp_path / "out", "--quiet")
    theirs = json.loads((tmp_path / "out" / "results.json").read_text())
    ours = distillrank.objectives(SETUP, verbose=False)
    assert set(ours["objectives"]) == set(SETUP["objectives"]) == set(theirs["objectives"])
    assert len(ours["objectives"]["logloss"]["auc_pr"]["per_seed"]) == 2
    assert without_timings(ours) == without_timings(theirs)
    # The CLI keeps the setup it ran, which runs the same again from Python.
    kept = (tmp_path / "out" / "setup.json").read_text()
    again = distillrank.objectives(kept, verbose=False)
    assert without_timings(again["objectives"]) == without_timings(ours["objectives"])


# The synthetic task with no training examples: refused by the table of settings.
NO_TRAINING = dict(SETUP, data={"synthetic": dict(SETUP["data"]["synthetic"], train=0)})


def refused_alike(setup, field, tmp_path):
    """Runs a refused setup from Python and from the CLI (`objectives --setup`): both must name
    `field` with the same words, the setup's own (the CLI names the file first), no flag."""
    path = tmp_path / "setup.json"
    path.write_text(json.dumps(setup))
    theirs = cli_error("objectives", "--setup", path, "--out", tmp_path / "out")
    with pytest.raises(ValueError) as ours:
        distillrank.objectives(setup, verbose=False)
    message = str(ours.value)
    assert f"setup field {field} = 0" in message and "--" not in message, message
    assert f"setup field {field} = 0" in theirs and "--train-examples" not in theirs, theirs
    assert theirs.endswith(message.split(" = 0", 1)[1]), (theirs, message)


def test_a_refused_objectives_setup_says_what_the_cli_says(tmp_path):
    refused_alike(NO_TRAINING, "data.synthetic.train", tmp_path)
    with pytest.raises(ValueError, match="unknown field `bogus`"):
        distillrank.objectives(dict(SETUP, bogus=1), verbose=False)
    # The section's settings by their keywords, not the CLI's flags.
    noisy = {"data": {"synthetic": dict(SETUP["data"]["synthetic"], noise=-1)}}
    for extra, words in [({"objectives": []}, "objectives lists no objective"),
                         ({"at_precision": 1.0}, "at_precision = 1"),
                         (noisy, "data.synthetic.noise = -1")]:
        with pytest.raises(ValueError) as refused:
            distillrank.objectives(dict(SETUP, **extra), verbose=False)
        assert words in str(refused.value) and "--" not in str(refused.value), str(refused.value)
    # A relative file without the folder it is relative to, named by the field of the document
    # given: the section alone, or the whole setup under `objectives`.
    files = {"data": {"files": {"train": "train.txt", "threshold": 1}}}
    for document, field in [(dict(SETUP, **files), "data.files.train"),
                            ({"objectives": dict(SETUP, **files)}, "objectives.data.files.train")]:
        with pytest.raises(ValueError, match="is a relative path") as refused:
            distillrank.objectives(document, verbose=False)
        assert str(refused.value).startswith(f"invalid configuration: {field}: 'train.txt'"), str(refused.value)


def test_one_setup_document_for_both_jobs_at_every_door(tmp_path):
    # The objectives' section inside a whole setup, as `objectives` writes it: the same refusal,
    # named by its whole path.
    refused_alike({"objectives": NO_TRAINING}, "objectives.data.synthetic.train", tmp_path)
    # A document holding only that section is no comparison: `compare` refuses it at every door
    # rather than running the default comparison.
    alone = {"objectives": SETUP}
    path = tmp_path / "alone.json"
    path.write_text(json.dumps(alone))
    theirs = cli_error("compare", "--setup", path, "--out", tmp_path / "cmp")
    assert "distillrank objectives --setup" in theirs, theirs
    with pytest.raises(ValueError, match="distillrank objectives --setup"):
        distillrank.compare(alone, verbose=False)

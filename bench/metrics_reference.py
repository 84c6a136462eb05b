#!/usr/bin/env python3
"""Expected values for the Rust ranking-metric tests, from independent tools.

Writes two committed files:

    tests/data/metrics_case.tsv       the test case: qid, doc, label, score
    tests/data/metrics_expected.json  per-query metric values

Binary-relevance metrics (NDCG@k, AP, RR, P@k; relevant = label > 0) come from
trec_eval through pytrec_eval (package pytrec-eval-terrier). Graded NDCG@k with
exponential gain 2^label - 1 comes from sklearn.metrics.ndcg_score.

Run from anywhere:  python bench/metrics_reference.py
Dependencies:       pip install numpy scikit-learn pytrec-eval-terrier
"""

import json
import os
from importlib.metadata import version

import numpy as np
import pytrec_eval
import sklearn
from sklearn.metrics import ndcg_score

SEED = 20261129
N_GROUPS = 40
MAX_GROUP_SIZE = 30
MAX_LABEL = 3
CUTOFFS = [1, 3, 5, 10]

# Groups with a forced shape (index into the 40 groups), so the edge cases are
# always present whatever the random draws give.
SINGLE_DOC_GROUP = 3  # exactly one document (and it is relevant)
ALL_ZERO_GROUPS = (7, 21)  # every label is 0: no relevant document
ALL_RELEVANT_GROUP = 14  # every label is > 0 (and at least 12 documents)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_DIR = os.path.join(ROOT, "tests", "data")
CASE_PATH = os.path.join(DATA_DIR, "metrics_case.tsv")
EXPECTED_PATH = os.path.join(DATA_DIR, "metrics_expected.json")


# --------------------------------------------------------------------------
# 1. Generate the test case
# --------------------------------------------------------------------------


def generate_groups(rng):
    """Return a list of (qid, labels, scores), qids "1".."40" in order."""
    groups = []
    for g in range(N_GROUPS):
        if g == SINGLE_DOC_GROUP:
            size = 1
            labels = np.array([2])
        elif g == ALL_RELEVANT_GROUP:
            # At least 12 documents, so that P@10 = 1 is exercised too.
            size = int(rng.integers(12, MAX_GROUP_SIZE + 1))
            labels = rng.integers(1, MAX_LABEL + 1, size=size)
        else:
            size = int(rng.integers(2, MAX_GROUP_SIZE + 1))
            if g in ALL_ZERO_GROUPS:
                labels = np.zeros(size, dtype=np.int64)
            else:
                labels = rng.integers(0, MAX_LABEL + 1, size=size)

        # Distinct scores, rounded to 6 decimals so the TSV holds them exactly
        # as used here. Re-draw the whole group if rounding produced a tie.
        while True:
            scores = np.round(rng.uniform(-1.0, 1.0, size=size), 6)
            if len(np.unique(scores)) == size:
                break

        groups.append((str(g + 1), labels.astype(int), scores))
    return groups


def write_case(groups):
    os.makedirs(DATA_DIR, exist_ok=True)
    with open(CASE_PATH, "w") as f:
        f.write("qid\tdoc\tlabel\tscore\n")
        for qid, labels, scores in groups:
            for i, (label, score) in enumerate(zip(labels, scores)):
                f.write(f"{qid}\td{i}\t{label}\t{score:.6f}\n")


# --------------------------------------------------------------------------
# 2. Binary metrics with trec_eval (pytrec_eval)
# --------------------------------------------------------------------------

# trec_eval measure name -> our key in the JSON.
TREC_KEYS = {f"ndcg_cut_{k}": f"ndcg@{k}" for k in CUTOFFS}
TREC_KEYS.update({"map": "ap", "recip_rank": "rr"})
TREC_KEYS.update({f"P_{k}": f"p@{k}" for k in CUTOFFS})


def trec_eval_binary(groups):
    """Per-query binary metrics, for exactly the queries trec_eval reports."""
    # Every document appears in the qrels (irrelevant ones with 0), with its
    # label made binary. With 0/1 labels, trec_eval's linear NDCG gain equals
    # the exponential gain 2^g - 1.
    qrels = {
        qid: {f"d{i}": int(label > 0) for i, label in enumerate(labels)}
        for qid, labels, _ in groups
    }
    run = {
        qid: {f"d{i}": float(score) for i, score in enumerate(scores)}
        for qid, _, scores in groups
    }
    cut = ",".join(str(k) for k in CUTOFFS)
    measures = {f"ndcg_cut.{cut}", "map", "recip_rank", f"P.{cut}"}
    results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)

    return {
        qid: {ours: float(values[theirs]) for theirs, ours in TREC_KEYS.items()}
        for qid, values in results.items()
    }


# --------------------------------------------------------------------------
# 3. Graded NDCG (gain 2^g - 1) with sklearn
# --------------------------------------------------------------------------


def sklearn_graded_ndcg(labels, scores):
    """NDCG@k for k in CUTOFFS, or None when the query has no relevant doc."""
    if not (labels > 0).any():
        return None  # ideal DCG is 0: NDCG undefined, so no expected value
    if len(labels) == 1:
        # sklearn refuses single-document queries. With one relevant document
        # the ranking is trivially ideal, so NDCG@k = 1 by definition.
        return {f"ndcg@{k}": 1.0 for k in CUTOFFS}
    # sklearn uses y_true directly as the gain, so pass 2^g - 1 to get the
    # exponential gain. Discount is 1/log2(rank + 1), as usual.
    gains = (2.0 ** labels - 1.0)[None, :]
    return {
        f"ndcg@{k}": float(ndcg_score(gains, scores[None, :], k=k)) for k in CUTOFFS
    }


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------


def main():
    rng = np.random.default_rng(SEED)
    groups = generate_groups(rng)
    write_case(groups)

    binary = trec_eval_binary(groups)

    queries = {}
    for qid, labels, scores in groups:
        entry = {"has_relevant": bool((labels > 0).any())}
        if qid in binary:  # omit the block if trec_eval said nothing
            entry["binary"] = binary[qid]
        graded = sklearn_graded_ndcg(labels, scores)
        if graded is not None:
            entry["graded_exp"] = graded
        queries[qid] = entry

    no_relevant = [qid for qid, q in queries.items() if not q["has_relevant"]]
    expected = {
        "generated_by": "bench/metrics_reference.py",
        "tools": {
            "numpy": np.__version__,
            "scikit-learn": sklearn.__version__,
            "pytrec-eval-terrier": version("pytrec-eval-terrier"),
        },
        "seed": SEED,
        "conventions": {
            "relevant": "binary block: a document is relevant iff label > 0",
            "gain": "binary block: gain 1 for relevant, 0 otherwise; "
            "graded_exp block: gain 2^label - 1; discount 1/log2(rank+1)",
            "ndcg": "NDCG@k = DCG@k / ideal DCG@k; with fewer than k documents "
            "both sums run over all documents",
            "p@k": "P@k divides by k, even when the group has fewer than k documents",
            "ap": "AP divides by the number of relevant documents in the group",
            "rr": "1 / rank of the first relevant document, 0 if none",
            "ties": "none in this case: scores are distinct within each group",
            "no_relevant": "queries without a relevant document: trec_eval "
            "still reports them (all binary metrics 0); graded_exp is omitted "
            "(NDCG undefined)",
            "single_doc": "a one-document relevant group has graded NDCG 1.0 by "
            "definition (sklearn refuses one-document queries)",
        },
        "queries_without_relevant": no_relevant,
        "queries": queries,
    }
    with open(EXPECTED_PATH, "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")

    print(f"wrote {CASE_PATH} and {EXPECTED_PATH}")
    print(f"{len(groups)} queries, {sum(len(l) for _, l, _ in groups)} documents; "
          f"trec_eval reported {len(binary)}; without relevant docs: {no_relevant}")


if __name__ == "__main__":
    main()

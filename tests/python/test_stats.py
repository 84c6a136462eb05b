"""The library's paired significance test (crate/stats.rs) against an independent implementation:
scipy's permutation test, paired t-test and percentile bootstrap on the same paired differences.

`distillrank.paired_test(a, b, seed=0, a_name="a", b_name="b", metric="ndcg@8")` takes each
method's metric per seed per test query (None where undefined) and returns the PairedTest fields
as a dict. The design: d_q = (mean over seeds of a) - (mean over seeds of b) on the queries
measured in every seed, then a sign-flip test and a bootstrap over queries.

Run by `cargo xtask python` with the package installed (numpy, scipy and pytest in the venv).
"""

import inspect
import math

import numpy as np
import pytest
import scipy.stats

import distillrank

PERMUTATIONS = 20_000  # the library's Monte Carlo draws above 16 queries
EXACT_MAX_QUERIES = 16
Z_POWER = 1.959963984540054 + 0.8416212335729143  # z_0.975 + z_0.80


def seeded(function, seed):
    """scipy's seeding argument: `rng` since scipy 1.15, `random_state` before."""
    parameters = inspect.signature(function).parameters
    key = "rng" if "rng" in parameters else "random_state"
    return {key: np.random.default_rng(seed)}


def make_case(n_queries, n_seeds, shift, n_missing, data_seed):
    """Per-query scores like NDCG@8: a query level shared by both methods and all seeds, noise
    per method and seed, a's shift. `n_missing` more queries are None everywhere (no relevant
    document), and one more is None in a single seed of a, so it is dropped too."""
    rng = np.random.default_rng(data_seed)
    total = n_queries + n_missing + 1
    level = rng.uniform(0.2, 0.8, size=total)
    a = np.clip(level + shift + rng.normal(0.0, 0.1, size=(n_seeds, total)), 0.0, 1.0)
    b = np.clip(level + rng.normal(0.0, 0.1, size=(n_seeds, total)), 0.0, 1.0)
    missing = rng.choice(total, size=n_missing + 1, replace=False)
    a[:, missing[:-1]] = np.nan
    b[:, missing[:-1]] = np.nan
    a[rng.integers(n_seeds), missing[-1]] = np.nan
    return a, b


def as_lists(x):
    """[seed][query] lists with None for NaN, as the package takes them."""
    return [[None if math.isnan(v) else float(v) for v in row] for row in x]


def differences(a, b):
    """The paired differences of the design: per-query seed means, queries measured everywhere."""
    kept = ~(np.isnan(a).any(axis=0) | np.isnan(b).any(axis=0))
    return a[:, kept].mean(axis=0) - b[:, kept].mean(axis=0)


# (name, queries measured, seeds, shift of a, queries without a relevant document, data seed,
#  what the t-test must agree on: "effect" both p < 0.05, "none" both p > 0.1, None no check)
CASES = [
    ("exact n=10, 1 seed", 10, 1, 0.15, 2, 1, "effect"),
    ("exact n=10, 5 seeds", 10, 5, 0.0, 3, 2, "none"),
    ("exact n=16, 5 seeds", 16, 5, 0.03, 2, 3, None),
    ("Monte Carlo n=17, 2 seeds", 17, 2, 0.03, 1, 4, None),
    ("Monte Carlo n=40, 1 seed", 40, 1, 0.03, 4, 5, None),
    ("Monte Carlo n=40, 5 seeds", 40, 5, 0.02, 4, 6, None),
    ("Monte Carlo n=300, 1 seed", 300, 1, 0.05, 20, 7, "effect"),
    ("Monte Carlo n=300, 5 seeds", 300, 5, 0.0, 20, 8, "none"),
]


@pytest.fixture(scope="module", params=CASES, ids=[c[0] for c in CASES])
def case(request):
    name, n, seeds, shift, n_missing, data_seed, ttest = request.param
    a, b = make_case(n, seeds, shift, n_missing, data_seed)
    d = differences(a, b)
    assert d.size == n
    result = distillrank.paired_test(as_lists(a), as_lists(b), seed=data_seed, a_name="pfd", b_name="gend")
    return dict(name=name, a=a, b=b, d=d, seeds=seeds, ttest=ttest, seed=data_seed, result=result)


def test_fields_and_mean(case):
    r, d = case["result"], case["d"]
    assert (r["a"], r["b"], r["metric"]) == ("pfd", "gend", "ndcg@8")
    assert r["design"] == "per-query mean over seeds, paired over queries"
    assert (r["n_queries"], r["n_seeds"]) == (d.size, case["seeds"])
    assert r["p_holm"] is None
    assert abs(r["mean_diff"] - d.mean()) <= 1e-12


def test_p_agrees_with_scipy_permutation_test(case):
    r, d = case["result"], case["d"]
    if d.size <= EXACT_MAX_QUERIES:
        # Both enumerate all 2^n sign patterns.
        exact = scipy.stats.permutation_test(
            (d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided", vectorized=True
        )
        assert abs(r["p"] - exact.pvalue) <= 1e-9, (r["p"], exact.pvalue)
    else:
        reference = scipy.stats.permutation_test(
            (d,),
            np.mean,
            permutation_type="samples",
            n_resamples=100_000,
            batch=10_000,
            alternative="two-sided",
            vectorized=True,
            **seeded(scipy.stats.permutation_test, case["seed"]),
        )
        p = r["p"]
        tolerance = 4 * math.sqrt(p * (1 - p) / PERMUTATIONS) + 0.005
        assert abs(p - reference.pvalue) <= tolerance, (p, reference.pvalue, tolerance)
        # The Monte Carlo estimator (1 + hits) / (1 + 20,000) is never 0.
        hits = p * (1 + PERMUTATIONS) - 1
        assert p > 0 and abs(hits - round(hits)) < 1e-6


def test_p_is_consistent_with_the_paired_t_test(case):
    r, a, b = case["result"], case["a"], case["b"]
    kept = ~(np.isnan(a).any(axis=0) | np.isnan(b).any(axis=0))
    t = scipy.stats.ttest_rel(a[:, kept].mean(axis=0), b[:, kept].mean(axis=0))
    if case["ttest"] == "effect":
        assert r["p"] < 0.05 and t.pvalue < 0.05, (r["p"], t.pvalue)
    elif case["ttest"] == "none":
        assert r["p"] > 0.1 and t.pvalue > 0.1, (r["p"], t.pvalue)
    else:
        # Not a clear case: the two tests still agree to a few hundredths here.
        assert abs(r["p"] - t.pvalue) < 0.1, (r["p"], t.pvalue)


def test_interval_agrees_with_scipy_percentile_bootstrap(case):
    r, d = case["result"], case["d"]
    reference = scipy.stats.bootstrap(
        (d,),
        np.mean,
        method="percentile",
        n_resamples=100_000,
        batch=10_000,
        vectorized=True,
        **seeded(scipy.stats.bootstrap, case["seed"]),
    ).confidence_interval
    lo, hi = r["ci95"]
    standard_error = d.std(ddof=1) / math.sqrt(d.size)
    tolerance = 0.15 * standard_error
    assert abs(lo - reference.low) <= tolerance, (lo, reference.low, tolerance)
    assert abs(hi - reference.high) <= tolerance, (hi, reference.high, tolerance)
    assert lo <= r["mean_diff"] <= hi


def test_min_detectable_is_the_normal_approximation(case):
    r, d = case["result"], case["d"]
    expected = Z_POWER * d.std(ddof=1) / math.sqrt(d.size)
    assert abs(r["min_detectable"] - expected) <= 1e-9


def test_swapping_the_methods_mirrors_the_result(case):
    r = case["result"]
    swapped = distillrank.paired_test(as_lists(case["b"]), as_lists(case["a"]), seed=case["seed"])
    assert swapped["mean_diff"] == -r["mean_diff"]
    assert swapped["ci95"] == [-r["ci95"][1], -r["ci95"][0]]
    assert swapped["p"] == r["p"]


def test_shapes_that_disagree_are_value_errors():
    a, b = make_case(10, 5, 0.0, 0, 9)
    with pytest.raises(ValueError, match="has 5 seeds"):
        distillrank.paired_test(as_lists(a), as_lists(b[:4]), a_name="pfd", b_name="gend")
    with pytest.raises(ValueError, match="queries"):
        distillrank.paired_test(as_lists(a), as_lists(b[:, 1:]))

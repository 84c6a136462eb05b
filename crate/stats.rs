//! Paired significance tests over test queries: is the gain of method A over method B real?
//!
//! A comparison trains every method on several seeds and keeps each test query's metric (NDCG@8,
//! `None` for a query without a relevant document). [`paired_test`] compares two methods as
//! information-retrieval evaluations do (trec_eval's companions, ranx's `compare`): the queries
//! are the sample, each query is measured under both methods, and the test asks whether the mean
//! per-query difference could be chance.
//!
//! # The design: per-query mean over seeds, paired over queries
//!
//! Every seed of a comparison shares one test split (the data seed fixes it): the same queries
//! in the same order. So for each query q the value of a method is its **mean over seeds**, and
//! the paired difference is
//!
//! d_q = mean_s a[s][q] - mean_s b[s][q].
//!
//! Averaging over seeds first takes the training noise out of each query's value; the queries
//! then are the independent units, as in a one-seed IR evaluation. A query where either method is
//! `None` in any seed is dropped (with NDCG this depends only on the labels, so it drops the same
//! queries for every method); `n_queries` counts the rest. If the seeds had *different* test
//! splits, the queries of one seed would not pair with those of another, and a stratified test
//! (permutations within each seed's split, the per-seed statistics combined) would be needed;
//! this tool never needs it.
//!
//! # What is computed from d_1..d_n
//!
//! * `mean_diff`: the mean of the d_q.
//! * `p`: the two-sided paired **randomization (sign-flip) test** (Fisher; recommended for IR by
//!   Smucker, Allan & Carterette, "A comparison of statistical significance tests for information
//!   retrieval evaluation", CIKM 2007). Under the null hypothesis the two methods are exchangeable
//!   on each query, so each d_q is equally likely to have either sign. The statistic is the mean
//!   of the d_q; p is the share of sign patterns whose |mean| is at least the observed |mean|.
//!   For n <= 16 all 2^n patterns are enumerated (the exact p, the identity pattern included);
//!   above, 20,000 seeded random patterns give p = (1 + hits) / (1 + 20,000), never 0 (Phipson &
//!   Smyth, "Permutation p-values should never be zero", 2010). "At least" allows a tolerance of
//!   1e-12 times the sum of |d_q| (far above the rounding error of any signed sum of the d_q), so
//!   that patterns equal to the observed one up to rounding count. All d_q zero gives p = 1.
//! * `ci95`: the **percentile bootstrap** interval (Efron & Tibshirani, "An Introduction to the
//!   Bootstrap", 1993): 10,000 seeded resamples of the n queries with replacement (each index
//!   from 32 random bits times n: a bias below n / 2^32), and the 2.5 % and 97.5 % quantiles of
//!   their means by linear interpolation between order statistics (numpy's default rule: position
//!   h = (B - 1) q), the upper end measured from the top so that swapping a and b mirrors the
//!   interval exactly.
//! * `min_detectable`: the smallest |difference| this run would detect with 80 % power in a
//!   two-sided test at alpha = 0.05, by the **normal approximation**
//!   (z_0.975 + z_0.80) sd(d) / sqrt(n), with sd the sample standard deviation (n - 1). It says
//!   what a run that "finds nothing" could have found (see Webber, Moffat & Zobel, "Statistical
//!   power in retrieval experimentation", CIKM 2008).
//! * [`holm`]: Holm's step-down correction across the tests of one table (Holm, "A simple
//!   sequentially rejective multiple test procedure", Scandinavian Journal of Statistics, 1979):
//!   with m p-values in increasing order, p_holm(i) = min(1, max_{j <= i} (m - j + 1) p(j)).
//!
//! With fewer than two queries nothing is tested: `ci95`, `p` and `min_detectable` are `None`
//! (`mean_diff` is the one difference when n = 1). With fewer than 6 queries no p can fall below
//! 0.05 (the exact test's smallest is 2 / 2^n), and differences without spread give the normal
//! approximation nothing: then `min_detectable` is `None` and `undetectable` says why.
//!
//! # Reproducibility
//!
//! The bootstrap and the sign patterns each draw from their own [`Rng::stream`] of the caller's
//! seed, and everything is IEEE arithmetic in a fixed order (+, -, *, /, sqrt, all correctly
//! rounded), so results are bit-identical on every platform, native and wasm32.

use crate::error::{Error, Result};
use crate::rng::Rng;

/// One paired comparison of two methods on one metric; the difference is a - b.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairedTest {
    /// The method names; the difference is a - b.
    pub a: String,
    pub b: String,
    /// The metric, e.g. "ndcg@8".
    pub metric: String,
    /// The pairing, [`DESIGN`].
    pub design: String,
    /// Mean over queries of (mean over seeds of a) - (mean over seeds of b); `None` without
    /// queries.
    pub mean_diff: Option<f64>,
    /// Percentile bootstrap 95 % interval of `mean_diff` over queries.
    pub ci95: Option<[f64; 2]>,
    /// Two-sided paired randomization (sign-flip) test.
    pub p: Option<f64>,
    /// `p` after Holm's correction across one table's tests ([`holm`]); `None` until then.
    pub p_holm: Option<f64>,
    /// Queries where both methods are measured in every seed.
    pub n_queries: usize,
    pub n_seeds: usize,
    /// The smallest |difference| detectable at 80 % power, alpha 0.05 two-sided (normal
    /// approximation from the spread of the paired differences); `None` where no size can be
    /// claimed, with the reason in `undetectable`.
    pub min_detectable: Option<f64>,
    /// Why no detectable difference is claimed: too few queries for any p below 0.05, or paired
    /// differences without spread (`None` when `min_detectable` is given, or nothing is tested).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undetectable: Option<String>,
}

/// The design every [`PairedTest`] names.
pub const DESIGN: &str = "per-query mean over seeds, paired over queries";

/// Bootstrap resamples.
pub const BOOTSTRAP_RESAMPLES: usize = 10_000;
/// Random sign patterns when the exact enumeration is too large.
pub const PERMUTATIONS: usize = 20_000;
/// Up to this many queries the randomization test enumerates all 2^n sign patterns.
pub const EXACT_MAX_QUERIES: usize = 16;
/// z_0.975 + z_0.80: the standard normal quantiles of a two-sided alpha = 0.05 test at 80 % power.
const Z_POWER: f64 = 1.959963984540054 + 0.8416212335729143;
/// The significance level of [`sentence`].
const ALPHA: f64 = 0.05;
/// Stream purposes ("boot", "sign"), so that the two draws are independent.
const BOOTSTRAP_STREAM: u64 = 0x626f_6f74;
const SIGNS_STREAM: u64 = 0x7369_676e;

/// Compares methods a and b, each given as [seed][query] (the same shape; `None` where the
/// metric is undefined). `seed` seeds the bootstrap and the random sign patterns.
///
/// Errors (`Error::Data`) when the shapes differ (seed counts, or query counts of any seed), when
/// there is no seed, or when a value is not finite.
pub fn paired_test(
    a_name: &str,
    b_name: &str,
    metric: &str,
    a: &[Vec<Option<f64>>],
    b: &[Vec<Option<f64>>],
    seed: u64,
) -> Result<PairedTest> {
    let d = paired_differences(a_name, b_name, a, b)?;
    let n = d.len();
    let mean_diff = (n > 0).then(|| d.iter().sum::<f64>() / n as f64);
    let (ci95, p) = if n >= 2 {
        (Some(bootstrap_ci(&d, seed)), Some(sign_flip_p(&d, seed)))
    } else {
        (None, None)
    };
    let (min_detectable, undetectable) = detectable_size(&d);
    Ok(PairedTest {
        a: a_name.to_string(),
        b: b_name.to_string(),
        metric: metric.to_string(),
        design: DESIGN.to_string(),
        mean_diff,
        ci95,
        p,
        p_holm: None,
        n_queries: n,
        n_seeds: a.len(),
        min_detectable,
        undetectable,
    })
}

/// The smallest |difference| the paired differences `d` could detect, or why none can be
/// claimed: with n queries the exact sign-flip test's smallest p is 2 / 2^n (the observed signs
/// and their mirror), so fewer than 6 queries can never reach p < 0.05; and differences without
/// spread (every query the same) give the normal approximation nothing to work from.
fn detectable_size(d: &[f64]) -> (Option<f64>, Option<String>) {
    let n = d.len();
    if n < 2 {
        return (None, None);
    }
    let smallest_p = smallest_p(n);
    if smallest_p >= ALPHA {
        return (
            None,
            Some(format!(
                "with {n} queries the exact test's smallest p is {}, not below {ALPHA}, so no difference is detectable",
                shown_p(smallest_p)
            )),
        );
    }
    let sd = sample_sd(d);
    // No spread beyond rounding: every query differs by the same amount.
    let scale = d.iter().map(|x| x.abs()).fold(0.0, f64::max);
    if sd <= 1e-12 * scale {
        return (
            None,
            Some("the paired differences have no spread (every query differs by the same amount), so no detectable size can be given".into()),
        );
    }
    (Some(Z_POWER * sd / (n as f64).sqrt()), None)
}

/// The smallest p the exact sign-flip test can give on `n` queries: 2 / 2^n (the observed signs
/// and their mirror).
fn smallest_p(n: usize) -> f64 {
    2.0 / 2f64.powi(n.min(1024) as i32)
}

/// A p-value in a sentence: up to 4 significant decimals ("0.0625", "0.25").
fn shown_p(p: f64) -> String {
    let text = format!("{p:.4}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Checks the shapes and values, and returns d_q for the queries measured for both in every seed.
fn paired_differences(
    a_name: &str,
    b_name: &str,
    a: &[Vec<Option<f64>>],
    b: &[Vec<Option<f64>>],
) -> Result<Vec<f64>> {
    let what = format!("paired test of {a_name} and {b_name}");
    if a.len() != b.len() {
        return Err(Error::Data(format!(
            "{what}: {a_name} has {} seeds, {b_name} has {}",
            a.len(),
            b.len()
        )));
    }
    let Some(first) = a.first() else {
        return Err(Error::Data(format!("{what}: no seed")));
    };
    let queries = first.len();
    for (name, side) in [(a_name, a), (b_name, b)] {
        for (s, values) in side.iter().enumerate() {
            if values.len() != queries {
                return Err(Error::Data(format!(
                    "{what}: seed {s} of {name} has {} queries, seed 0 of {a_name} has {queries}",
                    values.len()
                )));
            }
            if let Some((q, v)) = values
                .iter()
                .enumerate()
                .find_map(|(q, v)| v.filter(|v| !v.is_finite()).map(|v| (q, v)))
            {
                return Err(Error::Data(format!(
                    "{what}: seed {s}, query {q} of {name} is {v}, not a finite value"
                )));
            }
        }
    }
    let seeds = a.len() as f64;
    let seed_mean = |side: &[Vec<Option<f64>>], q: usize| -> Option<f64> {
        let mut sum = 0.0;
        for values in side {
            sum += values[q]?;
        }
        Some(sum / seeds)
    };
    let d: Vec<(usize, f64)> = (0..queries)
        .filter_map(|q| Some((q, seed_mean(a, q)? - seed_mean(b, q)?)))
        .collect();
    // Finite values whose means, differences or sums leave f64's range would give a p without
    // a mean: the test needs them all finite.
    let sum: f64 = d.iter().map(|(_, x)| x).sum();
    let squares: f64 = d.iter().map(|(_, x)| x * x).sum();
    if let Some(&(q, _)) = d.iter().find(|(_, x)| !x.is_finite()) {
        return Err(Error::Data(format!(
            "{what}: at query {q} the seeds' mean of {a_name} less that of {b_name} is past f64's range: the values are too large to compare; give them on a smaller scale"
        )));
    }
    if !sum.is_finite() || !squares.is_finite() {
        return Err(Error::Data(format!(
            "{what}: the paired differences' sum or sum of squares is past f64's range: the values are too large to test; give them on a smaller scale"
        )));
    }
    Ok(d.into_iter().map(|(_, x)| x).collect())
}

/// Running sums of the additions: independent lanes (lane = q mod [`LANES`]) let the processor
/// overlap them; the order stays fixed, so the result is the same everywhere.
const LANES: usize = 8;

/// The lanes added pairwise, in a fixed order.
fn lanes_total(lanes: &[f64; LANES]) -> f64 {
    ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
        + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]))
}

/// Signed sums of the d_q by groups of 4 queries (the last group may be shorter): entry 16 g + s
/// is the sum, in query order, of group g's d_q with the i-th negated where bit i of s is set.
/// A sign pattern then costs one look-up per 4 queries instead of 4 additions, and the table is
/// built once per test.
fn group_sums(d: &[f64]) -> Vec<f64> {
    let mut table = Vec::with_capacity(d.len().div_ceil(4) * 16);
    for group in d.chunks(4) {
        for signs in 0..16u32 {
            let mut sum = 0.0;
            for (i, &x) in group.iter().enumerate() {
                sum += if (signs >> i) & 1 == 1 { -x } else { x };
            }
            table.push(sum);
        }
    }
    table
}

/// The sum of the d_q, the q-th negated where bit q of `signs` (64 to a word, low bit first) is
/// set, from [`group_sums`]. Negating every d_q (the complement pattern) negates it exactly.
fn signed_sum(table: &[f64], signs: &[u64]) -> f64 {
    let mut lanes = [0.0f64; LANES];
    // A word holds the signs of 16 groups; 16 is a multiple of LANES, so group g adds into lane
    // g mod LANES.
    for (&word, groups) in signs.iter().zip(table.chunks(16 * 16)) {
        let mut bits = word;
        for (g, entries) in groups.chunks_exact(16).enumerate() {
            lanes[g % LANES] += entries[(bits & 15) as usize];
            bits >>= 4;
        }
    }
    lanes_total(&lanes)
}

/// The two-sided sign-flip p-value of the mean of `d` (at least 2 values).
fn sign_flip_p(d: &[f64], seed: u64) -> f64 {
    if d.iter().all(|&x| x == 0.0) {
        return 1.0;
    }
    let table = group_sums(d);
    let mut signs = vec![0u64; d.len().div_ceil(64)];
    // The identity pattern (all zero bits) gives the observed sum, by the same additions as every
    // other pattern.
    let observed = signed_sum(&table, &signs).abs();
    let scale: f64 = d.iter().map(|x| x.abs()).sum();
    let threshold = observed - 1e-12 * scale;
    if d.len() <= EXACT_MAX_QUERIES {
        let patterns = 1u64 << d.len();
        let hits = (0..patterns)
            .filter(|&pattern| {
                signs[0] = pattern;
                signed_sum(&table, &signs).abs() >= threshold
            })
            .count();
        hits as f64 / patterns as f64
    } else {
        let mut rng = Rng::stream(seed, SIGNS_STREAM);
        let mut hits = 0usize;
        for _ in 0..PERMUTATIONS {
            for word in signs.iter_mut() {
                *word = rng.next_u64();
            }
            if signed_sum(&table, &signs).abs() >= threshold {
                hits += 1;
            }
        }
        (1 + hits) as f64 / (1 + PERMUTATIONS) as f64
    }
}

/// The percentile bootstrap 95 % interval of the mean of `d` (at least 2 values).
fn bootstrap_ci(d: &[f64], seed: u64) -> [f64; 2] {
    let n = d.len();
    let mut rng = Rng::stream(seed, BOOTSTRAP_STREAM);
    // A uniform index in 0..n from 32 random bits: multiply by n and keep the high word (integer
    // arithmetic; bias below n / 2^32, 2e-6 for 10,000 queries). Each u64 gives two. (n fits in
    // 32 bits: 2^32 queries would take 64 GiB per seed.)
    let index = |bits: u64| (((bits & 0xffff_ffff) * n as u64) >> 32) as usize;
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            let mut lanes = [0.0f64; LANES];
            // Queries 2k and 2k + 1 of the resample from one u64; LANES is even, so they add into
            // lanes 2k and 2k + 1 mod LANES.
            for pair in 0..n / 2 {
                let bits = rng.next_u64();
                lanes[2 * pair % LANES] += d[index(bits)];
                lanes[(2 * pair + 1) % LANES] += d[index(bits >> 32)];
            }
            if n % 2 == 1 {
                lanes[(n - 1) % LANES] += d[index(rng.next_u64())];
            }
            lanes_total(&lanes) / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    // Linear interpolation at position h = (B - 1) 0.025 from the bottom, and at the same distance
    // from the top for the upper end ((B - 1) 0.975 from the bottom).
    let h = (BOOTSTRAP_RESAMPLES - 1) as f64 * 0.025;
    let k = h as usize;
    let f = h - k as f64;
    let top = BOOTSTRAP_RESAMPLES - 1;
    [
        means[k] + f * (means[k + 1] - means[k]),
        means[top - k] - f * (means[top - k] - means[top - k - 1]),
    ]
}

/// The sample standard deviation (denominator n - 1) of at least 2 values, two-pass.
fn sample_sd(d: &[f64]) -> f64 {
    let n = d.len() as f64;
    let mean = d.iter().sum::<f64>() / n;
    let squares: f64 = d.iter().map(|x| (x - mean) * (x - mean)).sum();
    (squares / (n - 1.0)).sqrt()
}

/// Holm's step-down correction of the p-values of one table: sets every test's `p_holm`. Tests
/// without a p-value keep `p_holm = None` and do not count among the m tests.
pub fn holm(tests: &mut [PairedTest]) {
    let mut order: Vec<(usize, f64)> = tests
        .iter()
        .enumerate()
        .filter_map(|(i, t)| t.p.map(|p| (i, p)))
        .collect();
    // Stable: tied p-values keep table order (the running maximum gives ties the same value).
    order.sort_by(|x, y| x.1.total_cmp(&y.1));
    let m = order.len();
    for t in tests.iter_mut() {
        t.p_holm = None;
    }
    let mut running = 0.0f64;
    for (rank, &(i, p)) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p).min(1.0));
        tests[i].p_holm = Some(running);
    }
    // Every Holm-adjusted p is at least m times the smallest p of the family's first step, so a
    // test on n queries can reach p < 0.05 only if m times the smallest p on n queries is below
    // it: otherwise no difference is detectable, whatever its size.
    for &(i, _) in &order {
        let t = &mut tests[i];
        let floor = (m as f64 * smallest_p(t.n_queries)).min(1.0);
        if m > 1 && floor >= ALPHA && t.min_detectable.is_some() {
            t.min_detectable = None;
            t.undetectable = Some(format!(
                "with {} queries and {m} tests under Holm's correction the smallest p this test can reach is {}, not below {ALPHA}, so no difference is detectable",
                t.n_queries,
                shown_p(floor)
            ));
        }
    }
}

/// One sentence for reports: the difference, its interval, p (Holm's when [`holm`] has run) and
/// the size of the run, e.g. "pfd − gend: +0.0310 (95% CI +0.0120..+0.0500), p = 0.002 (Holm), on
/// 500 queries × 5 seeds". When p >= 0.05, or the run is too small to test, it says plainly that
/// the run cannot tell the two apart, with the smallest difference it could have detected.
pub fn sentence(t: &PairedTest) -> String {
    // NDCG@8 on y is the figure every table shows first; another metric is named.
    let head = match t.metric.as_str() {
        "ndcg@8" | "" => format!("{} − {}", t.a, t.b),
        metric => format!("{} − {} on {}", t.a, t.b, metric_words(metric)),
    };
    let size = format!(
        "{} × {}",
        plural(t.n_queries, "query", "queries"),
        plural(t.n_seeds, "seed", "seeds")
    );
    let diff = t.mean_diff.map_or("n/a".to_string(), signed);
    let (Some([lo, hi]), Some(p)) = (t.ci95, t.p) else {
        return format!(
            "{head}: {diff} on {size}: the run is too small to test (a paired test needs at \
             least 2 queries measured for both), so it cannot tell them apart"
        );
    };
    let (p_shown, label) = match t.p_holm {
        Some(p_holm) => (p_holm, " (Holm)"),
        None => (p, ""),
    };
    let mut out = format!(
        "{head}: {diff} (95% CI {}..{}), p {}{label}, on {size}",
        signed(lo),
        signed(hi),
        p_value(p_shown)
    );
    if p_shown >= ALPHA {
        out.push_str(": this run cannot tell them apart");
        if let Some(detectable) = t.min_detectable {
            out.push_str(&format!(
                "; it could detect a difference of ±{detectable:.4} or more"
            ));
        } else if let Some(why) = &t.undetectable {
            out.push_str(&format!("; {why}"));
        }
    }
    out
}

/// The test's answer in plain words, with the methods named `a` and `b` (their labels): "PFD
/// beats GenD (p < 0.001)", "PFD does worse than GenD (p = 0.012)", "PFD against no
/// distillation: this run cannot tell them apart (it could detect ±0.0090)", or that the run is
/// too small to tell, with the reason. Holm's p where the table corrected it. A reader's first
/// line: what the test separates, and nothing it does not.
pub fn verdict(t: &PairedTest, a: &str, b: &str) -> String {
    let (Some(p), Some(diff)) = (t.p_holm.or(t.p), t.mean_diff) else {
        return format!("{a} against {b}: this run is too small to test (a paired test needs at least 2 queries measured for both)");
    };
    if p < ALPHA && diff != 0.0 {
        let word = if diff > 0.0 {
            "beats"
        } else {
            "does worse than"
        };
        return format!("{a} {word} {b} (p {})", p_value(p));
    }
    match (t.min_detectable, &t.undetectable) {
        (Some(size), _) => {
            format!("{a} against {b}: this run cannot tell them apart (it could detect ±{size:.4})")
        }
        (None, Some(why)) => format!("{a} against {b}: this run is too small to tell ({why})"),
        (None, None) => format!("{a} against {b}: this run cannot tell them apart"),
    }
}

/// A metric's key (`graded_ndcg@8`, `ndcg@5`) in words ("graded NDCG@8", "NDCG@5").
pub fn metric_words(metric: &str) -> String {
    metric
        .replace("graded_", "graded ")
        .replace("ndcg@", "NDCG@")
}

/// Whether the test separates the two: its (Holm-corrected) p is below 0.05.
pub fn separates(t: &PairedTest) -> bool {
    t.p_holm.or(t.p).is_some_and(|p| p < ALPHA) && t.mean_diff.is_some_and(|d| d != 0.0)
}

/// "1 query", "500 queries".
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A difference with its sign, 4 decimals, the minus sign typeset (−); "0.0000" when it rounds
/// to zero.
fn signed(x: f64) -> String {
    let text = format!("{:.4}", x.abs());
    if text.bytes().all(|c| c == b'0' || c == b'.') {
        text
    } else if x < 0.0 {
        format!("−{text}")
    } else {
        format!("+{text}")
    }
}

/// "= 0.71" (2 decimals from 0.1), "= 0.034" (3 decimals below), "< 0.001".
fn p_value(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_string()
    } else if p < 0.1 {
        format!("= {p:.3}")
    } else {
        format!("= {p:.2}")
    }
}

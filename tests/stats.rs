//! Paired significance tests: exact p-values on hand-computable cases, the symmetry of swapping
//! the methods, dropped queries, shape errors, Holm's correction, determinism, the Monte Carlo p
//! against the exact one and against the normal approximation, and the report sentence.

use distillrank::error::Error;
use distillrank::rng::Rng;
use distillrank::stats::{holm, paired_test, sentence, PairedTest, DESIGN};

/// One seed of measured queries.
fn one_seed(values: &[f64]) -> Vec<Vec<Option<f64>>> {
    vec![values.iter().map(|&v| Some(v)).collect()]
}

/// [seeds][queries] scores: a per-query level (the query's difficulty, the same for every method
/// and seed), uniform noise drawn from `noise_seed`, plus `shift`.
fn scores(seeds: usize, queries: usize, shift: f64, noise_seed: u64) -> Vec<Vec<Option<f64>>> {
    let mut level = Rng::stream(0, 1);
    let levels: Vec<f64> = (0..queries).map(|_| level.uniform()).collect();
    let mut noise = Rng::stream(noise_seed, 2);
    (0..seeds)
        .map(|_| {
            levels
                .iter()
                .map(|&l| Some(0.5 * l + 0.2 * noise.uniform() + shift))
                .collect()
        })
        .collect()
}

fn test(a: &[Vec<Option<f64>>], b: &[Vec<Option<f64>>], seed: u64) -> PairedTest {
    paired_test("a", "b", "ndcg@8", a, b, seed).unwrap()
}

#[test]
fn three_positive_differences_give_the_exact_p_of_two_in_eight() {
    let t = test(
        &one_seed(&[0.5, 0.75, 1.0]),
        &one_seed(&[0.25, 0.25, 0.5]),
        0,
    );
    // d = (0.25, 0.5, 0.5): only the all-plus and all-minus patterns reach |sum| = 1.25.
    assert_eq!(t.p, Some(0.25));
    assert_eq!(t.mean_diff, Some(1.25 / 3.0));
    assert_eq!((t.n_queries, t.n_seeds), (3, 1));
    assert_eq!(t.design, DESIGN);
    assert_eq!(t.p_holm, None);
    let [lo, hi] = t.ci95.unwrap();
    assert!(0.25 <= lo && lo <= hi && hi <= 0.5, "{lo}..{hi}");
}

#[test]
fn exact_p_counts_every_pattern_at_least_as_extreme() {
    // d = (0.25, 0.5, 0.75, -0.125), sum 1.375. Patterns with |sum| >= 1.375: the observed one,
    // the one with -0.125 flipped (1.625), and their negations: 4 of 16.
    let t = test(
        &one_seed(&[0.25, 0.5, 0.75, -0.125]),
        &one_seed(&[0.0; 4]),
        0,
    );
    assert_eq!(t.p, Some(0.25));
    // Two equal differences: both patterns of the same sign, 2 of 4.
    let t = test(&one_seed(&[0.5, 0.5]), &one_seed(&[0.25, 0.25]), 0);
    assert_eq!(t.p, Some(0.5));
    // Differences that cancel: every pattern is at least as extreme as 0.
    let t = test(&one_seed(&[0.5, 0.25]), &one_seed(&[0.25, 0.5]), 0);
    assert_eq!(t.p, Some(1.0));
    assert_eq!(t.mean_diff, Some(0.0));
    // Sixteen positive differences, still exact: 2 / 2^16.
    let t = test(&one_seed(&[0.75; 16]), &one_seed(&[0.5; 16]), 0);
    assert_eq!(t.p, Some(2.0 / 65536.0));
}

#[test]
fn zero_differences_give_p_one_and_a_zero_interval() {
    let a = scores(3, 40, 0.0, 7);
    let t = test(&a, &a, 3);
    assert_eq!(t.p, Some(1.0));
    assert_eq!(t.mean_diff, Some(0.0));
    assert_eq!(t.ci95, Some([0.0, 0.0]));
    // Differences without spread claim no detectable size (not "±0.0000"), and say why.
    assert_eq!(t.min_detectable, None);
    assert!(
        t.undetectable.as_deref().unwrap().contains("no spread"),
        "{t:?}"
    );
    let small = test(&one_seed(&[0.5; 5]), &one_seed(&[0.5; 5]), 3);
    assert_eq!(small.p, Some(1.0));
}

#[test]
fn swapping_the_methods_negates_the_difference_and_keeps_p() {
    for (seeds, queries) in [(1, 10), (5, 12), (3, 40), (2, 301)] {
        let a = scores(seeds, queries, 0.02, 11);
        let b = scores(seeds, queries, 0.0, 12);
        let ab = test(&a, &b, 5);
        let ba = test(&b, &a, 5);
        assert_eq!(ba.mean_diff, ab.mean_diff.map(|m| -m));
        let [lo, hi] = ab.ci95.unwrap();
        assert_eq!(ba.ci95, Some([-hi, -lo]));
        assert_eq!(ba.p, ab.p);
        assert_eq!(ba.min_detectable, ab.min_detectable);
        assert_eq!((ba.n_queries, ba.n_seeds), (queries, seeds));
    }
}

#[test]
fn queries_unmeasured_in_any_seed_are_dropped() {
    let mut a = scores(3, 30, 0.05, 21);
    let mut b = scores(3, 30, 0.0, 22);
    let full = test(&a, &b, 9);
    a[1][4] = None;
    b[0][17] = None;
    b[2][17] = None;
    a[0][29] = None;
    let t = test(&a, &b, 9);
    assert_eq!(t.n_queries, 27);
    // The same as the test on the 27 remaining queries.
    let keep = |side: &[Vec<Option<f64>>]| -> Vec<Vec<Option<f64>>> {
        side.iter()
            .map(|s| {
                s.iter()
                    .enumerate()
                    .filter(|(q, _)| ![4, 17, 29].contains(q))
                    .map(|(_, &v)| v)
                    .collect()
            })
            .collect()
    };
    assert_eq!(t, test(&keep(&a), &keep(&b), 9));
    assert_ne!(t.mean_diff, full.mean_diff);
}

#[test]
fn mean_and_detectable_difference_follow_their_formulas() {
    // Two seeds: per-query means of a are (0.5, 0.75, 0.25, 1.0), of b all 0.25.
    let a = vec![
        vec![Some(0.25), Some(0.5), Some(0.25), Some(1.0)],
        vec![Some(0.75), Some(1.0), Some(0.25), Some(1.0)],
    ];
    let b = vec![vec![Some(0.25); 4], vec![Some(0.25); 4]];
    let t = test(&a, &b, 0);
    let d = [0.25, 0.5, 0.0, 0.75];
    let mean = d.iter().sum::<f64>() / 4.0;
    assert_eq!(t.mean_diff, Some(mean));
    // d has one zero: its sign does not matter, so p is that of (0.25, 0.5, 0.75): 2 of 8. With
    // four queries no p can fall below 0.05: no detectable size is claimed.
    assert_eq!(t.p, Some(0.25));
    assert_eq!(t.min_detectable, None);
    // Six queries, (0.25, 0.5, 0.0, 0.75, 0.5, 0.25): the normal approximation's size.
    let mut a = a;
    for (seed, extra) in a.iter_mut().zip([[0.75, 0.5], [0.75, 0.5]]) {
        seed.extend(extra.map(Some));
    }
    let b = vec![vec![Some(0.25); 6], vec![Some(0.25); 6]];
    let t = test(&a, &b, 0);
    let d = [0.25, 0.5, 0.0, 0.75, 0.5, 0.25];
    let mean = d.iter().sum::<f64>() / 6.0;
    let sd = (d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 5.0).sqrt();
    let expected = (1.959963984540054 + 0.8416212335729143) * sd / 6f64.sqrt();
    assert!((t.min_detectable.unwrap() - expected).abs() < 1e-15);
}

#[test]
fn fewer_than_two_queries_are_not_tested() {
    let one = test(&one_seed(&[0.75]), &one_seed(&[0.5]), 0);
    assert_eq!(one.mean_diff, Some(0.25));
    assert_eq!((one.ci95, one.p, one.min_detectable), (None, None, None));
    assert_eq!(one.n_queries, 1);
    let none = test(&[vec![None, Some(0.5)]], &[vec![Some(0.5), None]], 0);
    assert_eq!(none.n_queries, 0);
    assert_eq!(none.mean_diff, None);
    assert_eq!((none.ci95, none.p, none.min_detectable), (None, None, None));
}

fn data_error(a: &[Vec<Option<f64>>], b: &[Vec<Option<f64>>]) -> String {
    match paired_test("pfd", "gend", "ndcg@8", a, b, 0) {
        Err(Error::Data(message)) => message,
        other => panic!("expected a data error, got {other:?}"),
    }
}

#[test]
fn shapes_that_disagree_and_non_finite_values_are_errors() {
    let five = scores(5, 10, 0.0, 1);
    let four = scores(4, 10, 0.0, 1);
    let message = data_error(&five, &four);
    assert!(message.contains("pfd has 5 seeds, gend has 4"), "{message}");

    let mut short = scores(5, 10, 0.0, 1);
    short[3].pop();
    let message = data_error(&five, &short);
    assert!(
        message.contains("seed 3 of gend has 9 queries, seed 0 of pfd has 10"),
        "{message}"
    );
    let message = data_error(&short, &five);
    assert!(message.contains("seed 3 of pfd has 9 queries"), "{message}");

    let message = data_error(&[], &[]);
    assert!(message.contains("no seed"), "{message}");

    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut b = scores(5, 10, 0.0, 2);
        b[2][6] = Some(bad);
        let message = data_error(&five, &b);
        assert!(
            message.contains("seed 2, query 6 of gend") && message.contains("not a finite value"),
            "{message}"
        );
    }
}

fn with_p(p: Option<f64>) -> PairedTest {
    PairedTest {
        a: "a".into(),
        b: "b".into(),
        metric: "ndcg@8".into(),
        design: DESIGN.into(),
        mean_diff: Some(0.01),
        ci95: Some([0.0, 0.02]),
        p,
        p_holm: None,
        n_queries: 100,
        n_seeds: 5,
        min_detectable: Some(0.02),
        undetectable: None,
    }
}

fn holm_of(ps: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut tests: Vec<PairedTest> = ps.iter().map(|&p| with_p(p)).collect();
    holm(&mut tests);
    tests.iter().map(|t| t.p_holm).collect()
}

fn assert_close(got: &[Option<f64>], expected: &[Option<f64>]) {
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(expected) {
        match (g, e) {
            (Some(g), Some(e)) => assert!((g - e).abs() < 1e-15, "{got:?} vs {expected:?}"),
            (g, e) => assert_eq!(g, e, "{got:?} vs {expected:?}"),
        }
    }
}

#[test]
fn holm_steps_down_and_stays_monotone() {
    // Sorted: 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, 0.04 * 1 = 0.04 -> raised to 0.06.
    assert_close(
        &holm_of(&[Some(0.01), Some(0.04), Some(0.03)]),
        &[Some(0.03), Some(0.06), Some(0.06)],
    );
    // Missing p-values are not counted: m = 2.
    assert_close(
        &holm_of(&[Some(0.01), None, Some(0.04)]),
        &[Some(0.02), None, Some(0.04)],
    );
    // Capped at 1; ties get the same value.
    assert_close(
        &holm_of(&[Some(0.6), Some(0.7), Some(0.02), Some(0.02)]),
        &[Some(1.0), Some(1.0), Some(0.08), Some(0.08)],
    );
    assert_close(&holm_of(&[Some(0.2)]), &[Some(0.2)]);
    assert_close(&holm_of(&[]), &[]);
}

#[test]
fn results_are_deterministic_in_the_seed() {
    let a = scores(5, 200, 0.01, 31);
    let b = scores(5, 200, 0.0, 32);
    let first = test(&a, &b, 42);
    assert_eq!(first, test(&a, &b, 42));
    let other = test(&a, &b, 43);
    assert_ne!(first.ci95, other.ci95);
    assert_eq!(first.mean_diff, other.mean_diff);
    assert_eq!(first.min_detectable, other.min_detectable);
    // The Monte Carlo p has the form (1 + hits) / 20,001.
    let hits = first.p.unwrap() * 20_001.0 - 1.0;
    assert!((hits - hits.round()).abs() < 1e-6, "{:?}", first.p);
    // Serializes and reads back unchanged.
    let json = serde_json::to_string(&first).unwrap();
    assert_eq!(serde_json::from_str::<PairedTest>(&json).unwrap(), first);
}

/// Within 4 standard errors of a Monte Carlo proportion over 20,000 draws, plus the +1 of the
/// estimator.
fn within_monte_carlo_error(p: f64, exact: f64) -> bool {
    (p - exact).abs() <= 4.0 * (exact * (1.0 - exact) / 20_000.0).sqrt() + 1.0 / 20_001.0
}

#[test]
fn monte_carlo_p_matches_the_exact_p() {
    // A 17th query with a zero difference leaves the null distribution of the sum unchanged, so
    // the Monte Carlo p on 17 queries estimates the exact p on the first 16.
    for data_seed in [51, 52, 53] {
        let a = scores(2, 16, 0.01, data_seed);
        let b = scores(2, 16, 0.0, data_seed + 100);
        let exact = test(&a, &b, 1).p.unwrap();
        let extend = |side: &[Vec<Option<f64>>]| -> Vec<Vec<Option<f64>>> {
            side.iter()
                .map(|s| s.iter().copied().chain([Some(0.5)]).collect())
                .collect()
        };
        let monte_carlo = test(&extend(&a), &extend(&b), 1).p.unwrap();
        assert!(
            (0.01..0.99).contains(&exact) && within_monte_carlo_error(monte_carlo, exact),
            "exact {exact}, Monte Carlo {monte_carlo}"
        );
    }
}

#[test]
fn monte_carlo_p_matches_the_normal_approximation_on_many_queries() {
    // Under sign flips the sum of the d_q has variance sum(d_q^2) and is nearly normal for many
    // queries: p ~ erfc(|sum| / sqrt(2 sum(d_q^2))).
    for (shift, data_seed) in [(0.002, 61), (0.004, 62), (0.0, 63)] {
        let a = scores(1, 2000, shift, data_seed);
        let b = scores(1, 2000, 0.0, data_seed + 100);
        let d: Vec<f64> = a[0]
            .iter()
            .zip(&b[0])
            .map(|(x, y)| x.unwrap() - y.unwrap())
            .collect();
        let sum: f64 = d.iter().sum();
        let squares: f64 = d.iter().map(|x| x * x).sum();
        let normal = libm::erfc(sum.abs() / (2.0 * squares).sqrt());
        let p = test(&a, &b, 2).p.unwrap();
        assert!(
            (p - normal).abs() <= 4.0 * (normal * (1.0 - normal) / 20_000.0).sqrt() + 0.005,
            "Monte Carlo {p}, normal approximation {normal}"
        );
    }
}

#[test]
fn the_bootstrap_interval_has_the_width_of_the_normal_interval() {
    let a = scores(3, 300, 0.02, 71);
    let b = scores(3, 300, 0.0, 72);
    let t = test(&a, &b, 4);
    let [lo, hi] = t.ci95.unwrap();
    let mean = t.mean_diff.unwrap();
    assert!(lo < mean && mean < hi);
    // min_detectable = 2.80 sd / sqrt(n); the normal interval is 2 * 1.96 sd / sqrt(n) wide.
    let normal_width = 2.0 * 1.959963984540054 / (1.959963984540054 + 0.8416212335729143)
        * t.min_detectable.unwrap();
    assert!(
        ((hi - lo) / normal_width - 1.0).abs() < 0.1,
        "{lo}..{hi} vs width {normal_width}"
    );
    assert!(t.p.unwrap() < 0.05);
}

#[test]
fn the_sentence_states_the_result_or_that_the_run_cannot_separate_them() {
    let mut t = PairedTest {
        a: "pfd".into(),
        b: "gend".into(),
        metric: "ndcg@8".into(),
        design: DESIGN.into(),
        mean_diff: Some(0.031),
        ci95: Some([0.012, 0.05]),
        p: Some(0.0007),
        p_holm: Some(0.002),
        n_queries: 500,
        n_seeds: 5,
        min_detectable: Some(0.011),
        undetectable: None,
    };
    assert_eq!(
        sentence(&t),
        "pfd − gend: +0.0310 (95% CI +0.0120..+0.0500), p = 0.002 (Holm), on 500 queries × 5 seeds"
    );
    t.p_holm = None;
    assert_eq!(
        sentence(&t),
        "pfd − gend: +0.0310 (95% CI +0.0120..+0.0500), p < 0.001, on 500 queries × 5 seeds"
    );

    let t = PairedTest {
        mean_diff: Some(0.0021),
        ci95: Some([-0.01, 0.014]),
        p: Some(0.3),
        p_holm: Some(0.71),
        n_queries: 52,
        min_detectable: Some(0.035),
        ..t
    };
    assert_eq!(
        sentence(&t),
        "pfd − gend: +0.0021 (95% CI −0.0100..+0.0140), p = 0.71 (Holm), on 52 queries × 5 \
         seeds: this run cannot tell them apart; it could detect a difference of ±0.0350 or more"
    );

    // Significant before the correction, not after.
    let t = PairedTest {
        p: Some(0.02),
        p_holm: Some(0.06),
        ..t
    };
    assert!(sentence(&t).contains("p = 0.060 (Holm), on 52 queries × 5 seeds: this run cannot"));

    // Too small to test.
    let one = paired_test(
        "pfd",
        "gend",
        "ndcg@8",
        &one_seed(&[0.5]),
        &one_seed(&[0.75]),
        0,
    )
    .unwrap();
    assert_eq!(
        sentence(&one),
        "pfd − gend: −0.2500 on 1 query × 1 seed: the run is too small to test (a paired test \
         needs at least 2 queries measured for both), so it cannot tell them apart"
    );
    let none = paired_test("pfd", "gend", "ndcg@8", &[vec![None]], &[vec![None]], 0).unwrap();
    assert!(
        sentence(&none).starts_with("pfd − gend: n/a on 0 queries × 1 seed: the run is too small")
    );

    // A real run: the sentence of a computed, Holm-corrected test.
    let mut tests = vec![
        test(&scores(5, 60, 0.1, 81), &scores(5, 60, 0.0, 82), 0),
        test(&scores(5, 60, 0.0, 83), &scores(5, 60, 0.0, 84), 0),
    ];
    holm(&mut tests);
    assert!(
        !sentence(&tests[0]).contains("cannot"),
        "{}",
        sentence(&tests[0])
    );
    assert!(sentence(&tests[0]).ends_with("(Holm), on 60 queries × 5 seeds"));
    assert!(sentence(&tests[1]).contains("this run cannot tell them apart; it could detect"));
}

/// No detectable size is claimed where none can be: with fewer than 6 queries the exact test
/// cannot reach p < 0.05 (its smallest p is 2 / 2^n), and differences without spread give the
/// normal approximation nothing; the sentence says why instead of "±0.0000".
#[test]
fn class_unmeasurable_figures_no_detectable_size_without_the_queries_or_the_spread_for_it() {
    let one_seed = |v: &[f64]| vec![v.iter().map(|&x| Some(x)).collect::<Vec<_>>()];
    // Four queries: the smallest p is 2/16 = 0.125.
    let a = one_seed(&[0.9, 0.8, 0.7, 0.95]);
    let b = one_seed(&[0.1, 0.2, 0.3, 0.05]);
    let t = paired_test("pfd", "gend", "ndcg@8", &a, &b, 1).unwrap();
    assert!(t.p.unwrap() >= 0.125 - 1e-12, "{t:?}");
    assert_eq!(t.min_detectable, None);
    let why = t.undetectable.as_deref().unwrap();
    assert!(
        why.contains("with 4 queries") && why.contains("0.125"),
        "{why}"
    );
    assert!(sentence(&t).ends_with(why), "{}", sentence(&t));
    assert!(!sentence(&t).contains("±"), "{}", sentence(&t));
    // Three queries: p can never be 0; at least 2/8.
    let t = paired_test(
        "a",
        "b",
        "ndcg@8",
        &one_seed(&[1.0, 1.0, 1.0]),
        &one_seed(&[0.0, 0.5, 0.2]),
        1,
    )
    .unwrap();
    assert!(t.p.unwrap() >= 0.25 - 1e-12, "{t:?}");
    // Forty queries each differing by the same amount: no spread, no size.
    let a = one_seed(&vec![0.6; 40]);
    let b = one_seed(&vec![0.5; 40]);
    let t = paired_test("a", "b", "ndcg@8", &a, &b, 1).unwrap();
    assert_eq!(t.min_detectable, None);
    assert!(
        t.undetectable.as_deref().unwrap().contains("no spread"),
        "{t:?}"
    );
    // Enough queries with spread: a size, and no reason.
    let a = one_seed(
        &(0..40)
            .map(|q| 0.5 + 0.01 * (q % 7) as f64)
            .collect::<Vec<_>>(),
    );
    let b = one_seed(
        &(0..40)
            .map(|q| 0.5 + 0.01 * (q % 5) as f64)
            .collect::<Vec<_>>(),
    );
    let t = paired_test("a", "b", "ndcg@8", &a, &b, 1).unwrap();
    assert!(
        t.min_detectable.is_some_and(|m| m > 0.0) && t.undetectable.is_none(),
        "{t:?}"
    );
}

/// Holm multiplies the family's smallest p by its number of tests m, so a test on n queries can
/// reach p < 0.05 only when m · 2 / 2^n is below it: at 6 queries (smallest p 0.031) one test
/// can, five cannot (0.156), and at 7 queries five cannot either (0.078). Such tests say no
/// difference is detectable instead of a size; alone, or on enough queries, they keep theirs.
#[test]
fn the_detectable_size_accounts_for_holms_correction() {
    let run = |queries: usize, m: usize| -> Vec<PairedTest> {
        let mut tests: Vec<PairedTest> = (0..m)
            .map(|i| {
                let a = scores(1, queries, 0.01, i as u64);
                let b = scores(1, queries, 0.0, 100 + i as u64);
                test(&a, &b, 7)
            })
            .collect();
        holm(&mut tests);
        tests
    };
    for (queries, m, detectable) in [(6, 1, true), (6, 5, false), (7, 5, false), (8, 5, true)] {
        for t in run(queries, m) {
            assert_eq!(
                t.min_detectable.is_some(),
                detectable,
                "{queries} queries, {m} tests: {t:?}"
            );
            if !detectable {
                let why = t.undetectable.as_deref().unwrap_or_default();
                assert!(
                    why.contains(&format!(
                        "{queries} queries and {m} tests under Holm's correction"
                    )),
                    "{why}"
                );
                assert!(
                    sentence(&t).contains("no difference is detectable"),
                    "{}",
                    sentence(&t)
                );
            }
        }
    }
}

//! Metrics against independent implementations (trec_eval through pytrec_eval, and scikit-learn),
//! whose values `bench/metrics_reference.py` computed and committed to `tests/data/`.

#![cfg(not(target_arch = "wasm32"))]
// The references here use the platform's exp and ln, independently of the library's crate::math.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;

use distillrank::metrics::{
    average_precision, mean_ndcg, ndcg_at, precision_at, ranking, reciprocal_rank, report, IdcgZero,
};

struct Group {
    labels: Vec<f32>,
    scores: Vec<f32>,
}

fn case() -> BTreeMap<String, Group> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/metrics_case.tsv"
    ))
    .unwrap();
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let g = groups.entry(f[0].to_string()).or_insert(Group {
            labels: vec![],
            scores: vec![],
        });
        g.labels.push(f[2].parse().unwrap());
        g.scores.push(f[3].parse().unwrap());
    }
    groups
}

fn expected() -> serde_json::Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/metrics_expected.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() < 1e-6,
        "{what}: {got} vs expected {want}"
    );
}

#[test]
fn binary_metrics_match_trec_eval() {
    let (groups, expected) = (case(), expected());
    let mut checked = 0;
    for (qid, g) in &groups {
        let Some(want) = expected["queries"][qid]["binary"].as_object() else {
            continue;
        };
        let binary: Vec<f32> = g.labels.iter().map(|&l| (l > 0.0) as u8 as f32).collect();
        for k in [1, 3, 5, 10] {
            // trec_eval reports 0 for a query without relevant documents; ours is undefined there.
            let ndcg = ndcg_at(k, &g.scores, &binary).unwrap_or(0.0);
            close(
                ndcg,
                want[&format!("ndcg@{k}")].as_f64().unwrap(),
                &format!("q{qid} ndcg@{k}"),
            );
            close(
                precision_at(k, &g.scores, &binary),
                want[&format!("p@{k}")].as_f64().unwrap(),
                &format!("q{qid} p@{k}"),
            );
        }
        close(
            average_precision(&g.scores, &binary),
            want["ap"].as_f64().unwrap(),
            &format!("q{qid} ap"),
        );
        close(
            reciprocal_rank(&g.scores, &binary),
            want["rr"].as_f64().unwrap(),
            &format!("q{qid} rr"),
        );
        checked += 1;
    }
    assert_eq!(checked, 40);
}

#[test]
fn graded_ndcg_matches_scikit_learn_with_exponential_gain() {
    let (groups, expected) = (case(), expected());
    let mut checked = 0;
    for (qid, g) in &groups {
        let Some(want) = expected["queries"][qid]["graded_exp"].as_object() else {
            assert!(
                g.labels.iter().all(|&l| l == 0.0),
                "q{qid} has relevant documents but no reference"
            );
            assert_eq!(
                ndcg_at(10, &g.scores, &g.labels),
                None,
                "IDCG = 0 gives no NDCG"
            );
            continue;
        };
        for k in [1, 3, 5, 10] {
            close(
                ndcg_at(k, &g.scores, &g.labels).unwrap(),
                want[&format!("ndcg@{k}")].as_f64().unwrap(),
                &format!("q{qid} ndcg@{k}"),
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 38);
}

#[test]
fn idcg_zero_conventions() {
    // Group 1: a perfect ranking (NDCG 1); group 2: no relevant document.
    let scores = [2.0, 1.0, 5.0, 4.0];
    let labels = [1.0, 0.0, 0.0, 0.0];
    let offsets = [0, 2, 4];
    assert_eq!(
        mean_ndcg(8, &scores, &labels, &offsets, IdcgZero::Exclude),
        Some(1.0)
    );
    assert_eq!(
        mean_ndcg(8, &scores, &labels, &offsets, IdcgZero::Zero),
        Some(0.5)
    );
    assert_eq!(
        mean_ndcg(8, &scores, &labels, &offsets, IdcgZero::One),
        Some(1.0)
    );
    assert_eq!(
        mean_ndcg(8, &scores[2..], &labels[2..], &[0, 2], IdcgZero::Exclude),
        None
    );
    assert_eq!(
        report(&scores, &labels, &offsets, IdcgZero::Exclude).ndcg_groups,
        1
    );
}

#[test]
fn ties_are_averaged_over() {
    // The ranking itself (for choosing a teacher's top K) keeps document order among ties.
    assert_eq!(ranking(&[1.0, 3.0, 3.0, 1.0, 2.0]), vec![1, 2, 4, 0, 3]);
    assert_eq!(ranking(&[-0.0, 0.0]), vec![0, 1], "0.0 and -0.0 tie");
    // Every score tied, one relevant document in three: wherever it lies in the file, it is
    // first with chance 1/3.
    for labels in [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]] {
        let scores = [0.5, 0.5, 0.5];
        close(ndcg_at(1, &scores, &labels).unwrap(), 1.0 / 3.0, "ndcg@1");
        close(precision_at(1, &scores, &labels), 1.0 / 3.0, "p@1");
        close(
            reciprocal_rank(&scores, &labels),
            (1.0 + 1.0 / 2.0 + 1.0 / 3.0) / 3.0,
            "rr",
        );
        close(
            average_precision(&scores, &labels),
            (1.0 + 1.0 / 2.0 + 1.0 / 3.0) / 3.0,
            "ap",
        );
    }
}

/// Every order of `0..n`.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut all = Vec::new();
    for rest in permutations(n - 1) {
        for at in 0..=rest.len() {
            let mut p = rest.clone();
            p.insert(at, n - 1);
            all.push(p);
        }
    }
    all
}

/// A metric with ties broken by row order (a full sort, as trec_eval's ranking without names
/// would give), averaged over every order of the group's rows: the expectation the metrics
/// compute in closed form.
fn mean_over_row_orders(
    scores: &[f32],
    labels: &[f32],
    metric: impl Fn(&[usize], &[f32]) -> f64,
) -> f64 {
    let orders = permutations(scores.len());
    orders
        .iter()
        .map(|rows| {
            let s: Vec<f32> = rows.iter().map(|&r| scores[r]).collect();
            let l: Vec<f32> = rows.iter().map(|&r| labels[r]).collect();
            metric(&ranking(&s), &l)
        })
        .sum::<f64>()
        / orders.len() as f64
}

fn dcg_by_sorting(k: usize, order: &[usize], labels: &[f32]) -> f64 {
    let gain = |l: f32| 2f64.powf(l as f64) - 1.0;
    let discount = |r: usize| 1.0 / ((r + 2) as f64).log2();
    order
        .iter()
        .take(k)
        .enumerate()
        .map(|(r, &i)| gain(labels[i]) * discount(r))
        .sum()
}

fn ap_by_sorting(order: &[usize], labels: &[f32]) -> f64 {
    let relevant = labels.iter().filter(|&&l| l > 0.0).count();
    let (mut hits, mut sum) = (0, 0.0);
    for (r, &i) in order.iter().enumerate() {
        if labels[i] > 0.0 {
            hits += 1;
            sum += hits as f64 / (r + 1) as f64;
        }
    }
    if relevant == 0 {
        0.0
    } else {
        sum / relevant as f64
    }
}

fn near(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-12 * want.abs().max(1.0)
}

proptest::proptest! {
    /// Scores from a few values (ties), with 0.0 against -0.0 and NaN; graded labels. Every
    /// metric equals its mean over all orders of the group's rows, computed by brute force.
    #[test]
    fn metrics_are_their_mean_over_every_order_of_tied_rows(
        group in proptest::collection::vec((0usize..7, 0u8..5), 0..7),
        k in 1usize..9,
    ) {
        let values = [1.5f32, 0.25, 0.0, -0.0, f32::NAN, -2.0, 0.25];
        let scores: Vec<f32> = group.iter().map(|&(s, _)| values[s]).collect();
        let labels: Vec<f32> = group.iter().map(|&(_, l)| l as f32).collect();
        let mut ideal = labels.clone();
        ideal.sort_by(|a, b| b.total_cmp(a));
        let idcg = dcg_by_sorting(k, &(0..ideal.len()).collect::<Vec<_>>(), &ideal);
        let want_ndcg = (idcg > 0.0)
            .then(|| mean_over_row_orders(&scores, &labels, |o, l| dcg_by_sorting(k, o, l)) / idcg);
        let got_ndcg = ndcg_at(k, &scores, &labels);
        proptest::prop_assert_eq!(got_ndcg.is_some(), want_ndcg.is_some());
        if let (Some(g), Some(w)) = (got_ndcg, want_ndcg) {
            proptest::prop_assert!(near(g, w), "ndcg@{}: {} vs {}", k, g, w);
        }
        let binary = |l: f32| l > 0.0;
        let want_p = mean_over_row_orders(&scores, &labels, |o, l| {
            o.iter().take(k).filter(|&&i| binary(l[i])).count() as f64 / k as f64
        });
        let got_p = precision_at(k, &scores, &labels);
        proptest::prop_assert!(near(got_p, want_p), "p@{}: {} vs {}", k, got_p, want_p);
        let want_rr = mean_over_row_orders(&scores, &labels, |o, l| {
            o.iter().position(|&i| binary(l[i])).map_or(0.0, |r| 1.0 / (r + 1) as f64)
        });
        let got_rr = reciprocal_rank(&scores, &labels);
        proptest::prop_assert!(near(got_rr, want_rr), "rr: {} vs {}", got_rr, want_rr);
        let want_ap = mean_over_row_orders(&scores, &labels, ap_by_sorting);
        let got_ap = average_precision(&scores, &labels);
        proptest::prop_assert!(near(got_ap, want_ap), "ap: {} vs {}", got_ap, want_ap);
    }

    /// Without ties, the closed forms are the plain metrics of a full sort, to the bit.
    #[test]
    fn without_ties_metrics_are_those_of_a_full_sort(
        labels in proptest::collection::vec(0u8..5, 0..40),
        k in 1usize..14,
    ) {
        let labels: Vec<f32> = labels.iter().map(|&l| l as f32).collect();
        // Distinct scores in a scrambled order.
        let scores: Vec<f32> = (0..labels.len()).map(|i| ((i * 7919) % 97) as f32 - 40.5).collect();
        let order = ranking(&scores);
        let mut ideal = labels.clone();
        ideal.sort_by(|a, b| b.total_cmp(a));
        let idcg = dcg_by_sorting(k, &(0..ideal.len()).collect::<Vec<_>>(), &ideal);
        let want = (idcg > 0.0).then(|| dcg_by_sorting(k, &order, &labels) / idcg);
        proptest::prop_assert_eq!(ndcg_at(k, &scores, &labels).map(f64::to_bits), want.map(f64::to_bits));
        proptest::prop_assert_eq!(average_precision(&scores, &labels).to_bits(), ap_by_sorting(&order, &labels).to_bits());
    }
}

/// A model ties every query when it gives each query's documents one score; where no query has
/// two documents there is nothing to tie, and no warning to give (a predict file of one
/// document a query).
#[test]
fn ties_every_group_needs_a_group_of_two() {
    use distillrank::metrics::ties_every_group;
    assert!(ties_every_group(&[0.5, 0.5, 0.1, 0.1], &[0, 2, 4]));
    assert!(!ties_every_group(&[0.5, 0.4, 0.1, 0.1], &[0, 2, 4]));
    // One document a query: scores all different, no tie to speak of.
    assert!(!ties_every_group(&[0.1, 0.2, 0.3], &[0, 1, 2, 3]));
    assert!(!ties_every_group(&[0.1, 0.1, 0.1], &[0, 1, 2, 3]));
    // A group of two among groups of one.
    assert!(ties_every_group(&[0.1, 0.3, 0.3], &[0, 1, 3]));
    assert!(!ties_every_group(&[], &[0]));
}

//! Metrics against independent implementations (trec_eval through pytrec_eval, and scikit-learn),
//! whose values `bench/metrics_reference.py` computed and committed to `tests/data/`.

#![cfg(not(target_arch = "wasm32"))]

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
fn ties_are_broken_by_document_order() {
    assert_eq!(ranking(&[1.0, 3.0, 3.0, 1.0, 2.0]), vec![1, 2, 4, 0, 3]);
    assert_eq!(ranking(&[-0.0, 0.0]), vec![0, 1], "0.0 and -0.0 tie");
    // With every score tied, the earlier relevant document ranks first.
    let v = ndcg_at(1, &[0.5, 0.5, 0.5], &[0.0, 1.0, 0.0]).unwrap();
    assert_eq!(v, 0.0);
    let v = ndcg_at(1, &[0.5, 0.5, 0.5], &[1.0, 0.0, 0.0]).unwrap();
    assert_eq!(v, 1.0);
}

/// NDCG@k from the whole ranking and the whole ideal order, sorted: what `ndcg_at` selects.
fn ndcg_by_sorting(k: usize, scores: &[f32], labels: &[f32]) -> Option<f64> {
    let gain = |l: f32| 2f64.powf(l as f64) - 1.0;
    let discount = |r: usize| 1.0 / ((r + 2) as f64).log2();
    let dcg: f64 = ranking(scores)
        .iter()
        .take(k)
        .enumerate()
        .map(|(r, &i)| gain(labels[i]) * discount(r))
        .sum();
    let mut ideal = labels.to_vec();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(r, &l)| gain(l) * discount(r))
        .sum();
    (idcg > 0.0).then(|| dcg / idcg)
}

proptest::proptest! {
    /// Scores from a few values (ties), with 0.0 against -0.0 and NaN; graded labels.
    #[test]
    fn ndcg_selects_the_same_top_k_as_a_full_sort(
        group in proptest::collection::vec((0usize..7, 0u8..5), 0..60),
        k in 0usize..14,
    ) {
        let values = [1.5f32, 0.25, 0.0, -0.0, f32::NAN, -2.0, 0.25];
        let scores: Vec<f32> = group.iter().map(|&(s, _)| values[s]).collect();
        let labels: Vec<f32> = group.iter().map(|&(_, l)| l as f32).collect();
        let got = ndcg_at(k, &scores, &labels);
        let want = ndcg_by_sorting(k, &scores, &labels);
        proptest::prop_assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits));
    }
}

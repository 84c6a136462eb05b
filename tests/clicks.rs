//! Learning from clicks: the propensities estimated from simulated logs against the simulator's
//! own, the IPS labels against an estimator computed session by session, the methods on both
//! engines, and the settings they cannot run with.

#![cfg(not(target_arch = "wasm32"))]
// The references here use the platform's exp and ln, independently of the library's crate::math.
#![allow(clippy::disallowed_methods)]

mod common;

use common::engines::prepare;
use distillrank::cpu::loss::data_loss;
use distillrank::data::logs::{simulate, ClickTable, LogOptions};
use distillrank::data::Dataset;
use distillrank::engine::Engine;
use distillrank::model::LossKind;
use distillrank::ranking::clicks::{
    em_propensities, harvested_propensities, label_of, relevance, ClickLabel, ClickLabels,
    PropensityTower,
};
use distillrank::ranking::distill::Method;
use distillrank::rng::Rng;
use distillrank::setup::{DataSource, Setup};
use distillrank::stop::Stop;

const CLICK_METHODS: [Method; 7] = [
    Method::Naive,
    Method::Ips,
    Method::IpsEstimated,
    Method::IpsHarvested,
    Method::Dla,
    Method::TwoTower,
    Method::FullInformation,
];

/// The bundled MQ2008 with logs simulated here (PBM, eta = 1), the four methods that learn from
/// clicks and PFD, a small model.
fn clicks_setup(loss: LossKind) -> Setup {
    let mut setup = common::engines::small_setup(DataSource::Mq2008);
    setup.data.privileged = Some("logs".into());
    setup.methods = CLICK_METHODS.to_vec();
    setup.methods.push(Method::Pfd);
    setup.loss = loss;
    setup
}

/// Two kinds of data: MQ2008's training file and a synthetic file of five grades.
fn datasets() -> Vec<(&'static str, Dataset)> {
    let [mq2008, ..] = distillrank::data::bundled::mq2008().unwrap();
    let options = distillrank::data::synth::SynthOptions {
        queries: 300,
        ..Default::default()
    };
    let synthetic = distillrank::data::synth::generate_splits(&options, 300, 1, 1)
        .unwrap()
        .train;
    vec![("MQ2008", mq2008), ("synthetic", synthetic)]
}

/// Under the position-based model, EM and intervention harvesting recover the simulator's
/// examination `(1/k)^eta` from the clicks alone, within 15% of each rank's value at every rank,
/// at two position biases and on two kinds of data.
#[test]
fn em_recovers_the_simulators_propensities_at_two_position_biases() {
    for (name, data) in datasets() {
        for eta in [0.5, 1.0] {
            let options = LogOptions {
                position_bias: eta,
                sessions: 200,
                ..LogOptions::default()
            };
            let logs = simulate(&[&data], &[name.to_string()], &options).unwrap();
            let truth = logs.clicks.examination.clone().unwrap();
            for (estimator, estimated) in [
                ("EM", em_propensities(&logs.clicks).unwrap()),
                (
                    "intervention harvesting",
                    harvested_propensities(&logs.clicks).unwrap(),
                ),
            ] {
                for (k, (e, t)) in estimated.iter().zip(&truth).enumerate() {
                    let e = e.expect("every rank is shown");
                    assert!(
                        (e - t).abs() <= 0.15 * t,
                        "{name}, eta {eta}, {estimator}, rank {}: estimated {e:.4}, true {t:.4}\n{estimated:?}",
                        k + 1
                    );
                }
            }
            // Without a position bias every rank is examined alike.
            assert!((truth[truth.len() - 1] - 10f64.powf(-eta)).abs() < 1e-12);
        }
    }
}

/// A ranker that knows the simulator's attractiveness gamma_d teaches DLA's and the two-tower
/// model's propensity towers the simulator's examination, within 15% at every rank, at two
/// position biases and on two kinds of data: DLA from scores whose softmax is proportional to
/// gamma (`ln gamma`), the two-tower model from scores its relevance tower can calibrate to gamma
/// (`logit gamma`, any affine map of it). Their labels are then the IPS estimates with those
/// propensities.
#[test]
fn propensity_towers_learn_the_simulators_examination_from_a_ranker_that_knows_gamma() {
    for (name, data) in datasets() {
        for eta in [0.5, 1.0] {
            let options = LogOptions {
                position_bias: eta,
                sessions: 200,
                ..LogOptions::default()
            };
            let logs = simulate(&[&data], &[name.to_string()], &options).unwrap();
            let truth = logs.clicks.examination.clone().unwrap();
            let top = libm::exp2(*data.grades.iter().max().unwrap() as f64) - 1.0;
            let gamma: Vec<f64> = data
                .grades
                .iter()
                .map(|&g| {
                    let e = options.click_noise;
                    e + (1.0 - e) * (libm::exp2(g as f64) - 1.0) / top
                })
                .collect();
            let table = std::sync::Arc::new(logs.clicks);
            for (label, score) in [
                (ClickLabel::Dla, (|g: f64| g.ln()) as fn(f64) -> f64),
                (ClickLabel::TwoTower, |g: f64| {
                    let g = g.min(1.0 - 1e-4);
                    3.0 * (g / (1.0 - g)).ln() - 1.0
                }),
            ] {
                let scores: Vec<f32> = gamma.iter().map(|&g| score(g) as f32).collect();
                let mut tower = PropensityTower::new(label, table.clone());
                assert!(tower.propensities().iter().all(|&p| p == Some(1.0)));
                let mut labels = Vec::new();
                for _ in 0..3 {
                    labels = tower.fit(&scores);
                }
                assert_eq!(labels.len(), data.n_docs());
                assert!(
                    labels.iter().all(|y| y.is_finite() && *y >= 0.0),
                    "{name}, eta {eta}, {label:?}"
                );
                let learned = tower.propensities();
                for (k, (p, t)) in learned.iter().zip(&truth).enumerate() {
                    let p = p.expect("every rank is shown");
                    assert!(
                        (p - t).abs() <= 0.15 * t,
                        "{name}, eta {eta}, {label:?}, rank {}: learned {p:.4}, true {t:.4}\n{learned:?}",
                        k + 1
                    );
                }
                // The labels are IPS's with the learned propensities.
                let weights: Vec<f64> = learned.iter().map(|p| p.unwrap()).collect();
                for (y, r) in labels.iter().zip(relevance(&table, &weights)) {
                    assert!((y - label_of(r)).abs() < 1e-5, "{label:?}");
                }
            }
        }
    }
}

/// DLA learns at every step: each batch of queries the ranker scores replaces those queries'
/// share of the propensity model's sums. Before any step its labels are the naive clicks'; after
/// one batch its propensities have moved; once every query has been scored, in batches and in
/// any order, and some of them scored again with other scores, its propensities and labels are
/// those of one fit to the latest scores of the whole split (a query's old share leaves no
/// trace).
#[test]
fn dla_learns_at_every_step_from_the_latest_scores_of_every_query() {
    let (name, data) = datasets().swap_remove(0);
    let options = LogOptions {
        sessions: 200,
        ..LogOptions::default()
    };
    let logs = simulate(&[&data], &[name.to_string()], &options).unwrap();
    let table = std::sync::Arc::new(logs.clicks);
    let offsets = table.group_offsets.clone();
    let n_groups = offsets.len() - 1;
    let mut rng = Rng::new(7);
    let scores: Vec<f32> = (0..data.n_docs()).map(|_| rng.normal() as f32).collect();
    let other: Vec<f32> = (0..data.n_docs())
        .map(|_| 3.0 * rng.normal() as f32)
        .collect();
    let mut whole = PropensityTower::new(ClickLabel::Dla, table.clone());
    let expected = whole.fit(&scores);

    let mut stepped = PropensityTower::new(ClickLabel::Dla, table.clone());
    assert!(stepped.learns_per_step());
    // A batch of queries laid out as a ranking batch holds them.
    let batch = |groups: &[usize], of: &[f32]| {
        let mut at = vec![0];
        let mut batch_scores = Vec::new();
        for &g in groups {
            batch_scores.extend_from_slice(&of[offsets[g]..offsets[g + 1]]);
            at.push(batch_scores.len());
        }
        (at, batch_scores)
    };
    let mut order: Vec<usize> = (0..n_groups).collect();
    rng.shuffle(&mut order);
    let first = &order[..7];
    let (at, _) = batch(first, &scores);
    let mut labels = vec![0f32; at[7]];
    stepped.labels_into(first, &at, &mut labels);
    let naive = relevance(&table, &vec![1.0; table.shown]);
    for (&g, span) in first.iter().zip(at.windows(2)) {
        for (y, r) in labels[span[0]..span[1]]
            .iter()
            .zip(&naive[offsets[g]..offsets[g + 1]])
        {
            assert_eq!(*y, label_of(*r), "before any step, the naive clicks");
        }
    }
    // Every query scored with other scores first, then with the scores, in another order.
    for (of, chunk) in [(&other, 13), (&scores, 7)] {
        for groups in order.chunks(chunk) {
            let (at, batch_scores) = batch(groups, of);
            stepped.observe(groups, &at, &batch_scores);
        }
        if std::ptr::eq(of, &other) {
            let moved = stepped.propensities();
            assert!(moved.iter().skip(1).any(|p| p.unwrap() != 1.0), "{moved:?}");
        }
        order.reverse();
    }
    for (s, w) in stepped.propensities().iter().zip(whole.propensities()) {
        let (s, w) = (s.unwrap(), w.unwrap());
        assert!((s - w).abs() <= 1e-9 * w, "stepped {s} against one fit {w}");
    }
    let all: Vec<usize> = (0..n_groups).collect();
    let mut labels = vec![0f32; data.n_docs()];
    stepped.labels_into(&all, &offsets, &mut labels);
    for (y, e) in labels.iter().zip(&expected) {
        assert!((y - e).abs() <= 1e-5, "{y} against {e}");
    }
}

/// A click on a document the ranker all but rules out (rho ~ e^-50) weighs at most 1000 times its
/// query's rank-1 relevance in DLA's propensity model: with 50 clicks at rank 1 on a document of
/// rho ~ 1 and 10 at rank 2 on it, out of 100 impressions each, rank 2's propensity is
/// 10 * 1000 / 50 = 200 times rank 1's, not e^50 times.
#[test]
fn dla_caps_a_click_on_a_document_the_ranker_rules_out() {
    let table = ClickTable {
        from_rows: false,
        conversions: None,
        dwell_ms: None,
        shown: 2,
        sessions: 100,
        impressions: vec![100, 0, 0, 100],
        clicks: vec![50, 0, 0, 10],
        examination: None,
        group_offsets: vec![0, 2],
        qids: vec![1],
    };
    let mut tower = PropensityTower::new(ClickLabel::Dla, std::sync::Arc::new(table));
    tower.observe(&[0], &[0, 2], &[0.0, -50.0]);
    let theta = tower.propensities();
    let second = theta[1].unwrap();
    assert!((second - 200.0).abs() < 1e-6, "{theta:?}");
}

/// Random sessions of one query, kept one by one: (documents shown in order, clicked at each
/// rank).
fn random_sessions(n_docs: usize, shown: usize, sessions: usize) -> Vec<(Vec<usize>, Vec<bool>)> {
    let mut rng = Rng::stream(7, 1);
    (0..sessions)
        .map(|_| {
            let mut order: Vec<usize> = (0..n_docs).collect();
            rng.shuffle(&mut order);
            order.truncate(shown);
            let clicked = (0..shown).map(|_| rng.uniform() < 0.3).collect();
            (order, clicked)
        })
        .collect()
}

/// The softmax cross-entropy on the IPS labels is the listwise IPS estimator computed session by
/// session, `-(1/S) sum_sessions sum_clicked (1/theta_k) ln softmax(f)_d`, over the sum of the
/// weights; its gradient is `softmax(f) - q`. The same with theta = 1 for the naive labels.
#[test]
fn ips_labels_give_the_per_session_ips_estimator() {
    let (n_docs, shown, sessions) = (7usize, 5usize, 40usize);
    let log = random_sessions(n_docs, shown, sessions);
    let theta = [1.0, 0.6, 0.45, 0.3, 0.2];
    let mut table = ClickTable {
        from_rows: false,
        conversions: None,
        dwell_ms: None,
        shown,
        sessions,
        impressions: vec![0; n_docs * shown],
        clicks: vec![0; n_docs * shown],
        examination: Some(theta.to_vec()),
        group_offsets: vec![0, n_docs],
        qids: vec![1],
    };
    for (order, clicked) in &log {
        for (k, (&d, &c)) in order.iter().zip(clicked).enumerate() {
            table.impressions[d * shown + k] += 1;
            table.clicks[d * shown + k] += c as u32;
        }
    }
    let logits = [0.3f64, -1.2, 0.8, 0.0, 2.1, -0.4, 1.1];
    let max = logits.iter().cloned().fold(f64::MIN, f64::max);
    let log_sum = logits.iter().map(|f| (f - max).exp()).sum::<f64>().ln();
    let log_softmax: Vec<f64> = logits.iter().map(|f| f - max - log_sum).collect();
    for propensity in [theta.to_vec(), vec![1.0; shown]] {
        // Session by session.
        let (mut loss, mut weight) = (0.0, 0.0);
        let mut target = vec![0.0; n_docs];
        for (order, clicked) in &log {
            for (k, (&d, &c)) in order.iter().zip(clicked).enumerate() {
                if c {
                    loss -= log_softmax[d] / propensity[k];
                    weight += 1.0 / propensity[k];
                    target[d] += 1.0 / propensity[k];
                }
            }
        }
        let expected = loss / weight;
        // Through the labels the methods train on.
        let labels: Vec<f64> = relevance(&table, &propensity)
            .iter()
            .map(|&r| label_of(r) as f64)
            .collect();
        let mut grad = vec![0.0; n_docs];
        let got = data_loss(
            LossKind::Softmax,
            &logits,
            &labels,
            &[0, n_docs],
            &[true],
            1.0,
            &mut grad,
        );
        assert!(
            (got - expected).abs() < 1e-5 * expected.abs(),
            "loss {got} against {expected}"
        );
        for d in 0..n_docs {
            let want = log_softmax[d].exp() - target[d] / weight;
            assert!(
                (grad[d] - want).abs() < 1e-5,
                "document {d}: {} against {want}",
                grad[d]
            );
        }
    }
}

/// Every method that learns from clicks trains on the bundled MQ2008 with simulated clicks, on
/// RankNet and the softmax, and reports the graded NDCG with the paired tests on it.
#[test]
fn the_click_methods_compare_on_simulated_logs() {
    for loss in [LossKind::RankNet, LossKind::Softmax] {
        let setup = clicks_setup(loss);
        let (data, comparison) = common::engines::compare_on_cpu(&setup);
        assert_eq!(comparison.verdict_metric(), "graded_ndcg@8");
        let tests = comparison.tests(1);
        for (a, b) in [
            ("ips", "naive"),
            ("ips-estimated", "naive"),
            ("ips-estimated", "ips"),
            ("full-information", "ips"),
            ("pfd", "ips"),
            ("dla", "ips-estimated"),
            ("dla", "ips"),
            ("two-tower", "ips"),
            ("ips-harvested", "ips"),
        ] {
            assert!(
                tests
                    .iter()
                    .any(|t| t.a == a && t.b == b && t.metric == "graded_ndcg@8" && t.p.is_some()),
                "{loss}: no test of {a} against {b}"
            );
        }
        let results = distillrank::pipeline::report::results_json(&data, &setup, &comparison);
        let clicks = &results["clicks"];
        assert_eq!(clicks["true_propensities"][1], 0.5, "{clicks}");
        assert_eq!(
            clicks["estimated_propensities"].as_array().unwrap().len(),
            10
        );
        // DLA and two-tower report the propensities their best epoch trained on.
        for method in ["dla", "two-tower"] {
            let learned = clicks["learned_propensities"][method].as_array().unwrap();
            assert_eq!(learned.len(), 10, "{clicks}");
            assert_eq!(learned[0], 1.0, "{clicks}");
        }
        // The methods differ: their labels do.
        let graded = |m: Method| {
            comparison.get(m).unwrap().runs[0]
                .student
                .test_graded_ndcg
                .clone()
        };
        assert_ne!(graded(Method::Naive), graded(Method::FullInformation));
    }
}

/// The labels of each method: the naive clicks per session, IPS above them at lower ranks, and
/// full information the grades (y = g, whose gain is 2^g - 1).
#[test]
fn each_method_trains_on_its_own_labels() {
    let setup = clicks_setup(LossKind::RankNet);
    let data = prepare(&setup).unwrap();
    let clicks = data.click_labels(&setup.methods).unwrap().unwrap();
    let train = &data.prepared.train;
    let table = data.clicks.as_deref().unwrap();
    assert_eq!(table.n_docs(), train.n_docs());
    assert_eq!(clicks.naive.len(), train.n_docs());
    // IPS never weighs a click less than naive does (theta <= 1), and more somewhere.
    let ips = clicks.ips.as_ref().unwrap();
    assert!(clicks.naive.iter().zip(ips).all(|(n, i)| i >= n));
    assert!(clicks.naive.iter().zip(ips).any(|(n, i)| i > n));
    let set = |m: Method| {
        let distillrank::ranking::distill::Student::Labels(label) = m.entry().student else {
            panic!("{m} learns from its own labels")
        };
        distillrank::ranking::clicks::training_set(label, m.name(), train, Some(&clicks)).unwrap()
    };
    let full = set(Method::FullInformation);
    for (y, &g) in full.labels.iter().zip(&train.grades) {
        assert!((y - g as f32).abs() < 1e-5);
    }
    let naive = set(Method::Naive);
    for (y, &r) in naive.labels.iter().zip(&clicks.naive) {
        assert!((y - label_of(r as f64)).abs() < 1e-7);
    }
    assert_eq!(
        naive.positive_group.iter().filter(|&&p| !p).count(),
        clicks.queries_without_click
    );
    let again = ClickLabels::new(data.clicks.clone().unwrap()).unwrap();
    assert_eq!(again, *clicks);
}

/// The click methods train the same on the WGSL engine as on the CPU engine, and DLA and the
/// two-tower model learn the same propensities there: their second epoch trains on the labels the
/// towers learned from each engine's scores.
#[test]
fn click_methods_train_the_same_on_both_engines() {
    for loss in [LossKind::RankNet, LossKind::Softmax] {
        let mut setup = clicks_setup(loss);
        setup.epochs = 2;
        setup.patience = 2;
        setup.batch_docs = 512;
        let data = prepare(&setup).unwrap();
        for method in [
            Method::Ips,
            Method::IpsEstimated,
            Method::Dla,
            Method::TwoTower,
        ] {
            let Some((cpu, on_gpu)) = common::engines::fit_on_both(&data, &setup, method) else {
                return;
            };
            let what = format!("{loss} {method}");
            common::engines::assert_same_data_loss(&cpu, &on_gpu, &what);
            let learned = |run: &distillrank::ranking::experiment::SeedRun| {
                run.student.history[1].propensities.clone()
            };
            let (Some(c), Some(g)) = (learned(&cpu), learned(&on_gpu)) else {
                assert!(!matches!(method, Method::Dla | Method::TwoTower), "{what}");
                continue;
            };
            assert!(c.iter().skip(1).any(|p| p.unwrap() != 1.0), "{what}: {c:?}");
            // DLA learns within its first epoch, at every step.
            let first = cpu.student.history[0].propensities.clone().unwrap();
            let moved = first.iter().skip(1).any(|p| p.unwrap() != 1.0);
            assert_eq!(moved, method == Method::Dla, "{what}: {first:?}");
            for (c, g) in c.iter().zip(&g) {
                assert!(
                    (c.unwrap() - g.unwrap()).abs() < 1e-3,
                    "{what}: {c:?} vs {g:?}"
                );
            }
        }
    }
}

/// What the methods that learn from clicks cannot run with is refused by name, with what would
/// work: data without clicks by rank, a pointwise loss on binary labels, a global objective, and
/// IPS with true propensities under a click model that has none.
#[test]
fn settings_the_click_methods_cannot_run_with_are_refused() {
    let refused = |setup: &Setup, words: &[&str]| {
        let message = prepare(setup)
            .and_then(|data| {
                distillrank::pipeline::run::compare_config(
                    &data,
                    setup,
                    &Engine::Cpu,
                    &Stop::default(),
                )
            })
            .map(|_| ())
            .unwrap_err()
            .to_string();
        for w in words {
            assert!(message.contains(w), "{message:?} lacks {w:?}");
        }
    };
    for method in [
        Method::Naive,
        Method::Ips,
        Method::IpsEstimated,
        Method::IpsHarvested,
        Method::Dla,
        Method::TwoTower,
    ] {
        // Without logs there are no clicks.
        let mut setup = common::engines::small_setup(DataSource::Mq2008);
        setup.methods = vec![method];
        refused(&setup, &[method.name(), "--privileged logs"]);
        // RankBCE learns binary labels.
        let mut setup = clicks_setup(LossKind::RankBce);
        setup.methods = vec![method];
        refused(&setup, &[method.name(), "--loss rankbce", "ranknet"]);
    }
    // Full information needs no clicks, but a loss that takes grades.
    let mut setup = common::engines::small_setup(DataSource::Mq2008);
    setup.methods = vec![Method::FullInformation];
    setup.loss = LossKind::RankBce;
    refused(&setup, &["full-information", "--loss rankbce"]);
    // The true propensities exist under PBM only.
    let mut setup = clicks_setup(LossKind::RankNet);
    setup.data.logs.click_model = distillrank::data::logs::ClickModel::Cascade;
    setup.methods = vec![Method::Ips];
    refused(&setup, &["ips", "--click-model pbm", "ips-estimated"]);
    // Estimated propensities exist under any click model.
    setup.methods = vec![Method::IpsEstimated];
    let data = prepare(&setup).unwrap();
    assert!(distillrank::pipeline::run::compare_config(
        &data,
        &setup,
        &Engine::Cpu,
        &Stop::default()
    )
    .is_ok());
}

/// One query of `n_docs` documents, each shown `impressions` times at every rank 1..=shown and
/// never clicked.
fn one_query(n_docs: usize, shown: usize, impressions: u32) -> ClickTable {
    ClickTable {
        from_rows: false,
        conversions: None,
        dwell_ms: None,
        shown,
        sessions: 50,
        impressions: vec![impressions; n_docs * shown],
        clicks: vec![0; n_docs * shown],
        examination: None,
        group_offsets: vec![0, n_docs],
        qids: vec![1],
    }
}

/// An estimated propensity of 0 (a rank whose documents are shown but never clicked) is refused
/// with the rank, rather than weighing its clicks without bound.
#[test]
fn a_rank_never_clicked_is_refused_by_rank() {
    let (n_docs, shown) = (4, 3);
    let mut table = one_query(n_docs, shown, 50);
    for d in 0..n_docs {
        table.clicks[d * shown] = 10 + d as u32;
        table.clicks[d * shown + 1] = 5;
    }
    let message = em_propensities(&table).unwrap_err().to_string();
    assert!(message.contains("rank 3"), "{message}");
    // An empty log.
    table.impressions.fill(0);
    table.clicks.fill(0);
    let message = em_propensities(&table).unwrap_err().to_string();
    assert!(message.contains("no impression"), "{message}");
}

/// Prepared splits keep the clicks by rank beside them (`TRAIN.KEY.drprep.clicks`): the run that
/// reads them back learns from the same clicks as the run that wrote them. (They used to be
/// kept in memory only, so the same command worked once and was refused the second time.) A
/// sidecar that is gone makes the old refusal, naming what to delete.
#[test]
fn the_prepared_cache_keeps_the_clicks() {
    let dir = tempfile::tempdir().unwrap();
    let mut setup = clicks_setup(LossKind::RankNet);
    setup.methods = vec![Method::IpsEstimated];
    setup.data.source = common::engines::mq2008_files_in(dir.path());
    setup.data.prepared_cache = true;
    let config = |data: &distillrank::pipeline::preparation::PreparedData| {
        distillrank::pipeline::run::compare_config(data, &setup, &Engine::Cpu, &Stop::default())
    };
    let written = prepare(&setup).unwrap();
    assert!(written.clicks.is_some());
    assert!(config(&written).is_ok());
    let read = prepare(&setup).unwrap();
    assert_eq!(read.clicks, written.clicks);
    assert!(config(&read).is_ok());
    let sidecars = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".drprep.clicks"))
            .collect::<Vec<_>>()
    };
    assert_eq!(sidecars().len(), 1);
    // A damaged sidecar is not read: the splits are prepared again, with their clicks.
    std::fs::write(&sidecars()[0], b"{}\n1234").unwrap();
    let again = prepare(&setup).unwrap();
    assert_eq!(again.clicks, written.clicks);
    // Without the sidecar (splits written by an older version), the refusal says what to delete.
    for path in sidecars() {
        std::fs::remove_file(path).unwrap();
    }
    let read = prepare(&setup).unwrap();
    assert!(read.clicks.is_none());
    let message = config(&read).unwrap_err().to_string();
    assert!(
        message.contains("--prepared-cache") && message.contains(".drprep"),
        "{message}"
    );
}

/// The impressions log `data simulate-logs` writes is the simulation, impression by impression:
/// read back, it sums to the clicks by rank the simulation kept, on two kinds of data.
#[test]
fn the_impressions_log_reads_back_as_the_simulations_clicks() {
    use distillrank::data::logs::read_impressions;
    for (name, data) in datasets() {
        let options = LogOptions::default();
        let logs = simulate(&[&data], &[name.to_string()], &options).unwrap();
        let mut text = Vec::new();
        logs.write_impressions(&data, &options, &mut text).unwrap();
        let lines = text.iter().filter(|&&b| b == b'\n').count();
        let shown: usize = data
            .group_offsets
            .windows(2)
            .map(|g| (g[1] - g[0]).min(options.shown) * options.sessions)
            .sum();
        assert_eq!(lines, 1 + shown, "{name}: one line per shown document");
        let read = read_impressions(
            &text,
            name,
            &data,
            &[],
            logs.clicks.examination.clone(),
            &mut no_docids,
        )
        .unwrap();
        assert_eq!(read, logs.clicks, "{name}");
    }
}

/// A click table summed elsewhere (`distillrank.dask.click_table`'s file) reads as the log it was
/// summed from, wherever a log is read: the same table for the whole file; for a file with its
/// test queries held out, the same table as the log read with those queries held out; a query of
/// the table the file lacks is refused unless held out, and a query of another size is refused.
#[test]
fn a_click_table_file_reads_as_the_log_it_was_summed_from() {
    use distillrank::data::logs::{read_impressions, write_click_table};
    let dir = tempfile::tempdir().unwrap();
    for (name, data) in datasets() {
        let options = LogOptions::default();
        let logs = simulate(&[&data], &[name.to_string()], &options).unwrap();
        let mut text = Vec::new();
        logs.write_impressions(&data, &options, &mut text).unwrap();
        let read = |bytes: &[u8], data: &Dataset, held_out: &[u64]| {
            read_impressions(bytes, name, data, held_out, None, &mut no_docids)
        };
        let whole = read(&text, &data, &[]).unwrap();
        let path = dir.path().join(format!("{name}.clicks"));
        write_click_table(&path, &whole).unwrap();
        let file = std::fs::read(&path).unwrap();
        assert_eq!(read(&file, &data, &[]).unwrap(), whole, "{name}");
        // The last third of the queries held out, as a test split is held out of a file.
        let keep = data.n_groups() * 2 / 3;
        let held_out: Vec<u64> = data.qids[keep..].to_vec();
        let end = data.group_offsets[keep];
        let kept = Dataset {
            n_features: data.n_features,
            features: data.features[..end * data.n_features].to_vec().into(),
            grades: data.grades[..end].to_vec(),
            group_offsets: data.group_offsets[..=keep].to_vec(),
            qids: data.qids[..keep].to_vec(),
            source: None,
            feature_names: None,
        };
        assert_eq!(
            read(&file, &kept, &held_out).unwrap(),
            read(&text, &kept, &held_out).unwrap(),
            "{name}, queries held out"
        );
        let e = read(&file, &kept, &[]).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "query {} of the click table is not a query",
                held_out[0]
            )),
            "{e}"
        );
        let mut other = whole.clone();
        other.group_offsets[1] += 1;
        write_click_table(&path, &other).unwrap();
        let e = read(&std::fs::read(&path).unwrap(), &data, &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("documents in the click table"), "{e}");
        // Counts no log sums to: more clicks than impressions at a rank, conversions or dwell
        // without clicks, an examination probability outside (0, 1].
        let unclicked = (0..whole.n_docs())
            .find(|&d| whole.of(d).1.iter().all(|&c| c == 0))
            .expect("a document never clicked");
        type Edit = Box<dyn Fn(&mut ClickTable)>;
        let edits: [(&str, Edit); 4] = [
            (
                "clicks in",
                Box::new(|t| t.clicks[0] = t.impressions[0] + 1),
            ),
            (
                "conversions and 0 ms of dwell from 0 clicks",
                Box::new(move |t| {
                    t.conversions = Some(vec![0; t.n_docs()]);
                    t.conversions.as_mut().unwrap()[unclicked] = 1;
                }),
            ),
            (
                "0 conversions and 5 ms of dwell from 0 clicks",
                Box::new(move |t| {
                    t.dwell_ms = Some(vec![0; t.n_docs()]);
                    t.dwell_ms.as_mut().unwrap()[unclicked] = 5;
                }),
            ),
            (
                "the examination probability at rank 2 is 0",
                Box::new(|t| {
                    t.examination = Some((0..t.shown).map(|k| (k != 1) as u8 as f64).collect())
                }),
            ),
        ];
        for (fragment, edit) in edits {
            let mut other = whole.clone();
            edit(&mut other);
            write_click_table(&path, &other).unwrap();
            let e = read(&std::fs::read(&path).unwrap(), &data, &[])
                .unwrap_err()
                .to_string();
            assert!(e.contains(fragment), "{name}: {e}");
        }
    }
}

/// `data simulate-logs` on MQ2008 Fold1's three files, written into `dir`; returns the fold's
/// folder.
fn simulate_logs_of_mq2008(dir: &std::path::Path) -> std::path::PathBuf {
    let fold = std::path::PathBuf::from(common::letor_data::data("mq2008/Fold1"));
    let done = std::process::Command::new(env!("CARGO_BIN_EXE_distillrank"))
        .args(["data", "simulate-logs"])
        .args(["train.txt", "vali.txt", "test.txt"].map(|f| fold.join(f)))
        .arg("-o")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    fold
}

/// A compare on files `data simulate-logs` wrote reads their impressions log and trains the
/// methods that learn from clicks as on logs simulated in the run.
#[test]
fn files_from_simulate_logs_give_the_clicks_of_a_simulation_in_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let fold = simulate_logs_of_mq2008(dir.path());
    assert!(dir.path().join("train.txt.impressions.tsv").exists());
    let source = |folder: &std::path::Path| {
        DataSource::files(
            folder.join("train.txt").display().to_string(),
            Some(folder.join("vali.txt").display().to_string()),
            Some(folder.join("test.txt").display().to_string()),
        )
    };
    let mut setup = clicks_setup(LossKind::RankNet);
    setup.data.source = source(dir.path());
    let written = prepare(&setup).unwrap();
    setup.data.source = source(&fold);
    let simulated_here = prepare(&setup).unwrap();
    assert!(written.clicks.is_some());
    assert_eq!(written.clicks, simulated_here.clicks);
}

/// A sidecar whose `impressions` names another file (the LETOR file itself, a binary file) is
/// refused by what that file is and by the sidecar that names it, without echoing the file's
/// first line.
#[test]
fn class_a_sidecar_pointing_at_another_file_names_what_it_found() {
    let dir = tempfile::tempdir().unwrap();
    simulate_logs_of_mq2008(dir.path());
    let sidecar = dir.path().join("train.txt.logs.json");
    let original = std::fs::read_to_string(&sidecar).unwrap();
    std::fs::write(
        dir.path().join("blob.bin"),
        [0u8, 1, 2, 3, 0xff, 0xfe, 7, 8, b'\n'],
    )
    .unwrap();
    let first_row = std::fs::read_to_string(dir.path().join("train.txt"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    for (target, words) in [("train.txt", "LETOR text"), ("blob.bin", "binary bytes")] {
        let mut json: serde_json::Value = serde_json::from_str(&original).unwrap();
        json["impressions"] = target.into();
        std::fs::write(&sidecar, json.to_string()).unwrap();
        let mut setup = clicks_setup(LossKind::RankNet);
        setup.data.source = DataSource::files(
            dir.path().join("train.txt").display().to_string(),
            Some(dir.path().join("vali.txt").display().to_string()),
            Some(dir.path().join("test.txt").display().to_string()),
        );
        let message = prepare(&setup).unwrap_err().to_string();
        assert!(
            message.contains(target)
                && message.contains("line 1")
                && message.contains(words)
                && message.contains("train.txt.logs.json names it"),
            "{message}"
        );
        assert!(!message.contains(&first_row[..40]), "{message}");
    }
}

/// Every way an impressions log can be wrong is refused with its line and field and what was
/// expected.
#[test]
fn a_bad_impressions_log_is_refused_by_line_and_field() {
    use distillrank::data::logs::read_impressions;
    let [data, ..] = distillrank::data::bundled::mq2008().unwrap();
    let (qid, n) = (data.qids[0], data.group(0).len());
    let header = "qid\tsession\tposition\tdoc\tclick\n";
    let good = format!("{qid}\t0\t1\t1\t1\n");
    let (past_doc, past_position) = (format!("doc {}", n + 1), format!("position {}", n + 1));
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            "qid,session,position,doc,click\n".to_string() + &good,
            vec!["line 1", "header"],
        ),
        (
            format!("{header}{qid}\t0\t1\t1\n"),
            vec!["line 2", "4 fields", "expected 5"],
        ),
        (
            format!("{header}{good}{qid}\tx\t1\t1\t0\n"),
            vec!["line 3", "session 'x'", "whole number"],
        ),
        (
            format!("{header}{good}99999999\t0\t1\t1\t0\n"),
            vec!["line 3", "qid 99999999", "not a query"],
        ),
        (
            format!("{header}{qid}\t0\t1\t{}\t0\n", n + 1),
            vec!["line 2", &past_doc],
        ),
        (
            format!("{header}{qid}\t0\t0\t1\t0\n"),
            vec!["line 2", "position 0", "displayed rank"],
        ),
        (
            format!("{header}{qid}\t0\t{}\t1\t0\n", n + 1),
            vec!["line 2", &past_position],
        ),
        (
            format!("{header}{qid}\t0\t1\t1\t2\n"),
            vec!["line 2", "click 2", "0 or 1"],
        ),
        (
            format!("{header}{qid}\t0\t1\t1\t-1\n"),
            vec!["line 2", "click '-1'"],
        ),
        (header.to_string(), vec!["no impression", "empty"]),
        (String::new(), vec!["line 1", "header"]),
    ];
    for (text, words) in cases {
        let message =
            read_impressions(text.as_bytes(), "log.tsv", &data, &[], None, &mut no_docids)
                .unwrap_err()
                .to_string();
        assert!(message.contains("log.tsv"), "{message}");
        for w in words {
            assert!(message.contains(w), "{message:?} lacks {w:?}\n{text}");
        }
    }
    // A query held out of the file as its test split is passed over, not refused.
    let held = format!("{header}{good}99999999\t0\t1\t1\t0\n");
    assert!(read_impressions(
        held.as_bytes(),
        "log.tsv",
        &data,
        &[99999999],
        None,
        &mut no_docids
    )
    .is_ok());
}

/// Class: impressions logs whose sessions are not lists. A session shows each document at most
/// once and each rank at most once, on consecutive lines, with one list probability; a log
/// appended to itself, one document at two ranks, two documents at one rank and two
/// probabilities of one list are refused by session and line. A compressed log,
/// or one that starts with a byte-order mark, reads as the plain one.
#[test]
fn class_impressions_logs_whose_sessions_are_not_lists_are_refused_by_session_and_line() {
    use distillrank::data::logs::read_impressions;
    let [data, ..] = distillrank::data::bundled::mq2008().unwrap();
    let (qid, other) = (data.qids[0], data.qids[1]);
    let header = "qid\tsession\tposition\tdoc\tclick\n";
    let session = format!("{qid}\t7\t1\t1\t1\n{qid}\t7\t2\t2\t0\n{qid}\t7\t3\t3\t0\n");
    let read = |text: &[u8]| read_impressions(text, "log.tsv", &data, &[], None, &mut no_docids);
    let good = format!("{header}{session}{other}\t8\t1\t2\t0\n");
    let table = read(good.as_bytes()).unwrap();
    let cases: Vec<(String, Vec<&str>)> = vec![
        // The whole log appended to itself.
        (
            format!("{good}{session}"),
            vec!["line 6", "session 7", "began at line 2", "consecutive"],
        ),
        // One document at two ranks.
        (
            format!("{header}{qid}\t7\t1\t1\t1\n{qid}\t7\t2\t1\t0\n"),
            vec!["line 3", "session 7", "document 1 again", "line 2"],
        ),
        // Two documents at rank 1, none at rank 2.
        (
            format!("{header}{qid}\t7\t1\t1\t1\n{qid}\t7\t1\t2\t0\n{qid}\t7\t3\t3\t0\n"),
            vec!["line 3", "second document at rank 1", "line 2"],
        ),
    ];
    for (text, words) in cases {
        let message = read(text.as_bytes()).unwrap_err().to_string();
        assert!(message.contains("log.tsv"), "{message}");
        for w in words {
            assert!(message.contains(w), "{message:?} lacks {w:?}\n{text}");
        }
    }
    // The list's probability is the whole session's: one value a session, each its own.
    let with = "qid\tsession\tposition\tdoc\tclick\tlist_log_probability\n";
    let message = read(format!("{with}{qid}\t0\t1\t1\t1\t-1\n{qid}\t0\t2\t2\t0\t-3\n").as_bytes())
        .unwrap_err()
        .to_string();
    for w in [
        "line 3",
        "list_log_probability -3 in session 0",
        "line 2 gave -1",
        "one value a session",
    ] {
        assert!(message.contains(w), "{message:?} lacks {w:?}");
    }
    let each =
        format!("{with}{qid}\t0\t1\t1\t1\t-1\n{qid}\t0\t2\t2\t0\t-1\n{qid}\t1\t1\t2\t0\t-2\n");
    assert!(read(each.as_bytes()).is_ok());
    // The same session id in two queries is two sessions; ranks may skip.
    let two = format!("{header}{qid}\t7\t1\t1\t1\n{other}\t7\t1\t1\t0\n{other}\t7\t4\t2\t0\n");
    assert!(read(two.as_bytes()).is_ok());
    // Compressed, or with a byte-order mark: the same table.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, good.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let zipped = read(&gz).unwrap();
    assert_eq!(zipped.impressions, table.impressions);
    assert_eq!(zipped.clicks, table.clicks);
    let bom = [&b"\xEF\xBB\xBF"[..], good.as_bytes()].concat();
    assert_eq!(read(&bom).unwrap().impressions, table.impressions);
    // A truncated gzip stream is named as one, not echoed.
    let message = read(&gz[..gz.len() / 2]).unwrap_err().to_string();
    assert!(
        message.contains("gzip") && message.contains("log.tsv"),
        "{message}"
    );
}

/// A rank no session showed has no estimate (null in the report, never a number), and logs
/// without a click at rank 1, the rank the others are measured against, are refused.
#[test]
fn an_unshown_rank_is_unmeasured_and_rank_one_needs_clicks() {
    let (n_docs, shown) = (4, 3);
    let mut table = one_query(n_docs, shown, 0);
    for d in 0..n_docs {
        for k in 0..2 {
            table.impressions[d * shown + k] = 25;
            table.clicks[d * shown + k] = (5 + d as u32) / (k as u32 + 1);
        }
    }
    let estimated = em_propensities(&table).unwrap();
    assert_eq!(estimated[0], Some(1.0));
    assert!(
        estimated[1].is_some_and(|t| t > 0.0 && t < 1.0),
        "{estimated:?}"
    );
    assert_eq!(estimated[2], None);
    let report = ClickLabels::new(std::sync::Arc::new(table.clone()))
        .unwrap()
        .report_json();
    assert!(report["estimated_propensities"][2].is_null(), "{report}");
    // So are the propensities learned with a ranker.
    for label in [ClickLabel::Dla, ClickLabel::TwoTower] {
        let mut tower = PropensityTower::new(label, std::sync::Arc::new(table.clone()));
        let labels = tower.fit(&[0.5, -0.2, 0.1, 0.0]);
        assert!(
            labels.iter().all(|y| y.is_finite() && *y > 0.0),
            "{labels:?}"
        );
        let learned = tower.propensities();
        assert_eq!(learned[2], None, "{label:?}");
        assert!(
            learned[1].is_some_and(|t| t > 0.0),
            "{label:?}: {learned:?}"
        );
    }
    assert!(report["estimated_propensities_null"].is_string());
    for d in 0..n_docs {
        table.clicks[d * shown] = 0;
    }
    let message = em_propensities(&table).unwrap_err().to_string();
    assert!(
        message.contains("no click at displayed rank 1"),
        "{message}"
    );
}

/// An impressions log whose ranks go past the examination its sidecar gives is refused: the two
/// do not belong together.
#[test]
fn a_log_past_its_sidecars_ranks_is_refused() {
    use distillrank::data::logs::read_impressions;
    let [data, ..] = distillrank::data::bundled::mq2008().unwrap();
    let qid = data.qids[0];
    let text = format!("qid\tsession\tposition\tdoc\tclick\n{qid}\t0\t3\t1\t1\n");
    let message = read_impressions(
        text.as_bytes(),
        "log.tsv",
        &data,
        &[],
        Some(vec![1.0, 0.5]),
        &mut no_docids,
    )
    .unwrap_err()
    .to_string();
    assert!(
        message.contains("log.tsv") && message.contains("rank 3"),
        "{message}"
    );
}

/// Rows shown once each at a position, their y the click (Python's `position=`), make the clicks
/// by rank: one impression a row, a query's sessions its rows at position 1; a position outside its
/// list or a click other than 0 or 1 is refused naming the row and the field.
#[test]
fn rows_with_positions_make_the_clicks_by_rank() {
    use distillrank::data::logs::clicks_of_rows;
    let qids = [7u64, 7, 7, 9, 9];
    let clicks = [1.0, 0.0, 1.0, 0.0, 1.0];
    let data = distillrank::pipeline::preparation::dataset_from_arrays(
        "train",
        vec![0.5; qids.len()],
        1,
        &clicks,
        &qids,
    )
    .unwrap();
    let table = clicks_of_rows(&data, &[2, 1, 3, 1, 2], &clicks, "train").unwrap();
    assert_eq!(table.shown, 3);
    assert_eq!(table.of(0), (&[0, 1, 0][..], &[0, 1, 0][..]));
    assert_eq!(table.of(2), (&[0, 0, 1][..], &[0, 0, 1][..]));
    assert_eq!(table.of(4), (&[0, 1, 0][..], &[0, 1, 0][..]));
    // Naive relevance: clicks per session, one session a query.
    assert_eq!(relevance(&table, &[1.0; 3]), vec![1.0, 0.0, 1.0, 0.0, 1.0]);
    let refused = |positions: &[u64], clicks: &[f64], words: &str| {
        let message = clicks_of_rows(&data, positions, clicks, "train")
            .unwrap_err()
            .to_string();
        assert!(message.contains(words), "{message:?} lacks {words:?}");
    };
    refused(
        &[2, 1, 4, 1, 2],
        &clicks,
        "position, row 3: 4: expected a displayed rank in 1..=3, the rows of query 7",
    );
    refused(&[2, 1, 3, 0, 2], &clicks, "position, row 4: 0");
    // Far past its list: named as a position, not as the memory its clicks by rank would take.
    refused(
        &[2, 1, 1 << 60, 1, 2],
        &clicks,
        "position, row 3: 1152921504606846976: expected a displayed rank in 1..=3",
    );
    refused(
        &[2, 1, 3, 1, 2],
        &[1.0, 0.0, 1.0, 0.0, 2.0],
        "y, row 5: click 2: expected 0 or 1",
    );
    refused(&[2, 1, 3], &clicks, "3 positions for 5 rows");
    refused(
        &[2, 1, 3, 2, 2],
        &clicks,
        "position, rows 4..=5: query 9 has no row at position 1",
    );
}

/// `log_labels: click`: y is whether the document was clicked, the conversions, CTR and dwell
/// (which follow from the clicks) are neither x nor z, and z is the impressions and the mean
/// displayed position, so that PFD's teacher sees where each document was shown; the student
/// still reads the file's own features alone. PFD and the methods that learn from clicks then
/// compare on one label; a graded training label beside it is refused, naming both.
#[test]
fn click_labels_give_pfd_the_displayed_position_as_z() {
    let mut setup = clicks_setup(LossKind::Softmax);
    setup.data.log_labels = distillrank::setup::LogLabels::Click;
    setup.methods = vec![Method::Naive, Method::Pfd, Method::NoDistillation];
    let data = prepare(&setup).unwrap();
    let n = data.source_features;
    let logs = distillrank::data::logs::LogColumns::after(n);
    assert_eq!(
        data.prepared.privileged_columns,
        vec![logs.impressions, logs.mean_position]
    );
    let train = &data.prepared.train;
    assert_eq!(train.d_x, n);
    // y = 1[clicked], the documents whose naive relevance is above 0.
    let clicks = data.click_labels(&setup.methods).unwrap().unwrap();
    for (d, (&y, &r)) in train.labels.iter().zip(&clicks.naive).enumerate() {
        assert_eq!(
            y > 0.0,
            r > 0.0,
            "document {d}: y {y}, clicks per session {r}"
        );
    }
    assert!(train.labels.iter().any(|&y| y > 0.0) && train.labels.contains(&0.0));
    let comparison = distillrank::native::pipeline::compare(
        &data,
        &setup,
        &Engine::Cpu,
        &Stop::default(),
        &mut distillrank::pipeline::Silent,
    )
    .unwrap();
    assert!(comparison.get(Method::Pfd).is_some());
    setup.data.labels = distillrank::setup::Labels::Grades;
    let message = prepare(&setup).map(|_| ()).unwrap_err().to_string();
    assert!(message.contains("--log-labels click"), "{message}");
}

/// Why the comparison of `setup` on `data` is refused (the library's words), or None when its
/// configuration is made: what a door would print before training.
fn refusal(
    data: &distillrank::pipeline::preparation::PreparedData,
    setup: &Setup,
) -> Option<String> {
    distillrank::pipeline::run::compare_config(data, setup, &Engine::Cpu, &Stop::default())
        .err()
        .map(|e| e.to_string())
}

/// Without the logging policy's shuffles every document keeps its rank in every session: there is
/// no swap to harvest, and IPS (harvested) is refused, saying what would make them; nor can EM
/// tell examination from relevance, so IPS (estimated) is refused too. The methods that need
/// neither run.
#[test]
fn harvesting_needs_the_logging_policys_shuffles() {
    let mut setup = clicks_setup(LossKind::Softmax);
    setup.data.logs.shuffle = 0.0;
    let data = prepare(&setup).unwrap();
    for method in [Method::IpsHarvested, Method::IpsEstimated] {
        setup.methods = vec![method];
        let message = refusal(&data, &setup).expect("refused");
        assert!(
            message.contains(method.name()) && message.contains("--shuffle"),
            "{message}"
        );
    }
    setup.methods = vec![Method::Naive, Method::Dla];
    assert_eq!(refusal(&data, &setup), None);
    let clicks = data.click_labels(&setup.methods).unwrap().unwrap();
    assert!(clicks.harvested_propensities.is_none());
    assert!(clicks.report_json()["harvested_propensities"].is_null());
}

/// The docid comments of a data file without any: an impressions log that names its documents by
/// row never asks for them.
fn no_docids() -> distillrank::error::Result<distillrank::data::logs::DocIds> {
    Ok(Default::default())
}

/// An impressions log may name its documents by the data file's docid comments (MQ2008's `#docid =
/// GX...`) instead of their rows: both give the same clicks, through the library's reader and
/// through a compare on the files; a docid the query lacks, and a docid given for a file without
/// docid comments, are refused by line and field.
#[test]
fn an_impressions_log_may_name_documents_by_docid() {
    use distillrank::data::logs::{docids_of, read_impressions};
    let dir = tempfile::tempdir().unwrap();
    simulate_logs_of_mq2008(dir.path());
    let train = dir.path().join("train.txt");
    let log = dir.path().join("train.txt.impressions.tsv");
    let by_row = std::fs::read_to_string(&log).unwrap();
    // Each (qid, row) to its docid, from the file's comments.
    let ids = docids_of(&train, std::fs::File::open(&train).unwrap()).unwrap();
    let docid = |qid: u64, row: usize| -> String {
        ids[&qid].iter().find(|(_, &r)| r == row).unwrap().0.clone()
    };
    let mut lines = by_row.lines();
    let mut by_docid = format!("{}\n", lines.next().unwrap());
    for line in lines {
        let f: Vec<&str> = line.split('\t').collect();
        let qid: u64 = f[0].parse().unwrap();
        let row: usize = f[3].parse().unwrap();
        by_docid.push_str(&format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            f[0],
            f[1],
            f[2],
            docid(qid, row - 1),
            f[4],
            f[5]
        ));
    }
    assert!(by_docid.contains("GX"), "MQ2008's docids");
    let data =
        distillrank::data::letor::read_letor_file(&train, None, &Default::default()).unwrap();
    let mut read_ids = || docids_of(&train, std::fs::File::open(&train).unwrap());
    let a = read_impressions(by_row.as_bytes(), "log", &data, &[], None, &mut no_docids).unwrap();
    let b = read_impressions(by_docid.as_bytes(), "log", &data, &[], None, &mut read_ids).unwrap();
    assert_eq!(a, b);
    // Through a compare on the files, the sidecar naming the log.
    let source = DataSource::files(
        train.display().to_string(),
        Some(dir.path().join("vali.txt").display().to_string()),
        Some(dir.path().join("test.txt").display().to_string()),
    );
    let mut setup = clicks_setup(LossKind::RankNet);
    setup.data.source = source;
    let numbered = prepare(&setup).unwrap().clicks;
    std::fs::write(&log, &by_docid).unwrap();
    let named = prepare(&setup).unwrap().clicks;
    assert!(named.is_some());
    assert_eq!(named, numbered);
    // A docid the query lacks.
    let header_end = by_docid.find('\n').unwrap() + 1;
    let first: Vec<&str> = by_docid[header_end..]
        .lines()
        .next()
        .unwrap()
        .split('\t')
        .collect();
    let bad = format!(
        "{}{}\t0\t1\tGX-NOT-THERE\t0\t0\n",
        &by_docid[..header_end],
        first[0]
    );
    let message = read_impressions(bad.as_bytes(), "log", &data, &[], None, &mut read_ids)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("log, line 2: doc 'GX-NOT-THERE': query")
            && message.contains("no document with this docid"),
        "{message}"
    );
    // A file without docid comments.
    let message = read_impressions(by_docid.as_bytes(), "log", &data, &[], None, &mut no_docids)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("line 2: doc 'GX") && message.contains("no docid comments"),
        "{message}"
    );
}

/// The logging policy's list probability: its keys are the scores plus Gumbel noise, so each
/// ordered list is a Plackett-Luce draw. The probabilities of every ordered top-2 of three
/// documents sum to 1 and match the shares of 200,000 draws of the keys; without noise the list
/// is certain. Every line of the simulated log carries its session's value, the same on each of
/// its lines, and a value that is no log-probability is refused by line and field.
#[test]
fn the_logs_list_probabilities_are_the_logging_policys() {
    use distillrank::data::logs::{list_log_probability, read_impressions};
    let (scores, shuffle) = ([0.8, -0.3, 0.1], 0.5);
    let lists: Vec<[usize; 2]> = (0..3)
        .flat_map(|a| (0..3).filter(move |&b| b != a).map(move |b| [a, b]))
        .collect();
    let p: Vec<f64> = lists
        .iter()
        .map(|l| list_log_probability(&scores, l, shuffle).exp())
        .collect();
    assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{p:?}");
    let mut rng = Rng::stream(3, 4);
    let mut counts = vec![0u32; lists.len()];
    let draws = 200_000;
    for _ in 0..draws {
        let keys: Vec<f64> = scores.iter().map(|s| s + shuffle * rng.gumbel()).collect();
        let mut order = [0usize, 1, 2];
        order.sort_by(|&a, &b| keys[b].total_cmp(&keys[a]));
        counts[lists.iter().position(|l| l[..] == order[..2]).unwrap()] += 1;
    }
    for ((l, &c), &want) in lists.iter().zip(&counts).zip(&p) {
        let share = c as f64 / draws as f64;
        assert!(
            (share - want).abs() < 0.005,
            "{l:?}: {share} drawn, {want} computed"
        );
    }
    assert_eq!(list_log_probability(&scores, &[0, 2], 0.0), 0.0);
    // In the simulated log: one value a session, a log-probability.
    let [data, ..] = distillrank::data::bundled::mq2008().unwrap();
    let options = LogOptions::default();
    let logs = simulate(&[&data], &["MQ2008".into()], &options).unwrap();
    let mut text = Vec::new();
    logs.write_impressions(&data, &options, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    let mut by_session = std::collections::HashMap::new();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let value: f64 = f[5].parse().unwrap();
        assert!(value <= 0.0 && value.is_finite(), "{line}");
        let first = *by_session.entry((f[0], f[1])).or_insert(value);
        assert_eq!(first, value, "{line}");
    }
    assert!(by_session.values().any(|&v| v < -1.0));
    let header = text.lines().next().unwrap();
    let one = text.lines().nth(1).unwrap();
    let cut = one.rfind('\t').unwrap();
    for bad in ["0.5", "x", "inf"] {
        let log = format!("{header}\n{}\t{bad}\n", &one[..cut]);
        let message = read_impressions(log.as_bytes(), "log.tsv", &data, &[], None, &mut no_docids)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("log.tsv, line 2: list_log_probability") && message.contains("<= 0"),
            "{message}"
        );
    }
}

/// EM's refusal (here a rank whose estimated propensity is below the floor, under a steep
/// position bias) refuses IPS (estimated) alone, by name: the methods that do not read EM's
/// estimate still run on the same logs. It used to stop every method that learns from clicks.
#[test]
fn an_em_refusal_refuses_ips_estimated_alone() {
    let (n_docs, shown) = (4, 3);
    let mut table = one_query(n_docs, shown, 50);
    for d in 0..n_docs {
        table.clicks[d * shown] = 10 + d as u32;
        table.clicks[d * shown + 1] = 5;
    }
    let clicks = ClickLabels::new(std::sync::Arc::new(table)).unwrap();
    let why = clicks.ips_estimated.clone().unwrap_err();
    assert!(why.contains("rank 3"), "{why}");
    assert!(clicks.naive.iter().any(|&r| r > 0.0));
    let report = clicks.report_json();
    assert!(report["estimated_propensities"].is_null(), "{report}");
    assert!(
        report["estimated_propensities_null"]
            .as_str()
            .is_some_and(|s| s.contains("rank 3")),
        "{report}"
    );
    // Through a comparison's data: ips-estimated is refused by name, naive and DLA are not.
    let mut setup = clicks_setup(LossKind::Softmax);
    setup.data.logs.position_bias = 8.0;
    setup.methods = vec![Method::IpsEstimated];
    let data = prepare(&setup).unwrap();
    let message = refusal(&data, &setup).expect("refused");
    assert!(
        message.contains("ips-estimated") && message.contains("below 0.001 of rank 1's"),
        "{message}"
    );
    setup.methods = vec![Method::Naive, Method::Dla];
    assert_eq!(refusal(&data, &setup), None);
}

/// Positions deep down a long list make the clicks by rank (a cell per row and rank) larger than
/// any memory: refused by their size, naming the rows and the depth, before anything is
/// allocated. It used to allocate until the process died.
#[test]
fn positions_too_deep_for_memory_are_refused_by_their_size() {
    use distillrank::data::logs::clicks_of_rows;
    let rows = 400_000;
    let qids = vec![1u64; rows];
    let clicks: Vec<f64> = (0..rows).map(|r| (r % 2) as f64).collect();
    let data = distillrank::pipeline::preparation::dataset_from_arrays(
        "train",
        vec![0.5; rows],
        1,
        &clicks,
        &qids,
    )
    .unwrap();
    let positions: Vec<u64> = (1..=rows as u64).collect();
    let message = clicks_of_rows(&data, &positions, &clicks, "train")
        .unwrap_err()
        .to_string();
    assert!(
        message
            .contains("train's clicks by rank (400000 rows, positions down to 400000) need up to")
            && message.contains("give the positions of the top of each list only"),
        "{message}"
    );
}

/// What the clicks cannot identify is refused by name, whatever door they came through:
/// - EM needs documents shown at more than one rank; one impression a row (Python's
///   `position=`) shows each row once, and so does a log whose ranker never moved a document.
///   EM used to fit about 1 at every rank there, naive clicks under another name;
/// - full information needs grades, and the rows given with positions hold clicks as y.
#[test]
fn estimates_the_clicks_cannot_identify_are_refused_by_name() {
    use distillrank::data::logs::clicks_of_rows;
    use distillrank::ranking::clicks::training_set;
    // Ten lists of three rows, each row its own document, clicked more near the top.
    let lists = 10;
    let qids: Vec<u64> = (0..lists).flat_map(|q| [q; 3]).collect();
    let clicks: Vec<f64> = (0..lists * 3)
        .map(|r| f64::from(r % 3 == 0 || r % 7 == 1))
        .collect();
    let positions: Vec<u64> = (0..lists * 3).map(|r| r % 3 + 1).collect();
    let features: Vec<f32> = (0..lists * 3).map(|r| r as f32).collect();
    let data = distillrank::pipeline::preparation::dataset_from_arrays(
        "train", features, 1, &clicks, &qids,
    )
    .unwrap();
    let table = clicks_of_rows(&data, &positions, &clicks, "train").unwrap();
    assert!(table.from_rows);
    let message = em_propensities(&table).unwrap_err().to_string();
    assert!(
        message.contains("EM cannot tell a rank's examination from its documents' relevance")
            && message.contains("position="),
        "{message}"
    );
    let labels = ClickLabels::new(std::sync::Arc::new(table.clone())).unwrap();
    let train = distillrank::data::prepare::RankingSet {
        regular: Vec::new().into(),
        d_x: 1,
        privileged: Vec::new().into(),
        d_z: 0,
        grades: data.grades.clone(),
        labels: clicks.iter().map(|&c| c as f32).collect(),
        group_offsets: data.group_offsets.clone(),
        positive_group: vec![true; lists as usize],
        qids: data.qids.clone(),
    };
    for (label, method, words) in [
        (ClickLabel::IpsEstimated, "ips-estimated", "EM cannot tell"),
        (
            ClickLabel::FullInformation,
            "full-information",
            "no grades beside them",
        ),
    ] {
        let message = training_set(label, method, &train, Some(&labels))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(method) && message.contains(words),
            "{message}"
        );
    }
    // The naive estimates train as before.
    training_set(ClickLabel::Naive, "naive", &train, Some(&labels)).unwrap();
    // A log (not rows) whose ranker never moved a document: the same refusal, with the log's
    // remedy.
    let log = ClickTable {
        from_rows: false,
        conversions: None,
        dwell_ms: None,
        ..table
    };
    let message = em_propensities(&log).unwrap_err().to_string();
    assert!(message.contains("--shuffle"), "{message}");
}

/// Numeric docids (MSLR's and Yahoo's are numbers): under a `doc` column a whole number is the
/// document's row, so a log naming documents by such docids was read as rows (refused past the
/// query's rows, or matched to the wrong documents within them). A column named `docid` matches
/// every document by its docid, numbers included.
#[test]
fn a_docid_column_matches_numeric_docids() {
    use distillrank::data::logs::{docids_of, read_impressions};
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.txt");
    // Two queries of three documents; docid 3 is the first row of query 1 and 1 its last.
    std::fs::write(
        &train,
        "2 qid:1 1:0.5 #docid = 3\n1 qid:1 1:0.4 #docid = 2\n0 qid:1 1:0.3 #docid = 1\n\
         2 qid:2 1:0.5 #docid = 40\n1 qid:2 1:0.2 #docid = 50\n0 qid:2 1:0.1 #docid = 60\n",
    )
    .unwrap();
    let data =
        distillrank::data::letor::read_letor_file(&train, None, &Default::default()).unwrap();
    let mut read_ids = || docids_of(&train, std::fs::File::open(&train).unwrap());
    let lines = "1\t0\t1\t1\t1\n1\t0\t2\t3\t0\n2\t0\t1\t40\t1\n2\t0\t2\t50\t0\n";
    let named = read_impressions(
        format!("qid\tsession\tposition\tdocid\tclick\n{lines}").as_bytes(),
        "log",
        &data,
        &[],
        None,
        &mut read_ids,
    )
    .unwrap();
    // Docid 1 (query 1's third row) clicked at rank 1; docid 3 (its first row) shown at rank 2.
    assert_eq!(named.of(2), (&[1, 0][..], &[1, 0][..]));
    assert_eq!(named.of(0), (&[0, 1][..], &[0, 0][..]));
    assert_eq!(named.of(3), (&[1, 0][..], &[1, 0][..]));
    // The same lines under `doc`: rows, so docid 40 is past query 2's three rows.
    let message = read_impressions(
        format!("qid\tsession\tposition\tdoc\tclick\n{lines}").as_bytes(),
        "log",
        &data,
        &[],
        None,
        &mut read_ids,
    )
    .unwrap_err()
    .to_string();
    assert!(
        message.contains("line 4: doc 40: query 2 has documents 1..=3"),
        "{message}"
    );
    // A docid column over a file without docid comments is refused by line.
    let message = read_impressions(
        format!("qid\tsession\tposition\tdocid\tclick\n{lines}").as_bytes(),
        "log",
        &data,
        &[],
        None,
        &mut no_docids,
    )
    .unwrap_err()
    .to_string();
    assert!(
        message.contains("line 2: doc '1'") && message.contains("no docid comments"),
        "{message}"
    );
}

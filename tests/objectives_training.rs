//! The global objectives' data and training: the synthetic imbalanced task, LETOR documents as
//! examples, configuration errors, divergence, and the epoch choice (`distillrank objectives`
//! end to end is in tests/cli.rs).

#![cfg(not(target_arch = "wasm32"))]
// The references here use the platform's exp and ln, independently of the library's crate::math.
#![allow(clippy::disallowed_methods)]

use distillrank::data::Dataset;
use distillrank::engine::Engine;
use distillrank::error::Error;
use distillrank::model::objective::Targets;
use distillrank::model::objective::{default_dual_rate_factor, Config};
use distillrank::objectives::data::{from_letor, synthetic, SynthBinaryOptions};
use distillrank::objectives::train::{
    better_epoch, ConstraintCheck, EpochLog, Event, Trained, CONSTRAINT_TOLERANCE,
};

/// A classifier trained on the CPU engine.
fn fit(
    train: &distillrank::objectives::data::BinarySet,
    valid: &distillrank::objectives::data::BinarySet,
    config: &Config,
    on: &mut dyn FnMut(Event),
) -> distillrank::error::Result<Trained> {
    distillrank::native::objectives::fit(&Engine::Cpu, train, valid, config, on)
}
use distillrank::model::objective::{Objective, Surrogate};

fn small_task(positive_rate: f64) -> distillrank::objectives::data::BinarySplits {
    synthetic(&SynthBinaryOptions {
        train: 6000,
        valid: 3000,
        test: 3000,
        features: 10,
        positive_rate,
        noise: 0.5,
        seed: 3,
    })
    .unwrap()
}

#[test]
fn synthetic_task_is_imbalanced_seeded_and_checked() {
    let a = small_task(0.05);
    let total = a.train.positives() + a.valid.positives() + a.test.positives();
    assert_eq!(total, 600, "5% of 12,000 examples");
    for set in [&a.train, &a.valid, &a.test] {
        let rate = set.positives() as f64 / set.len() as f64;
        assert!((0.03..0.07).contains(&rate), "{rate}");
    }
    assert_eq!(small_task(0.05).train, a.train);
    let base = SynthBinaryOptions::default();
    for bad in [
        SynthBinaryOptions {
            positive_rate: 0.0,
            ..base.clone()
        },
        SynthBinaryOptions {
            positive_rate: 1.0,
            ..base.clone()
        },
        SynthBinaryOptions {
            features: 2,
            ..base.clone()
        },
        SynthBinaryOptions {
            valid: 0,
            ..base.clone()
        },
        SynthBinaryOptions {
            noise: f64::NAN,
            ..base.clone()
        },
    ] {
        assert!(matches!(synthetic(&bad), Err(Error::Config(_))), "{bad:?}");
    }
    // So few positives that a split has none: a data error naming the split.
    match synthetic(&SynthBinaryOptions {
        train: 50,
        valid: 50,
        test: 5000,
        positive_rate: 0.001,
        ..base
    }) {
        Err(Error::Data(m)) => assert!(m.contains("split has 0 positive"), "{m}"),
        other => panic!("{:?}", other.map(|s| s.description)),
    }
}

#[test]
fn letor_documents_become_examples_labelled_by_grade() {
    let dataset = |grades: Vec<u8>, n_features: usize| Dataset {
        n_features,
        features: (0..grades.len() * n_features)
            .map(|v| v as f32 - 3.0)
            .collect(),
        group_offsets: vec![0, grades.len()],
        qids: vec![1],
        grades,
        source: None,
        feature_names: None,
    };
    let train = dataset(vec![0, 1, 2, 0], 3);
    let valid = dataset(vec![2, 0], 2); // fewer trailing columns: padded with 0
    let test = dataset(vec![0, 2, 0], 3);
    let splits = from_letor(&train, &valid, &test, 2, "t".into()).unwrap();
    assert_eq!(splits.train.y, vec![0.0, 0.0, 1.0, 0.0]);
    assert_eq!(splits.valid.n_features, 3);
    assert_eq!(splits.valid.x[3..6], [-(1f32.ln_1p()), 0.0, 0.0]);
    // Said, never without a word.
    assert!(
        splits
            .description
            .contains("has 2 feature columns against the training file's 3: its last 1 read as 0"),
        "{}",
        splits.description
    );
    assert_eq!(splits.train.x[0], -(3f32.ln_1p()));
    // Threshold 2 leaves the test split without positives.
    match from_letor(&train, &valid, &dataset(vec![0, 1, 1], 3), 2, "t".into()) {
        Err(Error::Data(m)) => assert!(m.contains("test split"), "{m}"),
        other => panic!("{:?}", other.map(|s| s.description)),
    }
    assert!(matches!(
        from_letor(&train, &valid, &test, 0, "t".into()),
        Err(Error::Config(_))
    ));
    assert!(matches!(
        from_letor(&train, &dataset(vec![1, 0], 4), &test, 1, "t".into()),
        Err(Error::Config(_))
    ));
}

#[test]
fn training_configuration_errors() {
    let splits = small_task(0.05);
    let bad = |c: Config| match fit(&splits.train, &splits.valid, &c, &mut |_| {}) {
        Err(Error::Config(m)) => m,
        other => panic!("{:?}", other.map(|t| t.best_epoch)),
    };
    let base = Config::default();
    let targets = Targets {
        precision: 1.0,
        recall: 0.9,
    };
    for (config, needle) in [
        (
            Config {
                dual_rate_factor: -1.0,
                ..base.clone()
            },
            "dual rate factor",
        ),
        (
            Config {
                initial_lambda: -0.5,
                ..base.clone()
            },
            "initial lambda",
        ),
        (
            Config {
                objective: Objective::RecallAtPrecision(1.5),
                ..base.clone()
            },
            "between 0 and 1",
        ),
        (
            Config {
                batch_size: 0,
                ..base.clone()
            },
            "batch size",
        ),
        (
            Config {
                epochs: 0,
                ..base.clone()
            },
            "epochs",
        ),
        (
            Config {
                targets,
                ..base.clone()
            },
            "target precision",
        ),
    ] {
        let message = bad(config);
        assert!(message.contains(needle), "{message}");
    }
}

#[test]
fn training_diverges_into_an_error_not_a_panic() {
    let splits = small_task(0.05);
    let config = Config {
        objective: Objective::PrecisionAtRecall(0.9),
        surrogate: Surrogate::Hinge,
        adam: distillrank::model::adam::AdamConfig {
            lr: 1e30,
            ..Default::default()
        },
        dual_rate_factor: 1e30,
        epochs: 3,
        ..Config::default()
    };
    match fit(&splits.train, &splits.valid, &config, &mut |_| {}) {
        Err(Error::Diverged { what, .. }) => assert!(!what.is_empty()),
        other => panic!("{:?}", other.map(|t| t.best_epoch)),
    }
}

#[test]
fn auc_pr_objective_trains_and_the_recall_at_precision_constraint_is_checked() {
    let splits = small_task(0.05);
    let base_rate = splits.valid.positives() as f64 / splits.valid.len() as f64;
    let config = Config {
        objective: Objective::AucPr { anchors: 10 },
        epochs: 6,
        patience: None,
        ..Config::default()
    };
    let mut epochs = 0;
    let trained = fit(&splits.train, &splits.valid, &config, &mut |e| {
        if let Event::Epoch(_) = e {
            epochs += 1
        }
    })
    .unwrap();
    assert_eq!((epochs, trained.history.len()), (6, 6));
    let first = trained.history[0].valid.auc_pr;
    assert!(
        trained.valid.auc_pr > first,
        "{} after epoch 1, best {}",
        first,
        trained.valid.auc_pr
    );
    // Far above a random ranking, whose AUC-PR is the positive rate.
    assert!(
        trained.valid.auc_pr > 5.0 * base_rate,
        "{} vs rate {base_rate}",
        trained.valid.auc_pr
    );
    // The anchor biases trained, each multiplier logged every epoch and never negative.
    assert!(
        trained.params.biases.iter().any(|b| b.abs() > 1e-3),
        "{:?}",
        trained.params.biases
    );
    assert!(trained
        .history
        .iter()
        .all(|h| h.lambdas.len() == 10 && h.lambdas.iter().all(|&l| l >= 0.0)));
    assert!(trained.constraint.is_none());

    // Recall at precision 0.8 with the default dual rate: the multiplier rises while the
    // constraint is violated, the constraint is checked at f > 0 on validation every epoch, and the
    // chosen epoch is the one of best validation AUC-PR among the epochs whose constraint holds:
    // its validation precision is at least the target (within CONSTRAINT_TOLERANCE when no epoch
    // meets it exactly).
    let alpha = 0.8;
    let config = Config {
        objective: Objective::RecallAtPrecision(alpha),
        epochs: 8,
        patience: None,
        ..Config::default()
    };
    assert_eq!(config.dual_rate_factor, default_dual_rate_factor());
    let trained = fit(&splits.train, &splits.valid, &config, &mut |_| {}).unwrap();
    let lambdas: Vec<f64> = trained.history.iter().map(|h| h.lambdas[0]).collect();
    assert!(lambdas[0] > 2.0, "{lambdas:?}");
    let checks: Vec<ConstraintCheck> = trained
        .history
        .iter()
        .map(|h| h.constraint.unwrap())
        .collect();
    for check in &checks {
        assert_eq!(
            (check.quantity, check.target, check.at_least),
            ("precision", alpha, true)
        );
        assert_eq!(check.holds, check.value.is_some_and(|p| p >= alpha));
    }
    let chosen = trained.constraint.unwrap();
    let precision = chosen.value.unwrap();
    assert!(
        chosen.holds_within(CONSTRAINT_TOLERANCE),
        "validation precision {precision} at f > 0 at the chosen epoch {}, target {alpha}; per epoch {:?}",
        trained.best_epoch,
        checks.iter().map(|c| c.value).collect::<Vec<_>>()
    );
    let feasible: Vec<&EpochLog> = trained
        .history
        .iter()
        .filter(|h| h.constraint.unwrap().holds)
        .collect();
    if let Some(best) = feasible
        .iter()
        .max_by(|a, b| a.valid.auc_pr.total_cmp(&b.valid.auc_pr))
    {
        assert_eq!(
            trained.best_epoch, best.epoch,
            "best AUC-PR among feasible epochs"
        );
    }
    // The chosen epoch is not merely feasible: far above a random ranking.
    assert!(
        trained.valid.auc_pr > 5.0 * base_rate,
        "{} vs rate {base_rate}",
        trained.valid.auc_pr
    );
}

/// The epoch order: an epoch whose constraint holds beats one whose constraint fails whatever
/// their AUC-PR; then AUC-PR among feasible epochs, violation among infeasible ones; AUC-PR alone
/// without a constraint.
#[test]
fn epochs_are_chosen_by_auc_pr_among_those_whose_constraint_holds() {
    let splits = small_task(0.05);
    let config = Config {
        objective: Objective::RecallAtPrecision(0.8),
        epochs: 1,
        ..Config::default()
    };
    let log = fit(&splits.train, &splits.valid, &config, &mut |_| {})
        .unwrap()
        .history
        .remove(0);
    let epoch = |auc_pr: f64, precision: Option<f64>| {
        let mut e = log.clone();
        e.valid.auc_pr = auc_pr;
        e.constraint = e.constraint.map(|c| ConstraintCheck {
            value: precision,
            holds: precision.is_some_and(|p| p >= c.target),
            ..c
        });
        e
    };
    assert!(better_epoch(
        &epoch(0.3, Some(0.81)),
        &epoch(0.9, Some(0.79))
    ));
    assert!(!better_epoch(
        &epoch(0.9, Some(0.79)),
        &epoch(0.3, Some(0.81))
    ));
    assert!(better_epoch(
        &epoch(0.6, Some(0.85)),
        &epoch(0.5, Some(0.95))
    ));
    assert!(better_epoch(
        &epoch(0.2, Some(0.78)),
        &epoch(0.9, Some(0.5))
    ));
    assert!(
        better_epoch(&epoch(0.2, Some(0.5)), &epoch(0.9, None)),
        "undefined precision counts as 0"
    );
    let c = epoch(0.5, Some(0.785)).constraint.unwrap();
    assert!((c.violation() - 0.015).abs() < 1e-12 && c.holds_within(0.02) && !c.holds_within(0.01));
    let mut plain = epoch(0.5, None);
    plain.constraint = None;
    let mut better = plain.clone();
    better.valid.auc_pr = 0.6;
    assert!(better_epoch(&better, &plain) && !better_epoch(&plain, &better));
}

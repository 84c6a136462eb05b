//! The global objectives' comparison: its examples, its runs over the seeds and its report.

use super::store::{Role, Store};
use super::Reporter;
use crate::data::prepare::hold_out_test;
use crate::data::Dataset;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::model::objective::Targets;
use crate::model::objective::{precision_anchors, Objective};
use crate::objectives::data::{from_letor, synthetic, BinarySplits};
use crate::objectives::experiment::{compare_async as objectives_over_seeds, ObjectiveRuns, Run};
use crate::objectives::metrics::BinaryMetrics;
use crate::objectives::train::{Event as ObjectiveEvent, CONSTRAINT_TOLERANCE};
use crate::setup::{ObjectivesData, ObjectivesSetup, HOLDOUT};

/// The binary examples of a global objectives' setup: the synthetic task, or the files of
/// `store`, each document an example, positive when its grade reaches the setup's threshold. A
/// missing test split is held out of the training queries, then a missing validation split of
/// the rest ([`HOLDOUT`]).
pub fn objectives_data(
    setup: &ObjectivesSetup,
    store: &mut dyn Store,
    reporter: &mut dyn Reporter,
) -> Result<BinarySplits> {
    // The settings none of its objectives reads, warned of where a run reads its data (the CLI,
    // Python; results.json's `unused_settings` holds them too).
    for sentence in setup.unused_settings() {
        reporter.warn(&sentence);
    }
    let (train, valid, test, threshold) = match &setup.data {
        ObjectivesData::Synthetic(options) => return synthetic(options),
        ObjectivesData::Mq2008 { threshold } => {
            let [train, valid, test] = crate::data::bundled::mq2008()?;
            return from_letor(
                &train,
                &valid,
                &test,
                *threshold,
                format!("MQ2008 Fold1, bundled, each document positive when grade >= {threshold}"),
            );
        }
        ObjectivesData::Files {
            train,
            valid,
            test,
            threshold,
            ..
        } => (train, valid, test, *threshold),
    };
    // Every file there before any is read.
    store.check_data_files([Some(train.as_str()), valid.as_deref(), test.as_deref()])?;
    let train_data = store.load(train, Role::Train, reporter)?;
    let valid_data = valid
        .as_deref()
        .map(|name| store.load(name, Role::Valid, reporter))
        .transpose()?;
    let test_data = test
        .as_deref()
        .map(|name| store.load(name, Role::Test, reporter))
        .transpose()?;
    // Columns are read by position: named ones (Parquet's) in the same order in every file.
    crate::data::check_splits_named([
        (Some(train.as_str()), Some(&train_data)),
        (valid.as_deref(), valid_data.as_ref()),
        (test.as_deref(), test_data.as_ref()),
    ])?;
    // A split held out of the training file is named as such in messages, not as the file.
    let held_out = |(rest, mut held): (Dataset, Dataset), share: f64| {
        held.source = Some(std::path::PathBuf::from(format!(
            "{:.0}% of {train}'s queries, held out",
            100.0 * share
        )));
        (rest, held)
    };
    let (train_data, test_data) = match test_data {
        Some(test) => (train_data, test),
        None => held_out(hold_out_test(&train_data, HOLDOUT.1, 0)?, HOLDOUT.1),
    };
    let (train_data, valid_data) = match valid_data {
        Some(valid) => (train_data, valid),
        None => held_out(hold_out_test(&train_data, HOLDOUT.0, 1)?, HOLDOUT.0),
    };
    let named = |name: &Option<String>, share: f64| {
        name.clone()
            .unwrap_or_else(|| format!("{:.0}% of the training queries held out", 100.0 * share))
    };
    from_letor(
        &train_data,
        &valid_data,
        &test_data,
        threshold,
        format!(
            "LETOR documents of {train} / {} / {}, positive when grade >= {threshold}",
            named(valid, HOLDOUT.0),
            named(test, HOLDOUT.1)
        ),
    )
}

/// Trains every objective of `setup` over its seeds on `splits`, on `engine`; with
/// `only = Some((i, k))`, the `i`-th objective at the setup's `k`-th seed alone (`first_seed + k`:
/// one job of the page's pool of workers). `on` hears each model's progress with its label
/// (`objective, seed N`).
pub async fn objectives_async(
    splits: &BinarySplits,
    setup: &ObjectivesSetup,
    only: Option<(usize, u64)>,
    engine: &Engine,
    on: &mut dyn FnMut(&str, ObjectiveEvent),
) -> Result<Vec<ObjectiveRuns>> {
    let config = setup.config()?;
    let (objectives, seeds) = match only {
        None => (setup.objectives.clone(), (setup.seeds, setup.first_seed)),
        Some((index, k)) => {
            if k >= setup.seeds as u64 {
                return Err(Error::Config(format!(
                    "seed {k} of the objectives: the setup has {}",
                    setup.seeds
                )));
            }
            let objective = *setup.objectives.get(index).ok_or_else(|| {
                Error::Config(format!(
                    "objective {index}: the setup has {}",
                    setup.objectives.len()
                ))
            })?;
            (vec![objective], (1, setup.first_seed.wrapping_add(k)))
        }
    };
    objectives_over_seeds(splits, &objectives, &config, seeds, engine, on).await
}

/// A test metric of the objectives' comparison: (JSON key, column title, value).
pub type MetricColumn = (&'static str, String, fn(&BinaryMetrics) -> f64);

/// The objectives' test metrics, in the order of the CLI's table.
pub fn metric_columns(targets: &Targets) -> Vec<MetricColumn> {
    vec![
        ("auc_pr", "AUC-PR (AP)".into(), |m| m.auc_pr),
        ("auc_roc", "AUC-ROC".into(), |m| m.auc_roc),
        (
            "recall_at_precision",
            format!("R@P{}", targets.precision),
            |m| m.recall_at_precision,
        ),
        (
            "precision_at_recall",
            format!("P@R{}", targets.recall),
            |m| m.precision_at_recall,
        ),
        ("f1", "F1 (f > 0)".into(), |m| m.f1),
        ("accuracy", "accuracy (f > 0)".into(), |m| m.accuracy),
        ("auc_pr_trapezoid", "AUC-PR (trapezoid)".into(), |m| {
            m.auc_pr_trapezoid
        }),
    ]
}

/// What the objectives' comparison found, as its `results.json` holds it (the CLI adds the
/// command and the seconds): the data, the examples and positives per split, the training
/// configuration, and per objective every test metric (mean, std and per seed), the validation
/// AUC-PR, the constraint, the multipliers' trajectories and the runs.
pub fn objectives_results_json(
    splits: &BinarySplits,
    setup: &ObjectivesSetup,
    results: &[ObjectiveRuns],
) -> Result<serde_json::Value> {
    let config = setup.config()?;
    let mut objectives = serde_json::Map::new();
    for r in results {
        let mut o = serde_json::Map::new();
        for (key, _, f) in metric_columns(&config.targets) {
            let (mean, std) = r.stat(|run| f(&run.test));
            let per_seed: Vec<f64> = r.runs.iter().map(|run| f(&run.test)).collect();
            o.insert(
                key.into(),
                serde_json::json!({"mean": mean, "std": std, "per_seed": per_seed}),
            );
        }
        let (mean, std) = r.stat(|run| run.valid.auc_pr);
        o.insert(
            "valid_auc_pr".into(),
            serde_json::json!({"mean": mean, "std": std}),
        );
        if let Some((held, seeds)) = r.constraint_held() {
            o.insert(
                "constraint".into(),
                serde_json::json!({
                    "valid_held": held,
                    "valid_held_within_tolerance": r.constraint_held_within(CONSTRAINT_TOLERANCE).map(|h| h.0),
                    "tolerance": CONSTRAINT_TOLERANCE,
                    "seeds": seeds,
                    "valid": r.runs.iter().map(|run| run.valid_constraint).collect::<Vec<_>>(),
                    "test": r.runs.iter().map(|run| run.test_constraint).collect::<Vec<_>>(),
                }),
            );
        }
        // The multipliers' trajectories: per seed, per epoch, one value per multiplier.
        let lambdas: Vec<Vec<&Vec<f64>>> = r
            .runs
            .iter()
            .map(|run| run.history.iter().map(|h| &h.lambdas).collect())
            .collect();
        o.insert("lambdas".into(), serde_json::json!(lambdas));
        if let Objective::AucPr { anchors } = r.objective {
            o.insert(
                "precision_anchors".into(),
                serde_json::json!(precision_anchors(anchors)),
            );
        }
        o.insert(
            "runs".into(),
            r.runs.iter().map(objective_run_json).collect(),
        );
        objectives.insert(r.objective.name(), serde_json::Value::Object(o));
    }
    let mut results = serde_json::json!({
        "data": splits.description,
        "examples": {
            "train": [splits.train.len(), splits.train.positives()],
            "valid": [splits.valid.len(), splits.valid.positives()],
            "test": [splits.test.len(), splits.test.positives()],
        },
        "config": config,
        "seeds": setup.seeds,
        "first_seed": setup.first_seed,
        "objectives": objectives,
    });
    // What none of the objectives reads, as a comparison's results.json names it.
    let unused = setup.unused_settings();
    if !unused.is_empty() {
        results["unused_settings"] = unused.into();
    }
    Ok(results)
}

/// One run: its best epoch's validation and test figures and anchor biases, and per epoch
/// the loss, the label prior, the validation AUC-PR and AUC-ROC and the constraint's value (the
/// multipliers per epoch are the objective's `lambdas`).
fn objective_run_json(run: &Run) -> serde_json::Value {
    let history: Vec<serde_json::Value> = run
        .history
        .iter()
        .map(|h| {
            serde_json::json!({
                "epoch": h.epoch,
                "loss": h.loss,
                "label_prior": h.label_prior,
                "valid_auc_pr": h.valid.auc_pr,
                "valid_auc_roc": h.valid.auc_roc,
                "valid_constraint": h.constraint.and_then(|c| c.value),
                "seconds": h.seconds,
            })
        })
        .collect();
    serde_json::json!({
        "seed": run.seed,
        "best_epoch": run.best_epoch,
        "valid": run.valid,
        "test": run.test,
        "valid_constraint": run.valid_constraint,
        "test_constraint": run.test_constraint,
        "biases_at_best_epoch": run.best_epoch.checked_sub(1).and_then(|e| run.history.get(e)).map(|h| &h.biases),
        "history": history,
    })
}

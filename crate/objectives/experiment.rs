//! Several objectives over several seeds on the same splits: what `distillrank objectives`
//! reports.

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::metrics::mean_std;
use crate::objectives::metrics::{evaluate, BinaryMetrics};

use super::data::BinarySplits;
use super::train::{fit_async, ConstraintCheck, EpochLog, Event};
use crate::model::objective::Config;
use crate::model::objective::Objective;

/// One trained model: its best epoch's validation figures and its test figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Run {
    pub seed: u64,
    pub best_epoch: usize,
    pub valid: BinaryMetrics,
    pub test: BinaryMetrics,
    /// The objective's constraint at the decision f > 0, on validation and on test.
    pub valid_constraint: Option<ConstraintCheck>,
    pub test_constraint: Option<ConstraintCheck>,
    /// Per epoch: losses, multipliers, anchor biases, validation metrics.
    pub history: Vec<EpochLog>,
}

/// Every seed of one objective.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ObjectiveRuns {
    pub objective: Objective,
    pub runs: Vec<Run>,
}

impl ObjectiveRuns {
    /// Mean and standard deviation (n - 1) over seeds of a statistic of the runs.
    pub fn stat(&self, f: impl Fn(&Run) -> f64) -> (f64, f64) {
        mean_std(&self.runs.iter().map(f).collect::<Vec<_>>())
    }
    /// Seeds whose constraint held on validation, out of the seeds; `None` without a constraint.
    pub fn constraint_held(&self) -> Option<(usize, usize)> {
        self.constraint_held_within(0.0)
    }
    /// Seeds whose constraint held on validation or missed its target by at most `tolerance`.
    pub fn constraint_held_within(&self, tolerance: f64) -> Option<(usize, usize)> {
        let checks: Vec<&ConstraintCheck> = self
            .runs
            .iter()
            .filter_map(|r| r.valid_constraint.as_ref())
            .collect();
        let held = |c: &&&ConstraintCheck| c.holds || c.holds_within(tolerance);
        (!checks.is_empty()).then(|| (checks.iter().filter(held).count(), checks.len()))
    }
}

/// [`compare`] on `engine`: every model trains and scores its test examples there.
pub async fn compare_async(
    splits: &BinarySplits,
    objectives: &[Objective],
    base: &Config,
    (seeds, first_seed): (usize, u64),
    engine: &Engine,
    on: &mut dyn FnMut(&str, Event),
) -> Result<Vec<ObjectiveRuns>> {
    if objectives.is_empty() || seeds == 0 {
        return Err(Error::Config(
            "at least one objective and one seed are needed".into(),
        ));
    }
    let mut results = Vec::new();
    for objective in objectives {
        let mut runs = Vec::new();
        // Seeds are names in the 64-bit space: `first_seed` and the next ones, wrapping around.
        for seed in (0..seeds as u64).map(|s| first_seed.wrapping_add(s)) {
            let config = Config {
                objective: *objective,
                seed,
                ..base.clone()
            };
            let label = format!("{objective}, seed {seed}");
            let trained = fit_async(engine, &splits.train, &splits.valid, &config, &mut |e| {
                on(&label, e)
            })
            .await?;
            let scores = engine.score(&trained.model, splits.test.inputs()).await?;
            let test = evaluate(&scores, &splits.test.y, config.targets).ok_or_else(|| {
                Error::Data("the test split needs positive and negative examples".into())
            })?;
            runs.push(Run {
                seed,
                best_epoch: trained.best_epoch,
                valid: trained.valid,
                test_constraint: ConstraintCheck::of(objective, &test.confusion),
                test,
                valid_constraint: trained.constraint,
                history: trained.history,
            });
        }
        results.push(ObjectiveRuns {
            objective: *objective,
            runs,
        });
    }
    Ok(results)
}

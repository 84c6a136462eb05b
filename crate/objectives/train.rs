//! Training a binary classifier for a global objective, document by document: the CPU engine's
//! MLP and Adam, the objective as the loss, the AUC-PR anchor biases trained by their own Adam at
//! the model's learning rate, the multipliers updated by projected dual ascent after every step
//! (step `dual_rate_factor * lr`), validation metrics after every epoch, early stopping on
//! validation AUC-PR (average precision) and the model of the best epoch kept.

use crate::clock::Instant;
use crate::engine::{run_epoch, Engine, Examples, ObjectiveTrainer, Stepped, Trainer};
use crate::error::{Error, Result};
use crate::model::Mlp;
use crate::objectives::metrics::{evaluate, BinaryMetrics, Confusion};
use crate::rng::Rng;

use super::data::BinarySet;
use crate::model::objective::Config;
use crate::model::objective::{LabelPrior, Objective, Params};

/// What a diverged run of the global objectives can make smaller besides the learning rate.
pub const SMALLER: &str =
    "where an objective has a constraint, a smaller rate of its multipliers: --dual-rate-factor";

/// The tolerance of the reports' "met within tolerance" counts: a constraint's quantity (precision,
/// recall, false positive rate at f > 0) may miss its target by at most this much. The epoch choice
/// itself ([`better_epoch`]) takes no tolerance.
pub const CONSTRAINT_TOLERANCE: f64 = 0.02;

/// Whether a constrained objective's constraint holds for the decision f > 0 on a split.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ConstraintCheck {
    /// "precision", "recall" or "false positive rate", at the decision f > 0.
    pub quantity: &'static str,
    /// `None` when undefined (precision of a classifier that predicts no positive).
    pub value: Option<f64>,
    pub target: f64,
    /// True for a lower bound (precision, recall), false for an upper bound (FPR).
    pub at_least: bool,
    pub holds: bool,
}

impl ConstraintCheck {
    /// The constraint of `objective` checked on `confusion`; `None` for objectives without one
    /// (AUC-PR's anchors have their own thresholds, so it has no single one).
    pub fn of(objective: &Objective, confusion: &Confusion) -> Option<Self> {
        let (quantity, value, target, at_least) = match *objective {
            Objective::RecallAtPrecision(alpha) => {
                ("precision", confusion.precision(), alpha, true)
            }
            Objective::PrecisionAtRecall(beta) => ("recall", Some(confusion.recall()), beta, true),
            Objective::TprAtFpr(r) => (
                "false positive rate",
                confusion.false_positive_rate(),
                r,
                false,
            ),
            _ => return None,
        };
        let holds = value.is_some_and(|v| if at_least { v >= target } else { v <= target });
        Some(ConstraintCheck {
            quantity,
            value,
            target,
            at_least,
            holds,
        })
    }

    /// How far the quantity is on the wrong side of its target (0 when the constraint holds); an
    /// undefined precision (nothing predicted positive) counts as precision 0.
    pub fn violation(&self) -> f64 {
        let value = self.value.unwrap_or(0.0);
        let gap = if self.at_least {
            self.target - value
        } else {
            value - self.target
        };
        gap.max(0.0)
    }

    /// Whether the constraint holds, or misses its target by at most `tolerance`.
    pub fn holds_within(&self, tolerance: f64) -> bool {
        self.value.is_some() && self.violation() <= tolerance
    }
}

/// What one epoch did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EpochLog {
    pub epoch: usize,
    /// Mean objective loss over the epoch's batches.
    pub loss: f64,
    /// The multipliers at the end of the epoch.
    pub lambdas: Vec<f64>,
    /// The anchor biases at the end of the epoch.
    pub biases: Vec<f64>,
    /// The running label prior pi.
    pub label_prior: f64,
    pub valid: BinaryMetrics,
    pub constraint: Option<ConstraintCheck>,
    pub seconds: f64,
}

/// Progress reported while training.
pub enum Event<'a> {
    /// `examples` more examples went through forward, backward and the updates.
    Step {
        examples: usize,
    },
    Epoch(&'a EpochLog),
}

pub struct Trained {
    /// The model of the best validation epoch.
    pub model: Mlp<f32>,
    /// Its multipliers and anchor biases.
    pub params: Params<f32>,
    pub best_epoch: usize,
    /// Validation metrics and constraint of the best epoch.
    pub valid: BinaryMetrics,
    pub constraint: Option<ConstraintCheck>,
    pub history: Vec<EpochLog>,
}

/// Checks the splits against each other before training; returns the number of features.
fn check_splits(train: &BinarySet, valid: &BinarySet, config: &Config) -> Result<usize> {
    config.validate()?;
    let d = train.n_features;
    if d == 0 || train.is_empty() || train.x.len() != train.len() * d {
        return Err(Error::Config(
            "the training examples have no features".into(),
        ));
    }
    if valid.n_features != d || valid.x.len() != valid.len() * d {
        return Err(Error::Config(format!(
            "validation examples have {} features, training examples {d}",
            valid.n_features
        )));
    }
    let positives = valid.positives();
    if positives == 0 || positives == valid.len() {
        return Err(Error::Data(
            "the validation split needs positive and negative examples to choose an epoch by AUC-PR"
                .into(),
        ));
    }
    Ok(d)
}

/// The checks, the initial model (from the seed) and the epoch selection of a training run, the same
/// on both engines.
pub(crate) fn start<'a>(
    train: &BinarySet,
    valid: &'a BinarySet,
    config: &'a Config,
) -> Result<(Mlp<f32>, Selection<'a>)> {
    let d = check_splits(train, valid, config)?;
    crate::model::mlp::check_size(
        d,
        &config.widths,
        config.batch_size,
        crate::memory::available_memory(),
        "--widths (or --batch-size)",
    )?;
    let model = Mlp::<f32>::new(d, &config.widths, config.seed);
    Ok((model, Selection::new(config, valid)))
}

/// The training examples of an epoch, shuffled from the seed and the epoch (both engines).
pub(crate) fn epoch_order(n: usize, seed: u64, epoch: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    Rng::stream(seed, 0x6f62_6a65_6300 + epoch as u64).shuffle(&mut order);
    order
}

/// Gathers the examples `chunk` of `set` into `inputs` and `labels` (cleared first).
pub(crate) fn gather(
    set: &BinarySet,
    chunk: &[usize],
    inputs: &mut Vec<f32>,
    labels: &mut Vec<f32>,
) {
    inputs.clear();
    labels.clear();
    for &i in chunk {
        set.extend_row(i, inputs);
        labels.push(set.y[i]);
    }
}

/// An error when a weight, an anchor bias or a multiplier is NaN or infinite after `epoch`.
pub(crate) fn check_finite(
    model: &Mlp<f32>,
    params: &Params<f32>,
    epoch: usize,
    step: usize,
) -> Result<()> {
    if model.all_finite()
        && params
            .lambdas
            .iter()
            .chain(&params.biases)
            .all(|v| v.is_finite())
    {
        Ok(())
    } else {
        Err(Error::Diverged {
            epoch,
            step,
            what: "a weight, bias or multiplier became NaN or infinite".into(),
            smaller: SMALLER,
        })
    }
}

/// Whether epoch `a` is a better choice than epoch `b`. Without a constraint: the higher
/// validation AUC-PR. With one (checked at f > 0 on validation): an epoch whose constraint holds
/// beats one whose constraint fails; among epochs whose constraint holds, the higher AUC-PR wins;
/// among epochs whose constraint fails, the smaller violation (then the higher AUC-PR).
pub fn better_epoch(a: &EpochLog, b: &EpochLog) -> bool {
    match (a.constraint, b.constraint) {
        (Some(ca), Some(cb)) => match (ca.holds, cb.holds) {
            (true, false) => true,
            (false, true) => false,
            (true, true) => a.valid.auc_pr > b.valid.auc_pr,
            (false, false) => {
                let (va, vb) = (ca.violation(), cb.violation());
                va < vb || (va == vb && a.valid.auc_pr > b.valid.auc_pr)
            }
        },
        _ => a.valid.auc_pr > b.valid.auc_pr,
    }
}

/// The epochs so far, the best one by [`better_epoch`] with its model and parameters, and early
/// stopping: the same on both engines.
pub(crate) struct Selection<'a> {
    config: &'a Config,
    valid: &'a BinarySet,
    best: Option<(usize, Mlp<f32>, Params<f32>)>,
    history: Vec<EpochLog>,
}

impl<'a> Selection<'a> {
    pub(crate) fn new(config: &'a Config, valid: &'a BinarySet) -> Self {
        Selection {
            config,
            valid,
            best: None,
            history: Vec::new(),
        }
    }

    /// Logs an epoch (its number, mean loss and seconds; the model, multipliers and biases and
    /// label prior at its end) from its validation scores; true when training should stop.
    pub(crate) fn end_epoch(
        &mut self,
        (epoch, loss, seconds): (usize, f64, f64),
        (model, params, prior): (&Mlp<f32>, &Params<f32>, &LabelPrior),
        valid_scores: &[f32],
        on: &mut dyn FnMut(Event),
    ) -> Result<bool> {
        let (config, valid) = (self.config, self.valid);
        let metrics = evaluate(valid_scores, &valid.y, config.targets).ok_or_else(|| {
            Error::Data("the validation split needs positive and negative examples".into())
        })?;
        let log = EpochLog {
            epoch,
            loss,
            lambdas: params.lambdas.iter().map(|&v| v as f64).collect(),
            biases: params.biases.iter().map(|&v| v as f64).collect(),
            label_prior: prior.value(),
            constraint: ConstraintCheck::of(&config.objective, &metrics.confusion),
            valid: metrics,
            seconds,
        };
        on(Event::Epoch(&log));
        let improves = self
            .best
            .as_ref()
            .is_none_or(|b| better_epoch(&log, &self.history[b.0 - 1]));
        if improves {
            self.best = Some((epoch, model.clone(), params.clone()));
        }
        self.history.push(log);
        let best_epoch = self.best.as_ref().map_or(0, |b| b.0);
        Ok(config.patience.is_some_and(|p| epoch >= best_epoch + p))
    }

    pub(crate) fn finish(self) -> Trained {
        let (best_epoch, model, params) = self.best.expect("at least one epoch ran");
        let at_best = &self.history[best_epoch - 1];
        Trained {
            model,
            params,
            best_epoch,
            valid: at_best.valid,
            constraint: at_best.constraint,
            history: self.history,
        }
    }
}

/// Trains a classifier on `engine`: the same initial weights, batches, label prior, loss, updates
/// and epoch choice on either. Losses are read back every `loss_window` steps (every step on the
/// CPU engine) and at the end of each epoch; validation examples are scored on the engine and the
/// metrics computed on the scores.
pub async fn fit_async(
    engine: &Engine,
    train: &BinarySet,
    valid: &BinarySet,
    config: &Config,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Trained> {
    let (model, mut selection) = start(train, valid, config)?;
    let batch = config.batch_size.min(train.len());
    let mut trainer = engine.objective_trainer(model, config, batch)?;
    let (mut inputs, mut labels) = (Vec::new(), Vec::new());
    let mut step = 0;
    let mut runaway = crate::engine::Runaway::default();
    for epoch in 1..=config.epochs {
        let started = Instant::now();
        let order = epoch_order(train.len(), config.seed, epoch);
        let mut chunks = order.chunks(batch).peekable();
        let losses = run_epoch(
            &mut trainer,
            &mut step,
            async |trainer: &mut ObjectiveTrainer| {
                let chunk = chunks.next().expect("an epoch has a batch");
                gather(train, chunk, &mut inputs, &mut labels);
                trainer
                    .step(&Examples {
                        inputs: &inputs,
                        labels: &labels,
                    })
                    .await?;
                Ok(Stepped {
                    size: chunk.len(),
                    last: chunks.peek().is_none(),
                })
            },
            |step, &l| {
                let what = match l.is_finite() {
                    true => runaway
                        .check(f64::from(l))
                        .map(|how| format!("the {} loss {how}", config.objective)),
                    false => Some(format!("the {} loss is {l}", config.objective)),
                };
                match what {
                    Some(what) => Err(Error::Diverged {
                        epoch,
                        step,
                        what,
                        smaller: SMALLER,
                    }),
                    None => Ok(()),
                }
            },
            |examples, _| {
                on(Event::Step { examples });
                Ok(())
            },
        )
        .await?;
        let (model, params) = trainer.state().await?;
        check_finite(&model, &params, epoch, step)?;
        let seconds = started.elapsed();
        let scores = trainer.score(valid.inputs()).await?;
        let mean_loss = losses.iter().map(|&l| l as f64).sum::<f64>() / losses.len().max(1) as f64;
        let state = (&model, &params, trainer.prior());
        if selection.end_epoch((epoch, mean_loss, seconds), state, &scores, on)? {
            break;
        }
    }
    Ok(selection.finish())
}

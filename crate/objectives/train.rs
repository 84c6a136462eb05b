//! Training a binary classifier for a global objective, document by document: the CPU engine's
//! MLP and Adam, the objective as the loss, the AUC-PR anchor biases trained by their own Adam at
//! the model's learning rate, the multipliers updated by projected dual ascent after every step
//! (step `dual_rate_factor * lr`), validation metrics after every epoch, early stopping on
//! validation AUC-PR (average precision) and the model of the best epoch kept.

use crate::cpu::adam::{Adam, AdamConfig, AdamVector};
use crate::cpu::mlp::{Activations, Mlp};
use crate::error::{Error, Result};
use crate::metrics_binary::{evaluate, BinaryMetrics, Confusion, Targets};
use crate::rng::Rng;
use crate::train::{score, Instant};

use super::data::BinarySet;
use super::{dual_ascent, Grad, LabelPrior, Objective, Params, Surrogate};

#[derive(Debug, Clone, serde::Serialize)]
pub struct Config {
    pub objective: Objective,
    pub surrogate: Surrogate,
    /// Hidden layer widths.
    pub widths: Vec<usize>,
    pub epochs: usize,
    /// Stop after this many epochs without a better validation AUC-PR (None: every epoch).
    pub patience: Option<usize>,
    /// Adam for the model (and the anchor biases).
    pub adam: AdamConfig,
    /// Examples per mini-batch.
    pub batch_size: usize,
    /// The multipliers' step is `dual_rate_factor * adam.lr` (the reference's default 0.1).
    pub dual_rate_factor: f64,
    /// Every multiplier's starting value (the reference's 1).
    pub initial_lambda: f64,
    /// The targets of the reported curve metrics.
    pub targets: Targets,
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            objective: Objective::LogLoss,
            surrogate: Surrogate::Log,
            widths: vec![64, 32],
            epochs: 30,
            patience: Some(5),
            adam: AdamConfig::default(),
            batch_size: 128,
            dual_rate_factor: 0.1,
            initial_lambda: 1.0,
            targets: Targets::default(),
            seed: 0,
        }
    }
}

impl Config {
    /// Checks everything a user can get wrong, before any training starts.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        // The objective's own values, in case it was built directly rather than parsed.
        Objective::parse(&self.objective.name())?;
        if self.epochs == 0 {
            return bad("epochs must be at least 1".into());
        }
        if !(self.adam.lr.is_finite() && self.adam.lr > 0.0) {
            return bad(format!("learning rate {} must be positive", self.adam.lr));
        }
        if self.batch_size == 0 {
            return bad("batch size must be positive".into());
        }
        if self.widths.contains(&0) {
            return bad("hidden widths must be positive".into());
        }
        if !(self.dual_rate_factor.is_finite() && self.dual_rate_factor >= 0.0) {
            return bad(format!(
                "dual rate factor {} must be finite and >= 0",
                self.dual_rate_factor
            ));
        }
        if !(self.initial_lambda.is_finite() && self.initial_lambda >= 0.0) {
            return bad(format!(
                "initial lambda {} must be finite and >= 0 (multipliers are never negative)",
                self.initial_lambda
            ));
        }
        for (what, v) in [
            ("precision", self.targets.precision),
            ("recall", self.targets.recall),
        ] {
            if !(v > 0.0 && v < 1.0) {
                return bad(format!(
                    "the metric's target {what} {v} must lie strictly between 0 and 1"
                ));
            }
        }
        Ok(())
    }
}

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

/// Trains a classifier for `config.objective` on `train`, choosing the epoch by validation AUC-PR.
pub fn fit(
    train: &BinarySet,
    valid: &BinarySet,
    config: &Config,
    on: &mut dyn FnMut(Event),
) -> Result<Trained> {
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
    let objective = &config.objective;
    let mut model = Mlp::<f32>::new(d, &config.widths, config.seed);
    let mut adam = Adam::new(&model, config.adam);
    let mut params = Params::new(objective, config.initial_lambda as f32);
    let mut bias_adam = AdamVector::new(params.biases.len(), config.adam);
    let dual_step = (config.dual_rate_factor * config.adam.lr) as f32;
    let mut prior = LabelPrior::default();

    let mut best: Option<(f64, usize, Mlp<f32>, Params<f32>)> = None;
    let mut history: Vec<EpochLog> = Vec::new();
    let (mut acts, mut grads, mut grad) = (
        Activations::default(),
        model.zero_gradients(),
        Grad::default(),
    );
    let (mut inputs, mut labels) = (Vec::new(), Vec::new());
    let mut step = 0;
    for epoch in 1..=config.epochs {
        let started = Instant::now();
        let mut order: Vec<usize> = (0..train.len()).collect();
        Rng::stream(config.seed, 0x6f62_6a65_6300 + epoch as u64).shuffle(&mut order);
        let (mut loss_sum, mut batches) = (0f64, 0usize);
        for chunk in order.chunks(config.batch_size) {
            inputs.clear();
            labels.clear();
            for &i in chunk {
                inputs.extend_from_slice(train.row(i));
                labels.push(train.y[i]);
            }
            prior.observe(&labels);
            let logits = model.forward(&inputs, &mut acts);
            let loss = objective.loss(
                config.surrogate,
                logits,
                &labels,
                prior.value(),
                &params,
                &mut grad,
            );
            step += 1;
            if !loss.is_finite() {
                return Err(Error::Diverged {
                    epoch,
                    step,
                    what: format!("the {objective} loss is {loss}"),
                });
            }
            model.backward(&inputs, &acts, &grad.dlogits, &mut grads);
            adam.update(&mut model, &grads);
            bias_adam.update(&mut params.biases, &grad.dbiases);
            dual_ascent(&mut params.lambdas, &grad.dlambdas, dual_step);
            loss_sum += loss as f64;
            batches += 1;
            on(Event::Step {
                examples: chunk.len(),
            });
        }
        if !(model.all_finite()
            && params
                .lambdas
                .iter()
                .chain(&params.biases)
                .all(|v| v.is_finite()))
        {
            return Err(Error::Diverged {
                epoch,
                step,
                what: "a weight, bias or multiplier became NaN or infinite".into(),
            });
        }
        let seconds = started.elapsed();
        let scores = score(&model, &valid.x);
        let metrics = evaluate(&scores, &valid.y, config.targets)
            .expect("the validation split has both classes (checked above)");
        let log = EpochLog {
            epoch,
            loss: loss_sum / batches.max(1) as f64,
            lambdas: params.lambdas.iter().map(|&v| v as f64).collect(),
            biases: params.biases.iter().map(|&v| v as f64).collect(),
            label_prior: prior.value(),
            constraint: ConstraintCheck::of(objective, &metrics.confusion),
            valid: metrics,
            seconds,
        };
        on(Event::Epoch(&log));
        if best.as_ref().is_none_or(|b| metrics.auc_pr > b.0) {
            best = Some((metrics.auc_pr, epoch, model.clone(), params.clone()));
        }
        history.push(log);
        let best_epoch = best.as_ref().map_or(0, |b| b.1);
        if config.patience.is_some_and(|p| epoch >= best_epoch + p) {
            break;
        }
    }
    let (_, best_epoch, model, params) = best.expect("at least one epoch ran");
    let at_best = &history[best_epoch - 1];
    Ok(Trained {
        model,
        params,
        best_epoch,
        valid: at_best.valid,
        constraint: at_best.constraint,
        history,
    })
}

//! Training one ranking model, one loop for either engine ([`crate::engine`]): batches of whole
//! query groups, the data loss on S_label, the teacher loss on S_all when teachers are given (PFD
//! Eq. 1), the Ranking Distillation loss when its targets are given, Adam, validation NDCG@k after
//! every epoch, early stopping, and the model of the best validation epoch kept; an ensemble's
//! members one after the other.

use crate::clock::Instant;
use crate::cpu::mlp::SCORE_CHUNK_DOCS;
use crate::data::inputs::Inputs;
use crate::data::prepare::{FeatureView, RankingSet};
use crate::engine::{run_epoch, Engine, RankingTrainer, Stepped, Trainer};
use crate::error::{Error, Result};
use crate::metrics::{mean_ndcg, IdcgZero};
use crate::model::dropout::Dropout;
use crate::model::ensemble::{member_seed, MAX_MEMBERS};
use crate::model::step::{LossPlan, ObjectivePlan, StepBatch, StepLosses};
use crate::model::AdamConfig;
use crate::model::LossKind;
use crate::model::{Ensemble, Mlp};
use crate::ranking::clicks::PropensityTower;
use crate::ranking::distill::RdTargets;
use crate::rng::Rng;
use crate::stop::Stop;

/// How one model trains. Its settings are a setup's fields of the same names (Adam's from its
/// `lr`), read from the setup ([`TrainConfig::of_setup`]) or, where none is given, from the table
/// of settings; the model's own (its view, its seed, the stop) are set by whoever trains it. A
/// comparison's results record it whole.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TrainConfig {
    pub loss: LossKind,
    /// The features the model sees.
    #[serde(skip_deserializing)]
    pub view: FeatureView,
    /// Hidden layer widths (spec §2 default 256-256-128-64).
    pub widths: Vec<usize>,
    pub epochs: usize,
    #[serde(
        rename(deserialize = "lr"),
        deserialize_with = "crate::model::adam::of_lr"
    )]
    pub adam: AdamConfig,
    /// Documents per mini-batch, made of whole query groups (a larger group is a batch alone).
    pub batch_docs: usize,
    /// Weight of the data loss in PFD Eq. 1 when a teacher is given, in (0, 1).
    pub alpha: f64,
    /// The k of the validation NDCG@k that picks the best epoch (the paper's 8).
    #[serde(skip_deserializing, default = "paper_k")]
    pub eval_k: usize,
    pub idcg_zero: IdcgZero,
    /// Stop after this many epochs without a better validation NDCG@k (None: run every epoch).
    pub patience: Option<usize>,
    #[serde(skip_deserializing)]
    pub seed: u64,
    /// How the learning rate moves over the epochs.
    pub lr_schedule: crate::model::adam::LrSchedule,
    /// Standard deviation of the Gaussian noise added to every training input at every step
    /// (Qin et al. 2021's data augmentation; 0: none). The inputs are those after the transform,
    /// so with `standardize` or `rank-gauss` it is a share of each column's spread. Drawn on the
    /// host from the model's seed, so both engines train on the same noisy batches.
    pub input_noise: f64,
    /// The probability of zeroing each hidden unit in training ([`Dropout`]; 0: none). Its
    /// masks come from the model's seed, the same on both engines.
    pub dropout: f64,
    /// The hidden layers' normalisation ([`crate::model::Norm`]).
    pub norm: crate::model::Norm,
    /// Heads of self-attention over each query's documents after the last hidden layer (the
    /// listwise family, [`crate::model::Attention`]; 0: the MLP).
    pub attention_heads: usize,
    /// Members of the model, each trained from its own seed, whose scores are averaged (1: one
    /// model).
    pub ensemble: usize,
    /// A global objective (Eban et al.) as the data loss instead of `loss`, on the documents of
    /// S_label labelled by y; the teacher loss stays `loss`'s.
    pub objective: Option<crate::model::Objective>,
    /// The objective's multipliers ascend at this factor times the learning rate.
    pub dual_rate_factor: f64,
    /// Raised to stop training between steps (Ctrl-C in Python, the page's Stop).
    #[serde(skip)]
    pub stop: Stop,
}

/// The setup's `weight_decay` field, which goes into [`TrainConfig::adam`].
#[derive(serde::Deserialize)]
struct WeightDecay {
    weight_decay: f64,
}

/// The PFD paper's k of NDCG@k.
fn paper_k() -> usize {
    8
}

/// The table of settings' defaults ([`crate::settings`]); a model trained alone runs every epoch.
impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            patience: None,
            ..crate::settings::defaults("")
        }
    }
}

/// Whether `TrainConfig::of_setup` reads the setup's field `path` (`lr`, `widths`, `dropout`,
/// ...): one model's training settings, as `train` takes them. Computed from the config's own
/// fields, with Adam's two (`lr`, `weight_decay`).
pub fn reads_setup_field(path: &str) -> bool {
    let config = serde_json::to_value(TrainConfig::default()).expect("a config serialises");
    matches!(path, "lr" | "weight_decay") || (path != "adam" && config.get(path).is_some())
}

impl TrainConfig {
    /// The training settings of a setup, given as its whole JSON: each field is the setup's
    /// field of the same name ([`crate::settings::read_fields`]; the setup's own type lives above
    /// this module).
    pub fn of_setup(setup: &serde_json::Value) -> Result<TrainConfig> {
        let mut config: TrainConfig = crate::settings::read_fields(setup)?;
        // Adam's settings are two fields of the setup: `lr` (read above) and `weight_decay`.
        config.adam.weight_decay = crate::settings::read_fields::<WeightDecay>(setup)?.weight_decay;
        Ok(config)
    }

    /// Checks everything a user can get wrong, before any training starts.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        if self.epochs == 0 {
            return bad("epochs must be at least 1".into());
        }
        if !(self.adam.lr.is_finite() && self.adam.lr > 0.0) {
            return bad(format!(
                "learning rate {} must be positive",
                crate::error::shown(self.adam.lr)
            ));
        }
        if !(self.adam.weight_decay.is_finite() && self.adam.weight_decay >= 0.0) {
            return bad(format!(
                "weight decay {} must be 0 or more",
                crate::error::shown(self.adam.weight_decay)
            ));
        }
        if !(self.input_noise.is_finite() && self.input_noise >= 0.0) {
            return bad(format!(
                "input noise {} must be a standard deviation, 0 or more",
                crate::error::shown(self.input_noise)
            ));
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return bad(format!(
                "alpha = {} must lie in (0, 1): it weighs the data loss against the teacher loss",
                crate::error::shown(self.alpha)
            ));
        }
        if !(self.dropout.is_finite() && (0.0..1.0).contains(&self.dropout)) {
            return bad(format!(
                "dropout {} must be a probability in [0, 1): the share of hidden units zeroed",
                crate::error::shown(self.dropout)
            ));
        }
        check_hidden_layers(self.dropout, self.norm, &self.widths)?;
        crate::model::attention::check_heads(
            self.attention_heads,
            &self.widths,
            "--attention-heads",
            "give --widths hidden layers, or --attention-heads 0 (the MLP)",
        )?;
        if self.ensemble == 0 || self.ensemble > MAX_MEMBERS {
            return bad(format!(
                "an ensemble of {} members: it takes 1 (one model) to {MAX_MEMBERS}",
                self.ensemble
            ));
        }
        if self.widths.contains(&0) {
            return bad("hidden widths must be positive".into());
        }
        if self.patience == Some(0) {
            return bad("patience must be at least 1 epoch".into());
        }
        if self.batch_docs == 0 || self.eval_k == 0 {
            return bad("batch size and k must be positive".into());
        }
        if !(self.dual_rate_factor.is_finite() && self.dual_rate_factor >= 0.0) {
            return bad(format!(
                "dual rate factor {} must be finite and >= 0",
                crate::error::shown(self.dual_rate_factor)
            ));
        }
        Ok(())
    }
}

/// Refuses settings of the hidden layers that `widths` cannot carry: dropout or layer
/// normalisation on a model without hidden layers (`widths` empty, a linear model), which would
/// change nothing, and a dropout rate that leaves less than one unit of the narrowest layer in
/// expectation: in range, yet every step would see a nearly empty layer and nothing be learnt.
pub fn check_hidden_layers(dropout: f64, norm: crate::model::Norm, widths: &[usize]) -> Result<()> {
    let Some(&narrowest) = widths.iter().min() else {
        if dropout > 0.0 {
            return Err(Error::Config(format!(
                "dropout {} zeroes hidden units, and a model without hidden layers (widths []: a linear model) has none; give hidden widths, or a dropout of 0",
                crate::error::shown(dropout)
            )));
        }
        if norm != crate::model::Norm::None {
            return Err(Error::Config(format!(
                "norm {} normalises hidden layers, and a model without hidden layers (widths []: a linear model) has none; give hidden widths, or norm none",
                norm.name()
            )));
        }
        return Ok(());
    };
    let kept = (1.0 - dropout) * narrowest as f64;
    if dropout > 0.0 && kept < 1.0 {
        // A layer of one unit takes no dropout at all: (1 - p) * 1 < 1 for every p > 0.
        let most = if narrowest == 1 {
            "a layer of one unit takes none: give it more units, or dropout 0".to_string()
        } else {
            format!(
                "choose a dropout of at most 1 − 1/{narrowest} = {}",
                ((1.0 - 1.0 / narrowest as f64) * 1e4).floor() / 1e4
            )
        };
        // Four decimals, unless they would round it to the one it falls short of.
        let four = format!("{kept:.4}");
        let four = four.trim_end_matches('0').trim_end_matches('.');
        let kept = if four.parse::<f64>().is_ok_and(|k| k < 1.0) {
            four.to_string()
        } else {
            kept.to_string()
        };
        return Err(Error::Config(format!(
            "dropout {} keeps {kept} of the narrowest hidden layer's {narrowest} unit{} in expectation, less than one: nothing would be learnt; {most}",
            crate::error::shown(dropout),
            if narrowest == 1 { "" } else { "s" },
        )));
    }
    Ok(())
}

/// What one epoch did.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct EpochLog {
    pub epoch: usize,
    /// Mean data loss over the epoch's batches (unweighted by alpha).
    pub data_loss: f64,
    /// Mean teacher loss over the epoch's batches (0 without a teacher).
    pub teacher_loss: f64,
    /// Mean Ranking Distillation loss L_D (0 without it).
    pub rd_loss: f64,
    /// Validation NDCG@k after the epoch.
    pub valid_ndcg: f64,
    /// Test NDCG@k after the epoch, when a test split is given (reported, never used to choose).
    pub test_ndcg: Option<f64>,
    /// The propensities the epoch's labels were weighted by, relative to rank 1 (None at a rank
    /// no session showed), when the model learns them with its ranker ([`PropensityTower`]): for
    /// a model that learns them at every step (DLA), those in force at the epoch's end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propensities: Option<Vec<Option<f64>>>,
    /// Seconds spent after the epoch scoring the training split and learning the propensities
    /// from the scores, for the next epoch's labels (outside `seconds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propensity_seconds: Option<f64>,
    pub seconds: f64,
    pub docs_per_s: f64,
}

/// Progress reported while training.
pub enum Event<'a> {
    /// `docs` more documents went through forward, backward and Adam.
    Step {
        docs: usize,
    },
    Epoch(&'a EpochLog),
}

pub struct Trained {
    /// The model of the best validation epoch: each member's own best.
    pub model: Ensemble,
    /// The first member's best epoch.
    pub best_epoch: usize,
    /// The validation NDCG@k of the whole model (the members' mean scores).
    pub best_valid_ndcg: f64,
    /// The first member's epochs.
    pub history: Vec<EpochLog>,
    /// Each member's own best validation NDCG@k, in member order.
    pub member_valid_ndcg: Vec<f64>,
    /// The second and later members' epochs, in member order (empty for one model).
    pub later_members: Vec<MemberRun>,
}

/// How an ensemble's member after the first trained: its epochs and the one kept.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct MemberRun {
    pub best_epoch: usize,
    /// Its own validation NDCG@k at that epoch.
    pub best_valid_ndcg: f64,
    pub history: Vec<EpochLog>,
}

/// One member's training: its model of the best validation epoch and how it got there.
struct Member {
    model: Mlp<f32>,
    run: MemberRun,
}

/// A split and the inputs a model sees of it (`n_docs x width`).
#[derive(Clone, Copy)]
pub struct Split<'a> {
    pub set: &'a RankingSet,
    pub inputs: Inputs<'a>,
}

impl<'a> Split<'a> {
    /// What a model with `view` sees of `set`.
    pub fn of(set: &'a RankingSet, view: FeatureView) -> Split<'a> {
        Split {
            set,
            inputs: Inputs::of(set, view),
        }
    }
}

/// What guides a model besides its labels.
#[derive(Default)]
pub struct Guidance<'a> {
    /// The teachers' logits on every training document (PFD, GenD, self-distillation, several for
    /// multi-teacher PFD). Empty: no distillation.
    pub teachers: Vec<&'a [f32]>,
    /// Ranking Distillation: the teacher's top-K unlabeled documents of every training group.
    pub ranking_distillation: Option<RdTargets>,
    /// DLA's or the two-tower model's propensities, learned from the model's scores: DLA's at
    /// every step, from the batch's, the two-tower model's after every epoch, from the whole
    /// training split's. They give the labels of the steps that follow.
    pub propensity_tower: Option<PropensityTower>,
}

impl Guidance<'_> {
    /// Whether the model trains on S_all (every group) rather than S_label.
    fn uses_unlabeled(&self) -> bool {
        !self.teachers.is_empty() || self.ranking_distillation.is_some()
    }
}

/// The documents one epoch trains on: positive groups only without a teacher (the data loss sees
/// S_label), every group with one (the teacher loss sees S_all).
pub fn epoch_docs(train: &RankingSet, with_teacher: bool) -> usize {
    (0..train.n_groups())
        .filter(|&g| with_teacher || train.positive_group[g])
        .map(|g| train.group(g).len())
        .sum()
}

/// The plan of every step's losses: PFD Eq. 1 with the teachers given, Ranking Distillation's
/// L_D when its targets are, and a global objective as the data loss when one is configured.
pub fn loss_plan(config: &TrainConfig, guidance: &Guidance) -> LossPlan {
    let plan = LossPlan::new(
        config.loss,
        config.alpha,
        guidance.teachers.len(),
        guidance
            .ranking_distillation
            .as_ref()
            .map(|rd| rd.config.alpha_rd),
        config.objective.map(|objective| ObjectivePlan {
            objective,
            dual_step: (config.dual_rate_factor * config.adam.lr) as f32,
        }),
        config.adam,
    );
    LossPlan {
        // The masks are drawn from the model's seed, in their own stream of it.
        dropout: (config.dropout > 0.0).then_some(Dropout {
            rate: config.dropout,
            seed: config.seed ^ 0x6472_6f70_6f75_7421,
        }),
        ..plan
    }
}

/// Trains a model on `engine`: its [`TrainConfig::ensemble`] members one after the other, each
/// from its own seed ([`member_seed`]; the first at the config's) and each kept at its own best
/// validation epoch ([`fit_member_async`]). The model's validation NDCG@k is then that of the
/// members' mean scores.
pub async fn fit_async(
    engine: &Engine,
    train: Split<'_>,
    valid: Split<'_>,
    test: Option<Split<'_>>,
    config: &TrainConfig,
    guidance: &Guidance<'_>,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Trained> {
    let mut members = Vec::with_capacity(config.ensemble);
    for i in 0..config.ensemble.max(1) {
        let member = TrainConfig {
            seed: member_seed(config.seed, i),
            ..config.clone()
        };
        members.push(fit_member_async(engine, train, valid, test, &member, guidance, on).await?);
    }
    let member_valid_ndcg: Vec<f64> = members.iter().map(|m| m.run.best_valid_ndcg).collect();
    let first = members.remove(0);
    let mut model = Ensemble::single(first.model);
    let later_members = members
        .into_iter()
        .map(|m| {
            model.members.push(m.model);
            m.run
        })
        .collect();
    let best_valid_ndcg = if model.len() == 1 {
        first.run.best_valid_ndcg
    } else {
        let scores = engine.score_ensemble(&model, valid.inputs).await?;
        check_split_scores(&scores, valid.set, "the validation split")?;
        mean_ndcg(
            config.eval_k,
            &scores,
            &valid.set.labels,
            &valid.set.group_offsets,
            config.idcg_zero,
        )
        .unwrap_or(0.0)
    };
    Ok(Trained {
        model,
        best_epoch: first.run.best_epoch,
        best_valid_ndcg,
        history: first.run.history,
        member_valid_ndcg,
        later_members,
    })
}

/// Trains one model on `engine`, picking the epoch with the best validation NDCG@k: the same
/// initial weights, batches, losses and Adam on either engine. Losses are read back every
/// `loss_window` steps (every step on the CPU engine) and at the end of each epoch; validation and
/// test documents are scored on the engine, NDCG computed on the scores.
async fn fit_member_async(
    engine: &Engine,
    train: Split<'_>,
    valid: Split<'_>,
    test: Option<Split<'_>>,
    config: &TrainConfig,
    guidance: &Guidance<'_>,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Member> {
    let width = check(train, valid, config, guidance)?;
    let model = Mlp::<f32>::new(width, &config.widths, config.seed)
        .with_norm(config.norm)
        .with_attention(config.attention_heads, config.seed);
    let attends = config.attention_heads > 0;
    let groups: Vec<usize> = (0..train.set.n_groups())
        .filter(|&g| guidance.uses_unlabeled() || train.set.positive_group[g])
        .collect();
    if groups.is_empty() {
        return Err(Error::Data(
            "no positive training groups to train on".into(),
        ));
    }
    let largest = groups
        .iter()
        .map(|&g| train.set.group(g).len())
        .max()
        .unwrap_or(0);
    let plan = loss_plan(config, guidance);
    let mut trainer = engine.ranking_trainer(model.clone(), &plan, config.batch_docs, largest)?;
    let mut selection = Selection::new(model);
    let mut batch = Batch::default();
    let mut divergence = Divergence::default();
    let mut step = 0;
    let valid_ranked = ranked_rows(valid.set);
    let test_ranked = test.map(|t| ranked_rows(t.set));
    // The labels of the epoch: the split's own, or those its propensity tower gives.
    let mut tower = guidance.propensity_tower.clone();
    let mut labels = std::borrow::Cow::Borrowed(&train.set.labels[..]);
    for epoch in 1..=config.epochs {
        let mut propensities = tower.as_ref().map(PropensityTower::propensities);
        let started = Instant::now();
        let mut order = groups.clone();
        Rng::stream(config.seed, 0x6570_6f63_6800 + epoch as u64).shuffle(&mut order);
        let mut noise = Rng::stream(config.seed, 0x6e6f_6973_6500 + epoch as u64);
        trainer.set_learning_rate(
            config
                .lr_schedule
                .rate(config.adam.lr, epoch, config.epochs),
        );
        let (mut docs, mut at) = (0usize, 0);
        let losses = run_epoch(
            &mut trainer,
            &mut step,
            async |trainer: &mut RankingTrainer| {
                at = batch.fill(
                    train,
                    &labels,
                    &guidance.teachers,
                    &order,
                    at,
                    config.batch_docs,
                );
                // DLA's step: the propensity model learns from the ranker's scores of the batch,
                // whose labels it then weighs.
                if let Some(tower) = tower.as_mut().filter(|t| t.learns_per_step()) {
                    let n = batch.labels.len();
                    let inputs = Inputs::dense(&batch.inputs, n).with_groups(&batch.offsets);
                    let scores = trainer.score(inputs).await?;
                    tower.observe(&batch.groups, &batch.offsets, &scores);
                    tower.labels_into(&batch.groups, &batch.offsets, &mut batch.labels);
                }
                if config.input_noise > 0.0 {
                    for v in &mut batch.inputs {
                        *v += (config.input_noise * noise.normal()) as f32;
                    }
                }
                let rd = guidance
                    .ranking_distillation
                    .as_ref()
                    .map(|rd| rd.batch(&batch.groups, &batch.offsets, epoch));
                let teachers: Vec<&[f32]> = batch.teachers.iter().map(Vec::as_slice).collect();
                trainer
                    .step(&StepBatch {
                        inputs: &batch.inputs,
                        labels: &batch.labels,
                        offsets: &batch.offsets,
                        positive: &batch.positive,
                        teachers: &teachers,
                        ranking_distillation: rd.as_ref(),
                    })
                    .await?;
                Ok(Stepped {
                    size: batch.labels.len(),
                    last: at >= order.len(),
                })
            },
            |step, l| divergence.check(epoch, step, l),
            |size, step| {
                docs += size;
                on(Event::Step { docs: size });
                match config.stop.requested() {
                    true => Err(Error::Stopped { epoch, step }),
                    false => Ok(()),
                }
            },
        )
        .await?;
        let model = trainer.model().await?;
        let n = losses.len().max(1) as f64;
        let mean = |f: fn(&StepLosses) -> f32| losses.iter().map(|l| f(l) as f64).sum::<f64>() / n;
        let means = (mean(|l| l.data), mean(|l| l.teacher), mean(|l| l.rd));
        let seconds = started.elapsed();
        // A tower that learns between epochs learns from this epoch's model: the next epoch's
        // labels. One that learns at every step reports where the epoch left it.
        let mut next_labels = None;
        let mut propensity_seconds = None;
        if let Some(tower) = tower.as_ref().filter(|t| t.learns_per_step()) {
            propensities = Some(tower.propensities());
        }
        if let Some(tower) = tower
            .as_mut()
            .filter(|t| epoch < config.epochs && !t.learns_per_step())
        {
            let started = Instant::now();
            let scores = trainer.score(train.inputs).await?;
            next_labels = Some(tower.fit(&scores));
            propensity_seconds = Some(started.elapsed());
        }
        let valid_scores = score_for_ndcg(&trainer, valid, &valid_ranked, attends).await?;
        let test_scores = match (test, &test_ranked) {
            (Some(t), Some(ranked)) => {
                Some((t, score_for_ndcg(&trainer, t, ranked, attends).await?))
            }
            _ => None,
        };
        if selection.end_epoch(
            &model,
            epoch,
            step,
            means,
            docs,
            seconds,
            (valid, &valid_scores),
            test_scores,
            (propensities, propensity_seconds),
            config,
            on,
        )? {
            break;
        }
        if let Some(next) = next_labels {
            labels = std::borrow::Cow::Owned(next);
        }
    }
    Ok(selection.finish())
}

/// Refuses a split's scores that hold a NaN or an infinity from finite weights (`split`: "the
/// test split"): a model whose weights overflow on the split's inputs (a feature far outside the
/// training split's range, as the transform fitted there scales it) has no metric to report, in
/// training as in `eval` and `predict` ([`crate::model_io::check_scores`]).
pub fn check_split_scores(scores: &[f32], set: &RankingSet, split: &str) -> Result<()> {
    let Some(first) = scores.iter().position(|s| !s.is_finite()) else {
        return Ok(());
    };
    let bad = scores.iter().filter(|s| !s.is_finite()).count();
    let group = set.group_offsets.partition_point(|&o| o <= first) - 1;
    Err(Error::Data(format!(
        "the model scores {bad} of {} documents of {split} as NaN or infinite (the first: query {}, its document {}, {}): its finite weights overflow on these inputs, a feature far outside the training split's range as the transform fitted there scales it (or weights grown too large: a smaller --lr); no metric is reported",
        scores.len(),
        set.qids.get(group).copied().unwrap_or(group as u64),
        first - set.group_offsets[group] + 1,
        scores[first]
    )))
}

/// The documents whose scores can move NDCG on y: those of the groups that hold both a y = 1 and
/// a y = 0 document. Every document of any other group has the same gain, so every order of it
/// has the same NDCG (1, or the convention for IDCG = 0).
fn ranked_rows(set: &RankingSet) -> Vec<usize> {
    (0..set.n_groups())
        .map(|g| set.group(g))
        .filter(|docs| {
            let y = &set.labels[docs.clone()];
            y.iter().any(|&v| v > 0.0) && y.iter().any(|&v| v <= 0.0)
        })
        .flatten()
        .collect()
}

/// Scores of a split for its NDCG on y after an epoch: the documents of `ranked` scored on the
/// engine, every other document 0 (its score cannot change the NDCG).
async fn score_for_ndcg(
    trainer: &RankingTrainer,
    split: Split<'_>,
    ranked: &[usize],
    attends: bool,
) -> Result<Vec<f32>> {
    // A listwise model's score depends on the whole query, so it scores every group: the
    // groups it does not rank cannot change the NDCG either.
    if ranked.len() == split.set.n_docs() || split.inputs.groups().is_some() && attends {
        return trainer.score(split.inputs).await;
    }
    let mut scores = vec![0f32; split.set.n_docs()];
    for (&doc, score) in ranked
        .iter()
        .zip(trainer.score(split.inputs.at_rows(ranked)).await?)
    {
        scores[doc] = score;
    }
    Ok(scores)
}

/// A ranking step's losses: each finite, and their sum not run away
/// ([`crate::engine::Runaway`]).
#[derive(Default)]
struct Divergence {
    runaway: crate::engine::Runaway,
}

/// What a diverged ranking run can make smaller besides the learning rate, where it has them.
pub const SMALLER: &str =
    "smaller loss weights where the run has them: a comparison's --alpha and --rd-alpha, an objective's --dual-rate-factor";

impl Divergence {
    /// Checks one step's losses: each finite, and their sum not run away.
    fn check(&mut self, epoch: usize, step: usize, losses: &StepLosses) -> Result<()> {
        if !losses.all_finite() {
            return Err(Error::Diverged {
                epoch,
                step,
                smaller: SMALLER,
                what: format!(
                    "loss is {} (data) / {} (teacher) / {} (ranking distillation)",
                    losses.data, losses.teacher, losses.rd
                ),
            });
        }
        match self.runaway.check(losses.sum()) {
            Some(how) => Err(Error::Diverged {
                epoch,
                step,
                smaller: SMALLER,
                what: format!("the loss {how}"),
            }),
            None => Ok(()),
        }
    }
}

/// Keeps the model of the best validation epoch and decides when to stop (early stopping).
struct Selection {
    best: (f64, usize, Mlp<f32>),
    history: Vec<EpochLog>,
}

impl Selection {
    fn new(initial: Mlp<f32>) -> Self {
        Selection {
            best: (f64::NEG_INFINITY, 0, initial),
            history: Vec::new(),
        }
    }

    /// Checks the weights, evaluates `model` after `epoch` from its scores on the validation split
    /// (and on the test split, for the record), logs it and keeps it if it is the best so far. `losses` are the epoch's mean
    /// data, teacher and Ranking Distillation losses. Returns whether to stop.
    #[allow(clippy::too_many_arguments)]
    fn end_epoch(
        &mut self,
        model: &Mlp<f32>,
        epoch: usize,
        step: usize,
        losses: (f64, f64, f64),
        docs: usize,
        seconds: f64,
        valid: (Split, &[f32]),
        test: Option<(Split, Vec<f32>)>,
        (propensities, propensity_seconds): (Option<Vec<Option<f64>>>, Option<f64>),
        config: &TrainConfig,
        on: &mut dyn FnMut(Event),
    ) -> Result<bool> {
        if !model.all_finite() {
            return Err(Error::Diverged {
                epoch,
                step,
                smaller: SMALLER,
                what: "a weight became NaN or infinite".into(),
            });
        }
        // Finite weights can still give scores that overflow, on inputs far from the training
        // split's.
        check_split_scores(
            valid.1,
            valid.0.set,
            &format!("the validation split after epoch {epoch}"),
        )?;
        let ndcg = |split: Split, scores: &[f32]| {
            mean_ndcg(
                config.eval_k,
                scores,
                &split.set.labels,
                &split.set.group_offsets,
                config.idcg_zero,
            )
        };
        // Checked in `check`: the validation split has a positive group.
        let valid_ndcg = ndcg(valid.0, valid.1).unwrap_or(0.0);
        let log = EpochLog {
            epoch,
            data_loss: losses.0,
            teacher_loss: losses.1,
            rd_loss: losses.2,
            valid_ndcg,
            // The test curve's point of an epoch whose test scores overflow is missing: only
            // the model kept is refused for them ([`crate::ranking::experiment::run_model`]).
            test_ndcg: test
                .filter(|(_, scores)| scores.iter().all(|s| s.is_finite()))
                .and_then(|(split, scores)| ndcg(split, &scores)),
            propensities,
            propensity_seconds,
            seconds,
            docs_per_s: docs as f64 / seconds.max(1e-9),
        };
        on(Event::Epoch(&log));
        if valid_ndcg > self.best.0 {
            self.best = (valid_ndcg, epoch, model.clone());
        }
        self.history.push(log);
        Ok(config.patience.is_some_and(|p| epoch >= self.best.1 + p))
    }

    fn finish(self) -> Member {
        Member {
            model: self.best.2,
            run: MemberRun {
                best_epoch: self.best.1,
                best_valid_ndcg: self.best.0,
                history: self.history,
            },
        }
    }
}

/// What learns y in [0, 1] alone, in words, where `loss` or `objective` does: a global
/// objective, or RankBCE; none for the losses that take grades.
pub fn binary_learner(
    loss: crate::model::LossKind,
    objective: Option<&crate::model::Objective>,
) -> Option<String> {
    match objective {
        Some(objective) => Some(format!(
            "a global objective (--objective {}) learns binary labels",
            objective.name()
        )),
        None => {
            (!loss.entry().graded).then(|| format!("--loss {} learns y in {{0, 1}}", loss.name()))
        }
    }
}

/// Checks the configuration and the inputs before any training; returns the input width.
fn check(train: Split, valid: Split, config: &TrainConfig, guidance: &Guidance) -> Result<usize> {
    config.validate()?;
    let n_train = train.set.n_docs();
    let width = train.inputs.width();
    if width == 0
        || train.inputs.n_rows() != n_train
        || valid.inputs.n_rows() != valid.set.n_docs()
        || valid.inputs.width() != width
    {
        return Err(Error::Config(format!(
            "the model would see {width} features: input matrices and splits disagree"
        )));
    }
    for t in &guidance.teachers {
        if t.len() != n_train {
            return Err(Error::Config(format!(
                "a teacher scores {} documents, the training set has {n_train}",
                t.len()
            )));
        }
    }
    // RankBCE and the global objectives learn y in [0, 1]: on grades their loss goes below 0
    // and rewards nothing (`train --training-labels grades --loss rankbce`).
    let largest = train.set.labels.iter().copied().fold(0.0f32, f32::max);
    if largest > 1.0 {
        if let Some(learner) = binary_learner(config.loss, config.objective.as_ref()) {
            return Err(Error::Config(format!(
                "{learner}, and the training labels reach {largest} (grades): choose --loss {} without --objective, or binary labels (--training-labels gumbel)",
                crate::model::loss::LossKind::graded_names()
            )));
        }
    }
    crate::model::mlp::check_size(
        width,
        &config.widths,
        config.batch_docs.max(largest_group(train.set)),
        crate::memory::available_memory(),
        "--widths (or --batch-docs)",
    )?;
    // A model whose inputs never change cannot learn: say so, naming what it sees, rather than
    // train to ln 2. (Inputs that vary only between queries are preparation's warning: such a
    // model trains, and ranks each query as a random order would.)
    let mut first = Vec::new();
    train.inputs.append_rows(0..1, &mut first);
    let mut constant = true;
    train.inputs.for_each_chunk(SCORE_CHUNK_DOCS, |rows| {
        constant = constant && rows.chunks_exact(width).all(|row| row == first);
    });
    if constant {
        let (sees, advice) = match config.view {
            FeatureView::Regular => (
                "x, the regular features",
                "give it informative features (fewer --privileged columns leave more to x)",
            ),
            FeatureView::Privileged => (
                "z, the privileged features: a teacher that sees z alone, as GenD's",
                "choose other privileged features (--privileged), or leave out the methods whose teacher sees z alone (gend)",
            ),
            FeatureView::Both => ("x and z", "give it informative features"),
        };
        return Err(Error::Data(format!(
            "the model's {width} input features ({sees}) are constant on the training split: it cannot learn anything from them; {advice}"
        )));
    }
    if valid.set.positive_groups() == 0 {
        return Err(Error::Data(
            "the validation split has no group with a y = 1: validation NDCG cannot pick an epoch"
                .into(),
        ));
    }
    Ok(width)
}

/// Documents in the largest group of a split (a batch holds whole groups).
fn largest_group(set: &RankingSet) -> usize {
    (0..set.n_groups())
        .map(|g| set.group(g).len())
        .max()
        .unwrap_or(0)
}

/// One mini-batch of whole groups, gathered into contiguous buffers.
#[derive(Default)]
struct Batch {
    inputs: Vec<f32>,
    labels: Vec<f32>,
    /// One buffer per teacher.
    teachers: Vec<Vec<f32>>,
    offsets: Vec<usize>,
    positive: Vec<bool>,
    /// The training-set index of each group in the batch.
    groups: Vec<usize>,
}

impl Batch {
    /// Gathers groups `order[at..]` of `split`, with `labels` (one per document of the split),
    /// until `batch_docs` documents; returns where the next batch starts.
    fn fill(
        &mut self,
        split: Split,
        labels: &[f32],
        teachers: &[&[f32]],
        order: &[usize],
        mut at: usize,
        batch_docs: usize,
    ) -> usize {
        let set = split.set;
        self.inputs.clear();
        self.labels.clear();
        self.teachers.resize_with(teachers.len(), Vec::new);
        self.teachers.iter_mut().for_each(Vec::clear);
        self.positive.clear();
        self.groups.clear();
        self.offsets.clear();
        self.offsets.push(0);
        while at < order.len() {
            let g = order[at];
            let docs = set.group(g);
            if !self.labels.is_empty() && self.labels.len() + docs.len() > batch_docs {
                break;
            }
            split.inputs.append_rows(docs.clone(), &mut self.inputs);
            self.labels.extend_from_slice(&labels[docs.clone()]);
            for (buffer, t) in self.teachers.iter_mut().zip(teachers) {
                buffer.extend_from_slice(&t[docs.clone()]);
            }
            self.positive.push(set.positive_group[g]);
            self.groups.push(g);
            self.offsets.push(self.labels.len());
            at += 1;
        }
        at
    }
}

//! Training one ranking model on the CPU engine: batches of whole query groups, the data loss on
//! S_label, the teacher loss on S_all when teachers are given (PFD Eq. 1), the Ranking
//! Distillation loss when its targets are given, Adam, validation NDCG@k after every epoch, early
//! stopping, and the model of the best validation epoch kept.

use crate::cpu::adam::{Adam, AdamConfig};
use crate::cpu::loss::{data_loss, ranking_distillation_loss, teacher_loss, LossKind};
use crate::cpu::mlp::{Activations, Mlp};
use crate::data::prepare::{FeatureView, RankingSet};
use crate::distill::RdTargets;
use crate::error::{Error, Result};
use crate::metrics::{mean_ndcg, IdcgZero};
use crate::rng::Rng;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TrainConfig {
    pub loss: LossKind,
    /// The features the model sees.
    pub view: FeatureView,
    /// Hidden layer widths (spec §2 default 256-256-128-64).
    pub widths: Vec<usize>,
    pub epochs: usize,
    pub adam: AdamConfig,
    /// Documents per mini-batch, made of whole query groups (a larger group is a batch alone).
    pub batch_docs: usize,
    /// Weight of the data loss in PFD Eq. 1 when a teacher is given, in (0, 1).
    pub alpha: f64,
    /// The k of the validation NDCG@k that picks the best epoch (the paper's 8).
    pub eval_k: usize,
    pub idcg_zero: IdcgZero,
    /// Stop after this many epochs without a better validation NDCG@k (None: run every epoch).
    pub patience: Option<usize>,
    pub seed: u64,
    /// A global objective (Eban et al.) as the data loss instead of `loss`, on the documents of
    /// S_label labelled by y; the teacher loss stays `loss`'s. CPU engine only.
    #[serde(default)]
    pub objective: Option<crate::objectives::Objective>,
    /// The objective's multipliers ascend at this factor times the learning rate.
    #[serde(default = "default_dual_rate_factor")]
    pub dual_rate_factor: f64,
}

fn default_dual_rate_factor() -> f64 {
    crate::objectives::train::DEFAULT_DUAL_RATE_FACTOR
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            loss: LossKind::RankNet,
            view: FeatureView::Regular,
            widths: vec![256, 256, 128, 64],
            epochs: 20,
            adam: AdamConfig::default(),
            batch_docs: 512,
            alpha: 0.5,
            eval_k: 8,
            idcg_zero: IdcgZero::Exclude,
            patience: None,
            seed: 0,
            objective: None,
            dual_rate_factor: default_dual_rate_factor(),
        }
    }
}

impl TrainConfig {
    /// Checks everything a user can get wrong, before any training starts.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        if self.epochs == 0 {
            return bad("epochs must be at least 1".into());
        }
        if !(self.adam.lr.is_finite() && self.adam.lr > 0.0) {
            return bad(format!("learning rate {} must be positive", self.adam.lr));
        }
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return bad(format!(
                "alpha = {} must lie in (0, 1): it weighs the data loss against the teacher loss",
                self.alpha
            ));
        }
        if self.widths.contains(&0) {
            return bad("hidden widths must be positive".into());
        }
        if self.batch_docs == 0 || self.eval_k == 0 {
            return bad("batch size and k must be positive".into());
        }
        if !(self.dual_rate_factor.is_finite() && self.dual_rate_factor >= 0.0) {
            return bad(format!(
                "dual rate factor {} must be finite and >= 0",
                self.dual_rate_factor
            ));
        }
        Ok(())
    }
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
    /// The model of the best validation epoch.
    pub model: Mlp<f32>,
    pub best_epoch: usize,
    pub best_valid_ndcg: f64,
    pub history: Vec<EpochLog>,
}

/// A split and the input matrix a model sees for it (`n_docs x width`, row-major).
#[derive(Clone, Copy)]
pub struct Split<'a> {
    pub set: &'a RankingSet,
    pub inputs: &'a [f32],
}

/// What guides a model besides its labels.
#[derive(Default)]
pub struct Guidance<'a> {
    /// The teachers' logits on every training document (PFD, GenD, self-distillation, several for
    /// multi-teacher PFD). Empty: no distillation.
    pub teachers: Vec<&'a [f32]>,
    /// Ranking Distillation: the teacher's top-K unlabeled documents of every training group.
    pub ranking_distillation: Option<&'a RdTargets>,
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

/// Trains a model on the `config.view` features of `train`, without guidance or with one teacher.
pub fn train(
    train: &RankingSet,
    valid: &RankingSet,
    config: &TrainConfig,
    teacher: Option<&[f32]>,
    on: &mut dyn FnMut(Event),
) -> Result<Trained> {
    let (train_inputs, valid_inputs) = (train.inputs(config.view), valid.inputs(config.view));
    let guidance = Guidance {
        teachers: teacher.into_iter().collect(),
        ranking_distillation: None,
    };
    fit(
        Split {
            set: train,
            inputs: &train_inputs,
        },
        Split {
            set: valid,
            inputs: &valid_inputs,
        },
        None,
        config,
        &guidance,
        on,
    )
}

/// Trains a model on given input matrices, picking the epoch with the best validation NDCG@k.
pub fn fit(
    train: Split,
    valid: Split,
    test: Option<Split>,
    config: &TrainConfig,
    guidance: &Guidance,
    on: &mut dyn FnMut(Event),
) -> Result<Trained> {
    let width = check(train, valid, config, guidance)?;
    let mut model = Mlp::<f32>::new(width, &config.widths, config.seed);
    let mut adam = Adam::new(&model, config.adam);
    let groups: Vec<usize> = (0..train.set.n_groups())
        .filter(|&g| guidance.uses_unlabeled() || train.set.positive_group[g])
        .collect();
    if groups.is_empty() {
        return Err(Error::Data(
            "no positive training groups to train on".into(),
        ));
    }
    let alpha = if guidance.teachers.is_empty() {
        1.0
    } else {
        config.alpha as f32
    };

    let mut objective = config.objective.map(|o| ObjectiveLoss::new(o, config));
    let mut divergence = Divergence::default();
    let mut selection = Selection::new(model.clone());
    let mut batch = Batch::default();
    let mut acts = Activations::default();
    let mut grads = model.zero_gradients();
    let mut step = 0;
    for epoch in 1..=config.epochs {
        let started = Instant::now();
        let mut order = groups.clone();
        Rng::stream(config.seed, 0x6570_6f63_6800 + epoch as u64).shuffle(&mut order);
        let (mut data_sum, mut teacher_sum, mut rd_sum, mut batches, mut docs) =
            (0f64, 0f64, 0f64, 0usize, 0usize);
        let mut at = 0;
        while at < order.len() {
            at = batch.fill(train, &guidance.teachers, &order, at, config.batch_docs);
            let logits = model.forward(&batch.inputs, &mut acts);
            batch.dlogits.clear();
            batch.dlogits.resize(logits.len(), 0.0);
            let ld = match objective.as_mut() {
                Some(o) => o.loss(
                    logits,
                    (&batch.labels, &batch.offsets, &batch.positive),
                    alpha,
                    &mut batch.dlogits,
                ),
                None => data_loss(
                    config.loss,
                    logits,
                    &batch.labels,
                    &batch.offsets,
                    &batch.positive,
                    alpha,
                    &mut batch.dlogits,
                ),
            };
            let teachers: Vec<&[f32]> = batch.teachers.iter().map(Vec::as_slice).collect();
            let all = vec![true; batch.positive.len()];
            let lt = teacher_loss(
                config.loss,
                logits,
                &teachers,
                &batch.offsets,
                &all,
                1.0 - alpha,
                &mut batch.dlogits,
            );
            let lr = match guidance.ranking_distillation {
                Some(rd) => {
                    let weights = rd.batch_weights(&batch.groups, &batch.offsets, logits, epoch);
                    ranking_distillation_loss(
                        logits,
                        &weights,
                        rd.config.alpha_rd as f32,
                        &mut batch.dlogits,
                    )
                }
                None => 0.0,
            };
            step += 1;
            if !(ld.is_finite() && lt.is_finite() && lr.is_finite()) {
                return Err(Error::Diverged {
                    epoch,
                    step,
                    what: format!(
                        "loss is {ld} (data) / {lt} (teacher) / {lr} (ranking distillation)"
                    ),
                });
            }
            divergence.check(epoch, step, ld as f64 + lt as f64 + lr as f64)?;
            model.backward(&batch.inputs, &acts, &batch.dlogits, &mut grads);
            adam.update(&mut model, &grads);
            if let Some(o) = objective.as_mut() {
                o.update();
            }
            data_sum += ld as f64;
            teacher_sum += lt as f64;
            rd_sum += lr as f64;
            batches += 1;
            docs += batch.labels.len();
            on(Event::Step {
                docs: batch.labels.len(),
            });
        }
        let batches = batches as f64;
        let means = (data_sum / batches, teacher_sum / batches, rd_sum / batches);
        let seconds = started.elapsed();
        let valid_scores = score(&model, valid.inputs);
        let test_scores = test.map(|t| (t, score(&model, t.inputs)));
        if selection.end_epoch(
            &model,
            epoch,
            step,
            means,
            docs,
            seconds,
            (valid, &valid_scores),
            test_scores,
            config,
            on,
        )? {
            break;
        }
    }
    Ok(selection.finish())
}

/// A global objective as the data loss: its multipliers, anchor biases and label prior live across
/// the steps of a training run, as in `objectives::train`.
struct ObjectiveLoss {
    objective: crate::objectives::Objective,
    params: crate::objectives::Params<f32>,
    prior: crate::objectives::LabelPrior,
    bias_adam: crate::cpu::adam::AdamVector<f32>,
    dual_step: f32,
    grad: crate::objectives::Grad<f32>,
    /// The batch's S_label documents: their index in the batch, logit and label.
    index: Vec<usize>,
    logits: Vec<f32>,
    labels: Vec<f32>,
}

impl ObjectiveLoss {
    fn new(objective: crate::objectives::Objective, config: &TrainConfig) -> Self {
        let params = crate::objectives::Params::new(&objective, 1.0);
        ObjectiveLoss {
            bias_adam: crate::cpu::adam::AdamVector::new(params.biases.len(), config.adam),
            params,
            objective,
            prior: Default::default(),
            dual_step: (config.dual_rate_factor * config.adam.lr) as f32,
            grad: Default::default(),
            index: Vec::new(),
            logits: Vec::new(),
            labels: Vec::new(),
        }
    }

    /// The objective on the documents of the batch's positive groups (S_label), given the batch's
    /// (labels, group offsets, positive groups); adds `scale` times its gradient into `dlogits`.
    fn loss(
        &mut self,
        logits: &[f32],
        (labels, offsets, positive): (&[f32], &[usize], &[bool]),
        scale: f32,
        dlogits: &mut [f32],
    ) -> f32 {
        self.index.clear();
        for (g, w) in offsets.windows(2).enumerate() {
            if positive[g] {
                self.index.extend(w[0]..w[1]);
            }
        }
        self.logits.clear();
        self.logits.extend(self.index.iter().map(|&i| logits[i]));
        self.labels.clear();
        self.labels.extend(self.index.iter().map(|&i| labels[i]));
        if self.index.is_empty() {
            self.grad = Default::default();
            return 0.0;
        }
        self.prior.observe(&self.labels);
        let loss = self.objective.loss(
            crate::objectives::Surrogate::Log,
            &self.logits,
            &self.labels,
            self.prior.value(),
            &self.params,
            &mut self.grad,
        );
        for (&i, &d) in self.index.iter().zip(&self.grad.dlogits) {
            dlogits[i] += scale * d;
        }
        loss
    }

    /// After the model's step: the anchor biases' Adam step and the multipliers' ascent.
    fn update(&mut self) {
        if self.index.is_empty() {
            return;
        }
        self.bias_adam
            .update(&mut self.params.biases, &self.grad.dbiases);
        crate::objectives::dual_ascent(
            &mut self.params.lambdas,
            &self.grad.dlambdas,
            self.dual_step,
        );
    }
}

/// Divergence that stays finite: every loss here starts near ln 2 per pair or document, and a
/// step whose loss grows a million times past the first step's (at least 1) has run away, as
/// with a learning rate so large that the weights jump by billions while every number stays
/// finite. Both engines check each step's loss with it.
#[derive(Default)]
struct Divergence {
    first: Option<f64>,
}

impl Divergence {
    const FACTOR: f64 = 1e6;

    fn check(&mut self, epoch: usize, step: usize, loss: f64) -> Result<()> {
        let first = *self.first.get_or_insert(loss);
        let bound = Self::FACTOR * first.abs().max(1.0);
        if loss.abs() > bound {
            return Err(Error::Diverged {
                epoch,
                step,
                what: format!(
                    "the loss reached {loss:.3e}, over a million times its first value {first:.4}"
                ),
            });
        }
        Ok(())
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
        config: &TrainConfig,
        on: &mut dyn FnMut(Event),
    ) -> Result<bool> {
        if !model.all_finite() {
            return Err(Error::Diverged {
                epoch,
                step,
                what: "a weight became NaN or infinite".into(),
            });
        }
        // Finite weights can still be so large that scores overflow.
        if let Some(bad) = valid.1.iter().find(|s| !s.is_finite()) {
            return Err(Error::Diverged {
                epoch,
                step,
                what: format!("the weights are finite but score validation documents {bad}"),
            });
        }
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
            test_ndcg: test.and_then(|(split, scores)| ndcg(split, &scores)),
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

    fn finish(self) -> Trained {
        Trained {
            model: self.best.2,
            best_epoch: self.best.1,
            best_valid_ndcg: self.best.0,
            history: self.history,
        }
    }
}

/// Checks the configuration and the inputs before any training; returns the input width.
fn check(train: Split, valid: Split, config: &TrainConfig, guidance: &Guidance) -> Result<usize> {
    config.validate()?;
    let n_train = train.set.n_docs();
    let width = if n_train > 0 {
        train.inputs.len() / n_train
    } else {
        0
    };
    if width == 0
        || width * n_train != train.inputs.len()
        || valid.inputs.len() != valid.set.n_docs() * width
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
    crate::cpu::mlp::check_size(
        width,
        &config.widths,
        config.batch_docs.max(largest_group(train.set)),
        crate::cpu::mlp::available_memory(),
    )?;
    // A model whose inputs never change cannot learn: say so rather than train to ln 2.
    let first = &train.inputs[..width];
    if train.inputs.chunks_exact(width).all(|row| row == first) {
        return Err(Error::Data(format!(
            "the model's {width} input features ({:?} view) are constant on the training split: it cannot learn anything from them; give it informative features (for the student, fewer --privileged columns)",
            config.view
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

/// Where a model trains.
#[derive(Clone, Default)]
pub enum Engine {
    /// The CPU engine (gemm + rayon).
    #[default]
    Cpu,
    /// The WGSL kernels on a wgpu device.
    Gpu(std::sync::Arc<crate::gpu::Gpu>),
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Engine::Cpu => f.write_str("cpu"),
            Engine::Gpu(g) => write!(f, "gpu ({})", g.name()),
        }
    }
}

/// [`fit`] on the chosen engine (blocking on the GPU's work natively).
#[cfg(not(target_arch = "wasm32"))]
pub fn fit_on(
    engine: &Engine,
    train: Split,
    valid: Split,
    test: Option<Split>,
    config: &TrainConfig,
    guidance: &Guidance,
    on: &mut dyn FnMut(Event),
) -> Result<Trained> {
    match engine {
        Engine::Cpu => fit(train, valid, test, config, guidance, on),
        Engine::Gpu(gpu) => pollster::block_on(fit_gpu(
            gpu.clone(),
            train,
            valid,
            test,
            config,
            guidance,
            on,
        )),
    }
}

/// [`fit`] with every training step on the GPU: the same batches, initial weights, losses and Adam
/// as the CPU engine. Losses are read back every `loss_window` steps and at the end of each epoch;
/// validation and test documents are scored on the GPU, NDCG computed on the read-back scores.
pub async fn fit_gpu(
    gpu: std::sync::Arc<crate::gpu::Gpu>,
    train: Split<'_>,
    valid: Split<'_>,
    test: Option<Split<'_>>,
    config: &TrainConfig,
    guidance: &Guidance<'_>,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Trained> {
    let width = check(train, valid, config, guidance)?;
    if guidance.ranking_distillation.is_some() {
        return Err(Error::Config(
            "Ranking Distillation trains on the CPU engine only (--backend cpu)".into(),
        ));
    }
    if let Some(o) = config.objective {
        return Err(Error::Config(format!(
            "a global objective ({o}) as the data loss of a ranking model trains on the CPU engine only (--backend cpu)"
        )));
    }
    let model = Mlp::<f32>::new(width, &config.widths, config.seed);
    let groups: Vec<usize> = (0..train.set.n_groups())
        .filter(|&g| guidance.uses_unlabeled() || train.set.positive_group[g])
        .collect();
    if groups.is_empty() {
        return Err(Error::Data(
            "no positive training groups to train on".into(),
        ));
    }
    let largest_group = groups
        .iter()
        .map(|&g| train.set.group(g).len())
        .max()
        .unwrap_or(0);
    // A batch holds whole groups, so the largest group sets the smallest batch there can be.
    let limit = gpu.device.limits().max_storage_buffer_binding_size;
    let needed =
        crate::gpu::trainer::binding_bytes(&gpu, &model, largest_group, guidance.teachers.len());
    if largest_group > config.batch_docs && needed > limit {
        return Err(Error::Gpu(format!(
            "the largest training query group has {largest_group} documents, and a batch holds whole groups, so it needs {needed} bytes in one storage binding where {} allows {limit} (max_storage_buffer_binding_size, the adapter's own limit): no batch size helps; train on the CPU engine (--backend cpu), which has no such limit, or split or drop that group",
            gpu.name()
        )));
    }
    let mut trainer = crate::gpu::trainer::GpuTrainer::new(
        gpu,
        &model,
        config.loss,
        config.alpha as f32,
        config.adam,
        config.batch_docs.max(largest_group),
        guidance.teachers.len(),
    )?;
    let mut selection = Selection::new(model);
    let mut batch = Batch::default();
    let mut divergence = Divergence::default();
    let mut step = 0;
    for epoch in 1..=config.epochs {
        let started = Instant::now();
        let mut order = groups.clone();
        Rng::stream(config.seed, 0x6570_6f63_6800 + epoch as u64).shuffle(&mut order);
        let (mut losses, mut docs, mut at) = (Vec::new(), 0usize, 0);
        while at < order.len() {
            at = batch.fill(train, &guidance.teachers, &order, at, config.batch_docs);
            let teachers: Vec<&[f32]> = batch.teachers.iter().map(Vec::as_slice).collect();
            let gpu_batch = crate::gpu::trainer::GpuBatch {
                inputs: &batch.inputs,
                labels: &batch.labels,
                offsets: &batch.offsets,
                positive: &batch.positive,
                teachers: &teachers,
            };
            trainer.step(&gpu_batch).await?;
            step += 1;
            docs += batch.labels.len();
            on(Event::Step {
                docs: batch.labels.len(),
            });
            if step % trainer.loss_window == 0 || at >= order.len() {
                losses.extend(trainer.read_losses().await?);
            }
        }
        if let Some((i, l)) = losses
            .iter()
            .enumerate()
            .find(|(_, l)| !(l.0.is_finite() && l.1.is_finite()))
        {
            return Err(Error::Diverged {
                epoch,
                step: step - losses.len() + i + 1,
                what: format!("loss is {} (data) / {} (teacher)", l.0, l.1),
            });
        }
        for (i, l) in losses.iter().enumerate() {
            divergence.check(epoch, step - losses.len() + i + 1, l.0 as f64 + l.1 as f64)?;
        }
        let model = trainer.model().await?;
        let n = losses.len().max(1) as f64;
        let means = (
            losses.iter().map(|l| l.0 as f64).sum::<f64>() / n,
            losses.iter().map(|l| l.1 as f64).sum::<f64>() / n,
            0.0,
        );
        let seconds = started.elapsed();
        let valid_scores = trainer.score(valid.inputs).await?;
        let test_scores = match test {
            Some(t) => Some((t, trainer.score(t.inputs).await?)),
            None => None,
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
            config,
            on,
        )? {
            break;
        }
    }
    Ok(selection.finish())
}

/// Scores `inputs` (n_docs x model.n_in()) on `engine`: on the GPU, the forward kernels run over
/// chunks of [`SCORE_CHUNK_DOCS`] documents, each read back; on the CPU engine, [`score`].
pub async fn score_on(engine: &Engine, model: &Mlp<f32>, inputs: &[f32]) -> Result<Vec<f32>> {
    match engine {
        Engine::Cpu => Ok(score(model, inputs)),
        Engine::Gpu(gpu) => {
            let n_docs = inputs.len() / model.n_in().max(1);
            let rows = n_docs.clamp(1, SCORE_CHUNK_DOCS);
            let mlp = crate::gpu::trainer::GpuMlp::new(
                gpu.clone(),
                model,
                crate::cpu::adam::AdamConfig::default(),
                rows,
                0,
            )?;
            mlp.score(inputs).await
        }
    }
}

/// Documents scored at once on the GPU.
pub const SCORE_CHUNK_DOCS: usize = 8192;

/// Scores `inputs` (n_docs x model.n_in()) in chunks, so that activations stay small.
pub fn score(model: &Mlp<f32>, inputs: &[f32]) -> Vec<f32> {
    const CHUNK_DOCS: usize = 8192;
    let mut acts = Activations::default();
    let mut out = Vec::with_capacity(inputs.len() / model.n_in().max(1));
    for chunk in inputs.chunks(CHUNK_DOCS * model.n_in()) {
        out.extend_from_slice(model.forward(chunk, &mut acts));
    }
    out
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
    dlogits: Vec<f32>,
}

impl Batch {
    /// Gathers groups `order[at..]` until `batch_docs` documents; returns where the next batch starts.
    fn fill(
        &mut self,
        split: Split,
        teachers: &[&[f32]],
        order: &[usize],
        mut at: usize,
        batch_docs: usize,
    ) -> usize {
        let (set, width) = (split.set, split.inputs.len() / split.set.n_docs());
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
            self.inputs
                .extend_from_slice(&split.inputs[docs.start * width..docs.end * width]);
            self.labels.extend_from_slice(&set.labels[docs.clone()]);
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
/// A clock that works natively and in the browser (where it reads `Date.now()`, in milliseconds).
pub struct Instant {
    #[cfg(not(target_arch = "wasm32"))]
    start: std::time::Instant,
    #[cfg(target_arch = "wasm32")]
    start_ms: f64,
}

impl Instant {
    pub fn now() -> Self {
        Instant {
            #[cfg(not(target_arch = "wasm32"))]
            start: std::time::Instant::now(),
            #[cfg(target_arch = "wasm32")]
            start_ms: js_sys::Date::now(),
        }
    }
    /// Seconds since `now()`.
    pub fn elapsed(&self) -> f64 {
        #[cfg(not(target_arch = "wasm32"))]
        return self.start.elapsed().as_secs_f64();
        #[cfg(target_arch = "wasm32")]
        return (js_sys::Date::now() - self.start_ms) / 1000.0;
    }
}

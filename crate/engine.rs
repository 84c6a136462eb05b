//! Where a model trains: the CPU engine or the WGSL kernels on a wgpu device. This module is the
//! one place that tells them apart. The training loops ([`crate::ranking::train`] for ranking models,
//! [`crate::objectives::train`] for the global objectives' classifiers) ask [`Engine`] for a
//! trainer and drive it through the same calls on either engine: a step on a batch, the losses
//! of the steps since the last read, the model, and scores.

use std::sync::Arc;

use crate::cpu::classifier::CpuTrainer;
use crate::cpu::mlp::{score_inputs, SCORE_CHUNK_DOCS};
use crate::cpu::ranking::CpuRanking;
use crate::data::inputs::Inputs;
use crate::error::{Error, Result};
use crate::gpu::mlp::{binding_bytes, GpuMlp};
use crate::gpu::objective::GpuObjectiveTrainer;
use crate::gpu::trainer::GpuTrainer;
use crate::gpu::Gpu;
use crate::model::mlp::Mlp;
use crate::model::objective::Config as ObjectiveConfig;
use crate::model::objective::Params;
use crate::model::step::{LossPlan, StepBatch, StepLosses};
use crate::model::Ensemble;

/// Where a user asks models to train: the same three words at every door (`--backend`, the
/// setup's `backend`, Python's `backend=`, the page's Backend field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The faster engine, as [`Engine::open`] decides it: a hardware GPU when wgpu finds one,
    /// else the CPU engine (software GPUs such as lavapipe and SwiftShader are slower than the
    /// CPU engine, so auto does not take them).
    #[default]
    Auto,
    /// Any GPU adapter (WebGPU on the page), software ones included.
    Gpu,
    /// The CPU engine.
    Cpu,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Auto => "auto",
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        }
    }
}

/// Where a model trains.
#[derive(Clone, Default)]
pub enum Engine {
    /// The CPU engine (gemm + rayon).
    #[default]
    Cpu,
    /// The WGSL kernels on a wgpu device.
    Gpu(Arc<Gpu>),
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Engine::Cpu => f.write_str("cpu"),
            Engine::Gpu(g) => write!(f, "gpu ({})", g.name()),
        }
    }
}

/// What [`Engine::open`] took, in a line for people ("backend: CPU engine (no hardware GPU
/// adapter found)").
pub type Opened = (Engine, String);

impl Engine {
    /// The engine `backend` asks for, and a line saying which it took and why. This is the one
    /// place that decides `auto`, with one meaning per door:
    ///
    /// * the CLI and Python: a hardware GPU adapter when wgpu finds one, else the CPU engine;
    /// * the page: the same rule in each worker, which the page refines by measuring both
    ///   engines before a Run ([`faster`]) and then sends the jobs `gpu` or `cpu`.
    ///
    /// `gpu` takes any adapter, software ones included, and fails with wgpu's reasons when there
    /// is none; `cpu` never looks for one.
    pub async fn open(backend: Backend) -> Result<Opened> {
        use crate::gpu::{AdapterChoice, Gpu};
        let choice = match backend {
            Backend::Cpu => return Ok((Engine::Cpu, "backend: CPU engine".into())),
            Backend::Gpu => AdapterChoice::Any,
            Backend::Auto => AdapterChoice::HardwareOnly,
        };
        match Gpu::new(choice).await {
            Ok(gpu) => {
                let note = format!(
                    "backend: GPU, {} ({:?}, {:?})",
                    gpu.info.name, gpu.info.backend, gpu.info.device_type
                );
                Ok((Engine::Gpu(gpu), note))
            }
            // `auto` says what it chose and, in a few words, why: the probe's details (every
            // backend wgpu tried) matter only when a GPU was asked for.
            Err(e) if backend == Backend::Auto => {
                let why = match e.to_string() {
                    m if m.contains("software adapter") => {
                        m.trim_start_matches("GPU: ").to_string()
                    }
                    _ => "no hardware GPU adapter found".to_string(),
                };
                Ok((Engine::Cpu, format!("backend: CPU engine ({why})")))
            }
            Err(e) => Err(e),
        }
    }

    /// [`Engine::open`]'s rule on a device that is already open (the page's worker opens its
    /// WebGPU device when it starts): `auto` takes it when it is a hardware GPU.
    pub fn with_device(backend: Backend, gpu: Option<Arc<Gpu>>) -> Result<Opened> {
        match (backend, gpu) {
            (Backend::Cpu, _) => Ok((Engine::Cpu, "backend: CPU engine".into())),
            (Backend::Gpu, None) => Err(Error::Gpu(
                "a GPU was chosen but no GPU device is open".into(),
            )),
            (Backend::Auto, Some(gpu)) if gpu.is_software() => Ok((
                Engine::Cpu,
                format!("backend: CPU engine ({} is a software adapter)", gpu.name()),
            )),
            (Backend::Auto, None) => {
                Ok((Engine::Cpu, "backend: CPU engine (no GPU adapter)".into()))
            }
            (_, Some(gpu)) => {
                let note = format!("backend: GPU, {}", gpu.name());
                Ok((Engine::Gpu(gpu), note))
            }
        }
    }

    /// The backend a trainer should use on this engine, as a setup writes it.
    pub fn backend(&self) -> Backend {
        match self {
            Engine::Cpu => Backend::Cpu,
            Engine::Gpu(_) => Backend::Gpu,
        }
    }

    /// A ranking model's trainer, starting from `model`, for batches of `batch_docs` documents
    /// of whole groups, the largest of which has `largest_group` documents.
    pub fn ranking_trainer(
        &self,
        model: Mlp<f32>,
        plan: &LossPlan,
        batch_docs: usize,
        largest_group: usize,
    ) -> Result<RankingTrainer> {
        match self {
            Engine::Cpu => {
                if let Some(attention) = &model.attention {
                    // The backward pass keeps each query's probabilities (heads × m²) and makes
                    // their gradients beside them.
                    let bytes = 2 * 4 * attention.heads as u128 * (largest_group as u128).pow(2);
                    crate::memory::check_fits(
                        bytes,
                        &format!(
                            "the attention probabilities of the largest training query ({largest_group} documents: {} heads × {largest_group}², kept for the backward pass with their gradients)",
                            attention.heads
                        ),
                        "split or drop that query, or train the MLP (--attention-heads 0)",
                    )?;
                }
                Ok(RankingTrainer::Cpu(Box::new(CpuRanking::new(model, plan))))
            }
            Engine::Gpu(gpu) => {
                // A batch holds whole groups, so the largest group sets the smallest batch there
                // can be.
                let limit = gpu.device.limits().max_storage_buffer_binding_size;
                let needed = binding_bytes(gpu, &model, largest_group, plan.teachers);
                if largest_group > batch_docs && needed > limit {
                    return Err(Error::Gpu(format!(
                        "the largest training query group has {largest_group} documents, and a batch holds whole groups, so it needs {needed} bytes in one storage binding where {} allows {limit} (max_storage_buffer_binding_size, the adapter's own limit): no batch size helps; train on the CPU engine (--backend cpu), which has no such limit, or split or drop that group",
                        gpu.name()
                    )));
                }
                let max_docs = batch_docs.max(largest_group);
                let trainer = GpuTrainer::new(gpu.clone(), &model, plan, max_docs)?;
                Ok(RankingTrainer::Gpu(Box::new(trainer)))
            }
        }
    }

    /// A global objective's classifier trainer, starting from `model`, for batches of up to
    /// `max_batch` examples.
    pub fn objective_trainer(
        &self,
        model: Mlp<f32>,
        config: &ObjectiveConfig,
        max_batch: usize,
    ) -> Result<ObjectiveTrainer> {
        match self {
            Engine::Cpu => Ok(ObjectiveTrainer::Cpu(Box::new(CpuTrainer::new(
                model, config,
            )))),
            Engine::Gpu(gpu) => Ok(ObjectiveTrainer::Gpu(Box::new(GpuObjectiveTrainer::new(
                gpu.clone(),
                &model,
                config,
                max_batch,
            )?))),
        }
    }

    /// Scores `inputs` (n_docs x model.n_in()) with `model`: on the GPU, the forward kernels run
    /// over chunks of [`SCORE_CHUNK_DOCS`] documents, each read back; a listwise model's chunks
    /// are whole queries, as many as fit, and a query larger than a chunk scores on the CPU
    /// engine.
    pub async fn score(&self, model: &Mlp<f32>, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        match self {
            Engine::Cpu => Ok(score_inputs(model, inputs)),
            Engine::Gpu(gpu) => {
                let largest = match (&model.attention, inputs.groups()) {
                    (None, _) => 0,
                    (Some(_), Some(groups)) => {
                        groups.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
                    }
                    (Some(_), None) => inputs.n_rows(),
                };
                if largest > SCORE_CHUNK_DOCS {
                    return Ok(score_inputs(model, inputs));
                }
                let rows = inputs.n_rows().clamp(1, SCORE_CHUNK_DOCS);
                let adam = crate::model::AdamConfig::default();
                let mlp = GpuMlp::new(gpu.clone(), model, adam, rows, 0)?;
                mlp.score(inputs).await
            }
        }
    }

    /// Scores `inputs` with every member of `model` ([`Engine::score`]) and averages them
    /// ([`crate::model::ensemble::mean_scores`]).
    pub async fn score_ensemble(&self, model: &Ensemble, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        let mut members = Vec::with_capacity(model.len());
        for member in &model.members {
            members.push(self.score(member, inputs).await?);
        }
        Ok(crate::model::ensemble::mean_scores(&members))
    }
}

/// The page's refinement of `auto`: after timing the same training steps on both engines
/// (documents per second), the faster one; a tie goes to the CPU engine, which needs no device.
pub fn faster(cpu_docs_per_s: f64, gpu_docs_per_s: Option<f64>) -> Backend {
    match gpu_docs_per_s {
        Some(gpu) if gpu.is_finite() && gpu > cpu_docs_per_s => Backend::Gpu,
        _ => Backend::Cpu,
    }
}

/// A model in training on one engine: the one contract the training loops
/// ([`crate::ranking::train`], [`crate::objectives::train`]) and the benchmarks
/// ([`crate::bench`]) drive, whichever engine and application it belongs to. Every trainer of
/// both engines (the CPU engine's [`CpuRanking`] and [`CpuTrainer`], the GPU engine's
/// [`GpuTrainer`] and [`GpuObjectiveTrainer`]) and both dispatching enums ([`RankingTrainer`],
/// [`ObjectiveTrainer`]) implement it.
///
/// **Async, blocking only at the edge.** Every call that may wait for the device is async: in a
/// browser the only way to wait for WebGPU is to yield. Natively the doors block once, at the
/// edge ([`crate::native::block_on`]); on the CPU engine the futures complete without waiting.
///
/// **Read-back windows.** A step returns before its losses leave the engine: the GPU engine keeps
/// them on the device and copies them back in windows. After at most
/// [`loss_window`](Trainer::loss_window) steps the caller must call
/// [`read_losses`](Trainer::read_losses), which returns the losses of every step since the last
/// read, in order (the GPU engine refuses a step past a full window). The CPU engine's window is
/// one step.
///
/// **Consistency.** [`model`](Trainer::model) and [`score`](Trainer::score) see the weights after
/// every step submitted so far.
#[allow(async_fn_in_trait)] // the futures are !Send on WebGPU, and nothing spawns them
pub trait Trainer {
    /// What one step takes: a batch of whole query groups ([`StepBatch`]) for a ranking model,
    /// examples ([`Examples`]) for a classifier.
    type Batch<'a>;
    /// What one step reports: [`StepLosses`], or a classifier's loss.
    type Losses;

    /// One step on a batch: forward, the losses, backward, the optimiser.
    async fn step(&mut self, batch: &Self::Batch<'_>) -> Result<()>;

    /// [`step`](Trainer::step), with the time of each phase in milliseconds where the engine can
    /// tell them apart (the GPU engine's timestamp queries); elsewhere the whole step as one.
    async fn step_profiled(&mut self, batch: &Self::Batch<'_>) -> Result<Vec<(&'static str, f64)>> {
        let started = crate::clock::Instant::now();
        self.step(batch).await?;
        Ok(vec![("step", 1000.0 * started.elapsed())])
    }

    /// Steps that may pass before [`read_losses`](Trainer::read_losses) must be called.
    fn loss_window(&self) -> usize;

    /// The losses of the steps since the last read, in order.
    async fn read_losses(&mut self) -> Result<Vec<Self::Losses>>;

    /// The current model.
    async fn model(&self) -> Result<Mlp<f32>>;

    /// Scores `inputs` with the current model, on its engine.
    async fn score(&self, inputs: Inputs<'_>) -> Result<Vec<f32>>;
}

/// What one call of an epoch's step gave: the batch's size (documents or examples), and whether
/// it was the epoch's last batch.
pub struct Stepped {
    pub size: usize,
    pub last: bool,
}

/// One epoch of training, for either task on either engine: `step` takes the next batch and steps
/// `trainer` on it, until it says the batch was the epoch's last. The losses come back every
/// [`Trainer::loss_window`] steps and after the last batch, each step's checked by `check` (with
/// its step number, counted over the whole training in `steps`) as it arrives; `after` hears each
/// batch's size after its step (progress, and a stop requested). Returns the epoch's losses, in
/// order.
pub async fn run_epoch<T: Trainer>(
    trainer: &mut T,
    steps: &mut usize,
    mut step: impl AsyncFnMut(&mut T) -> Result<Stepped>,
    mut check: impl FnMut(usize, &T::Losses) -> Result<()>,
    mut after: impl FnMut(usize, usize) -> Result<()>,
) -> Result<Vec<T::Losses>> {
    let mut losses = Vec::new();
    loop {
        let stepped = step(trainer).await?;
        *steps += 1;
        if steps.is_multiple_of(trainer.loss_window()) || stepped.last {
            let read = trainer.read_losses().await?;
            let first = *steps + 1 - read.len();
            for (k, l) in read.iter().enumerate() {
                check(first + k, l)?;
            }
            losses.extend(read);
        }
        after(stepped.size, *steps)?;
        if stepped.last {
            return Ok(losses);
        }
    }
}

/// Divergence that stays finite: every loss here starts within a few units of 0 (near ln 2 per
/// pair, document or example; a global objective's near its terms at the initial multipliers,
/// `initial_lambda`, 1 by default), and a step whose loss grows a million times past the first
/// step's (at least 1) has run away, as with a learning rate so large that the weights jump by
/// billions while every number stays finite. Both tasks check each step's loss with it, on
/// either engine. A global objective's loss grows with its multipliers too, so a constraint
/// missed long enough under a large `dual_rate_factor` reaches the bound as well: the
/// multipliers are then a million times their start.
#[derive(Default)]
pub struct Runaway {
    first: Option<f64>,
}

impl Runaway {
    pub const FACTOR: f64 = 1e6;

    /// How the finite `loss` of the next step has run away, if it has: "reached ..., over a
    /// million times its first value ...", for the caller to say whose loss.
    pub fn check(&mut self, loss: f64) -> Option<String> {
        let first = *self.first.get_or_insert(loss);
        let bound = Self::FACTOR * first.abs().max(1.0);
        (loss.abs() > bound)
            .then(|| format!("reached {loss:.3e}, over a million times its first value {first:.4}"))
    }
}

/// A classifier's batch: examples row-major, one label each.
#[derive(Clone, Copy)]
pub struct Examples<'a> {
    pub inputs: &'a [f32],
    pub labels: &'a [f32],
}

impl Trainer for CpuRanking {
    type Batch<'a> = StepBatch<'a>;
    type Losses = StepLosses;
    async fn step(&mut self, batch: &Self::Batch<'_>) -> Result<()> {
        CpuRanking::step(self, batch);
        Ok(())
    }
    fn loss_window(&self) -> usize {
        1
    }
    async fn read_losses(&mut self) -> Result<Vec<StepLosses>> {
        Ok(CpuRanking::read_losses(self))
    }
    async fn model(&self) -> Result<Mlp<f32>> {
        Ok(CpuRanking::model(self).clone())
    }
    async fn score(&self, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        Ok(score_inputs(CpuRanking::model(self), inputs))
    }
}

impl Trainer for GpuTrainer {
    type Batch<'a> = StepBatch<'a>;
    type Losses = StepLosses;
    async fn step(&mut self, batch: &Self::Batch<'_>) -> Result<()> {
        GpuTrainer::step(self, batch).await
    }
    async fn step_profiled(&mut self, batch: &Self::Batch<'_>) -> Result<Vec<(&'static str, f64)>> {
        GpuTrainer::step_profiled(self, batch).await
    }
    fn loss_window(&self) -> usize {
        self.loss_window
    }
    async fn read_losses(&mut self) -> Result<Vec<StepLosses>> {
        GpuTrainer::read_losses(self).await
    }
    async fn model(&self) -> Result<Mlp<f32>> {
        GpuTrainer::model(self).await
    }
    /// A listwise model is scored by whole queries; one larger than a training batch's buffers
    /// scores on the CPU engine, from the weights read back.
    async fn score(&self, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        if self.attends() && !self.fits_queries(inputs) {
            return Ok(score_inputs(&GpuTrainer::model(self).await?, inputs));
        }
        GpuTrainer::score(self, inputs).await
    }
}

impl Trainer for CpuTrainer {
    type Batch<'a> = Examples<'a>;
    type Losses = f32;
    async fn step(&mut self, batch: &Self::Batch<'_>) -> Result<()> {
        CpuTrainer::step(self, batch.inputs, batch.labels);
        Ok(())
    }
    fn loss_window(&self) -> usize {
        1
    }
    async fn read_losses(&mut self) -> Result<Vec<f32>> {
        Ok(CpuTrainer::read_losses(self))
    }
    async fn model(&self) -> Result<Mlp<f32>> {
        Ok(self.model.clone())
    }
    async fn score(&self, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        Ok(score_inputs(&self.model, inputs))
    }
}

impl Trainer for GpuObjectiveTrainer {
    type Batch<'a> = Examples<'a>;
    type Losses = f32;
    async fn step(&mut self, batch: &Self::Batch<'_>) -> Result<()> {
        GpuObjectiveTrainer::step(self, batch.inputs, batch.labels).await
    }
    fn loss_window(&self) -> usize {
        self.loss_window
    }
    async fn read_losses(&mut self) -> Result<Vec<f32>> {
        GpuObjectiveTrainer::read_losses(self).await
    }
    async fn model(&self) -> Result<Mlp<f32>> {
        GpuObjectiveTrainer::model(self).await
    }
    async fn score(&self, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        GpuObjectiveTrainer::score_inputs(self, inputs).await
    }
}

/// A model in training on one engine or the other: the CPU engine's trainer `C` or the GPU
/// engine's `G`, for the same batches and losses. Every call goes to the engine's own trainer, in
/// one place for both tasks.
pub enum OnEngine<C, G> {
    Cpu(Box<C>),
    Gpu(Box<G>),
}

/// A ranking model in training, on either engine.
pub type RankingTrainer = OnEngine<CpuRanking, GpuTrainer>;

/// A global objective's classifier in training, on either engine.
pub type ObjectiveTrainer = OnEngine<CpuTrainer, GpuObjectiveTrainer>;

impl<C, G> Trainer for OnEngine<C, G>
where
    C: Trainer,
    G: Trainer<Losses = C::Losses>,
    for<'a> G: Trainer<Batch<'a> = C::Batch<'a>>,
{
    type Batch<'a> = C::Batch<'a>;
    type Losses = C::Losses;
    async fn step(&mut self, batch: &Self::Batch<'_>) -> Result<()> {
        match self {
            OnEngine::Cpu(t) => t.step(batch).await,
            OnEngine::Gpu(t) => t.step(batch).await,
        }
    }
    async fn step_profiled(&mut self, batch: &Self::Batch<'_>) -> Result<Vec<(&'static str, f64)>> {
        match self {
            OnEngine::Cpu(t) => t.step_profiled(batch).await,
            OnEngine::Gpu(t) => t.step_profiled(batch).await,
        }
    }
    fn loss_window(&self) -> usize {
        match self {
            OnEngine::Cpu(t) => t.loss_window(),
            OnEngine::Gpu(t) => t.loss_window(),
        }
    }
    async fn read_losses(&mut self) -> Result<Vec<Self::Losses>> {
        match self {
            OnEngine::Cpu(t) => t.read_losses().await,
            OnEngine::Gpu(t) => t.read_losses().await,
        }
    }
    async fn model(&self) -> Result<Mlp<f32>> {
        match self {
            OnEngine::Cpu(t) => t.model().await,
            OnEngine::Gpu(t) => t.model().await,
        }
    }
    async fn score(&self, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        match self {
            OnEngine::Cpu(t) => t.score(inputs).await,
            OnEngine::Gpu(t) => t.score(inputs).await,
        }
    }
}

impl RankingTrainer {
    /// Sets the network's learning rate for the steps that follow (a schedule's); Adam's moments
    /// and step count are kept. A global objective's multipliers and anchor biases keep theirs.
    pub fn set_learning_rate(&mut self, lr: f64) {
        match self {
            OnEngine::Cpu(t) => t.set_learning_rate(lr),
            OnEngine::Gpu(t) => t.set_learning_rate(lr),
        }
    }
}

impl ObjectiveTrainer {
    /// The current model and the objective's multipliers and anchor biases.
    pub async fn state(&self) -> Result<(Mlp<f32>, Params<f32>)> {
        match self {
            ObjectiveTrainer::Cpu(cpu) => Ok((cpu.model.clone(), cpu.params.clone())),
            ObjectiveTrainer::Gpu(gpu) => Ok((gpu.model().await?, gpu.params().await?)),
        }
    }

    /// The running label prior.
    pub fn prior(&self) -> &crate::model::objective::LabelPrior {
        match self {
            ObjectiveTrainer::Cpu(cpu) => &cpu.prior,
            ObjectiveTrainer::Gpu(gpu) => &gpu.prior,
        }
    }
}

//! Where a model trains: the CPU engine or the WGSL kernels on a wgpu device. This module is the
//! one place that tells them apart. The training loops ([`crate::ranking::train`] for ranking models,
//! [`crate::objectives::train`] for the global objectives' classifiers) ask [`Engine`] for a
//! trainer and drive it through the same calls on either engine: a step on a batch, the losses
//! of the steps since the last read, the model, and scores.

use std::sync::Arc;

use crate::cpu::mlp::{score, score_inputs, Mlp, SCORE_CHUNK_DOCS};
use crate::cpu::ranking::CpuRanking;
use crate::data::inputs::Inputs;
use crate::error::{Error, Result};
use crate::gpu::mlp::{binding_bytes, GpuMlp};
use crate::gpu::trainer::GpuTrainer;
use crate::gpu::Gpu;
use crate::objectives::config::Config as ObjectiveConfig;
use crate::objectives::cpu::CpuTrainer;
use crate::objectives::gpu::GpuObjectiveTrainer;
use crate::objectives::Params;
use crate::step::{LossPlan, StepBatch, StepLosses};

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

impl Engine {
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
            Engine::Cpu => Ok(RankingTrainer::Cpu(Box::new(CpuRanking::new(model, plan)))),
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
    /// over chunks of [`SCORE_CHUNK_DOCS`] documents, each read back.
    pub async fn score(&self, model: &Mlp<f32>, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        match self {
            Engine::Cpu => Ok(score_inputs(model, inputs)),
            Engine::Gpu(gpu) => {
                let rows = inputs.n_rows().clamp(1, SCORE_CHUNK_DOCS);
                let adam = crate::cpu::adam::AdamConfig::default();
                let mlp = GpuMlp::new(gpu.clone(), model, adam, rows, 0)?;
                mlp.score(inputs).await
            }
        }
    }
}

/// A ranking model in training, on either engine.
pub enum RankingTrainer {
    Cpu(Box<CpuRanking>),
    Gpu(Box<GpuTrainer>),
}

impl RankingTrainer {
    /// One step on a batch: forward, the plan's losses, backward and Adam.
    pub async fn step(&mut self, batch: &StepBatch<'_>) -> Result<()> {
        match self {
            RankingTrainer::Cpu(cpu) => {
                cpu.step(batch);
                Ok(())
            }
            RankingTrainer::Gpu(gpu) => gpu.step(batch).await,
        }
    }

    /// Steps that may pass before [`read_losses`](Self::read_losses) must be called: the GPU
    /// engine keeps its losses on the device and reads them back in windows.
    pub fn loss_window(&self) -> usize {
        match self {
            RankingTrainer::Cpu(_) => 1,
            RankingTrainer::Gpu(gpu) => gpu.loss_window,
        }
    }

    /// The losses of the steps since the last read, in order.
    pub async fn read_losses(&mut self) -> Result<Vec<StepLosses>> {
        match self {
            RankingTrainer::Cpu(cpu) => Ok(cpu.read_losses()),
            RankingTrainer::Gpu(gpu) => gpu.read_losses().await,
        }
    }

    /// The current model.
    pub async fn model(&self) -> Result<Mlp<f32>> {
        match self {
            RankingTrainer::Cpu(cpu) => Ok(cpu.model().clone()),
            RankingTrainer::Gpu(gpu) => gpu.model().await,
        }
    }

    /// Scores `inputs` with the current model, on its engine.
    pub async fn score(&self, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        match self {
            RankingTrainer::Cpu(cpu) => Ok(score_inputs(cpu.model(), inputs)),
            RankingTrainer::Gpu(gpu) => gpu.score(inputs).await,
        }
    }
}

/// A global objective's classifier in training, on either engine.
pub enum ObjectiveTrainer {
    Cpu(Box<CpuTrainer>),
    Gpu(Box<GpuObjectiveTrainer>),
}

impl ObjectiveTrainer {
    /// One step on a batch: the label prior observes the labels, then forward, the objective's
    /// loss, backward, Adam on the model and the anchor biases, and the multipliers' ascent.
    pub async fn step(&mut self, inputs: &[f32], labels: &[f32]) -> Result<()> {
        match self {
            ObjectiveTrainer::Cpu(cpu) => {
                cpu.step(inputs, labels);
                Ok(())
            }
            ObjectiveTrainer::Gpu(gpu) => gpu.step(inputs, labels).await,
        }
    }

    /// Steps that may pass before [`read_losses`](Self::read_losses) must be called.
    pub fn loss_window(&self) -> usize {
        match self {
            ObjectiveTrainer::Cpu(_) => 1,
            ObjectiveTrainer::Gpu(gpu) => gpu.loss_window,
        }
    }

    /// The losses of the steps since the last read, in order.
    pub async fn read_losses(&mut self) -> Result<Vec<f32>> {
        match self {
            ObjectiveTrainer::Cpu(cpu) => Ok(cpu.read_losses()),
            ObjectiveTrainer::Gpu(gpu) => gpu.read_losses().await,
        }
    }

    /// The current model and the objective's multipliers and anchor biases.
    pub async fn state(&self) -> Result<(Mlp<f32>, Params<f32>)> {
        match self {
            ObjectiveTrainer::Cpu(cpu) => Ok((cpu.model.clone(), cpu.params.clone())),
            ObjectiveTrainer::Gpu(gpu) => Ok((gpu.model().await?, gpu.params().await?)),
        }
    }

    /// The running label prior.
    pub fn prior(&self) -> &crate::objectives::LabelPrior {
        match self {
            ObjectiveTrainer::Cpu(cpu) => &cpu.prior,
            ObjectiveTrainer::Gpu(gpu) => &gpu.prior,
        }
    }

    /// Scores `inputs` with the current model, on its engine.
    pub async fn score(&self, inputs: &[f32]) -> Result<Vec<f32>> {
        match self {
            ObjectiveTrainer::Cpu(cpu) => Ok(score(&cpu.model, inputs)),
            ObjectiveTrainer::Gpu(gpu) => gpu.score(inputs).await,
        }
    }
}

//! Training a classifier for a global objective on the GPU: the GPU engine's MLP, forward, backward
//! and Adam kernels ([`GpuMlp`]), and the objective's kernels (`shaders/objectives.wgsl`) for the
//! loss, the logit gradients, the anchor biases' Adam and the multipliers' dual ascent. The same
//! initial weights, batches, label prior and updates as the CPU engine ([`CpuTrainer`]), each step
//! one submission; losses are reduced on the GPU into a window read back every `loss_window` steps
//! and at the end of each epoch, the model, multipliers and biases once per epoch.
//!
//! [`CpuTrainer`]: super::cpu::CpuTrainer

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::gpu::mlp::{adam_params, GpuMlp};
use crate::gpu::params::{KernelParams, ObjectiveParams, RankingLossParams, ReduceParams};
use crate::gpu::shaders::WORKGROUP;
use crate::gpu::{groups_of, Gpu, Kernel, Slot};
use crate::model::objective::{Config, LabelPrior, Objective, Params, Surrogate};
use crate::model::Mlp;

/// Writes a slot's parameters; returns the slot with its workgroups, to record.
fn dispatch<'a, P: KernelParams>(
    gpu: &Gpu,
    slot: &'a Slot,
    params: P,
    workgroups: (u32, u32, u32),
) -> (&'a Slot, (u32, u32, u32)) {
    gpu.set_params(slot, &params);
    (slot, workgroups)
}

/// The dispatches of one objective's loss, between the forward and the backward pass.
enum LossSlots {
    /// bce.wgsl with weights 1 / n, then the sum of its shares.
    LogLoss { bce: Slot, sum: Slot },
    /// objective_terms, the row sums, update_multipliers, the sum of the loss terms, and (AUC-PR)
    /// Adam on the anchor biases.
    Constrained {
        terms: Slot,
        rows: Slot,
        multipliers: Slot,
        sum: Slot,
        bias_adam: Option<Slot>,
    },
    /// roc_auc_pairs, then the sum of its shares.
    RocAuc { pairs: Slot, sum: Slot },
    /// f_beta_terms, their three sums, f_beta_gradient, then the loss into the window.
    FBeta {
        /// beta^2.
        b2: f32,
        terms: Slot,
        rows: Slot,
        gradient: Slot,
        sum: Slot,
    },
}

/// A global objective's loss on the GPU over the logits of up to `max_n` rows: the labels and
/// coefficients, the multipliers and anchor biases, and the dispatch slots, between a model's
/// forward and backward passes. The classifier trainer ([`GpuObjectiveTrainer`]) runs it over
/// whole batches; the ranking trainer over a batch's S_label documents.
pub struct GpuObjectiveLoss {
    objective: Objective,
    surrogate: Surrogate,
    dual_step: f32,
    adam: crate::model::AdamConfig,
    /// Labels (n), then the log-loss weights (n) or the constraints' coefficients (5 K).
    labels: wgpu::Buffer,
    /// Multipliers (K) then anchor biases (K).
    state: wgpu::Buffer,
    slots: LossSlots,
}

impl GpuObjectiveLoss {
    /// The widest per-row buffer it adds: 3 K rows of the constrained objectives' terms.
    pub fn columns(objective: &Objective) -> usize {
        (3 * objective.n_lambdas()).max(3)
    }

    /// The buffers and slots over `logits` and `dlogits` (both of at least `max_n` rows), the
    /// loss going into `losses`; the multipliers start at `initial_lambda`, the biases at 0.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &Gpu,
        objective: Objective,
        surrogate: Surrogate,
        initial_lambda: f32,
        dual_step: f32,
        adam: crate::model::AdamConfig,
        (logits, dlogits, losses): (&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer),
        max_n: usize,
    ) -> Self {
        let k = objective.n_lambdas();
        let rows = Self::columns(&objective);
        let labels = gpu.buffer("labels and coefficients", 2 * max_n + 5 * k);
        let params = Params::new(&objective, initial_lambda);
        let mut state_values = params.lambdas.clone();
        state_values.extend(&params.biases);
        let state = gpu.buffer_with("multipliers and anchor biases", &state_values);
        let partial = gpu.buffer("per-example terms", rows * max_n);
        let sum_into_window = |values: &wgpu::Buffer| {
            gpu.slot(
                Kernel::ReduceSum,
                [Some(values), None, None, Some(losses), None],
            )
        };
        // A kernel over logits and labels that writes dlogits and per-example loss shares.
        let per_example = |kernel| {
            let buffers = [logits, &labels, dlogits, &partial].map(Some);
            let [l, y, d, p] = buffers;
            gpu.slot(kernel, [l, y, None, d, p])
        };
        let slots = match objective {
            Objective::LogLoss => LossSlots::LogLoss {
                bce: per_example(Kernel::bce()),
                sum: sum_into_window(&partial),
            },
            Objective::RocAuc => LossSlots::RocAuc {
                pairs: per_example(Kernel::RocAucPairs),
                sum: sum_into_window(&partial),
            },
            Objective::FBeta(beta) => {
                let sums = gpu.buffer("|Y+|, tp_l and fp_u", 3);
                let out = gpu.buffer("F-beta loss", 1);
                LossSlots::FBeta {
                    b2: (beta * beta) as f32,
                    terms: gpu.slot(
                        Kernel::FBetaTerms,
                        [Some(logits), Some(&labels), None, None, Some(&partial)],
                    ),
                    rows: gpu.slot(
                        Kernel::ReduceSum,
                        [Some(&partial), None, None, Some(&sums), None],
                    ),
                    gradient: gpu.slot(
                        Kernel::FBetaGradient,
                        [
                            Some(logits),
                            Some(&labels),
                            Some(&sums),
                            Some(dlogits),
                            Some(&out),
                        ],
                    ),
                    sum: sum_into_window(&out),
                }
            }
            Objective::AucPr { .. }
            | Objective::RecallAtPrecision(_)
            | Objective::PrecisionAtRecall(_)
            | Objective::TprAtFpr(_) => {
                let sums = gpu.buffer("row sums", 3 * k);
                // dbias (K), dlambda (K), loss terms (K), loss (1).
                let out = gpu.buffer("bias and multiplier gradients, loss", 3 * k + 1);
                let bias_adam = (objective.n_biases() > 0).then(|| {
                    let moments = gpu.buffer("adam moments (anchor biases)", 2 * k);
                    gpu.slot(
                        Kernel::Adam,
                        [Some(&out), None, None, Some(&state), Some(&moments)],
                    )
                });
                LossSlots::Constrained {
                    terms: gpu.slot(
                        Kernel::ObjectiveTerms,
                        [
                            Some(logits),
                            Some(&labels),
                            Some(&state),
                            Some(dlogits),
                            Some(&partial),
                        ],
                    ),
                    rows: gpu.slot(
                        Kernel::ReduceSum,
                        [Some(&partial), None, None, Some(&sums), None],
                    ),
                    multipliers: gpu.slot(
                        Kernel::ObjectiveMultipliers,
                        [Some(&sums), Some(&labels), None, Some(&state), Some(&out)],
                    ),
                    sum: sum_into_window(&out),
                    bias_adam,
                }
            }
        };
        GpuObjectiveLoss {
            objective,
            surrogate,
            dual_step,
            adam,
            labels,
            state,
            slots,
        }
    }

    /// For `labels.len()` rows (at least 1): uploads the labels and the coefficients at the
    /// label prior `prior`, and writes the parameters of every dispatch, the loss going to
    /// `losses[window_slot]` and the anchor biases taking Adam step `bias_step` (1-based).
    /// Returns the dispatches to record, in order, with their workgroups.
    pub fn prepare(
        &self,
        gpu: &Gpu,
        labels: &[f32],
        prior: &LabelPrior,
        window_slot: usize,
        bias_step: u64,
    ) -> Vec<(&Slot, (u32, u32, u32))> {
        let n = labels.len();
        let b = n as u32;
        let k = self.objective.n_lambdas();
        let surrogate = match self.surrogate {
            Surrogate::Hinge => 0,
            Surrogate::Log => 1,
        };
        let objective_params = |scale: f32| ObjectiveParams {
            n: b,
            constraints: k as u32,
            surrogate,
            scale,
            step: self.dual_step,
            ..Default::default()
        };
        let examples = (groups_of(n, WORKGROUP), 1, 1);
        let single = (1, 1, 1);
        let sum_params = |n: usize, offset: usize| ReduceParams::new(n, window_slot, offset);
        let rows_params = |n: usize| ReduceParams::new(n, 0, 0);
        let mut data = labels.to_vec();
        // Every loss dispatch in order, its parameters written.
        let dispatches = match &self.slots {
            LossSlots::LogLoss { bce, sum } => {
                data.extend(std::iter::repeat_n(1.0 / n as f32, n));
                let weighted_bce = RankingLossParams {
                    n: b,
                    groups: 1,
                    scale: 1.0,
                    ..Default::default()
                };
                vec![
                    dispatch(gpu, bce, weighted_bce, examples),
                    dispatch(gpu, sum, sum_params(n, 0), single),
                ]
            }
            LossSlots::RocAuc { pairs, sum } => {
                let positives = labels.iter().filter(|&&y| y > 0.5).count();
                let pairs_count = positives * (n - positives);
                let scale = if pairs_count == 0 {
                    0.0
                } else {
                    0.5 / pairs_count as f32
                };
                vec![
                    dispatch(gpu, pairs, objective_params(scale), examples),
                    dispatch(gpu, sum, sum_params(n, 0), single),
                ]
            }
            LossSlots::FBeta {
                b2,
                terms,
                rows,
                gradient,
                sum,
            } => vec![
                dispatch(gpu, terms, objective_params(*b2), examples),
                dispatch(gpu, rows, rows_params(n), (3, 1, 1)),
                dispatch(gpu, gradient, objective_params(*b2), examples),
                dispatch(gpu, sum, sum_params(1, 0), single),
            ],
            LossSlots::Constrained {
                terms,
                rows,
                multipliers,
                sum,
                bias_adam,
            } => {
                for lagrangian in self.objective.lagrangians(prior.value()) {
                    data.extend(lagrangian.coefficients().map(|c| c as f32));
                }
                let scale = 1.0 / k as f32;
                let mut list = vec![
                    dispatch(gpu, terms, objective_params(scale), examples),
                    dispatch(gpu, rows, rows_params(n), (3 * k as u32, 1, 1)),
                    dispatch(gpu, multipliers, objective_params(scale), single),
                    // The loss terms sit at 2 K in the multiplier kernel's output.
                    dispatch(gpu, sum, sum_params(k, 2 * k), single),
                ];
                if let Some(adam) = bias_adam {
                    // The bias gradients at 0 in that output, the biases at K in the state.
                    let p = adam_params(&self.adam, bias_step, k, 0, k);
                    list.push(dispatch(gpu, adam, p, (groups_of(k, WORKGROUP), 1, 1)));
                }
                list
            }
        };
        gpu.queue
            .write_buffer(&self.labels, 0, bytemuck::cast_slice(&data));
        dispatches
    }

    /// The current multipliers and anchor biases, read back.
    pub async fn params(&self, gpu: &Gpu) -> Result<Params<f32>> {
        let k = self.objective.n_lambdas();
        let state = gpu.read(&self.state, 2 * k).await?;
        Ok(Params {
            lambdas: state[..k].to_vec(),
            biases: state[k..k + self.objective.n_biases()].to_vec(),
        })
    }
}

/// One classifier in training on the GPU.
pub struct GpuObjectiveTrainer {
    gpu: Arc<Gpu>,
    mlp: GpuMlp,
    loss: GpuObjectiveLoss,
    losses: wgpu::Buffer,
    /// The running label prior, kept on the host (the labels are there).
    pub prior: LabelPrior,
    /// Steps whose losses sit in `losses`, not yet read back.
    pending: usize,
    pub loss_window: usize,
}

impl GpuObjectiveTrainer {
    /// Uploads `model` and builds every buffer and dispatch slot for batches of up to `max_batch`
    /// examples, the multipliers at `config.initial_lambda` and the biases at 0.
    pub fn new(gpu: Arc<Gpu>, model: &Mlp<f32>, config: &Config, max_batch: usize) -> Result<Self> {
        let objective = config.objective;
        let columns = GpuObjectiveLoss::columns(&objective);
        let mlp = GpuMlp::new(gpu.clone(), model, config.adam, max_batch, columns)?;
        let window = 64;
        let losses = gpu.buffer("losses", window);
        let loss = GpuObjectiveLoss::new(
            &gpu,
            objective,
            config.surrogate,
            config.initial_lambda as f32,
            (config.dual_rate_factor * config.adam.lr) as f32,
            config.adam,
            (mlp.logits(), mlp.dlogits(), &losses),
            max_batch,
        );
        Ok(GpuObjectiveTrainer {
            gpu,
            mlp,
            loss,
            losses,
            prior: LabelPrior::default(),
            pending: 0,
            loss_window: window,
        })
    }

    /// One step on a batch, as [`CpuTrainer::step`](super::cpu::CpuTrainer::step): the label
    /// prior observes the labels (on the host), then one submission of forward, loss, backward,
    /// Adam on the model and the anchor biases, and the multipliers' dual ascent. Nothing is read
    /// back; call [`read_losses`](Self::read_losses) before `loss_window` steps have passed.
    pub async fn step(&mut self, inputs: &[f32], labels: &[f32]) -> Result<()> {
        if self.pending == self.loss_window {
            return Err(Error::Config(
                "read the losses back before more steps".into(),
            ));
        }
        let n = labels.len();
        self.mlp.start_step(inputs, n)?;
        self.prior.observe(labels);
        let gpu = self.gpu.clone();
        let dispatches = self.loss.prepare(
            &gpu,
            labels,
            &self.prior,
            self.pending,
            self.mlp.adam_step(),
        );
        let mlp = &self.mlp;
        gpu.run(|pass| {
            mlp.record_forward(pass, n);
            for (slot, groups) in &dispatches {
                gpu.record(pass, slot, *groups);
            }
            mlp.record_backward(pass, n);
            mlp.record_adam(pass);
        })
        .await?;
        self.pending += 1;
        Ok(())
    }

    /// The losses of the steps since the last read-back.
    pub async fn read_losses(&mut self) -> Result<Vec<f32>> {
        let values = self.gpu.read(&self.losses, self.pending).await?;
        self.pending = 0;
        Ok(values)
    }

    /// The current multipliers and anchor biases, read back.
    pub async fn params(&self) -> Result<Params<f32>> {
        self.loss.params(&self.gpu).await
    }

    /// The current model, read back.
    pub async fn model(&self) -> Result<Mlp<f32>> {
        self.mlp.model().await
    }

    /// Scores `inputs` (row-major) with the current model on the GPU.
    pub async fn score(&self, inputs: &[f32]) -> Result<Vec<f32>> {
        let n = inputs.len() / self.mlp.n_in().max(1);
        self.score_inputs(crate::data::inputs::Inputs::dense(inputs, n))
            .await
    }

    /// Scores the rows `inputs` presents with the current model on the GPU.
    pub async fn score_inputs(&self, inputs: crate::data::inputs::Inputs<'_>) -> Result<Vec<f32>> {
        self.mlp.score(inputs).await
    }
}

//! Training a classifier for a global objective on the GPU: the GPU engine's MLP, forward, backward
//! and Adam kernels ([`GpuMlp`]), and the objective's kernels (`shaders/objectives.wgsl`) for the
//! loss, the logit gradients, the anchor biases' Adam and the multipliers' dual ascent. The same
//! initial weights, batches, label prior and updates as the CPU engine ([`CpuTrainer`]), each step
//! one submission; losses are reduced on the GPU into a window read back every `loss_window` steps
//! and at the end of each epoch, the model, multipliers and biases once per epoch.
//!
//! [`CpuTrainer`]: super::train::CpuTrainer

use std::sync::Arc;

use crate::cpu::mlp::Mlp;
use crate::error::{Error, Result};
use crate::gpu::shaders::WORKGROUP;
use crate::gpu::trainer::{adam_params, GpuMlp};
use crate::gpu::{groups_of, Gpu, Kernel, Slot};
use crate::train::Instant;

use super::data::BinarySet;
use super::train::{check_finite, epoch_order, gather, start, Config, Event, Trained};
use super::{LabelPrior, Objective, Params, Surrogate};

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

/// One classifier in training on the GPU.
pub struct GpuObjectiveTrainer {
    gpu: Arc<Gpu>,
    mlp: GpuMlp,
    objective: Objective,
    surrogate: Surrogate,
    dual_step: f32,
    adam: crate::cpu::adam::AdamConfig,
    /// Labels (n), then the log-loss weights (n) or the constraints' coefficients (5 K).
    labels: wgpu::Buffer,
    /// Multipliers (K) then anchor biases (K).
    state: wgpu::Buffer,
    losses: wgpu::Buffer,
    slots: LossSlots,
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
        let k = objective.n_lambdas();
        // The widest per-example buffer: 3 K rows of the constrained objectives' terms.
        let rows = (3 * k).max(3);
        let mlp = GpuMlp::new(gpu.clone(), model, config.adam, max_batch, rows)?;
        let window = 64;
        let labels = gpu.buffer("labels and coefficients", 2 * max_batch + 5 * k);
        let params = Params::new(&objective, config.initial_lambda as f32);
        let mut state_values = params.lambdas.clone();
        state_values.extend(&params.biases);
        let state = gpu.buffer_with("multipliers and anchor biases", &state_values);
        let losses = gpu.buffer("losses", window);
        let partial = gpu.buffer("per-example terms", rows * max_batch);
        let (logits, dlogits) = (mlp.logits(), mlp.dlogits());
        let sum_into_window = |values: &wgpu::Buffer| {
            gpu.slot(
                Kernel::ReduceSum,
                [Some(values), None, None, Some(&losses), None],
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
                bce: per_example(Kernel::Bce),
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
        Ok(GpuObjectiveTrainer {
            gpu,
            mlp,
            objective,
            surrogate: config.surrogate,
            dual_step: (config.dual_rate_factor * config.adam.lr) as f32,
            adam: config.adam,
            labels,
            state,
            losses,
            slots,
            prior: LabelPrior::default(),
            pending: 0,
            loss_window: window,
        })
    }

    /// One step on a batch, as [`CpuTrainer::step`](super::train::CpuTrainer::step): the label
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
        let b = n as u32;
        let k = self.objective.n_lambdas();
        let surrogate = match self.surrogate {
            Surrogate::Hinge => 0,
            Surrogate::Log => 1,
        };
        // The objective kernels' parameters: n, K, surrogate, 0, scale, dual step.
        let objective_params = |scale: f32| {
            vec![
                b,
                k as u32,
                surrogate,
                0,
                scale.to_bits(),
                self.dual_step.to_bits(),
                0,
                0,
            ]
        };
        let window_slot = self.pending as u32;
        let examples = (groups_of(n, WORKGROUP), 1, 1);
        let single = (1, 1, 1);
        let sum_params = |n: usize, offset: usize| vec![n as u32, window_slot, offset as u32, 0];
        let mut data = labels.to_vec();
        // Every loss dispatch: its slot, its parameters and its workgroups, in order.
        let dispatches: Vec<(&Slot, Vec<u32>, (u32, u32, u32))> = match &self.slots {
            LossSlots::LogLoss { bce, sum } => {
                data.extend(std::iter::repeat_n(1.0 / n as f32, n));
                vec![
                    (bce, vec![b, 1, 0, 0, 1f32.to_bits(), 0, 0, 0], examples),
                    (sum, sum_params(n, 0), single),
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
                    (pairs, objective_params(scale), examples),
                    (sum, sum_params(n, 0), single),
                ]
            }
            LossSlots::FBeta {
                b2,
                terms,
                rows,
                gradient,
                sum,
            } => vec![
                (terms, objective_params(*b2), examples),
                (rows, vec![b, 0, 0, 0], (3, 1, 1)),
                (gradient, objective_params(*b2), examples),
                (sum, sum_params(1, 0), single),
            ],
            LossSlots::Constrained {
                terms,
                rows,
                multipliers,
                sum,
                bias_adam,
            } => {
                for lagrangian in self.objective.lagrangians(self.prior.value()) {
                    data.extend(lagrangian.coefficients().map(|c| c as f32));
                }
                let scale = 1.0 / k as f32;
                let mut list = vec![
                    (terms, objective_params(scale), examples),
                    (rows, vec![b, 0, 0, 0], (3 * k as u32, 1, 1)),
                    (multipliers, objective_params(scale), single),
                    // The loss terms sit at 2 K in the multiplier kernel's output.
                    (sum, sum_params(k, 2 * k), single),
                ];
                if let Some(adam) = bias_adam {
                    // The bias gradients at 0 in that output, the biases at K in the state.
                    let step = self.mlp.adam_step();
                    let p = adam_params(&self.adam, step, k, 0, k).to_vec();
                    list.push((adam, p, (groups_of(k, WORKGROUP), 1, 1)));
                }
                list
            }
        };
        gpu.queue
            .write_buffer(&self.labels, 0, bytemuck::cast_slice(&data));
        for (slot, p, _) in &dispatches {
            gpu.set_params(slot, p);
        }
        let mlp = &self.mlp;
        gpu.run(|pass| {
            mlp.record_forward(pass, n);
            for (slot, _, groups) in &dispatches {
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
        let k = self.objective.n_lambdas();
        let state = self.gpu.read(&self.state, 2 * k).await?;
        Ok(Params {
            lambdas: state[..k].to_vec(),
            biases: state[k..k + self.objective.n_biases()].to_vec(),
        })
    }

    /// The current model, read back.
    pub async fn model(&self) -> Result<Mlp<f32>> {
        self.mlp.model().await
    }

    /// Scores `inputs` with the current model on the GPU.
    pub async fn score(&self, inputs: &[f32]) -> Result<Vec<f32>> {
        self.mlp.score(inputs).await
    }
}

/// [`fit`](super::train::fit) with every training step on the GPU: the same initial weights,
/// batches, label prior, loss, updates and epoch choice. Validation examples are scored on the GPU;
/// the metrics are computed on the read-back scores.
pub async fn fit_gpu(
    gpu: Arc<Gpu>,
    train: &BinarySet,
    valid: &BinarySet,
    config: &Config,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Trained> {
    let (model, mut selection) = start(train, valid, config)?;
    let batch = config.batch_size.min(train.len());
    let mut trainer = GpuObjectiveTrainer::new(gpu, &model, config, batch)?;
    let (mut inputs, mut labels) = (Vec::new(), Vec::new());
    let mut step = 0;
    for epoch in 1..=config.epochs {
        let started = Instant::now();
        let order = epoch_order(train.len(), config.seed, epoch);
        let mut losses = Vec::new();
        let batches = order.len().div_ceil(batch);
        for (i, chunk) in order.chunks(batch).enumerate() {
            gather(train, chunk, &mut inputs, &mut labels);
            trainer.step(&inputs, &labels).await?;
            step += 1;
            on(Event::Step {
                examples: chunk.len(),
            });
            if step % trainer.loss_window == 0 || i + 1 == batches {
                losses.extend(trainer.read_losses().await?);
            }
        }
        if let Some(i) = losses.iter().position(|l| !l.is_finite()) {
            return Err(Error::Diverged {
                epoch,
                step: step - losses.len() + i + 1,
                what: format!("the {} loss is {}", config.objective, losses[i]),
            });
        }
        let (model, params) = (trainer.model().await?, trainer.params().await?);
        check_finite(&model, &params, epoch, step)?;
        let seconds = started.elapsed();
        let scores = trainer.score(&valid.x).await?;
        let mean_loss = losses.iter().map(|&l| l as f64).sum::<f64>() / losses.len().max(1) as f64;
        let state = (&model, &params, &trainer.prior);
        if selection.end_epoch((epoch, mean_loss, seconds), state, &scores, on)? {
            break;
        }
    }
    Ok(selection.finish())
}

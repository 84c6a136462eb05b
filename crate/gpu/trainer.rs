//! Training a ranking model on the GPU: the same model, batches, losses and Adam as the CPU engine
//! ([`crate::cpu::ranking`]), each step one submission of WGSL dispatches over buffers sized once
//! for the largest batch. Between the MLP's forward and backward passes ([`GpuMlp`]) run the
//! losses of the [`LossPlan`]:
//!
//! * the data loss on S_label: `ranknet.wgsl`, `bce.wgsl` or `listwise.wgsl` with hard labels
//!   ([`RankingLoss`] picks the kernels of each loss), or a global
//!   objective (`objectives.wgsl`) over the S_label documents gathered into a compact buffer and
//!   scattered back (`select.wgsl`);
//! * the teacher loss on S_all, with the teachers' logits as soft labels;
//! * Ranking Distillation's L_D (`distill.wgsl`), weighted from the student's current logits.
//!
//! Losses are reduced on the GPU into a window buffer read back every `loss_window` steps, not
//! every step.

use std::sync::Arc;

use super::losses::{LossBuffers, LossParams, RankingLoss};
use super::mlp::GpuMlp;
use super::params::{DistillParams, ReduceParams, SelectParams};
use super::shaders::WORKGROUP;
use super::{groups_of, Gpu, Kernel, Phase, Slot};
use crate::data::inputs::Inputs;
use crate::error::{Error, Result};
use crate::gpu::objective::GpuObjectiveLoss;
use crate::model::loss::{loss_weights, Targets};
use crate::model::objective::{LabelPrior, Surrogate};
use crate::model::step::{LossPlan, StepBatch, StepLosses};
use crate::model::step::{RdBatch, RdScheme};
use crate::model::Mlp;

/// Values per step in the loss window: data, teacher, Ranking Distillation.
const LOSSES_PER_STEP: usize = 3;

/// A row outside the subset, in `select.wgsl`'s positions.
const NONE: u32 = u32::MAX;

/// A global objective as the data loss, over the batch's S_label documents.
struct SubsetObjective {
    loss: GpuObjectiveLoss,
    /// The S_label documents' batch rows (m), then each batch row's place among them or NONE (n).
    selection: wgpu::Buffer,
    gather: Slot,
    scatter: Slot,
    /// The label prior of the S_label documents seen so far (on the host, as the labels are).
    prior: LabelPrior,
    /// Steps whose batch had S_label documents: the anchor biases' Adam steps.
    steps: u64,
}

/// Ranking Distillation's buffers and dispatches.
struct RdSlots {
    /// Group offsets, candidate offsets, candidates (u32).
    index: wgpu::Buffer,
    weigh: Slot,
    count: Slot,
    loss: Slot,
    sum: Slot,
}

pub struct GpuTrainer {
    gpu: Arc<Gpu>,
    pub plan: LossPlan,
    max_docs: usize,
    mlp: GpuMlp,
    data_targets: wgpu::Buffer,
    teacher_targets: wgpu::Buffer,
    group_info: wgpu::Buffer,
    losses: wgpu::Buffer,
    /// The ranking data loss and its sum (None when a global objective replaces it).
    data_loss: Option<(RankingLoss, Slot)>,
    objective: Option<SubsetObjective>,
    teacher_loss: RankingLoss,
    reduce_teacher: Slot,
    rd: Option<RdSlots>,
    /// Steps whose losses sit in `losses`, not yet read back.
    pending: usize,
    pub loss_window: usize,
}

impl GpuTrainer {
    /// The network's Adam takes `lr` from the next step on.
    pub fn set_learning_rate(&mut self, lr: f64) {
        self.mlp.set_learning_rate(lr);
    }

    /// Uploads `model` and builds every buffer, bind group and parameter slot for batches of up
    /// to `max_docs` documents and the losses of `plan`.
    pub fn new(gpu: Arc<Gpu>, model: &Mlp<f32>, plan: &LossPlan, max_docs: usize) -> Result<Self> {
        let objective_columns = plan
            .objective
            .map_or(0, |o| GpuObjectiveLoss::columns(&o.objective));
        // The widest per-row buffers: the teachers' logits (and weights), the loss shares with
        // LambdaRank's scratch (4 per row), the objective's terms.
        let columns = (plan.teachers + 1).max(4).max(objective_columns);
        let mlp = GpuMlp::with_dropout(
            gpu.clone(),
            model,
            plan.adam,
            plan.dropout,
            max_docs,
            columns,
        )?;
        let window = 64;
        let data_targets = gpu.buffer("data targets", 2 * max_docs + 1);
        let teacher_targets =
            gpu.buffer("teacher targets", (plan.teachers.max(1) + 1) * max_docs + 1);
        let group_info = gpu.buffer("group info", 2 * max_docs + 2);
        // The data loss's shares, the teacher loss's, and LambdaRank's scratch.
        let partial = gpu.buffer("loss shares", 4 * max_docs);
        let losses = gpu.buffer("losses", LOSSES_PER_STEP * window);
        let (logits, dlogits) = (mlp.logits(), mlp.dlogits());
        let ranking_loss = |targets: &wgpu::Buffer, soft: bool| {
            let buffers = LossBuffers {
                logits,
                targets,
                group_info: &group_info,
                dlogits,
                partial: &partial,
            };
            RankingLoss::new(&gpu, plan.loss, soft, &buffers)
        };
        let sum_into_window = |values: &wgpu::Buffer| {
            gpu.slot(
                Kernel::ReduceSum,
                [Some(values), None, None, Some(&losses), None],
            )
        };
        let (data_loss, objective) = match plan.objective {
            None => (
                Some((
                    ranking_loss(&data_targets, false),
                    sum_into_window(&partial),
                )),
                None,
            ),
            Some(o) => {
                let compact_logits = gpu.buffer("S_label logits", max_docs);
                let compact_dlogits = gpu.buffer("S_label logit gradients", max_docs);
                let selection = gpu.buffer("S_label rows and places", 2 * max_docs);
                let loss = GpuObjectiveLoss::new(
                    &gpu,
                    o.objective,
                    Surrogate::Log,
                    1.0,
                    o.dual_step,
                    plan.adam,
                    (&compact_logits, &compact_dlogits, &losses),
                    max_docs,
                );
                let gather = gpu.slot(
                    Kernel::GatherRows,
                    [
                        Some(logits),
                        Some(&selection),
                        None,
                        Some(&compact_logits),
                        None,
                    ],
                );
                let scatter = gpu.slot(
                    Kernel::ScatterRows,
                    [
                        Some(&compact_dlogits),
                        Some(&selection),
                        None,
                        Some(dlogits),
                        None,
                    ],
                );
                let subset = SubsetObjective {
                    loss,
                    selection,
                    gather,
                    scatter,
                    prior: LabelPrior::default(),
                    steps: 0,
                };
                (None, Some(subset))
            }
        };
        let rd = plan.rd_scale.map(|_| {
            let index = gpu.buffer("ranking distillation index", 3 * max_docs + 2);
            let weights = gpu.buffer("ranking distillation weights", max_docs + 1);
            let has = gpu.buffer("groups with weights", max_docs);
            let rd_partial = gpu.buffer("ranking distillation shares", max_docs);
            RdSlots {
                weigh: gpu.slot(
                    Kernel::RdWeights,
                    [Some(logits), Some(&index), None, Some(&weights), Some(&has)],
                ),
                count: gpu.slot(
                    Kernel::ReduceSum,
                    [Some(&has), None, None, Some(&weights), None],
                ),
                loss: gpu.slot(
                    Kernel::RdLoss,
                    [
                        Some(logits),
                        Some(&index),
                        Some(&weights),
                        Some(dlogits),
                        Some(&rd_partial),
                    ],
                ),
                sum: sum_into_window(&rd_partial),
                index,
            }
        });
        Ok(GpuTrainer {
            teacher_loss: ranking_loss(&teacher_targets, true),
            reduce_teacher: sum_into_window(&partial),
            gpu,
            plan: *plan,
            max_docs,
            mlp,
            data_targets,
            teacher_targets,
            group_info,
            losses,
            data_loss,
            objective,
            rd,
            pending: 0,
            loss_window: window,
        })
    }

    /// One step: forward, the plan's losses, backward, Adam. Nothing is read back; call
    /// [`read_losses`](Self::read_losses) before `loss_window` steps have passed.
    pub async fn step(&mut self, batch: &StepBatch<'_>) -> Result<()> {
        self.step_phases(batch, false).await.map(|_| ())
    }

    /// [`step`](Self::step) with each phase (forward, losses, backward, Adam) in a compute pass of
    /// its own, timed by timestamp queries: (phase, milliseconds).
    pub async fn step_profiled(
        &mut self,
        batch: &StepBatch<'_>,
    ) -> Result<Vec<(&'static str, f64)>> {
        self.step_phases(batch, true).await
    }

    async fn step_phases(
        &mut self,
        batch: &StepBatch<'_>,
        timed: bool,
    ) -> Result<Vec<(&'static str, f64)>> {
        self.check_batch(batch)?;
        let n = batch.labels.len();
        let plan = self.plan;
        let gpu = self.gpu.clone();
        let groups = batch.offsets.len() - 1;
        self.mlp.start_step(batch.inputs, n)?;
        self.mlp.set_groups(batch.offsets);
        self.write_group_info(batch);
        let shape = BatchShape {
            n,
            groups,
            max_docs: self.max_docs,
            // The step's place in the loss window: data, teacher and RD losses at slot, + 1, + 2.
            slot: LOSSES_PER_STEP * self.pending,
        };
        // The window slots no dispatch writes this step read as 0.
        let mut unwritten = Vec::new();
        let mut data: Vec<Dispatch> = Vec::new();
        if let Some((loss, sum)) = &self.data_loss {
            data = data_loss(&gpu, (loss, sum), &self.data_targets, &plan, batch, shape);
        }
        if let Some(subset) = &mut self.objective {
            let (dispatches, written) = subset.dispatches(&gpu, batch, plan.data_scale, shape);
            data.extend(dispatches);
            if !written {
                unwritten.push(shape.slot);
            }
        }
        let teacher: Vec<Dispatch> = if plan.teachers > 0 {
            let loss = (&self.teacher_loss, &self.reduce_teacher);
            teacher_loss(&gpu, loss, &self.teacher_targets, &plan, batch, shape)
        } else {
            unwritten.push(shape.slot + 1);
            Vec::new()
        };
        let rd: Vec<Dispatch> = match (&self.rd, batch.ranking_distillation) {
            (Some(slots), Some(rd)) if !rd.documents.is_empty() => {
                slots.dispatches(&gpu, batch, rd, plan.rd_scale.unwrap_or(0.0), shape)
            }
            _ => {
                unwritten.push(shape.slot + 2);
                Vec::new()
            }
        };
        for unused in unwritten {
            gpu.queue.write_buffer(
                &self.losses,
                4 * unused as u64,
                bytemuck::cast_slice(&[0f32]),
            );
        }

        let mlp = &self.mlp;
        let gpu: &Gpu = &gpu;
        let forward: Phase = Box::new(move |pass| mlp.record_forward_training(pass, n));
        let losses: Phase = Box::new(move |pass| {
            for (s, groups) in data.iter().chain(&teacher).chain(&rd) {
                gpu.record(pass, s, *groups);
            }
        });
        let backward: Phase = Box::new(move |pass| mlp.record_backward(pass, n));
        let adam: Phase = Box::new(move |pass| mlp.record_adam(pass));
        let phases = vec![
            ("forward", forward),
            ("losses", losses),
            ("backward", backward),
            ("adam", adam),
        ];
        let timings = if timed {
            gpu.run_timed(phases).await?
        } else {
            gpu.run(|pass| phases.into_iter().for_each(|(_, record)| record(pass)))
                .await?;
            Vec::new()
        };
        self.pending += 1;
        Ok(timings)
    }

    /// Refuses a batch this trainer was not built for, and a step past a full loss window.
    fn check_batch(&self, batch: &StepBatch<'_>) -> Result<()> {
        let n = batch.labels.len();
        let plan = self.plan;
        if n > self.max_docs || batch.teachers.len() != plan.teachers {
            return Err(Error::Config(format!("a GPU batch of {n} documents with {} teachers does not fit this trainer ({} documents, {} teachers)", batch.teachers.len(), self.max_docs, plan.teachers)));
        }
        if batch.ranking_distillation.is_some() != self.rd.is_some() {
            return Err(Error::Config(
                "a batch with Ranking Distillation candidates needs a trainer planned for them, and one planned for them needs them".into(),
            ));
        }
        if self.pending == self.loss_window {
            return Err(Error::Config(
                "read the losses back before more steps".into(),
            ));
        }
        Ok(())
    }

    /// The batch's group layout: its offsets, then the group of each document.
    fn write_group_info(&self, batch: &StepBatch<'_>) {
        let groups = batch.offsets.len() - 1;
        let mut info: Vec<u32> = batch.offsets.iter().map(|&o| o as u32).collect();
        for g in 0..groups {
            info.extend(std::iter::repeat_n(
                g as u32,
                batch.offsets[g + 1] - batch.offsets[g],
            ));
        }
        self.gpu
            .queue
            .write_buffer(&self.group_info, 0, bytemuck::cast_slice(&info));
    }

    /// The losses of the steps since the last read-back.
    pub async fn read_losses(&mut self) -> Result<Vec<StepLosses>> {
        let values = self
            .gpu
            .read(&self.losses, LOSSES_PER_STEP * self.pending)
            .await?;
        self.pending = 0;
        Ok(values
            .chunks_exact(LOSSES_PER_STEP)
            .map(|c| StepLosses {
                data: c[0],
                teacher: c[1],
                rd: c[2],
            })
            .collect())
    }

    /// The current model, read back.
    pub async fn model(&self) -> Result<Mlp<f32>> {
        self.mlp.model().await
    }

    /// Scores `inputs` (n_docs x n_in) with the current weights on the GPU, in chunks of the
    /// batch size: the forward dispatches only, then one read-back per chunk.
    pub async fn score(&self, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        self.mlp.score(inputs).await
    }

    /// Whether the model attends over each query's documents (the listwise family).
    pub fn attends(&self) -> bool {
        self.mlp.attends()
    }

    /// Whether every query of `inputs` fits the trainer's buffers, as a listwise model scores
    /// them.
    pub fn fits_queries(&self, inputs: Inputs<'_>) -> bool {
        self.mlp.fits_queries(inputs)
    }

    /// The gradients of the last step (weight, bias per layer).
    pub async fn gradients(&self) -> Result<Vec<(Vec<f32>, Vec<f32>)>> {
        self.mlp.gradients().await
    }
}

/// The parameters of `distill.wgsl`.
fn rd_params(n: u32, groups: usize, rd: &RdBatch, scale: f32) -> DistillParams {
    let scheme = match rd.scheme {
        RdScheme::Equal => 0,
        RdScheme::Position => 1,
        RdScheme::Discrepancy => 2,
        RdScheme::PositionTimesDiscrepancy => 3,
    };
    DistillParams {
        n,
        groups: groups as u32,
        candidates: rd.documents.len() as u32,
        scheme,
        lambda: rd.lambda as f32,
        mu: rd.mu as f32,
        scale,
        _pad: 0,
    }
}

/// One recorded dispatch: its slot and its workgroups.
type Dispatch<'a> = (&'a Slot, (u32, u32, u32));

/// A step's batch as its dispatches see it: its documents and groups, the trainer's largest
/// batch (where the teacher loss's shares and the scratch go in `partial`), and the step's first
/// slot in the loss window.
#[derive(Clone, Copy)]
struct BatchShape {
    n: usize,
    groups: usize,
    max_docs: usize,
    slot: usize,
}

/// The data loss's dispatches on S_label (hard labels y, then `loss_weights`), its sum into the
/// window's data slot.
fn data_loss<'a>(
    gpu: &Gpu,
    loss: (&'a RankingLoss, &'a Slot),
    targets_buffer: &wgpu::Buffer,
    plan: &LossPlan,
    batch: &StepBatch<'_>,
    shape: BatchShape,
) -> Vec<Dispatch<'a>> {
    let weights = loss_weights(
        plan.loss,
        Targets::Hard(batch.labels),
        batch.offsets,
        batch.positive,
    );
    let params = LossParams {
        n: shape.n,
        groups: shape.groups,
        teachers: 0,
        partial_offset: 0,
        scratch_offset: 2 * shape.max_docs,
        scale: plan.data_scale,
        accumulate: false,
    };
    let sum = ReduceParams::new(shape.n, shape.slot, 0);
    // The softmax's hard targets are the labels' gains 2^y - 1 (binary y: y itself), computed
    // here as the CPU engine computes them; the other losses read y.
    let labels = crate::model::loss::hard_targets(plan.loss, batch.labels);
    let targets = [&labels[..], &weights].concat();
    ranking_loss(gpu, loss, (targets_buffer, &targets), params, sum)
}

/// The teacher loss's dispatches on S_all (the teachers' logits, then `loss_weights` of soft
/// targets), added to the data loss's gradient, its sum into the window's teacher slot.
fn teacher_loss<'a>(
    gpu: &Gpu,
    loss: (&'a RankingLoss, &'a Slot),
    targets_buffer: &wgpu::Buffer,
    plan: &LossPlan,
    batch: &StepBatch<'_>,
    shape: BatchShape,
) -> Vec<Dispatch<'a>> {
    let all = vec![true; shape.groups];
    let weights = loss_weights(plan.loss, Targets::<f32>::Soft, batch.offsets, &all);
    let params = LossParams {
        n: shape.n,
        groups: shape.groups,
        teachers: plan.teachers,
        partial_offset: shape.max_docs,
        scratch_offset: 2 * shape.max_docs,
        scale: plan.teacher_scale,
        accumulate: true,
    };
    let sum = ReduceParams::new(shape.n, shape.slot + 1, shape.max_docs);
    let mut targets: Vec<f32> = batch.teachers.concat();
    targets.extend(weights);
    ranking_loss(gpu, loss, (targets_buffer, &targets), params, sum)
}

/// A ranking loss's dispatches: its targets written (the labels or the teachers' logits, then
/// their weights), its kernels with `params`, and the sum of its documents' shares by `sum`.
fn ranking_loss<'a>(
    gpu: &Gpu,
    (loss, reduce): (&'a RankingLoss, &'a Slot),
    (buffer, targets): (&wgpu::Buffer, &[f32]),
    params: LossParams,
    sum: ReduceParams,
) -> Vec<Dispatch<'a>> {
    gpu.queue
        .write_buffer(buffer, 0, bytemuck::cast_slice(targets));
    let mut dispatches = loss.prepare(gpu, params);
    gpu.set_params(reduce, &sum);
    dispatches.push((reduce, (1, 1, 1)));
    dispatches
}

impl SubsetObjective {
    /// The global objective's dispatches over the batch's S_label documents (gathered in batch
    /// order, as the CPU engine takes them, and the gradient scattered back, zeros elsewhere);
    /// whether it wrote the window's data slot (not for a batch without S_label documents).
    fn dispatches(
        &mut self,
        gpu: &Gpu,
        batch: &StepBatch<'_>,
        scale: f32,
        shape: BatchShape,
    ) -> (Vec<Dispatch<'_>>, bool) {
        let n = shape.n;
        let mut rows: Vec<u32> = Vec::new();
        for (g, w) in batch.offsets.windows(2).enumerate() {
            if batch.positive[g] {
                rows.extend(w[0] as u32..w[1] as u32);
            }
        }
        let m = rows.len();
        let mut places = vec![NONE; n];
        for (c, &r) in rows.iter().enumerate() {
            places[r as usize] = c as u32;
        }
        let mut selection = rows.clone();
        selection.extend(&places);
        gpu.queue
            .write_buffer(&self.selection, 0, bytemuck::cast_slice(&selection));
        let select_params = |scale: f32| SelectParams {
            n: n as u32,
            m: m as u32,
            scale,
            ..Default::default()
        };
        gpu.set_params(&self.gather, &select_params(1.0));
        gpu.set_params(&self.scatter, &select_params(scale));
        let mut dispatches = Vec::new();
        let written = m > 0;
        let labels: Vec<f32> = rows.iter().map(|&r| batch.labels[r as usize]).collect();
        if written {
            self.prior.observe(&labels);
            self.steps += 1;
        }
        let this = &*self;
        if written {
            dispatches.push((&this.gather, (groups_of(m, WORKGROUP), 1, 1)));
            dispatches.extend(
                this.loss
                    .prepare(gpu, &labels, &this.prior, shape.slot, this.steps),
            );
        }
        // Zeros outside S_label (and everywhere for a batch without it).
        dispatches.push((&this.scatter, (groups_of(n, WORKGROUP), 1, 1)));
        (dispatches, written)
    }
}

impl RdSlots {
    /// Ranking Distillation's dispatches: the candidates' weights from the student's logits, their
    /// count, L_D and its gradient, its sum into the window's RD slot.
    fn dispatches(
        &self,
        gpu: &Gpu,
        batch: &StepBatch<'_>,
        rd: &RdBatch,
        scale: f32,
        shape: BatchShape,
    ) -> Vec<Dispatch<'_>> {
        let candidates = rd.documents.len();
        let mut index: Vec<u32> = batch.offsets.iter().map(|&o| o as u32).collect();
        index.extend(rd.offsets.iter().map(|&o| o as u32));
        index.extend(rd.documents.iter().map(|&d| d as u32));
        gpu.queue
            .write_buffer(&self.index, 0, bytemuck::cast_slice(&index));
        let params = rd_params(shape.n as u32, shape.groups, rd, scale);
        gpu.set_params(&self.weigh, &params);
        gpu.set_params(&self.count, &ReduceParams::new(shape.groups, candidates, 0));
        gpu.set_params(&self.loss, &params);
        gpu.set_params(&self.sum, &ReduceParams::new(candidates, shape.slot + 2, 0));
        vec![
            (&self.weigh, (groups_of(shape.groups, WORKGROUP), 1, 1)),
            (&self.count, (1, 1, 1)),
            (&self.loss, (groups_of(candidates, WORKGROUP), 1, 1)),
            (&self.sum, (1, 1, 1)),
        ]
    }
}

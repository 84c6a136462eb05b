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
    /// Uploads `model` and builds every buffer, bind group and parameter slot for batches of up
    /// to `max_docs` documents and the losses of `plan`.
    pub fn new(gpu: Arc<Gpu>, model: &Mlp<f32>, plan: &LossPlan, max_docs: usize) -> Result<Self> {
        let objective_columns = plan
            .objective
            .map_or(0, |o| GpuObjectiveLoss::columns(&o.objective));
        // The widest per-row buffers: the teachers' logits (and weights), the loss shares with
        // LambdaRank's scratch (4 per row), the objective's terms.
        let columns = (plan.teachers + 1).max(4).max(objective_columns);
        let mlp = GpuMlp::new(gpu.clone(), model, plan.adam, max_docs, columns)?;
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
        let gpu = self.gpu.clone();
        let q = &gpu.queue;
        let groups = batch.offsets.len() - 1;
        self.mlp.start_step(batch.inputs, n)?;
        // Group layout: offsets, then the group of each document.
        let mut info: Vec<u32> = batch.offsets.iter().map(|&o| o as u32).collect();
        for g in 0..groups {
            info.extend(std::iter::repeat_n(
                g as u32,
                batch.offsets[g + 1] - batch.offsets[g],
            ));
        }
        q.write_buffer(&self.group_info, 0, bytemuck::cast_slice(&info));
        let b = n as u32;
        let slot = LOSSES_PER_STEP * self.pending;
        // The window slots no dispatch writes this step read as 0.
        let mut unwritten = Vec::new();
        // The data loss's dispatches.
        let mut data: Vec<(&Slot, (u32, u32, u32))> = Vec::new();
        if let Some((loss, sum)) = &self.data_loss {
            let mut targets = batch.labels.to_vec();
            targets.extend(loss_weights(
                plan.loss,
                Targets::Hard(batch.labels),
                batch.offsets,
                batch.positive,
            ));
            q.write_buffer(&self.data_targets, 0, bytemuck::cast_slice(&targets));
            data.extend(loss.prepare(
                &gpu,
                LossParams {
                    n,
                    groups,
                    teachers: 0,
                    partial_offset: 0,
                    scratch_offset: 2 * self.max_docs,
                    scale: plan.data_scale,
                    accumulate: false,
                },
            ));
            gpu.set_params(sum, &ReduceParams::new(n, slot, 0));
            data.push((sum, (1, 1, 1)));
        }
        if let Some(subset) = &mut self.objective {
            // The S_label documents, in batch order, as the CPU engine takes them.
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
            q.write_buffer(&subset.selection, 0, bytemuck::cast_slice(&selection));
            let select_params = |scale: f32| SelectParams {
                n: b,
                m: m as u32,
                scale,
                ..Default::default()
            };
            gpu.set_params(&subset.gather, &select_params(1.0));
            gpu.set_params(&subset.scatter, &select_params(plan.data_scale));
            if m > 0 {
                let labels: Vec<f32> = rows.iter().map(|&r| batch.labels[r as usize]).collect();
                subset.prior.observe(&labels);
                subset.steps += 1;
                data.push((&subset.gather, (groups_of(m, WORKGROUP), 1, 1)));
                let dispatches =
                    subset
                        .loss
                        .prepare(&gpu, &labels, &subset.prior, slot, subset.steps);
                data.extend(dispatches);
            } else {
                unwritten.push(slot);
            }
            // Zeros outside S_label (and everywhere for a batch without it).
            data.push((&subset.scatter, (groups_of(n, WORKGROUP), 1, 1)));
        }
        let with_teacher = plan.teachers > 0;
        let mut teacher: Vec<(&Slot, (u32, u32, u32))> = Vec::new();
        if with_teacher {
            let mut t: Vec<f32> = batch
                .teachers
                .iter()
                .flat_map(|t| t.iter().copied())
                .collect();
            let all = vec![true; groups];
            t.extend(loss_weights(
                plan.loss,
                Targets::<f32>::Soft,
                batch.offsets,
                &all,
            ));
            q.write_buffer(&self.teacher_targets, 0, bytemuck::cast_slice(&t));
            teacher.extend(self.teacher_loss.prepare(
                &gpu,
                LossParams {
                    n,
                    groups,
                    teachers: plan.teachers,
                    partial_offset: self.max_docs,
                    scratch_offset: 2 * self.max_docs,
                    scale: plan.teacher_scale,
                    accumulate: true,
                },
            ));
            let sum = ReduceParams::new(n, slot + 1, self.max_docs);
            gpu.set_params(&self.reduce_teacher, &sum);
            teacher.push((&self.reduce_teacher, (1, 1, 1)));
        } else {
            unwritten.push(slot + 1);
        }
        let mut rd_dispatches: Vec<(&Slot, (u32, u32, u32))> = Vec::new();
        match (&self.rd, batch.ranking_distillation) {
            (Some(slots), Some(rd)) if !rd.documents.is_empty() => {
                let candidates = rd.documents.len();
                let mut index: Vec<u32> = batch.offsets.iter().map(|&o| o as u32).collect();
                index.extend(rd.offsets.iter().map(|&o| o as u32));
                index.extend(rd.documents.iter().map(|&d| d as u32));
                q.write_buffer(&slots.index, 0, bytemuck::cast_slice(&index));
                let params = rd_params(b, groups, rd, plan.rd_scale.unwrap_or(0.0));
                gpu.set_params(&slots.weigh, &params);
                gpu.set_params(&slots.count, &ReduceParams::new(groups, candidates, 0));
                gpu.set_params(&slots.loss, &params);
                gpu.set_params(&slots.sum, &ReduceParams::new(candidates, slot + 2, 0));
                rd_dispatches = vec![
                    (&slots.weigh, (groups_of(groups, WORKGROUP), 1, 1)),
                    (&slots.count, (1, 1, 1)),
                    (&slots.loss, (groups_of(candidates, WORKGROUP), 1, 1)),
                    (&slots.sum, (1, 1, 1)),
                ];
            }
            _ => unwritten.push(slot + 2),
        }
        for unused in unwritten {
            q.write_buffer(
                &self.losses,
                4 * unused as u64,
                bytemuck::cast_slice(&[0f32]),
            );
        }

        let mlp = &self.mlp;
        let gpu: &Gpu = &gpu;
        let forward: Phase = Box::new(move |pass| mlp.record_forward(pass, n));
        let losses: Phase = Box::new(move |pass| {
            for (s, groups) in data.iter().chain(&teacher).chain(&rd_dispatches) {
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

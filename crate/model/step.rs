//! What one training step of a ranking model needs, whichever engine runs it: the batch (with
//! Ranking Distillation's candidates, [`RdBatch`]), the plan of its losses, and the losses it
//! reports. Both engines ([`crate::cpu::ranking`] and
//! [`crate::gpu::trainer`]) take these types, and the training loop ([`crate::ranking::train`]) makes them.

use super::adam::AdamConfig;
use super::loss::LossKind;
use super::objective::Objective;
use crate::math::{exp, tanh};

/// One mini-batch of whole query groups, gathered into contiguous buffers.
#[derive(Clone, Copy)]
pub struct StepBatch<'a> {
    /// `n x n_in`, row-major.
    pub inputs: &'a [f32],
    /// Binary labels y.
    pub labels: &'a [f32],
    /// Group g holds documents `offsets[g]..offsets[g + 1]`.
    pub offsets: &'a [usize],
    /// Whether group g is in S_label (the data loss sees only those).
    pub positive: &'a [bool],
    /// The teachers' logits, one slice of n per teacher (empty: no teacher loss).
    pub teachers: &'a [&'a [f32]],
    /// Ranking Distillation's candidates in this batch (None: no L_D).
    pub ranking_distillation: Option<&'a RdBatch>,
}

/// How a step's losses combine, decided once per training run:
///
/// ```text
/// L = data_scale * data_loss(S_label) + teacher_scale * teacher_loss(S_all) + rd_scale * L_D
/// ```
///
/// PFD Eq. 1 with alpha as `data_scale` and 1 - alpha as `teacher_scale` when teachers are given;
/// the data loss alone (scale 1) without them ([`LossPlan::new`] holds that rule).
#[derive(Debug, Clone, Copy)]
pub struct LossPlan {
    /// The data loss (unless `objective` replaces it) and the teacher loss.
    pub loss: LossKind,
    pub data_scale: f32,
    pub teacher_scale: f32,
    /// How many teachers each batch carries.
    pub teachers: usize,
    /// alpha_RD, when Ranking Distillation adds L_D.
    pub rd_scale: Option<f32>,
    /// A global objective as the data loss, instead of `loss`'s.
    pub objective: Option<ObjectivePlan>,
    pub adam: AdamConfig,
    /// Dropout on the hidden layers in training (None: none).
    pub dropout: Option<super::dropout::Dropout>,
}

/// A global objective (Eban et al.) as the data loss of a ranking model, on the documents of
/// S_label: its multipliers start at 1 and ascend at `dual_step`; the log-loss surrogate.
#[derive(Debug, Clone, Copy)]
pub struct ObjectivePlan {
    pub objective: Objective,
    pub dual_step: f32,
}

impl LossPlan {
    /// The plan for `teachers` teachers: the data loss weighs `alpha` against the teacher loss
    /// when there is a teacher, and 1 when there is none.
    pub fn new(
        loss: LossKind,
        alpha: f64,
        teachers: usize,
        rd_scale: Option<f64>,
        objective: Option<ObjectivePlan>,
        adam: AdamConfig,
    ) -> Self {
        let alpha = if teachers == 0 { 1.0 } else { alpha as f32 };
        LossPlan {
            loss,
            data_scale: alpha,
            teacher_scale: 1.0 - alpha,
            teachers,
            rd_scale: rd_scale.map(|s| s as f32),
            objective,
            adam,
            dropout: None,
        }
    }
}

/// The losses one step reports, each unweighted by its scale.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepLosses {
    pub data: f32,
    /// 0 without a teacher.
    pub teacher: f32,
    /// Ranking Distillation's L_D (0 without it).
    pub rd: f32,
}

impl StepLosses {
    pub fn all_finite(&self) -> bool {
        self.data.is_finite() && self.teacher.is_finite() && self.rd.is_finite()
    }

    pub fn sum(&self) -> f64 {
        self.data as f64 + self.teacher as f64 + self.rd as f64
    }
}

/// The weighting one batch applies: `RdWeighting` ([`crate::ranking::distill`]) with the hybrid's epoch resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RdScheme {
    Equal,
    Position,
    Discrepancy,
    PositionTimesDiscrepancy,
}

/// Ranking Distillation in one batch: each batch group's candidates, the teacher's best first,
/// as batch documents, and the weighting in force. Both engines weigh them from the student's
/// logits with the same rule ([`RdBatch::weights`] on the CPU, `rd_weights` in
/// `shaders/distill.wgsl`).
#[derive(Debug, Clone)]
pub struct RdBatch {
    pub scheme: RdScheme,
    pub lambda: f64,
    pub mu: f64,
    /// Group b's candidates are `documents[offsets[b]..offsets[b + 1]]`.
    pub offsets: Vec<usize>,
    pub documents: Vec<usize>,
}

impl RdBatch {
    /// The (batch document, weight) pairs of each batch group (group b holds the documents
    /// `group_offsets[b]..group_offsets[b + 1]`). Candidate r (1-based) weighs
    /// w^a_r = exp(-r / lambda), w^b_r = max(0, tanh(mu (rhat_r - r))) with rhat_r the student's
    /// rank of it in its group (ties by document order), their product, or 1, as the scheme
    /// says, normalised to sum 1 per group; a group whose weights sum to 0 has none.
    pub fn weights(&self, group_offsets: &[usize], logits: &[f32]) -> Vec<Vec<(usize, f32)>> {
        let position = |r: usize| exp(-(r as f64) / self.lambda);
        (0..self.offsets.len() - 1)
            .map(|b| {
                let group = &logits[group_offsets[b]..group_offsets[b + 1]];
                let candidates = &self.documents[self.offsets[b]..self.offsets[b + 1]];
                let discrepancy = |r: usize, doc: usize| {
                    let i = doc - group_offsets[b];
                    let f = group[i];
                    let rhat = 1 + group
                        .iter()
                        .enumerate()
                        .filter(|&(j, &o)| o > f || (o == f && j < i))
                        .count();
                    tanh(self.mu * (rhat as f64 - r as f64)).max(0.0)
                };
                let raw: Vec<f64> = candidates
                    .iter()
                    .enumerate()
                    .map(|(r0, &doc)| {
                        let r = r0 + 1;
                        match self.scheme {
                            RdScheme::Equal => 1.0,
                            RdScheme::Position => position(r),
                            RdScheme::Discrepancy => discrepancy(r, doc),
                            RdScheme::PositionTimesDiscrepancy => position(r) * discrepancy(r, doc),
                        }
                    })
                    .collect();
                let sum: f64 = raw.iter().sum();
                if sum <= 0.0 {
                    return Vec::new();
                }
                candidates
                    .iter()
                    .zip(&raw)
                    .map(|(&doc, &w)| (doc, (w / sum) as f32))
                    .collect()
            })
            .collect()
    }
}

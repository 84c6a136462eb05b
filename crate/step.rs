//! What one training step of a ranking model needs, whichever engine runs it: the batch, the plan
//! of its losses, and the losses it reports. Both engines ([`crate::cpu::ranking`] and
//! [`crate::gpu::trainer`]) take these types, and the training loop ([`crate::ranking::train`]) makes them.

use crate::cpu::adam::AdamConfig;
use crate::cpu::loss::LossKind;
use crate::objectives::Objective;
use crate::ranking::distill::RdBatch;

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

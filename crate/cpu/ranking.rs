//! The CPU engine's training step for a ranking model: forward, the losses of a [`LossPlan`]
//! (data, teacher, Ranking Distillation, or a global objective as the data loss), backward and
//! Adam, all on the host. The training loop ([`crate::ranking::train`]) drives it through
//! [`crate::engine`], as it drives the GPU engine.

use super::adam::{Adam, AdamVector};
use super::loss::{data_loss, ranking_distillation_loss, teacher_loss};
use super::mlp::{Activations, Gradients};
use crate::model::adam::AdamConfig;
use crate::model::mlp::Mlp;
use crate::model::objective::{dual_ascent, Grad, LabelPrior, Objective, Params, Surrogate};
use crate::model::step::{LossPlan, ObjectivePlan, StepBatch, StepLosses};

/// One ranking model in training on the CPU engine.
pub struct CpuRanking {
    model: Mlp<f32>,
    adam: Adam<f32>,
    plan: LossPlan,
    objective: Option<ObjectiveLoss>,
    acts: Activations<f32>,
    grads: Gradients<f32>,
    dlogits: Vec<f32>,
    include_all: Vec<bool>,
    /// The losses of the steps not yet read.
    pending: Vec<StepLosses>,
    /// Steps taken: the dropout masks' counter (the GPU engine's is its Adam step).
    steps: u64,
}

impl CpuRanking {
    /// The network's Adam takes `lr` from the next step on.
    pub fn set_learning_rate(&mut self, lr: f64) {
        self.adam.config.lr = lr;
    }

    pub fn new(model: Mlp<f32>, plan: &LossPlan) -> Self {
        CpuRanking {
            adam: Adam::new(&model, plan.adam),
            objective: plan.objective.map(|o| ObjectiveLoss::new(o, plan.adam)),
            grads: model.zero_gradients(),
            model,
            plan: *plan,
            acts: Activations::default(),
            dlogits: Vec::new(),
            include_all: Vec::new(),
            pending: Vec::new(),
            steps: 0,
        }
    }

    /// One step: forward, the plan's losses and their gradients, backward, Adam (and the
    /// objective's biases and multipliers). Returns the step's losses, also kept for
    /// [`read_losses`](Self::read_losses).
    /// The step runs on a thread of the pool ([`super::on_pool`]).
    pub fn step(&mut self, batch: &StepBatch) -> StepLosses {
        super::on_pool(|| self.step_here(batch))
    }

    /// [`step`](Self::step) on this thread.
    fn step_here(&mut self, batch: &StepBatch) -> StepLosses {
        let plan = self.plan;
        self.steps += 1;
        let dropout = plan.dropout.as_ref().map(|d| (d, self.steps));
        let logits =
            self.model
                .forward_training(batch.inputs, batch.offsets, &mut self.acts, dropout);
        self.dlogits.clear();
        self.dlogits.resize(logits.len(), 0.0);
        let data = match self.objective.as_mut() {
            Some(o) => o.loss(
                logits,
                (batch.labels, batch.offsets, batch.positive),
                plan.data_scale,
                &mut self.dlogits,
            ),
            None => data_loss(
                plan.loss,
                logits,
                batch.labels,
                batch.offsets,
                batch.positive,
                plan.data_scale,
                &mut self.dlogits,
            ),
        };
        self.include_all.clear();
        self.include_all.resize(batch.positive.len(), true);
        let teacher = teacher_loss(
            plan.loss,
            logits,
            batch.teachers,
            batch.offsets,
            &self.include_all,
            plan.teacher_scale,
            &mut self.dlogits,
        );
        let rd = match (batch.ranking_distillation, plan.rd_scale) {
            (Some(rd), Some(scale)) => {
                let weights = rd.weights(batch.offsets, logits);
                ranking_distillation_loss(logits, &weights, scale, &mut self.dlogits)
            }
            _ => 0.0,
        };
        self.model
            .backward(batch.inputs, &self.acts, &self.dlogits, &mut self.grads);
        self.adam.update(&mut self.model, &self.grads);
        if let Some(o) = self.objective.as_mut() {
            o.update();
        }
        let losses = StepLosses { data, teacher, rd };
        self.pending.push(losses);
        losses
    }

    /// The losses of the steps since the last call.
    pub fn read_losses(&mut self) -> Vec<StepLosses> {
        std::mem::take(&mut self.pending)
    }

    pub fn model(&self) -> &Mlp<f32> {
        &self.model
    }
}

/// A global objective as the data loss: its multipliers, anchor biases and label prior live across
/// the steps of a training run, as in `objectives::train`.
struct ObjectiveLoss {
    objective: Objective,
    params: Params<f32>,
    prior: LabelPrior,
    bias_adam: AdamVector<f32>,
    dual_step: f32,
    grad: Grad<f32>,
    /// The batch's S_label documents: their index in the batch, logit and label.
    index: Vec<usize>,
    logits: Vec<f32>,
    labels: Vec<f32>,
}

impl ObjectiveLoss {
    fn new(plan: ObjectivePlan, adam: AdamConfig) -> Self {
        let params = Params::new(&plan.objective, 1.0);
        ObjectiveLoss {
            bias_adam: AdamVector::new(params.biases.len(), adam),
            params,
            objective: plan.objective,
            prior: Default::default(),
            dual_step: plan.dual_step,
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
            Surrogate::Log,
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
        dual_ascent(
            &mut self.params.lambdas,
            &self.grad.dlambdas,
            self.dual_step,
        );
    }
}

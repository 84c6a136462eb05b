//! The CPU engine's training step for a global objective's classifier.

use crate::cpu::adam::{Adam, AdamVector};
use crate::cpu::mlp::{Activations, Gradients};
use crate::model::mlp::Mlp;

use crate::model::objective::{
    dual_ascent, Config, Grad, LabelPrior, Objective, Params, Surrogate,
};

/// One classifier in training on the CPU engine: the model and its Adam, the multipliers and the
/// anchor biases with their own Adam, and the running label prior.
pub struct CpuTrainer {
    pub model: Mlp<f32>,
    pub params: Params<f32>,
    pub prior: LabelPrior,
    objective: Objective,
    surrogate: Surrogate,
    adam: Adam<f32>,
    bias_adam: AdamVector<f32>,
    dual_step: f32,
    acts: Activations<f32>,
    grads: Gradients<f32>,
    grad: Grad<f32>,
    /// The losses of the steps not yet read.
    pending: Vec<f32>,
}

impl CpuTrainer {
    /// Starts from `model`, every multiplier at `config.initial_lambda` and every bias at 0.
    pub fn new(model: Mlp<f32>, config: &Config) -> Self {
        let params = Params::new(&config.objective, config.initial_lambda as f32);
        CpuTrainer {
            adam: Adam::new(&model, config.adam),
            bias_adam: AdamVector::new(params.biases.len(), config.adam),
            grads: model.zero_gradients(),
            model,
            params,
            prior: LabelPrior::default(),
            objective: config.objective,
            surrogate: config.surrogate,
            dual_step: (config.dual_rate_factor * config.adam.lr) as f32,
            acts: Activations::default(),
            grad: Grad::default(),
            pending: Vec::new(),
        }
    }

    /// One step on a batch (`inputs` row-major, one label each): the label prior observes the
    /// labels; the loss and its gradients at the current parameters; then Adam on the model and
    /// the anchor biases and dual ascent on the multipliers. Returns the loss.
    /// It runs on a thread of the pool ([`super::on_pool`]).
    pub fn step(&mut self, inputs: &[f32], labels: &[f32]) -> f32 {
        super::on_pool(|| self.step_here(inputs, labels))
    }

    /// [`step`](Self::step) on this thread.
    fn step_here(&mut self, inputs: &[f32], labels: &[f32]) -> f32 {
        self.prior.observe(labels);
        let logits = self.model.forward(inputs, &mut self.acts);
        let loss = self.objective.loss(
            self.surrogate,
            logits,
            labels,
            self.prior.value(),
            &self.params,
            &mut self.grad,
        );
        self.model
            .backward(inputs, &self.acts, &self.grad.dlogits, &mut self.grads);
        self.adam.update(&mut self.model, &self.grads);
        self.bias_adam
            .update(&mut self.params.biases, &self.grad.dbiases);
        dual_ascent(
            &mut self.params.lambdas,
            &self.grad.dlambdas,
            self.dual_step,
        );
        self.pending.push(loss);
        loss
    }

    /// The losses of the steps since the last call.
    pub fn read_losses(&mut self) -> Vec<f32> {
        std::mem::take(&mut self.pending)
    }
}

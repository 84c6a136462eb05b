//! Adam (Kingma and Ba), with bias correction; spec §2 defaults lr 1e-3, betas 0.9 / 0.999,
//! eps 1e-8. Optional L2 weight decay is added to the gradient (as in the Ranking Distillation
//! authors' code).

use super::mlp::Gradients;
use super::{real, Real};
use crate::model::adam::AdamConfig;
use crate::model::mlp::Mlp;

/// First and second moment estimates, one pair of buffers per parameter tensor.
pub struct Adam<T> {
    pub config: AdamConfig,
    pub step: u64,
    m: Vec<Vec<T>>,
    v: Vec<Vec<T>>,
}

impl<T: Real> Adam<T> {
    pub fn new(model: &Mlp<T>, config: AdamConfig) -> Self {
        let m: Vec<Vec<T>> = model
            .tensors()
            .map(|tensor| vec![T::zero(); tensor.len()])
            .collect();
        Adam {
            config,
            step: 0,
            v: m.clone(),
            m,
        }
    }

    /// One update of every parameter of `model` from `grads`.
    pub fn update(&mut self, model: &mut Mlp<T>, grads: &Gradients<T>) {
        self.step += 1;
        let step = Step::new(&self.config, self.step);
        let (m_all, v_all) = (&mut self.m, &mut self.v);
        let tensors = model.tensors_mut().zip(grads.tensors()).enumerate();
        for (t, (param, grad)) in tensors {
            let update = |(((p, g), m), v): Chunks<T>| step.apply(p, g, m, v);
            // Large tensors are updated in parallel chunks on native targets.
            const CHUNK: usize = 16 * 1024;
            #[cfg(not(target_arch = "wasm32"))]
            {
                use rayon::prelude::*;
                param
                    .par_chunks_mut(CHUNK)
                    .zip(grad.par_chunks(CHUNK))
                    .zip(m_all[t].par_chunks_mut(CHUNK))
                    .zip(v_all[t].par_chunks_mut(CHUNK))
                    .for_each(update);
            }
            #[cfg(target_arch = "wasm32")]
            param
                .chunks_mut(CHUNK)
                .zip(grad.chunks(CHUNK))
                .zip(m_all[t].chunks_mut(CHUNK))
                .zip(v_all[t].chunks_mut(CHUNK))
                .for_each(update);
        }
    }
}

/// Matching chunks of a parameter tensor, its gradient and its two moments.
type Chunks<'a, T> = (((&'a mut [T], &'a [T]), &'a mut [T]), &'a mut [T]);

/// Adam on one free-standing parameter vector (the anchor biases of the global objectives).
pub struct AdamVector<T> {
    pub config: AdamConfig,
    pub step: u64,
    m: Vec<T>,
    v: Vec<T>,
}

impl<T: Real> AdamVector<T> {
    pub fn new(len: usize, config: AdamConfig) -> Self {
        AdamVector {
            config,
            step: 0,
            m: vec![T::zero(); len],
            v: vec![T::zero(); len],
        }
    }

    /// One update of `params` from `grads`.
    pub fn update(&mut self, params: &mut [T], grads: &[T]) {
        assert_eq!(
            params.len(),
            self.m.len(),
            "AdamVector: wrong parameter count"
        );
        self.step += 1;
        Step::new(&self.config, self.step).apply(params, grads, &mut self.m, &mut self.v);
    }
}

/// The coefficients of Adam step t.
struct Step<T> {
    b1: T,
    b2: T,
    lr_t: T,
    eps_t: T,
    decay: T,
}

impl<T: Real> Step<T> {
    fn new(c: &AdamConfig, t: u64) -> Self {
        let bias1 = 1.0 - c.beta1.powi(t as i32);
        let bias2 = 1.0 - c.beta2.powi(t as i32);
        Step {
            b1: real(c.beta1),
            b2: real(c.beta2),
            // lr_t folds both bias corrections into the step size, as in the paper's Algorithm 1.
            lr_t: real(c.lr * bias2.sqrt() / bias1),
            eps_t: real(c.eps * bias2.sqrt()),
            decay: real(c.weight_decay),
        }
    }

    fn apply(&self, p: &mut [T], g: &[T], m: &mut [T], v: &mut [T]) {
        let (b1, b2) = (self.b1, self.b2);
        for i in 0..p.len() {
            let g = g[i] + self.decay * p[i];
            m[i] = b1 * m[i] + (T::one() - b1) * g;
            v[i] = b2 * v[i] + (T::one() - b2) * g * g;
            p[i] = p[i] - self.lr_t * m[i] / (v[i].sqrt() + self.eps_t);
        }
    }
}

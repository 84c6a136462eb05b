//! The model: a multilayer perceptron from the document's features to one score, its weights,
//! their initialisation, and the memory a model of given widths needs ([`check_size`], against
//! [`crate::memory`]). Its forward and backward
//! passes are each engine's ([`crate::cpu::mlp`], [`crate::gpu::mlp`]).

use super::{real, Real};
use crate::memory::human_bytes;
use crate::rng::Rng;

/// Checks, before anything is allocated, that a model of `n_in` inputs and hidden `widths`,
/// trained on batches of `batch_rows` documents, fits in memory: every layer's weights, their
/// gradients, Adam's two moments and the kept best copy (5 copies), and its activations and their
/// gradients over a batch. `available` is the memory there is (None: unknown, then only sizes
/// past the address space are refused). The error names the largest layer and the bytes needed,
/// and the flags that size it (`sized_by`: `--widths (or --batch-docs)`), as the command spells
/// them.
pub fn check_size(
    n_in: usize,
    widths: &[usize],
    batch_rows: usize,
    available: Option<u64>,
    sized_by: &str,
) -> crate::error::Result<()> {
    let mut dims = vec![n_in as u128];
    dims.extend(widths.iter().map(|&w| w as u128));
    dims.push(1);
    let layer_bytes = |i: usize| {
        let (a, b) = (dims[i], dims[i + 1]);
        4 * (5 * (a * b + b) + 2 * batch_rows as u128 * b)
    };
    let total: u128 = (0..dims.len() - 1).map(layer_bytes).sum();
    let limit = available.map_or(isize::MAX as u128, |a| a as u128);
    if total <= limit {
        return Ok(());
    }
    let largest = (0..dims.len() - 1)
        .max_by_key(|&i| layer_bytes(i))
        .expect("a model has a layer");
    Err(crate::error::Error::Config(format!(
        "the model does not fit in memory: layer {} ({} -> {} units) needs {} for its weights, gradients, Adam state and activations, the whole model {}, and {}; choose smaller {sized_by}",
        largest + 1,
        dims[largest],
        dims[largest + 1],
        human_bytes(layer_bytes(largest)),
        human_bytes(total),
        match available {
            Some(a) => format!("this machine has {} available", human_bytes(a as u128)),
            None => "that is more than any machine can address".into(),
        }
    )))
}

/// One dense layer's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Dense<T> {
    pub n_in: usize,
    pub n_out: usize,
    /// `(n_in, n_out)`, row-major.
    pub weight: Vec<T>,
    pub bias: Vec<T>,
}

/// The multilayer perceptron: `widths` hidden layers with ReLU, then a linear layer to one logit.
#[derive(Debug, Clone, PartialEq)]
pub struct Mlp<T> {
    pub layers: Vec<Dense<T>>,
}

impl<T: Real> Mlp<T> {
    /// He-uniform initialisation (weights in ±sqrt(6 / n_in)), biases 0, from `seed`.
    pub fn new(n_in: usize, widths: &[usize], seed: u64) -> Self {
        let mut rng = Rng::stream(seed, 0x696e_6974);
        let mut dims = vec![n_in];
        dims.extend_from_slice(widths);
        dims.push(1);
        let layers = dims
            .windows(2)
            .map(|w| {
                let limit = (6.0 / w[0] as f64).sqrt();
                Dense {
                    n_in: w[0],
                    n_out: w[1],
                    weight: (0..w[0] * w[1])
                        .map(|_| real(rng.uniform_range(-limit, limit)))
                        .collect(),
                    bias: vec![T::zero(); w[1]],
                }
            })
            .collect();
        Mlp { layers }
    }
    pub fn n_in(&self) -> usize {
        self.layers[0].n_in
    }
    pub fn widths(&self) -> Vec<usize> {
        self.layers[..self.layers.len() - 1]
            .iter()
            .map(|l| l.n_out)
            .collect()
    }
    pub fn n_parameters(&self) -> usize {
        self.layers
            .iter()
            .map(|l| l.weight.len() + l.bias.len())
            .sum()
    }
    /// Every parameter, flattened in layer order (weight then bias); for gradient checks and I/O.
    pub fn parameters(&self) -> Vec<T> {
        self.layers
            .iter()
            .flat_map(|l| l.weight.iter().chain(&l.bias).copied())
            .collect()
    }
    pub fn set_parameters(&mut self, values: &[T]) {
        let mut at = 0;
        for l in &mut self.layers {
            let nw = l.weight.len();
            l.weight.copy_from_slice(&values[at..at + nw]);
            at += nw;
            let nb = l.bias.len();
            l.bias.copy_from_slice(&values[at..at + nb]);
            at += nb;
        }
    }
    pub fn all_finite(&self) -> bool {
        self.layers
            .iter()
            .all(|l| l.weight.iter().chain(&l.bias).all(|v| v.is_finite()))
    }
}

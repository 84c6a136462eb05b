//! The model: a multilayer perceptron from the document's features to one score, its weights,
//! their initialisation, and the memory a model of given widths needs ([`check_size`], against
//! [`crate::memory`]). Its forward and backward
//! passes are each engine's ([`crate::cpu::mlp`], [`crate::gpu::mlp`]).

use super::attention::Attention;
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

/// Layer normalisation (Ba, Kiros and Hinton 2016) of one hidden layer's pre-activations: each
/// row centred on its mean and divided by its standard deviation (over the layer's units, with
/// [`LAYER_NORM_EPS`] added to the variance), then scaled by `gain` and shifted by `shift` per
/// unit, before the ReLU.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerNorm<T> {
    pub gain: Vec<T>,
    pub shift: Vec<T>,
}

/// Added to a row's variance before its square root: ONNX's LayerNormalization default, so the
/// exported graph computes what both engines do.
pub const LAYER_NORM_EPS: f64 = 1e-5;

/// The normalisation of the hidden layers: a setting (`--norm`) and a property of a saved model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Norm {
    /// Dense, then ReLU: the paper's model.
    #[default]
    None,
    /// Dense, then [`LayerNorm`], then ReLU, on every hidden layer.
    Layer,
}

impl Norm {
    pub const ALL: [Norm; 2] = [Norm::None, Norm::Layer];

    pub fn name(self) -> &'static str {
        match self {
            Norm::None => "none",
            Norm::Layer => "layer",
        }
    }
}

/// The multilayer perceptron: `widths` hidden layers with ReLU, then a linear layer to one logit.
/// With layer normalisation, `norms[l]` normalises hidden layer l's pre-activations; without it,
/// `norms` is empty. With `attention`, the last hidden layer's outputs attend over the query's
/// documents and are crossed with what they gather before the output layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Mlp<T> {
    pub layers: Vec<Dense<T>>,
    pub norms: Vec<LayerNorm<T>>,
    /// The listwise family's self-attention between the last hidden layer and the output layer
    /// ([`Attention`]); None for the MLP, which scores each document alone.
    pub attention: Option<Attention<T>>,
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
        Mlp {
            layers,
            norms: Vec::new(),
            attention: None,
        }
    }

    /// The same model with `heads` heads of self-attention over the query's documents after its
    /// last hidden layer (0: none, the MLP). Their weights come from their own stream of `seed`;
    /// the MLP's are unchanged. The heads must divide the last hidden width
    /// ([`super::attention::check_heads`]).
    pub fn with_attention(mut self, heads: usize, seed: u64) -> Self {
        self.attention = (heads > 0).then(|| {
            let width = self.layers[self.layers.len() - 1].n_in;
            Attention::new(width, heads, seed)
        });
        self
    }

    /// Heads of self-attention (0: the MLP).
    pub fn attention_heads(&self) -> usize {
        self.attention.as_ref().map_or(0, |a| a.heads)
    }

    /// The same model with `norm` on its hidden layers: layer normalisation starts as the
    /// identity map (gain 1, shift 0), so the initial weights, drawn as without it, are the same.
    pub fn with_norm(mut self, norm: Norm) -> Self {
        self.norms = match norm {
            Norm::None => Vec::new(),
            Norm::Layer => self.layers[..self.layers.len() - 1]
                .iter()
                .map(|l| LayerNorm {
                    gain: vec![T::one(); l.n_out],
                    shift: vec![T::zero(); l.n_out],
                })
                .collect(),
        };
        self
    }

    pub fn norm(&self) -> Norm {
        if self.norms.is_empty() {
            Norm::None
        } else {
            Norm::Layer
        }
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
        self.tensors().map(<[T]>::len).sum()
    }

    /// Every parameter tensor in order: each layer's weight and bias, then, with layer
    /// normalisation, its gain and shift; last, with attention, the query's, key's and value's
    /// weight and bias.
    pub fn tensors(&self) -> impl Iterator<Item = &[T]> {
        let layers = self.layers.iter().enumerate().flat_map(|(l, layer)| {
            let norm = self.norms.get(l);
            [
                Some(layer.weight.as_slice()),
                Some(layer.bias.as_slice()),
                norm.map(|n| n.gain.as_slice()),
                norm.map(|n| n.shift.as_slice()),
            ]
            .into_iter()
            .flatten()
        });
        let attention = self.attention.iter().flat_map(|a| {
            a.projections()
                .into_iter()
                .flat_map(|p| [p.weight.as_slice(), p.bias.as_slice()])
        });
        layers.chain(attention)
    }

    /// [`tensors`](Self::tensors), to write.
    pub fn tensors_mut(&mut self) -> impl Iterator<Item = &mut Vec<T>> {
        let mut norms = self.norms.iter_mut();
        let layers = self.layers.iter_mut().flat_map(move |layer| {
            let norm = norms.next();
            let (gain, shift) = match norm {
                Some(n) => (Some(&mut n.gain), Some(&mut n.shift)),
                None => (None, None),
            };
            [Some(&mut layer.weight), Some(&mut layer.bias), gain, shift]
                .into_iter()
                .flatten()
        });
        let attention = self.attention.iter_mut().flat_map(|a| {
            [&mut a.query, &mut a.key, &mut a.value]
                .into_iter()
                .flat_map(|p| [&mut p.weight, &mut p.bias])
        });
        layers.chain(attention)
    }

    /// Every parameter, flattened in the order of [`tensors`](Self::tensors); for gradient
    /// checks and I/O.
    pub fn parameters(&self) -> Vec<T> {
        self.tensors().flatten().copied().collect()
    }
    pub fn set_parameters(&mut self, values: &[T]) {
        let mut at = 0;
        for tensor in self.tensors_mut() {
            let n = tensor.len();
            tensor.copy_from_slice(&values[at..at + n]);
            at += n;
        }
    }
    pub fn all_finite(&self) -> bool {
        self.tensors().flatten().all(|v| v.is_finite())
    }
}

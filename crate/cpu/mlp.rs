//! The ranking model of spec §2: a fully connected network, ReLU on every hidden layer, one logit
//! out. Default hidden widths 256-256-128-64 (4 hidden layers + output = 5 layers).
//!
//! Shapes (B = documents in the batch): a dense layer maps `inp (B, in)` to `out (B, out)` with
//! `weight (in, out)` and `bias (out)`, all row-major.

use super::{matmul, positive_part, real, Real, View};
use crate::data::inputs::Inputs;
use crate::rng::Rng;

/// Checks, before anything is allocated, that a model of `n_in` inputs and hidden `widths`,
/// trained on batches of `batch_rows` documents, fits in memory: every layer's weights, their
/// gradients, Adam's two moments and the kept best copy (5 copies), and its activations and their
/// gradients over a batch. `available` is the memory there is (None: unknown, then only sizes
/// past the address space are refused). The error names the largest layer and the bytes needed.
pub fn check_size(
    n_in: usize,
    widths: &[usize],
    batch_rows: usize,
    available: Option<u64>,
) -> crate::Result<()> {
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
    Err(crate::Error::Config(format!(
        "the model does not fit in memory: layer {} ({} -> {} units) needs {} for its weights, gradients, Adam state and activations, the whole model {}, and {}; choose smaller --widths (or --batch-docs)",
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

/// Memory this machine can still give (Linux: MemAvailable), if known.
pub fn available_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let info = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// `48.0 GB`.
pub fn human_bytes(bytes: u128) -> String {
    let units = ["bytes", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < units.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} bytes")
    } else {
        format!("{value:.1} {}", units[unit])
    }
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

/// out = inp . weight + bias, then ReLU when `relu`.
/// inp is (B, n_in), out is (B, n_out).
pub fn dense_forward<T: Real>(out: &mut [T], inp: &[T], layer: &Dense<T>, relu: bool) {
    let b = inp.len() / layer.n_in.max(1);
    for row in out.chunks_exact_mut(layer.n_out) {
        row.copy_from_slice(&layer.bias);
    }
    matmul(
        out,
        View::rows(inp, b, layer.n_in),
        View::rows(&layer.weight, layer.n_in, layer.n_out),
        true,
    );
    if relu {
        out.iter_mut().for_each(|v| *v = positive_part(*v));
    }
}

/// Backward pass of [`dense_forward`]. `dout` (B, n_out) is the gradient w.r.t. the layer's output;
/// with `relu`, `out` (the forward output) masks it in place. Writes `dweight` (n_in, n_out), `dbias`
/// (n_out) and, when given, `dinp` (B, n_in). The arguments are the layer's tensors, as in the
/// math; grouping them would only hide which is which.
#[allow(clippy::too_many_arguments)]
pub fn dense_backward<T: Real>(
    dinp: Option<&mut [T]>,
    dweight: &mut [T],
    dbias: &mut [T],
    dout: &mut [T],
    out: &[T],
    inp: &[T],
    layer: &Dense<T>,
    relu: bool,
) {
    let (n_in, n_out) = (layer.n_in, layer.n_out);
    let b = dout.len() / n_out;
    if relu {
        // A select, not a branch, so that it vectorises.
        for (d, &o) in dout.iter_mut().zip(out) {
            *d = if o > T::zero() { *d } else { T::zero() };
        }
    }
    // dweight = inp^T . dout
    matmul(
        dweight,
        View::transposed(inp, b, n_in),
        View::rows(dout, b, n_out),
        false,
    );
    // dbias = column sums of dout
    dbias.iter_mut().for_each(|v| *v = T::zero());
    for row in dout.chunks_exact(n_out) {
        for (s, &v) in dbias.iter_mut().zip(row) {
            *s = *s + v;
        }
    }
    // dinp = dout . weight^T
    if let Some(dinp) = dinp {
        matmul(
            dinp,
            View::rows(dout, b, n_out),
            View::transposed(&layer.weight, n_in, n_out),
            false,
        );
    }
}

/// The multilayer perceptron: `widths` hidden layers with ReLU, then a linear layer to one logit.
#[derive(Debug, Clone, PartialEq)]
pub struct Mlp<T> {
    pub layers: Vec<Dense<T>>,
}

/// Activations kept by the forward pass for the backward pass.
#[derive(Debug, Default)]
pub struct Activations<T> {
    /// outputs[l] is layer l's output (B, n_out of l); the last is the logits (B, 1).
    pub outputs: Vec<Vec<T>>,
}

/// Gradients of every parameter, laid out like the model.
#[derive(Debug, Clone)]
pub struct Gradients<T> {
    pub weight: Vec<Vec<T>>,
    pub bias: Vec<Vec<T>>,
    /// Scratch: gradient w.r.t. each layer's output.
    scratch: Vec<Vec<T>>,
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

    /// Runs the network on `inp` (B, n_in), keeping activations; returns the logits (B).
    pub fn forward<'a>(&self, inp: &[T], acts: &'a mut Activations<T>) -> &'a [T] {
        let b = inp.len() / self.n_in();
        acts.outputs.resize_with(self.layers.len(), Vec::new);
        let last = self.layers.len() - 1;
        for (l, layer) in self.layers.iter().enumerate() {
            let (before, rest) = acts.outputs.split_at_mut(l);
            let input: &[T] = if l == 0 { inp } else { &before[l - 1] };
            let out = &mut rest[0];
            out.resize(b * layer.n_out, T::zero());
            dense_forward(out, input, layer, l != last);
        }
        &acts.outputs[last]
    }

    /// Scores documents without keeping activations for a backward pass.
    pub fn predict(&self, inp: &[T]) -> Vec<T> {
        let mut acts = Activations::default();
        self.forward(inp, &mut acts).to_vec()
    }

    pub fn zero_gradients(&self) -> Gradients<T> {
        Gradients {
            weight: self
                .layers
                .iter()
                .map(|l| vec![T::zero(); l.weight.len()])
                .collect(),
            bias: self
                .layers
                .iter()
                .map(|l| vec![T::zero(); l.bias.len()])
                .collect(),
            scratch: Vec::new(),
        }
    }

    /// Backward pass from `dlogits` (B), the loss gradient w.r.t. the logits of the last
    /// [`forward`](Self::forward) on `inp`. Overwrites `grads`.
    pub fn backward(
        &self,
        inp: &[T],
        acts: &Activations<T>,
        dlogits: &[T],
        grads: &mut Gradients<T>,
    ) {
        let n = self.layers.len();
        let b = dlogits.len();
        grads.scratch.resize_with(n, Vec::new);
        grads.scratch[n - 1].clear();
        grads.scratch[n - 1].extend_from_slice(dlogits);
        for l in (0..n).rev() {
            let layer = &self.layers[l];
            let input: &[T] = if l == 0 { inp } else { &acts.outputs[l - 1] };
            let (lower, upper) = grads.scratch.split_at_mut(l);
            let dout = &mut upper[0];
            let dinp = if l > 0 {
                let d = &mut lower[l - 1];
                d.resize(b * layer.n_in, T::zero());
                Some(d.as_mut_slice())
            } else {
                None
            };
            dense_backward(
                dinp,
                &mut grads.weight[l],
                &mut grads.bias[l],
                dout,
                &acts.outputs[l],
                input,
                layer,
                l != n - 1,
            );
        }
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

impl<T: Real> Gradients<T> {
    pub fn flatten(&self) -> Vec<T> {
        self.weight
            .iter()
            .zip(&self.bias)
            .flat_map(|(w, b)| w.iter().chain(b).copied())
            .collect()
    }
}

/// Scores `inputs` (n_docs x model.n_in()) in chunks of [`SCORE_CHUNK_DOCS`] documents, so that
/// activations stay small.
pub fn score(model: &Mlp<f32>, inputs: &[f32]) -> Vec<f32> {
    let mut acts = Activations::default();
    let mut out = Vec::with_capacity(inputs.len() / model.n_in().max(1));
    for chunk in inputs.chunks(SCORE_CHUNK_DOCS * model.n_in()) {
        out.extend_from_slice(model.forward(chunk, &mut acts));
    }
    out
}

/// [`score`] over a view of the inputs, a chunk of rows at a time.
pub fn score_inputs(model: &Mlp<f32>, inputs: Inputs<'_>) -> Vec<f32> {
    if let Some(matrix) = inputs.as_dense() {
        return score(model, matrix);
    }
    let mut out = Vec::with_capacity(inputs.n_rows());
    inputs.for_each_chunk(SCORE_CHUNK_DOCS, |chunk| out.extend(score(model, chunk)));
    out
}

/// Documents scored at once, on either engine.
pub const SCORE_CHUNK_DOCS: usize = 8192;

//! The ranking model of spec §2: a fully connected network, ReLU on every hidden layer, one logit
//! out. Default hidden widths 256-256-128-64 (4 hidden layers + output = 5 layers).
//!
//! Shapes (B = documents in the batch): a dense layer maps `inp (B, in)` to `out (B, out)` with
//! `weight (in, out)` and `bias (out)`, all row-major.

use super::attention::{self, AttentionActivations, AttentionGradients};
use super::{matmul, positive_part, real, Real, View};
use crate::data::inputs::Inputs;
use crate::model::dropout::{Dropout, Mask};
use crate::model::mlp::{Dense, LayerNorm, Mlp, LAYER_NORM_EPS};

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

/// Layer normalisation of `pre` (B, n) into `out`, then ReLU: each row's mean and 1/std (the
/// variance over the row's n units, plus [`LAYER_NORM_EPS`]) go to `stats` (B, 2), which the
/// backward pass reads. The mean first, then the squared deviations from it: as
/// `shaders/norm.wgsl` computes them.
pub fn layer_norm_forward<T: Real>(out: &mut [T], stats: &mut [T], pre: &[T], norm: &LayerNorm<T>) {
    let n = norm.gain.len();
    let count = real::<T>(n as f64);
    let eps = real::<T>(LAYER_NORM_EPS);
    for ((row, o), s) in pre
        .chunks_exact(n)
        .zip(out.chunks_exact_mut(n))
        .zip(stats.chunks_exact_mut(2))
    {
        let mean = row.iter().copied().sum::<T>() / count;
        let var = row.iter().map(|&v| (v - mean) * (v - mean)).sum::<T>() / count;
        let rstd = T::one() / (var + eps).sqrt();
        for (j, (o, &v)) in o.iter_mut().zip(row).enumerate() {
            *o = positive_part(norm.gain[j] * ((v - mean) * rstd) + norm.shift[j]);
        }
        s[0] = mean;
        s[1] = rstd;
    }
}

/// Backward pass of [`layer_norm_forward`] from `dout` (B, n), the gradient w.r.t. its output
/// after the ReLU's mask: writes `dpre` (B, n) and the gain's and shift's gradients, summed over
/// the rows in order. With x̂ = (pre − mean)·rstd and g = dout·gain,
/// dpre = rstd·(g − mean(g) − x̂·mean(g·x̂)).
pub fn layer_norm_backward<T: Real>(
    dpre: &mut [T],
    dgain: &mut [T],
    dshift: &mut [T],
    dout: &[T],
    pre: &[T],
    stats: &[T],
    norm: &LayerNorm<T>,
) {
    let n = norm.gain.len();
    let count = real::<T>(n as f64);
    dgain.iter_mut().for_each(|v| *v = T::zero());
    dshift.iter_mut().for_each(|v| *v = T::zero());
    for (((d, row), s), dp) in dout
        .chunks_exact(n)
        .zip(pre.chunks_exact(n))
        .zip(stats.chunks_exact(2))
        .zip(dpre.chunks_exact_mut(n))
    {
        let (mean, rstd) = (s[0], s[1]);
        let (mut mean_g, mut mean_gx) = (T::zero(), T::zero());
        for j in 0..n {
            let x_hat = (row[j] - mean) * rstd;
            let g = d[j] * norm.gain[j];
            mean_g = mean_g + g;
            mean_gx = mean_gx + g * x_hat;
            dgain[j] = dgain[j] + d[j] * x_hat;
            dshift[j] = dshift[j] + d[j];
        }
        mean_g = mean_g / count;
        mean_gx = mean_gx / count;
        for j in 0..n {
            let x_hat = (row[j] - mean) * rstd;
            dp[j] = rstd * (d[j] * norm.gain[j] - mean_g - x_hat * mean_gx);
        }
    }
}

/// Activations kept by the forward pass for the backward pass.
#[derive(Debug, Default)]
pub struct Activations<T> {
    /// outputs[l] is layer l's output (B, n_out of l); the last is the logits (B, 1).
    pub outputs: Vec<Vec<T>>,
    /// The dropout mask of each hidden layer in the last forward pass (none when scoring).
    pub masks: Vec<Option<Mask>>,
    /// With layer normalisation: each hidden layer's pre-activations (B, n_out) and each row's
    /// mean and 1/std (B, 2).
    pub pre: Vec<Vec<T>>,
    pub stats: Vec<Vec<T>>,
    /// With attention: what its forward pass kept, the output layer's input among them.
    pub attention: AttentionActivations<T>,
}

/// Gradients of every parameter, laid out like the model.
#[derive(Debug, Clone)]
pub struct Gradients<T> {
    pub weight: Vec<Vec<T>>,
    pub bias: Vec<Vec<T>>,
    /// With layer normalisation, each hidden layer's gain and shift gradients (empty without).
    pub gain: Vec<Vec<T>>,
    pub shift: Vec<Vec<T>>,
    /// With attention, its projections' gradients (query, key, value; each weight then bias).
    pub attention: AttentionGradients<T>,
    /// Scratch: gradient w.r.t. each layer's output, and w.r.t. a normalised layer's
    /// pre-activations.
    scratch: Vec<Vec<T>>,
    dpre: Vec<T>,
}

impl<T: Real> Mlp<T> {
    /// Runs the network on `inp` (B, n_in), keeping activations; returns the logits (B). With
    /// attention, the B documents are one query's list.
    pub fn forward<'a>(&self, inp: &[T], acts: &'a mut Activations<T>) -> &'a [T] {
        let b = inp.len() / self.n_in();
        self.forward_training(inp, &[0, b], acts, None)
    }

    /// [`forward`](Self::forward) over documents in query `groups` (offsets, first 0, last B),
    /// which attention attends within (the MLP scores each document alone and ignores them),
    /// and in training: with `dropout` at step `step` (1 for the first), each hidden layer's
    /// output through its [`Mask`], which the backward pass applies again.
    pub fn forward_training<'a>(
        &self,
        inp: &[T],
        groups: &[usize],
        acts: &'a mut Activations<T>,
        dropout: Option<(&Dropout, u64)>,
    ) -> &'a [T] {
        let b = inp.len() / self.n_in();
        acts.outputs.resize_with(self.layers.len(), Vec::new);
        acts.masks.clear();
        let last = self.layers.len() - 1;
        for (l, layer) in self.layers.iter().enumerate() {
            let (before, rest) = acts.outputs.split_at_mut(l);
            let input: &[T] = match (&self.attention, l) {
                (_, 0) => inp,
                (Some(a), l) if l == last => {
                    attention::forward(a, &before[l - 1], groups, &mut acts.attention)
                }
                _ => &before[l - 1],
            };
            let out = &mut rest[0];
            out.resize(b * layer.n_out, T::zero());
            match self.norms.get(l) {
                Some(norm) => {
                    acts.pre.resize_with(self.norms.len(), Vec::new);
                    acts.stats.resize_with(self.norms.len(), Vec::new);
                    let (pre, stats) = (&mut acts.pre[l], &mut acts.stats[l]);
                    pre.resize(b * layer.n_out, T::zero());
                    stats.resize(2 * b, T::zero());
                    dense_forward(pre, input, layer, false);
                    layer_norm_forward(out, stats, pre, norm);
                }
                None => dense_forward(out, input, layer, l != last),
            }
            let mask = dropout
                .filter(|_| l != last)
                .map(|(dropout, step)| Mask::of(dropout, step, l));
            if let Some(mask) = &mask {
                mask.apply(out);
            }
            acts.masks.push(mask);
        }
        &acts.outputs[last]
    }

    /// Scores documents without keeping activations for a backward pass; with attention, as
    /// one query's list.
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
            gain: self
                .norms
                .iter()
                .map(|n| vec![T::zero(); n.gain.len()])
                .collect(),
            shift: self
                .norms
                .iter()
                .map(|n| vec![T::zero(); n.shift.len()])
                .collect(),
            attention: self
                .attention
                .as_ref()
                .map_or_else(Vec::new, attention::zero_gradients),
            scratch: Vec::new(),
            dpre: Vec::new(),
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
            let input: &[T] = match (&self.attention, l) {
                (_, 0) => inp,
                (Some(_), l) if l == n - 1 => &acts.attention.crossed,
                _ => &acts.outputs[l - 1],
            };
            let (lower, upper) = grads.scratch.split_at_mut(l);
            let dout = &mut upper[0];
            let dinp = if l > 0 {
                let d = &mut lower[l - 1];
                d.resize(b * layer.n_in, T::zero());
                Some(d.as_mut_slice())
            } else {
                None
            };
            // Through the dropout mask first: the gradient of a dropped unit is 0, of a kept
            // one scaled as its output was.
            if let Some(Some(mask)) = acts.masks.get(l) {
                mask.apply(dout);
            }
            match self.norms.get(l) {
                Some(norm) => {
                    // Through the ReLU, then the normalisation, to the pre-activations.
                    for (d, &o) in dout.iter_mut().zip(&acts.outputs[l]) {
                        *d = if o > T::zero() { *d } else { T::zero() };
                    }
                    grads.dpre.resize(dout.len(), T::zero());
                    layer_norm_backward(
                        &mut grads.dpre,
                        &mut grads.gain[l],
                        &mut grads.shift[l],
                        dout,
                        &acts.pre[l],
                        &acts.stats[l],
                        norm,
                    );
                    dense_backward(
                        dinp,
                        &mut grads.weight[l],
                        &mut grads.bias[l],
                        &mut grads.dpre,
                        &acts.pre[l],
                        input,
                        layer,
                        false,
                    );
                }
                None => dense_backward(
                    dinp,
                    &mut grads.weight[l],
                    &mut grads.bias[l],
                    dout,
                    &acts.outputs[l],
                    input,
                    layer,
                    l != n - 1,
                ),
            }
            // From the output layer's input, h ⊙ (1 + a), back to the last hidden layer's
            // output h.
            if let (Some(a), true) = (&self.attention, l == n - 1 && l > 0) {
                let dcrossed = &grads.scratch[l - 1];
                let dhidden = attention::backward(
                    a,
                    &acts.outputs[l - 1],
                    &acts.attention,
                    dcrossed,
                    &mut grads.attention,
                );
                grads.scratch[l - 1] = dhidden;
            }
        }
    }
}

impl<T: Real> Gradients<T> {
    pub fn flatten(&self) -> Vec<T> {
        self.tensors().flatten().copied().collect()
    }

    /// Every gradient tensor, in the order of [`Mlp::tensors`].
    pub fn tensors(&self) -> impl Iterator<Item = &[T]> {
        let layers = self.weight.iter().enumerate().flat_map(|(l, w)| {
            [
                Some(w.as_slice()),
                Some(self.bias[l].as_slice()),
                self.gain.get(l).map(Vec::as_slice),
                self.shift.get(l).map(Vec::as_slice),
            ]
            .into_iter()
            .flatten()
        });
        layers.chain(self.attention.iter().map(Vec::as_slice))
    }
}

/// Scores `inputs` (n_docs x model.n_in()) in chunks of [`SCORE_CHUNK_DOCS`] documents, so that
/// activations stay small; with attention, as one query's list ([`score_inputs`] takes
/// groups).
pub fn score(model: &Mlp<f32>, inputs: &[f32]) -> Vec<f32> {
    if model.attention.is_some() {
        return score_inputs(
            model,
            Inputs::dense(inputs, inputs.len() / model.n_in().max(1)),
        );
    }
    // On a thread of the pool, as the training steps are ([`super::on_pool`]).
    super::on_pool(|| {
        let mut acts = Activations::default();
        let mut out = Vec::with_capacity(inputs.len() / model.n_in().max(1));
        for chunk in inputs.chunks(SCORE_CHUNK_DOCS * model.n_in()) {
            out.extend_from_slice(model.forward(chunk, &mut acts));
        }
        out
    })
}

/// [`score`] over a view of the inputs, a chunk of rows at a time; with attention, a chunk of
/// whole queries at a time, each document attending within its query
/// ([`Inputs::for_each_group_chunk`]).
pub fn score_inputs(model: &Mlp<f32>, inputs: Inputs<'_>) -> Vec<f32> {
    if model.attention.is_some() {
        return super::on_pool(|| {
            let mut acts = Activations::default();
            acts.attention.scoring = true;
            let mut out = Vec::with_capacity(inputs.n_rows());
            inputs.for_each_group_chunk(SCORE_CHUNK_DOCS, |chunk, groups| {
                out.extend_from_slice(model.forward_training(chunk, groups, &mut acts, None))
            });
            out
        });
    }
    if let Some(matrix) = inputs.as_dense() {
        return score(model, matrix);
    }
    let mut out = Vec::with_capacity(inputs.n_rows());
    inputs.for_each_chunk(SCORE_CHUNK_DOCS, |chunk| out.extend(score(model, chunk)));
    out
}

impl crate::model::Ensemble {
    /// Scores documents (`n x n_in`, row-major) with every member ([`score`], a chunk of rows
    /// at a time) and averages them.
    pub fn predict(&self, inp: &[f32]) -> Vec<f32> {
        let members: Vec<Vec<f32>> = self.members.iter().map(|m| score(m, inp)).collect();
        crate::model::ensemble::mean_scores(&members)
    }

    /// [`predict`](Self::predict) of documents in query groups (`offsets`, first 0, last n),
    /// which a listwise member attends within.
    pub fn predict_groups(&self, inp: &[f32], offsets: &[usize]) -> Vec<f32> {
        let n = offsets.last().copied().unwrap_or(0);
        let inputs = Inputs::dense(inp, n).with_groups(offsets);
        let members: Vec<Vec<f32>> = self
            .members
            .iter()
            .map(|m| score_inputs(m, inputs))
            .collect();
        crate::model::ensemble::mean_scores(&members)
    }
}

/// Documents scored at once, on either engine.
pub const SCORE_CHUNK_DOCS: usize = 8192;

//! The CPU engine's self-attention over each query's documents and its latent cross
//! ([`crate::model::attention`]): the reference `shaders/attention.wgsl` is checked against.
//!
//! Shapes (B = documents in the batch, d = the attended width, d_h = d / heads): the last hidden
//! layer's outputs h (B, d); Q, K, V and the gathered a (B, d), head k in columns
//! k·d_h..(k+1)·d_h; each group's attention probabilities (heads, m, m), groups one after another.

use super::mlp::{dense_backward, dense_forward};
use super::{real, Real};
use crate::model::attention::Attention;

/// What the forward pass keeps for the backward pass.
#[derive(Debug, Default)]
pub struct AttentionActivations<T> {
    /// The group offsets the documents attended within (group g is `groups[g]..groups[g + 1]`).
    pub groups: Vec<usize>,
    pub query: Vec<T>,
    pub key: Vec<T>,
    pub value: Vec<T>,
    /// Each group's probabilities, (heads, m, m) row-major, groups in order.
    pub probabilities: Vec<T>,
    /// a: what each document gathers from its query (B, d).
    pub gathered: Vec<T>,
    /// h ⊙ (1 + a), the output layer's input (B, d).
    pub crossed: Vec<T>,
}

/// The gradients of the attention's parameters, in [`Attention::projections`]' order, each
/// weight then bias.
pub type AttentionGradients<T> = Vec<Vec<T>>;

pub fn zero_gradients<T: Real>(attention: &Attention<T>) -> AttentionGradients<T> {
    attention
        .projections()
        .into_iter()
        .flat_map(|p| {
            [
                vec![T::zero(); p.weight.len()],
                vec![T::zero(); p.bias.len()],
            ]
        })
        .collect()
}

/// The forward pass over `hidden` (B, d), documents grouped by `groups` (offsets, first 0, last
/// B); fills `acts` and returns h ⊙ (1 + a).
pub fn forward<'a, T: Real>(
    attention: &Attention<T>,
    hidden: &[T],
    groups: &[usize],
    acts: &'a mut AttentionActivations<T>,
) -> &'a [T] {
    let d = attention.width();
    let (heads, dh) = (attention.heads, attention.head_width());
    let b = hidden.len() / d;
    debug_assert_eq!(groups.last().copied(), Some(b));
    acts.groups.clear();
    acts.groups.extend_from_slice(groups);
    for (out, layer) in [
        (&mut acts.query, &attention.query),
        (&mut acts.key, &attention.key),
        (&mut acts.value, &attention.value),
    ] {
        out.resize(b * d, T::zero());
        dense_forward(out, hidden, layer, false);
    }
    let scale = real::<T>(1.0 / (dh as f64).sqrt());
    acts.probabilities.clear();
    acts.gathered.clear();
    acts.gathered.resize(b * d, T::zero());
    let mut scores = Vec::new();
    for w in groups.windows(2) {
        let (start, m) = (w[0], w[1] - w[0]);
        for k in 0..heads {
            let cols = k * dh..(k + 1) * dh;
            for i in start..start + m {
                let q = &acts.query[i * d..][cols.clone()];
                scores.clear();
                scores.extend((start..start + m).map(|j| {
                    let key = &acts.key[j * d..][cols.clone()];
                    q.iter().zip(key).map(|(&x, &y)| x * y).sum::<T>() * scale
                }));
                let max = scores.iter().copied().fold(T::neg_infinity(), T::max);
                let mut sum = T::zero();
                for s in scores.iter_mut() {
                    *s = (*s - max).exp();
                    sum = sum + *s;
                }
                let out = &mut acts.gathered[i * d..][cols.clone()];
                for (j, s) in scores.iter_mut().enumerate() {
                    *s = *s / sum;
                    let value = &acts.value[(start + j) * d..][cols.clone()];
                    for (o, &v) in out.iter_mut().zip(value) {
                        *o = *o + *s * v;
                    }
                }
                acts.probabilities.extend_from_slice(&scores);
            }
        }
    }
    acts.crossed.resize(b * d, T::zero());
    for ((c, &h), &a) in acts.crossed.iter_mut().zip(hidden).zip(&acts.gathered) {
        *c = h * (T::one() + a);
    }
    &acts.crossed
}

/// The backward pass of [`forward`] from `dcrossed` (B, d), the gradient w.r.t. h ⊙ (1 + a):
/// writes the projections' gradients into `grads` and returns the gradient w.r.t. `hidden`
/// (through the cross and through Q, K and V).
///
/// Per group and head, with P the probabilities and dA the gradient w.r.t. the gathered a:
/// dV = Pᵀ dA; dP = dA Vᵀ; dS = P ⊙ (dP − rowsum(P ⊙ dP)) / sqrt(d_h); dQ = dS K; dK = dSᵀ Q.
pub fn backward<T: Real>(
    attention: &Attention<T>,
    hidden: &[T],
    acts: &AttentionActivations<T>,
    dcrossed: &[T],
    grads: &mut AttentionGradients<T>,
) -> Vec<T> {
    let d = attention.width();
    let (heads, dh) = (attention.heads, attention.head_width());
    let b = hidden.len() / d;
    let scale = real::<T>(1.0 / (dh as f64).sqrt());
    let mut dhidden: Vec<T> = dcrossed
        .iter()
        .zip(&acts.gathered)
        .map(|(&g, &a)| g * (T::one() + a))
        .collect();
    let dgathered: Vec<T> = dcrossed.iter().zip(hidden).map(|(&g, &h)| g * h).collect();
    let mut dq = vec![T::zero(); b * d];
    let mut dk = vec![T::zero(); b * d];
    let mut dv = vec![T::zero(); b * d];
    let mut at = 0;
    let mut dp = Vec::new();
    for w in acts.groups.windows(2) {
        let (start, m) = (w[0], w[1] - w[0]);
        for k in 0..heads {
            let cols = k * dh..(k + 1) * dh;
            for i in 0..m {
                let p = &acts.probabilities[at..at + m];
                at += m;
                let da = &dgathered[(start + i) * d..][cols.clone()];
                dp.clear();
                dp.extend((0..m).map(|j| {
                    let v = &acts.value[(start + j) * d..][cols.clone()];
                    da.iter().zip(v).map(|(&x, &y)| x * y).sum::<T>()
                }));
                let row: T = p.iter().zip(&dp).map(|(&x, &y)| x * y).sum();
                let q = &acts.query[(start + i) * d..][cols.clone()];
                for j in 0..m {
                    let dv_j = &mut dv[(start + j) * d..][cols.clone()];
                    for (o, &g) in dv_j.iter_mut().zip(da) {
                        *o = *o + p[j] * g;
                    }
                    let ds = p[j] * (dp[j] - row) * scale;
                    let key = &acts.key[(start + j) * d..][cols.clone()];
                    let dq_i = &mut dq[(start + i) * d..][cols.clone()];
                    for (o, &kv) in dq_i.iter_mut().zip(key) {
                        *o = *o + ds * kv;
                    }
                    let dk_j = &mut dk[(start + j) * d..][cols.clone()];
                    for (o, &qv) in dk_j.iter_mut().zip(q) {
                        *o = *o + ds * qv;
                    }
                }
            }
        }
    }
    let mut dinp = vec![T::zero(); b * d];
    for (p, (layer, dout)) in attention
        .projections()
        .into_iter()
        .zip([&mut dq, &mut dk, &mut dv])
        .enumerate()
    {
        let (weights, biases) = grads.split_at_mut(2 * p + 1);
        dense_backward(
            Some(&mut dinp),
            &mut weights[2 * p],
            &mut biases[0],
            dout,
            &[],
            hidden,
            layer,
            false,
        );
        for (o, &g) in dhidden.iter_mut().zip(&dinp) {
            *o = *o + g;
        }
    }
    dhidden
}

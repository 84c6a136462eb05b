//! The CPU engine's self-attention over each query's documents and its latent cross
//! ([`crate::model::attention`]): the reference `shaders/attention.wgsl` is checked against.
//!
//! Shapes (B = documents in the batch, d = the attended width, d_h = d / heads): the last hidden
//! layer's outputs h (B, d); Q, K, V and the gathered a (B, d), head k in columns
//! k·d_h..(k+1)·d_h; each group's attention probabilities (heads, m, m), groups one after another.

use super::mlp::{dense_backward, dense_forward};
use super::{matmul, real, Real, View};
use crate::math::exp;
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
    /// Scoring only, no backward pass to follow: each head's probabilities are made
    /// [`SCORING_ROWS`] rows at a time and not kept, so that a query of m documents needs
    /// memory in m, not m² (`probabilities` stays empty).
    pub scoring: bool,
}

/// The rows of a query's probabilities made at once when scoring ([`AttentionActivations::scoring`]).
pub const SCORING_ROWS: usize = 256;

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
    let (query, key, value) = (&acts.query, &acts.key, &acts.value);
    let scoring = acts.scoring;
    // Each group on its own: its heads' probabilities (heads, m, m) and its gathered rows (m, d).
    let attended = map_groups(groups, |_, start, m| {
        if m == 0 {
            return (Vec::new(), Vec::new());
        }
        // Rows r0..r0 + rows of head k: their logits Q_k K_kᵀ / sqrt(d_h), each row's softmax
        // in place in `p` (rows, m), then a_k = P V_k into head k's columns of the gathered rows.
        let head_block = |p: &mut [T], gathered: &mut [T], k: usize, r0: usize, rows: usize| {
            let at = start * d + k * dh;
            matmul(
                p,
                head_rows(&query[at + r0 * d..], rows, dh, d),
                head_rows(&key[at..], m, dh, d).t(),
                false,
            );
            for row in p.chunks_exact_mut(m) {
                softmax_scaled(row, scale);
            }
            let mut head_out = vec![T::zero(); rows * dh];
            matmul(
                &mut head_out,
                View::rows(p, rows, m),
                head_rows(&value[at..], m, dh, d),
                false,
            );
            scatter_head(&mut gathered[r0 * d + k * dh..], &head_out, dh, d);
        };
        let mut gathered = vec![T::zero(); m * d];
        if scoring {
            let mut p = Vec::new();
            for k in 0..heads {
                for r0 in (0..m).step_by(SCORING_ROWS) {
                    let rows = SCORING_ROWS.min(m - r0);
                    p.resize(rows * m, T::zero());
                    head_block(&mut p, &mut gathered, k, r0, rows);
                }
            }
            return (Vec::new(), gathered);
        }
        let mut probabilities = vec![T::zero(); heads * m * m];
        for (k, p) in probabilities.chunks_exact_mut(m * m).enumerate() {
            head_block(p, &mut gathered, k, 0, m);
        }
        (probabilities, gathered)
    });
    acts.probabilities.clear();
    acts.gathered.clear();
    for (probabilities, gathered) in attended {
        acts.probabilities.extend(probabilities);
        acts.gathered.extend(gathered);
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
    // Where each group's probabilities start.
    let mut first = vec![0];
    for w in acts.groups.windows(2) {
        let m = w[1] - w[0];
        first.push(first.last().copied().unwrap_or(0) + heads * m * m);
    }
    let backward = map_groups(&acts.groups, |g, start, m| {
        if m == 0 {
            return (Vec::new(), Vec::new(), Vec::new());
        }
        let probabilities = &acts.probabilities[first[g]..first[g + 1]];
        let (mut dq, mut dk, mut dv) = (
            vec![T::zero(); m * d],
            vec![T::zero(); m * d],
            vec![T::zero(); m * d],
        );
        let mut dp = vec![T::zero(); m * m];
        let mut head = vec![T::zero(); m * dh];
        for (k, p) in probabilities.chunks_exact(m * m).enumerate() {
            let at = start * d + k * dh;
            let da = head_rows(&dgathered[at..], m, dh, d);
            // dP = dA V_kᵀ, then dS = P ⊙ (dP − rowsum(P ⊙ dP)) / sqrt(d_h), in place.
            matmul(
                &mut dp,
                da,
                head_rows(&acts.value[at..], m, dh, d).t(),
                false,
            );
            for (ds, p) in dp.chunks_exact_mut(m).zip(p.chunks_exact(m)) {
                let row: T = p.iter().zip(ds.iter()).map(|(&x, &y)| x * y).sum();
                for (g, &pj) in ds.iter_mut().zip(p) {
                    *g = pj * (*g - row) * scale;
                }
            }
            // dV_k = Pᵀ dA; dQ_k = dS K_k; dK_k = dSᵀ Q_k.
            matmul(&mut head, View::transposed(p, m, m), da, false);
            scatter_head(&mut dv[k * dh..], &head, dh, d);
            let key = head_rows(&acts.key[at..], m, dh, d);
            matmul(&mut head, View::rows(&dp, m, m), key, false);
            scatter_head(&mut dq[k * dh..], &head, dh, d);
            let query = head_rows(&acts.query[at..], m, dh, d);
            matmul(&mut head, View::transposed(&dp, m, m), query, false);
            scatter_head(&mut dk[k * dh..], &head, dh, d);
        }
        (dq, dk, dv)
    });
    let (mut dq, mut dk, mut dv) = (
        Vec::with_capacity(b * d),
        Vec::with_capacity(b * d),
        Vec::with_capacity(b * d),
    );
    for (q, k, v) in backward {
        dq.extend(q);
        dk.extend(k);
        dv.extend(v);
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

/// One head's columns of m rows of a (rows, d) matrix starting at `data`'s first value: an
/// (m, d_h) view with row stride d.
fn head_rows<T>(data: &[T], m: usize, dh: usize, d: usize) -> View<'_, T> {
    View {
        data,
        rows: m,
        cols: dh,
        row_stride: d,
        col_stride: 1,
    }
}

/// Writes `head` (m, d_h), row-major, into one head's columns of m rows of a (rows, d) matrix
/// starting at `out`'s first value.
fn scatter_head<T: Real>(out: &mut [T], head: &[T], dh: usize, d: usize) {
    for (i, row) in head.chunks_exact(dh).enumerate() {
        out[i * d..i * d + dh].copy_from_slice(row);
    }
}

/// `row` times `scale`, then its softmax, in place: exp(s − max) / sum.
fn softmax_scaled<T: Real>(row: &mut [T], scale: T) {
    let mut most = T::neg_infinity();
    for s in row.iter_mut() {
        *s = *s * scale;
        if *s > most {
            most = *s;
        }
    }
    let mut sum = T::zero();
    for s in row.iter_mut() {
        *s = exp(*s - most);
        sum = sum + *s;
    }
    for s in row.iter_mut() {
        *s = *s / sum;
    }
}

/// `f(g, start, m)` of every group g (offsets `groups`: its first document and its size), in
/// order: side by side on rayon's pool natively (each group's work is its own, so the results
/// are those of one thread), one after the other in the browser.
fn map_groups<R: Send>(groups: &[usize], f: impl Fn(usize, usize, usize) -> R + Sync) -> Vec<R> {
    let size = groups.len().saturating_sub(1);
    let each = |g: usize| f(g, groups[g], groups[g + 1] - groups[g]);
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        (0..size).into_par_iter().map(each).collect()
    }
    #[cfg(target_arch = "wasm32")]
    (0..size).map(each).collect()
}

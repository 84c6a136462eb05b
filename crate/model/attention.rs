//! The listwise model family: DASALC-style self-attention over the documents of a query (Qin et
//! al. 2021, "Are Neural Rankers still Outperformed by Gradient Boosted Decision Trees?", §4.3),
//! placed between the MLP's last hidden layer and its output layer.
//!
//! With h (m x d) the last hidden layer's outputs for the m documents of one query, and `heads`
//! heads of d_h = d / heads units each:
//!
//! ```text
//! Q = h W_Q + b_Q,  K = h W_K + b_K,  V = h W_V + b_V          (each m x d)
//! A_k = softmax_rows(Q_k K_k^T / sqrt(d_h)) V_k                 (head k's d_h columns)
//! a = [A_1 ... A_heads]                                        (m x d)
//! h' = h ⊙ (1 + a)                                             (the latent cross)
//! score = h' w_out + b_out
//! ```
//!
//! A document attends to every document of its own query and to no other, so a score depends on
//! the list it is scored in: batches, scoring and serving go by whole queries. A query of one
//! document attends to itself alone (its softmax is 1), which is a right result, not an error.
//! The forward and backward passes are each engine's ([`crate::cpu::attention`]).

use super::mlp::Dense;
use super::{real, Real};
use crate::rng::Rng;

/// The attention block's parameters: the query, key and value projections of the last hidden
/// layer, each d x d with a bias.
#[derive(Debug, Clone, PartialEq)]
pub struct Attention<T> {
    pub heads: usize,
    pub query: Dense<T>,
    pub key: Dense<T>,
    pub value: Dense<T>,
}

impl<T: Real> Attention<T> {
    /// Glorot-uniform projections (weights in ±sqrt(6 / (d + d))), biases 0, from their own
    /// stream of `seed`, so that the MLP's weights are those of the same seed without attention.
    pub fn new(width: usize, heads: usize, seed: u64) -> Self {
        let mut rng = Rng::stream(seed, 0x6174_746e);
        let limit = (3.0 / width as f64).sqrt();
        let mut projection = || Dense {
            n_in: width,
            n_out: width,
            weight: (0..width * width)
                .map(|_| real(rng.uniform_range(-limit, limit)))
                .collect(),
            bias: vec![T::zero(); width],
        };
        Attention {
            heads,
            query: projection(),
            key: projection(),
            value: projection(),
        }
    }

    /// The width d it attends over (the last hidden layer's).
    pub fn width(&self) -> usize {
        self.query.n_out
    }

    /// Units per head, d / heads.
    pub fn head_width(&self) -> usize {
        self.width() / self.heads
    }

    /// The projections in order: query, key, value.
    pub fn projections(&self) -> [&Dense<T>; 3] {
        [&self.query, &self.key, &self.value]
    }
}

/// Checks a model's attention heads against its widths before anything is built: the heads must
/// divide the last hidden layer's width, and there must be a hidden layer to attend over. The
/// message names the setting as `name` (the flag `--attention-heads`, or a file's field), and
/// says where the widths come from: `remedy` ("give --widths hidden layers, or ...").
pub fn check_heads(
    heads: usize,
    widths: &[usize],
    name: &str,
    remedy: &str,
) -> crate::error::Result<()> {
    if heads == 0 {
        return Ok(());
    }
    let Some(&width) = widths.last() else {
        return Err(crate::error::Error::Config(format!(
            "{name} needs a hidden layer to attend over; {remedy}"
        )));
    };
    if !width.is_multiple_of(heads) {
        return Err(crate::error::Error::Config(format!(
            "{name} {heads} does not divide the last hidden layer's width {width}: each head takes width / heads units; choose heads that divide {width}"
        )));
    }
    Ok(())
}

//! Ranking losses of spec §3, each returning its value and adding `scale * dloss/dlogit` into
//! `dlogits`, so that the distillation mix of PFD Eq. 1,
//!
//! ```text
//! L = alpha * data_loss(S_label) + (1 - alpha) * teacher_loss(S_all),
//! ```
//!
//! is two calls with scales `alpha` and `1 - alpha`.
//!
//! Every loss works on a batch of whole query groups: group g holds documents
//! `offsets[g]..offsets[g + 1]`, and `include[g]` says whether it takes part (the data loss sees only
//! positive groups, S_label; the teacher loss sees them all, S_all).

use super::{real, Real};

/// ln(1 + e^x), without overflow.
#[inline]
pub fn softplus<T: Real>(x: T) -> T {
    if x > T::zero() {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// 1 / (1 + e^-x), without overflow.
#[inline]
pub fn sigmoid<T: Real>(x: T) -> T {
    if x >= T::zero() {
        T::one() / (T::one() + (-x).exp())
    } else {
        let e = x.exp();
        e / (T::one() + e)
    }
}

/// (softplus(x), sigmoid(x)) from one exponential: the pairwise losses' inner loop.
#[inline]
pub fn softplus_and_sigmoid<T: Real>(x: T) -> (T, T) {
    let e = (-x.abs()).exp(); // in (0, 1]: no overflow
    let softplus = x.max(T::zero()) + e.ln_1p();
    let sigmoid = if x >= T::zero() {
        T::one() / (T::one() + e)
    } else {
        e / (T::one() + e)
    };
    (softplus, sigmoid)
}

/// Which loss a model trains with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LossKind {
    /// Pointwise binary cross-entropy on the documents.
    RankBce,
    /// Pairwise logistic loss on the document pairs of a group.
    RankNet,
}

impl std::fmt::Display for LossKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LossKind::RankBce => "RankBCE",
            LossKind::RankNet => "RankNet",
        })
    }
}

/// RankBCE: mean over the included documents of BCE(target, sigmoid(f)) = softplus(f) - target * f.
/// Targets are hard labels y in {0, 1} (data loss) or teacher probabilities s^T (teacher loss).
pub fn rank_bce<T: Real>(
    logits: &[T],
    targets: &[T],
    offsets: &[usize],
    include: &[bool],
    scale: T,
    dlogits: &mut [T],
) -> T {
    let n: usize = groups(offsets, include).map(|r| r.len()).sum();
    if n == 0 {
        return T::zero();
    }
    let inv_n = T::one() / real(n as f64);
    let mut total = T::zero();
    for docs in groups(offsets, include) {
        for i in docs {
            let (f, y) = (logits[i], targets[i]);
            total = total + softplus(f) - y * f;
            dlogits[i] = dlogits[i] + scale * (sigmoid(f) - y) * inv_n;
        }
    }
    total * inv_n
}

/// RankNet with hard targets: for each group, over the pairs with y_i > y_j, ln(1 + e^-(f_i - f_j));
/// the mean over a group's pairs, then the mean over the groups that have pairs. Groups of one
/// document or with all labels tied have no pairs and add nothing.
pub fn ranknet<T: Real>(
    logits: &[T],
    labels: &[T],
    offsets: &[usize],
    include: &[bool],
    scale: T,
    dlogits: &mut [T],
) -> T {
    let pair_counts: Vec<usize> = groups(offsets, include)
        .map(|docs| {
            docs.clone()
                .map(|i| docs.clone().filter(|&j| labels[i] > labels[j]).count())
                .sum()
        })
        .collect();
    let with_pairs = pair_counts.iter().filter(|&&c| c > 0).count();
    if with_pairs == 0 {
        return T::zero();
    }
    let mut total = T::zero();
    for (docs, &pairs) in groups(offsets, include).zip(&pair_counts) {
        if pairs == 0 {
            continue;
        }
        let weight = T::one() / real((pairs * with_pairs) as f64);
        for i in docs.clone() {
            for j in docs.clone() {
                if labels[i] > labels[j] {
                    let (loss, slope) = softplus_and_sigmoid(-(logits[i] - logits[j]));
                    total = total + loss * weight;
                    // d/d(f_i - f_j) softplus(-(f_i - f_j)) = -sigmoid(-(f_i - f_j))
                    let g = scale * slope * weight;
                    dlogits[i] = dlogits[i] - g;
                    dlogits[j] = dlogits[j] + g;
                }
            }
        }
    }
    total
}

/// RankNet with soft teacher targets: for each pair i < j of a group, with P = sigmoid(t_i - t_j)
/// and d = f_i - f_j, CE(P, sigmoid(d)) = softplus(d) - P * d; the mean over a group's pairs, then
/// the mean over the groups with at least two documents.
pub fn ranknet_soft<T: Real>(
    logits: &[T],
    teacher_logits: &[T],
    offsets: &[usize],
    include: &[bool],
    scale: T,
    dlogits: &mut [T],
) -> T {
    let with_pairs = groups(offsets, include).filter(|r| r.len() >= 2).count();
    if with_pairs == 0 {
        return T::zero();
    }
    let mut total = T::zero();
    for docs in groups(offsets, include) {
        let n = docs.len();
        if n < 2 {
            continue;
        }
        let weight = T::one() / real((n * (n - 1) / 2 * with_pairs) as f64);
        for i in docs.clone() {
            for j in i + 1..docs.end {
                let target = sigmoid(teacher_logits[i] - teacher_logits[j]);
                let diff = logits[i] - logits[j];
                let (loss, slope) = softplus_and_sigmoid(diff);
                total = total + (loss - target * diff) * weight;
                let g = scale * (slope - target) * weight;
                dlogits[i] = dlogits[i] + g;
                dlogits[j] = dlogits[j] - g;
            }
        }
    }
    total
}

/// The data loss with hard labels y.
pub fn data_loss<T: Real>(
    kind: LossKind,
    logits: &[T],
    labels: &[T],
    offsets: &[usize],
    include: &[bool],
    scale: T,
    dlogits: &mut [T],
) -> T {
    match kind {
        LossKind::RankBce => rank_bce(logits, labels, offsets, include, scale, dlogits),
        LossKind::RankNet => ranknet(logits, labels, offsets, include, scale, dlogits),
    }
}

/// The teacher loss with the teacher's logits as soft labels.
pub fn teacher_loss<T: Real>(
    kind: LossKind,
    logits: &[T],
    teacher_logits: &[T],
    offsets: &[usize],
    include: &[bool],
    scale: T,
    dlogits: &mut [T],
) -> T {
    match kind {
        LossKind::RankBce => {
            let targets: Vec<T> = teacher_logits.iter().map(|&t| sigmoid(t)).collect();
            rank_bce(logits, &targets, offsets, include, scale, dlogits)
        }
        LossKind::RankNet => ranknet_soft(logits, teacher_logits, offsets, include, scale, dlogits),
    }
}

/// The included groups' document ranges.
fn groups<'a>(
    offsets: &'a [usize],
    include: &'a [bool],
) -> impl Iterator<Item = std::ops::Range<usize>> + 'a {
    offsets
        .windows(2)
        .zip(include)
        .filter(|(_, &inc)| inc)
        .map(|(w, _)| w[0]..w[1])
}

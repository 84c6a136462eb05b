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
    let weights = loss_weights(LossKind::RankBce, Targets::Hard(targets), offsets, include);
    let mut total = T::zero();
    for docs in groups(offsets, include) {
        for i in docs {
            let (f, y, w) = (logits[i], targets[i], weights[i]);
            total = total + (softplus(f) - y * f) * w;
            dlogits[i] = dlogits[i] + scale * (sigmoid(f) - y) * w;
        }
    }
    total
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
    let weights = loss_weights(LossKind::RankNet, Targets::Hard(labels), offsets, include);
    let mut total = T::zero();
    for (docs, &weight) in offsets.windows(2).map(|w| w[0]..w[1]).zip(&weights) {
        if weight == T::zero() {
            continue;
        }
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
///
/// With several teachers (multi-teacher PFD) the loss is the mean of the teachers' losses; as the
/// cross-entropy is linear in P, that is one loss with P averaged over the teachers.
pub fn ranknet_soft<T: Real>(
    logits: &[T],
    teachers: &[&[T]],
    offsets: &[usize],
    include: &[bool],
    scale: T,
    dlogits: &mut [T],
) -> T {
    if teachers.is_empty() {
        return T::zero();
    }
    let weights = loss_weights(LossKind::RankNet, Targets::<T>::Soft, offsets, include);
    let inv_teachers = T::one() / real(teachers.len() as f64);
    let mut total = T::zero();
    for (docs, &weight) in offsets.windows(2).map(|w| w[0]..w[1]).zip(&weights) {
        if weight == T::zero() {
            continue;
        }
        for i in docs.clone() {
            for j in i + 1..docs.end {
                let target =
                    teachers.iter().map(|t| sigmoid(t[i] - t[j])).sum::<T>() * inv_teachers;
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

/// The targets a loss takes: hard labels y (the data loss) or the teachers' soft labels.
#[derive(Clone, Copy)]
pub enum Targets<'a, T> {
    Hard(&'a [T]),
    Soft,
}

/// The weights that make each loss a mean, in one place for both engines (the GPU kernels read
/// them after their targets). RankBCE: one per document, 1 / (documents included). RankNet: one
/// per group, 1 / (the group's pairs x the groups with pairs), where a pair is y_i > y_j with hard
/// targets and any two documents with soft ones. Excluded groups, and groups without pairs, weigh 0.
pub fn loss_weights<T: Real>(
    kind: LossKind,
    targets: Targets<T>,
    offsets: &[usize],
    include: &[bool],
) -> Vec<T> {
    let ranges = || {
        offsets
            .windows(2)
            .zip(include)
            .map(|(w, &inc)| (w[0]..w[1], inc))
    };
    match kind {
        LossKind::RankBce => {
            let n: usize = ranges().filter(|g| g.1).map(|g| g.0.len()).sum();
            let w = if n > 0 {
                T::one() / real(n as f64)
            } else {
                T::zero()
            };
            ranges()
                .flat_map(|(r, inc)| std::iter::repeat_n(if inc { w } else { T::zero() }, r.len()))
                .collect()
        }
        LossKind::RankNet => {
            let pairs: Vec<usize> = ranges()
                .map(|(r, inc)| match (inc, targets) {
                    (false, _) => 0,
                    (true, Targets::Soft) => r.len() * r.len().saturating_sub(1) / 2,
                    (true, Targets::Hard(labels)) => r
                        .clone()
                        .map(|i| r.clone().filter(|&j| labels[i] > labels[j]).count())
                        .sum(),
                })
                .collect();
            let with_pairs = pairs.iter().filter(|&&p| p > 0).count();
            pairs
                .iter()
                .map(|&p| {
                    if p > 0 {
                        T::one() / real((p * with_pairs) as f64)
                    } else {
                        T::zero()
                    }
                })
                .collect()
        }
    }
}

/// The Ranking Distillation loss L_D (spec §6): for each group, the teacher's top-K unlabeled
/// documents as weighted positives, sum_r w_r * (-ln sigmoid(f_{pi_r})) = sum_r w_r * softplus(-f);
/// the mean over the groups that have candidates. `weights[g]` lists (document, weight) pairs of a
/// batch group, documents indexing `logits`; weights carry no gradient.
pub fn ranking_distillation_loss<T: Real>(
    logits: &[T],
    weights: &[Vec<(usize, T)>],
    scale: T,
    dlogits: &mut [T],
) -> T {
    let groups = weights.iter().filter(|w| !w.is_empty()).count();
    if groups == 0 {
        return T::zero();
    }
    let inv = T::one() / real(groups as f64);
    let mut total = T::zero();
    for &(i, w) in weights.iter().flatten() {
        let (loss, slope) = softplus_and_sigmoid(-logits[i]);
        total = total + w * loss * inv;
        // d/df softplus(-f) = -sigmoid(-f)
        dlogits[i] = dlogits[i] - scale * w * slope * inv;
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

/// The teacher loss with the teachers' logits as soft labels (the mean over teachers).
pub fn teacher_loss<T: Real>(
    kind: LossKind,
    logits: &[T],
    teachers: &[&[T]],
    offsets: &[usize],
    include: &[bool],
    scale: T,
    dlogits: &mut [T],
) -> T {
    if teachers.is_empty() {
        return T::zero();
    }
    match kind {
        LossKind::RankBce => {
            // BCE is linear in its target: the mean of the teachers' losses is one loss with the
            // mean of their probabilities as target.
            let inv: T = real(1.0 / teachers.len() as f64);
            let targets: Vec<T> = (0..logits.len())
                .map(|i| teachers.iter().map(|t| sigmoid(t[i])).sum::<T>() * inv)
                .collect();
            rank_bce(logits, &targets, offsets, include, scale, dlogits)
        }
        LossKind::RankNet => ranknet_soft(logits, teachers, offsets, include, scale, dlogits),
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

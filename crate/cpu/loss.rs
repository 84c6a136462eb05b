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

use super::{positive_part, real, Real};
use crate::math::{exp, exp2, ln, ln_1p, log2};
use crate::model::loss::exp_and_sigmoid;
use crate::model::loss::{
    gains, loss_weights, sigmoid, softplus, softplus_and_sigmoid, LossKind, Targets,
};

/// The sum of ln(1 + e_k) over many e_k in [0, 1] with one logarithm per 512 terms: the
/// logarithm of the product of the (1 + e_k). Each factor lies in [1, 2], so the product stays
/// below 2^512 in f64; each multiplication rounds by at most 2^-53 relatively, so the sum of n
/// terms is off by about n * 2^-53 at most. The pairwise losses take their values this way: a
/// logarithm per pair cost as much as the model's forward and backward passes. Their gradients
/// need only the sigmoid and are unaffected.
struct Log1pSum {
    sum: f64,
    product: f64,
    factors: u32,
}

impl Log1pSum {
    fn new() -> Self {
        Log1pSum {
            sum: 0.0,
            product: 1.0,
            factors: 0,
        }
    }

    #[inline]
    fn add<T: Real>(&mut self, e: T) {
        self.product *= 1.0 + wide(e);
        self.factors += 1;
        if self.factors == 512 {
            self.sum += ln(self.product);
            self.product = 1.0;
            self.factors = 0;
        }
    }

    fn total(&self) -> f64 {
        self.sum + ln(self.product)
    }
}

#[inline]
fn wide<T: Real>(v: T) -> f64 {
    v.to_f64().unwrap_or(f64::NAN)
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
        if weight > T::zero() {
            let pairs = (logits, labels, docs);
            total =
                total + hard_pairs(pairs, weight, None::<fn(usize, usize) -> T>, scale, dlogits);
        }
    }
    total
}

/// One group's hard pairs (y_i > y_j among `docs`), each weighing `weight * factor(i, j)`
/// (`weight` alone without a factor): the weighted sum of ln(1 + e^-(f_i - f_j)); its gradient
/// times `scale` goes into `dlogits`. RankNet has no factor and LambdaRank's is |delta NDCG|.
fn hard_pairs<T: Real>(
    (logits, labels, docs): (&[T], &[T], std::ops::Range<usize>),
    weight: T,
    factor: Option<impl Fn(usize, usize) -> T>,
    scale: T,
    dlogits: &mut [T],
) -> T {
    // Equal weights: the group's sum of softplus(x) = max(x, 0) + ln(1 + e^-|x|) is the sum of
    // the max terms plus one logarithm (Log1pSum), times the weight.
    let mut linear = 0.0;
    let mut log1p = Log1pSum::new();
    let mut weighted = T::zero();
    for i in docs.clone() {
        for j in docs.clone() {
            if labels[i] > labels[j] {
                let x = -(logits[i] - logits[j]);
                let (e, slope) = exp_and_sigmoid(x);
                let w = match &factor {
                    Some(factor) => {
                        let w = weight * factor(i, j);
                        weighted = weighted + (positive_part(x) + ln_1p(e)) * w;
                        w
                    }
                    None => {
                        linear += wide(positive_part(x));
                        log1p.add(e);
                        weight
                    }
                };
                // d/d(f_i - f_j) softplus(-(f_i - f_j)) = -sigmoid(-(f_i - f_j))
                let g = scale * slope * w;
                dlogits[i] = dlogits[i] - g;
                dlogits[j] = dlogits[j] + g;
            }
        }
    }
    match factor {
        Some(_) => weighted,
        None => real::<T>((linear + log1p.total()) * wide(weight)),
    }
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
        // softplus(d) - P d = max(d, 0) - P d + ln(1 + e^-|d|): the group's sum of the first
        // terms plus one logarithm for the last (Log1pSum), times the weight.
        let mut linear = 0.0;
        let mut log1p = Log1pSum::new();
        for i in docs.clone() {
            for j in i + 1..docs.end {
                let target =
                    teachers.iter().map(|t| sigmoid(t[i] - t[j])).sum::<T>() * inv_teachers;
                let diff = logits[i] - logits[j];
                let (e, slope) = exp_and_sigmoid(diff);
                linear += wide(positive_part(diff) - target * diff);
                log1p.add(e);
                let g = scale * (slope - target) * weight;
                dlogits[i] = dlogits[i] + g;
                dlogits[j] = dlogits[j] - g;
            }
        }
        total = total + real::<T>((linear + log1p.total()) * wide(weight));
    }
    total
}

/// Softmax cross-entropy (ListNet, top-one): for each group, p = softmax(f) over its documents
/// and a target distribution q over them; -sum_i q_i ln p_i times the group's weight
/// ([`loss_weights`]), whose gradient in f_i is the weight times p_i - q_i. `targets` holds q for
/// every document: [`softmax_targets`] makes it from labels or from teachers.
pub fn softmax_ce<T: Real>(
    logits: &[T],
    targets: &[T],
    weights: &[T],
    offsets: &[usize],
    scale: T,
    dlogits: &mut [T],
) -> T {
    let mut total = T::zero();
    for (docs, &weight) in offsets.windows(2).map(|w| w[0]..w[1]).zip(weights) {
        if weight == T::zero() {
            continue;
        }
        let f = &logits[docs.clone()];
        let max = f.iter().copied().fold(T::neg_infinity(), T::max);
        let log_sum = ln(f.iter().map(|&v| exp(v - max)).sum::<T>());
        for i in docs {
            let log_p = logits[i] - max - log_sum;
            total = total - weight * targets[i] * log_p;
            dlogits[i] = dlogits[i] + scale * weight * (exp(log_p) - targets[i]);
        }
    }
    total
}

/// The softmax cross-entropy's target distribution of every document: each group's label gains
/// 2^y - 1 over their sum (hard, [`gains`]: binary labels over their count; a group without a
/// positive label gets zeros), or the mean over the teachers of the softmax of their logits over
/// the group (soft).
pub fn softmax_targets<T: Real>(labels: &[T], teachers: &[&[T]], offsets: &[usize]) -> Vec<T> {
    let mut q = vec![T::zero(); labels.len()];
    let gains = if teachers.is_empty() {
        gains(labels)
    } else {
        Vec::new()
    };
    for docs in offsets.windows(2).map(|w| w[0]..w[1]) {
        if teachers.is_empty() {
            let sum: T = gains[docs.clone()].iter().copied().sum();
            if sum > T::zero() {
                for i in docs {
                    q[i] = gains[i] / sum;
                }
            }
            continue;
        }
        let inv_teachers = T::one() / real(teachers.len() as f64);
        for t in teachers {
            let max = t[docs.clone()]
                .iter()
                .copied()
                .fold(T::neg_infinity(), T::max);
            let sum: T = t[docs.clone()].iter().map(|&v| exp(v - max)).sum();
            for i in docs.clone() {
                q[i] = q[i] + exp(t[i] - max) / sum * inv_teachers;
            }
        }
    }
    q
}

/// Each document's 1-based rank in its group by descending `values`, ties by document order (the
/// GPU kernels rank the same way).
fn group_ranks<T: Real>(values: &[T]) -> Vec<usize> {
    (0..values.len())
        .map(|i| {
            1 + (0..values.len())
                .filter(|&j| values[j] > values[i] || (values[j] == values[i] && j < i))
                .count()
        })
        .collect()
}

/// LambdaRank: RankNet's hard pairs (y_i > y_j), each weighted by |delta NDCG_ij|, the change of
/// the group's NDCG (gains 2^y - 1, no cutoff) if i and j swapped places in the ranking by the
/// current logits. The weights count as constants (no gradient), as in LambdaRank; each group's
/// pairs then weigh as in [`ranknet`].
pub fn lambdarank<T: Real>(
    logits: &[T],
    labels: &[T],
    offsets: &[usize],
    include: &[bool],
    scale: T,
    dlogits: &mut [T],
) -> T {
    let weights = loss_weights(
        LossKind::LambdaRank,
        Targets::Hard(labels),
        offsets,
        include,
    );
    let mut total = T::zero();
    for (docs, &weight) in offsets.windows(2).map(|w| w[0]..w[1]).zip(&weights) {
        if weight == T::zero() {
            continue;
        }
        let start = docs.start;
        let ranks = group_ranks(&logits[docs.clone()]);
        let ideal = group_ranks(&labels[docs.clone()]);
        let gain = |i: usize| exp2(labels[i]) - T::one();
        let discount = |rank: usize| T::one() / log2(real::<T>(rank as f64) + T::one());
        let idcg: T = docs
            .clone()
            .map(|i| gain(i) * discount(ideal[i - start]))
            .sum();
        if idcg <= T::zero() {
            continue;
        }
        let delta_ndcg = |i: usize, j: usize| {
            ((gain(i) - gain(j)) * (discount(ranks[i - start]) - discount(ranks[j - start]))).abs()
                / idcg
        };
        let pairs = (logits, labels, docs.clone());
        total = total + hard_pairs(pairs, weight, Some(delta_ndcg), scale, dlogits);
    }
    total
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
        LossKind::LambdaRank => lambdarank(logits, labels, offsets, include, scale, dlogits),
        LossKind::Softmax => {
            let weights = loss_weights(kind, Targets::Hard(labels), offsets, include);
            let targets = softmax_targets(labels, &[], offsets);
            softmax_ce(logits, &targets, &weights, offsets, scale, dlogits)
        }
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
        LossKind::RankNet | LossKind::LambdaRank => {
            ranknet_soft(logits, teachers, offsets, include, scale, dlogits)
        }
        LossKind::Softmax => {
            let weights = loss_weights(kind, Targets::<T>::Soft, offsets, include);
            let targets = softmax_targets(logits, teachers, offsets);
            softmax_ce(logits, &targets, &weights, offsets, scale, dlogits)
        }
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

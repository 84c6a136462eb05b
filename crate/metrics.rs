//! Ranking metrics of spec §5, per query group, then averaged over groups.
//!
//! * Documents are ranked by score, highest first; **ties are broken by document order** (the
//!   earlier document in the group ranks higher).
//! * NDCG@k = DCG@k / IDCG@k with DCG@k = sum_{i<=k} (2^g_(i) - 1) / log2(i + 1).
//! * A group with IDCG = 0 (no relevant document) has no defined NDCG; [`IdcgZero`] says what to
//!   do with it: exclude it from the mean (the default), count it as 0, or count it as 1 (LightGBM).
//! * MAP: average precision with relevant = label > 0, divided by the group's relevant count.
//!   MRR: 1 / rank of the first relevant document. P@k: relevant in the top k, divided by k (as
//!   trec_eval does, also for groups shorter than k). For these, groups without a relevant document
//!   count as 0, as trec_eval reports them.

/// What NDCG does with groups whose ideal DCG is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdcgZero {
    /// Leave the group out of the mean.
    #[default]
    Exclude,
    /// The group scores 0.
    Zero,
    /// The group scores 1 (LightGBM's convention).
    One,
}

/// The ranking of a group's documents: indices into the group, best first, ties by document order.
pub fn ranking(scores: &[f32]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    // Stable sort: equal scores keep document order. NaN scores (never produced by a finite model)
    // sort last.
    order.sort_by(|&a, &b| {
        let (sa, sb) = (scores[a], scores[b]);
        match (sa.is_nan(), sb.is_nan()) {
            // partial_cmp, not total_cmp: 0.0 and -0.0 are a tie, kept in document order.
            (false, false) => sb.partial_cmp(&sa).unwrap_or(std::cmp::Ordering::Equal),
            (a_nan, b_nan) => a_nan.cmp(&b_nan),
        }
    });
    order
}

/// 2^label - 1. Integer grades below 32 come from a table of the same values: NDCG is taken
/// every epoch, and `powf` per document was a large part of it.
fn gain(label: f32) -> f64 {
    fn exact(label: f32) -> f64 {
        2f64.powf(label as f64) - 1.0
    }
    static GAINS: std::sync::OnceLock<[f64; 32]> = std::sync::OnceLock::new();
    let grade = label as usize;
    if grade as f32 == label && grade < 32 {
        GAINS.get_or_init(|| std::array::from_fn(|g| exact(g as f32)))[grade]
    } else {
        exact(label)
    }
}

/// 1 / log2(rank + 2) for a 0-based rank; the first 64 from a table of the same values.
fn discount(rank: usize) -> f64 {
    fn exact(rank: usize) -> f64 {
        1.0 / ((rank + 2) as f64).log2()
    }
    static DISCOUNTS: std::sync::OnceLock<[f64; 64]> = std::sync::OnceLock::new();
    match DISCOUNTS
        .get_or_init(|| std::array::from_fn(exact))
        .get(rank)
    {
        Some(&d) => d,
        None => exact(rank),
    }
}

/// NDCG@k of one group; `None` when IDCG@k = 0.
///
/// Only the first k of the ranking and of the ideal order count, so both are selected rather
/// than sorted: the same documents in the same order as [`ranking`], and the same sums.
pub fn ndcg_at(k: usize, scores: &[f32], labels: &[f32]) -> Option<f64> {
    ndcg_with(k, scores, labels, &mut Vec::new())
}

/// [`ndcg_at`] with `kept` as scratch space for the selections.
fn ndcg_with(k: usize, scores: &[f32], labels: &[f32], kept: &mut Vec<usize>) -> Option<f64> {
    let dcg_of = |kept: &[usize]| -> f64 {
        kept.iter()
            .enumerate()
            .map(|(r, &i)| gain(labels[i]) * discount(r))
            .sum()
    };
    top(
        k,
        scores.len(),
        |a, b| ranks_before(scores[a], scores[b]),
        kept,
    );
    let dcg = dcg_of(kept);
    top(
        k,
        labels.len(),
        |a, b| labels[a].total_cmp(&labels[b]).is_gt(),
        kept,
    );
    let idcg = dcg_of(kept);
    (idcg > 0.0).then(|| dcg / idcg)
}

/// Whether a document scored `a` ranks strictly before one scored `b` ([`ranking`]'s order:
/// higher first, NaN last, 0.0 and -0.0 tied).
fn ranks_before(a: f32, b: f32) -> bool {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a > b,
        (a_nan, b_nan) => !a_nan && b_nan,
    }
}

/// Into `kept`: the first `k` of the indices `0..n` stably sorted by `before` (a strict order).
/// Each index goes after every kept one it does not come strictly before, so ties keep index
/// order.
fn top(k: usize, n: usize, before: impl Fn(usize, usize) -> bool, kept: &mut Vec<usize>) {
    kept.clear();
    for i in 0..n {
        let mut at = kept.len();
        while at > 0 && before(i, kept[at - 1]) {
            at -= 1;
        }
        if at < k {
            kept.insert(at, i);
            kept.truncate(k);
        }
    }
}

/// Average precision of one group (relevant = label > 0); 0 without relevant documents.
pub fn average_precision(scores: &[f32], labels: &[f32]) -> f64 {
    let relevant = labels.iter().filter(|&&l| l > 0.0).count();
    if relevant == 0 {
        return 0.0;
    }
    let mut hits = 0;
    let mut sum = 0.0;
    for (r, &i) in ranking(scores).iter().enumerate() {
        if labels[i] > 0.0 {
            hits += 1;
            sum += hits as f64 / (r + 1) as f64;
        }
    }
    sum / relevant as f64
}

/// Reciprocal rank of the first relevant document; 0 without one.
pub fn reciprocal_rank(scores: &[f32], labels: &[f32]) -> f64 {
    ranking(scores)
        .iter()
        .position(|&i| labels[i] > 0.0)
        .map_or(0.0, |r| 1.0 / (r + 1) as f64)
}

/// Precision at k: relevant documents in the top k, over k.
pub fn precision_at(k: usize, scores: &[f32], labels: &[f32]) -> f64 {
    ranking(scores)
        .iter()
        .take(k)
        .filter(|&&i| labels[i] > 0.0)
        .count() as f64
        / k as f64
}

/// Mean NDCG@k over the groups of `offsets`, under an IDCG = 0 convention. `None` when no group
/// counts (every group excluded).
pub fn mean_ndcg(
    k: usize,
    scores: &[f32],
    labels: &[f32],
    offsets: &[usize],
    convention: IdcgZero,
) -> Option<f64> {
    let mut kept = Vec::new();
    let values: Vec<f64> = offsets
        .windows(2)
        .filter_map(|w| {
            match (
                ndcg_with(k, &scores[w[0]..w[1]], &labels[w[0]..w[1]], &mut kept),
                convention,
            ) {
                (Some(v), _) => Some(v),
                (None, IdcgZero::Exclude) => None,
                (None, IdcgZero::Zero) => Some(0.0),
                (None, IdcgZero::One) => Some(1.0),
            }
        })
        .collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// NDCG@k of each group of `offsets`, in order: `None` for a group with IDCG = 0 (no relevant
/// document), whatever the convention of a mean. The per-query figures of the paired tests
/// ([`crate::stats`]).
pub fn ndcg_per_group(
    k: usize,
    scores: &[f32],
    labels: &[f32],
    offsets: &[usize],
) -> Vec<Option<f64>> {
    let mut kept = Vec::new();
    offsets
        .windows(2)
        .map(|w| ndcg_with(k, &scores[w[0]..w[1]], &labels[w[0]..w[1]], &mut kept))
        .collect()
}

/// The mean of a per-group metric over every group.
pub fn mean_over_groups(
    metric: impl Fn(&[f32], &[f32]) -> f64,
    scores: &[f32],
    labels: &[f32],
    offsets: &[usize],
) -> f64 {
    let n = offsets.len().saturating_sub(1);
    if n == 0 {
        return 0.0;
    }
    offsets
        .windows(2)
        .map(|w| metric(&scores[w[0]..w[1]], &labels[w[0]..w[1]]))
        .sum::<f64>()
        / n as f64
}

/// The standard report: NDCG@{1,3,5,8,10}, MAP, MRR, P@{1,5,10}.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Report {
    pub ndcg: Vec<(usize, Option<f64>)>,
    /// MAP, MRR and P@k over every group; `None` (n/a in text, null in JSON) when no group has a
    /// relevant document, where each is 0 whatever the scores and measures nothing.
    pub map: Option<f64>,
    pub mrr: Option<f64>,
    pub precision: Vec<(usize, Option<f64>)>,
    /// Groups counted by NDCG (after the IDCG = 0 convention).
    pub ndcg_groups: usize,
}

pub const NDCG_CUTOFFS: [usize; 5] = [1, 3, 5, 8, 10];

pub fn report(scores: &[f32], labels: &[f32], offsets: &[usize], convention: IdcgZero) -> Report {
    let ndcg_groups = offsets
        .windows(2)
        .filter(|w| convention != IdcgZero::Exclude || labels[w[0]..w[1]].iter().any(|&l| l > 0.0))
        .count();
    let measurable = labels.iter().any(|&l| l > 0.0);
    Report {
        ndcg: NDCG_CUTOFFS
            .iter()
            .map(|&k| (k, mean_ndcg(k, scores, labels, offsets, convention)))
            .collect(),
        map: measurable.then(|| mean_over_groups(average_precision, scores, labels, offsets)),
        mrr: measurable.then(|| mean_over_groups(reciprocal_rank, scores, labels, offsets)),
        precision: [1, 5, 10]
            .iter()
            .map(|&k| {
                let p = || mean_over_groups(|s, l| precision_at(k, s, l), scores, labels, offsets);
                (k, measurable.then(p))
            })
            .collect(),
        ndcg_groups,
    }
}

impl Report {
    pub fn ndcg_at(&self, k: usize) -> Option<f64> {
        self.ndcg
            .iter()
            .find(|(c, _)| *c == k)
            .and_then(|(_, v)| *v)
    }
}

/// The mean and the sample standard deviation (n - 1) of `v`. One value has no measurable
/// spread: its deviation is NaN, which reports show as n/a ([`plus_minus`]) and JSON as null
/// (never a 0 that reads as "no spread at all").
pub fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n.max(1.0);
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)
    } else {
        f64::NAN
    };
    (mean, var.sqrt())
}

/// "0.4760 ± 0.0012", or "0.4760 ± n/a" when the spread could not be measured (one seed).
pub fn plus_minus(mean: f64, std: f64) -> String {
    if std.is_finite() {
        format!("{mean:.4} ± {std:.4}")
    } else {
        format!("{mean:.4} ± n/a")
    }
}

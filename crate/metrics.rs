//! Ranking metrics of spec §5, per query group, then averaged over groups.
//!
//! * Documents are ranked by score, highest first.
//! * **Tied scores are averaged over, not broken.** A run of documents with equal scores takes
//!   every order among its ranks with equal chance, and each metric is its expected value over
//!   those orders (McSherry and Najork, "Computing information retrieval performance measures
//!   efficiently in the presence of tied scores", ECIR 2008). So a metric never depends on the
//!   order of rows within a query: a model that scores every document alike gets the same figure
//!   from a file sorted best first as from one sorted worst first. Without ties this is the usual
//!   value, to the bit. trec_eval instead breaks ties by document name, and LightGBM by row
//!   order; their values differ from ours only on groups with tied scores. Spec §5 asked for
//!   document order too; it is replaced on purpose, since with it a model that ties every
//!   document scores the file's own order: high on a file sorted best first, near zero on one
//!   sorted worst first.
//! * 0.0 and -0.0 tie; NaN scores (never produced by a finite model) rank last, tied together.
//! * NDCG@k = DCG@k / IDCG@k with DCG@k = sum_{i<=k} (2^g_(i) - 1) / log2(i + 1).
//! * A group with IDCG = 0 (no relevant document) has no defined NDCG; [`IdcgZero`] says what to
//!   do with it: exclude it from the mean (the default), count it as 0, or count it as 1 (LightGBM).
//! * MAP: average precision with relevant = label > 0, divided by the group's relevant count.
//!   MRR: 1 / rank of the first relevant document. P@k: relevant in the top k, divided by k (as
//!   trec_eval does, also for groups shorter than k). For these, groups without a relevant document
//!   count as 0, as trec_eval reports them.

use std::ops::Range;

use crate::math::{exp2, log2};

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
/// The metrics average over the orders of tied documents instead ([`tie_runs`]); this order is
/// for choosing documents, such as a teacher's top K.
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
        exp2(label as f64) - 1.0
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
        1.0 / log2((rank + 2) as f64)
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
    top(
        k,
        scores.len(),
        |a, b| ranks_before(scores[a], scores[b]),
        kept,
    );
    let dcg = expected_dcg(scores, labels, kept);
    top(
        k,
        labels.len(),
        |a, b| labels[a].total_cmp(&labels[b]).is_gt(),
        kept,
    );
    let idcg: f64 = kept
        .iter()
        .enumerate()
        .map(|(r, &i)| gain(labels[i]) * discount(r))
        .sum();
    (idcg > 0.0).then(|| dcg / idcg)
}

/// DCG of the ranks of `kept` (the top of the ranking, in order), averaged over the orders of
/// tied documents: each run of tied scores brings its mean gain to each of its ranks.
///
/// Every run but the last lies wholly inside `kept` (the selection holds every document that
/// ranks strictly before its last one). The last may go on past it, so its members are counted
/// over the whole group.
fn expected_dcg(scores: &[f32], labels: &[f32], kept: &[usize]) -> f64 {
    let mut dcg = 0.0;
    for run in tie_runs_by(kept.len(), |r| scores[kept[r]]) {
        let (count, gains) = if run.end < kept.len() {
            let gains: f64 = kept[run.clone()].iter().map(|&i| gain(labels[i])).sum();
            (run.len(), gains)
        } else {
            let score = scores[kept[run.start]];
            scores
                .iter()
                .zip(labels)
                .filter(|(&s, _)| tied(s, score))
                .fold((0, 0.0), |(n, g), (_, &l)| (n + 1, g + gain(l)))
        };
        let discounts: f64 = run.map(discount).sum();
        dcg += gains / count as f64 * discounts;
    }
    dcg
}

/// Whether two scores tie: neither ranks before the other.
fn tied(a: f32, b: f32) -> bool {
    !ranks_before(a, b) && !ranks_before(b, a)
}

/// The runs of tied scores in `ordered` (scores already in ranking order), as ranges of ranks.
pub fn tie_runs(ordered: &[f32]) -> impl Iterator<Item = Range<usize>> + '_ {
    tie_runs_by(ordered.len(), |r| ordered[r])
}

/// [`tie_runs`] over `n` ranks whose scores `score(rank)` gives, in ranking order: no copy of
/// the scores is made (NDCG is taken every epoch).
fn tie_runs_by(n: usize, score: impl Fn(usize) -> f32) -> impl Iterator<Item = Range<usize>> {
    let mut start = 0;
    std::iter::from_fn(move || {
        if start == n {
            return None;
        }
        let first = score(start);
        let end = (start + 1..n)
            .find(|&r| !tied(score(r), first))
            .unwrap_or(n);
        let run = start..end;
        start = end;
        Some(run)
    })
}

/// A group's runs of tied scores in ranking order, each with its size and its count of relevant
/// documents (label > 0).
fn relevant_runs(scores: &[f32], labels: &[f32]) -> Vec<(Range<usize>, usize)> {
    let order = ranking(scores);
    let ordered: Vec<f32> = order.iter().map(|&i| scores[i]).collect();
    tie_runs(&ordered)
        .map(|run| {
            let relevant = order[run.clone()]
                .iter()
                .filter(|&&i| labels[i] > 0.0)
                .count();
            (run, relevant)
        })
        .collect()
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
///
/// With ties: a relevant document of a run of `n` tied ranks starting after rank `start`, with
/// `m` relevant documents in the run and `above` before it, sits at each of the run's ranks with
/// chance 1/n; at the run's i-th rank it has on average i(m - 1)/(n - 1) relevant run-mates
/// before it, so its expected precision is the mean over i of
/// (above + 1 + i(m - 1)/(n - 1)) / (start + i + 1).
pub fn average_precision(scores: &[f32], labels: &[f32]) -> f64 {
    let relevant = labels.iter().filter(|&&l| l > 0.0).count();
    if relevant == 0 {
        return 0.0;
    }
    let mut above = 0;
    let mut sum = 0.0;
    for (run, m) in relevant_runs(scores, labels) {
        if m > 0 {
            let n = run.len();
            let mates = |i: usize| {
                if n > 1 {
                    i as f64 * (m - 1) as f64 / (n - 1) as f64
                } else {
                    0.0
                }
            };
            let precision: f64 = (0..n)
                .map(|i| (above as f64 + 1.0 + mates(i)) / (run.start + i + 1) as f64)
                .sum();
            sum += m as f64 * precision / n as f64;
        }
        above += m;
    }
    sum / relevant as f64
}

/// Reciprocal rank of the first relevant document; 0 without one.
///
/// With ties: in the first run holding relevant documents (`m` of its `n`), the first relevant
/// one is j places into the run with the chance that the j before it are not relevant and it is.
pub fn reciprocal_rank(scores: &[f32], labels: &[f32]) -> f64 {
    let Some((run, m)) = relevant_runs(scores, labels)
        .into_iter()
        .find(|&(_, m)| m > 0)
    else {
        return 0.0;
    };
    let n = run.len();
    let mut none_yet = 1.0;
    let mut expected = 0.0;
    for j in 0..=n - m {
        expected += none_yet * m as f64 / (n - j) as f64 / (run.start + j + 1) as f64;
        none_yet *= (n - m - j) as f64 / (n - j) as f64;
    }
    expected
}

/// Precision at k: relevant documents in the top k, over k. With ties, a run straddling rank k
/// brings its share of relevant documents times its ranks inside the top k.
pub fn precision_at(k: usize, scores: &[f32], labels: &[f32]) -> f64 {
    relevant_runs(scores, labels)
        .into_iter()
        .take_while(|(run, _)| run.start < k)
        .map(|(run, m)| m as f64 / run.len() as f64 * (run.end.min(k) - run.start) as f64)
        .sum::<f64>()
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
    /// MAP, MRR and P@k over every group; `None` (n/a in text, null in JSON) when no group holds
    /// two different labels (no relevant document at all, or every group's documents alike),
    /// where each is 0 or 1 whatever the scores and measures nothing.
    pub map: Option<f64>,
    pub mrr: Option<f64>,
    pub precision: Vec<(usize, Option<f64>)>,
    /// Groups counted by NDCG (after the IDCG = 0 convention).
    pub ndcg_groups: usize,
}

pub const NDCG_CUTOFFS: [usize; 5] = [1, 3, 5, 8, 10];

/// Whether `scores` tie every group (groups `offsets`): a model that gives every document of
/// each query one score does not rank at all, and every metric of it is its expected value over
/// the orders of each query's documents, a random ranking's. Where no group has two documents
/// there is nothing to tie, and nothing to say.
pub fn ties_every_group(scores: &[f32], offsets: &[usize]) -> bool {
    offsets.windows(2).any(|w| w[1] - w[0] >= 2)
        && offsets
            .windows(2)
            .all(|w| scores[w[0]..w[1]].windows(2).all(|p| p[0] == p[1]))
}

/// Whether some group holds documents of two different labels: otherwise every order of every
/// group is as good as any other, and no ranking metric measures anything (each is 1 or 0
/// whatever the scores).
pub fn any_group_ranks(labels: &[f32], offsets: &[usize]) -> bool {
    offsets.windows(2).any(|w| {
        let group = &labels[w[0]..w[1]];
        group.iter().any(|&l| l != group[0])
    })
}

/// Why a run's metrics are `None` where no group holds two different labels
/// ([`any_group_ranks`]): what every door says beside them.
pub const UNMEASURABLE: &str =
    "no query holds documents of two different labels, so no ranking metric can be measured";

/// A run's metrics on `labels`: NDCG at [`NDCG_CUTOFFS`], MAP, MRR and P@1/5/10; each `None`
/// where it cannot be measured: no group holds two different labels ([`any_group_ranks`]).
pub fn report(scores: &[f32], labels: &[f32], offsets: &[usize], convention: IdcgZero) -> Report {
    let ndcg_groups = offsets
        .windows(2)
        .filter(|w| convention != IdcgZero::Exclude || labels[w[0]..w[1]].iter().any(|&l| l > 0.0))
        .count();
    let measurable = any_group_ranks(labels, offsets);
    Report {
        ndcg: NDCG_CUTOFFS
            .iter()
            .map(|&k| {
                let ndcg = measurable.then(|| mean_ndcg(k, scores, labels, offsets, convention));
                (k, ndcg.flatten())
            })
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

//! Learning from clicks: the labels of the methods that train on a log's clicks rather than on
//! relevance, beside PFD on the same logs.
//!
//! Under the position-based model a click at displayed rank k needs an examination, with
//! probability theta_k, and an attractive document: `P(click) = theta_k * gamma_d`. Clicks
//! summed over a query's sessions are therefore biased toward the documents the logging ranker
//! put on top. Each method turns the table of impressions and clicks by rank
//! ([`ClickTable`]) into one relevance estimate per training document, `r_d`:
//!
//! | method | r_d |
//! | --- | --- |
//! | naive | `sum_k c_dk / S`: clicks per session, position bias and all |
//! | IPS | `sum_k c_dk / theta_k / S`, theta the simulator's true examination |
//! | IPS (estimated) | the same with theta estimated from the clicks by EM ([`em_propensities`]) |
//! | IPS (harvested) | the same with theta harvested from the logging policy's shuffles ([`harvested_propensities`]) |
//! | DLA | the same with theta learned with the ranker, from its scores ([`PropensityTower`]) |
//! | two-tower | the same with theta the position tower of `theta_k * sigmoid(a f_d + b)`, fitted by EM with the ranker's scores ([`PropensityTower`]) |
//! | full information | `2^g - 1` from the true grade g: the upper bound |
//!
//! with `S` the sessions of each query. The student learns `r_d` through the comparison's loss
//! as a graded label whose gain `2^y - 1` is `r_d` ([`label_of`]): the softmax cross-entropy's
//! target is then `r_d` over its group's sum, which is the listwise IPS estimator of Ai et al.
//! (SIGIR 2018) summed over sessions; RankNet learns the pairs `r_i > r_j`, LambdaRank weighs
//! them with gains `r_d`. A query whose documents were never clicked has `r = 0` everywhere:
//! it carries no pair and no target, and its group is left out of training, as the loss's own
//! rule leaves out a group without a label above 0.

use std::collections::HashMap;
use std::sync::Arc;

use crate::data::logs::ClickTable;
use crate::data::prepare::RankingSet;
use crate::error::{Error, Result};

/// How many EM iterations estimate the propensities.
pub const EM_ITERATIONS: usize = 200;

/// The smallest estimated propensity taken: below it a rank's clicks would weigh more than a
/// thousand times rank 1's, and its estimate means the rank was not clicked at all.
pub const MIN_PROPENSITY: f64 = 1e-3;

/// The examination probability of each displayed rank, relative to rank 1's, estimated from the
/// clicks by expectation-maximisation under the position-based model, with one attractiveness
/// gamma_d per query-document pair (Wang et al., WSDM 2018, fit with a free gamma per document
/// rather than their regression on features). The model fixes theta and gamma only up to a
/// common factor, so theta_1 = 1, as the simulator's `(1/k)^eta` has it.
///
/// E-step, at rank k of document d, with `n_dk` impressions and `c_dk` clicks: a click was
/// examined and attractive; a skip was examined and unattractive with probability
/// `theta (1 - gamma) / (1 - theta gamma)`, unexamined and attractive with
/// `(1 - theta) gamma / (1 - theta gamma)`. M-step: theta_k and gamma_d are the expected shares.
///
/// A rank no session showed has no estimate (None): nothing was measured there. Logs without a
/// click at rank 1, the rank every other is measured against, are refused.
pub fn em_propensities(table: &ClickTable) -> Result<Vec<Option<f64>>> {
    let (shown, n_docs) = (table.shown, table.n_docs());
    let mut theta = vec![0.5f64; shown];
    let mut gamma = vec![0.5f64; n_docs];
    let impressions_at: Vec<u64> = (0..shown)
        .map(|k| (0..n_docs).map(|d| table.of(d).0[k] as u64).sum())
        .collect();
    if impressions_at.iter().all(|&n| n == 0) {
        return Err(Error::Data(
            "the logs have no impression: there is nothing to estimate propensities from".into(),
        ));
    }
    if (0..n_docs).all(|d| table.of(d).1[0] == 0) {
        let more = if table.from_rows {
            "give rows of more sessions (each query's rows at position 1 are its sessions)"
        } else {
            "raise --sessions or --click-noise"
        };
        return Err(Error::Data(format!(
            "the logs have no click at displayed rank 1, against which every rank's propensity is measured: there is nothing to estimate them from ({more})"
        )));
    }
    // EM separates a rank's examination from its documents' relevance only through documents
    // shown at more than one rank: without one, every propensity fits at about 1, and the
    // estimates are the naive clicks under another name.
    let ranks_of = |d: usize| table.of(d).0.iter().filter(|&&n| n > 0).count();
    if !(0..n_docs).any(|d| ranks_of(d) > 1) {
        let why = if table.from_rows {
            "each row given with position= is one impression of a document of its own, so no document was shown at two ranks: learn from these clicks with naive, dla or two-tower, or give an impressions log in which the same documents recur at several ranks across sessions (a comparison on privileged logs, with the log beside its files, reads one)"
        } else {
            "no document of the logs was shown at two ranks (the logging ranker never moved one): raise --shuffle so that documents change places between sessions"
        };
        return Err(Error::Data(format!(
            "EM cannot tell a rank's examination from its documents' relevance: {why}"
        )));
    }
    let skip_shares = |t: f64, g: f64| {
        let not_clicked = (1.0 - t * g).max(1e-12);
        (t * (1.0 - g) / not_clicked, (1.0 - t) * g / not_clicked)
    };
    for _ in 0..EM_ITERATIONS {
        let mut examined = vec![0f64; shown];
        for (d, g) in gamma.iter_mut().enumerate() {
            let (n, c) = table.of(d);
            let (mut attractive, mut seen) = (0f64, 0f64);
            for k in 0..shown {
                if n[k] == 0 {
                    continue;
                }
                let (n, c) = (n[k] as f64, c[k] as f64);
                let (examined_skip, attractive_skip) = skip_shares(theta[k], *g);
                examined[k] += c + (n - c) * examined_skip;
                attractive += c + (n - c) * attractive_skip;
                seen += n;
            }
            if seen > 0.0 {
                *g = (attractive / seen).clamp(1e-6, 1.0 - 1e-6);
            }
        }
        for k in 0..shown {
            if impressions_at[k] > 0 {
                theta[k] = (examined[k] / impressions_at[k] as f64).clamp(1e-9, 1.0);
            }
        }
    }
    let first = theta[0];
    let theta: Vec<Option<f64>> = theta
        .iter()
        .zip(&impressions_at)
        .map(|(t, &n)| (n > 0).then_some(t / first))
        .collect();
    above_floor(
        theta,
        "estimated",
        "the logs hold too few clicks at that rank (raise --sessions, or --shown fewer documents)",
    )
}

/// `theta` when no rank's propensity is below [`MIN_PROPENSITY`] of rank 1's; else an error
/// naming the rank, how it was `found` and what would help.
fn above_floor(theta: Vec<Option<f64>>, found: &str, help: &str) -> Result<Vec<Option<f64>>> {
    match theta
        .iter()
        .enumerate()
        .find_map(|(k, t)| t.filter(|&t| t < MIN_PROPENSITY).map(|t| (k, t)))
    {
        Some((k, t)) => Err(Error::Data(format!(
            "the propensity {found} at displayed rank {} is {t:.2e}, below {MIN_PROPENSITY} of rank 1's: its clicks would weigh without bound; {help}",
            k + 1
        ))),
        None => Ok(theta),
    }
}

/// The examination probability of each displayed rank, relative to rank 1's, harvested from the
/// logging policy's own shuffles (intervention harvesting, Agarwal et al., WSDM 2019): a document
/// the logging ranker showed at ranks k and k' in different sessions was, for that document, a
/// randomised swap. Under the position-based model its click rates there are `theta_k gamma_d`
/// and `theta_k' gamma_d`, so over the documents shown at both (the pair's interventional set),
/// weighted alike on both sides by `w_d = n_dk n_dk' / (n_dk + n_dk')`,
///
/// ```text
/// r_kk' = sum_d w_d c_dk / n_dk  /  sum_d w_d c_dk' / n_dk'   estimates   theta_k / theta_k'
/// ```
///
/// whatever the attractiveness of the documents. Every pair of ranks with clicks on both sides
/// gives one such ratio; log theta is their weighted least-squares fit (weight: the harmonic mean
/// of the pair's two click counts), with log theta_1 = 0: the AllPairs idea of the paper, fit in
/// log space rather than by its likelihood. No relevance model is involved.
///
/// A rank no session showed has no estimate (None). A shown rank that no pair joins to rank 1
/// (the logging ranker never showed the same document there and at a rank that is joined) is
/// refused, as are logs whose rank 1 shares no document with another rank: without the
/// logging policy's shuffles (`--shuffle 0`) there is nothing to harvest.
pub fn harvested_propensities(table: &ClickTable) -> Result<Vec<Option<f64>>> {
    let (shown, n_docs) = (table.shown, table.n_docs());
    // Per pair k < k': the weighted click rates on each side and the clicks behind them.
    let mut pairs = vec![[0f64; 4]; shown * shown];
    for d in 0..n_docs {
        let (n, c) = table.of(d);
        for k in 0..shown {
            if n[k] == 0 {
                continue;
            }
            for l in k + 1..shown {
                if n[l] == 0 {
                    continue;
                }
                let (nk, nl) = (n[k] as f64, n[l] as f64);
                let w = nk * nl / (nk + nl);
                let p = &mut pairs[k * shown + l];
                p[0] += w * c[k] as f64 / nk;
                p[1] += w * c[l] as f64 / nl;
                p[2] += c[k] as f64;
                p[3] += c[l] as f64;
            }
        }
    }
    // Normal equations of sum v (u_k - u_l - log r_kl)^2 over the unknowns u_2..u_shown
    // (u = log theta, u_1 = 0).
    let m = shown - 1;
    let mut a = vec![0f64; m * m];
    let mut b = vec![0f64; m];
    let mut joined = vec![false; shown];
    joined[0] = true;
    let mut edges = Vec::new();
    for k in 0..shown {
        for l in k + 1..shown {
            let p = pairs[k * shown + l];
            if p[0] <= 0.0 || p[1] <= 0.0 {
                continue;
            }
            let v = 2.0 * p[2] * p[3] / (p[2] + p[3]);
            // libm: the same bits on every target (the page's wasm and native).
            let log_ratio = libm::log(p[0] / p[1]);
            edges.push((k, l));
            // d/du of v (u_k - u_l - log r)^2 / 2, rows and columns of the unknowns only.
            let (ik, il) = (k.checked_sub(1), l - 1);
            if let Some(ik) = ik {
                a[ik * m + ik] += v;
                a[ik * m + il] -= v;
                a[il * m + ik] -= v;
                b[ik] += v * log_ratio;
            }
            a[il * m + il] += v;
            b[il] -= v * log_ratio;
        }
    }
    // Which ranks the pairs join to rank 1.
    loop {
        let before = joined.iter().filter(|&&j| j).count();
        for &(k, l) in &edges {
            if joined[k] || joined[l] {
                joined[k] = true;
                joined[l] = true;
            }
        }
        if joined.iter().filter(|&&j| j).count() == before {
            break;
        }
    }
    let shown_at: Vec<bool> = (0..shown)
        .map(|k| (0..n_docs).any(|d| table.of(d).0[k] > 0))
        .collect();
    if let Some(k) = (0..shown).find(|&k| shown_at[k] && !joined[k]) {
        let remedy = if table.from_rows {
            "each row given with position= is a document of its own, shown once: give an impressions log in which the same documents recur at several ranks"
        } else {
            "the logging policy's shuffles make them: raise --shuffle or --sessions"
        };
        return Err(Error::Data(format!(
            "intervention harvesting found no document the logging ranker showed both at displayed rank {} and at a rank joined to rank 1, with clicks at both: there is no swap to measure its propensity by ({remedy})",
            k + 1
        )));
    }
    // Ranks never shown have no unknown of their own: pin them at 0.
    for (i, _) in shown_at[1..].iter().enumerate().filter(|(_, &s)| !s) {
        a[i * m + i] = 1.0;
        b[i] = 0.0;
    }
    let u = solve(a, b, m).ok_or_else(|| {
        Error::Data(
            "intervention harvesting: the pairs of ranks do not fix the propensities".into(),
        )
    })?;
    let theta: Vec<Option<f64>> = (0..shown)
        .map(|k| shown_at[k].then(|| if k == 0 { 1.0 } else { libm::exp(u[k - 1]) }))
        .collect();
    above_floor(theta, "harvested", "raise --sessions")
}

/// The solution of the symmetric positive definite system `a x = b` (`m x m`, row-major) by
/// Gaussian elimination with partial pivoting; None when it is singular.
fn solve(mut a: Vec<f64>, mut b: Vec<f64>, m: usize) -> Option<Vec<f64>> {
    for col in 0..m {
        let pivot =
            (col..m).max_by(|&i, &j| a[i * m + col].abs().total_cmp(&a[j * m + col].abs()))?;
        if a[pivot * m + col].abs() < 1e-12 {
            return None;
        }
        if pivot != col {
            for j in 0..m {
                a.swap(col * m + j, pivot * m + j);
            }
            b.swap(col, pivot);
        }
        for row in col + 1..m {
            let f = a[row * m + col] / a[col * m + col];
            for j in col..m {
                a[row * m + j] -= f * a[col * m + j];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0f64; m];
    for row in (0..m).rev() {
        let rest: f64 = (row + 1..m).map(|j| a[row * m + j] * x[j]).sum();
        x[row] = (b[row] - rest) / a[row * m + row];
    }
    Some(x)
}

/// The training label y whose gain `2^y - 1` is the relevance estimate `r` (r >= 0).
pub fn label_of(r: f64) -> f32 {
    libm::log2(1.0 + r) as f32
}

/// The relevance estimate of every document of `table`: its clicks at each rank divided by
/// `propensity` at that rank (1 everywhere: the naive estimate), per session of its query. A
/// query's sessions are its impressions at rank 1 (every session shows one document there), so
/// logs whose queries were shown different numbers of times are read alike.
pub fn relevance(table: &ClickTable, propensity: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(table.n_docs());
    for g in table.group_offsets.windows(2) {
        out.extend(group_relevance(table, g[0]..g[1], propensity));
    }
    out
}

/// [`relevance`] of one query's documents `docs`.
fn group_relevance<'a>(
    table: &'a ClickTable,
    docs: std::ops::Range<usize>,
    propensity: &'a [f64],
) -> impl Iterator<Item = f64> + 'a {
    let sessions: f64 = docs.clone().map(|d| table.of(d).0[0] as f64).sum();
    docs.map(move |d| {
        let weighted: f64 = table
            .of(d)
            .1
            .iter()
            .zip(propensity)
            .map(|(&c, &p)| c as f64 / p)
            .sum();
        if sessions > 0.0 {
            weighted / sessions
        } else {
            0.0
        }
    })
}

/// The rows of `table` (the logs of the file the training split was drawn from) of `train`'s
/// documents, in `train`'s order, matched by qid (a document keeps its place within its query).
pub fn matched(table: &ClickTable, train: &RankingSet) -> Result<ClickTable> {
    let groups: HashMap<u64, usize> = table
        .qids
        .iter()
        .enumerate()
        .map(|(g, &q)| (q, g))
        .collect();
    let shown = table.shown;
    let mut out = ClickTable {
        impressions: Vec::with_capacity(train.n_docs() * shown),
        clicks: Vec::with_capacity(train.n_docs() * shown),
        group_offsets: train.group_offsets.clone(),
        qids: train.qids.clone(),
        ..table.clone_empty()
    };
    for g in 0..train.n_groups() {
        let qid = train.qids[g];
        let docs = train.group(g);
        let from = groups
            .get(&qid)
            .map(|&s| table.group_offsets[s]..table.group_offsets[s + 1]);
        match from {
            Some(from) if from.len() == docs.len() => {
                let cells = from.start * shown..from.end * shown;
                out.impressions.extend_from_slice(&table.impressions[cells.clone()]);
                out.clicks.extend_from_slice(&table.clicks[cells]);
            }
            _ => {
                return Err(Error::Data(format!(
                    "query {qid} of the training split has no logs of its {} documents: the clicks and the split do not belong together",
                    docs.len()
                )))
            }
        }
    }
    Ok(out)
}

/// Which estimate a method trains on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClickLabel {
    /// Clicks per session.
    Naive,
    /// Clicks weighted by the simulator's true inverse examination probability.
    Ips,
    /// Clicks weighted by the inverse of the propensities estimated by EM.
    IpsEstimated,
    /// Clicks weighted by the inverse of the propensities harvested from the logging policy's
    /// shuffles ([`harvested_propensities`]).
    IpsHarvested,
    /// The true grades, gains `2^g - 1`.
    FullInformation,
    /// The dual learning algorithm: clicks weighted by the inverse of a propensity model that
    /// learns from the ranker's scores at every step ([`PropensityTower`]).
    Dla,
    /// Clicks weighted by the inverse of a position tower that, times a relevance tower (the
    /// ranker's calibrated scores), gives the click probability, fitted by EM between the
    /// ranker's epochs ([`PropensityTower`]).
    TwoTower,
}

impl ClickLabel {
    /// Whether the method learns its propensities with the ranker, so that its labels change
    /// between epochs ([`PropensityTower`]).
    pub fn learns_propensities(self) -> bool {
        matches!(self, ClickLabel::Dla | ClickLabel::TwoTower)
    }
}

/// The relevance estimates of the training split's documents for every [`ClickLabel`], with the
/// propensities they used: computed once per prepared data ([`crate::pipeline::preparation`]
/// keeps them), read by both engines and every seed; the page's workers compute them from the
/// clicks by rank that travel with the shared prepared data.
#[derive(Debug, Clone, PartialEq)]
pub struct ClickLabels {
    /// The clicks by rank they were estimated from, in the training split's order: what the
    /// methods that learn their propensities with the ranker read ([`PropensityTower`]).
    pub table: Arc<ClickTable>,
    /// Per training document, in the training split's order.
    pub naive: Vec<f32>,
    /// None where the click model has no examination by rank alone (cascade, DCM).
    pub ips: Option<Vec<f32>>,
    /// The estimates with EM's propensities, or why EM gave none (a rank whose estimate is
    /// below [`MIN_PROPENSITY`], no click at rank 1): ips-estimated alone is refused then, and
    /// the other methods train.
    pub ips_estimated: std::result::Result<Vec<f32>, String>,
    /// The estimates with the harvested propensities, or why there are none (logs without the
    /// logging policy's shuffles).
    pub ips_harvested: std::result::Result<Vec<f32>, String>,
    /// The simulator's examination at ranks 1..=shown (None under cascade and DCM) and the
    /// estimate, relative to rank 1.
    pub true_propensities: Option<Vec<f64>>,
    /// None at a rank no session showed: unmeasured. None as a whole where EM gave no estimate
    /// (`ips_estimated` says why).
    pub estimated_propensities: Option<Vec<Option<f64>>>,
    /// Intervention harvesting's, where the logs allow it.
    pub harvested_propensities: Option<Vec<Option<f64>>>,
    pub sessions: usize,
    /// Training queries without any click: no method that learns from clicks trains on them.
    pub queries_without_click: usize,
    pub training_queries: usize,
}

impl ClickLabels {
    /// The estimates of `table`, whose documents are the training split's, in its order
    /// ([`matched`]).
    pub fn new(table: Arc<ClickTable>) -> Result<ClickLabels> {
        let estimated = em_propensities(&table).map_err(|e| e.to_string());
        let harvested = harvested_propensities(&table).map_err(|e| e.to_string());
        let to_f32 = |r: Vec<f64>| r.into_iter().map(|v| v as f32).collect::<Vec<f32>>();
        // A rank never shown has no click to weigh.
        let weights = |t: &[Option<f64>]| t.iter().map(|t| t.unwrap_or(1.0)).collect::<Vec<_>>();
        let naive = to_f32(relevance(&table, &vec![1.0; table.shown]));
        let groups = table.group_offsets.len().saturating_sub(1);
        let queries_without_click = (0..groups)
            .filter(|&g| {
                naive[table.group_offsets[g]..table.group_offsets[g + 1]]
                    .iter()
                    .all(|&r| r == 0.0)
            })
            .count();
        Ok(ClickLabels {
            ips: table
                .examination
                .as_ref()
                .map(|e| to_f32(relevance(&table, e))),
            ips_estimated: estimated
                .as_ref()
                .map(|e| to_f32(relevance(&table, &weights(e))))
                .map_err(Clone::clone),
            ips_harvested: harvested
                .as_ref()
                .map(|h| to_f32(relevance(&table, &weights(h))))
                .map_err(Clone::clone),
            harvested_propensities: harvested.ok(),
            naive,
            true_propensities: table.examination.clone(),
            estimated_propensities: estimated.ok(),
            sessions: table.sessions,
            queries_without_click,
            training_queries: groups,
            table,
        })
    }

    /// What the reports say of the clicks: `results.json`'s `clicks`.
    pub fn report_json(&self) -> serde_json::Value {
        serde_json::json!({
            "sessions": self.sessions,
            "true_propensities": self.true_propensities,
            "estimated_propensities": self.estimated_propensities,
            "estimated_propensities_null": match &self.ips_estimated {
                Ok(_) => "a rank no session showed: nothing was measured there".to_string(),
                Err(why) => format!("EM gave no estimate: {why}"),
            },
            "estimator": format!("EM under the position-based model, one attractiveness per query-document pair, {EM_ITERATIONS} iterations, relative to rank 1"),
            "harvested_propensities": self.harvested_propensities,
            "harvested_propensities_are": "intervention harvesting (Agarwal et al., WSDM 2019): each pair of ranks compared on the documents the logging ranker showed at both, the ratios fit by weighted least squares on log theta, relative to rank 1; null without the logging policy's shuffles",
            "training_queries": self.training_queries,
            "queries_without_click": self.queries_without_click,
            "queries_without_click_treatment": "left out of the training of every method that learns from clicks (no click: no target and no pair)",
            "model_selection": "every method's epoch is chosen by the validation split's NDCG@8 on y, as for every other method; all are scored on the test split's graded relevance (the truth the clicks stand for) and on y",
        })
    }
}

/// How many EM iterations the two-tower model runs after each of the ranker's epochs (it starts
/// from the previous epoch's fit).
pub const TWO_TOWER_EM_ITERATIONS: usize = 20;

/// A propensity model learned with the ranker: DLA's or the two-tower model's. Both run on the
/// host from the ranker's scores, so the ranker's step is the same on either engine, and every
/// propensity starts at 1 (the naive clicks).
///
/// - **DLA learns at every step**, as in the paper: before each step the ranker scores its batch,
///   the propensity model learns from those scores ([`observe`](PropensityTower::observe)), and
///   the batch's labels are weighted by the propensities that result
///   ([`labels_into`](PropensityTower::labels_into)).
/// - **Two-tower learns between epochs**: the ranker trains one epoch on the labels the model
///   gives; EM then fits the towers to the ranker's scores on the whole training split
///   ([`fit`](PropensityTower::fit)), which gives the next epoch's labels.
///
/// **DLA** (Ai et al., SIGIR 2018) pairs two inverse weightings. The ranker learns the clicks
/// weighted by the inverse of the propensities (IPW, as [`relevance`]); the propensity model
/// learns the clicks weighted by the inverse of the ranker's relevance (IRW),
/// `rho = softmax(f)` over the query. DLA's propensity loss, a softmax over ranks whose
/// target is each click weighted by `rho_top / rho_d` (the document shown at rank 1 against the
/// clicked one), is minimised by `theta_k / theta_1 = sum(clicks at k weighted) / sum(clicks at
/// 1 weighted)`. Summed over a query's sessions, `rho_top` is its expectation `A_q`, the mean
/// relevance of the documents its sessions showed at rank 1, and each query's clicks at rank 1
/// are scaled to its impressions at rank k, so that queries with fewer documents than ranks
/// weigh both sides alike. When `exp(f)` is proportional to the attractiveness (what the
/// softmax loss learns), the estimate is unbiased for the position-based model's theta. No
/// click weighs more than `1 / MIN_PROPENSITY` (1000) times its query's rank-1 relevance
/// (`rho_top / rho_d` is capped there), so a document the ranker all but rules out cannot carry
/// the estimate alone. The sums are kept per query: each step replaces the share of the queries
/// in its batch with one from their new scores (a query not yet scored has no share), so the
/// propensities follow the ranker step by step from sums over every query scored so far.
///
/// **Two-tower** (PAL, Guo et al., RecSys 2019, fitted as the regression-EM of Wang et al.,
/// WSDM 2018): a click at rank k of document d has probability `theta_k * gamma_d`, the position
/// tower theta (one value per rank) times the relevance tower `gamma_d = sigmoid(a * f_d + b)`,
/// the ranker's standardised score calibrated by two parameters. EM as in [`em_propensities`]
/// with gamma given by the tower: the E-step gives each skip's posterior of examination and of
/// relevance; the M-step sets theta to the expected examined shares and fits (a, b) by Newton's
/// method to the posterior relevance ([`TWO_TOWER_EM_ITERATIONS`] rounds, from the previous
/// epoch's fit). The ranker then learns the clicks with the position tower's factor removed,
/// each weighted by `1 / theta_k` per session as in [`relevance`], and serves alone: the position
/// tower is dropped. (Training the ranker on each impression's posterior relevance instead made
/// it worse epoch after epoch on MQ2008: a skip at a rank seldom examined keeps the ranker's own
/// belief as its target.)
#[derive(Debug, Clone)]
pub struct PropensityTower {
    label: ClickLabel,
    table: Arc<ClickTable>,
    /// The propensities in force: relative to rank 1 for DLA, the tower's own for two-tower.
    theta: Vec<f64>,
    /// The two-tower relevance tower's (a, b) on standardised scores.
    calibration: [f64; 2],
    /// Whether the model has learned from scores yet.
    fitted: bool,
    /// DLA's sums per query, `2 * shown` each (the clicks at each rank weighted, then rank 1's
    /// scaled to each rank's impressions), from the query's latest scores; empty until scored.
    dla_shares: Vec<Option<Box<[f64]>>>,
    /// DLA's sums over every query scored so far: the first `shown` over the last.
    dla_sums: Vec<f64>,
}

impl PropensityTower {
    /// `label`'s model (DLA or two-tower) on the clicks of `table`, whose documents are the
    /// training split's in its order; every propensity starts at 1.
    pub fn new(label: ClickLabel, table: Arc<ClickTable>) -> PropensityTower {
        debug_assert!(label.learns_propensities());
        let groups = table.group_offsets.len().saturating_sub(1);
        PropensityTower {
            label,
            theta: vec![1.0; table.shown],
            dla_shares: vec![None; if label == ClickLabel::Dla { groups } else { 0 }],
            dla_sums: vec![0.0; 2 * table.shown],
            table,
            calibration: [0.0, 0.0],
            fitted: false,
        }
    }

    /// Whether the model learns at every step of the ranker ([`observe`](Self::observe)) rather
    /// than between its epochs ([`fit`](Self::fit)).
    pub fn learns_per_step(&self) -> bool {
        self.label == ClickLabel::Dla
    }

    /// DLA's step: learns from the ranker's `scores` of the query groups `groups` of the training
    /// split (the documents of `groups[i]` are `scores[offsets[i]..offsets[i + 1]]`, as a
    /// ranking batch holds them).
    pub fn observe(&mut self, groups: &[usize], offsets: &[usize], scores: &[f32]) {
        debug_assert!(self.learns_per_step());
        let t = Arc::clone(&self.table);
        let shown = t.shown;
        let mut rho = Vec::new();
        for (&g, at) in groups.iter().zip(offsets.windows(2)) {
            let docs = t.group_offsets[g]..t.group_offsets[g + 1];
            debug_assert_eq!(docs.len(), at[1] - at[0]);
            let share = dla_share(&t, docs, &scores[at[0]..at[1]], &mut rho);
            for (sum, old) in self
                .dla_sums
                .iter_mut()
                .zip(self.dla_shares[g].iter().flatten())
            {
                *sum -= old;
            }
            for (sum, new) in self.dla_sums.iter_mut().zip(share.iter().flatten()) {
                *sum += new;
            }
            self.dla_shares[g] = share;
        }
        let (at_k, at_first) = self.dla_sums.split_at(shown);
        self.theta = at_k
            .iter()
            .zip(at_first)
            // A rank whose sum is not above rounding (no query scored so far clicked it) keeps 1.
            .map(|(&a, &f)| if f > 1e-12 { a.max(0.0) / f } else { 1.0 })
            .collect();
        self.fitted = true;
    }

    /// The labels y of the training documents of `groups` (laid out as in
    /// [`observe`](Self::observe)) under the propensities in force, into `labels`.
    pub fn labels_into(&self, groups: &[usize], offsets: &[usize], labels: &mut [f32]) {
        let t = &*self.table;
        let propensity = self.clamped();
        for (&g, at) in groups.iter().zip(offsets.windows(2)) {
            let docs = t.group_offsets[g]..t.group_offsets[g + 1];
            for (y, r) in labels[at[0]..at[1]]
                .iter_mut()
                .zip(group_relevance(t, docs, &propensity))
            {
                *y = label_of(r);
            }
        }
    }

    /// The propensities in force, relative to rank 1: None at a rank no session showed.
    pub fn propensities(&self) -> Vec<Option<f64>> {
        let shown = self.shown_ranks();
        let first = self.theta[0].max(f64::MIN_POSITIVE);
        self.theta
            .iter()
            .zip(shown)
            .map(|(&t, shown)| shown.then_some(t / first))
            .collect()
    }

    /// Learns from the ranker's `scores` of the training documents (one per document, in the
    /// table's order) and returns the labels y of the ranker's next epoch.
    pub fn fit(&mut self, scores: &[f32]) -> Vec<f32> {
        debug_assert_eq!(scores.len(), self.table.n_docs());
        let relevance = match self.label {
            ClickLabel::Dla => self.fit_dla(scores),
            _ => self.fit_two_tower(scores),
        };
        self.fitted = true;
        relevance.into_iter().map(label_of).collect()
    }

    /// Whether each rank was shown at all.
    fn shown_ranks(&self) -> Vec<bool> {
        let t = &self.table;
        (0..t.shown)
            .map(|k| (0..t.n_docs()).any(|d| t.of(d).0[k] > 0))
            .collect()
    }

    /// DLA's inverse relevance weighting from the scores of every query, then its inverse
    /// propensity weighting.
    fn fit_dla(&mut self, scores: &[f32]) -> Vec<f64> {
        let offsets = self.table.group_offsets.clone();
        let groups: Vec<usize> = (0..offsets.len().saturating_sub(1)).collect();
        self.observe(&groups, &offsets, scores);
        relevance(&self.table, &self.clamped())
    }

    /// The propensities as weights: a rank never clicked has no click to weigh, and none weighs
    /// more than `1 / MIN_PROPENSITY` times rank 1's.
    fn clamped(&self) -> Vec<f64> {
        let first = self.theta[0].max(f64::MIN_POSITIVE);
        self.theta
            .iter()
            .map(|&t| (t / first).max(MIN_PROPENSITY))
            .collect()
    }

    /// The two-tower model's EM, from the previous epoch's fit.
    fn fit_two_tower(&mut self, scores: &[f32]) -> Vec<f64> {
        let t = &*self.table;
        let (shown, n_docs) = (t.shown, t.n_docs());
        // Standardised scores, so that (a, b) carry over between epochs.
        let n = scores.len().max(1) as f64;
        let mean = scores.iter().map(|&s| s as f64).sum::<f64>() / n;
        let var = scores
            .iter()
            .map(|&s| (s as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        let sd = var.sqrt().max(1e-12);
        let f: Vec<f64> = scores.iter().map(|&s| (s as f64 - mean) / sd).collect();
        if !self.fitted {
            // EM cannot leave theta = 1 (every skip would be unattractive for certain).
            self.theta = vec![0.5; shown];
        }
        let impressions: Vec<f64> = (0..n_docs)
            .map(|d| t.of(d).0.iter().map(|&n| n as f64).sum())
            .collect();
        let impressions_at: Vec<f64> = (0..shown)
            .map(|k| (0..n_docs).map(|d| t.of(d).0[k] as f64).sum())
            .collect();
        let mut relevant = vec![0f64; n_docs];
        for _ in 0..TWO_TOWER_EM_ITERATIONS {
            let examined = self.two_tower_e_step(&f, &mut relevant);
            for k in 0..shown {
                if impressions_at[k] > 0.0 {
                    self.theta[k] = (examined[k] / impressions_at[k]).clamp(1e-9, 1.0);
                }
            }
            self.calibration = newton_logistic(self.calibration, &f, &relevant, &impressions);
        }
        // The ranker learns the clicks with the position tower's factor removed.
        relevance(t, &self.clamped())
    }

    /// The E-step: each document's expected relevant impressions into `relevant`; returns the
    /// expected examined impressions at each rank.
    fn two_tower_e_step(&self, f: &[f64], relevant: &mut [f64]) -> Vec<f64> {
        let t = &*self.table;
        let [a, b] = self.calibration;
        let mut examined = vec![0f64; t.shown];
        for (d, r) in relevant.iter_mut().enumerate() {
            let gamma = sigmoid(a * f[d] + b).clamp(1e-9, 1.0 - 1e-9);
            let (n, c) = t.of(d);
            *r = 0.0;
            for k in 0..t.shown {
                if n[k] == 0 {
                    continue;
                }
                let theta = self.theta[k];
                let (n, c) = (n[k] as f64, c[k] as f64);
                let skipped = (1.0 - theta * gamma).max(1e-12);
                examined[k] += c + (n - c) * theta * (1.0 - gamma) / skipped;
                *r += c + (n - c) * (1.0 - theta) * gamma / skipped;
            }
        }
        examined
    }
}

/// One query's share of DLA's sums from the ranker's `scores` of its documents `docs`, `2 *
/// shown` values: its clicks at each rank weighted by `A_q / rho_d` (capped at `1 /
/// MIN_PROPENSITY`), then its clicks at rank 1 weighted alike and scaled to its impressions at
/// each rank; None when no session showed the query.
fn dla_share(
    t: &ClickTable,
    docs: std::ops::Range<usize>,
    scores: &[f32],
    rho: &mut Vec<f64>,
) -> Option<Box<[f64]>> {
    let shown = t.shown;
    softmax_into(scores, rho);
    let impressions_at = |k: usize| -> f64 { docs.clone().map(|d| t.of(d).0[k] as f64).sum() };
    let sessions = impressions_at(0);
    if sessions == 0.0 {
        return None;
    }
    let top: f64 = docs
        .clone()
        .zip(rho.iter())
        .map(|(d, r)| r * t.of(d).0[0] as f64)
        .sum::<f64>()
        / sessions;
    let mut weighted = vec![0f64; shown];
    for (d, &r) in docs.clone().zip(rho.iter()) {
        let weight = (top / r.max(f64::MIN_POSITIVE)).min(1.0 / MIN_PROPENSITY);
        for (w, &c) in weighted.iter_mut().zip(t.of(d).1) {
            *w += c as f64 * weight;
        }
    }
    let mut share = vec![0f64; 2 * shown].into_boxed_slice();
    for k in 0..shown {
        let n = impressions_at(k);
        if n > 0.0 {
            share[k] = weighted[k];
            share[shown + k] = weighted[0] * n / sessions;
        }
    }
    Some(share)
}

/// 1 / (1 + e^-x) by libm: the same bits on every target (the page's wasm and native).
fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + libm::exp(-x))
    } else {
        let e = libm::exp(x);
        e / (1.0 + e)
    }
}

/// The softmax of `scores` into `out`, in f64.
fn softmax_into(scores: &[f32], out: &mut Vec<f64>) {
    let max = scores.iter().fold(f32::NEG_INFINITY, |m, &s| m.max(s)) as f64;
    out.clear();
    out.extend(scores.iter().map(|&s| libm::exp(s as f64 - max)));
    let sum: f64 = out.iter().sum();
    out.iter_mut().for_each(|v| *v /= sum);
}

/// One Newton step of the logistic regression `sigmoid(a f + b)` on `positives` of `trials`
/// per document (documents without trials weigh nothing), from `(a, b)`.
fn newton_logistic([a, b]: [f64; 2], f: &[f64], positives: &[f64], trials: &[f64]) -> [f64; 2] {
    // Gradient g and the negated Hessian h of the log-likelihood.
    let (mut g, mut h) = ([0f64; 2], [0f64; 3]);
    for ((&f, &y), &n) in f.iter().zip(positives).zip(trials) {
        if n == 0.0 {
            continue;
        }
        let p = sigmoid(a * f + b);
        let residual = y - n * p;
        let w = n * p * (1.0 - p);
        g[0] += residual * f;
        g[1] += residual;
        h[0] += w * f * f;
        h[1] += w * f;
        h[2] += w;
    }
    // A small ridge keeps the step finite when every score is alike.
    let (h00, h01, h11) = (h[0] + 1e-9, h[1], h[2] + 1e-9);
    let det = h00 * h11 - h01 * h01;
    if !(det.is_finite() && det > 0.0) {
        return [a, b];
    }
    [
        a + (h11 * g[0] - h01 * g[1]) / det,
        b + (h00 * g[1] - h01 * g[0]) / det,
    ]
}

/// The training split with `label`'s estimates as its labels y (gain `2^y - 1` = the estimate)
/// and its positive groups those with an estimate above 0. The features stay `train`'s own: the
/// trainer reads them through the split's inputs. Full information needs no clicks; the others
/// need the clicks by rank of logs simulated here.
pub fn training_set(
    label: ClickLabel,
    method: &str,
    train: &RankingSet,
    clicks: Option<&ClickLabels>,
) -> Result<RankingSet> {
    // Clicks given one a row (Python's position=) are the rows' y: no true grades beside them.
    let grades_are_clicks = clicks.is_some_and(|c| c.table.from_rows);
    let clicks = || {
        clicks.ok_or_else(|| {
            Error::Config(format!(
                "{method} learns from clicks by displayed rank: compare on a LETOR file or MQ2008 with --privileged logs, which simulates them, or on files data simulate-logs wrote with their impressions log (FILE.impressions.tsv, named by the sidecar), or give each row's displayed position beside its click (Python's fit(..., position=)); prepared splits of --prepared-cache written without their clicks (by an older version) hold none: delete TRAIN.*.drprep to prepare again"
            ))
        })
    };
    let estimates: Vec<f32> = match label {
        // DLA and two-tower start from the naive clicks: their propensities start at 1.
        ClickLabel::Naive | ClickLabel::Dla | ClickLabel::TwoTower => clicks()?.naive.clone(),
        ClickLabel::Ips => clicks()?.ips.clone().ok_or_else(|| {
            Error::Config(format!(
                "{method} weighs clicks by the true examination by rank, which only logs simulated under the position-based model have (--click-model pbm); logs simulated under cascade or DCM, a user's logs (data aggregate-logs) and positions given beside clicks have none: compare ips-estimated, which estimates the propensities from the clicks"
            ))
        })?,
        ClickLabel::IpsEstimated => clicks()?
            .ips_estimated
            .clone()
            .map_err(|why| Error::Data(format!("{method}: {why}")))?,
        ClickLabel::IpsHarvested => clicks()?
            .ips_harvested
            .clone()
            .map_err(|why| Error::Data(format!("{method}: {why}")))?,
        ClickLabel::FullInformation if grades_are_clicks => {
            return Err(Error::Config(format!(
                "{method} trains on the true grades, and the rows given with position= hold clicks as y, with no grades beside them: it would be naive under another name; train no-distillation on the grades (y without position=) for the upper bound"
            )))
        }
        ClickLabel::FullInformation => train
            .grades
            .iter()
            .map(|&g| libm::exp2(g as f64) as f32 - 1.0)
            .collect(),
    };
    let labels: Vec<f32> = estimates.iter().map(|&r| label_of(r as f64)).collect();
    let positive_group = (0..train.n_groups())
        .map(|g| labels[train.group(g)].iter().any(|&y| y > 0.0))
        .collect();
    Ok(RankingSet {
        regular: Vec::new().into(),
        d_x: train.d_x,
        privileged: Vec::new().into(),
        d_z: train.d_z,
        grades: train.grades.clone(),
        labels,
        group_offsets: train.group_offsets.clone(),
        positive_group,
        qids: train.qids.clone(),
    })
}

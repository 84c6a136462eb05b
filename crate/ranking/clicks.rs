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
        return Err(Error::Data(
            "the logs have no click at displayed rank 1, against which every rank's propensity is measured: there is nothing to estimate them from (raise --sessions or --click-noise)".into(),
        ));
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
    if let Some((k, t)) = theta
        .iter()
        .enumerate()
        .find_map(|(k, t)| t.filter(|&t| t < MIN_PROPENSITY).map(|t| (k, t)))
    {
        return Err(Error::Data(format!(
            "the propensity estimated at displayed rank {} is {t:.2e}, below {MIN_PROPENSITY} of rank 1's: its clicks would weigh without bound; the logs hold too few clicks at that rank (raise --sessions, or --shown fewer documents)",
            k + 1
        )));
    }
    Ok(theta)
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
        let sessions: f64 = (g[0]..g[1]).map(|d| table.of(d).0[0] as f64).sum();
        out.extend((g[0]..g[1]).map(|d| {
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
        }));
    }
    out
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
    /// The true grades, gains `2^g - 1`.
    FullInformation,
}

/// The relevance estimates of the training split's documents for every [`ClickLabel`], with the
/// propensities they used: computed once when the data are prepared, read by both engines and
/// every seed. They travel with the prepared data (the page's workers read them as JSON).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClickLabels {
    /// Per training document, in the training split's order.
    pub naive: Vec<f32>,
    /// None where the click model has no examination by rank alone (cascade, DCM).
    pub ips: Option<Vec<f32>>,
    pub ips_estimated: Vec<f32>,
    /// The simulator's examination at ranks 1..=shown (None under cascade and DCM) and the
    /// estimate, relative to rank 1.
    pub true_propensities: Option<Vec<f64>>,
    /// None at a rank no session showed: unmeasured.
    pub estimated_propensities: Vec<Option<f64>>,
    pub sessions: usize,
    /// Training queries without any click: no method that learns from clicks trains on them.
    pub queries_without_click: usize,
    pub training_queries: usize,
}

impl ClickLabels {
    /// The estimates of `table`, whose documents are the training split's, in its order
    /// ([`matched`]).
    pub fn new(table: &ClickTable) -> Result<ClickLabels> {
        let estimated = em_propensities(table)?;
        let to_f32 = |r: Vec<f64>| r.into_iter().map(|v| v as f32).collect::<Vec<f32>>();
        let naive = to_f32(relevance(table, &vec![1.0; table.shown]));
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
                .map(|e| to_f32(relevance(table, e))),
            // A rank never shown has no click to weigh.
            ips_estimated: to_f32(relevance(
                table,
                &estimated
                    .iter()
                    .map(|t| t.unwrap_or(1.0))
                    .collect::<Vec<_>>(),
            )),
            naive,
            true_propensities: table.examination.clone(),
            estimated_propensities: estimated,
            sessions: table.sessions,
            queries_without_click,
            training_queries: groups,
        })
    }

    /// What the reports say of the clicks: `results.json`'s `clicks`.
    pub fn report_json(&self) -> serde_json::Value {
        serde_json::json!({
            "sessions": self.sessions,
            "true_propensities": self.true_propensities,
            "estimated_propensities": self.estimated_propensities,
            "estimated_propensities_null": "a rank no session showed: nothing was measured there",
            "estimator": format!("EM under the position-based model, one attractiveness per query-document pair, {EM_ITERATIONS} iterations, relative to rank 1"),
            "training_queries": self.training_queries,
            "queries_without_click": self.queries_without_click,
            "queries_without_click_treatment": "left out of the training of naive, ips and ips-estimated (no click: no target and no pair)",
            "model_selection": "every method's epoch is chosen by the validation split's NDCG@8 on y, as for every other method; all are scored on the test split's graded relevance (the truth the clicks stand for) and on y",
        })
    }
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
    let clicks = || {
        clicks.ok_or_else(|| {
            Error::Config(format!(
                "{method} learns from clicks by displayed rank: compare on a LETOR file or MQ2008 with --privileged logs, which simulates them, or on files data simulate-logs wrote with their impressions log (FILE.impressions.tsv, named by the sidecar); a prepared-splits file read back from --prepared-cache holds none"
            ))
        })
    };
    let estimates: Vec<f32> = match label {
        ClickLabel::Naive => clicks()?.naive.clone(),
        ClickLabel::Ips => clicks()?.ips.clone().ok_or_else(|| {
            Error::Config(format!(
                "{method} weighs clicks by the simulator's true examination by rank, which only the position-based model has (--click-model pbm); compare ips-estimated under cascade and DCM"
            ))
        })?,
        ClickLabel::IpsEstimated => clicks()?.ips_estimated.clone(),
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

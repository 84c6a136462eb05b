//! The methods compared in the PFD paper's Table 2 (spec §4) and Ranking Distillation (spec §6).
//!
//! | method | teacher input | student |
//! | --- | --- | --- |
//! | no-distillation | (none) | f(x) on S_label, data loss only |
//! | self-distillation | x | f(x), PFD Eq. 1 |
//! | GenD | z | f(x), Eq. 1 |
//! | PFD | x and z | f(x), Eq. 1 |
//! | multi-teacher PFD | x and one privileged subset each | f(x), teacher loss averaged |
//! | Ranking Distillation | x, larger model | f(x) + alpha_RD * L_D on the teacher's top-K unlabeled |
//!
//! Every teacher is trained on S_label only, its logits on the training documents computed once and
//! reused; the student never sees z.

use crate::data::prepare::RankingSet;
use crate::ranking::metrics;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    NoDistillation,
    SelfDistillation,
    #[serde(rename = "gend")]
    GenD,
    Pfd,
    MultiTeacherPfd,
    RankingDistillation,
}

impl Method {
    pub const ALL: [Method; 6] = [
        Method::NoDistillation,
        Method::SelfDistillation,
        Method::GenD,
        Method::Pfd,
        Method::MultiTeacherPfd,
        Method::RankingDistillation,
    ];

    /// The name used in tables, files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Method::NoDistillation => "no-distillation",
            Method::SelfDistillation => "self-distillation",
            Method::GenD => "gend",
            Method::Pfd => "pfd",
            Method::MultiTeacherPfd => "multi-teacher-pfd",
            Method::RankingDistillation => "ranking-distillation",
        }
    }

    pub fn parse(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|m| m.name() == name)
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How Ranking Distillation weighs the teacher's top-K documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RdWeighting {
    /// 1/K each (the authors found it worst).
    Equal,
    /// w^a_r = exp(-r/lambda), normalised.
    Position,
    /// w^b_r = max(0, tanh(mu * (rhat_r - r))), normalised; rhat = the student's current rank.
    Discrepancy,
    /// w^a for the first `hybrid_epochs` epochs, then w^a * w^b normalised (the authors' best).
    Hybrid,
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RdConfig {
    pub k: usize,
    pub lambda: f64,
    pub mu: f64,
    pub alpha_rd: f64,
    pub weighting: RdWeighting,
    pub hybrid_epochs: usize,
}

impl Default for RdConfig {
    fn default() -> Self {
        RdConfig {
            k: 10,
            lambda: 1.0,
            mu: 0.1,
            alpha_rd: 1.0,
            weighting: RdWeighting::Hybrid,
            hybrid_epochs: 2,
        }
    }
}

/// The teacher's top-K unlabeled documents of every training group, best first. Unlabeled: the
/// documents with y = 0 (no click is not a judgement), which includes every document of a negative
/// group.
pub struct RdTargets {
    pub config: RdConfig,
    /// candidates[g]: indices within group g.
    pub candidates: Vec<Vec<usize>>,
}

impl RdTargets {
    pub fn new(set: &RankingSet, teacher_scores: &[f32], config: RdConfig) -> Self {
        let candidates = (0..set.n_groups())
            .map(|g| {
                let docs = set.group(g);
                let order = metrics::ranking(&teacher_scores[docs.clone()]);
                order
                    .into_iter()
                    .filter(|&i| set.labels[docs.start + i] == 0.0)
                    .take(config.k)
                    .collect()
            })
            .collect();
        RdTargets { config, candidates }
    }

    /// The candidates of the batch groups `groups` (training-set indices; group b of the batch
    /// starts at `offsets[b]`) and the weighting in force at `epoch`.
    pub fn batch(&self, groups: &[usize], offsets: &[usize], epoch: usize) -> RdBatch {
        let c = self.config;
        let scheme = match c.weighting {
            RdWeighting::Equal => RdScheme::Equal,
            RdWeighting::Position => RdScheme::Position,
            RdWeighting::Discrepancy => RdScheme::Discrepancy,
            RdWeighting::Hybrid if epoch <= c.hybrid_epochs => RdScheme::Position,
            RdWeighting::Hybrid => RdScheme::PositionTimesDiscrepancy,
        };
        let mut batch = RdBatch {
            scheme,
            lambda: c.lambda,
            mu: c.mu,
            offsets: vec![0],
            documents: Vec::new(),
        };
        for (b, &g) in groups.iter().enumerate() {
            let start = offsets[b];
            batch
                .documents
                .extend(self.candidates[g].iter().map(|&i| start + i));
            batch.offsets.push(batch.documents.len());
        }
        batch
    }

    /// The (batch document, weight) pairs of each batch group, from the student's current logits.
    pub fn batch_weights(
        &self,
        groups: &[usize],
        offsets: &[usize],
        logits: &[f32],
        epoch: usize,
    ) -> Vec<Vec<(usize, f32)>> {
        self.batch(groups, offsets, epoch).weights(offsets, logits)
    }
}

/// The weighting one batch applies: [`RdWeighting`] with the hybrid's epoch resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RdScheme {
    Equal,
    Position,
    Discrepancy,
    PositionTimesDiscrepancy,
}

/// Ranking Distillation in one batch: each batch group's candidates, the teacher's best first,
/// as batch documents, and the weighting in force. Both engines weigh them from the student's
/// logits with the same rule ([`RdBatch::weights`] on the CPU, `rd_weights` in
/// `shaders/distill.wgsl`).
#[derive(Debug, Clone)]
pub struct RdBatch {
    pub scheme: RdScheme,
    pub lambda: f64,
    pub mu: f64,
    /// Group b's candidates are `documents[offsets[b]..offsets[b + 1]]`.
    pub offsets: Vec<usize>,
    pub documents: Vec<usize>,
}

impl RdBatch {
    /// The (batch document, weight) pairs of each batch group (group b holds the documents
    /// `group_offsets[b]..group_offsets[b + 1]`). Candidate r (1-based) weighs
    /// w^a_r = exp(-r / lambda), w^b_r = max(0, tanh(mu (rhat_r - r))) with rhat_r the student's
    /// rank of it in its group (ties by document order), their product, or 1, as the scheme
    /// says, normalised to sum 1 per group; a group whose weights sum to 0 has none.
    pub fn weights(&self, group_offsets: &[usize], logits: &[f32]) -> Vec<Vec<(usize, f32)>> {
        let position = |r: usize| (-(r as f64) / self.lambda).exp();
        (0..self.offsets.len() - 1)
            .map(|b| {
                let group = &logits[group_offsets[b]..group_offsets[b + 1]];
                let candidates = &self.documents[self.offsets[b]..self.offsets[b + 1]];
                let discrepancy = |r: usize, doc: usize| {
                    let i = doc - group_offsets[b];
                    let f = group[i];
                    let rhat = 1 + group
                        .iter()
                        .enumerate()
                        .filter(|&(j, &o)| o > f || (o == f && j < i))
                        .count();
                    (self.mu * (rhat as f64 - r as f64)).tanh().max(0.0)
                };
                let raw: Vec<f64> = candidates
                    .iter()
                    .enumerate()
                    .map(|(r0, &doc)| {
                        let r = r0 + 1;
                        match self.scheme {
                            RdScheme::Equal => 1.0,
                            RdScheme::Position => position(r),
                            RdScheme::Discrepancy => discrepancy(r, doc),
                            RdScheme::PositionTimesDiscrepancy => position(r) * discrepancy(r, doc),
                        }
                    })
                    .collect();
                let sum: f64 = raw.iter().sum();
                if sum <= 0.0 {
                    return Vec::new();
                }
                candidates
                    .iter()
                    .zip(&raw)
                    .map(|(&doc, &w)| (doc, (w / sum) as f32))
                    .collect()
            })
            .collect()
    }
}

/// Hidden widths with about `factor` times the parameters of `widths` (each width scaled by
/// sqrt(factor)), for the Ranking Distillation teacher.
pub fn scale_widths(widths: &[usize], factor: f64) -> Vec<usize> {
    widths
        .iter()
        .map(|&w| ((w as f64) * factor.sqrt()).round().max(1.0) as usize)
        .collect()
}

/// Splits the privileged columns (indices into z) into `n` disjoint sets, round-robin over the
/// columns ordered as given, for multi-teacher PFD.
pub fn privileged_subsets(d_z: usize, n: usize) -> Vec<Vec<usize>> {
    let n = n.clamp(1, d_z.max(1));
    (0..n).map(|k| (k..d_z).step_by(n).collect()).collect()
}

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
use crate::metrics;
pub use crate::model::step::{RdBatch, RdScheme};

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
#[serde(deny_unknown_fields)]
pub struct RdConfig {
    pub k: usize,
    pub lambda: f64,
    pub mu: f64,
    pub alpha_rd: f64,
    pub weighting: RdWeighting,
    pub hybrid_epochs: usize,
}

/// The defaults are the table of settings' ([`crate::settings`], fields `rd.*`).
impl Default for RdConfig {
    fn default() -> Self {
        use crate::settings::default_of;
        RdConfig {
            k: default_of("rd.k"),
            lambda: default_of("rd.lambda"),
            mu: default_of("rd.mu"),
            alpha_rd: default_of("rd.alpha_rd"),
            weighting: default_of("rd.weighting"),
            hybrid_epochs: default_of("rd.hybrid_epochs"),
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

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
use crate::train::{fit, score, Engine, EpochLog, Event, Guidance, Split, TrainConfig};
use crate::Result;

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

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
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

    /// The (batch document, weight) pairs of each batch group, from the student's current logits.
    pub fn batch_weights(
        &self,
        groups: &[usize],
        offsets: &[usize],
        logits: &[f32],
        epoch: usize,
    ) -> Vec<Vec<(usize, f32)>> {
        let c = self.config;
        groups
            .iter()
            .enumerate()
            .map(|(b, &g)| {
                let start = offsets[b];
                let group_logits = &logits[start..offsets[b + 1]];
                let candidates = &self.candidates[g];
                let position = |r: usize| (-(r as f64) / c.lambda).exp();
                let discrepancy = |r: usize, i: usize| {
                    // The student's rank of document i (1-based; ties by document order).
                    let f = group_logits[i];
                    let rhat = 1 + group_logits
                        .iter()
                        .enumerate()
                        .filter(|&(j, &o)| o > f || (o == f && j < i))
                        .count();
                    (c.mu * (rhat as f64 - r as f64)).tanh().max(0.0)
                };
                let raw: Vec<f64> = candidates
                    .iter()
                    .enumerate()
                    .map(|(r0, &i)| {
                        let r = r0 + 1;
                        match c.weighting {
                            RdWeighting::Equal => 1.0,
                            RdWeighting::Position => position(r),
                            RdWeighting::Discrepancy => discrepancy(r, i),
                            RdWeighting::Hybrid if epoch <= c.hybrid_epochs => position(r),
                            RdWeighting::Hybrid => position(r) * discrepancy(r, i),
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
                    .map(|(&i, &w)| (start + i, (w / sum) as f32))
                    .collect()
            })
            .collect()
    }
}

/// One trained model and how it did.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ModelRun {
    pub best_epoch: usize,
    pub best_valid_ndcg: f64,
    /// Test metrics of the best-validation model.
    pub test: metrics::Report,
    /// Its test NDCG at [`metrics::NDCG_CUTOFFS`] on the graded relevance (gains 2^r - 1), beside
    /// `test`'s on the binary y.
    pub test_graded_ndcg: Vec<(usize, Option<f64>)>,
    pub history: Vec<EpochLog>,
    pub parameters: usize,
    /// Scoring time per 1,000 documents, milliseconds (CPU engine).
    pub ms_per_1k_docs: f64,
}

/// The training, validation and test splits with the inputs of one feature selection.
pub struct Splits<'a> {
    pub train: Split<'a>,
    pub valid: Split<'a>,
    pub test: Split<'a>,
}

/// Trains one model on `splits` with `guidance` on `engine` and evaluates it on the test split.
pub async fn run_model(
    engine: &Engine,
    splits: &Splits<'_>,
    config: &TrainConfig,
    guidance: &Guidance<'_>,
    on: &mut dyn FnMut(Event),
) -> Result<(crate::cpu::mlp::Mlp<f32>, ModelRun)> {
    let (train, valid, test) = (splits.train, splits.valid, Some(splits.test));
    let trained = match engine {
        Engine::Cpu => fit(train, valid, test, config, guidance, on)?,
        Engine::Gpu(gpu) => {
            crate::train::fit_gpu(gpu.clone(), train, valid, test, config, guidance, on).await?
        }
    };
    let started = crate::train::Instant::now();
    let scores = score(&trained.model, splits.test.inputs);
    let seconds = started.elapsed();
    let test = splits.test.set;
    let report = metrics::report(&scores, &test.labels, &test.group_offsets, config.idcg_zero);
    let grades: Vec<f32> = test.grades.iter().map(|&r| r as f32).collect();
    let test_graded_ndcg = metrics::NDCG_CUTOFFS
        .iter()
        .map(|&k| {
            (
                k,
                metrics::mean_ndcg(k, &scores, &grades, &test.group_offsets, config.idcg_zero),
            )
        })
        .collect();
    let run = ModelRun {
        best_epoch: trained.best_epoch,
        best_valid_ndcg: trained.best_valid_ndcg,
        test: report,
        test_graded_ndcg,
        history: trained.history,
        parameters: trained.model.n_parameters(),
        ms_per_1k_docs: 1000.0 * seconds * 1000.0 / test.n_docs().max(1) as f64,
    };
    Ok((trained.model, run))
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

/// The input matrix x | z[subset] of every document.
pub fn inputs_with_subset(set: &RankingSet, subset: &[usize]) -> Vec<f32> {
    let mut out = Vec::with_capacity(set.n_docs() * (set.d_x + subset.len()));
    for d in 0..set.n_docs() {
        out.extend_from_slice(&set.regular[d * set.d_x..(d + 1) * set.d_x]);
        out.extend(subset.iter().map(|&j| set.privileged[d * set.d_z + j]));
    }
    out
}

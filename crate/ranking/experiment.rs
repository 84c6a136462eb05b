//! `compare`: every chosen method over several seeds on one prepared dataset, as in the PFD paper's
//! Table 2. Teachers are trained once per seed and shared by the students that need them.

use crate::data::inputs::Inputs;
use crate::data::prepare::{FeatureView, Prepared, RankingSet};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::metrics;
use crate::metrics::mean_std;
use crate::model::Ensemble;
use crate::ranking::clicks::{ClickLabel, ClickLabels, PropensityTower};
use crate::ranking::distill::{
    ExternalScores, Method, RdConfig, RdTargets, Student, Teacher, TeacherInputs, TeacherSettings,
};
use crate::ranking::train::{fit_async, EpochLog, Event, Guidance, Split, TrainConfig};

/// A measurement that may be NaN (not measured) through JSON, which has no NaN: written as
/// null, and null read back as NaN. A run's JSON crosses between the page's workers and back
/// into the engine (`summarize_compare`), where a bare f64 refused the null ("invalid type:
/// unit value, expected f64") and a teacher given as scores could not be summarised.
pub mod nan_as_null {
    pub fn serialize<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_nan() {
            s.serialize_none()
        } else {
            s.serialize_f64(*v)
        }
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let v: Option<f64> = serde::Deserialize::deserialize(d)?;
        Ok(v.unwrap_or(f64::NAN))
    }
}

/// One trained model and how it did.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ModelRun {
    pub best_epoch: usize,
    /// NaN where nothing was measured (a teacher given as scores without a validation query
    /// that counts): null in JSON, read back as NaN ([`nan_as_null`]).
    #[serde(with = "nan_as_null")]
    pub best_valid_ndcg: f64,
    /// Test metrics of the best-validation model.
    pub test: metrics::Report,
    /// Its test NDCG at [`metrics::NDCG_CUTOFFS`] on the graded relevance (gains 2^r - 1), beside
    /// `test`'s on the binary y.
    pub test_graded_ndcg: Vec<(usize, Option<f64>)>,
    pub history: Vec<EpochLog>,
    /// Every member's parameters.
    pub parameters: usize,
    /// Models averaged ([`crate::model::Ensemble`]); 1 for one model.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub members: usize,
    /// An ensemble's second and later members: each one's epochs and the one kept (`history`
    /// and `best_epoch` are the first member's; `best_valid_ndcg` the whole model's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub later_members: Vec<crate::ranking::train::MemberRun>,
    /// Scoring time per 1,000 documents, milliseconds, on the engine that trained it; NaN for a
    /// teacher given as scores (no model to time), null in JSON ([`nan_as_null`]).
    #[serde(with = "nan_as_null")]
    pub ms_per_1k_docs: f64,
    /// The student's test NDCG@[`TESTED_K`] of each test query on y, in the test split's order
    /// (`None`: a query without a y = 1), for the paired tests; empty for teachers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_query: Vec<Option<f64>>,
    /// The same on the graded relevance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_query_graded: Vec<Option<f64>>,
    /// The model gives every document of each test query the same score: it does not rank, and
    /// its test figures are a random order's ([`Comparison::not_ranking`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ties_every_query: bool,
    /// A teacher trained elsewhere ([`ExternalScores`]): it has no epochs or parameters of
    /// ours, and its time is its scores' (none for scores read from files).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trained_elsewhere: bool,
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

/// The k of the NDCG whose per-query values are kept and tested: the PFD paper's NDCG@8.
pub const TESTED_K: usize = 8;

/// The training, validation and test splits with the inputs of one feature selection.
pub struct Splits<'a> {
    pub train: Split<'a>,
    pub valid: Split<'a>,
    pub test: Split<'a>,
}

/// Trains one model on `splits` with `guidance` on `engine` and evaluates it on the test split.
/// With `test_curve`, every epoch also scores the test split (the students' curves that the
/// reports plot); a teacher's test NDCG is measured once, after its training.
pub async fn run_model(
    engine: &Engine,
    splits: &Splits<'_>,
    config: &TrainConfig,
    guidance: &Guidance<'_>,
    test_curve: bool,
    on: &mut dyn FnMut(Event),
) -> Result<(Ensemble, ModelRun)> {
    let (train, valid) = (splits.train, splits.valid);
    let test = test_curve.then_some(splits.test);
    let trained = fit_async(engine, train, valid, test, config, guidance, on).await?;
    let started = crate::clock::Instant::now();
    let scores = engine
        .score_ensemble(&trained.model, splits.test.inputs)
        .await?;
    let seconds = started.elapsed();
    let test = splits.test.set;
    // Without a test split, the validation split stands in for it.
    let split = match std::ptr::eq(test, splits.valid.set) {
        true => "the validation split",
        false => "the test split",
    };
    crate::ranking::train::check_split_scores(&scores, test, split)?;
    let report = metrics::report(&scores, &test.labels, &test.group_offsets, config.idcg_zero);
    let grades: Vec<f32> = test.grades.iter().map(|&r| r as f32).collect();
    // The graded relevance as the binary: measured where some query holds two grades.
    let graded = metrics::report(&scores, &grades, &test.group_offsets, config.idcg_zero);
    let test_graded_ndcg = graded.ndcg;
    let per_query = if test_curve {
        metrics::ndcg_per_group(TESTED_K, &scores, &test.labels, &test.group_offsets)
    } else {
        Vec::new()
    };
    let per_query_graded = if test_curve {
        metrics::ndcg_per_group(TESTED_K, &scores, &grades, &test.group_offsets)
    } else {
        Vec::new()
    };
    let run = ModelRun {
        best_epoch: trained.best_epoch,
        best_valid_ndcg: trained.best_valid_ndcg,
        test: report,
        test_graded_ndcg,
        history: trained.history,
        parameters: trained.model.n_parameters(),
        members: trained.model.len(),
        later_members: trained.later_members,
        ms_per_1k_docs: 1000.0 * seconds * 1000.0 / test.n_docs().max(1) as f64,
        per_query,
        per_query_graded,
        ties_every_query: metrics::ties_every_group(&scores, &test.group_offsets),
        trained_elsewhere: false,
    };
    Ok((trained.model, run))
}

/// The most seeds a comparison takes: a paired test needs a few, and each trains every method.
pub const MAX_SEEDS: usize = 10_000;

/// A comparison's settings: a setup's fields of the same names ([`CompareConfig::of_setup`]),
/// with the engine it runs on.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CompareConfig {
    pub methods: Vec<Method>,
    /// Number of seeds (model initialisation and batch order); data preparation is fixed.
    pub seeds: usize,
    pub first_seed: u64,
    /// The student's (and, unless `teacher_widths` says otherwise, the teachers') configuration.
    #[serde(skip_deserializing)]
    pub train: TrainConfig,
    pub teacher_widths: Option<Vec<usize>>,
    /// The teachers' heads of attention (None: the student's).
    #[serde(default)]
    pub teacher_attention_heads: Option<usize>,
    /// Privileged subsets, one teacher each, for multi-teacher PFD.
    pub teachers: usize,
    /// The teachers' logits are divided by this before they become soft labels (Hinton et al.'s
    /// temperature; spec §4's T of the softmax teacher loss, here for every teacher loss): above 1
    /// softer targets, below 1 sharper. A teacher trained elsewhere has logits of any scale
    /// (LightGBM's raw scores), which this sets right.
    pub teacher_temperature: f64,
    pub rd: RdConfig,
    /// The Ranking Distillation teacher has about this many times the student's parameters.
    pub rd_teacher_factor: f64,
    /// Where the models train.
    #[serde(skip)]
    pub engine: Engine,
    /// How many jobs ([`CompareConfig::jobs_on`]) train side by side on the CPU engine, natively:
    /// None for one per core. The results are the same for any number: each job depends only on
    /// its methods and its seed. Read from the setup, never recorded with the results.
    #[serde(skip_serializing)]
    pub jobs: Option<usize>,
    /// A teacher trained elsewhere, standing for the trained teacher of every method it fits
    /// ([`ExternalScores::fits`]); its scores come with the prepared data.
    #[serde(skip)]
    pub external: Option<std::sync::Arc<ExternalScores>>,
    /// The setup names a teacher trained elsewhere: a comparison without its scores (a path that
    /// did not take them from the prepared data) is refused rather than run with teachers of its
    /// own.
    #[serde(skip)]
    pub external_named: bool,
    /// The training documents' relevance estimates from the logs' clicks, for the methods that
    /// learn from clicks ([`crate::ranking::clicks`]); they come with the prepared data.
    #[serde(skip)]
    pub clicks: Option<std::sync::Arc<ClickLabels>>,
}

/// The table of settings' defaults ([`crate::settings`]).
impl Default for CompareConfig {
    fn default() -> Self {
        CompareConfig {
            train: TrainConfig {
                patience: Some(crate::settings::default_of("patience")),
                ..TrainConfig::default()
            },
            ..crate::settings::defaults("")
        }
    }
}

impl CompareConfig {
    /// The comparison's settings of a setup, given as its whole JSON: each field, and each of its
    /// models' [`TrainConfig`], is the setup's field of the same name
    /// ([`crate::settings::read_fields`]). The engine is the CPU's until the caller sets it.
    pub fn of_setup(setup: &serde_json::Value) -> Result<CompareConfig> {
        let config: CompareConfig = crate::settings::read_fields(setup)?;
        Ok(CompareConfig {
            train: TrainConfig::of_setup(setup)?,
            ..config
        })
    }

    /// Checks the comparison against the prepared data: [`CompareConfig::validate_methods`], and
    /// a test split to compare on.
    pub fn validate(&self, p: &Prepared) -> Result<()> {
        self.validate_methods(p)?;
        if p.test.is_none() {
            return Err(Error::Config("compare needs a test split (--test)".into()));
        }
        Ok(())
    }

    /// Checks the training settings and what the methods need of the data.
    pub fn validate_methods(&self, p: &Prepared) -> Result<()> {
        self.validate_settings()?;
        let settings = self.teacher_settings(p.train.d_z);
        let needs_z: Vec<&str> = self
            .methods
            .iter()
            .filter(|m| {
                (m.entry().teachers)(&settings)
                    .iter()
                    .any(|t| t.inputs.sees_privileged())
            })
            .map(|m| m.entry().label)
            .collect();
        if let Some((last, rest)) = needs_z.split_last().filter(|_| p.train.d_z == 0) {
            let (names, verb) = match rest {
                [] => (last.to_string(), "needs"),
                _ => (format!("{} and {last}", rest.join(", ")), "need"),
            };
            return Err(Error::Config(format!(
                "{names} {verb} privileged features; the data have none{}",
                why_no_privileged(p)
            )));
        }
        if self.external_named && self.external.is_none() {
            return Err(Error::Config(
                "the setup names a teacher trained elsewhere (data.teacher), but its scores did not reach the comparison: this door does not take one".into(),
            ));
        }
        for &method in &self.methods {
            if let Student::Labels(label) = method.entry().student {
                self.check_click_method(method, label, p)?;
            }
            match &self.external {
                Some(external) => external.fits(method).map_err(Error::Config)?,
                None => (method.entry().check)(&settings).map_err(Error::Config)?,
            }
        }
        Ok(())
    }

    /// What a method that learns from clicks or grades needs: a ranking loss that takes graded
    /// labels, no global objective (they take binary labels), and, but for full information,
    /// the clicks by rank.
    fn check_click_method(&self, method: Method, label: ClickLabel, p: &Prepared) -> Result<()> {
        use crate::model::loss::LossKind;
        if !self.train.loss.entry().graded {
            return Err(Error::Config(format!(
                "{method} learns graded relevance estimates, and --loss {} learns y in {{0, 1}}: choose --loss {}",
                self.train.loss.name(),
                LossKind::graded_names()
            )));
        }
        if self.train.objective.is_some() {
            return Err(Error::Config(format!(
                "{method} learns graded relevance estimates, and a global objective learns binary labels: leave out --objective"
            )));
        }
        crate::ranking::clicks::training_set(label, method.name(), &p.train, self.clicks.as_deref())
            .map(drop)
    }

    /// The external teacher, when `method` learns from it rather than from teachers of its own.
    pub fn external_for(&self, method: Method) -> Option<&ExternalScores> {
        self.external
            .as_deref()
            .filter(|_| method.entry().student == Student::TeacherLoss)
            .filter(|_| method != Method::NoDistillation)
    }

    /// Checks the settings that need no data: the training settings, the number of seeds and
    /// methods, and Ranking Distillation's weights.
    pub fn validate_settings(&self) -> Result<()> {
        self.train.validate()?;
        if let Some(widths) = &self.teacher_widths {
            crate::ranking::train::check_hidden_layers(self.train.dropout, self.train.norm, widths)
                .map_err(|e| Error::Config(format!("{} (--teacher-widths)", e.message())))?;
        }
        if self.seeds > MAX_SEEDS {
            return Err(Error::Config(format!(
                "--seeds {}: at most {MAX_SEEDS} seeds (each trains every method once more)",
                self.seeds
            )));
        }
        if self.methods.is_empty() || self.seeds == 0 {
            return Err(Error::Config(
                "choose at least one method and one seed".into(),
            ));
        }
        if let Some(twice) = self
            .methods
            .iter()
            .enumerate()
            .find_map(|(i, m)| self.methods[..i].contains(m).then_some(m))
        {
            return Err(Error::Config(format!(
                "method {twice} is listed twice: list each method once (its seeds give its spread)"
            )));
        }
        if !(self.teacher_temperature >= 1e-6 && self.teacher_temperature <= 1e6) {
            return Err(Error::Config(format!(
                "teacher temperature {} must lie in [1e-6, 1e6]: the teachers' logits are divided by it",
                crate::error::shown(self.teacher_temperature)
            )));
        }
        // Finite and in a range where the losses stay finite: a weight of 1e300 would diverge
        // and blame the learning rate.
        if self.rd.k == 0
            || !(self.rd.lambda > 0.0 && self.rd.lambda <= 1e6)
            || !(self.rd.mu.is_finite() && self.rd.mu >= 0.0 && self.rd.mu <= 1e6)
            || !(self.rd.alpha_rd > 0.0 && self.rd.alpha_rd <= 1e3)
            || !(self.rd_teacher_factor >= 1.0 && self.rd_teacher_factor <= 1e3)
        {
            return Err(Error::Config("Ranking Distillation needs K >= 1, lambda in (0, 1e6], mu in [0, 1e6], alpha_RD in (0, 1000] and a teacher 1 to 1000 times as large as the student".into()));
        }
        Ok(())
    }
}

/// One job of a comparison: methods at one seed, trained together because some of their teachers
/// are the same model; most jobs hold one method.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Job {
    pub seed: u64,
    pub methods: Vec<Method>,
    /// The models it trains: its distinct teachers and its students' members (the longest jobs
    /// go first).
    pub models: usize,
}

impl CompareConfig {
    /// What the teachers depend on, on data with `d_z` privileged features.
    pub fn teacher_settings(&self, d_z: usize) -> TeacherSettings {
        TeacherSettings {
            widths: self
                .teacher_widths
                .clone()
                .unwrap_or_else(|| self.train.widths.clone()),
            attention_heads: self
                .teacher_attention_heads
                .unwrap_or(self.train.attention_heads),
            student_widths: self.train.widths.clone(),
            teachers: self.teachers,
            rd_teacher_factor: self.rd_teacher_factor,
            d_z,
        }
    }

    /// The teachers `method` trains, in order, on data with `d_z` privileged features: none
    /// where it learns from a teacher trained elsewhere ([`external_for`](Self::external_for)).
    pub fn teachers_of(&self, method: Method, d_z: usize) -> Vec<Teacher> {
        if self.external_for(method).is_some() {
            return Vec::new();
        }
        (method.entry().teachers)(&self.teacher_settings(d_z))
    }

    /// The comparison's jobs on data with `d_z` privileged features: each seed's methods, those
    /// that share a teacher in one job (the teacher trained once), the seeds in order and each
    /// job at the place of its first method. The results are those of one job per method: a
    /// shared teacher is the model each method would have trained.
    pub fn jobs_on(&self, d_z: usize) -> Vec<Job> {
        let teachers: Vec<Vec<Teacher>> = self
            .methods
            .iter()
            .map(|&m| self.teachers_of(m, d_z))
            .collect();
        // Methods that share a teacher, transitively, in one set, named by its first method.
        let n = self.methods.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(parent: &[usize], mut i: usize) -> usize {
            while parent[i] != i {
                i = parent[i];
            }
            i
        }
        for i in 0..n {
            for j in 0..i {
                if teachers[i].iter().any(|t| teachers[j].contains(t)) {
                    let (a, b) = (root(&parent, i), root(&parent, j));
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
        let groups: Vec<Vec<usize>> = (0..n)
            .filter(|&i| root(&parent, i) == i)
            .map(|r| (0..n).filter(|&i| root(&parent, i) == r).collect())
            .collect();
        let mut jobs = Vec::new();
        for s in 0..self.seeds as u64 {
            for group in &groups {
                let mut distinct: Vec<&Teacher> = Vec::new();
                for t in group.iter().flat_map(|&i| &teachers[i]) {
                    if !distinct.contains(&t) {
                        distinct.push(t);
                    }
                }
                jobs.push(Job {
                    seed: self.first_seed.wrapping_add(s),
                    methods: group.iter().map(|&i| self.methods[i]).collect(),
                    models: group.len() * self.train.ensemble + distinct.len(),
                });
            }
        }
        jobs
    }

    /// The method before `method` (in the comparison's order) whose teachers include `method`'s
    /// `k`-th, if any: the one whose job trains it ([`run_job`]); `method`'s run of it is a copy.
    pub fn teacher_trained_by(&self, method: Method, k: usize, d_z: usize) -> Option<Method> {
        let teacher = self.teachers_of(method, d_z).into_iter().nth(k)?;
        let i = self.methods.iter().position(|&m| m == method)?;
        self.methods[..i]
            .iter()
            .copied()
            .find(|&m| self.teachers_of(m, d_z).contains(&teacher))
    }

    /// What the reports say of the teachers trained once for two methods: one sentence per
    /// method whose teacher is another's, on data with `d_z` privileged features.
    pub fn shared_teachers(&self, d_z: usize) -> Vec<String> {
        let mut sentences = Vec::new();
        for &method in &self.methods {
            for (k, teacher) in self.teachers_of(method, d_z).iter().enumerate() {
                let Some(first) = self.teacher_trained_by(method, k, d_z) else {
                    continue;
                };
                let which = if self.teachers_of(method, d_z).len() > 1 {
                    format!("teacher {}", k + 1)
                } else {
                    "teacher".into()
                };
                sentences.push(format!(
                    "{method}'s {which} is {first}'s: the same model (it sees {}; widths {}) on the same data with the same settings and seed, trained once per seed",
                    teacher.inputs.words(),
                    teacher
                        .widths
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join("-")
                ));
            }
        }
        sentences
    }
}

/// One seed of one method: the student and the teacher(s) it learned from.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SeedRun {
    pub seed: u64,
    pub student: ModelRun,
    pub teachers: Vec<ModelRun>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct MethodRuns {
    pub method: Method,
    pub runs: Vec<SeedRun>,
}

impl MethodRuns {
    /// Each of `methods`, with no run yet.
    pub fn none_yet(methods: &[Method]) -> Vec<MethodRuns> {
        methods
            .iter()
            .map(|&method| MethodRuns {
                method,
                runs: Vec::new(),
            })
            .collect()
    }

    /// Mean and standard deviation (n - 1) over seeds of a student statistic.
    pub fn student_stat(&self, f: impl Fn(&ModelRun) -> f64) -> (f64, f64) {
        mean_std(&self.runs.iter().map(|r| f(&r.student)).collect::<Vec<_>>())
    }
    /// Mean and standard deviation of the first teacher's statistic (None without teachers).
    pub fn teacher_stat(&self, f: impl Fn(&ModelRun) -> f64) -> Option<(f64, f64)> {
        let v: Vec<f64> = self
            .runs
            .iter()
            .filter_map(|r| r.teachers.first().map(&f))
            .collect();
        (!v.is_empty()).then(|| mean_std(&v))
    }
    /// Mean and standard deviation over seeds of the students' test NDCG@k; None when it could
    /// not be measured (no test group with a y = 1).
    pub fn student_ndcg(&self, k: usize) -> Option<(f64, f64)> {
        let v: Option<Vec<f64>> = self.runs.iter().map(|r| ndcg(&r.student, k)).collect();
        v.filter(|v| !v.is_empty()).map(|v| mean_std(&v))
    }
    /// The same for the first teacher (None without teachers, or unmeasured).
    pub fn teacher_ndcg(&self, k: usize) -> Option<(f64, f64)> {
        let v: Option<Vec<f64>> = self
            .runs
            .iter()
            .filter_map(|r| r.teachers.first())
            .map(|t| ndcg(t, k))
            .collect();
        v.filter(|v| !v.is_empty()).map(|v| mean_std(&v))
    }
}

impl MethodRuns {
    /// Mean and standard deviation over seeds of the students' test NDCG@k on the graded
    /// relevance; None when no test group has a grade above 0 (or without runs).
    pub fn student_graded_ndcg(&self, k: usize) -> Option<(f64, f64)> {
        let v: Option<Vec<f64>> = self
            .runs
            .iter()
            .map(|r| graded_ndcg(&r.student, k))
            .collect();
        v.filter(|v| !v.is_empty()).map(|v| mean_std(&v))
    }
    /// The same for the first teacher.
    pub fn teacher_graded_ndcg(&self, k: usize) -> Option<(f64, f64)> {
        let v: Option<Vec<f64>> = self
            .runs
            .iter()
            .filter_map(|r| r.teachers.first())
            .map(|t| graded_ndcg(t, k))
            .collect();
        v.filter(|v| !v.is_empty()).map(|v| mean_std(&v))
    }
}

/// Test NDCG@k of a run on the graded relevance.
pub fn graded_ndcg(run: &ModelRun, k: usize) -> Option<f64> {
    run.test_graded_ndcg
        .iter()
        .find(|(c, _)| *c == k)
        .and_then(|(_, v)| *v)
}

/// Why a test NDCG is missing: the one way it can be.
pub const UNMEASURED: &str =
    "no test group holds documents of two different labels (a y = 1 beside a y = 0; a grade beside another for the graded NDCG), so test NDCG cannot be measured";

/// Test NDCG@k of a run; None when no test group has a relevant document (see [`UNMEASURED`]).
pub fn ndcg(run: &ModelRun, k: usize) -> Option<f64> {
    run.test.ndcg_at(k)
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Comparison {
    pub methods: Vec<MethodRuns>,
    /// Each method's student of the first seed: the model to carry away (it reads x only).
    #[serde(skip)]
    pub students: Vec<(Method, Ensemble)>,
}

impl Comparison {
    pub fn get(&self, m: Method) -> Option<&MethodRuns> {
        self.methods.iter().find(|r| r.method == m)
    }

    /// The pairs the paired tests compare, as (a, b) for the difference a - b: every method
    /// against no distillation, then each method against those its entry names (PFD against GenD
    /// and against self-distillation: the PFD paper's questions), those whose methods both ran.
    pub fn tested_pairs(&self) -> Vec<(Method, Method)> {
        let has = |m| self.get(m).is_some();
        let ran = || self.methods.iter().map(|r| r.method);
        let mut pairs: Vec<(Method, Method)> = ran()
            .filter(|&m| m != Method::BASELINE && has(Method::BASELINE))
            .map(|m| (m, Method::BASELINE))
            .collect();
        for m in ran() {
            for &other in m.entry().tested_against {
                if has(other) {
                    pairs.push((m, other));
                }
            }
        }
        pairs
    }

    /// The metric of the verdicts and of the sentences under the table: NDCG@8 on y, or on the
    /// graded relevance when a method learns from clicks (the true relevance the clicks stand
    /// for; y is then the logs' conversion).
    pub fn verdict_metric(&self) -> &'static str {
        let clicks = self
            .methods
            .iter()
            .any(|r| matches!(r.method.entry().student, Student::Labels(_)));
        if clicks {
            "graded_ndcg@8"
        } else {
            "ndcg@8"
        }
    }

    /// The propensities DLA and two-tower learned with their rankers, by method name: at each
    /// displayed rank, the mean over the seeds of those their best epoch trained on (null at a
    /// rank no session showed).
    pub fn learned_propensities(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut out = serde_json::Map::new();
        for runs in &self.methods {
            let per_seed: Vec<&Vec<Option<f64>>> = runs
                .runs
                .iter()
                .filter_map(|r| {
                    let best = r.student.best_epoch.checked_sub(1)?;
                    r.student.history.get(best)?.propensities.as_ref()
                })
                .collect();
            let Some(first) = per_seed.first() else {
                continue;
            };
            let mean: Vec<Option<f64>> = (0..first.len())
                .map(|k| {
                    let values: Option<Vec<f64>> = per_seed.iter().map(|p| p[k]).collect();
                    values.map(|v| v.iter().sum::<f64>() / v.len() as f64)
                })
                .collect();
            out.insert(runs.method.name().into(), serde_json::json!(mean));
        }
        out
    }

    /// The students' per-query test NDCG@[`TESTED_K`] of `method`, one list per seed: on y, or
    /// on the graded relevance.
    pub fn per_query(&self, method: Method, graded: bool) -> Vec<Vec<Option<f64>>> {
        self.get(method).map_or_else(Vec::new, |r| {
            r.runs
                .iter()
                .map(|run| match graded {
                    false => run.student.per_query.clone(),
                    true => run.student.per_query_graded.clone(),
                })
                .collect()
        })
    }

    /// A sentence for each model that does not rank (it gives every document of each test
    /// query the same score, [`ModelRun::ties_every_query`]), by method and seeds: its figures
    /// in the table are a random order's, not a model's. The same in every door.
    pub fn not_ranking(&self) -> Vec<String> {
        let mut sentences = Vec::new();
        for r in &self.methods {
            let seeds = |model: &dyn Fn(&SeedRun) -> bool| -> Vec<String> {
                r.runs
                    .iter()
                    .filter(|run| model(run))
                    .map(|run| run.seed.to_string())
                    .collect()
            };
            let models: [(&str, Vec<String>); 2] = [
                ("student", seeds(&|run| run.student.ties_every_query)),
                (
                    "teacher",
                    seeds(&|run| run.teachers.iter().any(|t| t.ties_every_query)),
                ),
            ];
            for (model, seeds) in models {
                if seeds.is_empty() {
                    continue;
                }
                let which = if seeds.len() == r.runs.len() {
                    "every seed".to_string()
                } else {
                    format!("seed {}", seeds.join(", "))
                };
                let label = r.method.entry().label;
                let mut chars = label.chars();
                let label: String = chars
                    .next()
                    .map(|c| c.to_uppercase().chain(chars).collect())
                    .unwrap_or_default();
                sentences.push(format!(
                    "{label}'s {model} ({which}) gives every document of each test query the same score: it does not rank, and its figures are a random order's"
                ));
            }
        }
        sentences
    }

    /// The paired tests of [`Comparison::tested_pairs`] on the students' test NDCG@8 on y
    /// (`ndcg@8`) and on the graded relevance (`graded_ndcg@8`), Holm-corrected within each
    /// metric (one table each), from `seed`. Pairs whose per-query figures were not kept (runs
    /// read from an older file) are left out.
    pub fn tests(&self, seed: u64) -> Vec<crate::stats::PairedTest> {
        let mut all = Vec::new();
        for (graded, metric) in [(false, "ndcg@8"), (true, "graded_ndcg@8")] {
            let mut tests: Vec<crate::stats::PairedTest> = self
                .tested_pairs()
                .into_iter()
                .filter_map(|(a, b)| {
                    let (pa, pb) = (self.per_query(a, graded), self.per_query(b, graded));
                    if pa.iter().chain(&pb).any(Vec::is_empty) {
                        return None;
                    }
                    crate::stats::paired_test(a.name(), b.name(), metric, &pa, &pb, seed).ok()
                })
                .collect();
            crate::stats::holm(&mut tests);
            all.extend(tests);
        }
        all
    }

    /// `per_query` of results.json: per method, per seed, each test query's NDCG@8 on y.
    pub fn per_query_json(&self, graded: bool) -> serde_json::Value {
        self.methods
            .iter()
            .map(|r| {
                (
                    r.method.name().to_string(),
                    serde_json::json!(self.per_query(r.method, graded)),
                )
            })
            .collect::<serde_json::Map<_, _>>()
            .into()
    }

    /// Per method: test `ndcg@K` (mean, std, per seed) of the students, the first teacher's
    /// `teacher_ndcg@8`, and every run: the `methods` object of `results.json`.
    pub fn methods_json(&self) -> serde_json::Value {
        let mut methods = serde_json::Map::new();
        for r in &self.methods {
            let mut m = serde_json::Map::new();
            // An unmeasurable figure is null, with the reason, never a 0.
            for k in crate::metrics::NDCG_CUTOFFS {
                let stat = r.student_ndcg(k);
                let per_seed: Vec<Option<f64>> =
                    r.runs.iter().map(|run| ndcg(&run.student, k)).collect();
                let mut entry = serde_json::json!({"mean": stat.map(|s| s.0), "std": stat.map(|s| s.1), "per_seed": per_seed});
                if stat.is_none() {
                    entry["unmeasured"] = UNMEASURED.into();
                }
                m.insert(format!("ndcg@{k}"), entry);
            }
            for k in crate::metrics::NDCG_CUTOFFS {
                let stat = r.student_graded_ndcg(k);
                let per_seed: Vec<Option<f64>> = r
                    .runs
                    .iter()
                    .map(|run| graded_ndcg(&run.student, k))
                    .collect();
                m.insert(
                    format!("graded_ndcg@{k}"),
                    serde_json::json!({"mean": stat.map(|s| s.0), "std": stat.map(|s| s.1), "per_seed": per_seed}),
                );
            }
            if r.runs.iter().any(|run| !run.teachers.is_empty()) {
                let stat = r.teacher_graded_ndcg(8);
                m.insert(
                    "teacher_graded_ndcg@8".into(),
                    serde_json::json!({"mean": stat.map(|s| s.0), "std": stat.map(|s| s.1)}),
                );
                let stat = r.teacher_ndcg(8);
                let mut entry =
                    serde_json::json!({"mean": stat.map(|s| s.0), "std": stat.map(|s| s.1)});
                if stat.is_none() {
                    entry["unmeasured"] = UNMEASURED.into();
                }
                m.insert("teacher_ndcg@8".into(), entry);
            }
            // The per-query figures are results.json's `per_query`, once.
            let mut runs = serde_json::to_value(&r.runs).expect("runs serialise");
            for run in runs.as_array_mut().into_iter().flatten() {
                if let Some(student) = run["student"].as_object_mut() {
                    student.remove("per_query");
                    student.remove("per_query_graded");
                }
            }
            m.insert("runs".into(), runs);
            methods.insert(r.method.name().into(), serde_json::Value::Object(m));
        }
        serde_json::Value::Object(methods)
    }
}

/// Which model is training: a method's student, or one of its teachers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Training {
    pub method: Method,
    pub seed: u64,
    /// `Some(k)`: the method's k-th teacher; `None`: its student.
    pub teacher: Option<usize>,
}

impl std::fmt::Display for Training {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} seed {}", self.method, self.seed)?;
        match self.teacher {
            Some(k) => write!(f, " teacher {}", k + 1),
            None => Ok(()),
        }
    }
}

/// Every model [`compare`] trains, in order, with the most documents it can go through (all its
/// epochs; early stopping ends some sooner): a progress bar's total. A teacher two methods share
/// ([`CompareConfig::jobs_on`]) is one model, under the first method's name.
pub fn plan(p: &Prepared, config: &CompareConfig) -> Vec<(Training, u64)> {
    let epochs = config.train.epochs as u64;
    let labelled = crate::ranking::train::epoch_docs(&p.train, false) as u64 * epochs;
    let all = crate::ranking::train::epoch_docs(&p.train, true) as u64 * epochs;
    let mut models = Vec::new();
    for job in config.jobs_on(p.train.d_z) {
        let mut trained: Vec<Teacher> = Vec::new();
        for &method in &job.methods {
            // A teacher trained elsewhere is not trained here.
            let teachers = config.teachers_of(method, p.train.d_z);
            for (k, teacher) in teachers.iter().enumerate() {
                if trained.contains(teacher) {
                    continue;
                }
                trained.push(teacher.clone());
                let label = Training {
                    method,
                    seed: job.seed,
                    teacher: Some(k),
                };
                // Teachers learn from the labels alone: S_label.
                models.push((label, labelled));
            }
            let student = Training {
                method,
                seed: job.seed,
                teacher: None,
            };
            let docs = if teachers.is_empty() && config.external_for(method).is_none() {
                labelled
            } else {
                all
            };
            // An ensemble's members train one after the other.
            models.push((student, docs * config.train.ensemble as u64));
        }
    }
    models
}

/// Progress: which model is training, and its events.
pub type OnProgress<'a> = dyn FnMut(&Training, Event) + 'a;

/// Runs every method of `config` on the prepared data, one job after the other. On the CPU engine
/// the future completes without waiting; on the GPU engine it waits for read-backs (the only way
/// in a browser).
pub async fn compare_async(
    p: &Prepared,
    config: &CompareConfig,
    on: &mut OnProgress<'_>,
) -> Result<Comparison> {
    config.validate(p)?;
    let jobs = config.jobs_on(p.train.d_z);
    let mut runs = Vec::with_capacity(jobs.len());
    for job in &jobs {
        runs.push(run_job(p, config, job, on).await?);
    }
    Ok(Comparison::of_jobs(config, &jobs, runs))
}

impl Comparison {
    /// The comparison from its jobs' runs (in the jobs' order): each method's runs in seed order,
    /// and its student of the first seed.
    pub(crate) fn of_jobs(
        config: &CompareConfig,
        jobs: &[Job],
        runs: Vec<Vec<(Ensemble, SeedRun)>>,
    ) -> Comparison {
        let mut methods = MethodRuns::none_yet(&config.methods);
        let mut students = Vec::new();
        for (job, runs) in jobs.iter().zip(runs) {
            for (&method, (model, run)) in job.methods.iter().zip(runs) {
                let m = config
                    .methods
                    .iter()
                    .position(|&x| x == method)
                    .expect("a job's methods are the comparison's");
                if job.seed == config.first_seed {
                    students.push((method, model));
                }
                methods[m].runs.push(run);
            }
        }
        // The students in the order of the methods.
        students.sort_by_key(|(method, _)| config.methods.iter().position(|x| x == method));
        Comparison { methods, students }
    }
}

/// One method at one seed: its teacher(s), trained on S_label, then its student ([`run_job`] of
/// that method alone).
pub async fn run_method_seed(
    p: &Prepared,
    config: &CompareConfig,
    method: Method,
    seed: u64,
    on: &mut OnProgress<'_>,
) -> Result<(Ensemble, SeedRun)> {
    let job = Job {
        seed,
        methods: vec![method],
        // Only a pool orders jobs by it.
        models: 0,
    };
    let mut runs = run_job(p, config, &job, on).await?;
    Ok(runs.remove(0))
}

/// A teacher's logits divided by the temperature `t` (borrowed as they are at 1).
fn tempered(logits: &[f32], t: f64) -> Result<std::borrow::Cow<'_, [f32]>> {
    if t == 1.0 {
        return Ok(logits.into());
    }
    let soft: Vec<f32> = logits.iter().map(|&f| (f64::from(f) / t) as f32).collect();
    // A small temperature can send a large logit past f32: refused by name, before training
    // would diverge on it and blame the learning rate.
    if let Some(i) = soft.iter().position(|v| !v.is_finite()) {
        return Err(Error::Config(format!(
            "a teacher's logit {} divided by --teacher-temperature {} is beyond f32: raise --teacher-temperature",
            logits[i],
            crate::error::shown(t)
        )));
    }
    Ok(soft.into())
}

/// One job ([`CompareConfig::jobs_on`]): each of its methods at its seed, the teachers trained on
/// S_label, then the student; a teacher two of its methods share is trained once, for the first.
/// Every job is independent of the others (all draws come from the seed), so jobs may run in any
/// order or in parallel with the same results: the page's pool of workers runs them side by
/// side. Without a test split, the figures are on the validation split. Returns each method's
/// student and runs, in the job's order.
pub async fn run_job(
    p: &Prepared,
    config: &CompareConfig,
    job: &Job,
    on: &mut OnProgress<'_>,
) -> Result<Vec<(Ensemble, SeedRun)>> {
    let (seed, engine) = (job.seed, &config.engine);
    let test = p.test.as_ref().unwrap_or(&p.valid);
    let student = TrainConfig {
        seed,
        view: FeatureView::Regular,
        ..config.train.clone()
    };
    // Every model reads the splits' own two matrices, through views: nothing is copied.
    let x = splits(p, test, |set| Inputs::of(set, FeatureView::Regular));
    // The teachers trained so far: each with its run and its scores of the training split.
    let mut trained: Vec<(Teacher, ModelRun, Vec<f32>)> = Vec::new();
    let mut results = Vec::with_capacity(job.methods.len());
    for &method in &job.methods {
        let student_label = Training {
            method,
            seed,
            teacher: None,
        };
        if let Some(external) = config.external_for(method) {
            // A teacher trained elsewhere: its scores are the soft labels; its figures are its
            // scores' on the validation and test splits.
            let soft = tempered(&external.train, config.teacher_temperature)?;
            let guidance = Guidance {
                teachers: vec![&soft],
                ..Guidance::default()
            };
            let (model, student_run) = run_model(engine, &x, &student, &guidance, true, &mut |e| {
                on(&student_label, e)
            })
            .await
            .map_err(|e| e.training(&student_label))?;
            results.push((
                model,
                SeedRun {
                    seed,
                    student: student_run,
                    teachers: vec![external_run(p, test, external, config.train.idcg_zero)],
                },
            ));
            continue;
        }
        let mut teachers = Vec::new();
        let mut scores_of = Vec::new();
        for (k, teacher) in config
            .teachers_of(method, p.train.d_z)
            .into_iter()
            .enumerate()
        {
            if let Some(i) = trained.iter().position(|(t, _, _)| *t == teacher) {
                teachers.push(trained[i].1.clone());
                scores_of.push(i);
                continue;
            }
            let label = Training {
                teacher: Some(k),
                ..student_label
            };
            let splits = match &teacher.inputs {
                TeacherInputs::Regular => {
                    splits(p, test, |set| Inputs::of(set, FeatureView::Regular))
                }
                TeacherInputs::Privileged => {
                    splits(p, test, |set| Inputs::of(set, FeatureView::Privileged))
                }
                TeacherInputs::Both => splits(p, test, |set| Inputs::of(set, FeatureView::Both)),
                TeacherInputs::Subset(subset) => {
                    splits(p, test, |set| Inputs::with_subset(set, subset))
                }
            };
            let teacher_config = TrainConfig {
                // What the teacher sees, for what it reports (a subset of z comes with x).
                view: match &teacher.inputs {
                    TeacherInputs::Regular => FeatureView::Regular,
                    TeacherInputs::Privileged => FeatureView::Privileged,
                    TeacherInputs::Both | TeacherInputs::Subset(_) => FeatureView::Both,
                },
                // Teachers start from other initial weights than their students.
                // Seeds are names in the 64-bit space: they wrap around it.
                seed: seed.wrapping_add(1_000),
                widths: teacher.widths.clone(),
                attention_heads: teacher.attention_heads,
                // A global objective replaces the students' data loss; teachers keep the
                // ranking loss.
                objective: None,
                // Ensembles are the students': a teacher is one model.
                ensemble: 1,
                ..student.clone()
            };
            let (model, run) = run_model(
                engine,
                &splits,
                &teacher_config,
                &Guidance::default(),
                false,
                &mut |e| on(&label, e),
            )
            .await
            .map_err(|e| e.training(&label))?;
            let scores = engine.score_ensemble(&model, splits.train.inputs).await?;
            teachers.push(run.clone());
            scores_of.push(trained.len());
            trained.push((teacher, run, scores));
        }
        let soft: Vec<_> = scores_of
            .iter()
            .map(|&i| tempered(&trained[i].2, config.teacher_temperature))
            .collect::<Result<_>>()?;
        let guidance = match method.entry().student {
            Student::TeacherLoss => Guidance {
                teachers: soft.iter().map(|s| &s[..]).collect(),
                ..Guidance::default()
            },
            // No teacher: the data loss on labels of its own (below), which DLA learns anew at
            // every step and two-tower after every epoch.
            Student::Labels(label) => Guidance {
                propensity_tower: match (label.learns_propensities(), &config.clicks) {
                    (true, Some(clicks)) => Some(PropensityTower::new(label, clicks.table.clone())),
                    _ => None,
                },
                ..Guidance::default()
            },
            Student::RankingDistillation => Guidance {
                ranking_distillation: Some(RdTargets::new(
                    &p.train,
                    &trained[scores_of[0]].2,
                    config.rd,
                )),
                ..Guidance::default()
            },
        };
        // A method that learns from clicks or grades has labels of its own on the training
        // split; the features, validation and test splits are everyone's.
        let own = match method.entry().student {
            Student::Labels(label) => Some(crate::ranking::clicks::training_set(
                label,
                method.name(),
                &p.train,
                config.clicks.as_deref(),
            )?),
            _ => None,
        };
        let on_x = Splits {
            train: Split {
                set: own.as_ref().unwrap_or(&p.train),
                inputs: x.train.inputs,
            },
            valid: x.valid,
            test: x.test,
        };
        let (model, student_run) =
            run_model(&config.engine, &on_x, &student, &guidance, true, &mut |e| {
                on(&student_label, e)
            })
            .await
            .map_err(|e| e.training(&student_label))?;
        results.push((
            model,
            SeedRun {
                seed,
                student: student_run,
                teachers,
            },
        ));
    }
    Ok(results)
}

/// The figures of a teacher trained elsewhere, from its scores: validation NDCG@8 as its best,
/// its test metrics as a trained model's. It has no epochs and no parameters of ours.
fn external_run(
    p: &Prepared,
    test: &RankingSet,
    external: &ExternalScores,
    idcg_zero: metrics::IdcgZero,
) -> ModelRun {
    let scores = external.test.as_deref().unwrap_or(&external.valid);
    let valid = metrics::report(
        &external.valid,
        &p.valid.labels,
        &p.valid.group_offsets,
        idcg_zero,
    );
    let grades: Vec<f32> = test.grades.iter().map(|&r| r as f32).collect();
    ModelRun {
        best_epoch: 0,
        best_valid_ndcg: valid.ndcg_at(TESTED_K).unwrap_or(f64::NAN),
        test: metrics::report(scores, &test.labels, &test.group_offsets, idcg_zero),
        test_graded_ndcg: metrics::report(scores, &grades, &test.group_offsets, idcg_zero).ndcg,
        history: Vec::new(),
        parameters: 0,
        members: 1,
        later_members: Vec::new(),
        ms_per_1k_docs: external.ms_per_1k_docs.unwrap_or(f64::NAN),
        per_query: Vec::new(),
        per_query_graded: Vec::new(),
        ties_every_query: metrics::ties_every_group(scores, &test.group_offsets),
        trained_elsewhere: true,
    }
}

/// The figures of a reference model trained elsewhere ([`ExternalScores`] of its validation and
/// test splits), as a student's: its test metrics, and its NDCG@[`TESTED_K`] of each test query
/// on y and on the graded relevance, for the paired tests of every method against it.
pub fn reference_run(
    p: &Prepared,
    reference: &ExternalScores,
    idcg_zero: metrics::IdcgZero,
) -> ModelRun {
    let test = p.test.as_ref().unwrap_or(&p.valid);
    let scores = reference.test.as_deref().unwrap_or(&reference.valid);
    let grades: Vec<f32> = test.grades.iter().map(|&r| r as f32).collect();
    ModelRun {
        per_query: metrics::ndcg_per_group(TESTED_K, scores, &test.labels, &test.group_offsets),
        per_query_graded: metrics::ndcg_per_group(TESTED_K, scores, &grades, &test.group_offsets),
        ..external_run(p, test, reference, idcg_zero)
    }
}

/// The three splits of `p`, each with the inputs `view` makes of it.
fn splits<'a>(
    p: &'a Prepared,
    test: &'a RankingSet,
    view: impl Fn(&'a RankingSet) -> Inputs<'a>,
) -> Splits<'a> {
    let split = |set: &'a RankingSet| Split {
        set,
        inputs: view(set),
    };
    Splits {
        train: split(&p.train),
        valid: split(&p.valid),
        test: split(test),
    }
}

/// Why the privileged split left no column privileged, where the training split tells: a split
/// by correlation keeps one informative column regular, so one informative column (or none) is
/// the student's alone.
fn why_no_privileged(p: &Prepared) -> String {
    if !p.privileged_columns.is_empty() {
        return String::new();
    }
    let informative: Vec<usize> = p
        .regular_columns
        .iter()
        .copied()
        .filter(|c| !p.constant_regular.contains(c))
        .collect();
    match informative.as_slice() {
        [] => ": no column varies on the training split".into(),
        [only] => format!(
            ": column {only} is the only one that varies on the training split, and the student keeps it in x; privileged features need a second"
        ),
        _ => String::new(),
    }
}

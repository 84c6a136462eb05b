//! The methods compared in the PFD paper's Table 2 (spec §4), Ranking Distillation (spec §6) and
//! the methods that learn from clicks, each one entry of [`METHODS`].
//!
//! | method | teacher input | student |
//! | --- | --- | --- |
//! | no-distillation | (none) | f(x) on S_label, data loss only |
//! | self-distillation | x | f(x), PFD Eq. 1 |
//! | GenD | z | f(x), Eq. 1 |
//! | PFD | x and z | f(x), Eq. 1 |
//! | multi-teacher PFD | x and one privileged subset each | f(x), teacher loss averaged |
//! | Ranking Distillation | x, larger model | f(x) + alpha_RD * L_D on the teacher's top-K unlabeled |
//! | naive, IPS, IPS (estimated or harvested), DLA, two-tower, full information | (none) | f(x) on relevance estimated from clicks, or on the grades ([`crate::ranking::clicks`]) |
//!
//! Every teacher is trained on S_label only, its logits on the training documents computed once and
//! reused; the student never sees z.

use crate::data::prepare::RankingSet;
use crate::metrics;
use crate::model::step::{RdBatch, RdScheme};
use crate::ranking::clicks::ClickLabel;

/// A method of the comparison. Each is described once, by its entry in [`METHODS`]: its name,
/// label, help and colour, the teachers it trains and how its student learns from them, and the
/// methods its gain is tested against. The CLI's `--methods`, the page's checkboxes and chart
/// colours, Python's names, the paired tests and the checks on the data all read that table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    NoDistillation,
    SelfDistillation,
    GenD,
    Pfd,
    MultiTeacherPfd,
    RankingDistillation,
    Naive,
    Ips,
    IpsEstimated,
    FullInformation,
    Dla,
    TwoTower,
    IpsHarvested,
}

/// Whether a method may learn from a teacher trained elsewhere instead of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum External {
    /// Any teacher fits: PFD's sees x and z, so any does; no distillation and the methods that
    /// learn from clicks or grades leave the teacher to the others.
    Any,
    /// A teacher that reads exactly these inputs: x for self-distillation, z for GenD.
    Reads(TeacherInputs),
    /// None: it trains teachers of its own (several, or a larger one).
    Never,
}

/// One method, described once.
pub struct MethodEntry {
    pub method: Method,
    /// The name on the command line, on the page, in Python and in files (`pfd`).
    pub name: &'static str,
    /// The name on the page's checkboxes (`PFD`).
    pub label: &'static str,
    /// What it is, in a sentence: the CLI's help, the page's tooltip.
    pub help: &'static str,
    /// Its colour in the page's charts.
    pub colour: &'static str,
    /// Its teachers in a comparison, in order (none: the student learns from the labels alone).
    pub teachers: fn(&TeacherSettings) -> Vec<Teacher>,
    /// What the settings must allow for its teachers (multi-teacher PFD's count, say), in words
    /// when they do not.
    pub check: fn(&TeacherSettings) -> std::result::Result<(), String>,
    /// Whether a teacher trained elsewhere ([`ExternalScores`]) may stand for its own.
    pub external: External,
    /// How its student learns from its teachers' scores of the training documents.
    pub student: Student,
    /// The methods its student is tested against, beside no distillation (the baseline every
    /// method is tested against), when both run.
    pub tested_against: &'static [Method],
}

/// How a student learns from its teachers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Student {
    /// The teacher loss on the teachers' logits as soft labels, mixed with the data loss by
    /// alpha (PFD Eq. 1); the data loss alone without teachers.
    TeacherLoss,
    /// Ranking Distillation's L_D on its teacher's top-K unlabeled documents (spec §6).
    RankingDistillation,
    /// No teacher: the data loss on labels of its own, estimated from the logs' clicks or the
    /// true grades ([`crate::ranking::clicks`]).
    Labels(ClickLabel),
}

/// What a comparison's teachers depend on.
#[derive(Debug, Clone)]
pub struct TeacherSettings {
    /// The teachers' hidden widths (`teacher_widths`, else the student's).
    pub widths: Vec<usize>,
    /// The teachers' heads of attention over each query's documents
    /// (`teacher_attention_heads`, else the student's; 0: the MLP).
    pub attention_heads: usize,
    /// The student's hidden widths.
    pub student_widths: Vec<usize>,
    /// Multi-teacher PFD's number of teachers.
    pub teachers: usize,
    /// The Ranking Distillation teacher's size over the student's.
    pub rd_teacher_factor: f64,
    /// The data's privileged features.
    pub d_z: usize,
}

impl TeacherSettings {
    /// One teacher that sees `inputs`, at the teachers' widths.
    fn teacher(&self, inputs: TeacherInputs) -> Teacher {
        Teacher {
            inputs,
            widths: self.widths.clone(),
            attention_heads: self.attention_heads,
        }
    }
}

/// What a teacher sees of the data.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TeacherInputs {
    /// x: self-distillation's and Ranking Distillation's teachers.
    Regular,
    /// z: GenD's.
    Privileged,
    /// x and z: PFD's.
    Both,
    /// x and these columns of z (0-based, in order, never all of them): one of multi-teacher
    /// PFD's.
    Subset(Vec<usize>),
}

impl TeacherInputs {
    /// What the teacher sees, in words.
    pub fn words(&self) -> String {
        match self {
            TeacherInputs::Regular => "x".into(),
            TeacherInputs::Privileged => "z".into(),
            TeacherInputs::Both => "x and z".into(),
            TeacherInputs::Subset(columns) => format!("x and z's columns {columns:?} (0-based)"),
        }
    }

    /// Whether it reads privileged features.
    pub fn sees_privileged(&self) -> bool {
        !matches!(self, TeacherInputs::Regular)
    }
}

/// One teacher of a method at a seed: what it sees and its hidden widths. Every other setting of
/// a teacher is the comparison's (the students' training settings, without a global objective)
/// and its seed is the job's, so two teachers alike in these two are the same model, trained on
/// the same data with the same draws: a job trains it once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Teacher {
    pub inputs: TeacherInputs,
    pub widths: Vec<usize>,
    /// Heads of attention over each query's documents (0: the MLP).
    pub attention_heads: usize,
}

/// A teacher trained elsewhere (a LightGBM or XGBoost model, or scores from files): its scores of
/// the prepared splits' documents, computed once on the CPU (`crate::pipeline::teacher`) and
/// shared by both engines, and what it reads. It takes the place of a method's trained teacher
/// where what it reads fits the method ([`ExternalScores::fits`]). It travels with the prepared
/// data to the page's other workers, as JSON.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExternalScores {
    pub train: Vec<f32>,
    pub valid: Vec<f32>,
    pub test: Option<Vec<f32>>,
    /// What it reads of the comparison's features, from the columns its trees split on; None
    /// for scores whose model is not known.
    pub reads: Option<TeacherInputs>,
    /// The teacher in words: its file and kind (`a LightGBM model of 300 trees ...`).
    pub description: String,
    /// The library that trained it (`LightGBM`, `XGBoost`); None for scores from files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// The 1-based features of the files its trees split on (None for scores from files), and
    /// those of them that are privileged under the comparison's split.
    pub split_features: Option<Vec<usize>>,
    pub privileged_features: Vec<usize>,
    /// What its objective makes of its scores, when it is not a ranking objective.
    pub note: Option<String>,
    /// Reading and scoring time per 1,000 documents of its model, milliseconds, on the CPU; None
    /// for scores read from files (nothing of it was run here).
    pub ms_per_1k_docs: Option<f64>,
}

impl ExternalScores {
    /// What the reports say of it: `results.json`'s `external_teacher`.
    pub fn report_json(&self) -> serde_json::Value {
        let reads = match &self.reads {
            Some(TeacherInputs::Regular) => {
                "x only: a regular-feature teacher (self-distillation in kind)".to_string()
            }
            Some(inputs) => inputs.words(),
            None => "unknown (scores from files)".to_string(),
        };
        serde_json::json!({
            "description": self.description,
            "reads": reads,
            "split_features": self.split_features,
            "privileged_features": self.privileged_features,
            "note": self.note,
            "ms_per_1k_docs": self.ms_per_1k_docs,
        })
    }

    /// The model in a few words for the verdicts: "LightGBM on x alone", "scores from files".
    pub fn label(&self) -> String {
        let on = match &self.reads {
            Some(TeacherInputs::Regular) => " on x alone",
            Some(TeacherInputs::Privileged) => " on z alone",
            Some(_) => " on x and z",
            None => "",
        };
        match &self.library {
            Some(library) => format!("{library}{on}"),
            None => "the reference's scores".to_string(),
        }
    }

    /// Whether the teacher may stand for `method`'s: PFD's teacher sees x and z, so any teacher
    /// fits it; self-distillation's must read x only, GenD's z only; the methods of several or
    /// larger teachers of their own take none. In words when it does not fit.
    pub fn fits(&self, method: Method) -> std::result::Result<(), String> {
        let why = match &method.entry().external {
            External::Any => return Ok(()),
            External::Reads(inputs) if self.reads.as_ref() == Some(inputs) => return Ok(()),
            External::Reads(inputs) => format!(
                "its teacher must read {} only, and the external teacher reads {}",
                inputs.words(),
                self.reads
                    .as_ref()
                    .map_or("what its scores do not say".into(), TeacherInputs::words)
            ),
            External::Never => "it trains teachers of its own (several, or a larger one)".into(),
        };
        Err(format!(
            "{} cannot learn from the external teacher: {why}; compare it with no-distillation and pfd",
            method.entry().name
        ))
    }
}

fn fits_any(_: &TeacherSettings) -> std::result::Result<(), String> {
    Ok(())
}

/// Every method, in the order of [`Method`]'s variants.
pub const METHODS: &[MethodEntry] = &[
    MethodEntry {
        method: Method::NoDistillation,
        name: "no-distillation",
        label: "no distillation",
        help: "The student alone, on the labels (the baseline every gain is measured against)",
        colour: "#6e7781",
        teachers: |_| vec![],
        check: fits_any,
        external: External::Any,
        student: Student::TeacherLoss,
        tested_against: &[],
    },
    MethodEntry {
        method: Method::SelfDistillation,
        name: "self-distillation",
        label: "self-distillation",
        help: "A teacher that sees x, as the student does, distilled by PFD Eq. 1",
        colour: "#0969da",
        teachers: |s| vec![s.teacher(TeacherInputs::Regular)],
        check: fits_any,
        external: External::Reads(TeacherInputs::Regular),
        student: Student::TeacherLoss,
        tested_against: &[],
    },
    MethodEntry {
        method: Method::GenD,
        name: "gend",
        label: "GenD",
        help: "Generalized distillation: a teacher that sees z only",
        colour: "#bf8700",
        teachers: |s| vec![s.teacher(TeacherInputs::Privileged)],
        check: fits_any,
        external: External::Reads(TeacherInputs::Privileged),
        student: Student::TeacherLoss,
        tested_against: &[],
    },
    MethodEntry {
        method: Method::Pfd,
        name: "pfd",
        label: "PFD",
        help: "Privileged features distillation: a teacher that sees x and z",
        colour: "#cf222e",
        teachers: |s| vec![s.teacher(TeacherInputs::Both)],
        check: fits_any,
        external: External::Any,
        student: Student::TeacherLoss,
        tested_against: &[
            Method::GenD,
            Method::SelfDistillation,
            Method::Naive,
            Method::Ips,
            Method::IpsEstimated,
        ],
    },
    MethodEntry {
        method: Method::MultiTeacherPfd,
        name: "multi-teacher-pfd",
        label: "multi-teacher PFD",
        help: "PFD with several teachers, each seeing x and one share of z (--teachers), their teacher losses averaged",
        colour: "#8250df",
        teachers: |s| {
            privileged_subsets(s.d_z, s.teachers)
                .into_iter()
                .map(|subset| s.teacher(TeacherInputs::Subset(subset)))
                .collect()
        },
        check: |s| {
            if s.d_z < 2 {
                Err(format!("multi-teacher PFD needs at least 2 privileged features, one per teacher; the data have {}", s.d_z))
            } else if s.teachers < 2 || s.teachers > s.d_z {
                Err(format!("--teachers {}: multi-teacher PFD needs 2..={} teachers here, one privileged feature each at least, and the data have {} privileged features (--privileged, or --privileged-count for generated data)", s.teachers, s.d_z, s.d_z))
            } else {
                Ok(())
            }
        },
        external: External::Never,
        student: Student::TeacherLoss,
        tested_against: &[],
    },
    MethodEntry {
        method: Method::RankingDistillation,
        name: "ranking-distillation",
        label: "Ranking Distillation",
        help: "A larger teacher that sees x (--rd-teacher-factor); the student learns its top-K unlabeled documents (spec 6)",
        colour: "#1a7f37",
        teachers: |s| {
            vec![Teacher {
                inputs: TeacherInputs::Regular,
                widths: scale_widths(&s.student_widths, s.rd_teacher_factor, s.attention_heads),
                attention_heads: s.attention_heads,
            }]
        },
        check: fits_any,
        external: External::Never,
        student: Student::RankingDistillation,
        tested_against: &[],
    },
    MethodEntry {
        method: Method::Naive,
        name: "naive",
        label: "naive clicks",
        help: "Learning from clicks: the student alone on each document's clicks per session, position bias and all",
        colour: "#57606a",
        teachers: |_| vec![],
        check: fits_any,
        external: External::Any,
        student: Student::Labels(ClickLabel::Naive),
        tested_against: &[],
    },
    MethodEntry {
        method: Method::Ips,
        name: "ips",
        label: "IPS",
        help: "Learning from clicks: each click weighted by the inverse of the simulator's true examination probability at its rank (position-based model)",
        colour: "#0550ae",
        teachers: |_| vec![],
        check: fits_any,
        external: External::Any,
        student: Student::Labels(ClickLabel::Ips),
        tested_against: &[Method::Naive],
    },
    MethodEntry {
        method: Method::IpsEstimated,
        name: "ips-estimated",
        label: "IPS (estimated)",
        help: "Learning from clicks: IPS with the examination probabilities estimated from the clicks by EM",
        colour: "#953800",
        teachers: |_| vec![],
        check: fits_any,
        external: External::Any,
        student: Student::Labels(ClickLabel::IpsEstimated),
        tested_against: &[Method::Naive, Method::Ips],
    },
    MethodEntry {
        method: Method::FullInformation,
        name: "full-information",
        label: "full information",
        help: "The student alone on the true grades (gains 2^g - 1): the upper bound of learning from clicks",
        colour: "#116329",
        teachers: |_| vec![],
        check: fits_any,
        external: External::Any,
        student: Student::Labels(ClickLabel::FullInformation),
        tested_against: &[Method::Ips, Method::Pfd],
    },
    MethodEntry {
        method: Method::Dla,
        name: "dla",
        label: "DLA",
        help: "Learning from clicks: the dual learning algorithm, IPS with a propensity model that learns from the ranker's scores at every step (inverse relevance weighting)",
        colour: "#1b7c83",
        teachers: |_| vec![],
        check: fits_any,
        external: External::Any,
        student: Student::Labels(ClickLabel::Dla),
        tested_against: &[Method::Naive, Method::IpsEstimated, Method::Ips],
    },
    MethodEntry {
        method: Method::TwoTower,
        name: "two-tower",
        label: "two-tower",
        help: "Learning from clicks: a position tower times the ranker's calibrated relevance as the click probability, fitted by EM after each epoch; the ranker learns the clicks weighted by the inverse of the position tower and serves alone",
        colour: "#bf3989",
        teachers: |_| vec![],
        check: fits_any,
        external: External::Any,
        student: Student::Labels(ClickLabel::TwoTower),
        tested_against: &[Method::Naive, Method::Ips],
    },
    MethodEntry {
        method: Method::IpsHarvested,
        name: "ips-harvested",
        label: "IPS (harvested)",
        help: "Learning from clicks: IPS with the examination probabilities harvested from the logging policy's shuffles (intervention harvesting: each pair of ranks compared on the documents shown at both)",
        colour: "#4d2d00",
        teachers: |_| vec![],
        check: fits_any,
        external: External::Any,
        student: Student::Labels(ClickLabel::IpsHarvested),
        tested_against: &[Method::Naive, Method::Ips],
    },
];

impl Method {
    /// Every method, in the table's order.
    pub const ALL: [Method; METHODS.len()] = {
        let mut all = [Method::NoDistillation; METHODS.len()];
        let mut i = 0;
        while i < METHODS.len() {
            all[i] = METHODS[i].method;
            i += 1;
        }
        all
    };

    /// Every method's name, in the table's order.
    pub const NAMES: [&'static str; METHODS.len()] = {
        let mut names = [""; METHODS.len()];
        let mut i = 0;
        while i < METHODS.len() {
            names[i] = METHODS[i].name;
            i += 1;
        }
        names
    };

    /// The method every other is tested against.
    pub const BASELINE: Method = Method::NoDistillation;

    /// Its entry in [`METHODS`] (`tests/entries.rs` checks the table's order).
    pub fn entry(self) -> &'static MethodEntry {
        &METHODS[self as usize]
    }

    /// The name used in tables, files and on the command line.
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    pub fn parse(name: &str) -> Option<Method> {
        METHODS.iter().find(|e| e.name == name).map(|e| e.method)
    }

    /// Every method's name, for messages: "no-distillation, self-distillation, ...".
    pub fn names() -> String {
        Method::NAMES.join(", ")
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Method {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Method {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Method::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown method '{name}' (unknown variant `{name}`): expected one of {}",
                Method::NAMES.join(", ")
            ))
        })
    }
}

/// Every method as the page and Python list them: name, label, help and colour.
pub fn methods_json() -> serde_json::Value {
    METHODS
        .iter()
        .map(|e| {
            serde_json::json!({
                "name": e.name, "label": e.label, "help": e.help, "colour": e.colour,
            })
        })
        .collect()
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

/// Ranking Distillation's settings (in a setup, `rd`: fields left out take the table of
/// settings' defaults).
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
        crate::settings::defaults("rd")
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
/// sqrt(factor)), for the Ranking Distillation teacher; with `heads` of attention, the last
/// rounded up to a multiple of them.
pub fn scale_widths(widths: &[usize], factor: f64, heads: usize) -> Vec<usize> {
    let mut scaled: Vec<usize> = widths
        .iter()
        .map(|&w| ((w as f64) * factor.sqrt()).round().max(1.0) as usize)
        .collect();
    // A listwise teacher's heads divide its last width: rounded up to their next multiple.
    if let (Some(last), true) = (scaled.last_mut(), heads > 0) {
        *last = last.div_ceil(heads) * heads;
    }
    scaled
}

/// Splits the privileged columns (indices into z) into `n` disjoint sets, round-robin over the
/// columns ordered as given, for multi-teacher PFD.
pub fn privileged_subsets(d_z: usize, n: usize) -> Vec<Vec<usize>> {
    let n = n.clamp(1, d_z.max(1));
    (0..n).map(|k| (k..d_z).step_by(n).collect()).collect()
}

//! One comparison, as both front doors describe it: the data, its labels and privileged split,
//! the methods, the losses, the training settings and the backend, with **one** set of defaults.
//! The CLI's arguments (`distillrank compare ...`) and the page's form both translate into a
//! [`Setup`]; [`Setup::prepare_options`] and [`Setup::compare_config`] turn it into what the
//! library runs, whichever door it came through. It travels as JSON: the page sends it to its
//! workers and keeps it in its report, `compare` writes it beside its results, and
//! `distillrank compare --setup FILE.json` runs one the page exported.
//! [`Setup::command_line`] is the equivalent `distillrank compare` command.

use serde::{Deserialize, Serialize};

use crate::data::logs::{LogColumns, LogOptions};
use crate::data::prepare::{PrepareOptions, PrivilegedSplit};
use crate::data::synth::SynthOptions;
use crate::data::transform::Transform;
use crate::engine::{Backend, Engine};
use crate::error::{Error, Result};
use crate::metrics::IdcgZero;
use crate::model::objective::Config as ObjectivesConfig;
use crate::model::objective::{Objective, Surrogate, Targets};
use crate::model::LossKind;
use crate::objectives::data::SynthBinaryOptions;
use crate::ranking::distill::{Method, RdConfig};
use crate::ranking::experiment::CompareConfig;

/// What a folds directory (`data.folds`) holds, in words for the messages that name it.
pub const FOLDS_LAYOUT: &str = "LETOR 4.0's five parts S1..S5, or Fold1..Fold5 each with train, vali and test (each file .txt, .txt.gz or .parquet)";

/// Where the data come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum DataSource {
    /// One draw of the generator: `options.queries` training queries, then the validation and
    /// test queries.
    Synthetic {
        options: SynthOptions,
        valid_queries: usize,
        test_queries: usize,
    },
    /// MQ2008 Fold 1, bundled with the page and the CLI.
    Mq2008,
    /// The bundled MQ2008 as its five parts (S1..S5): the comparison runs on each of LETOR 4.0's
    /// five folds, as with a folds directory (`data.folds`, [`crate::pipeline::folds`]).
    /// `mq2008-folds` too, as `--bundled` spells it.
    #[serde(alias = "mq2008-folds")]
    Mq2008Folds,
    /// LETOR files: paths for the CLI; the page records the names of its uploads. A missing
    /// validation or test split is held out of the training queries ([`HOLDOUT`]).
    Files {
        train: String,
        #[serde(default)]
        valid: Option<String>,
        #[serde(default)]
        test: Option<String>,
        /// A split's LightGBM `.query` file (its groups' sizes, for a file without qid) where
        /// it is not `FILE.query` beside the file, which is read when there is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        train_query: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        valid_query: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        test_query: Option<String>,
    },
}

/// Refuses a validation or test split's `.query` file where the setup names no file of that
/// split: it gives that file's groups, and nothing else would read it.
fn check_query_files(
    valid: &Option<String>,
    test: &Option<String>,
    [_, valid_query, test_query]: [Option<&str>; 3],
) -> Result<()> {
    for (query, split, file) in [
        (valid_query, "valid", valid.is_some()),
        (test_query, "test", test.is_some()),
    ] {
        if query.is_some() && !file {
            return Err(Error::Config(format!(
                "--{split}-query gives the group sizes of the --{split} file, and no --{split} file is named: name it, or drop --{split}-query"
            )));
        }
    }
    Ok(())
}

/// The field of a setup's `Files` source that a split's flag fills (`--train` ->
/// `source.files.train`, `--test-query` -> `source.files.test_query`), for a message in a
/// setup document's words.
pub fn files_field(flag: &str) -> Option<String> {
    matches!(
        flag,
        "train" | "valid" | "test" | "train-query" | "valid-query" | "test-query"
    )
    .then(|| format!("source.files.{}", flag.replace('-', "_")))
}

/// The global objectives' section's field that a files flag fills (`--test-query` ->
/// `data.files.test_query`), for a message in that section's words.
pub fn objectives_files_field(flag: &str) -> Option<String> {
    files_field(flag).map(|f| f.replacen("source.", "data.", 1))
}

impl DataSource {
    /// LETOR files, each split's groups from its qids or the `.query` file beside it.
    pub fn files(train: String, valid: Option<String>, test: Option<String>) -> DataSource {
        DataSource::Files {
            train,
            valid,
            test,
            train_query: None,
            valid_query: None,
            test_query: None,
        }
    }

    /// The `.query` files named for the training, validation and test files (none but for
    /// files).
    pub fn query_files(&self) -> [Option<&str>; 3] {
        match self {
            DataSource::Files {
                train_query,
                valid_query,
                test_query,
                ..
            } => [
                train_query.as_deref(),
                valid_query.as_deref(),
                test_query.as_deref(),
            ],
            _ => [None; 3],
        }
    }
}

/// The shares of the training queries held out as the missing splits, by both front doors:
/// validation 10% (by `prepare`), test 20% ([`crate::data::prepare::hold_out_test`]).
pub const HOLDOUT: (f64, f64) = (0.1, 0.2);

/// What y is when the privileged features are simulated logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLabels {
    /// y = 1[the document converted at least once]: PFD's sparse e-commerce label.
    #[default]
    Conversion,
    /// The Gumbel labelling of the grade (the paper's public-data protocol); the conversions
    /// join z.
    Gumbel,
    /// y = 1[the document was clicked at least once]; z is what does not follow from the clicks,
    /// the impressions and the mean displayed position: PFD's teacher sees where the logging
    /// ranker showed each document, as a position tower does.
    Click,
}

/// What a model trains on when the data have graded relevance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Labels {
    /// y = the Gumbel labelling of the grade, 1[grade / t + Gumbel noise > tau_target / t] (the
    /// PFD paper's protocol for public data).
    #[default]
    Gumbel,
    /// y = the grade itself, as LightGBM, allRank and TF-Ranking train: RankNet on the pairs of
    /// different grades, LambdaRank and the softmax with gains 2^y - 1, NDCG on the grades.
    Grades,
}

/// The data, their labels and the privileged split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataSetup {
    pub source: DataSource,
    /// `top:N`, `top:P%`, `cols:3,7`, `discriminative:TAU` or `logs`; None: the data's own,
    /// the generator's z for synthetic data and `top:30%` for files.
    pub privileged: Option<String>,
    /// The log simulator's parameters, with `privileged: "logs"`.
    pub logs: LogOptions,
    pub log_labels: LogLabels,
    /// The training label of graded data: the Gumbel labelling, or the grades. With simulated
    /// logs whose conversions are y (`log_labels`), the conversions decide.
    pub labels: Labels,
    /// Gumbel labelling threshold; None: 4.8 for files (the paper's) and 3.5 for synthetic data.
    pub tau_target: Option<f64>,
    /// Gumbel labelling temperature; None: 4 for files (the paper's) and [`SYNTHETIC_T`] for
    /// synthetic data.
    pub t: Option<f64>,
    pub min_group_size: usize,
    /// The seed of the labels and the holdouts.
    pub data_seed: u64,
    /// Keep the prepared splits in a file beside the training file, keyed by these settings and
    /// the files' stamps, and train from it memory-mapped; later runs with the same key read it
    /// instead of preparing again ([`crate::pipeline::preparation::prepare`]). Files on disk only.
    pub prepared_cache: bool,
    /// A validation or test file whose highest feature index is below the training file's is
    /// refused (another dataset?) unless this says its last columns are sparse zeros, read as 0.
    pub allow_missing_features: bool,
    /// How every input is transformed: the signed log1p, and the maps fitted on the training
    /// split that follow it or replace it ([`crate::data::transform`]).
    pub transform: Transform,
    /// A teacher trained elsewhere ([`crate::pipeline::teacher`]): a LightGBM or XGBoost model,
    /// or scores from files. Its scores of the files are computed once, beside the prepared
    /// splits. Left out of the JSON while none is named.
    #[serde(skip_serializing_if = "ExternalTeacher::is_default")]
    pub teacher: ExternalTeacher,
    /// A model trained elsewhere that the students are measured against (the LightGBM model a
    /// team serves today), in the teacher's terms: its scores of the validation and test files
    /// are a row of the comparison, with a paired test of every method against it. Left out of
    /// the JSON while none is named.
    #[serde(
        default = "ExternalTeacher::reference_default",
        skip_serializing_if = "ExternalTeacher::is_reference_default"
    )]
    pub reference: ExternalTeacher,
    /// A directory of LETOR folds ([`FOLDS_LAYOUT`]: `S1..S5` or `Fold1..Fold5`, each file text,
    /// gzipped text or Parquet): the comparison runs
    /// on each fold and reports the mean over them ([`crate::pipeline::folds`]); the source is
    /// then the folds' files.
    pub folds: Option<String>,
}

impl DataSetup {
    /// Whether the comparison runs on each of five folds: a folds directory's, or the bundled
    /// MQ2008's parts.
    pub fn has_folds(&self) -> bool {
        self.folds.is_some() || self.source == DataSource::Mq2008Folds
    }
}

/// A teacher trained elsewhere, for PFD (and GenD or self-distillation where its columns fit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalTeacher {
    /// A LightGBM model (its text format, or `dump_model()`'s JSON) or an XGBoost JSON model,
    /// trained on the data files' columns.
    pub model: Option<String>,
    /// Scores from files: `TRAIN[,VALID[,TEST]]`, one score a line for each document of the
    /// training, validation and test files, in their order, or TREC runs.
    pub scores: Option<String>,
    /// How the model's input columns map to the files' features.
    pub columns: crate::forest::Columns,
    /// What an entry the files leave out is to the model: missing, zero, or its library's
    /// readers' reading (auto).
    pub absent: crate::forest::Absent,
}

/// Fields left out take the table of settings' defaults.
impl Default for ExternalTeacher {
    fn default() -> Self {
        crate::settings::defaults("data.teacher")
    }
}

impl ExternalTeacher {
    /// Whether every field is the default (a setup then leaves the section out; a column
    /// mapping chosen before the teacher's files is kept).
    pub fn is_default(&self) -> bool {
        *self == ExternalTeacher::default()
    }

    /// The reference's fields as the table of settings gives them.
    pub fn reference_default() -> Self {
        crate::settings::defaults("data.reference")
    }

    /// Whether every field is the reference's default.
    pub fn is_reference_default(&self) -> bool {
        *self == ExternalTeacher::reference_default()
    }

    /// Whether no teacher is named.
    pub fn is_none(&self) -> bool {
        self.model.as_deref().is_none_or(|m| m.trim().is_empty())
            && self.scores.as_deref().is_none_or(|s| s.trim().is_empty())
    }
}

/// The Gumbel temperature t for synthetic data. The generator's relevance already carries its
/// own noise, so the labelling adds little: y is nearly 1[grade > tau_target], and the privileged
/// features can explain most of the variance of y that x leaves, the condition under which the
/// PFD paper's section 5 shows the student gaining from them.
pub const SYNTHETIC_T: f64 = 8.0;

/// The Gumbel labelling threshold tau_target for synthetic data.
pub const SYNTHETIC_TAU_TARGET: f64 = 3.5;

/// The Gumbel labelling of files, the paper's, wherever a file is labelled without them given
/// (`train`, `compare`, `eval --labels binary`, `data stats`, the page, Python): temperature t,
/// and the threshold tau_target [`files_tau_target`] of the training split's grades.
pub const FILES_T: f64 = 4.0;

/// How far above the largest training grade a file's default tau_target lies: the paper's 4.8
/// on grades 0..4.
pub const FILES_TAU_ABOVE_TOP: f64 = 0.8;

/// The tau_target of files labelled without one given: [`FILES_TAU_ABOVE_TOP`] above the
/// largest grade of the training split, so that the paper's 4.8 on grades 0..4 (MSLR, Yahoo,
/// Istella) is 2.8 on MQ2008's 0..2 and the first run on any file has positive groups.
pub fn files_tau_target(largest_grade: u8) -> f64 {
    f64::from(largest_grade) + FILES_TAU_ABOVE_TOP
}

/// The tau_target recorded for files whose y is a column (the conversions of simulated logs),
/// which the labelling then does not use: the paper's.
const COLUMN_LABELS_TAU_TARGET: f64 = 4.8;

/// Fields left out of a setup take the table of settings' defaults ([`crate::settings`]).
impl Default for DataSetup {
    fn default() -> Self {
        crate::settings::defaults("data")
    }
}

impl DataSetup {
    /// The files the setup reads: its data files, and its teacher's model or scores files.
    pub fn files(&self) -> Vec<&str> {
        let data = match &self.source {
            DataSource::Files {
                train,
                valid,
                test,
                train_query,
                valid_query,
                test_query,
            } => std::iter::once(train)
                .chain(valid)
                .chain(test)
                .chain(train_query)
                .chain(valid_query)
                .chain(test_query)
                .collect(),
            DataSource::Synthetic { .. } | DataSource::Mq2008 | DataSource::Mq2008Folds => {
                Vec::new()
            }
        };
        let outside = [&self.teacher, &self.reference];
        let scores = outside
            .into_iter()
            .flat_map(|o| o.scores.iter().flat_map(|s| s.split(',')));
        data.into_iter()
            .map(String::as_str)
            .chain(self.folds.as_deref())
            .chain(outside.into_iter().filter_map(|o| o.model.as_deref()))
            .chain(scores)
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .collect()
    }

    /// The simulated logs' settings (`data.logs`) this setup gives another value than the
    /// default, each as the command line writes it (`--sessions 50`): what a run leaves unread
    /// where its files already hold logs.
    pub fn logs_settings_given(&self) -> Vec<String> {
        let mine = serde_json::to_value(&self.logs).unwrap_or_default();
        let defaults = serde_json::to_value(LogOptions::default()).unwrap_or_default();
        crate::settings::flag_fields()
            .filter_map(|(flag, path)| {
                let field = path.strip_prefix("data.logs.")?;
                let value = mine
                    .get(field)
                    .filter(|v| defaults.get(field) != Some(*v))?;
                let shown = match value {
                    serde_json::Value::String(text) => text.clone(),
                    serde_json::Value::Object(_) => self.logs.logging_ranker.spec(),
                    other => other.to_string(),
                };
                Some(format!("--{flag} {shown}"))
            })
            .collect()
    }

    /// Whether z is the simulated logs.
    pub fn wants_logs(&self) -> bool {
        self.privileged.as_deref().map(str::trim) == Some("logs")
    }

    /// Refuses a privileged split that [`PrivilegedSplit::parse`] cannot read, before any data
    /// are read (`logs` and none are the data's to resolve).
    pub fn check_privileged(&self) -> Result<()> {
        match self.privileged.as_deref().map(str::trim) {
            Some(spec) if !spec.is_empty() && !self.wants_logs() => {
                PrivilegedSplit::parse(spec).map(drop)
            }
            _ => Ok(()),
        }
    }

    /// How to prepare the data: the labelling's defaults for the kind of data (for files, from
    /// `largest_grade`, the training split's), the privileged split (`synthetic_z`: the
    /// generator's z columns; `logs`: the simulated logs' columns, when `privileged` is `logs`)
    /// and the label column.
    pub fn prepare_options(
        &self,
        synthetic_z: Option<&[usize]>,
        logs: Option<&LogColumns>,
        largest_grade: u8,
    ) -> Result<PrepareOptions> {
        let synthetic = matches!(self.source, DataSource::Synthetic { .. });
        let column_labels = self.wants_logs() && self.log_labels != LogLabels::Gumbel;
        if column_labels && self.labels == Labels::Grades {
            let y = match self.log_labels {
                LogLabels::Click => "the click (--log-labels click)",
                _ => "the conversion (--log-labels conversion)",
            };
            return Err(Error::Config(format!(
                "--training-labels grades with --privileged logs, whose y is {y}: choose one; --log-labels gumbel keeps the logs as z and lets --training-labels decide y"
            )));
        }
        let (default_t, default_tau) = if synthetic {
            (SYNTHETIC_T, SYNTHETIC_TAU_TARGET)
        } else if column_labels {
            (FILES_T, COLUMN_LABELS_TAU_TARGET)
        } else {
            (FILES_T, files_tau_target(largest_grade))
        };
        let unused_columns = match (self.wants_logs(), logs, self.log_labels) {
            (true, Some(c), LogLabels::Click) => vec![c.ctr, c.dwell, c.conversions],
            _ => Vec::new(),
        };
        let (privileged, label_column) = match (self.wants_logs(), logs) {
            (true, Some(columns)) => match self.log_labels {
                LogLabels::Conversion => (
                    PrivilegedSplit::Columns(columns.privileged()),
                    Some(columns.conversions),
                ),
                LogLabels::Gumbel => {
                    let mut z = columns.privileged();
                    z.push(columns.conversions);
                    (PrivilegedSplit::Columns(z), None)
                }
                LogLabels::Click => (
                    PrivilegedSplit::Columns(vec![columns.impressions, columns.mean_position]),
                    Some(columns.clicks),
                ),
            },
            (true, None) => {
                return Err(Error::Config(
                    "privileged features from logs, but no simulated logs were given".into(),
                ))
            }
            (false, _) => match (self.privileged.as_deref().map(str::trim), synthetic_z) {
                (Some(spec), _) if !spec.is_empty() => (PrivilegedSplit::parse(spec)?, None),
                (_, Some(z)) => (PrivilegedSplit::Columns(z.to_vec()), None),
                (_, None) if synthetic => {
                    return Err(Error::Config(
                        "synthetic data without the generator's z columns".into(),
                    ))
                }
                (_, None) => (PrivilegedSplit::FILE_DEFAULT, None),
            },
        };
        Ok(PrepareOptions {
            min_group_size: self.min_group_size,
            t: self.t.unwrap_or(default_t),
            tau_target: self.tau_target.unwrap_or(default_tau),
            privileged,
            holdout: HOLDOUT.0,
            seed: self.data_seed,
            label_column,
            grades: self.labels == Labels::Grades && label_column.is_none(),
            unused_columns,
            transform: self.transform,
        })
    }
}

/// One comparison: every chosen method over several seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    pub data: DataSetup,
    pub methods: Vec<Method>,
    pub seeds: usize,
    pub first_seed: u64,
    /// The loss of students and teachers.
    pub loss: LossKind,
    /// Weight of the data loss in PFD Eq. 1.
    pub alpha: f64,
    /// Most epochs per model.
    pub epochs: usize,
    /// Early stopping: epochs without a better validation NDCG@8.
    pub patience: usize,
    pub lr: f64,
    /// L2 weight decay, added to each weight's gradient before Adam's step.
    pub weight_decay: f64,
    /// Standard deviation of the Gaussian noise on every training input.
    pub input_noise: f64,
    /// The probability of zeroing each hidden unit in training.
    pub dropout: f64,
    /// The hidden layers' normalisation, for students and teachers alike.
    pub norm: crate::model::Norm,
    /// Heads of self-attention over each query's documents (0: the MLP), for students and
    /// teachers alike.
    pub attention_heads: usize,
    /// Members of each student, whose scores are averaged.
    pub ensemble: usize,
    /// How the learning rate moves over the epochs.
    pub lr_schedule: crate::model::adam::LrSchedule,
    /// A global objective as the students' data loss (None: the loss's).
    pub objective: Option<Objective>,
    pub dual_rate_factor: f64,
    /// Hidden widths of the student (and of the teachers, unless `teacher_widths`).
    pub widths: Vec<usize>,
    pub teacher_widths: Option<Vec<usize>>,
    /// Heads of attention of the teachers (None: the student's `attention_heads`).
    pub teacher_attention_heads: Option<usize>,
    pub batch_docs: usize,
    /// Multi-teacher PFD's teachers.
    pub teachers: usize,
    /// The teachers' logits are divided by this before they become soft labels.
    pub teacher_temperature: f64,
    pub rd: RdConfig,
    pub rd_teacher_factor: f64,
    pub idcg_zero: IdcgZero,
    pub backend: Backend,
    /// Jobs trained side by side on the CPU engine (None: one per core); the results are the
    /// same for any number.
    pub jobs: Option<usize>,
    /// Why this setup departs from the defaults, when a front door lightened it: the page keeps
    /// smaller data and fewer epochs for a browser, and says so here and on screen.
    pub note: Option<String>,
    /// The global objectives' experiment (`distillrank objectives`, the page's Objectives view,
    /// Python's `objectives`): its own data and training settings, in the same document, so that
    /// one setup.json holds both jobs and every door reads it the same way. `compare` runs the
    /// fields above, `objectives` this section. Left out of the JSON while it is the default, so
    /// that a comparison's setup reads as one.
    #[serde(skip_serializing_if = "ObjectivesSetup::is_default")]
    pub objectives: ObjectivesSetup,
}

/// The table of settings' defaults ([`crate::settings`]), the one place they are written.
impl Default for Setup {
    fn default() -> Self {
        crate::settings::defaults("")
    }
}

impl Setup {
    /// Reads a setup from JSON; fields left out take their defaults. A refusal names the field
    /// (`data.source.synthetic.options.queries`) and, for a number out of its type's range, the
    /// range.
    pub fn from_json(text: &str) -> Result<Setup> {
        let setup: Setup = read_setup(text, "")?;
        crate::settings::check_setup_fields(&serde_json::to_value(&setup).unwrap_or_default())?;
        setup
            .data
            .check_privileged()
            .map_err(|e| Error::Config(format!("setup field data.privileged: {}", e.message())))?;
        Ok(setup)
    }

    /// Reads a setup to run as a comparison (`compare --setup`, the page's Open setup, Python's
    /// `compare`) as [`Setup::from_json`] does, and refuses one that holds only the global
    /// objectives' section: it names no comparison, and running the default one without a word
    /// would not be what was meant.
    pub fn comparison_from_json(text: &str) -> Result<Setup> {
        let trimmed = text.strip_prefix('\u{feff}').unwrap_or(text);
        if let Ok(serde_json::Value::Object(fields)) = serde_json::from_str(trimmed) {
            if fields.len() == 1 && fields.contains_key("objectives") {
                return Err(Error::Config(
                    "the setup holds only the global objectives' section (\"objectives\"), no comparison: run it with distillrank objectives --setup FILE (Python: distillrank.objectives), or add the comparison's settings".into(),
                ));
            }
        }
        Setup::from_json(trimmed)
    }

    /// Reads a setup file (a `setup.json` the page or `compare` wrote) as [`Setup::from_json`]
    /// does, and refuses a file that is not a JSON object of settings or names none: `null`, a
    /// list, a string or `{}` is not a setup someone meant to open.
    pub fn from_file_json(text: &str) -> Result<Setup> {
        let trimmed = text.strip_prefix('\u{feff}').unwrap_or(text);
        // A number past f64 is JSON a reader cannot hold: its field's refusal says so.
        let value: serde_json::Value = parse_json(trimmed).map_err(|e| match e {
            field if field.starts_with("setup field ") => Error::Config(field),
            e => Error::Config(format!("the setup is not JSON: {e}")),
        })?;
        let what = match &value {
            serde_json::Value::Object(fields) if fields.is_empty() => {
                return Err(Error::Config(
                    "the setup is an empty object ({}): it names no setting; a setup.json (the page's Download setup.json, or the one distillrank compare writes) names the data, the methods and the training settings".into(),
                ))
            }
            serde_json::Value::Object(_) => return Setup::comparison_from_json(trimmed),
            serde_json::Value::Null => "null".to_string(),
            serde_json::Value::Array(_) => "a list".to_string(),
            serde_json::Value::String(s) => {
                format!("the string \"{}\"", crate::error::printable(s))
            }
            serde_json::Value::Number(n) => format!("the number {n}"),
            serde_json::Value::Bool(b) => format!("{b}"),
        };
        Err(Error::Config(format!(
            "the setup is {what}: expected a JSON object of settings, as in the setup.json the page or distillrank compare writes"
        )))
    }

    /// Checks what can be checked before any data are loaded or any model is timed: the
    /// training settings and the number of seeds ([`CompareConfig::validate_settings`]), the
    /// synthetic data's size, and the size of the models on `inputs` features (the data's, when
    /// known; for synthetic data, x and z of the generator): each refused with the message
    /// training would give, before anything is allocated.
    pub fn check(&self, inputs: Option<usize>) -> Result<()> {
        crate::settings::check_setup_fields(&serde_json::to_value(self).unwrap_or_default())?;
        self.objectives.check()?;
        self.data.check_privileged()?;
        let config = self.compare_config(Engine::Cpu)?;
        config.validate_settings()?;
        if let (Some(dir), DataSource::Mq2008Folds) = (&self.data.folds, &self.data.source) {
            return Err(Error::Config(format!(
                "--folds {} and --bundled mq2008-folds both name the folds: name one",
                crate::error::printable(dir)
            )));
        }
        if self
            .data
            .folds
            .as_deref()
            .is_some_and(|d| d.trim().is_empty())
        {
            return Err(Error::Config(format!(
                "the folds directory's name is empty (--folds): name a directory of {FOLDS_LAYOUT}"
            )));
        }
        if self.data.folds.is_some() {
            if let DataSource::Files { train, .. } = &self.data.source {
                return Err(Error::Config(format!(
                    "--folds and --train both name the data ({} and {train}): the folds' files are each fold's training, validation and test files; name one",
                    self.data.folds.as_deref().unwrap_or_default()
                )));
            }
            // The folds leave the source at its default; any other source is data they would
            // not read.
            let default = DataSetup::default().source;
            if self.data.source != default {
                let other = match &self.data.source {
                    DataSource::Mq2008 => "the bundled mq2008 (--bundled mq2008)",
                    _ => "generated data (data.source.synthetic, with options other than the defaults)",
                };
                return Err(Error::Config(format!(
                    "--folds {} reads the folds' files, and the setup also names {other}, which the folds would not read: name one",
                    crate::error::printable(self.data.folds.as_deref().unwrap_or_default())
                )));
            }
        }
        if let DataSource::Files { valid, test, .. } = &self.data.source {
            check_query_files(valid, test, self.data.source.query_files())?;
        }
        // An empty name is a mistake (an unset shell variable), not "none": a model or scores
        // are left out by leaving the setting out.
        for (noun, outside) in [
            ("teacher", &self.data.teacher),
            ("reference", &self.data.reference),
        ] {
            for (kind, name) in [("model", &outside.model), ("scores", &outside.scores)] {
                if name.as_deref().is_some_and(|n| n.trim().is_empty()) {
                    return Err(Error::Config(format!(
                        "the {noun}'s {kind} file's name is empty (--{noun}-{kind}): name a file, or leave the setting out"
                    )));
                }
            }
        }
        if !self.data.has_folds() {
            for (noun, outside) in [
                ("teacher", &self.data.teacher),
                ("reference", &self.data.reference),
            ] {
                for (kind, name) in [("model", &outside.model), ("scores", &outside.scores)] {
                    if let Some(name) = name.as_deref().filter(|n| n.contains("{fold}")) {
                        return Err(Error::Config(format!(
                            "--{noun}-{kind} {}: {{fold}} stands for a fold's number, and this run has no folds: give --folds DIR (or --bundled mq2008-folds), or name the file itself",
                            crate::error::printable(name)
                        )));
                    }
                }
            }
        }
        let inputs = match &self.data.source {
            DataSource::Synthetic {
                options,
                valid_queries,
                test_queries,
            } => {
                let queries = options
                    .queries
                    .saturating_add(*valid_queries)
                    .saturating_add(*test_queries);
                options.check_size(queries)?;
                Some(inputs.unwrap_or(options.regular.saturating_add(options.privileged)))
            }
            // Files: their width is known once they are read; a model too large on one input
            // is too large on any, and is refused before they are.
            _ => Some(inputs.unwrap_or(1)),
        };
        if let Some(inputs) = inputs {
            let largest_group = match &self.data.source {
                DataSource::Synthetic { options, .. } => options.max_docs,
                _ => 0,
            };
            let rows = self.batch_docs.max(largest_group);
            let available = crate::memory::available_memory();
            crate::model::mlp::check_size(
                inputs,
                &self.widths,
                rows,
                available,
                "--widths (or --batch-docs)",
            )?;
            let teacher_heads = self.teacher_attention_heads.unwrap_or(self.attention_heads);
            let teacher_widths = self.teacher_widths.as_ref().unwrap_or(&self.widths);
            let flag = match (self.teacher_attention_heads, &self.teacher_widths) {
                (Some(_), _) => "--teacher-attention-heads",
                (None, Some(_)) => "--attention-heads (the teachers', with --teacher-widths)",
                (None, None) => "--attention-heads",
            };
            let (widths_flag, heads_flag) = match self.teacher_widths {
                Some(_) => ("--teacher-widths", "--teacher-attention-heads"),
                None => ("--widths", "--teacher-attention-heads"),
            };
            crate::model::attention::check_heads(
                teacher_heads,
                teacher_widths,
                flag,
                &format!("give {widths_flag} hidden layers, or {heads_flag} 0 (MLP teachers)"),
            )?;
            // Ranking Distillation's teacher is the student's widths scaled up
            // (--rd-teacher-factor), of the teachers' family.
            let ranking_distillation = self
                .methods
                .contains(&crate::ranking::distill::Method::RankingDistillation);
            if ranking_distillation && teacher_heads > 0 && self.widths.is_empty() {
                return Err(Error::Config(format!(
                    "{flag} needs a hidden layer to attend over, and Ranking Distillation's teacher takes the student's --widths (scaled by --rd-teacher-factor), which hold none; give --widths hidden layers, or {heads_flag} 0 (MLP teachers)"
                )));
            }
            if let Some(widths) = &self.teacher_widths {
                crate::model::mlp::check_size(
                    inputs,
                    widths,
                    rows,
                    available,
                    "--teacher-widths (or --batch-docs)",
                )?;
            }
        }
        Ok(())
    }

    /// Checks the setup a saved model records (`setup` in its config): the setup that trained
    /// it, read as strictly as a setup file, or (models the page saved before it recorded the
    /// whole setup) the data part of one. A field this build does not know is refused, as
    /// everywhere else in a model's config; the refusal is the message, for the door to name the
    /// file.
    pub fn check_recorded(value: &serde_json::Value) -> std::result::Result<(), String> {
        let text = value.to_string();
        let read = if value.get("data").is_some() || value.get("source").is_none() {
            read_json::<Setup>(&text, "").map(|_| ())
        } else {
            read_json::<DataSetup>(&text, "data").map(|_| ())
        };
        read.map_err(|e| format!("the setup it records: {e}"))
    }

    /// The command that runs this setup, quoted for a shell: `distillrank compare ...`.
    pub fn shell_command(&self) -> String {
        shell_words(self.command_line().iter().map(String::as_str))
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a setup serialises")
    }

    /// Every file the setup names, each with its field: the data files, the folds directory, and
    /// the teacher's and the reference's model and scores. A scores field is a list
    /// (`TRAIN,VALID,TEST`), each of its names a file ([`for_each_name`]). Relative names are
    /// read against one folder ([`resolve_files`]) and written from one (a run's `setup.json`).
    pub fn files_mut(&mut self) -> Vec<(&'static str, &mut String)> {
        let DataSetup {
            source,
            folds,
            teacher,
            reference,
            ..
        } = &mut self.data;
        let mut files = match source {
            DataSource::Files {
                train,
                valid,
                test,
                train_query,
                valid_query,
                test_query,
            } => {
                let mut files = vec![("data.source.files.train", train)];
                files.extend(valid.as_mut().map(|v| ("data.source.files.valid", v)));
                files.extend(test.as_mut().map(|t| ("data.source.files.test", t)));
                for (field, query) in [
                    ("data.source.files.train_query", train_query),
                    ("data.source.files.valid_query", valid_query),
                    ("data.source.files.test_query", test_query),
                ] {
                    files.extend(query.as_mut().map(|q| (field, q)));
                }
                files
            }
            _ => Vec::new(),
        };
        files.extend(folds.as_mut().map(|d| ("data.folds", d)));
        for (outside, model, scores) in [
            (teacher, "data.teacher.model", "data.teacher.scores"),
            (reference, "data.reference.model", "data.reference.scores"),
        ] {
            files.extend(outside.model.as_mut().map(|m| (model, m)));
            files.extend(outside.scores.as_mut().map(|s| (scores, s)));
        }
        files
    }

    /// The comparison to run on `engine`.
    pub fn compare_config(&self, engine: Engine) -> Result<CompareConfig> {
        if self.methods.is_empty() {
            return Err(Error::Config("choose at least one method".into()));
        }
        if self.data.labels == Labels::Grades {
            // The loss alone: an objective on grades is refused by the training loop, on the
            // labels themselves (clicks given as `labels: grades` are 0 and 1).
            let learner = crate::ranking::train::binary_learner(self.loss, None);
            if let Some(learner) = learner {
                return Err(Error::Config(format!(
                    "{learner}, and --training-labels grades gives the grades: choose --loss {}, or --training-labels gumbel",
                    crate::model::loss::LossKind::graded_names()
                )));
            }
        }
        let setup = serde_json::to_value(self).expect("a setup serialises");
        let config = CompareConfig {
            engine,
            external_named: !self.data.teacher.is_none(),
            ..CompareConfig::of_setup(&setup)?
        };
        config.validate_settings()?;
        Ok(config)
    }

    /// This setup with settings given as flags (`compare --alpha 0.3 --widths 64,32`): each
    /// (flag, values) sets the comparison's field of its row in the table of settings, read as a
    /// setup's JSON is read, so that a row is a flag with no code of its own. A number is checked
    /// against its row's range; several values make a list. A refusal names the flag.
    pub fn with_flags(&self, given: &[(&str, Vec<String>)]) -> Result<Setup> {
        let mut json = serde_json::to_value(self).expect("a setup serialises");
        for (flag, values) in given {
            let Some((setting, path)) = crate::settings::comparison_field(flag) else {
                return Err(Error::Config(format!(
                    "--{flag} fills no field of a comparison's setup"
                )));
            };
            let items = values
                .iter()
                .map(|text| setting.json_value(text))
                .collect::<std::result::Result<Vec<_>, String>>()
                .map_err(|e| Error::Config(format!("--{flag}: {e}")))?;
            let value = match <[serde_json::Value; 1]>::try_from(items) {
                Ok([one]) => one,
                Err(many) => serde_json::Value::Array(many),
            };
            let mut at = &mut json;
            for key in path.split('.') {
                at = &mut at[key];
            }
            *at = value;
        }
        let setup: Setup = crate::settings::read_section(json, "").map_err(|e| {
            let path = e.path().to_string();
            let flag = crate::settings::flag_fields()
                .find(|(_, field)| {
                    path == *field
                        || path.starts_with(&format!("{field}."))
                        || path.starts_with(&format!("{field}["))
                })
                .map(|(flag, _)| flag);
            // Several values (`--ensemble 2,3`) where the field holds one.
            let several = flag.and_then(|flag| {
                let (_, values) = given.iter().find(|(f, _)| *f == flag)?;
                let (setting, _) = crate::settings::comparison_field(flag)?;
                let one_number = setting.range.is_some() && setting.empty_list.is_none();
                let sequence = e.inner().to_string().starts_with("invalid type: sequence");
                (values.len() > 1 && one_number && sequence).then(|| {
                    format!(
                        "--{flag}: {} values ({}) where it takes one: expected {}",
                        values.len(),
                        crate::error::printable(&values.join(",")),
                        setting.expected()
                    )
                })
            });
            // Otherwise the field's words, under the flag's name where a flag filled it.
            let words = json_error(&path, e.inner());
            let field = format!("setup field {path}");
            Error::Config(several.unwrap_or_else(|| match flag {
                Some(flag) => match words.strip_prefix(&field) {
                    Some(rest) => format!("--{flag}{rest}"),
                    None => format!("--{flag}: {words}"),
                },
                None => words,
            }))
        })?;
        crate::settings::check_setup_fields(&serde_json::to_value(&setup).unwrap_or_default())?;
        Ok(setup)
    }

    /// The `distillrank compare` arguments that give this setup: only those that differ from
    /// the defaults, so that the command reads as what was chosen.
    pub fn command_line(&self) -> Vec<String> {
        let mine = serde_json::to_value(self).unwrap_or_default();
        let defaults = serde_json::to_value(Setup::default()).unwrap_or_default();
        let mut args = vec!["compare".to_string()];
        let mut put = |flag: &str, value: String| {
            args.push(format!("--{flag}"));
            args.push(value);
        };
        match &self.data.source {
            DataSource::Synthetic { .. } => {}
            DataSource::Mq2008 => put("bundled", "mq2008".into()),
            DataSource::Mq2008Folds => put("bundled", "mq2008-folds".into()),
            DataSource::Files {
                train, valid, test, ..
            } => {
                put("train", train.clone());
                if let Some(v) = valid {
                    put("valid", v.clone());
                }
                if let Some(t) = test {
                    put("test", t.clone());
                }
                let [train, valid, test] = self.data.source.query_files();
                for (flag, query) in [
                    ("train-query", train),
                    ("valid-query", valid),
                    ("test-query", test),
                ] {
                    if let Some(q) = query {
                        put(flag, q.to_string());
                    }
                }
            }
        }
        // Every other setting from the table of settings: its flag, where it differs from the
        // default (the simulated logs' only when the data simulate logs).
        for (flag, path) in crate::settings::flag_fields() {
            if of_logs(path) && !self.data.wants_logs() {
                continue;
            }
            let Some(value) = value_at(&mine, path).filter(|v| !v.is_null()) else {
                continue;
            };
            // A section the defaults leave out of the JSON (a reference with no model named):
            // its fields' defaults from the table.
            let default = match value_at(&defaults, path) {
                Some(default) => Some(default.clone()),
                None => crate::settings::default_json(path),
            };
            if default.as_ref() != Some(value) {
                put(flag, self.flag_value(path, value));
            }
        }
        args
    }

    /// A setting's value as its flag takes it: a list comma-separated, an enum by its name.
    fn flag_value(&self, path: &str, value: &serde_json::Value) -> String {
        let empty_list = crate::settings::setting_of_field(path).and_then(|s| s.empty_list);
        match value {
            serde_json::Value::String(s) => s.clone(),
            // `--widths none`: the word for an empty list, where the setting has one.
            serde_json::Value::Array(items) if items.is_empty() => {
                empty_list.unwrap_or_default().to_string()
            }
            serde_json::Value::Array(items) => items
                .iter()
                .map(|v| self.flag_value(path, v))
                .collect::<Vec<_>>()
                .join(","),
            serde_json::Value::Object(_) if path == "data.logs.logging_ranker" => {
                self.data.logs.logging_ranker.spec()
            }
            other => other.to_string(),
        }
    }

    /// Why each setting that no part of this comparison reads cannot matter here, by its flag:
    /// the teachers' settings without a method that learns from a teacher, the Gumbel
    /// labelling's without Gumbel labels, Ranking Distillation's without it, multi-teacher
    /// PFD's without it, the objectives' rate without an objective. A sweep of one of them is
    /// refused; a comparison that sets one names it ([`Setup::unused_settings`]).
    pub fn not_read(&self) -> Vec<(&'static str, String)> {
        use crate::ranking::distill::{Method, Student};
        let methods = |m: &[Method]| m.iter().map(|m| m.name()).collect::<Vec<_>>().join(",");
        let mut out = Vec::new();
        if !self.methods.iter().any(|m| {
            matches!(m.entry().student, Student::TeacherLoss) && *m != Method::NoDistillation
        }) {
            let why = |what: &str| {
                format!(
                    "{what}, and no method of --methods {} learns from a teacher",
                    methods(&self.methods)
                )
            };
            out.push(("alpha", why("it weighs a teacher's soft labels")));
            out.push((
                "teacher-temperature",
                why("it scales a teacher's soft labels"),
            ));
            out.push((
                "teacher-widths",
                why("it sizes the teacher's hidden layers"),
            ));
            // A teacher trained elsewhere: its soft labels too.
            out.push(("teacher-model", why("it is a teacher")));
            out.push(("teacher-scores", why("they are a teacher's scores")));
            // Ranking Distillation's teacher is of the teachers' family too.
            if !self.methods.contains(&Method::RankingDistillation) {
                out.push(("teacher-attention-heads", why("it shapes the teacher")));
            }
        }
        let column_labels = self.data.wants_logs() && self.data.log_labels != LogLabels::Gumbel;
        if self.data.labels == Labels::Grades || column_labels {
            let labels = if column_labels {
                "y comes from the logs (--log-labels)"
            } else {
                "y is the grade (--training-labels grades)"
            };
            let why =
                format!("it labels the grades only with --training-labels gumbel, and {labels}");
            out.push(("tau-target", why.clone()));
            out.push(("t", why));
        }
        if !self.methods.contains(&Method::RankingDistillation) {
            let why = "only ranking-distillation reads it, and --methods does not list it";
            // Every setting of its section (`rd.k`, `rd.hybrid_epochs`, ...).
            for (flag, _) in crate::settings::flag_fields().filter(|(_, p)| p.starts_with("rd.")) {
                out.push((flag, why.to_string()));
            }
        }
        if !self.methods.contains(&Method::MultiTeacherPfd) {
            out.push((
                "teachers",
                "only multi-teacher-pfd reads it, and --methods does not list it".into(),
            ));
        }
        if self.data.teacher.is_none() {
            let why =
                "it says how a teacher model reads the files, and no --teacher-model is named";
            out.push(("teacher-columns", why.into()));
            out.push(("teacher-absent", why.into()));
        }
        if self.data.reference.is_none() {
            let why =
                "it says how a reference model reads the files, and no --reference-model is named";
            out.push(("reference-columns", why.into()));
            out.push(("reference-absent", why.into()));
        }
        // A click model reads its own parameter: PBM the position bias, DCM the chance of
        // scanning on after a click.
        if self.data.wants_logs() {
            out.extend(self.data.logs.not_read());
        }
        if self.objective.is_none() {
            out.push((
                "dual-rate-factor",
                "the multipliers' rate is read only with an --objective".into(),
            ));
        }
        out
    }

    /// The settings this setup gives another value than the default that no part of the
    /// comparison reads ([`Setup::not_read`]), each in words: results.json's `unused_settings`,
    /// printed by the CLI, shown by the page, in Python's results.
    pub fn unused_settings(&self) -> Vec<String> {
        let set: Vec<(String, String, String)> = self.differences();
        let mut unused: Vec<String> = self
            .not_read()
            .into_iter()
            .filter_map(|(flag, why)| {
                let (_, value, _) = set.iter().find(|(f, _, _)| f == flag)?;
                Some(format!("--{flag} {value} is not used: {why}"))
            })
            .collect();
        // The simulated logs' settings where the data simulate none: [`Setup::differences`]
        // leaves them out (a command line refuses most of them without --privileged logs, and
        // --log-labels among them is named here), and a setup document may set any.
        if !self.data.wants_logs() {
            let mine = serde_json::to_value(self).unwrap_or_default();
            let defaults = serde_json::to_value(Setup::default()).unwrap_or_default();
            for (flag, path) in crate::settings::flag_fields().filter(|(_, p)| of_logs(p)) {
                let Some(value) = value_at(&mine, path).filter(|v| !v.is_null()) else {
                    continue;
                };
                let default = value_at(&defaults, path)
                    .cloned()
                    .or_else(|| crate::settings::default_json(path));
                if default.as_ref() != Some(value) {
                    unused.push(format!(
                        "--{flag} {} is not used: it describes the simulated logs, and the privileged features are not the logs (--privileged logs)",
                        self.flag_value(path, value)
                    ));
                }
            }
        }
        unused
    }

    /// The settings where this setup differs from the defaults: (setting, this value, the
    /// default), each as the command line writes it. The page lists them beside its form.
    pub fn differences(&self) -> Vec<(String, String, String)> {
        let defaults = serde_json::to_value(Setup::default()).unwrap_or_default();
        let default_value = |flag: &str| -> String {
            match flag {
                "privileged" => "the data's own".into(),
                "tau-target" => format!(
                    "{SYNTHETIC_TAU_TARGET} (synthetic) / the largest training grade + {FILES_TAU_ABOVE_TOP} (files)"
                ),
                "t" => format!("{SYNTHETIC_T} (synthetic) / {FILES_T} (files)"),
                "teacher-widths" => "the student's".into(),
                "train" | "valid" | "test" | "bundled" => "synthetic data".into(),
                "train-query" | "valid-query" | "test-query" => "FILE.query beside the file".into(),
                // A section the defaults leave out of the JSON: its fields' table defaults.
                _ => crate::settings::flag_fields()
                    .find(|(f, _)| *f == flag)
                    .and_then(|(_, path)| {
                        let value = value_at(&defaults, path)
                            .cloned()
                            .or_else(|| crate::settings::default_json(path))?;
                        Some(Setup::default().flag_value(path, &value))
                    })
                    .unwrap_or_else(|| "default".into()),
            }
        };
        self.command_line()[1..]
            .chunks(2)
            .map(|pair| {
                let flag = pair[0].trim_start_matches("--").to_string();
                let default = default_value(&flag);
                (flag, pair[1].clone(), default)
            })
            .collect()
    }
}

/// Where the global objectives' binary examples come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ObjectivesData {
    /// The synthetic imbalanced task: one draw of `train + valid + test` examples (fields left
    /// out take the table of settings' defaults).
    Synthetic(SynthBinaryOptions),
    /// MQ2008 Fold1 as bundled with distillrank (its own train, validation and test splits), each
    /// document an example, positive when its grade is at least `threshold`.
    Mq2008 { threshold: u8 },
    /// LETOR files (paths for the CLI; the page records the names of its uploads), each document
    /// an example, positive when its grade is at least `threshold`. A missing validation or test
    /// split is held out of the training queries ([`HOLDOUT`]).
    Files {
        train: String,
        #[serde(default)]
        valid: Option<String>,
        #[serde(default)]
        test: Option<String>,
        threshold: u8,
        /// A split's `.query` file, as [`DataSource::Files`]'.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        train_query: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        valid_query: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        test_query: Option<String>,
    },
}

impl ObjectivesData {
    /// The `.query` files named for the training, validation and test files (none but for
    /// files).
    pub fn query_files(&self) -> [Option<&str>; 3] {
        match self {
            ObjectivesData::Files {
                train_query,
                valid_query,
                test_query,
                ..
            } => [
                train_query.as_deref(),
                valid_query.as_deref(),
                test_query.as_deref(),
            ],
            _ => [None; 3],
        }
    }
}

/// Where a global objectives' setup document ([`ObjectivesSetup::from_json`]) holds the
/// section's fields, for a message that names them: `objectives.` in a whole setup (as
/// `objectives` writes it), nothing in the section alone.
pub fn objectives_section_in(text: &str) -> &'static str {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(value) if !is_section_alone(&value) => "objectives.",
        _ => "",
    }
}

/// Whether a setup's JSON is the global objectives' section alone (as `objectives` wrote it
/// before the two jobs shared one document) rather than a whole [`Setup`]: its `objectives` is the
/// list of objectives, or it has a field only the section has, or its `data` names the section's
/// sources. A whole setup (`compare`'s, with the section left out at its defaults) is none of these.
fn is_section_alone(value: &serde_json::Value) -> bool {
    match value.get("objectives") {
        Some(serde_json::Value::Object(_)) => return false,
        Some(serde_json::Value::Array(_)) => return true,
        _ => {}
    }
    let section_only = [
        "surrogate",
        "initial_lambda",
        "batch_size",
        "at_precision",
        "at_recall",
    ];
    let section_sources = ["synthetic", "mq2008", "files"];
    section_only.iter().any(|k| value.get(k).is_some())
        || value
            .get("data")
            .and_then(serde_json::Value::as_object)
            .is_some_and(|data| section_sources.iter().any(|k| data.contains_key(*k)))
}

/// The global objectives' comparison (Eban et al.: log-loss against AUC-PR, recall at precision,
/// ... trained through Lagrange multipliers), as `distillrank objectives`, the page's Objectives
/// view and Python describe it, with **one** set of defaults (the CLI's). Fields left out of its
/// JSON take their defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectivesSetup {
    pub data: ObjectivesData,
    /// Each trains one model per seed.
    pub objectives: Vec<Objective>,
    pub seeds: usize,
    pub first_seed: u64,
    /// The surrogate of the 0-1 loss in the bounds.
    pub surrogate: Surrogate,
    /// Most epochs per model.
    pub epochs: usize,
    /// Early stopping: epochs without a better validation AUC-PR.
    pub patience: usize,
    /// Adam's learning rate (model and anchor biases).
    pub lr: f64,
    /// The multipliers ascend at this factor times the learning rate.
    pub dual_rate_factor: f64,
    /// Every multiplier's starting value.
    pub initial_lambda: f64,
    pub widths: Vec<usize>,
    pub batch_size: usize,
    /// The precision of the reported recall-at-precision metric; None: the first
    /// recall-at-precision objective's target, else 0.8.
    pub at_precision: Option<f64>,
    /// The recall of the reported precision-at-recall metric; None: the first
    /// precision-at-recall objective's target, else 0.9.
    pub at_recall: Option<f64>,
    pub backend: Backend,
}

/// The table of settings' defaults (fields `objectives.*`).
impl Default for ObjectivesSetup {
    fn default() -> Self {
        crate::settings::defaults("objectives")
    }
}

impl ObjectivesSetup {
    /// The settings this setup gives another value than the default that none of its
    /// objectives reads, each in words (as [`Setup::unused_settings`]): the multipliers' rate
    /// and start without an objective that has a constraint, the bounds' surrogate with the log
    /// loss alone.
    pub fn unused_settings(&self) -> Vec<String> {
        use crate::model::objective::Objective;
        let defaults = ObjectivesSetup::default();
        let listed = self
            .objectives
            .iter()
            .map(Objective::name)
            .collect::<Vec<_>>()
            .join(",");
        let mut unused = Vec::new();
        if self.objectives.iter().all(|o| o.n_lambdas() == 0) {
            let why = format!("no objective of --objectives {listed} has a constraint, and so no Lagrange multiplier");
            if self.dual_rate_factor != defaults.dual_rate_factor {
                unused.push(format!(
                    "--dual-rate-factor {} is not used: {why}",
                    crate::error::shown(self.dual_rate_factor)
                ));
            }
            if self.initial_lambda != defaults.initial_lambda {
                unused.push(format!(
                    "--initial-lambda {} is not used: {why}",
                    crate::error::shown(self.initial_lambda)
                ));
            }
        }
        if self.objectives.iter().all(|o| *o == Objective::LogLoss)
            && self.surrogate != defaults.surrogate
        {
            unused.push(format!(
                "--surrogate {} is not used: the log loss bounds nothing, and --objectives {listed} has no other objective",
                serde_json::to_value(self.surrogate)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ));
        }
        unused
    }

    /// The files the setup reads: its data files.
    pub fn files(&self) -> Vec<&str> {
        match &self.data {
            ObjectivesData::Files {
                train,
                valid,
                test,
                train_query,
                valid_query,
                test_query,
                ..
            } => std::iter::once(train)
                .chain(valid)
                .chain(test)
                .chain(train_query)
                .chain(valid_query)
                .chain(test_query)
                .map(String::as_str)
                .collect(),
            ObjectivesData::Synthetic(_) | ObjectivesData::Mq2008 { .. } => Vec::new(),
        }
    }

    /// Reads the global objectives' setup from JSON, strictly: a whole setup ([`Setup`], whose
    /// `objectives` section this is, as `objectives` writes it), or the section alone (as it was
    /// written before the two shared one document). An unknown field at any level is refused, a
    /// refusal names the field (`objectives.data.synthetic.train`), and every number is checked
    /// against the table of settings.
    pub fn from_json(text: &str) -> Result<ObjectivesSetup> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let value: serde_json::Value = read_setup(text, "")?;
        let setup = if is_section_alone(&value) {
            read_setup(text, "objectives")?
        } else {
            // A comparison's document without the objectives' section names no objectives
            // comparison: running the default one without a word would not be what was meant
            // (as `compare` refuses the section alone). An empty document is the defaults.
            let names_a_comparison = value.as_object().is_some_and(|o| !o.is_empty());
            if names_a_comparison && value.get("objectives").is_none() {
                return Err(Error::Config(
                    "the setup holds a comparison and no global objectives' section (\"objectives\"): run it with distillrank compare --setup FILE (Python: distillrank.compare), or add the objectives' section".into(),
                ));
            }
            Setup::from_json(text)?.objectives
        };
        setup.check()?;
        Ok(setup)
    }

    /// The files the setup names, each with its field.
    pub fn files_mut(&mut self) -> Vec<(&'static str, &mut String)> {
        match &mut self.data {
            ObjectivesData::Files {
                train,
                valid,
                test,
                train_query,
                valid_query,
                test_query,
                ..
            } => {
                let mut files = vec![("objectives.data.files.train", train)];
                files.extend(valid.as_mut().map(|v| ("objectives.data.files.valid", v)));
                files.extend(test.as_mut().map(|t| ("objectives.data.files.test", t)));
                for (field, query) in [
                    ("objectives.data.files.train_query", train_query),
                    ("objectives.data.files.valid_query", valid_query),
                    ("objectives.data.files.test_query", test_query),
                ] {
                    files.extend(query.as_mut().map(|q| (field, q)));
                }
                files
            }
            _ => Vec::new(),
        }
    }

    /// The setup as a whole [`Setup`] document whose `objectives` section is this one (the
    /// comparison's fields left out, at their defaults).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&serde_json::json!({ "objectives": self }))
            .expect("a setup serialises")
    }

    /// Whether every field is the default (a comparison's setup then leaves the section out).
    pub fn is_default(&self) -> bool {
        *self == ObjectivesSetup::default()
    }

    /// Checks what can be checked before any data are made or loaded: every number against the
    /// table of settings, the list of objectives and the training settings.
    pub fn check(&self) -> Result<()> {
        crate::settings::check_objectives_fields(&serde_json::to_value(self).unwrap_or_default())?;
        self.config()?;
        if let ObjectivesData::Files { valid, test, .. } = &self.data {
            check_query_files(valid, test, self.data.query_files())?;
        }
        // The model's size before any data are made or read: on the synthetic task's features,
        // or on one input for files (too large on one is too large on any).
        let inputs = match &self.data {
            ObjectivesData::Synthetic(options) => options.features,
            _ => 1,
        };
        crate::model::mlp::check_size(
            inputs,
            &self.widths,
            self.batch_size,
            crate::memory::available_memory(),
            "--widths (or --batch-size)",
        )
    }

    /// The training settings every run shares (each run sets its objective and seed), checked.
    pub fn config(&self) -> Result<ObjectivesConfig> {
        for (i, o) in self.objectives.iter().enumerate() {
            if self.objectives[..i].contains(o) {
                return Err(Error::Config(format!(
                    "--objectives: objective '{o}' is listed twice: list each once"
                )));
            }
        }
        let Some(&first) = self.objectives.first() else {
            return Err(Error::Config("--objectives lists no objective".into()));
        };
        let precision = self.at_precision.unwrap_or_else(|| {
            self.objectives
                .iter()
                .find_map(|o| match o {
                    Objective::RecallAtPrecision(a) => Some(*a),
                    _ => None,
                })
                .unwrap_or(0.8)
        });
        let recall = self.at_recall.unwrap_or_else(|| {
            self.objectives
                .iter()
                .find_map(|o| match o {
                    Objective::PrecisionAtRecall(b) => Some(*b),
                    _ => None,
                })
                .unwrap_or(0.9)
        });
        let section = serde_json::to_value(self).expect("a setup serialises");
        let config = ObjectivesConfig {
            objective: first,
            targets: Targets { precision, recall },
            seed: self.first_seed,
            ..ObjectivesConfig::of_setup(&section)?
        };
        config.validate()?;
        if self.seeds == 0 {
            return Err(Error::Config("--seeds must be at least 1".into()));
        }
        Ok(config)
    }
}

/// The value at a path (`data.logs.sessions`) of a setup's JSON.
fn value_at<'a>(json: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    path.split('.').try_fold(json, |at, key| at.get(key))
}

/// Whether a setting belongs to the simulated logs (it applies only with `--privileged logs`).
fn of_logs(path: &str) -> bool {
    path.starts_with("data.logs.") || path == "data.log_labels"
}

/// Rewrites each file name `value` (of `field`) holds with `f`: the whole value, or, for a list
/// of names (a teacher's or a reference's scores, `TRAIN,VALID,TEST`), each part that is not
/// empty (an empty part names no file: `,VALID,TEST`).
pub fn for_each_name(
    field: &str,
    value: &mut String,
    mut f: impl FnMut(&str) -> Result<String>,
) -> Result<()> {
    if !field.ends_with(".scores") {
        if !value.trim().is_empty() {
            *value = f(value)?;
        }
        return Ok(());
    }
    let parts: Vec<String> = value
        .split(',')
        .map(|part| match part.trim() {
            "" => Ok(part.to_string()),
            name => f(name),
        })
        .collect::<Result<_>>()?;
    *value = parts.join(",");
    Ok(())
}

/// Resolves a setup's relative file names (`files`, each with its field) the same way in every
/// door: against `base`, the folder they are relative to (the CLI's: the setup file's own folder;
/// Python's: the `base` it is given), or, where a door has no such folder, refused by field.
/// Absolute paths stay as they are.
#[cfg(not(target_arch = "wasm32"))]
pub fn resolve_files(
    files: Vec<(&str, &mut String)>,
    base: Option<&std::path::Path>,
) -> Result<()> {
    for (field, value) in files {
        for_each_name(field, value, |file| {
            if std::path::Path::new(file).is_absolute() {
                return Ok(file.to_string());
            }
            match base {
                Some(folder) => Ok(folder.join(file).display().to_string()),
                None => Err(Error::Config(format!(
                    "{field}: '{file}' is a relative path, and this setup came without the folder it is relative to: give an absolute path, or the folder (Python: base=FOLDER)"
                ))),
            }
        })?;
    }
    Ok(())
}

/// `distillrank ARGS`, each argument quoted for a POSIX shell where it needs it (a space, a
/// quote, a `$`, an empty string).
pub fn shell_words<'a>(args: impl IntoIterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = args
        .into_iter()
        .map(|a| {
            // Words of these characters need no quotes (Python's shlex.quote keeps the same).
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
            match shlex::try_quote(a) {
                _ if plain => a.to_string(),
                Ok(q) => q.into_owned(),
                // Only a NUL byte cannot be quoted, and no argument holds one.
                Err(_) => crate::error::printable(a),
            }
        })
        .collect();
    std::iter::once("distillrank".to_string())
        .chain(quoted)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads a setup's JSON text strictly as `T`, the section at `section` ([`read_json`]); a
/// byte-order mark is accepted, as in LETOR files.
fn read_setup<T: serde::de::DeserializeOwned>(text: &str, section: &str) -> Result<T> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // A key twice in one object would read as its last value: one of them is a mistake.
    parse_json::<DistinctKeys>(text).map_err(|e| Error::Config(format!("the setup: {e}")))?;
    read_json(text, section).map_err(|e| Error::Config(format!("the setup: {e}")))
}

/// Reads JSON strictly as `T`, the section at `section` of a setup (`""`: a whole one), each field
/// it leaves out taking the table of settings' default ([`crate::settings::read_section`]). A
/// refusal says it in words: the field it is about (its path from the top, `data.logs.seed`,
/// `widths[2]`), and for a number its field cannot hold, the range the table of settings gives
/// that field (or the range of its type).
pub fn read_json<T: serde::de::DeserializeOwned>(
    text: &str,
    section: &str,
) -> std::result::Result<T, String> {
    let value: serde_json::Value = parse_json(text)?;
    let given = value.clone();
    crate::settings::read_section(value, section)
        .map_err(|e| json_error(&as_given(&given, &e.path().to_string()), e.inner()))
}

/// Parses JSON text as `T`; a refusal names the field it was reading where it has one: a number
/// no JSON reader holds (`"ensemble": 1e400`) is its field's, with the range the table of
/// settings gives it.
fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> std::result::Result<T, String> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let at = format!("(line {}, column {})", inner.line(), inner.column());
        if path == "." || !inner.to_string().starts_with("number out of range") {
            return json_error(".", &inner);
        }
        let field: String = path.split('[').next().unwrap_or(&path).to_string();
        let expected = crate::settings::bound_of_field(&field)
            .or_else(|| {
                crate::settings::bound_of_field(&format!("{}{field}", crate::settings::OBJECTIVES))
            })
            .map(|b| b.expected())
            .unwrap_or_else(|| "a number a 64-bit float holds".to_string());
        format!("setup field {path}: a number out of range {at}, expected {expected}")
    })?;
    reader.end().map_err(|e| json_error(".", &e))?;
    Ok(value)
}

/// The field at `path` (`widths[0]`) as the setup gives it: a single value where a list goes is
/// read as a list of one (`"widths": 8`), and one that cannot be read is the field's own
/// (`widths`), not the first item of a list the setup does not have.
fn as_given(given: &serde_json::Value, path: &str) -> String {
    let Some(field) = path.strip_suffix("[0]") else {
        return path.to_string();
    };
    let pointer: String = field
        .replace('[', ".")
        .replace(']', "")
        .split('.')
        .map(|key| format!("/{key}"))
        .collect();
    match given.pointer(&pointer) {
        Some(value) if !value.is_array() => field.to_string(),
        _ => path.to_string(),
    }
}

/// JSON whose every object names each key once: read only to refuse one that names a key twice.
struct DistinctKeys;

impl<'de> serde::Deserialize<'de> for DistinctKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(DistinctKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for DistinctKeys {
    type Value = DistinctKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("JSON")
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Self, E> {
        Ok(DistinctKeys)
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Self, E> {
        Ok(DistinctKeys)
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Self, E> {
        Ok(DistinctKeys)
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Self, E> {
        Ok(DistinctKeys)
    }
    fn visit_str<E>(self, _: &str) -> std::result::Result<Self, E> {
        Ok(DistinctKeys)
    }
    fn visit_unit<E>(self) -> std::result::Result<Self, E> {
        Ok(DistinctKeys)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<Self, A::Error> {
        while seq.next_element::<DistinctKeys>()?.is_some() {}
        Ok(DistinctKeys)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                return Err(serde::de::Error::custom(format!(
                    "\"{}\" is given twice in one object: give each setting once",
                    crate::error::printable(&key)
                )));
            }
            map.next_value::<DistinctKeys>()?;
            seen.insert(key);
        }
        Ok(DistinctKeys)
    }
}

/// A serde_json error at `path` in words.
fn json_error(path: &str, e: &serde_json::Error) -> String {
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message,
    };
    if !matches!(e.classify(), serde_json::error::Category::Data) || path == "." {
        return format!("{message} (line {}, column {})", e.line(), e.column());
    }
    field_error(path, message)
}

/// [`json_error`]'s words for the data error `message` at the field `path`. A section read
/// field by field (a logging ranker's) names the field that failed, `field `NAME`: ...`: the
/// words are then that field's.
fn field_error(path: &str, message: String) -> String {
    if let Some((name, rest)) = message
        .strip_prefix("field `")
        .and_then(|m| m.split_once("`: "))
    {
        return field_error(&format!("{path}.{name}"), rest.to_string());
    }
    // A setting's name where its field is another (`training_labels` for `data.labels`, `queries`
    // at the top level): the field.
    if let Some(name) = message
        .strip_prefix("unknown field `")
        .and_then(|m| m.split('`').next())
    {
        let setting = name.replace('_', "-");
        if let Some((_, field)) = crate::settings::comparison_field(&setting) {
            if field != path {
                return format!(
                    "setup field {path}: {message}; the setting {setting} is the field {field}"
                );
            }
        }
    }
    // A number its field cannot hold: the field's range, from the table of settings where it
    // has a row.
    let field: String = path.split('[').next().unwrap_or(path).to_string();
    let types = [
        ("expected usize", "a whole number"),
        ("expected u64", "a whole number"),
        ("expected u32", "a whole number"),
        ("expected u8", "a whole number"),
        ("expected f64", "a number"),
        ("expected a sequence", "a list"),
        ("expected a boolean", "true or false"),
        ("expected a string", "text in quotes"),
        // An entry by name or with its settings (`"transform": "rank-gauss"` or `{...}`).
        (
            "expected string or map",
            "a name in quotes, or a section of settings",
        ),
    ];
    if let Some((_, kind)) = types.iter().find(|(t, _)| message.ends_with(t)) {
        let found = message
            .strip_prefix("invalid type: ")
            .or_else(|| message.strip_prefix("invalid value: "))
            .and_then(|m| m.split(", expected").next())
            // A list and a section in the words of the rest of the message.
            .map(|found| match found {
                "sequence" => "a list",
                "map" => "a section",
                found => found,
            })
            .unwrap_or("another value");
        // A number in words: a huge integer reaches serde as a float (`1e+23`).
        let number = found
            .strip_prefix("floating point `")
            .or_else(|| found.strip_prefix("integer `"))
            .and_then(|n| n.strip_suffix('`'))
            .and_then(|n| n.parse::<f64>().ok().map(|x| (n, x)));
        // Out of range only where the field holds a number: `"privileged": 30` is text's.
        let numeric = matches!(*kind, "a whole number" | "a number");
        let found = match number {
            Some((n, x)) if *kind == "a whole number" && x.fract() != 0.0 => {
                format!("{n} is not a whole number")
            }
            Some((n, _)) if numeric => format!("{n} is out of range"),
            _ => found.to_string(),
        };
        // The fields of the objectives' setup have their rows under their own prefix.
        let row = crate::settings::bound_of_field(&field).or_else(|| {
            crate::settings::bound_of_field(&format!("{}{field}", crate::settings::OBJECTIVES))
        });
        return match row {
            // A list that may be empty says how: `widths: []` is no hidden layer.
            Some(b) if b.empty_list.is_some() => format!(
                "setup field {path}: {found}, expected a list of {}, or [] for no hidden layer",
                b.expected().replacen("a whole number", "whole numbers", 1)
            ),
            Some(b) => format!("setup field {path}: {found}, expected {}", b.expected()),
            None => format!("setup field {path}: {found}, expected {kind}"),
        };
    }
    format!("setup field {path}: {message}")
}

/// The choices a setup offers, from their entries: every loss (name, label, family, help) and
/// every method (name, label, help, colour) and every input transform (name, help), as the page
/// builds its form and Python lists its names (`{"losses": [...], "methods": [...],
/// "transforms": [...]}`).
pub fn choices_json() -> serde_json::Value {
    serde_json::json!({
        "losses": crate::model::loss::losses_json(),
        "methods": crate::ranking::distill::methods_json(),
        "transforms": Transform::all_json(),
    })
}

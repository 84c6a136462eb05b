//! Loading and preparing a setup's data, once for every door: load or generate, hold out, simulate
//! or read logs, split the features, check; through a file of prepared splits on disk when asked.

use std::path::{Path, PathBuf};

use super::store::{sidecar_path, Role, Store};
use super::Reporter;
use crate::data::logs::{ClickTable, LogColumns};
use crate::data::prepare::{
    hold_out_test, hold_out_test_groups, prepare_raw_in, PrepareOptions, Prepared, RawSplits,
    Scratch, PREPARE_STEPS,
};
use crate::data::synth::generate_splits;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::setup::{DataSetup, DataSource, HOLDOUT};

/// The prepared splits, and what reports and saved models need to know of their source.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedData {
    pub prepared: Prepared,
    /// Feature columns of the source data a student reads from (the original file's, without
    /// simulated logs or separately given privileged features).
    pub source_features: usize,
    /// The source data's feature columns' names, where its files name them (Parquet) and a
    /// student reads them all: kept in a saved student ([`crate::model_io::ModelConfig`]),
    /// which checks the columns of the files it scores against them.
    pub feature_names: Option<Vec<String>>,
    /// The file that names them: the training file, or where it names none (LETOR text) the
    /// first validation or test file that does.
    pub names_from: Option<String>,
    pub description: String,
    pub options: PrepareOptions,
    /// The simulated logs' summary, when z comes from logs simulated here.
    pub logs: Option<serde_json::Value>,
    /// The scores of a teacher trained elsewhere (`data.teacher`), matched to the splits.
    pub teacher: Option<std::sync::Arc<crate::ranking::distill::ExternalScores>>,
    /// The scores of a reference model trained elsewhere (`data.reference`) on the validation
    /// and test splits: a row of the comparison ([`crate::pipeline::report::reference`]).
    pub reference: Option<std::sync::Arc<crate::ranking::distill::ExternalScores>>,
    /// The training split's impressions and clicks by displayed rank, in its order, when its
    /// logs were simulated here: what the methods that learn from clicks read.
    pub clicks: Option<std::sync::Arc<ClickTable>>,
    /// The relevance estimates of the clicks, computed at the first comparison that needs them
    /// ([`PreparedData::click_labels`]) and kept for the next and for the report.
    click_labels: std::sync::OnceLock<std::sync::Arc<crate::ranking::clicks::ClickLabels>>,
}

/// The splits as loaded or generated, before preparation.
struct Loaded {
    train: Dataset,
    valid: Option<Dataset>,
    test: Option<Dataset>,
    synthetic_z: Option<Vec<usize>>,
    description: String,
    names: [Option<String>; 3],
    /// The file that names the columns, and its names ([`crate::data::check_splits_named`]).
    feature_names: Option<(String, Vec<String>)>,
    /// Warnings of a split that holds another's queries ([`shared_queries`]).
    shared: Vec<String>,
}

/// A validation or test file `split` (named `name`) against the training file's columns: more
/// columns than the training file's are refused (a model trained on it could not read them), and
/// fewer, unless `allow_missing` says its last columns are sparse zeros; as a saved model's
/// scoring (`model_io::model_inputs`) refuses them.
fn check_columns(
    split: &Dataset,
    name: &str,
    train: &Dataset,
    train_name: &str,
    allow_missing: bool,
) -> Result<()> {
    let (k, nf) = (split.n_features, train.n_features);
    let name = crate::error::printable(name);
    let train_name = crate::error::printable(train_name);
    if k > nf {
        return Err(Error::Data(format!(
            "{name}: the data have {k} feature columns (highest index), the training file {train_name} has {nf}: another dataset? A model trained on {train_name} cannot read columns past {nf}"
        )));
    }
    if k < nf && !allow_missing {
        return Err(Error::Data(format!(
            "{name}: the data have {k} feature columns (highest index), the training file {train_name} has {nf}: another dataset? If this file only leaves its last columns out (sparse zeros), allow_missing_features true (--allow-missing-features true) reads them as 0"
        )));
    }
    Ok(())
}

/// What every warning of a split holding another's queries says, and only those:
/// [`is_shared_queries`] finds them among the prepared splits' warnings.
const SHARED_QUERIES: &str = "with the same documents as the";

/// Whether a prepared splits' warning is one of [`shared_queries`].
pub fn is_shared_queries(warning: &str) -> bool {
    warning.contains(SHARED_QUERIES)
}

/// The warnings of a split that holds queries of another: the test split's queries in the
/// training or the validation split, the validation split's in the training split (a file named
/// twice, a test file appended to the training file). Its figures then measure queries the
/// model trained on, or was chosen on. Warnings, kept with the prepared splits, not refusals:
/// scoring the training queries can be meant (a check that a model fits); the folds, whose parts
/// are distinct by definition, refuse them ([`super::folds::shared_queries_in_fold`]).
fn shared_queries(splits: &[(Option<&str>, Option<&Dataset>); 3]) -> Vec<String> {
    let mut warnings = Vec::new();
    let [train, valid, test] = [0, 1, 2];
    let words = ["training", "validation", "test"];
    for (this, other) in [(test, train), (test, valid), (valid, train)] {
        let (split, other_split) = (words[this], words[other]);
        let ((Some(name), Some(data)), (Some(other_name), Some(other))) =
            (splits[this], splits[other])
        else {
            continue;
        };
        // Groups numbered 1..n by a `.query` file have no identity to compare, as in the
        // folds' check; qids a file or an array gives are compared, whatever their numbers.
        if super::folds::numbered_by_query_file(name, data)
            || super::folds::numbered_by_query_file(other_name, other)
        {
            continue;
        }
        let shared = data.shared_queries(other);
        if let Some(first) = shared.first() {
            warnings.push(format!(
                "the {split} split {} holds {} of its {} queries (qid {first} first) {SHARED_QUERIES} {other_split} split {}: its figures measure queries the model {}",
                crate::error::printable(name),
                shared.len(),
                data.n_groups(),
                crate::error::printable(other_name),
                if other_split == "training" { "trained on" } else { "was chosen on" }
            ));
        }
    }
    warnings
}

fn load(data: &DataSetup, store: &mut dyn Store, reporter: &mut dyn Reporter) -> Result<Loaded> {
    Ok(match &data.source {
        DataSource::Files {
            train, valid, test, ..
        } => {
            for (name, split) in [
                (Some(train), "training"),
                (valid.as_ref(), "validation"),
                (test.as_ref(), "test"),
            ] {
                if name.is_some_and(|n| n.trim().is_empty()) {
                    return Err(Error::Config(format!(
                        "the {split} file's name is empty: name a LETOR file"
                    )));
                }
            }
            let train_data = store.load(train, Role::Train, reporter)?;
            let mut optional = |name: &Option<String>, role| {
                name.as_ref()
                    .map(|n| store.load(n, role, reporter))
                    .transpose()
            };
            let valid_data = optional(valid, Role::Valid)?;
            let test_data = optional(test, Role::Test)?;
            let shared = shared_queries(&[
                (Some(train.as_str()), Some(&train_data)),
                (valid.as_deref(), valid_data.as_ref()),
                (test.as_deref(), test_data.as_ref()),
            ]);
            // With logs, the log columns are checked against each file's sidecar instead
            // (`logged_splits`): a split without them is named as such.
            for (split, name) in [(&valid_data, valid), (&test_data, test)] {
                if let (Some(split), Some(name), false) = (split, name, data.wants_logs()) {
                    check_columns(split, name, &train_data, train, data.allow_missing_features)?;
                }
            }
            let feature_names = crate::data::check_splits_named([
                (Some(train.as_str()), Some(&train_data)),
                (valid.as_deref(), valid_data.as_ref()),
                (test.as_deref(), test_data.as_ref()),
            ])?
            .map(|(file, names)| (file.to_string(), names.to_vec()));
            Loaded {
                train: train_data,
                valid: valid_data,
                test: test_data,
                synthetic_z: None,
                description: train.clone(),
                names: [Some(train.clone()), valid.clone(), test.clone()],
                feature_names,
                shared,
            }
        }
        DataSource::Mq2008Folds => return Err(Error::Config(
            "--bundled mq2008-folds runs a comparison on each fold, each prepared from its parts"
                .into(),
        )),
        DataSource::Mq2008 => {
            let [train, valid, test] = crate::data::bundled::mq2008()?;
            Loaded {
                train,
                valid: Some(valid),
                test: Some(test),
                synthetic_z: None,
                description: "MQ2008 Fold1, bundled".into(),
                names: [None, None, None],
                feature_names: None,
                shared: Vec::new(),
            }
        }
        DataSource::Synthetic {
            options,
            valid_queries,
            test_queries,
        } => {
            // One draw of train + valid + test queries, cut in that order. Validation and test
            // are large so that method differences of a percent stand out of the evaluation noise.
            let s = generate_splits(options, options.queries, *valid_queries, *test_queries)?;
            let n_docs = s.train.n_docs() + s.valid.n_docs() + s.test.n_docs();
            let description = format!(
                "synthetic {} data ({} train / {} valid / {} test queries, {} docs, {})",
                format!("{:?}", options.kind).to_lowercase(),
                options.queries,
                valid_queries,
                test_queries,
                n_docs,
                options.privileged_summary()
            );
            Loaded {
                train: s.train,
                valid: Some(s.valid),
                test: Some(s.test),
                synthetic_z: Some(s.privileged_columns),
                description,
                names: [None, None, None],
                feature_names: None,
                shared: Vec::new(),
            }
        }
    })
}

/// Refuses, before anything is read, a file `data` names that is not there: its splits' files
/// and `.query` files ([`check_split_files`]) and a teacher's or a reference's
/// ([`super::teacher::check_named_files`]), each named with the setting that names it, which a
/// door says in its own words (`--train`, a setup's `source.files.train`). `needs_test`: as
/// [`prepare`]'s.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_files_there(data: &DataSetup, needs_test: bool) -> Result<()> {
    // Folds name their files per fold: [`super::folds::check_fold_files`] checks them.
    if data.has_folds() {
        return Ok(());
    }
    if let DataSource::Files {
        train, valid, test, ..
    } = &data.source
    {
        let files = [Some(train.as_str()), valid.as_deref(), test.as_deref()];
        check_split_files(files, data.source.query_files())?;
    }
    super::teacher::check_named_files(data, needs_test, &mut super::store::Disk::default())
}

/// Refuses a split's file (training, validation, test) or `.query` file (the same) that is not
/// there, named with its flag (`--valid`, `--test-query`).
#[cfg(not(target_arch = "wasm32"))]
pub fn check_split_files(files: [Option<&str>; 3], queries: [Option<&str>; 3]) -> Result<()> {
    for (role, (file, query)) in [Role::Train, Role::Valid, Role::Test]
        .into_iter()
        .zip(files.into_iter().zip(queries))
    {
        // An empty name is the reader's to name as such.
        if let Some(file) = file.filter(|f| !f.trim().is_empty()) {
            let what = format!("the {} file ({})", role.split(), role.flag());
            crate::data::check_file_there(Path::new(file), &what)?;
        }
        if let Some(query) = query.filter(|q| !q.trim().is_empty()) {
            let what = format!("a .query file ({}-query)", role.flag());
            crate::data::check_file_there(Path::new(query), &what)?;
        }
    }
    Ok(())
}

/// Refuses the folds where one split is prepared (train, sweep, Python's fit): the folds are
/// a comparison on each fold.
pub fn check_one_split(data: &DataSetup) -> Result<()> {
    if data.has_folds() {
        let named = match &data.folds {
            Some(dir) => format!("--folds {}", crate::error::printable(dir)),
            None => "--bundled mq2008-folds".into(),
        };
        return Err(Error::Config(format!(
            "{named} runs a comparison on each fold: compare (and Python's compare) take it; train, sweep and fit need one split: give its files (or --bundled mq2008)"
        )));
    }
    Ok(())
}

/// Loads (or generates) and prepares the data of `data`: every door's one path. With
/// `needs_test`, data without a test split get one held out of the training queries
/// ([`HOLDOUT`]); a missing validation split is always held out.
///
/// With `data.prepared_cache` (files on disk only), the prepared splits are kept in a file beside
/// the training file ([`prepared_path`]) and returned mapped from it, so that training reads x
/// and z in place: a later run with the same key reads that file instead of loading and
/// preparing the data.
pub fn prepare(
    data: &DataSetup,
    store: &mut dyn Store,
    needs_test: bool,
    reporter: &mut dyn Reporter,
) -> Result<PreparedData> {
    check_one_split(data)?;
    // What no data can change is checked before any are read: the privileged split's spelling,
    // and the files named.
    data.check_privileged()?;
    if let DataSource::Files {
        train, valid, test, ..
    } = &data.source
    {
        store.check_data_files([Some(train.as_str()), valid.as_deref(), test.as_deref()])?;
    }
    super::teacher::check_named_files(data, needs_test, store)?;
    let mut prepared = if data.prepared_cache {
        #[cfg(not(target_arch = "wasm32"))]
        {
            prepare_through_file(data, store, needs_test, reporter)?
        }
        #[cfg(target_arch = "wasm32")]
        return Err(Error::Config(
            "data.prepared_cache keeps the prepared splits in a file beside the training file: the page has no files; turn it off".into(),
        ));
    } else {
        prepare_in_memory(data, store, needs_test, &Scratch::Memory, reporter)?
    };
    let named = prepared
        .names_from
        .as_deref()
        .zip(prepared.feature_names.as_deref());
    prepared.teacher = super::teacher::external_scores(
        data,
        &prepared.prepared,
        prepared.source_features,
        named,
        store,
        reporter,
    )?
    .map(std::sync::Arc::new);
    prepared.reference = super::teacher::reference_scores(
        data,
        &prepared.prepared,
        prepared.source_features,
        named,
        store,
        reporter,
    )?
    .map(std::sync::Arc::new);
    Ok(prepared)
}

/// [`prepare`] through the file of prepared splits: read when it exists and has this
/// preparation's key, otherwise prepared here, written, and mapped back (the matrices built in
/// memory are dropped first).
#[cfg(not(target_arch = "wasm32"))]
fn prepare_through_file(
    data: &DataSetup,
    store: &mut dyn Store,
    needs_test: bool,
    reporter: &mut dyn Reporter,
) -> Result<PreparedData> {
    let key = prepared_key(data, store, needs_test)?;
    let DataSource::Files { train, .. } = &data.source else {
        unreachable!("prepared_key refuses other sources")
    };
    let path = prepared_path(Path::new(train), key);
    if path.exists() {
        match read_prepared(&path, key).and_then(|p| p.map(|p| with_clicks(p, &path)).transpose()) {
            Ok(Some(prepared)) => {
                reporter.note(&format!("prepared splits read from {}", path.display()));
                report_prepared(&prepared.prepared, reporter);
                return Ok(prepared);
            }
            Ok(None) => reporter.note(&format!(
                "{} was written for other settings or sources: preparing again",
                path.display()
            )),
            Err(e) => reporter.note(&format!(
                "cannot use the prepared splits ({e}): preparing again"
            )),
        }
    }
    // Prepared into scratch files beside it, mapped: the first run is not bound by memory
    // either.
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let scratch = match crate::data::Features::scratch(folder, 1) {
        Ok(_) => {
            // The text files read here too, when they have no binary cache.
            store.read_into(Scratch::Files(folder.to_path_buf()));
            Scratch::Files(folder.to_path_buf())
        }
        // A folder that cannot hold them costs the scratch files, not the run.
        Err(e) => {
            reporter.warn(&format!(
                "cannot keep preparation's matrices in {} ({e}): preparing in memory",
                folder.display()
            ));
            Scratch::Memory
        }
    };
    let prepared = prepare_in_memory(data, store, needs_test, &scratch, reporter)?;
    // The clicks by rank go to a file of their own beside the splits (at a large file's size
    // their JSON would outgrow the splits' description), written first: splits without their
    // clicks are never read back.
    let mut extra = prepared.about();
    extra["clicks"] = serde_json::Value::Null;
    let clicks = prepared.clicks.clone();
    let written = match &clicks {
        Some(table) => crate::data::logs::write_click_table(&clicks_path(&path), table),
        None => Ok(()),
    }
    .and_then(|()| crate::data::prepared_cache::write(&path, key, &prepared.prepared, extra));
    if let Err(e) = written {
        // The splits are prepared: a full disk or a read-only folder costs the file, not the run.
        reporter.warn(&format!(
            "the prepared splits could not be kept ({e}): this run trains from memory"
        ));
        return Ok(prepared);
    }
    // Training reads the file's pages, which the system can drop and read again, rather than
    // matrices that must stay resident.
    drop(prepared);
    let mut prepared = read_prepared(&path, key)?.ok_or_else(|| {
        Error::Config(format!(
            "{} was replaced while it was read back: run again",
            path.display()
        ))
    })?;
    reporter.note(&format!(
        "prepared splits written to {}: later runs with these settings read them",
        path.display()
    ));
    prepared.clicks = clicks;
    Ok(prepared)
}

/// The clicks by rank kept beside the prepared splits at `path` (`PATH.clicks`), when their
/// logs had any.
#[cfg(not(target_arch = "wasm32"))]
fn clicks_path(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.clicks", path.display()))
}

/// Prepared splits read back from `path`, with the clicks by rank kept beside them.
#[cfg(not(target_arch = "wasm32"))]
fn with_clicks(mut prepared: PreparedData, path: &Path) -> Result<PreparedData> {
    let clicks = clicks_path(path);
    if clicks.exists() {
        let table = crate::data::logs::read_click_table(&clicks)?;
        prepared.clicks = Some(std::sync::Arc::new(table));
    }
    Ok(prepared)
}

/// Where the prepared splits of a preparation with `key` of `train` are kept: beside it,
/// `TRAIN.KEY.drprep` (the key in 16 hex digits).
#[cfg(not(target_arch = "wasm32"))]
pub fn prepared_path(train: &Path, key: u64) -> PathBuf {
    PathBuf::from(format!("{}.{key:016x}.drprep", train.display()))
}

/// The key of prepared splits: a stable hash ([`crate::data::prepared_cache::Fnv1a`]) of the
/// file layout's version, the version of what preparation computes
/// ([`crate::data::prepare::PREPARATION_VERSION`]), the crate's version, the data settings as JSON
/// (all but `prepared_cache` itself), `needs_test`, and the stamps of every file named
/// ([`Store::stamps`]). Refuses data that are not files on disk, by name.
#[cfg(not(target_arch = "wasm32"))]
pub fn prepared_key(data: &DataSetup, store: &mut dyn Store, needs_test: bool) -> Result<u64> {
    use crate::data::prepared_cache::{Fnv1a, PREPARED_VERSION};
    let DataSource::Files {
        train, valid, test, ..
    } = &data.source
    else {
        let what = match data.source {
            DataSource::Mq2008 => "the bundled MQ2008, which load in a moment",
            _ => "synthetic data, generated in memory",
        };
        return Err(Error::Config(format!(
            "--prepared-cache (data.prepared_cache) keeps the prepared splits beside the training file: {what} have none; give --train FILE, or turn it off"
        )));
    };
    let mut setup = serde_json::to_value(data).expect("a data setup serialises");
    if let Some(fields) = setup.as_object_mut() {
        fields.remove("prepared_cache");
    }
    let mut hash = Fnv1a::default();
    hash.field(b"distillrank prepared splits");
    hash.field(&PREPARED_VERSION.to_le_bytes());
    hash.field(&crate::data::prepare::PREPARATION_VERSION.to_le_bytes());
    hash.field(env!("CARGO_PKG_VERSION").as_bytes());
    hash.field(setup.to_string().as_bytes());
    hash.field(&[needs_test as u8]);
    for (name, role) in [
        (Some(train), Role::Train),
        (valid.as_ref(), Role::Valid),
        (test.as_ref(), Role::Test),
    ] {
        let Some(name) = name else {
            hash.field(b"");
            continue;
        };
        let stamps = store.stamps(name, role)?.ok_or_else(|| {
            Error::Config(format!(
                "--prepared-cache (data.prepared_cache) keeps the prepared splits beside the training file: '{}' is held in memory, not a file on disk; turn it off",
                crate::error::printable(name)
            ))
        })?;
        hash.field(stamps.as_bytes());
    }
    Ok(hash.finish())
}

/// The prepared data of the file at `path`, mapped, when it was written with `key`.
#[cfg(not(target_arch = "wasm32"))]
fn read_prepared(path: &Path, key: u64) -> Result<Option<PreparedData>> {
    let Ok((prepared, about)) = crate::data::prepared_cache::read(path, key)? else {
        return Ok(None);
    };
    PreparedData::with_about(prepared, &about)
        .map(Some)
        .map_err(|e| {
            Error::parse(
                path,
                0,
                0,
                format!("corrupt description of the source: {e}"),
            )
        })
}

impl PreparedData {
    /// What the prepared splits do not hold: the source's description and the options that
    /// prepared them, kept beside the splits where they are laid out ([`prepared_cache`]).
    ///
    /// [`prepared_cache`]: crate::data::prepared_cache
    fn about(&self) -> serde_json::Value {
        serde_json::json!({
            "source_features": self.source_features,
            "feature_names": self.feature_names,
            "names_from": self.names_from,
            "description": self.description,
            "options": self.options,
            "logs": self.logs,
            "teacher": self.teacher.as_deref(),
            "reference": self.reference.as_deref(),
            "clicks": self.clicks.as_deref(),
        })
    }

    /// Prepared splits with what [`about`](Self::about) kept of them.
    fn with_about(
        prepared: Prepared,
        about: &serde_json::Value,
    ) -> std::result::Result<PreparedData, serde_json::Error> {
        let field = |name: &str| about.get(name).cloned().unwrap_or_default();
        Ok(PreparedData {
            prepared,
            source_features: serde_json::from_value(field("source_features"))?,
            feature_names: serde_json::from_value(field("feature_names"))?,
            names_from: serde_json::from_value(field("names_from"))?,
            description: serde_json::from_value(field("description"))?,
            options: serde_json::from_value(field("options"))?,
            logs: serde_json::from_value(field("logs"))?,
            teacher: serde_json::from_value::<Option<crate::ranking::distill::ExternalScores>>(
                field("teacher"),
            )?
            .map(std::sync::Arc::new),
            reference: serde_json::from_value::<Option<crate::ranking::distill::ExternalScores>>(
                field("reference"),
            )?
            .map(std::sync::Arc::new),
            clicks: serde_json::from_value::<Option<ClickTable>>(field("clicks"))?
                .map(std::sync::Arc::new),
            click_labels: Default::default(),
        })
    }

    /// The relevance estimates from the clicks that `methods` need: computed here (the EM
    /// estimate of the propensities among them) when one of them learns from clicks and the
    /// logs were simulated here; None otherwise (the comparison's check then names what is
    /// missing).
    pub fn click_labels(
        &self,
        methods: &[crate::ranking::distill::Method],
    ) -> Result<Option<std::sync::Arc<crate::ranking::clicks::ClickLabels>>> {
        use crate::ranking::clicks::{ClickLabel, ClickLabels};
        use crate::ranking::distill::Student;
        // Full information reads the grades, not the clicks; but where the clicks were given one
        // a row (Python's position=) the grades are the clicks, and its check needs the table.
        let from_rows = self.clicks.as_ref().is_some_and(|t| t.from_rows);
        let needed = methods.iter().any(|m| {
            matches!(m.entry().student, Student::Labels(l) if l != ClickLabel::FullInformation || from_rows)
        });
        if from_rows && !needed {
            // The positions given one a row change nothing for methods that do not learn from
            // clicks by rank: refused, not ignored.
            let learners: Vec<&str> = crate::ranking::distill::METHODS
                .iter()
                // The estimators that one impression a row identifies (EM and the harvest need
                // documents shown at several ranks; IPS the simulator's examination).
                .filter(|e| {
                    matches!(
                        e.student,
                        Student::Labels(ClickLabel::Naive | ClickLabel::Dla | ClickLabel::TwoTower)
                    )
                })
                .map(|e| e.name)
                .collect();
            let given: Vec<&str> = methods.iter().map(|m| m.entry().name).collect();
            return Err(Error::Config(format!(
                "position: {} does not learn from clicks by displayed rank, so the positions would change nothing; give position= to {}, or leave it out",
                given.join(", "),
                learners.join(", ")
            )));
        }
        let Some(table) = self.clicks.clone().filter(|_| needed) else {
            return Ok(None);
        };
        if let Some(labels) = self.click_labels.get() {
            return Ok(Some(labels.clone()));
        }
        let labels = std::sync::Arc::new(ClickLabels::new(table)?);
        Ok(Some(self.click_labels.get_or_init(|| labels).clone()))
    }

    /// These prepared data in a new `SharedArrayBuffer`, for every worker of the page's pool to
    /// read ([`from_shared`](Self::from_shared)): one copy of x and z for the whole pool.
    #[cfg(target_arch = "wasm32")]
    pub fn to_shared(&self) -> Result<js_sys::SharedArrayBuffer> {
        crate::data::prepared_cache::to_shared(&self.prepared, self.about())
    }

    /// The prepared data another worker (or this one) laid out with
    /// [`to_shared`](Self::to_shared), x and z read from the buffer in place.
    #[cfg(target_arch = "wasm32")]
    pub fn from_shared(buffer: &js_sys::SharedArrayBuffer) -> Result<PreparedData> {
        let (prepared, about) = crate::data::prepared_cache::from_shared(buffer)?;
        PreparedData::with_about(prepared, &about)
            .map_err(|e| Error::Config(format!("the pool's shared data: {e}")))
    }
}

/// What preparation tells of prepared splits: each split's filter report, then its warnings.
fn report_prepared(prepared: &Prepared, reporter: &mut dyn Reporter) {
    for (split, report) in &prepared.filter {
        reporter.note(&format!("{split}: {report}"));
    }
    for warning in &prepared.warnings {
        reporter.warn(warning);
    }
}

/// [`prepare`] without the file: load, hold out, simulate or read logs, prepare (the matrices where
/// `scratch` says).
fn prepare_in_memory(
    data: &DataSetup,
    store: &mut dyn Store,
    needs_test: bool,
    scratch: &Scratch,
    reporter: &mut dyn Reporter,
) -> Result<PreparedData> {
    let Loaded {
        train,
        valid,
        test,
        synthetic_z,
        description,
        names,
        feature_names: source_names,
        mut shared,
    } = load(data, store, reporter)?;
    // Data without a test split get one held out of the training queries. Preparation takes it
    // from the training matrix itself; only simulated logs, which rewrite the splits, need it
    // as a dataset of its own first.
    let hold_out = (test.is_none() && needs_test).then_some((HOLDOUT.1, data.data_seed));
    let description = match hold_out {
        Some((share, seed)) => {
            let (_, held_out) = hold_out_test_groups(train.n_groups(), share, seed)?;
            format!(
                "{description}, its test split {} of its {} queries held out",
                held_out.len(),
                train.n_groups()
            )
        }
        None => description,
    };
    // Clicks given beside the training rows (Python's `position=`): one impression a row.
    let mut clicks = match names[0].as_deref() {
        Some(name) => store.given_clicks(name, &train)?,
        None => None,
    };
    if clicks.is_some() && data.wants_logs() {
        // The logs bring their own clicks by rank: the positions given one a row would be
        // dropped without a word.
        return Err(Error::Config(
            "position: privileged logs reads its clicks by rank from the logs (simulated from the grades, or the files' logs sidecar), so the positions given one a row would change nothing; leave position= out, or choose another privileged split".into(),
        ));
    }
    let (train, valid, test, hold_out, logged, logs, description) = if data.wants_logs() {
        let (train, test) = match hold_out {
            Some((share, seed)) => {
                let (rest, test) = hold_out_test(&train, share, seed)?;
                (rest, Some(test))
            }
            None => (train, test),
        };
        let logged = logged_splits(&names, data, store, train, valid, test, reporter)?;
        clicks = logged.clicks;
        shared.extend(logged.warnings);
        (
            logged.train,
            logged.valid,
            logged.test,
            None,
            Some(logged.columns),
            logged.summary,
            format!("{description}, {}", logged.description),
        )
    } else {
        (train, valid, test, hold_out, None, None, description)
    };
    let largest_grade = train.grades.iter().copied().max().unwrap_or(0);
    let options = data.prepare_options(synthetic_z.as_deref(), logged.as_ref(), largest_grade)?;
    // With simulated logs the regular columns are the original file's: a student serves on
    // files without logs.
    let source_features = logged.map_or(train.n_features, |c| c.impressions - 1);
    // The source's own columns come first (a file's log columns after them).
    let (names_from, feature_names) = source_names
        .filter(|(_, names)| names.len() >= source_features)
        .map(|(file, mut names)| {
            names.truncate(source_features);
            (file, names)
        })
        .unzip();
    let started = crate::clock::Instant::now();
    let total = PREPARE_STEPS.len() as u64;
    let mut steps: Vec<(String, f64)> = Vec::new();
    let raw = RawSplits {
        train,
        valid,
        test,
        hold_out_test: hold_out,
    };
    let prepared = prepare_raw_in(raw, &options, scratch, &mut |step| {
        reporter.progress("preparing", "steps", steps.len() as u64, total);
        steps.push((step.to_string(), started.elapsed()));
    });
    reporter.progress("preparing", "steps", total, total);
    let mut prepared = prepared?;
    prepared.warnings.extend(shared);
    let clicks = clicks
        .map(|table| crate::ranking::clicks::matched(&table, &prepared.train))
        .transpose()?
        .map(std::sync::Arc::new);
    let ended = started.elapsed();
    let each: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, (name, at))| {
            let until = steps.get(i + 1).map_or(ended, |s| s.1);
            format!("{name} {:.1} s", until - at)
        })
        .collect();
    reporter.note(&format!("prepared in {ended:.1} s: {}", each.join(", ")));
    report_prepared(&prepared, reporter);
    Ok(PreparedData {
        prepared,
        source_features,
        feature_names,
        names_from,
        description,
        options,
        logs,
        teacher: None,
        reference: None,
        clicks,
        click_labels: Default::default(),
    })
}

/// The splits with their simulated-log columns.
struct Logged {
    train: Dataset,
    valid: Option<Dataset>,
    test: Option<Dataset>,
    columns: LogColumns,
    /// The logs' summary, when simulated here.
    summary: Option<serde_json::Value>,
    description: String,
    /// The training file's clicks by rank, when simulated here.
    clicks: Option<ClickTable>,
    /// What the logs leave unread (the setup's simulation settings, where the files hold logs).
    warnings: Vec<String>,
}

/// The splits with their simulated-log columns for `privileged: logs`: read from files that
/// `data simulate-logs` wrote (their sidecars name the columns), or simulated here with the
/// setup's log options when the training data have no sidecar.
fn logged_splits(
    names: &[Option<String>; 3],
    data: &DataSetup,
    store: &mut dyn Store,
    train: Dataset,
    valid: Option<Dataset>,
    test: Option<Dataset>,
    reporter: &mut dyn Reporter,
) -> Result<Logged> {
    let [train_name, valid_name, test_name] = names;
    let train_sidecar = match train_name {
        Some(name) => store.sidecar(name)?,
        None => None,
    };
    if let (Some(sidecar), Some(train_name)) = (train_sidecar, train_name) {
        let columns: LogColumns = serde_json::from_value(sidecar["columns"].clone())
            .map_err(|e| Error::Config(format!("the training file's logs sidecar: {e}")))?;
        let sidecar_name = sidecar_path(Path::new(train_name));
        if train.n_features != columns.conversions {
            return Err(Error::Config(format!(
                "{train_name} has {} features but its logs sidecar puts the conversions in column {}: the file and {} do not belong together",
                train.n_features,
                columns.conversions,
                sidecar_name.display()
            )));
        }
        // The command that wrote the training file's logs writes the other splits' with them.
        let together = if sidecar["aggregated_from"].is_array() {
            "sum the splits' logs together (distillrank data aggregate-logs TRAIN VALID TEST --impressions LOG -o DIR)"
        } else {
            "simulate the splits together (distillrank data simulate-logs TRAIN VALID TEST -o DIR)"
        };
        for name in [valid_name, test_name].into_iter().flatten() {
            match store.sidecar(name)? {
                Some(other) if other["options"] != sidecar["options"] => {
                    return Err(Error::Config(format!(
                        "{name}'s logs were written with other parameters than the training file's ({} against {}): {together}",
                        other["click_model"].as_str().unwrap_or("?"),
                        sidecar["click_model"].as_str().unwrap_or("?")
                    )))
                }
                Some(other) if other["columns"] == sidecar["columns"] => {}
                Some(_) => {
                    return Err(Error::Config(format!(
                        "{name} holds its logs in other columns than the training file: {together}"
                    )))
                }
                None => {
                    return Err(Error::Config(format!(
                        "{name} has no logs ({} is missing) but the training file has: {together}",
                        sidecar_path(Path::new(name)).display()
                    )))
                }
            }
        }
        // The files' logs are read as they are: the settings that would simulate others are not.
        let given = data.logs_settings_given();
        let warnings = match given.len() {
            0 => Vec::new(),
            n => vec![format!(
                "{} {} not used: {train_name} already holds logs ({} names them), which are read as they are; to change them, write the logs again over the LETOR files without logs",
                given.join(", "),
                if n == 1 { "is" } else { "are" },
                sidecar_name.display()
            )],
        };
        let description = if sidecar["aggregated_from"].is_array() {
            format!(
                "logs summed by data aggregate-logs ({})",
                sidecar["click_model"].as_str().unwrap_or("see the sidecar")
            )
        } else {
            format!(
                "logs simulated by data simulate-logs ({})",
                sidecar["click_model"].as_str().unwrap_or("see the sidecar")
            )
        };
        // The training file's impressions, where the sidecar names a log beside it.
        let clicks = match sidecar["impressions"].as_str() {
            Some(log) => {
                let path = Path::new(train_name)
                    .parent()
                    .unwrap_or(Path::new(""))
                    .join(log);
                let name = path.display().to_string();
                let bytes = store.file(
                    &name,
                    crate::data::logs::MAX_IMPRESSIONS_BYTES,
                    "an impressions log",
                )?;
                let held_out = test.as_ref().map_or_else(Vec::new, |t| t.qids.clone());
                // The simulator's examination by rank (PBM's), which inverse propensity
                // weights divide by: refused by the sidecar's name where it is not that.
                let bad_examination = |what: String| {
                    Error::Config(format!(
                        "{}: \"examination\": {what}",
                        sidecar_name.display()
                    ))
                };
                let examination: Option<Vec<f64>> =
                    serde_json::from_value(sidecar["examination"].clone()).map_err(|e| {
                        bad_examination(format!(
                            "{e}: expected the examination probability at each rank, or null"
                        ))
                    })?;
                // A log may name documents by the training file's docid comments.
                let mut docids = || {
                    let (text, _) = store.text(train_name, Role::Train)?;
                    crate::data::logs::docids_of(Path::new(train_name), text)
                };
                let read = crate::data::logs::read_impressions(
                    &bytes,
                    &name,
                    &train,
                    &held_out,
                    examination,
                    &mut docids,
                );
                // A sidecar may name the wrong file: say which sidecar points at it.
                let table = read.map_err(|e| match e {
                    Error::Data(why) if why.contains(", line 1: ") => Error::Data(format!(
                        "{why}; {} names it as the training file's impressions log",
                        sidecar_path(Path::new(train_name)).display()
                    )),
                    e => e,
                })?;
                crate::data::logs::check_examination(&table).map_err(bad_examination)?;
                Some(table)
            }
            None => None,
        };
        return Ok(Logged {
            train,
            valid,
            test,
            columns,
            summary: None,
            description,
            clicks,
            warnings,
        });
    }
    // Splits that hold logs beside a training file without them: the training file's logs
    // would be simulated here, and the columns of the others' logs read as regular features.
    for name in [valid_name, test_name].into_iter().flatten() {
        if store.sidecar(name)?.is_some() {
            return Err(Error::Config(format!(
                "{name} holds logs ({} names them) but the training file {} has none ({} is missing): give the files the logs were written into together, each with its sidecar",
                sidecar_path(Path::new(name)).display(),
                train_name.as_deref().unwrap_or("the training split"),
                train_name.as_deref().map_or_else(|| "its logs sidecar".into(), |t| sidecar_path(Path::new(t)).display().to_string())
            )));
        }
    }
    let options = &data.logs;
    let present = [valid.is_some(), test.is_some()];
    let mut splits = vec![train];
    let mut split_names = vec![train_name
        .clone()
        .unwrap_or_else(|| "the training split".into())];
    for (split, name, what) in [
        (valid, valid_name, "the validation split"),
        (test, test_name, "the test split"),
    ] {
        if let Some(d) = split {
            splits.push(d);
            split_names.push(name.clone().unwrap_or_else(|| what.into()));
        }
    }
    let refs: Vec<&Dataset> = splits.iter().collect();
    let simulated = crate::data::logs::simulate_with_progress(
        &refs,
        &split_names,
        options,
        &mut |done, total| reporter.progress("simulating logs", "queries", done, total),
    )?;
    let description = format!("logs simulated here ({})", options.click_model_summary());
    reporter.note(&format!(
        "{description}: {} of {} training documents converted",
        simulated.stats[0].converted_docs, simulated.stats[0].docs
    ));
    let summary = serde_json::json!({
        "click_model": options.click_model_summary(),
        "columns": simulated.columns,
        "train": simulated.stats[0],
        "logging_ranker_graded_ndcg@10": simulated.logging_ranker_ndcg10,
    });
    let columns = simulated.columns;
    let mut logged = simulated.datasets.into_iter();
    let train = logged.next().expect("the training split is simulated");
    let valid = if present[0] { logged.next() } else { None };
    let test = if present[1] { logged.next() } else { None };
    Ok(Logged {
        train,
        valid,
        test,
        columns,
        summary: Some(summary),
        description,
        clicks: Some(simulated.clicks),
        warnings: Vec::new(),
    })
}

/// A dataset from arrays (Python's `fit(X, y, qid=...)`): `features` row-major `n_docs x
/// n_features`, a relevance grade and a query id per row, each query's rows contiguous. Checked
/// as the LETOR reader checks a file, with the row named in every refusal.
pub fn dataset_from_arrays(
    name: &str,
    features: Vec<f32>,
    n_features: usize,
    grades: &[f64],
    qids: &[u64],
) -> Result<Dataset> {
    use crate::data::letor::MAX_GRADE;
    let n_docs = grades.len();
    let bad =
        |message: String| Error::Data(format!("{}: {message}", crate::error::printable(name)));
    // The grades and the query ids are arrays of their own: `y` and `qid` beside the training
    // `X`, `eval_set y` beside an eval_set's.
    let array = |array: &str| match name {
        "X" | "scores" => array.to_string(),
        split => format!("{} {array}", crate::error::printable(split)),
    };
    if n_docs == 0 {
        return Err(bad("no rows: expected at least one document".into()));
    }
    if qids.len() != n_docs || Some(features.len()) != n_docs.checked_mul(n_features) {
        return Err(bad(format!(
            "{} feature rows, {} grades and {} query ids: expected one of each per document",
            features.len().checked_div(n_features).unwrap_or(0),
            n_docs,
            qids.len()
        )));
    }
    if n_features == 0 {
        return Err(bad("no feature columns".into()));
    }
    let mut graded = Vec::with_capacity(n_docs);
    for (row, &g) in grades.iter().enumerate() {
        if !(g.is_finite() && g >= 0.0 && g <= MAX_GRADE as f64 && g.fract() == 0.0) {
            return Err(Error::Data(format!(
                "{}: row {}: relevance grade {g}: expected an integer 0..={MAX_GRADE}",
                array("y"),
                row + 1
            )));
        }
        graded.push(g as u8);
    }
    if let Some(i) = features.iter().position(|v| !v.is_finite()) {
        return Err(bad(format!(
            "row {}, feature {}: {} is not a finite number",
            i / n_features + 1,
            i % n_features + 1,
            features[i]
        )));
    }
    let mut offsets = vec![0];
    let mut group_qids: Vec<u64> = Vec::new();
    let mut seen = std::collections::HashMap::new();
    for (row, &q) in qids.iter().enumerate() {
        if group_qids.last() != Some(&q) {
            if let Some(&last) = seen.get(&q) {
                return Err(Error::Data(format!(
                    "{}: row {}: qid {q} reappears after other queries (its rows ended at row {}): the rows of a query must be contiguous",
                    array("qid"),
                    row + 1,
                    last + 1
                )));
            }
            if row > 0 {
                offsets.push(row);
            }
            group_qids.push(q);
        }
        seen.insert(q, row);
    }
    offsets.push(n_docs);
    let dataset = Dataset {
        n_features,
        features: features.into(),
        grades: graded,
        group_offsets: offsets,
        qids: group_qids,
        source: Some(PathBuf::from(name)),
        feature_names: None,
    };
    dataset.check_invariants().map_err(bad)?;
    Ok(dataset)
}

//! The job every door runs, once: a [`Setup`] → [`prepare`] (load, hold out, simulate or read
//! logs, split features, check) → run ([`fit`] one method, or [`compare`] them all) → report
//! ([`results_json`]). The CLI, the page's workers and the Python package translate their
//! arguments into a [`Setup`] and a [`Store`] of files, and show what the [`Reporter`] hears;
//! everything between lives here, so that every door refuses the same input with the same
//! message and gives the same numbers.
//!
//! The global objectives' comparison takes the same road: an [`ObjectivesSetup`] →
//! [`objectives_data`] → [`objectives`] (or [`objectives_async`], one job at a time for the
//! page's workers) → [`objectives_results_json`].
//!
//! Doors differ only in where files come from ([`Store`]: files on disk with their caches and
//! sidecars, [`InMemory`] uploads or arrays) and in how they show progress ([`Reporter`]).

use std::path::{Path, PathBuf};

use crate::cpu::mlp::Mlp;
use crate::data::logs::LogColumns;
use crate::data::prepare::{
    hold_out_test, hold_out_test_groups, prepare_raw_in, FeatureView, PrepareOptions, Prepared,
    RawSplits, Scratch, PREPARE_STEPS,
};
use crate::data::synth::generate_splits;
use crate::data::Dataset;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::model_io::ModelConfig;
use crate::objectives::data::{from_letor, synthetic, BinarySplits};
use crate::objectives::experiment::{compare_async as objectives_over_seeds, ObjectiveRuns, Run};
use crate::objectives::metrics::{BinaryMetrics, Targets};
use crate::objectives::train::{Event as ObjectiveEvent, CONSTRAINT_TOLERANCE};
use crate::objectives::{precision_anchors, Objective};
use crate::ranking::distill::Method;
use crate::ranking::experiment::{self, CompareConfig, Comparison, SeedRun, Training};
use crate::ranking::train::EpochLog;
#[cfg(not(target_arch = "wasm32"))]
use crate::ranking::train::Event;
use crate::setup::{DataSetup, DataSource, ObjectivesData, ObjectivesSetup, Setup, HOLDOUT};
use crate::stop::Stop;

/// What a job tells the person running it. Every method has a default that ignores it, so a
/// door implements what it shows.
pub trait Reporter {
    /// A line for people: what was loaded, how long preparation took.
    fn note(&mut self, _text: &str) {}
    /// Something the user must know about the results (an unmeasurable test split, ...).
    fn warn(&mut self, _text: &str) {}
    /// `label` is under way: `done` of `total` `unit`s (bytes read, preparation steps, documents
    /// trained). A new label starts a new task; `done == total` ends it.
    fn progress(&mut self, _label: &str, _unit: &str, _done: u64, _total: u64) {}
    /// A model finished an epoch.
    fn epoch(&mut self, _model: &Training, _log: &EpochLog) {}
}

/// A reporter that shows nothing.
pub struct Silent;
impl Reporter for Silent {}

/// Which split a file plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Train,
    Valid,
    Test,
}

/// Where the files a setup names come from.
pub trait Store {
    /// The dataset `name` names, playing `role`.
    fn load(&mut self, name: &str, role: Role, reporter: &mut dyn Reporter) -> Result<Dataset>;
    /// The simulated-logs sidecar of `name` (`FILE.logs.json`, written by `data simulate-logs`),
    /// when the store keeps files beside each other; checked ([`check_sidecar`]).
    fn sidecar(&mut self, _name: &str) -> Result<Option<serde_json::Value>> {
        Ok(None)
    }
    /// What identifies the file `name` playing `role` and the files read with it (its `.query`
    /// files, its logs sidecar), for the key of prepared splits on disk ([`prepare`] with
    /// `prepared_cache`); None where the store holds no files (the page's uploads, arrays).
    fn stamps(&mut self, _name: &str, _role: Role) -> Result<Option<String>> {
        Ok(None)
    }
    /// Builds the matrices of the files it reads next where `scratch` says (a store of files on
    /// disk; the others hold their data already).
    fn read_into(&mut self, _scratch: Scratch) {}
}

/// Datasets held in memory under names: the page's uploads, Python's arrays.
#[derive(Default)]
pub struct InMemory {
    pub datasets: Vec<(String, Dataset)>,
}

impl Store for InMemory {
    fn load(&mut self, name: &str, _role: Role, _: &mut dyn Reporter) -> Result<Dataset> {
        self.datasets
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
            .ok_or_else(|| {
                Error::Config(format!("no data named '{}'", crate::error::printable(name)))
            })
    }
}

/// Files on disk: a LETOR file, its fresh `FILE.drcache` when there is one, or a `.drcache`;
/// LightGBM `.query` files for the text files without qid, by role.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Default)]
pub struct Disk {
    /// The group-size files of the training, validation and test files.
    pub queries: [Option<PathBuf>; 3],
    /// Where a text file's matrix is built as it is read ([`Store::read_into`]).
    pub scratch: Scratch,
}

#[cfg(not(target_arch = "wasm32"))]
impl Store for Disk {
    fn load(&mut self, name: &str, role: Role, reporter: &mut dyn Reporter) -> Result<Dataset> {
        let query = &self.queries[role as usize];
        load_file(Path::new(name), query.as_deref(), &self.scratch, reporter)
    }

    fn read_into(&mut self, scratch: Scratch) {
        self.scratch = scratch;
    }

    fn sidecar(&mut self, name: &str) -> Result<Option<serde_json::Value>> {
        let path = Path::new(name);
        let mut candidates = vec![sidecar_path(path)];
        if path.extension().is_some_and(|e| e == "drcache") {
            candidates.push(sidecar_path(&path.with_extension("")));
        }
        match candidates.into_iter().find(|p| p.exists()) {
            Some(p) => {
                let bytes = crate::data::read_capped(&p, 16 << 20, "a logs sidecar")?;
                let sidecar = check_sidecar(&p, &bytes)?;
                // The sidecar describes one file: the text beside it, whose size and CRC-32 it
                // recorded when the logs were simulated.
                let described = p
                    .to_str()
                    .and_then(|n| n.strip_suffix(".logs.json"))
                    .map(PathBuf::from)
                    .unwrap_or_else(|| path.to_path_buf());
                let recorded = &sidecar["file"];
                if recorded.is_null() {
                    return Err(Error::parse(
                        &p,
                        0,
                        0,
                        "names no file (size and CRC-32): it was written by an older build; simulate the logs again (distillrank data simulate-logs)",
                    ));
                }
                if described.exists() && &file_identity(&described)? != recorded {
                    return Err(Error::Config(format!(
                        "{} describes another file than {}: its recorded size and CRC-32 ({}) differ from the file's; simulate the logs again, or give the file it was written with",
                        p.display(),
                        described.display(),
                        recorded
                    )));
                }
                Ok(Some(sidecar))
            }
            None => Ok(None),
        }
    }

    /// Sizes and modification times, as [`crate::data::cache`] stamps its sources, rather than
    /// a hash of the contents: hashing a 4 GB file on every run would cost most of what the
    /// prepared splits save. A file rewritten with the same size within the same nanosecond
    /// would go unnoticed; delete `TRAIN.*.drprep` after such an edit.
    fn stamps(&mut self, name: &str, role: Role) -> Result<Option<String>> {
        use crate::data::cache::file_stamp;
        let path = Path::new(name);
        let mut files = vec![path.to_path_buf(), PathBuf::from(format!("{name}.query"))];
        files.extend(self.queries[role as usize].clone());
        files.push(sidecar_path(path));
        if path.extension().is_some_and(|e| e == "drcache") {
            files.push(sidecar_path(&path.with_extension("")));
        }
        let mut stamps = String::new();
        for (k, file) in files.iter().enumerate() {
            // The named file must exist; its companions count where they do.
            if k == 0 || file.exists() {
                let (len, mtime_ns) = file_stamp(file)?;
                stamps.push_str(&format!("{}\t{len}\t{mtime_ns}\n", file.display()));
            }
        }
        Ok(Some(stamps))
    }
}

/// Loads a LETOR file: from `FILE` if it is a cache, from `FILE.drcache` when that is fresh,
/// otherwise by parsing the text (reporting the bytes read).
#[cfg(not(target_arch = "wasm32"))]
pub fn load_file(
    path: &Path,
    query: Option<&Path>,
    scratch: &Scratch,
    reporter: &mut dyn Reporter,
) -> Result<Dataset> {
    use crate::data::cache;
    use crate::data::letor::{read_letor_file_with_progress, ReadOptions};
    if path.extension().is_some_and(|e| e == "drcache") {
        return Ok(cache::read_cache(path, None)?.0);
    }
    let cached = cache::cache_path(path);
    if query.is_none() && cached.exists() {
        match cache::read_cache(&cached, Some(path)) {
            Ok((data, cache::CacheState::Fresh)) => return Ok(data),
            Ok((_, cache::CacheState::Stale)) => reporter.note(&format!(
                "{} is stale: parsing {} again",
                cached.display(),
                path.display()
            )),
            Err(e) => reporter.note(&format!(
                "cannot use the cache ({e}): parsing {} again",
                path.display()
            )),
        }
    }
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    let label = format!("reading {}", path.display());
    let options = ReadOptions {
        scratch: scratch.clone(),
        ..ReadOptions::default()
    };
    let data = read_letor_file_with_progress(path, query, &options, &mut |n| {
        reporter.progress(&label, "B", n, size)
    })?;
    reporter.progress(&label, "B", size, size);
    Ok(data)
}

/// What identifies a file for its sidecar: its size and CRC-32, read in one streaming pass.
#[cfg(not(target_arch = "wasm32"))]
pub fn file_identity(path: &Path) -> Result<serde_json::Value> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        bytes += n as u64;
    }
    Ok(serde_json::json!({"bytes": bytes, "crc32": format!("{:08x}", hasher.finalize())}))
}

/// `FILE.logs.json`: the sidecar of a file of simulated logs.
pub fn sidecar_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".logs.json");
    PathBuf::from(name)
}

/// A sidecar's bytes as JSON, checked: its format, and columns that are the six consecutive
/// columns `data simulate-logs` appends.
pub fn check_sidecar(path: &Path, bytes: &[u8]) -> Result<serde_json::Value> {
    use crate::data::logs::SIDECAR_FORMAT;
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::parse(
            path,
            e.line() as u64,
            e.column() as u64,
            format!("not JSON: {e}"),
        )
    })?;
    if value["format"] != SIDECAR_FORMAT {
        return Err(Error::parse(
            path,
            0,
            0,
            format!("expected \"format\": \"{SIDECAR_FORMAT}\""),
        ));
    }
    match serde_json::from_value::<LogColumns>(value["columns"].clone()) {
        Ok(c) if c.impressions >= 1 && c == LogColumns::after(c.impressions - 1) => Ok(value),
        Ok(_) => Err(Error::parse(
            path,
            0,
            0,
            "\"columns\" are not the six consecutive columns data simulate-logs appends",
        )),
        Err(e) => Err(Error::parse(
            path,
            0,
            0,
            format!("\"columns\": {e}; expected the column numbers data simulate-logs writes"),
        )),
    }
}

/// The prepared splits, and what reports and saved models need to know of their source.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedData {
    pub prepared: Prepared,
    /// Feature columns of the source data a student reads from (the original file's, without
    /// simulated logs or separately given privileged features).
    pub source_features: usize,
    pub description: String,
    pub options: PrepareOptions,
    /// The simulated logs' summary, when z comes from logs simulated here.
    pub logs: Option<serde_json::Value>,
}

/// The splits as loaded or generated, before preparation.
struct Loaded {
    train: Dataset,
    valid: Option<Dataset>,
    test: Option<Dataset>,
    synthetic_z: Option<Vec<usize>>,
    description: String,
    names: [Option<String>; 3],
}

fn load(data: &DataSetup, store: &mut dyn Store, reporter: &mut dyn Reporter) -> Result<Loaded> {
    Ok(match &data.source {
        DataSource::Files { train, valid, test } => {
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
            Loaded {
                train: train_data,
                valid: valid_data,
                test: test_data,
                synthetic_z: None,
                description: train.clone(),
                names: [Some(train.clone()), valid.clone(), test.clone()],
            }
        }
        DataSource::Mq2008 => {
            let [train, valid, test] = crate::data::bundled::mq2008()?;
            Loaded {
                train,
                valid: Some(valid),
                test: Some(test),
                synthetic_z: None,
                description: "MQ2008 Fold1, bundled".into(),
                names: [None, None, None],
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
            }
        }
    })
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
    if data.prepared_cache {
        #[cfg(not(target_arch = "wasm32"))]
        return prepare_through_file(data, store, needs_test, reporter);
        #[cfg(target_arch = "wasm32")]
        return Err(Error::Config(
            "data.prepared_cache keeps the prepared splits in a file beside the training file: the page has no files; turn it off".into(),
        ));
    }
    prepare_in_memory(data, store, needs_test, &Scratch::Memory, reporter)
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
        match read_prepared(&path, key) {
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
    let extra = prepared.about();
    if let Err(e) = crate::data::prepared_cache::write(&path, key, &prepared.prepared, extra) {
        // The splits are prepared: a full disk or a read-only folder costs the file, not the run.
        reporter.warn(&format!(
            "the prepared splits could not be kept ({e}): this run trains from memory"
        ));
        return Ok(prepared);
    }
    // Training reads the file's pages, which the system can drop and read again, rather than
    // matrices that must stay resident.
    drop(prepared);
    let prepared = read_prepared(&path, key)?.ok_or_else(|| {
        Error::Config(format!(
            "{} was replaced while it was read back: run again",
            path.display()
        ))
    })?;
    reporter.note(&format!(
        "prepared splits written to {}: later runs with these settings read them",
        path.display()
    ));
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
    let DataSource::Files { train, valid, test } = &data.source else {
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
            "description": self.description,
            "options": self.options,
            "logs": self.logs,
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
            description: serde_json::from_value(field("description"))?,
            options: serde_json::from_value(field("options"))?,
            logs: serde_json::from_value(field("logs"))?,
        })
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
    let (train, valid, test, hold_out, logged, logs, description) = if data.wants_logs() {
        let (train, test) = match hold_out {
            Some((share, seed)) => {
                let (rest, test) = hold_out_test(&train, share, seed)?;
                (rest, Some(test))
            }
            None => (train, test),
        };
        let logged = logged_splits(&names, data, store, train, valid, test, reporter)?;
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
    let options = data.prepare_options(synthetic_z.as_deref(), logged.as_ref())?;
    // With simulated logs the regular columns are the original file's: a student serves on
    // files without logs.
    let source_features = logged.map_or(train.n_features, |c| c.impressions - 1);
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
    let prepared = prepared?;
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
        description,
        options,
        logs,
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
        for name in [valid_name, test_name].into_iter().flatten() {
            match store.sidecar(name)? {
                Some(other) if other["options"] != sidecar["options"] => {
                    return Err(Error::Config(format!(
                        "{name}'s logs were simulated with other parameters than the training file's ({} against {}): simulate the splits together (distillrank data simulate-logs TRAIN VALID TEST -o DIR)",
                        other["click_model"].as_str().unwrap_or("?"),
                        sidecar["click_model"].as_str().unwrap_or("?")
                    )))
                }
                Some(other) if other["columns"] == sidecar["columns"] => {}
                Some(_) => {
                    return Err(Error::Config(format!(
                        "{name} holds its logs in other columns than the training file: simulate the splits together (distillrank data simulate-logs TRAIN VALID TEST -o DIR)"
                    )))
                }
                None => {
                    return Err(Error::Config(format!(
                        "{name} has no simulated logs ({} is missing) but the training file has: simulate the splits together (distillrank data simulate-logs TRAIN VALID TEST -o DIR)",
                        sidecar_path(Path::new(name)).display()
                    )))
                }
            }
        }
        let description = format!(
            "logs simulated by data simulate-logs ({})",
            sidecar["click_model"].as_str().unwrap_or("see the sidecar")
        );
        return Ok(Logged {
            train,
            valid,
            test,
            columns,
            summary: None,
            description,
        });
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
    let simulated = crate::data::logs::simulate(&refs, &split_names, options)?;
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
    })
}

/// The comparison `setup` describes, on `engine`, checked against the prepared data, stopping
/// when `stop` is raised.
pub fn compare_config(
    data: &PreparedData,
    setup: &Setup,
    engine: &Engine,
    stop: &Stop,
) -> Result<CompareConfig> {
    let mut config = setup.compare_config(engine.clone())?;
    config.train.stop = stop.clone();
    config.validate(&data.prepared)?;
    Ok(config)
}

/// Turns the training loop's events into a reporter's progress over every model of `plan`: the
/// model being trained (its place among all) and the documents trained so far.
#[cfg(not(target_arch = "wasm32"))]
struct PlanProgress<'a> {
    plan: Vec<(Training, u64)>,
    total: u64,
    current: Option<usize>,
    done: u64,
    reporter: &'a mut dyn Reporter,
}

#[cfg(not(target_arch = "wasm32"))]
impl<'a> PlanProgress<'a> {
    /// Progress over every model `config` trains on `data`.
    fn new(data: &PreparedData, config: &CompareConfig, reporter: &'a mut dyn Reporter) -> Self {
        let plan = experiment::plan(&data.prepared, config);
        let total = plan.iter().map(|(_, docs)| docs).sum();
        PlanProgress {
            plan,
            total,
            current: None,
            done: 0,
            reporter,
        }
    }

    fn event(&mut self, model: &Training, event: Event) {
        match event {
            Event::Step { docs } => {
                // Jobs may run side by side: the count only grows, and the label names the model
                // that trained last, with its place in the plan.
                if self.current.is_none_or(|i| self.plan[i].0 != *model) {
                    self.current = self.plan.iter().position(|(m, _)| m == model);
                }
                self.done += docs as u64;
                let place = self.current.map_or(String::new(), |i| {
                    format!(" (model {} of {})", i + 1, self.plan.len())
                });
                self.reporter.progress(
                    &format!("{model}{place}"),
                    "docs",
                    self.done.min(self.total),
                    self.total,
                );
            }
            Event::Epoch(log) => self.reporter.epoch(model, log),
        }
    }
}

/// Trains every method of `setup` over its seeds on the prepared data (which must have a test
/// split), blocking until the GPU, if any, is done; on the CPU engine, one job (a method at a
/// seed) per core at once.
#[cfg(not(target_arch = "wasm32"))]
pub fn compare(
    data: &PreparedData,
    setup: &Setup,
    engine: &Engine,
    stop: &Stop,
    reporter: &mut dyn Reporter,
) -> Result<Comparison> {
    compare_on_jobs(data, setup, engine, None, stop, reporter)
}

/// [`compare`] with `jobs` jobs side by side on the CPU engine (None: one per core). The results
/// are the same for any number.
#[cfg(not(target_arch = "wasm32"))]
pub fn compare_on_jobs(
    data: &PreparedData,
    setup: &Setup,
    engine: &Engine,
    jobs: Option<usize>,
    stop: &Stop,
    reporter: &mut dyn Reporter,
) -> Result<Comparison> {
    if jobs == Some(0) {
        return Err(Error::Config(
            "--jobs 0: at least one job must run (the default is one per core)".into(),
        ));
    }
    let mut config = compare_config(data, setup, engine, stop)?;
    config.jobs = jobs;
    let mut progress = PlanProgress::new(data, &config, reporter);
    let result = experiment::compare(&data.prepared, &config, &mut |model, event| {
        progress.event(model, event)
    });
    progress
        .reporter
        .progress("training", "docs", progress.total, progress.total);
    result
}

/// One method at one seed: its teachers, then its student, on the prepared data. Without a test
/// split (Python's `fit`), the student's figures are on the validation split.
pub async fn fit_async(
    data: &PreparedData,
    setup: &Setup,
    method: Method,
    seed: u64,
    engine: &Engine,
    stop: &Stop,
    on: &mut experiment::OnProgress<'_>,
) -> Result<(Mlp<f32>, SeedRun)> {
    let mut config = setup.compare_config(engine.clone())?;
    config.train.stop = stop.clone();
    config.methods = vec![method];
    config.validate_methods(&data.prepared)?;
    experiment::run_method_seed(&data.prepared, &config, method, seed, on).await
}

/// [`fit_async`], blocking natively, with the reporter hearing every epoch and the documents
/// trained.
#[cfg(not(target_arch = "wasm32"))]
pub fn fit(
    data: &PreparedData,
    setup: &Setup,
    method: Method,
    seed: u64,
    engine: &Engine,
    stop: &Stop,
    reporter: &mut dyn Reporter,
) -> Result<(Mlp<f32>, SeedRun)> {
    let mut config = setup.compare_config(engine.clone())?;
    config.seeds = 1;
    config.first_seed = seed;
    config.methods = vec![method];
    let mut progress = PlanProgress::new(data, &config, reporter);
    pollster::block_on(fit_async(
        data,
        setup,
        method,
        seed,
        engine,
        stop,
        &mut |model, event| progress.event(model, event),
    ))
}

/// The config a student of `setup` carries when saved: it reads the regular columns of the
/// source data, after the signed log1p, and names the data and the setup that trained it.
pub fn student_config(data: &PreparedData, setup: &Setup, model: &Mlp<f32>) -> ModelConfig {
    ModelConfig::new(
        model,
        setup.loss,
        FeatureView::Regular,
        data.prepared.regular_columns.clone(),
        data.source_features,
    )
    .trained_on(&data.description, serde_json::to_value(setup).ok())
}

/// Checks a saved model's config beyond its own fields ([`crate::model_io::parse_config`]): the
/// setup it records, when it records one, must be a setup this build reads
/// ([`Setup::check_recorded`]), so that a config that says something this build does not know
/// (an `activation` the model does not have) is refused wherever it is written.
pub fn check_model_config(config: &ModelConfig, name: &Path) -> Result<()> {
    match &config.setup {
        Some(setup) => Setup::check_recorded(setup).map_err(|message| Error::Model {
            path: name.to_path_buf(),
            message,
        }),
        None => Ok(()),
    }
}

/// A saved model ([`crate::model_io::load`]) with its config checked as
/// [`check_model_config`] does.
#[cfg(not(target_arch = "wasm32"))]
pub fn load_model(prefix: &Path) -> Result<(Mlp<f32>, ModelConfig)> {
    let (model, config) = crate::model_io::load(prefix)?;
    check_model_config(&config, &crate::model_io::paths(prefix).1)?;
    Ok((model, config))
}

/// The binary examples of a global objectives' setup: the synthetic task, or the files of
/// `store`, each document an example, positive when its grade reaches the setup's threshold. A
/// missing test split is held out of the training queries, then a missing validation split of
/// the rest ([`HOLDOUT`]).
pub fn objectives_data(
    setup: &ObjectivesSetup,
    store: &mut dyn Store,
    reporter: &mut dyn Reporter,
) -> Result<BinarySplits> {
    let (train, valid, test, threshold) = match &setup.data {
        ObjectivesData::Synthetic(options) => return synthetic(options),
        ObjectivesData::Mq2008 { threshold } => {
            let [train, valid, test] = crate::data::bundled::mq2008()?;
            return from_letor(
                &train,
                &valid,
                &test,
                *threshold,
                format!("MQ2008 Fold1, bundled, each document positive when grade >= {threshold}"),
            );
        }
        ObjectivesData::Files {
            train,
            valid,
            test,
            threshold,
        } => (train, valid, test, *threshold),
    };
    let train_data = store.load(train, Role::Train, reporter)?;
    let valid_data = valid
        .as_deref()
        .map(|name| store.load(name, Role::Valid, reporter))
        .transpose()?;
    let test_data = test
        .as_deref()
        .map(|name| store.load(name, Role::Test, reporter))
        .transpose()?;
    let (train_data, test_data) = match test_data {
        Some(test) => (train_data, test),
        None => hold_out_test(&train_data, HOLDOUT.1, 0)?,
    };
    let (train_data, valid_data) = match valid_data {
        Some(valid) => (train_data, valid),
        None => hold_out_test(&train_data, HOLDOUT.0, 1)?,
    };
    let named = |name: &Option<String>, share: f64| {
        name.clone()
            .unwrap_or_else(|| format!("{:.0}% of the training queries held out", 100.0 * share))
    };
    from_letor(
        &train_data,
        &valid_data,
        &test_data,
        threshold,
        format!(
            "LETOR documents of {train} / {} / {}, positive when grade >= {threshold}",
            named(valid, HOLDOUT.0),
            named(test, HOLDOUT.1)
        ),
    )
}

/// Trains every objective of `setup` over its seeds on `splits`, on `engine`; with
/// `only = Some((i, seed))`, the `i`-th objective at `seed` alone (one job of the page's pool of
/// workers). `on` hears each model's progress with its label (`objective, seed N`).
pub async fn objectives_async(
    splits: &BinarySplits,
    setup: &ObjectivesSetup,
    only: Option<(usize, u64)>,
    engine: &Engine,
    on: &mut dyn FnMut(&str, ObjectiveEvent),
) -> Result<Vec<ObjectiveRuns>> {
    let config = setup.config()?;
    let (objectives, seeds) = match only {
        None => (setup.objectives.clone(), (setup.seeds, setup.first_seed)),
        Some((index, seed)) => {
            let objective = *setup.objectives.get(index).ok_or_else(|| {
                Error::Config(format!(
                    "objective {index}: the setup has {}",
                    setup.objectives.len()
                ))
            })?;
            (vec![objective], (1, seed))
        }
    };
    objectives_over_seeds(splits, &objectives, &config, seeds, engine, on).await
}

/// [`objectives_async`] for every objective and seed, blocking until the GPU, if any, is done.
#[cfg(not(target_arch = "wasm32"))]
pub fn objectives(
    splits: &BinarySplits,
    setup: &ObjectivesSetup,
    engine: &Engine,
    on: &mut dyn FnMut(&str, ObjectiveEvent),
) -> Result<Vec<ObjectiveRuns>> {
    pollster::block_on(objectives_async(splits, setup, None, engine, on))
}

/// A test metric of the objectives' comparison: (JSON key, column title, value).
pub type MetricColumn = (&'static str, String, fn(&BinaryMetrics) -> f64);

/// The objectives' test metrics, in the order of the CLI's table.
pub fn metric_columns(targets: &Targets) -> Vec<MetricColumn> {
    vec![
        ("auc_pr", "AUC-PR (AP)".into(), |m| m.auc_pr),
        ("auc_roc", "AUC-ROC".into(), |m| m.auc_roc),
        (
            "recall_at_precision",
            format!("R@P{}", targets.precision),
            |m| m.recall_at_precision,
        ),
        (
            "precision_at_recall",
            format!("P@R{}", targets.recall),
            |m| m.precision_at_recall,
        ),
        ("f1", "F1 (f > 0)".into(), |m| m.f1),
        ("accuracy", "accuracy (f > 0)".into(), |m| m.accuracy),
        ("auc_pr_trapezoid", "AUC-PR (trapezoid)".into(), |m| {
            m.auc_pr_trapezoid
        }),
    ]
}

/// What the objectives' comparison found, as its `results.json` holds it (the CLI adds the
/// command and the seconds): the data, the examples and positives per split, the training
/// configuration, and per objective every test metric (mean, std and per seed), the validation
/// AUC-PR, the constraint, the multipliers' trajectories and the runs.
pub fn objectives_results_json(
    splits: &BinarySplits,
    setup: &ObjectivesSetup,
    results: &[ObjectiveRuns],
) -> Result<serde_json::Value> {
    let config = setup.config()?;
    let mut objectives = serde_json::Map::new();
    for r in results {
        let mut o = serde_json::Map::new();
        for (key, _, f) in metric_columns(&config.targets) {
            let (mean, std) = r.stat(|run| f(&run.test));
            let per_seed: Vec<f64> = r.runs.iter().map(|run| f(&run.test)).collect();
            o.insert(
                key.into(),
                serde_json::json!({"mean": mean, "std": std, "per_seed": per_seed}),
            );
        }
        let (mean, std) = r.stat(|run| run.valid.auc_pr);
        o.insert(
            "valid_auc_pr".into(),
            serde_json::json!({"mean": mean, "std": std}),
        );
        if let Some((held, seeds)) = r.constraint_held() {
            o.insert(
                "constraint".into(),
                serde_json::json!({
                    "valid_held": held,
                    "valid_held_within_tolerance": r.constraint_held_within(CONSTRAINT_TOLERANCE).map(|h| h.0),
                    "tolerance": CONSTRAINT_TOLERANCE,
                    "seeds": seeds,
                    "valid": r.runs.iter().map(|run| run.valid_constraint).collect::<Vec<_>>(),
                    "test": r.runs.iter().map(|run| run.test_constraint).collect::<Vec<_>>(),
                }),
            );
        }
        // The multipliers' trajectories: per seed, per epoch, one value per multiplier.
        let lambdas: Vec<Vec<&Vec<f64>>> = r
            .runs
            .iter()
            .map(|run| run.history.iter().map(|h| &h.lambdas).collect())
            .collect();
        o.insert("lambdas".into(), serde_json::json!(lambdas));
        if let Objective::AucPr { anchors } = r.objective {
            o.insert(
                "precision_anchors".into(),
                serde_json::json!(precision_anchors(anchors)),
            );
        }
        o.insert(
            "runs".into(),
            r.runs.iter().map(objective_run_json).collect(),
        );
        objectives.insert(r.objective.name(), serde_json::Value::Object(o));
    }
    Ok(serde_json::json!({
        "data": splits.description,
        "examples": {
            "train": [splits.train.len(), splits.train.positives()],
            "valid": [splits.valid.len(), splits.valid.positives()],
            "test": [splits.test.len(), splits.test.positives()],
        },
        "config": config,
        "seeds": setup.seeds,
        "first_seed": setup.first_seed,
        "objectives": objectives,
    }))
}

/// One run: its best epoch's validation and test figures and anchor biases, and per epoch
/// the loss, the label prior, the validation AUC-PR and AUC-ROC and the constraint's value (the
/// multipliers per epoch are the objective's `lambdas`).
fn objective_run_json(run: &Run) -> serde_json::Value {
    let history: Vec<serde_json::Value> = run
        .history
        .iter()
        .map(|h| {
            serde_json::json!({
                "epoch": h.epoch,
                "loss": h.loss,
                "label_prior": h.label_prior,
                "valid_auc_pr": h.valid.auc_pr,
                "valid_auc_roc": h.valid.auc_roc,
                "valid_constraint": h.constraint.and_then(|c| c.value),
                "seconds": h.seconds,
            })
        })
        .collect();
    serde_json::json!({
        "seed": run.seed,
        "best_epoch": run.best_epoch,
        "valid": run.valid,
        "test": run.test,
        "valid_constraint": run.valid_constraint,
        "test_constraint": run.test_constraint,
        "biases_at_best_epoch": run.best_epoch.checked_sub(1).and_then(|e| run.history.get(e)).map(|h| &h.biases),
        "history": history,
    })
}

/// The seed of the paired tests' bootstrap and permutations: fixed, so that a report reproduces.
pub const TESTS_SEED: u64 = 0x7465_7374;

/// What a comparison found, as `results.json` holds it: the data, the preparation, the
/// configuration, the setup, per method every figure with its spread (the `methods` object of
/// [`Comparison::methods_json`]), the test queries (`test_qids`), each student's NDCG@8 on every
/// test query (`per_query`: `{method: [[NDCG@8 of each test query] for each seed]}`, and
/// `per_query_graded` on the graded relevance), and the paired tests (`tests`,
/// [`crate::stats::PairedTest`]).
pub fn results_json(
    data: &PreparedData,
    setup: &Setup,
    comparison: &Comparison,
) -> serde_json::Value {
    let config = setup
        .compare_config(Engine::Cpu)
        .map(|c| serde_json::to_value(c).expect("a configuration serialises"))
        .unwrap_or(serde_json::Value::Null);
    let test = data.prepared.test.as_ref().unwrap_or(&data.prepared.valid);
    let tests = comparison.tests(TESTS_SEED);
    let sentences: Vec<String> = tests
        .iter()
        .filter(|t| t.metric == "ndcg@8")
        .map(crate::stats::sentence)
        .collect();
    let mut results = serde_json::json!({
        "data": data.description,
        "preparation": data.options,
        "privileged_columns": data.prepared.privileged_columns,
        "logs": data.logs,
        "config": config,
        "methods": comparison.methods_json(),
        "setup": setup,
        "test_qids": test.qids,
        "per_query": comparison.per_query_json(false),
        "per_query_graded": comparison.per_query_json(true),
        "tests": tests,
        "sentences": sentences,
    });
    // The teachers trained once for two methods, when there are any.
    let shared = shared_teachers(data, setup);
    if !shared.is_empty() {
        results["shared_teachers"] = shared.into();
    }
    results
}

/// What the reports say of the teachers a comparison trains once for two methods
/// ([`CompareConfig::jobs_on`]): a sentence each; none when every method trains its own.
pub fn shared_teachers(data: &PreparedData, setup: &Setup) -> Vec<String> {
    setup
        .compare_config(Engine::Cpu)
        .map(|c| c.shared_teachers(data.prepared.train.d_z))
        .unwrap_or_default()
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
            return Err(bad(format!(
                "row {}: relevance grade {g}: expected an integer 0..={MAX_GRADE}",
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
                return Err(bad(format!(
                    "row {}: qid {q} reappears after other queries (its rows ended at row {}): the rows of a query must be contiguous",
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
    };
    dataset.check_invariants().map_err(bad)?;
    Ok(dataset)
}

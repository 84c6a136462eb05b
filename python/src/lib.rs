//! `distillrank._distillrank`: the Python package's native half. It converts arguments (numpy
//! arrays, strings, JSON) into the library's types and the library's errors into Python's
//! (`ValueError` with the library's own message, `KeyboardInterrupt` on Ctrl-C), and nothing
//! else: loading, checking, preparing, training, scoring and saving are the library's
//! (`distillrank::pipeline`, `model_io`, `data`), so Python, the CLI and the page refuse the same
//! input with the same words and give the same numbers.
//!
//! The Python half (`python/distillrank/__init__.py`) turns keywords into a setup's JSON and
//! arrays into the dtypes taken here (float32 C-contiguous features, float64 grades, uint64 query
//! ids).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use distillrank::data::inputs::Inputs;
use distillrank::data::Dataset;
use distillrank::engine::{Backend, Engine};
use distillrank::model::Ensemble;
use distillrank::model_io::{self, ModelConfig};
use distillrank::pipeline::store::InMemory;
use distillrank::pipeline::sweep::SweepParam;
use distillrank::pipeline::{self, Reporter};
use distillrank::ranking::experiment::Training;
use distillrank::ranking::train::EpochLog;
use distillrank::setup::{resolve_files, DataSource, ObjectivesSetup, Setup};
use distillrank::stop::Stop;

/// Where a Python call's data come from, for the words its messages use.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Door {
    /// `fit`'s arrays: the training split is `X`, the validation split `eval_set`.
    Arrays,
    /// A setup (`compare`, `sweep`, `Setup`): the splits are its files.
    Setup,
    /// The global objectives' section (`objectives`): its settings are the section's fields,
    /// under the prefix the document gives them (`objectives.` in a whole setup document,
    /// [`distillrank::setup::objectives_section_in`]).
    Objectives(&'static str),
}

/// A library error as Python sees it: `ValueError` with the library's message in Python's words
/// ([`python_words`]) for a setup's door.
fn value_error(e: distillrank::error::Error) -> PyErr {
    door_error(Door::Setup, e)
}

/// An error of Python's readers of data files (`read_letor`, `read_impressions`): a `.query`
/// file is given to them as `query=`.
fn read_error(e: distillrank::error::Error) -> PyErr {
    let message = e
        .to_string()
        .replace(distillrank::data::letor::QUERY_FILE_FLAGS, "with query=");
    PyValueError::new_err(python_words(&message, Door::Setup))
}

/// A library error in the words of `door`.
fn door_error(door: Door, e: distillrank::error::Error) -> PyErr {
    PyValueError::new_err(python_words(&e.to_string(), door))
}

/// A message in Python's words ([`distillrank::settings::flags_in_words`]): the settings'
/// flags as their keywords, and the data's files as `door` names them: `fit`'s arrays
/// (`--valid` -> `eval_set`), a setup's files (`--valid` -> `source.files.valid`), or the
/// global objectives' section's settings and files (`--at-precision` -> `at_precision`).
fn python_words(message: &str, door: Door) -> String {
    // Python's own keywords first, where they differ from the setup field the table names:
    // `Ranker(teacher_columns=...)`, `sweep(param, values, ...)`, `predict(allow_missing_features=)`.
    let message = message
        .replace(
            "allow_missing_features true (--allow-missing-features true)",
            "allow_missing_features=True",
        )
        .replace("--teacher-columns", "teacher_columns")
        .replace("--allow-missing-features", "allow_missing_features=True")
        .replace("--values", "values");
    // fit's arrays have no file: their query ids are `qid=`. A setup's file without groups
    // takes its `.query` file from the setup's fields.
    let query_flags = distillrank::data::letor::QUERY_FILE_FLAGS;
    let message = match door {
        Door::Arrays => message.replace(
            "check the file's qid: column (each query's documents share one)",
            "check qid= (each query's rows share one)",
        ),
        Door::Setup => message.replace(
            query_flags,
            "with its .query field (source.files.train_query, valid_query or test_query)",
        ),
        // The objectives' files under the document's own section (none for the section alone).
        Door::Objectives(section) => message
            .replace(
                query_flags,
                &format!("with its .query field ({section}data.files.train_query, valid_query or test_query)"),
            )
            .replace("objectives.data.files.", &format!("{section}data.files.")),
    };
    if let Door::Objectives(section) = door {
        // The section's own fields (`--noise` is `data.synthetic.noise` there), and its files
        // `data.files.train`, ...
        return distillrank::settings::flags_in_objectives_words(
            &message,
            section,
            &distillrank::setup::objectives_files_field,
        );
    }
    distillrank::settings::flags_in_words(&message, &|flag| match (door, flag) {
        // `--bundled mq2008-folds` is `source="mq2008_folds"` here.
        (_, "bundled") => Some("source".into()),
        (Door::Arrays, "train") => Some("X".into()),
        (Door::Arrays, "valid") => Some("eval_set".into()),
        (Door::Arrays, "test") => Some("a test split".into()),
        (Door::Setup, _) => distillrank::setup::files_field(flag),
        _ => None,
    })
}

/// The name the training arrays go by in messages and in the setup's `Files` source.
const TRAIN: &str = "X";
/// The name of `fit`'s `eval_set`.
const EVAL_SET: &str = "eval_set";

/// How often, at most, a running job asks Python whether Ctrl-C was pressed.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// `logging`'s levels, as the package's `_log(level, text)` takes them.
const INFO: u8 = 20;
const WARNING: u8 = 30;

/// What a job tells its user (`verbose`: notes and one line per epoch; warnings always), through
/// the package's `log(level, text)` (Python's `logging`), else on stderr; and the job's ear for
/// Ctrl-C: every report checks Python's signals at most every [`SIGNAL_CHECK`], and a
/// `KeyboardInterrupt` raises the job's stop flag.
struct Stderr {
    verbose: bool,
    /// The words of the job's errors.
    door: Door,
    log: Option<Py<PyAny>>,
    stop: Stop,
    checked: Instant,
    interrupted: Option<PyErr>,
}

impl Stderr {
    fn new(verbose: bool, log: Option<Py<PyAny>>) -> Self {
        Stderr {
            verbose,
            door: Door::Setup,
            log,
            stop: Stop::default(),
            checked: Instant::now(),
            interrupted: None,
        }
    }

    /// One message at `level` in Python's words (`teacher_columns`, not `--teacher-columns`),
    /// through `log` when there is one (the GIL taken for it).
    fn say(&mut self, level: u8, text: &str) {
        let text = &python_words(text, self.door);
        match &self.log {
            Some(log) => {
                if let Err(e) = Python::attach(|py| log.call1(py, (level, text)).map(drop)) {
                    // A handler that raises (a KeyboardInterrupt among them) stops the job.
                    self.interrupted.get_or_insert(e);
                    self.stop.request();
                }
            }
            None if level >= WARNING => eprintln!("distillrank: warning: {text}"),
            None => eprintln!("distillrank: {text}"),
        }
    }

    /// Runs Python's signal handlers (the caller has released the GIL): on an exception
    /// (KeyboardInterrupt), keeps it and asks the job to stop.
    fn check_signals(&mut self) {
        if self.interrupted.is_some() || self.checked.elapsed() < SIGNAL_CHECK {
            return;
        }
        self.checked = Instant::now();
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            self.interrupted = Some(e);
            self.stop.request();
        }
    }

    /// The job's result, unless Python raised meanwhile: then Python's exception.
    fn finish<T>(&mut self, result: distillrank::error::Result<T>) -> PyResult<T> {
        match (self.interrupted.take(), result) {
            (Some(e), _) => Err(e),
            (None, result) => result.map_err(|e| door_error(self.door, e)),
        }
    }
}

impl Reporter for Stderr {
    fn note(&mut self, text: &str) {
        if self.verbose {
            self.say(INFO, text);
        }
        self.check_signals();
    }

    fn warn(&mut self, text: &str) {
        self.say(WARNING, text);
        self.check_signals();
    }

    fn progress(&mut self, _label: &str, _unit: &str, _done: u64, _total: u64) {
        self.check_signals();
    }

    fn epoch(&mut self, model: &Training, log: &EpochLog) {
        if self.verbose {
            let line = format!(
                "{model}  epoch {:>3}  loss {:.5}  valid NDCG@8 {:.4}  {:.0} docs/s",
                log.epoch, log.data_loss, log.valid_ndcg, log.docs_per_s
            );
            self.say(INFO, &line);
        }
        self.check_signals();
    }
}

/// The engines opened so far, by backend: `auto` probes the adapters once per process.
static ENGINES: Mutex<Vec<(Backend, Engine)>> = Mutex::new(Vec::new());

/// `auto`, `cpu` or `gpu`, as a setup spells it.
fn backend(name: &str) -> PyResult<Backend> {
    serde_json::from_value(serde_json::Value::String(name.to_string()))
        .map_err(|e| PyValueError::new_err(format!("backend '{name}': {e}")))
}

/// The engine `backend` asks for ([`Engine::open_blocking`]), opened once per process.
fn engine(backend: Backend, reporter: &mut dyn Reporter) -> distillrank::error::Result<Engine> {
    let mut engines = ENGINES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, engine)) = engines.iter().find(|(b, _)| *b == backend) {
        return Ok(engine.clone());
    }
    let (engine, note) = distillrank::native::open_engine(backend)?;
    reporter.note(&note);
    engines.push((backend, engine.clone()));
    Ok(engine)
}

/// The rows of `x` (float32, C-contiguous), followed by the columns of `z` when given, as one
/// row-major matrix: (values, width).
fn features(
    split: &str,
    x: &PyReadonlyArray2<'_, f32>,
    z: Option<&PyReadonlyArray2<'_, f32>>,
) -> PyResult<(Vec<f32>, usize)> {
    // Each array by its own name (`privileged`, `eval_set's X`), before they are joined.
    let name = |array: &str| match split {
        TRAIN => array.to_string(),
        other => format!("{other}'s {array}"),
    };
    let contiguous = |array: &str| {
        PyValueError::new_err(format!(
            "{}: expected a C-contiguous float32 array",
            name(array)
        ))
    };
    let finite = |array: &str, values: &[f32], width: usize| match values
        .iter()
        .position(|v| !v.is_finite())
    {
        Some(i) => Err(PyValueError::new_err(format!(
            "{}: row {}, feature {}: {} is not a finite number{}",
            name(array),
            i / width.max(1) + 1,
            i % width.max(1) + 1,
            values[i],
            if values[i].is_infinite() {
                " (or a number beyond float32's range, about ±3.4e38, which becomes one)"
            } else {
                ""
            }
        ))),
        None => Ok(()),
    };
    let xs = x.as_slice().map_err(|_| contiguous("X"))?;
    let [rows, n_x] = [x.shape()[0], x.shape()[1]];
    finite("X", xs, n_x)?;
    let Some(z) = z else {
        return Ok((xs.to_vec(), n_x));
    };
    let zs = z.as_slice().map_err(|_| contiguous("privileged"))?;
    finite("privileged", zs, z.shape()[1])?;
    let n_z = z.shape()[1];
    if z.shape()[0] != rows {
        return Err(PyValueError::new_err(format!(
            "{}: {} rows for the {rows} rows of {}",
            name("privileged"),
            z.shape()[0],
            name("X")
        )));
    }
    let width = n_x + n_z;
    let mut out = Vec::with_capacity(rows * width);
    for r in 0..rows {
        out.extend_from_slice(&xs[r * n_x..(r + 1) * n_x]);
        out.extend_from_slice(&zs[r * n_z..(r + 1) * n_z]);
    }
    Ok((out, width))
}

/// One split given as arrays: X, y, qid and the optional privileged features.
type Arrays<'py> = (
    PyReadonlyArray2<'py, f32>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, u64>,
    Option<PyReadonlyArray2<'py, f32>>,
);

/// The library's dataset of one split's arrays ([`pipeline::preparation::dataset_from_arrays`]).
fn dataset(name: &str, arrays: &Arrays<'_>) -> PyResult<Dataset> {
    let (x, y, qid, z) = arrays;
    let (values, width) = features(name, x, z.as_ref())?;
    let grades = y
        .as_slice()
        .map_err(|_| PyValueError::new_err("y: not contiguous"))?;
    let qids = qid
        .as_slice()
        .map_err(|_| PyValueError::new_err("qid: not contiguous"))?;
    pipeline::preparation::dataset_from_arrays(name, values, width, grades, qids)
        .map_err(value_error)
}

/// The defaults of every setting: `Setup::default()` as JSON.
#[pyfunction]
fn default_setup() -> String {
    Setup::default().to_json()
}

/// The losses and methods the library offers, from their entries, and the settings a sweep
/// moves: `{"losses": [...], "methods": [...], "sweep_params": [...]}` as JSON.
#[pyfunction]
fn choices() -> String {
    let mut choices = distillrank::setup::choices_json();
    choices["sweep_params"] = SweepParam::ALL.map(SweepParam::name).to_vec().into();
    choices.to_string()
}

/// A setup's JSON, read by the library (unknown fields and bad values refused) and written back
/// whole, every default filled in.
#[pyfunction]
fn check_setup(text: &str) -> PyResult<String> {
    Ok(Setup::from_json(text).map_err(value_error)?.to_json())
}

/// A trained or loaded model: the MLP (or the MLPs whose scores it averages) and the config that
/// says which columns it reads.
#[pyclass(module = "distillrank._distillrank", frozen)]
struct Model {
    model: Ensemble,
    config: ModelConfig,
}

#[pymethods]
impl Model {
    /// Reads `PREFIX.safetensors` + `PREFIX.json`.
    #[staticmethod]
    fn load(py: Python<'_>, prefix: PathBuf) -> PyResult<Model> {
        let (model, config) = py
            .detach(|| pipeline::run::load_model(&prefix, false))
            .map_err(value_error)?;
        Ok(Model { model, config })
    }

    /// Writes `PREFIX.safetensors` + `PREFIX.json`; returns their paths.
    fn save(&self, py: Python<'_>, prefix: PathBuf) -> PyResult<(PathBuf, PathBuf)> {
        py.detach(|| model_io::save(&prefix, &self.model, &self.config))
            .map_err(value_error)
    }

    /// The model as bytes, `(safetensors, config JSON)`: what `save` writes, in memory.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, String)> {
        let weights = model_io::to_safetensors(&self.model, &self.config).map_err(value_error)?;
        Ok((PyBytes::new(py, &weights), self.config_json()))
    }

    /// A model from [`Model::to_bytes`]'s pair, checked as `load` checks files.
    #[staticmethod]
    fn from_bytes(weights: &[u8], config: &str) -> PyResult<Model> {
        let name = Path::new("model");
        let config = model_io::parse_config(config, name).map_err(value_error)?;
        let model = model_io::from_safetensors(weights, &config, name).map_err(value_error)?;
        Ok(Model { model, config })
    }

    /// Pickling (and `copy.deepcopy`): the model rebuilt from its bytes.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = slf.py();
        let rebuild = slf.get_type().getattr("from_bytes")?;
        let state = slf.borrow().to_bytes(py)?.into_pyobject(py)?.into_any();
        Ok((rebuild, state))
    }

    /// The same model, its config naming the source data's features (a data frame's columns),
    /// checked as a saved config's are.
    fn with_feature_names(&self, names: Vec<String>) -> PyResult<Model> {
        let config = ModelConfig {
            feature_names: Some(names),
            ..self.config.clone()
        };
        let text = serde_json::to_string(&config).expect("a model config serialises");
        let config = model_io::parse_config(&text, Path::new("X")).map_err(value_error)?;
        Ok(Model {
            model: self.model.clone(),
            config,
        })
    }

    /// The JSON half of the saved model.
    fn config_json(&self) -> String {
        serde_json::to_string_pretty(&self.config).expect("a model config serialises")
    }

    /// One score per row of `x` (float32 C-contiguous, the width of the training data's X), as
    /// `distillrank predict` scores a file; `allow_missing_features` reads the columns of a
    /// narrower `x` that it lacks as 0, as `predict --allow-missing-features` does. `qids`
    /// groups the rows into queries (each query's rows together), which a listwise model
    /// (attention) needs and an MLP ignores.
    #[pyo3(signature = (x, backend_name, allow_missing_features=false, qids=None))]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        x: PyReadonlyArray2<'py, f32>,
        backend_name: &str,
        allow_missing_features: bool,
        qids: Option<Vec<u64>>,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let backend = backend(backend_name)?;
        let (values, width) = features(TRAIN, &x, None)?;
        let rows = x.shape()[0];
        if qids.is_none() && self.config.attention_heads > 0 {
            return Err(PyValueError::new_err(format!(
                "qid: a listwise model (attention_heads={}) scores each document against the other documents of its query; give qid= with a query id per row (each query's rows together)",
                self.config.attention_heads
            )));
        }
        let grades = vec![0.0; rows];
        let qids = qids.unwrap_or_else(|| vec![0; rows]);
        let name = Path::new(TRAIN);
        let scores = py.detach(|| {
            let data =
                pipeline::preparation::dataset_from_arrays(TRAIN, values, width, &grades, &qids)?;
            let inputs = model_io::model_inputs(&data, &self.config, name, allow_missing_features)?;
            let engine = engine(backend, &mut pipeline::Silent)?;
            let scores = distillrank::native::block_on(engine.score_ensemble(
                &self.model,
                Inputs::dense(&inputs, data.n_docs()).with_groups(&data.group_offsets),
            ))?;
            model_io::check_scores(&scores, name)?;
            Ok(scores)
        });
        Ok(scores.map_err(value_error)?.into_pyarray(py))
    }

    /// The ONNX model of this model (raw feature vectors in, `predict`'s scores out), written to
    /// `path`.
    fn to_onnx(
        &self,
        py: Python<'_>,
        path: PathBuf,
        metadata: Vec<(String, String)>,
    ) -> PyResult<()> {
        py.detach(|| {
            distillrank::onnx::check_target(&path)?;
            let bytes = distillrank::onnx::export(&self.model, &self.config, &metadata)?;
            distillrank::output::write_atomic(&path, &bytes)
        })
        .map_err(value_error)
    }
}

/// Mean NDCG@`k` of `scores` against the relevance grades `y`, over the queries of `qid` (the
/// rows of a query contiguous), with the gains and the IDCG = 0 convention (`idcg_zero`:
/// "exclude", "zero", "one") of `distillrank eval`, and what `eval` says beside it: `None` with
/// the reason where no query holds two grades (every order is as good), and that the model does
/// not rank where it gives every document of each query one score. `None` also when no query
/// counts.
#[pyfunction]
fn ndcg(
    scores: Vec<f32>,
    y: Vec<f64>,
    qid: Vec<u64>,
    k: usize,
    idcg_zero: &str,
) -> PyResult<(Option<f64>, Vec<String>)> {
    let convention: distillrank::metrics::IdcgZero =
        serde_json::from_value(serde_json::Value::String(idcg_zero.into()))
            .map_err(|e| PyValueError::new_err(format!("idcg_zero '{idcg_zero}': {e}")))?;
    if k == 0 {
        return Err(PyValueError::new_err("k: expected 1 or more"));
    }
    // The scores read as a one-column matrix: the checks of fit's arrays (finite values, one
    // grade and one query id per row, queries contiguous) name the row that fails.
    let data = pipeline::preparation::dataset_from_arrays("scores", scores.clone(), 1, &y, &qid)
        .map_err(value_error)?;
    let labels: Vec<f32> = data.grades.iter().map(|&g| g as f32).collect();
    let offsets = &data.group_offsets;
    let mut notes: Vec<String> = distillrank::model_io::ties_note(&scores, offsets)
        .into_iter()
        .collect();
    if !distillrank::metrics::any_group_ranks(&labels, offsets) {
        notes.push(distillrank::metrics::UNMEASURABLE.to_string());
        return Ok((None, notes));
    }
    let value = distillrank::metrics::mean_ndcg(k, &scores, &labels, offsets, convention);
    Ok((value, notes))
}

/// Where `scores` give every document of each query of `qid` (the rows of a query contiguous)
/// one score, the words that say the model does not rank (as `distillrank eval` warns); else
/// `None`.
#[pyfunction]
fn ties_note(scores: Vec<f32>, qid: Vec<u64>) -> PyResult<Option<String>> {
    let y = vec![0.0; scores.len()];
    let data = pipeline::preparation::dataset_from_arrays("scores", scores.clone(), 1, &y, &qid)
        .map_err(value_error)?;
    Ok(distillrank::model_io::ties_note(
        &scores,
        &data.group_offsets,
    ))
}

/// Each query's id, its NDCG (`None` without a relevant document) and whether it holds two
/// different grades.
type PerQuery = (Vec<u64>, Vec<Option<f64>>, Vec<bool>);

/// NDCG@`k` of each query of `qid` (the rows of a query contiguous), in their order: the
/// queries' ids, their figures (`None` for a query without a relevant document, IDCG = 0) and
/// whether each holds two different grades (where none of a run's does, no figure measures
/// anything: [`distillrank::metrics::UNMEASURABLE`]). What a cluster's partitions report, to be
/// reduced in qid order.
#[pyfunction]
fn ndcg_per_query(scores: Vec<f32>, y: Vec<f64>, qid: Vec<u64>, k: usize) -> PyResult<PerQuery> {
    if k == 0 {
        return Err(PyValueError::new_err("k: expected 1 or more"));
    }
    let data = pipeline::preparation::dataset_from_arrays("scores", scores.clone(), 1, &y, &qid)
        .map_err(value_error)?;
    let labels: Vec<f32> = data.grades.iter().map(|&g| g as f32).collect();
    let values = distillrank::metrics::ndcg_per_group(k, &scores, &labels, &data.group_offsets);
    let mixed = data
        .group_offsets
        .windows(2)
        .map(|w| distillrank::metrics::any_group_ranks(&labels[w[0]..w[1]], &[0, w[1] - w[0]]))
        .collect();
    Ok((data.qids, values, mixed))
}

/// Trains the one method of `setup` (`setup.methods[0]`, seed `setup.first_seed`) on arrays:
/// the training split `train` and the validation split `eval_set` (else held out of the training
/// queries). Privileged features given as arrays become the split `cols:` of their columns; the
/// saved student reads X alone. Returns the student and its run (JSON).
///
/// `teacher_scores`: a teacher's scores of the training rows and of the eval_set's rows, given
/// beside the arrays (`setup.data.teacher` says what the teacher is).
///
/// `position`: each training row's displayed position (1-based), its y the click: the clicks by
/// rank that the methods learning from clicks read.
#[pyfunction]
#[pyo3(signature = (setup, train, eval_set=None, verbose=true, teacher_scores=None, position=None, log=None))]
#[allow(clippy::too_many_arguments)]
fn fit(
    py: Python<'_>,
    setup: &str,
    train: Arrays<'_>,
    eval_set: Option<Arrays<'_>>,
    verbose: bool,
    teacher_scores: Option<(Vec<f64>, Option<Vec<f64>>)>,
    position: Option<Vec<u64>>,
    log: Option<Py<PyAny>>,
) -> PyResult<(Model, String)> {
    let mut setup = Setup::from_json(setup).map_err(|e| door_error(Door::Arrays, e))?;
    let n_x = train.0.shape()[1];
    // With positions, y holds each row's click: a value other than 0 or 1 is a bad click, not a
    // bad grade.
    if position.is_some() {
        let y = train.1.as_slice()?;
        if let Some((row, click)) = y.iter().enumerate().find(|(_, &c)| c != 0.0 && c != 1.0) {
            return Err(PyValueError::new_err(format!(
                "y, row {}: click {click}: expected 0 or 1 (with position=, y holds each row's click)",
                row + 1
            )));
        }
    }
    let mut store = InMemory::default();
    store.datasets.push((TRAIN.into(), dataset(TRAIN, &train)?));
    if let Some(eval_set) = &eval_set {
        store
            .datasets
            .push((EVAL_SET.into(), dataset(EVAL_SET, eval_set)?));
    }
    if let Some(position) = position {
        store.positions.push((TRAIN.into(), position));
    }
    if let Some((train_scores, eval_scores)) = teacher_scores {
        store.teacher_scores.push((TRAIN.into(), train_scores));
        if let Some(scores) = eval_scores {
            store.teacher_scores.push((EVAL_SET.into(), scores));
        }
    }
    setup.data.source = DataSource::files(
        TRAIN.into(),
        eval_set.is_some().then(|| EVAL_SET.into()),
        None,
    );
    if let Some(z) = &train.3 {
        let columns: Vec<String> = (n_x + 1..=n_x + z.shape()[1])
            .map(|c| c.to_string())
            .collect();
        setup.data.privileged = Some(format!("cols:{}", columns.join(",")));
    }
    let method = match setup.methods.as_slice() {
        [method] => *method,
        _ => {
            return Err(PyValueError::new_err(
                "fit trains one method: give exactly one",
            ))
        }
    };
    let backend = setup.backend;
    let mut reporter = Stderr::new(verbose, log);
    reporter.door = Door::Arrays;
    let result = py.detach(|| {
        // Every setting is checked before the data are prepared, as the CLI does.
        setup.check(None)?;
        // A setting nothing reads is named, as a comparison names it; so is `seeds`, since fit
        // trains one model (`seed` sets it).
        let mut unused = setup.unused_settings();
        if setup.seeds != Setup::default().seeds {
            unused.push(format!(
                "--seeds {} is not used: fit trains one model, from its one seed (seed=)",
                setup.seeds
            ));
        }
        for sentence in unused {
            // The teacher is `teacher=`, whatever it was given as (scores, a model).
            let sentence = match sentence.split_once(" is not used") {
                Some((given, why))
                    if given.starts_with("--teacher-scores ")
                        || given.starts_with("--teacher-model ") =>
                {
                    format!("teacher= is not used{why}")
                }
                _ => sentence,
            };
            // fit's one method is `method=`, not a list of them.
            let sentence = sentence
                .replace("no method of --methods ", "the method ")
                .replace(" learns from a teacher", " learns from no teacher");
            reporter.warn(&python_words(&sentence, Door::Arrays));
        }
        let mut data =
            pipeline::preparation::prepare(&setup.data, &mut store, false, &mut reporter)?;
        // The student reads X's columns only: it serves on X without the privileged features.
        data.source_features = n_x;
        if reporter.interrupted.is_some() {
            return Err(distillrank::error::Error::Stopped { epoch: 0, step: 0 });
        }
        let engine = engine(backend, &mut reporter)?;
        let stop = reporter.stop.clone();
        let (model, run) = distillrank::native::pipeline::fit(
            &data,
            &setup,
            method,
            setup.first_seed,
            &engine,
            &stop,
            &mut reporter,
        )?;
        let config = pipeline::run::student_config(&data, &setup, &model);
        Ok((model, config, run))
    });
    let (model, config, run) = reporter.finish(result)?;
    let run = serde_json::to_string(&run).expect("a run serialises");
    Ok((Model { model, config }, run))
}

/// Runs the comparison `setup` describes (its data from files or generated), as
/// `distillrank compare` does; returns `results.json`'s object (JSON).
#[pyfunction]
#[pyo3(signature = (setup, verbose=true, base=None, log=None))]
fn compare(
    py: Python<'_>,
    setup: &str,
    verbose: bool,
    base: Option<PathBuf>,
    log: Option<Py<PyAny>>,
) -> PyResult<String> {
    let mut setup = Setup::comparison_from_json(setup).map_err(value_error)?;
    resolve_files(setup.files_mut(), base.as_deref()).map_err(value_error)?;
    let mut reporter = Stderr::new(verbose, log);
    let result = py.detach(|| {
        // Every setting is checked before the data load, as the CLI does, and a setting
        // nothing reads is named, as the CLI names it.
        setup.check(None)?;
        for sentence in setup.unused_settings() {
            reporter.warn(&sentence);
        }
        let engine = engine(setup.backend, &mut reporter)?;
        let mut store = pipeline::store::Disk::with_queries(setup.data.source.query_files());
        if setup.data.has_folds() {
            // The LETOR protocol: a comparison on each fold, the folds' summary.
            let stop = reporter.stop.clone();
            let runs = distillrank::native::pipeline::compare_folds(
                &setup,
                &mut store,
                &engine,
                &stop,
                &mut reporter,
            )?;
            return Ok(pipeline::folds::results_json(&setup, &runs));
        }
        let data = pipeline::preparation::prepare(&setup.data, &mut store, true, &mut reporter)?;
        if reporter.interrupted.is_some() {
            return Err(distillrank::error::Error::Stopped { epoch: 0, step: 0 });
        }
        let stop = reporter.stop.clone();
        let comparison =
            distillrank::native::pipeline::compare(&data, &setup, &engine, &stop, &mut reporter)?;
        let mut results = pipeline::report::results_json(&data, &setup, &comparison);
        pipeline::report::results_in_words(&mut results);
        Ok(results)
    });
    let results = reporter.finish(result)?;
    Ok(serde_json::to_string(&results).expect("results serialise"))
}

/// The prepared data of `setup` from files (or generated, or bundled), every setting checked
/// first: what each of the job functions below starts from.
fn job_data(
    setup: &str,
    base: Option<&std::path::Path>,
    reporter: &mut Stderr,
) -> distillrank::error::Result<(Setup, pipeline::preparation::PreparedData)> {
    let mut setup = Setup::comparison_from_json(setup)?;
    resolve_files(setup.files_mut(), base)?;
    setup.check(None)?;
    // A cluster runs one split's jobs; the folds' comparisons, one a fold, run on one machine.
    if setup.data.has_folds() {
        return Err(distillrank::error::Error::Config(
            "folds: distillrank.dask.compare and sweep send one split's jobs to the cluster; the folds run one comparison a fold, on one machine: distillrank.compare takes them".into(),
        ));
    }
    let mut store = pipeline::store::Disk::with_queries(setup.data.source.query_files());
    let data = pipeline::preparation::prepare(&setup.data, &mut store, true, reporter)?;
    Ok((setup, data))
}

/// The jobs of the comparison `setup` describes (`pipeline::jobs::jobs`: one seed of some
/// methods each, independent of each other), as JSON: what `distillrank.dask` sends to a
/// cluster's workers.
#[pyfunction]
#[pyo3(signature = (setup, base=None))]
fn compare_jobs(py: Python<'_>, setup: &str, base: Option<PathBuf>) -> PyResult<String> {
    let mut reporter = Stderr::new(false, None);
    let result = py.detach(|| {
        let (setup, data) = job_data(setup, base.as_deref(), &mut reporter)?;
        pipeline::jobs::jobs(&data, &setup)
    });
    let jobs = reporter.finish(result)?;
    Ok(serde_json::to_string(&jobs).expect("jobs serialise"))
}

/// Runs one job of `setup`'s comparison (from [`compare_jobs`]) on its backend: the data
/// prepared here from the setup (a prepared cache on shared storage is mapped, not prepared
/// again), then the job's teachers and students. Returns `[[method, run], ...]` as JSON.
#[pyfunction]
#[pyo3(signature = (setup, job, base=None))]
fn run_compare_job(
    py: Python<'_>,
    setup: &str,
    job: &str,
    base: Option<PathBuf>,
) -> PyResult<String> {
    let job: distillrank::ranking::experiment::Job =
        serde_json::from_str(job).map_err(|e| PyValueError::new_err(format!("the job: {e}")))?;
    let mut reporter = Stderr::new(false, None);
    let result = py.detach(|| {
        let (setup, data) = job_data(setup, base.as_deref(), &mut reporter)?;
        let engine = engine(setup.backend, &mut reporter)?;
        let stop = reporter.stop.clone();
        let runs = distillrank::native::block_on(pipeline::jobs::run(
            &data,
            &setup,
            &engine,
            &stop,
            &job,
            &mut |_, _| {},
        ))?;
        Ok(job
            .methods
            .iter()
            .zip(runs)
            .map(|(method, (_, run))| (*method, run))
            .collect::<Vec<_>>())
    });
    let runs = reporter.finish(result)?;
    Ok(serde_json::to_string(&runs).expect("runs serialise"))
}

/// The results of `setup`'s comparison from its jobs' runs (`results[k]`: job k's
/// `[[method, run], ...]`, in the order of `jobs`), as `distillrank compare` writes
/// `results.json` (JSON).
#[pyfunction]
#[pyo3(signature = (setup, jobs, results, base=None))]
fn summarize_compare(
    py: Python<'_>,
    setup: &str,
    jobs: &str,
    results: &str,
    base: Option<PathBuf>,
) -> PyResult<String> {
    let jobs: Vec<distillrank::ranking::experiment::Job> =
        serde_json::from_str(jobs).map_err(|e| PyValueError::new_err(format!("the jobs: {e}")))?;
    type Runs = Vec<(
        distillrank::ranking::distill::Method,
        distillrank::ranking::experiment::SeedRun,
    )>;
    let results: Vec<Runs> = serde_json::from_str(results)
        .map_err(|e| PyValueError::new_err(format!("the jobs' results: {e}")))?;
    let mut reporter = Stderr::new(false, None);
    let result = py.detach(|| {
        let (setup, data) = job_data(setup, base.as_deref(), &mut reporter)?;
        let methods = pipeline::jobs::methods_of(&setup, &jobs, results)?;
        Ok(pipeline::jobs::summary(&data, &setup, methods))
    });
    let results = reporter.finish(result)?;
    Ok(serde_json::to_string(&results).expect("results serialise"))
}

/// The setups of a sweep: `setup` with `param` at each of `values`, checked as `sweep` checks
/// them (JSON), for a runner that sends each value's comparison elsewhere.
#[pyfunction]
fn sweep_setups(setup: &str, param: &str, values: Vec<f64>) -> PyResult<Vec<String>> {
    let setup = Setup::comparison_from_json(setup).map_err(value_error)?;
    let param = SweepParam::parse(param).ok_or_else(|| {
        PyValueError::new_err(format!(
            "param: unknown parameter '{param}', expected one of {}",
            SweepParam::ALL.map(SweepParam::name).join(", ")
        ))
    })?;
    param.check(&setup, &values).map_err(value_error)?;
    distillrank::pipeline::preparation::check_one_split(&setup.data).map_err(value_error)?;
    values
        .iter()
        .map(|&value| {
            let at = param.at(&setup, value).map_err(value_error)?;
            Ok(serde_json::to_string(&at).expect("a setup serialises"))
        })
        .collect()
}

/// What a sweep of `param` over `setup` warns of before its first value, in Python's words
/// ([`distillrank::pipeline::sweep::warnings`]): for a door that runs the sweep's points itself
/// (`distillrank.dask.sweep`).
#[pyfunction]
fn sweep_warnings(setup: &str, param: &str) -> PyResult<Vec<String>> {
    let setup = Setup::comparison_from_json(setup).map_err(value_error)?;
    let param = SweepParam::parse(param)
        .ok_or_else(|| PyValueError::new_err(format!("param: unknown parameter '{param}'")))?;
    Ok(distillrank::pipeline::sweep::warnings(&setup, param)
        .iter()
        .map(|sentence| python_words(sentence, Door::Setup))
        .collect())
}

/// Sweeps `param` (a name of [`SweepParam`]: alpha, tau-target, ...) over `values`, every
/// method of `setup` at each value, as `distillrank sweep` does; returns `sweep.json`'s object
/// (JSON) without the command.
#[pyfunction]
#[pyo3(signature = (setup, param, values, verbose=true, base=None, log=None))]
fn sweep(
    py: Python<'_>,
    setup: &str,
    param: &str,
    values: Vec<f64>,
    verbose: bool,
    base: Option<PathBuf>,
    log: Option<Py<PyAny>>,
) -> PyResult<String> {
    let mut setup = Setup::comparison_from_json(setup).map_err(value_error)?;
    resolve_files(setup.files_mut(), base.as_deref()).map_err(value_error)?;
    let param = SweepParam::parse(param).ok_or_else(|| {
        PyValueError::new_err(format!(
            "param: unknown parameter '{param}', expected one of {}",
            SweepParam::ALL.map(SweepParam::name).join(", ")
        ))
    })?;
    let mut reporter = Stderr::new(verbose, log);
    let result = py.detach(|| {
        // Every setting and value is checked before the data load, as the CLI does.
        let config = setup.compare_config(Engine::Cpu)?;
        param.check(&setup, &values)?;
        let engine = engine(setup.backend, &mut reporter)?;
        let stop = reporter.stop.clone();
        let mut store = pipeline::store::Disk::with_queries(setup.data.source.query_files());
        let result = pipeline::sweep::sweep(
            &setup,
            param,
            &values,
            &mut store,
            &mut reporter,
            &mut |data, setup, reporter| {
                distillrank::native::pipeline::compare(data, setup, &engine, &stop, reporter)
            },
        )?;
        Ok(result.json(serde_json::to_value(&config).expect("a configuration serialises")))
    });
    let results = reporter.finish(result)?;
    Ok(serde_json::to_string(&results).expect("results serialise"))
}

/// Runs the global objectives' comparison `setup` describes (an [`ObjectivesSetup`]: the
/// `setup.json` that `distillrank objectives` writes), as `distillrank objectives --setup` does;
/// returns `results.json`'s object (JSON) without the command and the seconds.
#[pyfunction]
#[pyo3(signature = (setup, verbose=true, base=None, log=None))]
fn objectives(
    py: Python<'_>,
    setup: &str,
    verbose: bool,
    base: Option<PathBuf>,
    log: Option<Py<PyAny>>,
) -> PyResult<String> {
    use distillrank::objectives::train::Event;
    let door = Door::Objectives(distillrank::setup::objectives_section_in(setup));
    let words = |e| door_error(door, e);
    let mut setup = ObjectivesSetup::from_json(setup).map_err(words)?;
    resolve_files(setup.files_mut(), base.as_deref()).map_err(words)?;
    let mut reporter = Stderr::new(verbose, log);
    reporter.door = door;
    let result = py.detach(|| {
        let mut store = pipeline::store::Disk::with_queries(setup.data.query_files());
        let splits = pipeline::objectives::objectives_data(&setup, &mut store, &mut reporter)?;
        reporter.note(&format!("data: {}", splits.description));
        let engine = engine(setup.backend, &mut reporter)?;
        let total =
            (splits.train.len() * setup.epochs * setup.seeds * setup.objectives.len()) as u64;
        let mut done = 0;
        let runs = distillrank::native::pipeline::objectives(
            &splits,
            &setup,
            &engine,
            &mut |label, event| match event {
                Event::Step { examples } => {
                    done += examples as u64;
                    reporter.progress(label, "examples", done.min(total), total);
                }
                Event::Epoch(log) => reporter.note(&format!(
                    "{label}: epoch {} loss {:.4} valid AUC-PR {:.4}",
                    log.epoch, log.loss, log.valid.auc_pr
                )),
            },
        )?;
        if reporter.interrupted.is_some() {
            return Err(distillrank::error::Error::Stopped { epoch: 0, step: 0 });
        }
        pipeline::objectives::objectives_results_json(&splits, &setup, &runs)
    });
    let results = reporter.finish(result)?;
    Ok(serde_json::to_string(&results).expect("results serialise"))
}

/// Features (float32), grades (int32) and query ids (int64, one per row) of a dataset.
type Letor<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<i32>>,
    Bound<'py, PyArray1<i64>>,
);

/// The arrays of `data`, read from the file `name`.
fn letor_arrays<'py>(py: Python<'py>, data: Dataset, name: &str) -> PyResult<Letor<'py>> {
    let (rows, width) = (data.n_docs(), data.n_features);
    let mut qids = Vec::with_capacity(rows);
    for g in 0..data.n_groups() {
        let qid = i64::try_from(data.qids[g]).map_err(|_| {
            PyValueError::new_err(format!(
                "{name}: qid {} (query {} of the file) is past 2^63 - 1, which the int64 array of query ids cannot hold: renumber the queries",
                data.qids[g],
                g + 1
            ))
        })?;
        qids.extend(std::iter::repeat_n(qid, data.group(g).len()));
    }
    let grades: Vec<i32> = data.grades.iter().map(|&g| i32::from(g)).collect();
    let x = data
        .features
        .into_vec()
        .into_pyarray(py)
        .reshape([rows, width])?;
    Ok((x, grades.into_pyarray(py), qids.into_pyarray(py)))
}

/// What the library says beside a result: (is a warning, text).
type Note = (bool, String);

/// A tree model trained elsewhere (`model`: the bytes of a LightGBM model file or dump, or of an
/// XGBoost JSON model) scoring the rows of `x` (float64; NaN a missing value), as its library
/// does; `columns`: `auto`, `from-1` or `from-0`, the model's columns against X's, chosen by the
/// setting `setting`; `names`: X's columns' names, where a frame gave them, checked against the
/// model's own. Returns the scores and what the CLI says beside them, as (is a warning, text):
/// the objective's note where it does not rank, and the column mapping `auto` chose where the
/// widths did not decide it (a warning here: arrays have no trailing columns left out).
#[pyfunction]
#[pyo3(signature = (model, name, x, columns, names=None, setting="teacher_columns"))]
fn forest_scores<'py>(
    py: Python<'py>,
    model: &[u8],
    name: &str,
    x: PyReadonlyArray2<'py, f64>,
    columns: &str,
    names: Option<Vec<String>>,
    setting: &str,
) -> PyResult<(Bound<'py, PyArray1<f64>>, Vec<Note>)> {
    let columns: distillrank::forest::Columns =
        serde_json::from_value(serde_json::Value::String(columns.into())).map_err(|_| {
            PyValueError::new_err(format!(
                "{setting} '{}': expected auto, from-1 or from-0",
                distillrank::error::printable(columns)
            ))
        })?;
    let width = x.shape()[1];
    let values: Vec<f64> = x.as_array().iter().copied().collect();
    let scored = py.detach(|| {
        let name = Path::new(name);
        let forest = distillrank::forest::Forest::parse(name, model)?;
        let offset = forest.feature_offset(columns, width, name, setting)?;
        forest.check_data_names(
            "X",
            names.as_deref(),
            offset,
            &format!("the model {}", name.display()),
            setting,
        )?;
        let mut notes = Vec::new();
        if let Some(note) = &forest.note {
            notes.push((true, format!("{}: {note}", name.display())));
        }
        // Arrays carry every column, so a model of another width is a guess by its splits, and
        // LightGBM refuses one: a warning, said whatever verbose says.
        if let Some(note) = forest.columns_note(columns, width, offset, setting) {
            notes.push((true, format!("{}: {note}", name.display())));
        }
        let scores = forest.score_rows(&values, width, offset);
        match scores.iter().position(|s| !s.is_finite()) {
            Some(i) => Err(distillrank::error::Error::Data(format!(
                "{}: the model's score of row {i} is {}",
                name.display(),
                scores[i]
            ))),
            None => Ok((scores, notes)),
        }
    });
    let (scores, notes) = scored.map_err(value_error)?;
    Ok((scores.into_pyarray(py), notes))
}

/// Reads a LETOR / SVMlight file (gzip or not) or Parquet with the library's reader, and the
/// feature columns' names where the file names them (Parquet); `query` names a LightGBM `.query`
/// file of group sizes.
#[pyfunction]
#[pyo3(signature = (path, query=None))]
fn read_letor(
    py: Python<'_>,
    path: PathBuf,
    query: Option<PathBuf>,
) -> PyResult<(Letor<'_>, Option<Vec<String>>)> {
    // As every command reads a data file: a `.drcache` as the cache it is, a file through its
    // fresh cache beside it.
    let mut reporter = Stderr::new(false, None);
    let mut data = py
        .detach(|| {
            distillrank::pipeline::store::load_file(
                &path,
                query.as_deref(),
                &distillrank::data::features::Scratch::Memory,
                &mut reporter,
            )
        })
        .map_err(read_error)?;
    let names = data.feature_names.take();
    Ok((letor_arrays(py, data, &path.display().to_string())?, names))
}

/// An impressions log (`qid session position doc click`, as `data simulate-logs` writes it)
/// summed by document and displayed rank over the queries of the LETOR file `data` (JSON of the
/// library's click table); a bad log raises naming its line and field.
#[pyfunction]
#[pyo3(signature = (path, data, query=None))]
fn read_impressions(
    py: Python<'_>,
    path: PathBuf,
    data: PathBuf,
    query: Option<PathBuf>,
) -> PyResult<String> {
    use distillrank::data::letor::{read_letor_file, ReadOptions};
    use distillrank::data::logs::{docids_of, read_impressions, MAX_IMPRESSIONS_BYTES};
    py.detach(|| {
        let file = data;
        let data = read_letor_file(&file, query.as_deref(), &ReadOptions::default())?;
        let bytes =
            distillrank::data::read_capped(&path, MAX_IMPRESSIONS_BYTES, "an impressions log")?;
        // A log may name documents by the data file's docid comments.
        let mut docids = || {
            let text =
                std::fs::File::open(&file).map_err(|e| distillrank::error::Error::io(&file, e))?;
            docids_of(&file, text)
        };
        let name = path.display().to_string();
        let table = read_impressions(&bytes, &name, &data, &[], None, &mut docids)?;
        Ok(serde_json::to_string(&table).expect("a click table serialises"))
    })
    .map_err(read_error)
}

/// The cells of a click table with an impression: document, rank (0-based), impressions and
/// clicks, as arrays.
type Cells<'py> = (
    Bound<'py, PyArray1<u64>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
);

/// The documents with a conversion or a dwell, with their conversions and dwell (ms), each None
/// where the log has no such column.
type Outcomes<'py> = (
    Bound<'py, PyArray1<u64>>,
    Option<Bound<'py, PyArray1<u32>>>,
    Option<Bound<'py, PyArray1<u64>>>,
);

/// One part of an impressions log (the bytes of its text or Parquet, `name` in errors), summed
/// by the library's reader against a data file's queries, given by their qids and sizes in the
/// file's order (the file `data` is read only where the log names documents by docid): the
/// ranks shown, the most sessions of a query, the cells with an impression, and the documents'
/// conversions and dwell. What distillrank.dask.click_table runs on each partition.
#[pyfunction]
fn impressions_cells<'py>(
    py: Python<'py>,
    log: &[u8],
    name: String,
    data: PathBuf,
    qids: Vec<u64>,
    sizes: Vec<usize>,
) -> PyResult<(usize, usize, Cells<'py>, Outcomes<'py>)> {
    use distillrank::data::logs::{docids_of, read_impressions};
    if qids.len() != sizes.len() || sizes.contains(&0) {
        return Err(PyValueError::new_err(
            "qids and sizes: one positive size per query",
        ));
    }
    let table = py
        .detach(|| {
            let mut group_offsets = vec![0usize];
            for &size in &sizes {
                group_offsets.push(group_offsets[group_offsets.len() - 1] + size);
            }
            let n_docs = group_offsets[group_offsets.len() - 1];
            // The queries alone: the reader needs the documents' places, not their features.
            let skeleton = Dataset {
                n_features: 0,
                features: Default::default(),
                grades: vec![0; n_docs],
                group_offsets,
                qids,
                source: Some(data.clone()),
                feature_names: None,
            };
            let mut docids = || {
                let text = std::fs::File::open(&data)
                    .map_err(|e| distillrank::error::Error::io(&data, e))?;
                docids_of(&data, text)
            };
            read_impressions(log, &name, &skeleton, &[], None, &mut docids)
        })
        .map_err(value_error)?;
    let (mut docs, mut ranks, mut impressions, mut clicks) = (vec![], vec![], vec![], vec![]);
    for (cell, (&n, &c)) in table.impressions.iter().zip(&table.clicks).enumerate() {
        if n > 0 {
            docs.push((cell / table.shown) as u64);
            ranks.push((cell % table.shown) as u32);
            impressions.push(n);
            clicks.push(c);
        }
    }
    let outcome = |d: usize| {
        table.conversions.as_ref().is_some_and(|v| v[d] > 0)
            || table.dwell_ms.as_ref().is_some_and(|v| v[d] > 0)
    };
    let with_outcome: Vec<u64> = (0..table.n_docs())
        .filter(|&d| outcome(d))
        .map(|d| d as u64)
        .collect();
    let conversions = table.conversions.as_ref().map(|v| {
        let picked: Vec<u32> = with_outcome.iter().map(|&d| v[d as usize]).collect();
        picked.into_pyarray(py)
    });
    let dwell_ms = table.dwell_ms.as_ref().map(|v| {
        let picked: Vec<u64> = with_outcome.iter().map(|&d| v[d as usize]).collect();
        picked.into_pyarray(py)
    });
    Ok((
        table.shown,
        table.sessions,
        (
            docs.into_pyarray(py),
            ranks.into_pyarray(py),
            impressions.into_pyarray(py),
            clicks.into_pyarray(py),
        ),
        (with_outcome.into_pyarray(py), conversions, dwell_ms),
    ))
}

/// Writes a click table (the JSON `read_impressions` returns) as the library's click-table file,
/// which every door reads wherever it reads an impressions log.
#[pyfunction]
fn write_click_table(py: Python<'_>, table: String, path: PathBuf) -> PyResult<()> {
    let table: distillrank::data::logs::ClickTable =
        serde_json::from_str(&table).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.detach(|| distillrank::data::logs::write_click_table(&path, &table))
        .map_err(value_error)
}

/// The MQ2008 Fold1 bundled in the library: {"train": (X, y, qid), "valid": ..., "test": ...}.
#[pyfunction]
fn mq2008(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let splits = py
        .detach(distillrank::data::bundled::mq2008)
        .map_err(value_error)?;
    let out = PyDict::new(py);
    for (name, data) in ["train", "valid", "test"].into_iter().zip(splits) {
        out.set_item(name, letor_arrays(py, data, name)?)?;
    }
    Ok(out)
}

/// The library's paired significance test of two methods' per-query metrics ([seed][query],
/// None where undefined); returns its result (JSON).
#[pyfunction]
fn paired_test(
    a_name: &str,
    b_name: &str,
    metric: &str,
    a: Vec<Vec<Option<f64>>>,
    b: Vec<Vec<Option<f64>>>,
    seed: u64,
) -> PyResult<String> {
    let test = distillrank::stats::paired_test(a_name, b_name, metric, &a, &b, seed)
        .map_err(value_error)?;
    Ok(serde_json::to_string(&test).expect("a test serialises"))
}

#[pymodule]
fn _distillrank(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_function(wrap_pyfunction!(default_setup, m)?)?;
    m.add_function(wrap_pyfunction!(choices, m)?)?;
    m.add_function(wrap_pyfunction!(check_setup, m)?)?;
    m.add_function(wrap_pyfunction!(fit, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(compare_jobs, m)?)?;
    m.add_function(wrap_pyfunction!(run_compare_job, m)?)?;
    m.add_function(wrap_pyfunction!(summarize_compare, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_setups, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_warnings, m)?)?;
    m.add_function(wrap_pyfunction!(ndcg_per_query, m)?)?;
    m.add_function(wrap_pyfunction!(objectives, m)?)?;
    m.add_function(wrap_pyfunction!(read_letor, m)?)?;
    m.add_function(wrap_pyfunction!(read_impressions, m)?)?;
    m.add_function(wrap_pyfunction!(impressions_cells, m)?)?;
    m.add_function(wrap_pyfunction!(write_click_table, m)?)?;
    m.add_function(wrap_pyfunction!(forest_scores, m)?)?;
    m.add_function(wrap_pyfunction!(mq2008, m)?)?;
    m.add_function(wrap_pyfunction!(paired_test, m)?)?;
    m.add_function(wrap_pyfunction!(ndcg, m)?)?;
    m.add_function(wrap_pyfunction!(ties_note, m)?)?;
    m.add("UNMEASURABLE", distillrank::metrics::UNMEASURABLE)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

//! The browser's entry points (wasm32 only). The page's Web Worker (`web/worker.js`) calls them:
//!
//! 1. `start_gpu()` opens a WebGPU device (or says why there is none);
//! 2. `load_synthetic(source)`, `load_mq2008()` (the bundled real data) or
//!    `load_letor(role, name, file, query)` sets the data and returns its statistics;
//!    `default_setup()` and `describe_setup(json)` give the library's setup (crate/setup.rs) and
//!    its equivalent `distillrank compare` command;
//! 3. `compare_jobs(setup)` lists a comparison's jobs (each method at each seed, the methods of a
//!    seed that share a teacher in one job); `run_compare_job(setup, job, ..)` prepares the data
//!    (spec §1; once per setup), trains the job's methods on WebGPU or on the CPU engine and calls
//!    `on_event` after every epoch; `summarize_compare(setup, runs)` turns the jobs' runs into the
//!    results (the `methods` object of the CLI's `results.json`, plus the data summary). The page
//!    runs the jobs of a comparison in a pool of workers, which share one copy of the prepared data
//!    (`share_data` in the first worker, `use_shared_data` in the others);
//! 4. `student_files(method)` hands out a trained student as safetensors + JSON, the files
//!    `distillrank predict` reads; `evaluate_model(..)` scores the test split with such a pair;
//! 5. `run_objectives(setup, on_event)` runs log-loss against the global objectives (Eban et al.),
//!    the library's [`ObjectivesSetup`] through [`pipeline::objectives::objectives_async`] as the CLI runs it
//!    (`run_objectives_job`: one objective at one seed, for the pool of workers, which share the
//!    examples through `share_examples` and `use_shared_examples`);
//! 6. `bench_batch` and `bench_train` serve the benchmark page (`web/bench.html`).
//!
//! State (the data, the device, the last students) lives in the worker, one instance per page.

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::clock::Instant;
use crate::data::letor::{naming_query_file, read_letor, read_query_sizes, ReadOptions};
use crate::data::prepare::hold_out_test;
use crate::data::synth::generate_splits;
use crate::data::Dataset;
use crate::engine::Backend;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::gpu::{AdapterChoice, Gpu};
use crate::model::Ensemble;
use crate::model_io::{to_safetensors, ModelConfig};
use crate::objectives::data::BinarySplits;
use crate::pipeline::preparation::PreparedData;
use crate::pipeline::store::{Role, Store};
use crate::pipeline::sweep::{Sweep, SweepParam, SweepPoint};
use crate::pipeline::{self, Reporter};
use crate::ranking::distill::Method;
use crate::ranking::experiment::{Comparison, Job, MethodRuns};
use crate::ranking::train::Event;
use crate::setup::{DataSource, ObjectivesSetup, Setup as ExperimentSetup, HOLDOUT};
use crate::stop::Stop;

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

#[derive(Default)]
struct State {
    gpu: Option<Arc<Gpu>>,
    data: Option<Rc<Data>>,
    /// Uploaded files by role ("train", "valid", "test").
    uploads: Vec<(String, Dataset)>,
    /// The uploaded files themselves by role, with their `.query` group sizes: an external
    /// teacher reads their text again, in full precision.
    upload_files: Vec<(String, web_sys::Blob, Option<Vec<usize>>)>,
    /// The files of a teacher trained elsewhere, by name: a tree model, or scores of the data
    /// files (`data.teacher`).
    teacher_files: Vec<(String, Rc<Vec<u8>>)>,
    /// The students of the last comparison (first seed), each with the config it is saved with.
    students: Vec<(Method, Ensemble, ModelConfig)>,
    /// The last comparison's prepared data (see [`prepared_run`]).
    prepared: Option<Rc<PreparedRun>>,
    /// The global objectives' examples of the last objectives' setup, under its data fields as
    /// JSON (see [`objectives_examples`]).
    objectives: Option<Examples>,
}

/// The global objectives' examples of a setup's data fields (as JSON), with the buffer they are
/// read from when they are shared.
#[derive(Clone)]
struct Examples {
    key: String,
    splits: Rc<BinarySplits>,
    buffer: Option<js_sys::SharedArrayBuffer>,
}

impl State {
    /// Makes `data` the worker's data; prepared data of earlier data (or shared by another
    /// worker) are dropped.
    fn set_data(&mut self, data: Option<Data>) {
        self.data = data.map(Rc::new);
        self.prepared = None;
        self.objectives = None;
    }

    /// Drops the data this worker loaded itself, and all it made of them: it reads another
    /// worker's shared data from now on.
    fn drop_own_data(&mut self) {
        self.set_data(None);
        self.uploads.clear();
        self.upload_files.clear();
    }
}

/// The data a comparison runs on. A missing validation or test split (uploads) is held out of
/// the training queries when the comparison is prepared, as the CLI does ([`crate::setup::HOLDOUT`]).
struct Data {
    train: Dataset,
    valid: Option<Dataset>,
    test: Option<Dataset>,
    description: String,
}

/// The message of the last panic (see [`install_panic_hook`]).
static PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Keeps the message of any panic, for [`take_panic`]: in the browser a panic ends in a bare
/// `RuntimeError: unreachable`, and the worker asks for the words after it.
#[wasm_bindgen]
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        let place = info
            .location()
            .map_or(String::new(), |l| format!(" ({}:{})", l.file(), l.line()));
        if let Ok(mut last) = PANIC.lock() {
            *last = Some(format!("{payload}{place}"));
        }
    }));
}

/// The message of the panic that stopped the engine, if one did (once).
#[wasm_bindgen]
pub fn take_panic() -> Option<String> {
    PANIC.lock().ok().and_then(|mut last| last.take())
}

fn js_error(e: Error) -> JsError {
    // In the page's words: settings by their fields, files by what the form calls them, and a
    // `.query` file as the page takes it (chosen with its data file), not by a command's flags.
    let message = e.to_string().replace(
        &format!("(or {})", crate::data::letor::QUERY_FILE_FLAGS),
        "(chosen together with it)",
    );
    JsError::new(&crate::settings::flags_in_words(
        &message,
        &|flag| match flag {
            "train" => Some("the training file".into()),
            "valid" => Some("the validation file".into()),
            "test" => Some("the test file".into()),
            _ => None,
        },
    ))
}

/// A serde value as the JS object its JSON would parse to (plain objects, map keys as strings).
/// A whole number JavaScript cannot hold exactly (a seed past 2^53 - 1) is refused by its
/// field ([`beyond_javascript`]), where it would change on its way.
fn to_js<T: Serialize + ?Sized>(value: &T) -> std::result::Result<JsValue, JsError> {
    let value = serde_json::to_value(value).map_err(|e| JsError::new(&e.to_string()))?;
    if let Some((path, n)) = beyond_javascript(&value, "") {
        return Err(JsError::new(&format!(
            "{path} = {n}: the page holds whole numbers up to {MAX_SAFE_INTEGER} (JavaScript's exact ones), and this one would change on its way; the command line and Python take any"
        )));
    }
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&e.to_string()))
}

/// JavaScript's largest exact whole number, 2^53 - 1 (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The first whole number of `value` past [`MAX_SAFE_INTEGER`] either way, with its path
/// under `at` (`first_seed`, `data.logs.seed`).
fn beyond_javascript(value: &serde_json::Value, at: &str) -> Option<(String, String)> {
    let under = |key: &str| match at {
        "" => key.to_string(),
        _ => format!("{at}.{key}"),
    };
    match value {
        serde_json::Value::Number(n) => {
            let past = n.as_u64().is_some_and(|u| u > MAX_SAFE_INTEGER)
                || n.as_i64()
                    .is_some_and(|i| i.unsigned_abs() > MAX_SAFE_INTEGER);
            past.then(|| (at.to_string(), n.to_string()))
        }
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| beyond_javascript(v, &format!("{at}[{i}]"))),
        serde_json::Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| beyond_javascript(v, &under(k))),
        _ => None,
    }
}

/// Sends events to a JS callback; the first failure is kept and reported when training ends
/// (training itself cannot stop on it half way through an epoch).
struct EventSink {
    on_event: js_sys::Function,
    error: Option<JsValue>,
}

impl EventSink {
    fn new(on_event: js_sys::Function) -> Self {
        EventSink {
            on_event,
            error: None,
        }
    }

    fn send<T: Serialize + ?Sized>(&mut self, event: &T) {
        let sent = to_js(event).map(|v| self.on_event.call1(&JsValue::NULL, &v));
        if let Err(e) | Ok(Err(e)) = sent.map_err(JsValue::from) {
            self.error.get_or_insert(e);
        }
    }

    fn finish(self) -> std::result::Result<(), JsError> {
        match self.error {
            Some(e) => Err(JsError::new(&format!(
                "the page's event handler failed: {e:?}"
            ))),
            None => Ok(()),
        }
    }
}

thread_local! {
    /// The worker's callback for the progress of long steps ([`on_progress`]).
    static PROGRESS: RefCell<Option<js_sys::Function>> = const { RefCell::new(None) };
}

/// Sets the worker's callback for the progress of long steps (preparing the data, simulating
/// logs): it hears `{label, unit, done, total}`, `done == total` ending the step. The page shows
/// it in its status line, beside Stop.
#[wasm_bindgen]
pub fn on_progress(callback: js_sys::Function) {
    PROGRESS.with(|p| *p.borrow_mut() = Some(callback));
}

/// A reporter that tells the worker's progress callback ([`on_progress`]), and nothing else.
struct PageProgress;

impl Reporter for PageProgress {
    fn progress(&mut self, label: &str, unit: &str, done: u64, total: u64) {
        PROGRESS.with(|p| {
            if let Some(callback) = &*p.borrow() {
                let event =
                    serde_json::json!({"label": label, "unit": unit, "done": done, "total": total});
                // The page's display only: a failure to show it changes no result.
                if let Ok(value) = to_js(&event) {
                    let _ = callback.call1(&JsValue::NULL, &value);
                }
            }
        });
    }
}

/// What the page shows about the adapter.
#[derive(Serialize)]
struct Adapter {
    name: String,
    backend: String,
    /// SwiftShader and other software rasterisers: slower than the CPU engine.
    software: bool,
    /// The dense products' kernels, and on software adapters the milliseconds each kind took.
    products: crate::gpu::Products,
    products_ms: Vec<(crate::gpu::Products, f64)>,
}

/// Opens a WebGPU device and compiles every kernel; resolves to `{name, backend, software,
/// products, products_ms}`.
#[wasm_bindgen]
pub async fn start_gpu() -> std::result::Result<JsValue, JsError> {
    let gpu = Gpu::new(AdapterChoice::Any).await.map_err(js_error)?;
    let adapter = Adapter {
        name: gpu.name(),
        backend: format!("{:?}", gpu.info.backend),
        software: gpu.is_software(),
        products: gpu.products,
        products_ms: gpu.products_ms.clone(),
    };
    STATE.with(|s| s.borrow_mut().gpu = Some(gpu));
    to_js(&adapter)
}

/// Generates the synthetic train / valid / test splits of a setup's data source (`{synthetic:
/// {options, valid_queries, test_queries}}`, the library's `DataSource`); returns their
/// statistics.
#[wasm_bindgen]
pub fn load_synthetic(source: JsValue) -> std::result::Result<JsValue, JsError> {
    let json: serde_json::Value =
        serde_wasm_bindgen::from_value(source).map_err(|e| JsError::new(&e.to_string()))?;
    // Fields left out take the table of settings' defaults, as in a setup.
    let source: DataSource = crate::settings::read_section(json, "data.source")
        .map_err(|e| JsError::new(&format!("the data source: {}: {}", e.path(), e.inner())))?;
    let DataSource::Synthetic {
        options,
        valid_queries,
        test_queries,
    } = source
    else {
        return Err(JsError::new("load_synthetic takes a synthetic data source"));
    };
    let s = generate_splits(&options, options.queries, valid_queries, test_queries)
        .map_err(js_error)?;
    let data = Data {
        description: format!(
            "synthetic data ({} train / {valid_queries} valid / {test_queries} test queries, {})",
            options.queries,
            options.privileged_summary()
        ),
        train: s.train,
        valid: Some(s.valid),
        test: Some(s.test),
    };
    let stats = data_stats(&data);
    STATE.with(|st| st.borrow_mut().set_data(Some(data)));
    to_js(&stats)
}

/// The library's default setup (the CLI's defaults), for the page to start from.
#[wasm_bindgen]
pub fn default_setup() -> std::result::Result<JsValue, JsError> {
    // With the global objectives' section, which a setup leaves out at its defaults: the page
    // fills its objectives' form from it, and keeps an opened setup's departures from it.
    let setup = ExperimentSetup::default();
    let mut json = serde_json::to_value(&setup).map_err(|e| JsError::new(&e.to_string()))?;
    json["objectives"] =
        serde_json::to_value(&setup.objectives).map_err(|e| JsError::new(&e.to_string()))?;
    to_js(&json)
}

/// The table of settings ([`crate::settings::table_json`]): each setting's fields with their
/// defaults and the page's starting values, its range and its help, for the page's form.
#[wasm_bindgen]
pub fn settings_table() -> std::result::Result<JsValue, JsError> {
    to_js(&crate::settings::table_json())
}

/// The losses and methods a setup offers ([`crate::setup::choices_json`]), for the page's form
/// and charts.
#[wasm_bindgen]
pub fn choices() -> std::result::Result<JsValue, JsError> {
    to_js(&crate::setup::choices_json())
}

/// A setup as JSON (fields left out take the defaults): `{setup, command, differences}`, the
/// whole setup, the equivalent `distillrank compare` command and the settings where it differs
/// from the defaults (`[setting, value, default]`).
#[wasm_bindgen]
pub fn describe_setup(json: &str) -> std::result::Result<JsValue, JsError> {
    describe(&ExperimentSetup::from_json(json).map_err(js_error)?)
}

/// A setup file the page opens, read as `distillrank compare --setup` reads one (every field
/// checked, unknown ones refused) and refused when it is not an object of settings
/// ([`ExperimentSetup::from_file_json`]): `{setup, command, differences}` as
/// [`describe_setup`] gives them.
#[wasm_bindgen]
pub fn open_setup(json: &str) -> std::result::Result<JsValue, JsError> {
    let setup = ExperimentSetup::from_file_json(json).map_err(js_error)?;
    // Its settings together, as `compare --setup` checks them when it reads the file (a method
    // listed twice, which the form's boxes would reduce to one without a word).
    setup.check(None).map_err(js_error)?;
    describe(&setup)
}

/// Checks a setup before anything is loaded, timed or trained ([`ExperimentSetup::check`]): its
/// settings, the number of seeds, the synthetic data's size and the models' size on `inputs`
/// features (the loaded data's, when the page knows them).
#[wasm_bindgen]
pub fn check_setup(setup: JsValue, inputs: Option<usize>) -> std::result::Result<(), JsError> {
    setup_of(setup)
        .and_then(|s| s.check(inputs))
        .map_err(js_error)
}

fn describe(setup: &ExperimentSetup) -> std::result::Result<JsValue, JsError> {
    let command = setup.shell_command();
    to_js(&serde_json::json!({
        "setup": setup,
        "command": command,
        "differences": setup.differences(),
    }))
}

/// Loads the bundled MQ2008 Fold1 (its own train / validation / test split); returns its
/// statistics.
#[wasm_bindgen]
pub fn load_mq2008() -> std::result::Result<JsValue, JsError> {
    let [train, valid, test] = crate::data::bundled::mq2008().map_err(js_error)?;
    let data = Data {
        description: format!(
            "MQ2008 Fold1, bundled ({} train / {} valid / {} test queries with a relevant document)",
            train.n_groups(),
            valid.n_groups(),
            test.n_groups()
        ),
        train,
        valid: Some(valid),
        test: Some(test),
    };
    let stats = data_stats(&data);
    STATE.with(|st| st.borrow_mut().set_data(Some(data)));
    to_js(&stats)
}

/// Reads an uploaded LETOR file (gzip or text; `query`: its LightGBM `.query` file, read whole)
/// as the `role` split ("train", "valid" or "test") and returns its statistics. A text file is
/// read a piece at a time ([`BlobReader`]), so its text is never in this worker's memory whole:
/// only the parsed matrix is (a Parquet file, whose footer comes last, is read whole). Without a
/// test (or validation) file, a comparison holds out 20% (or 10%) of the training queries, as the
/// CLI does ([`crate::setup::HOLDOUT`]).
#[wasm_bindgen]
pub fn load_letor(
    role: &str,
    name: &str,
    file: web_sys::Blob,
    query: Option<web_sys::Blob>,
) -> std::result::Result<JsValue, JsError> {
    if !matches!(role, "train" | "valid" | "test") {
        return Err(JsError::new(&format!(
            "{name}: role '{role}' is not train, valid or test"
        )));
    }
    let path = Path::new(name);
    let sizes = query
        // The file's `.query` file is its name and `.query`, as the page pairs them; one larger
        // than any door reads is refused before it is read.
        .map(|q| {
            let query_name = format!("{name}.query");
            let reader =
                BlobReader::new(q.clone()).map_err(|e| Error::io(Path::new(&query_name), e))?;
            read_query_sizes(Path::new(&query_name), q.size() as u64, reader)
        })
        .transpose()
        .map_err(js_error)?;
    let reader = BlobReader::told(file.clone(), format!("reading {name}"))
        .map_err(|e| js_error(Error::io(path, e)))?;
    let mut dataset = naming_query_file(
        read_letor(path, reader, sizes.clone(), &ReadOptions::default()),
        Path::new(&format!("{name}.query")),
    )
    .map_err(js_error)?;
    // Named in the refusals of its splits (`no validation groups left in v.txt after
    // filtering`), as a file the command line reads is.
    dataset.source = Some(path.to_path_buf());
    let stats = dataset.stats();
    STATE.with(|st| {
        let mut st = st.borrow_mut();
        st.uploads.retain(|(r, _)| r != role);
        st.uploads.push((role.to_string(), dataset));
        st.upload_files.retain(|(r, _, _)| r != role);
        st.upload_files.push((role.to_string(), file, sizes));
        let data = uploaded_data(&st.uploads, name);
        st.set_data(data);
    });
    to_js(&stats)
}

/// An uploaded file (a `Blob`) as a reader: each read takes the next piece of it with
/// `FileReaderSync`, which a worker may call (the page's engine runs in workers only).
struct BlobReader {
    blob: web_sys::Blob,
    reader: web_sys::FileReaderSync,
    at: f64,
    /// The progress label of a read the page shows (`reading train.txt`), if it is one.
    told: Option<String>,
}

impl BlobReader {
    /// The most bytes one read takes from the file.
    const PIECE: usize = 8 << 20;

    fn new(blob: web_sys::Blob) -> std::io::Result<BlobReader> {
        let reader = web_sys::FileReaderSync::new().map_err(|e| js_io("FileReaderSync", e))?;
        Ok(BlobReader {
            blob,
            reader,
            at: 0.0,
            told: None,
        })
    }

    /// A reader of `blob` that reads it in pieces of [`PIECE`](Self::PIECE) bytes, whatever
    /// its caller asks for (a gzip decoder asks for 32 KiB at a time).
    fn buffered(blob: web_sys::Blob) -> std::io::Result<std::io::BufReader<BlobReader>> {
        Ok(std::io::BufReader::with_capacity(
            Self::PIECE,
            BlobReader::new(blob)?,
        ))
    }

    /// [`buffered`](Self::buffered), telling the page's progress ([`on_progress`]) the bytes
    /// read under `label` after every piece.
    fn told(blob: web_sys::Blob, label: String) -> std::io::Result<std::io::BufReader<BlobReader>> {
        let mut reader = BlobReader::new(blob)?;
        reader.told = Some(label);
        Ok(std::io::BufReader::with_capacity(Self::PIECE, reader))
    }
}

/// A JavaScript failure as an I/O error.
fn js_io(what: &str, e: JsValue) -> std::io::Error {
    std::io::Error::other(format!(
        "{what}: {}",
        e.as_string().unwrap_or_else(|| format!("{e:?}"))
    ))
}

impl std::io::Read for BlobReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.blob.size();
        if self.at >= size || buf.is_empty() {
            return Ok(0);
        }
        let end = (self.at + buf.len().min(Self::PIECE) as f64).min(size);
        let piece = self
            .blob
            .slice_with_f64_and_f64(self.at, end)
            .map_err(|e| js_io("slicing the file", e))?;
        let bytes = self
            .reader
            .read_as_array_buffer(&piece)
            .map_err(|e| js_io("reading the file", e))?;
        let bytes = js_sys::Uint8Array::new(&bytes);
        let n = bytes.length() as usize;
        bytes.copy_to(&mut buf[..n]);
        self.at += n as f64;
        if let Some(label) = &self.told {
            PageProgress.progress(label, "bytes", self.at as u64, size as u64);
        }
        Ok(n)
    }
}

/// Forgets the uploaded files.
#[wasm_bindgen]
pub fn clear_uploads() {
    STATE.with(|st| {
        let mut st = st.borrow_mut();
        st.uploads.clear();
        st.upload_files.clear();
        st.set_data(None);
    });
}

/// Keeps an uploaded file of a teacher trained elsewhere (`data.teacher`) under `name`: a
/// LightGBM or XGBoost model, checked here as the CLI reads it, or a teacher's scores of a data
/// file, checked with the data when a comparison is prepared. Its size is checked before it is
/// read. Returns `{name, kind: "model" | "scores", description}`.
#[wasm_bindgen]
pub fn load_teacher_file(name: &str, file: web_sys::Blob) -> std::result::Result<JsValue, JsError> {
    let path = Path::new(name);
    let cap = crate::forest::MAX_FILE_BYTES;
    if file.size() > cap as f64 {
        return Err(js_error(crate::data::too_large(
            path,
            Some(file.size() as u64),
            cap,
            "a teacher's model or scores",
        )));
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut BlobReader::buffered(file).map_err(|e| js_error(Error::io(path, e)))?,
        &mut bytes,
    )
    .map_err(|e| js_error(Error::io(path, e)))?;
    let (kind, description) = if crate::forest::starts_like_tree_model(&bytes) {
        let forest = crate::forest::Forest::parse(path, &bytes).map_err(js_error)?;
        ("model", forest.describe())
    } else {
        // Scores, read as their text where they are gzip (as the comparison reads them).
        let what = "a teacher's model or scores";
        let text = crate::pipeline::teacher::gunzipped(path, bytes.clone(), cap, what)
            .map_err(js_error)?;
        if std::str::from_utf8(text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&text)).is_err() {
            // Neither a model nor text (a safetensors file, an archive): refused now, by what
            // the file may be, where the scores' reader would refuse it only at Run.
            return Err(js_error(Error::parse(
                path,
                0,
                0,
                "not UTF-8 text: expected a LightGBM or XGBoost model (text or JSON), or its scores: one a line, or a TREC run (either may be gzipped)",
            )));
        }
        // Scores are numbers a line or a TREC run: a JSON object is a model (a saved
        // distillrank config among them), named by the forest reader as the CLI's flags name it.
        if text.trim_ascii_start().starts_with(b"{") {
            crate::forest::Forest::parse(path, &text).map_err(js_error)?;
        }
        let lines = text
            .split(|&b| b == b'\n')
            .filter(|l| !l.trim_ascii().is_empty());
        ("scores", format!("{} lines of scores", lines.count()))
    };
    STATE.with(|st| {
        let mut st = st.borrow_mut();
        st.teacher_files.retain(|(n, _)| n != name);
        st.teacher_files.push((name.to_string(), Rc::new(bytes)));
        // Data prepared with the earlier file of that name are stale.
        st.prepared = None;
    });
    to_js(&serde_json::json!({"name": name, "kind": kind, "description": description}))
}

/// Forgets the files of the teacher trained elsewhere.
#[wasm_bindgen]
pub fn clear_teacher_files() {
    STATE.with(|st| {
        let mut st = st.borrow_mut();
        st.teacher_files.clear();
        st.prepared = None;
    });
}

/// The uploaded files as the data of a comparison (None until a training file is there); the
/// missing splits are held out when the comparison is prepared, with the setup's seed.
fn uploaded_data(uploads: &[(String, Dataset)], name: &str) -> Option<Data> {
    let get = |role: &str| {
        uploads
            .iter()
            .find(|(r, _)| r == role)
            .map(|(_, d)| d.clone())
    };
    let train = get("train")?;
    let (valid, test) = (get("valid"), get("test"));
    let held = |split: &Option<Dataset>, share: f64| match split {
        Some(d) => format!("{} queries", d.n_groups()),
        None => format!("{:.0}% of the training queries held out", 100.0 * share),
    };
    Some(Data {
        description: format!(
            "{name} and the other uploads ({} train queries; valid: {}; test: {})",
            train.n_groups(),
            held(&valid, crate::setup::HOLDOUT.0),
            held(&test, crate::setup::HOLDOUT.1)
        ),
        train,
        valid,
        test,
    })
}

#[derive(Serialize)]
struct DataStats {
    description: String,
    train: crate::data::Stats,
    /// None: held out of the training queries when a comparison runs.
    valid: Option<crate::data::Stats>,
    test: Option<crate::data::Stats>,
}

/// The test split of the loaded data: the test upload, or the queries a comparison of these data
/// holds out of the training queries with `data_seed` (the setup's `data.data_seed`), as
/// preparation draws them (before its filters, which a saved model's scoring does not apply).
fn test_split(data: &Data, data_seed: u64) -> Result<Dataset> {
    match &data.test {
        Some(test) => Ok(test.clone()),
        None => Ok(hold_out_test(&data.train, HOLDOUT.1, data_seed)?.1),
    }
}

fn data_stats(d: &Data) -> DataStats {
    DataStats {
        description: d.description.clone(),
        train: d.train.stats(),
        valid: d.valid.as_ref().map(Dataset::stats),
        test: d.test.as_ref().map(Dataset::stats),
    }
}

/// One event for the page: an epoch of a model, or training progress.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum PageEvent<'a> {
    Epoch {
        model: &'a crate::ranking::experiment::Training,
        log: &'a crate::ranking::train::EpochLog,
    },
    Progress {
        model: &'a crate::ranking::experiment::Training,
        docs: usize,
        seconds: f64,
    },
}

/// The data of a comparison, prepared once per setup and data and kept for its jobs.
struct PreparedRun {
    /// The data it was prepared from; None for data another worker prepared and shares
    /// ([`use_shared_data`]).
    data: Option<Rc<Data>>,
    /// The setup's data fields, as JSON.
    key: String,
    prepared: PreparedData,
    /// The buffer `prepared` is read from, when it is shared ([`share_data`]).
    buffer: Option<js_sys::SharedArrayBuffer>,
}

/// A setup from the page: the library's [`ExperimentSetup`], as JSON.
fn setup_of(value: JsValue) -> Result<ExperimentSetup> {
    let json: serde_json::Value = serde_wasm_bindgen::from_value(value)
        .map_err(|e| Error::Config(format!("the setup: {e}")))?;
    // Through its text, so that a refusal names the field as the CLI's does.
    ExperimentSetup::from_json(&json.to_string())
}

/// The page's uploads as the files of a setup: each upload plays its role, whatever name the
/// setup records for it; a teacher's file is found by its name (or the last part of the path a
/// setup from the CLI records).
struct Uploads {
    datasets: Vec<(String, Dataset)>,
    files: Vec<(String, web_sys::Blob, Option<Vec<usize>>)>,
    teacher: Vec<(String, Rc<Vec<u8>>)>,
}

impl Uploads {
    /// The worker's uploads.
    fn of(state: &State) -> Uploads {
        Uploads {
            datasets: state.uploads.clone(),
            files: state.upload_files.clone(),
            teacher: state.teacher_files.clone(),
        }
    }
}

/// A role's name as the page's uploads are kept.
fn role_name(role: Role) -> &'static str {
    match role {
        Role::Train => "train",
        Role::Valid => "valid",
        Role::Test => "test",
    }
}

/// The uploaded file a setup's `name` stands for: the one of that name, else the one whose last
/// path part is the name's (a setup written by the CLI names `dir/model.txt`, the browser
/// uploads `model.txt`).
fn find_upload<'a, T>(files: &'a [(String, T)], name: &str) -> Option<&'a (String, T)> {
    let last = |n: &str| n.rsplit(['/', '\\']).next().unwrap_or(n).to_string();
    files
        .iter()
        .find(|(n, _)| n == name)
        .or_else(|| files.iter().find(|(n, _)| last(n) == last(name)))
}

/// A file a setup names beside the data (`what`) that the page was not given.
fn not_uploaded(name: &str, what: &str) -> Error {
    Error::Config(format!(
        "{}: no such file was uploaded; expected {what}: upload it under \"A teacher trained elsewhere\"",
        crate::error::printable(name)
    ))
}

impl Store for Uploads {
    fn load(&mut self, name: &str, role: Role, _: &mut dyn Reporter) -> Result<Dataset> {
        let role = role_name(role);
        self.datasets
            .iter()
            .find(|(r, _)| r == role)
            .map(|(_, d)| d.clone())
            .ok_or_else(|| Error::Config(format!("{name}: no {role} file was uploaded")))
    }

    fn text(&mut self, name: &str, role: Role) -> Result<crate::pipeline::store::Text<'_>> {
        let role = role_name(role);
        let (_, blob, sizes) = self
            .files
            .iter()
            .find(|(r, _, _)| r == role)
            .ok_or_else(|| Error::Config(format!("{name}: no {role} file was uploaded")))?;
        let reader =
            BlobReader::buffered(blob.clone()).map_err(|e| Error::io(Path::new(name), e))?;
        Ok((Box::new(reader), sizes.clone()))
    }

    fn check_file(&mut self, name: &str, what: &str) -> Result<()> {
        find_upload(&self.teacher, name)
            .map(drop)
            .ok_or_else(|| not_uploaded(name, what))
    }

    fn file(&mut self, name: &str, cap: u64, what: &str) -> Result<Vec<u8>> {
        let (_, bytes) =
            find_upload(&self.teacher, name).ok_or_else(|| not_uploaded(name, what))?;
        if bytes.len() as u64 > cap {
            return Err(crate::data::too_large(
                Path::new(name),
                Some(bytes.len() as u64),
                cap,
                what,
            ));
        }
        Ok(bytes.to_vec())
    }
}

/// The prepared data of `setup` on the loaded data, through the library's pipeline (the CLI's
/// steps, the same numbers): from the worker's cache when neither has changed, so that the jobs
/// of one comparison prepare (and simulate logs) once.
fn prepared_run(setup: &ExperimentSetup) -> Result<Rc<PreparedRun>> {
    let (data, cached, mut uploads) = STATE.with(|s| {
        let s = s.borrow();
        (s.data.clone(), s.prepared.clone(), Uploads::of(&s))
    });
    let key = serde_json::to_string(&setup.data).expect("a setup serialises");
    if let Some(run) = cached.filter(|r| r.key == key) {
        match (&run.data, &data) {
            (Some(from), Some(data)) if Rc::ptr_eq(from, data) => return Ok(run),
            // Shared by the worker that holds the data, for this setup's data fields: loading
            // other data here would have dropped it.
            (None, _) => return Ok(run),
            _ => {}
        }
    }
    let data = data.ok_or_else(|| {
        Error::Config(
            "no data: generate synthetic data, load MQ2008 or upload a LETOR training file".into(),
        )
    })?;
    // A fold of the bundled MQ2008 names its parts, which the library holds itself.
    let mut store = pipeline::folds::BundledParts {
        inner: &mut uploads,
    };
    let prepared =
        pipeline::preparation::prepare(&setup.data, &mut store, true, &mut PageProgress)?;
    let run = Rc::new(PreparedRun {
        data: Some(data),
        key,
        prepared,
        buffer: None,
    });
    STATE.with(|s| s.borrow_mut().prepared = Some(run.clone()));
    Ok(run)
}

/// Prepares the loaded data for `setup` (as a job would) and lays the result out in a new
/// `SharedArrayBuffer`, which it returns for the other workers of the pool
/// ([`use_shared_data`]). This worker then reads x and z from that buffer too, so that the pool
/// holds one copy of them, wherever its jobs run.
#[wasm_bindgen]
pub fn share_data(setup: JsValue) -> std::result::Result<js_sys::SharedArrayBuffer, JsError> {
    let setup = setup_of(setup).map_err(js_error)?;
    share(prepared_run(&setup).map_err(js_error)?).map_err(js_error)
}

/// Takes the data another worker prepared for `setup` and shared ([`share_data`]) as this
/// worker's, for the jobs of that setup: x and z are read from `buffer` in place, and the data
/// this worker loaded itself (if any) are dropped.
#[wasm_bindgen]
pub fn use_shared_data(
    setup: JsValue,
    buffer: js_sys::SharedArrayBuffer,
) -> std::result::Result<(), JsError> {
    let setup = setup_of(setup).map_err(js_error)?;
    let key = serde_json::to_string(&setup.data).expect("a setup serialises");
    use_shared::<Rc<PreparedRun>>(key, buffer).map_err(js_error)
}

/// What the page's pool shares: a comparison's prepared data ([`PreparedRun`]) or the global
/// objectives' examples ([`Examples`]). The first worker lays its own out once in a
/// `SharedArrayBuffer` and reads them from there too ([`share`]); every other worker reads them
/// from that buffer in place ([`use_shared`]), so the pool holds one copy.
trait Pooled: Sized {
    /// The buffer it is read from, when it is shared.
    fn buffer(&self) -> Option<&js_sys::SharedArrayBuffer>;
    /// The setup's data fields (as JSON) it is the data of.
    fn key(&self) -> String;
    /// A new buffer it is laid out in.
    fn lay_out(&self) -> Result<js_sys::SharedArrayBuffer>;
    /// The same data read in place from `buffer`, as the data of `key`; `own`: this worker's own
    /// copy they were laid out from, if any (its loaded files stay with it).
    fn read(key: String, buffer: js_sys::SharedArrayBuffer, own: Option<&Self>) -> Result<Self>;
    /// Makes it the worker's data of its kind.
    fn keep(self, state: &mut State);
}

/// Shares `own`: the buffer it is read from when it is shared already (laying out shared data
/// would copy it in here), else a new one it is laid out in, which this worker reads from too.
fn share<P: Pooled>(own: P) -> Result<js_sys::SharedArrayBuffer> {
    if let Some(buffer) = own.buffer() {
        return Ok(buffer.clone());
    }
    let buffer = own.lay_out()?;
    let shared = P::read(own.key(), buffer.clone(), Some(&own))?;
    STATE.with(|s| shared.keep(&mut s.borrow_mut()));
    Ok(buffer)
}

/// Takes `buffer`, which another worker shared, as this worker's data of the setup `key`; the
/// data this worker loaded itself (if any) are dropped.
fn use_shared<P: Pooled>(key: String, buffer: js_sys::SharedArrayBuffer) -> Result<()> {
    let shared = P::read(key, buffer, None)?;
    STATE.with(|s| {
        let mut s = s.borrow_mut();
        s.drop_own_data();
        shared.keep(&mut s);
    });
    Ok(())
}

impl Pooled for Rc<PreparedRun> {
    fn buffer(&self) -> Option<&js_sys::SharedArrayBuffer> {
        self.buffer.as_ref()
    }
    fn key(&self) -> String {
        self.key.clone()
    }
    fn lay_out(&self) -> Result<js_sys::SharedArrayBuffer> {
        self.prepared.to_shared()
    }
    fn read(key: String, buffer: js_sys::SharedArrayBuffer, own: Option<&Self>) -> Result<Self> {
        Ok(Rc::new(PreparedRun {
            data: own.and_then(|run| run.data.clone()),
            key,
            prepared: PreparedData::from_shared(&buffer)?,
            buffer: Some(buffer),
        }))
    }
    fn keep(self, state: &mut State) {
        state.prepared = Some(self);
    }
}

impl Pooled for Examples {
    fn buffer(&self) -> Option<&js_sys::SharedArrayBuffer> {
        self.buffer.as_ref()
    }
    fn key(&self) -> String {
        self.key.clone()
    }
    fn lay_out(&self) -> Result<js_sys::SharedArrayBuffer> {
        self.splits.to_shared()
    }
    fn read(key: String, buffer: js_sys::SharedArrayBuffer, _: Option<&Self>) -> Result<Self> {
        Ok(Examples {
            key,
            splits: Rc::new(BinarySplits::from_shared(&buffer)?),
            buffer: Some(buffer),
        })
    }
    fn keep(self, state: &mut State) {
        state.objectives = Some(self);
    }
}

/// The bytes of this worker's WebAssembly memory (which only grows): what the worker holds at
/// most, its own copy of the data included when it has one.
#[wasm_bindgen]
pub fn memory_bytes() -> f64 {
    core::arch::wasm32::memory_size(0) as f64 * 65536.0
}

/// The engine a setup asks for: the CPU engine, or the worker's WebGPU device; `auto` by the
/// library's rule ([`Engine::with_device`]) when the page has not decided it by measuring.
fn engine_for(setup: &ExperimentSetup) -> Result<Engine> {
    let gpu = STATE.with(|s| s.borrow().gpu.clone());
    Engine::with_device(setup.backend, gpu).map(|(engine, _)| engine)
}

/// The page's refinement of `auto`: the faster of the two engines, from the documents per second
/// the page measured on each ([`crate::engine::faster`]); "webgpu" or "cpu".
#[wasm_bindgen]
pub fn choose_backend(cpu_docs_per_s: f64, gpu_docs_per_s: Option<f64>) -> String {
    match crate::engine::faster(cpu_docs_per_s, gpu_docs_per_s) {
        Backend::Gpu => "webgpu".into(),
        _ => "cpu".into(),
    }
}

/// The jobs of `setup`'s comparison on the loaded data ([`CompareConfig::jobs_on`]): `[{seed,
/// methods, models}]`, each seed's methods that share a teacher in one job. The page's pool runs
/// them side by side, the most models first.
///
/// [`CompareConfig::jobs_on`]: crate::ranking::experiment::CompareConfig::jobs_on
#[wasm_bindgen]
pub fn compare_jobs(setup: JsValue) -> std::result::Result<JsValue, JsError> {
    let setup = setup_of(setup).map_err(js_error)?;
    let run = prepared_run(&setup).map_err(js_error)?;
    to_js(&pipeline::jobs::jobs(&run.prepared, &setup).map_err(js_error)?)
}

/// One job of a comparison (from [`compare_jobs`]): its methods at its seed, each method's
/// teachers then its student, a teacher two of them share trained once
/// ([`crate::ranking::experiment::run_job`]). A comparison is the set of its jobs, and the page's
/// pool of workers runs them side by side with the same results as one worker.
/// `on_event(event)` is called after every epoch (`{type: "epoch", model, log}`) and about four
/// times a second with the documents trained so far (`{type: "progress", model, docs,
/// seconds}`). With `keep_student`, the worker keeps the students for `student_files`. Resolves
/// to `[{method, run}]`: each method as `methods` and `summarize_compare` name it, and its
/// `SeedRun`.
#[wasm_bindgen]
pub async fn run_compare_job(
    setup: JsValue,
    job: JsValue,
    keep_student: bool,
    on_event: js_sys::Function,
) -> std::result::Result<JsValue, JsError> {
    let setup = setup_of(setup).map_err(js_error)?;
    let job: Job =
        serde_wasm_bindgen::from_value(job).map_err(|e| JsError::new(&format!("the job: {e}")))?;
    let run = prepared_run(&setup).map_err(js_error)?;
    let engine = engine_for(&setup).map_err(js_error)?;
    let started = Instant::now();
    let mut last_progress = Instant::now();
    let mut docs = 0usize;
    let mut sink = EventSink::new(on_event);
    let runs = pipeline::jobs::run(
        &run.prepared,
        &setup,
        &engine,
        &Stop::default(),
        &job,
        &mut |model, event| {
            let page_event = match event {
                Event::Epoch(log) => Some(PageEvent::Epoch { model, log }),
                Event::Step { docs: d } => {
                    docs += d;
                    (last_progress.elapsed() > 0.25).then(|| {
                        last_progress = Instant::now();
                        PageEvent::Progress {
                            model,
                            docs,
                            seconds: started.elapsed(),
                        }
                    })
                }
            };
            if let Some(e) = page_event {
                sink.send(&e);
            }
        },
    )
    .await
    .map_err(js_error)?;
    sink.finish()?;
    let mut results = Vec::with_capacity(runs.len());
    for (&method, (student, seed_run)) in job.methods.iter().zip(runs) {
        if keep_student {
            STATE.with(|s| {
                let mut s = s.borrow_mut();
                // The config the CLI saves a student with: the columns it reads, and the data and
                // the whole setup that trained it.
                let config = pipeline::run::student_config(&run.prepared, &setup, &student);
                s.students.retain(|(m, _, _)| *m != method);
                s.students.push((method, student, config));
            });
        }
        results.push(serde_json::json!({"method": method, "run": seed_run}));
    }
    to_js(&results)
}

/// The results of a comparison from its jobs: `methods` is `[{method, runs}]` with each
/// method's `SeedRun`s in seed order. Resolves to `{description, logs, prepared, methods,
/// backend}`, `methods` being the `methods` object of the CLI's `results.json`.
#[wasm_bindgen]
pub fn summarize_compare(
    setup: JsValue,
    methods: JsValue,
) -> std::result::Result<JsValue, JsError> {
    let setup = setup_of(setup).map_err(js_error)?;
    let methods: Vec<MethodRuns> =
        serde_wasm_bindgen::from_value(methods).map_err(|e| JsError::new(&e.to_string()))?;
    let run = prepared_run(&setup).map_err(js_error)?;
    let prepared = &run.prepared.prepared;
    // results.json's fields (the same function as the CLI's and Python's: the paired tests and
    // their sentences among them), with what the page shows of the data.
    let mut results = pipeline::jobs::summary(&run.prepared, &setup, methods);
    let tests: Vec<crate::stats::PairedTest> =
        serde_json::from_value(results["tests"].clone()).unwrap_or_default();
    let verdict_metric = results["verdict_metric"]
        .as_str()
        .unwrap_or("ndcg@8")
        .to_string();
    let page = serde_json::json!({
        "description": run
            .data
            .as_ref()
            .map_or(&run.prepared.description, |d| &d.description),
        "prepared": {
            "train": split_summary(&prepared.train),
            "valid": split_summary(&prepared.valid),
            "test": prepared.test.as_ref().map(split_summary),
            "privileged_columns": prepared.privileged_columns,
            "regular_columns": prepared.regular_columns.len(),
            "constant_regular": prepared.constant_regular.len(),
            "constant_privileged": prepared.constant_privileged.len(),
            // In the page's words, as results' `warnings` are (`pipeline::jobs::summary`).
            "warnings": results["warnings"].clone(),
        },
        "backend": engine_for(&setup).map_or_else(|_| format!("{:?}", setup.backend), |e| format!("{e:?}")),
        "verdicts": pipeline::report::verdicts(&tests, &verdict_metric, run.prepared.reference.as_deref()),
    });
    for (key, value) in page.as_object().into_iter().flatten() {
        results[key] = value.clone();
    }
    to_js(&results)
}

/// The comparison of each of a folds setup's folds (the bundled MQ2008's five,
/// `mq2008_folds`): the setup with its data the fold's parts ([`pipeline::folds::fold_setup`]).
/// The page runs each as a comparison of its own, then [`summarize_folds`].
#[wasm_bindgen]
pub fn fold_setups(setup: JsValue) -> std::result::Result<JsValue, JsError> {
    let setup = setup_of(setup).map_err(js_error)?;
    let folds = pipeline::folds::folds_of_data(&setup.data).map_err(js_error)?;
    // Every fold's teacher or reference file uploaded, before fold 1 trains: by its name, or
    // its last part, as `Uploads::file` finds it.
    let uploaded: Vec<(String, ())> = STATE.with(|s| {
        let s = s.borrow();
        s.teacher_files
            .iter()
            .map(|(n, _)| (n.clone(), ()))
            .collect()
    });
    pipeline::folds::check_fold_files(&setup, &folds, &|f| find_upload(&uploaded, f).is_some())
        .map_err(js_error)?;
    let setups: Vec<ExperimentSetup> = folds
        .iter()
        .map(|fold| pipeline::folds::fold_setup(&setup, fold))
        .collect();
    to_js(&setups)
}

/// The results of a folds comparison from each fold's runs (`folds[k]` is fold k + 1's
/// `[{method, runs}]`, as [`summarize_compare`] takes them): the folds' `results.json`, as the
/// CLI's `compare --folds` writes it ([`pipeline::folds::results_json`]: the mean over the folds,
/// the paired tests on the pooled test queries), with the data's description and the backend.
#[wasm_bindgen]
pub fn summarize_folds(setup: JsValue, folds: JsValue) -> std::result::Result<JsValue, JsError> {
    let setup = setup_of(setup).map_err(js_error)?;
    let per_fold: Vec<Vec<MethodRuns>> =
        serde_wasm_bindgen::from_value(folds).map_err(|e| JsError::new(&e.to_string()))?;
    let folds = pipeline::folds::folds_of_data(&setup.data).map_err(js_error)?;
    if per_fold.len() != folds.len() {
        return Err(JsError::new(&format!(
            "{} folds' runs for a setup of {} folds",
            per_fold.len(),
            folds.len()
        )));
    }
    let mut runs = Vec::with_capacity(folds.len());
    for (fold, methods) in folds.into_iter().zip(per_fold) {
        let fold_setup = pipeline::folds::fold_setup(&setup, &fold);
        let data = prepared_run(&fold_setup).map_err(js_error)?;
        runs.push(pipeline::folds::FoldRun {
            fold,
            data: data.prepared.clone(),
            setup: fold_setup,
            comparison: Comparison {
                methods,
                students: Vec::new(),
            },
        });
    }
    let mut results = pipeline::folds::results_json(&setup, &runs);
    results["description"] = "MQ2008, bundled: LETOR 4.0's five folds".into();
    results["backend"] = engine_for(&setup)
        .map_or_else(|_| format!("{:?}", setup.backend), |e| format!("{e:?}"))
        .into();
    to_js(&results)
}

/// The setup of one value of a sweep: `setup` with `param` (a name of [`SweepParam`]: alpha,
/// tau-target, ...) at `value`, checked as the CLI's `sweep` checks it
/// ([`SweepParam::check`]). The page's alpha sweep runs each value's comparison with it.
#[wasm_bindgen]
pub fn sweep_setup(
    setup: JsValue,
    param: &str,
    value: f64,
) -> std::result::Result<JsValue, JsError> {
    let setup = setup_of(setup).map_err(js_error)?;
    let param = sweep_param(param)?;
    param.check(&setup, &[value]).map_err(js_error)?;
    to_js(&param.at(&setup, value).map_err(js_error)?)
}

/// A sweep's results from its values' runs, as the CLI's `sweep.json` gives them
/// ([`Sweep::json`]), with its report's `table`: `points` is `[{value, methods}]`, each value's
/// runs as `summarize_compare` takes them.
#[wasm_bindgen]
pub fn summarize_sweep(
    setup: JsValue,
    param: &str,
    points: JsValue,
) -> std::result::Result<JsValue, JsError> {
    #[derive(serde::Deserialize)]
    struct Point {
        value: f64,
        methods: Vec<MethodRuns>,
    }
    let setup = setup_of(setup).map_err(js_error)?;
    let param = sweep_param(param)?;
    let points: Vec<Point> = serde_wasm_bindgen::from_value(points)
        .map_err(|e| JsError::new(&format!("the sweep's points: {e}")))?;
    let mut swept = Vec::with_capacity(points.len());
    // What the CLI's sweep warns of, in the page's words: the settings it does not read, and
    // each value's data (once, where the values share them).
    let in_words = |list: &[String]| {
        list.iter()
            .map(|w| crate::settings::flags_in_words(w, &|_| None))
            .collect::<Vec<_>>()
    };
    let unused_settings = in_words(&pipeline::sweep::warnings(&setup, param));
    let mut warnings: Vec<String> = Vec::new();
    for point in points {
        let at = param.at(&setup, point.value).map_err(js_error)?;
        let run = prepared_run(&at).map_err(js_error)?;
        for warning in &run.prepared.prepared.warnings {
            if !warnings.contains(warning) {
                warnings.push(warning.clone());
            }
        }
        let train = &run.prepared.prepared.train;
        swept.push(SweepPoint {
            value: point.value,
            comparison: Comparison {
                methods: point.methods,
                students: Vec::new(),
            },
            positive_groups: train.positive_groups(),
            train_groups: train.n_groups(),
        });
    }
    let sweep = Sweep::new(param, &setup, swept);
    let config = setup
        .compare_config(Engine::Cpu)
        .map(|c| serde_json::to_value(c).expect("a configuration serialises"))
        .unwrap_or(serde_json::Value::Null);
    let mut json = sweep.json(config);
    json["table"] = sweep.table().into();
    json["unused_settings"] = unused_settings.into();
    json["warnings"] = in_words(&warnings).into();
    to_js(&json)
}

fn sweep_param(name: &str) -> std::result::Result<SweepParam, JsError> {
    SweepParam::parse(name).ok_or_else(|| {
        JsError::new(&format!(
            "unknown sweep parameter '{name}', expected one of {}",
            SweepParam::ALL.map(SweepParam::name).join(", ")
        ))
    })
}

fn split_summary(set: &crate::data::prepare::RankingSet) -> serde_json::Value {
    serde_json::json!({
        "groups": set.n_groups(),
        "docs": set.n_docs(),
        "positive_groups": set.positive_groups(),
        "regular": set.d_x,
        "privileged": set.d_z,
    })
}

/// The first-seed student of `method` from the last comparison as `{safetensors: Uint8Array,
/// config: string}`: the two files `distillrank predict --model` reads.
#[wasm_bindgen]
pub fn student_files(method: &str) -> std::result::Result<JsValue, JsError> {
    let (_, model, config, _) = student(method)?;
    let bytes = to_safetensors(&model, &config).map_err(js_error)?;
    let out = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&out, &JsValue::from_str(k), v);
    set(
        "safetensors",
        &js_sys::Uint8Array::from(bytes.as_slice()).into(),
    )
    .and_then(|_| {
        set(
            "config",
            &JsValue::from_str(&serde_json::to_string_pretty(&config).expect("config serialises")),
        )
    })
    .map_err(|e| JsError::new(&format!("{e:?}")))?;
    Ok(out.into())
}

/// A trained student: its method, the model, the config it is saved with, and what its
/// metadata says of its training (the data, the setup).
type Student = (Method, Ensemble, ModelConfig, Vec<(String, String)>);

/// The first-seed student of `method` from the last comparison.
fn student(method: &str) -> std::result::Result<Student, JsError> {
    let method =
        Method::parse(method).ok_or_else(|| JsError::new(&format!("unknown method '{method}'")))?;
    STATE.with(|s| {
        let s = s.borrow();
        let (model, config) = s
            .students
            .iter()
            .find(|(m, _, _)| *m == method)
            .map(|(_, model, config)| (model.clone(), config.clone()))
            .ok_or_else(|| JsError::new(&format!("no trained {method} student: run first")))?;
        let metadata = vec![("method".to_string(), method.name().to_string())];
        Ok((method, model, config, metadata))
    })
}

/// The first-seed student of `method` from the last comparison as an ONNX model (bytes): raw
/// LETOR feature vectors in, `distillrank predict`'s scores out ([`crate::onnx::export`]), with
/// the setup and the data's description in its metadata.
#[wasm_bindgen]
pub fn student_onnx(method: &str) -> std::result::Result<js_sys::Uint8Array, JsError> {
    let (_, model, config, metadata) = student(method)?;
    let bytes = crate::onnx::export(&model, &config, &metadata).map_err(js_error)?;
    Ok(js_sys::Uint8Array::from(bytes.as_slice()))
}

/// The benchmark page's batches (`web/bench.js` trains TensorFlow.js on the same data): batch `i`
/// of `shape` (`{features, groups, docs_per_group, widths}`) as `{x: Float32Array, y: Float32Array}`.
#[wasm_bindgen]
pub fn bench_batch(shape: JsValue, i: usize) -> std::result::Result<JsValue, JsError> {
    let shape: crate::bench::TrainShape =
        serde_wasm_bindgen::from_value(shape).map_err(|e| JsError::new(&e.to_string()))?;
    let batches = shape.batches();
    let (x, y) = &batches[i % batches.len()];
    let out = js_sys::Object::new();
    js_sys::Reflect::set(&out, &"x".into(), &js_sys::Float32Array::from(x.as_slice()))
        .and_then(|_| {
            js_sys::Reflect::set(&out, &"y".into(), &js_sys::Float32Array::from(y.as_slice()))
        })
        .map_err(|e| JsError::new(&format!("{e:?}")))?;
    Ok(out.into())
}

/// Training throughput of this crate on `backend` ("webgpu" or "cpu"): at least `steps` timed
/// steps after `warmup`, and at least `min_seconds` of them when given, as `distillrank bench
/// train` measures it natively. Resolves to `{docs_per_s, steps, batch_docs, seconds,
/// final_loss}`.
#[wasm_bindgen]
pub async fn bench_train(
    backend: String,
    shape: JsValue,
    steps: usize,
    warmup: usize,
    min_seconds: Option<f64>,
) -> std::result::Result<JsValue, JsError> {
    let shape: crate::bench::TrainShape =
        serde_wasm_bindgen::from_value(shape).map_err(|e| JsError::new(&e.to_string()))?;
    shape.check().map_err(js_error)?;
    let min_seconds = min_seconds.unwrap_or(0.0);
    if !(0.0..=60.0).contains(&min_seconds) {
        return Err(JsError::new(&format!(
            "min_seconds: expected 0 to 60 seconds, got {min_seconds}"
        )));
    }
    let budget = crate::bench::Budget {
        warmup,
        steps,
        min_seconds,
    };
    let throughput = match backend.as_str() {
        "cpu" => crate::bench::train(&Engine::Cpu, &shape, budget)
            .await
            .map_err(js_error)?,
        "webgpu" => {
            let gpu = STATE
                .with(|s| s.borrow().gpu.clone())
                .ok_or_else(|| JsError::new("no WebGPU device is open"))?;
            crate::bench::gpu(&gpu, &shape, budget)
                .await
                .map_err(js_error)?
        }
        // The other kind of product kernels than the adapter's choice, on a device of its own.
        "webgpu-tiled" | "webgpu-direct" => {
            let products = if backend.ends_with("tiled") {
                crate::gpu::Products::Tiled
            } else {
                crate::gpu::Products::Direct
            };
            let gpu = Gpu::open(AdapterChoice::Any, Some(products))
                .await
                .map_err(js_error)?;
            crate::bench::gpu(&gpu, &shape, budget)
                .await
                .map_err(js_error)?
        }
        other => {
            return Err(JsError::new(&format!(
                "backend '{other}': expected webgpu or cpu"
            )))
        }
    };
    to_js(&throughput)
}

/// Log-loss against the global objectives of Eban et al. on an imbalanced binary task, on the
/// setup's engine: every objective over the seeds. `on_event` hears `{type: "epoch", objective, seed,
/// log}` after every epoch (the log has the loss, the multipliers, validation metrics and whether
/// the constraint holds). Returns `{description, positive_rate, runs}`, `runs` as in
/// `distillrank objectives`' results.
#[wasm_bindgen]
pub async fn run_objectives(
    setup: JsValue,
    on_event: js_sys::Function,
) -> std::result::Result<JsValue, JsError> {
    objectives_on(setup, None, on_event).await
}

/// One job of the objectives' comparison for the page's pool of workers: the `objective`-th
/// objective of the setup at its `seed_index`-th seed (`first_seed + seed_index`). Returns what [`run_objectives`] returns, with one run.
#[wasm_bindgen]
pub async fn run_objectives_job(
    setup: JsValue,
    objective: usize,
    seed_index: u32,
    on_event: js_sys::Function,
) -> std::result::Result<JsValue, JsError> {
    objectives_on(setup, Some((objective, seed_index as u64)), on_event).await
}

/// The examples of `setup`'s data: the worker's own from its last objectives' run, or shared by
/// another worker, when the data fields are the same; otherwise made from the loaded data (the
/// uploads) and kept.
fn objectives_examples(setup: &ObjectivesSetup) -> Result<Examples> {
    let key = serde_json::to_string(&setup.data).expect("a setup serialises");
    let (cached, mut uploads) = STATE.with(|s| {
        let s = s.borrow();
        (s.objectives.clone(), Uploads::of(&s))
    });
    if let Some(examples) = cached.filter(|e| e.key == key) {
        return Ok(examples);
    }
    let splits = pipeline::objectives::objectives_data(setup, &mut uploads, &mut PageProgress)?;
    let examples = Examples {
        key,
        splits: Rc::new(splits),
        buffer: None,
    };
    STATE.with(|s| s.borrow_mut().objectives = Some(examples.clone()));
    Ok(examples)
}

/// The objectives' setup from the page (`ObjectivesSetup` as JSON, the section alone), read as
/// the CLI reads it: as the `objectives` section of a whole setup, so that a refusal names the
/// field as the page's setup does (`objectives.lr`, not the comparison's `lr`).
fn objectives_setup_of(setup: JsValue) -> Result<ObjectivesSetup> {
    let json: serde_json::Value = serde_wasm_bindgen::from_value(setup)
        .map_err(|e| Error::Config(format!("the setup: {e}")))?;
    ObjectivesSetup::from_json(&serde_json::json!({ "objectives": json }).to_string())
}

/// A refusal of an objectives run in the page's words: each flag as the field of the page's
/// objectives section (`--label-threshold` -> `objectives.data.files.threshold`), not as the
/// comparison's setting of the same name.
fn objectives_error(e: Error) -> JsError {
    JsError::new(&crate::settings::flags_in_objectives_words(
        &e.to_string(),
        "objectives.",
        &crate::setup::objectives_files_field,
    ))
}

/// Makes the examples of the objectives' `setup` (as a job would) and lays them out in a new
/// `SharedArrayBuffer` for the other workers of the pool ([`use_shared_examples`]); this worker
/// reads them from that buffer too.
#[wasm_bindgen]
pub fn share_examples(setup: JsValue) -> std::result::Result<js_sys::SharedArrayBuffer, JsError> {
    let setup = objectives_setup_of(setup).map_err(js_error)?;
    share(objectives_examples(&setup).map_err(objectives_error)?).map_err(js_error)
}

/// Takes the examples another worker made for the objectives' `setup` and shared
/// ([`share_examples`]) as this worker's, for that setup's jobs; the data this worker loaded
/// itself (if any) are dropped.
#[wasm_bindgen]
pub fn use_shared_examples(
    setup: JsValue,
    buffer: js_sys::SharedArrayBuffer,
) -> std::result::Result<(), JsError> {
    let setup = objectives_setup_of(setup).map_err(js_error)?;
    let key = serde_json::to_string(&setup.data).expect("a setup serialises");
    use_shared::<Examples>(key, buffer).map_err(js_error)
}

/// Every objective over every seed, or one (objective index, seed) pair, through the library's
/// pipeline (the CLI's steps, the same numbers). The setup is the library's [`ObjectivesSetup`],
/// its files the page's uploads.
async fn objectives_on(
    setup: JsValue,
    only: Option<(usize, u64)>,
    on_event: js_sys::Function,
) -> std::result::Result<JsValue, JsError> {
    // Through its text, so that a refusal names the field as the CLI's does.
    let setup = objectives_setup_of(setup).map_err(js_error)?;
    let splits = objectives_examples(&setup)
        .map_err(objectives_error)?
        .splits;
    let gpu = STATE.with(|s| s.borrow().gpu.clone());
    let (engine, _) = Engine::with_device(setup.backend, gpu).map_err(js_error)?;
    let mut sink = EventSink::new(on_event);
    let results = pipeline::objectives::objectives_async(&splits, &setup, only, &engine, &mut |label, event| {
        if let crate::objectives::train::Event::Epoch(log) = event {
            let (objective, seed) = label.rsplit_once(", seed ").unwrap_or((label, ""));
            sink.send(&serde_json::json!({
                "type": "epoch", "objective": objective, "seed": seed.parse::<u64>().ok(), "log": log,
            }));
        }
    })
    .await
    .map_err(objectives_error)?;
    sink.finish()?;
    to_js(&serde_json::json!({
        "backend": format!("{engine:?}"),
        "description": splits.description,
        "positive_rate": splits.train.positives() as f64 / splits.train.len().max(1) as f64,
        "runs": results,
        // What none of the objectives reads, as the CLI warns of it and results.json holds it,
        // in the words of the page's refusals of its objectives section
        // (`objectives.dual_rate_factor`).
        "unused_settings": setup
            .unused_settings()
            .iter()
            .map(|s| crate::settings::flags_in_objectives_words(s, "objectives.", &crate::setup::objectives_files_field))
            .collect::<Vec<_>>(),
    }))
}

/// Scores the test split of the loaded data (synthetic or uploaded; without a test upload, the
/// queries a Run holds out, before its filters, with the data seed the model's config records,
/// else `data_seed`, the page's setup's `data.data_seed`) with a saved model —
/// the safetensors + JSON pair that this page downloads and `distillrank compare` / `train --save`
/// write — and returns `{model, test_queries, metrics}`, the metrics against the graded
/// relevance (as `distillrank eval` reports them).
#[wasm_bindgen]
pub fn evaluate_model(
    safetensors_name: &str,
    safetensors: &[u8],
    config_name: &str,
    config: &str,
    data_seed: JsValue,
) -> std::result::Result<JsValue, JsError> {
    use crate::model_io::{from_safetensors, model_inputs, parse_config};
    let data_seed: u64 = serde_wasm_bindgen::from_value(data_seed).map_err(|e| {
        js_error(Error::Config(format!(
            "setup field data.data_seed: {e} (expected a whole number from 0 to {})",
            u64::MAX
        )))
    })?;
    let config = parse_config(config, Path::new(config_name)).map_err(js_error)?;
    pipeline::run::check_model_config(&config, Path::new(config_name)).map_err(js_error)?;
    let model =
        from_safetensors(safetensors, &config, Path::new(safetensors_name)).map_err(js_error)?;
    let data = STATE
        .with(|s| s.borrow().data.clone())
        .ok_or_else(|| JsError::new("no data: generate synthetic data or upload LETOR files"))?;
    // The model's own Run's data seed where its config records it (a student the CLI trained
    // with --data-seed 7, scored on a page with another setup open); else the page's setup's.
    let recorded = config
        .setup
        .as_ref()
        .and_then(|s| s.pointer("/data/data_seed"))
        .and_then(|v| v.as_u64());
    let test = test_split(&data, recorded.unwrap_or(data_seed)).map_err(js_error)?;
    let inputs =
        model_inputs(&test, &config, Path::new("the test split"), false).map_err(js_error)?;
    let scores = model.predict_groups(&inputs, &test.group_offsets);
    crate::model_io::check_scores(&scores, Path::new(safetensors_name)).map_err(js_error)?;
    let grades: Vec<f32> = test.grades.iter().map(|&g| g as f32).collect();
    let report = crate::metrics::report(
        &scores,
        &grades,
        &test.group_offsets,
        crate::metrics::IdcgZero::Exclude,
    );
    let warning =
        crate::model_io::constant_scores(&scores, &test.group_offsets, Path::new(safetensors_name));
    to_js(&serde_json::json!({
        "model": {"widths": config.widths, "inputs": config.n_in, "loss": config.loss},
        "test_queries": test.n_groups(),
        "metrics": report,
        "warning": warning,
    }))
}

//! `distillrank compare`: the PFD paper's Table 2 on any data, with a report, JSON, CSV and plots.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;

use distillrank::engine::Engine;
use distillrank::error::{Error, Result};
use distillrank::metrics::plus_minus;
use distillrank::metrics::NDCG_CUTOFFS;
use distillrank::model_io;
use distillrank::pipeline;
use distillrank::pipeline::preparation::PreparedData;
use distillrank::ranking::distill::Method;
use distillrank::ranking::experiment::{ndcg, CompareConfig, Comparison};
use distillrank::setup::Setup;
use distillrank::stats::PairedTest;
use distillrank::stop::Stop;

use super::flags::{TableFlags, Training};
use super::plot;
use super::progress::{Bars, Output};
use super::DataArgs;

#[derive(Args, Clone, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub experiment: TableFlags<Training>,
    /// Directory for report.md, results.json, results.csv, setup.json and the SVG plots.
    #[arg(long, default_value = "out/compare")]
    pub out: PathBuf,
    /// Run the setup in this JSON file (the page's "setup.json", or a compare's own): the whole
    /// setup, so no other data or training options go with it (but --jobs, which changes no
    /// result).
    #[arg(long)]
    pub setup: Option<PathBuf>,
}

impl CompareArgs {
    /// The setup to run: the `--setup` file's, or the one the other arguments describe. `given`
    /// are the flags the command line gave (by presence): beside `--setup`, any of them is
    /// refused, even one that equals its default.
    pub fn setup(&self, given: &[String]) -> Result<Setup> {
        // Flags beside --setup are refused as such first, before the flags' own checks would
        // offer a remedy (another flag) that --setup refuses too.
        if let Some(path) = &self.setup {
            refuse_beside_setup(path, given, true)?;
        }
        let from_args = self.experiment.setup(self.data.setup()?)?;
        let Some(path) = &self.setup else {
            return Ok(from_args);
        };
        with_jobs(from_args, |args_are_defaults| {
            setup_file(path, given, args_are_defaults)
        })
    }
}

/// The setup `read` gives (a `--setup` file's, told whether the other arguments are the
/// defaults), with the command line's `--jobs` (from `from_args`) over the file's: the number of
/// jobs side by side changes no result, so it may go beside a setup file.
pub(super) fn with_jobs(
    from_args: Setup,
    read: impl FnOnce(bool) -> Result<Setup>,
) -> Result<Setup> {
    let jobs = from_args.jobs;
    let mut setup = read(
        Setup {
            jobs: None,
            ..from_args
        } == Setup::default(),
    )?;
    setup.jobs = jobs.or(setup.jobs);
    Ok(setup)
}

/// The comparison a `--setup` file holds (for `compare` and `sweep`): the flags `given` beside
/// it refused ([`refuse_beside_setup`]), the file read as every door reads a setup, and its
/// relative file names read against its own folder.
pub(super) fn setup_file(path: &Path, given: &[String], args_are_defaults: bool) -> Result<Setup> {
    refuse_beside_setup(path, given, args_are_defaults)?;
    let mut setup = read_setup_file(path, Setup::from_file_json)?;
    let folder = path.parent().unwrap_or(Path::new(""));
    distillrank::setup::resolve_files(setup.files_mut(), Some(folder))?;
    // Checked here too, before the run checks it, so that a refusal names the file and the
    // file's fields rather than the flags the file does not have.
    setup.check(None).map_err(|e| in_file_words(path, e))?;
    // So are the files it names, before any is read.
    distillrank::pipeline::preparation::check_files_there(&setup.data, true)
        .map_err(|e| in_file_words(path, e))?;
    // So are its folds: a directory that is not there, or lacks a part; and the teacher's or
    // reference's files every fold reads.
    if setup.data.has_folds() {
        let folds = distillrank::pipeline::folds::folds_of_data(&setup.data)
            .map_err(|e| in_file_words(path, e))?;
        distillrank::pipeline::folds::check_fold_files(&setup, &folds, &|f| Path::new(f).is_file())
            .map_err(|e| in_file_words(path, e))?;
    }
    Ok(setup)
}

/// A refusal of what a setup file holds, in the file's words: the file named, and each flag
/// as the whole path of the field that fills it (`--attention-heads` -> `attention_heads`,
/// `--teacher-scores` -> `data.teacher.scores`, `--train` -> `data.source.files.train`:
/// [`distillrank::setup::files_field`]).
fn in_file_words(path: &Path, e: Error) -> Error {
    in_setup_words(path, e, &document_words)
}

/// A message in a setup document's words: each flag as its field's whole path.
pub(super) fn document_words(message: &str) -> String {
    let message = message.replace(
        distillrank::data::letor::QUERY_FILE_FLAGS,
        "with its .query field (data.source.files.train_query, valid_query or test_query)",
    );
    distillrank::settings::flags_in_document_words(&message, &|flag| match flag {
        "bundled" => Some("data.source".into()),
        _ => distillrank::setup::files_field(flag).map(|field| format!("data.{field}")),
    })
}

/// A refusal of what the setup file at `path` holds, the file named and the message in the
/// file's `words` (a comparison's fields, or the objectives' section's); a file it names that is
/// not there keeps its own name, with the field that names it.
pub(super) fn in_setup_words(path: &Path, e: Error, words: &dyn Fn(&str) -> String) -> Error {
    match e {
        Error::Config(message) => {
            Error::Config(format!("--setup {}: {}", path.display(), words(&message)))
        }
        Error::Io { path, source } => Error::Io {
            path,
            source: std::io::Error::new(source.kind(), words(&source.to_string())),
        },
        other => other,
    }
}

/// An error of a run from the setup file `path` (None: from flags), after its settings were
/// read, in the file's `words` as its warnings are: a refusal of a setting names the file and
/// the setting's field (`--setup s.json: data.logs.logging_ranker feature:99: ...`), a refusal
/// of the data says its advice in fields.
pub(super) fn run_error_in_words(
    path: Option<&Path>,
    e: Error,
    words: &dyn Fn(&str) -> String,
) -> Error {
    match (path, e) {
        (None, e) => e,
        // Already the file's (its settings' checks, its folds' files).
        (Some(_), Error::Config(message)) if message.starts_with("--setup ") => {
            Error::Config(message)
        }
        (Some(_), Error::Data(message)) => Error::Data(words(&message)),
        // A refusal that names no setting of the file (`--out`, `--param`) is not the file's.
        (Some(_), Error::Config(message)) if words(&message) == message => Error::Config(message),
        (Some(path), e) => in_setup_words(path, e, words),
    }
}

/// Refuses the flags given beside `--setup FILE` (`given`, by their ids), and settings the
/// arguments changed from the defaults (`args_are_defaults` false): the file holds the whole
/// setup, so their values would be dropped.
pub(super) fn refuse_beside_setup(
    path: &Path,
    given: &[String],
    args_are_defaults: bool,
) -> Result<()> {
    let beside: Vec<String> = given
        .iter()
        .filter(|id| !matches!(id.as_str(), "setup" | "out" | "quiet" | "json" | "jobs"))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    if !beside.is_empty() {
        return Err(Error::Config(format!(
            "--setup {} holds the whole setup: {} beside it would be dropped; put the settings in the file (or drop --setup)",
            path.display(),
            beside.join(", ")
        )));
    }
    if !args_are_defaults {
        return Err(Error::Config(format!(
            "--setup {} holds the whole setup: put the other settings in the file (or drop --setup)",
            path.display()
        )));
    }
    Ok(())
}

/// Reads the `--setup` file with `parse`, as every door reads a setup: strictly, each field named
/// in a refusal and checked against the table of settings; a refusal names the file.
pub(super) fn read_setup_file<T>(path: &Path, parse: impl FnOnce(&str) -> Result<T>) -> Result<T> {
    let bytes = distillrank::data::read_capped(path, 1 << 20, "a setup")?;
    let text = String::from_utf8_lossy(&bytes);
    parse(&text).map_err(|e| match e {
        Error::Config(message) => Error::Config(format!("--setup {}: {message}", path.display())),
        other => other,
    })
}

/// The setup as `setup.json` in `folder` keeps it (see [`files_to_keep`]).
fn setup_to_keep(setup: &Setup, folder: &Path) -> Setup {
    let mut kept = setup.clone();
    files_to_keep(kept.files_mut(), folder);
    kept
}

/// A setup's files (every one it names, [`Setup::files_mut`]) as `setup.json` in `folder` keeps
/// them: by their paths from that folder, as `--setup` reads them (against the setup's own
/// folder), so that the folder and its data can move together; a file on another root stays
/// absolute.
pub(super) fn files_to_keep(files: Vec<(&str, &mut String)>, folder: &Path) {
    let Ok(from) = std::path::absolute(folder) else {
        return;
    };
    for (field, value) in files {
        let kept = distillrank::setup::for_each_name(field, value, |file| {
            Ok(match std::path::absolute(file) {
                Ok(to) => relative_path(&from, &to).display().to_string(),
                Err(_) => file.to_string(),
            })
        });
        debug_assert!(kept.is_ok(), "keeping a name refuses none");
    }
}

/// The path from the folder `from` to `to`, both absolute: `..` for each of `from`'s components
/// past their common start, then the rest of `to` (`to` itself when they share no root).
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    use std::path::Component;
    fn normal(p: &Path) -> Vec<Component<'_>> {
        let mut out: Vec<Component<'_>> = Vec::new();
        for c in p.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                    out.pop();
                }
                c => out.push(c),
            }
        }
        out
    }
    let (from, to_parts) = (normal(from), normal(to));
    if from.first() != to_parts.first() {
        return to.to_path_buf();
    }
    let common = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut path = PathBuf::new();
    for _ in common..from.len() {
        path.push("..");
    }
    for c in &to_parts[common..] {
        path.push(c.as_os_str());
    }
    path
}

/// Runs the comparison on the prepared data through the library's pipeline, with a progress bar
/// over the documents of every model to train: the model it is on (method, seed, teacher, its
/// place among all), its rate and an ETA.
pub fn run_comparison(
    data: &PreparedData,
    setup: &Setup,
    engine: &Engine,
    out: &Output,
) -> Result<Comparison> {
    distillrank::native::pipeline::compare(
        data,
        setup,
        engine,
        &Stop::default(),
        &mut Bars::new(out),
    )
}

/// Where a comparison's time went: the documents its training steps went through (forward,
/// backward and Adam, every student and teacher) and their time, against the whole run's.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Throughput {
    pub trained_docs: f64,
    pub training_seconds: f64,
    pub end_to_end_seconds: f64,
    /// Documents per second of the training steps alone, and of the whole run.
    pub training_docs_per_s: f64,
    pub end_to_end_docs_per_s: f64,
    /// Share of the run's time (on every job's thread) outside the training steps: loading,
    /// preparation, scoring validation and test splits and teachers, the summary, and a thread
    /// idle at the end.
    pub outside_training: f64,
    /// Jobs that ran side by side: the training steps' seconds are summed over them.
    pub jobs: usize,
}

impl Throughput {
    /// The throughput of comparison `c` of `config` on data with `d_z` privileged features: a
    /// teacher two methods share counts once.
    pub fn of(
        c: &Comparison,
        end_to_end_seconds: f64,
        jobs: usize,
        config: &CompareConfig,
        d_z: usize,
    ) -> Throughput {
        let (mut docs, mut seconds) = (0f64, 0f64);
        for r in &c.methods {
            // The teachers this method trained itself (not copies of another method's).
            let own = |k: &usize| config.teacher_trained_by(r.method, *k, d_z).is_none();
            for run in &r.runs {
                let teachers = run.teachers.iter().enumerate().filter(|(k, _)| own(k));
                for model in std::iter::once(&run.student).chain(teachers.map(|(_, t)| t)) {
                    for log in &model.history {
                        docs += log.docs_per_s * log.seconds;
                        seconds += log.seconds;
                    }
                }
            }
        }
        Throughput {
            trained_docs: docs.round(),
            training_seconds: seconds,
            end_to_end_seconds,
            training_docs_per_s: docs / seconds.max(1e-9),
            end_to_end_docs_per_s: docs / end_to_end_seconds.max(1e-9),
            outside_training: (1.0 - seconds / (jobs as f64 * end_to_end_seconds).max(1e-9))
                .max(0.0),
            jobs,
        }
    }
}

impl std::fmt::Display for Throughput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let summed = if self.jobs > 1 {
            format!(", summed over {} jobs side by side", self.jobs)
        } else {
            String::new()
        };
        write!(
            f,
            "trained {} documents in {:.1} s of training steps ({:.0} docs/s{summed}); end to end {:.1} s ({:.0} docs/s), {:.0}% of it outside the training steps",
            self.trained_docs,
            self.training_seconds,
            self.training_docs_per_s,
            self.end_to_end_seconds,
            self.end_to_end_docs_per_s,
            100.0 * self.outside_training
        )
    }
}

/// The files a run's setup names, as paths.
pub(super) fn paths(files: Vec<&str>) -> Vec<&Path> {
    files.into_iter().map(Path::new).collect()
}

/// What a comparison writes in its `--out` folder: a run on files, or on the LETOR folds.
const WRITES: &[&str] = &[
    "report.md",
    "results.json",
    "results.csv",
    "tests.csv",
    "setup.json",
    "students",
    "ndcg_per_epoch.svg",
    "loss_terms.svg",
    "propensities.svg",
    "fold1",
    "fold2",
    "fold3",
    "fold4",
    "fold5",
];

pub fn run(args: &CompareArgs, given: &[String], out: &Output) -> Result<()> {
    let setup = args.setup(given)?;
    run_setup(args, setup, out)
        .map_err(|e| run_error_in_words(args.setup.as_deref(), e, &document_words))
}

/// [`run`] once the setup is read.
fn run_setup(args: &CompareArgs, setup: Setup, out: &Output) -> Result<()> {
    // The run owns its folder: locked, and cleared of the previous run's outputs but those it
    // reads (its own setup.json given again as --setup).
    let mut files: Vec<PathBuf> = setup.data.files().into_iter().map(PathBuf::from).collect();
    if setup.data.has_folds() {
        // Each fold's files by name: on a disk that ignores case, the folder `fold1` the run
        // writes is the folds' `Fold1`. A folds directory that cannot be read is refused below.
        let folds = pipeline::folds::folds_of_data(&setup.data).unwrap_or_default();
        for fold in folds {
            files.extend(
                fold.train
                    .into_iter()
                    .chain([fold.valid, fold.test])
                    .map(PathBuf::from),
            );
        }
    }
    let files: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let mut folder =
        distillrank::output::RunFolder::claim(&args.out, args.setup.as_deref(), &files, WRITES)?;
    // Every setting is checked before the data load.
    setup.check(None)?;
    let engine = super::engine(setup.backend, out)?;
    if setup.data.has_folds() {
        return run_folds(args, &setup, folder, &engine, out);
    }
    let config = setup.compare_config(engine.clone())?;
    let started = std::time::Instant::now();
    let mut store = pipeline::store::Disk::with_queries(setup.data.source.query_files());
    // From a setup file, its warnings in the file's words.
    let mut bars = match args.setup {
        Some(_) => Bars::new(out).in_words(&document_words),
        None => Bars::new(out),
    };
    let data = pipeline::preparation::prepare(&setup.data, &mut store, true, &mut bars)?;
    drop(bars);
    let comparison = run_comparison(&data, &setup, &engine, out)?;
    let seconds = started.elapsed().as_secs_f64();
    let d_z = data.prepared.train.d_z;
    let jobs = distillrank::native::ranking::side_by_side(&config, d_z);
    let throughput = Throughput::of(&comparison, seconds, jobs, &config, d_z);
    let tests = pipeline::report::tests(&data, &setup, &comparison);
    let table = table(&comparison, &tests, &data, &setup);
    let sentences = sentences(&tests, comparison.verdict_metric());
    let not_ranking = comparison.not_ranking();
    for sentence in &not_ranking {
        out.warn(format!("{sentence}."));
    }
    // The settings nothing reads, from a setup file in its words: on stderr and in the report.
    let unused: Vec<String> = setup
        .unused_settings()
        .into_iter()
        .map(|sentence| match args.setup {
            Some(_) => document_words(&sentence),
            None => sentence,
        })
        .collect();
    for sentence in &unused {
        out.warn(format!("{sentence}."));
    }
    // What preparation warned of (on stderr as it prepared), for the report too.
    let warnings: Vec<String> = data
        .prepared
        .warnings
        .iter()
        .map(|warning| match args.setup {
            Some(_) => document_words(warning),
            None => warning.clone(),
        })
        .collect();
    let shared = pipeline::report::shared_teachers(&data, &setup);
    let command = reproduce_command();
    write_report(
        &folder.file("report.md")?,
        &report(
            &data,
            &config,
            &table,
            &sentences,
            &command,
            &throughput,
            &setup,
            &shared,
            &not_ranking,
            &unused,
            &warnings,
        ),
    )?;
    let mut results = pipeline::report::results_json_with(&data, &setup, &comparison, &tests);
    results["command"] = command.clone().into();
    results["throughput"] = serde_json::to_value(&throughput).expect("serialise");
    write(
        &folder.file("results.json")?,
        &(serde_json::to_string_pretty(&results).expect("serialise") + "\n"),
    )?;
    write(&folder.file("results.csv")?, &csv(&comparison))?;
    write(&folder.file("tests.csv")?, &tests_csv(&tests))?;
    write(
        &folder.file("setup.json")?,
        &(setup_to_keep(&setup, &args.out).to_json() + "\n"),
    )?;
    save_students(&folder.file("students")?, &data, &setup, &comparison)?;
    plot::ndcg_per_epoch(&folder.file("ndcg_per_epoch.svg")?, &comparison)?;
    plot::loss_terms(&folder.file("loss_terms.svg")?, &comparison)?;
    if let Some(clicks) = results.get("clicks") {
        plot::propensities(&folder.file("propensities.svg")?, clicks)?;
    }
    folder.finish()?;
    if out.json {
        outln!("{}", serde_json::to_string(&results).expect("serialise"));
    } else {
        // The answers first, in plain words; then the figures behind them.
        if comparison.verdict_metric() != "ndcg@8" {
            outln!(
                "On the graded NDCG@8 of the test split (the true relevance the clicks stand for):"
            );
        }
        for verdict in pipeline::report::verdicts(
            &tests,
            comparison.verdict_metric(),
            data.reference.as_deref(),
        ) {
            outln!("{}.", verdict["text"].as_str().unwrap_or_default());
        }
        outln!("");
        outln!("{table}");
        outln!("{sentences}");
        for sentence in &shared {
            outln!("Trained once: {sentence}.");
        }
        outln!("{throughput}");
        outln!(
            "wrote {}/{{report.md, results.json, results.csv, tests.csv, setup.json, ndcg_per_epoch.svg, loss_terms.svg, {}students/}} in {seconds:.0} s",
            args.out.display(),
            if results.get("clicks").is_some() {
                "propensities.svg, "
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// Saves each method's first-seed student as `DIR/METHOD.safetensors` + `DIR/METHOD.json`: models
/// that score raw LETOR files with `distillrank predict` (they read the regular columns only).
fn save_students(dir: &Path, data: &PreparedData, setup: &Setup, c: &Comparison) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for (method, model) in &c.students {
        let model_config = pipeline::run::student_config(data, setup, model);
        model_io::save(&dir.join(method.name()), model, &model_config)?;
    }
    Ok(())
}

/// `compare --folds`: the comparison on each fold, each fold's `results.json` in `foldK/`, and
/// the folds' summary (the mean over the folds, the paired tests on the pooled test queries) as
/// the run's `results.json`, `report.md` and `tests.csv`.
fn run_folds(
    args: &CompareArgs,
    setup: &Setup,
    mut folder: distillrank::output::RunFolder,
    engine: &Engine,
    out: &Output,
) -> Result<()> {
    use distillrank::pipeline::folds;
    let started = std::time::Instant::now();
    let mut store = pipeline::store::Disk::with_queries(setup.data.source.query_files());
    let runs = distillrank::native::pipeline::compare_folds(
        setup,
        &mut store,
        engine,
        &Stop::default(),
        &mut Bars::new(out),
    )?;
    for run in &runs {
        let dir = folder.file(&format!("fold{}", run.fold.fold))?;
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let results = pipeline::report::results_json(&run.data, &run.setup, &run.comparison);
        write(
            &folder.file(&format!("fold{}/results.json", run.fold.fold))?,
            &(serde_json::to_string_pretty(&results).expect("serialise") + "\n"),
        )?;
    }
    let command = reproduce_command();
    let mut results = folds::results_json(setup, &runs);
    results["command"] = command.clone().into();
    let tests: Vec<PairedTest> =
        serde_json::from_value(results["tests"].clone()).expect("the tests read back");
    let metric = results["verdict_metric"]
        .as_str()
        .unwrap_or("ndcg@8")
        .to_string();
    let verdicts: Vec<String> = results["verdicts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["text"].as_str().map(|t| format!("{t}.")))
        .collect();
    let table = folds_table(&results);
    let sentences = sentences(&tests, &metric);
    let seconds = started.elapsed().as_secs_f64();
    write_report(
        &folder.file("report.md")?,
        &format!(
            "# distillrank compare: the LETOR folds\n\n{}\n\n{table}\n{sentences}\n\n```sh\n{command}\n```\n\nEach fold's comparison is in foldK/results.json. Ran in {seconds:.0} s.\n",
            verdicts.join("\n")
        ),
    )?;
    write(
        &folder.file("results.json")?,
        &(serde_json::to_string_pretty(&results).expect("serialise") + "\n"),
    )?;
    write(&folder.file("tests.csv")?, &tests_csv(&tests))?;
    write(
        &folder.file("setup.json")?,
        &(setup_to_keep(setup, &args.out).to_json() + "\n"),
    )?;
    folder.finish()?;
    if out.json {
        outln!("{}", serde_json::to_string(&results).expect("serialise"));
    } else {
        for verdict in &verdicts {
            outln!("{verdict}");
        }
        outln!("");
        outln!("{table}");
        outln!("{sentences}");
        outln!(
            "wrote {}/{{report.md, results.json, tests.csv, setup.json, fold1..fold{}/results.json}} in {seconds:.0} s",
            args.out.display(),
            runs.len()
        );
    }
    Ok(())
}

/// The folds' table: per method (and the reference), test NDCG@k as the mean over the folds
/// of each fold's mean over seeds, ± the standard deviation over the folds, then NDCG@8 on each
/// fold.
fn folds_table(results: &serde_json::Value) -> String {
    let folds = results["folds"].as_array().map_or(0, Vec::len);
    let mut t = String::from("| method |");
    for k in NDCG_CUTOFFS {
        let _ = write!(t, " NDCG@{k} |");
    }
    t.push_str(" graded NDCG@8 |");
    for f in 1..=folds {
        let _ = write!(t, " NDCG@8 fold {f} |");
    }
    t.push_str("\n|---|");
    t.push_str(&"---:|".repeat(NDCG_CUTOFFS.len() + 1 + folds));
    t.push('\n');
    let cell =
        |stat: &serde_json::Value| match (stat["mean"].as_f64(), stat["std_over_folds"].as_f64()) {
            (Some(m), Some(s)) => plus_minus(m, s),
            (Some(m), None) => format!("{m:.4}"),
            _ => "n/a".into(),
        };
    let mut row = |name: &str, figures: &serde_json::Value| {
        let _ = write!(t, "| {name} |");
        for k in NDCG_CUTOFFS {
            let _ = write!(t, " {} |", cell(&figures[format!("ndcg@{k}")]));
        }
        let _ = write!(t, " {} |", cell(&figures["graded_ndcg@8"]));
        for f in 0..folds {
            match figures["ndcg@8"]["per_fold"][f].as_f64() {
                Some(v) => {
                    let _ = write!(t, " {v:.4} |");
                }
                None => t.push_str(" n/a |"),
            }
        }
        t.push('\n');
    };
    for (name, figures) in results["methods"].as_object().into_iter().flatten() {
        row(name, figures);
    }
    if let Some(reference) = results.get("reference") {
        let label = format!("reference: {}", reference["label"].as_str().unwrap_or(""));
        row(&label, reference);
    }
    t
}

/// Writes a report file atomically (a temporary file renamed into place).
pub fn write(path: &Path, text: &str) -> Result<()> {
    distillrank::output::write_atomic(path, text.as_bytes())
}

/// Writes a report for people (markdown): input it quotes, such as file names, has its control
/// characters escaped, as in every message.
pub fn write_report(path: &Path, text: &str) -> Result<()> {
    write(path, &distillrank::error::printable_text(text))
}

/// The command line that made this run, to reproduce it, quoted for a POSIX shell.
pub fn reproduce_command() -> String {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    distillrank::setup::shell_words(args.iter().map(String::as_str))
}

/// The markdown table: per method, test NDCG@{1,3,5,8,10} mean ± std over seeds, the gain of
/// NDCG@8 over no-distillation, and the teacher's own test NDCG@8.
pub fn table(c: &Comparison, tests: &[PairedTest], data: &PreparedData, setup: &Setup) -> String {
    let against_base = |m: Method| {
        tests.iter().find(|t| {
            t.metric == "ndcg@8" && t.a == m.name() && t.b == Method::NoDistillation.name()
        })
    };
    let base = c
        .get(Method::NoDistillation)
        .and_then(|r| r.student_ndcg(8))
        .map(|s| s.0);
    let mut t = String::from("| method |");
    for k in NDCG_CUTOFFS {
        let _ = write!(t, " NDCG@{k} |");
    }
    t.push_str(" gain @8 | p (Holm) | teacher NDCG@8 | graded NDCG@8 | teacher graded NDCG@8 | params (teacher) | ms / 1k docs (teacher) | best epoch |\n|---|");
    t.push_str(&"---:|".repeat(NDCG_CUTOFFS.len() + 8));
    t.push('\n');
    for r in &c.methods {
        let _ = write!(t, "| {} |", r.method);
        for k in NDCG_CUTOFFS {
            match r.student_ndcg(k) {
                Some((m, s)) => {
                    let _ = write!(t, " {} |", plus_minus(m, s));
                }
                None => t.push_str(" n/a |"),
            }
        }
        match (base, r.student_ndcg(8)) {
            (Some(b), Some((m8, _))) if b > 0.0 && r.method != Method::NoDistillation => {
                let _ = write!(t, " {:+.2}% |", 100.0 * (m8 - b) / b);
            }
            (_, None) => t.push_str(" n/a |"),
            _ => t.push_str(" — |"),
        }
        // The paired test of the gain: its Holm-corrected p (n/a when the run is too small).
        match against_base(r.method) {
            Some(test) => match test.p_holm.or(test.p) {
                Some(p) if p < 0.001 => t.push_str(" < 0.001 |"),
                Some(p) => {
                    let _ = write!(t, " {p:.3} |");
                }
                None => t.push_str(" n/a |"),
            },
            None => t.push_str(" — |"),
        }
        let has_teacher = r.runs.iter().any(|run| !run.teachers.is_empty());
        match r.teacher_ndcg(8) {
            Some((m, s)) => {
                let _ = write!(t, " {} |", plus_minus(m, s));
            }
            None if has_teacher => t.push_str(" n/a |"),
            None => t.push_str(" — |"),
        }
        // NDCG@8 on the graded relevance: the ground truth behind y.
        match r.student_graded_ndcg(8) {
            Some((m, s)) => {
                let _ = write!(t, " {} |", plus_minus(m, s));
            }
            None => t.push_str(" n/a |"),
        }
        match r.teacher_graded_ndcg(8) {
            Some((m, s)) => {
                let _ = write!(t, " {} |", plus_minus(m, s));
            }
            None if has_teacher => t.push_str(" n/a |"),
            None => t.push_str(" — |"),
        }
        // Parameters and scoring time (ms per 1,000 documents, CPU engine; mean over seeds) of the
        // student, and of the (first) teacher in brackets.
        let params = r.runs.first().map_or(0, |run| run.student.parameters);
        let (latency, _) = r.student_stat(|run| run.ms_per_1k_docs);
        let (epoch, _) = r.student_stat(|run| run.best_epoch as f64);
        match (
            r.runs.first().and_then(|run| run.teachers.first()),
            r.teacher_stat(|run| run.ms_per_1k_docs),
        ) {
            // A teacher trained elsewhere: no parameters of ours; its time reads and scores
            // the files (none for scores from files).
            (Some(teacher), Some((teacher_latency, _))) if teacher.trained_elsewhere => {
                let time = if teacher_latency.is_finite() {
                    format!("{teacher_latency:.2}, reading included")
                } else {
                    "n/a: scores from files".into()
                };
                let _ = writeln!(
                    t,
                    " {params} (external) | {latency:.2} ({time}) | {epoch:.1} |"
                );
            }
            (Some(teacher), Some((teacher_latency, _))) => {
                let _ = writeln!(
                    t,
                    " {params} ({}) | {latency:.2} ({teacher_latency:.2}) | {epoch:.1} |",
                    teacher.parameters
                );
            }
            _ => {
                let _ = writeln!(t, " {params} | {latency:.2} | {epoch:.1} |");
            }
        }
    }
    // The reference model trained elsewhere, scored once: its figures, no teacher of its own.
    if let (Some(reference), Some(run)) = (
        data.reference.as_deref(),
        pipeline::report::reference_run(data, setup),
    ) {
        let _ = write!(t, "| reference: {} |", reference.label());
        for k in NDCG_CUTOFFS {
            match run.test.ndcg_at(k) {
                Some(v) => {
                    let _ = write!(t, " {v:.4} |");
                }
                None => t.push_str(" n/a |"),
            }
        }
        match (base, run.test.ndcg_at(8)) {
            (Some(b), Some(v)) if b > 0.0 => {
                let _ = write!(t, " {:+.2}% | — | — |", 100.0 * (v - b) / b);
            }
            _ => t.push_str(" n/a | — | — |"),
        }
        let graded = run
            .test_graded_ndcg
            .iter()
            .find(|(k, _)| *k == 8)
            .and_then(|(_, v)| *v);
        match graded {
            Some(v) => {
                let _ = write!(t, " {v:.4} |");
            }
            None => t.push_str(" n/a |"),
        }
        let time = if run.ms_per_1k_docs.is_finite() {
            format!("{:.2}, reading included", run.ms_per_1k_docs)
        } else {
            "n/a: scores from files".into()
        };
        let _ = writeln!(t, " — | (external) | {time} | — |");
    }
    t
}

/// One sentence per paired test on `metric` (NDCG@8 on y, the table's gains, or on the graded
/// relevance when methods learn from clicks): the difference, its interval, the corrected p and
/// the run's size, or that the run cannot tell the methods apart.
pub fn sentences(tests: &[PairedTest], metric: &str) -> String {
    let lines: Vec<String> = tests
        .iter()
        .filter(|t| t.metric == metric)
        .map(|t| format!("- {}.", distillrank::stats::sentence(t)))
        .collect();
    lines.join("\n") + "\n"
}

/// Every paired test as a CSV row: both metrics, with empty fields where nothing could be tested.
fn tests_csv(tests: &[PairedTest]) -> String {
    let mut s = String::from("a,b,metric,design,mean_diff,ci95_low,ci95_high,p,p_holm,n_queries,n_seeds,min_detectable\n");
    let f = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    for t in tests {
        let _ = writeln!(
            s,
            "{},{},{},\"{}\",{},{},{},{},{},{},{},{}",
            t.a,
            t.b,
            t.metric,
            t.design,
            f(t.mean_diff),
            f(t.ci95.map(|c| c[0])),
            f(t.ci95.map(|c| c[1])),
            f(t.p),
            f(t.p_holm),
            t.n_queries,
            t.n_seeds,
            f(t.min_detectable)
        );
    }
    s
}

#[allow(clippy::too_many_arguments)]
fn report(
    data: &PreparedData,
    config: &CompareConfig,
    table: &str,
    sentences: &str,
    command: &str,
    throughput: &Throughput,
    setup: &Setup,
    shared_teachers: &[String],
    not_ranking: &[String],
    unused: &[String],
    warnings: &[String],
) -> String {
    let seconds = throughput.end_to_end_seconds;
    let p = &data.prepared;
    let test = p.test.as_ref().expect("compare has a test split");
    let mut r = String::new();
    let _ = writeln!(r, "# distillrank compare\n\nData: {}.\n", data.description);
    let _ = writeln!(r, "{table}");
    for sentence in not_ranking {
        let _ = writeln!(r, "**Does not rank:** {sentence}.\n");
    }
    for sentence in unused {
        let _ = writeln!(r, "**{sentence}.**\n");
    }
    for warning in warnings {
        let _ = writeln!(r, "**Warning:** {warning}.\n");
    }
    let _ = writeln!(
        r,
        "Is each gain real? A paired randomization test over the test queries (the per-query NDCG@8 averaged over the seeds, which share the test split), a bootstrap 95% interval of the mean difference, Holm's correction across the table's tests, and the smallest difference this run could detect (80% power); `tests.csv` and results.json's `tests` hold them all, on the graded relevance too:\n\n{sentences}"
    );
    if has_unmeasured(table) {
        let _ = writeln!(
            r,
            "n/a: {}.\n",
            distillrank::ranking::experiment::UNMEASURED
        );
    }
    let _ = writeln!(
        r,
        "Test NDCG@k of the students (mean ± standard deviation over {} seeds), each at the epoch with the best validation NDCG@8; \"gain @8\" is relative to no-distillation; the teacher column is the teacher's own test NDCG@8 (it sees z on the test split). Ranking Distillation's teacher is the larger x-only model. Parameters and scoring time (ms per 1,000 test documents on the engine that trained it, mean over seeds) are the student's, the teacher's in brackets.\n",
        config.seeds
    );
    for sentence in shared_teachers {
        let _ = writeln!(r, "Trained once: {sentence}.\n");
    }
    let _ = writeln!(
        r,
        "![test NDCG@8 per epoch](ndcg_per_epoch.svg)\n\n![loss terms per epoch](loss_terms.svg)\n"
    );
    let _ = writeln!(r, "## Data\n");
    let _ = writeln!(
        r,
        "| split | groups | positive groups | documents | y = 1 |\n|---|---:|---:|---:|---:|"
    );
    for (name, set) in [("train", &p.train), ("valid", &p.valid), ("test", test)] {
        let ones = set.labels.iter().filter(|&&y| y > 0.0).count();
        let _ = writeln!(
            r,
            "| {name} | {} | {} | {} | {ones} |",
            set.n_groups(),
            set.positive_groups(),
            set.n_docs()
        );
    }
    let _ = writeln!(
        r,
        "\nRegular features x: {}; privileged features z: {} (columns {:?}).",
        p.train.d_x, p.train.d_z, p.privileged_columns
    );
    for (split, f) in &p.filter {
        let _ = writeln!(r, "\nFilter, {split}: {f}.");
    }
    let _ = writeln!(
        r,
        "\nPreparation: {}\n",
        serde_json::to_string(&data.options).expect("serialise")
    );
    let _ = writeln!(
        r,
        "## Configuration\n\nEngine: {:?}.\n\n```json\n{}\n```\n",
        config.engine,
        serde_json::to_string_pretty(config).expect("serialise")
    );
    let _ = writeln!(
        r,
        "## Reproduce\n\n```sh\n{command}\n```\n\nRan in {seconds:.0} s: {throughput}.\n"
    );
    let _ = writeln!(
        r,
        "The setup (`setup.json`; `distillrank compare --setup setup.json` runs it again, and the page's \"Open a setup\" loads it), the same as `{}`:\n\n```json\n{}\n```",
        setup.shell_command(),
        setup.to_json()
    );
    r
}

/// Whether the table holds an unmeasurable figure.
fn has_unmeasured(table: &str) -> bool {
    table.contains(" n/a |")
}

fn csv(c: &Comparison) -> String {
    let mut s = String::from("method,seed,best_epoch,valid_ndcg@8");
    for k in NDCG_CUTOFFS {
        let _ = write!(s, ",test_ndcg@{k}");
    }
    s.push_str(",test_graded_ndcg@8,teacher_test_ndcg@8,parameters\n");
    for r in &c.methods {
        for run in &r.runs {
            let _ = write!(
                s,
                "{},{},{},{}",
                r.method, run.seed, run.student.best_epoch, run.student.best_valid_ndcg
            );
            // An unmeasurable NDCG is an empty field, never 0.
            for k in NDCG_CUTOFFS {
                let v = ndcg(&run.student, k);
                let _ = write!(s, ",{}", v.map_or(String::new(), |v| v.to_string()));
            }
            let graded = distillrank::ranking::experiment::graded_ndcg(&run.student, 8);
            let _ = write!(s, ",{}", graded.map_or(String::new(), |v| v.to_string()));
            let teacher = run
                .teachers
                .first()
                .and_then(|t| ndcg(t, 8))
                .map(|v| v.to_string())
                .unwrap_or_default();
            let _ = writeln!(s, ",{teacher},{}", run.student.parameters);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use distillrank::data::logs::ClickModel;
    use distillrank::engine::Backend;
    use distillrank::model::objective::Objective;
    use distillrank::model::LossKind;
    use distillrank::setup::{DataSource, LogLabels, Setup};

    use super::super::Command;
    use super::CompareArgs;

    fn parse(args: &[String]) -> CompareArgs {
        let line = std::iter::once("distillrank".to_string()).chain(args.iter().cloned());
        match crate::cli::parse_from(line)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .command
        {
            Command::Compare(a) => a,
            _ => unreachable!("a compare command"),
        }
    }

    /// The CLI's defaults are the library's: `compare` without options is `Setup::default()`.
    #[test]
    fn the_command_lines_defaults_are_the_setups() {
        let args = parse(&["compare".to_string()]);
        assert_eq!(args.setup(&[]).unwrap(), Setup::default());
        assert_eq!(Setup::default().command_line(), ["compare"]);
    }

    /// A setup's command line gives the setup back, for setups that change every kind of field.
    #[test]
    fn a_setup_comes_back_from_its_command_line() {
        let mut synthetic = Setup::default();
        if let DataSource::Synthetic {
            options,
            valid_queries,
            test_queries,
        } = &mut synthetic.data.source
        {
            options.queries = 600;
            options.regular = 24;
            options.privileged_strength = 0.7;
            options.privileged_correlation = 0.25;
            options.seed = 3;
            *valid_queries = 150;
            *test_queries = 300;
        }
        synthetic.data.tau_target = Some(3.0);
        synthetic.data.t = Some(4.0);
        synthetic.methods = vec![
            distillrank::ranking::distill::Method::NoDistillation,
            distillrank::ranking::distill::Method::RankingDistillation,
        ];
        synthetic.loss = LossKind::Softmax;
        synthetic.epochs = 12;
        synthetic.widths = vec![64, 32];
        synthetic.lr = 0.003;
        synthetic.seeds = 2;
        synthetic.rd.k = 5;
        synthetic.backend = Backend::Cpu;

        let mut logs = Setup::default();
        logs.data.source = DataSource::Mq2008;
        logs.data.privileged = Some("logs".into());
        logs.data.logs.sessions = 30;
        logs.data.logs.click_model = ClickModel::Cascade;
        logs.data.logs.conversion_rate = 0.05;
        logs.data.log_labels = LogLabels::Gumbel;
        logs.objective = Some(Objective::parse("auc-pr").unwrap());
        logs.loss = LossKind::LambdaRank;
        logs.teacher_widths = Some(vec![128, 64]);

        let mut files = Setup::default();
        files.data.source = DataSource::files("train.txt".into(), None, Some("test.txt".into()));
        files.data.privileged = Some("top:30%".into());
        files.data.min_group_size = 5;
        files.data.data_seed = 9;
        files.data.prepared_cache = true;
        files.alpha = 0.3;

        // A linear student and linear teachers: `--widths none --teacher-widths none`.
        let linear = Setup {
            widths: vec![],
            teacher_widths: Some(vec![]),
            ..Setup::default()
        };

        for setup in [synthetic, logs, files, linear] {
            let line = setup.command_line();
            assert_eq!(parse(&line).setup(&[]).unwrap(), setup, "{line:?}");
        }
    }

    /// setup.json names its files from its own folder, as `--setup` reads them.
    #[test]
    fn a_kept_setup_names_its_files_from_its_folder() {
        use std::path::Path;
        let rel = |from: &str, to: &str| super::relative_path(Path::new(from), Path::new(to));
        assert_eq!(
            rel("/a/b/out", "/a/data/t.txt"),
            Path::new("../../data/t.txt")
        );
        assert_eq!(rel("/a/b", "/a/b/c/t.txt"), Path::new("c/t.txt"));
        assert_eq!(rel("/a/b/../x", "/a/x/t.txt"), Path::new("t.txt"));
    }

    /// `--setup FILE` runs the whole setup; other options beside it are refused by name.
    #[test]
    fn a_setup_file_takes_no_other_settings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("setup.json");
        let setup = Setup {
            epochs: 3,
            ..Setup::default()
        };
        std::fs::write(&path, setup.to_json()).unwrap();
        let file = path.display().to_string();
        let args = parse(&["compare".into(), "--setup".into(), file.clone()]);
        assert_eq!(args.setup(&[]).unwrap(), setup);
        let both = parse(&[
            "compare".into(),
            "--setup".into(),
            file,
            "--epochs".into(),
            "5".into(),
        ]);
        let err = both.setup(&[]).unwrap_err().to_string();
        assert!(
            err.contains("--setup") && err.contains("setup.json"),
            "{err}"
        );
        std::fs::write(&path, "{\"epochs\": 3, \"epoch\": 4}").unwrap();
        let bad = parse(&[
            "compare".into(),
            "--setup".into(),
            path.display().to_string(),
        ]);
        let err = bad.setup(&[]).unwrap_err().to_string();
        assert!(err.contains("setup.json") && err.contains("epoch"), "{err}");
    }
}

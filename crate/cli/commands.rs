//! The `data`, `train`, `eval` and `predict` commands.

use std::io::Write;
use std::path::{Path, PathBuf};

use distillrank::data::cache;
use distillrank::data::letor::{read_letor_file_with_progress, ReadOptions};
use distillrank::data::prepare::{
    column_ranges, label_like_prepare, prepare, PrepareOptions, Prepared, PrivilegedSplit,
    PREPARE_STEPS, SPLIT_TEST, SPLIT_VALID,
};
use distillrank::data::synth::{generate, generate_splits};
use distillrank::data::Dataset;
use distillrank::metrics::{self, IdcgZero};
use distillrank::model_io::{self, ModelConfig};
use distillrank::output;
use distillrank::train::{self, Event, TrainConfig};
use distillrank::{Error, Result};

use super::progress::{Output, Progress};
use super::{
    DataArgs, EvalArgs, FileArgs, LabelsArg, PredictArgs, SimulateLogsArgs, SplitArg, SplitFiles,
    StatsArgs, SynthArgs, TrainArgs,
};
use distillrank::data::inputs::Inputs;
use distillrank::data::logs::{self, LogColumns, LogOptions, SIDECAR_FORMAT};
use distillrank::data::prepare::{hold_out_test, hold_out_test_groups, prepare_raw, RawSplits};
use distillrank::setup::{DataSetup, DataSource, HOLDOUT};

/// Loads a LETOR file: from `FILE` if it is a cache, from `FILE.drcache` when that is fresh,
/// otherwise by parsing the text (with a progress bar over the bytes read).
pub fn load(path: &Path, query: Option<&Path>, out: &Output) -> Result<Dataset> {
    if path.extension().is_some_and(|e| e == "drcache") {
        return Ok(cache::read_cache(path, None)?.0);
    }
    let cached = cache::cache_path(path);
    if query.is_none() && cached.exists() {
        match cache::read_cache(&cached, Some(path)) {
            Ok((data, cache::CacheState::Fresh)) => return Ok(data),
            Ok((_, cache::CacheState::Stale)) => out.note(format!(
                "{} is stale: parsing {} again",
                cached.display(),
                path.display()
            )),
            Err(e) => out.note(format!(
                "cannot use the cache ({e}): parsing {} again",
                path.display()
            )),
        }
    }
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    let mut bar = Progress::new(out, size, "B");
    bar.message(format!("reading {}", path.display()));
    let data =
        read_letor_file_with_progress(path, query, &ReadOptions::default(), &mut |n| bar.set(n))?;
    bar.finish();
    Ok(data)
}

pub fn stats(args: &StatsArgs, out: &Output) -> Result<()> {
    let data = load(&args.file.file, args.file.query.as_deref(), out)?;
    let s = data.stats();
    // The features each side would keep if this file were the training split.
    let options = PrepareOptions {
        privileged: match &args.privileged {
            Some(spec) => privileged_split(spec)?,
            None => PrivilegedSplit::FILE_DEFAULT,
        },
        tau_target: args.tau_target.unwrap_or(4.8),
        t: args.t.unwrap_or(4.0),
        ..Default::default()
    };
    let sides = prepare(&data, None, None, &options).map(|p| {
        serde_json::json!({
            "privileged_split": options.privileged,
            "regular": {"features": p.regular_columns.len(), "constant": p.constant_regular},
            "privileged": {"features": p.privileged_columns.len(), "constant": p.constant_privileged, "columns": p.privileged_columns},
        })
    });
    if out.json {
        let mut v = serde_json::to_value(&s).expect("stats serialise");
        v["split"] = match &sides {
            Ok(sides) => sides.clone(),
            Err(e) => serde_json::json!({"error": e.to_string()}),
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).expect("stats serialise")
        );
        return Ok(());
    }
    outln!("file                    {}", args.file.file.display());
    outln!("queries                 {}", s.queries);
    outln!("documents               {}", s.docs);
    outln!("features                {}", s.features);
    outln!(
        "docs per query          min {} / median {} / max {}",
        s.docs_per_query_min,
        s.docs_per_query_median,
        s.docs_per_query_max
    );
    let hist: Vec<String> = s.grades.iter().map(|(g, n)| format!("{g}: {n}")).collect();
    outln!("grades                  {}", hist.join(", "));
    outln!(
        "constant features       {} [{}]",
        s.constant_features.len(),
        column_ranges(&s.constant_features)
    );
    outln!("groups with no grade>0  {}", s.groups_without_positive);
    match &sides {
        Ok(v) => {
            let side = |name: &str| {
                let constant = v[name]["constant"].as_array().map_or(0, Vec::len);
                format!("{} ({constant} constant)", v[name]["features"])
            };
            outln!(
                "as training data ({})   x: {}, z: {}",
                options.privileged.spec(),
                side("regular"),
                side("privileged")
            );
        }
        Err(e) => outln!("as training data        n/a: {e}"),
    }
    Ok(())
}

pub fn synth(args: &SynthArgs, path: &Path, out: &Output) -> Result<()> {
    output::check_file(path)?;
    let synthetic = generate(&args.options())?;
    output::stage_with(path, |w| synthetic.dataset.write_letor(w))?.commit()?;
    let d = &synthetic.dataset;
    let z = &synthetic.privileged_columns;
    if out.json {
        let v = serde_json::json!({"file": path, "queries": d.n_groups(), "docs": d.n_docs(), "features": d.n_features, "privileged_columns": z});
        outln!("{v}");
    } else {
        outln!(
            "wrote {} ({} queries, {} docs, {} features)",
            path.display(),
            d.n_groups(),
            d.n_docs(),
            d.n_features
        );
        let cols: Vec<String> = z.iter().map(|c| c.to_string()).collect();
        outln!(
            "privileged columns: {}  (train with --privileged cols:{})",
            cols.join(","),
            cols.join(",")
        );
    }
    Ok(())
}

pub fn cache(args: &FileArgs, out: &Output) -> Result<()> {
    let path = cache::cache_path(&args.file);
    output::check_file(&path)?;
    let started = std::time::Instant::now();
    let mut bar = Progress::new(
        out,
        std::fs::metadata(&args.file)
            .map_err(|e| Error::io(&args.file, e))?
            .len(),
        "B",
    );
    let data = read_letor_file_with_progress(
        &args.file,
        args.query.as_deref(),
        &ReadOptions::default(),
        &mut |n| bar.set(n),
    )?;
    bar.finish();
    cache::write_cache(&data, &args.file, &path)?;
    let seconds = started.elapsed().as_secs_f64();
    if out.json {
        outln!(
            "{}",
            serde_json::json!({"cache": path, "docs": data.n_docs(), "queries": data.n_groups(), "seconds": seconds})
        );
    } else {
        outln!(
            "wrote {} ({} queries, {} docs) in {:.2} s",
            path.display(),
            data.n_groups(),
            data.n_docs(),
            seconds
        );
    }
    Ok(())
}

/// Parses `--privileged`.
pub fn privileged_split(spec: &str) -> Result<PrivilegedSplit> {
    PrivilegedSplit::parse(spec)
}

/// The prepared splits, plus what a saved model needs to know about the source data.
pub struct PreparedData {
    pub prepared: Prepared,
    pub source_features: usize,
    pub description: String,
    pub options: PrepareOptions,
}

/// Loads (or generates) and prepares the data `args` describe.
pub fn prepare_data(args: &DataArgs, out: &Output) -> Result<PreparedData> {
    prepare_setup(&args.setup()?, &args.files, false, out)
}

/// Loads (or generates) and prepares the data of `setup`, the one path of every command and of
/// `compare --setup`. `files` gives the LightGBM `.query` files of text files without qid (the
/// data's paths are the setup's). With `needs_test`, data without a test split get one held out
/// of the training queries, as the page does ([`HOLDOUT`]).
pub fn prepare_setup(
    setup: &DataSetup,
    files: &SplitFiles,
    needs_test: bool,
    out: &Output,
) -> Result<PreparedData> {
    let (train, valid, test, synthetic_z, description, paths) = match &setup.source {
        DataSource::Files { train, valid, test } => {
            let optional = |file: &Option<String>, query: &Option<PathBuf>| {
                file.as_ref()
                    .map(|p| load(Path::new(p), query.as_deref(), out))
                    .transpose()
            };
            let paths = [
                Some(PathBuf::from(train)),
                valid.as_ref().map(PathBuf::from),
                test.as_ref().map(PathBuf::from),
            ];
            (
                load(Path::new(train), files.train_query.as_deref(), out)?,
                optional(valid, &files.valid_query)?,
                optional(test, &files.test_query)?,
                None,
                train.clone(),
                paths,
            )
        }
        DataSource::Mq2008 => {
            let [train, valid, test] = distillrank::data::bundled::mq2008()?;
            (
                train,
                Some(valid),
                Some(test),
                None,
                "MQ2008 Fold1, bundled".to_string(),
                [None, None, None],
            )
        }
        DataSource::Synthetic {
            options,
            valid_queries,
            test_queries,
        } => {
            // One draw of train + valid + test queries, cut in that order. Validation and test
            // are large so that method differences of a percent stand out of the evaluation noise.
            let synthetic =
                generate_splits(options, options.queries, *valid_queries, *test_queries)?;
            let n_docs =
                synthetic.train.n_docs() + synthetic.valid.n_docs() + synthetic.test.n_docs();
            let description = format!(
                "synthetic {} data ({} train / {} valid / {} test queries, {} docs, {})",
                format!("{:?}", options.kind).to_lowercase(),
                options.queries,
                valid_queries,
                test_queries,
                n_docs,
                options.privileged_summary()
            );
            (
                synthetic.train,
                Some(synthetic.valid),
                Some(synthetic.test),
                Some(synthetic.privileged_columns),
                description,
                [None, None, None],
            )
        }
    };
    // Data without a test split get one held out of the training queries. Preparation takes it
    // from the training matrix itself; only simulated logs, which rewrite the splits, need it
    // as a dataset of its own first.
    let hold_out = (test.is_none() && needs_test).then_some((HOLDOUT.1, setup.data_seed));
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
    let (train, valid, test, hold_out, logged, description) = if setup.wants_logs() {
        let (train, test) = match hold_out {
            Some((share, seed)) => {
                let (rest, test) = hold_out_test(&train, share, seed)?;
                (rest, Some(test))
            }
            None => (train, test),
        };
        let ((train, valid, test), columns, summary) =
            logged_splits(&paths, &setup.logs, train, valid, test, out)?;
        (
            train,
            valid,
            test,
            None,
            Some(columns),
            format!("{description}, {summary}"),
        )
    } else {
        (train, valid, test, hold_out, None, description)
    };
    let options = setup.prepare_options(synthetic_z.as_deref(), logged.as_ref())?;
    let started = std::time::Instant::now();
    let mut bar = Progress::new(out, PREPARE_STEPS.len() as u64, "steps");
    let mut steps: Vec<(String, std::time::Instant)> = Vec::new();
    // With simulated logs the regular columns are the original file's: a student serves on
    // files without logs.
    let source_features = logged.map_or(train.n_features, |c| c.impressions - 1);
    let raw = RawSplits {
        train,
        valid,
        test,
        hold_out_test: hold_out,
    };
    let prepared = prepare_raw(raw, &options, &mut |step| {
        bar.message(format!("preparing: {step}"));
        bar.set(steps.len() as u64);
        steps.push((step.to_string(), std::time::Instant::now()));
    });
    bar.finish();
    let prepared = prepared?;
    let ended = std::time::Instant::now();
    let each: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, (name, at))| {
            let until = steps.get(i + 1).map_or(ended, |s| s.1);
            format!("{name} {:.1} s", (until - *at).as_secs_f64())
        })
        .collect();
    out.note(format!(
        "prepared in {:.1} s: {}",
        (ended - started).as_secs_f64(),
        each.join(", ")
    ));
    for (split, report) in &prepared.filter {
        out.note(format!("{split}: {report}"));
    }
    for warning in &prepared.warnings {
        out.warn(warning);
    }
    Ok(PreparedData {
        prepared,
        source_features,
        description,
        options,
    })
}

/// The splits with their simulated-log columns for `--privileged logs`: read from files that
/// `data simulate-logs` wrote (their `FILE.logs.json` sidecars name the columns), or simulated
/// here with the `--sessions ...` options when the training data have no sidecar.
/// The splits with their simulated logs, the logs' columns, and a line describing the logs.
type LoggedSplits = (
    (Dataset, Option<Dataset>, Option<Dataset>),
    LogColumns,
    String,
);

fn logged_splits(
    paths: &[Option<PathBuf>; 3],
    options: &LogOptions,
    train: Dataset,
    valid: Option<Dataset>,
    test: Option<Dataset>,
    out: &Output,
) -> Result<LoggedSplits> {
    let sidecar_of = |path: &Path| -> Result<Option<serde_json::Value>> {
        let mut candidates = vec![sidecar_path(path)];
        if path.extension().is_some_and(|e| e == "drcache") {
            candidates.push(sidecar_path(&path.with_extension("")));
        }
        match candidates.into_iter().find(|p| p.exists()) {
            Some(p) => read_sidecar(&p).map(Some),
            None => Ok(None),
        }
    };
    let [train_path, valid_path, test_path] = paths;
    let train_sidecar = match train_path {
        Some(path) => sidecar_of(path)?,
        None => None,
    };
    if let Some(sidecar) = train_sidecar {
        let columns: LogColumns = serde_json::from_value(sidecar["columns"].clone())
            .map_err(|e| Error::Config(format!("the training file's logs sidecar: {e}")))?;
        let train_path = train_path.as_ref().expect("a sidecar belongs to a file");
        if train.n_features != columns.conversions {
            return Err(Error::Config(format!(
                "{} has {} features but its logs sidecar puts the conversions in column {}: the file and {} do not belong together",
                train_path.display(),
                train.n_features,
                columns.conversions,
                sidecar_path(train_path).display()
            )));
        }
        for path in [valid_path, test_path].into_iter().flatten() {
            match sidecar_of(path)? {
                Some(other) if other["columns"] == sidecar["columns"] => {}
                Some(_) => {
                    return Err(Error::Config(format!(
                        "{} holds its logs in other columns than the training file: simulate the splits together (distillrank data simulate-logs TRAIN VALID TEST -o DIR)",
                        path.display()
                    )))
                }
                None => {
                    return Err(Error::Config(format!(
                        "{} has no simulated logs ({} is missing) but the training file has: simulate the splits together (distillrank data simulate-logs TRAIN VALID TEST -o DIR)",
                        path.display(),
                        sidecar_path(path).display()
                    )))
                }
            }
        }
        let summary = format!(
            "logs simulated by data simulate-logs ({})",
            sidecar["click_model"].as_str().unwrap_or("see the sidecar")
        );
        return Ok(((train, valid, test), columns, summary));
    }
    let present = [valid.is_some(), test.is_some()];
    let mut data = vec![train];
    let mut names = vec![train_path
        .as_ref()
        .map_or("the synthetic training split".into(), |p| {
            p.display().to_string()
        })];
    for (split, name) in [(valid, valid_path), (test, test_path)] {
        if let Some(d) = split {
            data.push(d);
            names.push(
                name.as_ref()
                    .map_or("a synthetic split".into(), |p| p.display().to_string()),
            );
        }
    }
    let refs: Vec<&Dataset> = data.iter().collect();
    let simulated = logs::simulate(&refs, &names, options)?;
    let summary = format!("logs simulated here ({})", options.click_model_summary());
    out.note(format!(
        "{summary}: {} of {} training documents converted",
        simulated.stats[0].converted_docs, simulated.stats[0].docs
    ));
    let columns = simulated.columns;
    let mut logged = simulated.datasets.into_iter();
    let train = logged.next().expect("the training split is simulated");
    let valid = if present[0] { logged.next() } else { None };
    let test = if present[1] { logged.next() } else { None };
    Ok(((train, valid, test), columns, summary))
}

/// `FILE.logs.json`: the sidecar of a file of simulated logs.
pub fn sidecar_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".logs.json");
    PathBuf::from(name)
}

fn read_sidecar(path: &Path) -> Result<serde_json::Value> {
    let bytes = distillrank::data::read_capped(path, 16 << 20, "a logs sidecar")?;
    let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
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
    // The six columns data simulate-logs appends, one after the other.
    match serde_json::from_value::<LogColumns>(value["columns"].clone()) {
        Ok(c) if c.impressions >= 1 && c == LogColumns::after(c.impressions - 1) => {}
        Ok(_) => {
            return Err(Error::parse(
                path,
                0,
                0,
                "\"columns\" are not the six consecutive columns data simulate-logs appends",
            ))
        }
        Err(e) => {
            return Err(Error::parse(
                path,
                0,
                0,
                format!("\"columns\": {e}; expected the column numbers data simulate-logs writes"),
            ))
        }
    }
    Ok(value)
}

pub fn simulate_logs(args: &SimulateLogsArgs, out: &Output) -> Result<()> {
    let options = args.logs.options()?;
    let into_folder = args.files.len() > 1 || args.out.is_dir();
    let targets: Vec<PathBuf> = if into_folder {
        output::check_folder(&args.out)?;
        let mut seen = std::collections::HashSet::new();
        args.files
            .iter()
            .map(|f| {
                let name = f
                    .file_name()
                    .ok_or_else(|| Error::Config(format!("{} names no file", f.display())))?;
                if !seen.insert(name.to_owned()) {
                    return Err(Error::Config(format!(
                        "two inputs are named {}: their outputs in {} would collide",
                        name.to_string_lossy(),
                        args.out.display()
                    )));
                }
                Ok(args.out.join(name))
            })
            .collect::<Result<_>>()?
    } else {
        vec![args.out.clone()]
    };
    for (input, target) in args.files.iter().zip(&targets) {
        if std::fs::canonicalize(input).ok() == std::fs::canonicalize(target).ok()
            && target.exists()
        {
            return Err(Error::Config(format!(
                "{} would overwrite its input: choose another -o",
                target.display()
            )));
        }
        output::check_file(target)?;
    }
    let data: Vec<Dataset> = args
        .files
        .iter()
        .map(|f| load(f, None, out))
        .collect::<Result<_>>()?;
    let names: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    let refs: Vec<&Dataset> = data.iter().collect();
    let started = std::time::Instant::now();
    let simulated = logs::simulate(&refs, &names, &options)?;
    let seconds = started.elapsed().as_secs_f64();
    let mut sidecars = Vec::new();
    for (i, (dataset, target)) in simulated.datasets.iter().zip(&targets).enumerate() {
        output::stage_with(target, |w| dataset.write_letor_sparse(w))?.commit()?;
        let sidecar = simulated.sidecar(i, &options, &names[i]);
        let text = serde_json::to_string_pretty(&sidecar).expect("a sidecar serialises");
        output::write_atomic(&sidecar_path(target), text.as_bytes())?;
        sidecars.push(
            serde_json::json!({"file": target, "sidecar": sidecar_path(target), "logs": sidecar}),
        );
    }
    if out.json {
        outln!(
            "{}",
            serde_json::json!({"seconds": seconds, "files": sidecars})
        );
        return Ok(());
    }
    let c = simulated.columns;
    outln!("click model: {}", options.click_model_summary());
    match simulated.logging_ranker_ndcg10 {
        Some(v) => outln!("logging ranker: graded NDCG@10 {v:.4} on {}", names[0]),
        None => outln!("logging ranker: graded NDCG@10 n/a on {}", names[0]),
    }
    outln!(
        "columns: {} impressions, {} clicks, {} CTR, {} mean position, {} dwell (z: --privileged logs), {} conversions (y)",
        c.impressions, c.clicks, c.ctr, c.mean_position, c.dwell, c.conversions
    );
    for ((stats, target), name) in simulated.stats.iter().zip(&targets).zip(&names) {
        outln!(
            "{} -> {} (+ {})",
            name,
            target.display(),
            sidecar_path(target).display()
        );
        outln!(
            "  {} queries, {} docs, {} impressions, {} clicks, {} conversions ({:.2}% of clicks); y = 1 on {} docs in {} queries",
            stats.queries,
            stats.docs,
            stats.impressions,
            stats.clicks,
            stats.conversions,
            100.0 * stats.conversion_rate,
            stats.converted_docs,
            stats.converted_queries
        );
        let ranks: Vec<String> = stats
            .ctr_by_rank
            .iter()
            .map(|v| format!("{v:.3}"))
            .collect();
        outln!("  CTR by rank: {}", ranks.join(" "));
        let grades: Vec<String> = stats
            .ctr_by_grade
            .iter()
            .map(|(g, v)| format!("{g}: {v:.3}"))
            .collect();
        outln!("  CTR by grade: {}", grades.join(", "));
    }
    outln!("simulated in {seconds:.2} s");
    Ok(())
}

pub fn train(args: &TrainArgs, out: &Output) -> Result<()> {
    let config = TrainConfig {
        loss: args.loss.into(),
        view: args.features.into(),
        widths: args.widths.clone(),
        epochs: args.epochs,
        adam: distillrank::cpu::adam::AdamConfig {
            lr: args.lr,
            ..Default::default()
        },
        batch_docs: args.batch_docs,
        seed: args.seed,
        idcg_zero: args.idcg_zero.into(),
        objective: args.objective.objective()?,
        dual_rate_factor: args.objective.dual_rate_factor,
        ..Default::default()
    };
    config.validate()?;
    if let Some(prefix) = &args.save {
        let (weights, json) = model_io::paths(prefix);
        output::check_file(&weights)?;
        output::check_file(&json)?;
    }
    let data = prepare_data(&args.data, out)?;
    let p = &data.prepared;
    out.note(format!(
        "data: {}; {} train groups ({} positive), {} valid groups{}; x: {} features ({} constant), z: {} features ({} constant); tau_target {}",
        data.description,
        p.train.n_groups(),
        p.train.positive_groups(),
        p.valid.n_groups(),
        if p.holdout { " (10% holdout)" } else { "" },
        p.train.d_x,
        p.constant_regular.len(),
        p.train.d_z,
        p.constant_privileged.len(),
        data.options.tau_target
    ));
    let docs_per_epoch = train::epoch_docs(&p.train, false) as u64;
    let mut bar = Progress::new(out, docs_per_epoch * config.epochs as u64, "docs");
    bar.message(format!("{} {:?}", config.loss, config.view).to_lowercase());
    let engine = super::engine(args.backend, out)?;
    let trained = train::fit_on(
        &engine,
        train::Split::of(&p.train, config.view),
        train::Split::of(&p.valid, config.view),
        None,
        &config,
        &train::Guidance::default(),
        &mut |event| match event {
            Event::Step { docs } => bar.inc(docs as u64),
            Event::Epoch(log) => bar.println(format!(
                "epoch {:>3}  loss {:.5}  valid NDCG@{} {:.4}  {:.0} docs/s",
                log.epoch, log.data_loss, config.eval_k, log.valid_ndcg, log.docs_per_s
            )),
        },
    )?;
    bar.finish();

    let test_report = match &p.test {
        Some(test) => {
            let inputs = Inputs::of(test, config.view);
            let scores = pollster::block_on(engine.score(&trained.model, inputs))?;
            Some(metrics::report(
                &scores,
                &test.labels,
                &test.group_offsets,
                config.idcg_zero,
            ))
        }
        None => None,
    };
    let saved = match &args.save {
        Some(prefix) => {
            let columns = match config.view {
                distillrank::data::prepare::FeatureView::Regular => p.regular_columns.clone(),
                distillrank::data::prepare::FeatureView::Privileged => p.privileged_columns.clone(),
                distillrank::data::prepare::FeatureView::Both => p
                    .regular_columns
                    .iter()
                    .chain(&p.privileged_columns)
                    .copied()
                    .collect(),
            };
            if columns.len() != trained.model.n_in() {
                return Err(Error::Config("the discriminative z is not a column of the data: a model that sees it cannot be saved for serving".into()));
            }
            let model_config = ModelConfig::new(
                &trained.model,
                config.loss,
                config.view,
                columns,
                data.source_features,
            );
            Some(model_io::save(prefix, &trained.model, &model_config)?)
        }
        None => None,
    };
    if out.json {
        let v = serde_json::json!({
            "data": data.description,
            "config": config,
            "best_epoch": trained.best_epoch,
            "best_valid_ndcg": trained.best_valid_ndcg,
            "history": trained.history,
            "test": test_report,
            "saved": saved,
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).expect("results serialise")
        );
    } else {
        let first = trained.history.first().map_or(0.0, |l| l.valid_ndcg);
        outln!(
            "valid NDCG@{}: {:.4} after epoch 1, best {:.4} at epoch {} (the model kept)",
            config.eval_k,
            first,
            trained.best_valid_ndcg,
            trained.best_epoch
        );
        if let Some(r) = &test_report {
            print_report("test", r);
        }
        if let Some((w, j)) = saved {
            outln!("saved {} and {}", w.display(), j.display());
        }
    }
    Ok(())
}

fn print_report(name: &str, r: &metrics::Report) {
    let ndcg: Vec<String> = r
        .ndcg
        .iter()
        .map(|(k, v)| format!("NDCG@{k} {}", v.map_or("n/a".into(), |v| format!("{v:.4}"))))
        .collect();
    outln!("{name}: {}", ndcg.join("  "));
    let p: Vec<String> = r
        .precision
        .iter()
        .map(|(k, v)| format!("P@{k} {v:.4}"))
        .collect();
    outln!(
        "{name}: MAP {:.4}  MRR {:.4}  {}  ({} groups count for NDCG)",
        r.map,
        r.mrr,
        p.join("  "),
        r.ndcg_groups
    );
}

pub fn eval(args: &EvalArgs, out: &Output) -> Result<()> {
    let (model, config) = model_io::load(&args.model)?;
    let data = load(&args.file, args.query.as_deref(), out)?;
    let (data, labels) = match args.labels {
        LabelsArg::Graded => {
            let labels = data.grades.iter().map(|&g| g as f32).collect();
            (data, labels)
        }
        LabelsArg::Binary => {
            let options = PrepareOptions {
                min_group_size: args.min_group_size,
                t: args.t,
                tau_target: args.tau_target,
                seed: args.data_seed,
                ..Default::default()
            };
            let split = match args.split {
                SplitArg::Valid => SPLIT_VALID,
                SplitArg::Test => SPLIT_TEST,
            };
            let (kept, labels, report) = label_like_prepare(&data, split, &options);
            out.note(format!("{}: {report}", args.file.display()));
            (kept, labels)
        }
    };
    let inputs = model_io::model_inputs(&data, &config, &args.file, args.allow_missing_features)?;
    let engine = super::engine(args.backend, out)?;
    let scores = pollster::block_on(engine.score(&model, Inputs::dense(&inputs, data.n_docs())))?;
    model_io::check_scores(&scores, &args.model)?;
    let convention: IdcgZero = args.idcg_zero.into();
    let report = metrics::report(&scores, &labels, &data.group_offsets, convention);
    if out.json {
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({"file": args.file, "labels": format!("{:?}", args.labels).to_lowercase(), "metrics": report})).expect("serialise"));
    } else {
        print_report(&args.file.display().to_string(), &report);
    }
    Ok(())
}

pub fn predict(args: &PredictArgs, out: &Output) -> Result<()> {
    if let Some(run) = &args.run {
        output::check_file(run)?;
    }
    let (model, config) = model_io::load(&args.model)?;
    let data = load(&args.file, args.query.as_deref(), out)?;
    let inputs = model_io::model_inputs(&data, &config, &args.file, args.allow_missing_features)?;
    let engine = super::engine(args.backend, out)?;
    let scores = pollster::block_on(engine.score(&model, Inputs::dense(&inputs, data.n_docs())))?;
    model_io::check_scores(&scores, &args.model)?;
    let write = |path: &Path, w: &mut dyn Write| -> Result<()> {
        let io = |e| Error::io(path, e);
        match &args.run {
            Some(_) => {
                for g in 0..data.n_groups() {
                    let docs = data.group(g);
                    let order = metrics::ranking(&scores[docs.clone()]);
                    for (rank, &i) in order.iter().enumerate() {
                        writeln!(
                            w,
                            "{} Q0 doc{} {} {:.6} distillrank",
                            data.qids[g],
                            i,
                            rank + 1,
                            scores[docs.start + i]
                        )
                        .map_err(io)?;
                    }
                }
            }
            None => {
                for s in &scores {
                    writeln!(w, "{s}").map_err(io)?;
                }
            }
        }
        w.flush().map_err(io)
    };
    match &args.run {
        Some(path) => {
            let mut failed = None;
            let staged = output::stage_with(path, |w| {
                write(path, w).map_err(|e| {
                    let message = e.to_string();
                    failed = Some(e);
                    std::io::Error::other(message)
                })
            });
            if let Some(e) = failed {
                if let Ok(staged) = staged {
                    staged.discard();
                }
                return Err(e);
            }
            staged?.commit()?;
            out.note(format!(
                "wrote {} ({} queries, {} docs)",
                path.display(),
                data.n_groups(),
                data.n_docs()
            ));
        }
        None => write(
            &PathBuf::from("<stdout>"),
            &mut std::io::BufWriter::new(std::io::stdout().lock()),
        )?,
    }
    Ok(())
}

//! The `data`, `train`, `eval` and `predict` commands.

use std::io::Write;
use std::path::{Path, PathBuf};

use distillrank::data::cache;
use distillrank::data::features::Scratch;
use distillrank::data::letor::{read_letor_file_with_progress, ReadOptions};
use distillrank::data::prepare::{
    column_ranges, label_like_prepare, prepare_raw, PrepareOptions, PrivilegedSplit, RawSplits,
    SPLIT_TEST, SPLIT_VALID,
};
use distillrank::data::synth::generate;
use distillrank::data::Dataset;
use distillrank::error::{Error, Result};
use distillrank::metrics::{self, IdcgZero};
use distillrank::model_io::{self, ModelConfig};
use distillrank::output;
use distillrank::pipeline;
use distillrank::pipeline::preparation::PreparedData;
use distillrank::pipeline::store::Disk;
use distillrank::ranking::train::{self, Event, TrainConfig};

use super::progress::{Bars, Output, Progress};
use super::{
    AggregateLogsArgs, DataArgs, EvalArgs, FileArgs, LabelsArg, PredictArgs, SimulateLogsArgs,
    SplitArg, StatsArgs, TrainArgs,
};
use distillrank::data::inputs::Inputs;
use distillrank::data::logs;
use distillrank::pipeline::store::{impressions_path, sidecar_path};
use distillrank::setup::{files_tau_target, FILES_T};

pub fn stats(args: &StatsArgs, out: &Output) -> Result<()> {
    // `logs`: the columns the file's logs sidecar names (z, and the conversions, y), as a
    // comparison reads them.
    // A split is checked before the data are read.
    let split = match args.privileged.as_deref().map(str::trim) {
        Some("logs") | None => None,
        Some(spec) => Some(privileged_split(spec)?),
    };
    let data = load(&args.file.file, args.file.query.as_deref(), out)?;
    let logged = match args.privileged.as_deref().map(str::trim) {
        Some("logs") => Some(logged_columns(&args.file.file)?),
        _ => None,
    };
    let s = data.stats();
    // The features each side would keep if this file were the training split.
    let options = PrepareOptions {
        privileged: match (split, &logged) {
            (_, Some(columns)) => PrivilegedSplit::Columns(columns.privileged()),
            (Some(split), None) => split,
            (None, None) => PrivilegedSplit::FILE_DEFAULT,
        },
        label_column: logged.map(|columns| columns.conversions),
        tau_target: args
            .tau_target
            .unwrap_or_else(|| files_tau_target(data.grades.iter().copied().max().unwrap_or(0))),
        t: args.t.unwrap_or(FILES_T),
        ..Default::default()
    };
    // Prepared from the data it owns, window by window, so that the raw and the prepared matrices
    // are never both in memory whole.
    let raw = RawSplits {
        train: data,
        valid: None,
        test: None,
        hold_out_test: None,
    };
    let sides = prepare_raw(raw, &options, &mut |_| {});
    // A split the command line asked for that this file cannot take is an error: one it cannot
    // be (a column the file does not have), or one that fails where the default split does not.
    // Where the default split fails too on the data (no positive group, too few informative
    // features), the data are at fault, which is shown as n/a.
    if let (Err(e @ Error::Config(_)), Some(spec)) = (&sides, &args.privileged) {
        return Err(Error::Config(format!(
            "--privileged {spec}: {}",
            e.message()
        )));
    }
    if let (Err(e), Some(spec)) = (&sides, &args.privileged) {
        let again = RawSplits {
            train: load(&args.file.file, args.file.query.as_deref(), out)?,
            valid: None,
            test: None,
            hold_out_test: None,
        };
        let default = PrepareOptions {
            privileged: PrivilegedSplit::FILE_DEFAULT,
            ..options.clone()
        };
        if prepare_raw(again, &default, &mut |_| {}).is_ok() {
            return Err(Error::Config(format!(
                "--privileged {spec}: {}",
                e.message()
            )));
        }
    }
    let sides = sides.map(|p| {
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
    outln!(
        "constant within queries {} [{}] (vary between queries only)",
        s.varying_between_queries_only.len(),
        column_ranges(&s.varying_between_queries_only)
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

pub fn synth(
    args: &super::flags::TableFlags<super::flags::Generator>,
    path: &Path,
    out: &Output,
) -> Result<()> {
    distillrank::data::convert::check_data_file(path)?;
    let options = args.options()?;
    // A file is read back by the LETOR reader, which takes feature indices up to its limit.
    let features = options.regular.saturating_add(options.privileged);
    let limit = distillrank::data::letor::DEFAULT_MAX_FEATURE_INDEX as usize;
    if features > limit {
        return Err(Error::Config(format!(
            "--regular {} and --privileged-count {} make {features} features, past the {limit} a data file may have (feature indices 1..={limit}): the file could not be read back; choose fewer",
            options.regular, options.privileged
        )));
    }
    let synthetic = generate(&options)?;
    distillrank::data::convert::stage_data(path, &synthetic.dataset, |w| {
        synthetic.dataset.write_letor(w)
    })?
    .commit()?;
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

/// `data convert`: [`distillrank::data::convert::convert`] into a file staged beside `path`.
pub fn convert(args: &FileArgs, path: &Path, out: &Output) -> Result<()> {
    distillrank::data::convert::check_data_file(path)?;
    // A folder of Parquet part files is read whole: no output goes inside it.
    let parts = [("FILE".to_string(), args.file.clone())];
    output::check_not_an_input(&[("-o".into(), path.to_path_buf())], &args.reads(), &parts)?;
    let started = std::time::Instant::now();
    let mut result = None;
    let staged = output::stage_with(path, |w| {
        let converted =
            distillrank::data::convert::convert(&args.file, args.query.as_deref(), path, w);
        let failed = converted.is_err();
        let message = result
            .insert(converted)
            .as_ref()
            .err()
            .map(|e| e.to_string());
        match (failed, message) {
            (true, Some(m)) => Err(std::io::Error::other(m)),
            _ => Ok(()),
        }
    });
    let converted = match result {
        Some(Err(e)) => return Err(e),
        Some(Ok(c)) => c,
        None => return staged.map(|_| ()),
    };
    staged?.commit()?;
    if converted.docids_left_out > 0 {
        out.warn(docids_left_out(path, converted.docids_left_out));
    }
    if distillrank::data::cache::is_cache_path(&args.file) {
        out.warn(format!(
            "{} is a binary cache, which keeps the values and not which entries its text left out: every entry is written (0 where the text had none); convert the text file to keep them",
            args.file.display()
        ));
    }
    let seconds = started.elapsed().as_secs_f64();
    if out.json {
        let mut v = serde_json::to_value(&converted).unwrap_or_default();
        v["file"] = path.display().to_string().into();
        v["seconds"] = seconds.into();
        outln!("{v}");
    } else {
        outln!(
            "wrote {} ({}: {} queries, {} docs, {} features) in {:.2} s",
            path.display(),
            converted.format,
            converted.queries,
            converted.docs,
            converted.features,
            seconds
        );
    }
    Ok(())
}

pub fn cache(args: &FileArgs, out: &Output) -> Result<()> {
    if distillrank::data::cache::is_cache_path(&args.file) {
        return Err(Error::Config(format!(
            "{} is a cache already: data cache FILE writes FILE.drcache beside the LETOR or Parquet file FILE",
            distillrank::error::printable(&args.file.display().to_string())
        )));
    }
    // A cache is written beside the file it caches: a device or a pipe has no such place.
    let metadata = std::fs::metadata(&args.file).map_err(|e| Error::io(&args.file, e))?;
    if !metadata.is_file() {
        return Err(Error::Config(format!(
            "{} is not a regular file: a cache is written beside the LETOR file it caches (FILE.drcache), so give a file on disk",
            distillrank::error::printable(&args.file.display().to_string())
        )));
    }
    distillrank::data::check_cache_beside(&args.file, "a cache (FILE.drcache)")?;
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
    // The matrix is built in a scratch file beside the cache, which the system writes to the disk
    // when memory is short: a file larger than memory can be cached.
    let folder = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let options = ReadOptions {
        scratch: Scratch::Files(folder.to_path_buf()),
        ..ReadOptions::default()
    };
    let data =
        read_letor_file_with_progress(&args.file, args.query.as_deref(), &options, &mut |n| {
            bar.set(n)
        })?;
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

/// The log columns the logs sidecar of `file` names (`FILE.logs.json`, written by `data
/// simulate-logs` or `data aggregate-logs`).
fn logged_columns(file: &Path) -> Result<logs::LogColumns> {
    use distillrank::pipeline::store::Store;
    let name = file.display().to_string();
    let sidecar = Disk::default().sidecar(&name)?.ok_or_else(|| {
        Error::Config(format!(
            "--privileged logs reads the columns named by {}, which is not there: write the logs with distillrank data simulate-logs or data aggregate-logs, or give top:N, top:P% or cols:...",
            sidecar_path(file).display()
        ))
    })?;
    serde_json::from_value(sidecar["columns"].clone()).map_err(|e| {
        Error::Config(format!(
            "{}: its columns: {e}",
            sidecar_path(file).display()
        ))
    })
}

/// Loads a LETOR file (or its cache) with a progress bar over the bytes read.
pub fn load(path: &Path, query: Option<&Path>, out: &Output) -> Result<Dataset> {
    distillrank::pipeline::store::load_file(path, query, &Scratch::Memory, &mut Bars::new(out))
}

/// Loads (or generates) and prepares the data `args` describe, through the library's pipeline.
pub fn prepare_data(args: &DataArgs, needs_test: bool, out: &Output) -> Result<PreparedData> {
    let data = args.setup()?;
    let mut store = Disk::with_queries(data.source.query_files());
    pipeline::preparation::prepare(&data, &mut store, needs_test, &mut Bars::new(out))
}

/// Parses `--privileged`.
pub fn privileged_split(spec: &str) -> Result<PrivilegedSplit> {
    PrivilegedSplit::parse(spec)
}

/// Where the logs commands write each of `files` for `-o out`: the file `out` for one input
/// (unless it is an existing folder), otherwise each input's name in the folder `out`; two inputs
/// of one name, or an output over its input, are refused.
/// Where a logs command writes each input file's copy with its log columns: `out` itself for one
/// file, or `out/NAME` for several, or when `out` is a folder or ends in a path separator (the
/// folder is created). Every file the command will write (the copies, their sidecars and
/// `written_beside_first`'s file beside the first copy) is checked against every input (the
/// files and `read_too`, the logs), so that no output replaces what the command reads.
fn logged_targets(
    files: &[PathBuf],
    read_too: &[PathBuf],
    out: &Path,
    written_beside_first: fn(&Path) -> PathBuf,
) -> Result<(Vec<PathBuf>, output::CreatedFolders)> {
    let names_a_folder = out
        .as_os_str()
        .to_string_lossy()
        .ends_with(std::path::is_separator);
    // A file that already holds logs would get a second set appended, and its first would
    // become regular features x: the logs (conversions among them) would leak into the student.
    for file in files {
        use distillrank::pipeline::store::Store;
        if let Some(sidecar) = Disk::default().sidecar(&file.display().to_string())? {
            let columns: logs::LogColumns = serde_json::from_value(sidecar["columns"].clone())
                .map_err(|e| {
                    Error::Config(format!(
                        "{}: its columns: {e}",
                        sidecar_path(file).display()
                    ))
                })?;
            return Err(Error::Config(format!(
                "{} already holds logs in its columns {}..={} ({} names them): logs written over it would be appended after them, and those columns would become regular features x; give the LETOR file without logs",
                file.display(),
                columns.impressions,
                columns.conversions,
                sidecar_path(file).display()
            )));
        }
    }
    let into_folder = files.len() > 1 || out.is_dir() || names_a_folder;
    let targets: Vec<PathBuf> = if into_folder {
        let mut seen = std::collections::HashSet::new();
        files
            .iter()
            .map(|f| {
                let name = f
                    .file_name()
                    .ok_or_else(|| Error::Config(format!("{} names no file", f.display())))?;
                if !seen.insert(name.to_owned()) {
                    return Err(Error::Config(format!(
                        "two inputs are named {}: their outputs in {} would collide",
                        name.to_string_lossy(),
                        out.display()
                    )));
                }
                Ok(out.join(name))
            })
            .collect::<Result<_>>()?
    } else {
        vec![out.to_path_buf()]
    };
    // Created once the names are checked; taken back if the command fails before it writes.
    let created = match into_folder {
        true => output::check_folder(out)?,
        false => output::CreatedFolders::none(),
    };
    let mut written: Vec<PathBuf> = targets
        .iter()
        .flat_map(|t| [t.clone(), sidecar_path(t)])
        .collect();
    written.push(written_beside_first(&targets[0]));
    let writes: Vec<output::Named> = written.iter().map(|w| ("-o".into(), w.clone())).collect();
    let mut reads: Vec<output::Named> = files
        .iter()
        .flat_map(|f| output::read_with_companions("FILE", f))
        .collect();
    reads.extend(read_too.iter().map(|f| ("--impressions".into(), f.clone())));
    output::check_not_an_input(&writes, &reads, &[])?;
    for target in &written {
        output::check_file(target)?;
    }
    for target in &targets {
        distillrank::data::convert::check_data_file(target)?;
    }
    Ok((targets, created))
}

/// The docno of each document of `data` (read from `file`) in a TREC run: its line's docid
/// comment (`#docid = GX...`, as qrels name documents), where every line of the file has one and
/// no query names one twice, else `docN`, its 0-based place in its query. The teacher's and the
/// reference's score readers take either. A pipe, read once already, gives `docN`, said in a note.
fn run_docnos(file: &Path, data: &Dataset, out: &Output) -> Result<Vec<String>> {
    let by_place = || -> Vec<String> {
        (0..data.n_groups())
            .flat_map(|g| data.group(g).map(move |d| d - data.group_offsets[g]))
            .map(|i| format!("doc{i}"))
            .collect()
    };
    // Only LETOR text has docid comments: a cache or Parquet has none.
    if distillrank::data::cache::is_cache_path(file)
        || distillrank::data::parquet::is_parquet_path(file)
    {
        return Ok(by_place());
    }
    if !std::fs::metadata(file).is_ok_and(|m| m.is_file()) {
        out.note(format!(
            "{} is not a regular file (a pipe): the run names documents docN, their places in their queries, where a file's docid comments would take a second read",
            file.display()
        ));
        return Ok(by_place());
    }
    // Gzipped text is read as its text.
    let text = std::fs::File::open(file).map_err(|e| Error::io(file, e))?;
    let docids = logs::docid_comments(file, text)?;
    let named: Option<Vec<String>> = docids
        .into_iter()
        .map(|d| d.filter(|d| !d.is_empty() && !d.contains(char::is_whitespace)))
        .collect();
    let distinct = |docids: &[String]| {
        (0..data.n_groups()).all(|g| {
            let mut seen = std::collections::HashSet::new();
            docids[data.group(g)].iter().all(|d| seen.insert(d))
        })
    };
    Ok(match named {
        Some(docids) if docids.len() == data.n_docs() && distinct(&docids) => docids,
        _ => by_place(),
    })
}

/// The warning of a Parquet output `path` of data whose lines named `left_out` documents by
/// docid comments, which Parquet has no column for.
fn docids_left_out(path: &Path, left_out: usize) -> String {
    format!(
        "{}: the docid comments of {left_out} documents are not kept (Parquet has no place for them); an impressions log that names documents by docid reads a LETOR output (.txt, .txt.gz)",
        path.display()
    )
}

/// Writes each logged copy `dataset` of `input` to `target` in the format its name asks for,
/// each line of a text output with its docid comment; a Parquet output says which it leaves out.
fn write_logged(input: &Path, dataset: &Dataset, target: &Path, out: &Output) -> Result<()> {
    // Only LETOR text has docid comments: a cache or Parquet (a file or a folder of parts) has
    // none.
    let text_input = !(distillrank::data::cache::is_cache_path(input)
        || distillrank::data::parquet::is_parquet_path(input));
    let docids = if text_input {
        let text = std::fs::File::open(input).map_err(|e| Error::io(input, e))?;
        logs::docid_comments(input, text)?
    } else {
        Vec::new()
    };
    distillrank::data::convert::stage_data(target, dataset, |w| {
        dataset.write_letor_sparse(w, &docids)
    })?
    .commit()?;
    let named = docids.iter().filter(|d| d.is_some()).count();
    if named > 0 && distillrank::data::convert::writes_parquet(target) {
        out.warn(docids_left_out(target, named));
    }
    Ok(())
}

pub fn simulate_logs(args: &SimulateLogsArgs, out: &Output) -> Result<()> {
    let options = args.logs.options()?;
    // A parameter of another click model than the one simulated, as a comparison names it.
    for sentence in options.unused() {
        out.warn(sentence);
    }
    let (targets, created) = logged_targets(&args.files, &[], &args.out, impressions_path)?;
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
        // Each line keeps its docid comment, which an impressions log may name documents by.
        write_logged(&args.files[i], dataset, target, out)?;
        let mut sidecar = simulated.sidecar(i, &options, &names[i]);
        if i == 0 {
            // The training file's impressions, one line per shown document: what the methods
            // that learn from clicks read back.
            let log = impressions_path(target);
            output::stage_text(&log, |w| simulated.write_impressions(&data[0], &options, w))?
                .commit()?;
            sidecar["impressions"] = file_name(&log);
            sidecar["examination"] = serde_json::json!(simulated.clicks.examination);
        }
        sidecars.push(write_sidecar(target, sidecar)?);
    }
    created.keep();
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
    print_logged_files(
        c,
        &simulated.stats,
        &targets,
        &names,
        &impressions_path(&targets[0]),
    );
    outln!("simulated in {seconds:.2} s");
    Ok(())
}

/// The click table that `data aggregate-logs` writes beside the training file's copy.
fn click_table_path(target: &Path) -> PathBuf {
    let mut name = target.as_os_str().to_owned();
    name.push(".clicks");
    PathBuf::from(name)
}

/// A file's name without its folder, as a sidecar names the file beside it.
fn file_name(path: &Path) -> serde_json::Value {
    path.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .into()
}

/// Writes `target`'s logs sidecar, with the identity of the file it describes (its size and
/// CRC-32: a sidecar copied beside another file is refused); what `--json` reports of it.
fn write_sidecar(target: &Path, mut sidecar: serde_json::Value) -> Result<serde_json::Value> {
    sidecar["file"] = distillrank::pipeline::store::file_identity(target)?;
    let text = serde_json::to_string_pretty(&sidecar).expect("a sidecar serialises");
    output::write_atomic(&sidecar_path(target), text.as_bytes())?;
    Ok(serde_json::json!({"file": target, "sidecar": sidecar_path(target), "logs": sidecar}))
}

/// What the logs commands print of the files they wrote: the columns, then each file's
/// statistics (the training file's with `log`, the impressions or clicks written beside it).
fn print_logged_files(
    c: logs::LogColumns,
    stats: &[logs::FileLogStats],
    targets: &[PathBuf],
    names: &[String],
    log: &Path,
) {
    outln!(
        "columns: {} impressions, {} clicks, {} CTR, {} mean position, {} dwell (z: --privileged logs), {} conversions (y)",
        c.impressions, c.clicks, c.ctr, c.mean_position, c.dwell, c.conversions
    );
    for (i, ((stats, target), name)) in stats.iter().zip(targets).zip(names).enumerate() {
        let log = if i == 0 {
            format!(", {}", log.display())
        } else {
            String::new()
        };
        outln!(
            "{} -> {} (+ {}{log})",
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
}

/// `data aggregate-logs`: each file with the six log columns summed from a user's impressions log
/// (or the click tables `distillrank.dask.click_table` wrote), and the sidecar that makes it a
/// file `--privileged logs` and the click methods read, as `data simulate-logs` writes one.
pub fn aggregate_logs(args: &AggregateLogsArgs, out: &Output) -> Result<()> {
    let logs_given: Vec<PathBuf> = args
        .impressions
        .split(',')
        .map(|p| PathBuf::from(p.trim()))
        .collect();
    if logs_given.iter().any(|p| p.as_os_str().is_empty()) {
        return Err(Error::Config(format!(
            "--impressions '{}': expected one log (or click table) for every file, or one log a file, comma-separated",
            args.impressions
        )));
    }
    if logs_given.len() != 1 && logs_given.len() != args.files.len() {
        return Err(Error::Config(format!(
            "--impressions names {} logs for {} files: expected one log for every file, or one a file in the files' order",
            logs_given.len(),
            args.files.len()
        )));
    }
    let (targets, created) = logged_targets(&args.files, &logs_given, &args.out, click_table_path)?;
    let data: Vec<Dataset> = args
        .files
        .iter()
        .map(|f| load(f, None, out))
        .collect::<Result<_>>()?;
    let widest = data[0].n_features;
    for (file, name) in data.iter().zip(&args.files).skip(1) {
        if file.n_features > widest {
            return Err(Error::Config(format!(
                "{} has {} features but the training file {} only {widest}",
                name.display(),
                file.n_features,
                args.files[0].display()
            )));
        }
    }
    // One log for every file reads each query's impressions into the file that has it: a query
    // of two files would be counted into both.
    if logs_given.len() == 1 {
        let mut owner = std::collections::HashMap::new();
        for (file, path) in data.iter().zip(&args.files) {
            for &qid in &file.qids {
                if let Some(first) = owner.insert(qid, path) {
                    if first != path {
                        return Err(Error::Data(format!(
                            "qid {qid} is a query of both {} and {}: one log for every file reads each query's impressions into the file that has it; give each file its own log (--impressions A,B), or number the files' queries apart",
                            first.display(),
                            path.display()
                        )));
                    }
                }
            }
        }
    }
    let names: Vec<String> = args.files.iter().map(|f| f.display().to_string()).collect();
    let started = std::time::Instant::now();
    let mut tables = Vec::new();
    let mut columns = Vec::new();
    let mut stats = Vec::new();
    for (i, (file, path)) in data.iter().zip(&args.files).enumerate() {
        let log = &logs_given[i.min(logs_given.len() - 1)];
        let bytes =
            distillrank::data::read_capped(log, logs::MAX_IMPRESSIONS_BYTES, "an impressions log")?;
        // With one log for every file, each file's reading skips the other files' queries.
        let held_out: Vec<u64> = if logs_given.len() == 1 {
            data.iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .flat_map(|(_, d)| d.qids.iter().copied())
                .collect()
        } else {
            Vec::new()
        };
        let mut docids = || {
            let text = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
            logs::docids_of(path, text)
        };
        let table = logs::read_impressions(
            &bytes,
            &log.display().to_string(),
            file,
            &held_out,
            None,
            &mut docids,
        )?;
        tables.push(table);
    }
    // Every file's log columns after the training file's width, so that they line up, and a
    // document never shown at the same mean rank in every file.
    let shown = tables.iter().map(|t| t.shown).max().unwrap_or(1);
    for (file, table) in data.iter().zip(&tables) {
        let (logged, file_stats) = logs::logged_columns(file, table, widest, shown)?;
        columns.push(logged);
        stats.push(file_stats);
    }
    let seconds = started.elapsed().as_secs_f64();
    let c = logs::LogColumns::after(widest);
    let sources: Vec<String> = logs_given.iter().map(|p| p.display().to_string()).collect();
    let clicks_file = click_table_path(&targets[0]);
    let mut sidecars = Vec::new();
    for (i, (dataset, target)) in columns.iter().zip(&targets).enumerate() {
        write_logged(&args.files[i], dataset, target, out)?;
        let mut sidecar = logs::logged_sidecar(c, &sources, &names[i], &stats[i]);
        if i == 0 {
            // The training file's clicks by rank: what the methods that learn from clicks read.
            logs::write_click_table(&clicks_file, &tables[0])?;
            sidecar["impressions"] = file_name(&clicks_file);
        }
        sidecars.push(write_sidecar(target, sidecar)?);
    }
    created.keep();
    if out.json {
        outln!(
            "{}",
            serde_json::json!({"seconds": seconds, "files": sidecars})
        );
        return Ok(());
    }
    outln!("logs: {}", sources.join(", "));
    if tables[0].conversions.is_none() {
        outln!("  the log has no conversion column: every conversion is 0, and y with it (train on the grades with --log-labels gumbel --training-labels grades, or log conversions)");
    }
    if tables[0].dwell_ms.is_none() {
        outln!("  the log has no dwell column: every dwell is 0");
    }
    print_logged_files(c, &stats, &targets, &names, &clicks_file);
    outln!("aggregated in {seconds:.2} s");
    Ok(())
}

/// `train` trains one model alone: a teacher's or a reference's flag (of the data's group, which
/// `compare` and `sweep` share) is refused by name, where it was read and then ignored, and the
/// message names the commands that use it.
fn refuse_teacher_and_reference(args: &DataArgs) -> Result<()> {
    for (flag, _) in args.data.given() {
        let Some((_, path)) = distillrank::settings::comparison_field(flag) else {
            continue;
        };
        if path.starts_with("data.teacher.") {
            return Err(Error::Config(format!(
                "--{flag}: train trains one model alone, with no teacher; a student distilled from a teacher is compare's (compare --methods pfd --seeds 1 --out DIR saves it as DIR/students/pfd.safetensors + pfd.json, for predict and export) or Python's Ranker(method=\"pfd\").fit"
            )));
        }
        if path.starts_with("data.reference.") {
            return Err(Error::Config(format!(
                "--{flag}: train trains one model alone and compares it with nothing; a reference is a row of compare's table, with a paired test against each method (compare --{flag} ...)"
            )));
        }
    }
    Ok(())
}

pub fn train(args: &TrainArgs, out: &Output) -> Result<()> {
    refuse_teacher_and_reference(&args.data)?;
    // The training settings as a setup's fields, read by the loop as a comparison's are.
    let setup = args.training.setup()?;
    let json = serde_json::to_value(&setup).expect("a setup serialises");
    let config = TrainConfig {
        view: args.features.into(),
        seed: args.seed,
        // A model trained alone runs every epoch and keeps the best.
        patience: None,
        ..TrainConfig::of_setup(&json)?
    };
    config.validate()?;
    // A setting nothing of this run reads is named, as a comparison names it (train trains one
    // model, without a teacher: its flags have none of a teacher's settings).
    let whole = distillrank::setup::Setup {
        data: args.data.one_split_setup()?,
        methods: vec![distillrank::ranking::distill::Method::NoDistillation],
        ..setup.clone()
    };
    for sentence in whole.unused_settings() {
        out.warn(sentence);
    }
    if let Some(prefix) = &args.save {
        model_io::check_prefix(prefix)
            .map_err(|e| Error::Config(format!("--save {}", e.message())))?;
        let (weights, json) = model_io::paths(prefix);
        output::check_file(&weights)?;
        output::check_file(&json)?;
        output::check_not_an_input(
            &[("--save".into(), weights), ("--save".into(), json)],
            &args.data.files.reads(),
            &[],
        )?;
    }
    let data = prepare_data(&args.data, false, out)?;
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
    let engine = super::engine(setup.backend, out)?;
    let trained = distillrank::native::ranking::fit(
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
            let scores =
                distillrank::native::block_on(engine.score_ensemble(&trained.model, inputs))?;
            train::check_split_scores(&scores, test, "the test split")?;
            // As `eval` and `compare` say it of a model that does not rank.
            if let Some(note) = model_io::ties_note(&scores, &test.group_offsets) {
                out.warn(format!("test split: {note}"));
            }
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
            )
            .with_input_maps(&p.input_maps, config.view)
            .trained_on(&data.description, None)
            .labelled_as(&data.options)
            .named(data.feature_names.clone());
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
            "members": trained.model.len(),
            "member_valid_ndcg": trained.member_valid_ndcg,
            "parameters": trained.model.n_parameters(),
            "history": trained.history,
            "later_members": trained.later_members,
            "test": test_report,
            "saved": saved,
        });
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).expect("results serialise")
        );
    } else {
        let first = trained.history.first().map_or(0.0, |l| l.valid_ndcg);
        if trained.model.len() == 1 {
            outln!(
                "valid NDCG@{}: {:.4} after epoch 1, best {:.4} at epoch {} (the model kept)",
                config.eval_k,
                first,
                trained.best_valid_ndcg,
                trained.best_epoch
            );
        } else {
            let members: Vec<String> = trained
                .member_valid_ndcg
                .iter()
                .map(|v| format!("{v:.4}"))
                .collect();
            outln!(
                "valid NDCG@{}: {:.4} for the ensemble of {} (each member at its best epoch: {}); {} parameters in all",
                config.eval_k,
                trained.best_valid_ndcg,
                trained.model.len(),
                members.join(", "),
                trained.model.n_parameters()
            );
        }
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
    if r.ndcg.iter().all(|(_, v)| v.is_none()) {
        outln!("{name}: n/a: {}", metrics::UNMEASURABLE);
    }
    // An unmeasurable figure (no relevant document anywhere) is n/a, never 0.
    let figure = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.4}"));
    let p: Vec<String> = r
        .precision
        .iter()
        .map(|(k, v)| format!("P@{k} {}", figure(*v)))
        .collect();
    // The groups NDCG averages over, where it measured any: beside n/a figures a count would
    // say that something was measured.
    let counted = if r.ndcg.iter().any(|(_, v)| v.is_some()) {
        format!("  ({} groups count for NDCG)", r.ndcg_groups)
    } else {
        String::new()
    };
    outln!(
        "{name}: MAP {}  MRR {}  {}{counted}",
        figure(r.map),
        figure(r.mrr),
        p.join("  "),
    );
}

/// The scores of every document of `file` (read as `data`) by the tree model at `model`, in the
/// file's order, as its library scores them; with a warning when its objective does not rank.
fn forest_scores(
    model: &Path,
    file: &Path,
    data: &Dataset,
    columns: super::ColumnsArg,
    absent: super::AbsentArg,
    out: &Output,
) -> Result<Vec<f64>> {
    let forest = distillrank::forest::Forest::read(model)?;
    if let Some(note) = &forest.note {
        out.warn(format!("{}: {note}", model.display()));
    }
    let offset = forest.feature_offset(columns.into(), data.n_features, model, "--columns")?;
    if let Some(note) = forest.columns_note(columns.into(), data.n_features, offset, "--columns") {
        out.note(format!("{}: {note}", model.display()));
    }
    forest.check_data_names(
        &file.display().to_string(),
        data.feature_names.as_deref(),
        offset,
        &format!("the model {}", model.display()),
        "--columns",
    )?;
    distillrank::data::check_rereadable(file, "a tree model scoring it")?;
    let text = std::fs::File::open(file).map_err(|e| Error::io(file, e))?;
    let scored = forest.score_letor(file, text, offset, absent.into())?;
    if let Some(note) = forest.absent_note(absent.into(), scored.left_out) {
        out.warn(format!("{}: {note} (--absent)", model.display()));
    }
    let scores = scored.scores;
    if scores.len() != data.n_docs() {
        return Err(Error::Data(format!(
            "{}: {} documents scored, {} read: the file changed while it was read",
            file.display(),
            scores.len(),
            data.n_docs()
        )));
    }
    Ok(scores)
}

/// The scores of `kept`'s documents, a selection of whole groups of `data`, from the scores of
/// every document of `data`.
fn kept_scores(scores: &[f64], data: &Dataset, kept: &Dataset) -> Vec<f32> {
    let at: std::collections::HashMap<u64, usize> = data
        .qids
        .iter()
        .enumerate()
        .map(|(g, &q)| (q, data.group_offsets[g]))
        .collect();
    let mut out = Vec::with_capacity(kept.n_docs());
    for g in 0..kept.n_groups() {
        let start = at[&kept.qids[g]];
        out.extend(
            scores[start..start + kept.group(g).len()]
                .iter()
                .map(|&s| s as f32),
        );
    }
    out
}

/// Whether `--model` names a tree model trained elsewhere rather than a saved model's files: told
/// by its first bytes, which a pipe would give up before the model is read, so a pipe is refused.
fn is_tree_model(model: &Path) -> Result<bool> {
    distillrank::data::check_rereadable(model, "telling a tree model from a saved model")?;
    Ok(distillrank::forest::looks_like_tree_model(model))
}

/// Names the flags among `ids` given (`given`, by their ids) that this run does not read, and
/// why, as a comparison names its unused settings.
fn warn_unread(given: &[String], ids: &[&str], why: &str, out: &Output) {
    let unread: Vec<String> = ids
        .iter()
        .filter(|id| given.iter().any(|g| g == *id))
        .map(|id| format!("--{}", id.replace('_', "-")))
        .collect();
    if !unread.is_empty() {
        let verb = if unread.len() == 1 { "is" } else { "are" };
        out.warn(format!("{} {verb} not used: {why}", unread.join(", ")));
    }
}

/// The flags of `eval` and `predict` that say how a tree model reads a file.
const TREE_FLAGS: [&str; 2] = ["columns", "absent"];

pub fn eval(args: &EvalArgs, given: &[String], out: &Output) -> Result<()> {
    if args.labels == LabelsArg::Graded {
        warn_unread(
            given,
            &["tau_target", "t", "data_seed", "min_group_size", "split"],
            "read only with --labels binary, to draw the Gumbel labels",
            out,
        );
    }
    if is_tree_model(&args.model)? {
        return eval_forest(args, given, out);
    }
    warn_unread(
        given,
        &TREE_FLAGS,
        "read only for a LightGBM or XGBoost model, and this is a saved distillrank model, which records its columns",
        out,
    );
    let (model, config) = distillrank::pipeline::run::load_model(&args.model, true)?;
    let data = load(&args.file, args.query.as_deref(), out)?;
    let (data, labels) = eval_labels(args, given, config.labelling, data, out)?;
    let inputs = model_io::model_inputs(&data, &config, &args.file, args.allow_missing_features)?;
    let engine = super::engine(args.backend, out)?;
    let scores = distillrank::native::block_on(engine.score_ensemble(
        &model,
        Inputs::dense(&inputs, data.n_docs()).with_groups(&data.group_offsets),
    ))?;
    model_io::check_scores(&scores, &args.model)?;
    if let Some(warning) = model_io::constant_scores(&scores, &data.group_offsets, &args.model) {
        out.warn(warning);
    }
    show_eval(args, &scores, &labels, &data, out)
}

/// The file's labels as `eval --labels` asks: the grades, or the binary labels training gives it
/// (with the groups it keeps). A setting not `given` is the one the model's training used
/// (`recorded`); a model that records none (a tree model) takes the defaults, tau_target from
/// this file's largest grade, and says so.
fn eval_labels(
    args: &EvalArgs,
    given: &[String],
    recorded: Option<model_io::Labelling>,
    data: Dataset,
    out: &Output,
) -> Result<(Dataset, Vec<f32>)> {
    Ok(match args.labels {
        LabelsArg::Graded => {
            let labels = data.grades.iter().map(|&g| g as f32).collect();
            (data, labels)
        }
        LabelsArg::Binary => {
            let flag = |id: &str| given.iter().any(|g| g == id);
            let options = match recorded {
                Some(model) => PrepareOptions {
                    min_group_size: if flag("min_group_size") {
                        args.min_group_size
                    } else {
                        model.min_group_size
                    },
                    t: args.t.unwrap_or(model.t),
                    tau_target: args.tau_target.unwrap_or(model.tau_target),
                    seed: if flag("data_seed") {
                        args.data_seed
                    } else {
                        model.data_seed
                    },
                    ..Default::default()
                },
                None => {
                    let largest = data.grades.iter().copied().max().unwrap_or(0);
                    if args.tau_target.is_none() {
                        out.note(format!(
                            "the model records no Gumbel labelling (a tree model, one trained on the grades or a label column, or one saved before models recorded it): tau_target {} from this file's largest grade ({largest}); give --tau-target (and --t, --data-seed, --min-group-size) to draw the labels a training gave",
                            files_tau_target(largest)
                        ));
                    }
                    PrepareOptions {
                        min_group_size: args.min_group_size,
                        t: args.t.unwrap_or(FILES_T),
                        tau_target: args.tau_target.unwrap_or_else(|| files_tau_target(largest)),
                        seed: args.data_seed,
                        ..Default::default()
                    }
                }
            };
            let split = match args.split {
                SplitArg::Valid => SPLIT_VALID,
                SplitArg::Test => SPLIT_TEST,
            };
            let (kept, labels, report) = label_like_prepare(&data, split, &options)?;
            out.note(format!("{}: {report}", args.file.display()));
            (kept, labels)
        }
    })
}

/// `eval` with a tree model trained elsewhere.
fn eval_forest(args: &EvalArgs, given: &[String], out: &Output) -> Result<()> {
    let data = load(&args.file, args.query.as_deref(), out)?;
    let all = forest_scores(
        &args.model,
        &args.file,
        &data,
        args.columns,
        args.absent,
        out,
    )?;
    let full = data.clone();
    let (data, labels) = eval_labels(args, given, None, data, out)?;
    let scores = kept_scores(&all, &full, &data);
    show_eval(args, &scores, &labels, &data, out)
}

/// The metrics of `scores` against `labels`, printed or as JSON.
fn show_eval(
    args: &EvalArgs,
    scores: &[f32],
    labels: &[f32],
    data: &Dataset,
    out: &Output,
) -> Result<()> {
    let convention: IdcgZero = args.idcg_zero.into();
    let report = metrics::report(scores, labels, &data.group_offsets, convention);
    if out.json {
        outln!("{}", serde_json::to_string_pretty(&serde_json::json!({"file": args.file.display().to_string(), "labels": format!("{:?}", args.labels).to_lowercase(), "metrics": report})).expect("serialise"));
    } else {
        print_report(&args.file.display().to_string(), &report);
    }
    Ok(())
}

/// The files `--model` names, which no output may replace: the name given (a tree model's file)
/// and a saved model's `.safetensors` and `.json`.
pub fn model_reads(model: &Path) -> Vec<output::Named> {
    let (weights, json) = model_io::paths(model);
    [model.to_path_buf(), weights, json]
        .into_iter()
        .map(|file| ("--model".to_string(), file))
        .collect()
}

pub fn predict(args: &PredictArgs, given: &[String], out: &Output) -> Result<()> {
    if !is_tree_model(&args.model)? {
        warn_unread(
            given,
            &TREE_FLAGS,
            "read only for a LightGBM or XGBoost model, and this is a saved distillrank model, which records its columns",
            out,
        );
    }
    if let Some(run) = &args.run {
        output::check_file(run)?;
        let mut reads = model_reads(&args.model);
        reads.extend(output::read_with_companions("FILE", &args.file));
        reads.extend(
            args.query
                .iter()
                .map(|q| ("--query".to_string(), q.clone())),
        );
        output::check_not_an_input(&[("--run".into(), run.clone())], &reads, &[])?;
    }
    let data = load(&args.file, args.query.as_deref(), out)?;
    // A tree model's scores in full (f64); a saved MLP's in f32, from the engine.
    let (scores, exact): (Vec<f32>, Option<Vec<f64>>) = if is_tree_model(&args.model)? {
        let all = forest_scores(
            &args.model,
            &args.file,
            &data,
            args.columns,
            args.absent,
            out,
        )?;
        (all.iter().map(|&s| s as f32).collect(), Some(all))
    } else {
        let (model, config) = distillrank::pipeline::run::load_model(&args.model, true)?;
        let inputs =
            model_io::model_inputs(&data, &config, &args.file, args.allow_missing_features)?;
        let engine = super::engine(args.backend, out)?;
        let scores = distillrank::native::block_on(engine.score_ensemble(
            &model,
            Inputs::dense(&inputs, data.n_docs()).with_groups(&data.group_offsets),
        ))?;
        model_io::check_scores(&scores, &args.model)?;
        (scores, None)
    };
    if let Some(warning) = model_io::constant_scores(&scores, &data.group_offsets, &args.model) {
        out.warn(warning);
    }
    // Each score as written: a tree model's in f64, a saved model's in f32, in the fewest digits
    // that read back to the same number (two scores that differ never print as a tie).
    let shown = |doc: usize| match &exact {
        Some(exact) => exact[doc].to_string(),
        None => scores[doc].to_string(),
    };
    let docnos = match &args.run {
        Some(_) => run_docnos(&args.file, &data, out)?,
        None => Vec::new(),
    };
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
                            "{} Q0 {} {} {} distillrank",
                            data.qids[g],
                            docnos[docs.start + i],
                            rank + 1,
                            shown(docs.start + i)
                        )
                        .map_err(io)?;
                    }
                }
            }
            None => match &exact {
                Some(exact) => {
                    for s in exact {
                        writeln!(w, "{s}").map_err(io)?;
                    }
                }
                None => {
                    for s in &scores {
                        writeln!(w, "{s}").map_err(io)?;
                    }
                }
            },
        }
        w.flush().map_err(io)
    };
    match &args.run {
        Some(path) => {
            let mut failed = None;
            let staged = output::stage_text(path, |w| {
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
            if out.json {
                outln!(
                    "{}",
                    serde_json::json!({"file": args.file.display().to_string(), "model": args.model.display().to_string(), "run": path.display().to_string(), "queries": data.n_groups(), "docs": data.n_docs()})
                );
            }
        }
        // One object: the file's query id of each document beside its score, in the file's order.
        None if out.json => {
            let qid: Vec<u64> = (0..data.n_groups())
                .flat_map(|g| std::iter::repeat_n(data.qids[g], data.group(g).len()))
                .collect();
            let scores: serde_json::Value = match &exact {
                Some(exact) => exact.clone().into(),
                None => scores
                    .iter()
                    .map(|&s| f64::from(s))
                    .collect::<Vec<_>>()
                    .into(),
            };
            outln!(
                "{}",
                serde_json::json!({"file": args.file.display().to_string(), "model": args.model.display().to_string(), "queries": data.n_groups(), "docs": data.n_docs(), "qid": qid, "scores": scores})
            );
        }
        None => write(
            &PathBuf::from("<stdout>"),
            &mut std::io::BufWriter::new(std::io::stdout().lock()),
        )?,
    }
    Ok(())
}

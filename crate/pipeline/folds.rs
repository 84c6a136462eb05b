//! The LETOR protocol: a comparison on each of five folds, reported as the mean over the folds,
//! with the paired tests on the per-query results pooled over the five test folds.
//!
//! A folds directory (`data.folds`) holds either `Fold1..Fold5/{train,vali,test}.txt` (the
//! MSLR-WEB layout) or LETOR 4.0's five parts `S1.txt..S5.txt` (each file may be gzipped,
//! `.txt.gz`, or Parquet, `.parquet`, as a split's file may), rotated into train, validation
//! and test as its readme defines ([`ROTATION`]: Fold1 trains on S1+S2+S3, validates on S4 and
//! tests on S5). A fold's training parts are read as one file ([`Joined`]), so that preparation,
//! the prepared cache and a teacher trained elsewhere see one training file, as on one split.
//! Every fold is the setup's comparison with its data the fold's files ([`fold_setup`]); `{fold}`
//! in the teacher's or the reference's file names is the fold's number, for models trained per
//! fold.

use super::preparation::PreparedData;
use super::store::{Role, Store, Text};
use super::Reporter;
use crate::data::Dataset;
use crate::error::{Error, Result};
use crate::ranking::experiment::{Comparison, MethodRuns, ModelRun, SeedRun};
use crate::setup::{DataSource, Setup, FOLDS_LAYOUT};
use crate::stats::PairedTest;

/// LETOR 4.0's rotation of the parts S1..S5: (training parts, validation part, test part) of
/// Fold1..Fold5.
pub const ROTATION: [([usize; 3], usize, usize); 5] = [
    ([1, 2, 3], 4, 5),
    ([2, 3, 4], 5, 1),
    ([3, 4, 5], 1, 2),
    ([4, 5, 1], 2, 3),
    ([5, 1, 2], 3, 4),
];

/// One fold's files.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Fold {
    /// 1..=5.
    pub fold: usize,
    /// Its training file, or the parts read as one.
    pub train: Vec<String>,
    pub valid: String,
    pub test: String,
}

impl Fold {
    /// `e`, an error of this fold's preparation or comparison, with the fold and its files
    /// named where the message may not say them (a setting, the joined training parts, a split
    /// without a y = 1); a divergence names the fold after the model.
    pub fn named_in(&self, e: Error) -> Error {
        let files = || {
            let parts: Vec<String> = self
                .train
                .iter()
                .map(|p| crate::error::printable(p))
                .collect();
            format!(
                "fold {} (training {}, validation {}, test {})",
                self.fold,
                parts.join(" + "),
                crate::error::printable(&self.valid),
                crate::error::printable(&self.test)
            )
        };
        // A split's flag is no remedy here: the folds name every split. The training parts
        // joined go by a name no file has (`DIR/S1+S2+S3.txt`): a message names the parts.
        let joined = (self.train.len() > 1).then(|| {
            let parts: Vec<String> = self
                .train
                .iter()
                .map(|p| crate::error::printable(p))
                .collect();
            (
                crate::error::printable(&self.train_name()),
                parts.join(" + "),
            )
        });
        let unflagged = |message: String| {
            let message = message.replace(" (--valid)", "").replace(" (--test)", "");
            match &joined {
                Some((name, parts)) => message.replace(name.as_str(), &format!("({parts})")),
                None => message,
            }
        };
        match e {
            Error::Config(message) => Error::Config(format!("{}: {}", files(), unflagged(message))),
            Error::Data(message) => Error::Data(format!("{}: {}", files(), unflagged(message))),
            parse @ Error::Parse { .. } => without_query_flags(parse),
            diverged @ Error::Diverged { .. } => {
                diverged.diverged_in(|what| format!("{what}, fold {}", self.fold))
            }
            other => other,
        }
    }

    /// The name its training file goes by: its only file, or its parts joined
    /// (`DIR/S1+S2+S3.txt`), as the reports name it.
    pub fn train_name(&self) -> String {
        match self.train.as_slice() {
            [one] => one.clone(),
            parts => {
                // `S1` of `S1.txt`, `S1.txt.gz` or `S1.parquet`.
                let stems: Vec<&str> = parts
                    .iter()
                    .map(|p| {
                        let name = std::path::Path::new(p)
                            .file_name()
                            .and_then(|s| s.to_str())
                            .unwrap_or(p);
                        FOLD_FILE_FORMATS
                            .iter()
                            .find_map(|format| name.strip_suffix(format))
                            .unwrap_or(name)
                    })
                    .collect();
                let dir = std::path::Path::new(&parts[0])
                    .parent()
                    .map(|d| d.join(format!("{}.txt", stems.join("+"))));
                dir.map_or_else(|| stems.join("+"), |d| d.display().to_string())
            }
        }
    }
}

/// A refusal of a folds part's text without the flags that name a split's `.query` file, which
/// the folds refuse: a part without qid: takes its groups from the file beside it alone.
pub fn without_query_flags(e: Error) -> Error {
    match e {
        Error::Parse { at, message } => Error::Parse {
            at,
            message: message.replace(
                &format!(" (or {})", crate::data::letor::QUERY_FILE_FLAGS),
                "",
            ),
        },
        other => other,
    }
}

/// What the folds run on, in a line: the directory's Fold1..Fold5, or LETOR 4.0's rotation of its
/// parts S1..S5 (a directory may hold both, as MQ2008's release does).
pub fn layout_note(folds: &[Fold]) -> String {
    match folds.first() {
        Some(fold) if fold.train.len() == 1 => {
            let dir = std::path::Path::new(&fold.test)
                .parent()
                .and_then(|p| p.parent());
            format!(
                "folds: Fold1..Fold5 of {}, each with train, vali and test",
                crate::error::printable(&dir.map_or(String::new(), |d| d.display().to_string()))
            )
        }
        Some(fold) => {
            let dir = std::path::Path::new(&fold.test).parent();
            format!(
                "folds: LETOR 4.0's rotation of the parts S1..S5 of {}",
                crate::error::printable(&dir.map_or(String::new(), |d| d.display().to_string()))
            )
        }
        None => "folds: none".into(),
    }
}

/// The names a fold's file may go by, in the formats the readers take: LETOR text, gzipped or
/// not, or Parquet.
pub const FOLD_FILE_FORMATS: [&str; 3] = [".txt", ".txt.gz", ".parquet"];

/// The five folds of `dir` (`exists` says whether a file is there): `Fold1..Fold5` where the
/// directory has all five, otherwise the rotation of the parts `S1..S5`. Each file is the one
/// of its names ([`FOLD_FILE_FORMATS`]) that is there; one there under two names, and a missing
/// one, are named.
pub fn folds_of(dir: &str, exists: &dyn Fn(&str) -> bool) -> Result<Vec<Fold>> {
    let look = |files: Vec<[String; 3]>| -> Vec<Found> {
        files
            .into_iter()
            .map(|names| Found::of(names, exists))
            .collect()
    };
    let parts = look(part_files(dir));
    let by_fold: Vec<Vec<Found>> = (1..=5).map(|k| look(fold_files(dir, k))).collect();
    let whole = |files: &[Found]| files.iter().all(|f| !matches!(f, Found::Missing(_)));
    // The layout whose files are all there is read; a file there in two formats is refused
    // only in the layout that reads it.
    let chosen =
        |files: &[Found]| -> Result<Vec<String>> { files.iter().map(Found::file).collect() };
    if by_fold.iter().all(|files| whole(files)) {
        return by_fold
            .iter()
            .enumerate()
            .map(|(i, files)| {
                let [train, valid, test]: [String; 3] =
                    chosen(files)?.try_into().expect("three files a fold");
                Ok(Fold {
                    fold: i + 1,
                    train: vec![train],
                    valid,
                    test,
                })
            })
            .collect();
    }
    if whole(&parts) {
        return Ok(rotated(&chosen(&parts)?));
    }
    // Neither whole: the layout the directory comes closer to names its missing file.
    let flat: Vec<Found> = by_fold.into_iter().flatten().collect();
    let layout = if parts.iter().any(|f| !matches!(f, Found::Missing(_))) {
        &parts
    } else {
        &flat
    };
    let missing = layout
        .iter()
        .find_map(|f| match f {
            Found::Missing(names) => Some(names),
            _ => None,
        })
        .expect("a layout that is not whole has a missing file");
    // Named in the format of the layout's files that are there (`S3.parquet` among Parquet
    // parts), else as text.
    let format = layout.iter().find_map(Found::format).unwrap_or(0);
    // A name that is there but is not a file (a folder, a link that leads to no file) is told
    // so, not called missing.
    let there = missing
        .iter()
        .find(|n| cfg!(not(target_arch = "wasm32")) && std::fs::symlink_metadata(n).is_ok());
    let (name, what) = match there {
        Some(name) => (
            name,
            "not a file (a folder, or a link that leads to no file)",
        ),
        None => (&missing[format], "no such file"),
    };
    Err(Error::Config(format!(
        "{}: {what}; a folds directory (--folds) holds {FOLDS_LAYOUT}",
        crate::error::printable(name)
    )))
}

/// A fold's file among its names (its name in each of [`FOLD_FILE_FORMATS`]).
enum Found {
    /// There under one name.
    There(String),
    /// There under none: every name.
    Missing([String; 3]),
    /// There under two names (or more): the first two.
    Twice(String, String),
}

impl Found {
    fn of(names: [String; 3], exists: &dyn Fn(&str) -> bool) -> Found {
        let there: Vec<&String> = names.iter().filter(|n| exists(n)).collect();
        match there.as_slice() {
            [] => Found::Missing(names),
            [one] => Found::There((*one).clone()),
            [first, second, ..] => Found::Twice((*first).clone(), (*second).clone()),
        }
    }

    /// The file read: refused where it is there in two formats.
    fn file(&self) -> Result<String> {
        match self {
            Found::There(name) => Ok(name.clone()),
            Found::Twice(first, second) => Err(Error::Config(format!(
                "{} and {} are both there: a folds directory holds each file once, in one format; remove one",
                crate::error::printable(first),
                crate::error::printable(second)
            ))),
            Found::Missing(names) => Err(Error::Config(format!(
                "{}: no such file",
                crate::error::printable(&names[0])
            ))),
        }
    }

    /// The index in [`FOLD_FILE_FORMATS`] of the name it is there under.
    fn format(&self) -> Option<usize> {
        match self {
            Found::There(name) => FOLD_FILE_FORMATS
                .iter()
                .rposition(|format| name.ends_with(format)),
            _ => None,
        }
    }
}

/// `dir/name`, as the reports name it.
fn in_dir(dir: &str, name: String) -> String {
    std::path::Path::new(dir).join(name).display().to_string()
}

/// `dir/stem` in each of [`FOLD_FILE_FORMATS`].
fn in_formats(dir: &str, stem: &str) -> [String; 3] {
    FOLD_FILE_FORMATS.map(|format| in_dir(dir, format!("{stem}{format}")))
}

/// Fold `k`'s train, vali and test files in the MSLR-WEB layout, each by its names.
fn fold_files(dir: &str, k: usize) -> Vec<[String; 3]> {
    ["train", "vali", "test"]
        .iter()
        .map(|split| in_formats(dir, &format!("Fold{k}/{split}")))
        .collect()
}

/// LETOR 4.0's five parts, S1..S5, each by its names.
fn part_files(dir: &str) -> Vec<[String; 3]> {
    (1..=5).map(|i| in_formats(dir, &format!("S{i}"))).collect()
}

/// Where `dir` holds the five parts and some file of every one of Fold1..Fold5, but not all
/// fifteen: the folds run are the parts' rotation, and the user is told which Fold file sent
/// them there. (MQ2008's release with Fold1 alone beside the parts is not told.)
pub fn layout_warning(dir: &str, exists: &dyn Fn(&str) -> bool) -> Option<String> {
    let any = |names: &[String; 3]| names.iter().any(|n| exists(n));
    let by_fold: Vec<Vec<[String; 3]>> = (1..=5).map(|k| fold_files(dir, k)).collect();
    let every_fold_begun = by_fold.iter().all(|files| files.iter().any(any));
    if !every_fold_begun || !part_files(dir).iter().all(any) {
        return None;
    }
    let missing = by_fold.iter().flatten().find(|names| !any(names))?;
    Some(format!(
        "{}: no such file, so the folds run are LETOR 4.0's rotation of its parts S1..S5, not the directory's Fold1..Fold5",
        crate::error::printable(&missing[0])
    ))
}

/// Where `dir` holds both layouts whole as LETOR text, the first Fold file that is not what LETOR
/// 4.0's rotation of the parts makes it (by size: MQ2008's release has each fold's files the
/// parts' bytes): the folds run are the directory's Fold1..Fold5, and its parts say otherwise.
#[cfg(not(target_arch = "wasm32"))]
pub fn layouts_disagree(dir: &str) -> Option<String> {
    let size = |name: &str| {
        std::fs::metadata(in_dir(dir, name.to_string()))
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    };
    let parts: Vec<u64> = (1..=5)
        .map(|i| size(&format!("S{i}.txt")))
        .collect::<Option<_>>()?;
    let mut found = Vec::new();
    for (k, (train, valid, test)) in ROTATION.iter().enumerate() {
        for (split, named, bytes) in [
            (
                "train",
                train.to_vec(),
                train.iter().map(|&s| parts[s - 1]).sum(),
            ),
            ("vali", vec![*valid], parts[valid - 1]),
            ("test", vec![*test], parts[test - 1]),
        ] {
            found.push((format!("Fold{}/{split}.txt", k + 1), named, bytes));
        }
    }
    let sizes: Vec<u64> = found
        .iter()
        .map(|(name, _, _)| size(name))
        .collect::<Option<_>>()?;
    let ((name, named, bytes), size) = found
        .iter()
        .zip(sizes)
        .find(|((_, _, bytes), size)| bytes != size)?;
    let parts: Vec<String> = named.iter().map(|s| format!("S{s}.txt")).collect();
    Some(format!(
        "{}: not {} {} that LETOR 4.0's rotation makes it ({size} bytes, where {} {bytes}): the directory's two layouts disagree, and the folds run are its Fold1..Fold5",
        crate::error::printable(&in_dir(dir, name.clone())),
        if parts.len() == 1 { "the part" } else { "the parts" },
        parts.join("+"),
        if parts.len() == 1 { "it holds" } else { "they hold" },
    ))
}

/// LETOR 4.0's five folds of the parts `parts` (S1..S5, in order), by [`ROTATION`].
fn rotated(parts: &[String]) -> Vec<Fold> {
    ROTATION
        .iter()
        .enumerate()
        .map(|(i, (train, valid, test))| Fold {
            fold: i + 1,
            train: train.iter().map(|&s| parts[s - 1].clone()).collect(),
            valid: parts[valid - 1].clone(),
            test: parts[test - 1].clone(),
        })
        .collect()
}

/// The five folds of the bundled MQ2008's parts, named as [`BundledParts`] reads them
/// (`bundled:mq2008/S1.txt`, ...).
pub fn bundled_folds() -> Vec<Fold> {
    let parts: Vec<String> = (1..=5)
        .map(|k| format!("{}S{k}.txt", crate::data::bundled::MQ2008_PARTS))
        .collect();
    rotated(&parts)
}

/// The folds a setup's data run on: the bundled MQ2008's (`--bundled mq2008-folds`), or those
/// of its folds directory (native builds; the page has no directories).
pub fn folds_of_data(data: &crate::setup::DataSetup) -> Result<Vec<Fold>> {
    if data.source == DataSource::Mq2008Folds {
        return Ok(bundled_folds());
    }
    let dir = data.folds.as_deref().ok_or_else(|| {
        Error::Config("the setup names no folds (data.folds, or the source mq2008_folds)".into())
    })?;
    #[cfg(not(target_arch = "wasm32"))]
    return folds_on_disk(dir);
    #[cfg(target_arch = "wasm32")]
    Err(Error::Config(format!(
        "--folds {}: the page runs the folds of the bundled MQ2008 (its data source \"MQ2008, five folds\"); a folds directory is read by the CLI and Python",
        crate::error::printable(dir)
    )))
}

/// The folds of `setup.data.folds` on disk.
#[cfg(not(target_arch = "wasm32"))]
pub fn folds_on_disk(dir: &str) -> Result<Vec<Fold>> {
    if dir.trim().is_empty() {
        return Err(Error::Config(format!(
            "the folds directory's name is empty (--folds): name a directory of {FOLDS_LAYOUT}"
        )));
    }
    let path = std::path::Path::new(dir);
    if !path.is_dir() {
        let what = if path.exists() {
            "not a directory"
        } else {
            "no such directory"
        };
        return Err(Error::Config(format!(
            "{}: {what}; --folds names a directory of {FOLDS_LAYOUT}",
            crate::error::printable(dir)
        )));
    }
    folds_of(dir, &fold_file_there)
}

/// Whether a fold's file is there on disk: a file, or under a `.parquet` name a folder of
/// Parquet part files, which the readers take as one file.
#[cfg(not(target_arch = "wasm32"))]
pub fn fold_file_there(name: &str) -> bool {
    let path = std::path::Path::new(name);
    path.is_file() || (name.ends_with(".parquet") && path.is_dir())
}

/// Fold `fold`'s comparison: `setup` with its data the fold's files, `{fold}` in the teacher's
/// and the reference's files replaced by the fold's number, and no folds of its own.
pub fn fold_setup(setup: &Setup, fold: &Fold) -> Setup {
    let mut s = setup.clone();
    s.data.folds = None;
    s.data.source = DataSource::files(
        fold.train_name(),
        Some(fold.valid.clone()),
        Some(fold.test.clone()),
    );
    let number = fold.fold.to_string();
    for outside in [&mut s.data.teacher, &mut s.data.reference] {
        for name in [&mut outside.model, &mut outside.scores]
            .into_iter()
            .flatten()
        {
            *name = name.replace("{fold}", &number);
        }
    }
    s
}

/// Refuses, before any fold's data are read, a teacher's or reference's file that is missing
/// (`exists` says whether a file is there: on disk, or uploaded to the page): named with
/// `{fold}`, on some fold (the option, the fold and the file); named without it, the one file
/// every fold reads. A model's name is one file; a scores list is `TRAIN,VALID,TEST`, of which a
/// reference's TRAIN is never read on folds (every fold has its validation file).
pub fn check_fold_files(
    setup: &Setup,
    folds: &[Fold],
    exists: &dyn Fn(&str) -> bool,
) -> Result<()> {
    for (noun, outside) in [
        ("teacher", &setup.data.teacher),
        ("reference", &setup.data.reference),
    ] {
        for (kind, name) in [("model", &outside.model), ("scores", &outside.scores)] {
            let Some(pattern) = name.as_deref() else {
                continue;
            };
            if !pattern.contains("{fold}") {
                let files: Vec<&str> = if kind == "model" {
                    vec![pattern.trim()]
                } else {
                    let skip = usize::from(noun == "reference");
                    pattern.split(',').map(str::trim).skip(skip).collect()
                };
                if let Some(file) = files.into_iter().find(|f| !f.is_empty() && !exists(f)) {
                    return Err(Error::Config(format!(
                        "--{noun}-{kind} {}: no such file {}; every fold reads it",
                        crate::error::printable(pattern),
                        crate::error::printable(file)
                    )));
                }
                continue;
            }
            for fold in folds {
                let named = pattern.replace("{fold}", &fold.fold.to_string());
                let files: Vec<&str> = if kind == "model" {
                    vec![named.trim()]
                } else {
                    let skip = usize::from(noun == "reference");
                    named.split(',').map(str::trim).skip(skip).collect()
                };
                let missing = files.into_iter().find(|f| !f.is_empty() && !exists(f));
                if let Some(file) = missing {
                    return Err(Error::Config(format!(
                        "--{noun}-{kind} {}: fold {}'s file {}: no such file; every fold's file must be there before the folds run",
                        crate::error::printable(pattern),
                        fold.fold,
                        crate::error::printable(file)
                    )));
                }
            }
        }
    }
    Ok(())
}

/// What the folds' setup should be told before it runs: a teacher or reference model (or
/// scores) named without `{fold}` is the same file on every fold, so a model trained on one
/// fold's test part scores that part as training data it has seen.
pub fn warnings(setup: &Setup) -> Vec<String> {
    let mut out = Vec::new();
    #[cfg(not(target_arch = "wasm32"))]
    if let Some(dir) = setup.data.folds.as_deref() {
        out.extend(layout_warning(dir, &fold_file_there));
        out.extend(layouts_disagree(dir));
    }
    for (noun, outside) in [
        ("teacher", &setup.data.teacher),
        ("reference", &setup.data.reference),
    ] {
        let named = [("model", &outside.model), ("scores", &outside.scores)]
            .into_iter()
            .filter_map(|(kind, name)| Some((kind, name.as_deref()?)));
        for (kind, list) in named {
            // A scores list names a file per split: each is one.
            let names: Vec<&str> = match kind {
                "scores" => list.split(',').map(str::trim).collect(),
                _ => vec![list.trim()],
            };
            for name in names.into_iter().filter(|n| !n.is_empty()) {
                if !name.contains("{fold}") {
                    let example = match kind {
                        "scores" => "',dir/vali{fold}.scores,dir/test{fold}.scores'",
                        _ => "'dir/fold{fold}.txt'",
                    };
                    out.push(format!(
                        "the {noun}'s file {} is the same on every fold: unless it was trained on none of the five test parts, it has seen some fold's test queries; name one file per fold with {{fold}} (--{noun}-{kind} {example})",
                        crate::error::printable(name)
                    ));
                }
            }
        }
    }
    out
}

/// Each query of `data` as its qid and a fingerprint of its documents (their grades and feature
/// values, in order, a row's trailing zeros left out as a file that leaves out its last
/// columns does): two files' queries with both equal are the same query, whatever the files'
/// formats and widths.
fn queries_of(data: &Dataset) -> std::collections::HashSet<(u64, u64)> {
    use std::hash::{Hash as _, Hasher as _};
    (0..data.n_groups())
        .map(|g| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            for d in data.group(g) {
                let row = data.row(d);
                let width = row.iter().rposition(|&v| v != 0.0).map_or(0, |i| i + 1);
                data.grades[d].hash(&mut h);
                width.hash(&mut h);
                h.write(bytemuck::cast_slice(&row[..width]));
            }
            (data.qids[g], h.finish())
        })
        .collect()
}

/// Refuses, before the first fold trains, two folds' test files that share a query (its qid
/// with the same documents): the pooled tests would count it twice, and their intervals would be
/// too narrow. LETOR's five parts hold distinct queries, so a shared one is a copied or misnamed
/// file. Only the test files are read here (the parts, in LETOR 4.0's layout: every two of
/// them are one fold's test and another split, so this finds a copied part too); a fold's test or
/// validation queries in its own training file are refused as the fold is prepared
/// ([`shared_queries_in_fold`]). Files without qids (a `.query` file's group sizes) are not
/// compared, and the reporter is told so.
pub fn check_distinct_test_queries(
    folds: &[Fold],
    store: &mut dyn Store,
    reporter: &mut dyn Reporter,
) -> Result<()> {
    reporter.note("checking that the folds' test files hold distinct queries");
    // Each test file read so far: its fold, its name and its queries.
    type Queries = std::collections::HashSet<(u64, u64)>;
    let mut tests: Vec<(usize, &str, Queries)> = Vec::new();
    let mut unnumbered = Vec::new();
    for fold in folds {
        let data = store.load(&fold.test, Role::Test, reporter)?;
        if numbered_by_query_file(&fold.test, &data) {
            unnumbered.push(crate::error::printable(&fold.test));
            continue;
        }
        let queries = queries_of(&data);
        drop(data);
        for (other, name, theirs) in &tests {
            if let Some(qid) = queries.intersection(theirs).map(|&(q, _)| q).min() {
                return Err(Error::Data(format!(
                    "qid {qid} is in the test files of fold {other} ({}) and fold {} ({}), with the same documents: the folds' test files hold distinct queries, each counted once in the tests pooled over the folds",
                    crate::error::printable(name),
                    fold.fold,
                    crate::error::printable(&fold.test)
                )));
            }
        }
        tests.push((fold.fold, &fold.test, queries));
    }
    if !unnumbered.is_empty() {
        reporter.note(&format!(
            "{} number their queries by a .query file: no qids to tell two files' queries apart, so they are not checked for shared queries",
            unnumbered.join(", ")
        ));
    }
    Ok(())
}

/// A fold's refusal of a split that holds queries of another (preparation's warning of it,
/// [`super::preparation::is_shared_queries`]): within a fold the splits are distinct parts, so
/// the queries measured would be queries the model trained or was chosen on.
pub fn shared_queries_in_fold(data: &PreparedData) -> Result<()> {
    match data
        .prepared
        .warnings
        .iter()
        .find(|w| super::preparation::is_shared_queries(w))
    {
        Some(warning) => Err(Error::Data(format!(
            "{warning}; a fold's splits hold distinct queries (is a file copied, or named twice?)"
        ))),
        None => Ok(()),
    }
}

/// The reporter of a fold's preparation: everything passes to `inner` but preparation's warning
/// of a split that holds another's queries, which [`shared_queries_in_fold`] then refuses in the
/// same words.
pub struct FoldPreparation<'a> {
    pub inner: &'a mut dyn Reporter,
}

impl Reporter for FoldPreparation<'_> {
    fn note(&mut self, text: &str) {
        self.inner.note(text);
    }
    fn warn(&mut self, text: &str) {
        if !super::preparation::is_shared_queries(text) {
            self.inner.warn(text);
        }
    }
    fn progress(&mut self, label: &str, unit: &str, done: u64, total: u64) {
        self.inner.progress(label, unit, done, total);
    }
    fn epoch(
        &mut self,
        model: &crate::ranking::experiment::Training,
        log: &crate::ranking::train::EpochLog,
    ) {
        self.inner.epoch(model, log);
    }
}

/// A store that reads the bundled MQ2008's parts ([`crate::data::bundled::MQ2008_PARTS`]: the
/// files of [`bundled_folds`]) from the library itself, and every other name, and everything
/// else, from `inner`. A fold's training parts joined (`bundled:mq2008/S1+S2+S3.txt`) are read
/// as one file too, so that a fold's setup needs no [`Joined`] around it.
pub struct BundledParts<'a> {
    pub inner: &'a mut dyn Store,
}

impl BundledParts<'_> {
    /// The bundled parts `name` is: one (`S2.txt`), or several joined (`S1+S2+S3.txt`).
    fn parts(name: &str) -> Option<Vec<usize>> {
        use crate::data::bundled::{mq2008_part_of, MQ2008_PARTS};
        let stem = name.strip_prefix(MQ2008_PARTS)?.strip_suffix(".txt")?;
        stem.split('+')
            .map(|part| mq2008_part_of(&format!("{MQ2008_PARTS}{part}.txt")))
            .collect()
    }
}

impl Store for BundledParts<'_> {
    fn load(&mut self, name: &str, role: Role, reporter: &mut dyn Reporter) -> Result<Dataset> {
        let Some(parts) = Self::parts(name) else {
            return self.inner.load(name, role, reporter);
        };
        let datasets = parts
            .iter()
            .map(|&k| crate::data::bundled::mq2008_part(k))
            .collect::<Result<Vec<_>>>()?;
        let names: Vec<String> = parts
            .iter()
            .map(|k| format!("{}S{k}.txt", crate::data::bundled::MQ2008_PARTS))
            .collect();
        concat(&names, datasets)
    }

    fn sidecar(&mut self, name: &str) -> Result<Option<serde_json::Value>> {
        match Self::parts(name) {
            Some(_) => Ok(None),
            None => self.inner.sidecar(name),
        }
    }

    fn stamps(&mut self, name: &str, role: Role) -> Result<Option<String>> {
        match Self::parts(name) {
            // The parts are the library's own: the same bytes in every build of this version.
            Some(_) => Ok(Some(format!("{name}@{}", env!("CARGO_PKG_VERSION")))),
            None => self.inner.stamps(name, role),
        }
    }

    fn read_into(&mut self, scratch: crate::data::prepare::Scratch) {
        self.inner.read_into(scratch);
    }

    fn given_teacher_scores(&mut self, name: &str) -> Option<(Vec<f64>, Vec<Option<u64>>)> {
        self.inner.given_teacher_scores(name)
    }

    fn file(&mut self, name: &str, cap: u64, what: &str) -> Result<Vec<u8>> {
        self.inner.file(name, cap, what)
    }

    fn check_file(&mut self, name: &str, what: &str) -> Result<()> {
        self.inner.check_file(name, what)
    }

    fn text(&mut self, name: &str, role: Role) -> Result<Text<'_>> {
        let Some(parts) = Self::parts(name) else {
            return self.inner.text(name, role);
        };
        let mut bytes = Vec::new();
        for k in parts {
            bytes.extend(crate::data::bundled::mq2008_part_text(k)?);
        }
        Ok((Box::new(std::io::Cursor::new(bytes)), None))
    }
}

/// A store that reads a fold's training parts as one file named `name` (queries in part order);
/// every other name, and everything else, from `inner`.
pub struct Joined<'a> {
    pub inner: &'a mut dyn Store,
    pub name: String,
    pub parts: Vec<String>,
    /// Whether a part may leave out last columns that another part has (read as 0), as a
    /// validation or test file may with the setting of that name.
    pub allow_missing_features: bool,
}

impl Joined<'_> {
    fn joins(&self, name: &str) -> bool {
        self.parts.len() > 1 && name == self.name
    }
}

impl Store for Joined<'_> {
    fn load(&mut self, name: &str, role: Role, reporter: &mut dyn Reporter) -> Result<Dataset> {
        if !self.joins(name) {
            return self.inner.load(name, role, reporter);
        }
        let mut datasets = Vec::with_capacity(self.parts.len());
        let mut groups_before = 0;
        for part in &self.parts {
            let mut data = self.inner.load(part, role, reporter)?;
            // A part without qid: takes its groups from PART.query, numbered 1..n by the reader:
            // numbered on from the parts before it, as the parts' text joined with their .query
            // files is ([`Store::text`]), so that two such parts do not share numbers.
            if numbered_by_query_file(part, &data) {
                for (g, qid) in data.qids.iter_mut().enumerate() {
                    *qid = (groups_before + g + 1) as u64;
                }
            }
            groups_before += data.n_groups();
            datasets.push(data);
        }
        if !self.allow_missing_features {
            check_part_widths(&self.parts, &datasets)?;
        }
        concat(&self.parts, datasets)
    }

    fn sidecar(&mut self, name: &str) -> Result<Option<serde_json::Value>> {
        if self.joins(name) {
            return Ok(None);
        }
        self.inner.sidecar(name)
    }

    fn stamps(&mut self, name: &str, role: Role) -> Result<Option<String>> {
        if !self.joins(name) {
            return self.inner.stamps(name, role);
        }
        let mut all = Vec::new();
        for part in &self.parts {
            match self.inner.stamps(part, role)? {
                Some(stamp) => all.push(stamp),
                None => return Ok(None),
            }
        }
        Ok(Some(all.join(";")))
    }

    fn read_into(&mut self, scratch: crate::data::prepare::Scratch) {
        self.inner.read_into(scratch);
    }

    fn given_teacher_scores(&mut self, name: &str) -> Option<(Vec<f64>, Vec<Option<u64>>)> {
        self.inner.given_teacher_scores(name)
    }

    fn file(&mut self, name: &str, cap: u64, what: &str) -> Result<Vec<u8>> {
        self.inner.file(name, cap, what)
    }

    fn check_file(&mut self, name: &str, what: &str) -> Result<()> {
        self.inner.check_file(name, what)
    }

    fn text(&mut self, name: &str, role: Role) -> Result<Text<'_>> {
        if !self.joins(name) {
            return self.inner.text(name, role);
        }
        // Each part's text in turn, read whole (a part is a fifth of a small LETOR set; the large
        // ones ship their folds whole), a gzipped part unpacked: the reader tells the format by
        // the first bytes of all.
        let mut bytes = Vec::new();
        let mut queries: Option<Vec<usize>> = None;
        for (i, part) in self.parts.iter().enumerate() {
            let path = std::path::Path::new(part);
            if path.is_dir() {
                return Err(parquet_part(part));
            }
            let (mut text, query) = self.inner.text(part, role)?;
            let mut raw = Vec::new();
            text.read_to_end(&mut raw).map_err(|e| Error::io(path, e))?;
            if crate::data::parquet::is_parquet(&raw) {
                return Err(parquet_part(part));
            }
            if raw.starts_with(&[0x1f, 0x8b]) {
                flate2::read::MultiGzDecoder::new(raw.as_slice())
                    .read_to_end(&mut bytes)
                    .map_err(|e| Error::io(path, e))?;
            } else {
                bytes.extend(raw);
            }
            if !bytes.is_empty() && !bytes.ends_with(b"\n") {
                bytes.push(b'\n');
            }
            match (i, query, &mut queries) {
                (0, Some(q), q0) => *q0 = Some(q),
                (_, Some(q), Some(all)) => all.extend(q),
                (_, None, None) => {}
                _ => {
                    return Err(Error::Config(format!(
                        "{}: some of a fold's training parts have .query files and some do not: give every part its group sizes, or none",
                        crate::error::printable(part)
                    )))
                }
            }
        }
        Ok((Box::new(std::io::Cursor::new(bytes)), queries))
    }
}

use std::io::Read as _;

/// The refusal of a fold's Parquet training part (a file, or a folder of part files) where its
/// text is read again: the training parts are read as one LETOR text, for the tree model of a
/// teacher or reference, their score files or a log's docids.
fn parquet_part(part: &str) -> Error {
    Error::Config(format!(
        "{}: a Parquet training part, and a teacher's or reference's tree model or score files (or a log's docids) read a fold's training parts again as one LETOR text: give the parts as LETOR text (distillrank data convert PART -o S1.txt), or the folds as Fold1..Fold5, each fold's training file whole",
        crate::error::printable(part)
    ))
}

/// Whether the groups of `data`, read from the file `part`, came from `PART.query` (the file has
/// no qid:): the reader numbers them 1..n, and a `.query` file is beside it.
pub(crate) fn numbered_by_query_file(part: &str, data: &Dataset) -> bool {
    // The page's folds are the bundled MQ2008's, with qids: no file is beside them.
    let beside = cfg!(not(target_arch = "wasm32"))
        && std::path::Path::new(&format!("{part}.query")).is_file();
    beside && data.qids.iter().zip(1u64..).all(|(&q, n)| q == n)
}

/// Refuses training parts of different widths, naming a narrower part and the widest: a fold's
/// parts are one dataset's, so that a part with fewer columns is another dataset's, or leaves
/// its last columns out (sparse zeros), which `allow_missing_features` reads as 0.
fn check_part_widths(names: &[String], parts: &[Dataset]) -> Result<()> {
    let Some(widest) = (0..parts.len()).max_by_key(|&i| (parts[i].n_features, usize::MAX - i))
    else {
        return Ok(());
    };
    let nf = parts[widest].n_features;
    match parts.iter().position(|d| d.n_features < nf) {
        Some(narrow) => Err(Error::Data(format!(
            "{}: the data have {} feature columns (highest index), the fold's training part {} has {nf}: a fold's parts are parts of one dataset. If this part only leaves its last columns out (sparse zeros), allow_missing_features true (--allow-missing-features true) reads them as 0",
            crate::error::printable(&names[narrow]),
            parts[narrow].n_features,
            crate::error::printable(&names[widest]),
        ))),
        None => Ok(()),
    }
}

/// The parts' datasets as one, in order: the widest part's width (a narrower part's last
/// columns read as 0), every query once.
fn concat(names: &[String], parts: Vec<Dataset>) -> Result<Dataset> {
    let width = parts.iter().map(|d| d.n_features).max().unwrap_or(0);
    let mut seen: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    let mut out = Dataset {
        n_features: width,
        features: Vec::new().into(),
        grades: Vec::new(),
        group_offsets: vec![0],
        qids: Vec::new(),
        source: None,
        feature_names: None,
    };
    // Parts that name their columns (Parquet) name them alike, each against the widest named
    // part's names, which the joined data keep where that part is as wide as they are.
    let widest_named = (0..parts.len())
        .filter(|&i| parts[i].feature_names.is_some())
        .max_by_key(|&i| (parts[i].n_features, usize::MAX - i));
    if let Some(kept) = widest_named {
        let theirs = format!(
            "the fold's training part {}",
            crate::error::printable(&names[kept])
        );
        for (part, name) in parts.iter().zip(names) {
            part.check_columns_named_as(name, parts[kept].feature_names.as_deref(), &theirs)?;
        }
        if parts[kept].n_features == width {
            out.feature_names = parts[kept].feature_names.clone();
        }
    }
    let mut features = Vec::with_capacity(parts.iter().map(|d| d.n_docs()).sum::<usize>() * width);
    for (i, part) in parts.iter().enumerate() {
        for (g, &qid) in part.qids.iter().enumerate() {
            if let Some(&j) = seen.get(&qid) {
                return Err(Error::Data(format!(
                    "qid {qid} is in both {} and {}: a fold's training parts hold distinct queries",
                    crate::error::printable(&names[j]),
                    crate::error::printable(&names[i])
                )));
            }
            seen.insert(qid, i);
            for d in part.group(g) {
                let row = part.row(d);
                features.extend_from_slice(row);
                features.extend(std::iter::repeat_n(0.0, width - row.len()));
                out.grades.push(part.grades[d]);
            }
            out.group_offsets.push(out.grades.len());
            out.qids.push(qid);
        }
    }
    out.features = features.into();
    Ok(out)
}

/// One fold's comparison.
pub struct FoldRun {
    pub fold: Fold,
    pub setup: Setup,
    pub data: PreparedData,
    pub comparison: Comparison,
}

/// The folds' comparisons as one, for the paired tests: each method's seed s holds its
/// students' per-query NDCG@8 on every fold's test queries, in fold order (the LETOR
/// protocol's pooled test queries). Only the per-query figures are meaningful.
pub fn pooled(runs: &[FoldRun]) -> Comparison {
    let Some(first) = runs.first() else {
        return Comparison {
            methods: Vec::new(),
            students: Vec::new(),
        };
    };
    let methods = first
        .comparison
        .methods
        .iter()
        .map(|r| MethodRuns {
            method: r.method,
            runs: (0..r.runs.len())
                .map(|s| {
                    let each = || {
                        runs.iter().filter_map(move |f| {
                            f.comparison.get(r.method).and_then(|m| m.runs.get(s))
                        })
                    };
                    SeedRun {
                        seed: r.runs[s].seed,
                        student: ModelRun {
                            per_query: each()
                                .flat_map(|run| run.student.per_query.clone())
                                .collect(),
                            per_query_graded: each()
                                .flat_map(|run| run.student.per_query_graded.clone())
                                .collect(),
                            history: Vec::new(),
                            later_members: Vec::new(),
                            ..r.runs[s].student.clone()
                        },
                        teachers: Vec::new(),
                    }
                })
                .collect(),
        })
        .collect();
    Comparison {
        methods,
        students: Vec::new(),
    }
}

/// The reference model's per-query figures over every fold's test queries, in fold order.
pub fn pooled_reference(runs: &[FoldRun]) -> Option<ModelRun> {
    let each: Option<Vec<ModelRun>> = runs
        .iter()
        .map(|f| super::report::reference_run(&f.data, &f.setup))
        .collect();
    let each = each?;
    let first = each.first()?.clone();
    Some(ModelRun {
        per_query: each.iter().flat_map(|r| r.per_query.clone()).collect(),
        per_query_graded: each
            .iter()
            .flat_map(|r| r.per_query_graded.clone())
            .collect(),
        ..first
    })
}

/// The paired tests on the pooled test queries: every method against no distillation and those
/// its entry names, and against the reference model when there is one.
pub fn tests(runs: &[FoldRun]) -> Vec<PairedTest> {
    super::report::tests_with(&pooled(runs), pooled_reference(runs).as_ref())
}

/// A method's figure on each fold (NDCG@`k` on y, or on the grades): the mean over its seeds.
fn per_fold(
    runs: &[FoldRun],
    method: crate::ranking::distill::Method,
    k: usize,
    graded: bool,
) -> Vec<Option<f64>> {
    runs.iter()
        .map(|f| {
            let m = f.comparison.get(method)?;
            let stat = if graded {
                m.student_graded_ndcg(k)
            } else {
                m.student_ndcg(k)
            };
            stat.map(|(mean, _)| mean)
        })
        .collect()
}

/// The mean of the folds' figures, with their standard deviation; None if a fold has none.
fn over_folds(values: &[Option<f64>]) -> serde_json::Value {
    let all: Option<Vec<f64>> = values.iter().copied().collect();
    match all.filter(|v| !v.is_empty()) {
        Some(v) => {
            let (mean, std) = crate::metrics::mean_std(&v);
            serde_json::json!({"mean": mean, "std_over_folds": std, "per_fold": values})
        }
        None => serde_json::json!({"mean": null, "per_fold": values}),
    }
}

/// What the folds found, as the folds run's `results.json` holds it: each fold's files and test
/// queries; per method, NDCG@k on y and on the grades as the mean over the folds of each fold's
/// mean over seeds (`per_fold` beside it); the reference's the same; the paired tests on the
/// pooled test queries with their sentences and verdicts; and [`warnings`], when there are any.
pub fn results_json(setup: &Setup, runs: &[FoldRun]) -> serde_json::Value {
    let tests = tests(runs);
    let pooled = pooled(runs);
    let metric = pooled.verdict_metric();
    let reference = runs.first().and_then(|f| f.data.reference.as_deref());
    let mut methods = serde_json::Map::new();
    for r in &pooled.methods {
        let mut m = serde_json::Map::new();
        for k in crate::metrics::NDCG_CUTOFFS {
            m.insert(
                format!("ndcg@{k}"),
                over_folds(&per_fold(runs, r.method, k, false)),
            );
        }
        m.insert(
            "graded_ndcg@8".into(),
            over_folds(&per_fold(runs, r.method, 8, true)),
        );
        methods.insert(r.method.name().into(), m.into());
    }
    let folds: Vec<serde_json::Value> = runs
        .iter()
        .map(|f| {
            let test = f
                .data
                .prepared
                .test
                .as_ref()
                .unwrap_or(&f.data.prepared.valid);
            serde_json::json!({
                "fold": f.fold.fold,
                "train": f.fold.train,
                "valid": f.fold.valid,
                "test": f.fold.test,
                "test_queries": test.n_groups(),
                "privileged_columns": f.data.prepared.privileged_columns,
            })
        })
        .collect();
    let pooled_queries = pooled
        .methods
        .first()
        .and_then(|r| r.runs.first())
        .map_or(0, |run| run.student.per_query.len());
    let mut results = serde_json::json!({
        "protocol": "the LETOR folds: a comparison on each fold; figures are the mean over the folds of each fold's mean over seeds; paired tests on the per-query results pooled over the folds' test queries",
        "folds": folds,
        "pooled_test_queries": pooled_queries,
        "methods": methods,
        "tests": tests,
        "verdict_metric": metric,
        "sentences": tests.iter().filter(|t| t.metric == metric).map(crate::stats::sentence).collect::<Vec<_>>(),
        "verdicts": super::report::verdicts(&tests, metric, reference),
        "setup": setup,
    });
    let warned = warnings(setup);
    if !warned.is_empty() {
        results["warnings"] = warned.into();
    }
    if let Some(reference) = reference {
        let figures = |k: usize, graded: bool| -> Vec<Option<f64>> {
            runs.iter()
                .map(|f| {
                    let run = super::report::reference_run(&f.data, &f.setup)?;
                    if graded {
                        run.test_graded_ndcg
                            .iter()
                            .find(|(c, _)| *c == k)
                            .and_then(|(_, v)| *v)
                    } else {
                        run.test.ndcg_at(k)
                    }
                })
                .collect()
        };
        let mut m = serde_json::Map::new();
        m.insert("label".into(), reference.label().into());
        for k in crate::metrics::NDCG_CUTOFFS {
            m.insert(format!("ndcg@{k}"), over_folds(&figures(k, false)));
        }
        m.insert("graded_ndcg@8".into(), over_folds(&figures(8, true)));
        results["reference"] = m.into();
    }
    results
}

//! A teacher trained elsewhere (`data.teacher`), or a reference model the students are measured
//! against (`data.reference`, the LightGBM model a team runs today): a LightGBM or XGBoost model
//! ([`crate::forest`]), or scores from files. Its scores of every document of the data files are
//! computed once, on the CPU, when the data are prepared, and matched to the prepared splits'
//! documents by qid ([`ExternalScores`]): both engines, every seed and every method that fits it
//! read the same scores.
//!
//! A model reads each file's LETOR text again in f64 ([`crate::data::letor::scan_letor`]), so
//! that it scores as its own library does. What it reads is found from the columns its trees
//! split on, against the comparison's privileged split: the report names them, and a teacher
//! that splits on no privileged column is a regular-feature teacher.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::store::{Role, Store};
use super::Reporter;
use crate::data::prepare::{Prepared, RankingSet};
use crate::error::{Error, Result};
use crate::forest::Forest;
use crate::ranking::distill::{ExternalScores, TeacherInputs};
use crate::setup::{DataSetup, DataSource};

/// One data file as the teacher saw it: its score of each document, in the file's order, and
/// the file's groups by qid (start, length).
struct FileScores {
    scores: Vec<f64>,
    groups: HashMap<u64, (usize, usize)>,
    name: PathBuf,
}

/// What a model trained elsewhere is to the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outside {
    /// `data.teacher`: its scores of the training split are soft labels.
    Teacher,
    /// `data.reference`: its scores of the validation and test splits are a row of the
    /// comparison; its training scores are not read.
    Reference,
}

impl Outside {
    /// Its name in messages and in its flags (`--teacher-model`, `--reference-scores`).
    pub fn noun(self) -> &'static str {
        match self {
            Outside::Teacher => "teacher",
            Outside::Reference => "reference",
        }
    }

    /// Its section of `data`.
    fn of(self, data: &DataSetup) -> &crate::setup::ExternalTeacher {
        match self {
            Outside::Teacher => &data.teacher,
            Outside::Reference => &data.reference,
        }
    }
}

/// The model and the scores `data` names as `role` (at most one of them; None where it names
/// neither), each refused where the run cannot read it: both named, scores of more than three
/// splits, or generated data, which no model trained elsewhere has seen.
fn named_files(
    role: Outside,
    data: &DataSetup,
) -> Result<Option<(Option<String>, Option<String>)>> {
    let noun = role.noun();
    let outside = role.of(data);
    if outside.is_none() {
        return Ok(None);
    }
    let named = |s: &Option<String>| {
        s.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let (model, scores) = (named(&outside.model), named(&outside.scores));
    if model.is_some() && scores.is_some() {
        return Err(Error::Config(format!(
            "both a {noun} model (--{noun}-model) and {noun} scores (--{noun}-scores) are named: name one"
        )));
    }
    if let Some(list) = &scores {
        let parts = list.split(',').count();
        if parts > 3 {
            return Err(Error::Config(format!(
                "--{noun}-scores {}: {parts} comma-separated parts, expected at most 3: TRAIN,VALID,TEST in the data files' order",
                crate::error::printable(list)
            )));
        }
    }
    if matches!(data.source, DataSource::Synthetic { .. }) {
        return Err(Error::Config(format!(
            "an external {noun} scores data files, and these data are generated: write them with distillrank data synth, train the {noun} on that file, and compare on it"
        )));
    }
    Ok(Some((model, scores)))
}

/// The files each split comes from (training, validation, test): None for a split held out of
/// the training file, and for every split of the bundled data.
fn split_files(data: &DataSetup) -> [Option<String>; 3] {
    match &data.source {
        DataSource::Files {
            train, valid, test, ..
        } => [Some(train.clone()), valid.clone(), test.clone()],
        _ => [None, None, None],
    }
}

/// The file whose scores score split `role` (0 training, 1 validation, 2 test): its own, or,
/// for a split held out of the training file, the training file's.
fn source_of(role: usize, names: &[Option<String>; 3]) -> usize {
    if names[role].is_some() || names[0].is_none() {
        role
    } else {
        0
    }
}

/// Refuses, before any data are read, a file of a teacher or a reference that the run would
/// read and that is not there ([`Store::check_file`]): found once the data were prepared, it
/// would cost their reading first, or hide behind a problem of theirs. `needs_test`: whether the
/// run scores a test split. Scores the door gave beside its data (Python's arrays) are no file.
pub fn check_named_files(data: &DataSetup, needs_test: bool, store: &mut dyn Store) -> Result<()> {
    let names = split_files(data);
    for role in [Outside::Teacher, Outside::Reference] {
        let noun = role.noun();
        let Some((model, scores)) = named_files(role, data)? else {
            continue;
        };
        if let Some(path) = &model {
            store.check_file(path, &format!("a tree model (--{noun}-model)"))?;
        }
        let Some(list) = &scores else {
            continue;
        };
        // The splits whose scores the run reads: a reference's training scores are read only
        // where a split is held out of the training file.
        let first = usize::from(role == Outside::Reference);
        let last = if needs_test || names[2].is_some() {
            2
        } else {
            1
        };
        let mut sources: Vec<usize> = (first..=last).map(|r| source_of(r, &names)).collect();
        sources.sort_unstable();
        sources.dedup();
        for source in sources {
            let given = names[source]
                .as_deref()
                .is_some_and(|n| store.given_teacher_scores(n).is_some());
            let part = list.split(',').map(str::trim).nth(source).unwrap_or("");
            if given || part.is_empty() {
                continue;
            }
            let split = ["training", "validation", "test"][source];
            store.check_file(
                part,
                &format!("the {noun}'s scores of the {split} file (--{noun}-scores)"),
            )?;
        }
    }
    Ok(())
}

/// The external teacher's scores of `prepared`'s splits, when `data` names one.
pub fn external_scores(
    data: &DataSetup,
    prepared: &Prepared,
    source_features: usize,
    source_names: Option<(&str, &[String])>,
    store: &mut dyn Store,
    reporter: &mut dyn Reporter,
) -> Result<Option<ExternalScores>> {
    outside_scores(
        Outside::Teacher,
        data,
        prepared,
        source_features,
        source_names,
        store,
        reporter,
    )
}

/// The reference model's scores of `prepared`'s validation and test splits, when `data` names
/// one (its `train` is empty).
pub fn reference_scores(
    data: &DataSetup,
    prepared: &Prepared,
    source_features: usize,
    source_names: Option<(&str, &[String])>,
    store: &mut dyn Store,
    reporter: &mut dyn Reporter,
) -> Result<Option<ExternalScores>> {
    outside_scores(
        Outside::Reference,
        data,
        prepared,
        source_features,
        source_names,
        store,
        reporter,
    )
}

/// The scores of the model `data` names as `role`, matched to `prepared`'s splits.
/// `source_features`: the source's columns; `source_names`: the file that names them and its
/// names (`PreparedData::names_from`), which a tree model trained on named columns must match.
fn outside_scores(
    role: Outside,
    data: &DataSetup,
    prepared: &Prepared,
    source_features: usize,
    source_names: Option<(&str, &[String])>,
    store: &mut dyn Store,
    reporter: &mut dyn Reporter,
) -> Result<Option<ExternalScores>> {
    let noun = role.noun();
    let Some((model, scores)) = named_files(role, data)? else {
        return Ok(None);
    };
    let teacher = role.of(data);
    let names = split_files(data);
    // The model, read and checked once, and its column of feature 1.
    let forest = match &model {
        Some(path) => {
            let bytes = store.file(path, crate::forest::MAX_FILE_BYTES, "a tree model")?;
            let forest = Forest::parse(Path::new(path), &bytes)?;
            let setting = format!("--{noun}-columns");
            let offset = forest.feature_offset(
                teacher.columns,
                source_features,
                Path::new(path),
                &setting,
            )?;
            if let Some(note) =
                forest.columns_note(teacher.columns, source_features, offset, &setting)
            {
                reporter.note(&format!("external {noun}: {path}: {note}"));
            }
            // A model trained on named columns reads the data's by their names.
            if let Some((file, source_names)) = source_names {
                forest.check_data_names(
                    file,
                    Some(source_names),
                    offset,
                    &format!("the {noun} model {}", crate::error::printable(path)),
                    &setting,
                )?;
            }
            Some((forest, offset))
        }
        None => None,
    };
    let started = crate::clock::Instant::now();
    let mut files: Vec<(usize, FileScores)> = Vec::new();
    let mut docs = 0usize;
    // Documents that leave out an entry where the reading of absent entries matters.
    let mut left_out = 0usize;
    let mut file_of = |role: usize, store: &mut dyn Store| -> Result<usize> {
        let source = source_of(role, &names);
        if let Some(i) = files.iter().position(|(s, _)| *s == source) {
            return Ok(i);
        }
        // Scores the door gave beside its data (Python's arrays).
        if let Some((given, qids)) = names[source]
            .as_deref()
            .and_then(|n| store.given_teacher_scores(n))
        {
            let name = PathBuf::from(names[source].clone().unwrap_or_default());
            if given.len() != qids.len() {
                return Err(Error::Config(format!(
                    "{} {noun} scores for the {} documents of {}: expected one score a document",
                    given.len(),
                    qids.len(),
                    name.display()
                )));
            }
            if let Some(i) = given.iter().position(|v| !v.is_finite()) {
                return Err(Error::Config(format!(
                    "the {noun}'s score of document {} of {} is {}: expected a finite number",
                    i + 1,
                    name.display(),
                    given[i]
                )));
            }
            let file = FileScores {
                groups: groups(&name, &qids, None)?,
                scores: given,
                name,
            };
            check_magnitude(&file, noun)?;
            docs += file.scores.len();
            files.push((source, file));
            return Ok(files.len() - 1);
        }
        let roles = [Role::Train, Role::Valid, Role::Test];
        let (name, text, query) = match &names[source] {
            Some(name) => {
                let (text, query) = store.text(name, roles[source])?;
                (PathBuf::from(name), text, query)
            }
            None => {
                let (name, bytes) = crate::data::bundled::mq2008_text(source);
                (name, Box::new(bytes) as Box<dyn std::io::Read>, None)
            }
        };
        let file = match &forest {
            Some((forest, offset)) => {
                let scored = forest.score_letor(&name, text, *offset, teacher.absent)?;
                left_out += scored.left_out;
                FileScores {
                    groups: groups(&name, &scored.qids, query)?,
                    scores: scored.scores,
                    name,
                }
            }
            None => {
                let list = scores.as_deref().unwrap_or_default();
                // An empty part names no file: `,VALID,TEST` leaves the training file's out.
                let path = list
                    .split(',')
                    .map(str::trim)
                    .nth(source)
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| {
                        Error::Config(format!(
                            "--{noun}-scores {} names no scores of the {} file {}, which the run needs: give TRAIN,VALID,TEST in the data files' order (a split held out of the training file is scored in TRAIN's)",
                            crate::error::printable(list),
                            ["training", "validation", "test"][source],
                            name.display()
                        ))
                    })?;
                let rows = document_rows(&name, text)?;
                // A score line is a few bytes, a run's line a few dozen: a file much larger
                // than the documents need is not a scores file, and is refused before it is
                // read.
                let what = format!(
                    "the scores of the {} documents of {} (one score a line, or a TREC run)",
                    rows.len(),
                    name.display()
                );
                let cap = 256 * (rows.len() as u64 + 1);
                let bytes = gunzipped(Path::new(path), store.file(path, cap, &what)?, cap, &what)?;
                read_scores(Path::new(path), &name, &bytes, rows, query)?
            }
        };
        check_magnitude(&file, noun)?;
        docs += file.scores.len();
        files.push((source, file));
        Ok(files.len() - 1)
    };
    // A reference is measured, not learned from: its training scores are not read.
    let train = (role == Outside::Teacher)
        .then(|| file_of(0, store))
        .transpose()?;
    let valid = file_of(1, store)?;
    let test = prepared
        .test
        .as_ref()
        .map(|_| file_of(2, store))
        .transpose()?;
    let seconds = started.elapsed();
    let on = |i: usize, set: &RankingSet| match_split(&files[i].1, set, noun);
    let (train, valid, test) = (
        train
            .map(|i| on(i, &prepared.train))
            .transpose()?
            .unwrap_or_default(),
        on(valid, &prepared.valid)?,
        match (test, &prepared.test) {
            (Some(i), Some(set)) => Some(on(i, set)?),
            _ => None,
        },
    );
    let described = match (&model, &forest) {
        (Some(path), Some((forest, offset))) => {
            describe_model(Path::new(path), forest, *offset, prepared)
        }
        _ => Described {
            description: format!("scores from {}", scores.unwrap_or_default()),
            split_features: None,
            privileged_features: Vec::new(),
            reads: None,
            note: None,
        },
    };
    let reads = match (&described.split_features, &described.reads) {
        (Some(split), Some(TeacherInputs::Regular)) => format!(
            "it splits on {} features, none of them privileged: {}",
            split.len(),
            match role {
                Outside::Teacher => "a regular-feature teacher (self-distillation in kind)",
                Outside::Reference => "it reads x alone, as a model served without z does",
            }
        ),
        (Some(split), _) => format!(
            "it splits on {} features, {} of them privileged ({})",
            split.len(),
            described.privileged_features.len(),
            crate::data::prepare::column_ranges(&described.privileged_features)
        ),
        _ => "what it reads is not known".to_string(),
    };
    reporter.note(&format!(
        "external {noun}: {}; {reads} ({docs} documents read and scored in {seconds:.1} s)",
        described.description
    ));
    if let Some(note) = &described.note {
        reporter.warn(&format!("external {noun}: {note}"));
    }
    if let Some(note) = forest
        .as_ref()
        .and_then(|(f, _)| f.absent_note(teacher.absent, left_out))
    {
        reporter.warn(&format!("external {noun}: {note} (--{noun}-absent)"));
    }
    // Scores alike within every query rank nothing: a teacher's soft labels then say nothing
    // of order (a constant model, or scores of another file's order).
    let ranks_nothing = |scores: &[f32], set: &RankingSet| {
        !scores.is_empty()
            && (0..set.n_groups()).all(|g| {
                let group = &scores[set.group(g)];
                group.iter().all(|&s| s == group[0])
            })
    };
    let learned_from = if role == Outside::Teacher {
        (&train, &prepared.train, "training")
    } else {
        (&valid, &prepared.valid, "validation")
    };
    if ranks_nothing(learned_from.0, learned_from.1) {
        reporter.warn(&format!(
            "external {noun}: its scores of the {} split are the same for every document of each query: it ranks nothing{}",
            learned_from.2,
            if role == Outside::Teacher {
                ", and its soft labels teach no order"
            } else {
                ""
            }
        ));
    }
    if role == Outside::Reference && !described.privileged_features.is_empty() {
        reporter.warn(&format!(
            "the reference splits on {} privileged feature(s) ({}), which serving does not have: it is no model a team could serve on x alone, and the students are measured against more than x",
            described.privileged_features.len(),
            crate::data::prepare::column_ranges(&described.privileged_features)
        ));
    }
    Ok(Some(ExternalScores {
        train,
        valid,
        test,
        reads: described.reads,
        description: described.description,
        library: forest.as_ref().map(|(f, _)| f.library.name().to_string()),
        split_features: described.split_features,
        privileged_features: described.privileged_features,
        note: described.note,
        // Scores read from files were computed elsewhere: no time of ours to report.
        ms_per_1k_docs: model.is_some().then(|| 1e6 * seconds / docs.max(1) as f64),
    }))
}

/// What a model is and reads.
struct Described {
    description: String,
    split_features: Option<Vec<usize>>,
    privileged_features: Vec<usize>,
    reads: Option<TeacherInputs>,
    note: Option<String>,
}

/// The model in words, with the features it splits on and what of them is privileged.
fn describe_model(model: &Path, forest: &Forest, offset: u32, prepared: &Prepared) -> Described {
    let split: Vec<usize> = forest
        .split_columns()
        .into_iter()
        .map(|c| c + offset as usize)
        .collect();
    let privileged: Vec<usize> = split
        .iter()
        .copied()
        .filter(|f| prepared.privileged_columns.contains(f))
        .collect();
    let regular = split.iter().any(|f| prepared.regular_columns.contains(f));
    let reads = match (regular, !privileged.is_empty()) {
        (_, false) => TeacherInputs::Regular,
        (false, true) => TeacherInputs::Privileged,
        (true, true) => TeacherInputs::Both,
    };
    Described {
        description: format!("{} ({})", model.display(), forest.describe()),
        split_features: Some(split),
        privileged_features: privileged,
        reads: Some(reads),
        note: forest.note.clone(),
    }
}

/// Each document of the data file `name`, in its order: its qid, docid comment and line.
type DocumentRows = Vec<(Option<u64>, Option<String>, u64)>;

/// The documents of the LETOR text `text` of `name` ([`DocumentRows`]).
fn document_rows(name: &Path, text: Box<dyn std::io::Read + '_>) -> Result<DocumentRows> {
    let mut rows = Vec::new();
    crate::data::letor::scan_letor(
        name,
        text,
        crate::data::letor::DEFAULT_MAX_FEATURE_INDEX,
        &mut |row| {
            rows.push((row.qid, row.docid.map(str::to_string), row.line));
            Ok(())
        },
    )?;
    Ok(rows)
}

/// A scores file's text: `bytes` themselves, or, where they are gzip (a run written to a `.gz`
/// name, as `predict --run run.txt.gz` writes it), what they decompress to, within `cap`.
pub(crate) fn gunzipped(path: &Path, bytes: Vec<u8>, cap: u64, what: &str) -> Result<Vec<u8>> {
    use std::io::Read as _;
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes);
    }
    let mut text = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes.as_slice())
        .take(cap + 1)
        .read_to_end(&mut text)
        .map_err(|e| {
            let words = format!(
                "{}; expected {what}",
                crate::data::letor::not_whole_gzip(&e)
            );
            Error::io(path, std::io::Error::new(e.kind(), words))
        })?;
    if text.len() as u64 > cap {
        return Err(crate::data::too_large(path, None, cap, what));
    }
    Ok(text)
}

/// Scores read from the file `path` (its `bytes`) for the documents `rows` of the data file
/// `name`: one score a line in the file's order, or a TREC run (`qid Q0 docno rank score tag`)
/// whose docno is the document's `docid` comment or `docN`, its 0-based place in its query (as
/// `distillrank predict --run` writes).
fn read_scores(
    path: &Path,
    name: &Path,
    bytes: &[u8],
    rows: DocumentRows,
    query: Option<Vec<usize>>,
) -> Result<FileScores> {
    let qids: Vec<Option<u64>> = rows.iter().map(|r| r.0).collect();
    // A byte-order mark, as some editors write, is not part of the first line.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|_| {
        Error::parse(
            path,
            0,
            0,
            "not UTF-8 text: expected one score a line, or a TREC run",
        )
    })?;
    let score = |token: &str, line: usize, column: usize, what: &str| -> Result<f64> {
        let v: f64 = token.parse().map_err(|_| {
            Error::parse(
                path,
                line as u64 + 1,
                column as u64,
                format!(
                    "'{}' is not a number: expected {what}",
                    crate::error::printable(&token.chars().take(40).collect::<String>())
                ),
            )
        })?;
        if !v.is_finite() || !(v as f32).is_finite() {
            return Err(Error::parse(
                path,
                line as u64 + 1,
                column as u64,
                format!("the score {token} is not finite (or beyond the f32 range)"),
            ));
        }
        Ok(v)
    };
    let is_run = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .is_some_and(|f| f.len() == 6 && f[1] == "Q0");
    let scores = if is_run {
        run_scores(path, name, text, &rows, &score)?
    } else {
        let mut scores = Vec::with_capacity(rows.len());
        // Blank lines end the file; one before a score would pair every later score with the
        // document before its own.
        let mut blank = None;
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                blank = blank.or(Some(i));
                continue;
            }
            if let Some(at) = blank {
                return Err(Error::parse(
                    path,
                    at as u64 + 1,
                    1,
                    "an empty line before more scores: expected one score a line, each the score of the next document (an empty line would pair every later score with another document)",
                ));
            }
            scores.push(score(line, i, 1, "one score a line")?);
        }
        if scores.len() != rows.len() {
            return Err(Error::parse(path, 0, 0, format!(
                "{} scores, but {} has {} documents: expected one score a line for each, in the file's order",
                scores.len(),
                name.display(),
                rows.len()
            )));
        }
        scores
    };
    Ok(FileScores {
        groups: groups(name, &qids, query)?,
        scores,
        name: name.to_path_buf(),
    })
}

/// The scores a TREC run gives the documents `rows` (qid, docid, line) of `name`: every
/// document must have one, and every entry of the run must name a document of the file.
fn run_scores(
    path: &Path,
    name: &Path,
    text: &str,
    rows: &[(Option<u64>, Option<String>, u64)],
    score: &dyn Fn(&str, usize, usize, &str) -> Result<f64>,
) -> Result<Vec<f64>> {
    if rows.iter().any(|r| r.0.is_none()) {
        return Err(Error::Config(format!(
            "{}: a TREC run names documents by qid, and {} has no qid: on its lines; give one score a line instead",
            path.display(),
            name.display()
        )));
    }
    // (qid, docno) -> (score, line of the run, used).
    let mut entries: std::collections::HashMap<(String, String), (f64, usize, bool)> =
        std::collections::HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if fields.len() != 6 {
            return Err(Error::parse(
                path,
                i as u64 + 1,
                1,
                format!(
                    "{} fields: expected a TREC run line, qid Q0 docno rank score tag",
                    fields.len()
                ),
            ));
        }
        let v = score(
            fields[4],
            i,
            1,
            "a score in the fifth field of a TREC run line",
        )?;
        let key = (fields[0].to_string(), fields[2].to_string());
        if entries.insert(key, (v, i + 1, false)).is_some() {
            return Err(Error::parse(
                path,
                i as u64 + 1,
                1,
                format!("query {} document {} is scored twice", fields[0], fields[2]),
            ));
        }
    }
    let mut scores = Vec::with_capacity(rows.len());
    let mut place = 0usize;
    for (k, (qid, docid, line)) in rows.iter().enumerate() {
        let qid = qid.unwrap_or_default();
        place = if k > 0 && rows[k - 1].0 == Some(qid) {
            place + 1
        } else {
            0
        };
        let by_id = docid.as_ref().map(|d| (qid.to_string(), d.clone()));
        let by_place = (qid.to_string(), format!("doc{place}"));
        let key = by_id
            .filter(|k| entries.contains_key(k))
            .unwrap_or(by_place);
        match entries.get_mut(&key) {
            Some((v, _, used)) => {
                *used = true;
                scores.push(*v);
            }
            None => {
                return Err(Error::parse(path, 0, 0, format!(
                    "the run has no score for query {qid}'s document {} ({}:{line}): expected one for every document",
                    docid.as_deref().unwrap_or(&key.1),
                    name.display()
                )))
            }
        }
    }
    if let Some(((qid, doc), (_, line, _))) = entries
        .iter()
        .filter(|(_, e)| !e.2)
        .min_by_key(|(_, e)| e.1)
    {
        return Err(Error::parse(
            path,
            *line as u64,
            1,
            format!(
                "query {qid} document {doc} is not a document of {}",
                name.display()
            ),
        ));
    }
    Ok(scores)
}

/// A file's groups by qid, as the LETOR reader forms them: runs of one qid, or the `.query`
/// sizes (qids 1, 2, ...).
fn groups(
    name: &Path,
    qids: &[Option<u64>],
    query: Option<Vec<usize>>,
) -> Result<HashMap<u64, (usize, usize)>> {
    let mut groups = HashMap::new();
    if qids.first().is_some_and(|q| q.is_some()) {
        let mut start = 0;
        for i in 1..=qids.len() {
            if i == qids.len() || qids[i] != qids[start] {
                groups.insert(qids[start].unwrap_or_default(), (start, i - start));
                start = i;
            }
        }
        return Ok(groups);
    }
    let sizes =
        query.ok_or_else(|| Error::parse(name, 0, 0, "no qid: on any line and no .query file"))?;
    let mut start = 0;
    for (g, &size) in sizes.iter().enumerate() {
        groups.insert(g as u64 + 1, (start, size));
        start = start.saturating_add(size);
    }
    if start != qids.len() {
        return Err(Error::parse(
            name,
            0,
            0,
            format!(
                "the .query file's group sizes add up to {start} documents, but the file has {}",
                qids.len()
            ),
        ));
    }
    Ok(groups)
}

/// The scores of a prepared split's documents, found by their groups' qids in the file.
fn match_split(file: &FileScores, set: &RankingSet, noun: &str) -> Result<Vec<f32>> {
    let mut out = Vec::with_capacity(set.n_docs());
    for (g, &qid) in set.qids.iter().enumerate() {
        let docs = set.group(g).len();
        match file.groups.get(&qid) {
            Some(&(start, len)) if len == docs => {
                out.extend(file.scores[start..start + len].iter().map(|&s| s as f32));
            }
            _ => {
                return Err(Error::Data(format!(
                    "the {noun}'s scores of {} have no group of {docs} documents with qid {qid}, which the prepared data hold: the file changed since it was read",
                    file.name.display()
                )))
            }
        }
    }
    Ok(out)
}

/// The largest |score| a teacher or a reference may give: its scores become soft labels and
/// ranking scores in f32, and a score past this (a tree's 1e308 leaf, say) would overflow the
/// losses and be reported as a diverged training instead of as the score it is.
pub const MAX_SCORE_MAGNITUDE: f64 = 1e6;

/// Refuses a file's scores past [`MAX_SCORE_MAGNITUDE`], naming the file, the document and the
/// score.
fn check_magnitude(file: &FileScores, noun: &str) -> Result<()> {
    match file
        .scores
        .iter()
        .position(|v| v.is_nan() || v.abs() > MAX_SCORE_MAGNITUDE)
    {
        None => Ok(()),
        Some(i) => Err(Error::Config(format!(
            "the {noun}'s score of document {} of {} is {:e}: expected a score within ±{MAX_SCORE_MAGNITUDE:e} (a model with an out-of-range leaf, or scores of another scale?)",
            i + 1,
            file.name.display(),
            file.scores[i]
        ))),
    }
}

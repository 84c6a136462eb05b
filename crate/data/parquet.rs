//! Ranking data in Parquet, read and written through the `parquet` crate's column API.
//!
//! The layout, one row per document:
//! - a `qid` column of integers (int32 or int64, signed or unsigned), the rows of each query
//!   together;
//! - a `label` column: the relevance grade, an integer 0..=[`MAX_GRADE`] (int32, int64, or a
//!   float or double holding a whole number);
//! - every other column a feature, float (f32) or double (f64), in the file's order: the k-th
//!   feature column is feature k + 1, as in a LETOR file. A null is an entry left out, as a
//!   LETOR line leaves it out: 0 in the feature matrix, missing to a tree model that reads
//!   missing values.
//!
//! A pandas or Dask frame's index, which pyarrow stores as a column named in its `pandas`
//! metadata, is not a feature and is left out.
//!
//! A folder of part files (what Dask, Spark and pyarrow's datasets write) reads as the part
//! files in the order of their names, numbers compared as numbers (`part.2` before `part.10`);
//! every part must have the same columns.
//!
//! The writer ([`ParquetWriter`]; `data convert`, [`crate::data::convert`]) keeps that layout: `qid` int64, `label` int32 and
//! nullable float features named `f1`, `f2`, ..., Snappy-compressed, with row groups cut only
//! at query boundaries, so that a reader of one row group (a Dask partition) holds whole
//! queries.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, Repetition, Type as Physical};
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{SchemaDescriptor, Type};

use crate::data::letor::{ReadOptions, ScannedRow, MAX_GRADE};
use crate::data::Dataset;
use crate::error::{Error, Result};

/// The four bytes every Parquet file begins (and ends) with.
pub const MAGIC: &[u8; 4] = b"PAR1";
/// The column of query ids.
pub const QID: &str = "qid";
/// The column of relevance grades.
pub const LABEL: &str = "label";
/// Rows a written row group holds at least (then up to the end of its last query).
pub const ROW_GROUP_ROWS: usize = 1 << 17;
/// Rows read from every column at a time.
const BATCH_ROWS: usize = 4096;

/// Whether bytes begin like a Parquet file.
pub fn is_parquet(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// Whether the file at `path` is Parquet: by its first bytes, never by its name. A folder is
/// read as Parquet part files or not at all: one whose files are not Parquet is refused by the
/// Parquet reader, which says what it found ([`part_files`]).
#[cfg(not(target_arch = "wasm32"))]
pub fn is_parquet_path(path: &Path) -> bool {
    if path.is_dir() {
        return true;
    }
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        // A pipe (`/dev/stdin`, `<(zcat f.gz)`) cannot be read twice: its first bytes are left
        // for the reader, which tells Parquet from text by them as well.
        return false;
    }
    let mut head = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| is_parquet(&head))
}

/// Where each column of a file is, and what it holds.
#[derive(Debug, Clone, PartialEq)]
struct Layout {
    qid: usize,
    /// Whether the qid column holds unsigned integers (read as i64, its bits a u64).
    qid_unsigned: bool,
    label: usize,
    /// (leaf index, name) of each feature column, in the file's order.
    features: Vec<(usize, String)>,
}

impl Layout {
    fn feature_names(&self) -> Vec<&str> {
        self.features.iter().map(|(_, n)| n.as_str()).collect()
    }
}

/// What a column's values are, in words for a message.
fn type_words(physical: Physical) -> &'static str {
    match physical {
        Physical::BOOLEAN => "booleans",
        Physical::INT32 => "32-bit integers",
        Physical::INT64 => "64-bit integers",
        Physical::INT96 => "96-bit integers (timestamps)",
        Physical::FLOAT => "floats",
        Physical::DOUBLE => "doubles",
        Physical::BYTE_ARRAY => "byte arrays (strings)",
        Physical::FIXED_LEN_BYTE_ARRAY => "fixed-length byte arrays",
    }
}

/// The columns pandas (and Dask) stored a frame's index in, by the `pandas` metadata pyarrow
/// writes: they are the frame's row labels, not features.
fn pandas_index_columns(metadata: &parquet::file::metadata::FileMetaData) -> Vec<String> {
    let Some(value) = metadata
        .key_value_metadata()
        .and_then(|kv| kv.iter().find(|e| e.key == "pandas"))
        .and_then(|e| e.value.as_deref())
    else {
        return Vec::new();
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(value) else {
        return Vec::new();
    };
    // A range index is stored as metadata (an object), a materialised one as a named column.
    json["index_columns"]
        .as_array()
        .map(|columns| {
            columns
                .iter()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The columns a file's schema has, checked against the layout; `skip` names columns that are
/// not data (a pandas index).
fn layout(
    name: &Path,
    schema: &SchemaDescriptor,
    skip: &[String],
    max_features: usize,
) -> Result<Layout> {
    let refuse = |message: String| Error::parse(name, 0, 0, message);
    let columns: Vec<String> = (0..schema.num_columns())
        .map(|i| schema.column(i).path().string())
        .collect();
    let listed = || {
        let mut shown: Vec<&str> = columns.iter().take(12).map(String::as_str).collect();
        if columns.len() > 12 {
            shown.push("…");
        }
        shown.join(", ")
    };
    for (i, name) in columns.iter().enumerate() {
        let column = schema.column(i);
        if column.max_rep_level() > 0 || column.path().parts().len() > 1 {
            return Err(refuse(format!(
                "column '{}' is nested (a list or a struct): expected one flat column per feature, besides '{QID}' and '{LABEL}'",
                crate::error::printable(name)
            )));
        }
    }
    // A name twice: the reader could not say which is the qid, the label or which feature.
    // Columns are numbered from 1, as the file's schema lists them.
    let mut seen = std::collections::HashSet::with_capacity(columns.len());
    if let Some((i, again)) = columns.iter().enumerate().find(|&(_, c)| !seen.insert(c)) {
        return Err(refuse(format!(
            "column '{}' appears twice (columns {} and {}): expected one column of each name",
            crate::error::printable(again),
            columns.iter().position(|c| c == again).unwrap_or(0) + 1,
            i + 1
        )));
    }
    let find = |wanted: &str| columns.iter().position(|c| c == wanted);
    let qid = find(QID).ok_or_else(|| {
        refuse(format!(
            "no '{QID}' column (its columns: {}): expected a '{QID}' column of integers, one query id per document",
            crate::error::printable(&listed())
        ))
    })?;
    let label = find(LABEL).ok_or_else(|| {
        refuse(format!(
            "no '{LABEL}' column (its columns: {}): expected a '{LABEL}' column of relevance grades 0..={MAX_GRADE}",
            crate::error::printable(&listed())
        ))
    })?;
    let physical = |i: usize| schema.column(i).physical_type();
    if !matches!(physical(qid), Physical::INT32 | Physical::INT64) {
        return Err(refuse(format!(
            "column '{QID}' holds {}: expected integers (int32 or int64)",
            type_words(physical(qid))
        )));
    }
    if !matches!(
        physical(label),
        Physical::INT32 | Physical::INT64 | Physical::FLOAT | Physical::DOUBLE
    ) {
        return Err(refuse(format!(
            "column '{LABEL}' holds {}: expected relevance grades, integers 0..={MAX_GRADE}",
            type_words(physical(label))
        )));
    }
    let mut features = Vec::new();
    for (i, column) in columns.iter().enumerate() {
        if i == qid || i == label || skip.contains(column) {
            continue;
        }
        if !matches!(physical(i), Physical::FLOAT | Physical::DOUBLE) {
            return Err(refuse(format!(
                "column '{}' holds {}: every column besides '{QID}' and '{LABEL}' is a feature, and features must be float or double (f32 or f64); cast it, or drop it before writing",
                crate::error::printable(column),
                type_words(physical(i))
            )));
        }
        features.push((i, column.clone()));
    }
    if features.is_empty() {
        return Err(refuse(format!(
            "no feature columns: expected float or double columns besides '{QID}' and '{LABEL}'"
        )));
    }
    if features.len() > max_features {
        return Err(refuse(format!(
            "{} feature columns, more than the {max_features} accepted",
            features.len()
        )));
    }
    let qid_unsigned = matches!(
        schema.column(qid).logical_type_ref(),
        Some(parquet::basic::LogicalType::Integer(int)) if !int.is_signed
    ) || matches!(
        schema.column(qid).converted_type(),
        parquet::basic::ConvertedType::UINT_32 | parquet::basic::ConvertedType::UINT_64
    );
    Ok(Layout {
        qid,
        qid_unsigned,
        label,
        features,
    })
}

/// A parquet error as this crate's: what the file is, and what this build reads.
fn unreadable(name: &Path, e: parquet::errors::ParquetError) -> Error {
    let text = e.to_string();
    let codec = text.contains("Disabled feature") || text.contains("not supported");
    let hint = if codec {
        if cfg!(target_arch = "wasm32") {
            "; the page reads Snappy, gzip and LZ4 (and uncompressed) files: write it with one of them, e.g. pyarrow's compression='snappy'"
        } else {
            "; this build reads Snappy, gzip, LZ4 and zstd (and uncompressed) files"
        }
    } else {
        ""
    };
    Error::parse(
        name,
        0,
        0,
        format!(
            "not a readable Parquet file ({}){hint}",
            crate::error::printable(&text)
        ),
    )
}

/// One Parquet file, opened: its footer read and its columns checked.
struct Part<R: ChunkReader + 'static> {
    name: PathBuf,
    reader: SerializedFileReader<R>,
    layout: Layout,
    rows: usize,
}

fn open<R: ChunkReader + 'static>(
    name: &Path,
    chunks: R,
    options: &ReadOptions,
) -> Result<Part<R>> {
    let reader = SerializedFileReader::new(chunks).map_err(|e| unreadable(name, e))?;
    let metadata = reader.metadata();
    let layout = layout(
        name,
        metadata.file_metadata().schema_descr(),
        &pandas_index_columns(metadata.file_metadata()),
        options.max_feature_index as usize,
    )?;
    let rows = usize::try_from(metadata.file_metadata().num_rows()).unwrap_or(usize::MAX);
    Ok(Part {
        name: name.to_path_buf(),
        reader,
        layout,
        rows,
    })
}

/// Every part has the first part's columns, in its order.
fn check_parts_agree<R: ChunkReader>(parts: &[Part<R>]) -> Result<()> {
    let Some(first) = parts.first() else {
        return Ok(());
    };
    for part in &parts[1..] {
        if part.layout.feature_names() != first.layout.feature_names() {
            let describe = |p: &Part<R>| {
                let names = p.layout.feature_names();
                let shown: Vec<&str> = names.iter().take(6).copied().collect();
                format!(
                    "{} feature columns ({}{})",
                    names.len(),
                    shown.join(", "),
                    if names.len() > 6 { ", …" } else { "" }
                )
            };
            return Err(Error::parse(
                &part.name,
                0,
                0,
                format!(
                    "has {}, but {} has {}: the part files of one data set must have the same feature columns in the same order",
                    crate::error::printable(&describe(part)),
                    first.name.display(),
                    crate::error::printable(&describe(first))
                ),
            ));
        }
    }
    Ok(())
}

/// Rows of every column of a file, a batch at a time: `None` where a value is null.
struct Batch {
    /// The 1-based row (in the whole data set) of the batch's first row.
    first_row: u64,
    qids: Vec<Option<f64>>,
    labels: Vec<Option<f64>>,
    /// Column-major: `features[k][r]` is feature k + 1 of row r.
    features: Vec<Vec<Option<f64>>>,
}

impl Batch {
    fn len(&self) -> usize {
        self.qids.len()
    }
}

/// Reads up to `rows` records of one column into `out` (appended), each value through `widen`.
fn read_column<T: DataType, O>(
    reader: &mut ColumnReaderImpl<T>,
    rows: usize,
    max_def: i16,
    widen: impl Fn(&T::T) -> O,
    out: &mut Vec<Option<O>>,
) -> parquet::errors::Result<()> {
    let mut levels: Vec<i16> = Vec::with_capacity(rows);
    let mut values: Vec<T::T> = Vec::with_capacity(rows);
    let mut read = 0;
    while read < rows {
        levels.clear();
        values.clear();
        let (records, _, _) =
            reader.read_records(rows - read, Some(&mut levels), None, &mut values)?;
        if records == 0 {
            break;
        }
        if max_def == 0 {
            out.extend(values.iter().map(|v| Some(widen(v))));
        } else {
            let mut next = values.iter();
            for &level in &levels {
                out.push(if level == max_def {
                    next.next().map(&widen)
                } else {
                    None
                });
            }
        }
        read += records;
    }
    Ok(())
}

/// Reads a column reader's next `rows` rows as f64.
fn read_any(
    column: &mut ColumnReader,
    rows: usize,
    max_def: i16,
    out: &mut Vec<Option<f64>>,
) -> parquet::errors::Result<()> {
    match column {
        ColumnReader::Int32ColumnReader(r) => read_column(r, rows, max_def, |&v| v as f64, out),
        ColumnReader::Int64ColumnReader(r) => read_column(r, rows, max_def, |&v| v as f64, out),
        ColumnReader::FloatColumnReader(r) => read_column(r, rows, max_def, |&v| v as f64, out),
        ColumnReader::DoubleColumnReader(r) => read_column(r, rows, max_def, |&v| v, out),
        // The layout admits no other type (checked when the file was opened).
        _ => Err(parquet::errors::ParquetError::General(
            "a column of another type than the layout's".into(),
        )),
    }
}

/// What hears each batch: the part file it came from, the batch, and its exact qids.
type OnBatch<'a> = dyn FnMut(&Path, &Batch, &[u64]) -> Result<()> + 'a;

/// Gives every row of `parts`, in order, a batch at a time, to `on_batch`; the qid column is
/// read as i64 exactly (not through f64) and checked to be non-negative.
fn each_batch<R: ChunkReader + 'static>(parts: &[Part<R>], on_batch: &mut OnBatch) -> Result<()> {
    let mut first_row = 1u64;
    for part in parts {
        for g in 0..part.reader.num_row_groups() {
            let rows = part.reader.metadata().row_group(g).num_rows().max(0) as u64;
            each_batch_of_group(part, g, first_row, on_batch)?;
            first_row += rows;
        }
    }
    Ok(())
}

/// Gives the rows of row group `g` of `part`, the first of them row `first_row` of the data
/// set, a batch at a time, to `on_batch`.
fn each_batch_of_group<R: ChunkReader + 'static>(
    part: &Part<R>,
    g: usize,
    mut first_row: u64,
    on_batch: &mut OnBatch,
) -> Result<()> {
    let name = &part.name;
    let schema = part.reader.metadata().file_metadata().schema_descr_ptr();
    let max_def = |i: usize| schema.column(i).max_def_level();
    let group = part
        .reader
        .get_row_group(g)
        .map_err(|e| unreadable(name, e))?;
    let rows = usize::try_from(group.metadata().num_rows()).unwrap_or(0);
    let column = |i: usize| group.get_column_reader(i).map_err(|e| unreadable(name, e));
    let mut qid_reader = column(part.layout.qid)?;
    let mut label_reader = column(part.layout.label)?;
    let mut feature_readers = part
        .layout
        .features
        .iter()
        .map(|&(i, _)| column(i))
        .collect::<Result<Vec<_>>>()?;
    let mut done = 0;
    while done < rows {
        let n = BATCH_ROWS.min(rows - done);
        let mut qids_exact: Vec<u64> = Vec::with_capacity(n);
        let mut batch = Batch {
            first_row,
            qids: Vec::with_capacity(n),
            labels: Vec::with_capacity(n),
            features: vec![Vec::with_capacity(n); feature_readers.len()],
        };
        read_qids(
            name,
            &mut qid_reader,
            n,
            (max_def(part.layout.qid), part.layout.qid_unsigned),
            first_row,
            &mut qids_exact,
        )?;
        batch.qids = qids_exact.iter().map(|&q| Some(q as f64)).collect();
        read_any(
            &mut label_reader,
            n,
            max_def(part.layout.label),
            &mut batch.labels,
        )
        .map_err(|e| unreadable(name, e))?;
        for ((reader, out), &(i, _)) in feature_readers
            .iter_mut()
            .zip(&mut batch.features)
            .zip(&part.layout.features)
        {
            read_any(reader, n, max_def(i), out).map_err(|e| unreadable(name, e))?;
        }
        let short = std::iter::once(batch.labels.len())
            .chain(batch.features.iter().map(Vec::len))
            .any(|len| len != n)
            || qids_exact.len() != n;
        if short {
            return Err(Error::parse(
                name,
                0,
                0,
                format!("row group {g} ends before the {rows} rows its footer counts: the file is cut short or damaged"),
            ));
        }
        on_batch(name, &batch, &qids_exact)?;
        done += n;
        first_row += n as u64;
    }
    Ok(())
}

/// Reads `rows` query ids, exactly, refusing nulls and negative ids by row.
fn read_qids(
    name: &Path,
    column: &mut ColumnReader,
    rows: usize,
    (max_def, unsigned): (i16, bool),
    first_row: u64,
    out: &mut Vec<u64>,
) -> Result<()> {
    let mut raw: Vec<Option<i64>> = Vec::with_capacity(rows);
    let result = match column {
        // An unsigned column's bits are its value: a uint32 above i32's range, a uint64 above
        // i64's (read back as their u64 below).
        ColumnReader::Int32ColumnReader(r) if unsigned => {
            read_column(r, rows, max_def, |&v| v as u32 as i64, &mut raw)
        }
        ColumnReader::Int32ColumnReader(r) => {
            read_column(r, rows, max_def, |&v| v as i64, &mut raw)
        }
        ColumnReader::Int64ColumnReader(r) => read_column(r, rows, max_def, |&v| v, &mut raw),
        _ => Err(parquet::errors::ParquetError::General(
            "the qid column is not integers".into(),
        )),
    };
    result.map_err(|e| unreadable(name, e))?;
    for (k, qid) in raw.into_iter().enumerate() {
        let row = first_row + k as u64;
        match qid {
            Some(q) if q >= 0 || unsigned => out.push(q as u64),
            Some(q) => {
                return Err(Error::parse(
                    name,
                    0,
                    0,
                    format!("row {row}: qid {q} is negative: expected a query id 0 or above"),
                ))
            }
            None => {
                return Err(Error::parse(
                    name,
                    0,
                    0,
                    format!("row {row}: the qid is null: every document needs its query's id"),
                ))
            }
        }
    }
    Ok(())
}

/// A row's grade: a whole number 0..=MAX_GRADE.
fn grade(name: &Path, row: u64, label: Option<f64>) -> Result<u8> {
    let refuse = |what: String| Error::parse(name, 0, 0, format!("row {row}: {what}"));
    match label {
        None => Err(refuse(format!(
            "the {LABEL} is null: expected a relevance grade 0..={MAX_GRADE}"
        ))),
        Some(g) if g.is_finite() && g >= 0.0 && g.fract() == 0.0 && g <= MAX_GRADE as f64 => {
            Ok(g as u8)
        }
        Some(g) if g.is_finite() && g.fract() == 0.0 && g > MAX_GRADE as f64 => Err(refuse(format!(
            "relevance grade {g} is above {MAX_GRADE}, the largest grade accepted (LETOR grades are 0..4): is '{LABEL}' a grade?"
        ))),
        Some(g) => Err(refuse(format!(
            "{LABEL} {g} is not a relevance grade: expected an integer 0..={MAX_GRADE}"
        ))),
    }
}

/// Query groups as rows arrive: a qid must not come back after another query's rows.
struct Groups {
    offsets: Vec<usize>,
    qids: Vec<u64>,
    /// For each finished query, the last row of its group.
    finished: std::collections::HashMap<u64, u64>,
}

impl Groups {
    fn new() -> Groups {
        Groups {
            offsets: vec![0],
            qids: Vec::new(),
            finished: std::collections::HashMap::new(),
        }
    }

    /// Row `row` (1-based), document `doc` (0-based), of query `qid`.
    fn push(&mut self, name: &Path, row: u64, doc: usize, qid: u64) -> Result<()> {
        match self.qids.last() {
            Some(&current) if current == qid => Ok(()),
            last => {
                if let Some(ended) = self.finished.get(&qid) {
                    return Err(Error::parse(
                        name,
                        0,
                        0,
                        format!("row {row}: qid {qid} comes back after other queries (its rows ended at row {ended}): the rows of a query must be together; sort the rows by qid"),
                    ));
                }
                if let Some(&previous) = last {
                    self.finished.insert(previous, row - 1);
                    self.offsets.push(doc);
                }
                self.qids.push(qid);
                Ok(())
            }
        }
    }
}

/// A row group of a data set: its part, its index in the part, its first row (1-based, in the
/// whole data set) and its rows.
#[derive(Clone, Copy)]
struct Unit {
    part: usize,
    group: usize,
    first_row: u64,
    rows: usize,
}

/// Opens a part again, with a reader of its own: a file's readers share one cursor, so row groups
/// read side by side each need their own handle.
type Reopen<'a, R> = &'a (dyn Fn(&Part<R>) -> Result<Part<R>> + Sync);

/// Reads opened parts into one data set. With `reopen` (files on disk), the row groups are read
/// side by side (natively), each from its own handle, into its own rows of the matrix; the
/// groups of queries are then checked in row order, as one reader would.
fn read_parts<R: ChunkReader + 'static>(
    parts: &[Part<R>],
    options: &ReadOptions,
    reopen: Option<Reopen<R>>,
) -> Result<Dataset> {
    check_parts_agree(parts)?;
    let name = parts.first().map(|p| p.name.clone()).unwrap_or_default();
    let mut units = Vec::new();
    let mut first_row = 1u64;
    for (p, part) in parts.iter().enumerate() {
        let mut in_part = 0usize;
        for g in 0..part.reader.num_row_groups() {
            let rows = usize::try_from(part.reader.metadata().row_group(g).num_rows()).unwrap_or(0);
            units.push(Unit {
                part: p,
                group: g,
                first_row,
                rows,
            });
            first_row += rows as u64;
            in_part += rows;
        }
        if in_part != part.rows {
            return Err(Error::parse(
                &part.name,
                0,
                0,
                format!(
                    "its row groups hold {in_part} rows, and its footer counts {}: the file is damaged",
                    part.rows
                ),
            ));
        }
    }
    let n_docs: usize = units.iter().map(|u| u.rows).sum();
    if n_docs == 0 {
        return Err(Error::parse(
            &name,
            0,
            0,
            "no rows: expected one row per document",
        ));
    }
    let nf = parts[0].layout.features.len();
    let names: Vec<String> = parts[0]
        .layout
        .features
        .iter()
        .map(|(_, n)| n.clone())
        .collect();
    let len = n_docs.checked_mul(nf).ok_or_else(|| {
        Error::parse(
            &name,
            0,
            0,
            format!("{n_docs} rows of {nf} features do not fit in memory"),
        )
    })?;
    let mut features = options.scratch.zeros(len)?;
    // Each row group's rows of the matrix.
    let mut slices = Vec::with_capacity(units.len());
    let mut rest = features.as_mut_slice();
    for unit in &units {
        let (mine, after) = rest.split_at_mut(unit.rows * nf);
        slices.push(mine);
        rest = after;
    }
    // One row group into its rows: its grades and qids.
    let read = |unit: &Unit, matrix: &mut [f32]| -> Result<(Vec<u8>, Vec<u64>)> {
        let reopened;
        let part = match reopen {
            Some(reopen) => {
                reopened = reopen(&parts[unit.part])?;
                &reopened
            }
            None => &parts[unit.part],
        };
        let mut grades = Vec::with_capacity(unit.rows);
        let mut qids = Vec::with_capacity(unit.rows);
        each_batch_of_group(
            part,
            unit.group,
            unit.first_row,
            &mut |file, batch, exact| {
                for r in 0..batch.len() {
                    let row = batch.first_row + r as u64;
                    let doc = grades.len();
                    grades.push(grade(file, row, batch.labels[r])?);
                    qids.push(exact[r]);
                    let out = &mut matrix[doc * nf..(doc + 1) * nf];
                    for (k, column) in batch.features.iter().enumerate() {
                        if let Some(v) = column[r] {
                            let v32 = v as f32;
                            if !v32.is_finite() {
                                return Err(Error::parse(
                                file,
                                0,
                                0,
                                format!(
                                    "row {row}, column '{}': value {} is not finite (NaN or infinity, or beyond the f32 range): a feature left out is a null",
                                    crate::error::printable(&names[k]),
                                    crate::error::shown(v)
                                ),
                            ));
                            }
                            out[k] = v32;
                        }
                    }
                }
                Ok(())
            },
        )?;
        Ok((grades, qids))
    };
    #[cfg(not(target_arch = "wasm32"))]
    let read_units: Vec<Result<(Vec<u8>, Vec<u64>)>> = if reopen.is_some() {
        use rayon::prelude::*;
        units
            .par_iter()
            .zip(slices.into_par_iter())
            .map(|(unit, matrix)| read(unit, matrix))
            .collect()
    } else {
        units
            .iter()
            .zip(slices)
            .map(|(unit, matrix)| read(unit, matrix))
            .collect()
    };
    #[cfg(target_arch = "wasm32")]
    let read_units: Vec<Result<(Vec<u8>, Vec<u64>)>> = units
        .iter()
        .zip(slices)
        .map(|(unit, matrix)| read(unit, matrix))
        .collect();
    // The first refusal in row order; then the queries' groups, row by row.
    let mut grades = Vec::with_capacity(n_docs);
    let mut groups = Groups::new();
    for (unit, result) in units.iter().zip(read_units) {
        let (unit_grades, unit_qids) = result?;
        let file = &parts[unit.part].name;
        for (r, &qid) in unit_qids.iter().enumerate() {
            groups.push(file, unit.first_row + r as u64, grades.len() + r, qid)?;
        }
        grades.extend(unit_grades);
    }
    groups.offsets.push(n_docs);
    Ok(Dataset {
        n_features: nf,
        features,
        grades,
        group_offsets: groups.offsets,
        qids: groups.qids,
        source: None,
        feature_names: Some(names),
    })
}

/// Gives every row of opened parts to `on_row` as a LETOR scan gives it: the row number for the
/// line, its features as present (nulls left out), values in the file's precision.
fn scan_parts<R: ChunkReader + 'static>(
    parts: &[Part<R>],
    on_row: &mut dyn FnMut(ScannedRow) -> Result<()>,
) -> Result<()> {
    check_parts_agree(parts)?;
    let mut features: Vec<(u32, f64)> = Vec::new();
    each_batch(parts, &mut |file, batch, qids| {
        for r in 0..batch.len() {
            let row = batch.first_row + r as u64;
            grade(file, row, batch.labels[r])?;
            features.clear();
            for (k, column) in batch.features.iter().enumerate() {
                if let Some(v) = column[r] {
                    if !(v as f32).is_finite() {
                        return Err(Error::parse(
                            file,
                            0,
                            0,
                            format!("row {row}, feature {}: value {v} is not finite", k + 1),
                        ));
                    }
                    features.push((k as u32 + 1, v));
                }
            }
            on_row(ScannedRow {
                line: row,
                qid: Some(qids[r]),
                features: &features,
                docid: None,
            })?;
        }
        Ok(())
    })
}

/// The part files of a folder: `*.parquet` (or, where there is none, every file not starting
/// with `.` or `_`, which are Spark's and Hadoop's markers), in name order with numbers
/// compared as numbers. A folder (or another file, beside `*.parquet` files) among the parts is
/// refused: its rows would go unread.
#[cfg(not(target_arch = "wasm32"))]
pub fn part_files(folder: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(folder).map_err(|e| Error::io(folder, e))? {
        let entry = entry.map_err(|e| Error::io(folder, e))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        if path.is_file() {
            files.push(path);
        } else if path.is_dir() {
            folders.push(name);
        }
    }
    folders.sort();
    let parquet: Vec<PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .cloned()
        .collect();
    let named = !parquet.is_empty();
    // Beside the parts, what would be left unread without a word: their rows would be missing.
    let skipped: Vec<String> = folders
        .iter()
        .map(|f| format!("{f}/"))
        .chain(
            files
                .iter()
                .filter(|f| named && !parquet.contains(f))
                .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned())),
        )
        .collect();
    let mut files = if named { parquet } else { files };
    files.sort_by(|a, b| natural_order(&a.to_string_lossy(), &b.to_string_lossy()));
    // Files without the `.parquet` name (Spark's `part-00000`) are parts when they are Parquet;
    // a folder of LETOR text (a fold's `train.txt`, or LETOR's `S1.txt`) is not a dataset of parts.
    if !named {
        if let Some(first) = files.first() {
            let mut head = [0u8; 4];
            let is_part = std::fs::File::open(first)
                .and_then(|mut f| f.read_exact(&mut head))
                .is_ok_and(|_| is_parquet(&head));
            if !is_part {
                let names: Vec<String> = files
                    .iter()
                    .take(4)
                    .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
                    .collect();
                return Err(Error::parse(
                    folder,
                    0,
                    0,
                    format!(
                        "a folder whose files ({}) are not Parquet: a folder is read as Parquet part files; give one file, or a LETOR folds directory (S1.txt..S5.txt, Fold1..Fold5) as --folds",
                        crate::error::printable(&names.join(", "))
                    ),
                ));
            }
        }
    }
    if !files.is_empty() && !skipped.is_empty() {
        return Err(Error::parse(
            folder,
            0,
            0,
            format!(
                "a folder of Parquet part files that also holds {} ({}): they would not be read, and their rows would be missing; move them out, or name them with a leading _ (as Spark's and Dask's own files are), or give one partition's folder",
                if folders.is_empty() { "other files" } else { "folders or other files" },
                crate::error::printable(&skipped.iter().take(4).cloned().collect::<Vec<_>>().join(", "))
            ),
        ));
    }
    if files.is_empty() {
        let inside = match folders.as_slice() {
            [] => String::new(),
            some => format!(
                "; its folders ({}) are not read: a dataset partitioned into folders (split=a/, ...) is read one partition's folder at a time, and LETOR's Fold1..Fold5 as --folds",
                crate::error::printable(&some.iter().take(4).cloned().collect::<Vec<_>>().join(", "))
            ),
        };
        return Err(Error::parse(
            folder,
            0,
            0,
            format!(
                "a folder without part files: expected Parquet files (part.0.parquet, ...){inside}"
            ),
        ));
    }
    Ok(files)
}

/// Names compared with their runs of digits as numbers: `part.2` before `part.10`.
#[cfg(not(target_arch = "wasm32"))]
fn natural_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn pieces(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (pa, pb) = (pieces(a), pieces(b));
    for (x, y) in pa.iter().zip(&pb) {
        let order = match (x, y) {
            ((true, x), (true, y)) => {
                let (x, y) = (x.trim_start_matches('0'), y.trim_start_matches('0'));
                x.len().cmp(&y.len()).then_with(|| x.cmp(y))
            }
            ((_, x), (_, y)) => x.cmp(y),
        };
        if order != std::cmp::Ordering::Equal {
            return order;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

#[cfg(not(target_arch = "wasm32"))]
fn open_path(path: &Path, options: &ReadOptions) -> Result<Vec<Part<std::fs::File>>> {
    let files = if path.is_dir() {
        part_files(path)?
    } else {
        vec![path.to_path_buf()]
    };
    files
        .iter()
        .map(|file| {
            let handle = std::fs::File::open(file).map_err(|e| Error::io(file, e))?;
            open(file, handle, options)
        })
        .collect()
}

/// Reads a Parquet file, or a folder of part files, in the layout above. `on_rows` hears the
/// number of rows read so far.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_parquet_path(
    path: &Path,
    options: &ReadOptions,
    on_rows: &mut dyn FnMut(u64),
) -> Result<Dataset> {
    let parts = open_path(path, options)?;
    let reopen = |part: &Part<std::fs::File>| {
        let handle = std::fs::File::open(&part.name).map_err(|e| Error::io(&part.name, e))?;
        open(&part.name, handle, options)
    };
    let mut data = read_parts(&parts, options, Some(&reopen))?;
    on_rows(data.n_docs() as u64);
    data.source = Some(path.to_path_buf());
    Ok(data)
}

/// The rows of a Parquet file or folder, as [`crate::data::letor::scan_letor`] gives a LETOR
/// file's.
#[cfg(not(target_arch = "wasm32"))]
pub fn scan_parquet_path(
    path: &Path,
    on_row: &mut dyn FnMut(ScannedRow) -> Result<()>,
) -> Result<()> {
    scan_parts(&open_path(path, &ReadOptions::default())?, on_row)
}

/// Reads a Parquet file held in memory (an upload, a test).
pub fn read_parquet_bytes(name: &Path, bytes: Vec<u8>, options: &ReadOptions) -> Result<Dataset> {
    let part = open(name, bytes::Bytes::from(bytes), options)?;
    read_parts(&[part], options, None)
}

/// The rows of a Parquet file held in memory, as [`crate::data::letor::scan_letor`] gives them.
pub fn scan_parquet_bytes(
    name: &Path,
    bytes: Vec<u8>,
    on_row: &mut dyn FnMut(ScannedRow) -> Result<()>,
) -> Result<()> {
    let part = open(name, bytes::Bytes::from(bytes), &ReadOptions::default())?;
    scan_parts(&[part], on_row)
}

/// Reads Parquet from any reader whole (a reader has no random access, which Parquet's footer
/// needs), then as [`read_parquet_bytes`].
pub fn read_parquet_reader(
    name: &Path,
    mut reader: impl Read,
    options: &ReadOptions,
) -> Result<Dataset> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(name, e))?;
    read_parquet_bytes(name, bytes, options)
}

/// The columns of an impressions log in Parquet, in the order of the text log's header
/// ([`crate::data::logs::IMPRESSIONS_HEADER`]); `doc` may be `docid` instead, and
/// `list_log_probability`, `conversion` and `dwell` may be absent. Any other column (but a pandas
/// index) is refused by name, as the text log's header refuses it: a log's `dwell_time` or
/// `conversions` is not left unread without a word.
const IMPRESSIONS_COLUMNS: [&str; 8] = [
    "qid",
    "session",
    "position",
    "doc",
    "click",
    "list_log_probability",
    "conversion",
    "dwell",
];

/// An impressions log in Parquet as the tab-separated text the impressions reader reads: its
/// header, then row r of the file on line r + 1. Integer, boolean, float and string columns
/// are written as their values; a null, or a tab or line end inside a value, is refused by row
/// and column.
pub fn impressions_as_text(name: &Path, bytes: Vec<u8>) -> Result<Vec<u8>> {
    let reader =
        SerializedFileReader::new(bytes::Bytes::from(bytes)).map_err(|e| unreadable(name, e))?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let columns: Vec<String> = (0..schema.num_columns())
        .map(|i| schema.column(i).path().string())
        .collect();
    let find = |wanted: &str| columns.iter().position(|c| c == wanted);
    let mut header = Vec::new();
    let mut wanted = Vec::new();
    for column in IMPRESSIONS_COLUMNS {
        let found = match column {
            "doc" => find("doc")
                .map(|i| (i, "doc"))
                .or(find("docid").map(|i| (i, "docid"))),
            other => find(other).map(|i| (i, other)),
        };
        match found {
            Some((i, label)) => {
                header.push(label);
                wanted.push(i);
            }
            None if crate::data::logs::IMPRESSIONS_OPTIONAL_COLUMNS.contains(&column) => {}
            None => {
                return Err(Error::Data(format!(
                    "{}: no '{column}' column{} (its columns: {}): an impressions log has columns qid, session, position, doc (or docid), click and optionally list_log_probability, conversion and dwell, one row per shown document",
                    name.display(),
                    if column == "doc" { " (nor 'docid')" } else { "" },
                    crate::error::printable(&columns.join(", "))
                )))
            }
        }
    }
    let index = pandas_index_columns(reader.metadata().file_metadata());
    if let Some(unknown) = columns
        .iter()
        .enumerate()
        .find(|(i, c)| !wanted.contains(i) && !index.contains(c))
        .map(|(_, c)| c)
    {
        return Err(Error::Data(format!(
            "{}: the column '{}' is not one of an impressions log's{} (its columns: {}): expected qid, session, position, doc or docid, click and optionally list_log_probability, conversion (0 or 1) and dwell (seconds); rename the column or drop it",
            name.display(),
            crate::error::printable(unknown),
            if header.contains(&"doc") && unknown == "docid" {
                " (doc is read already: keep one of doc and docid)"
            } else {
                ""
            },
            crate::error::printable(&columns.join(", "))
        )));
    }
    let mut text = header.join("\t").into_bytes();
    text.push(b'\n');
    let mut row = 0u64;
    for g in 0..reader.num_row_groups() {
        let group = reader.get_row_group(g).map_err(|e| unreadable(name, e))?;
        let rows = usize::try_from(group.metadata().num_rows()).unwrap_or(0);
        let mut values: Vec<Vec<Option<String>>> = Vec::with_capacity(wanted.len());
        for &i in &wanted {
            let max_def = schema.column(i).max_def_level();
            let mut column = group
                .get_column_reader(i)
                .map_err(|e| unreadable(name, e))?;
            let mut out = Vec::with_capacity(rows);
            let read = match &mut column {
                ColumnReader::BoolColumnReader(r) => {
                    read_column(r, rows, max_def, |&v| u8::from(v).to_string(), &mut out)
                }
                ColumnReader::Int32ColumnReader(r) => {
                    read_column(r, rows, max_def, |v| v.to_string(), &mut out)
                }
                ColumnReader::Int64ColumnReader(r) => {
                    read_column(r, rows, max_def, |v| v.to_string(), &mut out)
                }
                ColumnReader::FloatColumnReader(r) => {
                    read_column(r, rows, max_def, |v| v.to_string(), &mut out)
                }
                ColumnReader::DoubleColumnReader(r) => {
                    read_column(r, rows, max_def, |v| v.to_string(), &mut out)
                }
                ColumnReader::ByteArrayColumnReader(r) => read_column(
                    r,
                    rows,
                    max_def,
                    |v| String::from_utf8_lossy(v.data()).into_owned(),
                    &mut out,
                ),
                _ => {
                    return Err(Error::Data(format!(
                        "{}: column '{}' holds {}: expected integers, booleans, numbers or strings",
                        name.display(),
                        crate::error::printable(&columns[i]),
                        type_words(schema.column(i).physical_type())
                    )))
                }
            };
            read.map_err(|e| unreadable(name, e))?;
            if out.len() != rows {
                return Err(unreadable(
                    name,
                    parquet::errors::ParquetError::General(format!(
                        "row group {g} ends before its {rows} rows"
                    )),
                ));
            }
            values.push(out);
        }
        for r in 0..rows {
            row += 1;
            for (k, column) in values.iter().enumerate() {
                let refuse = |what: &str| {
                    Error::Data(format!(
                        "{}, row {row}: {} {what}",
                        name.display(),
                        crate::error::printable(header[k])
                    ))
                };
                let value = column[r].as_deref().ok_or_else(|| refuse("is null"))?;
                if value.contains(['\t', '\n', '\r']) {
                    return Err(refuse("holds a tab or a line end"));
                }
                if k > 0 {
                    text.push(b'\t');
                }
                text.extend_from_slice(value.as_bytes());
            }
            text.push(b'\n');
        }
    }
    Ok(text)
}

/// One row group's worth of rows being written.
struct Pending {
    qids: Vec<i64>,
    labels: Vec<i32>,
    /// Column-major non-null values and definition levels (1 present, 0 null).
    values: Vec<Vec<f32>>,
    levels: Vec<Vec<i16>>,
}

impl Pending {
    fn new(nf: usize) -> Pending {
        Pending {
            qids: Vec::new(),
            labels: Vec::new(),
            values: vec![Vec::new(); nf],
            levels: vec![Vec::new(); nf],
        }
    }
}

/// Writes rows in the layout above, a row group at a time, cutting groups at query boundaries.
pub struct ParquetWriter<W: std::io::Write + Send> {
    writer: SerializedFileWriter<W>,
    pending: Pending,
    n_features: usize,
    name: PathBuf,
    rows: u64,
    row_group_rows: usize,
}

impl<W: std::io::Write + Send> ParquetWriter<W> {
    /// A writer of `n_features` feature columns named `f1`, `f2`, ...; `name` names the output
    /// in errors.
    pub fn new(name: &Path, out: W, n_features: usize) -> Result<Self> {
        let names: Vec<String> = (1..=n_features).map(|k| format!("f{k}")).collect();
        Self::named(name, out, &names)
    }

    /// A writer of `data`'s feature columns, under their names where the data keep them (read
    /// from Parquet), else `f1`, `f2`, ...: a file converted keeps its columns' names.
    pub fn for_data(name: &Path, out: W, data: &Dataset) -> Result<Self> {
        match &data.feature_names {
            Some(names) if names.len() == data.n_features => Self::named(name, out, names),
            _ => Self::new(name, out, data.n_features),
        }
    }

    /// A writer of feature columns named `names`, in order.
    fn named(name: &Path, out: W, names: &[String]) -> Result<Self> {
        let n_features = names.len();
        let fail = |e: parquet::errors::ParquetError| {
            Error::io(name, std::io::Error::other(e.to_string()))
        };
        let mut fields = vec![
            Arc::new(
                Type::primitive_type_builder(QID, Physical::INT64)
                    .with_repetition(Repetition::REQUIRED)
                    .build()
                    .map_err(fail)?,
            ),
            Arc::new(
                Type::primitive_type_builder(LABEL, Physical::INT32)
                    .with_repetition(Repetition::REQUIRED)
                    .build()
                    .map_err(fail)?,
            ),
        ];
        for column in names {
            fields.push(Arc::new(
                Type::primitive_type_builder(column, Physical::FLOAT)
                    .with_repetition(Repetition::OPTIONAL)
                    .build()
                    .map_err(fail)?,
            ));
        }
        let schema = Type::group_type_builder("letor")
            .with_fields(fields)
            .build()
            .map_err(fail)?;
        let properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("distillrank {}", env!("CARGO_PKG_VERSION")))
            .build();
        let writer =
            SerializedFileWriter::new(out, Arc::new(schema), Arc::new(properties)).map_err(fail)?;
        Ok(ParquetWriter {
            writer,
            pending: Pending::new(n_features),
            n_features,
            name: name.to_path_buf(),
            rows: 0,
            row_group_rows: ROW_GROUP_ROWS,
        })
    }

    /// Row groups of at least `rows` rows (then up to the end of their last query) instead of
    /// [`ROW_GROUP_ROWS`].
    pub fn with_row_group_rows(mut self, rows: usize) -> Self {
        self.row_group_rows = rows.max(1);
        self
    }

    /// Appends one document: its qid, grade and features as a LETOR line has them (index,
    /// value), indices increasing; those left out are written as nulls.
    pub fn push(&mut self, qid: u64, grade: u8, features: &[(u32, f64)]) -> Result<()> {
        // The qid column is int64: a qid read from an unsigned column may be past it.
        let qid = i64::try_from(qid).map_err(|_| {
            Error::Config(format!(
                "qid {qid} is above what the written file's qid column (int64) holds, 2^63 - 1: renumber the queries"
            ))
        })?;
        let starts_query = self.pending.qids.last() != Some(&qid);
        if starts_query && self.pending.qids.len() >= self.row_group_rows {
            self.flush()?;
        }
        self.pending.qids.push(qid);
        self.pending.labels.push(grade as i32);
        let mut given = features.iter().peekable();
        for k in 0..self.n_features {
            let index = k as u32 + 1;
            while given.peek().is_some_and(|&&(i, _)| i < index) {
                given.next();
            }
            match given.peek() {
                Some(&&(i, v)) if i == index => {
                    self.pending.values[k].push(v as f32);
                    self.pending.levels[k].push(1);
                }
                _ => self.pending.levels[k].push(0),
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Writes the pending rows as one row group.
    fn flush(&mut self) -> Result<()> {
        if self.pending.qids.is_empty() {
            return Ok(());
        }
        let name = self.name.clone();
        let fail = |e: parquet::errors::ParquetError| {
            Error::io(&name, std::io::Error::other(e.to_string()))
        };
        let pending = std::mem::replace(&mut self.pending, Pending::new(self.n_features));
        let mut group = self.writer.next_row_group().map_err(fail)?;
        let mut column = 0;
        while let Some(mut writer) = group.next_column().map_err(fail)? {
            match column {
                0 => {
                    writer
                        .typed::<parquet::data_type::Int64Type>()
                        .write_batch(&pending.qids, None, None)
                        .map_err(fail)?;
                }
                1 => {
                    writer
                        .typed::<parquet::data_type::Int32Type>()
                        .write_batch(&pending.labels, None, None)
                        .map_err(fail)?;
                }
                c => {
                    writer
                        .typed::<parquet::data_type::FloatType>()
                        .write_batch(&pending.values[c - 2], Some(&pending.levels[c - 2]), None)
                        .map_err(fail)?;
                }
            }
            writer.close().map_err(fail)?;
            column += 1;
        }
        group.close().map_err(fail)?;
        Ok(())
    }

    /// Writes what is pending and the footer; returns the rows written.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        let name = self.name.clone();
        self.writer
            .close()
            .map_err(|e| Error::io(&name, std::io::Error::other(e.to_string())))?;
        Ok(self.rows)
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    #[test]
    fn part_names_sort_as_numbers() {
        let mut names = vec![
            "part.10.parquet",
            "part.2.parquet",
            "part.1.parquet",
            "part.0.parquet",
        ];
        names.sort_by(|a, b| natural_order(a, b));
        assert_eq!(
            names,
            [
                "part.0.parquet",
                "part.1.parquet",
                "part.2.parquet",
                "part.10.parquet"
            ]
        );
    }
}

//! `data convert`: ranking data from one format into another, document by document, keeping
//! which entries the input left out. In: LETOR text (gzip or not; groups from `FILE.query`
//! where it has no qid), Parquet (a file or a folder of parts), or a `.drcache`. Out: Parquet
//! ([`crate::data::parquet`]) when the name ends in `.parquet`, LETOR text otherwise (gzip when
//! it ends in `.gz`), each line with its docid comment where the input's had one.

use std::io::Write;
use std::path::Path;

use crate::data::letor::{read_letor_file, scan_letor, ReadOptions, DEFAULT_MAX_FEATURE_INDEX};
use crate::data::parquet::{is_parquet_path, scan_parquet_path, ParquetWriter};
use crate::data::Dataset;
use crate::error::{Error, Result};

/// What a conversion wrote.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Converted {
    pub docs: usize,
    pub queries: usize,
    pub features: usize,
    pub format: &'static str,
    /// Documents whose docid comment the output has no place for (Parquet's).
    #[serde(skip_serializing_if = "is_zero")]
    pub docids_left_out: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The output format a name asks for.
pub fn writes_parquet(out: &Path) -> bool {
    out.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
}

/// Converts `input` into `out` (named `out_name` in errors), in the format `out_name` asks for.
pub fn convert(
    input: &Path,
    query: Option<&Path>,
    out_name: &Path,
    out: &mut (dyn Write + Send),
) -> Result<Converted> {
    // The first pass reads and checks everything and gives the grades and groups; the second
    // gives each document's entries as the input has them.
    let cached = crate::data::cache::is_cache_path(input);
    crate::data::check_rereadable(
        input,
        "data convert (once to check it, once to copy each document)",
    )?;
    let data = if cached {
        crate::data::cache::read_cache(input, None)?.0
    } else {
        read_letor_file(input, query, &ReadOptions::default())?
    };
    let parquet = writes_parquet(out_name);
    let mut sink: Box<dyn Sink + '_> = if parquet {
        Box::new(ParquetWriter::for_data(out_name, out, &data)?)
    } else if crate::output::writes_gzip(out_name) {
        Box::new(GzText(Text(flate2::write::GzEncoder::new(
            out,
            flate2::Compression::default(),
        ))))
    } else {
        Box::new(Text(out))
    };
    let mut doc = 0usize;
    let mut group = 0usize;
    let mut docids_left_out = 0usize;
    let n_docs = data.n_docs();
    let changed = |second: &str| {
        Error::Config(format!(
            "{} changed while it was converted: {n_docs} documents on the first reading, {second} on the second; {} is incomplete",
            input.display(),
            out_name.display()
        ))
    };
    let mut on_row =
        |qid: Option<u64>, features: &[(u32, f64)], docid: Option<&str>| -> Result<()> {
            if doc == n_docs {
                return Err(changed("more"));
            }
            while doc >= data.group_offsets[group + 1] {
                group += 1;
            }
            // Groups from a .query file have no qid on their lines: numbered as the reader did.
            let qid = qid.unwrap_or(data.qids[group]);
            sink.push(
                out_name,
                &Document {
                    qid,
                    grade: data.grades[doc],
                    features,
                    docid,
                },
            )?;
            docids_left_out += usize::from(parquet && docid.is_some());
            doc += 1;
            Ok(())
        };
    if cached {
        each_row_of(&data, &mut |qid, _, row| on_row(Some(qid), row, None))?;
    } else if is_parquet_path(input) {
        scan_parquet_path(input, &mut |row| on_row(row.qid, row.features, None))?;
    } else {
        let file = std::fs::File::open(input).map_err(|e| Error::io(input, e))?;
        scan_letor(input, file, DEFAULT_MAX_FEATURE_INDEX, &mut |row| {
            on_row(row.qid, row.features, row.docid)
        })?;
    }
    if doc != n_docs {
        return Err(changed(&doc.to_string()));
    }
    sink.finish(out_name)?;
    Ok(Converted {
        docs: data.n_docs(),
        queries: data.n_groups(),
        features: data.n_features,
        format: if parquet { "parquet" } else { "letor" },
        docids_left_out,
    })
}

/// What hears each document of a data set: its qid, its index and its entries.
type OnRow<'a> = dyn FnMut(u64, usize, &[(u32, f64)]) -> Result<()> + 'a;

/// Every document of a data set with every entry present.
fn each_row_of(data: &Dataset, on_row: &mut OnRow) -> Result<()> {
    let mut row = Vec::with_capacity(data.n_features);
    for g in 0..data.n_groups() {
        for d in data.group(g) {
            row.clear();
            row.extend(
                data.row(d)
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| (k as u32 + 1, v as f64)),
            );
            on_row(data.qids[g], d, &row)?;
        }
    }
    Ok(())
}

/// Writes a data set as Parquet, every entry present (its matrix does not know which entries a
/// file left out; [`convert`] keeps them out). Returns the rows written.
pub fn write_parquet(name: &Path, data: &Dataset, out: impl Write + Send) -> Result<u64> {
    let mut writer = ParquetWriter::for_data(name, out, data)?;
    each_row_of(data, &mut |qid, doc, row| {
        writer.push(qid, data.grades[doc], row)
    })?;
    writer.finish()
}

/// Stages the data set `data` at `path` in the format its name asks for: Parquet where it ends
/// in `.parquet` (every entry present), LETOR text otherwise as `text` writes it (gzip where it
/// ends in `.gz`). Every command that writes a data file writes it through here
/// ([`check_data_file`] first).
pub fn stage_data(
    path: &Path,
    data: &crate::data::Dataset,
    text: impl FnOnce(&mut (dyn std::io::Write + Send)) -> std::io::Result<()>,
) -> Result<crate::output::Staged> {
    if !writes_parquet(path) {
        return crate::output::stage_text(path, text);
    }
    let mut failed = None;
    let staged = crate::output::stage_with(path, |w| {
        write_parquet(path, data, w)
            .map(|_| ())
            .map_err(|e| std::io::Error::other(failed.insert(e).to_string()))
    });
    match failed {
        Some(e) => Err(e),
        None => staged,
    }
}

/// Refuses a data file's output name that no format of its own answers: a `.drcache` is the
/// binary cache `data cache` writes beside the file it caches, and text under its name would be
/// read as a cache; then [`crate::output::check_file`].
pub fn check_data_file(path: &Path) -> Result<()> {
    let name = crate::error::printable(&path.display().to_string());
    let last = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let before = path
        .file_stem()
        .map(Path::new)
        .and_then(Path::extension)
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let written = "name a LETOR output (.txt, or .txt.gz for gzip) or a Parquet one (.parquet)";
    let why = match (last.as_deref(), before.as_deref()) {
        (Some("drcache"), _) => {
            "a .drcache is the binary cache data cache writes beside the file it caches (FILE.drcache)".to_string()
        }
        (Some(other @ ("bz2" | "xz" | "zst" | "zstd" | "lz4" | "zip" | "7z" | "br")), _) => {
            format!("a .{other} name asks for a compression distillrank does not write (gzip only)")
        }
        (Some("gz"), Some("parquet")) => {
            "Parquet compresses its own pages: a .parquet.gz would be gzip-compressed LETOR text".to_string()
        }
        _ => return crate::output::check_file(path),
    };
    Err(Error::Config(format!("{name}: {why}: {written}")))
}

/// One converted document: its qid, grade and entries as its input had them, and its docid
/// comment where its line had one (kept by text, which has a place for it).
struct Document<'a> {
    qid: u64,
    grade: u8,
    features: &'a [(u32, f64)],
    docid: Option<&'a str>,
}

/// Where converted documents go (`name`: the output, in errors).
trait Sink {
    fn push(&mut self, name: &Path, doc: &Document) -> Result<()>;
    fn finish(self: Box<Self>, name: &Path) -> Result<()>;
}

impl<W: Write + Send> Sink for ParquetWriter<W> {
    fn push(&mut self, _: &Path, doc: &Document) -> Result<()> {
        ParquetWriter::push(self, doc.qid, doc.grade, doc.features)
    }
    fn finish(self: Box<Self>, _: &Path) -> Result<()> {
        ParquetWriter::finish(*self).map(|_| ())
    }
}

/// LETOR text: present entries only, each value in the shortest form that reads back the same.
struct Text<W: Write>(W);

/// A value as text: as an f32 where it is one (a Parquet float column's), so that it reads
/// back the same without f64 digits it never had.
fn shortest(v: f64) -> String {
    let narrow = v as f32;
    if narrow as f64 == v {
        narrow.to_string()
    } else {
        v.to_string()
    }
}

impl<W: Write> Text<W> {
    fn line(&mut self, doc: &Document) -> std::io::Result<()> {
        write!(self.0, "{} qid:{}", doc.grade, doc.qid)?;
        for &(index, value) in doc.features {
            write!(self.0, " {index}:{}", shortest(value))?;
        }
        if let Some(id) = doc.docid {
            write!(self.0, " #docid = {id}")?;
        }
        writeln!(self.0)
    }
}

impl<W: Write> Sink for Text<W> {
    fn push(&mut self, name: &Path, doc: &Document) -> Result<()> {
        self.line(doc).map_err(|e| Error::io(name, e))
    }
    fn finish(mut self: Box<Self>, name: &Path) -> Result<()> {
        self.0.flush().map_err(|e| Error::io(name, e))
    }
}

/// LETOR text, gzip-compressed.
struct GzText<W: Write>(Text<flate2::write::GzEncoder<W>>);

impl<W: Write> Sink for GzText<W> {
    fn push(&mut self, name: &Path, doc: &Document) -> Result<()> {
        self.0.push(name, doc)
    }
    fn finish(self: Box<Self>, name: &Path) -> Result<()> {
        self.0
             .0
            .finish()
            .map(|_| ())
            .map_err(|e| Error::io(name, e))
    }
}

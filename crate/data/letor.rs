//! Reader for SVMlight / LETOR ranking data (spec §1.1):
//!
//! ```text
//! <grade> qid:<id> <index>:<value> <index>:<value> ... [# comment]
//! ```
//!
//! Indices start at 1 and may be sparse (absent = 0). Query groups are the contiguous runs of one
//! qid. LightGBM-style files have no `qid:`; their group sizes come from a `.query` file, one count
//! a line. Input may be gzip-compressed (detected from its first bytes).
//!
//! The reader streams: text is read in blocks of [`BLOCK_BYTES`], each block is cut at line ends
//! into pieces parsed in parallel (rayon, native only) while the next block is read, and the
//! pieces are written in order into a dense row-major feature matrix, in parallel too. A 2 GB
//! file is never held in memory as text.
//!
//! Every reader here also takes Parquet ([`crate::data::parquet`]), known by its first bytes.
//!
//! Every malformed line gives [`Error::Parse`] naming file, line, column and what was expected.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::data::features::Scratch;
use crate::data::{Dataset, Features};
use crate::error::{Error, Result};

/// Bytes of text read (and parsed in parallel) at a time.
pub const BLOCK_BYTES: usize = 16 << 20;
/// The largest feature index accepted by default: the features are stored densely, and real LETOR
/// sets have at most a few thousand (Yahoo: 700, Istella: 220, MSLR-WEB: 136).
pub const DEFAULT_MAX_FEATURE_INDEX: u32 = 65_536;
/// The largest relevance grade accepted. LETOR sets grade 0..4 (MQ2008 0..2); a larger first
/// column is far more likely a document id or a raw score than a grade, and would make the NDCG
/// gain 2^g - 1 meaningless.
pub const MAX_GRADE: u8 = 31;
/// The longest line accepted. A dense line of 65,536 features is about 1.5 MB; a longer line is
/// not LETOR text (a binary file, `/dev/zero`, a file with no line ends).
pub const MAX_LINE_BYTES: usize = 16 << 20;
/// The UTF-8 byte-order mark some editors put at the start of a text file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// How to read a LETOR file.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Feature indices above this are rejected with a clear error.
    pub max_feature_index: u32,
    /// Where the feature matrix is built: in memory, or in a scratch file (`data cache`, and the
    /// first run with `--prepared-cache`), so that reading a file is not bound by memory.
    pub scratch: Scratch,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            max_feature_index: DEFAULT_MAX_FEATURE_INDEX,
            scratch: Scratch::Memory,
        }
    }
}

/// Reads a LETOR file, gzip-compressed or not. `query` names a LightGBM-style `.query` file of
/// group sizes; without one, `FILE.query` is used when the file has no `qid:` and it exists.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_letor_file(
    path: &Path,
    query: Option<&Path>,
    options: &ReadOptions,
) -> Result<Dataset> {
    read_letor_file_with_progress(path, query, options, &mut |_| {})
}

/// [`read_letor_file`], calling `on_bytes` with the number of (compressed) bytes read so far.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_letor_file_with_progress(
    path: &Path,
    query: Option<&Path>,
    options: &ReadOptions,
    on_bytes: &mut dyn FnMut(u64),
) -> Result<Dataset> {
    if crate::data::parquet::is_parquet_path(path) {
        if let Some(q) = query {
            return Err(Error::Config(format!(
                "{} is Parquet, whose '{}' column gives the groups: a .query file ({}) has no place beside it",
                path.display(),
                crate::data::parquet::QID,
                q.display()
            )));
        }
        return crate::data::parquet::read_parquet_path(path, options, &mut |_| {});
    }
    let open = || std::fs::File::open(path).map_err(|e| Error::io(path, e));
    let query_sizes = match query {
        Some(q) => Some(read_query_file(q)?),
        None => None,
    };
    let file = Counting {
        inner: open()?,
        read: 0,
        on_bytes: &mut *on_bytes,
    };
    let mut dataset = read_letor(path, file, query_sizes.clone(), options);
    if let Some(q) = query {
        dataset = naming_query_file(dataset, q);
    }
    // A file without qid: and no .query given: look beside it, as LightGBM does.
    if query_sizes.is_none() {
        if let Err(Error::Parse { message, .. }) = &dataset {
            if message.starts_with(NO_GROUPS) {
                let beside = PathBuf::from(format!("{}.query", path.display()));
                if beside.exists() {
                    let sizes = read_query_file(&beside)?;
                    let file = Counting {
                        inner: open()?,
                        read: 0,
                        on_bytes: &mut *on_bytes,
                    };
                    dataset =
                        naming_query_file(read_letor(path, file, Some(sizes), options), &beside);
                }
            }
        }
    }
    let mut dataset = dataset?;
    dataset.source = Some(path.to_path_buf());
    Ok(dataset)
}

/// Names the `.query` file `query` where its group sizes and the data file's documents disagree:
/// either file may be the wrong one.
pub fn naming_query_file(read: Result<Dataset>, query: &Path) -> Result<Dataset> {
    read.map_err(|e| match e {
        Error::Parse { at, message } if message.starts_with(QUERY_SIZES_DISAGREE) => {
            let message = message.replacen(
                QUERY_SIZES_DISAGREE,
                &format!(
                    "the group sizes in {} add up to",
                    crate::error::printable(&query.display().to_string())
                ),
                1,
            );
            Error::Parse { at, message }
        }
        e => e,
    })
}

/// A reader that reports how many bytes went through it.
#[cfg(not(target_arch = "wasm32"))]
struct Counting<'a, R> {
    inner: R,
    read: u64,
    on_bytes: &'a mut dyn FnMut(u64),
}

#[cfg(not(target_arch = "wasm32"))]
impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        (self.on_bytes)(self.read);
        Ok(n)
    }
}

/// The largest `.query` file any door reads: it holds one number a line, and 64 MiB is millions
/// of groups.
pub const MAX_QUERY_FILE_BYTES: u64 = 64 << 20;

/// What a `.query` file should be, in the refusal of one too large.
pub const QUERY_FILE: &str = "a .query file";

/// Reads a `.query` file: one positive group size a line (blank lines ignored).
#[cfg(not(target_arch = "wasm32"))]
pub fn read_query_file(path: &Path) -> Result<Vec<usize>> {
    let bytes = crate::data::read_capped(path, MAX_QUERY_FILE_BYTES, QUERY_FILE)?;
    parse_query_sizes(path, &bytes)
}

/// Reads the `.query` file `name` of `size` bytes from `reader` (the page's upload), refused
/// before a byte is read when it is larger than any door reads ([`MAX_QUERY_FILE_BYTES`]).
pub fn read_query_sizes(name: &Path, size: u64, reader: impl Read) -> Result<Vec<usize>> {
    if size > MAX_QUERY_FILE_BYTES {
        return Err(crate::data::too_large(
            name,
            Some(size),
            MAX_QUERY_FILE_BYTES,
            QUERY_FILE,
        ));
    }
    let mut bytes = Vec::new();
    reader
        .take(MAX_QUERY_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(name, e))?;
    if bytes.len() as u64 > MAX_QUERY_FILE_BYTES {
        return Err(crate::data::too_large(
            name,
            None,
            MAX_QUERY_FILE_BYTES,
            QUERY_FILE,
        ));
    }
    parse_query_sizes(name, &bytes)
}

/// Parses the text of a `.query` file (see [`read_query_file`]); `name` is used in errors.
pub fn parse_query_sizes(name: &Path, bytes: &[u8]) -> Result<Vec<usize>> {
    let bytes = bytes.strip_prefix(BOM).unwrap_or(bytes);
    let mut sizes = Vec::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        match text.parse::<usize>() {
            Ok(0) => {
                return Err(Error::parse(
                    name,
                    i as u64 + 1,
                    1,
                    "group size 0: every query group needs at least one document",
                ))
            }
            Ok(n) => sizes.push(n),
            Err(_) => {
                let message = format!(
                    "expected a group size (a positive integer), found '{}'",
                    shorten(text)
                );
                let message = if sizes.is_empty() {
                    unquoted_as(
                        &message,
                        "a .query file's lines read one group size each, as LightGBM writes them",
                    )
                } else {
                    message
                };
                return Err(Error::parse(name, i as u64 + 1, 1, message));
            }
        }
    }
    if sizes.is_empty() {
        return Err(Error::parse(
            name,
            0,
            0,
            "empty .query file: expected one group size a line",
        ));
    }
    Ok(sizes)
}

/// The first bytes of every binary cache (`data cache`'s `FILE.drcache`).
pub const CACHE_MAGIC: [u8; 8] = *b"DRLETOR\0";

/// Refuses a binary cache's bytes reached through a reader (a pipe, an upload, Python's bytes):
/// a cache is mapped from its file, which the file readers tell by these same bytes.
fn refuse_cache_bytes(name: &Path, head: &[u8]) -> Result<()> {
    if head.starts_with(&CACHE_MAGIC) {
        return Err(Error::Config(format!(
            "{} is a distillrank binary cache, which is read from its file on disk (by its path, in the CLI and Python): give the LETOR or Parquet file it was made from",
            crate::error::printable(&name.display().to_string())
        )));
    }
    Ok(())
}

/// Reads LETOR text from any reader (a file, a decompressor, an uploaded buffer). `name` is the
/// file name used in errors. Gzip input is detected and decompressed; Parquet
/// ([`crate::data::parquet`]) is detected and read as Parquet.
pub fn read_letor(
    name: &Path,
    reader: impl Read,
    query_sizes: Option<Vec<usize>>,
    options: &ReadOptions,
) -> Result<Dataset> {
    let mut reader = std::io::BufReader::new(reader);
    let (is_gzip, is_parquet) = {
        use std::io::BufRead;
        let head = reader.fill_buf().map_err(|e| Error::io(name, e))?;
        refuse_cache_bytes(name, head)?;
        let is_gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
        (is_gzip, crate::data::parquet::is_parquet(head))
    };
    if is_parquet {
        if query_sizes.is_some() {
            return Err(Error::Config(format!(
                "{} is Parquet, whose '{}' column gives the groups: a .query file has no place beside it",
                name.display(),
                crate::data::parquet::QID
            )));
        }
        return crate::data::parquet::read_parquet_reader(name, reader, options);
    }
    if is_gzip {
        read_blocks(name, Gunzip::new(reader), query_sizes, options)
    } else {
        read_blocks(name, reader, query_sizes, options)
    }
}

/// The text of a gzip-compressed file, whose errors say what the file is and what it should
/// have been (the decoder's own: "incomplete deflate stream", "invalid gzip header").
struct Gunzip<R: Read>(flate2::read::MultiGzDecoder<R>);

impl<R: Read> Gunzip<R> {
    fn new(reader: R) -> Self {
        Gunzip(flate2::read::MultiGzDecoder::new(reader))
    }
}

impl<R: Read> Read for Gunzip<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::io::ErrorKind;
        self.0.read(buf).map_err(|e| match e.kind() {
            // The decoder's: the stream itself is broken (the reader's own errors pass).
            ErrorKind::InvalidInput | ErrorKind::InvalidData | ErrorKind::UnexpectedEof => {
                std::io::Error::new(
                    e.kind(),
                    format!(
                        "{}; expected LETOR text, compressed or not",
                        not_whole_gzip(&e)
                    ),
                )
            }
            _ => e,
        })
    }
}

/// What a gzip stream the decoder refused (`e`) is: "gzip-compressed, and not a whole gzip
/// stream (incomplete deflate stream): a file cut short, or bytes after its end".
pub fn not_whole_gzip(e: &std::io::Error) -> String {
    format!("gzip-compressed, and not a whole gzip stream ({e}): a file cut short, or bytes after its end")
}

/// Parses LETOR text held in memory (an upload in the browser, a test).
pub fn parse_letor_bytes(
    name: &Path,
    bytes: &[u8],
    query_sizes: Option<Vec<usize>>,
    options: &ReadOptions,
) -> Result<Dataset> {
    read_letor(name, bytes, query_sizes, options)
}

const NO_GROUPS: &str = "no qid: on any line and no .query file";
/// How a disagreement between a `.query` file's group sizes and the file's documents begins.
const QUERY_SIZES_DISAGREE: &str = "the .query file's group sizes add up to";

fn read_blocks(
    name: &Path,
    mut reader: impl Read,
    query_sizes: Option<Vec<usize>>,
    options: &ReadOptions,
) -> Result<Dataset> {
    let mut builder = Builder::new(name, options.max_feature_index, options.scratch.clone());
    let mut buffer: Vec<u8> = Vec::with_capacity(BLOCK_BYTES + 4096);
    let mut first_line: u64 = 1; // line number of buffer[0]
    let mut eof = fill(name, &mut reader, &mut buffer)?;
    // A byte-order mark is not part of the first grade.
    if buffer.starts_with(BOM) {
        buffer.drain(..BOM.len());
    }
    loop {
        let ended = eof;
        // Parse up to the last complete line; the rest starts the next block.
        let end = if ended {
            buffer.len()
        } else {
            buffer
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1)
        };
        let mut next = buffer.split_off(end);
        let overlong = next.len() > MAX_LINE_BYTES;
        // Natively the next block is read while this one is parsed.
        let parsed = if ended || overlong {
            parse_pieces(&buffer, options.max_feature_index)
        } else {
            let (parsed, next_eof) =
                parse_while_reading(&buffer, options, || fill(name, &mut reader, &mut next));
            eof = next_eof?;
            parsed
        };
        first_line += append_pieces(name, parsed, first_line, &mut builder)?;
        // What is left is one unfinished line: it may grow no further than MAX_LINE_BYTES.
        if overlong {
            return Err(Error::parse(
                name,
                first_line,
                0,
                format!("line {first_line} runs past {} MiB without a line end: expected LETOR text, one document a line", MAX_LINE_BYTES >> 20),
            ));
        }
        if ended {
            break;
        }
        buffer = next;
    }
    builder.finish(query_sizes)
}

/// Reads into `buffer` (which may hold the tail of the previous block) until it holds
/// `BLOCK_BYTES`, or twice what it held: without a line end in it, it doubles, so a huge line (or
/// a file without '\n') is read in linear time, never rescanned block after block. Returns
/// whether the input ended.
fn fill(name: &Path, reader: &mut impl Read, buffer: &mut Vec<u8>) -> Result<bool> {
    let start = buffer.len();
    buffer.resize(BLOCK_BYTES.max(2 * start), 0);
    let mut filled = start;
    let mut eof = false;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => {
                eof = true;
                break;
            }
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(name, e)),
        }
    }
    buffer.truncate(filled);
    Ok(eof)
}

type Parsed = Vec<std::result::Result<Piece, PieceError>>;

/// Parses `block` on another thread while `read` runs on this one (which keeps the reader and
/// its progress callback).
#[cfg(not(target_arch = "wasm32"))]
fn parse_while_reading<T>(
    block: &[u8],
    options: &ReadOptions,
    read: impl FnOnce() -> T,
) -> (Parsed, T) {
    std::thread::scope(|scope| {
        let parsing = scope.spawn(|| parse_pieces(block, options.max_feature_index));
        let read = read();
        let parsed = match parsing.join() {
            Ok(parsed) => parsed,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        (parsed, read)
    })
}

#[cfg(target_arch = "wasm32")]
fn parse_while_reading<T>(
    block: &[u8],
    options: &ReadOptions,
    read: impl FnOnce() -> T,
) -> (Parsed, T) {
    (parse_pieces(block, options.max_feature_index), read())
}

/// Cuts `block` (whole lines) into pieces and parses them, in parallel natively.
fn parse_pieces(block: &[u8], max_index: u32) -> Parsed {
    const PIECE_BYTES: usize = 1 << 20;
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < block.len() {
        let mut end = (at + PIECE_BYTES).min(block.len());
        if end < block.len() {
            end = block[end..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(block.len(), |p| end + p + 1);
        }
        pieces.push(&block[at..end]);
        at = end;
    }
    let parse = |piece: &&[u8]| parse_piece(piece, max_index);
    #[cfg(not(target_arch = "wasm32"))]
    {
        use rayon::prelude::*;
        pieces.par_iter().map(parse).collect()
    }
    #[cfg(target_arch = "wasm32")]
    pieces.iter().map(parse).collect()
}

/// Appends parsed pieces, in order, starting at line `first_line`: groups and grades in order
/// (the checks that need what came before), then the dense rows of every piece at once. Returns
/// the number of lines.
fn append_pieces(
    name: &Path,
    parsed: Parsed,
    first_line: u64,
    builder: &mut Builder,
) -> Result<u64> {
    let mut line = first_line;
    let stored = builder.grades.len();
    let mut pieces = Vec::with_capacity(parsed.len());
    for piece in parsed {
        match piece {
            Ok(piece) => {
                builder.record(&piece, line)?;
                line += piece.lines;
                pieces.push(piece);
            }
            Err(e) => {
                let at = line + e.line;
                let message = if at == 1 {
                    unquoted(&e.message)
                } else {
                    e.message
                };
                return Err(Error::parse(name, at, e.column, message));
            }
        }
    }
    builder.densify(stored, &pieces)?;
    Ok(line - first_line)
}

/// One parsed piece of text: documents in sparse form, line numbers relative to the piece.
#[derive(Default)]
struct Piece {
    grades: Vec<u8>,
    qids: Vec<Option<u64>>,
    /// Line (0-based, within the piece) of each document.
    doc_lines: Vec<u32>,
    /// Document d's features are `indices/values[row_starts[d]..row_starts[d + 1]]`.
    row_starts: Vec<u32>,
    indices: Vec<u32>,
    values: Vec<f32>,
    max_index: u32,
    lines: u64,
}

struct PieceError {
    line: u64,
    column: u64,
    message: String,
}

fn parse_piece(text: &[u8], max_index: u32) -> std::result::Result<Piece, PieceError> {
    let mut piece = Piece::default();
    piece.row_starts.push(0);
    let mut lines = text.split(|&b| b == b'\n').peekable();
    while let Some(line) = lines.next() {
        // The split yields an empty last item after a final newline: not a line.
        if line.is_empty() && lines.peek().is_none() {
            break;
        }
        let line_no = piece.lines;
        if line.len() > MAX_LINE_BYTES {
            return Err(PieceError {
                line: line_no,
                column: 0,
                message: format!(
                    "line of {} MiB, longer than the {} MiB a LETOR line can be: expected one document a line",
                    line.len() >> 20,
                    MAX_LINE_BYTES >> 20
                ),
            });
        }
        parse_line(line, max_index, &mut piece).map_err(|(column, message)| PieceError {
            line: line_no,
            column,
            message,
        })?;
        piece.lines += 1;
    }
    Ok(piece)
}

/// Parses one line into `piece`; on error returns (1-based column, message).
fn parse_line(
    line: &[u8],
    max_index: u32,
    piece: &mut Piece,
) -> std::result::Result<(), (u64, String)> {
    let line_no = piece.lines as u32;
    let (indices, values) = (&mut piece.indices, &mut piece.values);
    let mut max_seen = piece.max_index;
    let fields = parse_fields(line, max_index, &mut |index, value_tok| {
        let value = std::str::from_utf8(value_tok)
            .ok()
            .and_then(|s| s.parse::<f32>().ok())
            .ok_or_else(|| {
                format!(
                    "feature {index}: value '{}' is not a number",
                    show(value_tok)
                )
            })?;
        if !value.is_finite() {
            return Err(format!("feature {index}: value '{}' is not finite (NaN or infinity, or beyond the f32 range)", show(value_tok)));
        }
        if value != 0.0 {
            indices.push(index);
            values.push(value);
        }
        max_seen = max_seen.max(index);
        Ok(())
    })?;
    piece.max_index = max_seen;
    let Some((grade, qid)) = fields else {
        return Ok(()); // blank or comment-only line
    };
    piece.grades.push(grade);
    piece.qids.push(qid);
    piece.doc_lines.push(line_no);
    piece.row_starts.push(piece.indices.len() as u32);
    Ok(())
}

/// What a line's reader does with each feature: its index and its value's text; an error
/// message for the value's column.
type OnFeature<'a> = dyn FnMut(u32, &[u8]) -> std::result::Result<(), String> + 'a;

/// A line's grade and qid (None in a file whose groups come from a `.query` file).
type LineHead = (u8, Option<u64>);

/// Reads one line's grade and qid, and hands each feature's index and value text, in order, to
/// `on_feature` (whose error message is placed at the value's column). None for a blank or
/// comment-only line; on error, (1-based column, message). The one reading of a LETOR line:
/// [`parse_line`] keeps its values as f32, [`scan_letor`] as f64.
fn parse_fields(
    line: &[u8],
    max_index: u32,
    on_feature: &mut OnFeature<'_>,
) -> std::result::Result<Option<LineHead>, (u64, String)> {
    // The comment (after '#') and a Windows line end are not data.
    let data = match line.iter().position(|&b| b == b'#') {
        Some(p) => &line[..p],
        None => line,
    };
    let mut tokens = Tokens { line: data, at: 0 };
    let Some((grade_col, grade_tok)) = tokens.next() else {
        return Ok(None);
    };
    let grade = parse_grade(grade_tok).map_err(|m| (grade_col, m))?;
    let mut qid = None;
    let mut previous_index = 0u32;
    let mut first = true;
    for (col, tok) in tokens.by_ref() {
        if let Some(rest) = tok.strip_prefix(b"qid:") {
            if !first {
                return Err((col, "qid: must come right after the grade".into()));
            }
            first = false;
            let digits = !rest.is_empty() && rest.iter().all(u8::is_ascii_digit);
            let id = std::str::from_utf8(rest)
                .ok()
                .and_then(|s| s.parse::<u64>().ok());
            match id {
                Some(id) => qid = Some(id),
                // A number, too large: said so, without echoing a first line's text.
                None if digits => {
                    return Err((
                        col,
                        "qid: a number past 2^64 - 1: expected a query id that fits 64 bits".into(),
                    ));
                }
                None => {
                    return Err((
                        col,
                        format!("expected qid:<non-negative integer>, found '{}'", show(tok)),
                    ))
                }
            }
            continue;
        }
        first = false;
        let Some(colon) = tok.iter().position(|&b| b == b':') else {
            return Err((
                col,
                format!("expected <index>:<value>, found '{}'", show(tok)),
            ));
        };
        let (index_tok, value_tok) = (&tok[..colon], &tok[colon + 1..]);
        let index = match std::str::from_utf8(index_tok)
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
        {
            Some(i) => i,
            None => {
                return Err((
                    col,
                    format!(
                        "expected a feature index (a positive integer) before ':', found '{}'",
                        show(index_tok)
                    ),
                ))
            }
        };
        if index == 0 {
            return Err((col, "feature index 0: indices start at 1".into()));
        }
        if index > max_index as u64 {
            return Err((col, format!("feature index {index} exceeds the limit of {max_index} features (features are stored densely)")));
        }
        let index = index as u32;
        if index <= previous_index {
            return Err((col, format!("feature index {index} is not greater than the previous index {previous_index}: indices must increase")));
        }
        previous_index = index;
        let value_col = col + colon as u64 + 1;
        on_feature(index, value_tok).map_err(|message| (value_col, message))?;
    }
    Ok(Some((grade, qid)))
}

/// One document of a LETOR file as [`scan_letor`] gives it: its 1-based line, its qid (None in
/// a file whose groups come from a `.query` file), and its features as written, in increasing
/// index order, values in full (f64) precision. A feature the line leaves out is absent here;
/// one written as 0 is present with the value 0.
pub struct ScannedRow<'a> {
    pub line: u64,
    pub qid: Option<u64>,
    pub features: &'a [(u32, f64)],
    /// The document's id from the line's comment (`#docid = GX004-93-7097963 ...`, LETOR 4.0's;
    /// `docid:`, `docid=` too), when it has one.
    pub docid: Option<&'a str>,
}

/// The document id a LETOR line's comment names (`docid = X`, `docid=X`, `docid:X`).
fn docid(comment: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(comment).ok()?;
    let at = text.find("docid")?;
    let rest = text[at + 5..].trim_start();
    let rest = rest.strip_prefix(['=', ':'])?.trim_start();
    rest.split_whitespace().next()
}

/// Reads a LETOR file (gzip-compressed or not) line by line, giving each document to `on_row`
/// with its values in f64 precision: what scoring a model trained elsewhere needs, whose splits
/// compare the values a float64 reader saw (LightGBM's thresholds, read from a LETOR file or
/// from numpy). Each line is checked as [`read_letor`] checks it; the features are not stored.
pub fn scan_letor(
    name: &Path,
    reader: impl Read,
    max_index: u32,
    on_row: &mut dyn FnMut(ScannedRow) -> Result<()>,
) -> Result<()> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(reader);
    let (is_gzip, is_parquet) = {
        let head = reader.fill_buf().map_err(|e| Error::io(name, e))?;
        refuse_cache_bytes(name, head)?;
        let is_gzip = head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
        (is_gzip, crate::data::parquet::is_parquet(head))
    };
    if is_parquet {
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(name, e))?;
        return crate::data::parquet::scan_parquet_bytes(name, bytes, on_row);
    }
    let mut text: Box<dyn BufRead> = if is_gzip {
        Box::new(std::io::BufReader::new(Gunzip::new(reader)))
    } else {
        Box::new(reader)
    };
    let mut line = Vec::new();
    let mut features: Vec<(u32, f64)> = Vec::new();
    let mut line_no = 0u64;
    loop {
        line.clear();
        let n = (&mut text)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(|e| Error::io(name, e))?;
        if n == 0 {
            return Ok(());
        }
        line_no += 1;
        if line.len() > MAX_LINE_BYTES {
            return Err(Error::parse(name, line_no, 0, format!("line {line_no} runs past {} MiB without a line end: expected LETOR text, one document a line", MAX_LINE_BYTES >> 20)));
        }
        let body = if line_no == 1 {
            line.strip_prefix(BOM).unwrap_or(&line)
        } else {
            &line[..]
        };
        features.clear();
        let fields = parse_fields(body, max_index, &mut |index, value_tok| {
            let value = std::str::from_utf8(value_tok)
                .ok()
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| format!("feature {index}: value '{}' is not a number", show(value_tok)))?;
            if !(value as f32).is_finite() {
                return Err(format!("feature {index}: value '{}' is not finite (NaN or infinity, or beyond the f32 range)", show(value_tok)));
            }
            features.push((index, value));
            Ok(())
        })
        .map_err(|(column, message)| {
            let message = if line_no == 1 { unquoted(&message) } else { message };
            Error::parse(name, line_no, column, message)
        })?;
        if let Some((_, qid)) = fields {
            let comment = body
                .iter()
                .position(|&b| b == b'#')
                .map_or(&[][..], |p| &body[p + 1..]);
            on_row(ScannedRow {
                line: line_no,
                qid,
                features: &features,
                docid: docid(comment),
            })?;
        }
    }
}

fn parse_grade(tok: &[u8]) -> std::result::Result<u8, String> {
    let expected = || {
        format!(
            "expected a relevance grade (an integer 0..={MAX_GRADE}), found '{}'",
            show(tok)
        )
    };
    let text = std::str::from_utf8(tok).map_err(|_| expected())?;
    let too_large = || {
        format!("relevance grade {} is above {MAX_GRADE}, the largest grade accepted (LETOR grades are 0..4): is the first column a grade?", shorten(text))
    };
    // Whole numbers of any length (a 20-digit id as well as 300) are one case: too large.
    let digits = text.strip_prefix('+').unwrap_or(text);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return match digits.parse::<u64>() {
            Ok(g) if g <= MAX_GRADE as u64 => Ok(g as u8),
            _ => Err(too_large()),
        };
    }
    match text.parse::<f64>() {
        Ok(g) if g.is_finite() && g < 0.0 => Err(format!(
            "negative relevance grade '{}': expected an integer 0..={MAX_GRADE}",
            shorten(text)
        )),
        Ok(g) if g.is_finite() && g.fract() != 0.0 => Err(format!(
            "relevance grade '{}' is not an integer",
            shorten(text)
        )),
        Ok(g) if g.is_finite() && g <= MAX_GRADE as f64 => Ok(g as u8),
        Ok(g) if g.is_finite() => Err(too_large()),
        _ => Err(expected()),
    }
}

/// Whitespace-separated tokens of a line, with their 1-based columns.
struct Tokens<'a> {
    line: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = (u64, &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        let line = self.line;
        while self.at < line.len() && line[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
        if self.at >= line.len() {
            return None;
        }
        let start = self.at;
        while self.at < line.len() && !line[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
        Some((start as u64 + 1, &line[start..self.at]))
    }
}

/// How a command is given a file's `.query` file of group sizes, in the words of a file
/// without qids: a door without these flags says it its own way (Python's `query=`).
pub const QUERY_FILE_FLAGS: &str =
    "with the command's setting for this file: --query, --train-query, --valid-query or --test-query";

/// A message about a file's first line without the text it quotes. A file that fails on its first
/// line may be any file at all (`--train /etc/passwd`), so its content is never echoed; past the
/// first line the file has shown itself to be LETOR text, and the bad token helps to find it.
fn unquoted(message: &str) -> String {
    unquoted_as(
        message,
        "LETOR / SVMlight lines read `<grade> qid:<id> <index>:<value> ...`",
    )
}

/// [`unquoted`], with what a line of this kind of file reads (`shape`).
fn unquoted_as(message: &str, shape: &str) -> String {
    match (message.find('\''), message.rfind('\'')) {
        (Some(open), Some(close)) if close > open => format!(
            "{}[not shown]{} (a first line's text is never echoed; {shape})",
            &message[..open],
            &message[close + 1..]
        ),
        _ => message.to_string(),
    }
}

/// A token as shown in an error message: lossy UTF-8, at most 40 characters, control characters
/// escaped (see [`crate::error::printable`]).
fn show(tok: &[u8]) -> String {
    shorten(&String::from_utf8_lossy(tok))
}

fn shorten(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push('…');
    }
    crate::error::printable(&s)
}

/// Appends parsed pieces, in order, into dense row-major storage and checks group structure.
struct Builder {
    name: PathBuf,
    max_index: u32,
    n_features: usize,
    /// Row-major, where `scratch` keeps it.
    features: Features,
    scratch: Scratch,
    grades: Vec<u8>,
    /// qid of each document, while reading (None for files without qid:).
    group_offsets: Vec<usize>,
    qids: Vec<u64>,
    /// For each finished group's qid: the line where the group ended.
    finished: HashMap<u64, u64>,
    current: Option<(u64, u64)>, // (qid, last line)
    has_qid: Option<bool>,
}

impl Builder {
    fn new(name: &Path, max_index: u32, scratch: Scratch) -> Self {
        Builder {
            name: name.to_path_buf(),
            max_index,
            n_features: 0,
            features: Features::default(),
            scratch,
            grades: Vec::new(),
            group_offsets: vec![0],
            qids: Vec::new(),
            finished: HashMap::new(),
            current: None,
            has_qid: None,
        }
    }

    /// Widens the first `n_docs` rows (all that are stored) to `n_features` columns.
    fn widen(&mut self, n_docs: usize, n_features: usize) -> Result<()> {
        debug_assert!(n_features > self.n_features && n_features <= self.max_index as usize);
        let old = self.n_features;
        let mut wide = self.scratch.zeros(n_docs * n_features)?;
        if old > 0 {
            for (dst, src) in wide
                .as_mut_slice()
                .chunks_exact_mut(n_features)
                .zip(self.features.chunks_exact(old))
            {
                dst[..old].copy_from_slice(src);
            }
        }
        self.features = wide;
        self.n_features = n_features;
        Ok(())
    }

    /// Checks the group structure of a piece's documents and records their qids and grades.
    fn record(&mut self, piece: &Piece, first_line: u64) -> Result<()> {
        for d in 0..piece.grades.len() {
            let line = first_line + piece.doc_lines[d] as u64;
            let qid = piece.qids[d];
            match (self.has_qid, qid.is_some()) {
                (None, has) => self.has_qid = Some(has),
                (Some(true), false) => {
                    return Err(Error::parse(
                        &self.name,
                        line,
                        0,
                        "this line has no qid: but earlier lines do",
                    ))
                }
                (Some(false), true) => {
                    return Err(Error::parse(
                        &self.name,
                        line,
                        0,
                        "this line has a qid: but earlier lines do not",
                    ))
                }
                _ => {}
            }
            if let Some(q) = qid {
                match self.current {
                    Some((current, _)) if current == q => {}
                    previous => {
                        if let Some(&ended) = self.finished.get(&q) {
                            return Err(Error::parse(
                                &self.name,
                                line,
                                0,
                                format!("qid {q} reappears after other queries (its group ended at line {ended}): the documents of a query must be contiguous"),
                            ));
                        }
                        if let Some((prev_qid, prev_line)) = previous {
                            self.finished.insert(prev_qid, prev_line);
                            self.group_offsets.push(self.grades.len());
                        }
                        self.qids.push(q);
                    }
                }
                self.current = Some((q, line));
            }
            self.grades.push(piece.grades[d]);
        }
        Ok(())
    }

    /// Appends the dense rows of `pieces` after the `stored` rows, widening the matrix once to
    /// the widest of them; the pieces are written in parallel natively.
    fn densify(&mut self, stored: usize, pieces: &[Piece]) -> Result<()> {
        let widest = pieces
            .iter()
            .map(|p| p.max_index as usize)
            .max()
            .unwrap_or(0);
        let rows: usize = pieces.iter().map(|p| p.grades.len()).sum();
        let old_rows = stored;
        if widest > self.n_features {
            self.widen(old_rows, widest)?;
        }
        // (Widening makes the matrix where `scratch` says: the first rows with a feature do.)
        let nf = self.n_features;
        self.features.resize((old_rows + rows) * nf).map_err(|e| {
            let what = format!("growing the scratch file of its matrix: {e}");
            Error::io(&self.name, std::io::Error::new(e.kind(), what))
        })?;
        let mut outs = Vec::with_capacity(pieces.len());
        let mut rest = &mut self.features.as_mut_slice()[old_rows * nf..];
        for piece in pieces {
            let (out, next) = rest.split_at_mut(piece.grades.len() * nf);
            outs.push(out);
            rest = next;
        }
        let fill = |(out, piece): (&mut &mut [f32], &Piece)| {
            for (d, row) in out.chunks_exact_mut(nf.max(1)).enumerate() {
                let (a, b) = (
                    piece.row_starts[d] as usize,
                    piece.row_starts[d + 1] as usize,
                );
                for (&i, &v) in piece.indices[a..b].iter().zip(&piece.values[a..b]) {
                    row[i as usize - 1] = v;
                }
            }
        };
        #[cfg(not(target_arch = "wasm32"))]
        {
            use rayon::prelude::*;
            outs.par_iter_mut().zip(pieces.par_iter()).for_each(fill);
        }
        #[cfg(target_arch = "wasm32")]
        outs.iter_mut().zip(pieces.iter()).for_each(fill);
        Ok(())
    }

    fn finish(mut self, query_sizes: Option<Vec<usize>>) -> Result<Dataset> {
        let n_docs = self.grades.len();
        if n_docs == 0 {
            // An empty file has no first bytes to tell its format by: it is told by its name.
            let expected = if self.name.extension().is_some_and(|e| e == "parquet") {
                "a Parquet file, as its name says"
            } else {
                "lines '<grade> qid:<id> <index>:<value> ...'"
            };
            return Err(Error::parse(
                &self.name,
                0,
                0,
                format!("empty file: no documents (expected {expected})"),
            ));
        }
        match (self.has_qid, query_sizes) {
            (Some(true), Some(_)) => {
                return Err(Error::parse(&self.name, 0, 0, "the file has qid: on its lines and a .query file was given too: use one or the other"))
            }
            (Some(true), None) => self.group_offsets.push(n_docs),
            (_, Some(sizes)) => {
                let total = sizes.iter().try_fold(0usize, |acc, &s| acc.checked_add(s));
                if total != Some(n_docs) {
                    let total = total.map_or("more than 2^64".to_string(), |t| t.to_string());
                    return Err(Error::parse(
                        &self.name,
                        0,
                        0,
                        format!("{QUERY_SIZES_DISAGREE} {total} documents, but the file has {n_docs}"),
                    ));
                }
                // The sizes add up to n_docs (checked above), so these running sums cannot overflow.
                self.group_offsets = std::iter::once(0).chain(sizes.iter().scan(0, |acc, &s| {
                    *acc += s;
                    Some(*acc)
                })).collect();
                self.qids = (1..=sizes.len() as u64).collect();
            }
            (_, None) => {
                return Err(Error::parse(&self.name, 0, 0, format!("{NO_GROUPS}: give the group sizes, one a line, in a file beside it named {}.query (or {QUERY_FILE_FLAGS})", self.name.display())))
            }
        }
        Ok(Dataset {
            n_features: self.n_features,
            features: self.features,
            grades: self.grades,
            group_offsets: self.group_offsets,
            qids: self.qids,
            source: None,
            feature_names: None,
        })
    }
}

//! Prepared splits on disk: preparation's result (x, z, labels and groups of every split, and
//! what preparation did), written once and then memory-mapped, so that a second run starts
//! without reading the source or preparing it again, and trains from the mapped matrices with
//! resident memory bounded by the pages it touches, not by the size of the data.
//!
//! Layout (little-endian), every section starting on a 64-byte boundary so the file can be
//! memory-mapped and its matrices used in place:
//!
//! ```text
//! header (64 bytes):
//!   magic      [u8; 8]  = b"DRPREP\0\0"
//!   version    u32      = PREPARED_VERSION
//!   checksum   u32      CRC-32 of every byte after the header
//!   key        u64      the preparation's key (its settings and its sources' stamps)
//!   about_len  u64      bytes of the JSON that follows
//!   (zeros up to 64 bytes)
//! about          JSON: each split's shape (n_docs, n_groups, d_x, d_z), the columns, constant
//!                columns, warnings, filter reports, holdout, and the caller's own fields
//! correlations   f64[n_correlations]
//! then, for each split (train, valid, test when there is one):
//!   regular        f32[n_docs * d_x]   row-major
//!   privileged     f32[n_docs * d_z]   row-major
//!   labels         f32[n_docs]
//!   grades         u8[n_docs]
//!   positive_group u8[n_groups]        0 or 1
//!   group_offsets  u64[n_groups + 1]
//!   qids           u64[n_groups]
//! ```
//!
//! x and z, nearly all of the file, are read in place ([`Features::mapped`]); the small
//! per-document arrays are copied. A file whose key differs from the one asked for belongs to
//! other settings or older sources, and is refused ([`KeyMismatch`]) so the caller prepares
//! again. The body is checked against its checksum on reading (a file changed or damaged since
//! it was written is refused, and the caller prepares again), read a piece at a time without
//! mapping it, so that the check leaves nothing resident; then the structure (sizes, offsets,
//! labels, flags).
//!
//! The key itself is computed by the caller ([`crate::pipeline`]), which knows the settings and
//! the files; [`Fnv1a`] is the stable hash it uses. Each key has a file of its own beside the
//! training file (`TRAIN.KEY.drprep`, about the size of the prepared matrices); files of settings
//! no longer used are not removed: delete `TRAIN.*.drprep` to take the space back.
//!
//! Like the binary cache, the file is replaced by rename, never rewritten in place: a run that
//! has it mapped keeps reading the version it opened.
//!
//! The page uses the same layout without a file: one worker prepares a comparison's data and
//! lays it out in a `SharedArrayBuffer` ([`to_shared`]), and every worker of the pool reads x and
//! z from that one buffer ([`from_shared`]), so that the pool holds one copy of the matrices.

use std::borrow::Cow;
use std::ops::Range;
#[cfg(not(target_arch = "wasm32"))]
use std::path::Path;

use crate::data::prepare::{FilterReport, InputMaps, Prepared, RankingSet};
use crate::data::sections::{write_sections, ALIGN};
use crate::data::Features;
use crate::error::{Error, Result};

pub const MAGIC: [u8; 8] = *b"DRPREP\0\0";
/// The layout's version; part of every key, so a new layout never reads an old file. 3: the
/// description beside the splits keeps the source's column names; 4: and the file that names
/// them, which may be a validation or test file beside a training file of LETOR text.
pub const PREPARED_VERSION: u32 = 4;
const HEADER_BYTES: usize = 64;
/// The most bytes of JSON a header may announce (a corrupt length fails here, not in an
/// allocation).
const MAX_ABOUT_BYTES: u64 = 256 << 20;

/// The 64-bit FNV-1a hash: stable across builds, platforms and Rust versions (unlike
/// `DefaultHasher`), which a key kept in a file name must be.
#[derive(Debug, Clone, Copy)]
pub struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Fnv1a {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// `bytes` preceded by their length, so that two fields cannot run into each other.
    pub fn field(&mut self, bytes: &[u8]) {
        self.write(&(bytes.len() as u64).to_le_bytes());
        self.write(bytes);
    }

    pub fn finish(&self) -> u64 {
        self.0
    }
}

/// The shape of one split, as the JSON records it.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Shape {
    n_docs: usize,
    n_groups: usize,
    d_x: usize,
    d_z: usize,
}

/// Everything but the arrays.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct About {
    /// train, valid, and test when there is one.
    splits: Vec<Shape>,
    n_correlations: usize,
    privileged_columns: Vec<usize>,
    regular_columns: Vec<usize>,
    constant_regular: Vec<usize>,
    constant_privileged: Vec<usize>,
    warnings: Vec<String>,
    filter: Vec<(String, FilterReport)>,
    holdout: bool,
    /// The fitted maps after the signed log1p (none under the signed log1p alone).
    #[serde(default)]
    input_maps: InputMaps,
    /// The caller's fields (the pipeline's description, options, ...), kept as given.
    extra: serde_json::Value,
}

/// A file written for other settings or other sources than those asked for.
#[derive(Debug)]
pub struct KeyMismatch;

fn little_endian_only() -> Result<()> {
    if cfg!(target_endian = "little") {
        Ok(())
    } else {
        Err(Error::Config(
            "prepared-splits files are little-endian; this machine is not".into(),
        ))
    }
}

fn sets(prepared: &Prepared) -> Vec<&RankingSet> {
    [
        Some(&prepared.train),
        Some(&prepared.valid),
        prepared.test.as_ref(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Writes `prepared` with `key` and the caller's `extra` fields to `path`, streamed (no second
/// copy of a matrix) to a temporary name and renamed into place: a reader never sees half a file.
#[cfg(not(target_arch = "wasm32"))]
pub fn write(path: &Path, key: u64, prepared: &Prepared, extra: serde_json::Value) -> Result<()> {
    little_endian_only()?;
    // The body's checksum first (the layout written without a file), then the file.
    let checksum = crate::data::sections::body_checksum(HEADER_BYTES, |out| {
        encode(out, key, prepared, &extra, 0)
    });
    crate::output::stage_with(path, |out| encode(out, key, prepared, &extra, checksum))?.commit()
}

/// Writes the layout of `prepared` with `key`, `extra` and the body's `checksum` to `out`, x and
/// z from where they are.
fn encode(
    out: &mut dyn std::io::Write,
    key: u64,
    prepared: &Prepared,
    extra: &serde_json::Value,
    checksum: u32,
) -> std::io::Result<()> {
    let sets = sets(prepared);
    let about = About {
        splits: sets
            .iter()
            .map(|s| Shape {
                n_docs: s.n_docs(),
                n_groups: s.n_groups(),
                d_x: s.d_x,
                d_z: s.d_z,
            })
            .collect(),
        n_correlations: prepared.correlations.len(),
        privileged_columns: prepared.privileged_columns.clone(),
        regular_columns: prepared.regular_columns.clone(),
        constant_regular: prepared.constant_regular.clone(),
        constant_privileged: prepared.constant_privileged.clone(),
        warnings: prepared.warnings.clone(),
        filter: prepared.filter.clone(),
        holdout: prepared.holdout,
        input_maps: prepared.input_maps.clone(),
        extra: extra.clone(),
    };
    let about = serde_json::to_vec(&about).expect("the prepared splits' description serialises");
    let mut header = Vec::with_capacity(HEADER_BYTES);
    header.extend_from_slice(&MAGIC);
    header.extend_from_slice(&PREPARED_VERSION.to_le_bytes());
    header.extend_from_slice(&checksum.to_le_bytes());
    header.extend_from_slice(&key.to_le_bytes());
    header.extend_from_slice(&(about.len() as u64).to_le_bytes());
    header.resize(HEADER_BYTES, 0);
    // The small arrays in their on-disk types; x and z are written from where they are.
    let small: Vec<(Vec<u8>, Vec<u64>, Vec<u64>)> = sets
        .iter()
        .map(|s| {
            (
                s.positive_group.iter().map(|&p| p as u8).collect(),
                s.group_offsets.iter().map(|&o| o as u64).collect(),
                s.qids.clone(),
            )
        })
        .collect();
    let mut sections: Vec<&[u8]> = vec![
        &header,
        &about,
        bytemuck::cast_slice(&prepared.correlations),
    ];
    for (set, (positive, offsets, qids)) in sets.iter().zip(&small) {
        sections.extend([
            bytemuck::cast_slice(&set.regular),
            bytemuck::cast_slice(&set.privileged),
            bytemuck::cast_slice(&set.labels),
            &set.grades[..],
            &positive[..],
            bytemuck::cast_slice(offsets),
            bytemuck::cast_slice(qids),
        ]);
    }
    // Every section after the header and the JSON starts on an ALIGN boundary.
    write_sections(out, sections, 2)
}

/// Bytes that hold the layout: a mapped file, or the page's buffer shared by its workers.
trait Source {
    fn len(&self) -> usize;
    /// Bytes `range` (inside the source), borrowed where they are in this instance's memory.
    fn bytes(&self, range: Range<usize>) -> Cow<'_, [u8]>;
    /// `len` f32 values from byte `offset` (4-aligned, inside the source), read in place.
    fn matrix(&self, offset: usize, len: usize) -> Features;
}

#[cfg(not(target_arch = "wasm32"))]
impl Source for std::sync::Arc<memmap2::Mmap> {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn bytes(&self, range: Range<usize>) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self[range])
    }
    fn matrix(&self, offset: usize, len: usize) -> Features {
        Features::mapped(self.clone(), offset, len)
    }
}

/// Reads the prepared splits of `path`, written with `key`: x and z mapped and used in place,
/// the rest copied. Returns them with the caller's `extra` fields; `Ok(Err(KeyMismatch))` when
/// the file was written with another key. A truncated or corrupt file is an error naming it.
#[cfg(not(target_arch = "wasm32"))]
pub fn read(
    path: &Path,
    key: u64,
) -> Result<std::result::Result<(Prepared, serde_json::Value), KeyMismatch>> {
    let bad = |message: String| {
        Error::parse(
            path,
            0,
            0,
            format!(
                "{message}; delete it, and the next run with the prepared cache writes it again"
            ),
        )
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    // SAFETY: the file is only read; a writer replaces it by rename, never in place.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
    // A file of these settings is read only as it was written: its body against its checksum.
    let ours = map.len() >= HEADER_BYTES
        && map[..8] == MAGIC
        && map[16..24] == key.to_le_bytes()
        && map[8..12] == PREPARED_VERSION.to_le_bytes();
    if ours {
        let checksum = u32::from_le_bytes(map[12..16].try_into().expect("4 bytes"));
        crate::data::sections::check_body(path, HEADER_BYTES as u64, checksum)
            .map_err(|what| bad(format!("corrupt prepared splits: {what}")))?;
    }
    decode(&std::sync::Arc::new(map), key, &bad)
}

/// The prepared splits laid out in `source`, written with `key`; `bad` words what is wrong
/// with it.
fn decode(
    source: &impl Source,
    key: u64,
    bad: &dyn Fn(String) -> Error,
) -> Result<std::result::Result<(Prepared, serde_json::Value), KeyMismatch>> {
    let (about, about_end) = match read_about(source, key, bad)? {
        Ok(read) => read,
        Err(mismatch) => return Ok(Err(mismatch)),
    };
    let (correlations, layouts) = sections(&about, about_end, source.len(), bad)?;
    let correlations = f64s(&source.bytes(correlations.0..correlations.1));
    let mut sets = Vec::with_capacity(layouts.len());
    for (s, (shape, layout)) in about.splits.iter().zip(&layouts).enumerate() {
        let set = read_split(source, shape, layout).map_err(|what| {
            bad(format!(
                "corrupt {} split: {what}",
                ["training", "validation", "test"][s]
            ))
        })?;
        sets.push(set);
    }
    let maps = &about.input_maps;
    for (maps, width, what) in [
        (&maps.regular, sets[0].d_x, "x"),
        (&maps.privileged, sets[0].d_z, "z"),
    ] {
        if !maps.is_empty() && maps.len() != width {
            return Err(bad(format!(
                "{} maps of {what}'s columns for {width} columns",
                maps.len()
            )));
        }
        if let Some(why) = maps.iter().find_map(|m| m.check().err()) {
            return Err(bad(format!("a map of {what}'s columns: {why}")));
        }
    }
    let mut sets = sets.into_iter();
    let (train, valid, test) = (
        sets.next().expect("two splits at least"),
        sets.next().expect("two splits at least"),
        sets.next(),
    );
    let prepared = Prepared {
        train,
        valid,
        test,
        privileged_columns: about.privileged_columns,
        regular_columns: about.regular_columns,
        constant_regular: about.constant_regular,
        constant_privileged: about.constant_privileged,
        warnings: about.warnings,
        correlations,
        filter: about.filter,
        holdout: about.holdout,
        input_maps: about.input_maps,
    };
    Ok(Ok((prepared, about.extra)))
}

/// The header and the description of the splits laid out in `source`, and where the description
/// ends; a key other than `key` is a mismatch, not an error.
fn read_about(
    source: &impl Source,
    key: u64,
    bad: &dyn Fn(String) -> Error,
) -> Result<std::result::Result<(About, usize), KeyMismatch>> {
    little_endian_only()?;
    let len = source.len();
    if len < HEADER_BYTES || source.bytes(0..8)[..] != MAGIC {
        return Err(bad("not a prepared-splits file (bad magic number)".into()));
    }
    let header = source.bytes(0..HEADER_BYTES);
    let u64_at = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().unwrap());
    let version = u32::from_le_bytes(header[8..12].try_into().unwrap());
    if version != PREPARED_VERSION {
        return Err(bad(format!(
            "prepared-splits format version {version}, expected {PREPARED_VERSION}"
        )));
    }
    if u64_at(16) != key {
        return Ok(Err(KeyMismatch));
    }
    let about_len = u64_at(24);
    if about_len > MAX_ABOUT_BYTES || HEADER_BYTES as u64 + about_len > len as u64 {
        return Err(bad(format!(
            "truncated or corrupt: its header announces {about_len} bytes of description in a file of {len} bytes"
        )));
    }
    let about_end = HEADER_BYTES + about_len as usize;
    let about: About = serde_json::from_slice(&source.bytes(HEADER_BYTES..about_end))
        .map_err(|e| bad(format!("corrupt description: {e}")))?;
    if !(2..=3).contains(&about.splits.len()) {
        return Err(bad(format!(
            "corrupt description: {} splits, expected 2 or 3",
            about.splits.len()
        )));
    }
    Ok(Ok((about, about_end)))
}

/// A section's byte range in the layout.
type Span = (usize, usize);

/// Where each section lies after the description (ending at `about_end`) in a layout of `len`
/// bytes: the correlations, then each split's seven sections (x, z, labels, grades, positive
/// flags, group offsets, qids). Computed in u128 with checked arithmetic, so that a corrupt
/// description cannot overflow it, and refused unless the sections end where the layout does.
fn sections(
    about: &About,
    about_end: usize,
    len: usize,
    bad: &dyn Fn(String) -> Error,
) -> Result<(Span, Vec<[Span; 7]>)> {
    let mut at = about_end as u128;
    let mut section = |bytes: Option<u128>| -> Option<Span> {
        let start = at.checked_add(ALIGN as u128 - 1)? / ALIGN as u128 * ALIGN as u128;
        let end = start.checked_add(bytes?)?;
        at = end;
        (end <= len as u128).then_some((start as usize, end as usize))
    };
    let sized = |n: usize, bytes_each: u128| (n as u128).checked_mul(bytes_each);
    let truncated = || {
        bad(format!(
            "truncated or corrupt: {len} bytes, shorter than its description implies"
        ))
    };
    let correlations = section(sized(about.n_correlations, 8)).ok_or_else(truncated)?;
    let mut layouts = Vec::new();
    for shape in &about.splits {
        let matrix = |width: usize| {
            (shape.n_docs as u128)
                .checked_mul(width as u128)?
                .checked_mul(4)
        };
        let mut next = [(0, 0); 7];
        for (place, bytes) in next.iter_mut().zip([
            matrix(shape.d_x),
            matrix(shape.d_z),
            sized(shape.n_docs, 4),
            sized(shape.n_docs, 1),
            sized(shape.n_groups, 1),
            (shape.n_groups as u128 + 1).checked_mul(8),
            sized(shape.n_groups, 8),
        ]) {
            *place = section(bytes).ok_or_else(truncated)?;
        }
        layouts.push(next);
    }
    if at != len as u128 {
        return Err(bad(format!(
            "corrupt: {len} bytes, its description implies {at}"
        )));
    }
    Ok((correlations, layouts))
}

/// One split from its seven sections of `source`, checked as the text reader checks its data;
/// what is wrong, in words.
fn read_split(
    source: &impl Source,
    shape: &Shape,
    [x, z, labels, grades, positive, offsets, qids]: &[Span; 7],
) -> std::result::Result<RankingSet, String> {
    let bytes = |&(start, end): &Span| source.bytes(start..end);
    let positive = bytes(positive);
    let set = RankingSet {
        regular: source.matrix(x.0, shape.n_docs * shape.d_x),
        d_x: shape.d_x,
        privileged: source.matrix(z.0, shape.n_docs * shape.d_z),
        d_z: shape.d_z,
        grades: bytes(grades).into_owned(),
        labels: f32s(&bytes(labels)),
        group_offsets: u64s(&bytes(offsets))
            .into_iter()
            .map(|o| o as usize)
            .collect(),
        positive_group: positive.iter().map(|&p| p == 1).collect(),
        qids: u64s(&bytes(qids)),
    };
    let flags_valid = positive.iter().all(|&p| p <= 1);
    check_set(&set, flags_valid)?;
    Ok(set)
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

fn u64s(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
        .collect()
}

/// The key of prepared splits laid out for the page's workers (who share them in memory, so no
/// other settings can be met).
#[cfg(target_arch = "wasm32")]
const SHARED_KEY: u64 = 0;

#[cfg(target_arch = "wasm32")]
impl Source for crate::data::shared::SharedBytes<'_> {
    fn len(&self) -> usize {
        self.len()
    }
    fn bytes(&self, range: Range<usize>) -> Cow<'_, [u8]> {
        Cow::Owned(self.bytes(range))
    }
    fn matrix(&self, offset: usize, len: usize) -> Features {
        self.matrix(offset, len)
    }
}

/// Lays out `prepared` and the caller's `extra` fields in a new `SharedArrayBuffer`, for the
/// page's workers to read with [`from_shared`]: x and z are copied into it once, from where they
/// are, a section at a time.
#[cfg(target_arch = "wasm32")]
pub fn to_shared(
    prepared: &Prepared,
    extra: serde_json::Value,
) -> Result<js_sys::SharedArrayBuffer> {
    crate::data::shared::buffer_of("the prepared data", |out| {
        encode(out, SHARED_KEY, prepared, &extra, 0)
    })
}

/// The prepared splits laid out in `buffer` by [`to_shared`] (in this worker or another): x and
/// z read in place from it, the rest copied. Returns them with the `extra` fields.
#[cfg(target_arch = "wasm32")]
pub fn from_shared(buffer: &js_sys::SharedArrayBuffer) -> Result<(Prepared, serde_json::Value)> {
    let bad = |message: String| Error::Config(format!("the pool's shared data: {message}"));
    match decode(&crate::data::shared::SharedBytes(buffer), SHARED_KEY, &bad)? {
        Ok(read) => Ok(read),
        Err(KeyMismatch) => Err(bad("laid out for other settings".into())),
    }
}

/// What preparation guarantees of a split and the models rely on: groups that tile the
/// documents, labels in {0, 1} (or the grades), flags that say whether a group has a positive. Returns what is
/// wrong first.
fn check_set(set: &RankingSet, flags_valid: bool) -> std::result::Result<(), String> {
    let offsets = &set.group_offsets;
    if offsets.first() != Some(&0) || offsets.last() != Some(&set.n_docs()) {
        return Err("its groups do not cover its documents".into());
    }
    if offsets.windows(2).any(|w| w[0] >= w[1]) {
        return Err("an empty or misordered group".into());
    }
    // y in {0, 1}, or the grades themselves (`labels: grades`).
    let binary = set.labels.iter().all(|&y| y == 0.0 || y == 1.0);
    let graded = set.labels.len() == set.grades.len()
        && set
            .labels
            .iter()
            .zip(&set.grades)
            .all(|(&y, &g)| y == f32::from(g));
    if !(binary || graded) {
        return Err("a label neither 0 or 1 nor its document's grade".into());
    }
    if !flags_valid {
        return Err("a positive-group flag other than 0 or 1".into());
    }
    if (0..set.n_groups())
        .any(|g| set.positive_group[g] != set.labels[set.group(g)].iter().any(|&y| y > 0.0))
    {
        return Err("a positive-group flag that disagrees with the group's labels".into());
    }
    Ok(())
}

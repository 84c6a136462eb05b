//! Binary cache of a parsed dataset: parse the text once, then load in a fraction of the time.
//!
//! Layout (little-endian), every section starting on a 64-byte boundary so the file can be
//! memory-mapped and its arrays used in place:
//!
//! ```text
//! header (128 bytes):
//!   magic        [u8; 8]  = b"DRLETOR\0"
//!   version      u32      = CACHE_VERSION
//!   reserved     u32
//!   n_docs       u64
//!   n_features   u64
//!   n_groups     u64
//!   source_len   u64      size of the text file it was built from
//!   source_mtime u64      its modification time, ns since the epoch (0 if unknown)
//!   query_len    u64      size of the LightGBM `SOURCE.query` file beside it (0 if none)
//!   query_mtime  u64      its modification time (0 if none)
//!   (zeros up to 128 bytes)
//! features       f32[n_docs * n_features]   row-major
//! grades         u8[n_docs]
//! group_offsets  u64[n_groups + 1]
//! qids           u64[n_groups]
//! ```
//!
//! A cache whose recorded sizes or modification times differ from those of the source file and
//! its `.query` companion is stale and is rebuilt (see [`load_or_build`]). A `.query` file named
//! elsewhere with `--query` is not tracked: rebuild the cache after changing it.

use std::path::{Path, PathBuf};

use crate::data::letor::{read_letor_file, ReadOptions};
use crate::data::sections::{write_sections, ALIGN};
use crate::data::{Dataset, Features};
use crate::error::{Error, Result};

pub const MAGIC: [u8; 8] = *b"DRLETOR\0";
pub const CACHE_VERSION: u32 = 2;
const HEADER_BYTES: usize = 128;

/// Where the cache of `source` lives: beside it, with `.drcache` appended.
pub fn cache_path(source: &Path) -> PathBuf {
    PathBuf::from(format!("{}.drcache", source.display()))
}

/// Size and modification time of the source file and of its `.query` companion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SourceStamp {
    len: u64,
    mtime_ns: u64,
    query_len: u64,
    query_mtime_ns: u64,
}

fn stamp(source: &Path) -> Result<SourceStamp> {
    let (len, mtime_ns) = file_stamp(source)?;
    let companion = PathBuf::from(format!("{}.query", source.display()));
    let (query_len, query_mtime_ns) = if companion.exists() {
        file_stamp(&companion)?
    } else {
        (0, 0)
    };
    Ok(SourceStamp {
        len,
        mtime_ns,
        query_len,
        query_mtime_ns,
    })
}

/// Size and modification time (ns since the epoch, 0 if unknown) of a file.
pub fn file_stamp(source: &Path) -> Result<(u64, u64)> {
    let meta = std::fs::metadata(source).map_err(|e| Error::io(source, e))?;
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64);
    Ok((meta.len(), mtime_ns))
}

/// Writes `dataset`, parsed from `source`, to `cache`, streamed (no second copy of the matrix).
pub fn write_cache(dataset: &Dataset, source: &Path, cache: &Path) -> Result<()> {
    let stamp = stamp(source)?;
    let write = |out: &mut dyn std::io::Write| -> std::io::Result<()> {
        let mut header = Vec::with_capacity(HEADER_BYTES);
        header.extend_from_slice(&MAGIC);
        header.extend_from_slice(&CACHE_VERSION.to_le_bytes());
        header.extend_from_slice(&0u32.to_le_bytes());
        for v in [
            dataset.n_docs() as u64,
            dataset.n_features as u64,
            dataset.n_groups() as u64,
            stamp.len,
            stamp.mtime_ns,
            stamp.query_len,
            stamp.query_mtime_ns,
        ] {
            header.extend_from_slice(&v.to_le_bytes());
        }
        header.resize(HEADER_BYTES, 0);
        let offsets: Vec<u64> = dataset.group_offsets.iter().map(|&o| o as u64).collect();
        // Little-endian on the only machines that write caches (checked below).
        let sections: [&[u8]; 5] = [
            &header,
            bytemuck::cast_slice(&dataset.features),
            &dataset.grades,
            bytemuck::cast_slice(&offsets),
            bytemuck::cast_slice(&dataset.qids),
        ];
        // Each section after the features starts on an ALIGN boundary.
        write_sections(out, sections, 2)
    };
    if !cfg!(target_endian = "little") {
        return Err(Error::Config(
            "binary caches are little-endian; this machine is not".into(),
        ));
    }
    // Streamed to a temporary file, then renamed: a reader never sees half a cache.
    crate::output::stage_with(cache, write)?.commit()
}

/// Why a cache file cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub enum CacheState {
    Fresh,
    Stale,
}

/// Loads a cache file, its feature matrix memory-mapped and used in place. With `source`, also reports whether it is stale.
pub fn read_cache(cache: &Path, source: Option<&Path>) -> Result<(Dataset, CacheState)> {
    let bad = |message: String| Error::parse(cache, 0, 0, message);
    if !cfg!(target_endian = "little") {
        return Err(bad(
            "binary caches are little-endian; this machine is not".into()
        ));
    }
    let file = std::fs::File::open(cache).map_err(|e| Error::io(cache, e))?;
    // SAFETY: the file is only read; a concurrent writer replaces it by rename, never in place.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(cache, e))?;
    if map.len() < HEADER_BYTES || map[..8] != MAGIC {
        return Err(bad("not a distillrank cache (bad magic number)".into()));
    }
    let u32_at = |at: usize| u32::from_le_bytes(map[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(map[at..at + 8].try_into().unwrap());
    let version = u32_at(8);
    if version != CACHE_VERSION {
        return Err(bad(format!("cache format version {version}, expected {CACHE_VERSION}: rebuild it with `distillrank data cache`")));
    }
    let (n_docs, n_features, n_groups) = (
        u64_at(16) as usize,
        u64_at(24) as usize,
        u64_at(32) as usize,
    );
    let recorded = SourceStamp {
        len: u64_at(40),
        mtime_ns: u64_at(48),
        query_len: u64_at(56),
        query_mtime_ns: u64_at(64),
    };

    // Section offsets in u128 with checked arithmetic: a corrupt header cannot overflow them.
    let sections = || -> Option<(u128, u128, u128, u128)> {
        let align128 =
            |n: u128| Some(n.checked_add(ALIGN as u128 - 1)? / ALIGN as u128 * ALIGN as u128);
        let (docs, feats, groups) = (n_docs as u128, n_features as u128, n_groups as u128);
        let grades_at = align128(
            (HEADER_BYTES as u128).checked_add(docs.checked_mul(feats)?.checked_mul(4)?)?,
        )?;
        let offsets_at = align128(grades_at.checked_add(docs)?)?;
        let qids_at = align128(offsets_at.checked_add((groups + 1).checked_mul(8)?)?)?;
        Some((
            grades_at,
            offsets_at,
            qids_at,
            qids_at.checked_add(groups.checked_mul(8)?)?,
        ))
    };
    let Some((grades_at, offsets_at, qids_at, end)) = sections() else {
        return Err(bad("corrupt cache: its header's sizes overflow".into()));
    };
    if map.len() as u128 != end {
        return Err(bad(format!(
            "truncated or corrupt cache: {} bytes, the header implies {end}",
            map.len()
        )));
    }
    // The file is exactly `end` bytes long, so every offset fits in usize.
    let (features_at, grades_at, offsets_at, qids_at, end) = (
        HEADER_BYTES,
        grades_at as usize,
        offsets_at as usize,
        qids_at as usize,
        end as usize,
    );
    let offsets: &[u64] = bytemuck::cast_slice(&map[offsets_at..offsets_at + 8 * (n_groups + 1)]);
    let qids: &[u64] = bytemuck::cast_slice(&map[qids_at..end]);
    let (grades, group_offsets, qids) = (
        map[grades_at..grades_at + n_docs].to_vec(),
        offsets.iter().map(|&o| o as usize).collect(),
        qids.to_vec(),
    );
    // The feature matrix, nearly all of the file, is used in place: the map stays open as long
    // as the dataset (or a clone of it) lives.
    let dataset = Dataset {
        n_features,
        features: Features::mapped(std::sync::Arc::new(map), features_at, n_docs * n_features),
        grades,
        group_offsets,
        qids,
        source: source.map(Path::to_path_buf),
    };
    // A cache holds what the text reader accepted, and nothing else: a damaged or hand-made one
    // is refused here rather than trained on.
    dataset.check_invariants().map_err(|what| {
        bad(format!(
            "corrupt cache: {what}; delete it (or rebuild it with `distillrank data cache`)"
        ))
    })?;
    let state = match source {
        Some(s) if stamp(s)? != recorded => CacheState::Stale,
        _ => CacheState::Fresh,
    };
    Ok((dataset, state))
}

/// Loads `source` through its cache: uses `SOURCE.drcache` when it is fresh, otherwise parses the
/// text and (re)writes the cache. Returns the dataset and whether the cache was used.
pub fn load_or_build(
    source: &Path,
    query: Option<&Path>,
    options: &ReadOptions,
) -> Result<(Dataset, bool)> {
    let cache = cache_path(source);
    if cache.exists() {
        if let Ok((dataset, CacheState::Fresh)) = read_cache(&cache, Some(source)) {
            return Ok((dataset, true));
        }
    }
    let dataset = read_letor_file(source, query, options)?;
    write_cache(&dataset, source, &cache)?;
    Ok((dataset, false))
}

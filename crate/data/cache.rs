//! Binary cache of a parsed dataset: parse the text once, then load in a fraction of the time.
//!
//! Layout (little-endian), every section starting on a 64-byte boundary so the file can be
//! memory-mapped and its arrays used in place:
//!
//! ```text
//! header (128 bytes):
//!   magic        [u8; 8]  = b"DRLETOR\0"
//!   version      u32      = CACHE_VERSION
//!   checksum     u32      CRC-32 of every byte after the header
//!   n_docs       u64
//!   n_features   u64
//!   n_groups     u64
//!   source_len   u64      size of the text file it was built from
//!   source_id    u64      its identity ([`file_identity`]: times, inode, sampled contents)
//!   query_len    u64      size of the LightGBM `SOURCE.query` file beside it (0 if none)
//!   query_id     u64      its identity (0 if none)
//!   names_len    u64      bytes of the names section (0: the columns are not named)
//!   (zeros up to 128 bytes)
//! features       f32[n_docs * n_features]   row-major
//! grades         u8[n_docs]
//! group_offsets  u64[n_groups + 1]
//! qids           u64[n_groups]
//! names          JSON array of the n_features column names (a Parquet source's), where named
//! ```
//!
//! A cache is used only when it matches its source and itself: one whose recorded sizes or
//! identities differ from those of the source file and its `.query` companion is stale and is
//! rebuilt (see [`load_or_build`]), and one whose body does not match its checksum (changed or
//! damaged since it was written) is refused, then rebuilt. A `.query` file named elsewhere with
//! `--query` is not tracked: rebuild the cache after changing it.

use std::path::{Path, PathBuf};

use crate::data::letor::{read_letor_file, ReadOptions};
use crate::data::sections::{write_sections, ALIGN};
use crate::data::{Dataset, Features};
use crate::error::{Error, Result};

pub const MAGIC: [u8; 8] = crate::data::letor::CACHE_MAGIC;
pub const CACHE_VERSION: u32 = 4;
const HEADER_BYTES: usize = 128;

/// Where the cache of `source` lives: beside it, with `.drcache` appended.
pub fn cache_path(source: &Path) -> PathBuf {
    PathBuf::from(format!("{}.drcache", source.display()))
}

/// Whether `path`'s name is a cache's: `.drcache`, in any case. What a cache's name says is
/// where its text lies (the name without it) and so its sidecar.
pub fn has_cache_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("drcache"))
}

/// Whether `path` is a cache, to be read as one: a file by its first bytes ([`MAGIC`]), whatever
/// its name (a cache renamed `train.bin` or `TRAIN.DRCACHE`), as Parquet is told by its own; a
/// pipe, whose bytes are the reader's, by its name.
#[cfg(not(target_arch = "wasm32"))]
pub fn is_cache_path(path: &Path) -> bool {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return has_cache_name(path);
    }
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|_| head == MAGIC)
}

/// Size and identity ([`file_identity`]) of the source file and of its `.query` companion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SourceStamp {
    len: u64,
    id: u64,
    query_len: u64,
    query_id: u64,
}

fn stamp(source: &Path) -> Result<SourceStamp> {
    let (len, id) = file_identity(source)?;
    let companion = PathBuf::from(format!("{}.query", source.display()));
    let (query_len, query_id) = if companion.exists() {
        file_identity(&companion)?
    } else {
        (0, 0)
    };
    Ok(SourceStamp {
        len,
        id,
        query_len,
        query_id,
    })
}

/// Blocks of a file read for its identity ([`file_identity`]), and their size.
const SAMPLED_BLOCKS: u64 = 16;
const SAMPLED_BYTES: u64 = 4096;

/// What identifies a file's contents without reading them whole: its size, and a hash of its
/// modification and status-change times, its inode and device, and the CRC-32 of 16 blocks of
/// 4 KiB spread evenly over it (the first and the last among them). A file rewritten at the same
/// size with its modification time put back still differs: its status-change time moves with
/// any write and no call sets it back, and an edit inside a sampled block changes the sample.
/// Costs one `stat` and 64 KiB of reads, whatever the file's size.
pub fn file_identity(path: &Path) -> Result<(u64, u64)> {
    use std::io::{Read, Seek};
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let nanos = |t: std::io::Result<std::time::SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64)
    };
    let mut hash = crate::data::prepared_cache::Fnv1a::default();
    hash.field(&nanos(meta.modified()).to_le_bytes());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        hash.field(&meta.ctime().to_le_bytes());
        hash.field(&meta.ctime_nsec().to_le_bytes());
        hash.field(&meta.ino().to_le_bytes());
        hash.field(&meta.dev().to_le_bytes());
    }
    let len = meta.len();
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut block = vec![0u8; SAMPLED_BYTES as usize];
    let mut sample = crc32fast::Hasher::new();
    let last = len.saturating_sub(SAMPLED_BYTES);
    for k in 0..SAMPLED_BLOCKS {
        let at = last * k / (SAMPLED_BLOCKS - 1);
        file.seek(std::io::SeekFrom::Start(at))
            .map_err(|e| Error::io(path, e))?;
        let n = file
            .by_ref()
            .take(SAMPLED_BYTES)
            .read(&mut block)
            .map_err(|e| Error::io(path, e))?;
        sample.update(&block[..n]);
    }
    hash.field(&sample.finalize().to_le_bytes());
    Ok((len, hash.finish()))
}

/// Writes `dataset`, parsed from `source`, to `cache`, streamed (no second copy of the matrix).
pub fn write_cache(dataset: &Dataset, source: &Path, cache: &Path) -> Result<()> {
    let stamp = stamp(source)?;
    // A Parquet source's column names, which its readers check by name.
    let names = match &dataset.feature_names {
        Some(names) => serde_json::to_vec(names).map_err(|e| Error::Config(e.to_string()))?,
        None => Vec::new(),
    };
    let write = |checksum: u32, out: &mut dyn std::io::Write| -> std::io::Result<()> {
        let mut header = Vec::with_capacity(HEADER_BYTES);
        header.extend_from_slice(&MAGIC);
        header.extend_from_slice(&CACHE_VERSION.to_le_bytes());
        header.extend_from_slice(&checksum.to_le_bytes());
        for v in [
            dataset.n_docs() as u64,
            dataset.n_features as u64,
            dataset.n_groups() as u64,
            stamp.len,
            stamp.id,
            stamp.query_len,
            stamp.query_id,
            names.len() as u64,
        ] {
            header.extend_from_slice(&v.to_le_bytes());
        }
        header.resize(HEADER_BYTES, 0);
        let offsets: Vec<u64> = dataset.group_offsets.iter().map(|&o| o as u64).collect();
        // Little-endian on the only machines that write caches (checked below).
        let mut sections: Vec<&[u8]> = vec![
            &header,
            bytemuck::cast_slice(&dataset.features),
            &dataset.grades,
            bytemuck::cast_slice(&offsets),
            bytemuck::cast_slice(&dataset.qids),
        ];
        if !names.is_empty() {
            sections.push(&names);
        }
        // Each section after the features starts on an ALIGN boundary.
        write_sections(out, sections, 2)
    };
    if !cfg!(target_endian = "little") {
        return Err(Error::Config(
            "binary caches are little-endian; this machine is not".into(),
        ));
    }
    // The body's checksum first (the layout written without a file), then the file, streamed
    // to a temporary name and renamed: a reader never sees half a cache.
    let checksum = crate::data::sections::body_checksum(HEADER_BYTES, |out| write(0, out));
    crate::output::stage_with(cache, |out| write(checksum, out))?.commit()
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
    let checksum = u32_at(12);
    let recorded = SourceStamp {
        len: u64_at(40),
        id: u64_at(48),
        query_len: u64_at(56),
        query_id: u64_at(64),
    };
    let names_len = u64_at(72) as u128;

    // Section offsets in u128 with checked arithmetic: a corrupt header cannot overflow them.
    let sections = || -> Option<(u128, u128, u128, u128, u128)> {
        let align128 =
            |n: u128| Some(n.checked_add(ALIGN as u128 - 1)? / ALIGN as u128 * ALIGN as u128);
        let (docs, feats, groups) = (n_docs as u128, n_features as u128, n_groups as u128);
        let grades_at = align128(
            (HEADER_BYTES as u128).checked_add(docs.checked_mul(feats)?.checked_mul(4)?)?,
        )?;
        let offsets_at = align128(grades_at.checked_add(docs)?)?;
        let qids_at = align128(offsets_at.checked_add((groups + 1).checked_mul(8)?)?)?;
        let qids_end = qids_at.checked_add(groups.checked_mul(8)?)?;
        let names_at = align128(qids_end)?;
        Some(match names_len {
            0 => (grades_at, offsets_at, qids_at, qids_end, qids_end),
            n => (
                grades_at,
                offsets_at,
                qids_at,
                qids_end,
                names_at.checked_add(n)?,
            ),
        })
    };
    let Some((grades_at, offsets_at, qids_at, qids_end, end)) = sections() else {
        return Err(bad("corrupt cache: its header's sizes overflow".into()));
    };
    if map.len() as u128 != end {
        return Err(bad(format!(
            "truncated or corrupt cache: {} bytes, the header implies {end}",
            map.len()
        )));
    }
    // Its contents as they were written, before anything reads them.
    crate::data::sections::check_body(cache, HEADER_BYTES as u64, checksum).map_err(|what| {
        bad(format!(
            "corrupt cache: {what}; delete it (or rebuild it with `distillrank data cache`)"
        ))
    })?;
    // The file is exactly `end` bytes long, so every offset fits in usize.
    let (features_at, grades_at, offsets_at, qids_at, qids_end, end) = (
        HEADER_BYTES,
        grades_at as usize,
        offsets_at as usize,
        qids_at as usize,
        qids_end as usize,
        end as usize,
    );
    let offsets: &[u64] = bytemuck::cast_slice(&map[offsets_at..offsets_at + 8 * (n_groups + 1)]);
    let qids: &[u64] = bytemuck::cast_slice(&map[qids_at..qids_end]);
    let feature_names = match names_len {
        0 => None,
        n => {
            let names: Vec<String> = serde_json::from_slice(&map[end - n as usize..end])
                .map_err(|e| bad(format!("corrupt cache: its column names: {e}")))?;
            if names.len() != n_features {
                return Err(bad(format!(
                    "corrupt cache: {} column names for {n_features} features",
                    names.len()
                )));
            }
            // Names a Parquet file could give its features: distinct, and neither of the
            // columns its reader takes by name.
            use crate::data::parquet::{LABEL, QID};
            let mut seen = std::collections::HashSet::with_capacity(names.len());
            if let Some((i, again)) = names
                .iter()
                .enumerate()
                .find(|&(_, n)| !seen.insert(n) || n == QID || n == LABEL)
            {
                return Err(bad(format!(
                    "corrupt cache: feature column {} is named '{}', {}",
                    i + 1,
                    crate::error::printable(again),
                    if again == QID || again == LABEL {
                        "which names the query ids or the grades in a Parquet file"
                    } else {
                        "as an earlier one is: expected distinct names"
                    }
                )));
            }
            Some(names)
        }
    };
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
        feature_names,
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

/// Checks a cache file's body against the checksum its header records ([`read_cache`] does it
/// first; `bench cache` times it alone).
pub fn check_checksum(cache: &Path) -> Result<()> {
    use std::io::Read;
    let mut header = [0u8; HEADER_BYTES];
    std::fs::File::open(cache)
        .and_then(|mut f| f.read_exact(&mut header))
        .map_err(|e| Error::io(cache, e))?;
    let checksum = u32::from_le_bytes(header[12..16].try_into().expect("4 bytes"));
    crate::data::sections::check_body(cache, HEADER_BYTES as u64, checksum)
        .map_err(|what| Error::parse(cache, 0, 0, format!("corrupt cache: {what}")))
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

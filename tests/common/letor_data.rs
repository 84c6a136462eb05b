//! The real LETOR data the tests read, carried in the repository compressed
//! (`tests/data/letor/`, 2.4 MB) and unpacked once into `target/data/`:
//!
//! - `mq2008/S1.txt` … `S5.txt`, LETOR 4.0's five parts, and `mq2008/Fold1/{train,vali,test}.txt`
//!   made from them as the release's readme rotates them (train = S1+S2+S3, vali = S4, test = S5);
//! - `lightgbm_rank/rank.{train,test}` and their `.query` files, LightGBM's lambdarank example.
//!
//! `cargo xtask test` (and `cargo xtask data`) unpack before the tests run; the Rust tests call
//! [`unpack`] too, so that a plain `cargo test` finds the files. Files are written whole under a
//! temporary name and renamed, so tests unpacking at the same time never read half a file.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The unpacked file or folder `relative` (say `mq2008/Fold1/train.txt`), as an absolute path,
/// unpacking on first use.
pub fn data(relative: &str) -> String {
    static UNPACKED_ONCE: OnceLock<PathBuf> = OnceLock::new();
    let root = UNPACKED_ONCE.get_or_init(|| {
        unpack(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_or_else(|e| panic!("{e}"))
    });
    root.join(relative).display().to_string()
}

/// Where the unpacked files live, relative to the repository root.
pub const UNPACKED: &str = "target/data";

/// Unpacks `tests/data/letor` under `root` into `root/target/data` where a file is missing, and
/// returns `root/target/data`.
pub fn unpack(root: &Path) -> Result<PathBuf, String> {
    let packed = root.join("tests/data/letor");
    let out = root.join(UNPACKED);
    let mut parts = Vec::new();
    for s in 1..=5 {
        let part = format!("mq2008/S{s}.txt");
        let text = gunzip(&packed.join(format!("{part}.gz")))?;
        write_once(&out.join(&part), || Ok(text.clone()))?;
        parts.push(text);
    }
    let fold1 = [
        ("train.txt", &[0, 1, 2][..]),
        ("vali.txt", &[3]),
        ("test.txt", &[4]),
    ];
    for (file, members) in fold1 {
        write_once(&out.join("mq2008/Fold1").join(file), || {
            Ok(members
                .iter()
                .flat_map(|&i| parts[i].iter().copied())
                .collect())
        })?;
    }
    for file in [
        "rank.train",
        "rank.test",
        "rank.train.query",
        "rank.test.query",
    ] {
        let from = packed.join(format!("lightgbm_rank/{file}.gz"));
        write_once(&out.join("lightgbm_rank").join(file), || gunzip(&from))?;
    }
    Ok(out)
}

fn gunzip(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes)
}

/// Writes `path` from `make` unless it already exists.
fn write_once(path: &Path, make: impl FnOnce() -> Result<Vec<u8>, String>) -> Result<(), String> {
    if path.exists() {
        return Ok(());
    }
    let dir = path.parent().expect("a file under target/data");
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let temporary = dir.join(format!(
        ".{}.{}",
        path.file_name().unwrap().to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&temporary, make()?).map_err(|e| format!("{}: {e}", temporary.display()))?;
    std::fs::rename(&temporary, path).map_err(|e| format!("{}: {e}", path.display()))
}

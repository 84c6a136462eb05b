//! Output files, written so that a failure never leaves half a file behind: every file is
//! written to a temporary name beside its target and renamed into place (a rename within one
//! folder is atomic). Commands check their output paths before any work ([`check_file`],
//! [`check_folder`]), so a bad path fails in a second rather than after an hour of training.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A file written under a temporary name, waiting to be renamed onto its target.
pub struct Staged {
    temporary: PathBuf,
    target: PathBuf,
}

impl Staged {
    /// Renames the file onto its target.
    pub fn commit(self) -> Result<()> {
        std::fs::rename(&self.temporary, &self.target).map_err(|e| {
            let _ = std::fs::remove_file(&self.temporary);
            Error::io(&self.target, e)
        })
    }
    /// Removes the temporary file.
    pub fn discard(self) {
        let _ = std::fs::remove_file(&self.temporary);
    }
}

/// `path`'s temporary sibling: `.NAME.PID.tmp` in the same folder.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Writes `bytes` under a temporary name beside `path`; [`Staged::commit`] puts them in place.
pub fn stage(path: &Path, bytes: &[u8]) -> Result<Staged> {
    let temporary = temporary(path);
    if let Err(e) = std::fs::write(&temporary, bytes) {
        let _ = std::fs::remove_file(&temporary);
        return Err(Error::io(path, e));
    }
    Ok(Staged {
        temporary,
        target: path.to_path_buf(),
    })
}

/// Streams a file under a temporary name beside `path` through `write` (buffered);
/// [`Staged::commit`] puts it in place. For outputs too large to hold in memory.
pub fn stage_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<Staged> {
    use std::io::Write as _;
    let temporary = temporary(path);
    let written = std::fs::File::create(&temporary).and_then(|file| {
        let mut out = std::io::BufWriter::new(file);
        write(&mut out)?;
        out.flush()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(Error::io(path, e));
    }
    Ok(Staged {
        temporary,
        target: path.to_path_buf(),
    })
}

/// Writes `bytes` to `path` atomically: readers see the old file or the new one, never a part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    stage(path, bytes)?.commit()
}

/// Checks that `path` can be written as a file, before any work: its folder exists and takes a
/// new file, and `path` is not a folder. Nothing is left behind.
pub fn check_file(path: &Path) -> Result<()> {
    if path.as_os_str().is_empty() {
        return Err(Error::Config("an output path is empty".into()));
    }
    if path.is_dir() {
        return Err(Error::io(
            path,
            std::io::Error::other("is a folder, expected a file name"),
        ));
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !folder.is_dir() {
        return Err(Error::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("its folder {} does not exist", folder.display()),
            ),
        ));
    }
    probe(&temporary(path))
}

/// Checks that `folder` can take output files, creating it (and its parents) if needed.
pub fn check_folder(folder: &Path) -> Result<()> {
    std::fs::create_dir_all(folder).map_err(|e| Error::io(folder, e))?;
    probe(&temporary(&folder.join("probe")))
}

/// Creates and removes `path`: the folder accepts new files.
fn probe(path: &Path) -> Result<()> {
    std::fs::write(path, b"").map_err(|e| Error::io(path, e))?;
    std::fs::remove_file(path).map_err(|e| Error::io(path, e))
}

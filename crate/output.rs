//! Output files, written so that a failure never leaves half a file behind: every file is
//! written to a temporary name beside its target and renamed into place (a rename within one
//! folder is atomic). Commands check their output paths before any work ([`check_file`],
//! [`check_folder`]), so a bad path fails in a second rather than after an hour of training.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A file written under a temporary name, waiting to be renamed onto its target. Dropped
/// uncommitted (a later output of the command failed), the temporary file is removed.
pub struct Staged {
    temporary: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Staged {
    /// Renames the file onto its target.
    pub fn commit(mut self) -> Result<()> {
        regular_or_absent(&self.target)?;
        std::fs::rename(&self.temporary, &self.target).map_err(|e| Error::io(&self.target, e))?;
        self.committed = true;
        Ok(())
    }
    /// Removes the temporary file: dropped uncommitted, [`Drop`] removes it.
    pub fn discard(self) {
        drop(self);
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temporary);
        }
        unfinished(|files| files.retain(|f| f != &self.temporary));
    }
}

/// The temporary files being written or staged, for [`remove_unfinished`]: a process that a
/// signal ends runs no destructor.
static UNFINISHED: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// The registry, locked (a thread that panicked holding it left nothing half-changed in it).
fn registry() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    UNFINISHED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn unfinished(change: impl FnOnce(&mut Vec<PathBuf>)) {
    change(&mut registry());
}

/// Removes every temporary file not yet renamed into place, and the run folder's lock: what the
/// command line calls when Ctrl-C or SIGTERM ends it, so that no `.NAME.PID.tmp` stays beside
/// the outputs. The registry stays locked while the returned guard lives (until the process
/// ends), so that no file is staged after it.
pub fn remove_unfinished() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    let mut files = registry();
    for file in files.drain(..) {
        let _ = std::fs::remove_file(file);
    }
    files
}

/// A temporary file about to be written at `temporary` for `target`, removed if the process
/// ends before it is committed.
fn staging(temporary: PathBuf, target: PathBuf) -> Staged {
    unfinished(|files| files.push(temporary.clone()));
    Staged {
        temporary,
        target,
        committed: false,
    }
}

/// The file `path` writes: the file a link leads to (`/dev/stdout` with the output redirected to
/// a file, `latest.onnx -> v3.onnx`, or `next.onnx -> v4.onnx` before `v4.onnx` exists), as `>`
/// writes through it, where renaming onto the link would replace the link itself; `path` where it
/// is no link, or its links go round in a loop.
fn through_links(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {}
        _ => return path.to_path_buf(),
    }
    if let Ok(target) = std::fs::canonicalize(path) {
        return target;
    }
    // A chain of links that ends at a name with no file yet: followed by hand, as far as the
    // kernel follows one (40 links).
    let mut name = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&name) {
            Ok(target) => {
                name = match name.parent() {
                    Some(folder) => folder.join(target),
                    None => target,
                }
            }
            Err(_) => return name,
        }
    }
    path.to_path_buf()
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
    let target = through_links(path);
    let staged = staging(temporary(&target), target);
    std::fs::write(&staged.temporary, bytes).map_err(|e| Error::io(path, e))?;
    Ok(staged)
}

/// Streams a file under a temporary name beside `path` through `write` (buffered);
/// [`Staged::commit`] puts it in place. For outputs too large to hold in memory.
pub fn stage_with(
    path: &Path,
    write: impl FnOnce(&mut (dyn std::io::Write + Send)) -> std::io::Result<()>,
) -> Result<Staged> {
    use std::io::Write as _;
    let target = through_links(path);
    let staged = staging(temporary(&target), target);
    std::fs::File::create(&staged.temporary)
        .and_then(|file| {
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)?;
            out.flush()
        })
        .map_err(|e| Error::io(path, e))?;
    Ok(staged)
}

/// [`stage_with`] for text: gzip-compressed where `path` ends in `.gz`, as every reader of
/// LETOR text takes such a name (and `data convert` writes it).
pub fn stage_text(
    path: &Path,
    write: impl FnOnce(&mut (dyn std::io::Write + Send)) -> std::io::Result<()>,
) -> Result<Staged> {
    if writes_gzip(path) {
        stage_with(path, |out| {
            let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            write(&mut gz)?;
            gz.try_finish()
        })
    } else {
        stage_with(path, write)
    }
}

/// Whether a text output's name asks for gzip: it ends in `.gz`, in any case.
pub fn writes_gzip(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// Writes `bytes` to `path` atomically: readers see the old file or the new one, never a part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    stage(path, bytes)?.commit()
}

/// Refuses an output path that names something other than a regular file. An output is written
/// to a temporary name and renamed into place, which would replace a device (`/dev/zero`), a pipe
/// or a socket with a plain file.
fn regular_or_absent(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => Err(Error::io(
            path,
            std::io::Error::other(
                "is not a regular file (a device, a pipe or a socket), expected the name of a file to write",
            ),
        )),
        _ => Ok(()),
    }
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
    regular_or_absent(path)?;
    // A link is written through: the folder that takes the file is its target's.
    let written = through_links(path);
    let folder = match written.parent() {
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
    probe(path, &temporary(&written))
}

/// A file a command reads or writes, with the flag (or the words) that named it.
pub type Named = (String, PathBuf);

/// Refuses an output that would replace one of the command's inputs, before any work: the same
/// file under any name (`./x`, an absolute path, a link, `/dev/stdin` redirected from it), or a
/// folder that holds an input. Every file the command writes and every file it reads (a data
/// file's `.query` beside it included: see [`read_with_companions`]) is named with its flag.
/// `parts` are the inputs read as folders of part files (a Parquet folder), whose every file is
/// read: an output inside one is refused too.
pub fn check_not_an_input(writes: &[Named], reads: &[Named], parts: &[Named]) -> Result<()> {
    let shown = |p: &Path| crate::error::printable(&p.display().to_string());
    for (written_by, written) in writes {
        // A file that is not there yet is no input; its folder, which exists, may be one.
        let target = std::fs::canonicalize(written).ok();
        let folder = written
            .parent()
            .map(|p| {
                if p.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    p
                }
            })
            .and_then(|p| std::fs::canonicalize(p).ok());
        for (read_by, read) in reads.iter().chain(parts) {
            let Ok(input) = std::fs::canonicalize(read) else {
                continue;
            };
            let replaced = target.as_ref() == Some(&input)
                || target
                    .as_ref()
                    .is_some_and(|t| t.is_dir() && input.starts_with(t));
            let inside = input.is_dir()
                && parts.iter().any(|(_, p)| p == read)
                && folder.as_ref().is_some_and(|f| f.starts_with(&input));
            let whose = if replaced && written == read {
                "is a file".to_string()
            } else if replaced {
                format!("would write over {}, which", shown(read))
            } else if inside {
                format!("would write inside the folder {}, which", shown(read))
            } else {
                continue;
            };
            return Err(Error::Config(format!(
                "{written_by} {} {whose} this command reads ({read_by}): choose another name for the output",
                shown(written),
            )));
        }
    }
    Ok(())
}

/// A data file a command reads and the `.query` file of group sizes beside it, which the reader
/// takes where the file has no `qid:`: both are inputs that no output may replace.
pub fn read_with_companions(flag: &str, file: &Path) -> Vec<Named> {
    vec![
        (flag.to_string(), file.to_path_buf()),
        (
            format!("the group sizes beside {flag}'s file"),
            PathBuf::from(format!("{}.query", file.display())),
        ),
    ]
}

/// Checks that `folder` can take output files, creating it (and its parents) if needed: the
/// folders it created are taken back, where still empty, unless the command [`CreatedFolders::keep`]s
/// them, so that a command that fails before it writes leaves no folder behind.
pub fn check_folder(folder: &Path) -> Result<CreatedFolders> {
    create_folder(folder).map(CreatedFolders)
}

/// The folders [`check_folder`] created, outermost first: removed again when dropped, each only
/// if empty, unless kept.
#[must_use = "dropped, the folders are taken back"]
pub struct CreatedFolders(Vec<PathBuf>);

impl CreatedFolders {
    /// None created: nothing to take back.
    pub fn none() -> CreatedFolders {
        CreatedFolders(Vec::new())
    }

    /// The command wrote its outputs: the folders stay.
    pub fn keep(mut self) {
        self.0.clear();
    }
}

impl Drop for CreatedFolders {
    fn drop(&mut self) {
        // `remove_dir` refuses a folder that holds anything.
        for folder in self.0.iter().rev() {
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// [`check_folder`], returning the folders it created, outermost first (none when `folder`
/// existed), for a run that fails before it writes anything to take back.
fn create_folder(folder: &Path) -> Result<Vec<PathBuf>> {
    if folder.exists() && !folder.is_dir() {
        return Err(Error::io(
            folder,
            std::io::Error::other(
                "is a file, expected a folder for the run's outputs (it is created if missing)",
            ),
        ));
    }
    let created: Vec<PathBuf> = folder
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
        .map(Path::to_path_buf)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    std::fs::create_dir_all(folder).map_err(|e| Error::io(folder, e))?;
    probe(folder, &temporary(&folder.join("probe")))?;
    Ok(created)
}

/// An output folder that one run owns: locked while the run writes into it (a second run into the
/// same folder is refused, naming the first), and cleared of what the previous run there wrote,
/// so that a report never sits beside another run's students. The files a run writes are listed
/// in the folder's manifest ([`RunFolder::MANIFEST`]) for the next run to clear; other files in
/// the folder are left alone, and so is an output of the last run that this run reads (its
/// `setup.json` given as `--setup`, a data or teacher file kept there).
pub struct RunFolder {
    dir: PathBuf,
    written: Vec<String>,
    /// The names the run may write ([`RunFolder::claim`]'s `writes`).
    writes: Vec<&'static str>,
    /// The folders the claim created, outermost first: a run that ends before
    /// [`RunFolder::finish`] removes those it left empty, so a refused run leaves no trace.
    created: Vec<PathBuf>,
    /// The run's inputs (its setup file and the files it names), canonical: never removed as
    /// the last run's outputs.
    inputs: Vec<PathBuf>,
    /// Whether the last run's outputs were removed ([`RunFolder::replace_last`]).
    replaced: bool,
    finished: std::cell::Cell<bool>,
}

impl RunFolder {
    /// The lock: the process id of the run that holds the folder.
    pub const LOCK: &'static str = ".distillrank.lock";
    /// The files and folders the last run wrote, one name a line.
    pub const MANIFEST: &'static str = ".distillrank-outputs";

    /// Takes `dir` for this run: creates it and locks it. What the last run wrote is removed at
    /// this run's first output ([`RunFolder::file`]), but for the files and folders that hold
    /// one of the run's inputs (its `setup` file and the `files` it names). `writes` are the
    /// names the run writes in it (a file, or a folder of files): one that is one of the
    /// `files`, or holds one, is refused before any work, where the run would have written over
    /// it at its end. The setup file is read whole before the run and written back as the setup
    /// that ran: a run may take its folder's own `setup.json` and run it again in place.
    pub fn claim(
        dir: &Path,
        setup: Option<&Path>,
        files: &[&Path],
        writes: &[&'static str],
    ) -> Result<RunFolder> {
        let created = create_folder(dir)?;
        let lock = dir.join(Self::LOCK);
        let mut taken = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock);
        if matches!(&taken, Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists) {
            let holder = std::fs::read_to_string(&lock).unwrap_or_default();
            let pid = holder.trim();
            // This process's own id is a lock left by an earlier process of that id (a
            // container's first process): a run that holds it does not claim it again.
            let alive = !pid.is_empty()
                && pid != std::process::id().to_string()
                && Path::new("/proc").join(pid).exists();
            if alive || !Path::new("/proc/self").exists() {
                return Err(Error::Config(format!(
                    "{} is being written by another run (process {}): wait for it, or choose another --out (remove {} if no run is left)",
                    dir.display(),
                    if pid.is_empty() { "unknown" } else { pid },
                    lock.display()
                )));
            }
            // The run that held it is gone: the lock is stale.
            std::fs::remove_file(&lock).map_err(|e| Error::io(&lock, e))?;
            taken = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&lock);
        }
        let mut file = taken.map_err(|e| Error::io(&lock, e))?;
        // Removed with the unfinished outputs when a signal ends the run.
        unfinished(|files| files.push(lock.clone()));
        std::io::Write::write_all(&mut file, std::process::id().to_string().as_bytes())
            .map_err(|e| Error::io(&lock, e))?;
        let mut folder = RunFolder {
            dir: dir.to_path_buf(),
            written: Vec::new(),
            writes: writes.to_vec(),
            created,
            inputs: Vec::new(),
            replaced: false,
            finished: std::cell::Cell::new(false),
        };
        let named = |flag: &str, paths: Vec<PathBuf>| -> Vec<Named> {
            paths.into_iter().map(|p| (flag.to_string(), p)).collect()
        };
        check_not_an_input(
            &named("--out", writes.iter().map(|w| dir.join(w)).collect()),
            &named(
                "a file of the run's setup",
                files.iter().map(|p| p.to_path_buf()).collect(),
            ),
            &[],
        )?;
        folder.inputs = setup
            .into_iter()
            .chain(files.iter().copied())
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .collect();
        Ok(folder)
    }

    /// Removes what the last run wrote (the names its manifest lists), but for the files and
    /// folders that hold one of this run's inputs. Done at this run's first output, once its
    /// work is done: a run refused or stopped before then leaves the last run's outputs whole.
    fn replace_last(&mut self) -> Result<()> {
        let manifest = self.dir.join(Self::MANIFEST);
        let read_here = |path: &Path| {
            std::fs::canonicalize(path)
                .is_ok_and(|path| self.inputs.iter().any(|i| i.starts_with(&path)))
        };
        if let Ok(list) = std::fs::read_to_string(&manifest) {
            for name in list.lines().map(str::trim).filter(|n| !n.is_empty()) {
                // Only plain names inside the folder: a manifest never reaches outside it.
                if name.contains('/') || name.contains('\\') || name.starts_with('.') {
                    continue;
                }
                let path = self.dir.join(name);
                if read_here(&path) {
                    continue;
                }
                let removed = if path.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                match removed {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(Error::io(&path, e))
                    }
                    _ => {}
                }
            }
        }
        self.replaced = true;
        Ok(())
    }

    /// The path of `name` in the folder, recorded as this run's output. The first one replaces
    /// the last run's outputs ([`RunFolder::replace_last`]).
    pub fn file(&mut self, name: &str) -> Result<PathBuf> {
        let first = name.split('/').next().unwrap_or(name);
        debug_assert!(
            self.writes.contains(&first),
            "{name} is not among the names the run claimed to write ({:?})",
            self.writes
        );
        if !self.replaced {
            self.replace_last()?;
        }
        if !self.written.iter().any(|n| n == name) {
            self.written.push(name.to_string());
        }
        Ok(self.dir.join(name))
    }

    /// Writes the manifest of this run's outputs.
    pub fn finish(&self) -> Result<()> {
        let list = self.written.join("\n") + "\n";
        write_atomic(&self.dir.join(Self::MANIFEST), list.as_bytes())?;
        self.finished.set(true);
        Ok(())
    }
}

impl Drop for RunFolder {
    fn drop(&mut self) {
        let lock = self.dir.join(Self::LOCK);
        let _ = std::fs::remove_file(&lock);
        unfinished(|files| files.retain(|f| f != &lock));
        if !self.finished.get() {
            // Only folders this run created, and only if empty (`remove_dir` refuses others).
            for folder in self.created.iter().rev() {
                let _ = std::fs::remove_dir(folder);
            }
        }
    }
}

/// Creates and removes `path`, a temporary name beside `target`: the folder accepts new files.
/// A refusal names `target`, the path the user gave, never the temporary name.
fn probe(target: &Path, path: &Path) -> Result<()> {
    let cannot = |e: std::io::Error| {
        Error::io(
            target,
            std::io::Error::new(e.kind(), format!("cannot be written there ({e})")),
        )
    };
    unfinished(|files| files.push(path.to_path_buf()));
    let probed = std::fs::write(path, b"")
        .and_then(|()| std::fs::remove_file(path))
        .map_err(cannot);
    let _ = std::fs::remove_file(path);
    unfinished(|files| files.retain(|f| f != path));
    probed
}

//! Where the files a setup names come from: on disk (with their caches and sidecars) or in
//! memory (the page's uploads, Python's arrays).

use std::path::{Path, PathBuf};

use super::Reporter;
use crate::data::logs::{ClickTable, LogColumns};
use crate::data::prepare::Scratch;
use crate::data::Dataset;
use crate::error::{Error, Result};

/// Which split a file plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Train,
    Valid,
    Test,
}

impl Role {
    /// The split's name in messages: training, validation or test.
    pub fn split(self) -> &'static str {
        match self {
            Role::Train => "training",
            Role::Valid => "validation",
            Role::Test => "test",
        }
    }

    /// The flag that names the split's file: --train, --valid or --test.
    pub fn flag(self) -> &'static str {
        match self {
            Role::Train => "--train",
            Role::Valid => "--valid",
            Role::Test => "--test",
        }
    }
}

/// A file's LETOR text to read again, and its `.query` group sizes when it has them.
pub type Text<'a> = (Box<dyn std::io::Read + 'a>, Option<Vec<usize>>);

/// Where the files a setup names come from.
pub trait Store {
    /// The dataset `name` names, playing `role`.
    fn load(&mut self, name: &str, role: Role, reporter: &mut dyn Reporter) -> Result<Dataset>;
    /// The simulated-logs sidecar of `name` (`FILE.logs.json`, written by `data simulate-logs`),
    /// when the store keeps files beside each other; checked ([`check_sidecar`]).
    fn sidecar(&mut self, _name: &str) -> Result<Option<serde_json::Value>> {
        Ok(None)
    }
    /// What identifies the file `name` playing `role` and the files read with it (its `.query`
    /// files, its logs sidecar), for the key of prepared splits on disk ([`prepare`] with
    /// `prepared_cache`); None where the store holds no files (the page's uploads, arrays).
    fn stamps(&mut self, _name: &str, _role: Role) -> Result<Option<String>> {
        Ok(None)
    }
    /// Builds the matrices of the files it reads next where `scratch` says (a store of files on
    /// disk; the others hold their data already).
    fn read_into(&mut self, _scratch: Scratch) {}
    /// A teacher's scores of each document of `name`, in its order, with each document's qid,
    /// where the door gave them beside the data (Python's arrays); None otherwise.
    fn given_teacher_scores(&mut self, _name: &str) -> Option<(Vec<f64>, Vec<Option<u64>>)> {
        None
    }
    /// The clicks by rank of `data` (the dataset `name` names) where the door gave each row's
    /// displayed position beside it, its y the click (Python's `position=`); None otherwise.
    fn given_clicks(&mut self, _name: &str, _data: &Dataset) -> Result<Option<ClickTable>> {
        Ok(None)
    }
    /// Refuses, before any is read, a split's file (training, validation, test: `files`) or
    /// its `.query` file that is not there, where the store reads files of those names
    /// ([`Disk`]); the other stores hold their data under names that are no files.
    fn check_data_files(&mut self, _files: [Option<&str>; 3]) -> Result<()> {
        Ok(())
    }
    /// Refuses the file `name`, which the setup names beside the data as `what` (the words of
    /// the error: "a tree model (--teacher-model)"), where it is not there: checked before the
    /// data are read ([`crate::pipeline::teacher::check_named_files`]).
    fn check_file(&mut self, name: &str, what: &str) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        return crate::data::check_file_there(Path::new(name), what);
        #[cfg(target_arch = "wasm32")]
        {
            let _ = (name, what);
            Ok(())
        }
    }
    /// A file the setup names beside the data (a teacher's model, a teacher's scores), whole;
    /// one larger than `cap` bytes is refused, before it is read, as not `what` (the words of
    /// the error: "a tree model").
    fn file(&mut self, name: &str, cap: u64, what: &str) -> Result<Vec<u8>> {
        #[cfg(not(target_arch = "wasm32"))]
        return crate::data::read_capped(Path::new(name), cap, what);
        #[cfg(target_arch = "wasm32")]
        {
            let _ = cap;
            Err(Error::Config(format!(
                "{}: the page has no file of that name ({what}): upload it",
                crate::error::printable(name)
            )))
        }
    }
    /// The LETOR text of `name` playing `role`, to read again in full precision (the scores of
    /// a teacher trained elsewhere), with its `.query` group sizes when it has them; an error
    /// where the store holds no text (arrays).
    fn text(&mut self, name: &str, _role: Role) -> Result<Text<'_>> {
        Err(Error::Config(format!(
            "an external teacher scores the LETOR text of the data files, and '{}' is held as arrays: give the files' paths, or the teacher's scores (teacher_scores)",
            crate::error::printable(name)
        )))
    }
}

/// Datasets held in memory under names: the page's uploads, Python's arrays.
#[derive(Default)]
pub struct InMemory {
    pub datasets: Vec<(String, Dataset)>,
    /// A teacher's scores of each document of the dataset of that name, in its order.
    pub teacher_scores: Vec<(String, Vec<f64>)>,
    /// The displayed position of each row of the dataset of that name, its y the click.
    pub positions: Vec<(String, Vec<u64>)>,
}

impl Store for InMemory {
    fn given_clicks(&mut self, name: &str, data: &Dataset) -> Result<Option<ClickTable>> {
        let Some((_, positions)) = self.positions.iter().find(|(n, _)| n == name) else {
            return Ok(None);
        };
        let clicks: Vec<f64> = data.grades.iter().map(|&g| g as f64).collect();
        crate::data::logs::clicks_of_rows(data, positions, &clicks, name).map(Some)
    }

    fn given_teacher_scores(&mut self, name: &str) -> Option<(Vec<f64>, Vec<Option<u64>>)> {
        let (_, scores) = self.teacher_scores.iter().find(|(n, _)| n == name)?;
        let (_, data) = self.datasets.iter().find(|(n, _)| n == name)?;
        let qids = (0..data.n_groups())
            .flat_map(|g| std::iter::repeat_n(Some(data.qids[g]), data.group(g).len()))
            .collect();
        Some((scores.clone(), qids))
    }

    fn load(&mut self, name: &str, _role: Role, _: &mut dyn Reporter) -> Result<Dataset> {
        self.datasets
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
            .ok_or_else(|| {
                Error::Config(format!("no data named '{}'", crate::error::printable(name)))
            })
    }
}

/// Files on disk: a LETOR file, its fresh `FILE.drcache` when there is one, or a `.drcache`;
/// LightGBM `.query` files for the text files without qid, by role.
#[cfg(not(target_arch = "wasm32"))]
#[derive(Default)]
pub struct Disk {
    /// The group-size files of the training, validation and test files.
    pub queries: [Option<PathBuf>; 3],
    /// Where a text file's matrix is built as it is read ([`Store::read_into`]).
    pub scratch: Scratch,
    /// The pipes read so far (not regular files: `/dev/stdin`, `<(zcat f.gz)`), and the split
    /// each was read for: a pipe gives its bytes once, so a second split naming it is refused
    /// rather than found empty.
    pub pipes_read: Vec<(PathBuf, Role)>,
}

#[cfg(not(target_arch = "wasm32"))]
impl Disk {
    /// The files on disk, each split's groups from the `.query` file its setup names for it
    /// (`queries`: training, validation, test; [`crate::setup::DataSource::query_files`]), else
    /// from its qids or the `.query` file beside it.
    pub fn with_queries(queries: [Option<&str>; 3]) -> Disk {
        Disk {
            queries: queries.map(|q| q.map(PathBuf::from)),
            ..Disk::default()
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl Store for Disk {
    fn check_data_files(&mut self, files: [Option<&str>; 3]) -> Result<()> {
        let queries = self
            .queries
            .each_ref()
            .map(|q| q.as_deref().and_then(Path::to_str));
        crate::pipeline::preparation::check_split_files(files, queries)
    }

    fn load(&mut self, name: &str, role: Role, reporter: &mut dyn Reporter) -> Result<Dataset> {
        let path = Path::new(name);
        // A file that is not there is named with the split and the setting that name it (a
        // door's own words: a setup's `source.files.train`).
        let mut files = [None; 3];
        files[role as usize] = Some(name);
        crate::pipeline::preparation::check_split_files(files, [None; 3])?;
        let is_pipe = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        if is_pipe {
            if let Some((_, first)) = self.pipes_read.iter().find(|(p, _)| p == path) {
                let again = if *first == role {
                    "is read again (a sweep prepares the data at each value)".to_string()
                } else {
                    format!(
                        "is named for the {} split too, where it was read",
                        first.split()
                    )
                };
                return Err(Error::Config(format!(
                    "{} is not a regular file (a pipe or a device) and {again}: a pipe gives its bytes once; write it to a file on disk and give that",
                    crate::error::printable(name),
                )));
            }
            self.pipes_read.push((path.to_path_buf(), role));
        }
        let query = &self.queries[role as usize];
        load_file(path, query.as_deref(), &self.scratch, reporter)
    }

    fn read_into(&mut self, scratch: Scratch) {
        self.scratch = scratch;
    }

    fn text(&mut self, name: &str, role: Role) -> Result<Text<'_>> {
        let mut path = PathBuf::from(name);
        // A binary cache's text is the file it was made from, beside it.
        if crate::data::cache::is_cache_path(&path) {
            let text = path.with_extension("");
            if !crate::data::cache::has_cache_name(&path) {
                return Err(Error::Config(format!(
                    "{name} is a binary cache, and an external teacher scores the LETOR text it was made from: give the text file"
                )));
            }
            if !text.exists() {
                return Err(Error::Config(format!(
                    "{name} is a binary cache, and an external teacher scores the LETOR text it was made from, which is not beside it ({}): give the text file",
                    text.display()
                )));
            }
            path = text;
        }
        if path.is_dir() {
            return Err(Error::Config(format!(
                "{name} is a folder of part files, and an external teacher scores one file: join the parts into one Parquet file (distillrank data convert {name} OUT.parquet), or give the teacher's scores"
            )));
        }
        let beside = PathBuf::from(format!("{}.query", path.display()));
        let query = match &self.queries[role as usize] {
            Some(q) => Some(crate::data::letor::read_query_file(q)?),
            None if beside.exists() => Some(crate::data::letor::read_query_file(&beside)?),
            None => None,
        };
        // The text is read again by a teacher's or reference's tree model scoring it, by their
        // score files matched to its queries, and by an impressions log naming its docids.
        crate::data::check_rereadable(
            &path,
            "a teacher or reference (its tree model scoring the text, or its score files matched to the text's queries) or a log's docids",
        )?;
        let file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
        Ok((Box::new(file), query))
    }

    fn sidecar(&mut self, name: &str) -> Result<Option<serde_json::Value>> {
        let path = Path::new(name);
        let mut candidates = vec![sidecar_path(path)];
        if crate::data::cache::has_cache_name(path) {
            candidates.push(sidecar_path(&path.with_extension("")));
        }
        match candidates.into_iter().find(|p| p.exists()) {
            Some(p) => {
                let bytes = crate::data::read_capped(&p, 16 << 20, "a logs sidecar")?;
                let sidecar = check_sidecar(&p, &bytes)?;
                // The sidecar describes one file: the text beside it, whose size and CRC-32 it
                // recorded when the logs were simulated.
                let described = p
                    .to_str()
                    .and_then(|n| n.strip_suffix(".logs.json"))
                    .map(PathBuf::from)
                    .unwrap_or_else(|| path.to_path_buf());
                let recorded = &sidecar["file"];
                if recorded.is_null() {
                    return Err(Error::parse(
                        &p,
                        0,
                        0,
                        "names no file (size and CRC-32): it was written by an older build; write the logs again (distillrank data simulate-logs, or data aggregate-logs)",
                    ));
                }
                if described.exists() && &file_identity(&described)? != recorded {
                    return Err(Error::Config(format!(
                        "{} describes another file than {}: its recorded size and CRC-32 ({}) differ from the file's; write the logs again (data simulate-logs or data aggregate-logs), or give the file it was written with",
                        p.display(),
                        described.display(),
                        recorded
                    )));
                }
                Ok(Some(sidecar))
            }
            None => Ok(None),
        }
    }

    /// Sizes and identities ([`crate::data::cache::file_identity`]: times, inode, sampled
    /// contents), as the binary cache stamps its sources, rather than a hash of the whole
    /// contents: hashing a 4 GB file on every run would cost most of what the prepared splits
    /// save. An edit changes the file's status-change time, which no call can put back.
    fn stamps(&mut self, name: &str, role: Role) -> Result<Option<String>> {
        use crate::data::cache::file_identity;
        let path = Path::new(name);
        // A folder of Parquet part files is its parts.
        let mut files = if path.is_dir() {
            crate::data::parquet::part_files(path)?
        } else {
            vec![path.to_path_buf()]
        };
        files.push(PathBuf::from(format!("{name}.query")));
        files.extend(self.queries[role as usize].clone());
        files.push(sidecar_path(path));
        if crate::data::cache::has_cache_name(path) {
            files.push(sidecar_path(&path.with_extension("")));
        }
        // A prepared cache is kept beside a file, and known by its stamps: a pipe has neither.
        crate::data::check_rereadable(path, "a prepared cache (--prepared-cache) stamping it")?;
        if role == Role::Train {
            crate::data::check_cache_beside(path, "a prepared cache (--prepared-cache)")?;
        }
        let mut stamps = String::new();
        for (k, file) in files.iter().enumerate() {
            // The named file must exist; its companions count where they do.
            if k == 0 || file.exists() {
                let (len, id) = file_identity(file)?;
                stamps.push_str(&format!("{}\t{len}\t{id:016x}\n", file.display()));
            }
        }
        Ok(Some(stamps))
    }
}

/// Loads a LETOR file: from `FILE` if it is a cache, from `FILE.drcache` when that is fresh,
/// otherwise by parsing the text (reporting the bytes read).
#[cfg(not(target_arch = "wasm32"))]
pub fn load_file(
    path: &Path,
    query: Option<&Path>,
    scratch: &Scratch,
    reporter: &mut dyn Reporter,
) -> Result<Dataset> {
    use crate::data::cache;
    use crate::data::letor::{read_letor_file_with_progress, ReadOptions};
    if cache::is_cache_path(path) {
        return Ok(cache::read_cache(path, None)?.0);
    }
    let cached = cache::cache_path(path);
    if query.is_none() && cached.exists() {
        match cache::read_cache(&cached, Some(path)) {
            Ok((data, cache::CacheState::Fresh)) => return Ok(data),
            Ok((_, cache::CacheState::Stale)) => reporter.note(&format!(
                "{} is stale: parsing {} again",
                cached.display(),
                path.display()
            )),
            Err(e) => reporter.note(&format!(
                "cannot use the cache ({e}): parsing {} again",
                path.display()
            )),
        }
    }
    let size = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    let label = format!("reading {}", path.display());
    let options = ReadOptions {
        scratch: scratch.clone(),
        ..ReadOptions::default()
    };
    let data = read_letor_file_with_progress(path, query, &options, &mut |n| {
        reporter.progress(&label, "B", n, size)
    })?;
    reporter.progress(&label, "B", size, size);
    Ok(data)
}

/// What identifies a file for its sidecar: its size and CRC-32, read in one streaming pass.
#[cfg(not(target_arch = "wasm32"))]
pub fn file_identity(path: &Path) -> Result<serde_json::Value> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = crc32fast::Hasher::new();
    let mut buffer = vec![0u8; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let n = file.read(&mut buffer).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        bytes += n as u64;
    }
    Ok(serde_json::json!({"bytes": bytes, "crc32": format!("{:08x}", hasher.finalize())}))
}

/// `FILE.logs.json`: the sidecar of a file of simulated logs.
pub fn sidecar_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".logs.json");
    PathBuf::from(name)
}

/// A sidecar's bytes as JSON, checked: its format, and columns that are the six consecutive
/// columns `data simulate-logs` appends.
/// The impressions log `data simulate-logs` writes beside a training file:
/// `FILE.impressions.tsv`.
pub fn impressions_path(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.impressions.tsv", file.display()))
}

pub fn check_sidecar(path: &Path, bytes: &[u8]) -> Result<serde_json::Value> {
    use crate::data::logs::SIDECAR_FORMAT;
    let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).unwrap_or(bytes);
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        Error::parse(
            path,
            e.line() as u64,
            e.column() as u64,
            format!("not JSON: {e}"),
        )
    })?;
    if value["format"] != SIDECAR_FORMAT {
        return Err(Error::parse(
            path,
            0,
            0,
            format!("expected \"format\": \"{SIDECAR_FORMAT}\""),
        ));
    }
    match serde_json::from_value::<LogColumns>(value["columns"].clone()) {
        Ok(c) if c.impressions >= 1 && c == LogColumns::after(c.impressions - 1) => Ok(value),
        Ok(_) => Err(Error::parse(
            path,
            0,
            0,
            "\"columns\" are not the six consecutive columns data simulate-logs and data aggregate-logs append",
        )),
        Err(e) => Err(Error::parse(
            path,
            0,
            0,
            format!("\"columns\": {e}; expected the column numbers data simulate-logs and data aggregate-logs write"),
        )),
    }
}

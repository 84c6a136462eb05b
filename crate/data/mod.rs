//! Ranking data: reading ([`letor`], [`parquet`]), caching ([`cache`], native, and [`prepared_cache`], whose layout also carries the page's shared data), generating ([`synth`]) and the PFD
//! paper's preparation ([`prepare`]).

pub mod bundled;
#[cfg(not(target_arch = "wasm32"))]
pub mod cache;
#[cfg(not(target_arch = "wasm32"))]
pub mod convert;
pub mod features;
pub mod inputs;
pub mod letor;
pub mod logs;
pub mod parquet;
pub mod prepare;
pub mod prepared_cache;
pub mod sections;
#[cfg(target_arch = "wasm32")]
pub mod shared;
pub mod synth;
pub mod transform;

use std::io::Write;
use std::path::PathBuf;

pub use features::Features;

/// Refuses `path` where it is not a regular file (a pipe such as `/dev/stdin` or `<(zcat f.gz)`,
/// or a device) and `reader` must read it a second time: a pipe gives its bytes once, and a
/// second reading would find it empty. A path that does not exist is left to the reading.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_rereadable(path: &std::path::Path, reader: &str) -> crate::error::Result<()> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() && !m.is_dir() => Err(crate::error::Error::Config(format!(
            "{} is not a regular file (a pipe or a device), and {reader} reads it a second time, which a pipe cannot give: write it to a file on disk and give that",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Refuses `what`, kept beside `path` (a cache: `FILE.drcache`, `TRAIN.KEY.drprep`), where
/// `path` names a stream of this process (`/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`), which
/// leads to a file elsewhere, or to none: the cache would be written into `/dev`.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_cache_beside(path: &std::path::Path, what: &str) -> crate::error::Result<()> {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let names = |dir: &str| absolute.parent() == Some(std::path::Path::new(dir));
    let stream = ["/dev/stdin", "/dev/stdout", "/dev/stderr"]
        .iter()
        .any(|s| absolute == std::path::Path::new(s))
        || names("/dev/fd")
        || (absolute.starts_with("/proc") && absolute.parent().is_some_and(|p| p.ends_with("fd")));
    if stream {
        return Err(crate::error::Error::Config(format!(
            "{} names a stream of this process (standard input or a descriptor), and {what} is kept beside the file it caches: give the file's own name",
            crate::error::printable(&path.display().to_string())
        )));
    }
    Ok(())
}

/// Refuses `path` where it is not there (or cannot be looked at), naming what it should have
/// been: "t.txt: No such file or directory (os error 2); expected the training file (--train)".
/// A folder is left to the reader, which may take one (a folder of Parquet parts, LETOR folds).
#[cfg(not(target_arch = "wasm32"))]
pub fn check_file_there(path: &std::path::Path, what: &str) -> crate::error::Result<()> {
    std::fs::metadata(path).map(drop).map_err(|e| {
        crate::error::Error::io(
            path,
            std::io::Error::new(e.kind(), format!("{e}; expected {what}")),
        )
    })
}

/// Reads a whole file of at most `cap` bytes (`what` names it in the error): a file its size
/// says is larger is refused before anything is read, and a device such as `/dev/zero` (which
/// has no size) stops at the cap, with an error, not with memory exhausted.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_capped(path: &std::path::Path, cap: u64, what: &str) -> crate::error::Result<Vec<u8>> {
    use crate::error::Error;
    use std::io::Read;
    // The error says what the file should have been: "t.txt: No such file or directory (os
    // error 2); expected a tree model".
    let file = std::fs::File::open(path).map_err(|e| {
        Error::io(
            path,
            std::io::Error::new(e.kind(), format!("{e}; expected {what}")),
        )
    })?;
    let metadata = file.metadata().ok();
    if metadata.as_ref().is_some_and(|m| m.is_dir()) {
        let folder = std::io::Error::other(format!("a folder, not a file; expected {what}"));
        return Err(Error::io(path, folder));
    }
    let size = metadata.map(|m| m.len()).unwrap_or(0);
    if size > cap {
        return Err(too_large(path, Some(size), cap, what));
    }
    let mut bytes = Vec::new();
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > cap {
        return Err(too_large(path, None, cap, what));
    }
    Ok(bytes)
}

/// The error of a file larger than `cap` bytes, `what` naming what it should be: its size when
/// it is known.
pub fn too_large(
    path: &std::path::Path,
    size: Option<u64>,
    cap: u64,
    what: &str,
) -> crate::error::Error {
    let limit = if cap >= 1 << 20 {
        format!("{} MiB", cap >> 20)
    } else {
        format!("{cap} bytes")
    };
    let size = size.map_or_else(String::new, |s| format!("{s} bytes: "));
    crate::error::Error::parse(
        path,
        0,
        0,
        format!("{size}larger than the {limit} allowed for {what}"),
    )
}

/// Refuses the feature columns of the file `name`, named `mine`, where they are named otherwise
/// than `names` (another file's, or those a model was trained on), position by position over the
/// columns both have: columns are read by position, so a file of the same columns in another
/// order would be read silently wrong. `theirs` says whose `names` are. Columns without names
/// (LETOR text's) are read by position alone.
pub fn check_columns_named(
    name: &str,
    mine: Option<&[String]>,
    names: Option<&[String]>,
    theirs: &str,
) -> crate::error::Result<()> {
    check_columns_named_by(name, mine, names, theirs, &|a, b| a == b)
}

/// [`check_columns_named`], where `same(mine, theirs)` says whether two names are one (a library
/// that rewrites names: LightGBM's underscores for spaces). Messages quote `mine` as given.
pub fn check_columns_named_by(
    name: &str,
    mine: Option<&[String]>,
    names: Option<&[String]>,
    theirs: &str,
    same: &dyn Fn(&str, &str) -> bool,
) -> crate::error::Result<()> {
    let (Some(mine), Some(names)) = (mine, names) else {
        return Ok(());
    };
    let Some(i) = mine.iter().zip(names).position(|(a, b)| !same(a, b)) else {
        return Ok(());
    };
    let name = crate::error::printable(name);
    Err(crate::error::Error::Data(
        match names.iter().position(|n| same(&mine[i], n)) {
            Some(j) => format!(
                "{name}: feature column {} is {:?}, which is column {} in {theirs}: columns are read by position, so the same columns must come in the same order (select them in the order of {theirs})",
                i + 1,
                mine[i],
                j + 1
            ),
            None => format!(
                "{name}: feature column {} is {:?} where {theirs} has {:?}, and {theirs} has no column {:?}: another dataset? Columns are read by position; if they are the same features, name them as {theirs} does",
                i + 1,
                mine[i],
                names[i],
                mine[i]
            ),
        },
    ))
}

/// The widest of a run's named splits (training, validation, test: each its file's name and
/// data; the earliest of equal width), with its names, after every other split whose file names
/// its columns (Parquet's) is checked against them: columns are read by position, so named
/// ones must come in the same order in every file. Beside a training file of LETOR text, which
/// names none, the validation and test files in Parquet are so checked against each other.
pub fn check_splits_named<'a>(
    splits: [(Option<&'a str>, Option<&'a Dataset>); 3],
) -> crate::error::Result<Option<(&'a str, &'a [String])>> {
    const SPLITS: [&str; 3] = ["training", "validation", "test"];
    let named: Vec<(usize, &str, &[String])> = (0..3)
        .filter_map(|k| match splits[k] {
            (Some(file), Some(data)) => Some((k, file, data.feature_names.as_deref()?)),
            _ => None,
        })
        .collect();
    let Some(&(widest, file, names)) = named
        .iter()
        .max_by_key(|&&(k, _, names)| (names.len(), std::cmp::Reverse(k)))
    else {
        return Ok(None);
    };
    let theirs = format!(
        "the {} file {}",
        SPLITS[widest],
        crate::error::printable(file)
    );
    for &(_, name, mine) in named.iter().filter(|&&(k, ..)| k != widest) {
        check_columns_named(name, Some(mine), Some(names), &theirs)?;
    }
    Ok(Some((file, names)))
}

/// A parsed ranking dataset: documents in query-group order.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub n_features: usize,
    /// `n_docs x n_features`, row-major; absent sparse entries are 0. Owned, or a binary
    /// cache's matrix used in place.
    pub features: Features,
    /// Graded relevance of each document.
    pub grades: Vec<u8>,
    /// Group g holds documents `group_offsets[g]..group_offsets[g + 1]`; length `n_groups + 1`.
    pub group_offsets: Vec<usize>,
    /// The qid of each group (1, 2, ... for files with a `.query` file).
    pub qids: Vec<u64>,
    /// The file it came from, if any.
    pub source: Option<PathBuf>,
    /// The feature columns' names, in order, where the file names them (Parquet's columns):
    /// columns are matched by position, and names tell two files' orders apart
    /// ([`Dataset::check_columns_named_as`]).
    pub feature_names: Option<Vec<String>>,
}

impl Dataset {
    pub fn n_docs(&self) -> usize {
        self.grades.len()
    }
    pub fn n_groups(&self) -> usize {
        self.group_offsets.len() - 1
    }
    pub fn row(&self, doc: usize) -> &[f32] {
        &self.features[doc * self.n_features..(doc + 1) * self.n_features]
    }
    /// Documents of group g.
    pub fn group(&self, g: usize) -> std::ops::Range<usize> {
        self.group_offsets[g]..self.group_offsets[g + 1]
    }

    /// The qids, in order, of this dataset's queries that `other` holds too with the same
    /// documents (grades and feature values, in order; a column one of them leaves out is 0):
    /// the same query in two splits. Only queries of one qid are compared, so that files
    /// numbering their groups 1..n by a `.query` file share a query only where the documents
    /// agree as well.
    pub fn shared_queries(&self, other: &Dataset) -> Vec<u64> {
        let theirs: std::collections::HashMap<u64, usize> = other
            .qids
            .iter()
            .enumerate()
            .map(|(g, &q)| (q, g))
            .collect();
        let same_row = |a: &[f32], b: &[f32]| {
            let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
            short
                .iter()
                .zip(long)
                .all(|(x, y)| x.to_bits() == y.to_bits())
                && long[short.len()..].iter().all(|&v| v == 0.0)
        };
        let mut shared: Vec<u64> = (0..self.n_groups())
            .filter_map(|g| {
                let &h = theirs.get(&self.qids[g])?;
                let (mine, their) = (self.group(g), other.group(h));
                let same = mine.len() == their.len()
                    && mine.clone().zip(their).all(|(d, e)| {
                        self.grades[d] == other.grades[e] && same_row(self.row(d), other.row(e))
                    });
                same.then_some(self.qids[g])
            })
            .collect();
        shared.sort_unstable();
        shared
    }

    /// Refuses data whose feature columns are named, and named otherwise than `names` (another
    /// file's, or those a model was trained on): [`check_columns_named`] with this data's names.
    pub fn check_columns_named_as(
        &self,
        name: &str,
        names: Option<&[String]>,
        theirs: &str,
    ) -> crate::error::Result<()> {
        check_columns_named(name, self.feature_names.as_deref(), names, theirs)
    }

    /// Checks every invariant the LETOR reader upholds, for data that did not come through it (a
    /// binary cache): at least one document, a feature matrix of `n_docs x n_features` finite
    /// values with at most [`letor::DEFAULT_MAX_FEATURE_INDEX`] columns, grades up to
    /// [`letor::MAX_GRADE`], non-empty groups that tile the documents, one distinct qid per group.
    /// Returns what is wrong first.
    pub fn check_invariants(&self) -> std::result::Result<(), String> {
        let n_docs = self.grades.len();
        if n_docs == 0 {
            return Err("no documents".into());
        }
        if self.n_features > letor::DEFAULT_MAX_FEATURE_INDEX as usize {
            return Err(format!(
                "{} features, above the limit of {}",
                self.n_features,
                letor::DEFAULT_MAX_FEATURE_INDEX
            ));
        }
        if Some(self.features.len()) != n_docs.checked_mul(self.n_features) {
            return Err(format!(
                "{} feature values for {n_docs} documents of {} features",
                self.features.len(),
                self.n_features
            ));
        }
        if let Some(i) = self.features.iter().position(|v| !v.is_finite()) {
            let (doc, feature) = (i / self.n_features, i % self.n_features + 1);
            return Err(format!(
                "document {} has a non-finite value ({}) in feature {feature}",
                doc + 1,
                self.features[i]
            ));
        }
        if let Some(d) = self.grades.iter().position(|&g| g > letor::MAX_GRADE) {
            return Err(format!(
                "document {} has grade {}, above {}",
                d + 1,
                self.grades[d],
                letor::MAX_GRADE
            ));
        }
        let offsets = &self.group_offsets;
        if offsets.len() < 2 || offsets[0] != 0 || offsets[offsets.len() - 1] != n_docs {
            return Err(format!(
                "the group offsets do not run from 0 to the {n_docs} documents"
            ));
        }
        if let Some(g) = offsets.windows(2).position(|w| w[0] >= w[1]) {
            return Err(format!(
                "group {} is empty (or its offsets decrease)",
                g + 1
            ));
        }
        if self.qids.len() != offsets.len() - 1 {
            return Err(format!(
                "{} qids for {} groups",
                self.qids.len(),
                offsets.len() - 1
            ));
        }
        let mut seen = std::collections::HashSet::with_capacity(self.qids.len());
        if let Some(q) = self.qids.iter().find(|&&q| !seen.insert(q)) {
            return Err(format!(
                "qid {q} names two groups: the documents of a query are contiguous"
            ));
        }
        Ok(())
    }

    /// Summary statistics (`distillrank data stats`).
    pub fn stats(&self) -> Stats {
        let mut sizes: Vec<usize> = (0..self.n_groups()).map(|g| self.group(g).len()).collect();
        sizes.sort_unstable();
        let mut grades = std::collections::BTreeMap::new();
        for &g in &self.grades {
            *grades.entry(g).or_insert(0usize) += 1;
        }
        let groups_without_positive = (0..self.n_groups())
            .filter(|&g| self.grades[self.group(g)].iter().all(|&r| r == 0))
            .count();
        let constant_features = (0..self.n_features)
            .filter(|&j| {
                let first = self.features.get(j).copied().unwrap_or(0.0);
                (0..self.n_docs()).all(|d| self.features[d * self.n_features + j] == first)
            })
            .map(|j| j + 1)
            .collect::<Vec<_>>();
        let varying_between_queries_only =
            prepare::constant_within_queries(&self.features, self.n_features, &self.group_offsets)
                .into_iter()
                .filter(|c| !constant_features.contains(c))
                .collect();
        Stats {
            queries: self.n_groups(),
            docs: self.n_docs(),
            features: self.n_features,
            docs_per_query_min: sizes.first().copied().unwrap_or(0),
            docs_per_query_median: median(&sizes),
            docs_per_query_max: sizes.last().copied().unwrap_or(0),
            grades,
            constant_features,
            varying_between_queries_only,
            groups_without_positive,
        }
    }

    /// Writes the dataset as LETOR text (`<grade> qid:<id> 1:<v> 2:<v> ...`), dense.
    pub fn write_letor(&self, out: &mut (impl Write + ?Sized)) -> std::io::Result<()> {
        for g in 0..self.n_groups() {
            for d in self.group(g) {
                write!(out, "{} qid:{}", self.grades[d], self.qids[g])?;
                for (j, v) in self.row(d).iter().enumerate() {
                    write!(out, " {}:{}", j + 1, v)?;
                }
                writeln!(out)?;
            }
        }
        Ok(())
    }
}

impl Dataset {
    /// Writes the dataset as sparse LETOR text: zero values are left out, except in the last
    /// column, which is always written so that the file keeps its width.
    /// `docids`: each document's docid comment (`#docid = X`, written after its features), in
    /// the file's order; empty for none.
    pub fn write_letor_sparse(
        &self,
        out: &mut (impl Write + ?Sized),
        docids: &[Option<String>],
    ) -> std::io::Result<()> {
        let last = self.n_features;
        for g in 0..self.n_groups() {
            for d in self.group(g) {
                write!(out, "{} qid:{}", self.grades[d], self.qids[g])?;
                for (j, v) in self.row(d).iter().enumerate() {
                    if *v != 0.0 || j + 1 == last {
                        write!(out, " {}:{}", j + 1, v)?;
                    }
                }
                if let Some(Some(id)) = docids.get(d) {
                    write!(out, " #docid = {id}")?;
                }
                writeln!(out)?;
            }
        }
        Ok(())
    }
}

fn median(sorted: &[usize]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2] as f64,
        n => (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0,
    }
}

/// What `distillrank data stats` reports.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Stats {
    pub queries: usize,
    pub docs: usize,
    pub features: usize,
    pub docs_per_query_min: usize,
    pub docs_per_query_median: f64,
    pub docs_per_query_max: usize,
    /// grade -> number of documents
    pub grades: std::collections::BTreeMap<u8, usize>,
    /// 1-based indices of features with one value in every document.
    pub constant_features: Vec<usize>,
    /// 1-based indices of the other features that are constant within every query: they vary
    /// between queries only, so they cannot order the documents of a query.
    pub varying_between_queries_only: Vec<usize>,
    /// Groups whose documents all have grade 0.
    pub groups_without_positive: usize,
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod stream_tests {
    use super::check_cache_beside;
    use std::path::Path;

    #[test]
    fn a_cache_is_refused_beside_the_processs_streams_and_nowhere_else() {
        for stream in [
            "/dev/stdin",
            "/dev/fd/0",
            "/proc/self/fd/0",
            "/proc/4242/fd/3",
        ] {
            let e = check_cache_beside(Path::new(stream), "a cache").unwrap_err();
            assert!(
                e.to_string().contains("names a stream of this process"),
                "{e}"
            );
        }
        for file in ["/dev/shm/train.txt", "data/train.txt", "/tmp/fd/train.txt"] {
            assert!(
                check_cache_beside(Path::new(file), "a cache").is_ok(),
                "{file}"
            );
        }
    }
}

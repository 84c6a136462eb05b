//! Prepared splits on disk: round trip, keys, corruption, refusals, and training from the mapped
//! file under a memory cap smaller than its feature matrix.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/letor_data.rs"]
mod letor_data;
use std::path::{Path, PathBuf};
use std::process::Command;

use distillrank::data::prepared_cache;
use distillrank::data::transform::Transform;
use distillrank::pipeline::preparation::PreparedData;
use distillrank::pipeline::store::{Disk, InMemory};
use distillrank::pipeline::{self, Reporter};
use distillrank::setup::{DataSetup, DataSource};

fn copy_of_train(dir: &Path) -> PathBuf {
    let src = letor_data::data("mq2008/Fold1/train.txt");
    let dst = dir.join("train.txt");
    std::fs::copy(src, &dst).unwrap();
    dst
}

fn files(train: &Path, prepared_cache: bool) -> DataSetup {
    DataSetup {
        source: DataSource::files(train.display().to_string(), None, None),
        // MQ2008's grades are 0..2.
        tau_target: Some(2.8),
        prepared_cache,
        ..DataSetup::default()
    }
}

/// The notes a run gives.
#[derive(Default)]
struct Notes(Vec<String>);

impl Reporter for Notes {
    fn note(&mut self, text: &str) {
        self.0.push(text.to_string());
    }
    fn warn(&mut self, text: &str) {
        self.0.push(format!("warning: {text}"));
    }
}

fn prepare(setup: &DataSetup) -> (PreparedData, Vec<String>) {
    let mut notes = Notes::default();
    let data =
        pipeline::preparation::prepare(setup, &mut Disk::default(), true, &mut notes).unwrap();
    (data, notes.0)
}

/// Whether one of the pipeline's `notes` starts with `words`.
fn says(notes: &[String], words: &str) -> bool {
    notes.iter().any(|n| n.starts_with(words))
}

fn bits(values: &[f32]) -> Vec<u32> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// The prepared files beside `train`.
fn prepared_files(train: &Path) -> Vec<PathBuf> {
    let name = train.file_name().unwrap().to_str().unwrap();
    let mut found: Vec<PathBuf> = std::fs::read_dir(train.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with(name) && n.ends_with(".drprep")
        })
        .collect();
    found.sort();
    found
}

/// Under every input transform: the fitted maps come back with the splits.
#[test]
fn prepared_splits_read_back_equal_to_those_prepared_in_memory() {
    for transform in Transform::ALL {
        read_back_equal(transform);
    }
}

fn read_back_equal(transform: Transform) {
    let dir = tempfile::tempdir().unwrap();
    let train = copy_of_train(dir.path());
    let files = |train: &Path, cache: bool| DataSetup {
        transform,
        ..files(train, cache)
    };
    let (in_memory, _) = prepare(&files(&train, false));
    assert_eq!(
        in_memory.prepared.input_maps.regular.len(),
        if transform == Transform::SignedLog1p {
            0
        } else {
            in_memory.prepared.train.d_x
        },
        "{transform:?}"
    );
    assert!(
        prepared_files(&train).is_empty(),
        "no file without the setting"
    );

    // The first run prepares, writes and maps back; the second reads.
    let (written, notes) = prepare(&files(&train, true));
    assert!(says(&notes, "prepared splits written to"), "{notes:?}");
    let (read, notes) = prepare(&files(&train, true));
    let path = prepared_files(&train);
    assert_eq!(path.len(), 1);
    assert!(
        notes.contains(&format!("prepared splits read from {}", path[0].display())),
        "{notes:?}"
    );
    for data in [&written, &read] {
        assert_eq!(*data, in_memory);
        let sets = [
            Some(&data.prepared.train),
            Some(&data.prepared.valid),
            data.prepared.test.as_ref(),
        ];
        let memory = [
            Some(&in_memory.prepared.train),
            Some(&in_memory.prepared.valid),
            in_memory.prepared.test.as_ref(),
        ];
        for (set, original) in sets.into_iter().zip(memory) {
            let (set, original) = (set.unwrap(), original.unwrap());
            assert!(set.regular.is_mapped() && set.privileged.is_mapped());
            assert_eq!(bits(&set.regular), bits(&original.regular));
            assert_eq!(bits(&set.privileged), bits(&original.privileged));
        }
        let correlation_bits = |d: &PreparedData| -> Vec<u64> {
            d.prepared
                .correlations
                .iter()
                .map(|c| c.to_bits())
                .collect()
        };
        assert_eq!(correlation_bits(data), correlation_bits(&in_memory));
    }
}

#[test]
fn other_settings_or_a_touched_source_make_another_key() {
    let dir = tempfile::tempdir().unwrap();
    let train = copy_of_train(dir.path());
    let key = |setup: &DataSetup, needs_test: bool| {
        pipeline::preparation::prepared_key(setup, &mut Disk::default(), needs_test).unwrap()
    };
    let base = files(&train, true);
    let first = key(&base, true);
    assert_eq!(first, key(&base, true), "the key is stable");
    assert_ne!(first, key(&base, false));
    assert_ne!(
        first,
        key(
            &DataSetup {
                data_seed: 1,
                ..base.clone()
            },
            true
        )
    );
    assert_ne!(
        first,
        key(
            &DataSetup {
                privileged: Some("top:5".into()),
                ..base.clone()
            },
            true
        )
    );
    for transform in [Transform::Standardize, Transform::RankGauss] {
        assert_ne!(
            first,
            key(
                &DataSetup {
                    transform,
                    ..base.clone()
                },
                true
            ),
            "{transform:?}"
        );
    }
    // A sidecar or a .query file beside the file counts.
    std::fs::write(dir.path().join("train.txt.query"), "").unwrap();
    let with_query = key(&base, true);
    assert_ne!(first, with_query);
    std::fs::remove_file(dir.path().join("train.txt.query")).unwrap();
    assert_eq!(first, key(&base, true));
    // The source rewritten: another modification time.
    let text = std::fs::read(&train).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&train, &text).unwrap();
    assert_ne!(first, key(&base, true));
}

#[test]
fn a_truncated_or_corrupt_file_is_refused_by_name_and_prepared_again() {
    let dir = tempfile::tempdir().unwrap();
    let train = copy_of_train(dir.path());
    let setup = files(&train, true);
    prepare(&setup);
    // Compared with splits prepared in memory: a map of the file would see it damaged below.
    let (original, _) = prepare(&files(&train, false));
    let path = prepared_files(&train).remove(0);
    let key = pipeline::preparation::prepared_key(&setup, &mut Disk::default(), true).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let about_end = 64 + u64::from_le_bytes(bytes[24..32].try_into().unwrap()) as usize;
    let refused = |damaged: &[u8], what: &str| {
        std::fs::write(&path, damaged).unwrap();
        let err = match prepared_cache::read(&path, key) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{what}: read"),
        };
        assert!(err.contains(&path.display().to_string()), "{what}: {err}");
    };
    refused(&bytes[..bytes.len() - 1], "one byte short");
    refused(&bytes[..bytes.len() / 2], "half");
    refused(&bytes[..40], "the header cut");
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0; 64]);
    refused(&longer, "longer");
    let mut magic = bytes.clone();
    magic[0] = b'X';
    refused(&magic, "magic");
    let mut json = bytes.clone();
    json[70] = b'}';
    refused(&json, "description");
    // The test split's group offsets, found by their bytes: a group that runs backwards.
    let test = original.prepared.test.as_ref().unwrap();
    let offsets: Vec<u8> = test
        .group_offsets
        .iter()
        .flat_map(|&o| (o as u64).to_le_bytes())
        .collect();
    let at = bytes
        .windows(offsets.len())
        .rposition(|w| w == offsets)
        .unwrap();
    let mut backwards = bytes.clone();
    backwards[at + 8..at + 16].copy_from_slice(&u64::MAX.to_le_bytes());
    refused(&backwards, "group offsets");
    // A label that is not 0 or 1 (the test split's labels precede its grades).
    let labels: Vec<u8> = test.labels.iter().flat_map(|y| y.to_le_bytes()).collect();
    let at = bytes
        .windows(labels.len())
        .rposition(|w| w == labels)
        .unwrap();
    let mut label = bytes.clone();
    label[at..at + 4].copy_from_slice(&0.5f32.to_le_bytes());
    refused(&label, "labels");
    // Damage anywhere in the header and the description: an error or a file read, never a panic.
    for at in (0..about_end).step_by(7) {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x5a;
        std::fs::write(&path, &damaged).unwrap();
        let _ = prepared_cache::read(&path, key);
    }
    // Another key: not this preparation's file.
    std::fs::write(&path, &bytes).unwrap();
    assert!(prepared_cache::read(&path, key ^ 1).unwrap().is_err());

    // The pipeline prepares again over a damaged file, and says so.
    std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    let (again, notes) = prepare(&setup);
    assert!(says(&notes, "cannot use the prepared splits"), "{notes:?}");
    assert_eq!(again, original);
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn a_file_that_cannot_be_written_costs_the_file_not_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let train = copy_of_train(dir.path());
    let setup = files(&train, true);
    let key = pipeline::preparation::prepared_key(&setup, &mut Disk::default(), true).unwrap();
    // A folder where the file would go: it can be neither read nor replaced.
    std::fs::create_dir(pipeline::preparation::prepared_path(&train, key)).unwrap();
    let (data, notes) = prepare(&setup);
    assert!(
        says(&notes, "warning: the prepared splits could not be kept"),
        "{notes:?}"
    );
    assert!(!data.prepared.train.regular.is_mapped());
    assert_eq!(data, prepare(&files(&train, false)).0);
}

#[test]
fn the_setting_is_refused_by_name_without_files() {
    let refusal = |setup: &DataSetup, store: &mut dyn pipeline::store::Store| -> String {
        match pipeline::preparation::prepare(setup, store, true, &mut Notes::default()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("prepared without files"),
        }
    };
    let synthetic = DataSetup {
        prepared_cache: true,
        ..DataSetup::default()
    };
    let err = refusal(&synthetic, &mut Disk::default());
    assert!(
        err.contains("prepared_cache") && err.contains("synthetic"),
        "{err}"
    );
    let bundled = DataSetup {
        source: DataSource::Mq2008,
        ..synthetic
    };
    let err = refusal(&bundled, &mut Disk::default());
    assert!(
        err.contains("prepared_cache") && err.contains("MQ2008"),
        "{err}"
    );
    // Arrays and uploads are held in memory.
    let dir = tempfile::tempdir().unwrap();
    let train = copy_of_train(dir.path());
    let data =
        distillrank::data::letor::read_letor_file(&train, None, &Default::default()).unwrap();
    let mut store = InMemory {
        datasets: vec![("train".into(), data)],
        ..InMemory::default()
    };
    let setup = DataSetup {
        source: DataSource::files("train".into(), None, None),
        ..files(&train, true)
    };
    let err = refusal(&setup, &mut store);
    assert!(
        err.contains("prepared_cache") && err.contains("in memory"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Training under a memory cap.

/// A memory cgroup this test made, removed when dropped.
struct Cgroup {
    dir: PathBuf,
    v2: bool,
}

impl Cgroup {
    /// A cgroup `name`d, limited to `limit` bytes when given, v1 (`memory.limit_in_bytes`) or
    /// v2 (`memory.max`); Err says why none can be made here.
    fn new(name: &str, limit: Option<u64>) -> Result<Cgroup, String> {
        let name = format!("distillrank-{name}-{}", std::process::id());
        let limit = limit.map_or("max".to_string(), |l| l.to_string());
        let v1 = Path::new("/sys/fs/cgroup/memory");
        if v1.join("memory.limit_in_bytes").exists() {
            let dir = v1.join(&name);
            std::fs::create_dir(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let group = Cgroup { dir, v2: false };
            if limit != "max" {
                group.write("memory.limit_in_bytes", &limit)?;
            }
            return Ok(group);
        }
        for root in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"] {
            let root = Path::new(root);
            let controllers =
                std::fs::read_to_string(root.join("cgroup.controllers")).unwrap_or_default();
            if !controllers.split_whitespace().any(|c| c == "memory") {
                continue;
            }
            // Children get the memory controller only if the parent hands it down.
            let _ = std::fs::write(root.join("cgroup.subtree_control"), "+memory");
            let dir = root.join(&name);
            std::fs::create_dir(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let group = Cgroup { dir, v2: true };
            group.write("memory.max", &limit)?;
            group.write("memory.swap.max", "0").ok();
            return Ok(group);
        }
        Err("no cgroup memory controller (v1 or v2) to write to".into())
    }

    fn write(&self, file: &str, value: &str) -> Result<(), String> {
        let path = self.dir.join(file);
        std::fs::write(&path, value).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    fn read(&self, file: &str) -> Option<u64> {
        std::fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The most memory the group's processes were charged at once.
    fn peak(&self) -> Option<u64> {
        self.read(if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        })
    }

    /// How often the group hit its limit (and had its pages reclaimed).
    fn times_at_limit(&self) -> Option<u64> {
        if !self.v2 {
            return self.read("memory.failcnt");
        }
        let events = std::fs::read_to_string(self.dir.join("memory.events")).ok()?;
        events
            .lines()
            .find_map(|l| l.strip_prefix("max ")?.trim().parse().ok())
    }

    /// `command`, run inside the group: a shell puts itself in, then becomes the command.
    fn run(&self, command: &mut Command) -> std::process::Output {
        let mut inside = Command::new("sh");
        inside
            .arg("-c")
            .arg(format!(
                "echo $$ > '{}' && exec \"$0\" \"$@\"",
                self.dir.join("cgroup.procs").display()
            ))
            .arg(command.get_program())
            .args(command.get_args());
        inside.output().unwrap()
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // The processes have exited; an empty group can be removed.
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            eprintln!("could not remove {}: {e}", self.dir.display());
        }
    }
}

/// Drops `path`'s pages from the page cache, so that a later reader is charged for them.
fn evict(path: &Path) {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).unwrap();
    // Dirty pages are not dropped: written back first.
    file.sync_all().unwrap();
    // SAFETY: an advice on an open file descriptor; nothing is read or written through it.
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

#[path = "common/cli.rs"]
mod cli_run;
use cli_run::command as distillrank;

fn ok(output: std::process::Output, what: &str) -> std::process::Output {
    assert!(
        output.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// A saved model's weights (its safetensors file past the header, whose metadata's order is not
/// fixed) and its config.
fn saved(prefix: &Path) -> (Vec<u8>, String) {
    let bytes = std::fs::read(prefix.with_extension("safetensors")).unwrap();
    let header = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let config = std::fs::read_to_string(prefix.with_extension("json")).unwrap();
    (bytes[8 + header..].to_vec(), config)
}

/// The best validation NDCG a `train --json` printed.
fn best_ndcg(output: &std::process::Output) -> f64 {
    let v: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    v["best_valid_ndcg"].as_f64().unwrap()
}

#[test]
fn training_from_the_prepared_file_under_a_memory_cap_below_its_matrix_gives_the_same_model() {
    // (Preparing it on the first run, too: see the end.)
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("synth.txt");
    // 4,800 queries of 10..80 documents, 130 features: about 216,000 x 130 values, 112 MB of
    // f32 before preparation and as much after (x and z). Small enough for a debug build.
    ok(
        distillrank()
            .args([
                "data",
                "synth",
                "--queries",
                "4800",
                "--min-docs",
                "10",
                "--max-docs",
                "80",
            ])
            .args([
                "--regular",
                "124",
                "--privileged-count",
                "6",
                "--quiet",
                "-o",
            ])
            .arg(&train)
            .output()
            .unwrap(),
        "data synth",
    );
    let train_args = |save: &str, prepared_cache: bool| {
        let mut command = distillrank();
        command
            .args(["train", "--epochs", "2", "--widths", "8"])
            .args(["--backend", "cpu", "--json"])
            .arg("--train")
            .arg(&train)
            .arg("--save")
            .arg(dir.path().join(save));
        if prepared_cache {
            command.arg("--prepared-cache");
        }
        command
    };
    // Uncapped: prepares, writes the file, trains from it mapped.
    let free = ok(train_args("free", true).output().unwrap(), "train");
    let file = prepared_files(&train).remove(0);
    let modified = |path: &Path| std::fs::metadata(path).unwrap().modified().unwrap();
    let written = modified(&file);
    let matrix_bytes = std::fs::metadata(&file).unwrap().len();
    assert!(matrix_bytes > 100 << 20, "a file of {matrix_bytes} bytes");
    // In memory, without the file: the same model.
    let in_memory = ok(
        train_args("plain", false).output().unwrap(),
        "train without the file",
    );
    assert_eq!(
        saved(&dir.path().join("plain")),
        saved(&dir.path().join("free"))
    );
    assert_eq!(best_ndcg(&in_memory), best_ndcg(&free));

    // Capped at half the file; the same run without a cap, measured, must need more.
    let limit = matrix_bytes / 2;
    let groups = Cgroup::new("uncapped", None)
        .and_then(|free| Ok((free, Cgroup::new("capped", Some(limit))?)));
    let (measured, group) = match groups {
        Ok(groups) => groups,
        Err(why) => {
            eprintln!("skipped: the memory-capped run needs a cgroup ({why}; run as root)");
            return;
        }
    };
    // The file's pages were read by the uncapped runs; dropped from the page cache, each run in
    // a group is charged for every page it reads.
    evict(&file);
    ok(
        measured.run(&mut train_args("measured", true)),
        "train in a group",
    );
    let need = measured.peak().expect("the group's peak usage");
    evict(&file);
    let capped = ok(
        group.run(&mut train_args("capped", true)),
        "train under the cap",
    );
    assert_eq!(prepared_files(&train), std::slice::from_ref(&file));
    assert_eq!(modified(&file), written, "read, not written again");
    for run in ["measured", "capped"] {
        assert_eq!(
            saved(&dir.path().join(run)),
            saved(&dir.path().join("free"))
        );
    }
    assert_eq!(best_ndcg(&capped), best_ndcg(&free));
    // The cap bit: uncapped, the run was charged more than the limit; capped, it was charged,
    // never above the limit, and reached it.
    let peak = group.peak().expect("the group's peak usage");
    assert!(
        need > limit,
        "uncapped, the run took {need} bytes: a cap of {limit} would not bite"
    );
    assert!(
        peak > 0 && peak <= limit && limit < matrix_bytes,
        "peak {peak}, limit {limit}, matrix {matrix_bytes}"
    );
    if let Some(hits) = group.times_at_limit() {
        assert!(
            hits > 0,
            "the capped run never reached its limit of {limit} bytes"
        );
    }
    eprintln!(
        "capped at {limit} bytes (the prepared matrices: {matrix_bytes}; uncapped, the run took {need}): peak {peak}"
    );

    // From the text on, under the cap: `data cache` builds the matrix in a scratch file, then the
    // first run prepares from the binary cache (its pages mapped) into scratch files, writes the
    // prepared file and trains from it. The system writes the scratch files' pages back to the
    // disk and drops them under the cap.
    // (Reading text needs some 50 MB of its own, two blocks of text and their parsed values,
    // whatever the file's size: `data cache` is capped at 0.7x this small file's matrix.)
    std::fs::remove_file(&file).unwrap();
    let cache_limit = matrix_bytes * 7 / 10;
    let caching = Cgroup::new("cache", Some(cache_limit)).unwrap();
    evict(&train);
    ok(
        caching.run(distillrank().args(["data", "cache", "--quiet"]).arg(&train)),
        "data cache under the cap",
    );
    let cache_peak = caching.peak().expect("the group's peak usage");
    assert!(
        cache_peak <= cache_limit,
        "data cache: peak {cache_peak}, limit {cache_limit}"
    );
    if let Some(hits) = caching.times_at_limit() {
        assert!(
            hits > 0,
            "data cache never reached its limit of {cache_limit} bytes"
        );
    }
    let first = Cgroup::new("first", Some(limit)).unwrap();
    let cache = PathBuf::from(format!("{}.drcache", train.display()));
    evict(&cache);
    let prepared_capped = ok(
        first.run(&mut train_args("first", true)),
        "the first run, preparing, under the cap",
    );
    assert_eq!(prepared_files(&train), std::slice::from_ref(&file));
    assert_eq!(
        saved(&dir.path().join("first")),
        saved(&dir.path().join("free"))
    );
    assert_eq!(best_ndcg(&prepared_capped), best_ndcg(&free));
    let first_peak = first.peak().expect("the group's peak usage");
    assert!(first_peak <= limit, "peak {first_peak}, limit {limit}");
    if let Some(hits) = first.times_at_limit() {
        assert!(
            hits > 0,
            "the first run never reached its limit of {limit} bytes"
        );
    }
    // The scratch files went with their maps.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("scratch"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    eprintln!(
        "data cache capped at {cache_limit} bytes: peak {cache_peak}; the first run, preparing, capped at {limit}: peak {first_peak}"
    );
}

/// What preparation computes is pinned to its version: prepared files on disk are keyed by
/// `PREPARATION_VERSION`, so a change that gives other splits for the same data and settings must
/// bump it, or old files would be read as if they were the new preparation's. This fingerprint of
/// MQ2008's prepared splits (Gumbel labels and the top-30% split; the simulated logs as z) fails
/// such a change until the version is bumped and the fingerprint renewed.
#[test]
fn the_prepared_splits_are_those_of_the_preparation_version() {
    use distillrank::data::prepare::PREPARATION_VERSION;
    let dir = tempfile::tempdir().unwrap();
    let train = copy_of_train(dir.path());
    let mut hash = prepared_cache::Fnv1a::default();
    let logs = DataSetup {
        privileged: Some("logs".into()),
        ..files(&train, false)
    };
    for setup in [files(&train, false), logs] {
        let (data, _) = prepare(&setup);
        let p = &data.prepared;
        for set in [&p.train, &p.valid].into_iter().chain(p.test.as_ref()) {
            for values in [&set.regular[..], &set.privileged[..], &set.labels[..]] {
                let bytes: Vec<u8> = bits(values).iter().flat_map(|b| b.to_le_bytes()).collect();
                hash.field(&bytes);
            }
            hash.field(&set.grades);
            let offsets: Vec<u8> = set
                .group_offsets
                .iter()
                .flat_map(|&o| (o as u64).to_le_bytes())
                .collect();
            hash.field(&offsets);
        }
    }
    let fingerprint = hash.finish();
    assert_eq!(
        (PREPARATION_VERSION, fingerprint),
        (2, 0x9ec0_eeda_314e_3dc4),
        "the prepared splits changed: bump PREPARATION_VERSION (crate/data/prepare.rs) and set this test's fingerprint to {fingerprint:#018x}"
    );
}

/// A tmpfs of `bytes` mounted on a new folder, unmounted when dropped.
struct SmallDisk(tempfile::TempDir);

impl SmallDisk {
    /// Err says why none can be mounted here (it needs root).
    fn new(bytes: u64) -> Result<SmallDisk, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| e.to_string())?;
        if !mounted.status.success() {
            return Err(String::from_utf8_lossy(&mounted.stderr).trim().to_string());
        }
        Ok(SmallDisk(dir))
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// The scratch files reserve their disk space before anything is written through their maps: a
/// full disk is an error naming the file and the folder, never a process killed by SIGBUS (which
/// is what writing through a map into space the disk does not have does), for `data cache` and
/// for a first `--prepared-cache` run alike.
#[test]
fn a_full_disk_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("synth.txt");
    ok(
        distillrank()
            .args([
                "data",
                "synth",
                "--queries",
                "400",
                "--regular",
                "124",
                "--quiet",
                "-o",
            ])
            .arg(&text)
            .output()
            .unwrap(),
        "data synth",
    );
    // Room for the text and 2 MB more: not for its 5 MB matrix.
    let size = std::fs::metadata(&text).unwrap().len();
    let disk = match SmallDisk::new(size + (2 << 20)) {
        Ok(disk) => disk,
        Err(why) => {
            eprintln!(
                "skipped: a full disk needs a small file system to fill ({why}; run as root)"
            );
            return;
        }
    };
    let train = disk.0.path().join("synth.txt");
    std::fs::copy(&text, &train).unwrap();
    let cache = distillrank()
        .args(["data", "cache", "--quiet"])
        .arg(&train)
        .output()
        .unwrap();
    let first = distillrank()
        .args([
            "train",
            "--epochs",
            "1",
            "--widths",
            "8",
            "--prepared-cache",
            "--train",
        ])
        .arg(&train)
        .output()
        .unwrap();
    for (what, output) in [("data cache", cache), ("train --prepared-cache", first)] {
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{what}: {:?}\n{stderr}",
            output.status
        );
        assert!(
            stderr.contains(&train.display().to_string()) && stderr.contains("No space left"),
            "{what}: {stderr}"
        );
    }
    // Nothing left behind: the scratch files went with their maps.
    let left: Vec<_> = std::fs::read_dir(disk.0.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, [std::ffi::OsString::from("synth.txt")]);
}

/// Rewrites byte `at` of `path` with `byte`, and puts the file's modification time back: an edit
/// that leaves the size and the time as they were.
fn edit_keeping_size_and_time(path: &Path, at: usize, byte: u8) {
    let modified = std::fs::metadata(path).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(path).unwrap();
    bytes[at] = byte;
    std::fs::write(path, &bytes).unwrap();
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(modified).unwrap();
    assert_eq!(
        std::fs::metadata(path).unwrap().modified().unwrap(),
        modified
    );
}

/// Class 2 of "no figure without meaning": a cache is used only when it matches its source and
/// itself. A source edited at the same size with its time put back is not served from the
/// prepared splits nor from the binary cache made before; and a prepared file whose training,
/// validation or test split was damaged after it was written (a NaN) is refused with the reason
/// and prepared again, giving the splits of the source.
#[test]
fn class_caches_match_their_source_and_themselves() {
    let dir = tempfile::tempdir().unwrap();
    let train = copy_of_train(dir.path());
    let setup = files(&train, true);
    let (first, _) = prepare(&setup);
    let cache = distillrank::data::cache::cache_path(&train);
    let options = distillrank::data::letor::ReadOptions::default();
    distillrank::data::cache::load_or_build(&train, None, &options).unwrap();

    // Every split's grades, in one list.
    let grades = |d: &PreparedData| {
        let mut g: Vec<u8> = d.prepared.train.grades.clone();
        g.extend(&d.prepared.valid.grades);
        g.extend(
            d.prepared
                .test
                .iter()
                .flat_map(|t| t.grades.iter().copied()),
        );
        g
    };
    // A document's grade 0 -> 2, in a group preparation keeps (the first such line that changes
    // what a fresh preparation of a copy gives), same size, same modification time.
    let text = std::fs::read_to_string(&train).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let copy = elsewhere.path().join("train.txt");
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .filter(|&i| text[i..].starts_with("0 qid:"))
        .collect();
    let (at, fresh) = starts
        .iter()
        .step_by(97)
        .find_map(|&at| {
            let mut bytes = text.clone().into_bytes();
            bytes[at] = b'2';
            std::fs::write(&copy, &bytes).unwrap();
            let (fresh, _) = prepare(&files(&copy, false));
            (grades(&fresh) != grades(&first)).then_some((at, fresh))
        })
        .expect("an edit that preparation sees");
    edit_keeping_size_and_time(&train, at, b'2');
    let (_, state) = distillrank::data::cache::read_cache(&cache, Some(&train)).unwrap();
    assert_eq!(state, distillrank::data::cache::CacheState::Stale);
    let (again, notes) = prepare(&setup);
    assert!(!says(&notes, "prepared splits read from"), "{notes:?}");
    assert!(
        grades(&again) == grades(&fresh),
        "the edited source's splits"
    );

    // Damage in each split of the prepared file: refused, prepared again, the same splits.
    let (reference, _) = prepare(&setup);
    let path = prepared_files(&train)
        .into_iter()
        .max_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap())
        .unwrap();
    let len = std::fs::metadata(&path).unwrap().len() as usize;
    for share in [0.3, 0.6, 0.95] {
        let mut bytes = std::fs::read(&path).unwrap();
        let at = ((len as f64 * share) as usize) & !3;
        bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let (read, notes) = prepare(&setup);
        assert!(
            notes.iter().any(|n| n.contains("checksum")),
            "damage at {share} of the file: {notes:?}"
        );
        assert!(
            grades(&read) == grades(&reference),
            "damage at {share} of the file"
        );
        let x = |d: &PreparedData| bits(&d.prepared.test.as_ref().unwrap().regular);
        assert!(x(&read) == x(&reference), "damage at {share} of the file");
    }
}

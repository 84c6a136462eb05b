//! The binary cache: round trip, staleness, corruption.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/letor_data.rs"]
mod letor_data;
use std::path::Path;

use distillrank::data::cache::{cache_path, load_or_build, read_cache, write_cache, CacheState};
use distillrank::data::letor::{read_letor_file, ReadOptions};
use distillrank::error::Error;

fn copy_of_vali(dir: &Path) -> std::path::PathBuf {
    let src = letor_data::data("mq2008/Fold1/vali.txt");
    let dst = dir.join("vali.txt");
    std::fs::copy(src, &dst).unwrap();
    dst
}

#[test]
fn cache_loads_back_exactly_what_was_parsed() {
    let dir = tempfile::tempdir().unwrap();
    let source = copy_of_vali(dir.path());
    let parsed = read_letor_file(&source, None, &ReadOptions::default()).unwrap();
    let cache = cache_path(&source);
    write_cache(&parsed, &source, &cache).unwrap();
    let (loaded, state) = read_cache(&cache, Some(&source)).unwrap();
    assert_eq!(state, CacheState::Fresh);
    assert_eq!(loaded, parsed);
    // load_or_build uses it.
    let (again, from_cache) = load_or_build(&source, None, &ReadOptions::default()).unwrap();
    assert!(from_cache);
    assert_eq!(again, parsed);
}

#[test]
fn a_cache_keeps_its_columns_names_and_refuses_names_that_do_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let source = copy_of_vali(dir.path());
    let mut named = read_letor_file(&source, None, &ReadOptions::default()).unwrap();
    let names: Vec<String> = (1..=named.n_features)
        .map(|j| format!("f\"{j}\""))
        .collect();
    named.feature_names = Some(names.clone());
    let cache = cache_path(&source);
    write_cache(&named, &source, &cache).unwrap();
    let (loaded, state) = read_cache(&cache, Some(&source)).unwrap();
    assert_eq!(state, CacheState::Fresh);
    assert_eq!(loaded.feature_names.as_deref(), Some(&names[..]));
    assert!(
        loaded == named,
        "the cache reads back otherwise than written"
    );
    // Names a Parquet file could not have given, written with a checksum that matches.
    let good = std::fs::read(&cache).unwrap();
    let first = good.iter().rposition(|&b| b == b'[').unwrap();
    let with = |at: usize, name: &str| {
        let mut names = names.clone();
        names[at] = name.into();
        serde_json::to_string(&names).unwrap()
    };
    for (what, names, message) in [
        (
            "one name fewer",
            r#"["a"]"#.to_string(),
            "1 column names for 46 features",
        ),
        ("not strings", "[1]".to_string(), "its column names"),
        (
            "a name twice",
            with(1, "f\"1\""),
            "feature column 2 is named 'f\"1\"', as an earlier one is",
        ),
        (
            "a Parquet file's query ids",
            with(3, "qid"),
            "feature column 4 is named 'qid', which names the query ids",
        ),
    ] {
        let mut bytes = good[..first].to_vec();
        bytes.extend_from_slice(names.as_bytes());
        bytes[72..80].copy_from_slice(&(names.len() as u64).to_le_bytes());
        let checksum = crc32fast::hash(&bytes[128..]);
        bytes[12..16].copy_from_slice(&checksum.to_le_bytes());
        let path = dir.path().join("bad.drcache");
        std::fs::write(&path, &bytes).unwrap();
        let e = read_cache(&path, None).unwrap_err().to_string();
        assert!(
            e.contains("corrupt cache") && e.contains(message),
            "{what}: {e}"
        );
    }
}

#[test]
fn a_changed_source_makes_the_cache_stale_and_it_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let source = copy_of_vali(dir.path());
    let (first, from_cache) = load_or_build(&source, None, &ReadOptions::default()).unwrap();
    assert!(!from_cache);
    // Drop the last group: the source's size changes.
    let text = std::fs::read_to_string(&source).unwrap();
    let last_qid = first.qids.last().unwrap();
    let kept: String = text
        .lines()
        .filter(|l| !l.contains(&format!("qid:{last_qid} ")))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&source, kept).unwrap();
    assert_eq!(
        read_cache(&cache_path(&source), Some(&source)).unwrap().1,
        CacheState::Stale
    );
    let (second, from_cache) = load_or_build(&source, None, &ReadOptions::default()).unwrap();
    assert!(!from_cache, "a stale cache must not be used");
    assert_eq!(second.n_groups(), first.n_groups() - 1);
    assert_eq!(
        read_cache(&cache_path(&source), Some(&source)).unwrap().1,
        CacheState::Fresh
    );
}

#[test]
fn corrupt_caches_are_rejected_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let source = copy_of_vali(dir.path());
    let (data, _) = load_or_build(&source, None, &ReadOptions::default()).unwrap();
    let cache = cache_path(&source);
    let bytes = std::fs::read(&cache).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "not a cache",
            b"hello world, this is not a cache file at all........................".to_vec(),
            "bad magic",
        ),
        ("truncated", bytes[..bytes.len() - 9].to_vec(), "truncated"),
        (
            "future version",
            {
                let mut b = bytes.clone();
                b[8] = 99;
                b
            },
            "version 99",
        ),
        ("empty", vec![], "bad magic"),
    ];
    for (what, content, fragment) in cases {
        let path = dir.path().join("bad.drcache");
        std::fs::write(&path, content).unwrap();
        match read_cache(&path, None) {
            Err(e @ Error::Parse { .. }) => {
                assert!(e.to_string().contains(fragment), "{what}: {e}")
            }
            other => panic!(
                "{what}: expected an error, got {:?}",
                other.map(|d| d.0.n_docs())
            ),
        }
    }
    assert!(data.n_docs() > 0);
}

#[test]
fn a_changed_query_file_beside_the_source_makes_the_cache_stale() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("d.txt");
    std::fs::write(&source, "0 1:1\n1 1:2\n0 1:3\n1 1:4\n").unwrap();
    let query = dir.path().join("d.txt.query");
    std::fs::write(&query, "2\n2\n").unwrap();
    let (first, _) = load_or_build(&source, None, &ReadOptions::default()).unwrap();
    assert_eq!(first.n_groups(), 2);
    std::fs::write(&query, "1\n3\n").unwrap();
    // Same size: make sure the modification time moves even on coarse clocks.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&query)
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert_eq!(
        read_cache(&cache_path(&source), Some(&source)).unwrap().1,
        CacheState::Stale
    );
    let (second, from_cache) = load_or_build(&source, None, &ReadOptions::default()).unwrap();
    assert!(!from_cache);
    assert_eq!(second.group_offsets, vec![0, 1, 4]);
}

//! The LETOR reader: real files, edge cases of the format, the malformed corpus, and fuzzing.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/letor_data.rs"]
mod letor_data;
use std::io::Write;
use std::path::{Path, PathBuf};

use distillrank::data::letor::{parse_letor_bytes, read_letor_file, ReadOptions};
use distillrank::data::Dataset;
use distillrank::error::Error;
use proptest::prelude::*;

fn shared(path: &str) -> PathBuf {
    PathBuf::from(letor_data::data(path))
}

fn parse(text: &str) -> distillrank::error::Result<Dataset> {
    parse_letor_bytes(
        Path::new("test.txt"),
        text.as_bytes(),
        None,
        &ReadOptions::default(),
    )
}

#[test]
fn mq2008_fold1_train_has_the_published_counts() {
    let data = read_letor_file(
        &shared("mq2008/Fold1/train.txt"),
        None,
        &ReadOptions::default(),
    )
    .unwrap();
    let s = data.stats();
    assert_eq!((s.queries, s.docs, s.features), (471, 9630, 46));
    assert_eq!(
        s.grades.into_iter().collect::<Vec<_>>(),
        vec![(0, 7820), (1, 1223), (2, 587)]
    );
    // Features 6-10 and 43 are constant in every Fold1 split (data README).
    assert_eq!(s.constant_features, vec![6, 7, 8, 9, 10, 43]);
    assert_eq!(s.docs_per_query_min, 5);
}

#[test]
fn mq2008_validation_and_test_splits() {
    for (file, queries, docs) in [("vali.txt", 157, 2707), ("test.txt", 156, 2874)] {
        let data = read_letor_file(
            &shared(&format!("mq2008/Fold1/{file}")),
            None,
            &ReadOptions::default(),
        )
        .unwrap();
        assert_eq!((data.n_groups(), data.n_docs()), (queries, docs), "{file}");
    }
}

#[test]
fn lightgbm_file_without_qid_takes_its_query_file() {
    let train = shared("lightgbm_rank/rank.train");
    // Found beside the file...
    let data = read_letor_file(&train, None, &ReadOptions::default()).unwrap();
    assert_eq!((data.n_groups(), data.n_docs()), (201, 3005));
    assert_eq!(data.n_features, 300);
    // ...or named explicitly.
    let query = shared("lightgbm_rank/rank.train.query");
    let named = read_letor_file(&train, Some(&query), &ReadOptions::default()).unwrap();
    assert_eq!(named, data);
    assert_eq!(
        named.group(0).len(),
        1,
        "the first query has a single document"
    );
    let test = read_letor_file(
        &shared("lightgbm_rank/rank.test"),
        None,
        &ReadOptions::default(),
    )
    .unwrap();
    assert_eq!((test.n_groups(), test.n_docs()), (50, 768));
}

#[test]
fn sparse_rows_comments_crlf_and_trailing_spaces() {
    let text = "2 qid:10 1:0.5 3:-1.5 # docid = a\r\n0 qid:10 2:7 \r\n\n# a comment line\n1 qid:11 3:1e2   \n0 qid:11\n";
    let data = parse(text).unwrap();
    assert_eq!(data.n_features, 3);
    assert_eq!(data.group_offsets, vec![0, 2, 4]);
    assert_eq!(data.qids, vec![10, 11]);
    assert_eq!(data.grades, vec![2, 0, 1, 0]);
    assert_eq!(
        data.features,
        vec![0.5, 0.0, -1.5, 0.0, 7.0, 0.0, 0.0, 0.0, 100.0, 0.0, 0.0, 0.0]
    );
}

#[test]
fn a_later_wider_row_widens_earlier_rows() {
    let data = parse("0 qid:1 1:1\n1 qid:1 1:2 5:3\n").unwrap();
    assert_eq!(data.n_features, 5);
    assert_eq!(data.row(0), &[1.0, 0.0, 0.0, 0.0, 0.0]);
    assert_eq!(data.row(1), &[2.0, 0.0, 0.0, 0.0, 3.0]);
}

#[test]
fn integral_float_grades_are_accepted() {
    let data = parse("2.0 qid:1 1:1\n0 qid:1 1:2\n").unwrap();
    assert_eq!(data.grades, vec![2, 0]);
}

#[test]
fn gzip_input_reads_like_the_text() {
    let path = shared("mq2008/Fold1/vali.txt");
    let text = std::fs::read(&path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("vali.txt.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    encoder.write_all(&text).unwrap();
    encoder.finish().unwrap();
    let plain = read_letor_file(&path, None, &ReadOptions::default()).unwrap();
    let mut compressed = read_letor_file(&gz, None, &ReadOptions::default()).unwrap();
    compressed.source = plain.source.clone();
    assert_eq!(compressed, plain);
}

#[test]
fn many_blocks_parse_like_one() {
    // More text than one parallel piece (1 MiB), so that pieces and their line numbers are joined.
    let mut text = String::new();
    for q in 0..5000 {
        for d in 0..10 {
            text.push_str(&format!("{} qid:{q} 1:{d} 2:{}.25 # doc {d}\n", d % 3, q));
        }
    }
    assert!(text.len() > 1 << 20);
    let data = parse(&text).unwrap();
    assert_eq!((data.n_groups(), data.n_docs()), (5000, 50000));
    assert_eq!(data.row(49999), &[9.0, 4999.25]);
    // An error far into the text names the right line.
    let broken = text.replacen("2:4999.25", "2:oops", 1);
    let line = text[..text.find("2:4999.25").unwrap()]
        .matches('\n')
        .count()
        + 1;
    match parse(&broken) {
        Err(Error::Parse { at, .. }) => assert_eq!(at.line as usize, line),
        other => panic!("expected a parse error, got {other:?}"),
    }
}

#[test]
fn malformed_corpus_gives_file_line_column_and_reason() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/malformed");
    let cases = std::fs::read_to_string(dir.join("cases.tsv")).unwrap();
    let mut checked = 0;
    for row in cases
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let fields: Vec<&str> = row.split('\t').collect();
        let (file, line, column, fragment) = (
            fields[0],
            fields[1].parse::<u64>().unwrap(),
            fields[2].parse::<u64>().unwrap(),
            fields[3],
        );
        let path = dir.join(file);
        match read_letor_file(&path, None, &ReadOptions::default()) {
            Err(Error::Parse { at, message }) => {
                assert_eq!(at.file, path, "{file}");
                assert_eq!((at.line, at.column), (line, column), "{file}: {message}");
                assert!(
                    message.contains(fragment),
                    "{file}: message '{message}' lacks '{fragment}'"
                );
                // The printed form starts with file:line(:column).
                let shown = Error::Parse {
                    at: at.clone(),
                    message: message.clone(),
                }
                .to_string();
                assert!(shown.starts_with(&path.display().to_string()), "{shown}");
            }
            other => panic!("{file}: expected a parse error, got {other:?}"),
        }
        checked += 1;
    }
    assert!(checked >= 15, "the corpus holds {checked} cases");
}

#[test]
fn query_file_errors_name_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("d.txt");
    std::fs::write(&data, "0 1:1\n1 1:2\n").unwrap();
    for (content, line, fragment) in [
        ("1\nx\n", 2, "expected a group size"),
        ("2\n0\n", 2, "group size 0"),
        ("", 0, "empty .query file"),
    ] {
        let query = dir.path().join("d.query");
        std::fs::write(&query, content).unwrap();
        match read_letor_file(&data, Some(&query), &ReadOptions::default()) {
            Err(Error::Parse { at, message }) => {
                assert_eq!(at.line, line);
                assert!(message.contains(fragment), "{message}");
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }
}

/// The page's `.query` upload is read through the library's own reader: one larger than any door
/// reads is refused by its size before a byte is read (the CLI's file the same way), and the rest
/// are parsed as the CLI parses them.
#[test]
fn a_query_file_is_capped_and_parsed_alike_in_every_door() {
    use distillrank::data::letor::{read_query_sizes, MAX_QUERY_FILE_BYTES};
    let name = Path::new("train.txt.query");
    struct Unread;
    impl std::io::Read for Unread {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            panic!("a .query file over the cap was read")
        }
    }
    let err = read_query_sizes(name, MAX_QUERY_FILE_BYTES + 1, Unread).unwrap_err();
    assert!(
        err.to_string().starts_with("train.txt.query")
            && err.to_string().contains("64 MiB")
            && err.to_string().contains("a .query file"),
        "{err}"
    );
    assert_eq!(read_query_sizes(name, 6, &b"2\n\n3\n"[..]).unwrap(), [2, 3]);
    let bad = read_query_sizes(name, 4, &b"2\nx\n"[..]).unwrap_err();
    assert!(
        bad.to_string().starts_with("train.txt.query:2:")
            && bad.to_string().contains("expected a group size"),
        "{bad}"
    );
}

#[test]
fn query_sizes_that_overflow_are_an_error() {
    let err = parse_letor_bytes(
        Path::new("d.txt"),
        b"0 1:1\n",
        Some(vec![usize::MAX, 2]),
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("more than 2^64"), "{err}");
}

#[test]
fn a_file_without_line_ends_is_read_in_linear_time() {
    // 40 MB with no '\n': one (bad) line, read by doubling the buffer, not rescanning it.
    let text = "0 qid:1 1:0.5".repeat(3_000_000);
    let err = parse(&text).unwrap_err();
    assert!(err.to_string().contains("test.txt:1:"), "{err}");
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let err = read_letor_file(
        Path::new("/nonexistent/train.txt"),
        None,
        &ReadOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("/nonexistent/train.txt"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Arbitrary bytes: an error or a dataset, never a panic; any dataset is consistent.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        if let Ok(d) = parse_letor_bytes(Path::new("fuzz"), &bytes, None, &ReadOptions::default()) {
            prop_assert_eq!(d.features.len(), d.n_docs() * d.n_features);
            prop_assert_eq!(*d.group_offsets.last().unwrap(), d.n_docs());
            prop_assert!(d.features.iter().all(|v| v.is_finite()));
        }
    }

    /// Text made of LETOR-like tokens, which reaches deeper into the parser than random bytes.
    #[test]
    fn letor_like_text_never_panics(tokens in proptest::collection::vec(
        prop_oneof![
            Just("0".to_string()), Just("1".to_string()), Just("-1".to_string()), Just("2.5".to_string()),
            Just("qid:1".to_string()), Just("qid:2".to_string()), Just("qid:".to_string()), Just("qid:18446744073709551616".to_string()),
            Just("1:0.5".to_string()), Just("2:1e9".to_string()), Just("3:nan".to_string()), Just("0:1".to_string()),
            Just("4294967297:1".to_string()), Just(":".to_string()), Just("#".to_string()), Just("\n".to_string()),
            Just("\r\n".to_string()), Just(" ".to_string()), Just("\t".to_string()), Just("5:-inf".to_string()),
            "[0-9]{1,3}:[0-9.e+-]{0,6}", "[ -~]{0,8}",
        ], 0..60)) {
        let text = tokens.join(" ");
        let _ = parse_letor_bytes(Path::new("fuzz"), text.as_bytes(), None, &ReadOptions::default());
        let _ = parse_letor_bytes(Path::new("fuzz"), text.as_bytes(), Some(vec![1, 2, 3]), &ReadOptions::default());
    }
}

/// A file of several blocks (each parsed while the next is read, its rows written in parallel):
/// documents without any feature first, rows that grow wider in later blocks, and a malformed line
/// far into the file reported at its own line number.
#[test]
fn several_blocks_read_as_one() {
    use distillrank::data::letor::BLOCK_BYTES;
    let mut text = String::from("0 qid:1\n1 qid:1\n");
    let mut expected_rows: Vec<Vec<(usize, f32)>> = vec![vec![], vec![]];
    let mut qid = 2;
    while text.len() < 3 * BLOCK_BYTES {
        let d = expected_rows.len();
        // Wider rows as the file goes on: column 3 from the first block, 40 in the third.
        let width = 3 + 37 * (text.len() / BLOCK_BYTES) / 2;
        let row = vec![(1, d as f32), (width, 0.5)];
        text.push_str(&format!("{} qid:{qid} 1:{} {width}:0.5\n", d % 3, d));
        expected_rows.push(row);
        if d.is_multiple_of(50) {
            qid += 1;
        }
    }
    let data = parse(&text).unwrap();
    assert_eq!(data.n_docs(), expected_rows.len());
    let widest = expected_rows
        .iter()
        .flatten()
        .map(|&(c, _)| c)
        .max()
        .unwrap();
    assert_eq!(data.n_features, widest);
    for (d, row) in expected_rows.iter().enumerate() {
        let mut dense = vec![0f32; widest];
        for &(c, v) in row {
            dense[c - 1] = v;
        }
        assert_eq!(data.row(d), &dense[..], "document {d}");
        assert_eq!(data.grades[d] as usize, if d < 2 { d } else { d % 3 });
    }
    // The same file with one bad line near its end.
    let lines = text.lines().count();
    let bad = format!("{text}1 qid:{qid} 1:x\n");
    let err = parse(&bad).unwrap_err().to_string();
    assert!(err.contains(&format!("test.txt:{}:", lines + 1)), "{err}");
}

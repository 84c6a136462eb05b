//! MQ2008 Fold1 (LETOR 4.0), bundled in the page's wasm and in the CLI: the queries with a
//! relevant document, non-zero features only, gzipped (`web/data/mq2008/make.sh` rebuilds it
//! from the original files). Both front doors read it with the same reader.

use std::path::Path;

use super::letor::{parse_letor_bytes, ReadOptions};
use super::Dataset;
use crate::error::Result;

const MQ2008: [(&str, &[u8]); 3] = [
    (
        "train.txt",
        include_bytes!("../../web/data/mq2008/train.txt.gz"),
    ),
    (
        "vali.txt",
        include_bytes!("../../web/data/mq2008/vali.txt.gz"),
    ),
    (
        "test.txt",
        include_bytes!("../../web/data/mq2008/test.txt.gz"),
    ),
];

/// The gzipped text of the bundled MQ2008 Fold1's split `i` (0 train, 1 validation, 2 test),
/// with its name: read again in full precision where a model trained elsewhere scores it.
pub fn mq2008_text(i: usize) -> (std::path::PathBuf, &'static [u8]) {
    let (name, bytes) = MQ2008[i.min(2)];
    (Path::new("mq2008/Fold1").join(name), bytes)
}

/// The bundled MQ2008 Fold1: its own train, validation and test splits.
pub fn mq2008() -> Result<[Dataset; 3]> {
    let mut splits = Vec::with_capacity(3);
    for (name, bytes) in MQ2008 {
        let path = Path::new("mq2008/Fold1").join(name);
        splits.push(parse_letor_bytes(
            &path,
            bytes,
            None,
            &ReadOptions::default(),
        )?);
    }
    let [train, valid, test]: [Dataset; 3] = splits.try_into().expect("three splits");
    Ok([train, valid, test])
}

/// How a fold's files name the bundled MQ2008's five parts: `bundled:mq2008/S1.txt` ..
/// `S5.txt` (a name no file on disk is read for). The bundled training split is S1, S2 and S3 in
/// that order, its validation split S4 and its test split S5, as LETOR 4.0's Fold1.
pub const MQ2008_PARTS: &str = "bundled:mq2008/";

/// The first qid of S2 and of S3 in the bundled training split: the parts' qid ranges
/// (S1 10002..11893, S2 11909..14013, S3 14037..15925) do not overlap.
const PART_STARTS: [u64; 2] = [11909, 14037];

/// The part (1..=5) that a fold's file `name` is, when it names one of the bundled MQ2008's
/// parts ([`MQ2008_PARTS`]).
pub fn mq2008_part_of(name: &str) -> Option<usize> {
    let part = name.strip_prefix(MQ2008_PARTS)?.strip_prefix('S')?;
    let k: usize = part.strip_suffix(".txt")?.parse().ok()?;
    (1..=5).contains(&k).then_some(k)
}

/// The LETOR text of the bundled MQ2008's part `k` (1..=5): S4 and S5 are the validation and
/// test splits; S1..S3 are the training split's lines whose qid falls in the part's range.
pub fn mq2008_part_text(k: usize) -> Result<Vec<u8>> {
    let (path, gz) = mq2008_text(match k {
        1..=3 => 0,
        4 => 1,
        _ => 2,
    });
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(gz), &mut text)
        .map_err(|e| crate::error::Error::io(&path, e))?;
    if k > 3 {
        return Ok(text);
    }
    let in_part = |qid: u64| match k {
        1 => qid < PART_STARTS[0],
        2 => (PART_STARTS[0]..PART_STARTS[1]).contains(&qid),
        _ => qid >= PART_STARTS[1],
    };
    let mut out = Vec::with_capacity(text.len() / 2);
    for line in text.split_inclusive(|&b| b == b'\n') {
        let qid = line
            .split(|&b| b == b' ')
            .find_map(|token| token.strip_prefix(b"qid:"))
            .and_then(|q| std::str::from_utf8(q).ok()?.parse::<u64>().ok());
        if qid.is_some_and(in_part) {
            out.extend_from_slice(line);
        }
    }
    Ok(out)
}

/// The bundled MQ2008's part `k` (1..=5), read from [`mq2008_part_text`].
pub fn mq2008_part(k: usize) -> Result<Dataset> {
    let name = format!("{MQ2008_PARTS}S{k}.txt");
    parse_letor_bytes(
        Path::new(&name),
        &mq2008_part_text(k)?,
        None,
        &ReadOptions::default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The five parts are the three splits: S1..S3 together are the training split, query for
    /// query; S4 and S5 are the validation and test splits; each part holds its own qid range.
    #[test]
    fn the_parts_are_the_bundled_splits() {
        let [train, valid, test] = mq2008().unwrap();
        let parts: Vec<Dataset> = (1..=5).map(|k| mq2008_part(k).unwrap()).collect();
        let train_qids: Vec<u64> = parts[..3].iter().flat_map(|p| p.qids.clone()).collect();
        assert_eq!(train_qids, train.qids);
        assert!(parts[..3].iter().all(|p| p.n_groups() > 40));
        assert_eq!(parts[3].qids, valid.qids);
        assert_eq!(parts[4].qids, test.qids);
        assert_eq!(
            parts[..3].iter().map(Dataset::n_docs).sum::<usize>(),
            train.n_docs()
        );
        assert!(parts[0].qids.iter().all(|&q| q < 11909));
        assert!(parts[2].qids.iter().all(|&q| q >= 14037));
        assert_eq!(mq2008_part_of("bundled:mq2008/S3.txt"), Some(3));
        assert_eq!(mq2008_part_of("bundled:mq2008/S6.txt"), None);
        assert_eq!(mq2008_part_of("mq2008/S3.txt"), None);
    }
}

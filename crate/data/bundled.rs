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

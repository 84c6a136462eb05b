//! Parquet in and out: the same data as the LETOR text it was converted from, in every reader
//! (data sets, a tree model's scan, a comparison with a teacher model), row groups cut at query
//! boundaries, folders of part files, and every kind of bad file refused by name.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/cli.rs"]
mod cli_run;
mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use distillrank::data::letor::{read_letor_file, scan_letor, ReadOptions};
use distillrank::data::parquet::ParquetWriter;
use distillrank::data::Dataset;
use distillrank::setup::{DataSource, ExternalTeacher};
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, FloatType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;

fn shared(path: &str) -> PathBuf {
    PathBuf::from(common::letor_data::data(path))
}

fn read(path: &Path) -> distillrank::error::Result<Dataset> {
    read_letor_file(path, None, &ReadOptions::default())
}

/// `input` converted by `data convert`'s library function into `out`.
fn convert(input: &Path, query: Option<&Path>, out: &Path) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(out).unwrap());
    distillrank::data::convert::convert(input, query, out, &mut file).unwrap();
}

/// A data set without the file it came from and its columns' names (LETOR text has none), to
/// compare two readings.
fn unsourced(mut data: Dataset) -> Dataset {
    data.source = None;
    data.feature_names = None;
    data
}

#[test]
fn parquet_converted_from_text_reads_as_the_text() {
    let dir = tempfile::tempdir().unwrap();
    for file in [
        "mq2008/Fold1/train.txt",
        "mq2008/Fold1/vali.txt",
        "mq2008/S5.txt",
    ] {
        let text = shared(file);
        let parquet = dir.path().join("data.parquet");
        convert(&text, None, &parquet);
        assert_eq!(
            unsourced(read(&parquet).unwrap()),
            unsourced(read(&text).unwrap()),
            "{file}"
        );
    }
    // A LightGBM-style file takes its groups from FILE.query; its Parquet numbers the queries as
    // the text reader does, 1, 2, ...
    let text = shared("lightgbm_rank/rank.train");
    let query = shared("lightgbm_rank/rank.train.query");
    let parquet = dir.path().join("rank.parquet");
    convert(&text, Some(Path::new(&query)), &parquet);
    let from_text = read_letor_file(&text, Some(Path::new(&query)), &ReadOptions::default());
    assert_eq!(
        unsourced(read(&parquet).unwrap()),
        unsourced(from_text.unwrap())
    );
}

/// A document as a tree model's scan sees it: its qid and its present entries.
type Scanned = (Option<u64>, Vec<(u32, f32)>);

/// Every document of a data file as a tree model's scan sees it.
fn scanned(path: &Path) -> Vec<Scanned> {
    let mut rows = Vec::new();
    let file = std::fs::File::open(path).unwrap();
    scan_letor(path, file, 65_536, &mut |row| {
        let features = row.features.iter().map(|&(i, v)| (i, v as f32)).collect();
        rows.push((row.qid, features));
        Ok(())
    })
    .unwrap();
    rows
}

#[test]
fn entries_the_text_leaves_out_stay_out_both_ways() {
    // MQ2008 writes every entry; a sparse file leaves most out. Text -> Parquet -> text keeps
    // which entries were written (nulls in Parquet), and a tree model's scan of the Parquet file
    // sees the same entries as its scan of the text.
    let dir = tempfile::tempdir().unwrap();
    let sparse = dir.path().join("sparse.txt");
    std::fs::write(
        &sparse,
        "2 qid:7 1:0.5 3:0 9:1.25\n0 qid:7 2:0.75\n1 qid:3 9:-2 # docid = a\n0 qid:3 1:1e-3 4:7\n",
    )
    .unwrap();
    for text in [sparse, shared("mq2008/Fold1/test.txt")] {
        let parquet = dir.path().join("out.parquet");
        let back = dir.path().join("back.txt.gz");
        convert(&text, None, &parquet);
        convert(&parquet, None, &back);
        let want = scanned(&text);
        assert_eq!(scanned(&parquet), want, "{}", text.display());
        assert_eq!(scanned(&back), want, "{}", text.display());
        assert_eq!(
            unsourced(read(&back).unwrap()),
            unsourced(read(&text).unwrap())
        );
    }
}

/// The qids of each row group of a Parquet file.
fn qids_by_row_group(path: &Path) -> Vec<Vec<i64>> {
    let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..reader.num_row_groups())
        .map(|g| {
            let group = reader.get_row_group(g).unwrap();
            let rows = group.metadata().num_rows() as usize;
            let parquet::column::reader::ColumnReader::Int64ColumnReader(mut qids) =
                group.get_column_reader(0).unwrap()
            else {
                panic!("qid is not int64")
            };
            let mut values = Vec::new();
            qids.read_records(rows, None, None, &mut values).unwrap();
            values
        })
        .collect()
}

#[test]
fn row_groups_are_cut_only_between_queries() {
    let dir = tempfile::tempdir().unwrap();
    let data = read(&shared("mq2008/Fold1/train.txt")).unwrap();
    let path = dir.path().join("groups.parquet");
    let file = std::fs::File::create(&path).unwrap();
    let mut writer = ParquetWriter::new(&path, file, data.n_features)
        .unwrap()
        .with_row_group_rows(500);
    for g in 0..data.n_groups() {
        for doc in data.group(g) {
            let row: Vec<(u32, f64)> = (0..data.n_features)
                .map(|k| (k as u32 + 1, data.row(doc)[k] as f64))
                .collect();
            writer.push(data.qids[g], data.grades[doc], &row).unwrap();
        }
    }
    assert_eq!(writer.finish().unwrap(), data.n_docs() as u64);
    let groups = qids_by_row_group(&path);
    assert!(groups.len() > 10, "{} row groups", groups.len());
    let mut seen = std::collections::HashSet::new();
    for (k, qids) in groups.iter().enumerate() {
        if k + 1 < groups.len() {
            assert!(qids.len() >= 500, "row group {k}: {} rows", qids.len());
        }
        let mine: std::collections::HashSet<i64> = qids.iter().copied().collect();
        assert!(
            mine.iter().all(|q| seen.insert(*q)),
            "row group {k} holds a query an earlier group holds"
        );
    }
    assert_eq!(unsourced(read(&path).unwrap()), unsourced(data));
}

#[test]
fn a_folder_of_parts_reads_as_the_parts_in_order() {
    // Parts named as Dask names them, part.2 before part.10; a hidden file and a marker file
    // are not parts.
    let dir = tempfile::tempdir().unwrap();
    let data = read(&shared("mq2008/Fold1/vali.txt")).unwrap();
    let folder = dir.path().join("vali.parquet");
    std::fs::create_dir(&folder).unwrap();
    let cuts = [0, 50, 100, data.n_groups()];
    for (k, name) in ["part.2.parquet", "part.10.parquet", "part.11.parquet"]
        .iter()
        .enumerate()
    {
        let path = folder.join(name);
        let mut writer = ParquetWriter::new(
            &path,
            std::fs::File::create(&path).unwrap(),
            data.n_features,
        )
        .unwrap();
        for g in cuts[k]..cuts[k + 1] {
            for doc in data.group(g) {
                let row: Vec<(u32, f64)> = (0..data.n_features)
                    .map(|c| (c as u32 + 1, data.row(doc)[c] as f64))
                    .collect();
                writer.push(data.qids[g], data.grades[doc], &row).unwrap();
            }
        }
        writer.finish().unwrap();
    }
    std::fs::write(folder.join("_SUCCESS"), "").unwrap();
    std::fs::write(folder.join(".part.2.parquet.crc"), "x").unwrap();
    assert_eq!(unsourced(read(&folder).unwrap()), unsourced(data));
}

/// A column of a hand-made file: its name, its Parquet type, and its values (None = null).
enum Column {
    I64(&'static str, Vec<Option<i64>>),
    I32(&'static str, Vec<Option<i32>>),
    F32(&'static str, Vec<Option<f32>>),
    F64(&'static str, Vec<Option<f64>>),
    Text(&'static str, Vec<&'static str>),
}

/// Writes a Parquet file of `columns` (every column optional, strings required) with the
/// parquet crate itself, so that what it holds does not depend on distillrank's writer.
fn hand_made(path: &Path, columns: &[Column]) {
    use parquet::basic::{Repetition, Type as Physical};
    use parquet::schema::types::Type;
    let field = |name: &str, physical: Physical, repetition: Repetition| {
        Arc::new(
            Type::primitive_type_builder(name, physical)
                .with_repetition(repetition)
                .build()
                .unwrap(),
        )
    };
    let fields = columns
        .iter()
        .map(|c| match c {
            Column::I64(n, _) => field(n, Physical::INT64, Repetition::OPTIONAL),
            Column::I32(n, _) => field(n, Physical::INT32, Repetition::OPTIONAL),
            Column::F32(n, _) => field(n, Physical::FLOAT, Repetition::OPTIONAL),
            Column::F64(n, _) => field(n, Physical::DOUBLE, Repetition::OPTIONAL),
            Column::Text(n, _) => field(n, Physical::BYTE_ARRAY, Repetition::REQUIRED),
        })
        .collect();
    let schema = Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()
            .unwrap(),
    );
    let file = std::fs::File::create(path).unwrap();
    let mut writer =
        SerializedFileWriter::new(file, schema, Arc::new(WriterProperties::builder().build()))
            .unwrap();
    let mut group = writer.next_row_group().unwrap();
    /// Writes a column's values, nulls as definition level 0.
    fn put<T: parquet::data_type::DataType>(
        w: &mut parquet::file::writer::SerializedColumnWriter,
        values: &[Option<T::T>],
    ) {
        let present: Vec<T::T> = values.iter().flatten().cloned().collect();
        let levels: Vec<i16> = values.iter().map(|v| i16::from(v.is_some())).collect();
        w.typed::<T>()
            .write_batch(&present, Some(&levels), None)
            .unwrap();
    }
    for column in columns {
        let mut w = group.next_column().unwrap().unwrap();
        match column {
            Column::I64(_, v) => put::<Int64Type>(&mut w, v),
            Column::I32(_, v) => put::<Int32Type>(&mut w, v),
            Column::F32(_, v) => put::<FloatType>(&mut w, v),
            Column::F64(_, v) => put::<DoubleType>(&mut w, v),
            Column::Text(_, v) => {
                let values: Vec<ByteArray> = v.iter().map(|s| ByteArray::from(*s)).collect();
                w.typed::<ByteArrayType>()
                    .write_batch(&values, None, None)
                    .unwrap();
            }
        }
        w.close().unwrap();
    }
    group.close().unwrap();
    writer.close().unwrap();
}

fn qid(values: &[i64]) -> Column {
    Column::I64("qid", values.iter().map(|&v| Some(v)).collect())
}
fn label(values: &[i32]) -> Column {
    Column::I32("label", values.iter().map(|&v| Some(v)).collect())
}
fn feature(name: &'static str, values: &[f64]) -> Column {
    Column::F64(name, values.iter().map(|&v| Some(v)).collect())
}

#[test]
fn a_hand_made_file_reads_with_its_types_and_nulls() {
    // int32 qids, a double label holding whole numbers, a float and a double feature, nulls as
    // entries left out (0 in the matrix), and a pandas-style file's columns in any order.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typed.parquet");
    hand_made(
        &path,
        &[
            Column::F32("a", vec![Some(0.5), None, Some(2.0)]),
            Column::I32("qid", vec![Some(4), Some(4), Some(1)]),
            Column::F64("label", vec![Some(2.0), Some(0.0), Some(1.0)]),
            Column::F64("b", vec![Some(-1.5), Some(3.0), None]),
        ],
    );
    let data = read(&path).unwrap();
    assert_eq!(data.qids, [4, 1]);
    assert_eq!(data.group_offsets, [0, 2, 3]);
    assert_eq!(data.grades, [2, 0, 1]);
    assert_eq!(data.n_features, 2);
    assert_eq!(data.features.to_vec(), vec![0.5, -1.5, 0.0, 3.0, 2.0, 0.0]);
}

#[test]
fn every_kind_of_bad_parquet_file_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<Column>, &[&str])> = vec![
        (
            "noqid",
            vec![label(&[1]), feature("f1", &[0.5])],
            &["no 'qid' column", "label, f1"],
        ),
        (
            "nolabel",
            vec![qid(&[1]), feature("f1", &[0.5])],
            &["no 'label' column"],
        ),
        (
            "docid",
            vec![qid(&[1]), label(&[1]), Column::Text("docid", vec!["GX01"])],
            &["column 'docid' holds byte arrays", "float or double"],
        ),
        (
            "intfeature",
            vec![qid(&[1]), label(&[1]), Column::I64("f1", vec![Some(3)])],
            &["column 'f1' holds 64-bit integers"],
        ),
        (
            "doubleqid",
            vec![
                Column::F64("qid", vec![Some(1.0)]),
                label(&[1]),
                feature("f1", &[0.5]),
            ],
            &["column 'qid' holds doubles", "integers"],
        ),
        (
            "nofeatures",
            vec![qid(&[1]), label(&[1])],
            &["no feature columns"],
        ),
        (
            "nullqid",
            vec![
                Column::I64("qid", vec![Some(1), None]),
                label(&[1, 0]),
                feature("f1", &[0.5, 0.25]),
            ],
            &["row 2: the qid is null"],
        ),
        (
            "negativeqid",
            vec![qid(&[1, -3]), label(&[1, 0]), feature("f1", &[0.5, 0.25])],
            &["row 2: qid -3 is negative"],
        ),
        (
            "nulllabel",
            vec![
                qid(&[1, 1]),
                Column::I32("label", vec![Some(1), None]),
                feature("f1", &[0.5, 0.25]),
            ],
            &["row 2: the label is null"],
        ),
        (
            "biglabel",
            vec![qid(&[1, 1]), label(&[1, 40]), feature("f1", &[0.5, 0.25])],
            &["row 2: relevance grade 40 is above 31"],
        ),
        (
            "fractionlabel",
            vec![
                qid(&[1]),
                Column::F64("label", vec![Some(1.5)]),
                feature("f1", &[0.5]),
            ],
            &["row 1: label 1.5 is not a relevance grade"],
        ),
        (
            "nan",
            vec![
                qid(&[1, 1]),
                label(&[1, 0]),
                feature("f1", &[0.5, 0.25]),
                feature("score", &[0.5, f64::NAN]),
            ],
            &["row 2, column 'score': value NaN is not finite"],
        ),
        (
            "beyondf32",
            vec![qid(&[1]), label(&[1]), feature("f1", &[1e300])],
            &["row 1, column 'f1'", "beyond the f32 range"],
        ),
        (
            "unsorted",
            vec![
                qid(&[5, 5, 6, 5]),
                label(&[1, 0, 0, 1]),
                feature("f1", &[0.5, 0.25, 0.1, 0.3]),
            ],
            &[
                "row 4: qid 5 comes back",
                "ended at row 2",
                "sort the rows by qid",
            ],
        ),
        (
            "empty",
            vec![qid(&[]), label(&[]), feature("f1", &[])],
            &["no rows"],
        ),
        // A name twice: which is the label, or which feature, cannot be told.
        (
            "twolabels",
            vec![qid(&[1]), label(&[1]), label(&[0]), feature("f1", &[0.5])],
            &["column 'label' appears twice (columns 2 and 3)"],
        ),
        (
            "twofeatures",
            vec![
                qid(&[1]),
                label(&[1]),
                feature("f1", &[0.5]),
                feature("f1", &[0.2]),
            ],
            &["column 'f1' appears twice (columns 3 and 4)"],
        ),
    ];
    for (name, columns, words) in cases {
        let path = dir.path().join(format!("{name}.parquet"));
        hand_made(&path, &columns);
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains(&format!("{name}.parquet")), "{name}: {e}");
        for w in words {
            assert!(e.contains(w), "{name}: '{w}' not in: {e}");
        }
    }
    // A file cut short, and one that only begins like Parquet.
    let good = dir.path().join("good.parquet");
    hand_made(&good, &[qid(&[1]), label(&[1]), feature("f1", &[0.5])]);
    let bytes = std::fs::read(&good).unwrap();
    for (name, contents) in [
        ("cut", &bytes[..bytes.len() - 9]),
        ("magic", &b"PAR1 and then text"[..]),
    ] {
        let path = dir.path().join(format!("{name}.parquet"));
        std::fs::write(&path, contents).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains(&format!("{name}.parquet")) && e.contains("not a readable Parquet file"),
            "{name}: {e}"
        );
    }
    // Part files of one folder with other columns; a .query file beside Parquet.
    let folder = dir.path().join("mixed");
    std::fs::create_dir(&folder).unwrap();
    hand_made(
        &folder.join("part.0.parquet"),
        &[
            qid(&[1]),
            label(&[1]),
            feature("f1", &[0.5]),
            feature("f2", &[0.5]),
        ],
    );
    hand_made(
        &folder.join("part.1.parquet"),
        &[qid(&[2]), label(&[1]), feature("f1", &[0.5])],
    );
    let e = read(&folder).unwrap_err().to_string();
    assert!(
        e.contains("part.1.parquet")
            && e.contains("1 feature columns (f1)")
            && e.contains("part.0.parquet")
            && e.contains("2 feature columns (f1, f2)"),
        "{e}"
    );
    let query = dir.path().join("good.query");
    std::fs::write(&query, "1\n").unwrap();
    let e = read_letor_file(&good, Some(&query), &ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("good.parquet is Parquet") && e.contains(".query"),
        "{e}"
    );
}

#[test]
fn a_comparison_on_parquet_files_is_the_comparison_on_their_text() {
    // The same setup on MQ2008's Fold1 as text and as Parquet, with a LightGBM teacher read by the
    // tree models' scan: the same comparison, figure for figure.
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("text");
    std::fs::create_dir(&text).unwrap();
    let DataSource::Files {
        train,
        valid: Some(valid),
        test: Some(test),
        ..
    } = common::engines::mq2008_files_in(&text)
    else {
        panic!("three files")
    };
    let mut names = Vec::new();
    for file in [&train, &valid, &test] {
        let out = Path::new(file).with_extension("parquet");
        convert(Path::new(file), None, &out);
        names.push(out.display().to_string());
    }
    let teacher = || ExternalTeacher {
        model: Some(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/mq2008-lightgbm.txt")
                .display()
                .to_string(),
        ),
        ..ExternalTeacher::default()
    };
    let mut on_text = common::engines::small_setup(DataSource::files(
        train.clone(),
        Some(valid.clone()),
        Some(test.clone()),
    ));
    on_text.data.privileged = Some("top:30%".into());
    on_text.data.teacher = teacher();
    let mut on_parquet = on_text.clone();
    on_parquet.data.source = DataSource::files(
        names[0].clone(),
        Some(names[1].clone()),
        Some(names[2].clone()),
    );
    let (_, a) = common::engines::compare_on_cpu(&on_text);
    let (_, b) = common::engines::compare_on_cpu(&on_parquet);
    let (a, b) = (without_timings(&a), without_timings(&b));
    assert!(
        a["methods"].as_array().is_some_and(|m| !m.is_empty()),
        "{a}"
    );
    assert_eq!(a, b);
}

/// A comparison as JSON without what the clock measured (seconds, documents a second).
fn without_timings(comparison: &impl serde::Serialize) -> serde_json::Value {
    fn strip(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for clocked in ["seconds", "docs_per_s", "ms_per_1k_docs"] {
                    map.remove(clocked);
                }
                map.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(comparison).unwrap();
    strip(&mut value);
    value
}

/// A folder without part files is refused by what it holds, not as a file that is a folder:
/// an empty one, and a dataset partitioned into folders (`split=a/`), whose folders are named.
#[test]
fn a_folder_without_part_files_says_what_it_holds() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let message = read(&empty).unwrap_err().to_string();
    assert!(
        message.contains("a folder without part files") && !message.contains("os error"),
        "{message}"
    );
    // An empty file under a Parquet name is told by its name, not as LETOR lines.
    let empty_file = dir.path().join("empty.parquet");
    std::fs::write(&empty_file, b"").unwrap();
    let message = read(&empty_file).unwrap_err().to_string();
    assert!(
        message.contains("empty file: no documents (expected a Parquet file, as its name says)"),
        "{message}"
    );
    let partitioned = dir.path().join("partitioned");
    for split in ["split=a", "split=b"] {
        std::fs::create_dir_all(partitioned.join(split)).unwrap();
        hand_made(
            &partitioned.join(split).join("part.0.parquet"),
            &[qid(&[1]), label(&[1]), feature("f1", &[0.5])],
        );
    }
    let message = read(&partitioned).unwrap_err().to_string();
    assert!(
        message.contains("its folders (split=a, split=b) are not read"),
        "{message}"
    );
    // One partition's folder reads.
    assert_eq!(read(&partitioned.join("split=a")).unwrap().n_docs(), 1);
    // Parts beside a folder, or beside a file that is not a part: what would go unread is
    // named; the markers Spark and Dask write (`_SUCCESS`, `.part.crc`) are not parts.
    let beside = partitioned.join("split=a");
    std::fs::write(beside.join("_SUCCESS"), b"").unwrap();
    std::fs::write(beside.join(".part.0.parquet.crc"), b"").unwrap();
    assert_eq!(read(&beside).unwrap().n_docs(), 1);
    std::fs::write(beside.join("notes.txt"), b"read me").unwrap();
    let message = read(&beside).unwrap_err().to_string();
    assert!(
        message.contains("also holds other files (notes.txt): they would not be read"),
        "{message}"
    );
    std::fs::remove_file(beside.join("notes.txt")).unwrap();
    std::fs::create_dir(beside.join("year=1")).unwrap();
    let message = read(&beside).unwrap_err().to_string();
    assert!(
        message.contains("also holds folders or other files (year=1/)"),
        "{message}"
    );
    std::fs::remove_dir(beside.join("year=1")).unwrap();
    // A folder of LETOR text (a fold's files) is not a dataset of parts.
    let fold = dir.path().join("Fold1");
    std::fs::create_dir(&fold).unwrap();
    std::fs::write(fold.join("train.txt"), "1 qid:1 1:0.5\n").unwrap();
    let message = read(&fold).unwrap_err().to_string();
    assert!(
        message.contains("a folder whose files (train.txt) are not Parquet")
            && message.contains("--folds")
            && !message.contains("os error"),
        "{message}"
    );
}

/// Class: columns are read by position, and Parquet files name theirs. A file of the training
/// file's columns in another order is refused wherever two files meet: a run's splits, a fold's
/// parts, and a saved model scoring a file (`predict`, `eval`), which keeps the names of the
/// columns it was trained on. The same columns in the same order are read, and LETOR text,
/// which names none, is read by position.
#[test]
fn class_columns_named_in_another_order_are_refused_in_every_door() {
    use cli_run::distillrank;
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    let (queries, docs) = (40, 12);
    let qids: Vec<i64> = (0..queries * docs).map(|i| (i / docs) as i64 + 1).collect();
    let grades: Vec<i32> = (0..queries * docs)
        .map(|i| ((i % docs + i / docs) % 3) as i32)
        .collect();
    let column = |k: f64| -> Vec<f64> {
        (0..queries * docs)
            .map(|i| ((i * 7) % 11) as f64 * k + f64::from(grades[i]))
            .collect()
    };
    let (a, b, c) = (column(0.5), column(-0.25), column(1.5));
    // `first`: the first qid (a fold's parts hold distinct queries).
    let write_from = |first: i64, name: &str, order: [(&'static str, &Vec<f64>); 3]| {
        let qids: Vec<i64> = qids.iter().map(|q| q + first - 1).collect();
        let mut columns = vec![qid(&qids), label(&grades)];
        columns.extend(order.iter().map(|(n, v)| feature(n, v)));
        hand_made(Path::new(&d(name)), &columns);
        d(name)
    };
    let write = |name: &str, order| write_from(1, name, order);
    let train = write("train.parquet", [("a", &a), ("b", &b), ("c", &c)]);
    let same = write("same.parquet", [("a", &a), ("b", &b), ("c", &c)]);
    let swapped = write("swapped.parquet", [("b", &b), ("a", &a), ("c", &c)]);
    let text = d("text.txt");
    std::fs::write(&text, "1 qid:1 1:0.5 2:1 3:2\n0 qid:1 1:0.1 2:0 3:1\n").unwrap();
    // Binary caches beside the files keep their values and their names.
    for file in [&train, &swapped] {
        let (ok, _, stderr) = distillrank(&["data", "cache", file]);
        assert!(ok, "{stderr}");
        assert!(Path::new(&format!("{file}.drcache")).exists());
    }
    let refused = |stderr: &str, file: &str, theirs: &str| {
        stderr.contains(&format!(
            "{file}: feature column 1 is \"b\", which is column 2 in {theirs}"
        )) && stderr.contains("same order")
    };
    let train_args = |test: &str, save: &str| {
        [
            "train",
            "--train",
            &train,
            "--test",
            test,
            "--epochs",
            "1",
            "--widths",
            "8",
            "--backend",
            "cpu",
            "--quiet",
            "--save",
            save,
        ]
        .map(String::from)
    };
    let run = |args: &[String]| distillrank(&args.iter().map(String::as_str).collect::<Vec<_>>());
    // A command with the flags of a short run.
    let short = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--epochs", "1", "--seeds", "1", "--widths", "8", "--quiet"]);
        distillrank(&all)
    };
    // A run's splits.
    let training_file = format!("the training file {train}");
    let (ok, _, stderr) = run(&train_args(&swapped, &d("refused")));
    assert!(
        !ok && refused(&stderr, &swapped, &training_file),
        "{stderr}"
    );
    let (ok, _, stderr) = run(&train_args(&same, &d("m")));
    assert!(ok, "{stderr}");
    // Through the prepared cache too: written by the first run, read by the second, each
    // student keeping the names.
    for save in ["cached1", "cached2"] {
        let mut args = train_args(&same, &d(save)).to_vec();
        args.extend(["--prepared-cache".to_string(), "true".to_string()]);
        let (ok, _, stderr) = run(&args);
        assert!(ok, "{stderr}");
        let config: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d(&format!("{save}.json"))).unwrap())
                .unwrap();
        assert_eq!(
            config["feature_names"],
            serde_json::json!(["a", "b", "c"]),
            "{save}"
        );
    }
    // The saved model keeps the names, and scoring checks them.
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d("m.json")).unwrap()).unwrap();
    assert_eq!(config["feature_names"], serde_json::json!(["a", "b", "c"]));
    for command in ["predict", "eval"] {
        let (ok, _, stderr) = distillrank(&[command, "--model", &d("m"), &swapped]);
        assert!(
            !ok && refused(&stderr, &swapped, "the model's training data"),
            "{command}: {stderr}"
        );
        // Through its cache, not parsed again.
        assert!(!stderr.contains("again"), "{stderr}");
        for file in [&same, &text] {
            let (ok, _, stderr) = distillrank(&[command, "--model", &d("m"), file]);
            assert!(ok, "{command} {file}: {stderr}");
        }
    }
    // A cache named directly keeps them too, and so does a file converted from it.
    let cache = format!("{swapped}.drcache");
    let (ok, _, stderr) = distillrank(&["predict", "--model", &d("m"), &cache]);
    assert!(
        !ok && refused(&stderr, &cache, "the model's training data"),
        "{stderr}"
    );
    let from_cache = d("from-cache.parquet");
    let (ok, _, stderr) = distillrank(&["data", "convert", &cache, "--out", &from_cache]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = distillrank(&["predict", "--model", &d("m"), &from_cache]);
    assert!(
        !ok && refused(&stderr, &from_cache, "the model's training data"),
        "{stderr}"
    );
    // A file converted keeps its columns' names.
    let again = d("again.parquet");
    let (ok, _, stderr) = distillrank(&["data", "convert", &same, "--out", &again]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = distillrank(&["predict", "--model", &d("m"), &again]);
    assert!(ok, "{stderr}");
    // The global objectives' splits.
    let (ok, _, stderr) = short(&[
        "objectives",
        "--train",
        &train,
        "--valid",
        &same,
        "--test",
        &swapped,
        "--out",
        &d("objectives"),
    ]);
    assert!(
        !ok && refused(&stderr, &swapped, &training_file),
        "{stderr}"
    );
    // A column of another name where the model has "c": another dataset's, or renamed.
    let renamed = write("renamed.parquet", [("a", &a), ("b", &b), ("clicks", &c)]);
    let (ok, _, stderr) = distillrank(&["predict", "--model", &d("m"), &renamed]);
    assert!(
        !ok && stderr.contains(&format!("{renamed}: feature column 3 is \"clicks\" where the model's training data has \"c\", and the model's training data has no column \"clicks\"")),
        "{stderr}"
    );
    // A tree model trained on named columns (LightGBM's `feature_names=`) reads them by name:
    // scoring a file, and as a teacher of the training file.
    let tree = |names: &str| {
        let path = d(&format!("lightgbm-{}.txt", names.replace(' ', "")));
        std::fs::write(&path, format!(
            "tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\nmax_feature_idx=2\nobjective=lambdarank\nfeature_names={names}\n\n\
Tree=0\nnum_leaves=2\nnum_cat=0\nsplit_feature=0\nsplit_gain=1\nthreshold=0.5\ndecision_type=2\nleft_child=-1\nright_child=-2\nleaf_value=0.1 0.3\nis_linear=0\nshrinkage=1\n\n\nend of trees\n"
        )).unwrap();
        path
    };
    let (abc, bac) = (tree("a b c"), tree("b a c"));
    let (ok, _, stderr) = distillrank(&["predict", "--model", &abc, &same]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = distillrank(&["predict", "--model", &bac, &same]);
    assert!(
        !ok && stderr.contains(&format!(
            "{same}: feature column 1 is \"a\", which is column 2 in the model {bac}"
        )),
        "{stderr}"
    );
    let (ok, _, stderr) = short(&[
        "compare",
        "--train",
        &train,
        "--valid",
        &same,
        "--test",
        &same,
        "--teacher-model",
        &bac,
        "--methods",
        "pfd",
        "--out",
        &d("teacher"),
    ]);
    assert!(
        !ok && stderr.contains(&format!(
            "{train}: feature column 1 is \"a\", which is column 2 in the teacher model {bac}"
        )),
        "{stderr}"
    );
    // Beside a training file of LETOR text (the same values, unnamed), the named splits are
    // checked against the first of them, and a tree model's names against it: in a comparison,
    // a run and the global objectives. A student keeps its names.
    let letor = d("train.txt");
    let rows: String = (0..queries * docs)
        .map(|i| {
            format!(
                "{} qid:{} 1:{} 2:{} 3:{}\n",
                grades[i], qids[i], a[i], b[i], c[i]
            )
        })
        .collect();
    std::fs::write(&letor, rows).unwrap();
    let validation_file = format!("the validation file {same}");
    for (command, out) in [("compare", "unnamed"), ("objectives", "unnamed-objectives")] {
        let (ok, _, stderr) = short(&[
            command,
            "--train",
            &letor,
            "--valid",
            &same,
            "--test",
            &swapped,
            "--out",
            &d(out),
        ]);
        assert!(
            !ok && refused(&stderr, &swapped, &validation_file),
            "{command}: {stderr}"
        );
    }
    // A teacher, through the prepared cache too (written by the first run, read by the
    // second, which must still know which file names the columns), and a reference.
    for (flag, noun, cache) in [
        ("--teacher-model", "teacher", "false"),
        ("--teacher-model", "teacher", "true"),
        ("--teacher-model", "teacher", "true"),
        ("--reference-model", "reference", "false"),
    ] {
        let (ok, _, stderr) = short(&[
            "compare",
            "--train",
            &letor,
            "--test",
            &swapped,
            flag,
            &abc,
            "--methods",
            "pfd",
            "--prepared-cache",
            cache,
            "--out",
            &d("unnamed-teacher"),
        ]);
        assert!(
            !ok && stderr.contains(&format!(
                "{swapped}: feature column 1 is \"b\", which is column 2 in the {noun} model {abc}"
            )),
            "{flag} (prepared cache {cache}): {stderr}"
        );
    }
    let prepared = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("train.txt.") && name.ends_with(".drprep"))
        .count();
    assert_eq!(
        prepared, 1,
        "the prepared cache the second teacher run read"
    );
    let mut args = train_args(&same, &d("unnamed-student")).to_vec();
    args[2] = letor.clone();
    let (ok, _, stderr) = run(&args);
    assert!(ok, "{stderr}");
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d("unnamed-student.json")).unwrap()).unwrap();
    assert_eq!(config["feature_names"], serde_json::json!(["a", "b", "c"]));
    // A fold's training parts (Parquet under the parts' names).
    let folds = d("folds");
    std::fs::create_dir(&folds).unwrap();
    for k in 1..=5 {
        let part = format!("folds/S{k}.txt");
        match k {
            2 => write_from(k * 100, &part, [("b", &b), ("a", &a), ("c", &c)]),
            _ => write_from(k * 100, &part, [("a", &a), ("b", &b), ("c", &c)]),
        };
    }
    let (ok, _, stderr) = short(&[
        "compare",
        "--folds",
        &folds,
        "--backend",
        "cpu",
        "--out",
        &d("out"),
    ]);
    let first = format!("the fold's training part {folds}/S1.txt");
    assert!(
        !ok && refused(&stderr, &format!("{folds}/S2.txt"), &first),
        "{stderr}"
    );
}

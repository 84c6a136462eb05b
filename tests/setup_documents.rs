//! A setup document means the same in every door: the fields a section leaves out take the table
//! of settings' defaults, whichever section it is (the synthetic data's options, Ranking
//! Distillation's, the simulated logs', the objectives' synthetic task), through the library's
//! reader that the CLI's `--setup`, the page's Open setup and Python's `Setup.from_json` share.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/cli.rs"]
mod cli_run;

use distillrank::setup::{DataSource, ObjectivesData, ObjectivesSetup, Setup};

/// A setup with one field of each section given: every other field is the default's.
const PARTIAL: &str = r#"{
  "data": {
    "source": {"synthetic": {"options": {"queries": 40, "regular": 12}, "test_queries": 30}},
    "logs": {"sessions": 7}
  },
  "rd": {"k": 3},
  "epochs": 1,
  "seeds": 1,
  "widths": [8],
  "methods": ["no-distillation", "pfd"],
  "objectives": {"data": {"synthetic": {"train": 500}}}
}"#;

#[test]
fn a_section_left_partly_out_takes_the_tables_defaults() {
    let setup = Setup::from_json(PARTIAL).unwrap();
    let mut expected = Setup::default();
    let DataSource::Synthetic {
        options,
        test_queries,
        ..
    } = &mut expected.data.source
    else {
        unreachable!("the default data are synthetic")
    };
    options.queries = 40;
    options.regular = 12;
    *test_queries = 30;
    expected.data.logs.sessions = 7;
    expected.rd.k = 3;
    expected.epochs = 1;
    expected.seeds = 1;
    expected.widths = vec![8];
    expected.methods = setup.methods.clone();
    let ObjectivesData::Synthetic(task) = &mut expected.objectives.data else {
        unreachable!("the default objectives' data are synthetic")
    };
    task.train = 500;
    assert_eq!(setup, expected);
    // A synthetic source with no options at all is the table's synthetic data.
    let bare = Setup::from_json(r#"{"data": {"source": {"synthetic": {}}}}"#).unwrap();
    assert_eq!(bare, Setup::default());
    // The objectives' section alone reads the same way.
    let section =
        ObjectivesSetup::from_json(r#"{"data": {"synthetic": {"features": 5}}, "seeds": 1}"#)
            .unwrap();
    let ObjectivesData::Synthetic(task) = &section.data else {
        unreachable!()
    };
    assert_eq!(task.features, 5);
    assert_eq!(task.train, 20_000, "the table's default");
    // A field the section does not have is still refused by its path.
    let err = Setup::from_json(r#"{"rd": {"kk": 3}}"#)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("rd") && err.contains("unknown field `kk`"),
        "{err}"
    );
}

#[test]
fn the_clis_setup_file_reads_a_partial_section_as_the_library_does() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("setup.json");
    std::fs::write(&file, PARTIAL).unwrap();
    let out = dir.path().join("out");
    let (ok, _, stderr) = cli_run::distillrank(&[
        "compare",
        "--setup",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
    let written: Setup =
        Setup::from_json(&std::fs::read_to_string(out.join("setup.json")).unwrap()).unwrap();
    assert_eq!(written.data, Setup::from_json(PARTIAL).unwrap().data);
}

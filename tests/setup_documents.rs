//! A setup document means the same in every door:
//! - the fields a section leaves out take the table of settings' defaults, whichever section it
//!   is (the synthetic data's options, Ranking Distillation's, the simulated logs', the
//!   objectives' synthetic task), through the library's reader that the CLI's `--setup`, the
//!   page's Open setup and Python's `Setup.from_json` share;
//! - a document for one job is refused by the other: `compare` refuses the objectives' section
//!   alone, and `objectives` a comparison without that section;
//! - relative file names are read against the folder they are relative to (the CLI's: the setup
//!   file's), and refused by field where a door has none (Python without `base`).
//!
//! tests/python/test_package.py walks the same three through Python, and the e2e check
//! `class_one_setup_document_one_meaning_a_section_left_partly_out_opens_with_the_tables_defaults` through the page.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/cli.rs"]
mod cli_run;

#[path = "common/letor_data.rs"]
mod letor_data;
use distillrank::data::logs::LoggingRanker;
use distillrank::engine::Engine;
use distillrank::setup::{DataSource, ObjectivesData, ObjectivesSetup, Setup};
use std::path::Path;

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
fn class_one_setup_document_one_meaning_a_section_left_partly_out_takes_the_tables_defaults() {
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
    // A setting given by its flag's name where its field has another path is pointed there,
    // wherever the name was put: every such setting of the table.
    for (flag, field) in distillrank::settings::flag_fields() {
        let name = flag.replace('-', "_");
        for json in [
            format!(r#"{{"{name}": 1}}"#),
            format!(r#"{{"data": {{"{name}": 1}}}}"#),
        ] {
            let given = if json.starts_with(r#"{"data""#) {
                format!("data.{name}")
            } else {
                name.clone()
            };
            if given == field {
                continue;
            }
            let err = Setup::from_json(&json).unwrap_err().to_string();
            assert!(
                err.contains(&format!("the setting {flag} is the field {field}")),
                "{json}: {err}"
            );
        }
    }
}

#[test]
fn class_one_setup_document_one_meaning_the_clis_setup_file_reads_a_partial_section_as_the_library_does(
) {
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

#[test]
fn class_one_setup_document_one_meaning_a_document_for_one_job_is_refused_by_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let comparison = dir.path().join("comparison.json");
    std::fs::write(
        &comparison,
        PARTIAL.replace(
            r#""objectives": {"data": {"synthetic": {"train": 500}}}"#,
            r#""note": "a comparison""#,
        ),
    )
    .unwrap();
    let section = dir.path().join("objectives.json");
    std::fs::write(&section, ObjectivesSetup::default().to_json()).unwrap();
    let out = dir.path().join("out").display().to_string();
    let (ok, _, stderr) = cli_run::distillrank(&[
        "objectives",
        "--setup",
        comparison.to_str().unwrap(),
        "--out",
        &out,
    ]);
    assert!(
        !ok && stderr.contains("holds a comparison and no global objectives' section"),
        "{stderr}"
    );
    let (ok, _, stderr) = cli_run::distillrank(&[
        "compare",
        "--setup",
        section.to_str().unwrap(),
        "--out",
        &out,
    ]);
    assert!(
        !ok && stderr.contains("distillrank objectives --setup"),
        "{stderr}"
    );
}

#[test]
fn class_one_setup_document_one_meaning_relative_files_resolve_against_their_folder_or_are_refused()
{
    let text =
        r#"{"data": {"source": {"files": {"train": "train.txt", "test": "/abs/test.txt"}}}}"#;
    let mut setup = Setup::from_json(text).unwrap();
    let err = distillrank::setup::resolve_files(setup.files_mut(), None)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("data.source.files.train") && err.contains("'train.txt' is a relative path"),
        "{err}"
    );
    distillrank::setup::resolve_files(setup.files_mut(), Some(std::path::Path::new("/data")))
        .unwrap();
    let DataSource::Files { train, test, .. } = &setup.data.source else {
        unreachable!()
    };
    assert_eq!(
        (train.as_str(), test.as_deref()),
        ("/data/train.txt", Some("/abs/test.txt"))
    );
    // The objectives' files likewise, by their own field.
    let mut objectives = ObjectivesSetup::from_json(
        r#"{"objectives": {"data": {"files": {"train": "t.txt", "threshold": 2}}}}"#,
    )
    .unwrap();
    let err = distillrank::setup::resolve_files(objectives.files_mut(), None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("objectives.data.files.train"), "{err}");
    // The CLI reads a setup file's relative names against the file's own folder.
    let dir = tempfile::tempdir().unwrap();
    let shared = std::path::PathBuf::from(letor_data::data("mq2008/Fold1"));
    for name in ["train.txt", "vali.txt", "test.txt"] {
        std::fs::copy(shared.join(name), dir.path().join(name)).unwrap();
    }
    let file = dir.path().join("setup.json");
    std::fs::write(
        &file,
        r#"{"data": {"source": {"files": {"train": "train.txt", "valid": "vali.txt", "test": "test.txt"}}, "tau_target": 2.8},
            "methods": ["no-distillation"], "epochs": 1, "seeds": 1, "widths": [8]}"#,
    )
    .unwrap();
    let out = dir.path().join("out").display().to_string();
    let (ok, _, stderr) = cli_run::distillrank(&[
        "compare",
        "--setup",
        file.to_str().unwrap(),
        "--out",
        &out,
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
}

/// The engine-level configs read their fields from the setup by name (`CompareConfig::of_setup`,
/// `TrainConfig::of_setup`, the objectives' `Config::of_setup`), with no translation between:
/// each committed comparison's setup gives the very configuration its results record, and the
/// objectives' defaults the one the default run recorded.
#[test]
fn engine_configs_read_from_a_setup_are_those_the_committed_results_record() {
    let results = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results");
    let mut checked = 0;
    for dir in std::fs::read_dir(&results).unwrap() {
        let dir = dir.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("results.json")) else {
            continue;
        };
        let recorded: serde_json::Value = serde_json::from_str(&text).unwrap();
        let Some(setup) = recorded.get("setup") else {
            continue;
        };
        let setup = Setup::from_json(&setup.to_string()).unwrap();
        let config = setup.compare_config(Engine::Cpu).unwrap();
        let config = serde_json::to_value(config).unwrap();
        let differ = differences(&recorded["config"], &config, "config");
        assert!(differ.is_empty(), "{}: {differ:?}", dir.display());
        checked += 1;
    }
    assert!(checked >= 10, "{checked} comparisons");
    let objectives: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(results.join("objectives/results.json")).unwrap(),
    )
    .unwrap();
    let config = serde_json::to_value(ObjectivesSetup::default().config().unwrap()).unwrap();
    let differ = differences(&objectives["config"], &config, "config");
    assert!(differ.is_empty(), "objectives: {differ:?}");
}

/// Where `read` differs from `recorded` in a field `recorded` has (a setting added since is not a
/// difference), each as its path.
fn differences(recorded: &serde_json::Value, read: &serde_json::Value, at: &str) -> Vec<String> {
    match (recorded, read) {
        (serde_json::Value::Object(fields), serde_json::Value::Object(_)) => fields
            .iter()
            .flat_map(|(key, value)| {
                let inner = format!("{at}.{key}");
                match read.get(key) {
                    Some(got) => differences(value, got, &inner),
                    None => vec![format!("{inner} is missing")],
                }
            })
            .collect(),
        _ if recorded == read => Vec::new(),
        _ => vec![format!("{at}: {recorded} recorded, {read} read")],
    }
}

/// A field an engine-level config reads must be in the setup it reads: a setup field renamed
/// would otherwise leave the engine's setting at a default without a word.
#[test]
fn an_engine_config_refuses_a_setup_without_one_of_its_fields() {
    let mut setup = serde_json::to_value(Setup::default()).unwrap();
    setup.as_object_mut().unwrap().remove("alpha");
    let err = distillrank::ranking::train::TrainConfig::of_setup(&setup)
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `alpha`"), "{err}");
    let mut section = serde_json::to_value(ObjectivesSetup::default()).unwrap();
    section.as_object_mut().unwrap().remove("initial_lambda");
    let err = distillrank::model::objective::Config::of_setup(&section)
        .unwrap_err()
        .to_string();
    assert!(err.contains("missing field `initial_lambda`"), "{err}");
}

/// A setting that no part of a comparison reads is named, not silently listed: a comparison that
/// sets one says so (results.json's `unused_settings`, the report, the page, Python, in each
/// door's words), and a sweep of one is refused, whichever setting of the class it is.
#[test]
fn settings_that_nothing_reads_are_named_and_cannot_be_swept() {
    use distillrank::pipeline::sweep::SweepParam;
    use distillrank::ranking::distill::Method;
    use distillrank::setup::Labels;
    let base = Setup {
        methods: vec![Method::NoDistillation],
        alpha: 0.3,
        teacher_temperature: 2.0,
        ..Setup::default()
    };
    let unused = base.unused_settings();
    assert!(
        unused
            .iter()
            .any(|s| s.starts_with("--alpha 0.3 is not used"))
            && unused
                .iter()
                .any(|s| s.starts_with("--teacher-temperature 2"))
            && unused.len() == 2,
        "{unused:?}"
    );
    let e = SweepParam::Alpha
        .check(&base, &[0.3, 0.5])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("a sweep of alpha") && e.contains("no-distillation"),
        "{e}"
    );
    // With a method that learns from a teacher, both are read.
    let pfd = Setup {
        methods: vec![Method::NoDistillation, Method::Pfd],
        ..base.clone()
    };
    assert!(
        pfd.unused_settings().is_empty(),
        "{:?}",
        pfd.unused_settings()
    );
    assert!(SweepParam::Alpha.check(&pfd, &[0.3, 0.5]).is_ok());
    // The labelling's threshold with the grades as labels, Ranking Distillation's and
    // multi-teacher PFD's settings without those methods.
    let mut grades = pfd.clone();
    grades.data.labels = Labels::Grades;
    grades.data.tau_target = Some(3.0);
    grades.rd.k = 5;
    grades.teachers = 3;
    let unused = grades.unused_settings();
    for flag in ["--tau-target 3", "--rd-k 5", "--teachers 3"] {
        assert!(
            unused.iter().any(|s| s.starts_with(flag)),
            "{flag}: {unused:?}"
        );
    }
    let e = SweepParam::TauTarget
        .check(&grades, &[3.0, 4.0])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--training-labels grades"), "{e}");
    // Settings left at their defaults are not named.
    let quiet = Setup {
        methods: vec![Method::NoDistillation],
        ..Setup::default()
    };
    assert!(quiet.unused_settings().is_empty());
    // A reference section with no model: the field given is named, not the section's other
    // fields at their defaults; each setting of the teacher's says what it does.
    let reference = Setup::from_json(
        r#"{"methods": ["no-distillation"], "teacher_widths": [], "data": {"reference": {"columns": "from-1"}}}"#,
    )
    .unwrap()
    .unused_settings();
    assert!(
        reference.len() == 2
            && reference[0].starts_with(
                "--teacher-widths none is not used: it sizes the teacher's hidden layers"
            )
            && reference[1].starts_with("--reference-columns from-1 is not used"),
        "{reference:?}"
    );
    // In the words of a door without flags.
    let mut results = serde_json::json!({"unused_settings": base.unused_settings()});
    distillrank::pipeline::report::results_in_words(&mut results);
    let words = results["unused_settings"][0].as_str().unwrap();
    assert!(
        words.starts_with("alpha 0.3 is not used") && !words.contains("--"),
        "{words}"
    );
}

/// Every f64 a report or a job's run holds reads back from JSON exactly as it was written
/// (serde_json's `float_roundtrip`): runs passed between processes (a Dask cluster's workers, the
/// page's) summarise to the figures of one process, to the last bit.
#[test]
fn every_float_reads_back_from_json_exactly() {
    let mut rng = distillrank::rng::Rng::new(3);
    for _ in 0..20_000 {
        let x = rng.uniform() * 10f64.powi((rng.uniform() * 20.0) as i32 - 10);
        let back: f64 = serde_json::from_str(&serde_json::to_string(&x).unwrap()).unwrap();
        assert_eq!(back.to_bits(), x.to_bits(), "{x:e}");
    }
    // The value that differed in its last bit without it.
    let back: f64 = serde_json::from_str("0.12384333239042729").unwrap();
    assert_eq!(back, 0.123_843_332_390_427_29);
}

/// A document read as the global objectives' setup where it holds their section, else as a
/// comparison's.
fn read_either(document: &str) -> distillrank::error::Result<()> {
    if document.contains("objectives") {
        ObjectivesSetup::from_json(document).map(drop)
    } else {
        Setup::from_json(document).map(drop)
    }
}

/// A value above a range's open 0 that f32, the precision training computes in, holds as 0 (or
/// subnormal) is refused in a setup document as on the command line, saying so.
#[test]
fn a_number_f32_holds_as_zero_is_refused_in_a_setup() {
    for (document, field) in [
        (r#"{"lr": 1e-46}"#, "lr"),
        (r#"{"objectives": {"lr": 1e-40}}"#, "lr"),
    ] {
        let message = read_either(document).unwrap_err().to_string();
        assert!(
            message.contains(field) && message.contains("below f32's smallest normal number"),
            "{document}: {message}"
        );
    }
    assert!(Setup::from_json(r#"{"lr": 1e-30}"#).is_ok());
}

/// A number no JSON reader holds (`1e400`, past f64) is its field's in a setup document, with the
/// range the table of settings gives the field, where it was a line and column alone: at the top,
/// inside a section, in a list, and in the objectives' document.
#[test]
fn a_number_past_f64_in_a_setup_names_its_field() {
    for (document, words) in [
        (
            r#"{"ensemble": 1e400}"#,
            "setup field ensemble: a number out of range (line 1, column 18), expected a whole number in 1..=64",
        ),
        (
            r#"{"data": {"t": -1e999}}"#,
            "setup field data.t: a number out of range",
        ),
        (r#"{"widths": [8, 1e400]}"#, "setup field widths[1]: a number out of range"),
        (
            r#"{"objectives": {"lr": 2e308}}"#,
            "setup field objectives.lr: a number out of range",
        ),
    ] {
        let message = read_either(document).unwrap_err().to_string();
        assert!(message.contains(words), "{document}: {message}");
    }
    // A setup file's reader (`compare --setup`, the page's Open setup) says the same, not that
    // the file is not JSON.
    let message = Setup::from_file_json(r#"{"ensemble": 1e400}"#)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("setup field ensemble: a number out of range")
            && !message.contains("not JSON"),
        "{message}"
    );
    // A broken document is still named by its line and column.
    let message = Setup::from_json("{\n\"epochs\": 1e400")
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("epochs: a number out of range (line 2"),
        "{message}"
    );
}

/// A key given twice in one object of a setup document is refused, naming it, where it read as
/// its last value: at the top, inside a section, and in the objectives' document.
#[test]
fn a_key_given_twice_in_a_setup_is_refused() {
    for (document, key) in [
        (r#"{"epochs": 2, "epochs": 3}"#, "epochs"),
        (r#"{"data": {"t": 3, "t": 4}}"#, "t"),
        (r#"{"objectives": {"seeds": 1, "seeds": 2}}"#, "seeds"),
    ] {
        let message = read_either(document).unwrap_err().to_string();
        assert!(
            message.contains(&format!("\"{key}\" is given twice")),
            "{document}: {message}"
        );
    }
    // The same key in two objects is two settings.
    assert!(Setup::from_json(r#"{"seeds": 2, "objectives": {"seeds": 3}}"#).is_ok());
}

/// The logging ranker's section (`{"kind": ..., ...}`) is read field by field: a bad field is
/// named under its own path with what it holds and what it takes, a missing `kind` or `column`
/// is named, and `fraction` may be left out (its default). Serde's words for an internally
/// tagged enum named the section only, or the Rust type.
#[test]
fn a_logging_rankers_section_names_the_field_that_is_wrong() {
    let at = |ranker: &str| format!(r#"{{"data": {{"logs": {{"logging_ranker": {ranker}}}}}}}"#);
    for (ranker, words) in [
        (
            r#"{"kind": "linear", "fraction": "NaN"}"#,
            r#"setup field data.logs.logging_ranker.fraction: string "NaN", expected a finite number in (0, 1]"#,
        ),
        (
            r#"{"kind": "feature", "column": -1}"#,
            "setup field data.logs.logging_ranker.column: integer `-1`, expected a feature's number, from 1",
        ),
        (
            r#"{"kind": "feature", "column": 0}"#,
            "setup field data.logs.logging_ranker.column: integer `0`, expected a feature's number, from 1",
        ),
        (
            r#"{"kind": "feature", "column": 2.5}"#,
            "setup field data.logs.logging_ranker.column: floating point `2.5`, expected a feature's number, from 1",
        ),
        (
            r#"{"kind": "feature"}"#,
            r#"the feature logging ranker needs "column""#,
        ),
        (
            r#"{"kind": "wide"}"#,
            "setup field data.logs.logging_ranker.kind: 'wide', expected linear, feature or random",
        ),
        (
            r#"{"kind": 3}"#,
            "setup field data.logs.logging_ranker.kind: integer `3`, expected linear, feature or random in quotes",
        ),
        (r#"{"fraction": 0.2}"#, r#"a section needs "kind""#),
        (
            r#"{"kind": "random", "fraction": 0.5}"#,
            "unknown field `fraction`: the random logging ranker has no settings",
        ),
        (
            r#"{"kind": "linear", "fraction": 0.5, "extra": 1}"#,
            "unknown field `extra`, expected `fraction`",
        ),
        (
            "5",
            "setup field data.logs.logging_ranker: integer `5`, expected a spec in quotes",
        ),
        ("null", "setup field data.logs.logging_ranker: null, expected"),
    ] {
        let message = Setup::from_json(&at(ranker)).unwrap_err().to_string();
        assert!(message.contains(words), "{ranker}: {message}");
    }
    let read = |ranker: &str| {
        Setup::from_json(&at(ranker))
            .unwrap()
            .data
            .logs
            .logging_ranker
    };
    assert_eq!(
        read(r#"{"kind": "linear"}"#),
        read(r#""linear""#),
        "fraction left out: its default"
    );
    assert_eq!(
        read(r#"{"kind": "linear", "fraction": 0.25}"#),
        LoggingRanker::Linear { fraction: 0.25 }
    );
    assert_eq!(
        read(r#"{"kind": "feature", "column": 3}"#),
        LoggingRanker::Feature { column: 3 }
    );
    // A count reads as every count of a setup: a whole number written as a float too.
    assert_eq!(
        read(r#"{"kind": "feature", "column": 3.0}"#),
        LoggingRanker::Feature { column: 3 }
    );
    assert_eq!(read(r#"{"kind": "random"}"#), LoggingRanker::Random);
    let flag = LoggingRanker::parse("feature:0").unwrap_err().to_string();
    assert!(flag.contains("feature columns count from 1"), "{flag}");
}

/// A section given as another value (a list, which serde read by its fields' positions where
/// its length fit, `null`, a number), a choice given an empty or a two-key section, and a choice
/// given settings it has none of, are refused by the field in words, not in serde's (`expected
/// struct LogOptions`, `a map with a single key`, `expected unit`).
#[test]
fn a_section_given_as_another_value_is_refused_in_words() {
    for (document, words) in [
        (
            r#"{"rd": [10, 1.0, 0.1, 1.0, "hybrid", 2]}"#,
            "setup field rd: a list, expected a section of settings in braces ({} for every default)",
        ),
        (
            r#"{"data": {"logs": null}}"#,
            "setup field data.logs: null, expected a section of settings in braces",
        ),
        (
            r#"{"data": {"logs": 5}}"#,
            "setup field data.logs: integer `5`, expected a section of settings in braces",
        ),
        (
            r#"{"data": {"source": {}}}"#,
            "setup field data.source: a section of 0 keys, expected one of `synthetic`, `mq2008`",
        ),
        (
            r#"{"data": {"source": {"mq2008": null, "synthetic": {}}}}"#,
            "setup field data.source: a section of 2 keys (mq2008, synthetic), expected one of",
        ),
        (
            r#"{"data": {"labels": {"gumbel": 1}}}"#,
            r#"integer `1`: gumbel takes no settings; give it by its name alone, "gumbel""#,
        ),
        (
            r#"{"data": {"source": []}}"#,
            "setup field data.source: a list, expected one of `synthetic`, `mq2008`",
        ),
        // A choice among names alone is offered no section.
        (
            r#"{"data": {"labels": 5}}"#,
            "setup field data.labels: integer `5`, expected one of `gumbel`, `grades` in quotes",
        ),
        (
            r#"{"data": {"teacher": {"columns": true}}}"#,
            "setup field data.teacher.columns: boolean `true`, expected one of `auto`",
        ),
        // A single value where a list goes is a list of one; one that cannot be read is the
        // field's, not the first item's of a list the setup does not have.
        (
            r#"{"widths": "8"}"#,
            "setup field widths: string \"8\", expected a list of whole numbers",
        ),
        (
            r#"{"seeds": {"n": 3}}"#,
            "setup field seeds: a section, expected a whole number",
        ),
    ] {
        let message = Setup::from_json(document).unwrap_err().to_string();
        // No Rust type, no item of a list the document does not have, and no section offered
        // to a choice of names alone.
        let offers_a_section = document.contains("labels") && message.contains("section");
        assert!(
            message.contains(words)
                && !message.contains("struct")
                && !message.contains("[0]")
                && !offers_a_section,
            "{document}: {message}"
        );
    }
    // A privileged split the parser cannot read is refused when the setup is read, by its field.
    let message = Setup::from_json(r#"{"data": {"privileged": "nope"}}"#)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("setup field data.privileged: privileged features 'nope': expected top:N"),
        "{message}"
    );
    for spec in ["logs", "top:30%", "cols:3,7", ""] {
        let document = format!(r#"{{"data": {{"privileged": "{spec}"}}}}"#);
        assert!(Setup::from_json(&document).is_ok(), "{spec}");
    }
    // The spellings that work: a section, a choice's name alone or with null, the bundled
    // folds as `--bundled` spells them.
    let read = |document: &str| Setup::from_json(document).unwrap();
    assert_eq!(
        read(r#"{"data": {"labels": {"gumbel": null}}}"#),
        read("{}")
    );
    assert_eq!(
        read(r#"{"data": {"source": "mq2008-folds"}}"#).data.source,
        DataSource::Mq2008Folds
    );
    assert_eq!(read(r#"{"rd": {}}"#), read("{}"));
}

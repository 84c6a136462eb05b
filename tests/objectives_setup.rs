//! The global objectives' setup (`distillrank::setup::ObjectivesSetup`), the one every door
//! reads: its defaults survive JSON, an unknown field is refused at every level, and every number
//! is checked against the table of settings.

#![cfg(not(target_arch = "wasm32"))]

use distillrank::model::objective::Objective;
use distillrank::settings;
use distillrank::setup::{ObjectivesData, ObjectivesSetup};

/// The defaults, and a setup of files with every optional number set.
fn setups() -> Vec<ObjectivesSetup> {
    let files = ObjectivesSetup {
        data: ObjectivesData::Files {
            train: "train.txt".into(),
            valid: Some("valid.txt".into()),
            test: None,
            threshold: 2,
            train_query: None,
            valid_query: Some("valid.txt.groups".into()),
            test_query: None,
        },
        at_precision: Some(0.7),
        at_recall: Some(0.6),
        ..ObjectivesSetup::default()
    };
    vec![ObjectivesSetup::default(), files]
}

#[test]
fn the_defaults_and_a_setup_of_files_round_trip_through_json() {
    for setup in setups() {
        let read = ObjectivesSetup::from_json(&setup.to_json()).unwrap();
        assert_eq!(read, setup);
    }
    // Fields left out take their defaults.
    assert_eq!(
        ObjectivesSetup::from_json("{}").unwrap(),
        ObjectivesSetup::default()
    );
}

/// Every object of a JSON value, by its path.
fn objects(value: &serde_json::Value, path: String, out: &mut Vec<String>) {
    if let serde_json::Value::Object(fields) = value {
        out.push(path.clone());
        for (key, v) in fields {
            let inner = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            objects(v, inner, out);
        }
    }
}

#[test]
fn an_unknown_field_is_refused_at_every_level() {
    for setup in setups() {
        let json = serde_json::to_value(&setup).unwrap();
        let mut paths = Vec::new();
        objects(&json, String::new(), &mut paths);
        assert!(paths.len() >= 3, "{paths:?}");
        for path in paths {
            let mut bad = json.clone();
            let at = if path.is_empty() {
                &mut bad
            } else {
                path.split('.').fold(&mut bad, |v, key| &mut v[key])
            };
            at.as_object_mut()
                .unwrap()
                .insert("bogus".into(), serde_json::json!(1));
            let err = ObjectivesSetup::from_json(&bad.to_string())
                .unwrap_err()
                .to_string();
            let field = if path.is_empty() {
                "bogus".to_string()
            } else {
                format!("{path}.bogus")
            };
            // An object of fields names the field; the data, one of two kinds, the kind.
            let refused = err.contains(&format!("setup field {field}: unknown field `bogus`"))
                || (path == "data" && err.contains("setup field data: unknown variant `bogus`"));
            assert!(refused, "{path}: {err}");
        }
    }
}

#[test]
fn every_number_has_a_row_in_the_table_of_settings_and_is_checked() {
    for setup in setups() {
        let json = serde_json::to_value(&setup).unwrap();
        let mut numbers = Vec::new();
        settings::numeric_fields(&json, String::new(), &mut numbers);
        assert!(numbers.len() >= 10, "{numbers:?}");
        for (path, _) in numbers {
            let row = settings::bound_of_field(&format!("{}{path}", settings::OBJECTIVES))
                .unwrap_or_else(|| panic!("{path} has no row in settings::SETTINGS"));
            let range = row.range.expect("a numeric row");
            // Out of its range, the field is refused by name, with the range.
            let outside = match (range.integer, range.min_open) {
                (true, _) if range.min > 0.0 => serde_json::json!(range.min as u64 - 1),
                (true, _) if range.max < u64::MAX as f64 => {
                    serde_json::json!(range.max as u64 + 1)
                }
                (true, _) => serde_json::json!(-1),
                (false, true) => serde_json::json!(range.min),
                (false, false) => serde_json::json!(range.min - 1.0),
            };
            let mut bad = json.clone();
            match path.split('.').fold(&mut bad, |v, key| &mut v[key]) {
                serde_json::Value::Array(items) => items[0] = outside,
                other => *other = outside,
            }
            let err = ObjectivesSetup::from_json(&bad.to_string())
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(&format!("setup field {path}")) && err.contains(&range.text()),
                "{path}: {err}"
            );
            // The same inside a whole setup, as `objectives` writes it: named by its whole path.
            let whole = serde_json::json!({ "objectives": bad }).to_string();
            for err in [
                ObjectivesSetup::from_json(&whole).unwrap_err().to_string(),
                distillrank::setup::Setup::from_json(&whole)
                    .unwrap_err()
                    .to_string(),
            ] {
                assert!(
                    err.contains(&format!("setup field objectives.{path}"))
                        && err.contains(&range.text()),
                    "objectives.{path}: {err}"
                );
            }
        }
    }
}

#[test]
fn the_list_of_objectives_is_checked() {
    let twice = r#"{"objectives": ["logloss", "logloss"]}"#;
    let err = ObjectivesSetup::from_json(twice).unwrap_err().to_string();
    assert!(err.contains("listed twice"), "{err}");
    let none = r#"{"objectives": []}"#;
    let err = ObjectivesSetup::from_json(none).unwrap_err().to_string();
    assert!(err.contains("no objective"), "{err}");
    let unknown = r#"{"objectives": ["auc-roc-pr"]}"#;
    let err = ObjectivesSetup::from_json(unknown).unwrap_err().to_string();
    assert!(err.contains("setup field objectives[0]"), "{err}");
}

/// The examples of `setup`'s data, made through the library's pipeline as every door makes them.
fn splits_of(setup: &ObjectivesSetup) -> distillrank::objectives::data::BinarySplits {
    let mut store = distillrank::pipeline::store::InMemory::default();
    distillrank::pipeline::objectives::objectives_data(
        setup,
        &mut store,
        &mut distillrank::pipeline::Silent,
    )
    .unwrap()
}

/// The comparison through the library's pipeline, as every door runs it: the same numbers on
/// the same setup.
#[test]
fn the_pipeline_runs_a_small_setup_the_same_twice() {
    let setup = ObjectivesSetup::from_json(
        r#"{"data": {"synthetic": {"train": 400, "valid": 200, "test": 200, "features": 5,
            "positive_rate": 0.1, "noise": 0.5, "seed": 3}},
            "objectives": ["logloss", "recall-at-precision:0.7"], "seeds": 2, "epochs": 2,
            "widths": [4], "backend": "cpu"}"#,
    )
    .unwrap();
    let run = || {
        let splits = splits_of(&setup);
        let engine = distillrank::engine::Engine::Cpu;
        let runs =
            distillrank::native::pipeline::objectives(&splits, &setup, &engine, &mut |_, _| {})
                .unwrap();
        distillrank::pipeline::objectives::objectives_results_json(&splits, &setup, &runs).unwrap()
    };
    let (a, b) = (run(), run());
    for objective in ["logloss", "recall-at-precision:0.7"] {
        let figures = &a["objectives"][objective]["auc_pr"];
        assert_eq!(figures["per_seed"].as_array().unwrap().len(), 2);
        assert_eq!(figures, &b["objectives"][objective]["auc_pr"]);
    }
    assert_eq!(a["seeds"], 2);
    assert_eq!(a["config"]["targets"]["precision"], 0.7);
}

/// The page's pool of workers runs one job per objective and seed: the `k`-th job of an
/// objective is the setup's `k`-th seed (`first_seed + k`), the same run as the whole comparison's,
/// and a job past the setup's seeds is refused.
#[test]
fn one_job_per_seed_is_the_whole_comparisons_run_from_its_first_seed() {
    let setup = ObjectivesSetup::from_json(
        r#"{"data": {"synthetic": {"train": 300, "valid": 150, "test": 150, "features": 4,
            "positive_rate": 0.2, "noise": 0.5, "seed": 1}},
            "objectives": ["logloss", "auc-pr"], "seeds": 2, "first_seed": 7, "epochs": 1,
            "widths": [4], "backend": "cpu"}"#,
    )
    .unwrap();
    let splits = splits_of(&setup);
    let engine = distillrank::engine::Engine::Cpu;
    let whole = distillrank::native::pipeline::objectives(&splits, &setup, &engine, &mut |_, _| {})
        .unwrap();
    let job = |index: usize, k: u64| {
        distillrank::native::block_on(distillrank::pipeline::objectives::objectives_async(
            &splits,
            &setup,
            Some((index, k)),
            &engine,
            &mut |_, _| {},
        ))
    };
    for (index, runs) in whole.iter().enumerate() {
        assert_eq!(runs.runs.iter().map(|r| r.seed).collect::<Vec<_>>(), [7, 8]);
        for (k, run) in runs.runs.iter().enumerate() {
            let one = job(index, k as u64).unwrap();
            assert_eq!(one[0].runs[0].seed, run.seed);
            assert_eq!(one[0].runs[0].test.auc_pr, run.test.auc_pr);
        }
    }
    let past = job(0, 2).unwrap_err().to_string();
    assert!(
        past.contains("seed 2 of the objectives: the setup has 2"),
        "{past}"
    );
}

#[test]
fn one_setup_document_holds_the_comparison_and_the_objectives() {
    // A comparison's setup with its objectives section changed: each job reads its part, and the
    // document round-trips whole.
    let mut setup = distillrank::setup::Setup {
        seeds: 2,
        ..Default::default()
    };
    setup.objectives.epochs = 7;
    setup.objectives.objectives = vec![Objective::LogLoss, Objective::RocAuc];
    let text = setup.to_json();
    assert!(text.contains("\"objectives\""), "{text}");
    assert_eq!(distillrank::setup::Setup::from_json(&text).unwrap(), setup);
    assert_eq!(ObjectivesSetup::from_json(&text).unwrap(), setup.objectives);
    // The section alone, as `objectives` writes it, is a whole setup with the comparison's
    // defaults; and a comparison left at the defaults leaves the section out.
    let alone = setup.objectives.to_json();
    let read = distillrank::setup::Setup::from_json(&alone).unwrap();
    assert_eq!(read.objectives, setup.objectives);
    assert_eq!(read.seeds, distillrank::setup::Setup::default().seeds);
    assert!(!distillrank::setup::Setup::default()
        .to_json()
        .contains("\"objectives\""));
    // A comparison's setup.json, its section left out, is refused by the objectives (as the
    // section alone is by compare, below); an empty document is the objectives' defaults.
    let comparison = distillrank::setup::Setup {
        seeds: 2,
        ..Default::default()
    }
    .to_json();
    let err = ObjectivesSetup::from_json(&comparison)
        .unwrap_err()
        .to_string();
    assert!(err.contains("distillrank compare --setup"), "{err}");
    assert_eq!(
        ObjectivesSetup::from_json("{}").unwrap(),
        ObjectivesSetup::default()
    );
    // And `compare --setup` (the page's Open setup too) refuses a document that holds only the
    // objectives' section, rather than running a default comparison without a word.
    for err in [
        distillrank::setup::Setup::from_file_json(&alone),
        distillrank::setup::Setup::comparison_from_json(&alone),
    ] {
        let err = err.unwrap_err().to_string();
        assert!(err.contains("distillrank objectives --setup"), "{err}");
    }
}

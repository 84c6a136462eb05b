//! The log simulator (`data::logs`): determinism, the click models' defining properties, the
//! aggregated columns' invariants, conversion labels through preparation, and bad parameters.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/cli.rs"]
mod cli_run;
#[path = "common/letor_data.rs"]
mod letor_data;
use cli_run::distillrank;

use distillrank::data::logs::{
    simulate, ClickModel, LogColumns, LogOptions, LoggingRanker, SimulatedLogs, LOG_COLUMNS,
};
use distillrank::data::prepare::{prepare, select_groups, PrepareOptions, PrivilegedSplit};
use distillrank::data::synth::{generate, SynthOptions};
use distillrank::data::Dataset;

/// Synthetic LETOR data with grades 0..4: 300 queries of 10..40 documents.
fn letor(seed: u64) -> Dataset {
    generate(&SynthOptions {
        queries: 300,
        seed,
        ..SynthOptions::default()
    })
    .unwrap()
    .dataset
}

fn run(data: &[&Dataset], options: &LogOptions) -> SimulatedLogs {
    let names: Vec<String> = (0..data.len()).map(|i| format!("file {i}")).collect();
    simulate(data, &names, options).unwrap()
}

const MODELS: [ClickModel; 3] = [ClickModel::Pbm, ClickModel::Cascade, ClickModel::Dcm];

#[test]
fn the_same_seed_gives_the_same_logs_and_another_seed_other_logs() {
    let data = letor(1);
    for model in MODELS {
        let options = LogOptions {
            click_model: model,
            sessions: 20,
            seed: 5,
            ..LogOptions::default()
        };
        let a = run(&[&data], &options);
        let b = run(&[&data], &options);
        assert_eq!(a.datasets, b.datasets, "{model:?}");
        let c = run(&[&data], &LogOptions { seed: 6, ..options });
        assert_ne!(a.datasets, c.datasets, "{model:?}");
    }
}

#[test]
fn a_querys_logs_depend_on_its_qid_not_on_the_order_of_the_file() {
    let data = letor(2);
    let options = LogOptions {
        logging_ranker: LoggingRanker::Feature { column: 3 },
        sessions: 30,
        ..LogOptions::default()
    };
    let reversed: Vec<usize> = (0..data.n_groups()).rev().collect();
    let flipped = select_groups(&data, &reversed);
    let (a, b) = (run(&[&data], &options), run(&[&flipped], &options));
    let (a, b) = (&a.datasets[0], &b.datasets[0]);
    for g in 0..data.n_groups() {
        let h = data.n_groups() - 1 - g;
        assert_eq!(
            a.features[a.group(g).start * a.n_features..a.group(g).end * a.n_features],
            b.features[b.group(h).start * b.n_features..b.group(h).end * b.n_features],
            "qid {}",
            data.qids[g]
        );
    }
}

#[test]
fn position_bias_lowers_the_click_rate_with_rank_in_every_click_model() {
    let data = letor(3);
    for model in MODELS {
        // A random logging ranker puts every grade at every rank alike: what remains is the
        // click model's own position effect.
        let stats = &run(
            &[&data],
            &LogOptions {
                click_model: model,
                logging_ranker: LoggingRanker::Random,
                sessions: 200,
                ..LogOptions::default()
            },
        )
        .stats[0];
        let ctr = &stats.ctr_by_rank;
        assert!(
            ctr[0] > 1.5 * ctr[4] && ctr[4] > ctr[9],
            "{model:?}: CTR by rank {ctr:?}"
        );
    }
    // PBM: a larger eta, a steeper fall; eta = 0, no fall beyond noise.
    let ctr_ratio = |eta: f64| {
        let s = &run(
            &[&data],
            &LogOptions {
                position_bias: eta,
                logging_ranker: LoggingRanker::Random,
                sessions: 200,
                ..LogOptions::default()
            },
        )
        .stats[0];
        s.ctr_by_rank[0] / s.ctr_by_rank[9]
    };
    let (none, some, more) = (ctr_ratio(0.0), ctr_ratio(1.0), ctr_ratio(2.0));
    assert!((none - 1.0).abs() < 0.1, "eta 0: rank 1 / rank 10 = {none}");
    assert!(
        some > 5.0 && more > 2.0 * some,
        "eta 1: {some}, eta 2: {more}"
    );
}

#[test]
fn clicks_conversions_and_dwell_rise_with_the_grade() {
    let data = letor(4);
    for model in MODELS {
        let logs = run(
            &[&data],
            &LogOptions {
                click_model: model,
                logging_ranker: LoggingRanker::Random,
                sessions: 200,
                ..LogOptions::default()
            },
        );
        let by_grade: Vec<f64> = logs.stats[0].ctr_by_grade.values().copied().collect();
        assert!(by_grade.len() >= 4, "{model:?}: {by_grade:?}");
        assert!(
            by_grade.windows(2).all(|w| w[0] < w[1]),
            "{model:?}: CTR by grade {by_grade:?}"
        );
        // Mean dwell and conversions per click, grade 0 against the top grade.
        let d = &logs.datasets[0];
        let c = logs.columns;
        let mean_over = |grade: u8, column: usize, weight_by_clicks: bool| {
            let (mut sum, mut n) = (0f64, 0f64);
            for doc in 0..d.n_docs() {
                let clicks = d.row(doc)[c.clicks - 1] as f64;
                if d.grades[doc] == grade && clicks > 0.0 {
                    let v = d.row(doc)[column - 1] as f64;
                    if weight_by_clicks {
                        sum += v;
                        n += clicks;
                    } else {
                        sum += v;
                        n += 1.0;
                    }
                }
            }
            sum / n
        };
        let top = logs.max_grade;
        assert!(mean_over(0, c.dwell, false) * 2.0 < mean_over(top, c.dwell, false));
        assert!(mean_over(0, c.conversions, true) * 4.0 < mean_over(top, c.conversions, true));
    }
}

#[test]
fn the_columns_add_up_and_the_first_files_conversion_rate_is_the_one_asked() {
    let (train, test) = (letor(5), letor(6));
    for model in MODELS {
        for shown in [3, 10, 100] {
            let options = LogOptions {
                click_model: model,
                shown,
                sessions: 50,
                conversion_rate: 0.05,
                ..LogOptions::default()
            };
            let logs = run(&[&train, &test], &options);
            let c = logs.columns;
            assert_eq!(c, LogColumns::after(train.n_features));
            for (original, logged) in [&train, &test].iter().zip(&logs.datasets) {
                assert_eq!(logged.n_features, original.n_features + LOG_COLUMNS);
                assert_eq!(logged.grades, original.grades);
                assert_eq!(logged.group_offsets, original.group_offsets);
                for g in 0..logged.n_groups() {
                    let docs = logged.group(g);
                    let shown_here = shown.min(docs.len()) as f32;
                    let impressions: f32 =
                        docs.clone().map(|d| logged.row(d)[c.impressions - 1]).sum();
                    assert_eq!(impressions, 50.0 * shown_here);
                    for d in docs {
                        let row = logged.row(d);
                        assert_eq!(&row[..original.n_features], original.row(d));
                        let (imp, clicks, ctr) =
                            (row[c.impressions - 1], row[c.clicks - 1], row[c.ctr - 1]);
                        let (position, dwell, conv) = (
                            row[c.mean_position - 1],
                            row[c.dwell - 1],
                            row[c.conversions - 1],
                        );
                        assert!(clicks <= imp && conv <= clicks, "{row:?}");
                        if imp > 0.0 {
                            assert!((ctr - clicks / imp).abs() < 1e-6);
                            assert!(position >= 1.0 && position <= shown_here);
                        } else {
                            assert_eq!((ctr, position), (0.0, shown as f32 + 1.0));
                        }
                        assert_eq!(dwell > 0.0, clicks > 0.0);
                    }
                }
            }
            let rate = logs.stats[0].conversion_rate;
            assert!(
                (rate - 0.05).abs() < 0.015,
                "{model:?} shown {shown}: {rate}"
            );
        }
    }
}

#[test]
fn conversions_become_the_labels_and_stay_out_of_x_and_z() {
    let (train, valid, test) = (letor(7), letor(8), letor(9));
    let logs = run(&[&train, &valid, &test], &LogOptions::default());
    let c = logs.columns;
    let [train, valid, test] = [&logs.datasets[0], &logs.datasets[1], &logs.datasets[2]];
    let options = PrepareOptions {
        privileged: PrivilegedSplit::Columns(c.privileged()),
        label_column: Some(c.conversions),
        ..PrepareOptions::default()
    };
    let p = prepare(train, Some(valid), Some(test), &options).unwrap();
    assert_eq!(p.privileged_columns, c.privileged());
    assert!(!p.regular_columns.contains(&c.conversions));
    assert_eq!(p.regular_columns.len(), train.n_features - LOG_COLUMNS);
    // Every kept test document's y is 1[conversions > 0].
    let (kept, _) = distillrank::data::prepare::filter_groups(test, options.min_group_size);
    let expected: Vec<f32> = (0..kept.n_docs())
        .map(|d| (kept.row(d)[c.conversions - 1] > 0.0) as u8 as f32)
        .collect();
    assert_eq!(p.test.as_ref().unwrap().labels, expected);
    assert!(expected.iter().any(|&y| y > 0.0) && expected.contains(&0.0));

    // A top-N split never picks the label column, however well it correlates with y.
    let top = PrepareOptions {
        privileged: PrivilegedSplit::TopCorrelation(5),
        ..options.clone()
    };
    let p = prepare(train, Some(valid), Some(test), &top).unwrap();
    assert!(!p.privileged_columns.contains(&c.conversions));
    assert!(!p.regular_columns.contains(&c.conversions));
    // And naming it as privileged is an error.
    let bad = PrepareOptions {
        privileged: PrivilegedSplit::Columns(vec![c.clicks, c.conversions]),
        ..options
    };
    let e = prepare(train, Some(valid), Some(test), &bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("holds the labels"), "{e}");
}

#[test]
fn bad_parameters_are_refused_with_the_flag_named() {
    let data = letor(10);
    let cases: Vec<(LogOptions, &str)> = vec![
        (
            LogOptions {
                click_noise: -0.1,
                ..LogOptions::default()
            },
            "--click-noise",
        ),
        (
            LogOptions {
                click_noise: 1.5,
                ..LogOptions::default()
            },
            "--click-noise",
        ),
        (
            LogOptions {
                click_noise: f64::NAN,
                ..LogOptions::default()
            },
            "--click-noise",
        ),
        (
            LogOptions {
                continue_after_click: 2.0,
                ..LogOptions::default()
            },
            "--continue-after-click",
        ),
        (
            LogOptions {
                conversion_rate: 1.01,
                ..LogOptions::default()
            },
            "--conversion-rate",
        ),
        (
            LogOptions {
                conversion_rate: -0.5,
                ..LogOptions::default()
            },
            "--conversion-rate",
        ),
        (
            LogOptions {
                conversion_rate: 0.0,
                ..LogOptions::default()
            },
            "--conversion-rate",
        ),
        (
            LogOptions {
                sessions: 0,
                ..LogOptions::default()
            },
            "--sessions",
        ),
        (
            LogOptions {
                shown: 0,
                ..LogOptions::default()
            },
            "--shown",
        ),
        (
            LogOptions {
                position_bias: -1.0,
                ..LogOptions::default()
            },
            "--position-bias",
        ),
        (
            LogOptions {
                position_bias: f64::INFINITY,
                ..LogOptions::default()
            },
            "--position-bias",
        ),
        (
            LogOptions {
                shuffle: f64::NAN,
                ..LogOptions::default()
            },
            "--shuffle",
        ),
        (
            LogOptions {
                dwell_seconds: 0.0,
                ..LogOptions::default()
            },
            "--dwell-seconds",
        ),
        (
            LogOptions {
                logging_ranker: LoggingRanker::Feature { column: 9999 },
                ..LogOptions::default()
            },
            "feature:9999",
        ),
    ];
    for (options, flag) in cases {
        let e = simulate(&[&data], &["f".into()], &options)
            .unwrap_err()
            .to_string();
        assert!(e.contains(flag), "{flag}: {e}");
    }
    for spec in [
        "linear:0",
        "linear:1.5",
        "feature:0",
        "feature:x",
        "random:1",
        "best",
    ] {
        assert!(LoggingRanker::parse(spec).is_err(), "{spec}");
    }

    // A file without a grade above 0, first or later.
    let mut flat = data.clone();
    flat.grades.iter_mut().for_each(|g| *g = 0);
    for files in [vec![&flat], vec![&data, &flat]] {
        let names = ["good.txt".to_string(), "flat.txt".to_string()];
        let e = simulate(&files, &names[2 - files.len()..], &LogOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("flat.txt") && e.contains("no document has a grade above 0"),
            "{e}"
        );
    }
}

#[test]
fn simulate_logs_writes_letor_and_a_sidecar_that_compare_reads() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("logs");
    let y = &letor_data::data("lightgbm_rank");
    let simulate = |into: &std::path::Path, output: &str| {
        distillrank(&[
            "data",
            "simulate-logs",
            &format!("{y}/rank.train"),
            &format!("{y}/rank.test"),
            "-o",
            into.to_str().unwrap(),
            "--sessions",
            "30",
            output,
        ])
    };
    let (ok, stdout, stderr) = simulate(&folder, "--json");
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
    let train = folder.join("rank.train");
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("rank.train.logs.json")).unwrap())
            .unwrap();
    assert_eq!(sidecar["label_column"], 306);
    assert_eq!(
        sidecar["privileged_columns"],
        serde_json::json!([301, 302, 303, 304, 305])
    );
    assert_eq!(sidecar["options"]["sessions"], 30);
    // The file reads back as LETOR: 300 features and 6 log columns, the grades unchanged.
    let written = distillrank::data::letor::read_letor_file(
        &train,
        None,
        &distillrank::data::letor::ReadOptions::default(),
    )
    .unwrap();
    let original = distillrank::data::letor::read_letor_file(
        std::path::Path::new(&format!("{y}/rank.train")),
        None,
        &distillrank::data::letor::ReadOptions::default(),
    )
    .unwrap();
    assert_eq!(written.n_features, 306);
    assert_eq!(written.grades, original.grades);

    // Same seed, same bytes.
    let again = dir.path().join("again");
    let (ok, _, stderr) = simulate(&again, "--quiet");
    assert!(ok, "{stderr}");
    assert_eq!(
        std::fs::read(&train).unwrap(),
        std::fs::read(again.join("rank.train")).unwrap()
    );

    let out = dir.path().join("compare");
    let (ok, stdout, stderr) = distillrank(&[
        "compare",
        "--train",
        train.to_str().unwrap(),
        "--test",
        folder.join("rank.test").to_str().unwrap(),
        "--privileged",
        "logs",
        "--seeds",
        "1",
        "--epochs",
        "2",
        "--widths",
        "16",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("graded NDCG@8"), "{stdout}");
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(
        results["privileged_columns"],
        serde_json::json!([301, 302, 303, 304, 305])
    );
    assert_eq!(results["preparation"]["label_column"], 306);
    assert!(results["methods"]["pfd"]["graded_ndcg@8"]["mean"]
        .as_f64()
        .is_some());

    // A test file without logs beside a training file with logs is refused.
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--train",
        train.to_str().unwrap(),
        "--test",
        &format!("{y}/rank.test"),
        "--privileged",
        "logs",
        "--seeds",
        "1",
        "--quiet",
    ]);
    assert!(!ok && stderr.contains("has no simulated logs"), "{stderr}");

    // A sidecar that is not one, or whose columns are not the simulator's, is refused by name.
    let sidecar = again.join("rank.train.logs.json");
    for (text, expected) in [
        ("{ not json", "not JSON"),
        (r#"{"format": "something else"}"#, "expected \"format\""),
        (
            r#"{"format": "distillrank-simulated-logs", "columns": {"impressions": 3}}"#,
            "\"columns\"",
        ),
        (
            r#"{"format": "distillrank-simulated-logs", "columns": {"impressions": 301, "clicks": 302, "ctr": 303, "mean_position": 304, "dwell": 305, "conversions": 1}}"#,
            "six consecutive columns",
        ),
    ] {
        std::fs::write(&sidecar, text).unwrap();
        let (ok, _, stderr) = distillrank(&[
            "compare",
            "--train",
            again.join("rank.train").to_str().unwrap(),
            "--privileged",
            "logs",
            "--seeds",
            "1",
            "--quiet",
        ]);
        assert!(!ok, "{text}");
        assert!(
            stderr.contains("rank.train.logs.json") && stderr.contains(expected),
            "{text}: {stderr}"
        );
    }
}

#[test]
fn simulate_logs_refuses_bad_parameters_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.txt");
    let mq = &letor_data::data("mq2008/Fold1/train.txt");
    for (flag, value, expect) in [
        ("--click-noise", "1.2", "--click-noise"),
        ("--conversion-rate", "-0.1", "--conversion-rate"),
        ("--continue-after-click", "7", "--continue-after-click"),
        ("--sessions", "0", "--sessions"),
        ("--logging-ranker", "feature:0", "logging ranker"),
    ] {
        let (ok, _, stderr) = distillrank(&[
            "data",
            "simulate-logs",
            mq,
            "-o",
            out.to_str().unwrap(),
            flag,
            value,
        ]);
        assert!(!ok && stderr.contains(expect), "{flag} {value}: {stderr}");
        assert!(!out.exists());
    }
    // A file whose grades are all 0.
    let flat = dir.path().join("flat.txt");
    std::fs::write(
        &flat,
        "0 qid:1 1:0.5 2:1\n0 qid:1 1:0.2 2:3\n0 qid:2 1:0.1 2:1\n",
    )
    .unwrap();
    let (ok, _, stderr) = distillrank(&[
        "data",
        "simulate-logs",
        flat.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        !ok && stderr.contains("no document has a grade above 0"),
        "{stderr}"
    );
    assert!(stderr.contains("flat.txt"), "{stderr}");
}

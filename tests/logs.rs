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
    let written = read(&train);
    let original = read(std::path::Path::new(&format!("{y}/rank.train")));
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
    assert!(!ok && stderr.contains("has no logs ("), "{stderr}");

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

/// A LETOR file read back as the library reads it.
fn read(path: &std::path::Path) -> Dataset {
    distillrank::data::letor::read_letor_file(
        path,
        None,
        &distillrank::data::letor::ReadOptions::default(),
    )
    .unwrap()
}

/// `data aggregate-logs FILES --impressions LOGS -o OUT`: whether it succeeded, its output and
/// its errors.
fn aggregate(files: &[&str], impressions: &str, out: &std::path::Path) -> (bool, String, String) {
    let out = out.to_str().unwrap();
    let args = [
        &["data", "aggregate-logs"][..],
        files,
        &["--impressions", impressions, "-o", out],
    ];
    distillrank(&args.concat())
}

/// A small LETOR file of two queries and a user's log of three sessions with conversions and
/// dwell, whose sums are written out by hand below.
const TWO_QUERIES: &str = "2 qid:1 1:0.5 2:0.1\n0 qid:1 1:0.1 2:0.9\n1 qid:1 1:0.3 2:0.4\n1 qid:2 1:0.2 2:0.2\n0 qid:2 1:0.7 2:0.1\n";
const TWO_QUERIES_LOG: &str = "qid\tsession\tposition\tdoc\tclick\tconversion\tdwell
1\t0\t1\t1\t1\t1\t30.5
1\t0\t2\t3\t0\t0\t0
1\t0\t3\t2\t1\t0\t2
1\t1\t1\t3\t1\t0\t10
1\t1\t2\t1\t0\t0\t0
2\t0\t1\t2\t0\t0\t0
2\t0\t2\t1\t1\t1\t5
";

#[test]
fn aggregate_logs_sums_a_users_conversions_and_dwell_into_the_log_columns() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.txt");
    let log = dir.path().join("log.tsv");
    std::fs::write(&train, TWO_QUERIES).unwrap();
    std::fs::write(&log, TWO_QUERIES_LOG).unwrap();
    let out = dir.path().join("logged.txt");
    let (ok, _, stderr) = aggregate(&[train.to_str().unwrap()], log.to_str().unwrap(), &out);
    assert!(ok, "{stderr}");
    let written = read(&out);
    assert_eq!(written.n_features, 2 + LOG_COLUMNS);
    // impressions, clicks, CTR, mean displayed rank, mean dwell of the clicks (s), conversions.
    let expected: [[f32; 6]; 5] = [
        [2.0, 1.0, 0.5, 1.5, 30.5, 1.0],
        [1.0, 1.0, 1.0, 3.0, 2.0, 0.0],
        [2.0, 1.0, 0.5, 1.5, 10.0, 0.0],
        [1.0, 1.0, 1.0, 2.0, 5.0, 1.0],
        // Shown once at rank 1, never clicked.
        [1.0, 0.0, 0.0, 1.0, 0.0, 0.0],
    ];
    for (d, row) in expected.iter().enumerate() {
        assert_eq!(&written.row(d)[2..], row, "document {d}");
    }
    let sidecar: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("logged.txt.logs.json")).unwrap())
            .unwrap();
    assert_eq!(sidecar["label_column"], 8);
    assert_eq!(sidecar["impressions"], "logged.txt.clicks");
    // The clicks by rank beside it carry the sums per document, read back whole.
    let table =
        distillrank::data::logs::read_click_table(&dir.path().join("logged.txt.clicks")).unwrap();
    assert_eq!(table.conversions, Some(vec![1, 0, 0, 1, 0]));
    assert_eq!(table.dwell_ms, Some(vec![30_500, 2_000, 10_000, 5_000, 0]));
    assert_eq!(table.impressions[..3], [1, 1, 0]);

    // A second file read from the same log: its document never shown has the mean rank of one
    // never shown in the training file (the deepest rank of all, 3, plus 1), not its own file's.
    let vali = dir.path().join("vali.txt");
    std::fs::write(&vali, "1 qid:3 1:0.5\n0 qid:3 1:0.1\n").unwrap();
    let mut both = TWO_QUERIES_LOG.to_string();
    both += "3\t0\t1\t1\t1\t0\t4\n";
    std::fs::write(&log, both).unwrap();
    let folder = dir.path().join("both");
    std::fs::create_dir(&folder).unwrap();
    let files = [train.to_str().unwrap(), vali.to_str().unwrap()];
    let (ok, _, stderr) = aggregate(&files, log.to_str().unwrap(), &folder);
    assert!(ok, "{stderr}");
    let vali = read(&folder.join("vali.txt"));
    assert_eq!(&vali.row(0)[2..], &[1.0, 1.0, 1.0, 1.0, 4.0, 0.0]);
    assert_eq!(&vali.row(1)[2..], &[0.0, 0.0, 0.0, 4.0, 0.0, 0.0]);
}

#[test]
fn aggregate_logs_on_the_simulators_own_log_gives_its_columns_and_compare_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let y = &letor_data::data("lightgbm_rank");
    let simulated = dir.path().join("simulated");
    let (ok, _, stderr) = distillrank(&[
        "data",
        "simulate-logs",
        &format!("{y}/rank.train"),
        "-o",
        simulated.to_str().unwrap(),
        "--sessions",
        "30",
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
    // The simulator's impressions log with each click's outcome a user's log would hold: a
    // conversion on clicks of grade 2 and up, a dwell of 1.5 (grade + 1) seconds.
    let original = read(std::path::Path::new(&format!("{y}/rank.train")));
    let groups: std::collections::HashMap<u64, usize> = original
        .qids
        .iter()
        .enumerate()
        .map(|(g, &q)| (q, g))
        .collect();
    let text = std::fs::read_to_string(dir.path().join("simulated.impressions.tsv"))
        .unwrap_or_else(|_| {
            std::fs::read_to_string(format!("{}.impressions.tsv", simulated.display())).unwrap()
        });
    let mut log = String::from("qid\tsession\tposition\tdoc\tclick\tconversion\tdwell\n");
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let g = groups[&f[0].parse::<u64>().unwrap()];
        let d = original.group(g).start + f[3].parse::<usize>().unwrap() - 1;
        let grade = original.grades[d];
        let click = f[4] == "1";
        let conversion = u8::from(click && grade >= 2);
        let dwell = if click {
            1.5 * (grade as f64 + 1.0)
        } else {
            0.0
        };
        log += &format!(
            "{}\t{}\t{}\t{}\t{}\t{conversion}\t{dwell}\n",
            f[0], f[1], f[2], f[3], f[4]
        );
    }
    let log_path = dir.path().join("user.tsv");
    std::fs::write(&log_path, log).unwrap();
    let logged = dir.path().join("logged");
    let (ok, stdout, stderr) = aggregate(
        &[&format!("{y}/rank.train")],
        log_path.to_str().unwrap(),
        &logged,
    );
    assert!(ok, "{stderr}");
    assert!(stdout.contains("306 conversions (y)"), "{stdout}");
    let (sim, agg) = (read(&simulated), read(&logged));
    assert_eq!(agg.n_features, 306);
    for d in 0..agg.n_docs() {
        // Impressions, clicks, CTR and mean position: the simulator's own, from the same log.
        assert_eq!(agg.row(d)[..304], sim.row(d)[..304], "document {d}");
        let (clicks, grade) = (agg.row(d)[301], original.grades[d]);
        let dwell = if clicks > 0.0 {
            1.5 * (grade as f32 + 1.0)
        } else {
            0.0
        };
        assert_eq!(agg.row(d)[304], dwell, "document {d}'s dwell");
        let conversions = if grade >= 2 { clicks } else { 0.0 };
        assert_eq!(agg.row(d)[305], conversions, "document {d}'s conversions");
    }
    // The comparison reads the summed logs as it reads simulated ones, the click methods too.
    let out = dir.path().join("compare");
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--train",
        logged.to_str().unwrap(),
        "--privileged",
        "logs",
        "--methods",
        "no-distillation,pfd,naive,ips-estimated",
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
    let results = std::fs::read_to_string(out.join("results.json")).unwrap();
    assert!(
        results.contains("logs summed by data aggregate-logs"),
        "{results}"
    );
    let results: serde_json::Value = serde_json::from_str(&results).unwrap();
    assert_eq!(results["preparation"]["label_column"], 306);
    assert!(results["methods"]["ips-estimated"]["graded_ndcg@8"]["mean"]
        .as_f64()
        .is_some());
    // A test file without the logs is sent to the command that wrote the training file's.
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--train",
        logged.to_str().unwrap(),
        "--test",
        &format!("{y}/rank.test"),
        "--privileged",
        "logs",
        "--seeds",
        "1",
        "--quiet",
    ]);
    assert!(
        !ok && stderr.contains("has no logs (")
            && stderr
                .contains("distillrank data aggregate-logs TRAIN VALID TEST --impressions LOG"),
        "{stderr}"
    );
}

#[test]
fn aggregate_logs_refuses_outcomes_that_cannot_follow_the_clicks() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.txt");
    std::fs::write(&train, TWO_QUERIES).unwrap();
    let header = "qid\tsession\tposition\tdoc\tclick\tconversion\tdwell";
    let cases: [(String, &str); 8] = [
        (
            format!("{header}\n1\t0\t1\t1\t0\t1\t0\n"),
            "line 2: conversion 1 on a row whose click is 0",
        ),
        (
            format!("{header}\n1\t0\t1\t1\t0\t0\t3\n"),
            "line 2: dwell 3 on a row whose click is 0",
        ),
        (
            format!("{header}\n1\t0\t1\t1\t1\t0\t-1\n"),
            "line 2: dwell '-1': expected a click's dwell time in seconds",
        ),
        (
            format!("{header}\n1\t0\t1\t1\t1\t0\t100000\n"),
            "line 2: dwell '100000'",
        ),
        (
            format!("{header}\n1\t0\t1\t1\t1\t2\t1\n"),
            "line 2: conversion '2': expected 0 or 1",
        ),
        (
            format!("{header}\n1\t0\t1\t1\t1\t1\tNaN\n"),
            "line 2: dwell 'NaN'",
        ),
        (
            "qid\tsession\tposition\tdoc\tclick\tconversion\tconversion\n1\t0\t1\t1\t1\t1\t1\n"
                .into(),
            "line 1: the header names conversion twice",
        ),
        (
            "qid\tsession\tposition\tdoc\tclick\tpurchases\n1\t0\t1\t1\t1\t1\n".into(),
            "line 1: the header's column 'purchases': expected one of list_log_probability, conversion, dwell",
        ),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let log = dir.path().join(format!("log{i}.tsv"));
        std::fs::write(&log, text).unwrap();
        let out = dir.path().join(format!("out{i}.txt"));
        let (ok, _, stderr) = aggregate(&[train.to_str().unwrap()], log.to_str().unwrap(), &out);
        assert!(!ok, "{text}");
        assert!(
            stderr.contains(&format!("log{i}.tsv, {expected}")),
            "{text}: {stderr}"
        );
    }
    // Two logs for one file, and a click table whose conversions do not fit its documents.
    let good = dir.path().join("good.tsv");
    std::fs::write(&good, TWO_QUERIES_LOG).unwrap();
    let both = format!("{},{}", good.display(), good.display());
    let (ok, _, stderr) = aggregate(
        &[train.to_str().unwrap()],
        &both,
        &dir.path().join("two.txt"),
    );
    assert!(
        !ok && stderr.contains("--impressions names 2 logs for 1 files"),
        "{stderr}"
    );
    let table = dir.path().join("bad.clicks");
    let mut bytes =
        br#"{"shown":1,"sessions":1,"impressions":[],"clicks":[],"examination":null,"group_offsets":[0,3,5],"qids":[1,2],"conversions":[1,0]}"#
            .to_vec();
    bytes.push(b'\n');
    bytes.extend(std::iter::repeat_n(0u8, 5 * 8));
    std::fs::write(&table, bytes).unwrap();
    let out = dir.path().join("table.txt");
    let (ok, _, stderr) = aggregate(&[train.to_str().unwrap()], table.to_str().unwrap(), &out);
    assert!(
        !ok && stderr.contains("bad.clicks: 2 conversions for 5 documents"),
        "{stderr}"
    );
    // A table whose offsets go backwards is refused by name, not indexed past its counts.
    let mut bytes =
        br#"{"shown":1,"sessions":1,"impressions":[],"clicks":[],"examination":null,"group_offsets":[0,3,2,5],"qids":[1,2]}"#
            .to_vec();
    bytes.push(b'\n');
    bytes.extend(std::iter::repeat_n(0u8, 5 * 8));
    std::fs::write(&table, bytes).unwrap();
    let (ok, _, stderr) = aggregate(&[train.to_str().unwrap()], table.to_str().unwrap(), &out);
    assert!(
        !ok && stderr.contains("bad.clicks: group_offsets must start at 0"),
        "{stderr}"
    );
}

#[test]
fn aggregate_logs_writes_over_none_of_its_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let train = dir.path().join("train.txt");
    std::fs::write(&train, TWO_QUERIES).unwrap();
    let log = dir.path().join("log.tsv");
    std::fs::write(&log, TWO_QUERIES_LOG).unwrap();
    let first = dir.path().join("first.txt");
    let (ok, _, stderr) = aggregate(&[train.to_str().unwrap()], log.to_str().unwrap(), &first);
    assert!(ok, "{stderr}");
    // Every file the command writes (the copy, its sidecar, the click table beside it) against
    // every file it reads (the data and the log), both before a byte is written.
    let table = dir.path().join("first.txt.clicks");
    let before = std::fs::read(&table).unwrap();
    let cases = [
        // The click table read back as the log, and written over by the run's own table.
        (
            train.clone(),
            table.clone(),
            first.clone(),
            "first.txt.clicks",
        ),
        // The log written over by the copy.
        (train.clone(), log.clone(), log.clone(), "log.tsv"),
        // The data file written over by the copy.
        (train.clone(), log.clone(), train.clone(), "train.txt"),
    ];
    for (file, impressions, out, read) in cases {
        let (ok, _, stderr) = aggregate(
            &[file.to_str().unwrap()],
            impressions.to_str().unwrap(),
            &out,
        );
        assert!(
            !ok && stderr.contains("this command reads") && stderr.contains(read),
            "{stderr}"
        );
    }
    assert_eq!(std::fs::read(&table).unwrap(), before);
    assert_eq!(std::fs::read(&train).unwrap(), TWO_QUERIES.as_bytes());
    assert_eq!(std::fs::read(&log).unwrap(), TWO_QUERIES_LOG.as_bytes());
    // `-o folder/` with one file names a folder, created for it.
    let folder = dir.path().join("logged");
    let (ok, _, stderr) = aggregate(
        &[train.to_str().unwrap()],
        log.to_str().unwrap(),
        std::path::Path::new(&format!("{}/", folder.display())),
    );
    assert!(ok, "{stderr}");
    assert_eq!(read(&folder.join("train.txt")).n_features, 2 + LOG_COLUMNS);
    assert!(folder.join("train.txt.clicks").is_file());
}

//! The `distillrank` binary, end to end.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/letor_data.rs"]
mod letor_data;
use std::path::Path;

#[path = "common/cli.rs"]
mod cli_run;
use cli_run::distillrank;

#[test]
fn data_stats_json_on_mq2008_and_lightgbm() {
    let (ok, stdout, stderr) = distillrank(&[
        "data",
        "stats",
        &letor_data::data("mq2008/Fold1/train.txt"),
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (
            v["queries"].as_u64(),
            v["docs"].as_u64(),
            v["features"].as_u64()
        ),
        (Some(471), Some(9630), Some(46))
    );
    assert_eq!(
        v["grades"],
        serde_json::json!({"0": 7820, "1": 1223, "2": 587})
    );

    let (ok, stdout, stderr) = distillrank(&[
        "data",
        "stats",
        &letor_data::data("lightgbm_rank/rank.train"),
        "--query",
        &letor_data::data("lightgbm_rank/rank.train.query"),
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        (v["queries"].as_u64(), v["docs"].as_u64()),
        (Some(201), Some(3005))
    );
}

#[test]
fn malformed_input_exits_with_the_line_and_no_panic() {
    let (ok, _, stderr) = distillrank(&["data", "stats", "tests/malformed/value_nan.txt"]);
    assert!(!ok);
    assert!(
        stderr.contains("tests/malformed/value_nan.txt:3:11") && stderr.contains("not finite"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn synth_cache_train_save_eval_predict() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    let (ok, stdout, stderr) = distillrank(&[
        "data",
        "synth",
        "--queries",
        "120",
        "-o",
        &d("synth.txt"),
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let z: Vec<String> = v["privileged_columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.to_string())
        .collect();

    let (ok, _, stderr) = distillrank(&["data", "cache", &d("synth.txt"), "--quiet"]);
    assert!(ok, "{stderr}");
    assert!(Path::new(&d("synth.txt.drcache")).exists());

    let privileged = format!("cols:{}", z.join(","));
    let (ok, stdout, stderr) = distillrank(&[
        "train",
        "--train",
        &d("synth.txt"),
        "--privileged",
        &privileged,
        "--tau-target",
        "3.5",
        "--epochs",
        "2",
        "--widths",
        "32,16",
        "--save",
        &d("student"),
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["history"].as_array().unwrap().len(), 2);
    assert!(v["best_valid_ndcg"].as_f64().unwrap() > 0.0);

    let (ok, stdout, stderr) =
        distillrank(&["eval", "--model", &d("student"), &d("synth.txt"), "--json"]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let ndcg8 = v["metrics"]["ndcg"][3][1].as_f64().unwrap();
    assert!(ndcg8 > 0.0 && ndcg8 <= 1.0);

    let (ok, _, stderr) = distillrank(&[
        "predict",
        "--model",
        &d("student"),
        &d("synth.txt"),
        "--run",
        &d("run.trec"),
    ]);
    assert!(ok, "{stderr}");
    let run = std::fs::read_to_string(d("run.trec")).unwrap();
    let first: Vec<&str> = run.lines().next().unwrap().split(' ').collect();
    assert_eq!(
        (first[0], first[1], first[3], first[5]),
        ("1", "Q0", "1", "distillrank")
    );

    let (ok, stdout, _) = distillrank(&["predict", "--model", &d("student"), &d("synth.txt")]);
    assert!(ok);
    assert_eq!(stdout.lines().count(), run.lines().count());

    // The same scores from the GPU (lavapipe in CI), unless the GPU tests are switched off.
    if std::env::var("DISTILLRANK_NO_GPU").is_ok_and(|v| v == "1") {
        return;
    }
    let (ok, on_gpu, stderr) = distillrank(&[
        "predict",
        "--model",
        &d("student"),
        &d("synth.txt"),
        "--backend",
        "gpu",
    ]);
    assert!(ok, "{stderr}");
    let parse = |text: &str| -> Vec<f64> { text.lines().map(|l| l.parse().unwrap()).collect() };
    for (g, c) in parse(&on_gpu).iter().zip(parse(&stdout)) {
        assert!(
            (g - c).abs() <= 1e-4 + 1e-3 * c.abs(),
            "GPU score {g}, CPU {c}"
        );
    }
    let (ok, on_gpu, stderr) = distillrank(&[
        "eval",
        "--model",
        &d("student"),
        &d("synth.txt"),
        "--backend",
        "gpu",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&on_gpu).unwrap();
    let gpu_ndcg8 = v["metrics"]["ndcg"][3][1].as_f64().unwrap();
    assert!(
        (gpu_ndcg8 - ndcg8).abs() < 1e-3,
        "NDCG@8 {gpu_ndcg8} on the GPU, {ndcg8} on the CPU"
    );
}

#[test]
fn bad_options_are_refused_before_training() {
    for (args, fragment) in [
        (
            vec!["train", "--privileged", "cols:0"],
            "column 0: expected columns counted from 1",
        ),
        (
            vec!["train", "--privileged", "sideways:3"],
            "expected top:N",
        ),
        (vec!["train", "--epochs", "0"], "epochs"),
        // Above the open 0 of its range, and yet 0 in f32: nothing would train.
        (
            vec!["train", "--lr", "1e-46"],
            "below f32's smallest normal number",
        ),
        (
            vec!["train", "--train", "/nonexistent.txt"],
            "/nonexistent.txt",
        ),
        (
            vec!["train", "--objective", "auc-roc"],
            "unknown objective 'auc-roc'",
        ),
        (
            vec!["compare", "--objective", "recall-at-precision:1.5"],
            "recall-at-precision",
        ),
        (
            vec!["train", "--dual-rate-factor=-1", "--objective", "auc-pr"],
            "--dual-rate-factor",
        ),
        // A target that f32 holds as 0.
        (
            vec!["compare", "--objective", "tpr-at-fpr:1e-320"],
            "below 1 in f32, the precision training computes in",
        ),
        (
            vec!["train", "--privileged", "top:0"],
            "top:0 makes no feature privileged",
        ),
        // Text that reads as true or false is text where the flag takes text.
        (
            vec!["train", "--privileged", "true"],
            "privileged features 'true': expected top:N",
        ),
        // A switch given something else, in words.
        (
            vec!["compare", "--prepared-cache", "true,false"],
            "'--prepared-cache [<PREPARED_CACHE>]': string \"true,false\", expected true or false",
        ),
        // Several values where a flag takes one, in every command of the table's flags.
        (
            vec!["train", "--ensemble", "2,3"],
            "--ensemble: 2 values (2,3) where it takes one: expected a whole number in 1..=64",
        ),
        (
            vec!["compare", "--lr", "0.1,0.2"],
            "--lr: 2 values (0.1,0.2) where it takes one: expected a finite number in (0, 10]",
        ),
        (
            vec![
                "sweep", "--param", "alpha", "--values", "0.5", "--seeds", "1,2",
            ],
            "--seeds: 2 values (1,2) where it takes one",
        ),
    ] {
        let (ok, _, stderr) = distillrank(&args);
        assert!(!ok);
        assert!(stderr.contains(fragment), "{args:?}: {stderr}");
    }
}

#[test]
fn eval_with_binary_labels_reproduces_the_test_report_of_train() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m").display().to_string();
    let fold = letor_data::data("mq2008/Fold1/");
    let (train, valid, test) = (
        format!("{fold}train.txt"),
        format!("{fold}vali.txt"),
        format!("{fold}test.txt"),
    );
    let (ok, stdout, stderr) = distillrank(&[
        "train",
        "--train",
        &train,
        "--valid",
        &valid,
        "--test",
        &test,
        "--tau-target",
        "2.8",
        "--privileged",
        "top:10",
        "--epochs",
        "2",
        "--widths",
        "16,8",
        "--data-seed",
        "3",
        "--save",
        &model,
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let trained: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let (ok, stdout, stderr) = distillrank(&[
        "eval",
        "--model",
        &model,
        &test,
        "--labels",
        "binary",
        "--tau-target",
        "2.8",
        "--data-seed",
        "3",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let evaluated: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        trained["test"], evaluated["metrics"],
        "eval must score the file exactly as train's test split"
    );
    // Without the flags, the labelling the model records: the same labels. (Before, tau_target
    // came from the file's own largest grade and the data seed was 0.)
    let (ok, stdout, stderr) = distillrank(&[
        "eval", "--model", &model, &test, "--labels", "binary", "--json",
    ]);
    assert!(ok, "{stderr}");
    let recorded: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(trained["test"], recorded["metrics"]);
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{model}.json")).unwrap()).unwrap();
    assert_eq!(config["labelling"]["tau_target"], 2.8);
    assert_eq!(config["labelling"]["data_seed"], 3);
}

const TINY: [&str; 12] = [
    "--queries",
    "80",
    "--valid-queries",
    "40",
    "--test-queries",
    "40",
    "--widths",
    "16,8",
    "--epochs",
    "2",
    "--seeds",
    "2",
];

#[test]
fn compare_writes_report_json_csv_and_plots() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cmp").display().to_string();
    let mut args = vec![
        "compare",
        "--out",
        &out,
        "--quiet",
        "--methods",
        "no-distillation,self-distillation,gend,pfd,multi-teacher-pfd,ranking-distillation",
    ];
    args.extend(TINY);
    let (ok, stdout, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("| pfd |"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out}/results.json")).unwrap())
            .unwrap();
    for m in [
        "no-distillation",
        "self-distillation",
        "gend",
        "pfd",
        "multi-teacher-pfd",
        "ranking-distillation",
    ] {
        let ndcg8 = &json["methods"][m]["ndcg@8"];
        assert!(ndcg8["mean"].as_f64().unwrap() > 0.0, "{m}");
        assert!(ndcg8["std"].as_f64().unwrap() >= 0.0, "{m}");
        assert_eq!(ndcg8["per_seed"].as_array().unwrap().len(), 2, "{m}");
    }
    assert!(json["command"]
        .as_str()
        .unwrap()
        .starts_with("distillrank compare"));
    // Where the time went: the training steps' documents and seconds against the whole run.
    let t = &json["throughput"];
    let (training, end_to_end) = (
        t["training_seconds"].as_f64().unwrap(),
        t["end_to_end_seconds"].as_f64().unwrap(),
    );
    assert!(
        t["trained_docs"].as_f64().unwrap() > 0.0 && training > 0.0,
        "{t}"
    );
    // With jobs side by side the steps' seconds are summed over them: the threads' time is
    // the jobs times the run's.
    let jobs = t["jobs"].as_f64().unwrap();
    assert!(jobs >= 1.0 && training <= jobs * end_to_end, "{t}");
    let outside = t["outside_training"].as_f64().unwrap();
    assert!(
        (outside - (1.0 - training / (jobs * end_to_end))).abs() < 1e-9,
        "{t}"
    );
    assert!(stdout.contains("of training steps"), "{stdout}");
    let report = std::fs::read_to_string(format!("{out}/report.md")).unwrap();
    assert!(
        report.contains("| method | NDCG@1")
            && report.contains("## Reproduce")
            && report.contains("## Data")
    );
    let csv = std::fs::read_to_string(format!("{out}/results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 6 * 2);
    // The students are carried away: the PFD student scores the raw synthetic file.
    let synth = dir.path().join("synth.txt").display().to_string();
    assert!(distillrank(&["data", "synth", "--queries", "30", "-o", &synth]).0);
    let (ok, stdout, stderr) =
        distillrank(&["predict", "--model", &format!("{out}/students/pfd"), &synth]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.lines().count() > 30
            && stdout
                .lines()
                .all(|l| l.parse::<f32>().is_ok_and(f32::is_finite))
    );
    for svg in ["ndcg_per_epoch.svg", "loss_terms.svg"] {
        let text = std::fs::read_to_string(format!("{out}/{svg}")).unwrap();
        assert!(text.contains("<svg") && text.contains("pfd"), "{svg}");
    }
}

#[test]
fn sweep_writes_a_table_and_a_plot() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep").display().to_string();
    let mut args = vec![
        "sweep",
        "--param",
        "tau-target",
        "--values",
        "3.0,3.5",
        "--methods",
        "no-distillation,pfd",
        "--out",
        &out,
        "--quiet",
    ];
    args.extend(TINY);
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out}/sweep.json")).unwrap())
            .unwrap();
    let points = json["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    assert!(points[1]["methods"]["pfd"]["gain_percent"]
        .as_f64()
        .is_some());
    assert!(std::fs::read_to_string(format!("{out}/sweep.svg"))
        .unwrap()
        .contains("<svg"));
    // A higher tau_target leaves fewer positive training groups, and the table says how many.
    let positive = |p: &serde_json::Value| p["positive_groups"].as_u64().unwrap();
    assert!(positive(&points[1]) < positive(&points[0]), "{points:?}");
    assert!(std::fs::read_to_string(format!("{out}/sweep.md"))
        .unwrap()
        .contains("| positive training groups |"));
}

/// A sweep of methods that learn from clicks is on their verdict metric, the graded NDCG@8: its
/// table, csv, gains and plots, each gain that metric's over no distillation.
#[test]
fn a_click_sweep_is_on_the_graded_ndcg() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sweep").display().to_string();
    let args = [
        "sweep",
        "--param",
        "position-bias",
        "--values",
        "0,1",
        "--bundled",
        "mq2008",
        "--privileged",
        "logs",
        "--loss",
        "softmax",
        "--methods",
        "no-distillation,naive,ips",
        "--seeds",
        "2",
        "--epochs",
        "1",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--out",
        &out,
        "--quiet",
    ];
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out}/sweep.json")).unwrap())
            .unwrap();
    for point in json["points"].as_array().unwrap() {
        assert_eq!(point["metric"], "graded_ndcg@8");
        let graded = |m: &str| {
            point["methods"][m]["graded_ndcg@8"]["mean"]
                .as_f64()
                .unwrap()
        };
        let gain = point["methods"]["ips"]["gain_percent"].as_f64().unwrap();
        let want = 100.0 * (graded("ips") - graded("no-distillation")) / graded("no-distillation");
        assert!((gain - want).abs() < 1e-9, "{gain} against {want}");
        let sentences = point["sentences"].as_array().unwrap();
        assert!(!sentences.is_empty());
    }
    let csv = std::fs::read_to_string(format!("{out}/sweep.csv")).unwrap();
    assert!(
        csv.starts_with("param,value,method,graded_ndcg@8_mean,"),
        "{csv}"
    );
    let report = std::fs::read_to_string(format!("{out}/sweep.md")).unwrap();
    assert!(report.contains("| ips graded NDCG@8 |"), "{report}");
    for svg in ["sweep.svg", "sweep_gain.svg"] {
        let text = std::fs::read_to_string(format!("{out}/{svg}")).unwrap();
        assert!(text.contains("graded NDCG@8"), "{svg}");
    }
}

#[test]
fn bad_experiments_are_refused_before_training() {
    for (args, fragment) in [
        (vec!["compare", "--alpha", "1.5"], "alpha"),
        (
            vec!["compare", "--methods", "pfd,bogus"],
            "unknown method 'bogus'",
        ),
        (
            vec!["compare", "--privileged", "cols:999"],
            "privileged column 999 does not exist",
        ),
        (
            vec!["compare", "--tau-target", "40"],
            "no positive training groups",
        ),
        (
            vec!["compare", "--privileged", "top:106"],
            "at least one feature must stay regular",
        ),
        (
            vec!["compare", "--teacher-temperature", "1e-7"],
            "expected a finite number in [0.000001, 1,000,000]",
        ),
        (
            vec!["sweep", "--param", "alpha", "--values", "0.5,1.0"],
            "--values: alpha = 1: expected a finite number in (0, 1)",
        ),
        (
            vec!["sweep", "--param", "alpha", "--values", "0.3,0.5,0.30"],
            "--values: alpha = 0.3 is given twice (values 1 and 3)",
        ),
        (
            vec![
                "sweep",
                "--param",
                "query-spread",
                "--values",
                "0,1",
                "--train",
                "/nonexistent.txt",
            ],
            "query-spread sweeps the synthetic data",
        ),
    ] {
        // Small synthetic data: each refusal must come before training, not after a long one.
        // (Files take no generator's flags: those are refused beside them.)
        let mut args = args;
        if !args.contains(&"--train") {
            args.extend([
                "--queries",
                "60",
                "--valid-queries",
                "20",
                "--test-queries",
                "20",
            ]);
        }
        let (ok, _, stderr) = distillrank(&args);
        assert!(!ok, "{args:?}");
        assert!(stderr.contains(fragment), "{args:?}: {stderr}");
    }
}

#[test]
fn a_split_of_one_informative_column_is_refused_without_advice_that_cannot_work() {
    // One informative column among constant ones: it cannot be both regular and privileged, so
    // no `top:` split is offered (30% of one column would be top:0, itself refused).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("one.txt");
    let rows: String = (0..40)
        .map(|i| format!("{} qid:{} 1:{} 2:1 3:2\n", i % 3, i / 10 + 1, i % 7))
        .collect();
    std::fs::write(&file, rows).unwrap();
    let (ok, _, stderr) = distillrank(&[
        "train",
        "--train",
        file.to_str().unwrap(),
        "--privileged",
        "cols:1",
        "--training-labels",
        "grades",
        "--min-group-size",
        "1",
        "--epochs",
        "1",
        "--backend",
        "cpu",
        "--quiet",
    ]);
    assert!(
        !ok && stderr.contains("one informative column cannot be both regular and privileged")
            && !stderr.contains("top:0"),
        "{stderr}"
    );
    // A split by correlation keeps that column regular, so PFD's refusal says why there is no
    // privileged feature, under the default share and any other.
    let out = dir.path().join("out").display().to_string();
    for split in [&[][..], &["--privileged", "top:90%"]] {
        let mut args = vec!["compare", "--train", file.to_str().unwrap(), "--methods"];
        args.extend(["no-distillation,pfd", "--training-labels", "grades"]);
        args.extend(["--min-group-size", "1", "--epochs", "1", "--seeds", "1"]);
        args.extend(["--backend", "cpu", "--quiet", "--out", &out]);
        args.extend(split);
        let (ok, _, stderr) = distillrank(&args);
        assert!(
            !ok && stderr.contains(
                "PFD needs privileged features; the data have none: column 1 is the only one that varies on the training split, and the student keeps it in x"
            ),
            "{split:?}: {stderr}"
        );
    }
}

#[test]
fn a_run_away_loss_stops_the_global_objectives_as_it_stops_a_comparison() {
    // Every loss stays finite while it grows by billions: the run stops and says so.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    let (ok, _, stderr) = distillrank(&[
        "objectives",
        "--objectives",
        "auc-pr",
        "--seeds",
        "1",
        "--epochs",
        "3",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--train-examples",
        "2000",
        "--valid-examples",
        "500",
        "--test-examples",
        "500",
        "--features",
        "10",
        "--lr",
        "10",
        "--dual-rate-factor",
        "1e9",
        "--out",
        &out,
    ]);
    assert!(
        !ok && stderr.contains("training diverged at epoch 1")
            && stderr.contains("the auc-pr loss reached")
            && stderr.contains("over a million times its first value"),
        "{stderr}"
    );
    // A ranker trained on the same objective, by the same rule.
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--queries",
        "60",
        "--valid-queries",
        "20",
        "--test-queries",
        "20",
        "--epochs",
        "3",
        "--seeds",
        "1",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--methods",
        "no-distillation",
        "--objective",
        "auc-pr",
        "--lr",
        "10",
        "--dual-rate-factor",
        "1e9",
        "--quiet",
        "--out",
        &format!("{out}/compare"),
    ]);
    assert!(
        !ok && stderr.contains("training diverged")
            && stderr.contains("over a million times its first value"),
        "{stderr}"
    );
}

#[test]
fn a_loss_a_million_times_its_first_has_run_away() {
    use distillrank::engine::Runaway;
    // The first loss counts as 1 at least: a bound of a million.
    let mut runaway = Runaway::default();
    assert_eq!(runaway.check(0.01), None);
    assert_eq!(runaway.check(9.9e5), None);
    let how = runaway.check(-1.1e6).expect("run away");
    assert!(
        how.contains("reached -1.100e6") && how.contains("first value 0.0100"),
        "{how}"
    );
    // A negative first loss (F-beta's) counts by its size.
    let mut runaway = Runaway::default();
    assert_eq!(runaway.check(-5.0), None);
    assert_eq!(runaway.check(4.9e6), None);
    assert!(runaway.check(5.1e6).is_some());
}

#[test]
fn cli_objectives_writes_results_with_the_required_keys() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    let (ok, stdout, stderr) = distillrank(&[
        "objectives",
        "--objectives",
        "logloss,auc-pr:5,recall-at-precision:0.7",
        "--seeds",
        "2",
        "--epochs",
        "2",
        "--train-examples",
        "3000",
        "--valid-examples",
        "1500",
        "--test-examples",
        "1500",
        "--positive-rate",
        "0.05",
        "--out",
        &out,
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let printed: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let text = std::fs::read_to_string(dir.path().join("results.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(printed["objectives"], v["objectives"]);
    for name in ["logloss", "auc-pr:5", "recall-at-precision:0.7"] {
        let o = &v["objectives"][name];
        let mean = o["auc_pr"]["mean"].as_f64().unwrap();
        let per_seed: Vec<f64> = o["auc_pr"]["per_seed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert_eq!(per_seed.len(), 2, "{name}");
        assert!(
            (mean - (per_seed[0] + per_seed[1]) / 2.0).abs() < 1e-12,
            "{name}"
        );
        assert!(o["auc_pr"]["std"].as_f64().unwrap() >= 0.0);
        for key in [
            "auc_roc",
            "recall_at_precision",
            "precision_at_recall",
            "f1",
            "accuracy",
        ] {
            assert!(o[key]["mean"].as_f64().is_some(), "{name}.{key}");
        }
        // The multipliers' trajectories: per seed, per epoch, one value per multiplier.
        let lambdas = o["lambdas"].as_array().unwrap();
        assert_eq!(lambdas.len(), 2);
        let width = lambdas[0][0].as_array().unwrap().len();
        assert_eq!(
            width,
            [0, 5, 1][["logloss", "auc-pr:5", "recall-at-precision:0.7"]
                .iter()
                .position(|n| *n == name)
                .unwrap()],
            "{name}"
        );
    }
    let constraint = &v["objectives"]["recall-at-precision:0.7"]["constraint"];
    assert_eq!(constraint["seeds"], 2);
    assert_eq!(constraint["valid"][0]["quantity"], "precision");
    assert!(v["objectives"]["logloss"]["constraint"].is_null());
    let report = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(
        report.contains("objectives --objectives logloss,auc-pr:5"),
        "{report}"
    );
    let csv = std::fs::read_to_string(dir.path().join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 2);
    for plot in ["lambdas.svg", "valid_auc_pr.svg"] {
        let svg = std::fs::read_to_string(dir.path().join(plot)).unwrap();
        assert!(svg.starts_with("<svg") || svg.contains("<svg"), "{plot}");
    }
}

#[test]
fn cli_objectives_rejects_bad_options_without_panicking() {
    for (args, needle) in [
        (
            &["objectives", "--objectives", "recall-at-precision:1.5"][..],
            "strictly between 0 and 1",
        ),
        (
            &["objectives", "--objectives", "logloss,logloss"][..],
            "listed twice",
        ),
        (
            &["objectives", "--dual-rate-factor=-1"][..],
            "--dual-rate-factor",
        ),
        (
            &["objectives", "--train", "tests/malformed/value_nan.txt"][..],
            "value 'nan' is not finite",
        ),
        (&["objectives", "--seeds", "0"][..], "--seeds"),
    ] {
        let (ok, _, stderr) = distillrank(args);
        assert!(!ok, "{args:?}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// An objectives `--setup` file's refusals name its fields, as `compare --setup`'s do, not the
/// flags it does not have: under `objectives.` in a whole setup document (as `objectives` writes
/// it), at the top in the section alone.
#[test]
fn an_objectives_setup_file_is_refused_in_its_own_fields() {
    let dir = tempfile::tempdir().unwrap();
    let files = serde_json::json!({"files": {"train": "x.txt", "test_query": "t.query"}});
    let cases = [
        (
            serde_json::json!({"objectives": {"epochs": 0}}),
            "setup field objectives.epochs = 0",
        ),
        (
            serde_json::json!({"objectives": {"data": files}}),
            "objectives.data.files.test_query gives the group sizes of the objectives.data.files.test file",
        ),
        (
            serde_json::json!({"objectives": ["logloss"], "data": files}),
            "--setup SETUP: data.files.test_query gives the group sizes of the data.files.test file",
        ),
        // A comparison's field of a whole document is named as itself, not as the objectives'
        // field of the same flag.
        (
            serde_json::json!({"epochs": 0, "objectives": {"epochs": 1}}),
            "setup field epochs = 0",
        ),
    ];
    for (document, words) in cases {
        let path = dir.path().join("setup.json");
        std::fs::write(&path, document.to_string()).unwrap();
        let setup = path.display().to_string();
        let out = dir.path().join("out").display().to_string();
        let (ok, _, stderr) = distillrank(&["objectives", "--setup", &setup, "--out", &out]);
        let stderr = stderr.replace(&setup, "SETUP");
        assert!(!ok && stderr.contains(words), "{document}: {stderr}");
        assert!(
            !stderr.contains(" (--")
                && !stderr.contains("--test")
                && !stderr.contains(" (objectives."),
            "{stderr}"
        );
    }
}

#[test]
fn cli_objectives_reads_letor_documents_with_binary_labels() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    let f = letor_data::data("mq2008/Fold1");
    let (ok, stdout, stderr) = distillrank(&[
        "objectives",
        "--train",
        &format!("{f}/train.txt"),
        "--valid",
        &format!("{f}/vali.txt"),
        "--test",
        &format!("{f}/test.txt"),
        "--label-threshold",
        "2",
        "--objectives",
        "logloss,recall-at-precision:0.5",
        "--seeds",
        "1",
        "--epochs",
        "3",
        "--out",
        &out,
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // Every document is an example, positive when its grade is 2.
    assert_eq!(v["examples"]["train"], serde_json::json!([9630, 587]));
    assert_eq!(v["examples"]["valid"], serde_json::json!([2707, 167]));
    assert_eq!(v["examples"]["test"], serde_json::json!([2874, 177]));
    for name in ["logloss", "recall-at-precision:0.5"] {
        let auc_pr = v["objectives"][name]["auc_pr"]["mean"].as_f64().unwrap();
        // Above a random ranking, whose average precision is the positive rate (6%).
        assert!(auc_pr > 0.12, "{name}: test AUC-PR {auc_pr}");
    }
}

#[test]
fn bench_adapters_lists_every_adapter_and_says_why_there_is_no_gpu() {
    let out = cli_run::command()
        .args(["bench", "adapters", "--json"])
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let adapters = v["adapters"].as_array().unwrap();
    let hardware = adapters.iter().any(|a| a["software"] == false);
    assert_eq!(v["hardware"], hardware);
    // Without a hardware adapter the report says why, in words; with one it says nothing.
    assert_eq!(v["why_no_gpu"].is_string(), !hardware, "{v}");
    for a in adapters {
        assert!(a["label"]
            .as_str()
            .unwrap()
            .ends_with(&format!("({})", a["backend"].as_str().unwrap())));
    }
}

#[test]
fn an_adapter_name_that_matches_nothing_is_an_error_naming_the_adapters() {
    let out = cli_run::command()
        .args([
            "bench",
            "train",
            "--backend",
            "gpu",
            "--steps",
            "1",
            "--warmup",
            "0",
        ])
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .env("DISTILLRANK_ADAPTER", "no such adapter 42")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("DISTILLRANK_ADAPTER=no such adapter 42 names none of the adapters"),
        "{stderr}"
    );
}

/// A comparison's `setup.json` runs again with `compare --setup`: the same setup, the same test
/// NDCG for every method. The first run is the bundled MQ2008 (the page's real data); a training
/// file alone gets its test split held out of its queries, as on the page.
#[test]
fn compare_setup_json_reproduces_the_run_that_wrote_it() {
    let dir = tempfile::tempdir().unwrap();
    let (first, again) = (dir.path().join("first"), dir.path().join("again"));
    let small = [
        "--methods",
        "no-distillation,pfd",
        "--seeds",
        "1",
        "--epochs",
        "2",
        "--widths",
        "16",
        "--backend",
        "cpu",
        "--quiet",
    ];
    let mut args = vec![
        "compare",
        "--bundled",
        "mq2008",
        "--tau-target",
        "2.8",
        "--privileged",
        "top:10",
        "--out",
        first.to_str().unwrap(),
    ];
    args.extend(small);
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    let setup_path = first.join("setup.json");
    let setup: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&setup_path).unwrap()).unwrap();
    assert_eq!(setup["data"]["source"], "mq2008");
    assert_eq!(setup["epochs"], 2);
    let report = std::fs::read_to_string(first.join("report.md")).unwrap();
    assert!(
        report.contains("distillrank compare --bundled mq2008"),
        "the report names the setup's command"
    );
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--setup",
        setup_path.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
    let results = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
    };
    let (a, b) = (results(&first), results(&again));
    assert_eq!(a["setup"], b["setup"]);
    for method in ["no-distillation", "pfd"] {
        let ndcg = &a["methods"][method]["ndcg@8"]["mean"];
        assert!(ndcg.as_f64().is_some(), "{method}: {ndcg}");
        assert_eq!(ndcg, &b["methods"][method]["ndcg@8"]["mean"], "{method}");
    }

    // A training file alone: 20% of its queries become the test split.
    let held = dir.path().join("held");
    let train = letor_data::data("mq2008/Fold1/train.txt");
    let mut args = vec![
        "compare",
        "--train",
        &train,
        "--tau-target",
        "2.8",
        "--privileged",
        "top:10",
        "--out",
        held.to_str().unwrap(),
    ];
    args.extend(small);
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    let report = std::fs::read_to_string(held.join("report.md")).unwrap();
    assert!(
        report.contains("test split") && report.contains("held out"),
        "{report}"
    );
}

/// `bench profile` takes the CPU engine's step apart: four phases whose shares sum to 1, with the
/// products' GFLOP/s where they run.
#[test]
fn bench_profile_splits_the_cpu_step_into_its_phases() {
    let (ok, stdout, stderr) = distillrank(&[
        "bench",
        "profile",
        "--steps",
        "3",
        "--warmup",
        "1",
        "--features",
        "12",
        "--widths",
        "16,8",
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let phases = v["phases"].as_array().unwrap();
    let names: Vec<&str> = phases
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["forward", "loss", "backward", "adam"]);
    let shares: f64 = phases.iter().map(|p| p["share"].as_f64().unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
    for p in &phases[..] {
        let gflops = &p["gflops"];
        match p["phase"].as_str().unwrap() {
            "forward" | "backward" => assert!(gflops.as_f64().unwrap() > 0.0, "{p}"),
            _ => assert!(gflops.is_null(), "{p}"),
        }
    }
    assert!(v["forward_products_alone_gflops"].as_f64().unwrap() > 0.0);
}

/// `compare --jobs 1` and `--jobs 2` give the same results, number for number: every method's
/// per-seed figures, the per-query NDCG@8 and the paired tests (each job depends only on its
/// method and seed).
#[test]
fn compare_gives_the_same_results_for_any_number_of_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let results: Vec<serde_json::Value> = ["1", "2"]
        .iter()
        .map(|jobs| {
            let out = dir.path().join(format!("jobs-{jobs}"));
            let (ok, _, stderr) = distillrank(&[
                "compare",
                "--queries",
                "200",
                "--valid-queries",
                "60",
                "--test-queries",
                "80",
                "--regular",
                "20",
                "--epochs",
                "2",
                "--seeds",
                "3",
                "--widths",
                "16,8",
                "--methods",
                "no-distillation,self-distillation,gend,pfd,multi-teacher-pfd,ranking-distillation",
                // Ranking Distillation's teacher is then self-distillation's: one job trains both.
                "--rd-teacher-factor",
                "1",
                "--backend",
                "cpu",
                "--quiet",
                "--jobs",
                jobs,
                "--out",
                out.to_str().unwrap(),
            ]);
            assert!(ok, "--jobs {jobs}: {stderr}");
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                .unwrap()
        })
        .collect();
    let figures = |r: &serde_json::Value| {
        let mut v = Vec::new();
        for (method, m) in r["methods"].as_object().unwrap() {
            for (key, stat) in m.as_object().unwrap() {
                if key.contains("ndcg@") {
                    v.push((method.clone(), key.clone(), stat["per_seed"].clone()));
                }
            }
            for run in m["runs"].as_array().unwrap() {
                v.push((
                    method.clone(),
                    "epoch".into(),
                    run["student"]["best_epoch"].clone(),
                ));
            }
        }
        v
    };
    assert_eq!(figures(&results[0]), figures(&results[1]));
    assert_eq!(results[0]["per_query"], results[1]["per_query"]);
    assert_eq!(results[0]["tests"], results[1]["tests"]);
    for r in &results {
        let shared = r["shared_teachers"].as_array().unwrap();
        assert_eq!(shared.len(), 1, "{shared:?}");
        assert!(shared[0]
            .as_str()
            .unwrap()
            .starts_with("ranking-distillation's teacher is self-distillation's"));
    }
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--jobs",
        "0",
        "--out",
        dir.path().join("zero").to_str().unwrap(),
    ]);
    assert!(
        !ok && stderr.contains("--jobs") && stderr.contains("1..="),
        "{stderr}"
    );
}

/// `objectives --bundled mq2008` runs on the bundled MQ2008 (it was dropped without a word, and
/// the synthetic task ran), records it in its setup, and refuses files beside it.
#[test]
fn objectives_run_on_the_bundled_mq2008() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (ok, _, stderr) = distillrank(&[
        "objectives",
        "--bundled",
        "mq2008",
        "--objectives",
        "logloss,auc-pr",
        "--seeds",
        "1",
        "--epochs",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("Data: MQ2008 Fold1, bundled"), "{report}");
    let setup: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("setup.json")).unwrap()).unwrap();
    // A whole setup whose objectives section is what ran.
    assert_eq!(
        setup["objectives"]["data"]["mq2008"]["threshold"], 1,
        "{setup}"
    );
    let again = dir.path().join("again");
    let (ok, _, stderr) = distillrank(&[
        "objectives",
        "--setup",
        out.join("setup.json").to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    // The test figures of every objective and seed (the timings aside).
    let figures = |dir: &std::path::Path| -> Vec<serde_json::Value> {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        ["logloss", "auc-pr"]
            .iter()
            .flat_map(|o| v["objectives"][o]["runs"].as_array().unwrap().clone())
            .map(|run| run["test"].clone())
            .collect()
    };
    assert_eq!(figures(&out), figures(&again));
    for (args, fragment) in [
        (vec!["--bundled", "other"], "the bundled data are mq2008"),
        (
            vec!["--bundled", "mq2008", "--valid", "x.txt"],
            "has its own splits: drop --valid",
        ),
    ] {
        let mut line = vec!["objectives", "--out", "/nonexistent/never-written"];
        line.extend(args);
        let (ok, _, stderr) = distillrank(&line);
        assert!(!ok && stderr.contains(fragment), "{line:?}: {stderr}");
    }
}

/// A LETOR file of `queries` groups of 12 documents with grades `0..=top` (each group holds
/// every grade) and three features that follow the grade.
fn graded_file(path: &Path, queries: usize, top: u8) {
    let mut text = String::new();
    for q in 1..=queries {
        for d in 0..12usize {
            let grade = (d % (top as usize + 1)) as u8;
            let noise = ((q * 31 + d * 17) % 13) as f64 / 13.0;
            text += &format!(
                "{grade} qid:{q} 1:{} 2:{noise} 3:{}\n",
                grade as f64 + noise,
                (q + d) % 5
            );
        }
    }
    std::fs::write(path, text).unwrap();
}

/// Real data work at the first run, in every door that labels files: with no tau_target given,
/// the threshold is the largest training grade + 0.8 (the paper's 4.8 on grades 0..4), whatever
/// the grades' range: the bundled MQ2008 (0..2), and files with grades 0..1, 0..4 and 0..9.
/// (`tests/python/test_package.py` and the e2e upload check walk the other doors.)
#[test]
fn class_real_data_works_at_the_first_run_whatever_its_grades() {
    let dir = tempfile::tempdir().unwrap();
    let small = [
        "--seeds",
        "1",
        "--epochs",
        "1",
        "--widths",
        "8",
        "--methods",
        "no-distillation,pfd",
        "--backend",
        "cpu",
        "--quiet",
    ];
    let mut cases: Vec<(Vec<String>, f64)> = vec![(vec!["--bundled".into(), "mq2008".into()], 2.8)];
    for top in [1u8, 4, 9] {
        let train = dir.path().join(format!("grades-0-{top}.txt"));
        graded_file(&train, 300, top);
        cases.push((
            vec!["--train".into(), train.display().to_string()],
            f64::from(top) + 0.8,
        ));
    }
    for (i, (data, tau)) in cases.iter().enumerate() {
        let out = dir.path().join(format!("run-{i}"));
        let mut args: Vec<&str> = vec!["compare"];
        args.extend(data.iter().map(String::as_str));
        args.extend(["--out", out.to_str().unwrap()]);
        args.extend(small);
        let (ok, _, stderr) = distillrank(&args);
        assert!(ok, "{data:?}: {stderr}");
        let results: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                .unwrap();
        let used = results["preparation"]["tau_target"].as_f64().unwrap();
        assert!((used - tau).abs() < 1e-9, "{data:?}: tau_target {used}");
    }
}

/// A threshold that gives no y = 1 (or nothing else) is refused with a value that works,
/// measured on the same draws, in `train` and `compare` alike.
#[test]
fn class_a_refused_threshold_comes_with_one_that_works() {
    for command in ["train", "compare"] {
        for tau in ["9", "-5"] {
            let (ok, _, stderr) = distillrank(&[
                command,
                "--bundled",
                "mq2008",
                "--tau-target",
                tau,
                "--epochs",
                "1",
                "--widths",
                "8",
                "--backend",
                "cpu",
                "--quiet",
            ]);
            assert!(!ok, "{command} --tau-target {tau}");
            let suggested: f64 = stderr
                .split("(--tau-target ")
                .nth(1)
                .and_then(|rest| rest.split(')').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{command} --tau-target {tau}: {stderr}"));
            let out = tempfile::tempdir().unwrap();
            let value = suggested.to_string();
            let mut args = vec![
                command,
                "--bundled",
                "mq2008",
                "--tau-target",
                &value,
                "--epochs",
                "1",
                "--widths",
                "8",
                "--backend",
                "cpu",
                "--quiet",
            ];
            if command == "compare" {
                let out = out.path().to_str().unwrap();
                args.extend(["--seeds", "1", "--methods", "no-distillation", "--out", out]);
            }
            let (ok, _, stderr) = distillrank(&args);
            assert!(ok, "{command} --tau-target {value} (suggested): {stderr}");
        }
    }
}

/// Class: a text output named `.gz` is gzip, as every reader takes such a name and as `data
/// convert` writes it: `data synth`, `data simulate-logs` and `predict --run` (which wrote plain
/// text under the name before).
#[test]
fn class_a_text_output_named_gz_is_gzip_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    let gzip = |path: &str| {
        let bytes = std::fs::read(path).unwrap();
        assert_eq!(bytes[..2], [0x1f, 0x8b], "{path} is not gzip");
    };
    let (ok, _, stderr) = distillrank(&["data", "synth", "--queries", "30", "-o", &d("s.txt.gz")]);
    assert!(ok, "{stderr}");
    gzip(&d("s.txt.gz"));
    let (ok, _, stderr) = distillrank(&["data", "synth", "--queries", "30", "-o", &d("s.txt")]);
    assert!(ok, "{stderr}");
    // The same documents, read back.
    let (_, plain, _) = distillrank(&["data", "stats", &d("s.txt"), "--json"]);
    let (ok, packed, stderr) = distillrank(&["data", "stats", &d("s.txt.gz"), "--json"]);
    assert!(ok, "{stderr}");
    let docs =
        |stats: &str| serde_json::from_str::<serde_json::Value>(stats).unwrap()["docs"].clone();
    assert_eq!(docs(&plain), docs(&packed));
    assert!(docs(&plain).as_u64().is_some_and(|n| n > 0), "{plain}");
    // A binary cache keeps no record of the entries its text left out: converting it says so.
    assert!(distillrank(&["data", "cache", &d("s.txt")]).0);
    let (ok, _, stderr) =
        distillrank(&["data", "convert", &d("s.txt.drcache"), "-o", &d("c.txt.gz")]);
    assert!(ok && stderr.contains("is a binary cache"), "{stderr}");
    gzip(&d("c.txt.gz"));
    let mq = letor_data::data("mq2008/Fold1/test.txt");
    let (ok, _, stderr) = distillrank(&[
        "data",
        "simulate-logs",
        &mq,
        "-o",
        &d("logged.txt.gz"),
        "--sessions",
        "2",
    ]);
    assert!(ok, "{stderr}");
    gzip(&d("logged.txt.gz"));
    let (ok, _, stderr) = distillrank(&["data", "stats", &d("logged.txt.gz")]);
    assert!(ok, "{stderr}");
    let model = d("m");
    let (ok, _, stderr) = distillrank(&[
        "train",
        "--train",
        &d("s.txt"),
        "--epochs",
        "1",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--quiet",
        "--save",
        &model,
        "--tau-target",
        "3",
    ]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = distillrank(&[
        "predict",
        "--model",
        &model,
        &d("s.txt"),
        "--run",
        &d("run.txt.gz"),
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
    gzip(&d("run.txt.gz"));
}

/// Class: a data file a command writes is what its name says, and keeps what it read. `convert`
/// dropped LETOR lines' docid comments without a word, `simulate-logs` and `aggregate-logs` wrote
/// LETOR text under a `.parquet` name, and `synth` and `convert` text under a `.drcache` one;
/// `aggregate-logs` counted one log's impressions of a query into every file that had it.
/// `data stats --privileged` took `logs` nowhere and a split the file cannot take with success;
/// `synth` wrote files with more features than any reader takes; a cut gzip file was named in
/// the decoder's words, and a qid past 2^64 - 1 as no number.
#[test]
fn class_a_data_file_written_is_what_its_name_says_and_keeps_what_it_read() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    let named = d("named.txt");
    std::fs::write(
        &named,
        "2 qid:1 1:0.5 2:0.1 #docid = A\n0 qid:1 1:0.1 2:0.3 #docid = B\n1 qid:2 1:0.2 2:0.2 #docid = C\n0 qid:2 1:0.4 2:0.9 #docid = D\n",
    )
    .unwrap();
    // Text keeps the docids; Parquet says it cannot.
    let (ok, _, stderr) = distillrank(&["data", "convert", &named, "-o", &d("copy.txt")]);
    assert!(ok, "{stderr}");
    let copy = std::fs::read_to_string(d("copy.txt")).unwrap();
    assert!(
        copy.contains("#docid = A") && copy.contains("#docid = D"),
        "{copy}"
    );
    let (ok, _, stderr) = distillrank(&["data", "convert", &named, "-o", &d("copy.parquet")]);
    assert!(
        ok && stderr.contains("the docid comments of 4 documents are not kept"),
        "{stderr}"
    );
    // The logs commands write Parquet under its name, which reads back as such.
    let mq = letor_data::data("mq2008/Fold1/test.txt");
    let (ok, _, stderr) = distillrank(&[
        "data",
        "simulate-logs",
        &mq,
        "-o",
        &d("logged.parquet"),
        "--sessions",
        "2",
    ]);
    assert!(ok && stderr.contains("docid comments"), "{stderr}");
    assert_eq!(&std::fs::read(d("logged.parquet")).unwrap()[..4], b"PAR1");
    let (ok, _, stderr) = distillrank(&["data", "stats", &d("logged.parquet")]);
    assert!(ok, "{stderr}");
    // ... and `stats` reads its logs' columns as a comparison does.
    let (ok, stdout, stderr) = distillrank(&[
        "data",
        "stats",
        &d("logged.parquet"),
        "--privileged",
        "logs",
    ]);
    assert!(
        ok && stdout.contains("as training data (cols:") && !stdout.contains("n/a"),
        "{stdout}{stderr}"
    );
    let (ok, _, stderr) = distillrank(&["data", "stats", &named, "--privileged", "logs"]);
    assert!(!ok && stderr.contains("named.txt.logs.json"), "{stderr}");
    // A split the file cannot take is an error; where the data are at fault whatever the split
    // (groups of 2 documents, under --min-group-size), n/a.
    let train = letor_data::data("mq2008/Fold1/train.txt");
    let (ok, _, stderr) = distillrank(&["data", "stats", &train, "--privileged", "cols:99"]);
    assert!(!ok && stderr.contains("--privileged cols:99"), "{stderr}");
    // ... whatever the default split makes of the file: a column it does not have.
    let part = letor_data::data("mq2008/S1.txt");
    for spec in ["cols:999", "top:46"] {
        let (ok, stdout, stderr) = distillrank(&["data", "stats", &part, "--privileged", spec]);
        assert!(
            !ok && stderr.contains(&format!("--privileged {spec}")) && stdout.is_empty(),
            "{stdout}{stderr}"
        );
    }
    let (ok, stdout, stderr) = distillrank(&["data", "stats", &named, "--privileged", "cols:2"]);
    assert!(
        ok && stdout.contains("n/a: no training groups"),
        "{stdout}{stderr}"
    );
    // A cache's name takes no text, and a cache is not cached again.
    for args in [
        vec!["data", "synth", "--queries", "5"],
        vec!["data", "convert", &named],
    ] {
        let mut args = args;
        let cache = d("out.drcache");
        args.extend(["-o", &cache]);
        let (ok, _, stderr) = distillrank(&args);
        assert!(
            !ok && stderr.contains("a .drcache is the binary cache"),
            "{stderr}"
        );
        assert!(!Path::new(&cache).exists());
    }
    // A name in capitals asks for what it asks for in small letters; a compression other than
    // gzip, or gzip around Parquet, is refused.
    let (ok, _, stderr) = distillrank(&["data", "convert", &named, "-o", &d("upper.TXT.GZ")]);
    assert!(ok, "{stderr}");
    assert_eq!(std::fs::read(d("upper.TXT.GZ")).unwrap()[..2], [0x1f, 0x8b]);
    for name in ["x.DRCACHE", "x.txt.bz2", "x.txt.zst", "x.parquet.gz"] {
        let (ok, _, stderr) = distillrank(&["data", "convert", &named, "-o", &d(name)]);
        assert!(
            !ok && stderr.contains(&format!("{name}: ")),
            "{name}: {stderr}"
        );
        assert!(!dir.path().join(name).exists(), "{name}");
    }
    assert!(distillrank(&["data", "cache", &named]).0);
    let (ok, _, stderr) = distillrank(&["data", "cache", &d("named.txt.drcache")]);
    assert!(!ok && stderr.contains("is a cache already"), "{stderr}");
    // A cache is told by its first bytes, as Parquet is: renamed, it is read as the cache it is
    // (it was read as text, and refused as a bad LETOR line).
    for renamed in ["NAMED.TXT.DRCACHE", "named.bin"] {
        std::fs::copy(d("named.txt.drcache"), d(renamed)).unwrap();
        let (ok, stdout, stderr) = distillrank(&["data", "stats", &d(renamed), "--json"]);
        let queries = ok.then(|| serde_json::from_str::<serde_json::Value>(&stdout).unwrap());
        assert_eq!(
            queries.map(|v| v["queries"].clone()),
            Some(2.into()),
            "{renamed}: {stdout}{stderr}"
        );
        let (ok, _, stderr) = distillrank(&["data", "cache", &d(renamed)]);
        assert!(!ok && stderr.contains("is a cache already"), "{stderr}");
    }
    // One log for two files that share a query is refused, not counted into both.
    std::fs::copy(&named, d("twin.txt")).unwrap();
    let log = d("log.tsv");
    std::fs::write(&log, "qid\tsession\tposition\tdoc\tclick\n1\t1\t1\t1\t1\n").unwrap();
    let (ok, _, stderr) = distillrank(&[
        "data",
        "aggregate-logs",
        &named,
        &d("twin.txt"),
        "--impressions",
        &log,
        "-o",
        &d("aggregated/"),
    ]);
    assert!(
        !ok && stderr.contains("qid 1 is a query of both"),
        "{stderr}"
    );
    // Aggregated logs under a Parquet name are Parquet, whose logs' columns a comparison reads.
    std::fs::write(
        &log,
        "qid\tsession\tposition\tdoc\tclick\n1\t1\t1\t1\t1\n2\t2\t1\t2\t0\n",
    )
    .unwrap();
    let (ok, _, stderr) = distillrank(&[
        "data",
        "aggregate-logs",
        &named,
        "--impressions",
        &log,
        "-o",
        &d("aggregated.parquet"),
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(
        &std::fs::read(d("aggregated.parquet")).unwrap()[..4],
        b"PAR1"
    );
    let (ok, stdout, stderr) = distillrank(&[
        "data",
        "stats",
        &d("aggregated.parquet"),
        "--privileged",
        "logs",
        "--json",
    ]);
    let stats = ok.then(|| serde_json::from_str::<serde_json::Value>(&stdout).unwrap());
    // The two columns read and the six the log gave each document.
    assert_eq!(
        stats.map(|v| v["features"].clone()),
        Some(8.into()),
        "{stdout}{stderr}"
    );
    // More features than a reader takes.
    let (ok, _, stderr) = distillrank(&[
        "data",
        "synth",
        "--queries",
        "2",
        "--regular",
        "65534",
        "-o",
        &d("wide.txt"),
    ]);
    assert!(!ok && stderr.contains("65540 features"), "{stderr}");
    // A gzip file cut short, and query ids past an int64, in the reader's own words.
    let (ok, _, _) = distillrank(&["data", "convert", &mq, "-o", &d("whole.txt.gz")]);
    assert!(ok);
    let whole = std::fs::read(d("whole.txt.gz")).unwrap();
    std::fs::write(d("cut.txt.gz"), &whole[..whole.len() / 2]).unwrap();
    let (ok, _, stderr) = distillrank(&["data", "stats", &d("cut.txt.gz")]);
    assert!(
        !ok && stderr.contains("not a whole gzip stream"),
        "{stderr}"
    );
    std::fs::write(d("qid.txt"), "1 qid:99999999999999999999 1:0.5\n").unwrap();
    let (ok, _, stderr) = distillrank(&["data", "stats", &d("qid.txt")]);
    assert!(
        !ok && stderr.contains("qid: a number past 2^64 - 1"),
        "{stderr}"
    );
}

/// Class: a model's outputs that would land where no one meant them are refused in every door
/// (Python's `save` and `to_onnx` in `test_package.py`): a `--save` prefix that names a folder
/// (it wrote the hidden `out/.safetensors` and `out/.json`), and an ONNX export over a file that
/// is neither named `.onnx` nor an ONNX model (it replaced a LETOR file).
#[test]
fn class_a_model_output_over_what_it_is_not_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    let folder = format!("{}/", d("out"));
    std::fs::create_dir(d("out")).unwrap();
    for prefix in [folder.as_str(), &d("out")] {
        let (ok, _, stderr) = distillrank(&[
            "train",
            "--bundled",
            "mq2008",
            "--epochs",
            "1",
            "--widths",
            "8",
            "--backend",
            "cpu",
            "--quiet",
            "--save",
            prefix,
        ]);
        assert!(
            !ok && stderr.contains("--save") && stderr.contains("PREFIX.safetensors"),
            "{prefix:?}: {stderr}"
        );
    }
    assert_eq!(std::fs::read_dir(d("out")).unwrap().count(), 0);
    let model = d("m");
    let (ok, _, stderr) = distillrank(&[
        "train",
        "--bundled",
        "mq2008",
        "--epochs",
        "1",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--quiet",
        "--save",
        &model,
    ]);
    assert!(ok, "{stderr}");
    let data = d("data.txt");
    std::fs::write(&data, "1 qid:1 1:0.5\n").unwrap();
    let (ok, _, stderr) = distillrank(&["export", "--model", &model, "--onnx", &data]);
    assert!(!ok && stderr.contains("is not an ONNX model"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&data).unwrap(), "1 qid:1 1:0.5\n");
    // An ONNX model is written over, as any output of its kind.
    let onnx = d("m.onnx");
    for _ in 0..2 {
        let (ok, _, stderr) = distillrank(&["export", "--model", &model, "--onnx", &onnx]);
        assert!(ok, "{stderr}");
    }
}

/// Class: RankBCE and the global objectives learn y in [0, 1]. On grades their loss falls
/// below 0 and rewards nothing, so the pair is refused by both, in `train` (which trained on
/// it before) and `compare`; Python's `Ranker` in `test_graded_labels_...`.
#[test]
fn class_a_binary_learner_on_grades_is_refused_in_every_door() {
    let out = tempfile::tempdir().unwrap();
    let out = out.path().join("out");
    for command in ["train", "compare"] {
        for (learner, named) in [
            (["--loss", "rankbce"], "--loss rankbce"),
            (["--objective", "logloss"], "--objective logloss"),
        ] {
            let mut args = vec![
                command,
                "--bundled",
                "mq2008",
                "--training-labels",
                "grades",
            ];
            args.extend(learner);
            args.extend([
                "--epochs",
                "1",
                "--widths",
                "8",
                "--backend",
                "cpu",
                "--quiet",
            ]);
            if command == "compare" {
                args.extend(["--seeds", "1", "--out", out.to_str().unwrap()]);
            }
            let (ok, _, stderr) = distillrank(&args);
            assert!(
                !ok && stderr.contains(named) && stderr.contains("grades"),
                "{args:?}: {stderr}"
            );
        }
    }
    assert!(!out.exists());
    // Graded losses train on grades.
    let (ok, _, stderr) = distillrank(&[
        "train",
        "--bundled",
        "mq2008",
        "--training-labels",
        "grades",
        "--loss",
        "ranknet",
        "--epochs",
        "1",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
}

/// Class: a run refused after it took its folder (a data file that is not there, found as the
/// data are read) leaves the last run's outputs whole, in every command that owns a folder:
/// they are replaced at the run's first output, not when it starts.
#[test]
fn class_a_refused_run_leaves_the_last_runs_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_str = out.to_str().unwrap();
    let mut args = vec![
        "compare",
        "--methods",
        "no-distillation",
        "--out",
        out_str,
        "--quiet",
    ];
    args.extend(TINY);
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    let listing = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(before.contains(&"students".to_string()), "{before:?}");
    let missing = dir.path().join("missing.txt");
    let missing = missing.to_str().unwrap();
    let small = [
        "--epochs",
        "1",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--quiet",
    ];
    let refused: [Vec<&str>; 3] = [
        vec!["compare", "--train", missing, "--seeds", "1"],
        vec![
            "sweep",
            "--train",
            missing,
            "--param",
            "tau-target",
            "--values",
            "3,3.5",
        ],
        vec![
            "objectives",
            "--train",
            missing,
            "--valid",
            missing,
            "--test",
            missing,
            "--seeds",
            "1",
        ],
    ];
    for mut args in refused {
        args.extend(["--out", out_str]);
        args.extend(small);
        let (ok, _, stderr) = distillrank(&args);
        assert!(!ok && stderr.contains("missing.txt"), "{args:?}: {stderr}");
        assert_eq!(listing(), before, "{args:?}");
        assert_eq!(
            std::fs::read_to_string(out.join("report.md")).unwrap(),
            report
        );
    }
}

/// A run into a folder clears what the last run there wrote, but never what it reads: the
/// folder's own `setup.json` given as `--setup` runs again in place (the report's "runs it
/// again"), for every command that owns a folder, `compare`, `sweep` and `objectives`, while the
/// last run's other outputs are still cleared.
#[test]
fn class_a_run_in_its_own_folder_keeps_the_outputs_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out_str = out.to_str().unwrap();
    let setup = out.join("setup.json");
    let setup_str = setup.to_str().unwrap();
    let results = |dir: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
    };
    let mut args = vec![
        "compare",
        "--methods",
        "no-distillation,pfd",
        "--out",
        out_str,
        "--quiet",
    ];
    args.extend(TINY);
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    let first = results(&out);

    let again = ["compare", "--setup", setup_str, "--out", out_str, "--quiet"];
    let (ok, _, stderr) = distillrank(&again);
    assert!(ok, "compare --setup in its own folder: {stderr}");
    let second = results(&out);
    assert_eq!(first["setup"], second["setup"]);
    assert_eq!(first["per_query"], second["per_query"]);

    // A sweep of the same setup in the same folder: compare's report goes, its setup stays.
    let (ok, _, stderr) = distillrank(&[
        "sweep",
        "--setup",
        setup_str,
        "--param",
        "tau-target",
        "--values",
        "3.0,3.5",
        "--out",
        out_str,
        "--quiet",
    ]);
    assert!(ok, "sweep --setup in compare's folder: {stderr}");
    assert!(out.join("sweep.json").exists());
    assert!(
        !out.join("report.md").exists(),
        "compare's report is cleared"
    );
    assert!(setup.exists(), "the setup the sweep read is kept");

    // The global objectives' own folder.
    let objectives = dir.path().join("objectives");
    let objectives_str = objectives.to_str().unwrap();
    let (ok, _, stderr) = distillrank(&[
        "objectives",
        "--objectives",
        "logloss",
        "--seeds",
        "1",
        "--epochs",
        "1",
        "--train-examples",
        "600",
        "--valid-examples",
        "300",
        "--test-examples",
        "300",
        "--out",
        objectives_str,
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
    let first = results(&objectives);
    let setup = objectives.join("setup.json");
    let (ok, _, stderr) = distillrank(&[
        "objectives",
        "--setup",
        setup.to_str().unwrap(),
        "--out",
        objectives_str,
        "--quiet",
    ]);
    assert!(ok, "objectives --setup in its own folder: {stderr}");
    let second = results(&objectives);
    assert_eq!(
        first["objectives"]["logloss"]["auc_pr"],
        second["objectives"]["logloss"]["auc_pr"]
    );
}

#[test]
fn an_ensemble_trains_saves_scores_and_compares_as_one_model() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name).display().to_string();
    let (ok, stdout, stderr) = distillrank(&[
        "train",
        "--queries",
        "80",
        "--valid-queries",
        "40",
        "--test-queries",
        "40",
        "--epochs",
        "2",
        "--widths",
        "16",
        "--ensemble",
        "3",
        "--backend",
        "cpu",
        "--save",
        &d("student"),
        "--json",
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["members"], 3);
    assert_eq!(v["member_valid_ndcg"].as_array().unwrap().len(), 3);
    let later = v["later_members"].as_array().unwrap();
    assert_eq!(later.len(), 2);
    for (member, ndcg) in later
        .iter()
        .zip(&v["member_valid_ndcg"].as_array().unwrap()[1..])
    {
        assert_eq!(&member["best_valid_ndcg"], ndcg);
        assert!(!member["history"].as_array().unwrap().is_empty());
    }
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d("student.json")).unwrap()).unwrap();
    assert_eq!(config["members"], 3);
    // The saved ensemble scores alike on both engines and exports to one graph.
    let (ok, _, stderr) = distillrank(&["data", "synth", "--queries", "30", "-o", &d("s.txt")]);
    assert!(ok, "{stderr}");
    let scores = |backend: &str| -> Vec<f64> {
        let (ok, out, stderr) = distillrank(&[
            "predict",
            "--model",
            &d("student"),
            &d("s.txt"),
            "--backend",
            backend,
        ]);
        assert!(ok, "{stderr}");
        out.lines().map(|l| l.parse().unwrap()).collect()
    };
    let cpu = scores("cpu");
    if !std::env::var("DISTILLRANK_NO_GPU").is_ok_and(|v| v == "1") {
        for (g, c) in scores("gpu").iter().zip(&cpu) {
            assert!((g - c).abs() <= 1e-4 + 1e-3 * c.abs(), "GPU {g}, CPU {c}");
        }
    }
    let (ok, stdout, stderr) =
        distillrank(&["export", "--model", &d("student"), "--onnx", &d("s.onnx")]);
    assert!(ok, "{stderr}");
    assert!(stdout.contains("wrote"), "{stdout}");
    // In a comparison, every method's student is an ensemble; its parameters are all members'.
    let out = d("cmp");
    let mut args = vec![
        "compare",
        "--out",
        &out,
        "--quiet",
        "--methods",
        "no-distillation,pfd",
        "--ensemble",
        "2",
    ];
    args.extend(TINY);
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out}/results.json")).unwrap())
            .unwrap();
    let run = &json["methods"]["pfd"]["runs"][0];
    assert_eq!(run["student"]["members"], 2);
    assert!(
        run["teachers"][0].get("members").is_none(),
        "a teacher is one model"
    );
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out}/students/pfd.json")).unwrap())
            .unwrap();
    assert_eq!(saved["members"], 2);
    let n_in = saved["n_in"].as_u64().unwrap();
    let one = (n_in * 16 + 16) + (16 * 8 + 8) + (8 + 1);
    assert_eq!(run["student"]["parameters"].as_u64().unwrap(), 2 * one);
}

/// Under `--json`, every error is one JSON object on stderr with the exit code: a line clap
/// refuses (`kind` "usage", exit 2), a file that is not there (`io`, with its `file`), a malformed
/// file (`parse`, with `file`, `line` and `column`) and a configuration that cannot work
/// (`config`); nothing else on stderr.
#[test]
fn json_errors_are_json_objects_with_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "1 qid:1 1:0.5\n0 qid:1 2:zero\n").unwrap();
    let bad = bad.display().to_string();
    let cases: [(&[&str], i32, &str); 4] = [
        (
            &["--json", "train", "--bundled", "mq2008", "--epochs", "0"],
            2,
            "usage",
        ),
        (
            &["data", "stats", "/nonexistent/train.txt", "--json"],
            1,
            "io",
        ),
        (&["data", "stats", &bad, "--json"], 1, "parse"),
        (&["compare", "--json", "--valid", "vali.txt"], 1, "config"),
    ];
    for (args, code, kind) in cases {
        let out = cli_run::command().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        let object: serde_json::Value = serde_json::from_str(stderr.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON object ({e}): {stderr}"));
        assert_eq!(object["kind"], kind, "{args:?}: {object}");
        let message = object["error"].as_str().unwrap();
        assert!(
            !message.is_empty() && !message.starts_with("error:"),
            "{object}"
        );
        match kind {
            "usage" => assert!(message.contains("--epochs"), "{object}"),
            "io" => assert_eq!(object["file"], "/nonexistent/train.txt"),
            "parse" => {
                assert_eq!(object["file"], bad.as_str());
                assert_eq!(object["line"], 2, "{object}");
                assert!(object["column"].as_u64().unwrap() > 0, "{object}");
            }
            _ => assert!(message.contains("--train"), "{object}"),
        }
    }
    // Without --json the same error is text.
    let (ok, _, stderr) = distillrank(&["data", "stats", "/nonexistent/train.txt"]);
    assert!(
        !ok && stderr.starts_with("error: /nonexistent/train.txt"),
        "{stderr}"
    );
}

/// Several values where a flag takes one are refused as clap refuses a value out of its range: a
/// usage error (exit 2, `kind` "usage" under `--json`), in every command of the table's flags.
#[test]
fn several_values_where_a_flag_takes_one_are_a_usage_error() {
    for args in [
        &["train", "--ensemble", "2,3"][..],
        &["compare", "--lr", "0.1,0.2"],
        &[
            "sweep", "--param", "alpha", "--values", "0.5", "--seeds", "1,2",
        ],
        &["train", "--epochs", "0"],
    ] {
        let out = cli_run::command().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(args[args.len() - 2]), "{args:?}: {stderr}");
        let out = cli_run::command()
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let object: serde_json::Value = serde_json::from_str(stderr.trim())
            .unwrap_or_else(|e| panic!("{args:?}: not one JSON object ({e}): {stderr}"));
        assert_eq!(object["kind"], "usage", "{args:?}: {object}");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {object}");
    }
}

/// `distillrank completions SHELL` writes each shell's script, naming every subcommand and the
/// flags of the table (here `--weight-decay`, which `train` takes from it).
#[test]
fn completions_for_bash_zsh_and_fish_name_the_subcommands_and_flags() {
    for shell in ["bash", "zsh", "fish"] {
        let (ok, script, stderr) = distillrank(&["completions", shell]);
        assert!(ok, "{shell}: {stderr}");
        for word in [
            "compare",
            "simulate-logs",
            "weight-decay",
            "ensemble",
            "reference-model",
        ] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    let (ok, _, stderr) = distillrank(&["completions", "tcsh"]);
    assert!(!ok && stderr.contains("tcsh"), "{stderr}");
}

/// `train` takes one model's training settings from the table of settings: each of these rows is
/// a `train` flag, and a row of distillation (`--alpha`) is not.
#[test]
fn train_takes_its_training_flags_from_the_table() {
    let (_, help, _) = distillrank(&["train", "--help"]);
    for flag in [
        "--weight-decay",
        "--dropout",
        "--ensemble",
        "--lr-schedule",
        "--input-noise",
        "--objective",
        "--backend",
    ] {
        assert!(help.contains(flag), "train --help lacks {flag}");
    }
    let (ok, _, stderr) = distillrank(&["train", "--bundled", "mq2008", "--alpha", "0.3"]);
    assert!(!ok && stderr.contains("--alpha"), "{stderr}");
}

/// A dropout rate in range that would keep less than one unit of the narrowest hidden layer
/// (the student's, or the teachers' `--teacher-widths`) is refused before anything trains, with
/// the largest rate that keeps one, in `compare`, `train` and a setup file alike; a rate just
/// inside that bound is taken. A model without hidden layers refuses dropout and normalisation.
#[test]
fn a_dropout_that_keeps_less_than_one_unit_is_refused_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = |name: &str| dir.path().join(name).display().to_string();
    let setup = dir.path().join("setup.json");
    std::fs::write(&setup, r#"{"widths": [32, 8], "dropout": 0.9}"#).unwrap();
    let setup = setup.display().to_string();
    let cases: [(Vec<String>, &str); 5] = [
        // A layer of one unit takes no dropout: the message says so, and no rounding of what is
        // kept contradicts it.
        (
            ["train", "--bundled", "mq2008", "--widths", "1", "--dropout", "0.0001"].map(String::from).to_vec(),
            "dropout 0.0001 keeps 0.9999 of the narrowest hidden layer's 1 unit in expectation, less than one: nothing would be learnt; a layer of one unit takes none",
        ),
        (
            ["compare", "--widths", "32,8", "--dropout", "0.9", "--out", &out("a")].map(String::from).to_vec(),
            "dropout 0.9 keeps 0.8 of the narrowest hidden layer's 8 units",
        ),
        (
            ["compare", "--widths", "32,8", "--teacher-widths", "4", "--dropout", "0.8", "--out", &out("b")]
                .map(String::from)
                .to_vec(),
            "hidden layer's 4 units in expectation, less than one: nothing would be learnt; choose a dropout of at most 1 − 1/4 = 0.75 (--teacher-widths)",
        ),
        (
            ["train", "--bundled", "mq2008", "--widths", "8", "--dropout", "0.9"].map(String::from).to_vec(),
            "choose a dropout of at most 1 − 1/8 = 0.875",
        ),
        (
            ["compare", "--setup", &setup, "--out", &out("c")].map(String::from).to_vec(),
            "dropout 0.9 keeps 0.8 of",
        ),
    ];
    for (args, words) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, _, stderr) = distillrank(&args);
        assert!(!ok && stderr.contains(words), "{args:?}: {stderr}");
    }
    // A linear model (`widths: []`, which only a setup file or Python can ask for) has no hidden
    // layer to drop units of or to normalise: both refused rather than ignored.
    for (settings, words) in [
        (
            r#"{"widths": [], "dropout": 0.1}"#,
            "dropout 0.1 zeroes hidden units, and a model without hidden layers",
        ),
        (
            r#"{"widths": [], "norm": "layer"}"#,
            "norm layer normalises hidden layers, and a model without hidden layers",
        ),
    ] {
        let file = dir.path().join("linear.json");
        std::fs::write(&file, settings).unwrap();
        let (ok, _, stderr) = distillrank(&[
            "compare",
            "--setup",
            file.to_str().unwrap(),
            "--out",
            &out("e"),
        ]);
        assert!(!ok && stderr.contains(words), "{settings}: {stderr}");
    }
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--queries",
        "60",
        "--widths",
        "32,8",
        "--dropout",
        "0.875",
        "--epochs",
        "1",
        "--seeds",
        "1",
        "--methods",
        "no-distillation",
        "--quiet",
        "--out",
        &out("d"),
    ]);
    assert!(ok, "{stderr}");
}

/// A model named as a file that is not there (`m.txt`) is reported under its own name, with what
/// was looked for: a tree model of that name, or a saved model's pair beside it. It used to be
/// reported as a missing `m.txt.json`.
#[test]
fn a_missing_model_file_is_named_as_given() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("m.txt").display().to_string();
    let data = letor_data::data("mq2008/Fold1/vali.txt");
    for command in ["eval", "predict"] {
        let (ok, _, stderr) = distillrank(&[command, &data, "--model", &missing]);
        assert!(!ok, "{command}");
        assert!(
            stderr.contains(&format!("{missing}: no such model"))
                && stderr.contains("m.txt.json + ")
                && !stderr.contains("m.txt.json: No such file"),
            "{command}: {stderr}"
        );
    }
}

/// `export` reads only saved distillrank models: a LightGBM model is named as one, and a missing
/// name is not offered a tree model of that name, which `eval` and `predict` (they score tree
/// models too) do offer. A file that is neither is told so by those two.
#[test]
fn the_doors_that_read_only_saved_models_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let lightgbm = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/mq2008-lightgbm.txt"
    );
    let missing = dir.path().join("m.txt").display().to_string();
    let onnx = dir.path().join("m.onnx").display().to_string();
    let (ok, _, stderr) = distillrank(&["export", "--model", lightgbm, "--onnx", &onnx]);
    assert!(
        !ok && stderr.contains("a LightGBM or XGBoost model, not a saved distillrank model")
            && !stderr.contains("not a LightGBM"),
        "{stderr}"
    );
    let (ok, _, stderr) = distillrank(&["export", "--model", &missing, "--onnx", &onnx]);
    assert!(
        !ok && stderr.contains("no such model: no saved distillrank model")
            && !stderr.contains("LightGBM"),
        "{stderr}"
    );
    let data = letor_data::data("mq2008/Fold1/vali.txt");
    let (ok, _, stderr) = distillrank(&["eval", &data, "--model", &data]);
    assert!(
        !ok && stderr.contains("not a LightGBM or XGBoost model, and no saved distillrank model"),
        "{stderr}"
    );
}

/// results.json records each setting once: Adam's learning rate and weight decay are the setup's
/// `lr` and `weight_decay`, not repeated under the configuration derived from it.
#[test]
fn results_json_records_one_weight_decay() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().display().to_string();
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--queries",
        "60",
        "--valid-queries",
        "20",
        "--test-queries",
        "20",
        "--epochs",
        "1",
        "--seeds",
        "1",
        "--widths",
        "8",
        "--methods",
        "no-distillation",
        "--weight-decay",
        "0.25",
        "--backend",
        "cpu",
        "--out",
        &out,
        "--quiet",
    ]);
    assert!(ok, "{stderr}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    let text = results.to_string();
    assert_eq!(
        text.matches("\"weight_decay\"").count(),
        1,
        "{}",
        results["config"]
    );
    assert_eq!(results["setup"]["weight_decay"], 0.25);
    assert!(results["config"]["train"]["adam"]["beta1"].is_number());
}

/// The parameters of an MLP of `n_in` inputs and hidden `widths`, with `heads` of attention (0:
/// none) over its last hidden layer.
fn parameters(n_in: usize, widths: &[usize], heads: usize) -> usize {
    let mut dims = vec![n_in];
    dims.extend_from_slice(widths);
    dims.push(1);
    let mlp: usize = dims.windows(2).map(|w| w[0] * w[1] + w[1]).sum();
    let d = widths[widths.len() - 1];
    mlp + if heads > 0 { 3 * (d * d + d) } else { 0 }
}

/// A case of [`students_and_teachers_of_either_family`]: its folder, its flags, the PFD
/// student's and teacher's parameters and the Ranking Distillation teacher's.
type Case<'a> = (&'a str, &'a [&'a str], (usize, usize), usize);

/// Students and teachers may be either family: the listwise student of an MLP teacher, the MLP
/// student of listwise teachers (the Ranking Distillation teacher's scaled last width rounded up
/// to a multiple of the heads), each counted in results.json as the model it is; heads that do
/// not divide the teachers' last width are refused naming the teachers' flag.
#[test]
fn students_and_teachers_of_either_family() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| -> serde_json::Value {
        let out = dir.path().join(name).display().to_string();
        let mut args = vec![
            "compare",
            "--queries",
            "60",
            "--valid-queries",
            "20",
            "--test-queries",
            "20",
            "--regular",
            "12",
            "--epochs",
            "1",
            "--seeds",
            "1",
            "--widths",
            "16,10",
            "--methods",
            "pfd,ranking-distillation",
            "--rd-teacher-factor",
            "2",
            "--out",
            &out,
            "--quiet",
        ];
        args.extend_from_slice(extra);
        let (ok, _, stderr) = distillrank(&args);
        assert!(ok, "{extra:?}: {stderr}");
        let text = std::fs::read_to_string(dir.path().join(name).join("results.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let counts = |v: &serde_json::Value, method: &str| -> (usize, usize) {
        let r = &v["methods"][method]["runs"][0];
        let count = |x: &serde_json::Value| x["parameters"].as_u64().unwrap() as usize;
        (count(&r["student"]), count(&r["teachers"][0]))
    };
    let z = 6; // the generator's privileged features
               // (flags, the PFD student's and teacher's parameters, the RD teacher's): the RD teacher's
               // widths are the student's scaled by sqrt(2), (23, 14); with 4 heads 14 is rounded up to 16.
    let cases: [Case; 2] = [
        (
            "mixed",
            &["--attention-heads", "2", "--teacher-attention-heads", "0"],
            (
                parameters(12, &[16, 10], 2),
                parameters(12 + z, &[16, 10], 0),
            ),
            parameters(12, &[23, 14], 0),
        ),
        (
            "teachers",
            &["--teacher-attention-heads", "4", "--teacher-widths", "16,8"],
            (
                parameters(12, &[16, 10], 0),
                parameters(12 + z, &[16, 8], 4),
            ),
            parameters(12, &[23, 16], 4),
        ),
    ];
    for (name, flags, pfd, rd_teacher) in cases {
        let v = run(name, flags);
        assert_eq!(counts(&v, "pfd"), pfd, "{name}");
        assert_eq!(counts(&v, "ranking-distillation").1, rd_teacher, "{name}");
    }
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--queries",
        "60",
        "--widths",
        "16,10",
        "--teacher-attention-heads",
        "3",
        "--out",
        &dir.path().join("refused").display().to_string(),
    ]);
    assert!(
        !ok && stderr.contains("--teacher-attention-heads 3 does not divide")
            && stderr.contains("10"),
        "{stderr}"
    );
    // Attention without a hidden layer names the widths the attention would take: the
    // teachers' own, or the student's that Ranking Distillation's teacher scales.
    for (flags, words) in [
        (
            &["--teacher-widths", "none", "--teacher-attention-heads", "2"][..],
            "give --teacher-widths hidden layers, or --teacher-attention-heads 0",
        ),
        (
            &["--attention-heads", "2", "--teacher-widths", "none"],
            "give --teacher-widths hidden layers, or --teacher-attention-heads 0",
        ),
        (
            &[
                "--widths",
                "none",
                "--teacher-widths",
                "16",
                "--teacher-attention-heads",
                "2",
                "--methods",
                "no-distillation,ranking-distillation",
            ],
            "Ranking Distillation's teacher takes the student's --widths",
        ),
    ] {
        let out = dir.path().join("refused").display().to_string();
        let mut args = vec!["compare", "--queries", "60", "--out", &out];
        args.extend(flags);
        if !flags.contains(&"--widths") {
            args.extend(["--widths", "16,10"]);
        }
        let (ok, _, stderr) = distillrank(&args);
        assert!(!ok && stderr.contains(words), "{flags:?}: {stderr}");
    }
    // The same refusals from a setup file name the file and its fields, not flags it lacks.
    for (field, words) in [
        ("attention_heads", "attention_heads 3 does not divide"),
        (
            "teacher_attention_heads",
            "teacher_attention_heads 3 does not divide",
        ),
    ] {
        let file = dir.path().join(format!("{field}.json"));
        std::fs::write(&file, format!(r#"{{"widths": [16, 10], "{field}": 3}}"#)).unwrap();
        let file = file.display().to_string();
        for command in [
            &["compare"][..],
            &["sweep", "--param", "alpha", "--values", "0.1"],
        ] {
            let out = dir.path().join(format!("refused-{field}-{}", command[0]));
            let mut args = command.to_vec();
            args.extend(["--setup", &file, "--out", out.to_str().unwrap()]);
            let (ok, _, stderr) = distillrank(&args);
            assert!(
                !ok && stderr.contains(&format!("--setup {file}: {words}"))
                    && !stderr.contains("--attention-heads")
                    && !stderr.contains("--teacher-attention-heads"),
                "{command:?} {field}: {stderr}"
            );
        }
    }
}

/// A pipe (`/dev/stdin`, `<(zcat f.gz)`) gives its bytes once. Every command reads a piped data
/// file once, LETOR text or Parquet; where a command must read the file a second time (a tree
/// model scores its text again, `data convert` copies each document after checking them all),
/// it refuses the pipe by name and writes nothing, where it read an empty second pass before;
/// so does a prepared cache, which is kept beside a file and known by its stamps, and a command
/// given one pipe for two splits.
#[test]
fn a_piped_data_file_is_read_once_or_refused_by_name_in_every_command() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let vali = letor_data::data("mq2008/Fold1/vali.txt");
    let tree = format!(
        "{}/tests/data/mq2008-lightgbm.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let piped = |bytes: &[u8], args: &[&str]| -> (bool, String, String) {
        let mut child = cli_run::command()
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        // A command that refuses the pipe exits before reading it: the write may then fail.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let text = std::fs::read(&vali).unwrap();
    let parquet = dir.path().join("vali.parquet");
    let (ok, _, stderr) = distillrank(&["data", "convert", &vali, "-o", parquet.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let parquet = std::fs::read(&parquet).unwrap();

    // Read once: the same figures as from the file.
    let (ok, from_file, stderr) = distillrank(&["data", "stats", &vali, "--json"]);
    assert!(ok, "{stderr}");
    let docs =
        |json: &str| serde_json::from_str::<serde_json::Value>(json).unwrap()["docs"].clone();
    for bytes in [&text, &parquet] {
        let (ok, stdout, stderr) = piped(bytes, &["data", "stats", "/dev/stdin", "--json"]);
        assert!(ok, "{stderr}");
        assert_eq!(docs(&stdout), docs(&from_file), "{stderr}");
    }
    let model = dir.path().join("m");
    let model = model.to_str().unwrap();
    let (ok, _, stderr) = piped(
        &parquet,
        &[
            "train",
            "--train",
            "/dev/stdin",
            "--epochs",
            "1",
            "--quiet",
            "--save",
            model,
        ],
    );
    assert!(ok, "{stderr}");
    let (ok, scores, stderr) = distillrank(&["predict", "--model", model, &vali]);
    assert!(ok, "{stderr}");
    let (ok, piped_scores, stderr) = piped(&text, &["predict", "--model", model, "/dev/stdin"]);
    assert!(ok, "{stderr}");
    assert_eq!(piped_scores, scores);
    let (ok, _, stderr) = piped(&text, &["eval", "--model", model, "/dev/stdin"]);
    assert!(ok, "{stderr}");

    // Read twice: refused by name, with nothing written.
    let converted = dir.path().join("out.parquet");
    let train = letor_data::data("mq2008/Fold1/train.txt");
    let compare = [
        "compare", "--train", &train, "--epochs", "1", "--seeds", "1", "--quiet",
    ];
    let reference = [
        "--valid",
        &vali,
        "--test",
        "/dev/stdin",
        "--reference-model",
        &tree,
    ];
    let teacher = ["--valid", "/dev/stdin", "--teacher-model", &tree];
    let two_splits = ["--valid", "/dev/stdin", "--test", "/dev/stdin"];
    let twice: [Vec<&str>; 11] = [
        // A model named by a pipe: its first bytes tell a tree model from a saved model's files.
        vec!["predict", "--model", "/dev/stdin", &vali],
        vec!["eval", "--model", "/dev/stdin", &vali],
        vec![
            "train",
            "--train",
            "/dev/stdin",
            "--prepared-cache",
            "--epochs",
            "1",
        ],
        vec![
            "data",
            "convert",
            "/dev/stdin",
            "-o",
            converted.to_str().unwrap(),
        ],
        vec!["predict", "--model", &tree, "/dev/stdin"],
        vec!["eval", "--model", &tree, "/dev/stdin"],
        [&compare[..], &reference].concat(),
        [&compare[..], &teacher].concat(),
        // One pipe named for two splits: the second would find it empty.
        [&compare[..], &two_splits].concat(),
        [
            &["objectives", "--train", &train, "--epochs", "1"][..],
            &two_splits,
        ]
        .concat(),
        // A sweep prepares the data at each value: the second value would find it empty.
        vec![
            "sweep",
            "--train",
            "/dev/stdin",
            "--param",
            "tau-target",
            "--values",
            "0.5,1",
            "--seeds",
            "1",
            "--quiet",
            "--epochs",
            "1",
            "--methods",
            "no-distillation",
        ],
    ];
    for args in twice {
        let (ok, _, stderr) = piped(&text, &args);
        assert!(!ok, "{args:?} read a pipe twice");
        assert!(
            stderr.contains("/dev/stdin is not a regular file")
                && stderr.contains("a file on disk"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    assert!(!converted.exists());
}

/// `export` of a listwise model (attention over the query's documents) says that its graph's
/// batch is one query's documents, whole, in words and in `--json`, where it named a batch of
/// feature vectors alone, as an MLP's.
#[test]
fn export_of_a_listwise_model_says_a_batch_is_one_query() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    let (ok, _, stderr) = distillrank(&[
        "train",
        "--queries",
        "60",
        "--epochs",
        "1",
        "--widths",
        "8",
        "--attention-heads",
        "2",
        "--backend",
        "cpu",
        "--quiet",
        "--save",
        &at("m"),
    ]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = distillrank(&["export", "--model", &at("m"), "--onnx", &at("m.onnx")]);
    assert!(
        ok && stderr.contains("the documents of one query, whole"),
        "{stderr}"
    );
    let (ok, stdout, stderr) = distillrank(&[
        "--json",
        "export",
        "--model",
        &at("m"),
        "--onnx",
        &at("m.onnx"),
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["batch_is_one_query"], true, "{v}");
}

/// `--widths none` is a model without hidden layers, a linear model (the PFD paper's section 5),
/// in every command that takes widths, as `"widths": []` is in setup.json and Python: `train`
/// saves one and `export` writes its graph; `compare --teacher-widths none` gives linear
/// teachers, and its setup.json and report give the command back with `none`, where they wrote
/// `--widths ''` before, which no command takes; `objectives` and `bench train` train one.
#[test]
fn widths_none_is_a_linear_model_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    let json = |path: String| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let small = ["--queries", "100", "--epochs", "1", "--quiet"];
    let (ok, _, stderr) = distillrank(
        &[
            &["train", "--widths", "none", "--save", &at("m")][..],
            &small,
        ]
        .concat(),
    );
    assert!(ok, "{stderr}");
    assert_eq!(json(at("m.json"))["widths"], serde_json::json!([]));
    let (ok, _, stderr) = distillrank(&["export", "--model", &at("m"), "--onnx", &at("m.onnx")]);
    assert!(ok, "{stderr}");

    let compare = [
        "compare",
        "--widths",
        "none",
        "--teacher-widths",
        "none",
        "--seeds",
        "1",
    ];
    let (ok, _, stderr) = distillrank(&[&compare[..], &small, &["--out", &at("c")]].concat());
    assert!(ok, "{stderr}");
    let setup = json(at("c/setup.json"));
    assert_eq!(
        (&setup["widths"], &setup["teacher_widths"]),
        (&serde_json::json!([]), &serde_json::json!([]))
    );
    assert_eq!(
        json(at("c/students/pfd.json"))["widths"],
        serde_json::json!([])
    );
    let report = std::fs::read_to_string(at("c/report.md")).unwrap();
    assert!(
        report.contains("--widths none --teacher-widths none"),
        "{report}"
    );
    // setup.json (and Python) give the list itself; the CLI's word there is refused with it.
    let mut worded = setup.clone();
    worded["widths"] = serde_json::json!("none");
    std::fs::write(at("worded.json"), worded.to_string()).unwrap();
    let (ok, _, stderr) = distillrank(&["compare", "--setup", &at("worded.json")]);
    assert!(
        !ok && stderr.contains("or [] for no hidden layer"),
        "{stderr}"
    );
    // So is null, in words; and a number where a field holds text or a switch is no number
    // out of range.
    worded["widths"] = serde_json::Value::Null;
    std::fs::write(at("null.json"), worded.to_string()).unwrap();
    let (ok, _, stderr) = distillrank(&["compare", "--setup", &at("null.json")]);
    assert!(
        !ok && stderr.contains("setup field widths: null, expected a list of whole numbers in")
            && stderr.contains("or [] for no hidden layer"),
        "{stderr}"
    );
    for (field, words) in [
        (
            r#"{"data": {"privileged": 30}}"#,
            "setup field data.privileged: integer `30`, expected text in quotes",
        ),
        (
            r#"{"data": {"prepared_cache": 1}}"#,
            "setup field data.prepared_cache: integer `1`, expected true or false",
        ),
        (
            r#"{"data": {"transform": null}}"#,
            "setup field data.transform: null, expected one of `signed-log1p`, `standardize`, `rank-gauss` in quotes",
        ),
    ] {
        std::fs::write(at("typed.json"), field).unwrap();
        let (ok, _, stderr) = distillrank(&["compare", "--setup", &at("typed.json")]);
        assert!(!ok && stderr.contains(words), "{field}: {stderr}");
    }

    let (ok, _, stderr) = distillrank(&[
        "objectives",
        "--widths",
        "none",
        "--epochs",
        "1",
        "--seeds",
        "1",
        "--quiet",
        "--out",
        &at("o"),
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(
        json(at("o/setup.json"))["objectives"]["widths"],
        serde_json::json!([])
    );
    let (ok, _, stderr) = distillrank(&[
        "bench",
        "train",
        "--widths",
        "none",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--features",
        "8",
        "--groups-per-batch",
        "2",
        "--docs-per-group",
        "8",
        "--backend",
        "cpu",
    ]);
    assert!(ok, "{stderr}");

    // The word is the whole value: beside a width, or empty, it is refused by the flag's range.
    for bad in ["none,64", "", "0"] {
        let (ok, _, stderr) = distillrank(&["train", "--widths", bad, "--queries", "100"]);
        assert!(
            !ok && stderr.contains("or none for no hidden layer"),
            "{bad}: {stderr}"
        );
    }
}

/// A file name that is not UTF-8 is refused by its flag (or place) in every command, before
/// anything runs: a run names its files in setup.json, reports and messages as UTF-8, where the
/// name would have changed (`--train` read another file, `--save` wrote another, and `--out`
/// panicked writing the report's command line).
#[test]
fn a_file_name_that_is_not_utf8_is_refused_by_its_flag_in_every_command() {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::OsStr::from_bytes(b"o\xffut");
    let mut flagged = std::ffi::OsString::from("--save=");
    flagged.push(name);
    let lines: [(&[&str], &str); 5] = [
        (&["compare", "--queries", "100", "--out"], "--out"),
        (
            &["sweep", "--param", "alpha", "--values", "0.5", "--out"],
            "--out",
        ),
        (&["objectives", "--out"], "--out"),
        (&["train", "--train"], "--train"),
        (&["data", "stats"], "argument 3"),
    ];
    let mut runs: Vec<(Vec<std::ffi::OsString>, &str)> = lines
        .iter()
        .map(|(args, flag)| {
            let mut line: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
            line.push(name.into());
            (line, *flag)
        })
        .collect();
    runs.push((vec!["train".into(), flagged], "--save"));
    for (line, flag) in runs {
        let out = cli_run::command().args(&line).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{line:?}: {stderr}");
        assert!(
            stderr.contains(&format!("{flag}: 'o\u{fffd}ut' is not UTF-8 text")),
            "{line:?}: {stderr}"
        );
    }
}

/// A listwise model keeps each training query's attention probabilities (heads × m²) for the
/// backward pass: a query too long for the machine's memory is refused by its length before
/// anything trains, where it aborted allocating (a query of 200,000 documents needs 640 GB).
/// Scoring one needs memory in its length (`scoring_a_long_query_a_block_of_rows_at_a_time_...`).
#[test]
fn a_training_query_too_long_for_attention_in_memory_is_refused_by_its_length() {
    use std::fmt::Write;
    let dir = tempfile::tempdir().unwrap();
    let (train, valid) = (dir.path().join("train.txt"), dir.path().join("valid.txt"));
    let mut text = String::new();
    for d in 0..200_000 {
        let _ = writeln!(text, "{} qid:1 1:{} 2:{}", d % 3, d % 7, d % 11);
    }
    std::fs::write(&train, text).unwrap();
    let mut text = String::new();
    for d in 0..60 {
        let _ = writeln!(text, "{} qid:{} 1:{} 2:{}", d % 3, 2 + d / 10, d % 7, d % 5);
    }
    std::fs::write(&valid, text).unwrap();
    let (ok, _, stderr) = distillrank(&[
        "train",
        "--train",
        train.to_str().unwrap(),
        "--valid",
        valid.to_str().unwrap(),
        "--attention-heads",
        "2",
        "--widths",
        "8",
        "--epochs",
        "1",
        "--min-group-size",
        "1",
        "--privileged",
        "cols:2",
        "--training-labels",
        "grades",
        "--backend",
        "cpu",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("the largest training query (200000 documents")
            && stderr.contains("640.0 GB in memory"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Every file under `dir`, with its bytes.
fn files_under(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut files = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(files_under(&path));
        } else {
            files.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    files
}

/// An output that is one of the command's inputs is refused before any work, in every command
/// that writes a file, and nothing is written: the same file by another name (`./`, absolute,
/// `/dev/stdin` redirected from it), a saved model's two files, the `.query` file beside a data
/// file, a file inside a folder read as parts, and an input inside a run's `--out` folder under
/// a name the run writes. A cache is not written beside `/dev/stdin`. Before, each of these
/// replaced the input (a data file, a model, its group sizes) and exited 0.
#[test]
fn class_an_output_that_is_an_input_is_refused_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    let copy = |from: String, to: &str| std::fs::copy(from, at(to)).unwrap();
    copy(letor_data::data("mq2008/Fold1/vali.txt"), "d.txt");
    copy(at("d.txt"), "v.json");
    copy(letor_data::data("lightgbm_rank/rank.test"), "r.txt");
    copy(
        letor_data::data("lightgbm_rank/rank.test.query"),
        "r.txt.query",
    );
    copy(at("r.txt.query"), "q.json");
    for folder in ["parts", "cmp", "sw", "ob"] {
        std::fs::create_dir(at(folder)).unwrap();
    }
    copy(at("d.txt"), "cmp/results.csv");
    copy(at("d.txt"), "sw/sweep.csv");
    copy(at("d.txt"), "ob/results.csv");
    // `@name` is the file `name` in the folder.
    let args = |line: &str| -> Vec<String> {
        line.split_whitespace()
            .map(|word| word.strip_prefix('@').map_or(word.to_string(), at))
            .collect()
    };
    let small = " --epochs 1 --widths 4 --seeds 1 --quiet";
    for setup in [
        "train --train @d.txt --epochs 1 --widths 4 --quiet --save @m",
        "data simulate-logs @d.txt -o @logged.txt --sessions 3 --quiet",
        "data convert @d.txt -o @parts/part-1.parquet",
    ] {
        let (ok, _, stderr) =
            distillrank(&args(setup).iter().map(String::as_str).collect::<Vec<_>>());
        assert!(ok, "{setup}: {stderr}");
    }
    let cases = [
        // A prefix's .json is the model's: a file of that name given as an input.
        "train --train @d.txt --valid @v.json --save @v.json",
        "train --train @r.txt --train-query @q.json --save @q",
        "export --model @m --onnx @m.json",
        "export --model @m.json --onnx @m.safetensors",
        "predict --model @m @d.txt --run @d.txt",
        "predict --model @m @d.txt --run @m.safetensors",
        "predict --model @m @r.txt --run @r.txt.query",
        "predict --model @m /dev/stdin --run /dev/stdin <d.txt",
        "data convert @d.txt -o @d.txt",
        "data convert @d.txt -o @parts/../d.txt",
        "data convert @d.txt -o /dev/stdin <d.txt",
        "data convert @r.txt -o @r.txt.query",
        "data convert @parts -o @parts/part-2.parquet",
        "data simulate-logs @r.txt -o @r.txt.query --sessions 3",
        "data aggregate-logs @r.txt --impressions @logged.txt.impressions.tsv -o @r.txt.query",
        "data cache /dev/stdin <d.txt",
        "train --train /dev/stdin --prepared-cache --epochs 1 <d.txt",
    ]
    .map(String::from)
    .into_iter()
    .chain(
        [
            "compare --train @cmp/results.csv --valid @d.txt --out @cmp",
            "sweep --param alpha --values 0.5 --train @sw/sweep.csv --valid @d.txt --out @sw",
            "objectives --train @ob/results.csv --valid @d.txt --test @d.txt --out @ob",
        ]
        .map(|line| format!("{line}{small}")),
    );
    for case in cases {
        let (line, stdin) = match case.split_once(" <") {
            Some((line, file)) => (line.to_string(), Some(at(file))),
            None => (case.clone(), None),
        };
        let before = files_under(dir.path());
        let mut command = cli_run::command();
        command.args(args(&line));
        if let Some(file) = &stdin {
            command.stdin(std::fs::File::open(file).unwrap());
        }
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{case} ran");
        assert!(
            stderr.contains("this command reads")
                || stderr.contains("names a stream of this process"),
            "{case}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            before == files_under(dir.path()),
            "{case} changed the files"
        );
    }
    // Nothing was written into /dev.
    assert!(!Path::new("/dev/stdin.drcache").exists());
}

/// `train` trains one model alone: a teacher's or a reference's flag, which it read and then
/// ignored, is refused by name, naming the commands that use it.
#[test]
fn train_refuses_a_teacher_or_a_reference_it_has_no_use_for() {
    let vali = letor_data::data("mq2008/Fold1/vali.txt");
    for (flag, value, words) in [
        ("--teacher-model", "t.txt", "with no teacher"),
        ("--teacher-scores", "a,b,c", "with no teacher"),
        ("--teacher-columns", "from-1", "with no teacher"),
        ("--reference-model", "t.txt", "compares it with nothing"),
        ("--reference-scores", ",b,c", "compares it with nothing"),
    ] {
        let (ok, _, stderr) =
            distillrank(&["train", "--train", &vali, flag, value, "--epochs", "1"]);
        assert!(
            !ok && stderr.contains(&format!("{flag}: train trains one model alone"))
                && stderr.contains(words),
            "{flag}: {stderr}"
        );
    }
}

/// An output named by a link is written through it, as `>` writes: a link to standard output
/// (`/dev/stdout`, here a link of the test's own) with the output redirected to a file puts the
/// run in that file, where renaming onto the link replaced the link (as root, `/dev/stdout`
/// itself) with a plain file, and the redirected file stayed empty.
#[test]
fn an_output_named_by_a_link_is_written_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let data = letor_data::data("mq2008/Fold1/vali.txt");
    let model = at("m").display().to_string();
    let (ok, _, stderr) = distillrank(&[
        "train", "--train", &data, "--epochs", "1", "--widths", "4", "--quiet", "--save", &model,
    ]);
    assert!(ok, "{stderr}");
    let link = at("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let redirected = at("run.trec");
    let out = cli_run::command()
        .args(["predict", "--model", &model, &data, "--run"])
        .arg(&link)
        .stdout(std::fs::File::create(&redirected).unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let run = std::fs::read_to_string(&redirected).unwrap();
    assert!(run.lines().count() > 100 && run.contains(" Q0 "), "{run}");
    // A link to a file: the file is written, the link stays.
    let file = at("v3.onnx");
    std::fs::write(&file, "old").unwrap();
    std::os::unix::fs::symlink(&file, at("latest.onnx")).unwrap();
    let latest = at("latest.onnx").display().to_string();
    let (ok, _, stderr) = distillrank(&["export", "--model", &model, "--onnx", &latest]);
    assert!(ok, "{stderr}");
    assert!(std::fs::symlink_metadata(at("latest.onnx"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_ne!(std::fs::read(&file).unwrap(), b"old");
    // A link to a file not written yet (relative, as `ln -s v4.onnx next.onnx` makes it): the
    // file is made where the link leads, and the link stays.
    std::os::unix::fs::symlink("v4.onnx", at("next.onnx")).unwrap();
    let next = at("next.onnx").display().to_string();
    let (ok, _, stderr) = distillrank(&["export", "--model", &model, "--onnx", &next]);
    assert!(ok, "{stderr}");
    assert!(std::fs::symlink_metadata(at("next.onnx"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read(at("v4.onnx")).unwrap().len() > 100);
    // One that leads into a folder that does not exist: refused, naming that folder.
    std::os::unix::fs::symlink(at("gone/v5.onnx"), at("lost.onnx")).unwrap();
    let lost = at("lost.onnx").display().to_string();
    let (ok, _, stderr) = distillrank(&["export", "--model", &model, "--onnx", &lost]);
    assert!(
        !ok && stderr.contains("gone") && stderr.contains("does not exist"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A split that holds another's queries (the same qid with the same documents) is warned of, in
/// words that say which files and what the figures then measure; the run goes on, as scoring
/// the training queries can be meant.
#[test]
fn a_test_file_that_holds_training_queries_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let train = letor_data::data("mq2008/Fold1/vali.txt");
    let test = letor_data::data("mq2008/Fold1/test.txt");
    let out = dir.path().join("out").display().to_string();
    let run_on = |train: &str, valid: &str, test: &str| {
        let (ok, _, stderr) = distillrank(&[
            "compare",
            "--train",
            train,
            "--valid",
            valid,
            "--test",
            test,
            "--epochs",
            "1",
            "--widths",
            "4",
            "--seeds",
            "1",
            "--methods",
            "no-distillation",
            "--out",
            &out,
            "--quiet",
        ]);
        assert!(ok, "{stderr}");
        stderr
    };
    let run = |valid: &str, test: &str| run_on(&train, valid, test);
    let stderr = run(&test, &train);
    assert!(
        stderr.contains("the test split")
            && stderr.contains("holds 157 of its 157 queries")
            && stderr.contains("as the training split")
            && stderr.contains("trained on"),
        "{stderr}"
    );
    assert!(!run(&test, &test).contains("as the training split"));
    assert!(run(&test, &test).contains("as the validation split"));
    assert!(!run(&train, &test).is_empty());
    let clean = run(&test, &letor_data::data("mq2008/Fold1/train.txt"));
    assert!(!clean.contains("holds"), "{clean}");
    // Qids numbered 1..n on the file's lines are the file's own: compared as any others.
    let mut next = 0u64;
    let mut last = String::new();
    let numbered: String = std::fs::read_to_string(&train)
        .unwrap()
        .lines()
        .map(|line| {
            let qid = line.split(' ').nth(1).unwrap().to_string();
            if qid != last {
                (next, last) = (next + 1, qid.clone());
            }
            line.replacen(&qid, &format!("qid:{next}"), 1) + "\n"
        })
        .collect();
    let renumbered = dir.path().join("numbered.txt");
    std::fs::write(&renumbered, numbered).unwrap();
    let renumbered = renumbered.display().to_string();
    let stderr = run_on(&renumbered, &test, &renumbered);
    assert!(
        stderr.contains("holds 157 of its 157 queries (qid 1 first)"),
        "{stderr}"
    );
}

/// `predict --json` prints one object (each document's qid and score, in the file's order);
/// `--run` writes each score in the digits that read back to it, so that two scores never print
/// as a tie.
#[test]
fn predict_prints_json_and_a_run_keeps_every_digit() {
    let dir = tempfile::tempdir().unwrap();
    let data = letor_data::data("mq2008/Fold1/vali.txt");
    let model = dir.path().join("m").display().to_string();
    let (ok, _, stderr) = distillrank(&[
        "train", "--train", &data, "--epochs", "1", "--widths", "4", "--quiet", "--save", &model,
    ]);
    assert!(ok, "{stderr}");
    let (ok, plain, stderr) = distillrank(&["predict", "--model", &model, &data, "--quiet"]);
    assert!(ok, "{stderr}");
    let (ok, json, stderr) =
        distillrank(&["predict", "--model", &model, &data, "--quiet", "--json"]);
    assert!(ok, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let scores: Vec<f32> = json["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    let lines: Vec<f32> = plain
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(scores, lines);
    assert_eq!(json["qid"].as_array().unwrap().len(), lines.len());
    assert_eq!(json["docs"], lines.len());
    let run = dir.path().join("run.trec");
    let (ok, _, stderr) = distillrank(&[
        "predict",
        "--model",
        &model,
        &data,
        "--quiet",
        "--run",
        run.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let mut written: Vec<f32> = std::fs::read_to_string(&run)
        .unwrap()
        .lines()
        .map(|l| l.split(' ').nth(4).unwrap().parse().unwrap())
        .collect();
    let mut expected = lines.clone();
    written.sort_by(f32::total_cmp);
    expected.sort_by(f32::total_cmp);
    assert_eq!(written, expected);
}

/// `predict --run` names each document as qrels do, by its line's docid comment (MQ2008's
/// `#docid = GX...`), where every line has one and no query names one twice; a file without
/// them by `docN`, its 0-based place in its query. It wrote `docN` whatever the file held.
#[test]
fn a_run_names_documents_by_their_docids() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    let test = letor_data::data("mq2008/Fold1/test.txt");
    let (ok, _, stderr) = distillrank(&[
        "train",
        "--bundled",
        "mq2008",
        "--epochs",
        "1",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--quiet",
        "--save",
        &at("m"),
    ]);
    assert!(ok, "{stderr}");
    let (ok, _, stderr) = distillrank(&[
        "predict",
        "--model",
        &at("m"),
        &test,
        "--quiet",
        "--run",
        &at("run"),
    ]);
    assert!(ok, "{stderr}");
    // Each line's score, by (qid, docid): the run gives each document its own line's score.
    let (ok, scores, stderr) = distillrank(&["predict", "--model", &at("m"), &test, "--quiet"]);
    assert!(ok, "{stderr}");
    let text = std::fs::read_to_string(&test).unwrap();
    let named: std::collections::HashMap<(String, String), &str> = text
        .lines()
        .zip(scores.lines())
        .map(|(line, score)| {
            let qid = line
                .split_whitespace()
                .nth(1)
                .unwrap()
                .trim_start_matches("qid:");
            let docid = line
                .split("docid = ")
                .nth(1)
                .unwrap()
                .split_whitespace()
                .next()
                .unwrap();
            ((qid.to_string(), docid.to_string()), score)
        })
        .collect();
    let run = std::fs::read_to_string(at("run")).unwrap();
    assert_eq!(run.lines().count(), text.lines().count());
    for line in run.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        let key = (fields[0].to_string(), fields[2].to_string());
        assert_eq!(named.get(&key), Some(&fields[4]), "{line}");
    }
    // Without docid comments: each document's place in its query.
    let plain = at("plain.txt");
    let stripped: String = text
        .lines()
        .map(|l| l.split('#').next().unwrap().trim_end().to_string() + "\n")
        .collect();
    std::fs::write(&plain, stripped).unwrap();
    let (ok, _, stderr) = distillrank(&[
        "predict",
        "--model",
        &at("m"),
        &plain,
        "--quiet",
        "--run",
        &at("run2"),
    ]);
    assert!(ok, "{stderr}");
    let run = std::fs::read_to_string(at("run2")).unwrap();
    assert!(
        run.lines()
            .all(|l| l.split(' ').nth(2).unwrap().starts_with("doc")),
        "{run}"
    );
}

/// Class: every file a setup names (the data files, the folds directory, the teacher's and the
/// reference's model or scores, each name of a scores list) is kept in a run's `setup.json` by
/// its path from the run's folder, and `--setup` reads it against the setup's folder: the setup
/// runs again from any working directory, with the same figures.
#[test]
fn class_every_file_a_setup_names_is_read_against_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    for split in ["train", "vali", "test"] {
        let text = std::fs::read_to_string(letor_data::data(&format!("mq2008/Fold1/{split}.txt")))
            .unwrap();
        std::fs::write(data.join(format!("{split}.txt")), &text).unwrap();
        // A teacher's scores and a reference's: feature 3 of each document, and its line's place.
        let scores: String = text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                let value = l.split(' ').find_map(|w| w.strip_prefix("3:")).unwrap();
                format!(
                    "{}\n",
                    value.parse::<f64>().unwrap() + (i % 7) as f64 / 100.0
                )
            })
            .collect();
        std::fs::write(data.join(format!("{split}.scores")), scores).unwrap();
    }
    // The test split without its qids, its group sizes in a `.query` file of another name.
    let test = std::fs::read_to_string(data.join("test.txt")).unwrap();
    let mut sizes: Vec<(String, usize)> = Vec::new();
    let mut unnumbered = String::new();
    for line in test.lines() {
        let mut words = line.split(' ');
        let grade = words.next().unwrap();
        let qid = words.next().unwrap().to_string();
        match sizes.last_mut() {
            Some((last, n)) if *last == qid => *n += 1,
            _ => sizes.push((qid, 1)),
        }
        unnumbered.push_str(grade);
        for word in words {
            unnumbered.push(' ');
            unnumbered.push_str(word);
        }
        unnumbered.push('\n');
    }
    std::fs::write(data.join("test-unnumbered.txt"), unnumbered).unwrap();
    let sizes: String = sizes.iter().map(|(_, n)| format!("{n}\n")).collect();
    std::fs::write(data.join("test.groups"), sizes).unwrap();
    let parts = data.join("parts");
    std::fs::create_dir(&parts).unwrap();
    for k in 1..=5 {
        std::fs::copy(
            letor_data::data(&format!("mq2008/S{k}.txt")),
            parts.join(format!("S{k}.txt")),
        )
        .unwrap();
    }
    let small = [
        "--seeds",
        "1",
        "--epochs",
        "1",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--quiet",
        "--tau-target",
        "2.8",
    ];
    let run = |cwd: &Path, args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_distillrank"))
            .args(args)
            .current_dir(cwd)
            .env("XDG_RUNTIME_DIR", std::env::temp_dir())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(
            out.status.success(),
            "{args:?} in {}: {stderr}",
            cwd.display()
        );
    };
    let results = |folder: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(folder.join("results.json")).unwrap())
            .unwrap()
    };
    let cases: [(&str, Vec<&str>); 3] = [
        (
            "query files",
            vec![
                "--train",
                "train.txt",
                "--valid",
                "vali.txt",
                "--test",
                "test-unnumbered.txt",
                "--test-query",
                "test.groups",
                "--methods",
                "no-distillation",
            ],
        ),
        (
            "files",
            vec![
                "--train",
                "train.txt",
                "--valid",
                "vali.txt",
                "--test",
                "test.txt",
                "--methods",
                "no-distillation,pfd",
                "--teacher-scores",
                "train.scores,vali.scores,test.scores",
                "--reference-scores",
                ",vali.scores,test.scores",
            ],
        ),
        (
            "folds",
            vec!["--folds", "parts", "--methods", "no-distillation"],
        ),
    ];
    let mut test_queries = Vec::new();
    for (what, flags) in cases {
        // Written from the data's folder, with names relative to it, into a folder elsewhere.
        let first = dir.path().join(format!("{what}-first"));
        let mut args = vec!["compare", "--out", first.to_str().unwrap()];
        args.extend(&flags);
        args.extend(small);
        run(&data, &args);
        let setup_path = first.join("setup.json");
        let setup: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&setup_path).unwrap()).unwrap();
        let text = setup.to_string();
        assert!(
            !text.contains(&data.display().to_string()),
            "{what}: absolute names in {text}"
        );
        if what == "files" {
            assert_eq!(
                setup["data"]["teacher"]["scores"],
                "../data/train.scores,../data/vali.scores,../data/test.scores"
            );
            assert_eq!(
                setup["data"]["reference"]["scores"],
                ",../data/vali.scores,../data/test.scores"
            );
        } else if what == "folds" {
            assert_eq!(setup["data"]["folds"], "../data/parts");
        } else {
            assert_eq!(
                setup["data"]["source"]["files"]["test_query"],
                "../data/test.groups"
            );
            // The report's command gives the file its flag.
            let report = std::fs::read_to_string(first.join("report.md")).unwrap();
            assert!(report.contains("--test-query"), "{report}");
        }
        // Run again from another working directory.
        let again = dir.path().join(format!("{what}-again"));
        let elsewhere = tempfile::tempdir().unwrap();
        run(
            elsewhere.path(),
            &[
                "compare",
                "--setup",
                setup_path.to_str().unwrap(),
                "--out",
                again.to_str().unwrap(),
                "--quiet",
            ],
        );
        let (a, b) = (results(&first), results(&again));
        // The test split's groups are its own: the same number of queries as the numbered file.
        test_queries.push(b["test_qids"].as_array().map(Vec::len));
        let method = if what == "files" {
            "pfd"
        } else {
            "no-distillation"
        };
        let ndcg = |r: &serde_json::Value| r["methods"][method]["ndcg@8"]["mean"].clone();
        assert!(ndcg(&a).as_f64().is_some(), "{what}: {a}");
        assert_eq!(ndcg(&a), ndcg(&b), "{what}");
    }
    // The test split's groups are its own: as many test queries from the `.query` file as
    // from the numbered file.
    assert!(test_queries[0].is_some_and(|n| n > 0), "{test_queries:?}");
    assert_eq!(test_queries[0], test_queries[1]);
}

/// Class: an empty name for a teacher's or a reference's model or scores (an unset shell
/// variable) is refused by its setting in every door, not read as "none".
#[test]
fn class_an_empty_teacher_or_reference_name_is_refused_in_every_door() {
    let dir = tempfile::tempdir().unwrap();
    for (noun, kind) in [
        ("teacher", "model"),
        ("teacher", "scores"),
        ("reference", "model"),
        ("reference", "scores"),
    ] {
        let flag = format!("--{noun}-{kind}");
        let (ok, _, stderr) = distillrank(&[
            "compare",
            "--bundled",
            "mq2008",
            &flag,
            "",
            "--epochs",
            "1",
            "--quiet",
        ]);
        assert!(
            !ok && stderr.contains(&format!(
                "the {noun}'s {kind} file's name is empty ({flag})"
            )),
            "{flag}: {stderr}"
        );
        let setup = dir.path().join(format!("{noun}-{kind}.json"));
        std::fs::write(
            &setup,
            serde_json::json!({"data": {"source": "mq2008", noun: {kind: " "}}}).to_string(),
        )
        .unwrap();
        let (ok, _, stderr) = distillrank(&["compare", "--setup", setup.to_str().unwrap()]);
        assert!(
            !ok && stderr.contains(&format!("name is empty (data.{noun}.{kind})"))
                && stderr.matches("--").count() == 1,
            "{setup:?}: {stderr}"
        );
    }
}

/// Class: files and flags that nothing would read are refused by flag, not dropped: split files
/// beside the folds, a `--*-query` without its split's file, the generator's flags beside files
/// or folds, the log simulator's without `--privileged logs`; beside `--setup`, as flags beside
/// the setup.
#[test]
fn class_files_and_flags_nothing_would_read_are_refused_by_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = letor_data::data("mq2008/Fold1/vali.txt");
    let folds = letor_data::data("mq2008");
    let setup = dir.path().join("setup.json");
    std::fs::write(&setup, r#"{"data": {"source": "mq2008"}}"#).unwrap();
    let setup = setup.to_str().unwrap();
    let cases: [(&[&str], &str); 11] = [
        (
            &["compare", "--folds", &folds, "--valid", &file],
            "drop --valid",
        ),
        (
            &["compare", "--folds", &folds, "--test-query", &file],
            "drop --test-query",
        ),
        (
            &["compare", "--folds", &folds, "--queries", "50"],
            "--queries describe the generated data",
        ),
        (
            &["compare", "--train", &file, "--noise", "0.5"],
            "--noise describe the generated data",
        ),
        (
            &["compare", "--bundled", "mq2008", "--queries", "50"],
            "describe the generated data",
        ),
        (
            &["compare", "--train", &file, "--sessions", "5"],
            "--sessions describe the simulated logs, which only --privileged logs simulates",
        ),
        (&["compare", "--valid", &file], "--valid needs --train"),
        (
            &["train", "--train", &file, "--valid-query", &file],
            "--valid-query gives the group sizes of the --valid file, and no --valid file is named",
        ),
        (
            &["compare", "--setup", setup, "--sessions", "5"],
            "holds the whole setup: --sessions beside it",
        ),
        (
            &[
                "sweep",
                "--param",
                "alpha",
                "--values",
                "0.5",
                "--setup",
                setup,
                "--valid-query",
                &file,
            ],
            "holds the whole setup: --valid-query beside it",
        ),
        (
            &["objectives", "--setup", setup, "--train", &file],
            "holds the whole setup: --train beside it",
        ),
    ];
    for (args, words) in cases {
        let mut args = args.to_vec();
        args.push("--quiet");
        let (ok, _, stderr) = distillrank(&args);
        assert!(!ok && stderr.contains(words), "{args:?}: {stderr}");
    }
}

/// Class: a setting a run would not read, or could not hold. Each is refused before training,
/// or named where the run goes on without it, in the words of the door it came through: a
/// swept setting's own flag (dropped without a word, and recorded in sweep.json), settings
/// `train` does not read (named by `compare` only), the simulated logs' settings in a setup
/// without logs, the folds given to `train` (refused for `--valid` first, then for the folds),
/// generated privileged features whose pairwise mixing cannot fit (an abort after gigabytes),
/// and `--shown` past the longest query (a table of documents x shown, gigabytes for nothing).
#[test]
fn class_a_setting_a_run_would_not_read_or_could_not_hold_is_named_first() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    let small = [
        "--queries",
        "40",
        "--valid-queries",
        "10",
        "--test-queries",
        "10",
        "--regular",
        "8",
    ];
    let tiny = ["--widths", "8", "--epochs", "1", "--backend", "cpu"];
    let at_model = at("model");
    for (param, flag) in [
        ("alpha", ["--alpha", "0.7"]),
        ("tau-target", ["--tau-target", "3"]),
        ("tau-priv", ["--privileged", "cols:1,2"]),
        ("privileged-count", ["--privileged", "top:2"]),
    ] {
        let mut args = vec!["sweep", "--param", param, "--values", "0.3", "--out"];
        let out = at(&format!("sweep-{param}"));
        args.push(&out);
        args.extend(flag);
        let (ok, _, stderr) = distillrank(&args);
        assert!(
            !ok && stderr.contains(&format!("{} is given beside --param {param}", flag[0])),
            "{args:?}: {stderr}"
        );
        assert!(!Path::new(&out).join("sweep.json").exists());
    }
    // train names what it does not read, as compare does.
    let mut args = vec!["train", "--training-labels", "grades", "--tau-target", "3"];
    args.extend(["--dual-rate-factor", "5"]);
    args.extend(small);
    args.extend(tiny);
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    for flag in ["--tau-target 3", "--dual-rate-factor 5"] {
        assert!(
            stderr
                .lines()
                .any(|l| l.contains(flag) && l.contains("is not used")),
            "{flag}: {stderr}"
        );
    }
    // eval's and predict's flags that a run does not read: the Gumbel labelling's without
    // binary labels, a tree model's columns for a saved distillrank model.
    let data = letor_data::data("mq2008/Fold1/vali.txt");
    let mut args = vec!["train", "--train", &data, "--save", &at_model];
    args.extend(tiny);
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    for (command, flags, words) in [
        (
            "eval",
            &["--tau-target", "3", "--split", "valid"][..],
            "--tau-target, --split are not used: read only with --labels binary",
        ),
        (
            "eval",
            &["--columns", "from-1"][..],
            "--columns is not used: read only for a LightGBM or XGBoost model",
        ),
        (
            "predict",
            &["--absent", "zero"][..],
            "--absent is not used: read only for a LightGBM or XGBoost model",
        ),
    ] {
        let mut args = vec![command, "--model", &at_model, &data];
        args.extend(flags);
        let (ok, _, stderr) = distillrank(&args);
        assert!(ok && stderr.contains(words), "{args:?}: {stderr}");
    }
    // A click model's parameter under another click model.
    let mut args = vec![
        "train",
        "--train",
        &data,
        "--privileged",
        "logs",
        "--sessions",
        "20",
    ];
    args.extend(["--click-model", "cascade", "--position-bias", "2"]);
    args.extend(["--continue-after-click", "0.9"]);
    args.extend(tiny);
    let (ok, _, stderr) = distillrank(&args);
    for words in [
        "--position-bias 2.0 is not used: only the pbm click model reads it, and --click-model is cascade",
        "--continue-after-click 0.9 is not used: only the dcm click model reads it",
    ] {
        assert!(ok && stderr.contains(words), "{words}: {stderr}");
    }
    // ... and a sweep of it, every value of which would train the same models, refused.
    let out = at("sweep-position-bias");
    let mut args = vec![
        "sweep",
        "--train",
        &data,
        "--privileged",
        "logs",
        "--out",
        &out,
    ];
    args.extend([
        "--click-model",
        "cascade",
        "--param",
        "position-bias",
        "--values",
        "0.5,2",
    ]);
    let (ok, _, stderr) = distillrank(&args);
    assert!(
        !ok && stderr.contains("a sweep of position-bias: only the pbm click model reads it"),
        "{stderr}"
    );
    // A setup file's logs without logs: named by their fields.
    let setup = at("logs.json");
    std::fs::write(
        &setup,
        r#"{"data": {"logs": {"sessions": 5}}, "methods": ["no-distillation"], "epochs": 1, "widths": [8], "seeds": 1, "backend": "cpu"}"#,
    )
    .unwrap();
    let (ok, _, stderr) = distillrank(&["compare", "--setup", &setup, "--out", &at("logs")]);
    assert!(
        ok && stderr.contains("data.logs.sessions 5 is not used") && !stderr.contains("--sessions"),
        "{stderr}"
    );
    // train takes one split: the folds are refused as such, before what lies beside them.
    let folds = letor_data::data("mq2008");
    let (ok, _, stderr) = distillrank(&["train", "--folds", &folds, "--valid", &folds]);
    assert!(
        !ok && stderr.contains("runs a comparison on each fold")
            && !stderr.contains("drop --valid"),
        "{stderr}"
    );
    // Generated privileged features are mixed pairwise: a count whose mixing cannot fit is
    // refused with what it needs, before anything is drawn.
    let mut args = vec!["train", "--privileged-count", "65535"];
    args.extend(small);
    args.extend(tiny);
    let (ok, _, stderr) = distillrank(&args);
    assert!(
        !ok && stderr.contains("65535 privileged, mixed pairwise") && stderr.contains("GB"),
        "{stderr}"
    );
    // Multi-teacher PFD names the setting that asks for too many teachers, and why.
    let mut args = vec![
        "compare",
        "--methods",
        "multi-teacher-pfd",
        "--teachers",
        "3",
    ];
    args.extend(["--privileged-count", "2", "--seeds", "1", "--out"]);
    let out = at("teachers");
    args.push(&out);
    args.extend(small);
    args.extend(tiny);
    let (ok, _, stderr) = distillrank(&args);
    assert!(
        !ok && stderr.contains("--teachers 3: multi-teacher PFD needs 2..=2 teachers"),
        "{stderr}"
    );
    // No session shows more documents than the longest query has: --shown past it simulates
    // tables by rank as long as that query, not as long as --shown.
    let train = letor_data::data("mq2008/Fold1/vali.txt");
    let (_, stats, _) = distillrank(&["data", "stats", &train, "--json"]);
    let stats: serde_json::Value = serde_json::from_str(&stats).unwrap();
    let longest = stats["docs_per_query_max"].as_u64().unwrap() as usize;
    let logged = at("logged.txt");
    let (ok, _, stderr) = distillrank(&[
        "data",
        "simulate-logs",
        &train,
        "-o",
        &logged,
        "--shown",
        "100000",
        "--sessions",
        "5",
    ]);
    assert!(ok, "{stderr}");
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{logged}.logs.json")).unwrap())
            .unwrap();
    let ranks = sidecar["stats"]["ctr_by_rank"].as_array().map(Vec::len);
    assert_eq!(ranks, Some(longest), "{}", sidecar["stats"]);
}

/// Class: what the global objectives' command would not read. A flag of the data it does not
/// describe (the files' threshold and `.query` files for generated examples, the generator's
/// settings beside files) is refused by name (they were dropped); the multipliers' settings
/// without a constraint and the surrogate with the log loss alone are named; a file without its
/// validation and test splits has them held out, as from a setup file (the command line alone
/// refused it); a split with one class names its file and the setting that makes the classes; a
/// diverged run names this command's settings, not a comparison's.
#[test]
fn class_what_the_objectives_command_would_not_read_is_named_first() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    // The smallest run of the synthetic task, as words.
    let tiny: Vec<&str> = "--epochs 1 --seeds 1 --widths 4 --backend cpu"
        .split(' ')
        .collect();
    let small: Vec<&str> = "--train-examples 300 --valid-examples 200 --test-examples 200"
        .split(' ')
        .collect();
    let train = letor_data::data("mq2008/Fold1/train.txt");
    for (flags, words) in [
        (
            vec!["--label-threshold", "2", "--train-query", "q.txt"],
            "--label-threshold, --train-query describe LETOR files, and these examples are generated",
        ),
        (
            vec!["--bundled", "mq2008", "--features", "7", "--noise", "0.5"],
            "--features, --noise describe the generated examples, and these data are read (--bundled)",
        ),
        (
            vec!["--train", &train, "--positive-rate", "0.5"],
            "--positive-rate describes the generated examples, and these data are read (--train)",
        ),
    ] {
        let out = at("refused");
        let mut args = vec!["objectives", "--out", &out];
        args.extend(&flags);
        args.extend(&tiny);
        let (ok, _, stderr) = distillrank(&args);
        assert!(!ok && stderr.contains(words), "{flags:?}: {stderr}");
    }
    // A split file without its training file is said first, before the flags that follow
    // from which data these are.
    let (ok, _, stderr) = distillrank(&[
        "objectives",
        "--valid",
        &train,
        "--test",
        &train,
        "--label-threshold",
        "2",
    ]);
    assert!(
        !ok && stderr.contains("--valid/--test need --train"),
        "{stderr}"
    );
    // Held out, as from a setup; the settings no objective reads, named.
    let out = at("held-out");
    let mut args = vec!["objectives", "--train", &train, "--out", &out];
    args.extend(["--objectives", "logloss,roc-auc", "--dual-rate-factor", "5"]);
    args.extend(["--initial-lambda", "3"]);
    args.extend(&tiny);
    let (ok, _, stderr) = distillrank(&args);
    assert!(ok, "{stderr}");
    for words in [
        "--dual-rate-factor 5 is not used: no objective of --objectives logloss,roc-auc has a constraint",
        "--initial-lambda 3 is not used",
    ] {
        assert!(stderr.contains(words), "{words}: {stderr}");
    }
    let mut args = vec!["objectives", "--out", &out, "--objectives", "logloss"];
    args.extend(["--surrogate", "hinge"]);
    args.extend(&small);
    args.extend(&tiny);
    let (ok, _, stderr) = distillrank(&args);
    assert!(
        ok && stderr.contains("--surrogate hinge is not used: the log loss bounds nothing"),
        "{stderr}"
    );
    // One class: the split's file and the threshold.
    let mut args = vec![
        "objectives",
        "--bundled",
        "mq2008",
        "--label-threshold",
        "3",
        "--out",
        &out,
    ];
    args.extend(&tiny);
    let (ok, _, stderr) = distillrank(&args);
    assert!(
        !ok && stderr.contains("binary metrics need both classes; change --label-threshold 3"),
        "{stderr}"
    );
    // Diverged: this command's settings.
    let mut args = vec!["objectives", "--out", &out, "--objectives", "auc-pr"];
    args.extend(["--dual-rate-factor", "1000000000", "--lr", "10"]);
    args.extend(&small);
    args.extend(&tiny);
    let (ok, _, stderr) = distillrank(&args);
    assert!(
        !ok && stderr.contains("diverged")
            && stderr.contains("--dual-rate-factor")
            && !stderr.contains("--alpha"),
        "{stderr}"
    );
}

/// A privileged split no data can take (`nope`, `cols:0`, `top:0`) is refused before any data
/// are read, in every command that splits and from a setup file: here a training file whose
/// first line is not LETOR would otherwise speak first.
#[test]
fn a_privileged_split_no_data_can_take_is_refused_before_the_data_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name).display().to_string();
    let broken = at("broken.txt");
    std::fs::write(&broken, "not a LETOR line\n").unwrap();
    for spec in ["nope", "cols:0", "top:0", "top:100%"] {
        for command in [
            &["train"][..],
            &["compare", "--seeds", "1", "--out", &at("c")],
            &[
                "sweep",
                "--param",
                "alpha",
                "--values",
                "0.1",
                "--out",
                &at("s"),
            ],
            &["data", "stats"],
        ] {
            let mut args = command.to_vec();
            if command[0] == "data" {
                args.push(&broken);
            } else {
                args.extend(["--train", &broken, "--epochs", "1"]);
            }
            args.extend(["--privileged", spec]);
            let (ok, _, stderr) = distillrank(&args);
            assert!(
                !ok && stderr.contains(&format!("privileged features '{spec}'"))
                    && !stderr.contains("broken.txt:1"),
                "{args:?}: {stderr}"
            );
        }
        let setup = at("setup.json");
        let document = serde_json::json!({
            "data": {"source": {"files": {"train": broken}}, "privileged": spec}
        });
        std::fs::write(&setup, document.to_string()).unwrap();
        let (ok, _, stderr) = distillrank(&["compare", "--setup", &setup, "--out", &at("f")]);
        assert!(
            !ok && stderr.contains("data.privileged") && !stderr.contains("broken.txt:1"),
            "{spec}: {stderr}"
        );
    }
}

/// Class: a file that is not there. Each file a comparison names (a split's, a teacher's or a
/// reference's model or scores) is refused before any data are read, named with the setting
/// that names it: the flag on the command line, the field in a setup file. A teacher's scores
/// file that was not there used to be found only once the data were prepared, behind whatever
/// the data had to say first (here: a validation split too small to pick an epoch), and a
/// setup's file under no field.
#[test]
fn class_a_file_that_is_not_there_is_named_with_its_setting_before_anything_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let gone = dir.path().join("gone.txt").display().to_string();
    let data = letor_data::data("mq2008/Fold1/vali.txt");
    let at = |name: &str| dir.path().join(name).display().to_string();
    for (flag, field) in [
        ("--train", "data.source.files.train"),
        ("--valid", "data.source.files.valid"),
        ("--teacher-scores", "data.teacher.scores"),
        ("--teacher-model", "data.teacher.model"),
        ("--reference-model", "data.reference.model"),
    ] {
        // The command line: the flag.
        let train = if flag == "--train" { &gone } else { &data };
        let mut args = vec!["compare", "--train", train, "--seeds", "1", "--epochs", "1"];
        if flag != "--train" {
            args.extend([flag, &gone]);
        }
        let out = at("out");
        args.extend(["--quiet", "--out", &out]);
        let (ok, _, stderr) = distillrank(&args);
        assert!(!ok, "{flag}");
        assert!(
            stderr.contains(&format!("{gone}: No such file"))
                && stderr.contains(&format!("({flag})"))
                && !stderr.contains("validation split"),
            "{flag}: {stderr}"
        );
        // A setup file: the field.
        let mut document = serde_json::json!({
            "seeds": 1, "epochs": 1, "data": {"source": {"files": {"train": data}}}
        });
        let mut section = &mut document;
        let (path, last) = field.rsplit_once('.').unwrap();
        for key in path.split('.') {
            section = &mut section[key];
        }
        section[last] = gone.clone().into();
        std::fs::write(at("setup.json"), document.to_string()).unwrap();
        let (ok, _, stderr) = distillrank(&["compare", "--setup", &at("setup.json")]);
        assert!(!ok, "{field}");
        assert!(
            stderr.contains(&format!("{gone}: No such file"))
                && stderr.contains(&format!("({field})"))
                && !stderr.contains("(--"),
            "{field}: {stderr}"
        );
    }
    // The global objectives' files, a .query file among them.
    let query = letor_data::data("mq2008/Fold1/test.txt");
    let (ok, _, stderr) = distillrank(&[
        "objectives",
        "--train",
        &data,
        "--valid",
        &data,
        "--test",
        &query,
        "--test-query",
        &gone,
        "--out",
        &at("objectives"),
    ]);
    assert!(
        !ok && stderr.contains(&format!("{gone}: No such file"))
            && stderr.contains("(--test-query)"),
        "{stderr}"
    );
    // Folds: a teacher every fold reads, before any fold's data; from a setup file, by field.
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--bundled",
        "mq2008-folds",
        "--teacher-model",
        &gone,
        "--out",
        &at("folds"),
    ]);
    assert!(
        !ok && stderr.contains(&format!("--teacher-model {gone}: no such file")),
        "{stderr}"
    );
    let document = serde_json::json!({
        "data": {"source": "mq2008_folds", "teacher": {"model": format!("{gone}{{fold}}")}}
    });
    std::fs::write(at("folds.json"), document.to_string()).unwrap();
    let (ok, _, stderr) = distillrank(&["compare", "--setup", &at("folds.json")]);
    assert!(
        !ok && stderr.contains("data.teacher.model") && !stderr.contains("--teacher-model"),
        "{stderr}"
    );
}

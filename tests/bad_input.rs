//! Nothing silently wrong: every class of bad input, bad argument and bad output path ends in a
//! clear error (or, where the data allow it, an explicit n/a), never in numbers that mean nothing,
//! a panic or an abort. One test per class; each names the members it tries.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/letor_data.rs"]
mod letor_data;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use distillrank::data::cache::{cache_path, read_cache, write_cache};
use distillrank::data::letor::{parse_letor_bytes, ReadOptions};
use distillrank::data::prepare::FeatureView;
use distillrank::model::mlp::Mlp;
use distillrank::model::Ensemble;
use distillrank::model::LossKind;
use distillrank::model_io::{self, ModelConfig};

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_distillrank"));
    c.args(args).current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn run(args: &[&str]) -> (Output, String, String) {
    let out = command(args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    (out, stdout, stderr)
}

/// Runs a command that must fail cleanly: exit status 1 (an error) or 2 (a flag's value refused
/// as it is parsed), not a signal or an abort; an `error:` line containing every fragment,
/// nothing on stdout, no panic.
fn refused(args: &[&str], fragments: &[&str]) -> String {
    let (out, stdout, stderr) = run(args);
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "{args:?}: {:?} {stderr}",
        out.status.code()
    );
    assert!(stdout.is_empty(), "{args:?} printed results: {stdout}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    for f in fragments {
        assert!(stderr.contains(f), "{args:?}: '{f}' missing from: {stderr}");
    }
    stderr
}

fn mq(file: &str) -> String {
    letor_data::data(&format!("mq2008/Fold1/{file}"))
}

/// A small synthetic LETOR file (`regular` + 6 privileged features) in `dir`.
fn synth(dir: &Path, name: &str, queries: usize, regular: usize, seed: u64) -> String {
    let path = dir.join(name).display().to_string();
    let (out, _, stderr) = run(&[
        "data",
        "synth",
        "--queries",
        &queries.to_string(),
        "--regular",
        &regular.to_string(),
        "--synth-seed",
        &seed.to_string(),
        "-o",
        &path,
    ]);
    assert!(out.status.success(), "{stderr}");
    path
}

/// Trains a small model (widths 8, one epoch) on a LETOR file and saves it as `prefix`.
fn save_model(data: &str, prefix: &str) {
    let (out, _, stderr) = run(&[
        "train",
        "--train",
        data,
        "--tau-target",
        "3",
        "--t",
        "8",
        "--widths",
        "8",
        "--epochs",
        "1",
        "--backend",
        "cpu",
        "--save",
        prefix,
    ]);
    assert!(out.status.success(), "{stderr}");
}

/// A small `train` with `extra` arguments; its widths are 16,8 unless `extra` gives some.
fn train_small(extra: &[&str]) -> Vec<String> {
    let widths: &[&str] = if extra.contains(&"--widths") {
        &[]
    } else {
        &["--widths", "16,8"]
    };
    [
        "train",
        "--queries",
        "150",
        "--valid-queries",
        "60",
        "--test-queries",
        "60",
        "--backend",
        "cpu",
    ]
    .iter()
    .chain(widths)
    .chain(extra)
    .map(|s| s.to_string())
    .collect()
}

/// The config of a RankNet student on the 16 columns of [`synth`]'s files with 10 regular
/// features.
fn student_config(model: &Ensemble) -> ModelConfig {
    ModelConfig::new(
        model,
        LossKind::RankNet,
        FeatureView::Regular,
        (1..=16).collect(),
        16,
    )
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

// 1. A model whose inputs carry no information.
#[test]
fn uninformative_inputs_are_refused() {
    // MQ2008's top 40 leaves exactly its six constant columns to the student.
    refused(
        &[
            "compare",
            "--train",
            &mq("train.txt"),
            "--test",
            &mq("test.txt"),
            "--tau-target",
            "2.8",
            "--privileged",
            "top:40",
            "--seeds",
            "1",
            "--epochs",
            "1",
            "--out",
            "out/never",
        ],
        &["regular features x are all constant", "6-10, 43", "top:12"],
    );
    // The default split for files keeps informative regular features on a 46-feature file.
    let (out, stdout, stderr) = run(&[
        "data",
        "stats",
        &mq("train.txt"),
        "--tau-target",
        "2.8",
        "--json",
    ]);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["split"]["regular"]["features"], 34);
    assert_eq!(
        v["split"]["regular"]["constant"],
        serde_json::json!([6, 7, 8, 9, 10, 43])
    );
    assert_eq!(v["split"]["privileged"]["features"], 12);
    assert_eq!(v["split"]["privileged"]["constant"], serde_json::json!([]));
    // A file whose features are all zero.
    let dir = tempfile::tempdir().unwrap();
    let zeros = dir.path().join("zeros.txt");
    let mut text = String::new();
    for q in 1..=30 {
        for d in 0..12 {
            text += &format!("{} qid:{q} 1:0 2:0 3:0\n", (d % 3));
        }
    }
    std::fs::write(&zeros, text).unwrap();
    refused(
        &[
            "train",
            "--train",
            zeros.to_str().unwrap(),
            "--tau-target",
            "1.5",
            "--backend",
            "cpu",
        ],
        &["every feature of the training split is constant"],
    );
    // A teacher that sees only constant privileged columns.
    refused(
        &[
            "train",
            "--train",
            &mq("train.txt"),
            "--tau-target",
            "2.8",
            "--privileged",
            "cols:6,7,8",
            "--features",
            "privileged",
            "--backend",
            "cpu",
        ],
        &[
            "input features (z, the privileged features",
            "constant on the training split",
        ],
    );
}

/// Inputs that vary across queries but not within any of them leave a model unable to rank:
/// preparation names the side (x for the student, z for a teacher that sees z alone, as GenD's)
/// and each split where it happens, for teachers as for the student (a GenD teacher on such z used
/// to report its NDCG without a word).
#[test]
fn class_inputs_that_do_not_vary_within_a_query_are_named_and_the_model_marked_for_every_model() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("per-query.txt");
    let mut text = String::new();
    for q in 1..=120 {
        for d in 0..12 {
            let grade = d % 3;
            // Column 1 follows the grade; column 2 is the query's own, the same for its documents.
            text += &format!(
                "{grade} qid:{q} 1:{} 2:{}\n",
                grade as f64 + (d as f64) / 10.0,
                q % 7
            );
        }
    }
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    for (privileged, methods, side) in [
        (
            "cols:2",
            "no-distillation,gend",
            "privileged features z (columns 2)",
        ),
        (
            "cols:1",
            "no-distillation",
            "regular features x (columns 2)",
        ),
    ] {
        let (_, _, stderr) = run(&[
            "compare",
            "--train",
            file,
            "--privileged",
            privileged,
            "--methods",
            methods,
            "--tau-target",
            "2.8",
            "--epochs",
            "1",
            "--widths",
            "4",
            "--seeds",
            "1",
            "--backend",
            "cpu",
            "--out",
            out,
        ]);
        for split in ["train", "validation", "test"] {
            let warning =
                format!("warning: the {split} split's {side} are each constant within every query");
            assert!(stderr.contains(&warning), "{privileged}, {split}: {stderr}");
        }
        // The model that cannot rank is marked in every output: the warnings, report.md and
        // results.json (which the page and Python show).
        let model = if privileged == "cols:2" {
            "GenD's teacher (every seed)"
        } else {
            "No distillation's student (every seed)"
        };
        assert!(
            stderr.contains(&format!("warning: {model} gives every document")),
            "{stderr}"
        );
        let report = std::fs::read_to_string(Path::new(out).join("report.md")).unwrap();
        assert!(
            report.contains(&format!("**Does not rank:** {model}")),
            "{report}"
        );
        let results: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(out).join("results.json")).unwrap(),
        )
        .unwrap();
        let marked = results["not_ranking"].as_array().is_some_and(|s| {
            s.iter()
                .any(|v| v.as_str().unwrap_or("").starts_with(model))
        });
        assert!(marked, "{}", results["not_ranking"]);
    }
}

/// Refusals name the thing they are about, before work, and leave nothing behind: `--out` naming
/// a file says so; a refused `compare`, `sweep` or `objectives` removes the output folders it
/// created; a model too large is refused before its data are read (a missing training file would
/// otherwise be the first thing named); and a flag that means nothing to its command is not one
/// of its flags (`data synth` writes training queries only).
#[test]
fn class_refusals_name_their_thing_first_and_leave_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let file = file.to_str().unwrap();
    for command in ["compare", "sweep", "objectives"] {
        let mut args = vec![command, "--out", file];
        if command == "sweep" {
            args.extend(["--param", "alpha", "--values", "0.3"]);
        }
        refused(&args, &["a-file", "is a file, expected a folder"]);
    }
    let missing = dir.path().join("missing.txt");
    let missing = missing.to_str().unwrap();
    for (command, flags) in [
        ("compare", vec!["--train", missing]),
        (
            "sweep",
            vec!["--train", missing, "--param", "alpha", "--values", "0.3"],
        ),
        (
            "objectives",
            vec!["--train", missing, "--valid", missing, "--test", missing],
        ),
    ] {
        let out = dir.path().join(command).join("deeper");
        let mut args = vec![
            command,
            "--widths",
            "1000000,1000000",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend(flags);
        refused(&args, &["does not fit in memory", "--widths"]);
        assert!(
            !dir.path().join(command).exists(),
            "{command} left its folder behind"
        );
    }
    // The logs commands' output folder, created once the outputs' names are checked, is taken
    // back when the command fails before it writes: two inputs of one name, a log without the
    // file's impressions.
    let data = synth(dir.path(), "data.txt", 10, 4, 1);
    let log = dir.path().join("empty.tsv");
    std::fs::write(&log, "qid\tsession\tposition\tdoc\tclick\n").unwrap();
    let log = log.to_str().unwrap();
    for (args, words) in [
        (
            vec!["data", "aggregate-logs", &data, &data, "--impressions", log],
            "two inputs are named data.txt",
        ),
        (
            vec!["data", "aggregate-logs", &data, "--impressions", log],
            "the log is empty",
        ),
        (
            vec!["data", "simulate-logs", &data, &data],
            "two inputs are named data.txt",
        ),
    ] {
        let out = dir.path().join("logged").join("deeper");
        let out = format!("{}/", out.display());
        let mut args = args;
        args.extend(["-o", &out]);
        refused(&args, &[words]);
        assert!(
            !dir.path().join("logged").exists(),
            "{args:?} left its folder behind"
        );
    }
    // A folder that takes no new file: the refusal names the file asked for, never the
    // temporary name it would be written under.
    let stderr = refused(
        &[
            "train",
            "--bundled",
            "mq2008",
            "--epochs",
            "1",
            "--save",
            "/proc/model",
        ],
        &["/proc/model.safetensors: cannot be written there"],
    );
    assert!(!stderr.contains(".tmp"), "{stderr}");
    let out = dir.path().join("s.txt");
    refused(
        &[
            "data",
            "synth",
            "--valid-queries",
            "0",
            "-o",
            out.to_str().unwrap(),
        ],
        &["unexpected argument '--valid-queries'"],
    );
}

/// What training refuses, every split refuses or marks in the same words: a file whose queries
/// each hold one grade (MQ2008's test split with each query's grades made one) is refused as a
/// validation or test split as it is as a training split, by `train` and `compare`, and `eval`
/// marks its figures n/a with the reason (Python's `eval_set`: tests/python).
#[test]
fn class_a_split_whose_queries_each_hold_one_grade_is_refused_or_marked_in_every_role() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one-grade.txt");
    let mut text = String::new();
    let mut first: Vec<(String, String)> = Vec::new();
    for line in std::fs::read_to_string(mq("test.txt")).unwrap().lines() {
        let (_, rest) = line.split_once(' ').unwrap();
        let qid = rest.split_whitespace().next().unwrap().to_string();
        let grade = match first.iter().find(|(q, _)| *q == qid) {
            Some((_, g)) => g.clone(),
            None => {
                // Alternate queries take grade 1 and 2: every query one grade, the file two.
                let g = if first.len().is_multiple_of(2) {
                    "1"
                } else {
                    "2"
                }
                .to_string();
                first.push((qid.clone(), g.clone()));
                g
            }
        };
        text += &format!("{grade} {rest}\n");
    }
    std::fs::write(&one, text).unwrap();
    let one = one.to_str().unwrap();
    let (train, valid, test) = (mq("train.txt"), mq("vali.txt"), mq("test.txt"));
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let small = [
        "--tau-target",
        "2.8",
        "--epochs",
        "1",
        "--widths",
        "4",
        "--backend",
        "cpu",
    ];
    for (role, files) in [
        ("validation", [train.as_str(), one, test.as_str()]),
        ("test", [train.as_str(), valid.as_str(), one]),
    ] {
        let mut args = vec![
            "compare", "--train", files[0], "--valid", files[1], "--test", files[2],
        ];
        args.extend(small);
        args.extend(["--seeds", "1", "--out", out]);
        refused(
            &args,
            &[&format!(
                "no {role} group holds documents of different grades"
            )],
        );
        if role == "validation" {
            let mut args = vec!["train", "--train", files[0], "--valid", files[1]];
            args.extend(small);
            refused(
                &args,
                &["no validation group holds documents of different grades"],
            );
        }
    }
    let model = dir.path().join("model");
    let (status, _, stderr) = run(&[
        "train",
        "--train",
        &train,
        "--tau-target",
        "2.8",
        "--epochs",
        "1",
        "--widths",
        "4",
        "--backend",
        "cpu",
        "--save",
        model.to_str().unwrap(),
    ]);
    assert!(status.status.success(), "{stderr}");
    let (status, stdout, stderr) = run(&[
        "eval",
        "--model",
        model.to_str().unwrap(),
        one,
        "--backend",
        "cpu",
    ]);
    assert!(status.status.success(), "{stderr}");
    assert!(stdout.contains("NDCG@8 n/a"), "{stdout}");
    assert!(
        stdout.contains("no query holds documents of two different labels"),
        "{stdout}"
    );
    // No count of groups "for NDCG" beside NDCG figures that are all n/a.
    assert!(!stdout.contains("count for NDCG"), "{stdout}");
}

// 2. Non-finite models: never saved, loaded, scored or reported.
#[test]
fn non_finite_models_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = Ensemble::single(Mlp::<f32>::new(3, &[4], 0));
    let config = ModelConfig::new(
        &model,
        LossKind::RankNet,
        FeatureView::Regular,
        vec![1, 2, 3],
        3,
    );
    // A NaN weight is not saved, and nothing is left behind.
    model.members[0].layers[0].weight[2] = f32::NAN;
    let prefix = dir.path().join("nan");
    let e = model_io::save(&prefix, &model, &config).unwrap_err();
    assert!(e.to_string().contains("NaN or infinite weights"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Finite weights whose scores overflow: predict and eval refuse to write or report them.
    for layer in &mut model.members[0].layers {
        layer.weight.iter_mut().for_each(|w| *w = 3e38);
    }
    let huge = dir.path().join("huge");
    model_io::save(&huge, &model, &config).unwrap();
    let data = dir.path().join("d.txt");
    std::fs::write(&data, "1 qid:1 1:5 2:5 3:5\n0 qid:1 1:1 2:2 3:3\n").unwrap();
    for verb in ["predict", "eval"] {
        refused(
            &[
                verb,
                "--model",
                huge.to_str().unwrap(),
                data.to_str().unwrap(),
                "--backend",
                "cpu",
            ],
            &["NaN or infinite", "no scores or metrics are reported"],
        );
    }
    // A learning rate past its range is refused by name and saves nothing (training that
    // diverges within the range stops and says so: tests/training.rs).
    let save = dir.path().join("diverged");
    let args = train_small(&[
        "--lr",
        "1e10",
        "--epochs",
        "2",
        "--save",
        save.to_str().unwrap(),
    ]);
    refused(&strs(&args), &["--lr", "(0, 10]"]);
    assert!(!save.with_extension("safetensors").exists());
    assert!(!save.with_extension("json").exists());
}

// 3. A model scores only files of its own width.
#[test]
fn files_of_another_width_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wide = synth(dir.path(), "wide.txt", 120, 14, 1); // 20 features
    let narrow = synth(dir.path(), "narrow.txt", 40, 4, 2); // 10 features
    let model = dir.path().join("m").display().to_string();
    save_model(&wide, &model);
    for verb in ["predict", "eval"] {
        refused(
            &[verb, "--model", &model, &narrow, "--backend", "cpu"],
            &["10 feature columns", "20", "--allow-missing-features"],
        );
        let (out, _, stderr) = run(&[
            verb,
            "--model",
            &model,
            &narrow,
            "--backend",
            "cpu",
            "--allow-missing-features",
        ]);
        assert!(
            out.status.success(),
            "{verb} --allow-missing-features: {stderr}"
        );
    }
    // Wider than the model: refused, flag or not.
    let narrow_model = dir.path().join("n").display().to_string();
    save_model(&narrow, &narrow_model);
    refused(
        &[
            "predict",
            "--model",
            &narrow_model,
            &wide,
            "--allow-missing-features",
            "--backend",
            "cpu",
        ],
        &["20 feature columns", "10"],
    );
    // A comparison's validation or test file follows the same rule (it was padded with zeros
    // when narrower): through compare's and sweep's flags and through a setup file.
    let setup = dir.path().join("setup.json");
    let out = dir.path().join("out").display().to_string();
    for (test, fragments, allow) in [
        (
            &narrow,
            vec![
                "narrow.txt: the data have 10 feature columns",
                "wide.txt has 20",
                "allow_missing_features true",
            ],
            true,
        ),
        (
            &wide,
            vec![
                "wide.txt: the data have 20 feature columns",
                "narrow.txt has 10",
                "cannot read columns past 10",
            ],
            false,
        ),
    ] {
        let train = if allow { &wide } else { &narrow };
        let files = ["--train", train.as_str(), "--test", test.as_str()];
        let small = [
            "--epochs",
            "1",
            "--seeds",
            "1",
            "--widths",
            "8",
            "--backend",
            "cpu",
            "--quiet",
        ];
        let with = |head: &[&'static str]| -> Vec<&str> {
            head.iter()
                .copied()
                .chain(files)
                .chain(small)
                .chain(["--out", out.as_str()])
                .collect()
        };
        let compare = with(&["compare"]);
        refused(&compare, &fragments);
        refused(
            &with(&["sweep", "--param", "alpha", "--values", "0.5"]),
            &fragments,
        );
        let mut document = distillrank::setup::Setup::default();
        document.data.source =
            distillrank::setup::DataSource::files(train.clone(), None, Some(test.clone()));
        std::fs::write(&setup, document.to_json()).unwrap();
        refused(
            &["compare", "--setup", setup.to_str().unwrap(), "--out", &out],
            &fragments,
        );
        if allow {
            let allowed: Vec<&str> = compare
                .iter()
                .copied()
                .chain(["--allow-missing-features", "true"])
                .collect();
            let (status, _, stderr) = run(&allowed);
            assert!(
                status.status.success(),
                "--allow-missing-features true: {stderr}"
            );
        }
    }
}

/// A privileged column named twice (`cols:1,1`) quietly became one column. It is refused by name
/// through every way a split is given: the flag, a setup file and the library's parser, which the
/// page and Python read through.
#[test]
fn a_privileged_column_named_twice_is_refused() {
    use distillrank::data::prepare::PrivilegedSplit;
    for spec in ["cols:1,1", "cols:2-4,3", "cols:5, 5"] {
        let message = PrivilegedSplit::parse(spec).unwrap_err().to_string();
        assert!(message.contains("is named twice"), "{spec}: {message}");
    }
    assert!(PrivilegedSplit::parse("cols:1-3,5").is_ok());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out").display().to_string();
    refused(
        &[
            "compare",
            "--privileged",
            "cols:3,3",
            "--epochs",
            "1",
            "--out",
            &out,
        ],
        &["privileged features 'cols:3,3': column 3 is named twice"],
    );
    let setup = dir.path().join("setup.json");
    std::fs::write(&setup, r#"{"data": {"privileged": "cols:2,4,2"}}"#).unwrap();
    refused(
        &["compare", "--setup", setup.to_str().unwrap(), "--out", &out],
        &["column 2 is named twice"],
    );
}

// 4. What cannot be measured is n/a (null) everywhere, with the reason; never 0.
#[test]
fn unmeasurable_figures_are_null_not_zero() {
    let dir = tempfile::tempdir().unwrap();
    let train = synth(dir.path(), "train.txt", 160, 10, 3);
    // A test split whose grades are at most 1: with t = 8 and tau_target 3.5 no document gets
    // y = 1 (P = sigmoid(8 (1 - 3.5)) ~ 2e-9).
    let low = synth(dir.path(), "low.txt", 40, 10, 4);
    let text: String = std::fs::read_to_string(&low)
        .unwrap()
        .lines()
        .map(|l| {
            let (grade, rest) = l.split_once(' ').unwrap();
            format!("{} {rest}\n", grade.parse::<u8>().unwrap().min(1))
        })
        .collect();
    std::fs::write(&low, text).unwrap();
    let out_dir = dir.path().join("cmp");
    let (out, stdout, stderr) = run(&[
        "compare",
        "--train",
        &train,
        "--test",
        &low,
        "--tau-target",
        "3.5",
        "--t",
        "8",
        "--privileged",
        "top:3",
        "--methods",
        "no-distillation,pfd",
        "--seeds",
        "2",
        "--epochs",
        "1",
        "--widths",
        "8",
        "--backend",
        "cpu",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: the test split has no group with a y = 1"),
        "{stderr}"
    );
    assert!(
        stdout.contains("n/a") && !stdout.contains("0.0000 ± 0.0000"),
        "{stdout}"
    );
    let report = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(
        report.contains("| n/a |") && report.contains("n/a: no test group"),
        "{report}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap())
            .unwrap();
    for method in ["no-distillation", "pfd"] {
        let ndcg = &json["methods"][method]["ndcg@8"];
        assert!(ndcg["mean"].is_null() && ndcg["std"].is_null(), "{ndcg}");
        assert_eq!(ndcg["per_seed"], serde_json::json!([null, null]));
        assert!(ndcg["unmeasured"]
            .as_str()
            .unwrap()
            .contains("no test group"));
    }
    assert!(json["methods"]["pfd"]["teacher_ndcg@8"]["mean"].is_null());
    let csv = std::fs::read_to_string(out_dir.join("results.csv")).unwrap();
    for row in csv.lines().skip(1) {
        let fields: Vec<&str> = row.split(',').collect();
        // method, seed, best_epoch, valid_ndcg@8, five test NDCGs on y, graded NDCG@8 (the
        // grades are measurable where y is not), teacher, parameters
        assert!(fields[4..9].iter().all(|f| f.is_empty()), "{row}");
        assert!(fields[9].parse::<f64>().is_ok(), "{row}");
        assert!(fields[10].is_empty(), "{row}");
    }
    let svg = std::fs::read_to_string(out_dir.join("ndcg_per_epoch.svg")).unwrap();
    assert!(svg.contains("n/a"), "the plot says n/a");
}

// 5. Labels that carry no information.
#[test]
fn degenerate_labels_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // Every document has the same grade: labels would be pure Gumbel noise.
    let same = dir.path().join("same.txt");
    let mut text = String::new();
    for q in 1..=30 {
        for d in 0..12 {
            text += &format!("2 qid:{q} 1:{d} 2:{}\n", q * d);
        }
    }
    std::fs::write(&same, text).unwrap();
    refused(
        &[
            "train",
            "--train",
            same.to_str().unwrap(),
            "--tau-target",
            "1.5",
            "--backend",
            "cpu",
        ],
        &["no training group holds documents of different grades"],
    );
    // A threshold below every grade: every label is 1.
    for tau in ["-100", "-5"] {
        let args = train_small(&["--tau-target", tau]);
        refused(
            &strs(&args),
            // With a value that works, measured on the same draws.
            &["every training document got y = 1", "(--tau-target "],
        );
    }
    // Not a number at all.
    for tau in ["-inf", "inf", "nan"] {
        let args = train_small(&[&format!("--tau-target={tau}")]);
        let stderr = refused(&strs(&args), &["--tau-target", "a finite number"]);
        assert!(!stderr.contains("lower --tau-target"), "{stderr}");
    }
}

/// A cache of a small parsed file, and the byte offsets of its sections.
struct CacheFile {
    path: PathBuf,
    n_docs: usize,
    n_features: usize,
    grades_at: usize,
    offsets_at: usize,
    qids_at: usize,
}

fn small_cache(dir: &Path) -> CacheFile {
    let source = dir.join("s.txt");
    std::fs::write(
        &source,
        "2 qid:7 1:0.5 2:1\n0 qid:7 1:0.2 2:3\n1 qid:9 1:0.1 2:2\n0 qid:9 1:0.4 2:0\n",
    )
    .unwrap();
    let data =
        distillrank::data::letor::read_letor_file(&source, None, &ReadOptions::default()).unwrap();
    let path = cache_path(&source);
    write_cache(&data, &source, &path).unwrap();
    let align = |n: usize| n.div_ceil(64) * 64;
    let grades_at = align(128 + 4 * 4 * 2);
    let offsets_at = align(grades_at + 4);
    CacheFile {
        path,
        n_docs: 4,
        n_features: 2,
        grades_at,
        offsets_at,
        qids_at: align(offsets_at + 8 * 3),
    }
}

// 6. A cache upholds every invariant of the text reader.
#[test]
fn corrupt_caches_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = small_cache(dir.path());
    assert_eq!((c.n_docs, c.n_features), (4, 2));
    let good = std::fs::read(&c.path).unwrap();
    assert!(read_cache(&c.path, None).is_ok());
    let f32_at = |doc: usize, feature: usize| 128 + 4 * (doc * c.n_features + feature);
    type Corruption<'a> = Box<dyn Fn(&mut Vec<u8>) + 'a>;
    let cases: Vec<(&str, Corruption)> = vec![
        (
            "non-finite value (NaN)",
            Box::new(move |b| {
                b[f32_at(1, 0)..f32_at(1, 0) + 4].copy_from_slice(&f32::NAN.to_le_bytes())
            }),
        ),
        (
            "non-finite value (inf)",
            Box::new(move |b| {
                b[f32_at(3, 1)..f32_at(3, 1) + 4].copy_from_slice(&f32::INFINITY.to_le_bytes())
            }),
        ),
        ("grade 200", Box::new(move |b| b[c.grades_at + 2] = 200)),
        ("grade 32", Box::new(move |b| b[c.grades_at] = 32)),
        (
            "is empty",
            Box::new(move |b| {
                b[c.offsets_at + 8..c.offsets_at + 16].copy_from_slice(&0u64.to_le_bytes())
            }),
        ),
        (
            "offsets",
            Box::new(move |b| {
                b[c.offsets_at + 8..c.offsets_at + 16].copy_from_slice(&9u64.to_le_bytes())
            }),
        ),
        (
            "qid 7 names two groups",
            Box::new(move |b| {
                b[c.qids_at + 8..c.qids_at + 16].copy_from_slice(&7u64.to_le_bytes())
            }),
        ),
    ];
    for (what, corrupt) in cases {
        let mut bytes = good.clone();
        corrupt(&mut bytes);
        let path = dir.path().join("bad.drcache");
        // Changed after it was written: its checksum refuses it.
        std::fs::write(&path, &bytes).unwrap();
        let message = read_cache(&path, None).unwrap_err().to_string();
        assert!(message.contains("checksum"), "{what}: {message}");
        // Made by hand with a checksum that matches: the invariants refuse it.
        let checksum = crc32fast::hash(&bytes[128..]);
        bytes[12..16].copy_from_slice(&checksum.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let stderr = refused(
            &["data", "stats", path.to_str().unwrap()],
            &["corrupt cache"],
        );
        let message = read_cache(&path, None).unwrap_err().to_string();
        assert!(message.contains("corrupt"), "{what}: {message}");
        assert!(
            what.starts_with("non-finite") || what == "offsets" || message.contains(what),
            "{what}: {message} / {stderr}"
        );
    }
    // A corrupt cache beside a good source is passed over for the text.
    let source = dir.path().join("s.txt");
    let mut bytes = good.clone();
    bytes[f32_at(0, 0)..f32_at(0, 0) + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(&c.path, &bytes).unwrap();
    let (out, _, stderr) = run(&["data", "stats", source.to_str().unwrap()]);
    assert!(
        out.status.success() && stderr.contains("cannot use the cache"),
        "{stderr}"
    );
}

mod cache_bytes {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        /// Arbitrary bytes, and a valid cache with arbitrary bytes overwritten: the loader never
        /// panics, and what it accepts the text reader accepts too, giving the same data.
        #[test]
        fn arbitrary_cache_bytes_never_pass_what_the_text_reader_refuses(
            noise in proptest::collection::vec(any::<u8>(), 0..400),
            at in 0usize..400,
            raw in any::<bool>(),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let c = small_cache(dir.path());
            let mut bytes = std::fs::read(&c.path).unwrap();
            if raw {
                bytes = noise.clone();
            } else {
                for (i, b) in noise.iter().enumerate().take(16) {
                    let j = (at + i) % bytes.len();
                    bytes[j] = *b;
                }
                // A checksum that matches the damage, so that the invariants are what is tried.
                let checksum = crc32fast::hash(&bytes[128..]);
                bytes[12..16].copy_from_slice(&checksum.to_le_bytes());
            }
            let path = dir.path().join("x.drcache");
            std::fs::write(&path, &bytes).unwrap();
            if let Ok((data, _)) = read_cache(&path, None) {
                let mut text = Vec::new();
                data.write_letor(&mut text).unwrap();
                let parsed = parse_letor_bytes(Path::new("x"), &text, None, &ReadOptions::default());
                prop_assert!(parsed.is_ok(), "accepted by the cache, refused as text: {:?}", parsed.err());
                let mut parsed = parsed.unwrap();
                parsed.source = data.source.clone();
                prop_assert_eq!(parsed, data);
            }
        }
    }
}

// 7. Sizes are checked before anything is allocated.
#[test]
fn oversized_models_are_refused_before_allocating() {
    for widths in ["100000,100000,100000", "1000000,1000000"] {
        let args = train_small(&["--widths", widths]);
        refused(
            &strs(&args),
            &["does not fit in memory", "layer", "--widths"],
        );
    }
    // A single width past any machine's memory is refused as the flag is read.
    for widths in ["2000000000", "18446744073709551615"] {
        let args = train_small(&["--widths", widths]);
        refused(&strs(&args), &["--widths", "1..=1,000,000"]);
    }
}

// 8. Unbounded input: a line without end, a device, an endless .query file or model.
#[test]
fn unbounded_input_is_refused() {
    refused(
        &["data", "stats", "/dev/zero"],
        &["line 1 runs past 16 MiB without a line end"],
    );
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.txt");
    let mut text = b"0 qid:1 1:0.5\n1 qid:1".to_vec();
    text.extend(std::iter::repeat_n(b' ', 17 << 20));
    std::fs::write(&long, text).unwrap();
    refused(
        &["data", "stats", long.to_str().unwrap()],
        &["long.txt:2", "longer than the 16 MiB"],
    );
    let lgbm = &letor_data::data("lightgbm_rank/rank.train");
    refused(
        &["data", "stats", lgbm, "--query", "/dev/zero"],
        &["/dev/zero", "larger than"],
    );
    let model = dir.path().join("endless");
    std::os::unix::fs::symlink("/dev/zero", model.with_extension("json")).unwrap();
    refused(
        &["predict", "--model", model.to_str().unwrap(), lgbm],
        &["endless.json", "larger than"],
    );
}

// 9. Outputs: paths checked before any work, files written whole or not at all.
#[test]
fn outputs_are_checked_first_and_written_atomically() {
    let missing = "/nonexistent-distillrank/x";
    let args = train_small(&["--epochs", "3", "--save", missing]);
    let stderr = refused(&strs(&args), &["/nonexistent-distillrank"]);
    assert!(
        !stderr.contains("epoch"),
        "the path is checked before training: {stderr}"
    );
    refused(
        &["data", "synth", "--queries", "5", "-o", missing],
        &["/nonexistent-distillrank"],
    );
    refused(
        &[
            "predict",
            "--model",
            missing,
            &mq("test.txt"),
            "--run",
            "/nonexistent-distillrank/r",
        ],
        &["/nonexistent-distillrank/r"],
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let stderr = refused(
        &[
            "compare",
            "--queries",
            "80",
            "--out",
            file.join("sub").to_str().unwrap(),
        ],
        &["a-file"],
    );
    assert!(
        !stderr.contains("train:"),
        "checked before the data: {stderr}"
    );
    // A save whose JSON cannot be written leaves no weights behind.
    let model = Ensemble::single(Mlp::<f32>::new(2, &[3], 0));
    let config = ModelConfig::new(
        &model,
        LossKind::RankNet,
        FeatureView::Regular,
        vec![1, 2],
        2,
    );
    let prefix = dir.path().join("m");
    std::fs::create_dir(dir.path().join("m.json")).unwrap();
    assert!(model_io::save(&prefix, &model, &config).is_err());
    assert!(!dir.path().join("m.safetensors").exists());
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.iter().all(|n| !n.ends_with(".tmp")), "{left:?}");
}

// 10. Per-epoch lines reach a log file.
#[test]
fn epoch_lines_reach_stderr_off_a_terminal() {
    // Long enough for the progress bar to have come on (after one second) on any machine.
    let args = [
        "train",
        "--queries",
        "600",
        "--valid-queries",
        "100",
        "--test-queries",
        "50",
        "--epochs",
        "8",
        "--widths",
        "128,64",
        "--backend",
        "cpu",
    ];
    let started = std::time::Instant::now();
    let (out, _, stderr) = run(&args);
    assert!(out.status.success(), "{stderr}");
    let epochs = stderr.lines().filter(|l| l.starts_with("epoch ")).count();
    assert_eq!(epochs, 8, "took {:?}: {stderr}", started.elapsed());
}

// 11. compare's progress has a real total: the plan counts every document a run trains.
#[test]
fn compare_progress_plan_counts_every_document() {
    use distillrank::data::prepare::{prepare, PrepareOptions, PrivilegedSplit};
    use distillrank::data::synth::{generate_splits, SynthOptions};
    use distillrank::native::ranking::compare;
    use distillrank::ranking::distill::Method;
    use distillrank::ranking::experiment::{plan, CompareConfig};
    let s = generate_splits(&SynthOptions::default(), 80, 40, 40).unwrap();
    let p = prepare(
        &s.train,
        Some(&s.valid),
        Some(&s.test),
        &PrepareOptions {
            tau_target: 3.5,
            privileged: PrivilegedSplit::Columns(s.privileged_columns.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let mut config = CompareConfig {
        methods: vec![Method::NoDistillation, Method::Pfd, Method::MultiTeacherPfd],
        seeds: 2,
        ..Default::default()
    };
    config.train.widths = vec![8];
    config.train.epochs = 2; // fewer than the patience: no model stops early
    let planned = plan(&p, &config);
    let expected: Vec<(String, u64)> = planned.iter().map(|(l, d)| (l.to_string(), *d)).collect();
    // One job at a time: the models in the plan's order, each with its documents.
    config.jobs = Some(1);
    let mut seen: Vec<(String, u64)> = Vec::new();
    compare(&p, &config, &mut |label, event| {
        if let distillrank::ranking::train::Event::Step { docs } = event {
            match seen.last_mut() {
                Some((l, n)) if *l == label.to_string() => *n += docs as u64,
                _ => seen.push((label.to_string(), docs as u64)),
            }
        }
    })
    .unwrap();
    assert_eq!(seen, expected);
    // Jobs side by side: their events interleave, and every model still counts its documents.
    config.jobs = Some(2);
    let mut totals = std::collections::BTreeMap::new();
    compare(&p, &config, &mut |label, event| {
        if let distillrank::ranking::train::Event::Step { docs } = event {
            *totals.entry(label.to_string()).or_insert(0u64) += docs as u64;
        }
    })
    .unwrap();
    assert_eq!(totals, expected.into_iter().collect());
}

// 12. The adapter probe prints nothing but its choice.
#[test]
fn backend_probe_is_quiet() {
    let args = train_small(&["--epochs", "1"]);
    let mut args: Vec<&str> = strs(&args);
    let at = args.iter().position(|a| *a == "cpu").unwrap();
    args[at] = "auto";
    let out = command(&args)
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
    let backend: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("backend:"))
        .collect();
    assert_eq!(backend.len(), 1, "{stderr}");
    assert!(backend[0].len() < 160, "a short reason: {}", backend[0]);
    let out = command(&[&args[..], &["--quiet"]].concat())
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "{stderr}");
}

// 14. Smaller faults: a closed pipe, a byte-order mark, raw control bytes in messages.
#[test]
fn a_closed_pipe_is_a_quiet_end() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "d.txt", 2000, 10, 5);
    let model = dir.path().join("m").display().to_string();
    save_model(&data, &model);
    for args in [
        vec!["predict", "--model", &model, &data, "--backend", "cpu"],
        vec!["data", "stats", &data],
    ] {
        let mut child = command(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one line, then close the pipe (as `| head -1` does).
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 16];
        let _ = std::io::Read::read(&mut stdout, &mut first).unwrap();
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {:?} {stderr}", out.status);
        assert!(
            !stderr.contains("Broken pipe") && !stderr.contains("panicked"),
            "{stderr}"
        );
    }
}

#[test]
fn messages_never_echo_raw_control_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let nasty = dir.path().join("nasty.txt");
    std::fs::write(&nasty, b"0 qid:1 1:0.5\n1 qid:1 1:\x1b[2J\x00\x07boom\n").unwrap();
    let stderr = refused(
        &["data", "stats", nasty.to_str().unwrap()],
        &["nasty.txt:2:11"],
    );
    assert!(
        !stderr.bytes().any(|b| b < 0x20 && b != b'\n'),
        "raw control bytes in: {stderr:?}"
    );
    assert!(stderr.contains("\\u{1b}[2J\\u{0}\\u{7}boom"), "{stderr}");
    // Arguments are input too.
    let stderr = refused(
        &[
            "train",
            "--privileged",
            "top:\u{1b}[31m",
            "--backend",
            "cpu",
        ],
        &["\\u{1b}[31m"],
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    // A byte-order mark starts a file without harm.
    let bom = dir.path().join("bom.txt");
    std::fs::write(&bom, b"\xEF\xBB\xBF2 qid:1 1:0.5\n0 qid:1 1:0.2\n").unwrap();
    let (out, stdout, stderr) = run(&["data", "stats", bom.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["grades"], serde_json::json!({"0": 1, "2": 1}));
}

/// A small comparison's arguments (synthetic data, one epoch, CPU).
fn compare_small(out: &str, extra: &[&str]) -> Vec<String> {
    [
        "compare",
        "--queries",
        "150",
        "--valid-queries",
        "60",
        "--test-queries",
        "60",
        "--widths",
        "8",
        "--epochs",
        "1",
        "--backend",
        "cpu",
        "--quiet",
        "--out",
        out,
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect()
}

// Issue classes, one test each: unmeasurable figures are n/a in every command.
#[test]
fn class_unmeasurable_figures_are_n_a_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    // One seed has no spread: "± n/a" in the table, null in results.json, never ± 0.0000.
    let out_dir = dir.path().join("one-seed").display().to_string();
    let args = compare_small(
        &out_dir,
        &["--seeds", "1", "--methods", "no-distillation,pfd"],
    );
    let (out, stdout, stderr) = run(&strs(&args));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("± n/a") && !stdout.contains("± 0.0000"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{out_dir}/results.json")).unwrap())
            .unwrap();
    assert!(
        json["methods"]["pfd"]["ndcg@8"]["std"].is_null(),
        "{}",
        json["methods"]["pfd"]
    );
    // A file without a relevant document: MAP, MRR and P@k are n/a, not 0.
    let data = synth(dir.path(), "data.txt", 40, 10, 5);
    let prefix = dir.path().join("model").display().to_string();
    save_model(&data, &prefix);
    let zero = dir.path().join("zero.txt");
    let text: String = std::fs::read_to_string(&data)
        .unwrap()
        .lines()
        .map(|l| format!("0 {}\n", l.split_once(' ').unwrap().1))
        .collect();
    std::fs::write(&zero, text).unwrap();
    let (out, stdout, stderr) = run(&[
        "eval",
        "--model",
        &prefix,
        zero.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("MAP n/a") && stdout.contains("MRR n/a") && stdout.contains("P@1 n/a"),
        "{stdout}"
    );
}

// Degenerate labels: one check serves every command that labels data.
#[test]
fn class_degenerate_labels_are_refused_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 40, 10, 6);
    let prefix = dir.path().join("model").display().to_string();
    save_model(&data, &prefix);
    let eval = |extra: &[&str]| {
        let mut args = vec![
            "eval",
            "--model",
            &prefix,
            &data,
            "--labels",
            "binary",
            "--backend",
            "cpu",
        ];
        args.extend_from_slice(extra);
        args.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    // The same message from train and eval for the same temperature.
    let from_train = refused(
        &strs(&train_small(&["--t", "0"])),
        &["--t", "expected a finite number in (0, "],
    );
    let from_eval = refused(
        &strs(&eval(&["--t", "0"])),
        &["--t", "expected a finite number in (0, "],
    );
    assert_eq!(from_train.lines().last(), from_eval.lines().last());
    // Labels that are all 1, or all 0, would make every metric 1, or n/a.
    refused(
        &strs(&eval(&["--tau-target=-1e5"])),
        &["got y = 1", "raise --tau-target"],
    );
    refused(
        &strs(&eval(&["--tau-target", "1e5"])),
        &["no document", "lower --tau-target"],
    );
}

// A model that scores every document alike is evaluated with a warning.
#[test]
fn class_a_model_with_one_score_for_every_document_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 30, 10, 7);
    let prefix = dir.path().join("flat");
    let mut model = Ensemble::single(Mlp::<f32>::new(16, &[4], 0));
    for layer in &mut model.members[0].layers {
        layer.weight.iter_mut().for_each(|w| *w = 0.0);
    }
    model_io::save(&prefix, &model, &student_config(&model)).unwrap();
    let (out, _, stderr) = run(&[
        "eval",
        "--model",
        prefix.to_str().unwrap(),
        &data,
        "--backend",
        "cpu",
    ]);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning:") && stderr.contains("the same score"),
        "{stderr}"
    );
}

// A model's two files are one unit: weights beside another model's config are refused.
#[test]
fn class_a_model_is_one_unit() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 30, 10, 8);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let model = |widths: &[usize]| Ensemble::single(Mlp::<f32>::new(16, widths, 1));
    let config = |m: &Ensemble, columns: Vec<usize>| {
        ModelConfig::new(m, LossKind::RankNet, FeatureView::Regular, columns, 16)
    };
    let (ma, mb) = (model(&[4]), model(&[4]));
    // One model is one sequence of bytes, however often it is saved: the header's metadata is
    // written in one order (a map's random order made two runs of one seed differ).
    let once = model_io::to_safetensors(&ma, &config(&ma, (1..=16).collect())).unwrap();
    for _ in 0..8 {
        assert!(model_io::to_safetensors(&ma, &config(&ma, (1..=16).collect())).unwrap() == once);
    }
    model_io::save(&a, &ma, &config(&ma, (1..=16).collect())).unwrap();
    model_io::save(&b, &mb, &config(&mb, (1..=16).rev().collect())).unwrap();
    // A save over `a` cut between its two renames: b's weights beside a's config.
    std::fs::copy(
        b.with_extension("safetensors"),
        a.with_extension("safetensors"),
    )
    .unwrap();
    refused(
        &[
            "predict",
            "--model",
            a.to_str().unwrap(),
            &data,
            "--backend",
            "cpu",
        ],
        // The field that differs, with both values (the columns' order here: their summaries
        // as ranges would read alike).
        &[
            "not one model",
            "columns: [16,15,",
            "in the weights",
            "[1,2,3,",
            "save the model again",
        ],
    );
}

// Class: a saved model that cannot be read, or whose two files do not make one model. Each is
// refused naming its file and what it should have been, in the library's words (not serde's or
// safetensors'), before it scores anything. Weights whose header holds no config used to be read
// by whatever config lay beside them, and scored with it.
#[test]
fn class_a_saved_model_that_cannot_be_read_is_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 30, 10, 8);
    let model = Ensemble::single(Mlp::<f32>::new(16, &[4], 1));
    let config = ModelConfig::new(
        &model,
        LossKind::RankNet,
        FeatureView::Regular,
        (1..=16).collect(),
        16,
    );
    let saved = dir.path().join("saved");
    model_io::save(&saved, &model, &config).unwrap();
    let weights = std::fs::read(saved.with_extension("safetensors")).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(saved.with_extension("json")).unwrap())
            .unwrap();
    // The weights with their header's config taken out (a safetensors header is its length, 8
    // bytes little-endian, then JSON).
    let length = u64::from_le_bytes(weights[..8].try_into().unwrap()) as usize;
    let mut header: serde_json::Value = serde_json::from_slice(&weights[8..8 + length]).unwrap();
    header.as_object_mut().unwrap().remove("__metadata__");
    let mut text = header.to_string().into_bytes();
    text.resize(text.len().div_ceil(8) * 8, b' ');
    let mut bare = (text.len() as u64).to_le_bytes().to_vec();
    bare.extend(text);
    bare.extend(&weights[8 + length..]);
    let edited = |change: &dyn Fn(&mut serde_json::Value)| {
        let mut config = json.clone();
        change(&mut config);
        config.to_string().into_bytes()
    };
    let config_bytes = json.to_string().into_bytes();
    let xgboost = br#"{"learner": {"gradient_booster": {}}, "version": [2, 1, 0]}"#.to_vec();
    // A case: its prefix's name, its config's and its weights' bytes (None: no such file), and
    // the words of its refusal.
    type Case<'a> = (&'a str, Option<Vec<u8>>, Option<Vec<u8>>, &'a [&'a str]);
    let cases: Vec<Case> = vec![
        (
            "bare",
            Some(config_bytes.clone()),
            Some(bare),
            &[
                "bare.safetensors",
                "holds no config",
                "save the model again",
            ],
        ),
        (
            "twice",
            Some(edited(&|c| c["columns"][1] = 1.into())),
            Some(weights.clone()),
            &["twice.json", "columns[1] is 1", "distinct"],
        ),
        (
            "past",
            Some(edited(&|c| c["columns"][3] = 99.into())),
            Some(weights.clone()),
            &["past.json", "columns[3] is 99", "1..=16"],
        ),
        (
            "labelling",
            Some(edited(&|c| {
                c["labelling"] = serde_json::json!(
                    {"t": 0.0, "tau_target": 2.8, "data_seed": 0, "min_group_size": 10}
                )
            })),
            Some(weights.clone()),
            &["labelling.json", "labelling.t is 0", "expected"],
        ),
        (
            "transform",
            Some(edited(&|c| c["transform"] = "standardize".into())),
            Some(weights.clone()),
            &["transform.json", "expected signed_log1p or none"],
        ),
        (
            "list",
            Some(b"[]".to_vec()),
            Some(weights.clone()),
            &["list.json", "a list, expected a distillrank model config"],
        ),
        (
            "xgboost",
            Some(xgboost),
            Some(weights.clone()),
            &["xgboost.json", "a LightGBM or XGBoost model"],
        ),
        (
            "empty",
            Some(config_bytes.clone()),
            Some(Vec::new()),
            &["empty.safetensors", "an empty file", "save the model again"],
        ),
        (
            "cut",
            Some(config_bytes.clone()),
            Some(weights[..weights.len() / 2].to_vec()),
            &["cut.safetensors", "not a whole safetensors file"],
        ),
        (
            "alone",
            None,
            Some(weights.clone()),
            &[
                "alone.json",
                "no such file",
                "alone.safetensors",
                "are there",
            ],
        ),
    ];
    for (name, config, weights, words) in cases {
        let prefix = dir.path().join(name);
        if let Some(config) = config {
            std::fs::write(prefix.with_extension("json"), config).unwrap();
        }
        if let Some(weights) = weights {
            std::fs::write(prefix.with_extension("safetensors"), weights).unwrap();
        }
        let prefix = prefix.display().to_string();
        for command in ["predict", "eval"] {
            let stderr = refused(
                &[command, "--model", &prefix, &data, "--backend", "cpu"],
                words,
            );
            assert!(
                !stderr.contains("SafeTensorError") && !stderr.contains("struct"),
                "{name}: {stderr}"
            );
        }
        let onnx = dir
            .path()
            .join(format!("{name}.onnx"))
            .display()
            .to_string();
        refused(&["export", "--model", &prefix, "--onnx", &onnx], words);
    }
    // A config whose own text holds a tree model's words (its training file's name) is read as
    // the config it is.
    let mut named = config.clone();
    named.training_data = Some("learner/tree_info.txt".into());
    let prefix = dir.path().join("learner");
    model_io::save(&prefix, &model, &named).unwrap();
    let prefix = prefix.display().to_string();
    let (out, _, stderr) = run(&["predict", "--model", &prefix, &data, "--backend", "cpu"]);
    assert!(out.status.success(), "{stderr}");
}

// A run owns its --out folder: the last run's outputs go, and a second run at once is refused.
#[test]
fn class_a_run_owns_its_out_folder() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("cmp");
    let folder = out_dir.display().to_string();
    let (out, _, stderr) = run(&strs(&compare_small(
        &folder,
        &["--seeds", "2", "--methods", "no-distillation,gend"],
    )));
    assert!(out.status.success(), "{stderr}");
    assert!(out_dir.join("students/gend.json").exists());
    let (out, _, stderr) = run(&strs(&compare_small(
        &folder,
        &["--seeds", "2", "--methods", "no-distillation,pfd"],
    )));
    assert!(out.status.success(), "{stderr}");
    assert!(
        !out_dir.join("students/gend.json").exists(),
        "the first run's student is left"
    );
    assert!(out_dir.join("students/pfd.json").exists());
    // A live run holds the folder (this test's own process stands for it).
    std::fs::write(
        out_dir.join(".distillrank.lock"),
        std::process::id().to_string(),
    )
    .unwrap();
    refused(
        &strs(&compare_small(&folder, &["--seeds", "2"])),
        &[
            "is being written by another run",
            &std::process::id().to_string(),
        ],
    );
    // A lock whose process is gone is stale.
    std::fs::write(out_dir.join(".distillrank.lock"), "4194303").unwrap();
    let (out, _, stderr) = run(&strs(&compare_small(
        &folder,
        &["--seeds", "2", "--methods", "no-distillation"],
    )));
    assert!(out.status.success(), "{stderr}");
    assert!(!out_dir.join(".distillrank.lock").exists());
}

// setup.json: unknown fields at every level, flags by presence, paths from the setup's folder,
// a byte-order mark, an empty file name.
#[test]
fn class_setup_json_is_read_strictly_and_where_it_lies() {
    let dir = tempfile::tempdir().unwrap();
    let setup = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let out = dir.path().join("out").display().to_string();
    for (name, text, field) in [
        (
            "synth.json",
            r#"{"data": {"source": {"synthetic": {"options": {"queries": 10, "querys": 5}, "valid_queries": 5, "test_queries": 5}}}}"#,
            "querys",
        ),
        ("rd.json", r#"{"rd": {"k": 3, "kk": 4}}"#, "kk"),
        (
            "ranker.json",
            r#"{"data": {"logs": {"logging_ranker": {"kind": "linear", "fraction": 0.1, "extra": 1}}}}"#,
            "extra",
        ),
    ] {
        refused(
            &["compare", "--setup", &setup(name, text), "--out", &out],
            &[field],
        );
    }
    // A flag beside --setup is refused by its presence, even at its default value.
    let plain = setup("plain.json", r#"{"seeds": 1, "epochs": 1}"#);
    refused(
        &["compare", "--setup", &plain, "--seeds", "5", "--out", &out],
        &["--seeds", "beside it"],
    );
    // A byte-order mark is accepted; an empty file name is named.
    refused(
        &[
            "compare",
            "--setup",
            &setup(
                "bom.json",
                "\u{feff}{\"data\": {\"source\": {\"files\": {\"train\": \"\"}}}}",
            ),
            "--out",
            &out,
        ],
        &["the training file's name is empty"],
    );
    // Relative paths are the setup's folder's, wherever the command runs.
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    synth(&dir.path().join("data"), "train.txt", 40, 10, 9);
    let relative = setup(
        "data/setup.json",
        r#"{"data": {"source": {"files": {"train": "train.txt"}}, "tau_target": 3, "t": 8, "privileged": "top:3"}, "seeds": 2, "epochs": 1, "widths": [8], "backend": "cpu"}"#,
    );
    let (status, _, stderr) = run(&["compare", "--setup", &relative, "--out", &out, "--quiet"]);
    assert!(status.status.success(), "{stderr}");
}

// Sizes from any door: a seed count that would plan forever is refused at once.
#[test]
fn class_sizes_are_checked_before_anything_grows() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out").display().to_string();
    refused(
        &strs(&compare_small(&out, &["--seeds", "18446744073709551615"])),
        &["--seeds", "1..=10,000"],
    );
    // Sizes each within its range whose product is past any machine's memory: refused in words
    // before allocating, naming the flags as the command spells them.
    let synth = dir.path().join("big.txt").display().to_string();
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &[
                "data",
                "synth",
                "--queries",
                "10000000",
                "--max-docs",
                "100000",
                "-o",
                &synth,
            ],
            &["need up to", "fewer queries"],
        ),
        (
            &[
                "compare",
                "--queries",
                "10000000",
                "--max-docs",
                "1000",
                "--out",
                &out,
            ],
            &["need up to", "fewer queries"],
        ),
        (
            &[
                "objectives",
                "--train-examples",
                "100000000",
                "--features",
                "100000",
                "--out",
                &out,
            ],
            &["need up to", "choose fewer examples (--train-examples, --valid-examples, --test-examples) or --features"],
        ),
        (
            &[
                "bench",
                "train",
                "--groups-per-batch",
                "100000",
                "--docs-per-group",
                "100000",
            ],
            &[
                "does not fit in memory",
                "--groups-per-batch",
                "--docs-per-group",
            ],
        ),
        (
            &["objectives", "--widths", "1000000,1000000", "--out", &out],
            &["does not fit in memory", "--batch-size"],
        ),
    ];
    for (args, fragments) in cases {
        let stderr = refused(args, fragments);
        assert!(!stderr.contains("--batch-docs"), "{args:?}: {stderr}");
    }
}

// Nothing non-finite is written, and no output lands where it does not belong.
#[test]
fn class_no_non_finite_or_misplaced_output() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 30, 10, 10);
    let out = dir.path().join("logs.txt").display().to_string();
    let stderr = refused(
        &[
            "data",
            "simulate-logs",
            &data,
            "-o",
            &out,
            "--dwell-seconds",
            "1e308",
        ],
        &["--dwell-seconds", "(0, 86,400]"],
    );
    // A 309-digit number is never printed in full.
    assert!(!stderr.contains("100000000000000000000"), "{stderr}");
    assert!(!Path::new(&out).exists());
    refused(&["data", "cache", "/dev/stdin"], &["not a regular file"]);
    assert!(!Path::new("/dev/stdin.drcache").exists());
    // An output is renamed into place: a link to a device must not be replaced by a file, nor
    // the device behind it.
    let device = dir.path().join("null");
    std::os::unix::fs::symlink("/dev/null", &device).unwrap();
    let device = device.display().to_string();
    for args in [
        vec!["data", "synth", "--queries", "20", "-o", &device],
        vec!["data", "simulate-logs", &data, "-o", &device],
        vec!["export", "--model", &data, "--onnx", &device],
    ] {
        refused(&args, &[]);
        let link = std::fs::symlink_metadata(&device).unwrap();
        assert!(link.file_type().is_symlink(), "{args:?} replaced the link");
    }
    refused(
        &["data", "synth", "--queries", "20", "-o", &device],
        &["not a regular file"],
    );
}

// Messages: input reaches stdout and report.md as it reaches an error message, its control
// characters escaped, and the commands a report writes are quoted for a shell.
#[test]
fn class_messages_file_names_are_escaped_and_quoted_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "my \u{1b}[31mdata.txt", 150, 10, 12);
    let (out, stdout, stderr) = run(&["data", "stats", &data]);
    assert!(out.status.success(), "{stderr}");
    assert!(!stdout.contains('\u{1b}'), "{stdout}");
    assert!(stdout.contains("\\u{1b}[31mdata.txt"), "{stdout}");
    let folder = dir.path().join("out");
    let (out, stdout, stderr) = run(&[
        "compare",
        "--train",
        &data,
        "--tau-target",
        "3",
        "--t",
        "8",
        "--seeds",
        "1",
        "--epochs",
        "1",
        "--widths",
        "4",
        "--backend",
        "cpu",
        "--out",
        folder.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{stderr}");
    assert!(
        !stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'),
        "{stdout}{stderr}"
    );
    let report = std::fs::read_to_string(folder.join("report.md")).unwrap();
    assert!(!report.contains('\u{1b}'), "{report}");
    // Both commands the report gives quote the name with its space.
    let quoted = report
        .replace(dir.path().to_str().unwrap(), "DIR")
        .matches("--train 'DIR/my \\u{1b}[31mdata.txt'")
        .count();
    assert!(quoted >= 2, "{report}");
    assert!(!report.contains("distillrank distillrank"), "{report}");
}

// Messages: a list flag given twice is refused like every other repeated flag.
#[test]
fn class_messages_repeated_list_flags_are_refused() {
    let (out, _, stderr) = run(&strs(&train_small(&["--widths", "8", "--widths", "4"])));
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--widths") && stderr.contains("cannot be used multiple times"),
        "{stderr}"
    );
}

// A logs sidecar names the file it describes and its parameters: one copied beside another file,
// or splits simulated apart with other click models, are refused.
#[test]
fn class_a_logs_sidecar_is_checked_against_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let train = synth(dir.path(), "train.txt", 60, 10, 11);
    let test = synth(dir.path(), "test.txt", 30, 10, 12);
    let simulate = |files: &[&str], out: &str, extra: &[&str]| {
        let mut args = vec!["data", "simulate-logs"];
        args.extend_from_slice(files);
        args.extend_from_slice(&["-o", out, "--sessions", "30", "--quiet"]);
        args.extend_from_slice(extra);
        let (status, _, stderr) = run(&args);
        assert!(status.status.success(), "{stderr}");
    };
    let logged = dir.path().join("logged");
    let logged_dir = logged.display().to_string();
    simulate(&[&train, &test], &logged_dir, &[]);
    let (logged_train, logged_test) = (logged.join("train.txt"), logged.join("test.txt"));
    let compare = |train: &Path, test: &Path| {
        vec![
            "compare".to_string(),
            "--train".into(),
            train.display().to_string(),
            "--test".into(),
            test.display().to_string(),
            "--privileged".into(),
            "logs".into(),
            "--seeds".into(),
            "2".into(),
            "--epochs".into(),
            "1".into(),
            "--widths".into(),
            "8".into(),
            "--backend".into(),
            "cpu".into(),
            "--out".into(),
            dir.path().join("out").display().to_string(),
        ]
    };
    // A sidecar copied beside an unrelated file of the same width.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let other_train = other.join("train.txt");
    simulate(
        &[&synth(dir.path(), "train2.txt", 60, 10, 13)],
        &other_train.display().to_string(),
        &[],
    );
    std::fs::copy(
        logged.join("train.txt.logs.json"),
        other.join("train.txt.logs.json"),
    )
    .unwrap();
    refused(
        &strs(&compare(&other_train, &logged_test)),
        &["describes another file"],
    );
    // A test split simulated apart, with another click model.
    let cascade = dir.path().join("cascade.txt");
    simulate(
        &[&test],
        &cascade.display().to_string(),
        &["--click-model", "cascade"],
    );
    refused(
        &strs(&compare(&logged_train, &cascade)),
        &["other parameters", "cascade"],
    );
    // Logs written over a file that holds logs: a second set appended, the first read as x.
    let logged_train_name = logged_train.display().to_string();
    let again = dir.path().join("again.txt").display().to_string();
    for command in [
        vec!["data", "simulate-logs", &logged_train_name, "-o", &again],
        vec![
            "data",
            "aggregate-logs",
            &logged_train_name,
            "--impressions",
            "unread.tsv",
            "-o",
            &again,
        ],
    ] {
        refused(
            &command,
            &[
                "already holds logs in its columns 17..=22",
                "train.txt.logs.json",
            ],
        );
    }
    // The training file's sidecar lost beside splits that keep theirs: refused, where the run
    // would simulate logs over the training file's logs and read those as x.
    let lost = dir.path().join("lost");
    std::fs::create_dir_all(&lost).unwrap();
    for name in ["train.txt", "test.txt", "test.txt.logs.json"] {
        std::fs::copy(logged.join(name), lost.join(name)).unwrap();
    }
    refused(
        &strs(&compare(&lost.join("train.txt"), &lost.join("test.txt"))),
        &[
            "test.txt holds logs",
            "has none",
            "train.txt.logs.json is missing",
        ],
    );
    // The simulation's settings beside files that hold logs: named as not used, on stderr and
    // in the report.
    let mut args = compare(&logged_train, &logged_test);
    args.extend(["--sessions", "50", "--log-seed", "9"].map(String::from));
    let (out, _, stderr) = run(&strs(&args));
    assert!(out.status.success(), "{stderr}");
    let unread = "--sessions 50, --log-seed 9 are not used: ";
    assert!(
        stderr.contains(unread) && stderr.contains("already holds logs"),
        "{stderr}"
    );
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.contains(unread), "{report}");
    // A sidecar's examination probabilities, which inverse propensity weights divide by.
    let sidecar_path = logged.join("train.txt.logs.json");
    let kept = std::fs::read_to_string(&sidecar_path).unwrap();
    let mut sidecar: serde_json::Value = serde_json::from_str(&kept).unwrap();
    let ranks = sidecar["examination"].as_array().unwrap().len();
    for (examination, fragment) in [
        (
            serde_json::json!(vec![5.0; ranks]),
            "at rank 1 is 5: expected a probability in (0, 1]",
        ),
        (serde_json::json!(vec![0.0; ranks]), "at rank 1 is 0"),
        (
            serde_json::json!("garbage"),
            "expected the examination probability at each rank",
        ),
    ] {
        sidecar["examination"] = examination;
        std::fs::write(&sidecar_path, sidecar.to_string()).unwrap();
        let mut args = compare(&logged_train, &logged_test);
        args.extend(["--methods", "no-distillation,ips"].map(String::from));
        refused(
            &strs(&args),
            &["train.txt.logs.json: \"examination\"", fragment],
        );
    }
    std::fs::write(&sidecar_path, kept).unwrap();
    // A click model's parameter under another click model, as a comparison names it.
    let (out, _, stderr) = run(&[
        "data",
        "simulate-logs",
        &train,
        "-o",
        &again,
        "--click-model",
        "cascade",
        "--position-bias",
        "2",
    ]);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("--position-bias 2 is not used: only the pbm click model reads it"),
        "{stderr}"
    );
    // A logging ranker's column past the data's, by its flag, and by its field from a setup.
    refused(
        &[
            "data",
            "simulate-logs",
            &train,
            "-o",
            &again,
            "--logging-ranker",
            "feature:99",
        ],
        &["--logging-ranker feature:99: the data have columns 1..=16"],
    );
    let setup = dir.path().join("setup.json");
    std::fs::write(
        &setup,
        serde_json::json!({
            "data": {"source": {"files": {"train": train}}, "privileged": "logs",
                     "logs": {"logging_ranker": {"kind": "feature", "column": 99}}},
            "epochs": 1, "seeds": 1,
        })
        .to_string(),
    )
    .unwrap();
    let setup_name = setup.display().to_string();
    let out_name = dir.path().join("from-setup").display().to_string();
    refused(
        &["compare", "--setup", &setup_name, "--out", &out_name],
        &[&format!("--setup {setup_name}: data.logs.logging_ranker feature:99: the data have columns 1..=16")],
    );
}

/// `data` with every column but `varying` (1-based) set, within each query, to its value on the
/// query's first document, and each query's documents sorted by grade: best first, or worst first.
fn flattened_within_queries(data: &str, varying: &[usize], best_first: bool, out: &Path) -> String {
    let text = std::fs::read(data).unwrap();
    let mut d = parse_letor_bytes(Path::new(data), &text, None, &ReadOptions::default()).unwrap();
    let nf = d.n_features;
    let offsets = d.group_offsets.clone();
    let mut features = d.features.to_mut().clone();
    for w in offsets.windows(2) {
        let mut rows: Vec<usize> = (w[0]..w[1]).collect();
        rows.sort_by_key(|&r| d.grades[r]);
        if best_first {
            rows.reverse();
        }
        let old: Vec<f32> = features[w[0] * nf..w[1] * nf].to_vec();
        let grades: Vec<u8> = rows.iter().map(|&r| d.grades[r]).collect();
        for (to, &from) in rows.iter().enumerate() {
            for j in 0..nf {
                features[(w[0] + to) * nf + j] = if varying.contains(&(j + 1)) {
                    old[(from - w[0]) * nf + j]
                } else {
                    old[j]
                };
            }
        }
        d.grades[w[0]..w[1]].copy_from_slice(&grades);
    }
    *d.features.to_mut() = features;
    let mut file = std::fs::File::create(out).unwrap();
    d.write_letor(&mut file).unwrap();
    out.display().to_string()
}

// 1. The student's inputs carry no information within a query: regular columns that vary only
// between queries. `data stats` counts them, and training names each split where it happens.
#[test]
fn class_inputs_without_information_within_a_query_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 60, 10, 3);
    let privileged = [11, 12, 13, 14, 15, 16];
    let flat = flattened_within_queries(&data, &privileged, true, &dir.path().join("flat.txt"));
    let (out, stdout, stderr) = run(&["data", "stats", &flat]);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("constant within queries 10 [1-10]"),
        "{stdout}"
    );
    let (_, stdout, _) = run(&["data", "stats", &data]);
    assert!(stdout.contains("constant within queries 0 []"), "{stdout}");
    let (out, _, stderr) = run(&[
        "train",
        "--train",
        &flat,
        "--privileged",
        "cols:11,12,13,14,15,16",
        "--tau-target",
        "3",
        "--t",
        "8",
        "--widths",
        "8",
        "--epochs",
        "1",
        "--backend",
        "cpu",
    ]);
    assert!(out.status.success(), "{stderr}");
    for split in ["train", "validation"] {
        assert!(
            stderr.contains(&format!("warning: the {split} split's regular features x (columns 1-10) are each constant within every query")),
            "{split}: {stderr}"
        );
    }
}

// A column that varies on the training split by less than f32 resolves once transformed (0 and
// 1e-40) is named as the model sees it, one value, where the statistics count it as varying and
// the warnings blamed the data; and `train` says of its test split what `eval` says of a model
// that gives every document of each query one score (it printed its figures without a word).
#[test]
fn class_a_column_the_transform_makes_one_value_and_a_model_that_does_not_rank_are_named() {
    let dir = tempfile::tempdir().unwrap();
    // Twelve queries of eight documents from `first` on: column 1 the grade and more, column 2
    // `second` of the row and the document, column 3 constant.
    let split = |name: &str, first: usize, second: &dyn Fn(usize, usize) -> String| {
        let mut text = String::new();
        for (row, (q, d)) in (first..first + 12)
            .flat_map(|q| (0..8usize).map(move |d| (q, d)))
            .enumerate()
        {
            let grade = (q + d) % 3;
            let second = second(row, d);
            text.push_str(&format!("{grade} qid:{q} 1:{grade}.{d} 2:{second} 3:7\n"));
        }
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let tiny = |_: usize, d: usize| {
        if d.is_multiple_of(2) {
            "0".into()
        } else {
            "1e-40".into()
        }
    };
    let (train, valid, test) = (
        split("tr.txt", 1, &tiny),
        split("va.txt", 100, &tiny),
        split("te.txt", 200, &tiny),
    );
    let run_train = |[train, valid, test]: [&str; 3], transform: &str| {
        run(&[
            "train",
            "--train",
            train,
            "--valid",
            valid,
            "--test",
            test,
            "--privileged",
            "cols:1",
            "--epochs",
            "2",
            "--widths",
            "8",
            "--backend",
            "cpu",
            "--min-group-size",
            "1",
            "--training-labels",
            "grades",
            "--transform",
            transform,
        ])
    };
    for transform in ["standardize", "rank-gauss"] {
        let (out, _, stderr) = run_train([&train, &valid, &test], transform);
        assert!(!out.status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("warning: column 2 takes one value once transformed (--transform {transform}), though it varies on the training split (by less than f32 resolves at its scale)")),
            "{transform}: {stderr}"
        );
        // The splits' x are constant within their queries because of the transform, not the
        // data: said on each split, without the quantile map's ends, which take no part here.
        for split in ["train", "validation", "test"] {
            assert!(
                stderr.contains(&format!("the {split} split's regular features x (columns 2-3) are each constant within every query once transformed (--transform {transform}) (at most")),
                "{transform}, {split}: {stderr}"
            );
        }
    }
    let (out, _, stderr) = run_train([&train, &valid, &test], "signed-log1p");
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "warning: test split: the model gives every document of each query the same score"
        ),
        "{stderr}"
    );
    // A test split whose x lies beyond the training split's range is made constant by the
    // quantile map, not by the data, which vary within every query.
    let (train, valid) = (
        split("tr2.txt", 1, &|row, _| (row % 5).to_string()),
        split("va2.txt", 100, &|row, _| (row % 7).to_string()),
    );
    let far = split("far.txt", 200, &|row, _| format!("{}e6", row + 1));
    let (_, _, stderr) = run_train([&train, &valid, &far], "rank-gauss");
    assert!(
        stderr.contains("warning: the test split's regular features x (columns 2-3) are each constant within every query once transformed (--transform rank-gauss maps the values beyond the training split's range to its ends)"),
        "{stderr}"
    );
}

// 13. Metrics do not depend on the order of rows within a query: tied scores are averaged over
// every order. A model trained on regular columns that are constant within each query ties
// every query's documents; sorted best first or worst first, the file gives the same figures,
// which are those of a random order (neither 1 nor 0). (Training's binary labels are drawn in
// file order, so the two files' models differ; each model is evaluated on both orders.)
#[test]
fn class_metrics_do_not_depend_on_row_order_within_a_query() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 60, 10, 5);
    let privileged = [11, 12, 13, 14, 15, 16];
    let best = flattened_within_queries(&data, &privileged, true, &dir.path().join("best.txt"));
    let worst = flattened_within_queries(&data, &privileged, false, &dir.path().join("worst.txt"));
    let train = |file: &str, prefix: &str| {
        let (out, _, stderr) = run(&[
            "train",
            "--train",
            file,
            "--privileged",
            "cols:11,12,13,14,15,16",
            "--tau-target",
            "3",
            "--t",
            "8",
            "--widths",
            "8",
            "--epochs",
            "2",
            "--backend",
            "cpu",
            "--quiet",
            "--save",
            prefix,
        ]);
        assert!(out.status.success(), "{stderr}");
    };
    let (model_best, model_worst) = (
        dir.path().join("best").display().to_string(),
        dir.path().join("worst").display().to_string(),
    );
    train(&best, &model_best);
    train(&worst, &model_worst);
    for model in [&model_best, &model_worst] {
        let eval = |file: &str| -> String {
            let (out, stdout, stderr) = run(&[
                "eval",
                "--model",
                model,
                file,
                "--labels",
                "graded",
                "--backend",
                "cpu",
            ]);
            assert!(out.status.success(), "{stderr}");
            assert!(stderr.contains("the same score"), "{stderr}");
            stdout
        };
        let (on_best, on_worst) = (eval(&best), eval(&worst));
        assert_eq!(
            on_best.replace(&best, "FILE"),
            on_worst.replace(&worst, "FILE")
        );
        let ndcg8 = on_best
            .split_whitespace()
            .skip_while(|w| !w.starts_with("NDCG@8"))
            .nth(1)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no NDCG@8 in {on_best}"));
        assert!(
            ndcg8 > 0.05 && ndcg8 < 0.95,
            "a random order's NDCG@8: {ndcg8}"
        );
    }
}

// 8. A path to any readable file never echoes its content: an error on a file's first line
// describes what was expected without quoting the line, from every door that reads a file.
#[test]
fn class_a_file_that_is_not_ranking_data_is_never_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(
        &secret,
        "hunter2:SECRET-TOKEN:/home/alice\nmore words here\n",
    )
    .unwrap();
    let secret = secret.display().to_string();
    let data = synth(dir.path(), "data.txt", 20, 6, 1);
    let out = dir.path().join("out").display().to_string();
    for args in [
        vec!["data", "stats", &secret],
        vec!["train", "--train", &secret, "--backend", "cpu"],
        vec![
            "train",
            "--train",
            &data,
            "--valid",
            &secret,
            "--backend",
            "cpu",
        ],
        vec![
            "train",
            "--train",
            &data,
            "--train-query",
            &secret,
            "--backend",
            "cpu",
        ],
        vec!["compare", "--setup", &secret, "--out", &out],
        vec!["eval", "--model", &secret, &data],
        vec!["data", "cache", &secret],
        vec!["data", "simulate-logs", &secret, "-o", &out],
        vec!["bench", "parse", &secret],
        vec![
            "data",
            "aggregate-logs",
            &data,
            "--impressions",
            &secret,
            "-o",
            &out,
        ],
        vec![
            "compare",
            "--train",
            &data,
            "--teacher-scores",
            &secret,
            "--out",
            &out,
        ],
        vec![
            "compare",
            "--train",
            &data,
            "--reference-scores",
            &secret,
            "--out",
            &out,
        ],
    ] {
        let stderr = refused(&args, &[]);
        assert!(
            !stderr.contains("SECRET") && !stderr.contains("hunter2"),
            "{args:?} echoed the file: {stderr}"
        );
    }
    // A file of one word (a token, a key) is no header of an impressions log: not shown either.
    let token = dir.path().join("token");
    std::fs::write(&token, "ghp_SECRET0123456789\n").unwrap();
    let log = |path: &Path| {
        let args = [
            "data",
            "aggregate-logs",
            &data,
            "--impressions",
            path.to_str().unwrap(),
            "-o",
            &out,
        ];
        refused(&args, &[])
    };
    let stderr = log(&token);
    assert!(!stderr.contains("SECRET"), "echoed the token: {stderr}");
    // A header of names is shown; one separated by commas is told so.
    let header = dir.path().join("header.tsv");
    std::fs::write(&header, "qid\tsession\tpos\tdoc\tclick\n").unwrap();
    assert!(log(&header).contains("the header 'qid\\tsession\\tpos\\tdoc\\tclick'"));
    std::fs::write(&header, "qid,session,position,doc,click\n").unwrap();
    assert!(log(&header).contains("separated by commas or spaces"));
    // Past the first line, a LETOR file's bad token is shown: it helps to find the line.
    let broken = dir.path().join("broken.txt");
    std::fs::write(&broken, "1 qid:1 1:0.5\n1 qid:1 junk\n").unwrap();
    refused(
        &["data", "stats", broken.to_str().unwrap()],
        &["broken.txt:2:9", "found 'junk'"],
    );
}

// 12. A model config with a value this build does not know, anywhere in it (here in the setup
// it records), is refused by every door that reads a model, not scored as if it named a default.
#[test]
fn class_a_model_config_with_an_unknown_value_is_refused_by_every_door() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 20, 10, 2);
    let prefix = dir.path().join("odd");
    let model = Ensemble::single(Mlp::<f32>::new(16, &[4], 0));
    let config = student_config(&model).trained_on(
        "data.txt",
        Some(serde_json::json!({"seeds": 1, "activation": "swish"})),
    );
    model_io::save(&prefix, &model, &config).unwrap();
    let prefix = prefix.to_str().unwrap();
    let onnx = dir.path().join("odd.onnx").display().to_string();
    for args in [
        vec!["eval", "--model", prefix, &data, "--backend", "cpu"],
        vec!["predict", "--model", prefix, &data],
        vec!["export", "--model", prefix, "--onnx", &onnx],
    ] {
        refused(&args, &["odd.json", "activation"]);
    }
}

// 12b. A model config whose field holds the wrong type or an impossible value names the field by
// its path in every door that reads a model (serde's words alone gave the type it expected and
// a line and column: `invalid type: string "4", expected usize at line 6 column 7`).
#[test]
fn class_a_model_configs_wrong_field_is_named_by_its_path_in_every_door() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 20, 10, 2);
    let saved = dir.path().join("saved");
    let model = Ensemble::single(Mlp::<f32>::new(16, &[4], 0));
    model_io::save(&saved, &model, &student_config(&model)).unwrap();
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(saved.with_extension("json")).unwrap())
            .unwrap();
    let onnx = dir.path().join("odd.onnx").display().to_string();
    for (field, value, words) in [
        (
            "n_in",
            serde_json::json!("16"),
            "field n_in: invalid type: string \"16\", expected usize (line",
        ),
        (
            "widths",
            serde_json::json!(["4"]),
            "field widths[0]: invalid type: string \"4\"",
        ),
        (
            "widths",
            serde_json::json!([0]),
            "widths[0] is 0: expected every hidden layer's width to be at least 1",
        ),
        ("n_in", serde_json::json!(0), "n_in is 0: expected"),
        (
            "loss",
            serde_json::json!("bogus"),
            "field loss: unknown variant `bogus`",
        ),
    ] {
        let mut edited = config.clone();
        edited[field] = value;
        let prefix = dir.path().join("odd");
        std::fs::copy(
            saved.with_extension("safetensors"),
            prefix.with_extension("safetensors"),
        )
        .unwrap();
        std::fs::write(
            prefix.with_extension("json"),
            serde_json::to_string_pretty(&edited).unwrap(),
        )
        .unwrap();
        let prefix = prefix.to_str().unwrap();
        for args in [
            vec!["eval", "--model", prefix, &data, "--backend", "cpu"],
            vec!["predict", "--model", prefix, &data],
            vec!["export", "--model", prefix, "--onnx", &onnx],
        ] {
            refused(&args, &["odd.json", words]);
        }
    }
    // The config given where a tree model is read: named for what it is.
    let json = saved.with_extension("json").display().to_string();
    let out = dir.path().join("out").display().to_string();
    for flag in ["--teacher-model", "--reference-model"] {
        refused(
            &[
                "compare",
                "--bundled",
                "mq2008",
                flag,
                &json,
                "--methods",
                "pfd",
                "--seeds",
                "1",
                "--epochs",
                "1",
                "--widths",
                "4",
                "--backend",
                "cpu",
                "--out",
                &out,
            ],
            &[
                "saved.json",
                "a saved distillrank model's config, not a tree model",
            ],
        );
    }
}

/// A split with nothing to rank says why, naming its file (its rows as wide as MQ2008's 46
/// columns): every group filtered out (too few documents for `--min-group-size`) is the filter's
/// doing, with its report, and every group of one document is the qid column's; before, both
/// said that no group mixes grades and to check the file's first column, naming no file.
#[test]
fn class_a_split_with_nothing_to_rank_names_its_file_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let train = letor_data::data("mq2008/Fold1/train.txt");
    let (small, single) = (dir.path().join("small.txt"), dir.path().join("single.txt"));
    let (mut few, mut one) = (String::new(), String::new());
    for q in 0..6 {
        for d in 0..3 {
            few.push_str(&format!("{} qid:{q} 1:{d} 2:{q} 46:1\n", d % 3));
        }
        one.push_str(&format!("{} qid:{q} 1:{q} 2:1 46:1\n", 1 + q % 2));
    }
    std::fs::write(&small, few).unwrap();
    std::fs::write(&single, one).unwrap();
    let (small, single) = (small.to_str().unwrap(), single.to_str().unwrap());
    let quick = ["--epochs", "1", "--widths", "4", "--backend", "cpu"];
    for (role, flag, file) in [("validation", "--valid", small), ("test", "--test", small)] {
        let mut args = vec!["train", "--train", &train, flag, file];
        args.extend(quick);
        refused(
            &args,
            &[
                &format!("no {role} groups left in {file} after filtering"),
                "--min-group-size",
                "too few docs",
            ],
        );
    }
    let mut args = vec![
        "train",
        "--train",
        &train,
        "--test",
        single,
        "--min-group-size",
        "1",
    ];
    args.extend(quick);
    refused(
        &args,
        &[
            &format!("every test group in {single} holds one document"),
            "qid:",
        ],
    );
}

/// One epoch of a model of width 8 on the CPU engine, on [`synth`]'s files with 10 regular
/// features: their last column privileged, feature 1 regular.
const TINY_RUN: [&str; 8] = [
    "--epochs",
    "1",
    "--widths",
    "8",
    "--backend",
    "cpu",
    "--privileged",
    "cols:16",
];

/// `src` with feature 1 of its `i`-th line set to `value(i)`, written to `dir/name`.
fn with_feature_one(
    src: &str,
    dir: &Path,
    name: &str,
    value: impl Fn(usize) -> &'static str,
) -> String {
    let text = std::fs::read_to_string(src).unwrap();
    let lines: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            line.split(' ')
                .map(|t| match t.strip_prefix("1:") {
                    Some(_) => format!("1:{}", value(i)),
                    None => t.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    let path = dir.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path.display().to_string()
}

// Issue classes: a model whose scores of a split overflow (a column of tiny spread on the training
// split, standardised, and a value far outside it on another split) reports no metric, in every
// command that trains: the validation split's every epoch, the test split's at the end. `eval`
// and `predict` refused such scores; `train`, `compare` and `sweep` measured the test split's,
// and called the validation split's a divergence, to be mended by a smaller learning rate.
#[test]
fn class_scores_that_overflow_are_refused_not_measured_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tiny = |i: usize| if i.is_multiple_of(2) { "0" } else { "1e-37" };
    let huge = |i: usize| if i.is_multiple_of(3) { "1e30" } else { "0" };
    let train = with_feature_one(&synth(d, "train.txt", 40, 10, 1), d, "tiny.txt", tiny);
    let plain = synth(d, "plain.txt", 20, 10, 2);
    let far = with_feature_one(&synth(d, "far0.txt", 20, 10, 3), d, "far.txt", huge);
    let mut common = TINY_RUN.to_vec();
    common.extend(["--quiet", "--transform", "standardize"]);
    let out = d.join("out").display().to_string();
    for (command, valid, test, split) in [
        ("train", &plain, &far, "test"),
        ("train", &far, &plain, "validation"),
        ("compare", &plain, &far, "test"),
        ("compare", &far, &plain, "validation"),
        ("sweep", &plain, &far, "test"),
    ] {
        let mut args = vec![command, "--train", &train, "--valid", valid, "--test", test];
        args.extend(&common);
        match command {
            "train" => {}
            "sweep" => args.extend([
                "--param", "alpha", "--values", "0.5", "--seeds", "1", "--out", &out,
            ]),
            _ => args.extend([
                "--seeds",
                "1",
                "--methods",
                "no-distillation",
                "--out",
                &out,
            ]),
        }
        refused(
            &args,
            &[
                &format!("documents of the {split} split"),
                "as NaN or infinite",
                "its finite weights overflow on these inputs",
                "no metric is reported",
            ],
        );
    }
}

// Issue classes (a transform and a constant column): a column constant on the training split that
// takes other values on the validation or test split is named under the signed log1p alone, which
// fits nothing and passes those values to the model, in every command that prepares data; a
// fitted transform maps it to 0 on every split, and nothing is said.
#[test]
fn class_a_column_constant_on_the_training_split_alone_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let train = with_feature_one(&synth(d, "train.txt", 40, 10, 1), d, "flat.txt", |_| "0");
    let valid = synth(d, "valid.txt", 20, 10, 2);
    let test = with_feature_one(&synth(d, "test0.txt", 20, 10, 3), d, "test.txt", |i| {
        if i.is_multiple_of(4) {
            "2.5"
        } else {
            "0"
        }
    });
    let out = d.join("out").display().to_string();
    let common = TINY_RUN;
    for command in ["train", "compare"] {
        let mut args = vec![
            command, "--train", &train, "--valid", &valid, "--test", &test,
        ];
        args.extend(common);
        if command == "compare" {
            args.extend([
                "--seeds",
                "1",
                "--methods",
                "no-distillation",
                "--quiet",
                "--out",
                &out,
            ]);
        }
        let (status, _, stderr) = run(&args);
        assert!(status.status.success(), "{args:?}: {stderr}");
        let warned: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains("constant on the training split,"))
            .collect();
        // The validation split holds feature 1 of the generator: it varies there too.
        assert_eq!(warned.len(), 2, "{args:?}: {stderr}");
        for (line, split) in warned.iter().zip(["validation", "test"]) {
            assert!(
                line.contains(&format!(
                    "column 1, constant on the training split, takes other values on the {split} split"
                )) && line.contains("--transform standardize or rank-gauss"),
                "{stderr}"
            );
        }
        args.extend(["--transform", "rank-gauss"]);
        let (status, _, stderr) = run(&args);
        assert!(status.status.success(), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("constant on the training split,"),
            "{args:?}: {stderr}"
        );
    }
}

// Outputs: a command that Ctrl-C or SIGTERM ends while it writes leaves no temporary file beside
// its outputs (a signal runs no destructor: the command line removes its unfinished outputs),
// and still ends by the signal. A simulated log of a million sessions was left as a `.tmp` file
// of hundreds of megabytes.
#[test]
fn class_an_interrupted_command_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = synth(dir.path(), "data.txt", 3, 4, 1);
    let temporary = |out: &Path| {
        std::fs::read_dir(out)
            .map(|entries| {
                entries
                    .flatten()
                    .any(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            })
            .unwrap_or(false)
    };
    for (signal, number) in [("TERM", 15), ("INT", 2)] {
        let out = dir.path().join(signal);
        let folder = format!("{}/", out.display());
        let mut child = command(&[
            "data",
            "simulate-logs",
            &data,
            "-o",
            &folder,
            "--sessions",
            "1000000",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        let started = std::time::Instant::now();
        while !temporary(&out) {
            assert!(child.try_wait().unwrap().is_none(), "ended before it wrote");
            assert!(started.elapsed().as_secs() < 300, "no temporary file came");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let killed = Command::new("kill")
            .args(["-s", signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(number), "SIG{signal}: {status}");
        assert!(!temporary(&out), "SIG{signal} left a temporary file");
    }
}

//! The LETOR protocol: `compare --folds` on each fold, the mean over the folds, the paired tests on
//! the pooled test queries; the folds' files found in both layouts, missing ones named.

#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use distillrank::pipeline::folds::{fold_setup, folds_of, layout_warning, Fold, Joined, ROTATION};
use distillrank::pipeline::store::{Disk, Role, Store};
use distillrank::pipeline::Silent;
use distillrank::setup::{DataSetup, DataSource, Setup};

#[path = "common/cli.rs"]
mod cli_run;
use cli_run::distillrank;
#[path = "common/letor_data.rs"]
mod letor_data;

/// Part `part` (1..=5) of a small LETOR set: `queries` queries of 12 documents over 6 features,
/// the qids of each part distinct.
fn part_text(part: usize, queries: usize) -> String {
    let mut text = String::new();
    for q in 0..queries {
        let qid = 100 * part + q;
        for d in 0..12usize {
            let grade = (qid + d) % 3;
            let noise = ((qid * 31 + d * 17) % 10) as f64 / 10.0;
            text.push_str(&format!(
                "{grade} qid:{qid} 1:{noise} 2:{} 3:{} 4:{} 5:0.5 6:{}\n",
                (d % 4) as f64 / 4.0,
                noise * grade as f64,
                (qid % 5) as f64,
                grade as f64 + noise / 2.0
            ));
        }
    }
    text
}

/// `compare --folds dir` of two methods on the small parts, into `out`, over `seeds` seeds,
/// with the `extra` flags.
fn compare_small_folds(
    dir: &Path,
    out: &Path,
    seeds: usize,
    extra: &[&str],
) -> (bool, String, String) {
    let seeds = seeds.to_string();
    let args = [
        "compare",
        "--folds",
        dir.to_str().unwrap(),
        "--training-labels",
        "grades",
        "--privileged",
        "cols:6",
        "--methods",
        "no-distillation,pfd",
        "--seeds",
        &seeds,
        "--epochs",
        "2",
        "--widths",
        "8",
        "--min-group-size",
        "2",
        "--backend",
        "cpu",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    distillrank(&[&args[..], extra].concat())
}

/// LETOR 4.0's layout in `dir`: S1.txt..S5.txt.
fn parts_in(dir: &Path) -> Vec<PathBuf> {
    (1..=5)
        .map(|i| {
            let path = dir.join(format!("S{i}.txt"));
            std::fs::write(&path, part_text(i, 8 + i)).unwrap();
            path
        })
        .collect()
}

#[test]
fn the_folds_of_a_directory_in_either_layout_and_a_missing_file_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let on_disk = |f: &str| Path::new(f).is_file();
    // LETOR 4.0's parts, rotated as its readme says.
    parts_in(dir.path());
    let folds = folds_of(&root, &on_disk).unwrap();
    assert_eq!(folds.len(), 5);
    for (fold, (train, valid, test)) in folds.iter().zip(ROTATION) {
        let name = |i: usize| dir.path().join(format!("S{i}.txt")).display().to_string();
        assert_eq!(fold.train, train.map(name).to_vec());
        assert_eq!(
            (fold.valid.clone(), fold.test.clone()),
            (name(valid), name(test))
        );
    }
    assert_eq!(
        folds[0].train_name(),
        dir.path().join("S1+S2+S3.txt").display().to_string()
    );
    // Every document is a test document of exactly one fold.
    let mut tested: Vec<&str> = folds.iter().map(|f| f.test.as_str()).collect();
    tested.sort();
    tested.dedup();
    assert_eq!(tested.len(), 5);
    // A missing part is named.
    std::fs::remove_file(dir.path().join("S4.txt")).unwrap();
    let e = folds_of(&root, &on_disk).unwrap_err().to_string();
    assert!(e.contains("S4.txt") && e.contains("no such file"), "{e}");
    // The MSLR-WEB layout, when all five folds are there, whatever else the directory holds.
    for k in 1..=5 {
        let fold = dir.path().join(format!("Fold{k}"));
        std::fs::create_dir_all(&fold).unwrap();
        for split in ["train", "vali", "test"] {
            std::fs::write(fold.join(format!("{split}.txt")), part_text(k, 3)).unwrap();
        }
    }
    let folds = folds_of(&root, &on_disk).unwrap();
    assert_eq!(
        folds[2].train,
        vec![dir.path().join("Fold3/train.txt").display().to_string()]
    );
    assert_eq!(folds[2].train_name(), folds[2].train[0]);
    // Neither layout whole: the missing file of the one the directory comes closer to.
    let empty = tempfile::tempdir().unwrap();
    std::fs::create_dir(empty.path().join("Fold1")).unwrap();
    std::fs::write(empty.path().join("Fold1/train.txt"), "").unwrap();
    let e = folds_of(&empty.path().display().to_string(), &on_disk)
        .unwrap_err()
        .to_string();
    assert!(e.contains("Fold1") && e.contains("vali.txt"), "{e}");
}

#[test]
fn a_folds_training_parts_read_as_the_file_they_make_together() {
    let dir = tempfile::tempdir().unwrap();
    let parts = parts_in(dir.path());
    let names: Vec<String> = parts[..3].iter().map(|p| p.display().to_string()).collect();
    let whole = dir.path().join("whole.txt");
    let text: String = parts[..3]
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    std::fs::write(&whole, &text).unwrap();
    let mut disk = Disk::default();
    let expected = disk
        .load(&whole.display().to_string(), Role::Train, &mut Silent)
        .unwrap();
    let mut joined = Joined {
        inner: &mut disk,
        name: "S1+S2+S3.txt".into(),
        parts: names.clone(),
        allow_missing_features: false,
    };
    let got = joined
        .load("S1+S2+S3.txt", Role::Train, &mut Silent)
        .unwrap();
    assert_eq!(got.qids, expected.qids);
    assert_eq!(got.group_offsets, expected.group_offsets);
    assert_eq!(got.grades, expected.grades);
    assert_eq!(got.n_features, expected.n_features);
    assert_eq!(&got.features[..], &expected.features[..]);
    // Its text for a teacher trained elsewhere: the parts' texts in order.
    {
        let (mut read, _) = joined.text("S1+S2+S3.txt", Role::Train).unwrap();
        let mut again = String::new();
        std::io::Read::read_to_string(&mut read, &mut again).unwrap();
        assert_eq!(again, text);
    }
    // A query in two parts is refused, naming both.
    std::fs::write(&parts[1], part_text(1, 2)).unwrap();
    let e = joined
        .load("S1+S2+S3.txt", Role::Train, &mut Silent)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("S1.txt") && e.contains("S2.txt") && e.contains("qid 100"),
        "{e}"
    );
}

#[test]
fn a_folds_setup_reads_its_files_and_its_own_teacher() {
    let mut setup = Setup::default();
    setup.data.folds = Some("d".into());
    setup.data.teacher.model = Some("teachers/fold{fold}.txt".into());
    setup.data.reference.scores = Some(",d/ref{fold}.vali,d/ref{fold}.test".into());
    let fold = Fold {
        fold: 3,
        train: vec!["d/S3.txt".into(), "d/S4.txt".into(), "d/S5.txt".into()],
        valid: "d/S1.txt".into(),
        test: "d/S2.txt".into(),
    };
    let s = fold_setup(&setup, &fold);
    assert_eq!(s.data.folds, None);
    assert_eq!(
        s.data.source,
        DataSource::files(
            Path::new("d").join("S3+S4+S5.txt").display().to_string(),
            Some("d/S1.txt".into()),
            Some("d/S2.txt".into()),
        )
    );
    assert_eq!(s.data.teacher.model.as_deref(), Some("teachers/fold3.txt"));
    // Named per fold: nothing to warn; one file for every fold: it has seen test queries.
    assert!(distillrank::pipeline::folds::warnings(&setup).is_empty());
    let mut shared = setup.clone();
    shared.data.teacher.model = Some("teacher.txt".into());
    let warned = distillrank::pipeline::folds::warnings(&shared);
    assert_eq!(warned.len(), 1);
    assert!(
        warned[0].contains("teacher.txt")
            && warned[0].contains("{fold}")
            && warned[0].contains("--teacher-model"),
        "{warned:?}"
    );
    // A scores list: each of its files by name, with the scores' flag.
    let mut listed = setup.clone();
    listed.data.reference.scores = Some(",d/ref.vali,d/ref{fold}.test".into());
    let warned = distillrank::pipeline::folds::warnings(&listed);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains("file d/ref.vali is")
            && warned[0].contains("--reference-scores ',dir/vali{fold}.scores"),
        "{warned:?}"
    );
    assert_eq!(
        s.data.reference.scores.as_deref(),
        Some(",d/ref3.vali,d/ref3.test")
    );
}

#[test]
fn compare_folds_reports_the_mean_over_folds_and_tests_the_pooled_queries() {
    let dir = tempfile::tempdir().unwrap();
    parts_in(dir.path());
    let out = dir.path().join("out");
    let (ok, _, stderr) = compare_small_folds(dir.path(), &out, 2, &[]);
    assert!(ok, "{stderr}");
    let read = |p: PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let results = read(out.join("results.json"));
    assert_eq!(results["folds"].as_array().unwrap().len(), 5);
    let folds: Vec<serde_json::Value> = (1..=5)
        .map(|k| read(out.join(format!("fold{k}/results.json"))))
        .collect();
    // Each fold's comparison tests on its own part; the pooled queries are all of them.
    let queries: usize = folds
        .iter()
        .map(|f| f["test_qids"].as_array().unwrap().len())
        .sum();
    assert_eq!(results["pooled_test_queries"], queries);
    for method in ["no-distillation", "pfd"] {
        // The mean over the folds of each fold's mean over seeds.
        let per_fold: Vec<f64> = folds
            .iter()
            .map(|f| f["methods"][method]["ndcg@8"]["mean"].as_f64().unwrap())
            .collect();
        let mean = per_fold.iter().sum::<f64>() / 5.0;
        let stat = &results["methods"][method]["ndcg@8"];
        assert!(
            (stat["mean"].as_f64().unwrap() - mean).abs() < 1e-12,
            "{method}"
        );
        for (k, v) in per_fold.iter().enumerate() {
            assert_eq!(stat["per_fold"][k].as_f64().unwrap(), *v);
        }
    }
    // The paired test of PFD against no distillation runs on every fold's queries, pooled.
    let test = results["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["a"] == "pfd" && t["b"] == "no-distillation" && t["metric"] == "ndcg@8")
        .unwrap()
        .clone();
    let mut diffs = Vec::new();
    for f in &folds {
        let (a, b) = (&f["per_query"]["pfd"], &f["per_query"]["no-distillation"]);
        for q in 0..f["test_qids"].as_array().unwrap().len() {
            let mean = |m: &serde_json::Value| -> Option<f64> {
                let v: Option<Vec<f64>> = (0..2).map(|s| m[s][q].as_f64()).collect();
                v.map(|v| v.iter().sum::<f64>() / 2.0)
            };
            if let (Some(x), Some(y)) = (mean(a), mean(b)) {
                diffs.push(x - y);
            }
        }
    }
    assert_eq!(test["n_queries"], diffs.len());
    let mean = diffs.iter().sum::<f64>() / diffs.len() as f64;
    assert!((test["mean_diff"].as_f64().unwrap() - mean).abs() < 1e-12);
    assert!(!results["verdicts"].as_array().unwrap().is_empty());
    assert!(std::fs::read_to_string(out.join("report.md"))
        .unwrap()
        .contains("NDCG@8 fold 5"));
}

/// The bundled MQ2008's five folds (`--bundled mq2008-folds`, the page's "MQ2008, five folds")
/// are the release's: the same comparison on them and on the directory of MQ2008's S1..S5 gives
/// the same figures on every fold and the same pooled tests. (The bundled data keep only the
/// queries with a relevant document and the non-zero features: preparation drops the others
/// anyway.)
#[test]
fn the_bundled_folds_are_the_releases_folds() {
    let dir = tempfile::tempdir().unwrap();
    let part = letor_data::data("mq2008/S1.txt");
    let release = Path::new(&part)
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let run = |data: &[&str], out: &str| -> serde_json::Value {
        let out = dir.path().join(out);
        let mut args = vec!["compare"];
        args.extend_from_slice(data);
        args.extend_from_slice(&[
            "--training-labels",
            "grades",
            "--methods",
            "no-distillation,pfd",
            "--seeds",
            "2",
            "--epochs",
            "2",
            "--widths",
            "16",
            "--backend",
            "cpu",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        let (ok, _, stderr) = distillrank(&args);
        assert!(ok, "{stderr}");
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
    };
    let bundled = run(&["--bundled", "mq2008-folds"], "bundled");
    let files = run(&["--folds", &release], "files");
    assert_eq!(bundled["pooled_test_queries"], 293);
    assert_eq!(bundled["pooled_test_queries"], files["pooled_test_queries"]);
    assert_eq!(bundled["methods"], files["methods"]);
    let tests = |r: &serde_json::Value| r["tests"].to_string();
    assert_eq!(tests(&bundled), tests(&files));
    assert_eq!(bundled["folds"][0]["train"][0], "bundled:mq2008/S1.txt");
    assert_eq!(bundled["setup"]["data"]["source"], "mq2008_folds");
}

#[test]
fn class_a_folds_part_wider_than_the_others_is_named_in_every_door() {
    let dir = tempfile::tempdir().unwrap();
    let parts = parts_in(dir.path());
    // S1 has a seventh column on its first line; the other parts have six.
    let text = part_text(1, 9).replacen('\n', " 7:0.25\n", 1);
    std::fs::write(&parts[0], text).unwrap();
    let root = dir.path().to_str().unwrap();
    let out = dir.path().join("out");
    let setup = dir.path().join("setup.json");
    std::fs::write(
        &setup,
        serde_json::json!({"data": {"folds": root}}).to_string(),
    )
    .unwrap();
    // Fold 1 trains on S1+S2+S3: the narrower part and the widest are named, not the
    // validation part against the joined name.
    // Each door names the setting in its words: the flag, or the setup file's field.
    for (door, allow) in [
        (vec!["--folds", root], "(--allow-missing-features true)"),
        (
            vec!["--setup", setup.to_str().unwrap()],
            "allow_missing_features true reads them as 0",
        ),
    ] {
        let mut args = vec!["compare", "--out", out.to_str().unwrap(), "--quiet"];
        args.extend(door);
        let (ok, _, stderr) = distillrank(&args);
        assert!(
            !ok && stderr.contains("S2.txt: the data have 6 feature columns")
                && stderr.contains("training part")
                && stderr.contains("S1.txt has 7")
                && stderr.contains(allow),
            "{stderr}"
        );
        assert!(!stderr.contains("S4.txt: "), "{stderr}");
    }
    // Allowed to leave columns out, the parts join; fold 2 then tests on S1, which a model
    // trained on six columns cannot read, and says so.
    let allowed = ["--allow-missing-features", "true"];
    let (ok, _, stderr) = compare_small_folds(dir.path(), &out, 1, &allowed);
    assert!(
        !ok && stderr.contains("S1.txt: the data have 7")
            && stderr.contains("S2.txt + ")
            && stderr.contains("S4.txt) has 6"),
        "{stderr}"
    );
    // The parts are named, not their joined name, which no file has.
    let error = stderr.lines().find(|l| l.starts_with("error")).unwrap();
    assert!(!error.contains("S2+S3+S4.txt"), "{error}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn class_a_folds_directory_that_cannot_be_read_is_refused_in_every_door() {
    let dir = tempfile::tempdir().unwrap();
    parts_in(dir.path());
    std::fs::remove_file(dir.path().join("S2.txt")).unwrap();
    let root = dir.path().to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    // compare names the missing part; so does a setup.json that gives the folds.
    let (ok, _, stderr) = distillrank(&["compare", "--folds", root, "--out", out, "--quiet"]);
    assert!(
        !ok && stderr.contains("S2.txt") && stderr.contains("no such file"),
        "{stderr}"
    );
    let setup = dir.path().join("setup.json");
    std::fs::write(
        &setup,
        serde_json::json!({"data": {"folds": root}}).to_string(),
    )
    .unwrap();
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--setup",
        setup.to_str().unwrap(),
        "--out",
        out,
        "--quiet",
    ]);
    assert!(!ok && stderr.contains("S2.txt"), "{stderr}");
    // A part that is a folder is there, but not a file: told so, not called missing.
    std::fs::create_dir(dir.path().join("S2.txt")).unwrap();
    let (ok, _, stderr) = distillrank(&["compare", "--folds", root, "--out", out, "--quiet"]);
    assert!(!ok && stderr.contains("S2.txt: not a file"), "{stderr}");
    std::fs::remove_dir(dir.path().join("S2.txt")).unwrap();
    // Not a directory.
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--folds",
        setup.to_str().unwrap(),
        "--out",
        out,
        "--quiet",
    ]);
    assert!(!ok && stderr.contains("not a directory"), "{stderr}");
    // No directory at all.
    let nowhere = Path::new(root).join("nowhere").display().to_string();
    let (ok, _, stderr) = distillrank(&["compare", "--folds", &nowhere, "--quiet"]);
    assert!(
        !ok && stderr.contains("nowhere: no such directory"),
        "{stderr}"
    );
    // Folds beside files, and folds where one split is needed, are refused in words.
    let (ok, _, stderr) = distillrank(&[
        "compare", "--folds", root, "--train", root, "--out", out, "--quiet",
    ]);
    assert!(!ok && stderr.contains("name one"), "{stderr}");
    let (ok, _, stderr) = distillrank(&["train", "--folds", root, "--epochs", "1"]);
    assert!(
        !ok && stderr.contains("runs a comparison on each fold"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_fold_layout_with_a_file_missing_beside_the_parts_is_told_not_silent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let on_disk = |f: &str| Path::new(f).is_file();
    parts_in(dir.path());
    // MQ2008's release: the parts and Fold1 alone. The rotation runs, with nothing to say.
    let fold1 = dir.path().join("Fold1");
    std::fs::create_dir(&fold1).unwrap();
    for split in ["train", "vali", "test"] {
        std::fs::write(fold1.join(format!("{split}.txt")), part_text(1, 3)).unwrap();
    }
    assert_eq!(layout_warning(&root, &on_disk), None);
    // Every fold there but one file: the rotation runs, and the missing file is named.
    for k in 2..=5 {
        let fold = dir.path().join(format!("Fold{k}"));
        std::fs::create_dir(&fold).unwrap();
        for split in ["train", "vali", "test"] {
            std::fs::write(fold.join(format!("{split}.txt")), part_text(k, 3)).unwrap();
        }
    }
    assert_eq!(layout_warning(&root, &on_disk), None);
    std::fs::remove_file(dir.path().join("Fold3/test.txt")).unwrap();
    let folds = folds_of(&root, &on_disk).unwrap();
    assert_eq!(folds[0].train.len(), 3, "the parts' rotation");
    let warning = layout_warning(&root, &on_disk).expect("a warning");
    assert!(
        warning.contains("Fold3") && warning.contains("test.txt") && warning.contains("rotation"),
        "{warning}"
    );
    let mut setup = Setup::default();
    setup.data.folds = Some(root.clone());
    assert!(
        distillrank::pipeline::folds::warnings(&setup).contains(&warning),
        "the folds' run tells it"
    );
}

#[test]
fn class_a_teacher_or_reference_named_by_fold_is_checked_before_any_fold_runs() {
    let dir = tempfile::tempdir().unwrap();
    parts_in(dir.path());
    let root = dir.path().to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    // Folds 1 to 3 have their file, fold 4 has none: refused before fold 1 trains, with the
    // option, the fold and the file.
    for k in 1..=3 {
        std::fs::write(dir.path().join(format!("ref{k}.txt")), "").unwrap();
    }
    let pattern = dir.path().join("ref{fold}.txt");
    let pattern = pattern.to_str().unwrap();
    // A model is one file; scores are TRAIN,VALID,TEST, of which a reference's TRAIN is not read.
    for (option, named) in [
        ("--teacher-model", pattern.to_string()),
        ("--reference-model", pattern.to_string()),
        ("--teacher-scores", format!("{pattern},{pattern},{pattern}")),
        ("--reference-scores", format!(",{pattern},{pattern}")),
    ] {
        let (ok, _, stderr) = distillrank(&[
            "compare", "--folds", root, option, &named, "--epochs", "1", "--seeds", "1", "--out",
            out,
        ]);
        assert!(
            !ok && stderr.contains(option)
                && stderr.contains("fold 4")
                && stderr.contains("ref4.txt")
                && !stderr.contains("fold 1: train"),
            "{option}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // A reference's training scores are never read on folds: `,VALID,TEST` by fold runs with no
    // training file there, and so does the same with a TRAIN part that names no file.
    for (k, (_, valid, test)) in ROTATION.iter().enumerate() {
        for (split, part) in [("vali", valid), ("test", test)] {
            let docs = 12 * (8 + part);
            let scores: String = (0..docs).map(|d| format!("{}\n", d % 7)).collect();
            std::fs::write(dir.path().join(format!("r{}.{split}", k + 1)), scores).unwrap();
        }
    }
    let r = |name: &str| dir.path().join(name).display().to_string();
    for list in [
        format!(",{},{}", r("r{fold}.vali"), r("r{fold}.test")),
        format!(
            "{},{},{}",
            r("r{fold}.train"),
            r("r{fold}.vali"),
            r("r{fold}.test")
        ),
    ] {
        let (ok, _, stderr) = distillrank(&[
            "compare",
            "--folds",
            root,
            "--reference-scores",
            &list,
            "--methods",
            "no-distillation",
            "--epochs",
            "1",
            "--seeds",
            "1",
            "--widths",
            "4",
            "--out",
            out,
            "--quiet",
        ]);
        assert!(ok, "{list}: {stderr}");
    }
    // {fold} where the run has no folds: refused in words, in the CLI and in a setup file.
    let train = dir.path().join("S1.txt");
    let train = train.to_str().unwrap();
    for option in ["--teacher-model", "--reference-scores"] {
        let (ok, _, stderr) = distillrank(&[
            "compare", "--train", train, "--test", train, option, pattern, "--out", out,
        ]);
        assert!(
            !ok && stderr.contains(option) && stderr.contains("no folds"),
            "{option}: {stderr}"
        );
    }
    let mut setup = Setup::default();
    setup.data.source = DataSource::files(train.into(), None, Some(train.into()));
    setup.data.teacher.model = Some(pattern.into());
    let e = setup.check(None).unwrap_err().to_string();
    assert!(
        e.contains("--teacher-model") && e.contains("no folds"),
        "{e}"
    );
}

/// The check takes whatever says a file is there: the page passes its uploads (found by name or
/// last path part), so a fold whose teacher was not uploaded is refused there before fold 1 too.
#[test]
fn fold_files_are_checked_against_any_store_of_files() {
    use distillrank::pipeline::folds::{bundled_folds, check_fold_files};
    let uploaded = ["t1.txt", "t2.txt", "t3.txt", "t5.txt"];
    let exists = |f: &str| uploaded.iter().any(|u| f.rsplit('/').next() == Some(*u));
    let mut setup = Setup::default();
    setup.data.source = DataSource::Mq2008Folds;
    setup.data.teacher.model = Some("models/t{fold}.txt".into());
    let e = check_fold_files(&setup, &bundled_folds(), &exists)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--teacher-model") && e.contains("fold 4") && e.contains("models/t4.txt"),
        "{e}"
    );
    setup.data.teacher.model = Some("t{fold}.txt".into());
    let five = ["t1.txt", "t2.txt", "t3.txt", "t4.txt", "t5.txt"];
    let all = |f: &str| five.contains(&f);
    check_fold_files(&setup, &bundled_folds(), &all).unwrap();
    // A name without {fold} is one file every fold reads: checked once, before any fold.
    setup.data.teacher.model = Some("one.txt".into());
    let e = check_fold_files(&setup, &bundled_folds(), &|_| false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--teacher-model one.txt: no such file one.txt"),
        "{e}"
    );
    check_fold_files(&setup, &bundled_folds(), &|f| f == "one.txt").unwrap();
    // The check of a setup's files before any data are read leaves a folds setup's to this
    // one: `{fold}` names no file of its own, and the folds' source is no data of their own.
    use distillrank::pipeline::preparation::check_files_there;
    setup.data.teacher.model = Some("nowhere/t{fold}.txt".into());
    setup.data.reference.scores = Some(",nowhere/vali{fold},nowhere/test{fold}".into());
    check_files_there(&setup.data, true).unwrap();
    setup.data.source = DataSetup::default().source;
    setup.data.folds = Some("nowhere".into());
    check_files_there(&setup.data, true).unwrap();
}

/// Parts in LightGBM's layout, without qid: and each with its PART.query of group sizes, are the
/// same folds as the parts with their qids: the reader numbers each part's groups 1..n, and a
/// fold's training parts number theirs on from the part before, as their text joined with their
/// .query files reads, where two parts' numbers collided and every such folder was refused as a
/// query in two parts.
#[test]
fn parts_with_query_files_are_the_same_folds_as_parts_with_qids() {
    let (with, without) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for part in parts_in(with.path()) {
        let text = std::fs::read_to_string(&part).unwrap();
        let mut sizes: Vec<(String, usize)> = Vec::new();
        let mut lines = String::new();
        for line in text.lines() {
            let mut words: Vec<&str> = line.split(' ').collect();
            let qid = words.remove(1).to_string();
            match sizes.last_mut() {
                Some((q, n)) if *q == qid => *n += 1,
                _ => sizes.push((qid, 1)),
            }
            lines.push_str(&words.join(" "));
            lines.push('\n');
        }
        let name = without.path().join(part.file_name().unwrap());
        std::fs::write(&name, lines).unwrap();
        let query: String = sizes.iter().map(|(_, n)| format!("{n}\n")).collect();
        std::fs::write(format!("{}.query", name.display()), query).unwrap();
    }
    let run = |dir: &Path| -> serde_json::Value {
        let out = dir.join("out");
        let (ok, _, stderr) = compare_small_folds(dir, &out, 1, &[]);
        assert!(ok, "{}: {stderr}", dir.display());
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
    };
    let (a, b) = (run(with.path()), run(without.path()));
    assert_eq!(a["pooled_test_queries"], b["pooled_test_queries"]);
    assert_eq!(a["methods"], b["methods"]);
    // A part without its .query file is told of the file beside it, not of the flags that name
    // a split's .query file, which the folds refuse.
    std::fs::remove_file(without.path().join("S3.txt.query")).unwrap();
    let (ok, _, stderr) = compare_small_folds(without.path(), &without.path().join("o"), 1, &[]);
    assert!(
        !ok && stderr.contains("S3.txt.query") && !stderr.contains("--train-query"),
        "{stderr}"
    );
}

/// A folds directory's files in any format a split's file may have: gzipped text and Parquet
/// parts (a Parquet file, or a folder of part files under the part's `.parquet` name) give the
/// text parts' folds and figures; a part there in two formats is refused naming
/// both, and a missing one names the formats looked for. (They were refused as a missing
/// `Fold1/train.txt`.)
#[test]
fn a_folds_directory_of_gzipped_or_parquet_parts_runs_as_its_text() {
    use std::io::Write as _;
    let (text, gz, pq) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    for part in parts_in(text.path()) {
        let name = part.file_name().unwrap().to_str().unwrap().to_string();
        let mut zipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        zipped.write_all(&std::fs::read(&part).unwrap()).unwrap();
        std::fs::write(
            gz.path().join(format!("{name}.gz")),
            zipped.finish().unwrap(),
        )
        .unwrap();
        let parquet = pq.path().join(name.replace(".txt", ".parquet"));
        let (ok, _, stderr) = distillrank(&[
            "data",
            "convert",
            part.to_str().unwrap(),
            "-o",
            parquet.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(ok, "{stderr}");
    }
    let run = |dir: &Path| -> serde_json::Value {
        let out = dir.join("out");
        let (ok, _, stderr) = compare_small_folds(dir, &out, 1, &[]);
        assert!(ok, "{}: {stderr}", dir.display());
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap()
    };
    let want = run(text.path());
    for dir in [gz.path(), pq.path()] {
        let got = run(dir);
        assert_eq!(got["pooled_test_queries"], want["pooled_test_queries"]);
        assert_eq!(got["methods"], want["methods"], "{}", dir.display());
    }
    // A teacher's scores of each fold, matched to the training parts' text read as one: the
    // gzipped parts unpacked one by one (joined, their streams were one broken stream); Parquet
    // parts, which have no text, refused by name.
    let scores = tempfile::tempdir().unwrap();
    for (k, (train, valid, test)) in ROTATION.iter().enumerate() {
        for (split, parts) in [
            ("train", train.to_vec()),
            ("vali", vec![*valid]),
            ("test", vec![*test]),
        ] {
            let lines: String = parts
                .iter()
                .flat_map(|&p| {
                    part_text(p, 8 + p)
                        .lines()
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .map(|line| format!("{}\n", line.rsplit(':').next().unwrap()))
                .collect();
            std::fs::write(scores.path().join(format!("f{}.{split}", k + 1)), lines).unwrap();
        }
    }
    let s = |split: &str| {
        scores
            .path()
            .join(format!("f{{fold}}.{split}"))
            .display()
            .to_string()
    };
    let teacher = format!("{},{},{}", s("train"), s("vali"), s("test"));
    let taught = |dir: &Path| {
        let out = dir.join("taught");
        let (ok, _, stderr) = compare_small_folds(dir, &out, 1, &["--teacher-scores", &teacher]);
        (ok, stderr, out)
    };
    let (ok, stderr, out) = taught(text.path());
    assert!(ok, "{stderr}");
    let want_taught = std::fs::read_to_string(out.join("results.json")).unwrap();
    let (ok, stderr, out) = taught(gz.path());
    assert!(ok, "{stderr}");
    let got: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let want_taught: serde_json::Value = serde_json::from_str(&want_taught).unwrap();
    assert_eq!(got["methods"], want_taught["methods"]);
    let (ok, stderr, _) = taught(pq.path());
    assert!(
        !ok && stderr.contains("S1.parquet: a Parquet training part")
            && stderr.contains("as one LETOR text"),
        "{stderr}"
    );
    let on_disk = |f: &str| Path::new(f).is_file();
    let folds = folds_of(&pq.path().display().to_string(), &on_disk).unwrap();
    assert_eq!(
        folds[0].train_name(),
        pq.path().join("S1+S2+S3.txt").display().to_string()
    );
    // A part that is a folder of Parquet part files (as Spark writes one) is that part.
    let folder = pq.path().join("S3.parquet");
    let moved = pq.path().join("part-0.parquet");
    std::fs::rename(&folder, &moved).unwrap();
    std::fs::create_dir(&folder).unwrap();
    std::fs::rename(&moved, folder.join("part-0.parquet")).unwrap();
    assert_eq!(run(pq.path())["methods"], want["methods"]);
    // One part in two formats: which one is meant is not for the run to guess. (A missing part
    // is named in the format of the others.)
    std::fs::copy(text.path().join("S3.txt"), pq.path().join("S3.txt")).unwrap();
    let e = folds_of(
        &pq.path().display().to_string(),
        &distillrank::pipeline::folds::fold_file_there,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("S3.txt and ") && e.contains("S3.parquet are both there"),
        "{e}"
    );
    std::fs::remove_file(pq.path().join("S3.txt")).unwrap();
    std::fs::remove_dir_all(pq.path().join("S3.parquet")).unwrap();
    let (ok, _, stderr) = compare_small_folds(pq.path(), &pq.path().join("o"), 1, &[]);
    assert!(
        !ok && stderr.contains("S3.parquet: no such file")
            && stderr.contains(".txt, .txt.gz or .parquet"),
        "{stderr}"
    );
}

/// A query in two of a fold's splits, or in two folds' test files, is refused before any fold
/// trains, naming the fold, the files and the qid, in every door that reads folds (flags,
/// setup.json; Python's `compare` in tests/python): a copied file, a test file appended to a
/// training file, one test file in every fold. LETOR's parts hold distinct queries; accepted, the
/// figures measured trained-on queries and the pooled tests counted queries twice.
#[test]
fn class_a_query_in_two_splits_of_the_folds_is_refused_in_every_door() {
    let fold_layout = |dir: &Path, test_of: &dyn Fn(usize) -> usize, leak: bool| {
        for k in 1..=5 {
            let fold = dir.join(format!("Fold{k}"));
            std::fs::create_dir_all(&fold).unwrap();
            let test = part_text(test_of(k), 9);
            let mut train = part_text(10 + k, 9) + &part_text(20 + k, 9);
            if leak {
                train.push_str(&test);
            }
            std::fs::write(fold.join("train.txt"), train).unwrap();
            std::fs::write(fold.join("vali.txt"), part_text(30 + k, 9)).unwrap();
            std::fs::write(fold.join("test.txt"), test).unwrap();
        }
    };
    type Case<'a> = (&'a str, Box<dyn Fn(&Path) + 'a>, Vec<&'a str>);
    let cases: Vec<Case> = vec![
        (
            "one test file in every fold",
            Box::new(|d: &Path| fold_layout(d, &|_| 1, false)),
            vec![
                "qid 100 is in the test files of fold 1",
                "Fold1/test.txt",
                "Fold2/test.txt",
            ],
        ),
        (
            "each fold's test file appended to its training file",
            Box::new(|d: &Path| fold_layout(d, &|k| k, true)),
            vec![
                "fold 1 (training ",
                "the test split",
                "Fold1/test.txt holds 9 of its 9 queries (qid 100 first)",
                "as the training split",
                "Fold1/train.txt",
                "is a file copied",
            ],
        ),
        (
            "S5.txt a copy of S1.txt",
            Box::new(|d: &Path| {
                let parts = parts_in(d);
                std::fs::copy(&parts[0], &parts[4]).unwrap();
            }),
            vec![
                "qid 100 is in the test files of fold 1 (",
                "S5.txt) and fold 2 (",
                "S1.txt)",
            ],
        ),
        (
            "S5.txt a copy of S1.txt written with a seventh column of zeros",
            Box::new(|d: &Path| {
                let parts = parts_in(d);
                let wider = std::fs::read_to_string(&parts[0])
                    .unwrap()
                    .replace('\n', " 7:0\n");
                std::fs::write(&parts[4], wider).unwrap();
            }),
            vec!["qid 100 is in the test files of fold 1 (", "S1.txt)"],
        ),
    ];
    for (what, make, words) in cases {
        let dir = tempfile::tempdir().unwrap();
        make(dir.path());
        let root = dir.path().to_str().unwrap();
        let setup = dir.path().join("setup.json");
        std::fs::write(
            &setup,
            serde_json::json!({"data": {"folds": root, "tau_target": 1.5}}).to_string(),
        )
        .unwrap();
        let out = dir.path().join("out");
        for door in [
            vec!["--folds", root, "--tau-target", "1.5"],
            vec!["--setup", setup.to_str().unwrap()],
        ] {
            let mut args = vec!["compare", "--out", out.to_str().unwrap(), "--quiet"];
            args.extend(&door);
            let (ok, _, stderr) = distillrank(&args);
            assert!(!ok, "{what} ({door:?}) was accepted");
            for w in &words {
                assert!(
                    stderr.contains(w),
                    "{what} ({door:?}): {w:?} not in {stderr}"
                );
            }
            assert!(
                !stderr.contains("panicked") && !out.join("results.json").exists(),
                "{what}: {stderr}"
            );
            // Said once: as the refusal, not first as preparation's warning too.
            assert!(
                stderr.matches("with the same documents as the").count() <= 1,
                "{what}: {stderr}"
            );
        }
    }
    // Parts without qids (group sizes in PART.query) have no identity to compare: the same
    // documents under the same place are not refused.
    let dir = tempfile::tempdir().unwrap();
    for k in 1..=5 {
        let part = dir.path().join(format!("S{k}.txt"));
        let text: String = part_text(k, 9)
            .lines()
            .map(|l| {
                let mut w: Vec<&str> = l.split(' ').collect();
                w.remove(1);
                w.join(" ") + "\n"
            })
            .collect();
        std::fs::write(
            &part,
            text.replace(&format!(" 4:{}", k as f64 % 5.0), " 4:0"),
        )
        .unwrap();
        std::fs::write(format!("{}.query", part.display()), "12\n".repeat(9)).unwrap();
    }
    let (ok, _, stderr) = compare_small_folds(dir.path(), &dir.path().join("out"), 1, &[]);
    assert!(ok, "{stderr}");
}

/// What a fold's refusal names: the fold and its files, where the library's message would name
/// the joined training parts or no file; a split's flag, which the folds leave no room for, is
/// not offered; a divergence names the model and the fold; an empty folds name is named.
#[test]
fn a_folds_refusal_names_the_fold_and_its_files() {
    let dir = tempfile::tempdir().unwrap();
    parts_in(dir.path());
    let out = dir.path().join("out");
    // No validation query with y = 1 under a tau_target past every grade.
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--folds",
        dir.path().to_str().unwrap(),
        "--privileged",
        "cols:6",
        "--min-group-size",
        "2",
        "--epochs",
        "1",
        "--tau-target",
        "9",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(!ok, "{stderr}");
    assert!(
        stderr.contains("fold 1 (training ")
            && stderr.contains("S4.txt, test ")
            && !stderr.contains("(--valid)"),
        "{stderr}"
    );
    // A learning rate that diverges: which model, on which fold.
    let mq2008 = letor_data::data("mq2008");
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--folds",
        &mq2008,
        "--epochs",
        "2",
        "--widths",
        "8",
        "--lr",
        "10",
        "--attention-heads",
        "2",
        "--methods",
        "pfd",
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        !ok && stderr.contains("diverged")
            && stderr.contains("(training pfd seed 0 teacher 1), fold 1;"),
        "{stderr}"
    );
    let (ok, _, stderr) = distillrank(&["compare", "--folds", "", "--out", out.to_str().unwrap()]);
    assert!(
        !ok && stderr.contains("folds directory's name is empty"),
        "{stderr}"
    );
    let setup = dir.path().join("setup.json");
    std::fs::write(&setup, r#"{"data": {"folds": ""}}"#).unwrap();
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--setup",
        setup.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        !ok && stderr.contains("--setup") && stderr.contains("name is empty"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// The folds read their files: a setup document that also names other data (the bundled
/// Fold1, or the generator with options of its own) is refused, as the CLI refuses the
/// generator's flags beside `--folds`, rather than running on the folds and dropping them.
#[test]
fn a_folds_setup_naming_other_data_too_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    parts_in(dir.path());
    let out = dir.path().join("out");
    let root = dir.path().to_str().unwrap();
    for (source, named) in [
        (serde_json::json!("mq2008"), "bundled mq2008"),
        (
            serde_json::json!({"synthetic": {"options": {"queries": 60}}}),
            "generated data",
        ),
    ] {
        let setup = dir.path().join("setup.json");
        let document = serde_json::json!({"data": {"folds": root, "source": source}});
        std::fs::write(&setup, document.to_string()).unwrap();
        let (ok, _, stderr) = distillrank(&[
            "compare",
            "--setup",
            setup.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(
            !ok && stderr.contains("folds")
                && stderr.contains(named)
                && stderr.contains("name one"),
            "{document}: {stderr}"
        );
        assert!(!out.exists());
    }
    // The CLI's door to the same pair.
    let (ok, _, stderr) = distillrank(&[
        "compare",
        "--folds",
        root,
        "--bundled",
        "mq2008",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        !ok && stderr.contains("--folds") && stderr.contains("bundled mq2008"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// A directory with both layouts whole runs its Fold1..Fold5; where a Fold file is not what LETOR
/// 4.0's rotation of the parts makes it (MQ2008's release has them byte for byte), the folds'
/// run says that the layouts disagree, naming the file and the parts; where they agree, nothing.
#[test]
fn both_layouts_whole_that_disagree_are_told() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().display().to_string();
    let parts: Vec<String> = (1..=5).map(|i| part_text(i, 3)).collect();
    for (i, text) in parts.iter().enumerate() {
        std::fs::write(dir.path().join(format!("S{}.txt", i + 1)), text).unwrap();
    }
    for (k, (train, valid, test)) in ROTATION.iter().enumerate() {
        let fold = dir.path().join(format!("Fold{}", k + 1));
        std::fs::create_dir(&fold).unwrap();
        let joined: String = train.iter().map(|&s| parts[s - 1].as_str()).collect();
        std::fs::write(fold.join("train.txt"), joined).unwrap();
        std::fs::write(fold.join("vali.txt"), &parts[valid - 1]).unwrap();
        std::fs::write(fold.join("test.txt"), &parts[test - 1]).unwrap();
    }
    let mut setup = Setup::default();
    setup.data.folds = Some(root.clone());
    assert_eq!(distillrank::pipeline::folds::layouts_disagree(&root), None);
    assert!(distillrank::pipeline::folds::warnings(&setup).is_empty());
    // Fold2 tests on S1: another file there.
    std::fs::write(dir.path().join("Fold2/test.txt"), part_text(9, 2)).unwrap();
    let warning = distillrank::pipeline::folds::layouts_disagree(&root).expect("a warning");
    assert!(
        warning.contains("Fold2/test.txt: not the part S1.txt")
            && warning.contains("the folds run are its Fold1..Fold5"),
        "{warning}"
    );
    assert!(distillrank::pipeline::folds::warnings(&setup).contains(&warning));
    assert_eq!(
        folds_of(&root, &|f: &str| Path::new(f).is_file()).unwrap()[0]
            .train
            .len(),
        1
    );
}

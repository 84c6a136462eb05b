//! The losses and methods are each one entry (`LOSSES` in crate/model/loss.rs, `METHODS` in
//! crate/ranking/distill.rs): every entry stands at its variant's place, its name is its own, and
//! every door lists it from there: the CLI's help, the page's choices and Python's names (the
//! last two read `choices_json`, checked here; tests/python checks Python's lists against it).

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/cli.rs"]
mod cli_run;

use distillrank::model::loss::{LossKind, LOSSES};
use distillrank::ranking::distill::{Method, Student, TeacherSettings, METHODS};

#[test]
fn every_loss_entry_stands_at_its_variants_place_with_a_name_of_its_own() {
    assert_eq!(LossKind::ALL.len(), LOSSES.len());
    for (i, entry) in LOSSES.iter().enumerate() {
        assert_eq!(
            entry.kind as usize, i,
            "{}: out of its variant's place",
            entry.name
        );
        assert_eq!(entry.kind.entry().name, entry.name);
        assert_eq!(LossKind::parse(entry.name), Some(entry.kind));
        assert_eq!(entry.kind.to_string(), entry.label);
        assert!(
            !entry.hard.is_empty() && !entry.soft.is_empty(),
            "{}: no kernels",
            entry.name
        );
        assert!(!entry.help.is_empty() && !entry.family.is_empty());
        // Through serde by its name, as setup.json spells it.
        let json = serde_json::to_string(&entry.kind).unwrap();
        assert_eq!(json, format!("\"{}\"", entry.name));
        assert_eq!(serde_json::from_str::<LossKind>(&json).unwrap(), entry.kind);
    }
    let mut names: Vec<&str> = LOSSES.iter().map(|e| e.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), LOSSES.len(), "two losses share a name");
    let err = serde_json::from_str::<LossKind>("\"bogus\"")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("unknown variant `bogus`") && err.contains("`ranknet`"),
        "{err}"
    );
}

#[test]
fn every_method_entry_stands_at_its_variants_place_with_a_name_of_its_own() {
    assert_eq!(Method::ALL.len(), METHODS.len());
    let settings = TeacherSettings {
        widths: vec![16, 8],
        attention_heads: 0,
        student_widths: vec![16, 8],
        teachers: 2,
        rd_teacher_factor: 2.0,
        d_z: 4,
    };
    for (i, entry) in METHODS.iter().enumerate() {
        assert_eq!(
            entry.method as usize, i,
            "{}: out of its variant's place",
            entry.name
        );
        assert_eq!(entry.method.entry().name, entry.name);
        assert_eq!(Method::parse(entry.name), Some(entry.method));
        assert!(
            entry.colour.starts_with('#') && entry.colour.len() == 7,
            "{}",
            entry.name
        );
        assert!(!entry.help.is_empty() && !entry.label.is_empty());
        assert_eq!((entry.check)(&settings), Ok(()), "{}", entry.name);
        let teachers = (entry.teachers)(&settings);
        // Ranking Distillation's student learns from exactly one teacher's ranking.
        if entry.student == Student::RankingDistillation {
            assert_eq!(teachers.len(), 1, "{}", entry.name);
        }
        assert!(!entry.tested_against.contains(&entry.method));
        let json = serde_json::to_string(&entry.method).unwrap();
        assert_eq!(serde_json::from_str::<Method>(&json).unwrap(), entry.method);
    }
    let mut names: Vec<&str> = METHODS.iter().map(|e| e.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), METHODS.len(), "two methods share a name");
    // The baseline has no teacher: every gain is measured against the student alone.
    assert!((Method::BASELINE.entry().teachers)(&settings).is_empty());
}

#[test]
fn the_pages_and_pythons_choices_are_the_entries() {
    let choices = distillrank::setup::choices_json();
    let names = |key: &str| -> Vec<String> {
        choices[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names("losses"), LossKind::NAMES.map(String::from));
    assert_eq!(names("methods"), Method::NAMES.map(String::from));
    for (c, entry) in choices["methods"].as_array().unwrap().iter().zip(METHODS) {
        assert_eq!(c["colour"], entry.colour);
        assert_eq!(c["label"], entry.label);
        assert_eq!(c["help"], entry.help);
    }
    for (c, entry) in choices["losses"].as_array().unwrap().iter().zip(LOSSES) {
        assert_eq!(c["label"], entry.label);
        assert_eq!(c["help"], entry.help);
    }
}

#[test]
fn the_clis_help_lists_every_loss_and_method_from_its_entry() {
    let (ok, help, _) = cli_run::distillrank(&["compare", "--help"]);
    assert!(ok);
    for entry in LOSSES {
        assert!(
            help.contains(entry.name) && help.contains(entry.help),
            "--loss lacks {}: {help}",
            entry.name
        );
    }
    for entry in METHODS {
        assert!(
            help.contains(&format!("{} ({})", entry.name, entry.help)),
            "--methods lacks {}: {help}",
            entry.name
        );
    }
}

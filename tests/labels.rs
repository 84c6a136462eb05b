//! The training label as a setting (`labels`): the Gumbel labelling of the grade (the PFD
//! paper's protocol), or the grades themselves, as LightGBM, allRank and TF-Ranking train.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::engines::prepare;
use distillrank::engine::Engine;
use distillrank::model::LossKind;
use distillrank::ranking::distill::Method;
use distillrank::setup::{DataSource, Labels, Setup};

/// The bundled MQ2008 (grades 0..2) with y = the grades, a small model and a listwise loss.
fn graded(loss: LossKind) -> Setup {
    let mut setup = common::engines::small_setup(DataSource::Mq2008);
    setup.data.labels = Labels::Grades;
    setup.loss = loss;
    setup
}

#[test]
fn labels_grades_are_the_grades_on_every_split_whatever_tau_target() {
    let mut setup = graded(LossKind::LambdaRank);
    let data = prepare(&setup).unwrap();
    let p = &data.prepared;
    for set in [&p.train, &p.valid, p.test.as_ref().unwrap()] {
        let grades: Vec<f32> = set.grades.iter().map(|&g| f32::from(g)).collect();
        assert_eq!(set.labels, grades);
        assert!(set.labels.contains(&2.0), "MQ2008's grade 2 is a label");
    }
    // The labelling's threshold and temperature play no part.
    setup.data.tau_target = Some(0.3);
    setup.data.t = Some(50.0);
    assert_eq!(
        prepare(&setup).unwrap().prepared.train.labels,
        p.train.labels
    );
    // The paper's labelling of the same data is binary.
    setup.data.labels = Labels::Gumbel;
    setup.data.tau_target = Some(1.5);
    let binary = prepare(&setup).unwrap();
    assert!(binary
        .prepared
        .train
        .labels
        .iter()
        .all(|&y| y == 0.0 || y == 1.0));
}

#[test]
fn settings_that_cannot_learn_grades_are_refused_by_name() {
    let refused = |setup: &Setup, words: &[&str]| {
        let message = setup
            .compare_config(Engine::Cpu)
            .and_then(|_| prepare(setup).map(|_| ()))
            .unwrap_err()
            .to_string();
        for w in words {
            assert!(message.contains(w), "{message:?} lacks {w:?}");
        }
    };
    refused(
        &graded(LossKind::RankBce),
        &[
            "--loss rankbce",
            "--training-labels grades",
            &LossKind::graded_names(),
        ],
    );
    // Simulated logs whose y is the conversion: the label is said twice.
    let mut logs = graded(LossKind::RankNet);
    logs.data.privileged = Some("logs".into());
    refused(&logs, &["--training-labels grades", "--log-labels"]);
    // A setup file says it too, and the table refuses a value it does not know.
    let json = serde_json::json!({"data": {"labels": "clicks"}}).to_string();
    let message = Setup::from_json(&json).unwrap_err().to_string();
    assert!(message.contains("labels"), "{message}");
    // A sweep of the threshold the grades do not use would train one model at every value.
    let message = distillrank::pipeline::sweep::SweepParam::TauTarget
        .check(&graded(LossKind::RankNet), &[2.0, 3.0])
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("tau-target") && message.contains("--training-labels grades"),
        "{message}"
    );
}

/// With y = the grades, NDCG on y is the graded NDCG (gains 2^y - 1 on both), figure for figure.
#[test]
fn ndcg_on_graded_labels_is_the_graded_ndcg() {
    for loss in [LossKind::RankNet, LossKind::LambdaRank, LossKind::Softmax] {
        let setup = graded(loss);
        let (_, comparison) = common::engines::compare_on_cpu(&setup);
        for method in &comparison.methods {
            for run in &method.runs {
                let on_y: Vec<(usize, Option<f64>)> = run.student.test.ndcg.clone();
                assert_eq!(
                    on_y, run.student.test_graded_ndcg,
                    "{loss} {}",
                    method.method
                );
                assert_eq!(run.student.per_query, run.student.per_query_graded);
            }
        }
    }
}

#[test]
fn softmax_targets_are_the_gains_of_the_grades() {
    use distillrank::cpu::loss::softmax_targets;
    let q = softmax_targets(&[0.0f64, 1.0, 2.0, 0.0, 1.0], &[], &[0, 3, 5]);
    // Gains 0, 1, 3 over 4; binary labels are their own gains.
    assert_eq!(q, vec![0.0, 0.25, 0.75, 0.0, 1.0]);
}

/// Graded labels train the same on the WGSL engine as on the CPU engine, every listwise and
/// pairwise loss, a teacher's loss included.
#[test]
fn graded_labels_train_the_same_on_both_engines() {
    for loss in [LossKind::RankNet, LossKind::LambdaRank, LossKind::Softmax] {
        let mut setup = graded(loss);
        setup.epochs = 1;
        setup.batch_docs = 512;
        let data = prepare(&setup).unwrap();
        let Some((cpu, on_gpu)) = common::engines::fit_on_both(&data, &setup, Method::Pfd) else {
            return;
        };
        common::engines::assert_same_data_loss(&cpu, &on_gpu, &loss.to_string());
    }
}

/// Prepared splits kept on disk (and the page's shared layout, which is the same) hold the grades
/// as labels, and read them back.
#[test]
fn graded_labels_survive_the_prepared_cache() {
    let dir = tempfile::tempdir().unwrap();
    let mut setup = graded(LossKind::RankNet);
    setup.data.source = common::engines::mq2008_files_in(dir.path());
    setup.data.prepared_cache = true;
    let written = prepare(&setup).unwrap();
    let read = prepare(&setup).unwrap();
    for (a, b) in [
        (&written.prepared.train, &read.prepared.train),
        (&written.prepared.valid, &read.prepared.valid),
    ] {
        assert_eq!(a.labels, b.labels);
        assert!(b.labels.contains(&2.0));
    }
}

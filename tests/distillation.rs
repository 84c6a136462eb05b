//! The distillation methods and the `compare` experiment.

#![cfg(not(target_arch = "wasm32"))]
// The references here use the platform's exp and ln, independently of the library's crate::math.
#![allow(clippy::disallowed_methods)]

use distillrank::data::prepare::{prepare, PrepareOptions, Prepared, PrivilegedSplit, RankingSet};
use distillrank::data::synth::{generate, SynthOptions};
use distillrank::native::ranking::compare;
use distillrank::ranking::distill::{
    privileged_subsets, Method, RdConfig, RdTargets, RdWeighting, Student,
};
use distillrank::ranking::experiment::CompareConfig;
use distillrank::ranking::train::TrainConfig;

fn small() -> Prepared {
    let s = generate(&SynthOptions {
        queries: 240,
        ..Default::default()
    })
    .unwrap();
    let train =
        distillrank::data::prepare::select_groups(&s.dataset, &(0..160).collect::<Vec<_>>());
    let test =
        distillrank::data::prepare::select_groups(&s.dataset, &(160..240).collect::<Vec<_>>());
    let options = PrepareOptions {
        tau_target: 3.5,
        privileged: PrivilegedSplit::Columns(s.privileged_columns),
        ..Default::default()
    };
    prepare(&train, None, Some(&test), &options).unwrap()
}

fn tiny_config(methods: Vec<Method>) -> CompareConfig {
    CompareConfig {
        methods,
        seeds: 2,
        train: TrainConfig {
            widths: vec![16, 8],
            epochs: 3,
            patience: Some(2),
            ..Default::default()
        },
        ..Default::default()
    }
}

#[test]
fn compare_runs_every_method_and_students_see_only_x() {
    let p = small();
    // The methods that learn from clicks need simulated logs: tests/clicks.rs runs them.
    let distilling: Vec<Method> = Method::ALL
        .into_iter()
        .filter(|m| !matches!(m.entry().student, Student::Labels(_)))
        .collect();
    let config = tiny_config(distilling.clone());
    let c = compare(&p, &config, &mut |_, _| {}).unwrap();
    assert_eq!(c.methods.len(), distilling.len());
    // Same widths: every student has the parameters of an MLP on x alone.
    let x_only = distillrank::model::mlp::Mlp::<f32>::new(p.train.d_x, &[16, 8], 0).n_parameters();
    for r in &c.methods {
        assert_eq!(r.runs.len(), 2, "{}", r.method);
        for run in &r.runs {
            assert_eq!(
                run.student.parameters, x_only,
                "{}: the student never sees z",
                r.method
            );
            let ndcg8 = run.student.test.ndcg_at(8).unwrap();
            assert!(ndcg8.is_finite() && ndcg8 > 0.0);
            assert!(run.student.history.iter().all(|h| h.test_ndcg.is_some()));
            // A teacher's test split is scored once, after training, not at every epoch.
            for teacher in &run.teachers {
                assert!(teacher.history.iter().all(|h| h.test_ndcg.is_none()));
                assert!(teacher.test.ndcg_at(8).is_some_and(f64::is_finite));
            }
        }
        // Each method's teachers, as its entry makes them.
        let teachers = r.runs[0].teachers.len();
        let want = config.teachers_of(r.method, p.train.d_z).len();
        assert_eq!(teachers, want, "{}", r.method);
    }
    // No distillation has no teacher, multi-teacher PFD two here; the others one.
    assert_eq!(
        config
            .teachers_of(Method::NoDistillation, p.train.d_z)
            .len(),
        0
    );
    assert_eq!(
        config
            .teachers_of(Method::MultiTeacherPfd, p.train.d_z)
            .len(),
        2
    );
    // Teachers' inputs: GenD sees z only, PFD x and z, RD a larger x-only model.
    let teacher_params = |m: Method| c.get(m).unwrap().runs[0].teachers[0].parameters;
    let mlp = |n_in: usize, w: &[usize]| {
        distillrank::model::mlp::Mlp::<f32>::new(n_in, w, 0).n_parameters()
    };
    assert_eq!(teacher_params(Method::GenD), mlp(p.train.d_z, &[16, 8]));
    assert_eq!(
        teacher_params(Method::Pfd),
        mlp(p.train.d_x + p.train.d_z, &[16, 8])
    );
    assert!(teacher_params(Method::RankingDistillation) > x_only);
    // Distilled students log both loss terms.
    let pfd = &c.get(Method::Pfd).unwrap().runs[0].student.history;
    assert!(pfd
        .iter()
        .all(|h| h.teacher_loss > 0.0 && h.data_loss > 0.0));
    let rd = &c.get(Method::RankingDistillation).unwrap().runs[0]
        .student
        .history;
    assert!(rd.iter().all(|h| h.rd_loss > 0.0 && h.teacher_loss == 0.0));
}

#[test]
fn compare_is_reproducible() {
    let p = small();
    let config = tiny_config(vec![Method::NoDistillation, Method::Pfd]);
    let a = compare(&p, &config, &mut |_, _| {}).unwrap();
    let b = compare(&p, &config, &mut |_, _| {}).unwrap();
    for (x, y) in a.methods.iter().zip(&b.methods) {
        let v = |r: &distillrank::ranking::experiment::MethodRuns| {
            r.runs
                .iter()
                .map(|s| s.student.test.ndcg_at(8))
                .collect::<Vec<_>>()
        };
        assert_eq!(v(x), v(y));
    }
}

#[test]
fn bad_comparisons_fail_before_training() {
    let p = small();
    let mut alpha = tiny_config(vec![Method::Pfd]);
    alpha.train.alpha = 1.5;
    let mut teachers = tiny_config(vec![Method::MultiTeacherPfd]);
    teachers.teachers = 50;
    let mut no_test = p.clone();
    no_test.test = None;
    for (prepared, config, fragment) in [
        (&p, alpha, "alpha"),
        (&p, teachers, "multi-teacher"),
        (&no_test, tiny_config(vec![Method::Pfd]), "test split"),
        (
            &p,
            CompareConfig {
                methods: vec![],
                ..tiny_config(vec![])
            },
            "at least one method",
        ),
        (
            &p,
            tiny_config(vec![Method::Pfd, Method::NoDistillation, Method::Pfd]),
            "method pfd is listed twice",
        ),
    ] {
        let mut started = false;
        let Err(err) = compare(prepared, &config, &mut |_, _| started = true) else {
            panic!("{fragment}: an error expected");
        };
        assert!(err.to_string().contains(fragment), "{err}");
        assert!(!started, "no training before the error");
    }
}

/// One group of 6 documents: y = (1, 0, 0, 0, 0, 0); a negative group of 3.
fn rd_set() -> RankingSet {
    RankingSet {
        regular: vec![0.0; 9].into(),
        d_x: 1,
        privileged: Default::default(),
        d_z: 0,
        grades: vec![0; 9],
        labels: vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        group_offsets: vec![0, 6, 9],
        positive_group: vec![true, false],
        qids: vec![1, 2],
    }
}

#[test]
fn ranking_distillation_picks_the_teachers_top_unlabeled_documents() {
    let set = rd_set();
    let teacher = [9.0, 1.0, 5.0, 3.0, 4.0, 2.0, 0.5, 0.7, 0.1];
    let targets = RdTargets::new(
        &set,
        &teacher,
        RdConfig {
            k: 3,
            ..Default::default()
        },
    );
    // Document 0 is labeled (y = 1): never a candidate. Then by teacher score: 2, 4, 3.
    assert_eq!(targets.candidates, vec![vec![2, 4, 3], vec![1, 0, 2]]);
}

#[test]
fn ranking_distillation_weights() {
    let set = rd_set();
    let teacher = [9.0, 1.0, 5.0, 3.0, 4.0, 2.0, 0.5, 0.7, 0.1];
    let offsets = [0, 6, 9];
    let weights = |weighting, logits: &[f32], epoch| {
        let t = RdTargets::new(
            &set,
            &teacher,
            RdConfig {
                k: 3,
                weighting,
                lambda: 1.0,
                mu: 0.5,
                hybrid_epochs: 1,
                ..Default::default()
            },
        );
        t.batch_weights(&[0, 1], &offsets, logits, epoch)
    };
    let logits = [0.0f32; 9];
    // Position importance: exp(-r) normalised, decreasing with r.
    let w = weights(RdWeighting::Position, &logits, 1);
    let z: f64 = (1..=3).map(|r| (-(r as f64)).exp()).sum();
    for (r, &(doc, weight)) in w[0].iter().enumerate() {
        assert_eq!(doc, [2, 4, 3][r]);
        assert!((weight as f64 - (-(r as f64 + 1.0)).exp() / z).abs() < 1e-6);
    }
    // Equal weights.
    assert!(weights(RdWeighting::Equal, &logits, 1)[0]
        .iter()
        .all(|&(_, w)| (w - 1.0 / 3.0).abs() < 1e-6));
    // Discrepancy: a candidate the student already ranks at or above its teacher rank gets 0.
    let student = [0.0f32, 0.0, 10.0, 0.0, -5.0, 0.0, 0.0, 0.0, 0.0]; // doc 2 first, doc 4 last
    let w = weights(RdWeighting::Discrepancy, &student, 1);
    let weight_of = |doc: usize| w[0].iter().find(|p| p.0 == doc).map(|p| p.1).unwrap();
    assert_eq!(weight_of(2), 0.0);
    assert!(
        weight_of(4) > weight_of(3),
        "doc 4 is ranked far below its teacher rank"
    );
    assert!((w[0].iter().map(|p| p.1).sum::<f32>() - 1.0).abs() < 1e-6);
    // Hybrid: position weights during the first epochs, then position x discrepancy.
    assert_eq!(
        weights(RdWeighting::Hybrid, &student, 1),
        weights(RdWeighting::Position, &student, 1)
    );
    let late = weights(RdWeighting::Hybrid, &student, 2);
    assert_eq!(late[0].iter().find(|p| p.0 == 2).unwrap().1, 0.0);
}

#[test]
fn privileged_subsets_cover_z_once() {
    let subsets = privileged_subsets(5, 2);
    assert_eq!(subsets, vec![vec![0, 2, 4], vec![1, 3]]);
}

/// Ranking Distillation's teacher at `--rd-teacher-factor 1` (and no `--teacher-widths`) is
/// self-distillation's: x only, the student's widths, the same settings and seed. A comparison of
/// both trains it once per seed, in one job, says so, and gives each method what it gives alone.
/// Any difference (a larger RD teacher, other teacher widths) keeps two teachers.
#[test]
fn a_teacher_two_methods_share_is_trained_once_and_each_gets_what_it_gets_alone() {
    use distillrank::ranking::experiment::{Comparison, Job};
    let p = small();
    let d_z = p.train.d_z;
    let mut both = tiny_config(vec![
        Method::NoDistillation,
        Method::SelfDistillation,
        Method::RankingDistillation,
    ]);
    both.rd_teacher_factor = 1.0;
    let job = |seed, methods: &[Method], models| Job {
        seed,
        methods: methods.to_vec(),
        models,
    };
    let (sd, rd) = (Method::SelfDistillation, Method::RankingDistillation);
    assert_eq!(
        both.jobs_on(d_z),
        [
            job(0, &[Method::NoDistillation], 1),
            job(0, &[sd, rd], 3),
            job(1, &[Method::NoDistillation], 1),
            job(1, &[sd, rd], 3),
        ]
    );
    let said = both.shared_teachers(d_z);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].starts_with("ranking-distillation's teacher is self-distillation's"));

    // Trained once: no event of a Ranking Distillation teacher, for any number of jobs.
    let run = |config: &CompareConfig, jobs| {
        let mut teachers = std::collections::BTreeSet::new();
        let config = CompareConfig {
            jobs: Some(jobs),
            ..config.clone()
        };
        let comparison = compare(&p, &config, &mut |model, _| {
            if model.teacher.is_some() {
                teachers.insert(model.to_string());
            }
        })
        .unwrap();
        (comparison, teachers)
    };
    let figures = |c: &Comparison, method: Method| -> Vec<String> {
        let runs = &c.methods.iter().find(|m| m.method == method).unwrap().runs;
        runs.iter()
            .map(|r| {
                let teachers: Vec<_> = r.teachers.iter().map(|t| t.best_valid_ndcg).collect();
                format!(
                    "{:?} {} {:?}",
                    r.student.per_query, r.student.best_valid_ndcg, teachers
                )
            })
            .collect()
    };
    let (shared, teachers) = run(&both, 1);
    assert_eq!(
        teachers.into_iter().collect::<Vec<_>>(),
        [
            "self-distillation seed 0 teacher 1",
            "self-distillation seed 1 teacher 1"
        ]
    );
    let (parallel, _) = run(&both, 2);
    for method in [sd, rd] {
        let (alone, _) = run(&tiny_config_with(&both, method), 1);
        assert_eq!(
            figures(&shared, method),
            figures(&alone, method),
            "{method}"
        );
        assert_eq!(
            figures(&parallel, method),
            figures(&alone, method),
            "{method}"
        );
        // The shared teacher's run is each method's teacher run.
        assert_eq!(figures(&shared, method).len(), 2);
    }
    assert_eq!(shared.students.len(), 3);

    // Any difference in the teachers: two of them, each method in a job of its own.
    let mut larger = both.clone();
    larger.rd_teacher_factor = 2.0;
    let mut other_widths = both.clone();
    other_widths.teacher_widths = Some(vec![8]);
    for config in [larger, other_widths] {
        assert!(config.jobs_on(d_z).iter().all(|j| j.methods.len() == 1));
        assert!(config.shared_teachers(d_z).is_empty());
        let (_, teachers) = run(&config, 1);
        assert_eq!(teachers.len(), 4, "{teachers:?}");
    }
    // Teacher widths equal to Ranking Distillation's: one model again.
    let mut same_widths = both.clone();
    same_widths.rd_teacher_factor = 4.0;
    same_widths.teacher_widths = Some(vec![32, 16]);
    assert_eq!(same_widths.jobs_on(d_z)[1].methods, [sd, rd]);
}

/// `config` with `method` alone.
fn tiny_config_with(config: &CompareConfig, method: Method) -> CompareConfig {
    CompareConfig {
        methods: vec![method],
        ..config.clone()
    }
}

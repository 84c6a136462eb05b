//! Training on the CPU engine: validation NDCG@8 rises, divergence is caught, models round-trip.

#![cfg(not(target_arch = "wasm32"))]

#[path = "common/letor_data.rs"]
mod letor_data;
use std::path::Path;

use distillrank::cpu::mlp::score_inputs;
use distillrank::data::inputs::Inputs;
use distillrank::data::letor::{read_letor_file, ReadOptions};
use distillrank::data::prepare::{prepare, FeatureView, PrepareOptions, Prepared, PrivilegedSplit};
use distillrank::data::synth::{generate, SynthOptions};
use distillrank::error::Error;
use distillrank::model::adam::AdamConfig;
use distillrank::model::LossKind;
use distillrank::model_io;
use distillrank::native::ranking::train;
use distillrank::ranking::train::{Event, TrainConfig};

fn synthetic() -> Prepared {
    let s = generate(&SynthOptions::default()).unwrap();
    prepare(
        &s.dataset,
        None,
        None,
        &PrepareOptions {
            tau_target: 3.5,
            privileged: PrivilegedSplit::Columns(s.privileged_columns),
            ..Default::default()
        },
    )
    .unwrap()
}

fn mq2008() -> Prepared {
    let dir = Path::new(&letor_data::data("mq2008/Fold1")).to_path_buf();
    let read = |f: &str| read_letor_file(&dir.join(f), None, &ReadOptions::default()).unwrap();
    let options = PrepareOptions {
        tau_target: 2.8,
        privileged: PrivilegedSplit::TopCorrelation(10),
        ..Default::default()
    };
    prepare(&read("train.txt"), Some(&read("vali.txt")), None, &options).unwrap()
}

fn quiet(_: Event) {}

#[test]
fn ranknet_raises_validation_ndcg_on_the_synthetic_default() {
    let p = synthetic();
    // At the spec's lr 1e-3 the default MLP fits this set within two epochs; 1e-4 shows the climb.
    let config = TrainConfig {
        epochs: 6,
        adam: AdamConfig {
            lr: 1e-4,
            ..Default::default()
        },
        ..Default::default()
    };
    let trained = train(&p.train, &p.valid, &config, None, &mut quiet).unwrap();
    let first = trained.history[0].valid_ndcg;
    assert!(
        trained.best_valid_ndcg > first + 0.05,
        "valid NDCG@8: {:?}",
        trained
            .history
            .iter()
            .map(|h| h.valid_ndcg)
            .collect::<Vec<_>>()
    );
    let losses: Vec<f64> = trained.history.iter().map(|h| h.data_loss).collect();
    assert!(losses.last() < losses.first(), "{losses:?}");
}

#[test]
fn ranknet_raises_validation_ndcg_on_mq2008_fold1() {
    // Binary labels with tau_target 2.8 leave few positive groups (about 17 of 185 after
    // filtering), so use small batches and a small learning rate, and check three seeds.
    let p = mq2008();
    for seed in 0..3 {
        let config = TrainConfig {
            epochs: 10,
            batch_docs: 64,
            adam: AdamConfig {
                lr: 1e-4,
                ..Default::default()
            },
            seed,
            ..Default::default()
        };
        let trained = train(&p.train, &p.valid, &config, None, &mut quiet).unwrap();
        let curve: Vec<f64> = trained.history.iter().map(|h| h.valid_ndcg).collect();
        assert!(
            trained.best_valid_ndcg > curve[0] + 0.05,
            "seed {seed}: valid NDCG@8 {curve:?}"
        );
        assert!(trained.best_epoch > 1);
    }
}

#[test]
fn rankbce_and_the_teacher_loss_train_too() {
    let p = synthetic();
    // A teacher that sees x and z, then a student that learns from it (PFD's Eq. 1).
    let teacher_config = TrainConfig {
        view: FeatureView::Both,
        epochs: 3,
        loss: LossKind::RankBce,
        ..Default::default()
    };
    let teacher = train(&p.train, &p.valid, &teacher_config, None, &mut quiet).unwrap();
    let teacher_scores = score_inputs(
        &teacher.model.members[0],
        Inputs::of(&p.train, FeatureView::Both),
    );
    for loss in [LossKind::RankBce, LossKind::RankNet] {
        let config = TrainConfig {
            epochs: 3,
            loss,
            alpha: 0.5,
            ..Default::default()
        };
        let mut steps = 0;
        let student = train(
            &p.train,
            &p.valid,
            &config,
            Some(&teacher_scores),
            &mut |e| {
                if let Event::Step { .. } = e {
                    steps += 1
                }
            },
        )
        .unwrap();
        assert!(steps > 0);
        assert!(
            student
                .history
                .iter()
                .all(|h| h.teacher_loss > 0.0 && h.data_loss > 0.0),
            "{loss}: both terms are logged"
        );
        assert!(student.best_valid_ndcg > 0.0);
    }
}

#[test]
fn divergence_stops_training_with_an_error() {
    let p = synthetic();
    let config = TrainConfig {
        epochs: 3,
        adam: AdamConfig {
            lr: 1e30,
            ..Default::default()
        },
        ..Default::default()
    };
    match train(&p.train, &p.valid, &config, None, &mut quiet) {
        Err(e @ Error::Diverged { .. }) => assert!(e.to_string().contains("diverged"), "{e}"),
        other => panic!(
            "expected divergence, got {:?}",
            other.map(|t| t.best_valid_ndcg)
        ),
    }
}

#[test]
fn bad_training_configurations_are_rejected() {
    let p = synthetic();
    for (config, fragment) in [
        (
            TrainConfig {
                alpha: 1.0,
                ..Default::default()
            },
            "alpha",
        ),
        (
            TrainConfig {
                epochs: 0,
                ..Default::default()
            },
            "epochs",
        ),
        (
            TrainConfig {
                adam: AdamConfig {
                    lr: -1.0,
                    ..Default::default()
                },
                ..Default::default()
            },
            "learning rate",
        ),
        (
            TrainConfig {
                widths: vec![8, 0],
                ..Default::default()
            },
            "widths",
        ),
    ] {
        let err = train(&p.train, &p.valid, &config, None, &mut quiet)
            .err()
            .expect("an error");
        assert!(err.to_string().contains(fragment), "{err}");
    }
}

/// `model`, trained on `p` by `config`, saved as `name` in a new folder: the folder and the
/// model's config.
fn save_in_a_new_folder(
    p: &Prepared,
    model: &distillrank::model::Ensemble,
    config: &TrainConfig,
    name: &str,
) -> (tempfile::TempDir, model_io::ModelConfig) {
    let dir = tempfile::tempdir().unwrap();
    let model_config = model_io::ModelConfig::new(
        model,
        config.loss,
        config.view,
        p.regular_columns.clone(),
        30,
    );
    model_io::save(&dir.path().join(name), model, &model_config).unwrap();
    (dir, model_config)
}

#[test]
fn saved_models_score_the_same_after_loading() {
    let p = synthetic();
    let config = TrainConfig {
        epochs: 1,
        widths: vec![16, 8],
        ..Default::default()
    };
    let trained = train(&p.train, &p.valid, &config, None, &mut quiet).unwrap();
    let (dir, model_config) = save_in_a_new_folder(&p, &trained.model, &config, "student");
    let (loaded, loaded_config) = model_io::load(&dir.path().join("student.json"), false).unwrap();
    assert_eq!(loaded, trained.model);
    assert_eq!(loaded_config, model_config);
    // A config from the future is refused.
    let json = dir.path().join("student.json");
    let text = std::fs::read_to_string(&json)
        .unwrap()
        .replace("\"format_version\": 1", "\"format_version\": 7");
    std::fs::write(&json, text).unwrap();
    let err = model_io::load(&dir.path().join("student"), false).unwrap_err();
    assert!(err.to_string().contains("format version 7"), "{err}");
}

/// A model with layer normalisation trains (its gains and shifts move from 1 and 0), raises
/// validation NDCG@8 as the plain model does, and is saved and read back whole: the norm in its
/// config, the gains and shifts as tensors, the same scores.
#[test]
fn a_layer_normalised_model_trains_and_reads_back_whole() {
    use distillrank::model::Norm;
    let p = synthetic();
    let config = TrainConfig {
        epochs: 3,
        widths: vec![16, 8],
        norm: Norm::Layer,
        ..Default::default()
    };
    let trained = train(&p.train, &p.valid, &config, None, &mut quiet).unwrap();
    let model = &trained.model.members[0];
    assert_eq!(model.norm(), Norm::Layer);
    assert_eq!(model.norms.len(), 2);
    assert!(model.norms[0].gain.iter().any(|&g| g != 1.0));
    assert!(model.norms[1].shift.iter().any(|&s| s != 0.0));
    let first = trained.history[0].valid_ndcg;
    assert!(
        trained.best_valid_ndcg > first || trained.best_epoch == 1,
        "{:?}",
        trained.history
    );
    let plain = train(
        &p.train,
        &p.valid,
        &TrainConfig {
            norm: Norm::None,
            ..config.clone()
        },
        None,
        &mut quiet,
    )
    .unwrap();
    assert!(
        trained.best_valid_ndcg > plain.best_valid_ndcg - 0.03,
        "layer norm {} against none {}",
        trained.best_valid_ndcg,
        plain.best_valid_ndcg
    );
    let (dir, model_config) = save_in_a_new_folder(&p, &trained.model, &config, "normed");
    assert_eq!(model_config.norm, Norm::Layer);
    let text = std::fs::read_to_string(dir.path().join("normed.json")).unwrap();
    assert!(text.contains("\"norm\": \"layer\""), "{text}");
    let (loaded, loaded_config) = model_io::load(&dir.path().join("normed"), false).unwrap();
    assert_eq!(loaded, trained.model);
    assert_eq!(loaded_config, model_config);
    // A config that says no norm beside weights that hold one is refused, naming the count.
    std::fs::write(
        dir.path().join("normed.json"),
        text.replace("\"norm\": \"layer\",", ""),
    )
    .unwrap();
    let err = model_io::load(&dir.path().join("normed"), false).unwrap_err();
    assert!(err.to_string().contains("norm"), "{err}");
}

/// A global objective as the data loss: log-loss on the documents of S_label is exactly RankBCE's
/// data loss, so training with it follows RankBCE step for step (with and without a teacher);
/// AUC-PR and recall at precision train a PFD-style student; the GPU engine refuses them clearly.
#[test]
fn global_objectives_serve_as_the_data_loss() {
    use distillrank::model::objective::Objective;
    let p = synthetic();
    let teacher = train(
        &p.train,
        &p.valid,
        &TrainConfig {
            view: FeatureView::Both,
            epochs: 2,
            widths: vec![32, 16],
            ..Default::default()
        },
        None,
        &mut quiet,
    )
    .unwrap();
    let teacher_scores = score_inputs(
        &teacher.model.members[0],
        Inputs::of(&p.train, FeatureView::Both),
    );
    let base = TrainConfig {
        epochs: 2,
        widths: vec![32, 16],
        loss: LossKind::RankBce,
        ..Default::default()
    };
    for guide in [None, Some(teacher_scores.as_slice())] {
        let plain = train(&p.train, &p.valid, &base, guide, &mut quiet).unwrap();
        let with_objective = TrainConfig {
            objective: Some(Objective::LogLoss),
            ..base.clone()
        };
        let global = train(&p.train, &p.valid, &with_objective, guide, &mut quiet).unwrap();
        for (a, b) in plain.history.iter().zip(&global.history) {
            let what = format!("teacher: {}, epoch {}", guide.is_some(), a.epoch);
            assert!(
                (a.data_loss - b.data_loss).abs() < 1e-5,
                "{what}: data loss {} vs {}",
                a.data_loss,
                b.data_loss
            );
            assert!(
                (a.teacher_loss - b.teacher_loss).abs() < 1e-5,
                "{what}: teacher loss"
            );
            assert!(
                (a.valid_ndcg - b.valid_ndcg).abs() < 1e-4,
                "{what}: validation NDCG"
            );
        }
    }
    for objective in ["auc-pr", "recall-at-precision:0.8", "roc-auc", "f-beta:1"] {
        let config = TrainConfig {
            objective: Some(Objective::parse(objective).unwrap()),
            loss: LossKind::RankNet,
            ..base.clone()
        };
        let student = train(
            &p.train,
            &p.valid,
            &config,
            Some(&teacher_scores),
            &mut quiet,
        )
        .unwrap();
        assert!(
            student
                .history
                .iter()
                .all(|h| h.data_loss.is_finite() && h.teacher_loss > 0.0),
            "{objective}: both terms are logged"
        );
        assert!(
            student.best_valid_ndcg > 0.2,
            "{objective}: NDCG@8 {}",
            student.best_valid_ndcg
        );
    }
}

/// After each epoch only the documents of groups with both a y = 1 and a y = 0 are scored (the
/// others cannot move NDCG on y): the scores of chosen rows are those rows of the whole split's
/// (to rounding: the products differ in shape), and the NDCG of the whole split's scores with
/// the other groups' set to 0 is exactly the NDCG of all of them.
#[test]
fn scoring_the_ranked_groups_alone_gives_the_same_ndcg() {
    use distillrank::metrics::{mean_ndcg, IdcgZero};
    use distillrank::model::mlp::Mlp;
    let p = mq2008();
    let set = &p.valid;
    let model = Mlp::<f32>::new(set.d_x + set.d_z, &[16, 8], 3);
    let inputs = Inputs::of(set, FeatureView::Both);
    let all = score_inputs(&model, inputs);
    let mixed: Vec<usize> = (0..set.n_groups())
        .map(|g| set.group(g))
        .filter(|docs| {
            let y = &set.labels[docs.clone()];
            y.contains(&1.0) && y.contains(&0.0)
        })
        .flatten()
        .collect();
    assert!(!mixed.is_empty() && mixed.len() < set.n_docs());
    let chosen = score_inputs(&model, inputs.at_rows(&mixed));
    let mut partial = vec![0f32; set.n_docs()];
    for (&doc, &score) in mixed.iter().zip(&chosen) {
        assert!((score - all[doc]).abs() <= 1e-5 * all[doc].abs().max(1.0));
        partial[doc] = all[doc];
    }
    for convention in [IdcgZero::Exclude, IdcgZero::Zero, IdcgZero::One] {
        for k in [1, 8, 10] {
            assert_eq!(
                mean_ndcg(k, &partial, &set.labels, &set.group_offsets, convention),
                mean_ndcg(k, &all, &set.labels, &set.group_offsets, convention)
            );
        }
    }
}

/// A throughput measurement's budget: at least its steps, and at least its minimum time.
#[test]
fn a_measurement_runs_its_steps_and_its_minimum_time() {
    use distillrank::bench::{Budget, TrainShape};
    use distillrank::native::bench_cpu as cpu;
    let shape = TrainShape {
        features: 6,
        groups: 2,
        docs_per_group: 4,
        widths: vec![4],
        attention_heads: 0,
    };
    let exact = cpu(&shape, Budget::steps(3, 1));
    assert_eq!(exact.steps, 3);
    let timed = cpu(
        &shape,
        Budget {
            warmup: 1,
            steps: 2,
            min_seconds: 0.05,
        },
    );
    assert!(timed.steps >= 2 && timed.seconds >= 0.05, "{timed:?}");
    assert_eq!(timed.batch_docs, 8);
    assert!(timed.final_loss.is_finite() && timed.docs_per_s > 0.0);
}

/// Under every input transform, a saved student reads raw rows into exactly the inputs it trained
/// on: `model_io::model_inputs` (predict, eval, Python, the page) applies the signed log1p and
/// the maps fitted on the training split, bit for bit as preparation did to the test split, so
/// its scores are the comparison's. A transform fitted on MQ2008's constant columns gives 0 there.
#[test]
fn saved_students_read_raw_rows_as_preparation_did_under_every_transform() {
    use distillrank::data::transform::Transform;
    use distillrank::data::Dataset;
    let dir = Path::new(&letor_data::data("mq2008/Fold1")).to_path_buf();
    let read = |f: &str| read_letor_file(&dir.join(f), None, &ReadOptions::default()).unwrap();
    let (train_file, valid_file, test_file) =
        (read("train.txt"), read("vali.txt"), read("test.txt"));
    let mut splits = Vec::new();
    for transform in Transform::ALL {
        let options = PrepareOptions {
            tau_target: 2.8,
            transform,
            ..Default::default()
        };
        let p = prepare(&train_file, Some(&valid_file), Some(&test_file), &options).unwrap();
        // The privileged split is the data's, whatever the transform (correlations on the
        // signed log1p, which rank-gauss does not apply).
        splits.push((p.privileged_columns.clone(), p.correlations.clone()));
        assert_eq!(splits[0], *splits.last().unwrap(), "{transform:?}");
        let test = p.test.as_ref().unwrap();
        // The raw rows of the test groups preparation kept.
        let mut features = Vec::new();
        let mut group_offsets = vec![0];
        for &qid in &test.qids {
            let g = test_file.qids.iter().position(|&q| q == qid).unwrap();
            for d in test_file.group(g) {
                features.extend_from_slice(test_file.row(d));
            }
            group_offsets.push(features.len() / test_file.n_features);
        }
        let n = *group_offsets.last().unwrap();
        let raw = Dataset {
            n_features: test_file.n_features,
            features: features.into(),
            grades: vec![0; n],
            group_offsets,
            qids: test.qids.clone(),
            source: None,
            feature_names: None,
        };
        let model = distillrank::model::Ensemble::single(distillrank::model::Mlp::<f32>::new(
            test.d_x,
            &[8],
            3,
        ));
        let config = model_io::ModelConfig::new(
            &model,
            LossKind::RankNet,
            FeatureView::Regular,
            p.regular_columns.clone(),
            test_file.n_features,
        )
        .with_input_maps(&p.input_maps, FeatureView::Regular);
        assert_eq!(
            config.input_maps.is_some(),
            transform != Transform::SignedLog1p
        );
        // Through the saved files, as every door reads them.
        let saved = tempfile::tempdir().unwrap();
        model_io::save(&saved.path().join("m"), &model, &config).unwrap();
        let (loaded, config) = model_io::load(&saved.path().join("m"), false).unwrap();
        let inputs = model_io::model_inputs(&raw, &config, Path::new("test.txt"), false).unwrap();
        let prepared = test.regular.to_vec();
        assert_eq!(inputs.len(), prepared.len(), "{transform:?}");
        let differ = inputs
            .iter()
            .zip(&prepared)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(differ, 0, "{transform:?}: {differ} inputs differ");
        assert_eq!(
            loaded.predict(&inputs),
            score_inputs(&model.members[0], Inputs::of(test, FeatureView::Regular)),
            "{transform:?}"
        );
        // MQ2008's constant regular columns (6-10 among them) are 0 after a fitted map.
        for &c in &p.constant_regular {
            let j = p.regular_columns.iter().position(|&r| r == c).unwrap();
            let column = prepared.chunks_exact(test.d_x).map(|row| row[j]);
            if transform != Transform::SignedLog1p {
                assert!(
                    column.clone().all(|v| v == 0.0),
                    "{transform:?}: column {c}"
                );
            }
        }
    }
}

#[test]
fn an_ensemble_is_its_members_trained_alone_and_scores_their_mean() {
    use distillrank::engine::Engine;
    use distillrank::model::ensemble::member_seed;
    let p = synthetic();
    let base = TrainConfig {
        epochs: 2,
        widths: vec![16],
        seed: 4,
        ..Default::default()
    };
    let k = 3;
    let ensemble = train(
        &p.train,
        &p.valid,
        &TrainConfig {
            ensemble: k,
            ..base.clone()
        },
        None,
        &mut quiet,
    )
    .unwrap();
    assert_eq!(ensemble.model.len(), k);
    assert_eq!(ensemble.member_valid_ndcg.len(), k);
    assert_eq!(ensemble.later_members.len(), k - 1);
    // Each member is the model its own seed trains alone; the first is the config's seed's.
    for i in 0..k {
        let alone = train(
            &p.train,
            &p.valid,
            &TrainConfig {
                seed: member_seed(base.seed, i),
                ..base.clone()
            },
            None,
            &mut quiet,
        )
        .unwrap();
        assert_eq!(
            alone.model.members[0], ensemble.model.members[i],
            "member {i}"
        );
        assert_eq!(alone.best_valid_ndcg, ensemble.member_valid_ndcg[i]);
        // The first member's epochs are the model's; the others' are kept beside them.
        let (best_epoch, history) = match i {
            0 => (ensemble.best_epoch, &ensemble.history),
            _ => {
                let member = &ensemble.later_members[i - 1];
                assert_eq!(member.best_valid_ndcg, alone.best_valid_ndcg);
                (member.best_epoch, &member.history)
            }
        };
        assert_eq!(alone.best_epoch, best_epoch, "member {i}");
        let curve = |h: &[distillrank::ranking::train::EpochLog]| -> Vec<f64> {
            h.iter().map(|e| e.valid_ndcg).collect()
        };
        assert_eq!(curve(&alone.history), curve(history), "member {i}");
    }
    assert_ne!(ensemble.model.members[0], ensemble.model.members[1]);
    assert_eq!(
        ensemble.model.n_parameters(),
        k * ensemble.model.members[0].n_parameters()
    );
    // Its scores are the members' mean, and its validation NDCG@8 is theirs.
    let inputs = Inputs::of(&p.valid, FeatureView::Regular);
    let each: Vec<Vec<f32>> = ensemble
        .model
        .members
        .iter()
        .map(|m| score_inputs(m, inputs))
        .collect();
    let mean: Vec<f32> = (0..each[0].len())
        .map(|d| (each[0][d] + each[1][d] + each[2][d]) / 3.0)
        .collect();
    let scores =
        distillrank::native::block_on(Engine::Cpu.score_ensemble(&ensemble.model, inputs)).unwrap();
    assert_eq!(scores, mean);
    let ndcg = distillrank::metrics::mean_ndcg(
        8,
        &mean,
        &p.valid.labels,
        &p.valid.group_offsets,
        base.idcg_zero,
    )
    .unwrap();
    assert_eq!(ensemble.best_valid_ndcg, ndcg);
    // Saved and read back whole: every member, the same scores.
    let dir = tempfile::tempdir().unwrap();
    let config = model_io::ModelConfig::new(
        &ensemble.model,
        LossKind::RankNet,
        FeatureView::Regular,
        p.regular_columns.clone(),
        p.regular_columns.len() + p.privileged_columns.len(),
    );
    assert_eq!(config.members, k);
    model_io::save(&dir.path().join("e"), &ensemble.model, &config).unwrap();
    let (loaded, read) = model_io::load(&dir.path().join("e"), false).unwrap();
    assert_eq!(read, config);
    assert_eq!(loaded, ensemble.model);
    // A config that says fewer members than the weights hold is refused, naming the file.
    let json = dir.path().join("e.json");
    let text = std::fs::read_to_string(&json).unwrap();
    std::fs::write(&json, text.replace("\"members\": 3", "\"members\": 2")).unwrap();
    let e = model_io::load(&dir.path().join("e"), false)
        .unwrap_err()
        .to_string();
    assert!(e.contains("e.safetensors") || e.contains("e.json"), "{e}");
    // An ensemble of none is no model.
    let Err(e) = train(
        &p.train,
        &p.valid,
        &TrainConfig {
            ensemble: 0,
            ..base
        },
        None,
        &mut quiet,
    ) else {
        panic!("an ensemble of 0 trained");
    };
    let e = e.to_string();
    assert!(e.contains("an ensemble of 0 members"), "{e}");
}

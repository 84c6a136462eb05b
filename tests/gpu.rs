//! Every GPU kernel against the CPU engine, and GPU training against CPU training, on whatever
//! adapter wgpu finds natively (Mesa's lavapipe in CI). The checks themselves are in
//! tests/common/gpu_checks.rs, shared with the browser tests.
//!
//! Without any adapter these tests fail with a message saying how to get one (lavapipe:
//! `apt-get install mesa-vulkan-drivers`); DISTILLRANK_NO_GPU=1 skips them instead.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::gpu_checks;
use distillrank::gpu::{AdapterChoice, Gpu, Products};

use common::engines::gpu;

#[test]
fn dense_kernels_match_the_cpu_engine() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::dense_kernels(&gpu));
}

#[test]
fn the_dropout_kernel_matches_the_cpu_engine() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::dropout_kernel(&gpu));
}

#[test]
fn the_attention_kernels_match_the_cpu_engine() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::attention_kernels(&gpu));
}

/// Both kinds of product kernels, whichever the adapter would choose.
#[test]
fn the_layer_norm_kernels_match_the_cpu_engine() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::layer_norm_kernels(&gpu));
}

#[test]
fn tiled_and_direct_product_kernels_match_the_cpu_engine() {
    if gpu().is_none() {
        return;
    }
    for products in [Products::Tiled, Products::Direct] {
        let gpu =
            distillrank::native::block_on(Gpu::open(AdapterChoice::Any, Some(products))).unwrap();
        assert_eq!(gpu.products, products);
        distillrank::native::block_on(gpu_checks::dense_kernels(&gpu));
        distillrank::native::block_on(gpu_checks::training_steps(&gpu, 30));
    }
}

/// Opened without a choice, a software adapter measures both kinds and keeps the faster; from
/// either starting kind the kept kernels are correct.
#[test]
fn the_measured_choice_of_product_kernels_is_the_faster_and_correct() {
    let Some(gpu) = gpu() else { return };
    assert_eq!(gpu.products_ms.is_empty(), !gpu.is_software());
    for start in [Products::Tiled, Products::Direct] {
        distillrank::native::block_on(gpu_checks::measured_products(start));
    }
}

#[test]
fn loss_kernels_match_the_cpu_engine() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::loss_kernels(&gpu));
}

#[test]
fn objective_kernels_match_the_cpu_engine() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::objective_kernels(&gpu));
}

#[test]
fn pairwise_f_beta_and_anchor_bias_adam_kernels_match_the_cpu_engine() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::objective_pairwise_f_beta_and_bias_adam_kernels(
        &gpu,
    ));
}

#[test]
fn every_objective_trains_on_the_gpu_step_for_step_like_the_cpu_engine() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::objective_training_steps(&gpu, 60));
}

/// `fit` against `fit_gpu` end to end on a small synthetic task: two epochs per objective, the same
/// per-epoch loss, multipliers, anchor biases, validation AUC-PR and constraint, the same chosen
/// epoch.
#[test]
fn objectives_fit_on_the_gpu_like_on_the_cpu_engine() {
    use distillrank::engine::Engine;
    use distillrank::model::objective::Config;
    use distillrank::model::objective::Objective;
    use distillrank::native::objectives::fit as fit_on;
    use distillrank::objectives::data::{synthetic, SynthBinaryOptions};
    let Some(gpu) = gpu() else { return };
    let splits = synthetic(&SynthBinaryOptions {
        train: 1500,
        valid: 800,
        test: 100,
        features: 8,
        positive_rate: 0.1,
        noise: 0.5,
        seed: 4,
    })
    .unwrap();
    for objective in [
        Objective::AucPr { anchors: 4 },
        Objective::RecallAtPrecision(0.7),
        Objective::RocAuc,
        Objective::FBeta(1.0),
    ] {
        let config = Config {
            objective,
            widths: vec![16, 8],
            epochs: 3,
            batch_size: 100,
            ..Default::default()
        };
        let run = |engine: &Engine| {
            fit_on(engine, &splits.train, &splits.valid, &config, &mut |_| {}).unwrap()
        };
        let (cpu, on_gpu) = (run(&Engine::Cpu), run(&Engine::Gpu(gpu.clone())));
        assert_eq!(cpu.history.len(), on_gpu.history.len(), "{objective}");
        for (c, g) in cpu.history.iter().zip(&on_gpu.history) {
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-3 + 1e-2 * a.abs();
            assert!(
                close(c.loss, g.loss)
                    && close(c.valid.auc_pr, g.valid.auc_pr)
                    && c.lambdas.iter().zip(&g.lambdas).all(|(a, b)| close(*a, *b))
                    && c.biases.iter().zip(&g.biases).all(|(a, b)| close(*a, *b)),
                "{objective}, epoch {}: cpu {c:?}\ngpu {g:?}",
                c.epoch
            );
            let value =
                |e: &distillrank::objectives::train::EpochLog| e.constraint.and_then(|k| k.value);
            match (value(c), value(g)) {
                (Some(a), Some(b)) => {
                    assert!((a - b).abs() < 0.02, "{objective}: constraint {a} vs {b}")
                }
                (a, b) => assert_eq!(a, b, "{objective}: constraint"),
            }
        }
        assert_eq!(cpu.best_epoch, on_gpu.best_epoch, "{objective}");
    }
}

#[test]
fn reduction_and_adam_match_the_cpu() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::reduction_and_adam(&gpu));
}

#[test]
fn one_hundred_gpu_steps_follow_the_cpu_loss_curve() {
    let Some(gpu) = gpu() else { return };
    distillrank::native::block_on(gpu_checks::training_steps(&gpu, 100));
}

#[test]
fn training_on_the_gpu_engine_matches_the_cpu_engine() {
    use distillrank::data::transform::Transform;
    use distillrank::model::adam::{AdamConfig, LrSchedule};
    use distillrank::ranking::train::TrainConfig;
    let Some(gpu) = gpu() else { return };
    let plain = TrainConfig {
        widths: vec![32, 16],
        epochs: 3,
        batch_docs: 128,
        ..Default::default()
    };
    engines_train_alike(&gpu, Transform::SignedLog1p, &plain);
    // The regularisers: a fitted transform, weight decay, input noise (drawn on the host, the same
    // noise on both engines) and a schedule of the learning rate.
    let regularised = TrainConfig {
        adam: AdamConfig {
            weight_decay: 1e-3,
            ..AdamConfig::default()
        },
        input_noise: 0.1,
        lr_schedule: LrSchedule::Cosine,
        ..plain.clone()
    };
    engines_train_alike(&gpu, Transform::RankGauss, &regularised);
    engines_train_alike(&gpu, Transform::Standardize, &regularised);
    // Dropout: the same masks on both engines (drawn from one hash), so the same training.
    let dropped = TrainConfig {
        dropout: 0.2,
        ..plain.clone()
    };
    engines_train_alike(&gpu, Transform::RankGauss, &dropped);
    // Layer normalisation on the hidden layers, with dropout after it.
    let normalised = TrainConfig {
        norm: distillrank::model::Norm::Layer,
        dropout: 0.1,
        ..plain.clone()
    };
    engines_train_alike(&gpu, Transform::RankGauss, &normalised);
    // The listwise family: attention over each query's documents, with dropout before it.
    let listwise = TrainConfig {
        attention_heads: 4,
        dropout: 0.1,
        ..plain.clone()
    };
    engines_train_alike(&gpu, Transform::RankGauss, &listwise);
    // An ensemble: each member trains alike, and so does their mean.
    let ensemble = TrainConfig {
        ensemble: 2,
        epochs: 2,
        ..plain
    };
    engines_train_alike(&gpu, Transform::RankGauss, &ensemble);
}

fn engines_train_alike(
    gpu: &std::sync::Arc<distillrank::gpu::Gpu>,
    transform: distillrank::data::transform::Transform,
    config: &distillrank::ranking::train::TrainConfig,
) {
    use distillrank::data::prepare::{prepare, FeatureView, PrepareOptions, PrivilegedSplit};
    use distillrank::data::synth::{generate, SynthOptions};
    use distillrank::engine::Engine;
    use distillrank::native::ranking::fit as fit_on;
    use distillrank::ranking::train::{Guidance, Split};
    let s = generate(&SynthOptions {
        queries: 150,
        ..Default::default()
    })
    .unwrap();
    let p = prepare(
        &s.dataset,
        None,
        None,
        &PrepareOptions {
            tau_target: 3.5,
            privileged: PrivilegedSplit::Columns(s.privileged_columns),
            transform,
            ..Default::default()
        },
    )
    .unwrap();
    let teacher: Vec<f32> = p
        .train
        .privileged
        .chunks(p.train.d_z)
        .map(|z| z.iter().sum())
        .collect();
    let run = |engine: &Engine| {
        let guidance = Guidance {
            teachers: vec![&teacher],
            ..Guidance::default()
        };
        fit_on(
            engine,
            Split::of(&p.train, FeatureView::Regular),
            Split::of(&p.valid, FeatureView::Regular),
            None,
            config,
            &guidance,
            &mut |_| {},
        )
        .unwrap()
    };
    let (cpu, on_gpu) = (run(&Engine::Cpu), run(&Engine::Gpu(gpu.clone())));
    assert_eq!(cpu.model.len(), config.ensemble);
    assert_eq!(on_gpu.model.len(), config.ensemble);
    for (c, g) in [(cpu.best_valid_ndcg, on_gpu.best_valid_ndcg)]
        .into_iter()
        .chain(
            cpu.member_valid_ndcg
                .iter()
                .copied()
                .zip(on_gpu.member_valid_ndcg.iter().copied()),
        )
    {
        assert!((c - g).abs() < 0.02, "{transform:?}: valid NDCG {c} vs {g}");
    }
    for (c, g) in cpu.history.iter().zip(&on_gpu.history) {
        assert!(
            (c.data_loss - g.data_loss).abs() < 1e-3
                && (c.teacher_loss - g.teacher_loss).abs() < 1e-3,
            "{transform:?}, epoch {}: {c:?} vs {g:?}",
            c.epoch
        );
        assert!(
            (c.valid_ndcg - g.valid_ndcg).abs() < 0.02,
            "{transform:?}, epoch {}: {} vs {}",
            c.epoch,
            c.valid_ndcg,
            g.valid_ndcg
        );
    }
}

#[test]
fn a_profiled_step_times_each_phase_and_trains_like_a_plain_one() {
    use distillrank::gpu::trainer::GpuTrainer;
    use distillrank::model::adam::AdamConfig;
    use distillrank::model::mlp::Mlp;
    use distillrank::model::step::{LossPlan, StepBatch};
    use distillrank::model::LossKind;
    let Some(gpu) = gpu() else { return };
    let model = Mlp::<f32>::new(5, &[8], 1);
    let x: Vec<f32> = (0..50).map(|i| (i as f32 * 0.37).sin()).collect();
    let y = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    let batch = StepBatch {
        inputs: &x,
        labels: &y,
        offsets: &[0, 4, 10],
        positive: &[true, true],
        teachers: &[],
        ranking_distillation: None,
    };
    let plan = LossPlan::new(LossKind::RankNet, 1.0, 0, None, None, AdamConfig::default());
    let mut plain = GpuTrainer::new(gpu.clone(), &model, &plan, 16).unwrap();
    let mut profiled = GpuTrainer::new(gpu.clone(), &model, &plan, 16).unwrap();
    distillrank::native::block_on(plain.step(&batch)).unwrap();
    if !gpu.timestamps {
        eprintln!(
            "{} has no timestamp queries: profile not checked",
            gpu.info.name
        );
        return;
    }
    let timings = distillrank::native::block_on(profiled.step_profiled(&batch)).unwrap();
    let phases: Vec<&str> = timings.iter().map(|t| t.0).collect();
    assert_eq!(phases, ["forward", "losses", "backward", "adam"]);
    assert!(
        timings.iter().all(|t| t.1.is_finite() && t.1 >= 0.0),
        "{timings:?}"
    );
    let (a, b) = (
        distillrank::native::block_on(plain.model()).unwrap(),
        distillrank::native::block_on(profiled.model()).unwrap(),
    );
    assert_eq!(a, b, "profiling does not change the step");
}

#[test]
fn a_lost_device_is_an_error_not_a_hang() {
    use distillrank::gpu::trainer::GpuTrainer;
    use distillrank::model::adam::AdamConfig;
    use distillrank::model::mlp::Mlp;
    use distillrank::model::step::{LossPlan, StepBatch};
    use distillrank::model::LossKind;
    let Some(gpu) = gpu() else { return };
    let model = Mlp::<f32>::new(3, &[4], 1);
    let plan = LossPlan::new(LossKind::RankBce, 1.0, 0, None, None, AdamConfig::default());
    let mut trainer = GpuTrainer::new(gpu.clone(), &model, &plan, 8).unwrap();
    gpu.device.destroy();
    let _ = gpu.device.poll(wgpu::PollType::wait_indefinitely());
    let batch = StepBatch {
        inputs: &[0.5; 6],
        labels: &[1.0, 0.0],
        offsets: &[0, 2],
        positive: &[true],
        teachers: &[],
        ranking_distillation: None,
    };
    let err = distillrank::native::block_on(trainer.step(&batch)).unwrap_err();
    assert!(err.to_string().contains("lost"), "{err}");
}

/// `eval` and `predict` score on the GPU in chunks of SCORE_CHUNK_DOCS documents: the scores of
/// more documents than one chunk match the CPU engine's.
#[test]
fn gpu_scoring_in_chunks_matches_the_cpu_engine() {
    let Some(gpu) = gpu() else { return };
    use distillrank::cpu::mlp::score;
    use distillrank::cpu::mlp::SCORE_CHUNK_DOCS;
    use distillrank::data::inputs::Inputs;
    use distillrank::engine::Engine;
    use distillrank::model::mlp::Mlp;
    let model = Mlp::<f32>::new(7, &[12, 5], 3);
    let n_docs = SCORE_CHUNK_DOCS + 37;
    let mut rng = distillrank::rng::Rng::new(8);
    let inputs: Vec<f32> = (0..n_docs * 7).map(|_| rng.normal() as f32).collect();
    let on_gpu = distillrank::native::block_on(
        Engine::Gpu(gpu.clone()).score(&model, Inputs::dense(&inputs, n_docs)),
    )
    .unwrap();
    let on_cpu = score(&model, &inputs);
    assert_eq!(on_gpu.len(), n_docs);
    gpu_checks::assert_close(&on_gpu, &on_cpu, 1e-4, 1e-3, "scores");
    // A listwise model scores chunks of whole queries on the GPU (groups of 1 to 300 documents
    // across the chunks' edges), and a query larger than a chunk on the CPU engine.
    let listwise = Mlp::<f32>::new(7, &[12, 8], 3).with_attention(2, 3);
    let mut offsets = vec![0];
    while *offsets.last().unwrap() < n_docs {
        let next = (offsets.last().unwrap() + rng.int_range(1, 300)).min(n_docs);
        offsets.push(next);
    }
    let grouped = Inputs::dense(&inputs, n_docs).with_groups(&offsets);
    let cpu_scores = distillrank::cpu::mlp::score_inputs(&listwise, grouped);
    let engine = Engine::Gpu(gpu);
    let gpu_scores = distillrank::native::block_on(engine.score(&listwise, grouped)).unwrap();
    gpu_checks::assert_close(&gpu_scores, &cpu_scores, 1e-4, 1e-3, "listwise scores");
    let one_query = [0, n_docs];
    let whole = Inputs::dense(&inputs, n_docs).with_groups(&one_query);
    let scores = distillrank::native::block_on(engine.score(&listwise, whole)).unwrap();
    let expected = distillrank::cpu::mlp::score_inputs(&listwise, whole);
    gpu_checks::assert_close(&scores, &expected, 1e-4, 1e-3, "one query past a chunk");
}

/// A query group larger than one storage binding can hold: no batch size helps (a batch holds
/// whole groups), so the error says that the group is the limit and that the CPU engine trains
/// it, instead of advising a smaller batch.
#[test]
fn a_group_too_large_for_the_adapter_is_named_as_the_limit() {
    use distillrank::data::prepare::RankingSet;
    use distillrank::engine::Engine;
    use distillrank::ranking::train::{fit_async, Guidance, Split, TrainConfig};
    let Some(gpu) = gpu() else { return };
    let limit = gpu.device.limits().max_storage_buffer_binding_size;
    if limit > 1 << 30 {
        eprintln!(
            "{}: a binding of {limit} bytes; the group this test needs is too large to build here",
            gpu.name()
        );
        return;
    }
    let width = 256;
    let docs = (limit / (4 * width as u64)) as usize + 1000;
    let set = |docs: usize| RankingSet {
        regular: (0..docs * 2).map(|i| (i % 7) as f32).collect(),
        d_x: 2,
        privileged: Default::default(),
        d_z: 0,
        grades: (0..docs).map(|i| (i % 3) as u8).collect(),
        labels: (0..docs).map(|i| (i % 3 == 2) as u8 as f32).collect(),
        group_offsets: vec![0, docs],
        positive_group: vec![true],
        qids: vec![1],
    };
    let (train, valid) = (set(docs), set(30));
    let config = TrainConfig {
        widths: vec![width],
        epochs: 1,
        ..Default::default()
    };
    let result = distillrank::native::block_on(fit_async(
        &Engine::Gpu(gpu),
        Split::of(&train, distillrank::data::prepare::FeatureView::Regular),
        Split::of(&valid, distillrank::data::prepare::FeatureView::Regular),
        None,
        &config,
        &Guidance::default(),
        &mut |_| {},
    ));
    let message = result.err().expect("the group cannot fit").to_string();
    for fragment in [
        &format!("{docs} documents"),
        "no batch size helps",
        "--backend cpu",
    ] {
        assert!(
            message.contains(fragment),
            "'{fragment}' missing: {message}"
        );
    }
}

/// A model whose training needs more workgroups in one dispatch than the adapter allows (Adam over
/// a 4200 x 4200 layer: 68,907 of 256) is refused when its trainer is built, naming the layer, the
/// count and the limit, not at its first step with the driver's raw validation error; and the CLI,
/// which builds its trainers the same way, says the same.
#[test]
fn a_model_past_the_adapters_dispatch_limit_is_refused_when_its_trainer_is_built() {
    use distillrank::engine::Engine;
    use distillrank::model::adam::AdamConfig;
    use distillrank::model::mlp::Mlp;
    use distillrank::model::step::LossPlan;
    use distillrank::model::LossKind;
    let Some(gpu) = gpu() else { return };
    let most = gpu.device.limits().max_compute_workgroups_per_dimension;
    if most as u64 * 256 >= 4200 * 4200 {
        eprintln!(
            "{}: {most} workgroups per dimension fit this model",
            gpu.name()
        );
        return;
    }
    let model = Mlp::<f32>::new(8, &[4200, 4200], 0);
    let plan = LossPlan::new(LossKind::RankNet, 1.0, 0, None, None, AdamConfig::default());
    let Err(err) = Engine::Gpu(gpu).ranking_trainer(model, &plan, 64, 16) else {
        panic!("a trainer past the dispatch limit was built");
    };
    let err = err.to_string();
    assert!(
        err.contains("layer 2 (4200 -> 4200 units")
            && err.contains("68907 workgroups")
            && err.contains(&format!("allows {most} per dimension"))
            && err.contains("--backend cpu"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_distillrank"))
        .args([
            "compare",
            "--queries",
            "30",
            "--valid-queries",
            "20",
            "--test-queries",
            "20",
        ])
        .args([
            "--regular",
            "8",
            "--widths",
            "4200,4200",
            "--epochs",
            "1",
            "--seeds",
            "1",
        ])
        .args([
            "--methods",
            "no-distillation",
            "--backend",
            "gpu",
            "--quiet",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        !run.status.success() && stderr.contains("max_compute_workgroups_per_dimension"),
        "{stderr}"
    );
}

//! Checks of every GPU kernel against the CPU engine, shared by the native tests (tests/gpu.rs,
//! on lavapipe in CI) and the browser tests (tests/web.rs, WebGPU in headless Chromium). Each is an
//! async function over a device; shapes are random and not multiples of the workgroup sizes;
//! groups include one-document groups, all-tied groups and a 1,300-document group.

#![allow(dead_code)]

use std::sync::Arc;

use distillrank::cpu::adam::{Adam, AdamConfig, AdamVector};
use distillrank::cpu::loss::{data_loss, loss_weights, teacher_loss, LossKind, Targets};
use distillrank::cpu::mlp::{dense_backward, dense_forward, Dense, Mlp};
use distillrank::cpu::ranking::CpuRanking;
use distillrank::distill::{RdBatch, RdScheme};
use distillrank::gpu::losses::{LossBuffers, LossParams, RankingLoss};
use distillrank::gpu::mlp::adam_params;
use distillrank::gpu::params::{AdamParams, DenseParams, ObjectiveParams, ReduceParams};
use distillrank::gpu::shaders::{TILE, WORKGROUP};
use distillrank::gpu::trainer::GpuTrainer;
use distillrank::gpu::{groups_of, AdapterChoice, Gpu, Kernel, Products};
use distillrank::objectives::gpu::GpuObjectiveTrainer;
use distillrank::objectives::train::{Config as ObjectiveConfig, CpuTrainer};
use distillrank::objectives::{
    dual_ascent, f_beta_bound, roc_auc_surrogate, Grad, Objective, Params, Surrogate,
};
use distillrank::rng::Rng;
use distillrank::step::{LossPlan, ObjectivePlan, StepBatch, StepLosses};

/// |gpu - cpu| <= atol + rtol * |cpu| everywhere, else a report of how many, the worst and where.
pub fn assert_close(gpu: &[f32], cpu: &[f32], atol: f32, rtol: f32, what: &str) {
    assert_eq!(gpu.len(), cpu.len(), "{what}: lengths");
    let mut bad = 0;
    let mut worst = (0f32, 0usize);
    for (i, (&g, &c)) in gpu.iter().zip(cpu).enumerate() {
        let err = (g - c).abs();
        if err.is_nan() || err > atol + rtol * c.abs() {
            bad += 1;
        }
        if err > worst.0 || err.is_nan() {
            worst = (err, i);
        }
    }
    assert!(
        bad == 0,
        "{what}: {bad} of {} values off; max error {} at {} (gpu {}, cpu {})",
        gpu.len(),
        worst.0,
        worst.1,
        gpu[worst.1],
        cpu[worst.1]
    );
}

pub fn random(n: usize, rng: &mut Rng) -> Vec<f32> {
    (0..n).map(|_| rng.normal() as f32).collect()
}

async fn run(gpu: &Gpu, record: impl FnOnce(&mut wgpu::ComputePass)) {
    gpu.run(record).await.unwrap();
}

async fn read(gpu: &Gpu, buffer: &wgpu::Buffer, n: usize) -> Vec<f32> {
    gpu.read(buffer, n).await.unwrap()
}

pub async fn dense_kernels(gpu: &Gpu) {
    let mut rng = Rng::new(1);
    // The last three fit the vec4 form of the direct products in part or in full.
    for &(b, n_in, n_out, relu) in &[
        (37usize, 29usize, 19usize, true),
        (5, 3, 1, false),
        (70, 136, 33, true),
        (1, 17, 16, true),
        (70, 136, 32, true),
        (37, 28, 12, false),
        (130, 64, 68, true),
    ] {
        let what = format!("{b}x{n_in}->{n_out}");
        let inp = random(b * n_in, &mut rng);
        let layer = Dense {
            n_in,
            n_out,
            weight: random(n_in * n_out, &mut rng),
            bias: random(n_out, &mut rng),
        };
        let mut out = vec![0f32; b * n_out];
        dense_forward(&mut out, &inp, &layer, relu);
        let dout0 = random(b * n_out, &mut rng);
        let (mut dinp, mut dweight, mut dbias, mut dout) = (
            vec![0f32; b * n_in],
            vec![0f32; n_in * n_out],
            vec![0f32; n_out],
            dout0.clone(),
        );
        dense_backward(
            Some(&mut dinp),
            &mut dweight,
            &mut dbias,
            &mut dout,
            &out,
            &inp,
            &layer,
            relu,
        );

        let (g_inp, g_w, g_b) = (
            gpu.buffer_with("inp", &inp),
            gpu.buffer_with("w", &layer.weight),
            gpu.buffer_with("b", &layer.bias),
        );
        let (g_out, g_dout) = (
            gpu.buffer("out", b * n_out),
            gpu.buffer_with("dout", &dout0),
        );
        let (g_dinp, g_dw, g_db) = (
            gpu.buffer("dinp", b * n_in),
            gpu.buffer("dw", n_in * n_out),
            gpu.buffer("db", n_out),
        );
        let forward = gpu.slot(
            gpu.product_kernel(Kernel::DenseForward, n_in, n_out),
            [Some(&g_inp), Some(&g_w), Some(&g_b), Some(&g_out), None],
        );
        let g_naive = gpu.buffer("naive out", b * n_out);
        let naive = gpu.slot(
            Kernel::DenseForwardNaive,
            [Some(&g_inp), Some(&g_w), Some(&g_b), Some(&g_naive), None],
        );
        let mask = gpu.slot(
            Kernel::ReluMask,
            [None, None, Some(&g_out), Some(&g_dout), None],
        );
        let bw = gpu.slot(
            gpu.product_kernel(Kernel::DenseBackwardWeight, n_in, n_out),
            [Some(&g_inp), Some(&g_dout), None, Some(&g_dw), None],
        );
        let bb = gpu.slot(
            Kernel::DenseBackwardBias,
            [Some(&g_dout), None, None, Some(&g_db), None],
        );
        let bi = gpu.slot(
            gpu.product_kernel(Kernel::DenseBackwardInput, n_in, n_out),
            [Some(&g_dout), Some(&g_w), None, Some(&g_dinp), None],
        );
        let (bu, iu, ou) = (b as u32, n_in as u32, n_out as u32);
        let dense = |rows, cols, inner, relu: bool| DenseParams {
            rows,
            cols,
            inner,
            relu: relu as u32,
        };
        gpu.set_params(&forward, &dense(bu, ou, iu, relu));
        gpu.set_params(&naive, &dense(bu, ou, iu, relu));
        gpu.set_params(&mask, &dense(bu, ou, 0, false));
        gpu.set_params(&bw, &dense(iu, ou, bu, false));
        gpu.set_params(&bb, &dense(1, ou, bu, false));
        gpu.set_params(&bi, &dense(bu, iu, ou, false));
        run(gpu, |pass| {
            gpu.record(
                pass,
                &forward,
                (groups_of(n_out, TILE), groups_of(b, TILE), 1),
            );
            gpu.record(pass, &naive, (groups_of(b * n_out, 64), 1, 1));
            if relu {
                gpu.record(pass, &mask, (groups_of(b * n_out, WORKGROUP), 1, 1));
            }
            gpu.record(
                pass,
                &bw,
                (groups_of(n_out, TILE), groups_of(n_in, TILE), 1),
            );
            gpu.record(pass, &bb, (groups_of(n_out, WORKGROUP), 1, 1));
            gpu.record(pass, &bi, (groups_of(n_in, TILE), groups_of(b, TILE), 1));
        })
        .await;
        assert_close(
            &read(gpu, &g_out, b * n_out).await,
            &out,
            1e-4,
            1e-4,
            &format!("{what} forward"),
        );
        assert_close(
            &read(gpu, &g_naive, b * n_out).await,
            &out,
            1e-4,
            1e-4,
            &format!("{what} naive forward"),
        );
        assert_close(
            &read(gpu, &g_dw, n_in * n_out).await,
            &dweight,
            1e-4,
            1e-4,
            &format!("{what} dweight"),
        );
        assert_close(
            &read(gpu, &g_db, n_out).await,
            &dbias,
            1e-4,
            1e-4,
            &format!("{what} dbias"),
        );
        assert_close(
            &read(gpu, &g_dinp, b * n_in).await,
            &dinp,
            1e-4,
            1e-4,
            &format!("{what} dinp"),
        );
    }
}

/// Groups of sizes 1, 7, 4 (all tied), 1,300, 12, 2; labels in {0, 1, 2}.
fn edge_groups(rng: &mut Rng) -> (Vec<usize>, Vec<f32>) {
    let sizes = [1usize, 7, 4, 1300, 12, 2];
    let mut offsets = vec![0];
    for s in sizes {
        offsets.push(offsets.last().unwrap() + s);
    }
    let n = *offsets.last().unwrap();
    let mut labels: Vec<f32> = (0..n).map(|_| rng.int_range(0, 2) as f32).collect();
    labels[8..12].iter_mut().for_each(|y| *y = 1.0);
    (offsets, labels)
}

pub async fn loss_kernels(gpu: &Gpu) {
    let mut rng = Rng::new(2);
    let (offsets, labels) = edge_groups(&mut rng);
    let n = labels.len();
    let groups = offsets.len() - 1;
    let logits = random(n, &mut rng);
    let teachers = [random(n, &mut rng), random(n, &mut rng)];
    let include = [true, false, true, true, true, true];
    let all = [true; 6];
    let binary: Vec<f32> = labels.iter().map(|&y| (y > 1.0) as u8 as f32).collect();
    let mut info: Vec<u32> = offsets.iter().map(|&o| o as u32).collect();
    for g in 0..groups {
        info.extend(std::iter::repeat_n(g as u32, offsets[g + 1] - offsets[g]));
    }
    let g_info = gpu.buffer_with("info", &info);
    let g_logits = gpu.buffer_with("logits", &logits);
    for kind in LossKind::ALL {
        // Graded labels where the loss takes them, binary ones for RankBCE.
        let y = if kind == LossKind::RankBce {
            &binary
        } else {
            &labels
        };
        for n_teachers in [0usize, 1, 2] {
            let what = format!("{kind} with {n_teachers} teachers");
            let t: Vec<&[f32]> = teachers[..n_teachers].iter().map(Vec::as_slice).collect();
            let mut cpu_grad = vec![0f32; n];
            if n_teachers == 0 {
                data_loss(kind, &logits, y, &offsets, &include, 0.7, &mut cpu_grad);
            } else {
                teacher_loss(kind, &logits, &t, &offsets, &all, 0.7, &mut cpu_grad);
            }
            // The loss value against the same code in f64: a sum over 845,000 pairs in f32 drifts by
            // about 1e-4 relative on its own.
            let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
            let (logits64, y64, t64) = (
                wide(&logits),
                wide(y),
                t.iter().map(|t| wide(t)).collect::<Vec<_>>(),
            );
            let t64: Vec<&[f64]> = t64.iter().map(Vec::as_slice).collect();
            let mut scratch = vec![0f64; n];
            let cpu_loss = if n_teachers == 0 {
                data_loss(kind, &logits64, &y64, &offsets, &include, 0.7, &mut scratch)
            } else {
                teacher_loss(kind, &logits64, &t64, &offsets, &all, 0.7, &mut scratch)
            } as f32;
            let mut targets: Vec<f32> = if n_teachers == 0 {
                y.clone()
            } else {
                t.iter().flat_map(|t| t.iter().copied()).collect()
            };
            let inc = if n_teachers == 0 { &include } else { &all };
            let which = if n_teachers == 0 {
                Targets::Hard(y.as_slice())
            } else {
                Targets::Soft
            };
            targets.extend(loss_weights(kind, which, &offsets, inc));
            let g_targets = gpu.buffer_with("targets", &targets);
            let (g_grad, g_partial, g_sum) = (
                gpu.buffer("dlogits", n),
                gpu.buffer("partial", 3 * n),
                gpu.buffer("sum", 1),
            );
            let buffers = LossBuffers {
                logits: &g_logits,
                targets: &g_targets,
                group_info: &g_info,
                dlogits: &g_grad,
                partial: &g_partial,
            };
            let loss = RankingLoss::new(gpu, kind, n_teachers > 0, &buffers);
            let reduce = gpu.slot(
                Kernel::ReduceSum,
                [Some(&g_partial), None, None, Some(&g_sum), None],
            );
            let dispatches = loss.prepare(
                gpu,
                LossParams {
                    n,
                    groups,
                    teachers: n_teachers,
                    partial_offset: 0,
                    scratch_offset: n,
                    scale: 0.7,
                    accumulate: false,
                },
            );
            gpu.set_params(&reduce, &ReduceParams::new(n, 0, 0));
            run(gpu, |pass| {
                for (slot, groups) in &dispatches {
                    gpu.record(pass, slot, *groups);
                }
                gpu.record(pass, &reduce, (1, 1, 1));
            })
            .await;
            assert_close(
                &read(gpu, &g_grad, n).await,
                &cpu_grad,
                1e-6,
                1e-3,
                &format!("{what}: gradient"),
            );
            assert_close(
                &read(gpu, &g_sum, 1).await,
                &[cpu_loss],
                1e-5,
                1e-4,
                &format!("{what}: loss"),
            );
        }
    }
}

pub async fn reduction_and_adam(gpu: &Gpu) {
    let mut rng = Rng::new(3);
    let values = random(10_007, &mut rng);
    let (g_values, g_sum) = (gpu.buffer_with("values", &values), gpu.buffer("sum", 2));
    let reduce = gpu.slot(
        Kernel::ReduceSum,
        [Some(&g_values), None, None, Some(&g_sum), None],
    );
    gpu.set_params(&reduce, &ReduceParams::new(10_000, 1, 7));
    run(gpu, |pass| gpu.record(pass, &reduce, (1, 1, 1))).await;
    let want: f64 = values[7..10_007].iter().map(|&v| v as f64).sum();
    assert_close(
        &read(gpu, &g_sum, 2).await[1..],
        &[want as f32],
        1e-3,
        1e-5,
        "reduce_sum",
    );

    // Adam: three steps on a one-layer model, against the CPU's Adam.
    let mut model = Mlp {
        layers: vec![Dense {
            n_in: 300,
            n_out: 1,
            weight: random(300, &mut rng),
            bias: vec![0.5],
        }],
    };
    let config = AdamConfig {
        lr: 0.01,
        weight_decay: 1e-3,
        ..Default::default()
    };
    let mut adam = Adam::new(&model, config);
    let (g_param, g_grad, g_moments) = (
        gpu.buffer_with("param", &model.layers[0].weight),
        gpu.buffer("grad", 300),
        gpu.buffer("moments", 600),
    );
    let slot = gpu.slot(
        Kernel::Adam,
        [Some(&g_grad), None, None, Some(&g_param), Some(&g_moments)],
    );
    for step in 1..=3 {
        let mut grads = model.zero_gradients();
        grads.weight[0] = random(300, &mut rng);
        gpu.queue
            .write_buffer(&g_grad, 0, bytemuck::cast_slice(&grads.weight[0]));
        adam.update(&mut model, &grads);
        let (b1, b2) = (1.0 - 0.9f64.powi(step), 1.0 - 0.999f64.powi(step));
        // adam.wgsl's parameters written out here, against `adam_params`' folding.
        let params = AdamParams {
            n: 300,
            lr_t: (0.01 * b2.sqrt() / b1) as f32,
            eps_t: (1e-8 * b2.sqrt()) as f32,
            beta1: 0.9,
            beta2: 0.999,
            weight_decay: 1e-3,
            ..Default::default()
        };
        gpu.set_params(&slot, &params);
        run(gpu, |pass| {
            gpu.record(pass, &slot, (groups_of(300, WORKGROUP), 1, 1))
        })
        .await;
    }
    assert_close(
        &read(gpu, &g_param, 300).await,
        &model.layers[0].weight,
        1e-6,
        1e-5,
        "adam",
    );
}

/// The global objectives' kernels (shaders/objectives.wgsl) against `Objective::loss` and
/// `dual_ascent`: the logit, bias and multiplier gradients, the loss, and the multipliers after one
/// dual step, for AUC-PR (5 anchors) and the three single-constraint objectives, both surrogates.
/// 777 examples: not a multiple of the workgroup size.
pub async fn objective_kernels(gpu: &Gpu) {
    let mut rng = Rng::new(4);
    let n = 777;
    let pi = 0.23;
    for (objective, surrogate, step) in [
        (Objective::AucPr { anchors: 5 }, Surrogate::Log, 0.5f32),
        (Objective::AucPr { anchors: 5 }, Surrogate::Hinge, 0.5),
        (Objective::RecallAtPrecision(0.8), Surrogate::Log, 0.5),
        (Objective::PrecisionAtRecall(0.9), Surrogate::Hinge, 0.5),
        (Objective::TprAtFpr(0.05), Surrogate::Log, 0.5),
        // A step large enough that slack constraints' multipliers stop at 0.
        (Objective::AucPr { anchors: 5 }, Surrogate::Log, 1e3),
    ] {
        let what = format!("{objective} ({surrogate}, dual step {step})");
        let k = objective.n_lambdas();
        let labels: Vec<f32> = (0..n).map(|_| (rng.uniform() < 0.2) as u8 as f32).collect();
        // For the large step, scores that separate the classes: the constraints are slack.
        let separated = if step > 100.0 { 3.0 } else { 0.0 };
        let logits: Vec<f32> = random(n, &mut rng)
            .iter()
            .zip(&labels)
            .map(|(f, y)| 1.5 * f + separated * (2.0 * y - 1.0))
            .collect();
        let params = Params {
            lambdas: (0..k).map(|_| rng.uniform_range(0.2, 3.0) as f32).collect(),
            biases: (0..objective.n_biases())
                .map(|_| rng.uniform_range(-1.0, 1.0) as f32)
                .collect(),
        };
        let mut cpu = Grad::default();
        objective.loss(surrogate, &logits, &labels, pi, &params, &mut cpu);
        let mut cpu_lambdas = params.lambdas.clone();
        dual_ascent(&mut cpu_lambdas, &cpu.dlambdas, step);
        // The loss against the same code in f64, as the other loss checks do.
        let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
        let params64 = Params {
            lambdas: wide(&params.lambdas),
            biases: wide(&params.biases),
        };
        let cpu_loss = objective.loss(
            surrogate,
            &wide(&logits),
            &wide(&labels),
            pi,
            &params64,
            &mut Grad::default(),
        ) as f32;

        let mut labels_coefficients = labels.clone();
        for lagrangian in objective.lagrangians(pi) {
            labels_coefficients.extend(lagrangian.coefficients().map(|c| c as f32));
        }
        // Without anchor biases (the single-constraint objectives) every bias is 0.
        let mut state = params.lambdas.clone();
        state.extend((0..k).map(|j| params.biases.get(j).copied().unwrap_or(0.0)));
        let (g_logits, g_coefficients, g_state) = (
            gpu.buffer_with("logits", &logits),
            gpu.buffer_with("labels and coefficients", &labels_coefficients),
            gpu.buffer_with("lambdas and biases", &state),
        );
        let (g_grad, g_partial, g_sums, g_out) = (
            gpu.buffer("dlogits", n),
            gpu.buffer("partial", 3 * k * n),
            gpu.buffer("sums", 3 * k),
            gpu.buffer("out", 3 * k + 1),
        );
        let terms = gpu.slot(
            Kernel::ObjectiveTerms,
            [
                Some(&g_logits),
                Some(&g_coefficients),
                Some(&g_state),
                Some(&g_grad),
                Some(&g_partial),
            ],
        );
        let rows = gpu.slot(
            Kernel::ReduceSum,
            [Some(&g_partial), None, None, Some(&g_sums), None],
        );
        let update = gpu.slot(
            Kernel::ObjectiveMultipliers,
            [
                Some(&g_sums),
                Some(&g_coefficients),
                None,
                Some(&g_state),
                Some(&g_out),
            ],
        );
        let scale = 1.0 / k as f32;
        let surrogate_code = match surrogate {
            Surrogate::Hinge => 0,
            Surrogate::Log => 1,
        };
        let p = ObjectiveParams {
            n: n as u32,
            constraints: k as u32,
            surrogate: surrogate_code,
            scale,
            step,
            ..Default::default()
        };
        gpu.set_params(&terms, &p);
        gpu.set_params(&update, &p);
        gpu.set_params(&rows, &ReduceParams::new(n, 0, 0));
        run(gpu, |pass| {
            gpu.record(pass, &terms, (groups_of(n, WORKGROUP), 1, 1));
            gpu.record(pass, &rows, (3 * k as u32, 1, 1));
            gpu.record(pass, &update, (1, 1, 1));
        })
        .await;
        assert_close(
            &read(gpu, &g_grad, n).await,
            &cpu.dlogits,
            1e-7,
            1e-4,
            &format!("{what}: dlogits"),
        );
        let out = read(gpu, &g_out, 3 * k + 1).await;
        if objective.n_biases() > 0 {
            assert_close(
                &out[..k],
                &cpu.dbiases,
                1e-6,
                1e-4,
                &format!("{what}: dbiases"),
            );
        }
        assert_close(
            &out[k..2 * k],
            &cpu.dlambdas,
            1e-6,
            1e-4,
            &format!("{what}: dlambdas"),
        );
        assert_close(
            &out[3 * k..],
            &[cpu_loss],
            1e-5,
            1e-4,
            &format!("{what}: loss"),
        );
        let after = read(gpu, &g_state, 2 * k).await;
        assert_close(
            &after[..k],
            &cpu_lambdas,
            1e-5,
            1e-4,
            &format!("{what}: lambdas"),
        );
        assert_eq!(
            after[k..],
            state[k..],
            "{what}: the biases are Adam's, not this kernel's"
        );
        if step > 100.0 {
            assert!(
                cpu_lambdas.contains(&0.0) && after[..k].contains(&0.0),
                "{what}: no multiplier reached 0: {cpu_lambdas:?}"
            );
        }
    }
}

/// A batch for the step checks: inputs, labels, group offsets, positive groups, teacher logits.
type TestBatch = (Vec<f32>, Vec<f32>, Vec<usize>, Vec<bool>, Vec<f32>);

/// Batches of whole groups with varied sizes (one-document groups included) and binary labels.
fn batches(n_in: usize, rng: &mut Rng) -> Vec<TestBatch> {
    (0..10)
        .map(|_| {
            let mut offsets = vec![0];
            let mut positive = Vec::new();
            let mut labels = Vec::new();
            while *offsets.last().unwrap() < 90 {
                let size = rng.int_range(1, 25);
                let ys: Vec<f32> = (0..size)
                    .map(|_| (rng.uniform() < 0.2) as u8 as f32)
                    .collect();
                positive.push(ys.iter().any(|&y| y > 0.0));
                labels.extend(ys);
                offsets.push(labels.len());
            }
            let n = labels.len();
            (
                random(n * n_in, rng),
                labels,
                offsets,
                positive,
                random(n, rng),
            )
        })
        .collect()
}

/// Ranking Distillation candidates for a batch: up to 3 unlabeled documents of each group, in a
/// shuffled order (the teacher's, here random).
fn rd_candidates(labels: &[f32], offsets: &[usize], scheme: RdScheme, rng: &mut Rng) -> RdBatch {
    let mut batch = RdBatch {
        scheme,
        lambda: 1.5,
        mu: 0.3,
        offsets: vec![0],
        documents: Vec::new(),
    };
    for w in offsets.windows(2) {
        let mut unlabeled: Vec<usize> = (w[0]..w[1]).filter(|&i| labels[i] == 0.0).collect();
        rng.shuffle(&mut unlabeled);
        batch.documents.extend(unlabeled.into_iter().take(3));
        batch.offsets.push(batch.documents.len());
    }
    batch
}

/// The GPU engine's training step ([`GpuTrainer`]) against the CPU engine's ([`CpuRanking`]),
/// from the same initial weights and batches, for every kind of loss a ranking model trains
/// with: RankNet and RankBCE data losses, one and two teachers, Ranking Distillation under each
/// weighting scheme, and global objectives as the data loss (over S_label, gathered and
/// scattered; with a teacher and without). `steps` steps each: the per-step loss curves (read
/// back every 25 steps) and the weights at the end agree within 2e-3 + 2e-2 relative.
pub async fn training_steps(gpu: &Arc<Gpu>, steps: usize) {
    let mut rng = Rng::new(4);
    let n_in = 13;
    let data = batches(n_in, &mut rng);
    let auc_pr = Objective::parse("auc-pr").unwrap();
    let recall = Objective::parse("recall-at-precision:0.7").unwrap();
    let objective = |o: Objective| {
        Some(ObjectivePlan {
            objective: o,
            dual_step: 0.3,
        })
    };
    // (what, loss, teachers, Ranking Distillation scheme, objective as the data loss)
    let cases = [
        ("RankNet, 1 teacher", LossKind::RankNet, 1, None, None),
        ("RankBCE, no teacher", LossKind::RankBce, 0, None, None),
        ("RankBCE, 2 teachers", LossKind::RankBce, 2, None, None),
        ("Softmax, no teacher", LossKind::Softmax, 0, None, None),
        ("Softmax, 2 teachers", LossKind::Softmax, 2, None, None),
        (
            "LambdaRank, no teacher",
            LossKind::LambdaRank,
            0,
            None,
            None,
        ),
        ("LambdaRank, 1 teacher", LossKind::LambdaRank, 1, None, None),
        (
            "RankNet, RD equal",
            LossKind::RankNet,
            0,
            Some(RdScheme::Equal),
            None,
        ),
        (
            "RankNet, RD position",
            LossKind::RankNet,
            0,
            Some(RdScheme::Position),
            None,
        ),
        (
            "RankBCE, RD discrepancy",
            LossKind::RankBce,
            0,
            Some(RdScheme::Discrepancy),
            None,
        ),
        (
            "RankNet, RD hybrid",
            LossKind::RankNet,
            0,
            Some(RdScheme::PositionTimesDiscrepancy),
            None,
        ),
        (
            "AUC-PR data loss, 1 teacher",
            LossKind::RankNet,
            1,
            None,
            objective(auc_pr),
        ),
        (
            "recall at precision data loss",
            LossKind::RankBce,
            0,
            None,
            objective(recall),
        ),
    ];
    for (what, kind, n_teachers, scheme, objective) in cases {
        let model = Mlp::<f32>::new(n_in, &[24, 12], 9);
        let adam = AdamConfig {
            lr: 3e-3,
            ..Default::default()
        };
        let plan = LossPlan::new(kind, 0.4, n_teachers, scheme.map(|_| 0.8), objective, adam);
        let mut trainer = GpuTrainer::new(gpu.clone(), &model, &plan, 128).unwrap();
        let mut cpu = CpuRanking::new(model.clone(), &plan);
        let (mut cpu_losses, mut gpu_losses) = (Vec::new(), Vec::new());
        let mut candidates = Rng::new(11);
        for step in 0..steps {
            let (x, y, offsets, positive, teacher) = &data[step % data.len()];
            let second: Vec<f32> = teacher.iter().map(|t| 0.5 - t).collect();
            let teachers: Vec<&[f32]> =
                [teacher.as_slice(), second.as_slice()][..n_teachers].to_vec();
            let rd = scheme.map(|s| rd_candidates(y, offsets, s, &mut candidates));
            let batch = StepBatch {
                inputs: x,
                labels: y,
                offsets,
                positive,
                teachers: &teachers,
                ranking_distillation: rd.as_ref(),
            };
            cpu_losses.push(cpu.step(&batch));
            trainer.step(&batch).await.unwrap();
            if (step + 1) % 25 == 0 || step + 1 == steps {
                gpu_losses.extend(trainer.read_losses().await.unwrap());
            }
        }
        assert_eq!(gpu_losses.len(), cpu_losses.len());
        let curve = |losses: &[StepLosses], f: fn(&StepLosses) -> f32| -> Vec<f32> {
            losses.iter().map(f).collect()
        };
        for (name, f) in [
            ("data", (|l: &StepLosses| l.data) as fn(&StepLosses) -> f32),
            ("teacher", |l: &StepLosses| l.teacher),
            ("ranking distillation", |l: &StepLosses| l.rd),
        ] {
            assert_close(
                &curve(&gpu_losses, f),
                &curve(&cpu_losses, f),
                2e-3,
                2e-2,
                &format!("{what}: {name} loss curve"),
            );
        }
        if n_teachers == 0 {
            assert!(cpu_losses.iter().all(|l| l.teacher == 0.0), "{what}");
        }
        if scheme.is_some() {
            assert!(cpu_losses.iter().any(|l| l.rd > 0.0), "{what}: L_D is used");
        }
        let trained = trainer.model().await.unwrap();
        let (mut g, mut c) = (trained.parameters(), cpu.model().parameters());
        let pairwise = matches!(
            kind,
            LossKind::RankNet | LossKind::LambdaRank | LossKind::Softmax
        );
        if pairwise && objective.is_none() {
            // A pairwise or listwise loss does not depend on the output bias: its gradient is zero up to
            // rounding, and Adam turns that rounding into lr-sized steps on either engine.
            g.pop();
            c.pop();
        }
        assert_close(
            &g,
            &c,
            2e-3,
            2e-2,
            &format!("{what}: weights after {steps} steps"),
        );
        // A constrained objective's Lagrangian grows with its multipliers; the other losses fall.
        if objective.is_none() {
            let (first, last) = (cpu_losses[0].sum(), cpu_losses[steps - 1].sum());
            assert!(last < first, "{what}: the loss falls ({first} to {last})");
        }
    }
}

/// The kernels of the objectives without multipliers and the anchor biases' Adam against the CPU
/// engine: `roc_auc_pairs` against `roc_auc_surrogate` and `f_beta_terms` + `f_beta_gradient`
/// against `f_beta_bound` (both surrogates; 301 examples, not a multiple of the workgroup size;
/// also a batch without positives), and adam.wgsl at offsets (the biases after the multipliers in
/// one buffer, their gradients in another) against `AdamVector` over three steps.
pub async fn objective_pairwise_f_beta_and_bias_adam_kernels(gpu: &Gpu) {
    let mut rng = Rng::new(5);
    let n = 301;
    for (surrogate, positive_rate) in [
        (Surrogate::Log, 0.2),
        (Surrogate::Hinge, 0.3),
        (Surrogate::Log, 0.0),
    ] {
        let what = format!("{surrogate} surrogate, positive rate {positive_rate}");
        let labels: Vec<f32> = (0..n)
            .map(|_| (rng.uniform() < positive_rate) as u8 as f32)
            .collect();
        let logits: Vec<f32> = random(n, &mut rng)
            .iter()
            .zip(&labels)
            .map(|(f, y)| 1.5 * f + y)
            .collect();
        let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
        let code = match surrogate {
            Surrogate::Hinge => 0,
            Surrogate::Log => 1,
        };
        let params = |scale: f32| ObjectiveParams {
            n: n as u32,
            surrogate: code,
            scale,
            ..Default::default()
        };
        let (g_logits, g_labels) = (
            gpu.buffer_with("logits", &logits),
            gpu.buffer_with("labels", &labels),
        );

        // AUC-ROC: the pairwise surrogate, its gradient and the loss (sum of the shares).
        let mut cpu_grad = vec![0f32; n];
        roc_auc_surrogate(surrogate, &logits, &labels, &mut cpu_grad);
        let cpu_loss =
            roc_auc_surrogate(surrogate, &wide(&logits), &wide(&labels), &mut vec![0.0; n]);
        let positives = labels.iter().filter(|&&y| y > 0.5).count();
        let pairs = positives * (n - positives);
        let scale = if pairs == 0 { 0.0 } else { 0.5 / pairs as f32 };
        let (g_grad, g_partial, g_sum) = (
            gpu.buffer("dlogits", n),
            gpu.buffer("partial", 3 * n),
            gpu.buffer("sum", 3),
        );
        let pairs_slot = gpu.slot(
            Kernel::RocAucPairs,
            [
                Some(&g_logits),
                Some(&g_labels),
                None,
                Some(&g_grad),
                Some(&g_partial),
            ],
        );
        let sum = gpu.slot(
            Kernel::ReduceSum,
            [Some(&g_partial), None, None, Some(&g_sum), None],
        );
        gpu.set_params(&pairs_slot, &params(scale));
        gpu.set_params(&sum, &ReduceParams::new(n, 0, 0));
        run(gpu, |pass| {
            gpu.record(pass, &pairs_slot, (groups_of(n, WORKGROUP), 1, 1));
            gpu.record(pass, &sum, (1, 1, 1));
        })
        .await;
        assert_close(
            &read(gpu, &g_grad, n).await,
            &cpu_grad,
            1e-7,
            1e-4,
            &format!("roc-auc, {what}: dlogits"),
        );
        assert_close(
            &read(gpu, &g_sum, 1).await,
            &[cpu_loss as f32],
            1e-6,
            1e-4,
            &format!("roc-auc, {what}: loss"),
        );

        // F-beta (beta 1.5): the three sums, then the gradient and the loss.
        let beta = 1.5;
        let mut cpu_grad = vec![0f32; n];
        f_beta_bound(surrogate, beta, &logits, &labels, &mut cpu_grad);
        let cpu_loss = f_beta_bound(
            surrogate,
            beta,
            &wide(&logits),
            &wide(&labels),
            &mut vec![0.0; n],
        );
        let (g_sums, g_out) = (gpu.buffer("sums", 3), gpu.buffer("loss", 1));
        let terms = gpu.slot(
            Kernel::FBetaTerms,
            [
                Some(&g_logits),
                Some(&g_labels),
                None,
                None,
                Some(&g_partial),
            ],
        );
        let rows = gpu.slot(
            Kernel::ReduceSum,
            [Some(&g_partial), None, None, Some(&g_sums), None],
        );
        let gradient = gpu.slot(
            Kernel::FBetaGradient,
            [
                Some(&g_logits),
                Some(&g_labels),
                Some(&g_sums),
                Some(&g_grad),
                Some(&g_out),
            ],
        );
        let b2 = (beta * beta) as f32;
        gpu.set_params(&terms, &params(b2));
        gpu.set_params(&rows, &ReduceParams::new(n, 0, 0));
        gpu.set_params(&gradient, &params(b2));
        run(gpu, |pass| {
            gpu.record(pass, &terms, (groups_of(n, WORKGROUP), 1, 1));
            gpu.record(pass, &rows, (3, 1, 1));
            gpu.record(pass, &gradient, (groups_of(n, WORKGROUP), 1, 1));
        })
        .await;
        assert_close(
            &read(gpu, &g_grad, n).await,
            &cpu_grad,
            1e-7,
            1e-4,
            &format!("f-beta, {what}: dlogits"),
        );
        assert_close(
            &read(gpu, &g_out, 1).await,
            &[cpu_loss as f32],
            1e-6,
            1e-4,
            &format!("f-beta, {what}: loss"),
        );
    }

    // The anchor biases' Adam: 7 biases at offset 7 of a state buffer (after 7 multipliers, which
    // it must leave alone), their gradients at offset 0 of another buffer followed by other values.
    let k = 7;
    let config = AdamConfig::default();
    let state = random(2 * k, &mut rng);
    let mut biases = state[k..].to_vec();
    let mut cpu_adam = AdamVector::new(k, config);
    let (g_state, g_grad, g_moments) = (
        gpu.buffer_with("state", &state),
        gpu.buffer("gradients", 3 * k),
        gpu.buffer("moments", 2 * k),
    );
    let slot = gpu.slot(
        Kernel::Adam,
        [Some(&g_grad), None, None, Some(&g_state), Some(&g_moments)],
    );
    for step in 1..=3 {
        let grads = random(3 * k, &mut rng);
        cpu_adam.update(&mut biases, &grads[..k]);
        gpu.queue
            .write_buffer(&g_grad, 0, bytemuck::cast_slice(&grads));
        gpu.set_params(&slot, &adam_params(&config, step, k, 0, k));
        run(gpu, |pass| gpu.record(pass, &slot, (1, 1, 1))).await;
    }
    let after = read(gpu, &g_state, 2 * k).await;
    assert_eq!(after[..k], state[..k], "the multipliers are not Adam's");
    assert_close(&after[k..], &biases, 1e-6, 1e-5, "anchor biases' Adam");
}

/// Every objective (log-loss, AUC-PR with 5 anchors, recall at precision, precision at recall, TPR
/// at FPR, AUC-ROC, F-beta) trained `steps` steps on the GPU ([`GpuObjectiveTrainer`]) and on the
/// CPU engine ([`CpuTrainer`]) from the same initial weights, multipliers and batches (10 batches of
/// 50 to 61 examples, 20% positives, cycled), with the default dual rate (1000 x lr): the per-step
/// loss curve (read back every 16 steps), the multipliers and anchor biases, and the weights at the
/// end agree within 2e-3 + 2e-2 relative.
pub async fn objective_training_steps(gpu: &Arc<Gpu>, steps: usize) {
    let mut rng = Rng::new(6);
    let n_in = 7;
    let data: Vec<(Vec<f32>, Vec<f32>)> = (0..10)
        .map(|b| {
            let n = 50 + b;
            let labels: Vec<f32> = (0..n).map(|_| (rng.uniform() < 0.2) as u8 as f32).collect();
            let mut inputs = random(n * n_in, &mut rng);
            // A signal to learn: the first feature tells the classes apart.
            for (row, &y) in inputs.chunks_mut(n_in).zip(&labels) {
                row[0] += 1.5 * y;
            }
            (inputs, labels)
        })
        .collect();
    for objective in [
        Objective::LogLoss,
        Objective::AucPr { anchors: 5 },
        Objective::RecallAtPrecision(0.8),
        Objective::PrecisionAtRecall(0.9),
        Objective::TprAtFpr(0.05),
        Objective::RocAuc,
        Objective::FBeta(1.0),
    ] {
        let what = objective.to_string();
        let config = ObjectiveConfig {
            objective,
            adam: AdamConfig {
                lr: 3e-3,
                ..Default::default()
            },
            ..Default::default()
        };
        let model = Mlp::<f32>::new(n_in, &[12, 6], 9);
        let mut cpu = CpuTrainer::new(model.clone(), &config);
        let mut on_gpu = GpuObjectiveTrainer::new(gpu.clone(), &model, &config, 64).unwrap();
        let (mut cpu_losses, mut gpu_losses) = (Vec::new(), Vec::new());
        for step in 0..steps {
            let (x, y) = &data[step % data.len()];
            cpu_losses.push(cpu.step(x, y));
            on_gpu.step(x, y).await.unwrap();
            if (step + 1) % 16 == 0 || step + 1 == steps {
                gpu_losses.extend(on_gpu.read_losses().await.unwrap());
            }
        }
        assert_close(
            &gpu_losses,
            &cpu_losses,
            2e-3,
            2e-2,
            &format!("{what}: loss curve"),
        );
        let params = on_gpu.params().await.unwrap();
        assert_close(
            &params.lambdas,
            &cpu.params.lambdas,
            2e-3,
            2e-2,
            &format!("{what}: multipliers"),
        );
        assert_close(
            &params.biases,
            &cpu.params.biases,
            2e-3,
            2e-2,
            &format!("{what}: anchor biases"),
        );
        let trained = on_gpu.model().await.unwrap();
        let (mut g, mut c) = (trained.parameters(), cpu.model.parameters());
        if objective == Objective::RocAuc {
            // A pairwise loss does not depend on the output bias: its gradient is zero up to
            // rounding, and Adam turns that rounding into lr-sized steps on either engine.
            g.pop();
            c.pop();
        }
        assert_close(
            &g,
            &c,
            2e-3,
            2e-2,
            &format!("{what}: weights after {steps} steps"),
        );
        if objective.n_lambdas() > 0 {
            assert!(
                cpu.params.lambdas.iter().any(|&l| (l - 1.0).abs() > 1e-2),
                "{what}: the multipliers moved from 1: {:?}",
                cpu.params.lambdas
            );
        }
        if objective.n_biases() > 0 {
            assert!(
                cpu.params.biases.iter().any(|b| b.abs() > 1e-3),
                "{what}: the biases trained"
            );
        }
        let early: f32 = cpu_losses[..10].iter().sum();
        let late: f32 = cpu_losses[steps - 10..].iter().sum();
        if objective.n_lambdas() == 0 {
            assert!(
                late < early,
                "{what}: the loss falls ({early} over the first 10 steps, {late} over the last)"
            );
        }
    }
}

/// The measured choice of product kernels: a device opened with `start` and then measured
/// records both kinds' times, keeps the faster, and (when that is not `start`) rebuilds the
/// products' pipelines, which must then still match the CPU engine.
pub async fn measured_products(start: Products) {
    let gpu = Gpu::open(AdapterChoice::Any, Some(start)).await.unwrap();
    let mut gpu = Arc::try_unwrap(gpu)
        .ok()
        .expect("a freshly opened device has one owner");
    assert!(gpu.products_ms.is_empty(), "nothing measured yet");
    gpu.choose_products().await.unwrap();
    let times = gpu.products_ms.clone();
    assert_eq!(times.len(), 2, "{times:?}");
    assert!(
        times.iter().all(|(_, ms)| ms.is_finite() && *ms >= 0.0),
        "{times:?}"
    );
    let faster = if times[1].1 < times[0].1 {
        times[1].0
    } else {
        times[0].0
    };
    assert_eq!(gpu.products, faster, "{times:?}");
    dense_kernels(&gpu).await;
}

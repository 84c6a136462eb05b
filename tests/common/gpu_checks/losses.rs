//! The ranking losses' kernels, the reduction and Adam.

use super::*;

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
                distillrank::model::loss::hard_targets(kind, y).into_owned()
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
        norms: Vec::new(),
        attention: None,
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

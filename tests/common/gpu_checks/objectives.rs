//! The global objectives' kernels and a classifier's training steps.

use super::*;

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

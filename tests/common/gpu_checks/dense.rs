//! The dense products (every form) and the measured choice between them.

use super::*;

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

/// The dropout kernel: its mask and scale are the CPU engine's ([`Mask::apply`]), bit for bit,
/// on the forward output and on the gradient alike.
pub async fn dropout_kernel(gpu: &Gpu) {
    use distillrank::model::dropout::{Dropout, Mask};
    let mut rng = Rng::new(4);
    for (n, rate, step, layer) in [
        (1000usize, 0.3, 1u64, 0usize),
        (37 * 19, 0.5, 12, 2),
        (5, 0.9, 3, 1),
        (300, 0.0, 2, 0),
    ] {
        let values = random(n, &mut rng);
        let mask = Mask::of(&Dropout { rate, seed: 77 }, step, layer);
        let mut expected = values.clone();
        mask.apply(&mut expected);
        let buffer = gpu.buffer_with("dropout", &values);
        let slot = gpu.slot(Kernel::Dropout, [None, None, None, Some(&buffer), None]);
        gpu.set_params(
            &slot,
            &DenseParams {
                rows: n as u32,
                cols: mask.scale.to_bits(),
                inner: mask.threshold,
                relu: mask.key,
            },
        );
        run(gpu, |pass| {
            gpu.record(pass, &slot, (groups_of(n, WORKGROUP), 1, 1))
        })
        .await;
        let got = read(gpu, &buffer, n).await;
        let differ = got
            .iter()
            .zip(&expected)
            .filter(|(g, e)| g.to_bits() != e.to_bits())
            .count();
        assert_eq!(
            differ, 0,
            "dropout {rate} at step {step}: {differ} of {n} differ"
        );
    }
}

/// The layer normalisation kernels (`shaders/norm.wgsl`) against the CPU engine's
/// [`layer_norm_forward`] and [`layer_norm_backward`]: the output after the ReLU, each row's mean
/// and 1/std, the gradient w.r.t. the pre-activations and the gain's and shift's gradients. Rows
/// and units not multiples of the workgroup, a one-unit layer (its rows normalise to 0: the
/// output is the shift), and rows of equal values (variance 0: only EPS divides).
pub async fn layer_norm_kernels(gpu: &Gpu) {
    let mut rng = Rng::new(6);
    for (b, n, constant_rows) in [
        (37usize, 19usize, false),
        (130, 64, true),
        (5, 1, false),
        (1, 256, false),
    ] {
        let what = format!("layer norm {b}x{n}");
        let mut pre = random(b * n, &mut rng);
        if constant_rows {
            pre[..n].iter_mut().for_each(|v| *v = 0.25);
        }
        let norm = LayerNorm {
            gain: random(n, &mut rng).iter().map(|g| 1.0 + g).collect(),
            shift: random(n, &mut rng),
        };
        let (mut out, mut stats) = (vec![0f32; b * n], vec![0f32; 2 * b]);
        layer_norm_forward(&mut out, &mut stats, &pre, &norm);
        // The gradient w.r.t. the output, through the ReLU's mask as the backward pass gives it.
        let dout: Vec<f32> = random(b * n, &mut rng)
            .iter()
            .zip(&out)
            .map(|(&d, &o)| if o > 0.0 { d } else { 0.0 })
            .collect();
        let (mut dpre, mut dgain, mut dshift) = (vec![0f32; b * n], vec![0f32; n], vec![0f32; n]);
        layer_norm_backward(
            &mut dpre,
            &mut dgain,
            &mut dshift,
            &dout,
            &pre,
            &stats,
            &norm,
        );

        let params: Vec<f32> = norm.gain.iter().chain(&norm.shift).copied().collect();
        let (g_pre, g_params, g_dout) = (
            gpu.buffer_with("pre", &pre),
            gpu.buffer_with("gain and shift", &params),
            gpu.buffer_with("dout", &dout),
        );
        let (g_out, g_stats, g_dpre, g_dparams) = (
            gpu.buffer("out", b * n),
            gpu.buffer("stats", 2 * b),
            gpu.buffer("dpre", b * n),
            gpu.buffer("dparams", 2 * n),
        );
        let forward = gpu.slot(
            Kernel::LayerNormForward,
            [
                Some(&g_pre),
                Some(&g_params),
                None,
                Some(&g_out),
                Some(&g_stats),
            ],
        );
        let backward_input = gpu.slot(
            Kernel::LayerNormBackwardInput,
            [
                Some(&g_dout),
                Some(&g_params),
                Some(&g_pre),
                Some(&g_dpre),
                Some(&g_stats),
            ],
        );
        let backward_params = gpu.slot(
            Kernel::LayerNormBackwardParams,
            [
                Some(&g_dout),
                None,
                Some(&g_pre),
                Some(&g_dparams),
                Some(&g_stats),
            ],
        );
        let rows = DenseParams {
            rows: b as u32,
            cols: n as u32,
            ..Default::default()
        };
        for slot in [&forward, &backward_input, &backward_params] {
            gpu.set_params(slot, &rows);
        }
        run(gpu, |pass| {
            gpu.record(pass, &forward, (groups_of(b, 64), 1, 1));
            gpu.record(pass, &backward_input, (groups_of(b, 64), 1, 1));
            gpu.record(pass, &backward_params, (groups_of(n, 64), 1, 1));
        })
        .await;
        assert_close(
            &read(gpu, &g_out, b * n).await,
            &out,
            1e-5,
            1e-4,
            &format!("{what} forward"),
        );
        assert_close(
            &read(gpu, &g_stats, 2 * b).await,
            &stats,
            1e-5,
            1e-4,
            &format!("{what} statistics"),
        );
        assert_close(
            &read(gpu, &g_dpre, b * n).await,
            &dpre,
            1e-4,
            1e-3,
            &format!("{what} dpre"),
        );
        let dparams: Vec<f32> = dgain.iter().chain(&dshift).copied().collect();
        assert_close(
            &read(gpu, &g_dparams, 2 * n).await,
            &dparams,
            1e-4,
            1e-4,
            &format!("{what} dgain, dshift"),
        );
        assert!(dpre.iter().all(|v| v.is_finite()), "{what}");
        if n == 1 {
            // A one-unit row is its own mean: the output is the shift, through the ReLU.
            assert!(out.iter().all(|&v| v == norm.shift[0].max(0.0)), "{what}");
        } else {
            assert!(out.iter().any(|&v| v > 0.0), "{what}");
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

/// The listwise family's kernels (`shaders/attention.wgsl`, with the d -> 3d projection as a dense
/// layer) against the CPU engine's attention, one pass each way: the logits of the forward pass
/// and every gradient of the backward pass from the same dlogits, each projection's and each
/// layer's. Groups of 1 to 60 documents (a one-document query attends to itself alone), one head
/// and several, with and without layer normalisation.
pub async fn attention_kernels(gpu: &Arc<Gpu>) {
    use distillrank::cpu::mlp::Activations;
    use distillrank::gpu::mlp::GpuMlp;
    let mut rng = Rng::new(12);
    let n_in = 7;
    let offsets = vec![0usize, 1, 6, 9, 21, 81, 83];
    let n = *offsets.last().unwrap();
    for (heads, norm) in [(1, Norm::None), (4, Norm::None), (2, Norm::Layer)] {
        let what = format!("attention, {heads} heads, norm {norm:?}");
        let mut model = Mlp::<f32>::new(n_in, &[16, 8], 3)
            .with_norm(norm)
            .with_attention(heads, 3);
        for a in model.attention.iter_mut() {
            for p in [&mut a.query, &mut a.key, &mut a.value] {
                p.bias = random(p.bias.len(), &mut rng);
            }
        }
        let x = random(n * n_in, &mut rng);
        let dlogits = random(n, &mut rng);
        let mut acts = Activations::default();
        let logits = model
            .forward_training(&x, &offsets, &mut acts, None)
            .to_vec();
        let mut grads = model.zero_gradients();
        model.backward(&x, &acts, &dlogits, &mut grads);

        let mut mlp = GpuMlp::new(gpu.clone(), &model, AdamConfig::default(), n, 0).unwrap();
        mlp.start_step(&x, n).unwrap();
        mlp.set_groups(&offsets);
        run(gpu, |pass| mlp.record_forward_training(pass, n)).await;
        let got = read(gpu, mlp.logits(), n).await;
        assert_close(&got, &logits, 1e-4, 1e-3, &format!("{what}: logits"));
        gpu.queue
            .write_buffer(mlp.dlogits(), 0, bytemuck::cast_slice(&dlogits));
        run(gpu, |pass| mlp.record_backward(pass, n)).await;
        for (l, (dw, db)) in mlp.gradients().await.unwrap().iter().enumerate() {
            assert_close(
                dw,
                &grads.weight[l],
                1e-4,
                1e-3,
                &format!("{what}: layer {l} dweight"),
            );
            assert_close(
                db,
                &grads.bias[l],
                1e-4,
                1e-3,
                &format!("{what}: layer {l} dbias"),
            );
        }
        let attention = mlp.attention_gradients().await.unwrap().unwrap();
        for (t, (name, got)) in [
            ("query weight", &attention.query.weight),
            ("query bias", &attention.query.bias),
            ("key weight", &attention.key.weight),
            ("key bias", &attention.key.bias),
            ("value weight", &attention.value.weight),
            ("value bias", &attention.value.bias),
        ]
        .into_iter()
        .enumerate()
        {
            assert_close(
                got,
                &grads.attention[t],
                1e-4,
                1e-3,
                &format!("{what}: {name}"),
            );
        }
    }
}

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

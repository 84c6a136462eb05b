//! The GPU kernel checks of tests/common/gpu_checks.rs in a real browser, on WebGPU:
//! `wasm-pack test --headless --chrome` (see `cargo xtask test`, which sets it up).

#![cfg(target_arch = "wasm32")]

mod common;

use common::gpu_checks;
use distillrank::gpu::{AdapterChoice, Gpu};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

async fn gpu() -> std::sync::Arc<Gpu> {
    Gpu::new(AdapterChoice::Any)
        .await
        .expect("WebGPU: start the browser with --enable-unsafe-webgpu")
}

#[wasm_bindgen_test]
async fn dense_kernels_match_the_cpu_engine() {
    gpu_checks::dense_kernels(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn the_dropout_kernel_matches_the_cpu_engine() {
    gpu_checks::dropout_kernel(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn the_layer_norm_kernels_match_the_cpu_engine() {
    gpu_checks::layer_norm_kernels(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn the_attention_kernels_match_the_cpu_engine() {
    gpu_checks::attention_kernels(&gpu().await).await;
}

/// Both kinds of product kernels, whichever the adapter would choose.
#[wasm_bindgen_test]
async fn tiled_and_direct_product_kernels_match_the_cpu_engine() {
    use distillrank::gpu::Products;
    for products in [Products::Tiled, Products::Direct] {
        let gpu = Gpu::open(AdapterChoice::Any, Some(products)).await.unwrap();
        gpu_checks::dense_kernels(&gpu).await;
    }
}

/// Opened without a choice, a software adapter (SwiftShader) measures both kinds of product
/// kernels and keeps the faster.
#[wasm_bindgen_test]
async fn a_software_adapter_measures_both_kinds_of_product_kernels() {
    let gpu = gpu().await;
    if gpu.is_software() {
        let times = &gpu.products_ms;
        assert_eq!(times.len(), 2, "{times:?}");
        let faster = if times[1].1 < times[0].1 {
            times[1].0
        } else {
            times[0].0
        };
        assert_eq!(gpu.products, faster, "{times:?}");
    } else {
        assert!(gpu.products_ms.is_empty());
    }
}

#[wasm_bindgen_test]
async fn loss_kernels_match_the_cpu_engine() {
    gpu_checks::loss_kernels(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn objective_kernels_match_the_cpu_engine() {
    gpu_checks::objective_kernels(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn pairwise_f_beta_and_anchor_bias_adam_kernels_match_the_cpu_engine() {
    gpu_checks::objective_pairwise_f_beta_and_bias_adam_kernels(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn every_objective_trains_on_webgpu_step_for_step_like_the_cpu_engine() {
    gpu_checks::objective_training_steps(&gpu().await, 30).await;
}

#[wasm_bindgen_test]
async fn reduction_and_adam_match_the_cpu() {
    gpu_checks::reduction_and_adam(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn gpu_training_steps_follow_the_cpu_loss_curve() {
    gpu_checks::training_steps(&gpu().await, 50).await;
}

/// A small comparison trained in the browser follows the native CPU engine's loss curve
/// (tests/data/reference_curve.json): the CPU engine compiled to wasm closely (the same code, with
/// other floating-point contractions), WebGPU within the kernels' tolerance.
#[wasm_bindgen_test]
async fn browser_training_follows_the_native_loss_curve() {
    use common::reference_run::{assert_follows, curve, parse, FIXTURE};
    use distillrank::engine::Engine;
    let native = parse(FIXTURE);
    let wasm_cpu = curve(Engine::Cpu).await;
    assert_follows(&wasm_cpu, &native, 1e-6, 1e-4, "CPU engine in wasm");
    let webgpu = curve(Engine::Gpu(gpu().await)).await;
    assert_follows(&webgpu, &native, 2e-3, 2e-2, "WebGPU");
}

/// The page's pool shares one copy of a comparison's data: the prepared splits laid out in a
/// SharedArrayBuffer read back as they were, row by row through the models' view, and a
/// comparison trained from them gives the same curve as from the data they were laid out from,
/// on both engines, without copying x or z into the instance.
#[wasm_bindgen_test]
async fn shared_data_train_as_the_data_they_were_laid_out_from() {
    use common::reference_run::{curve_on, prepared};
    use distillrank::data::inputs::Inputs;
    use distillrank::data::prepare::{FeatureView, RankingSet};
    use distillrank::data::prepared_cache::{from_shared, to_shared};
    use distillrank::engine::Engine;
    let local = prepared();
    let buffer = to_shared(&local, serde_json::json!({"kept": "as given"})).unwrap();
    let (shared, extra) = from_shared(&buffer).unwrap();
    assert_eq!(extra["kept"], "as given");
    fn splits(p: &distillrank::data::prepare::Prepared) -> [Option<&RankingSet>; 3] {
        [Some(&p.train), Some(&p.valid), p.test.as_ref()]
    }
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (a, b) in splits(&local).into_iter().zip(splits(&shared)) {
        let (a, b) = (a.unwrap(), b.unwrap());
        assert!(b.regular.is_outside() && b.privileged.is_outside());
        for view in [
            FeatureView::Regular,
            FeatureView::Privileged,
            FeatureView::Both,
        ] {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            Inputs::of(a, view).append_rows(0..a.n_docs(), &mut x);
            Inputs::of(b, view).append_rows(0..b.n_docs(), &mut y);
            assert_eq!(bits(&x), bits(&y), "{view:?}");
            // A batch's groups, one at a time, as training gathers them.
            let group = b.group(b.n_groups() / 2);
            let mut rows = Vec::new();
            Inputs::of(b, view).append_rows(group.clone(), &mut rows);
            let width = Inputs::of(a, view).width();
            assert_eq!(
                bits(&rows),
                bits(&x[group.start * width..group.end * width])
            );
        }
        assert_eq!(
            (
                &a.labels,
                &a.grades,
                &a.group_offsets,
                &a.positive_group,
                &a.qids
            ),
            (
                &b.labels,
                &b.grades,
                &b.group_offsets,
                &b.positive_group,
                &b.qids
            )
        );
    }
    assert_eq!(
        curve_on(&shared, Engine::Cpu).await,
        curve_on(&local, Engine::Cpu).await
    );
    let gpu = Engine::Gpu(gpu().await);
    assert_eq!(
        curve_on(&shared, gpu.clone()).await,
        curve_on(&local, gpu).await
    );
    // Training read rows out of the buffer: it never copied a whole matrix in.
    for set in splits(&shared).into_iter().flatten() {
        assert!(set.regular.is_outside() && set.privileged.is_outside());
    }
}

/// The global objectives' examples travel the same way: laid out in a SharedArrayBuffer, read
/// back as they were, and an objective trained from them gives what it gives from the examples
/// they were laid out from, without copying x into the instance.
#[wasm_bindgen_test]
async fn shared_examples_train_as_the_examples_they_were_laid_out_from() {
    use distillrank::engine::Engine;
    use distillrank::model::objective::{Config, Objective};
    use distillrank::objectives::data::{synthetic, BinarySplits, SynthBinaryOptions};
    use distillrank::objectives::experiment::compare_async;
    let local = synthetic(&SynthBinaryOptions {
        train: 600,
        valid: 300,
        test: 300,
        ..SynthBinaryOptions::default()
    })
    .unwrap();
    let shared = BinarySplits::from_shared(&local.to_shared().unwrap()).unwrap();
    assert_eq!(shared.description, local.description);
    for (a, b) in [
        (&local.train, &shared.train),
        (&local.valid, &shared.valid),
        (&local.test, &shared.test),
    ] {
        assert!(b.x.is_outside());
        assert_eq!((a.n_features, &a.y), (b.n_features, &b.y));
        let (mut x, mut y) = (Vec::new(), Vec::new());
        a.inputs().append_rows(0..a.len(), &mut x);
        b.inputs().append_rows(0..b.len(), &mut y);
        assert_eq!(x, y);
        assert_eq!(b.gather(&[3, 1]), a.gather(&[3, 1]));
    }
    let config = Config {
        widths: vec![8],
        epochs: 2,
        ..Config::default()
    };
    async fn run(splits: &BinarySplits, config: &Config) -> String {
        let objectives = [Objective::LogLoss, Objective::AucPr { anchors: 3 }];
        let runs = compare_async(
            splits,
            &objectives,
            config,
            (1, 0),
            &Engine::Cpu,
            &mut |_, _| {},
        )
        .await
        .unwrap();
        serde_json::to_string(&runs).unwrap()
    }
    let from_local = run(&local, &config).await;
    let from_shared = run(&shared, &config).await;
    let strip = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        // Timings differ from run to run.
        fn drop_seconds(v: &mut serde_json::Value) {
            match v {
                serde_json::Value::Object(m) => {
                    m.remove("seconds");
                    m.values_mut().for_each(drop_seconds);
                }
                serde_json::Value::Array(a) => a.iter_mut().for_each(drop_seconds),
                _ => {}
            }
        }
        drop_seconds(&mut v);
        v
    };
    assert_eq!(strip(&from_shared), strip(&from_local));
    assert!(shared.train.x.is_outside() && shared.test.x.is_outside());
}

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
async fn loss_kernels_match_the_cpu_engine() {
    gpu_checks::loss_kernels(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn objective_kernels_match_the_cpu_engine() {
    gpu_checks::objective_kernels(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn reduction_and_adam_match_the_cpu() {
    gpu_checks::reduction_and_adam(&*gpu().await).await;
}

#[wasm_bindgen_test]
async fn gpu_training_steps_follow_the_cpu_loss_curve() {
    gpu_checks::training_steps(&gpu().await, 50).await;
}

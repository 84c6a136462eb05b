//! Checks of every GPU kernel against the CPU engine, shared by the native tests (tests/gpu.rs,
//! on lavapipe in CI) and the browser tests (tests/web.rs, WebGPU in headless Chromium). Each is an
//! async function over a device; shapes are random and not multiples of the workgroup sizes;
//! groups include one-document groups, all-tied groups and a 1,300-document group.

// Each test binary that includes `common` uses a part of these checks.
#![allow(dead_code, unused_imports)]

mod dense;
mod losses;
mod objectives;
mod training;

pub use dense::*;
pub use losses::*;
pub use objectives::*;
pub use training::*;

use std::sync::Arc;

use distillrank::cpu::adam::{Adam, AdamVector};
use distillrank::cpu::classifier::CpuTrainer;
use distillrank::cpu::loss::{data_loss, teacher_loss};
use distillrank::cpu::mlp::{
    dense_backward, dense_forward, layer_norm_backward, layer_norm_forward,
};
use distillrank::cpu::ranking::CpuRanking;
use distillrank::gpu::losses::{LossBuffers, LossParams, RankingLoss};
use distillrank::gpu::mlp::adam_params;
use distillrank::gpu::objective::GpuObjectiveTrainer;
use distillrank::gpu::params::{AdamParams, DenseParams, ObjectiveParams, ReduceParams};
use distillrank::gpu::shaders::{TILE, WORKGROUP};
use distillrank::gpu::trainer::GpuTrainer;
use distillrank::gpu::{groups_of, AdapterChoice, Gpu, Kernel, Products};
use distillrank::model::adam::AdamConfig;
use distillrank::model::loss::{loss_weights, LossKind, Targets};
use distillrank::model::mlp::{Dense, LayerNorm, Mlp, Norm};
use distillrank::model::objective::Config as ObjectiveConfig;
use distillrank::model::objective::{
    dual_ascent, f_beta_bound, roc_auc_surrogate, Grad, Objective, Params, Surrogate,
};
use distillrank::model::step::RdBatch;
use distillrank::model::step::RdScheme;
use distillrank::model::step::{LossPlan, ObjectivePlan, StepBatch, StepLosses};
use distillrank::rng::Rng;

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

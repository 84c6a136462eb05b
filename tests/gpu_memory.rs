//! The GPU engine's memory while it trains. A WGSL run on lavapipe was seen growing until the OOM
//! killer stopped it. This binary holds one test, so nothing else allocates in its process while
//! it counts what the process allocates.
//!
//! What it found, on Mesa 22.3.6's lavapipe: with the direct product kernels (`dense_vec4.wgsl`,
//! the measured choice on software adapters) and the kernels' parameters in a uniform buffer,
//! resident memory grew by about 440 KB a training step (223 MiB over 512 steps with widths
//! 64-32), and the process's anonymous executable memory with it (from 1 to 7 MiB): lavapipe
//! inlines the values of a uniform buffer into the shader and compiles the kernel again when they
//! change, and one direct kernel that runs for two layers of different shapes in a step saw them
//! change at every dispatch, each time with new machine code. With widths 64 alone (one shape
//! per kernel) nothing grew, nor with the tiled kernels. The parameters now sit in a read-only
//! storage buffer, which lavapipe does not inline: over the same 512 steps the executable memory
//! stays at its size and resident memory grows by 0 MiB under both kernel families.
//!
//! So the test holds the Rust heap and resident memory flat under both kernel families, with the
//! two-hidden-layer model that grew.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use common::engines::gpu;
use distillrank::engine::Trainer;
use distillrank::gpu::trainer::GpuTrainer;
use distillrank::model::adam::AdamConfig;
use distillrank::model::mlp::Mlp;
use distillrank::model::step::{LossPlan, StepBatch};
use distillrank::model::LossKind;
use distillrank::native::block_on;

/// The system allocator, counting the bytes live on the Rust heap.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call goes to the system allocator with the caller's arguments; the counter is a
// side effect that allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        LIVE.fetch_add(size as isize - layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from this allocator with `layout`.
        unsafe { System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// This process's resident memory in bytes (Linux: /proc/self/statm's second field, in pages).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

/// 512 steps after a warm-up, with a teacher and the losses read back as the trainer asks, under
/// each family of product kernels: the Rust heap grows by less than 1 MiB (2 KB a step; a batch's
/// inputs kept a step would be 20 KB), and resident memory by less than 32 MiB (with the
/// parameters in a uniform buffer the direct kernels grew by 223 MiB here on lavapipe).
#[test]
fn training_steps_on_the_gpu_engine_keep_memory_flat() {
    use distillrank::gpu::{AdapterChoice, Gpu, Products};
    if gpu().is_none() {
        return;
    }
    for products in [Products::Tiled, Products::Direct] {
        let gpu = block_on(Gpu::open(AdapterChoice::Any, Some(products))).unwrap();
        let (heap, resident) = grow_over_steps(&gpu, 512);
        eprintln!(
            "over 512 steps on {} with the {products:?} kernels: the Rust heap grew by {} KiB, resident memory by {}",
            gpu.info.name,
            heap >> 10,
            resident.map_or("(not measured here)".into(), |r| format!("{} MiB", r >> 20))
        );
        assert!(
            heap < 1 << 20,
            "{products:?}: the Rust heap grew by {} KiB over 512 steps",
            heap >> 10
        );
        if let Some(resident) = resident {
            assert!(
                resident < 32 << 20,
                "{products:?}: resident memory grew by {} MiB over 512 steps",
                resident >> 20
            );
        }
    }
}

/// Bytes the Rust heap and resident memory grew by over `steps` training steps after a warm-up.
fn grow_over_steps(
    gpu: &std::sync::Arc<distillrank::gpu::Gpu>,
    steps: usize,
) -> (isize, Option<i64>) {
    let (n_in, docs) = (20, 256);
    let model = Mlp::<f32>::new(n_in, &[64, 32], 1);
    let x: Vec<f32> = (0..docs * n_in).map(|i| (i as f32 * 0.37).sin()).collect();
    let y: Vec<f32> = (0..docs).map(|i| (i % 3 == 0) as u8 as f32).collect();
    let teacher: Vec<f32> = (0..docs).map(|i| (i as f32 * 0.11).cos()).collect();
    let offsets: Vec<usize> = (0..=docs / 16).map(|g| g * 16).collect();
    let positive = vec![true; docs / 16];
    let teachers = [teacher.as_slice()];
    let batch = StepBatch {
        inputs: &x,
        labels: &y,
        offsets: &offsets,
        positive: &positive,
        teachers: &teachers,
        ranking_distillation: None,
    };
    let plan = LossPlan::new(LossKind::RankNet, 0.5, 1, None, None, AdamConfig::default());
    let mut trainer = GpuTrainer::new(gpu.clone(), &model, &plan, docs).unwrap();
    let mut run = |steps: usize| {
        for step in 1..=steps {
            block_on(trainer.step(&batch)).unwrap();
            if step % trainer.loss_window() == 0 {
                let losses = block_on(trainer.read_losses()).unwrap();
                assert!(losses.iter().all(|l| l.data.is_finite()));
            }
        }
        block_on(trainer.read_losses()).unwrap();
    };
    run(64);
    let (heap, resident) = (LIVE.load(Ordering::Relaxed), resident_bytes());
    run(steps);
    let resident = match (resident, resident_bytes()) {
        (Some(before), Some(after)) => Some(after as i64 - before as i64),
        _ => None,
    };
    (LIVE.load(Ordering::Relaxed) - heap, resident)
}

//! Both engines, for the tests that train on each and compare: the WGSL engine on any wgpu
//! adapter (lavapipe's software Vulkan here), or none with DISTILLRANK_NO_GPU=1.

// Each test file that declares `mod common` uses its own part of it.
#![allow(dead_code)]

use std::sync::Arc;

use distillrank::engine::Engine;
use distillrank::gpu::{AdapterChoice, Gpu};
use distillrank::pipeline::preparation::PreparedData;
use distillrank::pipeline::Silent;
use distillrank::ranking::distill::Method;
use distillrank::ranking::experiment::SeedRun;
use distillrank::setup::{DataSource, Setup};
use distillrank::stop::Stop;

/// A small comparison of no distillation and PFD on `source` (one seed, two epochs, 8 hidden
/// units), the library's defaults otherwise.
pub fn small_setup(source: DataSource) -> Setup {
    let mut setup = Setup::default();
    setup.data.source = source;
    setup.methods = vec![Method::NoDistillation, Method::Pfd];
    setup.seeds = 1;
    setup.epochs = 2;
    setup.widths = vec![8];
    setup
}

/// The setup's data prepared as every door prepares them, from files on disk.
pub fn prepare(setup: &Setup) -> distillrank::error::Result<PreparedData> {
    distillrank::pipeline::preparation::prepare(
        &setup.data,
        &mut distillrank::pipeline::store::Disk::default(),
        true,
        &mut Silent,
    )
}

/// The WGSL engine's device; None (the test skips) with DISTILLRANK_NO_GPU=1.
pub fn gpu() -> Option<Arc<Gpu>> {
    if std::env::var("DISTILLRANK_NO_GPU").is_ok_and(|v| v == "1") {
        eprintln!("DISTILLRANK_NO_GPU=1: GPU tests skipped");
        return None;
    }
    match distillrank::native::block_on(Gpu::new(AdapterChoice::Any)) {
        Ok(g) => Some(g),
        Err(e) => panic!("{e}\nThe GPU tests need a wgpu adapter: `apt-get install mesa-vulkan-drivers` gives the lavapipe software GPU; DISTILLRANK_NO_GPU=1 skips them."),
    }
}

/// `method` at seed 0 of `setup` on the prepared data, on the CPU engine and on the WGSL engine
/// (None without one).
pub fn fit_on_both(
    data: &PreparedData,
    setup: &Setup,
    method: Method,
) -> Option<(SeedRun, SeedRun)> {
    let gpu = gpu()?;
    let run = |engine: &Engine| {
        distillrank::native::pipeline::fit(
            data,
            setup,
            method,
            0,
            engine,
            &Stop::default(),
            &mut Silent,
        )
        .unwrap()
        .1
    };
    Some((run(&Engine::Cpu), run(&Engine::Gpu(gpu))))
}

/// The setup's data prepared, and its comparison on the CPU engine.
pub fn compare_on_cpu(
    setup: &Setup,
) -> (PreparedData, distillrank::ranking::experiment::Comparison) {
    let data = prepare(setup).unwrap();
    let comparison = distillrank::native::pipeline::compare(
        &data,
        setup,
        &Engine::Cpu,
        &Stop::default(),
        &mut Silent,
    )
    .unwrap();
    (data, comparison)
}

/// MQ2008 Fold1's three files copied into `dir` (so that files written beside them stay there),
/// as a setup's data source.
pub fn mq2008_files_in(dir: &std::path::Path) -> DataSource {
    let fold = std::path::PathBuf::from(super::letor_data::data("mq2008/Fold1"));
    let mut names = Vec::new();
    for file in ["train.txt", "vali.txt", "test.txt"] {
        std::fs::copy(fold.join(file), dir.join(file)).unwrap();
        names.push(dir.join(file).display().to_string());
    }
    DataSource::files(
        names[0].clone(),
        Some(names[1].clone()),
        Some(names[2].clone()),
    )
}

/// The student's data loss is the same on both engines at every epoch (`what` names the case).
pub fn assert_same_data_loss(cpu: &SeedRun, on_gpu: &SeedRun, what: &str) {
    assert_eq!(
        cpu.student.history.len(),
        on_gpu.student.history.len(),
        "{what}"
    );
    for (c, g) in cpu.student.history.iter().zip(&on_gpu.student.history) {
        assert!(
            c.data_loss > 0.0 && (c.data_loss - g.data_loss).abs() < 1e-3 * c.data_loss.max(1.0),
            "{what}: epoch {}: {c:?} vs {g:?}",
            c.epoch
        );
    }
}

//! The native CPU engine reproduces the loss curve of tests/data/reference_curve.json, which the
//! browser tests compare their WebAssembly and WebGPU runs with. After a deliberate change to
//! training, write the file anew with `DISTILLRANK_WRITE_REFERENCE=1 cargo test --test reference_curve`.

#![cfg(not(target_arch = "wasm32"))]

mod common;

use common::reference_run::{assert_follows, curve, parse, FIXTURE};
use distillrank::engine::Engine;

#[test]
fn native_cpu_engine_reproduces_the_reference_curve() {
    let native = distillrank::native::block_on(curve(Engine::Cpu));
    if std::env::var_os("DISTILLRANK_WRITE_REFERENCE").is_some() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/reference_curve.json"
        );
        std::fs::write(path, serde_json::to_string_pretty(&native).unwrap() + "\n").unwrap();
    }
    assert_eq!(
        native.len(),
        3,
        "no-distillation, the PFD teacher and its student"
    );
    assert!(
        native["pfd seed 0"].iter().all(|e| e.1 > 0.0),
        "the PFD student has a teacher loss"
    );
    assert_follows(&native, &parse(FIXTURE), 0.0, 1e-5, "native CPU engine");
}

//! A small comparison (no-distillation and PFD, one seed, three epochs) whose per-epoch losses the
//! native CPU engine pins in `tests/data/reference_curve.json` (tests/reference_curve.rs). The
//! browser tests (tests/web.rs) train the same run in WebAssembly, on the CPU engine and on
//! WebGPU, and compare their curves with the native one.

// Each test file that declares `mod common` uses its own part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;

use distillrank::data::prepare::{prepare, PrepareOptions, Prepared, PrivilegedSplit};
use distillrank::data::synth::{generate_splits, SynthOptions};
use distillrank::engine::Engine;
use distillrank::ranking::distill::Method;
use distillrank::ranking::experiment::{compare_async, CompareConfig};
use distillrank::ranking::train::{Event, TrainConfig};

/// Per model ("pfd seed 0 teacher 1", ...), per epoch: (data loss, teacher loss).
pub type Curve = BTreeMap<String, Vec<(f64, f64)>>;

pub const FIXTURE: &str = include_str!("../data/reference_curve.json");

/// The run's data: small synthetic splits, prepared.
pub fn prepared() -> Prepared {
    let s = generate_splits(&SynthOptions::default(), 60, 20, 20).unwrap();
    let options = PrepareOptions {
        tau_target: 3.5,
        privileged: PrivilegedSplit::Columns(s.privileged_columns.clone()),
        ..PrepareOptions::default()
    };
    prepare(&s.train, Some(&s.valid), Some(&s.test), &options).unwrap()
}

/// The run on `engine`.
pub async fn curve(engine: Engine) -> Curve {
    curve_on(&prepared(), engine).await
}

/// The run on `engine`, from `data` (the run's data, wherever they lie).
pub async fn curve_on(data: &Prepared, engine: Engine) -> Curve {
    let config = CompareConfig {
        methods: vec![Method::NoDistillation, Method::Pfd],
        seeds: 1,
        train: TrainConfig {
            widths: vec![16, 8],
            epochs: 3,
            batch_docs: 256,
            patience: None,
            ..TrainConfig::default()
        },
        engine,
        ..CompareConfig::default()
    };
    let mut curve = Curve::new();
    compare_async(data, &config, &mut |model, event| {
        if let Event::Epoch(log) = event {
            curve
                .entry(model.to_string())
                .or_default()
                .push((log.data_loss, log.teacher_loss));
        }
    })
    .await
    .unwrap();
    curve
}

pub fn parse(json: &str) -> Curve {
    serde_json::from_str(json).expect("reference_curve.json parses")
}

/// Asserts `|got - want| <= atol + rtol * |want|` for every model, epoch and loss term.
pub fn assert_follows(got: &Curve, want: &Curve, atol: f64, rtol: f64, what: &str) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}: models"
    );
    for (model, epochs) in want {
        assert_eq!(got[model].len(), epochs.len(), "{what}: {model}: epochs");
        for (e, (g, w)) in got[model].iter().zip(epochs).enumerate() {
            for (term, g, w) in [("data", g.0, w.0), ("teacher", g.1, w.1)] {
                assert!(
                    (g - w).abs() <= atol + rtol * w.abs(),
                    "{what}: {model}, epoch {}: {term} loss {g} against {w} natively",
                    e + 1
                );
            }
        }
    }
}

//! Adam against the update written out by hand.

#![cfg(not(target_arch = "wasm32"))]

use distillrank::cpu::adam::Adam;
use distillrank::model::adam::AdamConfig;
use distillrank::model::mlp::{Dense, Mlp};

#[test]
fn adam_matches_the_textbook_update() {
    let mut model = Mlp {
        layers: vec![Dense {
            n_in: 2,
            n_out: 1,
            weight: vec![0.5f64, -0.25],
            bias: vec![0.1],
        }],
        norms: Vec::new(),
        attention: None,
    };
    let config = AdamConfig {
        lr: 0.01,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.0,
    };
    let mut adam = Adam::new(&model, config);
    let mut grads = model.zero_gradients();
    let steps = [[0.3, -0.1, 0.2], [0.1, 0.4, -0.5], [-0.2, 0.2, 0.05]];
    let (mut p, mut m, mut v) = ([0.5f64, -0.25, 0.1], [0.0f64; 3], [0.0f64; 3]);
    for (t, g) in steps.iter().enumerate() {
        grads.weight[0] = vec![g[0], g[1]];
        grads.bias[0] = vec![g[2]];
        adam.update(&mut model, &grads);
        for i in 0..3 {
            m[i] = 0.9 * m[i] + 0.1 * g[i];
            v[i] = 0.999 * v[i] + 0.001 * g[i] * g[i];
            let m_hat = m[i] / (1.0 - 0.9f64.powi(t as i32 + 1));
            let v_hat = v[i] / (1.0 - 0.999f64.powi(t as i32 + 1));
            p[i] -= 0.01 * m_hat / (v_hat.sqrt() + 1e-8);
        }
    }
    let got = model.parameters();
    for i in 0..3 {
        assert!(
            (got[i] - p[i]).abs() < 1e-9,
            "parameter {i}: {} vs {}",
            got[i],
            p[i]
        );
    }
}

//! Adam's settings (Kingma and Ba; spec §2 defaults lr 1e-3, betas 0.9 / 0.999, eps 1e-8, and an
//! optional L2 weight decay added to the gradient). The optimiser itself is each engine's
//! ([`crate::cpu::adam`], `shaders/adam.wgsl`).

/// Adam's hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AdamConfig {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
}

impl Default for AdamConfig {
    fn default() -> Self {
        AdamConfig {
            lr: crate::settings::default_of("lr"),
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
        }
    }
}

/// Adam with a setup's learning rate (its `lr` field) and the other parameters' defaults: how
/// the engine-level configs read their `adam` from a setup.
pub fn of_lr<'de, D: serde::Deserializer<'de>>(d: D) -> Result<AdamConfig, D::Error> {
    let lr = <f64 as serde::Deserialize>::deserialize(d)?;
    Ok(AdamConfig {
        lr,
        ..AdamConfig::default()
    })
}

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

/// How the learning rate moves over the epochs. Set on the trainer before each epoch, so both
/// engines step with the same rate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LrSchedule {
    /// `lr` at every epoch.
    #[default]
    Constant,
    /// Cosine decay from `lr` at the first epoch towards 0 after the last (Loshchilov and Hutter's
    /// SGDR without restarts): `lr (1 + cos(pi (epoch - 1) / epochs)) / 2`.
    Cosine,
}

impl LrSchedule {
    /// The rate of `epoch` (1-based) of `epochs`.
    pub fn rate(self, lr: f64, epoch: usize, epochs: usize) -> f64 {
        match self {
            LrSchedule::Constant => lr,
            LrSchedule::Cosine => {
                let done = (epoch.saturating_sub(1)) as f64 / epochs.max(1) as f64;
                lr * 0.5 * (1.0 + libm::cos(std::f64::consts::PI * done))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::LrSchedule;

    #[test]
    fn cosine_starts_at_the_rate_and_decays_towards_zero() {
        assert_eq!(LrSchedule::Cosine.rate(0.01, 1, 10), 0.01);
        assert!((LrSchedule::Cosine.rate(0.01, 6, 10) - 0.005).abs() < 1e-12);
        let last = LrSchedule::Cosine.rate(0.01, 10, 10);
        assert!(last > 0.0 && last < 0.0003, "{last}");
        assert_eq!(LrSchedule::Constant.rate(0.01, 7, 10), 0.01);
    }
}

//! Training throughput, measured the same way by `distillrank bench train` (native) and by the
//! browser benchmark page (`web/bench.html`), where TensorFlow.js trains the same model on the same
//! batches: an MLP with RankNet on fixed batches of `groups` groups of `docs_per_group` documents,
//! forward + loss + backward + Adam per step, after `warmup` steps.

use crate::clock::Instant;
use crate::cpu::adam::Adam;
use crate::cpu::loss::ranknet;
use crate::cpu::mlp::Activations;
use crate::engine::{Engine, RankingTrainer, Trainer};
use crate::error::Result;
use crate::gpu::Gpu;
use crate::model::adam::AdamConfig;
use crate::model::mlp::Mlp;
use crate::model::step::{LossPlan, StepBatch};
use crate::model::LossKind;
use crate::rng::Rng;

/// The model and batch shape of a throughput measurement.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TrainShape {
    pub features: usize,
    pub groups: usize,
    pub docs_per_group: usize,
    pub widths: Vec<usize>,
    /// Heads of attention over each group's documents (0: the MLP).
    #[serde(default)]
    pub attention_heads: usize,
}

impl TrainShape {
    pub fn batch_docs(&self) -> usize {
        self.groups * self.docs_per_group
    }

    /// Checks, before anything is allocated, that the shape's model and batch fit in memory
    /// ([`crate::model::mlp::check_size`], as training checks them): the same refusal, with the
    /// same message, as training the model would give.
    pub fn check(&self) -> Result<()> {
        if self.features == 0 || self.groups == 0 || self.docs_per_group == 0 {
            return Err(crate::error::Error::Config(format!(
                "a benchmark needs features, groups and documents per group (got {}, {}, {})",
                self.features, self.groups, self.docs_per_group
            )));
        }
        let batch = self
            .groups
            .checked_mul(self.docs_per_group)
            .ok_or_else(|| {
                crate::error::Error::Config(format!(
                    "{} groups of {} documents: too many for one batch",
                    self.groups, self.docs_per_group
                ))
            })?;
        if self.widths.contains(&0) {
            return Err(crate::error::Error::Config(
                "hidden widths must be positive".into(),
            ));
        }
        crate::model::attention::check_heads(
            self.attention_heads,
            &self.widths,
            "--attention-heads",
            "give --widths hidden layers, or --attention-heads 0 (the MLP)",
        )?;
        let available = crate::memory::available_memory();
        crate::model::mlp::check_size(
            self.features,
            &self.widths,
            batch,
            available,
            "--widths (or --groups-per-batch, --docs-per-group)",
        )?;
        // The 16 batches it cycles through (features and grades).
        let batches = 16 * batch as u128 * (self.features as u128 + 1) * 4;
        let limit = available.map_or(isize::MAX as u128, |a| a as u128);
        if batches > limit {
            return Err(crate::error::Error::Config(format!(
                "the benchmark's 16 batches of {batch} documents with {} features need {}, more than the {} memory here holds",
                self.features,
                crate::memory::human_bytes(batches),
                crate::memory::human_bytes(limit)
            )));
        }
        Ok(())
    }

    /// Group offsets of every batch.
    pub fn offsets(&self) -> Vec<usize> {
        (0..=self.groups).map(|g| g * self.docs_per_group).collect()
    }

    /// The benchmark's data: its batches, their group offsets and which groups count.
    pub fn data(&self) -> BenchData {
        BenchData {
            batches: self.batches(),
            offsets: self.offsets(),
            positive: vec![true; self.groups],
        }
    }

    /// A RankNet model of this shape (seed 0, Adam's defaults, no teacher) in training on
    /// `engine`: the model every training benchmark steps.
    pub fn ranknet_trainer(&self, engine: &Engine) -> Result<RankingTrainer> {
        let model =
            Mlp::<f32>::new(self.features, &self.widths, 0).with_attention(self.attention_heads, 0);
        let plan = LossPlan::new(LossKind::RankNet, 1.0, 0, None, None, AdamConfig::default());
        engine.ranking_trainer(model, &plan, self.batch_docs(), self.docs_per_group)
    }

    /// 16 distinct batches (features ~ N(0, 1), grades 0..4 uniform, seed 0), cycled.
    pub fn batches(&self) -> Vec<(Vec<f32>, Vec<f32>)> {
        let mut rng = Rng::new(0);
        (0..16)
            .map(|_| {
                let x = (0..self.batch_docs() * self.features)
                    .map(|_| rng.normal() as f32)
                    .collect();
                let y = (0..self.batch_docs())
                    .map(|_| rng.int_range(0, 4) as f32)
                    .collect();
                (x, y)
            })
            .collect()
    }
}

/// How long a throughput measurement runs: `warmup` untimed steps, then timed steps until at
/// least `steps` have run and at least `min_seconds` have passed.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    pub warmup: usize,
    pub steps: usize,
    pub min_seconds: f64,
}

impl Budget {
    /// Exactly `steps` timed steps after `warmup`.
    pub fn steps(steps: usize, warmup: usize) -> Self {
        Budget {
            warmup,
            steps,
            min_seconds: 0.0,
        }
    }
}

/// What a throughput measurement found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Throughput {
    pub docs_per_s: f64,
    pub steps: usize,
    pub batch_docs: usize,
    pub seconds: f64,
    /// The RankNet loss of the last step, to compare with a peer's.
    pub final_loss: f64,
}

/// One phase of the CPU engine's training step: its mean time and, for the matrix products of
/// the forward and backward passes, their floating-point operations per step.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Phase {
    pub phase: &'static str,
    pub ms: f64,
    pub flops: Option<f64>,
}

/// The CPU engine's training step taken apart: the mean milliseconds of the forward pass, the
/// RankNet loss, the backward pass and Adam over `steps` steps after `warmup`, with the products'
/// FLOPs (forward 2 B n_in n_out per layer; backward twice that, less the first layer's input
/// gradient, which is not computed).
pub fn cpu_profile(shape: &TrainShape, steps: usize, warmup: usize) -> Vec<Phase> {
    let batches = shape.batches();
    let offsets = shape.offsets();
    let include = vec![true; shape.groups];
    let mut model = Mlp::<f32>::new(shape.features, &shape.widths, 0);
    let mut adam = Adam::new(&model, AdamConfig::default());
    let mut acts = Activations::default();
    let mut grads = model.zero_gradients();
    let mut dlogits = vec![0f32; shape.batch_docs()];
    let mut totals = [0f64; 4];
    for i in 0..warmup + steps {
        let (x, y) = &batches[i % batches.len()];
        let mut clock = Instant::now();
        let mut lap = |k: usize, clock: &mut Instant| {
            if i >= warmup {
                totals[k] += clock.elapsed();
            }
            *clock = Instant::now();
        };
        let logits = model.forward(x, &mut acts);
        lap(0, &mut clock);
        dlogits.iter_mut().for_each(|d| *d = 0.0);
        ranknet(logits, y, &offsets, &include, 1.0, &mut dlogits);
        lap(1, &mut clock);
        model.backward(x, &acts, &dlogits, &mut grads);
        lap(2, &mut clock);
        adam.update(&mut model, &grads);
        lap(3, &mut clock);
    }
    let b = shape.batch_docs() as f64;
    let layers: Vec<f64> = model
        .layers
        .iter()
        .map(|l| (l.n_in * l.n_out) as f64)
        .collect();
    let forward = 2.0 * b * layers.iter().sum::<f64>();
    let backward = 2.0 * forward - 2.0 * b * layers[0];
    let per_step = |total: f64| 1000.0 * total / steps.max(1) as f64;
    vec![
        Phase {
            phase: "forward",
            ms: per_step(totals[0]),
            flops: Some(forward),
        },
        Phase {
            phase: "loss",
            ms: per_step(totals[1]),
            flops: None,
        },
        Phase {
            phase: "backward",
            ms: per_step(totals[2]),
            flops: Some(backward),
        },
        Phase {
            phase: "adam",
            ms: per_step(totals[3]),
            flops: None,
        },
    ]
}

/// Trains with the WGSL kernels on `gpu`, through the same [`Trainer`] as the CPU engine.
pub async fn gpu(
    gpu: &std::sync::Arc<Gpu>,
    shape: &TrainShape,
    budget: Budget,
) -> Result<Throughput> {
    train(&Engine::Gpu(gpu.clone()), shape, budget).await
}

/// A benchmark's batches, cycled, with what every step of them shares.
pub struct BenchData {
    pub batches: Vec<(Vec<f32>, Vec<f32>)>,
    pub offsets: Vec<usize>,
    pub positive: Vec<bool>,
}

impl BenchData {
    /// Step `i`'s batch: the data loss alone (no teachers).
    pub fn step(&self, i: usize) -> StepBatch<'_> {
        let (x, y) = &self.batches[i % self.batches.len()];
        StepBatch {
            inputs: x,
            labels: y,
            offsets: &self.offsets,
            positive: &self.positive,
            teachers: &[],
            ranking_distillation: None,
        }
    }
}

/// Trains a RankNet model of `shape` on `engine` through its [`Trainer`], reading the losses back
/// every `loss_window` steps and at the end of each round (the wait for the last read-back is
/// inside the timing). After `budget.warmup` untimed steps, rounds of steps run until
/// `budget.min_seconds` have passed: `budget.steps` at first, then twice the last round, so that
/// read-backs stay few where steps are fast.
pub async fn train(engine: &Engine, shape: &TrainShape, budget: Budget) -> Result<Throughput> {
    let data = shape.data();
    let mut trainer = shape.ranknet_trainer(engine)?;
    let mut losses = Vec::new();
    let mut run =
        async |trainer: &mut RankingTrainer, range: std::ops::Range<usize>| -> Result<()> {
            for i in range {
                trainer.step(&data.step(i)).await?;
                if (i + 1) % trainer.loss_window() == 0 {
                    losses.extend(trainer.read_losses().await?);
                }
            }
            losses.extend(trainer.read_losses().await?);
            Ok(())
        };
    run(&mut trainer, 0..budget.warmup).await?;
    let t = Instant::now();
    let mut steps = 0;
    let mut round = budget.steps.max(1);
    loop {
        let first = budget.warmup + steps;
        run(&mut trainer, first..first + round).await?;
        steps += round;
        if t.elapsed() >= budget.min_seconds {
            break;
        }
        round *= 2;
    }
    let seconds = t.elapsed();
    Ok(Throughput {
        docs_per_s: (steps * shape.batch_docs()) as f64 / seconds,
        steps,
        batch_docs: shape.batch_docs(),
        seconds,
        final_loss: losses.last().map_or(f64::NAN, |l| l.data as f64),
    })
}

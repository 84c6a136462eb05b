//! Training throughput, measured the same way by `distillrank bench train` (native) and by the
//! browser benchmark page (`web/bench.html`), where TensorFlow.js trains the same model on the same
//! batches: an MLP with RankNet on fixed batches of `groups` groups of `docs_per_group` documents,
//! forward + loss + backward + Adam per step, after `warmup` steps.

use crate::clock::Instant;
use crate::cpu::adam::{Adam, AdamConfig};
use crate::cpu::loss::{ranknet, LossKind};
use crate::cpu::mlp::{Activations, Mlp};
use crate::error::Result;
use crate::gpu::trainer::GpuTrainer;
use crate::gpu::Gpu;
use crate::rng::Rng;
use crate::step::{LossPlan, StepBatch};

/// The model and batch shape of a throughput measurement.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TrainShape {
    pub features: usize,
    pub groups: usize,
    pub docs_per_group: usize,
    pub widths: Vec<usize>,
}

impl TrainShape {
    pub fn batch_docs(&self) -> usize {
        self.groups * self.docs_per_group
    }

    /// Group offsets of every batch.
    pub fn offsets(&self) -> Vec<usize> {
        (0..=self.groups).map(|g| g * self.docs_per_group).collect()
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

/// Trains on the CPU engine.
pub fn cpu(shape: &TrainShape, steps: usize, warmup: usize) -> Throughput {
    let batches = shape.batches();
    let offsets = shape.offsets();
    let include = vec![true; shape.groups];
    let mut model = Mlp::<f32>::new(shape.features, &shape.widths, 0);
    let mut adam = Adam::new(&model, AdamConfig::default());
    let mut acts = Activations::default();
    let mut grads = model.zero_gradients();
    let mut dlogits = vec![0f32; shape.batch_docs()];
    let mut loss = 0.0;
    let mut step = |i: usize| {
        let (x, y) = &batches[i % batches.len()];
        let logits = model.forward(x, &mut acts);
        dlogits.iter_mut().for_each(|d| *d = 0.0);
        loss = ranknet(logits, y, &offsets, &include, 1.0, &mut dlogits);
        model.backward(x, &acts, &dlogits, &mut grads);
        adam.update(&mut model, &grads);
    };
    (0..warmup).for_each(&mut step);
    let t = Instant::now();
    (warmup..warmup + steps).for_each(&mut step);
    let seconds = t.elapsed();
    Throughput {
        docs_per_s: (steps * shape.batch_docs()) as f64 / seconds,
        steps,
        batch_docs: shape.batch_docs(),
        seconds,
        final_loss: loss as f64,
    }
}

/// Trains with the WGSL kernels, reading the losses back every `loss_window` steps and at the end
/// (the wait for the last read-back is inside the timing).
pub async fn gpu(
    gpu: &std::sync::Arc<Gpu>,
    shape: &TrainShape,
    steps: usize,
    warmup: usize,
) -> Result<Throughput> {
    let batches = shape.batches();
    let offsets = shape.offsets();
    let positive = vec![true; shape.groups];
    let model = Mlp::<f32>::new(shape.features, &shape.widths, 0);
    let plan = LossPlan::new(LossKind::RankNet, 1.0, 0, None, None, AdamConfig::default());
    let mut trainer = GpuTrainer::new(gpu.clone(), &model, &plan, shape.batch_docs())?;
    let mut losses = Vec::new();
    let mut run = async |trainer: &mut GpuTrainer, range: std::ops::Range<usize>| -> Result<()> {
        for i in range {
            let (x, y) = &batches[i % batches.len()];
            trainer
                .step(&StepBatch {
                    inputs: x,
                    labels: y,
                    offsets: &offsets,
                    positive: &positive,
                    teachers: &[],
                    ranking_distillation: None,
                })
                .await?;
            if (i + 1) % trainer.loss_window == 0 {
                losses.extend(trainer.read_losses().await?);
            }
        }
        losses.extend(trainer.read_losses().await?);
        Ok(())
    };
    run(&mut trainer, 0..warmup).await?;
    let t = Instant::now();
    run(&mut trainer, warmup..warmup + steps).await?;
    let seconds = t.elapsed();
    Ok(Throughput {
        docs_per_s: (steps * shape.batch_docs()) as f64 / seconds,
        steps,
        batch_docs: shape.batch_docs(),
        seconds,
        final_loss: losses.last().map_or(f64::NAN, |l| l.data as f64),
    })
}

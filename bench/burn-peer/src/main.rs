//! The Burn peer of `distillrank bench train --backend gpu`: the same MLP (136 inputs, ReLU hidden
//! layers 256-256-128-64, one score), the same RankNet loss (mean over a group's pairs with
//! y_i > y_j of ln(1 + e^-(f_i - f_j)), then the mean over the groups with pairs), Adam at 1e-3
//! (beta 0.9 / 0.999, eps 1e-8), on the same 16 batches of 8 groups x 64 documents
//! (`distillrank::bench::TrainShape::batches`), from the same initial weights
//! (`distillrank::cpu::mlp::Mlp::new(.., 0)`), trained with Burn's wgpu backend (fusion and
//! autotune on, as by default) on the Vulkan adapter.
//!
//! Each step uploads the batch's features and grades, as ours does, and builds the pair mask from
//! the grades on the device. The steps after `--warmup` are timed; the loss of the last step is
//! read back and the device synchronised inside the timing. Prints one JSON object.
//!
//! ```sh
//! cd bench/burn-peer && cargo run --release -- --steps 20 --warmup 2
//! ```

use std::time::Instant;

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::relu;
use burn::tensor::wgpu::WgpuBackend;
use burn::tensor::{Device, Tensor, TensorData};
use distillrank::bench::TrainShape;

#[derive(Module, Debug)]
struct Mlp {
    layers: Vec<Linear>,
}

impl Mlp {
    /// The same He-uniform weights (and zero biases) as distillrank's model from seed 0; both
    /// store a layer's weight as (n_in, n_out), row-major.
    fn from_distillrank(model: &distillrank::cpu::mlp::Mlp<f32>, device: &Device) -> Self {
        let layers = model
            .layers
            .iter()
            .map(|l| Linear {
                weight: Param::from_data(
                    TensorData::new(l.weight.clone(), [l.n_in, l.n_out]),
                    device,
                ),
                bias: Some(Param::from_data(
                    TensorData::new(l.bias.clone(), [l.n_out]),
                    device,
                )),
            })
            .collect();
        Mlp { layers }
    }

    /// (B, n_in) -> (B, 1).
    fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        let last = self.layers.len() - 1;
        self.layers.iter().enumerate().fold(x, |h, (i, layer)| {
            let h = layer.forward(h);
            if i < last {
                relu(h)
            } else {
                h
            }
        })
    }
}

/// RankNet on `groups` groups of `docs` documents: the logits and grades as (groups, docs).
fn ranknet(logits: Tensor<2>, grades: Tensor<2>) -> Tensor<1> {
    let [groups, docs] = logits.dims();
    // d[g, i, j] = f_i - f_j; pair[g, i, j] = 1 where y_i > y_j.
    let d = logits.clone().reshape([groups, docs, 1]) - logits.reshape([groups, 1, docs]);
    let pair = (grades.clone().reshape([groups, docs, 1]) - grades.reshape([groups, 1, docs]))
        .greater_elem(0.0)
        .float();
    // Pairs per group, and the number of groups with pairs.
    let pairs = pair.clone().sum_dims(&[1, 2]); // (groups, 1, 1)
    let with_pairs = pairs.clone().greater_elem(0.0).float().sum().clamp_min(1.0);
    let weight = pairs.clamp_min(1.0).recip() / with_pairs.reshape([1, 1, 1]);
    // softplus(-d) = ln(1 + e^-d), without overflow: max(-d, 0) + ln(1 + e^-|d|).
    let softplus = relu(d.clone().neg()) + d.abs().neg().exp().log1p();
    (softplus * pair * weight).sum()
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .map(|i| {
            args[i + 1]
                .parse()
                .unwrap_or_else(|_| panic!("{name} takes a number"))
        })
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let steps = arg(&args, "--steps", 20);
    let warmup = arg(&args, "--warmup", 2);
    let shape = TrainShape {
        features: 136,
        groups: 8,
        docs_per_group: 64,
        widths: vec![256, 256, 128, 64],
    };
    let batches = shape.batches();
    let (groups, docs) = (shape.groups, shape.docs_per_group);

    let (device, setup) = Device::wgpu_options()
        .graphics_api(WgpuBackend::Vulkan)
        .init_with_setup()
        .expect("a Vulkan adapter");
    let info = setup.adapter.get_info();
    let device = device.autodiff();

    let mut model = Mlp::from_distillrank(
        &distillrank::cpu::mlp::Mlp::new(shape.features, &shape.widths, 0),
        &device,
    );
    let mut optim = AdamConfig::new()
        .with_beta_1(0.9)
        .with_beta_2(0.999)
        .with_epsilon(1e-8)
        .init();

    let mut step = |model: Mlp, i: usize| -> (Mlp, Tensor<1>) {
        let (x, y) = &batches[i % batches.len()];
        let x = Tensor::<2>::from_data(
            TensorData::new(x.clone(), [shape.batch_docs(), shape.features]),
            &device,
        );
        let y = Tensor::<2>::from_data(TensorData::new(y.clone(), [groups, docs]), &device);
        let logits = model.forward(x).reshape([groups, docs]);
        let loss = ranknet(logits, y);
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        (optim.step(1e-3, model, grads), loss)
    };

    for i in 0..warmup {
        let (m, loss) = step(model, i);
        model = m;
        if i + 1 == warmup {
            let _: f32 = loss.into_scalar();
        }
    }
    device.sync().expect("sync");
    let t = Instant::now();
    let mut last = None;
    for i in warmup..warmup + steps {
        let (m, loss) = step(model, i);
        model = m;
        last = Some(loss);
    }
    let final_loss: f32 = last.map_or(f32::NAN, |l| l.into_scalar());
    device.sync().expect("sync");
    let seconds = t.elapsed().as_secs_f64();

    println!(
        "{}",
        serde_json::json!({
            "tool": "burn",
            "backend": "wgpu",
            "graphics_api": format!("{:?}", info.backend),
            "adapter": info.name,
            "docs_per_s": (steps * shape.batch_docs()) as f64 / seconds,
            "steps": steps,
            "batch_docs": shape.batch_docs(),
            "seconds": seconds,
            "final_loss": final_loss,
        })
    );
}

//! The ranking MLP on the GPU: its weights, Adam's moments, activations and gradients, and one
//! dispatch slot per forward, backward and Adam kernel, for batches of up to a fixed number of
//! rows. The ranking trainer ([`super::trainer`]) and the global objectives' trainer put their
//! losses between its forward and backward passes.

use std::sync::Arc;

use super::params::{AdamParams, DenseParams};
use super::shaders::WORKGROUP;
use super::{dense_dispatch, groups_of, Gpu, Kernel, Slot};
use crate::data::inputs::Inputs;
use crate::error::{Error, Result};
use crate::model::dropout::{Dropout, Mask};
use crate::model::AdamConfig;
use crate::model::{Dense, LayerNorm, Mlp};

/// A hidden layer's layer normalisation on the GPU: the dense product writes the
/// pre-activations here, and the normalisation writes the layer's output from them.
struct NormLayer {
    /// The gain (n_out) then the shift (n_out), and their gradients.
    params: wgpu::Buffer,
    dparams: wgpu::Buffer,
    forward: Slot,
    backward_input: Slot,
    backward_params: Slot,
    adam: Slot,
}

struct Layer {
    n_in: usize,
    n_out: usize,
    norm: Option<NormLayer>,
    weight: wgpu::Buffer,
    bias: wgpu::Buffer,
    dweight: wgpu::Buffer,
    dbias: wgpu::Buffer,
    forward: Slot,
    relu_mask: Option<Slot>,
    /// The dropout mask on the output and on its gradient (hidden layers, with dropout).
    dropout: Option<(Slot, Slot)>,
    backward_weight: Slot,
    backward_bias: Slot,
    backward_input: Option<Slot>,
    adam_weight: Slot,
    adam_bias: Slot,
}

impl Layer {
    /// The parameters and workgroups of one of this layer's products over `n` rows.
    fn dispatch(&self, product: Kernel, n: usize) -> (DenseParams, (u32, u32, u32)) {
        // A normalised layer's ReLU follows its normalisation, not its product.
        let relu = self.relu_mask.is_some() && self.norm.is_none();
        dense_dispatch(product, n, self.n_in, self.n_out, relu)
    }
}

/// The MLP on the GPU for batches of up to `max_rows` rows: weights, Adam's moments, the
/// activations and their gradients, and one dispatch slot per forward, backward and Adam kernel.
/// The ranking trainer and the global objectives' trainer put their losses between its forward
/// and backward passes.
pub struct GpuMlp {
    gpu: Arc<Gpu>,
    adam: AdamConfig,
    /// Dropout on the hidden layers in training.
    dropout: Option<Dropout>,
    step: u64,
    max_rows: usize,
    layers: Vec<Layer>,
    /// The model's inputs per row. The input buffer and the first layer may be wider (see
    /// [`padded_inputs`]); the extra columns and weight rows are zeros and stay zeros.
    n_features: usize,
    /// Host rows padded to the first layer's width, reused from step to step.
    padded: Vec<f32>,
    input: wgpu::Buffer,
    /// Output of every layer (the last: the logits).
    acts: Vec<wgpu::Buffer>,
    /// The gradient w.r.t. each output (the last: dL/dlogits, which the loss writes).
    dacts: Vec<wgpu::Buffer>,
    /// The listwise family's attention between the last hidden layer and the output layer.
    attention: Option<GpuAttention>,
}

/// Where a layer's product writes and its backward passes read (`product`: a normalised
/// layer's pre-activations and their gradient, otherwise the layer's output and its gradient),
/// and the layer's output and its gradient (`activation`), which its ReLU and dropout act on.
struct Outputs<'a> {
    product: (&'a wgpu::Buffer, &'a wgpu::Buffer),
    activation: (&'a wgpu::Buffer, &'a wgpu::Buffer),
}

/// One dense layer's buffers and slots: its weights from `dense`, reading `inp`, writing
/// `outputs`, its input's gradient into `dinp` (None: the first layer has none to pass on), with
/// a ReLU when `hidden`, and dropout slots when `dropout`.
#[allow(clippy::too_many_arguments)]
fn layer(
    gpu: &Gpu,
    dense: &Dense<f32>,
    norm: Option<NormLayer>,
    inp: &wgpu::Buffer,
    outputs: Outputs<'_>,
    dinp: Option<&wgpu::Buffer>,
    hidden: bool,
    dropout: bool,
) -> Layer {
    let (product_out, product_dout) = outputs.product;
    let (out, dout) = outputs.activation;
    let weight = gpu.buffer_with("weight", &dense.weight);
    let bias = gpu.buffer_with("bias", &dense.bias);
    let dweight = gpu.buffer("dweight", dense.weight.len());
    let dbias = gpu.buffer("dbias", dense.bias.len());
    // Adam's moments live only in the bind groups of the two Adam slots.
    let moments_weight = gpu.buffer("adam moments (weight)", 2 * dense.weight.len());
    let moments_bias = gpu.buffer("adam moments (bias)", 2 * dense.bias.len());
    Layer {
        n_in: dense.n_in,
        n_out: dense.n_out,
        norm,
        forward: gpu.slot(
            gpu.product_kernel(Kernel::DenseForward, dense.n_in, dense.n_out),
            [
                Some(inp),
                Some(&weight),
                Some(&bias),
                Some(product_out),
                None,
            ],
        ),
        relu_mask: hidden
            .then(|| gpu.slot(Kernel::ReluMask, [None, None, Some(out), Some(dout), None])),
        dropout: dropout.then(|| {
            (
                gpu.slot(Kernel::Dropout, [None, None, None, Some(out), None]),
                gpu.slot(Kernel::Dropout, [None, None, None, Some(dout), None]),
            )
        }),
        backward_weight: gpu.slot(
            gpu.product_kernel(Kernel::DenseBackwardWeight, dense.n_in, dense.n_out),
            [Some(inp), Some(product_dout), None, Some(&dweight), None],
        ),
        backward_bias: gpu.slot(
            Kernel::DenseBackwardBias,
            [Some(product_dout), None, None, Some(&dbias), None],
        ),
        backward_input: dinp.map(|dinp| {
            gpu.slot(
                gpu.product_kernel(Kernel::DenseBackwardInput, dense.n_in, dense.n_out),
                [Some(product_dout), Some(&weight), None, Some(dinp), None],
            )
        }),
        adam_weight: gpu.slot(
            Kernel::Adam,
            [
                Some(&dweight),
                None,
                None,
                Some(&weight),
                Some(&moments_weight),
            ],
        ),
        adam_bias: gpu.slot(
            Kernel::Adam,
            [Some(&dbias), None, None, Some(&bias), Some(&moments_bias)],
        ),
        weight,
        bias,
        dweight,
        dbias,
    }
}

/// The listwise family's attention on the GPU ([`crate::model::Attention`], kernels of
/// `shaders/attention.wgsl`): the query, key and value projections as one dense layer d -> 3d
/// (its weight the three side by side, column blocks of (d, 3d)), the attention, the latent
/// cross, and their backward passes.
struct GpuAttention {
    heads: usize,
    width: usize,
    projection: Layer,
    /// Each document's query (two u32 per row, written per batch), then each (row, head)'s
    /// log-sum-exp.
    aux: wgpu::Buffer,
    /// h ⊙ (1 + a), the output layer's input, and its gradient, which the output layer writes.
    crossed: wgpu::Buffer,
    dcrossed: wgpu::Buffer,
    attend: Slot,
    cross: Slot,
    cross_backward: Slot,
    backward_query: Slot,
    backward_key_value: Slot,
    /// The gradient through the projections added into the last hidden layer's.
    accumulate: Slot,
}

impl GpuAttention {
    /// Buffers and slots for batches of up to `rows` rows, attending over the last hidden
    /// layer's output `hidden` (whose gradient `dhidden` the backward pass writes).
    fn new(
        gpu: &Gpu,
        attention: &crate::model::Attention<f32>,
        hidden: &wgpu::Buffer,
        dhidden: &wgpu::Buffer,
        rows: usize,
    ) -> GpuAttention {
        let d = attention.width();
        let projection = Dense {
            n_in: d,
            n_out: 3 * d,
            weight: (0..d)
                .flat_map(|r| {
                    attention
                        .projections()
                        .into_iter()
                        .flat_map(move |p| p.weight[r * d..(r + 1) * d].iter().copied())
                })
                .collect(),
            bias: attention
                .projections()
                .into_iter()
                .flat_map(|p| p.bias.iter().copied())
                .collect(),
        };
        let qkv = gpu.buffer("queries, keys and values", rows * 3 * d);
        let dqkv = gpu.buffer("query, key and value gradients", rows * 3 * d);
        let gathered = gpu.buffer("attention outputs", rows * d);
        let dgathered = gpu.buffer("attention output gradients", rows * d);
        let projected = gpu.buffer("gradient through the projections", rows * d);
        let aux = gpu.buffer(
            "queries of the documents and log-sum-exps",
            rows * (2 + attention.heads),
        );
        let crossed = gpu.buffer("latent cross", rows * d);
        let dcrossed = gpu.buffer("latent cross gradients", rows * d);
        let outputs = Outputs {
            product: (&qkv, &dqkv),
            activation: (&qkv, &dqkv),
        };
        let projection = layer(
            gpu,
            &projection,
            None,
            hidden,
            outputs,
            Some(&projected),
            false,
            false,
        );
        GpuAttention {
            heads: attention.heads,
            width: d,
            attend: gpu.slot(
                Kernel::Attend,
                [Some(&qkv), None, None, Some(&gathered), Some(&aux)],
            ),
            cross: gpu.slot(
                Kernel::Cross,
                [Some(hidden), Some(&gathered), None, Some(&crossed), None],
            ),
            cross_backward: gpu.slot(
                Kernel::CrossBackward,
                [
                    Some(&dcrossed),
                    Some(&gathered),
                    Some(hidden),
                    Some(dhidden),
                    Some(&dgathered),
                ],
            ),
            backward_query: gpu.slot(
                Kernel::AttendBackwardQuery,
                [
                    Some(&qkv),
                    Some(&dgathered),
                    Some(&gathered),
                    Some(&dqkv),
                    Some(&aux),
                ],
            ),
            backward_key_value: gpu.slot(
                Kernel::AttendBackwardKeyValue,
                [
                    Some(&qkv),
                    Some(&dgathered),
                    Some(&gathered),
                    Some(&dqkv),
                    Some(&aux),
                ],
            ),
            accumulate: gpu.slot(
                Kernel::Accumulate,
                [Some(&projected), None, None, Some(dhidden), None],
            ),
            projection,
            aux,
            crossed,
            dcrossed,
        }
    }

    /// Writes each document's query into `aux` from the batch's group `offsets`, and the
    /// parameters of every slot for `n` rows.
    fn start_batch(&self, gpu: &Gpu, offsets: &[usize]) {
        let n = offsets.last().copied().unwrap_or(0);
        let mut spans = Vec::with_capacity(2 * n);
        for w in offsets.windows(2) {
            for _ in w[0]..w[1] {
                spans.push(f32::from_bits(w[0] as u32));
                spans.push(f32::from_bits(w[1] as u32));
            }
        }
        gpu.queue
            .write_buffer(&self.aux, 0, bytemuck::cast_slice(&spans));
        let params = DenseParams {
            rows: n as u32,
            cols: self.width as u32,
            inner: self.heads as u32,
            relu: 0,
        };
        for slot in [
            &self.attend,
            &self.cross,
            &self.cross_backward,
            &self.backward_query,
            &self.backward_key_value,
            &self.accumulate,
        ] {
            gpu.set_params(slot, &params);
        }
        set_layer_params(gpu, &self.projection, n);
    }

    /// The projections, the attention and the latent cross over `n` rows.
    fn record_forward(&self, gpu: &Gpu, pass: &mut wgpu::ComputePass, n: usize) {
        record_layer_forward(gpu, pass, &self.projection, n);
        gpu.record(pass, &self.attend, (groups_of(n * self.heads, 64), 1, 1));
        gpu.record(
            pass,
            &self.cross,
            (groups_of(n * self.width, WORKGROUP), 1, 1),
        );
    }

    /// From the output layer's input gradient to the last hidden layer's output gradient.
    fn record_backward(&self, gpu: &Gpu, pass: &mut wgpu::ComputePass, n: usize) {
        let elements = (groups_of(n * self.width, WORKGROUP), 1, 1);
        gpu.record(pass, &self.cross_backward, elements);
        let pairs = (groups_of(n * self.heads, 64), 1, 1);
        gpu.record(pass, &self.backward_query, pairs);
        gpu.record(pass, &self.backward_key_value, pairs);
        record_layer_backward(gpu, pass, &self.projection, n);
        gpu.record(pass, &self.accumulate, elements);
    }

    /// The projections read back and split into query, key and value.
    async fn read(&self, gpu: &Gpu) -> Result<crate::model::Attention<f32>> {
        let d = self.width;
        let weight = gpu.read(&self.projection.weight, 3 * d * d).await?;
        let bias = gpu.read(&self.projection.bias, 3 * d).await?;
        Ok(split_projection(self.heads, d, &weight, &bias))
    }

    async fn gradients(&self, gpu: &Gpu) -> Result<crate::model::Attention<f32>> {
        let d = self.width;
        let weight = gpu.read(&self.projection.dweight, 3 * d * d).await?;
        let bias = gpu.read(&self.projection.dbias, 3 * d).await?;
        Ok(split_projection(self.heads, d, &weight, &bias))
    }
}

/// The query, key and value projections of a (d, 3d) weight and a 3d bias laid side by side.
fn split_projection(
    heads: usize,
    d: usize,
    weight: &[f32],
    bias: &[f32],
) -> crate::model::Attention<f32> {
    let block = |p: usize| Dense {
        n_in: d,
        n_out: d,
        weight: weight
            .chunks_exact(3 * d)
            .flat_map(|row| row[p * d..(p + 1) * d].iter().copied())
            .collect(),
        bias: bias[p * d..(p + 1) * d].to_vec(),
    };
    crate::model::Attention {
        heads,
        query: block(0),
        key: block(1),
        value: block(2),
    }
}

/// The parameters of adam.wgsl for Adam step `step` (1-based) over `len` values, the gradient and
/// the parameter at the given offsets into their buffers: both bias corrections folded into lr_t
/// and eps_t, exactly as the CPU engine's Adam.
pub fn adam_params(
    c: &AdamConfig,
    step: u64,
    len: usize,
    grad_offset: usize,
    param_offset: usize,
) -> AdamParams {
    let bias1 = 1.0 - c.beta1.powi(step as i32);
    let bias2 = 1.0 - c.beta2.powi(step as i32);
    AdamParams {
        n: len as u32,
        grad_offset: grad_offset as u32,
        param_offset: param_offset as u32,
        lr_t: (c.lr * bias2.sqrt() / bias1) as f32,
        eps_t: (c.eps * bias2.sqrt()) as f32,
        beta1: c.beta1 as f32,
        beta2: c.beta2 as f32,
        weight_decay: c.weight_decay as f32,
        ..Default::default()
    }
}

/// The width the input buffer and the first layer get for `n_features` inputs: with the direct
/// products, the next multiple of 4, so that the first layer runs their vec4 form too (zero
/// columns in the input, zero rows in the weight: the products are unchanged, the extra rows'
/// gradients are zero and Adam leaves them at zero); otherwise `n_features`.
pub fn padded_inputs(gpu: &Gpu, n_features: usize) -> usize {
    if gpu.products == crate::gpu::Products::Direct {
        n_features.div_ceil(4) * 4
    } else {
        n_features
    }
}

/// Checks, before any buffer is made, that every dispatch of `model`'s training on batches of
/// `rows` rows fits the adapter: the one-dimensional ones (a ReLU mask over a layer's
/// activations, Adam over a layer's weights, one invocation per value, [`WORKGROUP`] per
/// workgroup) within its workgroups per dimension, and each layer's weights within one storage
/// binding. The error names the layer, the count and the limit, and what to change, so that a
/// model too large for the adapter is refused when its trainer is built, not at its first step.
fn check_dispatches(gpu: &Gpu, model: &Mlp<f32>, rows: usize) -> Result<()> {
    let limits = gpu.device.limits();
    let most = limits.max_compute_workgroups_per_dimension as u64;
    let binding = limits.max_storage_buffer_binding_size;
    for (l, layer) in model.layers.iter().enumerate() {
        // The first layer's inputs as the GPU holds them (padded for the direct products).
        let n_in = if l == 0 {
            padded_inputs(gpu, model.n_in())
        } else {
            layer.n_in
        };
        let weights = (n_in as u64) * (layer.n_out as u64);
        let activations = (rows as u64) * (layer.n_out as u64);
        let workgroups = weights.max(activations).div_ceil(WORKGROUP as u64);
        if workgroups > most {
            return Err(Error::Gpu(format!(
                "layer {} ({} -> {} units, batches of {rows} rows) needs {workgroups} workgroups in one dispatch; {} allows {most} per dimension (max_compute_workgroups_per_dimension): choose smaller --widths or --batch-docs, or --backend cpu",
                l + 1,
                layer.n_in,
                layer.n_out,
                gpu.name()
            )));
        }
        if 8 * weights > binding {
            return Err(Error::Gpu(format!(
                "layer {} ({} -> {} units) keeps Adam's two moments in one binding of {} bytes; {} allows {binding} (max_storage_buffer_binding_size): choose smaller --widths, or --backend cpu",
                l + 1,
                layer.n_in,
                layer.n_out,
                8 * weights,
                gpu.name()
            )));
        }
    }
    Ok(())
}

/// The bytes of the largest storage binding that batches of `rows` rows need: the widest layer
/// (or the padded input, or `extra_columns` per-row values) times the rows.
pub fn binding_bytes(gpu: &Gpu, model: &Mlp<f32>, rows: usize, extra_columns: usize) -> u64 {
    // The first layer's inputs as the GPU holds them (padded for the direct products).
    let widest = model
        .layers
        .iter()
        .map(|l| l.n_in.max(l.n_out))
        .chain([padded_inputs(gpu, model.n_in())])
        // The attention's queries, keys and values side by side.
        .chain(model.attention.as_ref().map(|a| 3 * a.width()))
        .max()
        .unwrap_or(1);
    4 * (rows as u64) * (widest.max(extra_columns) as u64)
}

impl GpuMlp {
    /// Adam takes `lr` from the next recorded step on (its parameters are written per step).
    pub fn set_learning_rate(&mut self, lr: f64) {
        self.adam.lr = lr;
    }

    /// Uploads `model` and builds its buffers and slots for batches of up to `max_rows` rows.
    /// `extra_columns`: the widest per-row buffer the caller adds (teachers' logits), so that one
    /// check says when a batch is too large for the adapter.
    pub fn new(
        gpu: Arc<Gpu>,
        model: &Mlp<f32>,
        adam: AdamConfig,
        max_rows: usize,
        extra_columns: usize,
    ) -> Result<Self> {
        Self::with_dropout(gpu, model, adam, None, max_rows, extra_columns)
    }

    /// [`new`](Self::new), training with `dropout` on the hidden layers.
    pub fn with_dropout(
        gpu: Arc<Gpu>,
        model: &Mlp<f32>,
        adam: AdamConfig,
        dropout: Option<Dropout>,
        max_rows: usize,
        extra_columns: usize,
    ) -> Result<Self> {
        let limit = gpu.device.limits().max_storage_buffer_binding_size;
        let n_features = model.n_in();
        let needed = binding_bytes(&gpu, model, max_rows, extra_columns);
        if needed > limit {
            return Err(Error::Gpu(format!(
                "a batch of {max_rows} rows needs {needed} bytes in one storage binding; the adapter allows {limit} (max_storage_buffer_binding_size): use a smaller batch"
            )));
        }
        check_dispatches(&gpu, model, max_rows)?;
        let input = gpu.buffer("inputs", max_rows * padded_inputs(&gpu, n_features));
        let acts: Vec<wgpu::Buffer> = model
            .layers
            .iter()
            .map(|l| gpu.buffer("activations", max_rows * l.n_out))
            .collect();
        let dacts: Vec<wgpu::Buffer> = model
            .layers
            .iter()
            .map(|l| gpu.buffer("activation gradients", max_rows * l.n_out))
            .collect();
        // A normalised layer's pre-activations and their gradient, and its rows' mean and 1/std.
        let pre: Vec<Option<(wgpu::Buffer, wgpu::Buffer, wgpu::Buffer)>> = model
            .layers
            .iter()
            .enumerate()
            .map(|(l, layer)| {
                model.norms.get(l).map(|_| {
                    (
                        gpu.buffer("pre-activations", max_rows * layer.n_out),
                        gpu.buffer("pre-activation gradients", max_rows * layer.n_out),
                        gpu.buffer("layer norm statistics", 2 * max_rows),
                    )
                })
            })
            .collect();
        let last = model.layers.len() - 1;
        let attention = model
            .attention
            .as_ref()
            .map(|a| GpuAttention::new(&gpu, a, &acts[last - 1], &dacts[last - 1], max_rows));
        let mut layers = Vec::new();
        for (l, dense) in model.layers.iter().enumerate() {
            // The first layer's weight (n_in x n_out, row-major) padded with zero rows.
            let n_in = if l == 0 {
                padded_inputs(&gpu, n_features)
            } else {
                dense.n_in
            };
            let mut initial = dense.weight.clone();
            initial.resize(n_in * dense.n_out, 0.0);
            let dense = &Dense {
                n_in,
                n_out: dense.n_out,
                weight: initial,
                bias: dense.bias.clone(),
            };
            let inp = match (&attention, l) {
                (_, 0) => &input,
                (Some(a), l) if l == last => &a.crossed,
                _ => &acts[l - 1],
            };
            // Where the product writes and where its backward passes read the output's gradient:
            // a normalised layer's pre-activations and their gradient, otherwise the output's.
            let (product_out, product_dout) = match &pre[l] {
                Some((pre, dpre, _)) => (pre, dpre),
                None => (&acts[l], &dacts[l]),
            };
            let norm = model
                .norms
                .get(l)
                .zip(pre[l].as_ref())
                .map(|(n, (pre, dpre, stats))| {
                    let values: Vec<f32> = n.gain.iter().chain(&n.shift).copied().collect();
                    let params = gpu.buffer_with("layer norm gain and shift", &values);
                    let dparams = gpu.buffer("layer norm gradients", values.len());
                    let moments = gpu.buffer("adam moments (layer norm)", 2 * values.len());
                    NormLayer {
                        forward: gpu.slot(
                            Kernel::LayerNormForward,
                            [Some(pre), Some(&params), None, Some(&acts[l]), Some(stats)],
                        ),
                        backward_input: gpu.slot(
                            Kernel::LayerNormBackwardInput,
                            [
                                Some(&dacts[l]),
                                Some(&params),
                                Some(pre),
                                Some(dpre),
                                Some(stats),
                            ],
                        ),
                        backward_params: gpu.slot(
                            Kernel::LayerNormBackwardParams,
                            [
                                Some(&dacts[l]),
                                None,
                                Some(pre),
                                Some(&dparams),
                                Some(stats),
                            ],
                        ),
                        adam: gpu.slot(
                            Kernel::Adam,
                            [Some(&dparams), None, None, Some(&params), Some(&moments)],
                        ),
                        params,
                        dparams,
                    }
                });
            let dinp = match (&model.attention, l) {
                (_, 0) => None,
                (Some(_), l) if l == last => attention.as_ref().map(|a| &a.dcrossed),
                _ => Some(&dacts[l - 1]),
            };
            let outputs = Outputs {
                product: (product_out, product_dout),
                activation: (&acts[l], &dacts[l]),
            };
            let hidden = l != last;
            layers.push(layer(
                &gpu,
                dense,
                norm,
                inp,
                outputs,
                dinp,
                hidden,
                hidden && dropout.is_some(),
            ));
        }
        Ok(GpuMlp {
            gpu,
            adam,
            dropout,
            step: 0,
            max_rows,
            layers,
            n_features,
            padded: Vec::new(),
            input,
            acts,
            dacts,
            attention,
        })
    }

    /// The logits of the last forward pass (the last layer's output).
    pub fn logits(&self) -> &wgpu::Buffer {
        &self.acts[self.layers.len() - 1]
    }

    /// dL/dlogits, which the loss writes before the backward pass.
    pub fn dlogits(&self) -> &wgpu::Buffer {
        &self.dacts[self.layers.len() - 1]
    }

    pub fn n_in(&self) -> usize {
        self.n_features
    }

    /// Writes `n` rows of `n_in()` inputs into the input buffer, padded to the first layer's width
    /// through `scratch` (whose padding columns stay zero from one call to the next).
    fn upload_inputs(&self, inputs: &[f32], n: usize, scratch: &mut Vec<f32>) {
        let width = self.layers[0].n_in;
        if width == self.n_features {
            self.gpu
                .queue
                .write_buffer(&self.input, 0, bytemuck::cast_slice(inputs));
            return;
        }
        if scratch.len() < n * width {
            scratch.resize(n * width, 0.0);
        }
        for (row, values) in scratch
            .chunks_exact_mut(width)
            .zip(inputs.chunks_exact(self.n_features))
        {
            row[..self.n_features].copy_from_slice(values);
        }
        self.gpu
            .queue
            .write_buffer(&self.input, 0, bytemuck::cast_slice(&scratch[..n * width]));
    }

    pub fn max_rows(&self) -> usize {
        self.max_rows
    }

    /// Uploads a batch of `n` rows and writes the parameters of every forward, backward and Adam
    /// dispatch for it; advances Adam's step (its bias corrections). Errors on a batch that is
    /// empty, larger than the buffers or of the wrong width.
    pub fn start_step(&mut self, inputs: &[f32], n: usize) -> Result<()> {
        if n == 0 || n > self.max_rows || inputs.len() != n * self.n_in() {
            return Err(Error::Config(format!(
                "a GPU batch of {n} rows ({} values) does not fit this model ({} rows of {})",
                inputs.len(),
                self.max_rows,
                self.n_in()
            )));
        }
        let mut scratch = std::mem::take(&mut self.padded);
        self.upload_inputs(inputs, n, &mut scratch);
        self.padded = scratch;
        let gpu = &self.gpu;
        let b = n as u32;
        for layer in &self.layers {
            set_layer_params(gpu, layer, n);
        }
        self.step += 1;
        if let Some(dropout) = &self.dropout {
            for (l, layer) in self.layers.iter().enumerate() {
                if let Some((forward, backward)) = &layer.dropout {
                    let mask = Mask::of(dropout, self.step, l);
                    let params = DenseParams {
                        rows: b * layer.n_out as u32,
                        cols: mask.scale.to_bits(),
                        inner: mask.threshold,
                        relu: mask.key,
                    };
                    gpu.set_params(forward, &params);
                    gpu.set_params(backward, &params);
                }
            }
        }
        for layer in self
            .layers
            .iter()
            .chain(self.attention.as_ref().map(|a| &a.projection))
        {
            set_layer_adam(gpu, &self.adam, self.step, layer);
        }
        Ok(())
    }

    /// Adam's step count: the steps started so far.
    pub fn adam_step(&self) -> u64 {
        self.step
    }

    /// Records the forward pass over `n` rows, for scoring: no dropout.
    pub fn record_forward(&self, pass: &mut wgpu::ComputePass, n: usize) {
        self.record_forward_with(pass, n, false);
    }

    /// Records the forward pass of a training step over `n` rows: each hidden layer's output
    /// through its dropout mask, when the model trains with dropout.
    pub fn record_forward_training(&self, pass: &mut wgpu::ComputePass, n: usize) {
        self.record_forward_with(pass, n, true);
    }

    fn record_forward_with(&self, pass: &mut wgpu::ComputePass, n: usize, training: bool) {
        let last = self.layers.len() - 1;
        for (l, layer) in self.layers.iter().enumerate() {
            if let (Some(attention), true) = (&self.attention, l == last) {
                attention.record_forward(&self.gpu, pass, n);
            }
            record_layer_forward(&self.gpu, pass, layer, n);
            if let (Some((forward, _)), true) = (&layer.dropout, training) {
                let elements = groups_of(n * layer.n_out, WORKGROUP);
                self.gpu.record(pass, forward, (elements, 1, 1));
            }
        }
    }

    /// Records the backward pass over `n` rows, from dlogits to every weight's gradient.
    pub fn record_backward(&self, pass: &mut wgpu::ComputePass, n: usize) {
        let last = self.layers.len() - 1;
        for (l, layer) in self.layers.iter().enumerate().rev() {
            record_layer_backward(&self.gpu, pass, layer, n);
            if let (Some(attention), true) = (&self.attention, l == last) {
                attention.record_backward(&self.gpu, pass, n);
            }
        }
    }

    /// Records Adam's update of every weight and bias.
    pub fn record_adam(&self, pass: &mut wgpu::ComputePass) {
        for layer in self
            .layers
            .iter()
            .chain(self.attention.as_ref().map(|a| &a.projection))
        {
            record_layer_adam(&self.gpu, pass, layer);
        }
    }

    /// Writes each document's query for the attention of the batch just started
    /// ([`start_step`](Self::start_step)): group g holds rows `offsets[g]..offsets[g + 1]`. A
    /// model without attention needs none.
    pub fn set_groups(&self, offsets: &[usize]) {
        if let Some(attention) = &self.attention {
            attention.start_batch(&self.gpu, offsets);
        }
    }

    /// Whether the model attends over each query's documents (the listwise family).
    pub fn attends(&self) -> bool {
        self.attention.is_some()
    }

    /// The current model, read back.
    pub async fn model(&self) -> Result<Mlp<f32>> {
        let (mut layers, mut norms) = (Vec::new(), Vec::new());
        for (i, l) in self.layers.iter().enumerate() {
            // The first layer without its padding rows (the last ones).
            let n_in = if i == 0 { self.n_features } else { l.n_in };
            layers.push(Dense {
                n_in,
                n_out: l.n_out,
                weight: self.gpu.read(&l.weight, n_in * l.n_out).await?,
                bias: self.gpu.read(&l.bias, l.n_out).await?,
            });
            if let Some(norm) = &l.norm {
                let values = self.gpu.read(&norm.params, 2 * l.n_out).await?;
                let (gain, shift) = values.split_at(l.n_out);
                norms.push(LayerNorm {
                    gain: gain.to_vec(),
                    shift: shift.to_vec(),
                });
            }
        }
        let attention = match &self.attention {
            Some(a) => Some(a.read(&self.gpu).await?),
            None => None,
        };
        Ok(Mlp {
            layers,
            norms,
            attention,
        })
    }

    /// Scores `inputs` (rows x n_in) with the current weights on the GPU, in chunks of
    /// `max_rows`: the forward dispatches only, then one read-back per chunk. A listwise model
    /// scores chunks of whole queries ([`Inputs::for_each_group_chunk`]); a query larger than
    /// the buffers is refused ([`fits_queries`](Self::fits_queries) says so beforehand).
    pub async fn score(&self, inputs: Inputs<'_>) -> Result<Vec<f32>> {
        let mut scores = Vec::with_capacity(inputs.n_rows());
        if self.attention.is_some() {
            if !self.fits_queries(inputs) {
                return Err(Error::Gpu(format!(
                    "a query holds more documents than this model's GPU buffers ({} rows): a listwise model scores whole queries",
                    self.max_rows
                )));
            }
            let mut chunks = Vec::new();
            inputs.for_each_group_chunk(self.max_rows, |chunk, groups| {
                chunks.push((chunk.to_vec(), groups.to_vec()));
            });
            for (chunk, groups) in chunks {
                scores.extend(self.score_chunk(&chunk, Some(&groups)).await?);
            }
            return Ok(scores);
        }
        let mut rows = Vec::new();
        let mut at = 0;
        while at < inputs.n_rows() {
            let n = self.max_rows.min(inputs.n_rows() - at);
            let chunk = inputs.rows(at..at + n, &mut rows);
            at += n;
            scores.extend(self.score_chunk(chunk, None).await?);
        }
        Ok(scores)
    }

    /// Whether every query of `inputs` (all of them as one, without groups) fits the buffers,
    /// as a listwise model scores them.
    pub fn fits_queries(&self, inputs: Inputs<'_>) -> bool {
        let whole = [0, inputs.n_rows()];
        let groups = inputs.groups().unwrap_or(&whole);
        groups.windows(2).all(|w| w[1] - w[0] <= self.max_rows)
    }

    /// The scores of one chunk of rows (row-major, at most `max_rows`), in the query `groups`
    /// a listwise model attends within.
    async fn score_chunk(&self, chunk: &[f32], groups: Option<&[usize]>) -> Result<Vec<f32>> {
        let n = chunk.len() / self.n_features.max(1);
        let mut scratch = Vec::new();
        self.upload_inputs(chunk, n, &mut scratch);
        for layer in &self.layers {
            let params = layer.dispatch(Kernel::DenseForward, n).0;
            self.gpu.set_params(&layer.forward, &params);
            if let Some(norm) = &layer.norm {
                let rows = DenseParams {
                    rows: n as u32,
                    cols: layer.n_out as u32,
                    ..Default::default()
                };
                self.gpu.set_params(&norm.forward, &rows);
            }
        }
        if let (Some(attention), Some(groups)) = (&self.attention, groups) {
            attention.start_batch(&self.gpu, groups);
        }
        self.gpu.run(|pass| self.record_forward(pass, n)).await?;
        self.gpu.read(self.logits(), n).await
    }

    /// The gradients of the last step (weight, bias per layer; the first layer's without its
    /// padding rows).
    pub async fn gradients(&self) -> Result<Vec<(Vec<f32>, Vec<f32>)>> {
        let mut out = Vec::new();
        for (i, l) in self.layers.iter().enumerate() {
            let n_in = if i == 0 { self.n_features } else { l.n_in };
            out.push((
                self.gpu.read(&l.dweight, n_in * l.n_out).await?,
                self.gpu.read(&l.dbias, l.n_out).await?,
            ));
        }
        Ok(out)
    }

    /// The attention's projections' gradients of the last step, as the model holds its
    /// projections (None without attention).
    pub async fn attention_gradients(&self) -> Result<Option<crate::model::Attention<f32>>> {
        match &self.attention {
            Some(a) => Ok(Some(a.gradients(&self.gpu).await?)),
            None => Ok(None),
        }
    }

    /// The layer normalisations' gradients of the last step: each normalised layer's gain's,
    /// then its shift's.
    pub async fn norm_gradients(&self) -> Result<Vec<(Vec<f32>, Vec<f32>)>> {
        let mut out = Vec::new();
        for l in &self.layers {
            if let Some(norm) = &l.norm {
                let values = self.gpu.read(&norm.dparams, 2 * l.n_out).await?;
                let (gain, shift) = values.split_at(l.n_out);
                out.push((gain.to_vec(), shift.to_vec()));
            }
        }
        Ok(out)
    }
}

/// Writes the parameters of one layer's forward and backward dispatches over `n` rows.
fn set_layer_params(gpu: &Gpu, layer: &Layer, n: usize) {
    let b = n as u32;
    let n_out = layer.n_out as u32;
    let params = |product| layer.dispatch(product, n).0;
    gpu.set_params(&layer.forward, &params(Kernel::DenseForward));
    if let Some(mask) = &layer.relu_mask {
        let params = DenseParams {
            rows: b,
            cols: n_out,
            ..Default::default()
        };
        gpu.set_params(mask, &params);
    }
    gpu.set_params(&layer.backward_weight, &params(Kernel::DenseBackwardWeight));
    let bias = DenseParams {
        rows: 1,
        cols: n_out,
        inner: b,
        relu: 0,
    };
    gpu.set_params(&layer.backward_bias, &bias);
    if let Some(back) = &layer.backward_input {
        gpu.set_params(back, &params(Kernel::DenseBackwardInput));
    }
    if let Some(norm) = &layer.norm {
        let rows = DenseParams {
            rows: b,
            cols: n_out,
            ..Default::default()
        };
        gpu.set_params(&norm.forward, &rows);
        gpu.set_params(&norm.backward_input, &rows);
        gpu.set_params(&norm.backward_params, &rows);
    }
}

/// Writes the parameters of one layer's Adam dispatches for Adam step `step`.
fn set_layer_adam(gpu: &Gpu, adam: &AdamConfig, step: u64, layer: &Layer) {
    let weights = adam_params(adam, step, layer.n_in * layer.n_out, 0, 0);
    gpu.set_params(&layer.adam_weight, &weights);
    let biases = adam_params(adam, step, layer.n_out, 0, 0);
    gpu.set_params(&layer.adam_bias, &biases);
    if let Some(norm) = &layer.norm {
        let values = adam_params(adam, step, 2 * layer.n_out, 0, 0);
        gpu.set_params(&norm.adam, &values);
    }
}

/// One layer's product, then its normalisation and ReLU where it has one.
fn record_layer_forward(gpu: &Gpu, pass: &mut wgpu::ComputePass, layer: &Layer, n: usize) {
    let workgroups = layer.dispatch(Kernel::DenseForward, n).1;
    gpu.record(pass, &layer.forward, workgroups);
    if let Some(norm) = &layer.norm {
        gpu.record(pass, &norm.forward, (groups_of(n, 64), 1, 1));
    }
}

/// One layer's backward pass over `n` rows: through its dropout mask, ReLU and normalisation,
/// to its weight's and bias's gradients and its input's.
fn record_layer_backward(gpu: &Gpu, pass: &mut wgpu::ComputePass, layer: &Layer, n: usize) {
    // A dropped unit's gradient is 0, a kept one's scaled as its output was; then ReLU's.
    if let Some((_, backward)) = &layer.dropout {
        gpu.record(
            pass,
            backward,
            (groups_of(n * layer.n_out, WORKGROUP), 1, 1),
        );
    }
    if let Some(mask) = &layer.relu_mask {
        gpu.record(pass, mask, (groups_of(n * layer.n_out, WORKGROUP), 1, 1));
    }
    // Through the normalisation to the pre-activations, which the products read.
    if let Some(norm) = &layer.norm {
        gpu.record(pass, &norm.backward_input, (groups_of(n, 64), 1, 1));
        gpu.record(
            pass,
            &norm.backward_params,
            (groups_of(layer.n_out, 64), 1, 1),
        );
    }
    let workgroups = |product| layer.dispatch(product, n).1;
    gpu.record(
        pass,
        &layer.backward_weight,
        workgroups(Kernel::DenseBackwardWeight),
    );
    gpu.record(
        pass,
        &layer.backward_bias,
        (groups_of(layer.n_out, WORKGROUP), 1, 1),
    );
    if let Some(back) = &layer.backward_input {
        gpu.record(pass, back, workgroups(Kernel::DenseBackwardInput));
    }
}

/// One layer's Adam updates: weight, bias, and a normalisation's gain and shift.
fn record_layer_adam(gpu: &Gpu, pass: &mut wgpu::ComputePass, layer: &Layer) {
    gpu.record(
        pass,
        &layer.adam_weight,
        (groups_of(layer.n_in * layer.n_out, WORKGROUP), 1, 1),
    );
    gpu.record(
        pass,
        &layer.adam_bias,
        (groups_of(layer.n_out, WORKGROUP), 1, 1),
    );
    if let Some(norm) = &layer.norm {
        gpu.record(
            pass,
            &norm.adam,
            (groups_of(2 * layer.n_out, WORKGROUP), 1, 1),
        );
    }
}

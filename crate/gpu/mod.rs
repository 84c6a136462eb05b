//! The GPU engine: the WGSL kernels of `shaders/` driven through wgpu, natively (Vulkan, Metal,
//! DX12) and in the browser (WebGPU), from one async API. The CPU engine is the reference every
//! kernel is checked against (tests/gpu.rs).
//!
//! Every kernel shares one bind group layout: 0 the parameters and 1-3 the inputs, read-only
//! storage (the parameters are not a uniform buffer: lavapipe inlines a uniform's values into the
//! kernel and compiles it again whenever they change, so one kernel run for two layers of a step
//! grew its machine code at every step; `tests/gpu_memory.rs`),
//! 4-5 read-write storage; a kernel ignores the bindings it does not use, which are bound to small
//! dummy buffers. Each dispatch of a model has its own parameter buffer and bind group, built once
//! ([`Slot`]); a training step only writes parameters and batch data and records dispatches.

pub mod losses;
pub mod mlp;
pub mod objective;
pub mod params;
pub mod shaders;
pub mod trainer;

use std::sync::Arc;

use wgpu::util::DeviceExt;

use crate::error::{Error, Result};
use crate::model::loss::{LossKind, Wgsl, LOSSES};
use params::{DenseParams, KernelParams};
use shaders::TILE;

/// The kernels, one compute pipeline each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    DenseForward,
    /// One output per invocation, no tiling: the benchmark's baseline.
    DenseForwardNaive,
    DenseBackwardInput,
    DenseBackwardWeight,
    /// The direct products read four floats at a time (`dense_vec4.wgsl`), where the layer's
    /// widths allow it: [`Gpu::product_kernel`] picks them.
    DenseForwardVec4,
    DenseBackwardInputVec4,
    DenseBackwardWeightVec4,
    DenseBackwardBias,
    ReluMask,
    /// A hidden layer's output, or the gradient with respect to it, through its dropout mask
    /// ([`crate::model::dropout::Mask`]).
    Dropout,
    /// A hidden layer's pre-activations through layer normalisation and ReLU
    /// ([`crate::model::LayerNorm`]), keeping each row's mean and 1/std.
    LayerNormForward,
    /// The gradient w.r.t. the pre-activations of a normalised layer.
    LayerNormBackwardInput,
    /// The gradients of a normalised layer's gain and shift.
    LayerNormBackwardParams,
    /// The listwise family's self-attention over each query's documents
    /// ([`crate::model::Attention`]), from the query, key and value rows.
    Attend,
    /// h ⊙ (1 + a), the latent cross.
    Cross,
    /// The latent cross's gradients w.r.t. h and a.
    CrossBackward,
    /// The gradient w.r.t. the queries.
    AttendBackwardQuery,
    /// The gradients w.r.t. the keys and the values.
    AttendBackwardKeyValue,
    /// One buffer added into another.
    Accumulate,
    /// A kernel of a ranking loss, as its entry in [`crate::model::loss::LOSSES`] names it.
    Loss(Wgsl),
    ReduceSum,
    Adam,
    /// The global objectives' per-example weighted surrogates and gradients.
    ObjectiveTerms,
    /// The multipliers' dual ascent, the bias and multiplier gradients and the loss.
    ObjectiveMultipliers,
    /// The pairwise AUC-ROC surrogate and its logit gradients.
    RocAucPairs,
    /// The F-beta bound's per-example terms (|Y+|, tp_l and fp_u before their sums).
    FBetaTerms,
    /// The F-beta bound's logit gradients and loss, from the sums.
    FBetaGradient,
    /// Ranking Distillation's candidate weights, from the student's logits.
    RdWeights,
    /// Ranking Distillation's loss L_D and its logit gradients.
    RdLoss,
    /// A subset of rows into a compact buffer.
    GatherRows,
    /// A compact buffer back into the rows of its subset, zeros elsewhere.
    ScatterRows,
}

impl Kernel {
    /// The kernels that are not a loss's.
    const FIXED: [Kernel; 30] = [
        Kernel::DenseForward,
        Kernel::DenseForwardNaive,
        Kernel::DenseBackwardInput,
        Kernel::DenseBackwardWeight,
        Kernel::DenseForwardVec4,
        Kernel::DenseBackwardInputVec4,
        Kernel::DenseBackwardWeightVec4,
        Kernel::DenseBackwardBias,
        Kernel::ReluMask,
        Kernel::Dropout,
        Kernel::LayerNormForward,
        Kernel::LayerNormBackwardInput,
        Kernel::LayerNormBackwardParams,
        Kernel::Attend,
        Kernel::Cross,
        Kernel::CrossBackward,
        Kernel::AttendBackwardQuery,
        Kernel::AttendBackwardKeyValue,
        Kernel::Accumulate,
        Kernel::ReduceSum,
        Kernel::Adam,
        Kernel::ObjectiveTerms,
        Kernel::ObjectiveMultipliers,
        Kernel::RocAucPairs,
        Kernel::FBetaTerms,
        Kernel::FBetaGradient,
        Kernel::RdWeights,
        Kernel::RdLoss,
        Kernel::GatherRows,
        Kernel::ScatterRows,
    ];

    /// Every kernel, one pipeline each: the fixed ones, then each kernel a loss's entry names.
    pub fn all() -> Vec<Kernel> {
        let mut all = Kernel::FIXED.to_vec();
        for entry in LOSSES {
            for &kernel in entry.hard.iter().chain(entry.soft) {
                if !all.contains(&Kernel::Loss(kernel)) {
                    all.push(Kernel::Loss(kernel));
                }
            }
        }
        all
    }

    /// The loss kernel the binary cross-entropy of the global objectives' log-loss runs: RankBCE's.
    pub fn bce() -> Kernel {
        Kernel::Loss(LossKind::RankBce.entry().hard[0])
    }

    /// The shader file and the entry point; the dense products' entry points depend on
    /// `products`.
    fn source(self, products: Products) -> (&'static str, &'static str) {
        let product = |tiled, direct| match products {
            Products::Tiled => tiled,
            Products::Direct => direct,
        };
        match self {
            Kernel::DenseForward => ("dense.wgsl", product("forward", "forward_direct")),
            Kernel::DenseForwardNaive => ("dense.wgsl", "forward_naive"),
            Kernel::DenseBackwardInput => (
                "dense.wgsl",
                product("backward_input", "backward_input_direct"),
            ),
            Kernel::DenseBackwardWeight => (
                "dense.wgsl",
                product("backward_weight", "backward_weight_direct"),
            ),
            Kernel::DenseForwardVec4 => ("dense_vec4.wgsl", "forward_vec4"),
            Kernel::DenseBackwardInputVec4 => ("dense_vec4.wgsl", "backward_input_vec4"),
            Kernel::DenseBackwardWeightVec4 => ("dense_vec4.wgsl", "backward_weight_vec4"),
            Kernel::DenseBackwardBias => ("dense.wgsl", "backward_bias"),
            Kernel::ReluMask => ("dense.wgsl", "relu_mask"),
            Kernel::Dropout => ("dense.wgsl", "dropout"),
            Kernel::LayerNormForward => ("norm.wgsl", "layer_norm_forward"),
            Kernel::LayerNormBackwardInput => ("norm.wgsl", "layer_norm_backward_input"),
            Kernel::LayerNormBackwardParams => ("norm.wgsl", "layer_norm_backward_params"),
            Kernel::Attend => ("attention.wgsl", "attend"),
            Kernel::Cross => ("attention.wgsl", "cross"),
            Kernel::CrossBackward => ("attention.wgsl", "cross_backward"),
            Kernel::AttendBackwardQuery => ("attention.wgsl", "attend_backward_query"),
            Kernel::AttendBackwardKeyValue => ("attention.wgsl", "attend_backward_key_value"),
            Kernel::Accumulate => ("attention.wgsl", "accumulate"),
            Kernel::Loss(kernel) => (kernel.file, kernel.entry),
            Kernel::ReduceSum => ("reduce.wgsl", "reduce_sum"),
            Kernel::Adam => ("adam.wgsl", "adam"),
            Kernel::ObjectiveTerms => ("objectives.wgsl", "objective_terms"),
            Kernel::ObjectiveMultipliers => ("objectives.wgsl", "update_multipliers"),
            Kernel::RocAucPairs => ("objectives.wgsl", "roc_auc_pairs"),
            Kernel::FBetaTerms => ("objectives.wgsl", "f_beta_terms"),
            Kernel::FBetaGradient => ("objectives.wgsl", "f_beta_gradient"),
            Kernel::RdWeights => ("distill.wgsl", "rd_weights"),
            Kernel::RdLoss => ("distill.wgsl", "rd_loss"),
            Kernel::GatherRows => ("select.wgsl", "gather_rows"),
            Kernel::ScatterRows => ("select.wgsl", "scatter_rows"),
        }
    }
}

/// How the dense products (forward, backward_input, backward_weight) run. Both compute a 64 x 64
/// block of the result per workgroup, with the same bindings, parameters and dispatch
/// ([`dense_dispatch`]). [`Gpu::open`] measures both on software adapters and keeps the faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Products {
    /// Through workgroup-memory tiles: the choice on hardware GPUs before (or without) measuring.
    Tiled,
    /// Straight from storage, without barriers: for software adapters, which run a workgroup's
    /// invocations in turn on CPU cores and pay for every barrier and for every lane's load.
    /// Where the widths are multiples of 4 they read four floats a load and compute 16 x 8
    /// outputs per invocation ([`Gpu::product_kernel`]); so they run at 8-11x the tiled
    /// kernels on lavapipe and about 8x on SwiftShader (BENCHMARKS.md).
    Direct,
}

impl Products {
    /// Direct on software adapters, tiled on GPUs: the choice before (or without) measuring.
    pub fn for_adapter(info: &wgpu::AdapterInfo) -> Products {
        if info.device_type == wgpu::DeviceType::Cpu {
            Products::Direct
        } else {
            Products::Tiled
        }
    }
}

/// Which adapters may serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdapterChoice {
    /// A hardware GPU only: software rasterisers (lavapipe, SwiftShader) are slower than the CPU
    /// engine, so `--backend auto` does not take them.
    HardwareOnly,
    /// Any adapter, software included (tests, `--backend gpu`).
    Any,
}

/// Names the adapter to open, on machines with several: any adapter whose "NAME (BACKEND)"
/// contains this text, ignoring case (`cargo xtask gpu-report` runs the checks on each adapter
/// in turn). Unset: wgpu's high-performance choice.
pub const ADAPTER_ENV: &str = "DISTILLRANK_ADAPTER";

/// An adapter as reports name it: "NAME (BACKEND)".
pub fn adapter_label(info: &wgpu::AdapterInfo) -> String {
    format!("{} ({:?})", info.name, info.backend)
}

/// Every adapter wgpu finds on this machine (native builds).
#[cfg(not(target_arch = "wasm32"))]
pub async fn adapters() -> Vec<wgpu::AdapterInfo> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
    instance
        .enumerate_adapters(wgpu::Backends::all())
        .await
        .iter()
        .map(|a| a.get_info())
        .collect()
}

/// The adapter [`ADAPTER_ENV`] names, if it is set.
#[cfg(not(target_arch = "wasm32"))]
async fn named_adapter(instance: &wgpu::Instance) -> Result<Option<wgpu::Adapter>> {
    let Some(wanted) = std::env::var(ADAPTER_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty())
    else {
        return Ok(None);
    };
    let all = instance.enumerate_adapters(wgpu::Backends::all()).await;
    let labels: Vec<String> = all.iter().map(|a| adapter_label(&a.get_info())).collect();
    let wanted_lower = wanted.to_lowercase();
    match labels
        .iter()
        .position(|l| l.to_lowercase().contains(&wanted_lower))
    {
        Some(i) => Ok(all.into_iter().nth(i)),
        None => Err(Error::Gpu(format!(
            "{ADAPTER_ENV}={wanted} names none of the adapters wgpu finds: {}",
            if labels.is_empty() {
                "none".to_string()
            } else {
                labels.join(", ")
            }
        ))),
    }
}

#[cfg(target_arch = "wasm32")]
async fn named_adapter(_: &wgpu::Instance) -> Result<Option<wgpu::Adapter>> {
    Ok(None)
}

/// A device with the compiled kernels.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    /// Whether the device records timestamp queries (for the per-kernel profile).
    pub timestamps: bool,
    /// The dense products' kernels.
    pub products: Products,
    /// Milliseconds of the forward product each kind took when [`Gpu::open`] measured them
    /// (software adapters; empty otherwise).
    pub products_ms: Vec<(Products, f64)>,
    /// Why the device was lost, once it is.
    lost: Arc<std::sync::Mutex<Option<String>>>,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    /// Every kernel ([`Kernel::all`]) and its pipeline, at the same place.
    kernels: Vec<Kernel>,
    pipelines: Vec<wgpu::ComputePipeline>,
    dummy_read: wgpu::Buffer,
    dummy_write: [wgpu::Buffer; 2],
}

/// One recorded dispatch of a kernel: its parameter buffer and bind group, built once.
pub struct Slot {
    kernel: Kernel,
    params: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
}

/// Storage buffers one kernel binds: the parameters, three inputs and two outputs (WebGPU's
/// default limit is eight).
const STORAGE_BINDINGS: u32 = 6;

/// Bytes of every parameter buffer (the largest kernel's, Adam's, is 48).
const PARAMS_BYTES: u64 = 48;

impl Gpu {
    /// Finds an adapter and compiles every kernel, the dense products as suit the adapter.
    pub async fn new(choice: AdapterChoice) -> Result<Arc<Gpu>> {
        Gpu::open(choice, None).await
    }

    /// [`Gpu::new`], with the dense products' kernels chosen (`None`: whichever kind
    /// [`Gpu::choose_products`] measures faster, on software adapters and, natively, on hardware
    /// ones too; in the browser, tiled on adapters that do not say they are software).
    // In the browser wgpu's handles are neither Send nor Sync (one thread): the Arc still shares
    // the device between the trainers of one worker.
    #[cfg_attr(target_arch = "wasm32", allow(clippy::arc_with_non_send_sync))]
    pub async fn open(choice: AdapterChoice, products: Option<Products>) -> Result<Arc<Gpu>> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle());
        let adapter = match named_adapter(&instance).await? {
            Some(adapter) => adapter,
            None => instance
                .request_adapter(&wgpu::RequestAdapterOptions {
                    power_preference: wgpu::PowerPreference::HighPerformance,
                    ..Default::default()
                })
                .await
                .map_err(|e| Error::Gpu(format!("no GPU adapter: {e}")))?,
        };
        let info = adapter.get_info();
        if choice == AdapterChoice::HardwareOnly && info.device_type == wgpu::DeviceType::Cpu {
            return Err(Error::Gpu(format!("only a software adapter is available ({}); use --backend gpu to train on it anyway", info.name)));
        }
        // Ask for what the kernels need, within what the adapter has.
        let available = adapter.limits();
        if available.max_storage_buffers_per_shader_stage < STORAGE_BINDINGS {
            return Err(Error::Gpu(format!(
                "{}: the kernels bind {STORAGE_BINDINGS} storage buffers, and this adapter allows {} per shader stage (WebGPU's default is 8); use --backend cpu",
                info.name, available.max_storage_buffers_per_shader_stage
            )));
        }
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: available.max_storage_buffer_binding_size,
            max_buffer_size: available.max_buffer_size,
            max_compute_workgroups_per_dimension: available.max_compute_workgroups_per_dimension,
            max_storage_buffers_per_shader_stage: STORAGE_BINDINGS,
            ..wgpu::Limits::downlevel_defaults()
        };
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("distillrank"),
                // Timestamp queries where the adapter has them: they time the kernels.
                required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
                required_limits: limits,
                ..Default::default()
            })
            .await
            .map_err(|e| Error::Gpu(format!("{}: cannot open the device: {e}", info.name)))?;
        let chosen = products.unwrap_or_else(|| Products::for_adapter(&info));
        let mut gpu = Gpu::from_device_with(device, queue, info, chosen);
        // Natively every adapter is measured: on an NVIDIA H200 the direct kernels ran the MLP's
        // products at 5-10x the tiled ones (BENCHMARKS.md), so a rule by adapter kind is wrong
        // there too. In the browser only software adapters are (the page's figures on others
        // keep the tiled kernels they were measured with).
        if products.is_none() && (gpu.is_software() || cfg!(not(target_arch = "wasm32"))) {
            gpu.choose_products().await?;
        }
        Ok(Arc::new(gpu))
    }

    /// Compiles the kernels on a device that the caller opened.
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, info: wgpu::AdapterInfo) -> Gpu {
        let products = Products::for_adapter(&info);
        Gpu::from_device_with(device, queue, info, products)
    }

    /// [`Gpu::from_device`] with the dense products' kernels chosen.
    pub fn from_device_with(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: wgpu::AdapterInfo,
        products: Products,
    ) -> Gpu {
        let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("kernel bindings"),
            entries: &[
                storage(0, true),
                storage(1, true),
                storage(2, true),
                storage(3, true),
                storage(4, false),
                storage(5, false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("kernels"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let mut modules = std::collections::HashMap::new();
        let kernels = Kernel::all();
        let pipelines = kernels
            .iter()
            .map(|k| {
                let file = k.source(products).0;
                let module = modules
                    .entry(file)
                    .or_insert_with(|| compile_module(&device, file));
                compile_pipeline(&device, &pipeline_layout, module, *k, products)
            })
            .collect();
        let dummy = |label| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 16,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            })
        };
        let timestamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let lost = Arc::new(std::sync::Mutex::new(None));
        let record_loss = lost.clone();
        device.set_device_lost_callback(move |reason, message| {
            if let Ok(mut lost) = record_loss.lock() {
                *lost = Some(format!("{reason:?}: {message}"));
            }
        });
        Gpu {
            timestamps,
            products,
            products_ms: Vec::new(),
            lost,
            layout,
            pipeline_layout,
            kernels,
            pipelines,
            dummy_read: dummy("unused (read)"),
            dummy_write: [dummy("unused (write 4)"), dummy("unused (write 5)")],
            device,
            queue,
            info,
        }
    }

    /// The kernel that computes `product` (DenseForward, DenseBackwardInput or
    /// DenseBackwardWeight) for a layer of `n_in` inputs and `n_out` outputs: with the direct
    /// products, their vec4 form where the widths are multiples of 4 (forward and the weight
    /// gradient: both; the input gradient: n_out); otherwise `product` itself.
    pub fn product_kernel(&self, product: Kernel, n_in: usize, n_out: usize) -> Kernel {
        if self.products != Products::Direct {
            return product;
        }
        let (in4, out4) = (n_in.is_multiple_of(4), n_out.is_multiple_of(4));
        match product {
            Kernel::DenseForward if in4 && out4 => Kernel::DenseForwardVec4,
            Kernel::DenseBackwardInput if out4 => Kernel::DenseBackwardInputVec4,
            Kernel::DenseBackwardWeight if in4 && out4 => Kernel::DenseBackwardWeightVec4,
            other => other,
        }
    }

    /// Times a forward product (256 x 256 x 128: four by two blocks, the inner size of the MLP's
    /// hidden layers) with each kind of product kernels and keeps the faster one for all three
    /// products (the direct kind in its vec4 form, as the trainer runs it at this shape).
    /// Software adapters differ (with the scalar direct kernels, lavapipe favoured them and
    /// SwiftShader the tiled ones; BENCHMARKS.md), and in the browser neither says its name. Each
    /// kind is warmed up once, then timed twice, in alternation: well under 0.5 s on either.
    pub async fn choose_products(&mut self) -> Result<()> {
        let (rows, inner, cols) = (256usize, 256usize, 128usize);
        let (a, b, bias, out) = (
            self.buffer("a", rows * inner),
            self.buffer("b", inner * cols),
            self.buffer("bias", cols),
            self.buffer("out", rows * cols),
        );
        let slot = self.slot(
            Kernel::DenseForward,
            [Some(&a), Some(&b), Some(&bias), Some(&out), None],
        );
        let params = DenseParams {
            rows: rows as u32,
            cols: cols as u32,
            inner: inner as u32,
            relu: 1,
        };
        self.set_params(&slot, &params);
        let module = compile_module(&self.device, "dense.wgsl");
        let kinds = [Products::Direct, Products::Tiled];
        // Direct as the trainer runs it at this shape: its vec4 form.
        let vec4 = self.pipeline_of(Kernel::DenseForwardVec4);
        let tiled = compile_pipeline(
            &self.device,
            &self.pipeline_layout,
            &module,
            Kernel::DenseForward,
            Products::Tiled,
        );
        let pipelines = [&self.pipelines[vec4], &tiled];
        let blocks = (groups_of(cols, TILE), groups_of(rows, TILE), 1);
        let mut best = [f64::INFINITY; 2];
        for round in 0..3 {
            for (i, pipeline) in pipelines.into_iter().enumerate() {
                let started = crate::clock::Instant::now();
                self.run(|pass| {
                    pass.set_pipeline(pipeline);
                    pass.set_bind_group(0, &slot.bind_group, &[]);
                    pass.dispatch_workgroups(blocks.0, blocks.1, blocks.2);
                })
                .await?;
                self.read(&out, 1).await?;
                if round > 0 {
                    best[i] = best[i].min(started.elapsed() * 1000.0);
                }
            }
        }
        let faster = if best[1] < best[0] {
            kinds[1]
        } else {
            kinds[0]
        };
        self.products_ms = kinds.iter().copied().zip(best).collect();
        if faster != self.products {
            for (i, kernel) in self.kernels.iter().enumerate() {
                if kernel.source(faster).1 != kernel.source(self.products).1 {
                    self.pipelines[i] = compile_pipeline(
                        &self.device,
                        &self.pipeline_layout,
                        &module,
                        *kernel,
                        faster,
                    );
                }
            }
            self.products = faster;
        }
        Ok(())
    }

    /// An error once the device is lost (driver reset, GPU removed, device destroyed): the work
    /// cannot go on, and says so instead of hanging.
    pub fn check_lost(&self) -> Result<()> {
        match self.lost.lock().ok().and_then(|l| l.clone()) {
            Some(why) => Err(Error::Gpu(format!(
                "the GPU device was lost ({why}); start again to get a new device"
            ))),
            None => Ok(()),
        }
    }

    /// The adapter's name; browsers often leave it empty, and its driver or ids then name it.
    pub fn name(&self) -> String {
        let info = &self.info;
        [&info.name, &info.driver, &info.driver_info]
            .into_iter()
            .find(|s| !s.is_empty())
            .cloned()
            .unwrap_or_else(|| match (info.vendor, info.device) {
                (0, 0) => "an adapter without a name".into(),
                (vendor, device) => format!("vendor {vendor:#x}, device {device:#x}"),
            })
    }

    /// Whether the adapter is a software rasteriser.
    pub fn is_software(&self) -> bool {
        self.info.device_type == wgpu::DeviceType::Cpu
    }

    /// A storage buffer of `len` f32 (or u32) values, zeroed.
    pub fn buffer(&self, label: &str, len: usize) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (4 * len.max(4)) as u64,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// A storage buffer holding `data`.
    pub fn buffer_with<T: bytemuck::Pod>(&self, label: &str, data: &[T]) -> wgpu::Buffer {
        let mut bytes = bytemuck::cast_slice::<T, u8>(data).to_vec();
        bytes.resize(bytes.len().max(16), 0);
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: &bytes,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
            })
    }

    /// A dispatch slot of `kernel` over the given buffers (bindings 1, 2, 3, 4, 5; None: unused).
    pub fn slot(&self, kernel: Kernel, buffers: [Option<&wgpu::Buffer>; 5]) -> Slot {
        let params = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("kernel parameters"),
            size: PARAMS_BYTES,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let fallback = [
            &self.dummy_read,
            &self.dummy_read,
            &self.dummy_read,
            &self.dummy_write[0],
            &self.dummy_write[1],
        ];
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: params.as_entire_binding(),
        }];
        for (i, b) in buffers.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry {
                binding: i as u32 + 1,
                resource: b.unwrap_or(fallback[i]).as_entire_binding(),
            });
        }
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.source(self.products).1),
            layout: &self.layout,
            entries: &entries,
        });
        Slot {
            kernel,
            params,
            bind_group,
        }
    }

    /// Where `kernel`'s pipeline is: every kernel has one, compiled with the device.
    fn pipeline_of(&self, kernel: Kernel) -> usize {
        self.kernels
            .iter()
            .position(|&k| k == kernel)
            .expect("every kernel has a pipeline")
    }

    /// Writes a slot's parameters (before the submission that uses them).
    pub fn set_params<P: KernelParams>(&self, slot: &Slot, params: &P) {
        const { assert!(std::mem::size_of::<P>() <= PARAMS_BYTES as usize) };
        let bytes = bytemuck::bytes_of(params);
        let mut padded = [0u8; PARAMS_BYTES as usize];
        padded[..bytes.len()].copy_from_slice(bytes);
        self.queue.write_buffer(&slot.params, 0, &padded);
    }

    /// Records a slot's dispatch.
    pub fn record(&self, pass: &mut wgpu::ComputePass, slot: &Slot, workgroups: (u32, u32, u32)) {
        pass.set_pipeline(&self.pipelines[self.pipeline_of(slot.kernel)]);
        pass.set_bind_group(0, &slot.bind_group, &[]);
        pass.dispatch_workgroups(workgroups.0, workgroups.1, workgroups.2);
    }

    /// Copies `len` f32 values of `buffer` back to the host: the one read-back path, native and wasm.
    pub async fn read(&self, buffer: &wgpu::Buffer, len: usize) -> Result<Vec<f32>> {
        let bytes = self.read_bytes(buffer, (4 * len) as u64).await?;
        // A copy: a Vec<u8> promises no f32 alignment.
        Ok(bytemuck::pod_collect_to_vec::<u8, f32>(&bytes))
    }

    /// Copies the first `size` bytes of `buffer` back to the host.
    pub async fn read_bytes(&self, buffer: &wgpu::Buffer, size: u64) -> Result<Vec<u8>> {
        self.check_lost()?;
        if size == 0 {
            return Ok(Vec::new());
        }
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read-back"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        self.queue.submit([encoder.finish()]);
        let slice = staging.slice(..);
        let (sender, receiver) = futures_channel::oneshot::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = sender.send(r);
        });
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Gpu(format!("waiting for the GPU: {e}")))?;
        receiver
            .await
            .map_err(|_| Error::Gpu("the device was lost while reading back".into()))?
            .map_err(|e| Error::Gpu(format!("cannot map the read-back buffer: {e}")))?;
        let view = slice
            .get_mapped_range()
            .map_err(|e| Error::Gpu(format!("cannot read the read-back buffer: {e}")))?;
        let values = view.to_vec();
        drop(view);
        staging.unmap();
        Ok(values)
    }

    /// Waits until the queue has finished all submitted work (native; the browser resolves
    /// read-backs instead).
    pub fn wait(&self) -> Result<()> {
        #[cfg(not(target_arch = "wasm32"))]
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Gpu(format!("waiting for the GPU: {e}")))?;
        Ok(())
    }

    /// Runs each phase in a compute pass of its own, timing each with timestamp queries; returns
    /// (phase, milliseconds). Without timestamp support, an error saying so.
    pub async fn run_timed(
        &self,
        phases: Vec<(&'static str, Phase<'_>)>,
    ) -> Result<Vec<(&'static str, f64)>> {
        self.check_lost()?;
        if !self.timestamps {
            return Err(Error::Gpu(format!(
                "{} has no timestamp queries",
                self.info.name
            )));
        }
        let count = 2 * phases.len() as u32;
        let queries = self.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("kernel timings"),
            ty: wgpu::QueryType::Timestamp,
            count,
        });
        let resolved = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("kernel timings"),
            size: 8 * count as u64,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let names: Vec<&'static str> = phases.iter().map(|p| p.0).collect();
        for (i, (name, record)) in phases.into_iter().enumerate() {
            let writes = wgpu::ComputePassTimestampWrites {
                query_set: &queries,
                beginning_of_pass_write_index: Some(2 * i as u32),
                end_of_pass_write_index: Some(2 * i as u32 + 1),
            };
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(name),
                timestamp_writes: Some(writes),
            });
            record(&mut pass);
        }
        encoder.resolve_query_set(&queries, 0..count, &resolved, 0);
        self.queue.submit([encoder.finish()]);
        if let Some(e) = scope.pop().await {
            return Err(Error::Gpu(format!("GPU validation error: {e}")));
        }
        let bytes = self.read_bytes(&resolved, 8 * count as u64).await?;
        let ticks: Vec<u64> = bytemuck::pod_collect_to_vec(&bytes);
        let period = self.queue.get_timestamp_period() as f64;
        Ok(names
            .into_iter()
            .enumerate()
            .map(|(i, n)| {
                (
                    n,
                    ticks[2 * i + 1].saturating_sub(ticks[2 * i]) as f64 * period / 1e6,
                )
            })
            .collect())
    }

    /// Runs `record` in one compute pass, submits it, and reports validation errors as errors.
    pub async fn run(&self, record: impl FnOnce(&mut wgpu::ComputePass)) -> Result<()> {
        self.check_lost()?;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("distillrank"),
                timestamp_writes: None,
            });
            record(&mut pass);
        }
        self.queue.submit([encoder.finish()]);
        match scope.pop().await {
            Some(e) => Err(Error::Gpu(format!("GPU validation error: {e}"))),
            None => Ok(()),
        }
    }
}

/// The module of a file of `shaders/`, as [`shaders::source`] gives it.
fn compile_module(device: &wgpu::Device, file: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(file),
        source: wgpu::ShaderSource::Wgsl(shaders::source(file).into()),
    })
}

/// `kernel`'s pipeline from `module`, which must be compiled from its shader file.
fn compile_pipeline(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    module: &wgpu::ShaderModule,
    kernel: Kernel,
    products: Products,
) -> wgpu::ComputePipeline {
    let entry = kernel.source(products).1;
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(layout),
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// Records one phase of dispatches into a compute pass.
pub type Phase<'a> = Box<dyn FnOnce(&mut wgpu::ComputePass) + 'a>;

/// ceil(n / d)
pub fn groups_of(n: usize, d: u32) -> u32 {
    (n as u32).div_ceil(d).max(1)
}

/// How a dense layer's product over `batch` rows is dispatched, whatever kernel computes it (every
/// form covers the result in blocks of TILE x TILE): the parameters (rows, columns and inner size
/// of the result, and ReLU, which only the forward product applies) and the workgroups.
/// `product` is DenseForward, DenseBackwardInput or DenseBackwardWeight, or a vec4 form of one.
pub fn dense_dispatch(
    product: Kernel,
    batch: usize,
    n_in: usize,
    n_out: usize,
    relu: bool,
) -> (DenseParams, (u32, u32, u32)) {
    let (b, i, o) = (batch as u32, n_in as u32, n_out as u32);
    let blocks = |rows: usize, cols: usize| (groups_of(cols, TILE), groups_of(rows, TILE), 1);
    let params = |rows, cols, inner, relu: bool| DenseParams {
        rows,
        cols,
        inner,
        relu: relu as u32,
    };
    match product {
        Kernel::DenseForward | Kernel::DenseForwardVec4 => {
            (params(b, o, i, relu), blocks(batch, n_out))
        }
        Kernel::DenseBackwardInput | Kernel::DenseBackwardInputVec4 => {
            (params(b, i, o, false), blocks(batch, n_in))
        }
        Kernel::DenseBackwardWeight | Kernel::DenseBackwardWeightVec4 => {
            (params(i, o, b, false), blocks(n_in, n_out))
        }
        other => unreachable!("{other:?} is not a dense product"),
    }
}

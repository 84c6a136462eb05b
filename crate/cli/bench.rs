//! `distillrank bench`: the speed figures of BENCHMARKS.md. Each sub-benchmark mirrors one in
//! `bench/peer_cpu.py` (sklearn, numpy, JAX), so that the two can be run back to back on one machine
//! and quoted as ratios.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, Subcommand};

use super::bounded;

use distillrank::bench::{Budget, TrainShape};
use distillrank::cpu::{matmul, View};
use distillrank::data::cache;
use distillrank::data::letor::{read_letor_file, ReadOptions};
use distillrank::engine::{Engine, Trainer};
use distillrank::error::{Error, Result};
use distillrank::gpu::params::DenseParams;
use distillrank::gpu::{dense_dispatch, groups_of, AdapterChoice, Gpu, Kernel, Products};
use distillrank::rng::Rng;

use super::progress::Output;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchCommand,
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Every GPU adapter wgpu finds (name, backend, driver, software or not) and, where there is
    /// none or only software ones, what the machine lacks.
    Adapters,
    /// GFLOP/s of the CPU engine's matrix products at the MLP's shapes (batch 512) and 1024^3.
    Gemm {
        /// Timed repetitions; the best is reported.
        #[arg(value_parser = bounded::<usize>("repeat"), long, default_value_t = 20)]
        repeat: usize,
        /// cpu: the CPU engine's products; gpu: the tiled WGSL kernel against a naive
        /// one-output-per-invocation kernel on the same adapter (software adapters included).
        #[arg(long, value_enum, default_value = "cpu")]
        backend: BenchBackend,
    },
    /// MB/s of the LETOR reader on FILE (best of --repeat).
    Parse {
        /// A LETOR / SVMlight file (optionally .gz).
        file: PathBuf,
        /// Group sizes for a file without qid: (LightGBM style).
        #[arg(long)]
        query: Option<PathBuf>,
        /// Timed repetitions; the best is reported.
        #[arg(value_parser = bounded::<usize>("repeat"), long, default_value_t = 3)]
        repeat: usize,
    },
    /// Time to parse FILE against time to load its binary cache.
    Cache {
        /// A LETOR / SVMlight file (optionally .gz).
        file: PathBuf,
        /// Group sizes for a file without qid: (LightGBM style).
        #[arg(long)]
        query: Option<PathBuf>,
        /// Timed repetitions; the best is reported.
        #[arg(value_parser = bounded::<usize>("repeat"), long, default_value_t = 3)]
        repeat: usize,
    },
    /// Training throughput (docs/s, forward + backward + Adam, RankNet) of the default MLP, or of
    /// the listwise family with `--attention-heads`.
    Train {
        /// Timed training steps.
        #[arg(value_parser = bounded::<usize>("steps"), long, default_value_t = 200)]
        steps: usize,
        /// Untimed steps first (allocation, caches, pipelines).
        #[arg(value_parser = bounded::<usize>("warmup"), long, default_value_t = 20)]
        warmup: usize,
        #[command(flatten)]
        shape: ShapeArgs,
        /// cpu: the CPU engine; gpu: the WGSL kernels on any adapter wgpu finds.
        #[arg(long, value_enum, default_value = "cpu")]
        backend: BenchBackend,
    },
    /// The CPU engine's training step taken apart: each phase's time and share (forward, loss,
    /// backward, Adam), the products' GFLOP/s in forward and backward, and the same products
    /// alone (`bench gemm`'s MLP shapes, measured in the same run) for reference.
    Profile {
        /// Timed training steps.
        #[arg(value_parser = bounded::<usize>("steps"), long, default_value_t = 200)]
        steps: usize,
        /// Untimed steps first (allocation, caches, pipelines).
        #[arg(value_parser = bounded::<usize>("warmup"), long, default_value_t = 20)]
        warmup: usize,
        #[command(flatten)]
        shape: ShapeArgs,
    },
    /// Time of each phase of a GPU training step (forward, losses, backward, Adam) from timestamp
    /// queries, where the adapter has them.
    Kernels {
        /// Timed training steps.
        #[arg(value_parser = bounded::<usize>("steps"), long, default_value_t = 10)]
        steps: usize,
        #[command(flatten)]
        shape: ShapeArgs,
    },
}

/// The model and batches of the training benchmarks (the default MLP, batches of 8 x 64 documents).
#[derive(clap::Args, Clone, Debug)]
pub struct ShapeArgs {
    /// Input features of the model.
    #[arg(value_parser = bounded::<usize>("features"), long, default_value_t = 136)]
    features: usize,
    /// Query groups per batch.
    #[arg(value_parser = bounded::<usize>("groups-per-batch"), long, default_value_t = 8)]
    groups_per_batch: usize,
    /// Documents per query group.
    #[arg(value_parser = bounded::<usize>("docs-per-group"), long, default_value_t = 64)]
    docs_per_group: usize,
    /// Hidden layer widths of the model.
    #[arg(value_parser = super::widths("widths"), long, action = clap::ArgAction::Set, default_value = "256,256,128,64")]
    widths: super::Widths,
    /// Heads of attention over each group's documents: the listwise family (0: the MLP).
    #[arg(value_parser = bounded::<usize>("attention-heads"), long, default_value_t = 0)]
    attention_heads: usize,
}

impl ShapeArgs {
    /// The shape, once its model and batch are known to fit in memory.
    fn checked(&self) -> Result<TrainShape> {
        let shape = self.shape();
        shape.check()?;
        Ok(shape)
    }

    fn shape(&self) -> TrainShape {
        TrainShape {
            features: self.features,
            groups: self.groups_per_batch,
            docs_per_group: self.docs_per_group,
            widths: self.widths.0.clone(),
            attention_heads: self.attention_heads,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq)]
pub enum BenchBackend {
    Cpu,
    Gpu,
}

fn any_gpu() -> Result<std::sync::Arc<Gpu>> {
    distillrank::native::block_on(Gpu::new(AdapterChoice::Any))
}

pub fn run(args: &BenchArgs, out: &Output) -> Result<()> {
    let result = match &args.what {
        BenchCommand::Adapters => adapters(),
        BenchCommand::Gemm {
            repeat,
            backend: BenchBackend::Cpu,
        } => gemm(*repeat),
        BenchCommand::Profile {
            steps,
            warmup,
            shape,
        } => profile(*steps, *warmup, &shape.checked()?),
        BenchCommand::Kernels { steps, shape } => kernels(&any_gpu()?, *steps, &shape.checked()?)?,
        BenchCommand::Gemm {
            repeat,
            backend: BenchBackend::Gpu,
        } => gemm_gpu(*repeat)?,
        BenchCommand::Parse {
            file,
            query,
            repeat,
        } => parse(file, query.as_ref(), *repeat)?,
        BenchCommand::Cache {
            file,
            query,
            repeat,
        } => cache_speedup(file, query.as_ref(), *repeat)?,
        BenchCommand::Train {
            steps,
            warmup,
            shape,
            backend: BenchBackend::Gpu,
        } => train_gpu(&any_gpu()?, *steps, *warmup, &shape.checked()?)?,
        BenchCommand::Train {
            steps,
            warmup,
            shape,
            backend: BenchBackend::Cpu,
        } => train(*steps, *warmup, &shape.checked()?),
    };
    if out.json {
        outln!("{result}");
    } else {
        outln!(
            "{}",
            serde_json::to_string_pretty(&result).expect("serialise")
        );
    }
    Ok(())
}

fn best_of(repeat: usize, mut f: impl FnMut()) -> f64 {
    (0..repeat.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// (m, k, n) of the benchmarked products: the MLP's forward products with a batch of 512 documents
/// (as in bench/peer_cpu.py), and 1024^3.
const GEMM_SHAPES: [(usize, usize, usize); 5] = [
    (512, 136, 256),
    (512, 256, 256),
    (512, 256, 128),
    (512, 128, 64),
    (1024, 1024, 1024),
];

fn gemm(repeat: usize) -> serde_json::Value {
    let mut rng = Rng::new(1);
    let results: Vec<serde_json::Value> = GEMM_SHAPES
        .iter()
        .map(|&(m, k, n)| {
            let a: Vec<f32> = (0..m * k).map(|_| rng.normal() as f32).collect();
            let b: Vec<f32> = (0..k * n).map(|_| rng.normal() as f32).collect();
            let mut c = vec![0f32; m * n];
            let mut product = || matmul(&mut c, View::rows(&a, m, k), View::rows(&b, k, n), false);
            for _ in 0..3 {
                product();
            }
            let seconds = best_of(repeat, &mut product);
            serde_json::json!({"m": m, "k": k, "n": n, "gflops": 2.0 * (m * k * n) as f64 / seconds / 1e9})
        })
        .collect();
    serde_json::json!({"tool": "distillrank", "threads": rayon::current_num_threads(), "shapes": results})
}

/// The CPU engine's step by phase, beside its products alone (the forward shapes of the same
/// model and batch) in the same run.
fn profile(steps: usize, warmup: usize, shape: &TrainShape) -> serde_json::Value {
    let phases = distillrank::bench::cpu_profile(shape, steps, warmup);
    let step_ms: f64 = phases.iter().map(|p| p.ms).sum();
    let rows: Vec<serde_json::Value> = phases
        .iter()
        .map(|p| {
            serde_json::json!({
                "phase": p.phase,
                "ms": p.ms,
                "share": p.ms / step_ms,
                "gflops": p.flops.map(|f| f / (p.ms / 1000.0) / 1e9),
            })
        })
        .collect();
    // The forward products alone, at the same shapes, best of 20.
    let mut rng = Rng::new(1);
    let b = shape.batch_docs();
    let mut widths = vec![shape.features];
    widths.extend(&shape.widths);
    widths.push(1);
    let (mut flops, mut seconds) = (0f64, 0f64);
    for w in widths.windows(2) {
        let (k, n) = (w[0], w[1]);
        let a: Vec<f32> = (0..b * k).map(|_| rng.normal() as f32).collect();
        let m: Vec<f32> = (0..k * n).map(|_| rng.normal() as f32).collect();
        let mut c = vec![0f32; b * n];
        let mut product = || matmul(&mut c, View::rows(&a, b, k), View::rows(&m, k, n), false);
        for _ in 0..3 {
            product();
        }
        seconds += best_of(20, &mut product);
        flops += 2.0 * (b * k * n) as f64;
    }
    serde_json::json!({
        "tool": "distillrank",
        "threads": rayon::current_num_threads(),
        "batch_docs": b,
        "step_ms": step_ms,
        "docs_per_s": b as f64 / (step_ms / 1000.0),
        "phases": rows,
        "forward_products_alone_gflops": flops / seconds / 1e9,
    })
}

fn parse(file: &PathBuf, query: Option<&PathBuf>, repeat: usize) -> Result<serde_json::Value> {
    let bytes = std::fs::metadata(file)
        .map_err(|e| Error::io(file, e))?
        .len();
    let mut docs = 0;
    let mut failure = None;
    let seconds = best_of(repeat, || {
        match read_letor_file(file, query.map(|q| q.as_path()), &ReadOptions::default()) {
            Ok(d) => docs = d.n_docs(),
            Err(e) => failure = Some(e),
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(
        serde_json::json!({"tool": "distillrank", "file": file, "bytes": bytes, "seconds": seconds, "mb_per_s": bytes as f64 / seconds / 1e6, "docs": docs}),
    )
}

fn cache_speedup(
    file: &PathBuf,
    query: Option<&PathBuf>,
    repeat: usize,
) -> Result<serde_json::Value> {
    let data = read_letor_file(file, query.map(|q| q.as_path()), &ReadOptions::default())?;
    let dir = std::env::temp_dir().join(format!("distillrank-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let path = dir.join("bench.drcache");
    cache::write_cache(&data, file, &path)?;
    let parse_s = best_of(repeat, || {
        let _ = read_letor_file(file, query.map(|q| q.as_path()), &ReadOptions::default());
    });
    let mut loaded = None;
    let load_s = best_of(repeat.max(5), || {
        loaded = Some(cache::read_cache(&path, Some(file)))
    });
    // What the load spends making sure the cache is its source's and intact, measured alone.
    let mut checked = Ok(());
    let checksum_s = best_of(repeat.max(5), || checked = cache::check_checksum(&path));
    checked?;
    let mut identity = Ok((0, 0));
    let identity_s = best_of(repeat.max(5), || identity = cache::file_identity(file));
    identity?;
    let _ = std::fs::remove_dir_all(&dir);
    let (mut back, _) = loaded.expect("best_of runs at least once")?;
    back.source = data.source.clone();
    if back != data {
        return Err(Error::Data(
            "the cache did not load back the parsed dataset".into(),
        ));
    }
    Ok(
        serde_json::json!({"file": file, "parse_seconds": parse_s, "cache_load_seconds": load_s, "speedup": parse_s / load_s, "checksum_seconds": checksum_s, "source_identity_seconds": identity_s}),
    )
}

fn train(steps: usize, warmup: usize, shape: &TrainShape) -> serde_json::Value {
    let t = distillrank::native::bench_cpu(shape, Budget::steps(steps, warmup));
    serde_json::json!({"tool": "distillrank", "backend": "cpu", "threads": rayon::current_num_threads(), "docs_per_s": t.docs_per_s, "steps": t.steps, "batch_docs": t.batch_docs, "final_loss": t.final_loss})
}

/// GFLOP/s of a dense layer's three products on one adapter, at the CPU benchmark's shapes read
/// as layers (m rows, k inputs, n outputs): the forward product out = inp . weight, the input
/// gradient dinp = dout . weight^T (m x k, summed over n) and the weight gradient
/// dweight = inp^T . dout (k x n, summed over m). Each is timed with the tiled kernel and with the
/// direct one (no workgroup memory; its vec4 form where the widths allow, as the trainer runs it);
/// the forward product also with the direct kernel's scalar form and with the naive kernel (one
/// output per invocation). Each timing is `repeat` dispatches in one submission, best of three.
/// `ratio` is the forward product with the kind of product kernels a device opened without a
/// choice takes ([`Gpu::open`]: measured on software adapters) against the naive one.
fn gemm_gpu(repeat: usize) -> Result<serde_json::Value> {
    let open = |products| distillrank::native::block_on(Gpu::open(AdapterChoice::Any, products));
    let (tiled_gpu, direct_gpu) = (open(Some(Products::Tiled))?, open(Some(Products::Direct))?);
    let (chosen, chosen_ms) = {
        let auto = open(None)?;
        (auto.products, auto.products_ms.clone())
    };
    let mut rng = Rng::new(1);
    let mut random = |len: usize| -> Vec<f32> { (0..len).map(|_| rng.normal() as f32).collect() };
    let mut results = Vec::new();
    for &(m, k, n) in &GEMM_SHAPES {
        // The layer's operands: its input, weight and the gradient reaching its output.
        let (inp, weight, dout) = (random(m * k), random(k * n), random(m * n));
        let time = |gpu: &Gpu, kernel: Kernel| -> Result<f64> {
            let product = Product::of(kernel, m, k, n);
            let (a, b) = match product.operands {
                Operands::InputWeight => (&inp, &weight),
                Operands::GradientWeight => (&dout, &weight),
                Operands::InputGradient => (&inp, &dout),
            };
            let (ga, gb, bias, out) = (
                gpu.buffer_with("a", a),
                gpu.buffer_with("b", b),
                gpu.buffer("bias", n),
                gpu.buffer("out", product.result_len),
            );
            let slot = gpu.slot(
                kernel,
                [Some(&ga), Some(&gb), Some(&bias), Some(&out), None],
            );
            gpu.set_params(&slot, &product.params);
            let mut best = f64::INFINITY;
            for _ in 0..3 {
                let t = Instant::now();
                distillrank::native::block_on(gpu.run(|pass| {
                    for _ in 0..repeat.max(1) {
                        gpu.record(pass, &slot, product.workgroups);
                    }
                }))?;
                gpu.wait()?;
                best = best.min(t.elapsed().as_secs_f64());
            }
            Ok(2.0 * (m * k * n * repeat.max(1)) as f64 / best / 1e9)
        };
        // The direct products as the trainer runs them (their vec4 form where the widths allow).
        let direct = |product: Kernel| time(&direct_gpu, direct_gpu.product_kernel(product, k, n));
        let forward_tiled = time(&tiled_gpu, Kernel::DenseForward)?;
        let forward_direct = direct(Kernel::DenseForward)?;
        let forward_direct_scalar = time(&direct_gpu, Kernel::DenseForward)?;
        let forward_naive = time(&direct_gpu, Kernel::DenseForwardNaive)?;
        let input_tiled = time(&tiled_gpu, Kernel::DenseBackwardInput)?;
        let input_direct = direct(Kernel::DenseBackwardInput)?;
        let weight_tiled = time(&tiled_gpu, Kernel::DenseBackwardWeight)?;
        let weight_direct = direct(Kernel::DenseBackwardWeight)?;
        let used = match chosen {
            Products::Tiled => forward_tiled,
            Products::Direct => forward_direct,
        };
        results.push(serde_json::json!({
            "m": m, "k": k, "n": n,
            "tiled_gflops": forward_tiled,
            "direct_gflops": forward_direct,
            "direct_scalar_gflops": forward_direct_scalar,
            "naive_gflops": forward_naive,
            "ratio": used / forward_naive,
            "backward_input": {"tiled_gflops": input_tiled, "direct_gflops": input_direct},
            "backward_weight": {"tiled_gflops": weight_tiled, "direct_gflops": weight_direct},
        }));
    }
    Ok(
        serde_json::json!({"tool": "distillrank", "backend": "gpu", "adapter": tiled_gpu.info.name, "device_type": format!("{:?}", tiled_gpu.info.device_type), "products": chosen, "products_ms": chosen_ms, "shapes": results}),
    )
}

/// Which of a layer's operands a product reads as its bindings 1 and 2.
enum Operands {
    /// forward: inp (m x k) and weight (k x n)
    InputWeight,
    /// input gradient: dout (m x n) and weight (k x n)
    GradientWeight,
    /// weight gradient: inp (m x k) and dout (m x n)
    InputGradient,
}

/// One product of a layer with m rows, k inputs and n outputs, dispatched as the trainer does
/// ([`dense_dispatch`]; the naive kernel: one invocation per output).
struct Product {
    operands: Operands,
    /// rows, columns and inner size of the result, and ReLU (off)
    params: DenseParams,
    result_len: usize,
    workgroups: (u32, u32, u32),
}

impl Product {
    fn of(kernel: Kernel, m: usize, k: usize, n: usize) -> Product {
        if kernel == Kernel::DenseForwardNaive {
            return Product {
                operands: Operands::InputWeight,
                params: DenseParams {
                    rows: m as u32,
                    cols: n as u32,
                    inner: k as u32,
                    relu: 0,
                },
                result_len: m * n,
                workgroups: (groups_of(m * n, 64), 1, 1),
            };
        }
        let (params, workgroups) = dense_dispatch(kernel, m, k, n, false);
        let (operands, result_len) = match kernel {
            Kernel::DenseBackwardInput | Kernel::DenseBackwardInputVec4 => {
                (Operands::GradientWeight, m * k)
            }
            Kernel::DenseBackwardWeight | Kernel::DenseBackwardWeightVec4 => {
                (Operands::InputGradient, k * n)
            }
            _ => (Operands::InputWeight, m * n),
        };
        Product {
            operands,
            params,
            result_len,
            workgroups,
        }
    }
}

/// Training throughput of the GPU trainer on the CPU benchmark's batches.
fn train_gpu(
    gpu: &std::sync::Arc<Gpu>,
    steps: usize,
    warmup: usize,
    shape: &TrainShape,
) -> Result<serde_json::Value> {
    let t = distillrank::native::block_on(distillrank::bench::gpu(
        gpu,
        shape,
        Budget::steps(steps, warmup),
    ))?;
    Ok(
        serde_json::json!({"tool": "distillrank", "backend": "gpu", "adapter": gpu.info.name, "docs_per_s": t.docs_per_s, "steps": t.steps, "batch_docs": t.batch_docs, "final_loss": t.final_loss}),
    )
}

/// The mean time of each training-step phase over `steps` profiled steps (after two warm-up steps).
fn kernels(
    gpu: &std::sync::Arc<Gpu>,
    steps: usize,
    shape: &TrainShape,
) -> Result<serde_json::Value> {
    let data = shape.data();
    let mut trainer = shape.ranknet_trainer(&Engine::Gpu(gpu.clone()))?;
    let mut totals: Vec<(&str, f64)> = Vec::new();
    for i in 0..steps.max(1) + 2 {
        let timings = distillrank::native::block_on(trainer.step_profiled(&data.step(i)))?;
        distillrank::native::block_on(trainer.read_losses())?;
        if i >= 2 {
            if totals.is_empty() {
                totals = timings.iter().map(|(n, _)| (*n, 0.0)).collect();
            }
            for (total, (_, ms)) in totals.iter_mut().zip(&timings) {
                total.1 += ms / steps.max(1) as f64;
            }
        }
    }
    let step_ms: f64 = totals.iter().map(|t| t.1).sum();
    let phases: Vec<serde_json::Value> = totals
        .iter()
        .map(|(n, ms)| serde_json::json!({"phase": n, "ms": ms, "share": ms / step_ms}))
        .collect();
    Ok(
        serde_json::json!({"tool": "distillrank", "adapter": gpu.info.name, "batch_docs": shape.batch_docs(), "step_ms": step_ms, "phases": phases}),
    )
}

/// The adapters wgpu finds, and the machine's GPU plumbing: Vulkan ICD manifests, NVIDIA device
/// nodes and driver. `why_no_gpu` says, in words, why no hardware adapter is there (None when one
/// is).
fn adapters() -> serde_json::Value {
    let found = distillrank::native::block_on(distillrank::gpu::adapters());
    let list: Vec<serde_json::Value> = found
        .iter()
        .map(|a| {
            serde_json::json!({
                "label": distillrank::gpu::adapter_label(a),
                "name": a.name,
                "backend": format!("{:?}", a.backend),
                "device_type": format!("{:?}", a.device_type),
                "software": a.device_type == wgpu::DeviceType::Cpu,
                "driver": a.driver,
                "driver_info": a.driver_info,
                "vendor": a.vendor,
                "device": a.device,
            })
        })
        .collect();
    let icds: Vec<String> = [
        "/usr/share/vulkan/icd.d",
        "/etc/vulkan/icd.d",
        "/usr/local/share/vulkan/icd.d",
    ]
    .iter()
    .filter_map(|d| std::fs::read_dir(d).ok())
    .flatten()
    .filter_map(|e| e.ok())
    .map(|e| e.path().display().to_string())
    .collect();
    let nvidia_nodes = std::path::Path::new("/dev/nvidia0").exists();
    let nvidia_driver = std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|v| v.lines().next().map(str::to_string));
    let hardware = found.iter().any(|a| a.device_type != wgpu::DeviceType::Cpu);
    let why = if hardware {
        None
    } else if nvidia_nodes && !icds.iter().any(|p| p.contains("nvidia")) {
        Some("an NVIDIA GPU is present (/dev/nvidia0) but no NVIDIA Vulkan ICD manifest (nvidia_icd.json) is installed: the container lacks the driver's graphics part; install the driver's Vulkan library (libnvidia-gl) or run the container with NVIDIA_DRIVER_CAPABILITIES=all".to_string())
    } else if nvidia_nodes {
        Some("an NVIDIA GPU and its Vulkan ICD manifest are present, but the Vulkan loader offers no NVIDIA adapter: the ICD's library (libGLX_nvidia.so.0) may be missing or of another driver version than the kernel module".to_string())
    } else if icds.is_empty() {
        Some("no Vulkan ICD manifest is installed (/usr/share/vulkan/icd.d is empty or missing) and no GPU device node is visible: this machine has no GPU, or the container does not expose it".to_string())
    } else {
        Some(format!(
            "no GPU device is visible (no /dev/nvidia0; Vulkan drivers installed: {}){}",
            icds.iter()
                .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if found.is_empty() {
                ""
            } else {
                ": only software adapters run here"
            }
        ))
    };
    serde_json::json!({
        "tool": "distillrank",
        "adapters": list,
        "hardware": hardware,
        "why_no_gpu": why,
        "vulkan_icds": icds,
        "nvidia_device_nodes": nvidia_nodes,
        "nvidia_driver": nvidia_driver,
    })
}

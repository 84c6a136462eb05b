//! `distillrank bench`: the speed figures of BENCHMARKS.md. Each sub-benchmark mirrors one in
//! `bench/peer_cpu.py` (sklearn, numpy, JAX), so that the two can be run back to back on one machine
//! and quoted as ratios.

use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, Subcommand};

use distillrank::cpu::adam::{Adam, AdamConfig};
use distillrank::cpu::loss::ranknet;
use distillrank::cpu::mlp::{Activations, Mlp};
use distillrank::cpu::{matmul, View};
use distillrank::data::cache;
use distillrank::data::letor::{read_letor_file, ReadOptions};
use distillrank::rng::Rng;
use distillrank::{Error, Result};

use super::progress::Output;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub what: BenchCommand,
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// GFLOP/s of the CPU engine's matrix products at the MLP's shapes (batch 512) and 1024^3.
    Gemm {
        #[arg(long, default_value_t = 20)]
        repeat: usize,
    },
    /// MB/s of the LETOR reader on FILE (best of --repeat).
    Parse {
        file: PathBuf,
        #[arg(long)]
        query: Option<PathBuf>,
        #[arg(long, default_value_t = 3)]
        repeat: usize,
    },
    /// Time to parse FILE against time to load its binary cache.
    Cache {
        file: PathBuf,
        #[arg(long)]
        query: Option<PathBuf>,
        #[arg(long, default_value_t = 3)]
        repeat: usize,
    },
    /// Training throughput (docs/s, forward + backward + Adam, RankNet) of the default MLP.
    Train {
        #[arg(long, default_value_t = 200)]
        steps: usize,
        #[arg(long, default_value_t = 20)]
        warmup: usize,
        #[arg(long, default_value_t = 136)]
        features: usize,
        #[arg(long, default_value_t = 8)]
        groups_per_batch: usize,
        #[arg(long, default_value_t = 64)]
        docs_per_group: usize,
        #[arg(long, value_delimiter = ',', default_value = "256,256,128,64")]
        widths: Vec<usize>,
    },
}

pub fn run(args: &BenchArgs, out: &Output) -> Result<()> {
    let result = match &args.what {
        BenchCommand::Gemm { repeat } => gemm(*repeat),
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
            features,
            groups_per_batch,
            docs_per_group,
            widths,
        } => train(
            *steps,
            *warmup,
            *features,
            *groups_per_batch,
            *docs_per_group,
            widths,
        ),
    };
    if out.json {
        println!("{result}");
    } else {
        println!(
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

fn gemm(repeat: usize) -> serde_json::Value {
    let shapes = [
        (512, 136, 256),
        (512, 256, 256),
        (512, 256, 128),
        (512, 128, 64),
        (1024, 1024, 1024),
    ];
    let mut rng = Rng::new(1);
    let results: Vec<serde_json::Value> = shapes
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
    let _ = std::fs::remove_dir_all(&dir);
    let (mut back, _) = loaded.expect("best_of runs at least once")?;
    back.source = data.source.clone();
    if back != data {
        return Err(Error::Data(
            "the cache did not load back the parsed dataset".into(),
        ));
    }
    Ok(
        serde_json::json!({"file": file, "parse_seconds": parse_s, "cache_load_seconds": load_s, "speedup": parse_s / load_s}),
    )
}

fn train(
    steps: usize,
    warmup: usize,
    features: usize,
    groups: usize,
    docs_per_group: usize,
    widths: &[usize],
) -> serde_json::Value {
    let batch_docs = groups * docs_per_group;
    let mut rng = Rng::new(0);
    // 16 distinct batches, cycled, as the JAX peer does.
    let batches: Vec<(Vec<f32>, Vec<f32>)> = (0..16)
        .map(|_| {
            let x = (0..batch_docs * features)
                .map(|_| rng.normal() as f32)
                .collect();
            let y = (0..batch_docs)
                .map(|_| rng.int_range(0, 4) as f32)
                .collect();
            (x, y)
        })
        .collect();
    let offsets: Vec<usize> = (0..=groups).map(|g| g * docs_per_group).collect();
    let include = vec![true; groups];
    let mut model = Mlp::<f32>::new(features, widths, 0);
    let mut adam = Adam::new(&model, AdamConfig::default());
    let mut acts = Activations::default();
    let mut grads = model.zero_gradients();
    let mut dlogits = vec![0f32; batch_docs];
    let mut loss = 0.0;
    let mut step = |i: usize| {
        let (x, y) = &batches[i % batches.len()];
        let logits = model.forward(x, &mut acts);
        dlogits.iter_mut().for_each(|d| *d = 0.0);
        loss = ranknet(logits, y, &offsets, &include, 1.0, &mut dlogits);
        model.backward(x, &acts, &dlogits, &mut grads);
        adam.update(&mut model, &grads);
    };
    for i in 0..warmup {
        step(i);
    }
    let t = Instant::now();
    for i in 0..steps {
        step(warmup + i);
    }
    let seconds = t.elapsed().as_secs_f64();
    serde_json::json!({"tool": "distillrank", "backend": "cpu", "threads": rayon::current_num_threads(), "docs_per_s": (steps * batch_docs) as f64 / seconds, "steps": steps, "batch_docs": batch_docs, "final_loss": loss})
}

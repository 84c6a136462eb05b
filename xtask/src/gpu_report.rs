//! `cargo xtask gpu-report [DIR]`: everything the GPU engine can tell about a machine, in one
//! command of a few minutes, written as `DIR/report.json` and `DIR/report.md` (default
//! `target/gpu-report/`):
//!
//! 1. every adapter wgpu finds (`distillrank bench adapters`), and why there is no hardware one
//!    when there is none;
//! 2. on each adapter (chosen through `DISTILLRANK_ADAPTER`): the GPU kernel checks against the
//!    CPU engine (`tests/gpu.rs`), `bench gemm` and `bench train` on the GPU, and `compare`
//!    with `--backend gpu` (the default comparison on hardware adapters; a small one on
//!    software adapters, which are 5-25x slower than the CPU engine);
//! 3. the CPU engine's `bench gemm` and `bench train` on the same machine, for the ratios;
//! 4. PyTorch's step of the same model (`bench/peer_torch.py`) on CUDA, where PyTorch and a CUDA
//!    device are there.
//!
//! Every step has a time limit and a failed step is recorded, not fatal.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

use crate::{cargo, root, run, target_dir};

/// What one step printed and how it ended.
struct Step {
    ok: bool,
    /// It ran past its limit and was stopped.
    timed_out: Option<u64>,
    seconds: f64,
    stdout: String,
    stderr: String,
}

/// Runs `cmd` under `timeout LIMIT` with `env`, capturing its output.
fn step(program: &Path, args: &[&str], env: &[(&str, &str)], limit_s: u64) -> Step {
    let mut cmd = Command::new("timeout");
    cmd.arg(limit_s.to_string())
        .arg(program)
        .args(args)
        .current_dir(root());
    for (k, v) in env {
        cmd.env(k, v);
    }
    eprintln!(
        "$ {}{} {}",
        env.iter()
            .map(|(k, v)| format!("{k}='{v}' "))
            .collect::<String>(),
        program.display(),
        args.join(" ")
    );
    let started = Instant::now();
    match cmd.output() {
        Ok(out) => Step {
            ok: out.status.success(),
            // `timeout` exits with 124 when the limit ends the command.
            timed_out: (out.status.code() == Some(124)).then_some(limit_s),
            seconds: started.elapsed().as_secs_f64(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
        Err(e) => Step {
            ok: false,
            timed_out: None,
            seconds: 0.0,
            stdout: String::new(),
            stderr: format!("cannot start {}: {e}", program.display()),
        },
    }
}

/// The last JSON object a step printed, or its error.
fn json_of(s: &Step) -> Value {
    let parsed = s
        .stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .or_else(|| serde_json::from_str::<Value>(&s.stdout).ok());
    match (s.ok, parsed) {
        (true, Some(v)) => v,
        (_, v) => json!({
            "error": match s.timed_out {
                Some(limit) => format!("stopped after its limit of {limit} s"),
                None => tail(&s.stderr, 600),
            },
            "output": v,
            "seconds": s.seconds,
        }),
    }
}

fn tail(text: &str, chars: usize) -> String {
    let t = text.trim();
    let start = t.len().saturating_sub(chars);
    let start = (start..t.len())
        .find(|&i| t.is_char_boundary(i))
        .unwrap_or(t.len());
    t[start..].to_string()
}

/// `test result: ok. N passed; M failed` lines of a cargo test run, summed.
fn test_counts(s: &Step) -> (u64, u64) {
    let mut counts = (0, 0);
    for line in s.stdout.lines().filter(|l| l.starts_with("test result:")) {
        let number = |word: &str| {
            line.split(';')
                .find(|p| p.contains(word))
                .and_then(|p| p.split_whitespace().rev().nth(1)?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        counts.0 += number("passed");
        counts.1 += number("failed");
    }
    counts
}

pub fn gpu_report(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let started = Instant::now();
    run(cargo().args(["build", "--release", "--bin", "distillrank"]))?;
    // The GPU checks' test binary, built once; cargo prints its path.
    let built = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args([
            "test",
            "--release",
            "--test",
            "gpu",
            "--no-run",
            "--message-format",
            "json",
        ])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cargo test --no-run: {e}"))?;
    let checks_binary = String::from_utf8_lossy(&built.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["target"]["name"] == "gpu" && v["executable"].is_string())
        .filter_map(|v| v["executable"].as_str().map(str::to_string))
        .next_back()
        .ok_or("cargo did not build the GPU checks (tests/gpu.rs)")?;
    let bin = target_dir().join("release/distillrank");
    // Mesa's display probe is quiet with a runtime directory.
    let xdg = std::env::var("XDG_RUNTIME_DIR").unwrap_or_else(|_| {
        let d = std::env::temp_dir().join("distillrank-xdg");
        let _ = std::fs::create_dir_all(&d);
        d.display().to_string()
    });
    let base_env = [("XDG_RUNTIME_DIR", xdg.as_str())];

    let adapters = json_of(&step(&bin, &["bench", "adapters", "--json"], &base_env, 60));
    let cpu_train = json_of(&step(
        &bin,
        &["bench", "train", "--backend", "cpu", "--json"],
        &base_env,
        300,
    ));
    let cpu_gemm = json_of(&step(&bin, &["bench", "gemm", "--json"], &base_env, 300));

    let mut per_adapter = Vec::new();
    for adapter in adapters["adapters"].as_array().cloned().unwrap_or_default() {
        let label = adapter["label"].as_str().unwrap_or("").to_string();
        let software = adapter["software"].as_bool().unwrap_or(true);
        let env = [
            ("XDG_RUNTIME_DIR", xdg.as_str()),
            ("DISTILLRANK_ADAPTER", label.as_str()),
        ];
        let checks = step(
            Path::new(&checks_binary),
            &["--test-threads", "1"],
            &env,
            600,
        );
        let (passed, failed) = test_counts(&checks);
        // Software adapters take minutes per repeat of the largest products: one repeat there.
        let repeat = if software { "1" } else { "20" };
        let gemm = json_of(&step(
            &bin,
            &[
                "bench",
                "gemm",
                "--backend",
                "gpu",
                "--repeat",
                repeat,
                "--json",
            ],
            &env,
            300,
        ));
        let (steps, warmup) = if software { ("20", "3") } else { ("500", "50") };
        let train = json_of(&step(
            &bin,
            &[
                "bench",
                "train",
                "--backend",
                "gpu",
                "--steps",
                steps,
                "--warmup",
                warmup,
                "--json",
            ],
            &env,
            300,
        ));
        // The default comparison on hardware; on a software adapter a small one, said so.
        let out = dir.join(format!("compare-{}", per_adapter.len() + 1));
        let out_s = out.display().to_string();
        let mut compare_args = vec![
            "compare",
            "--backend",
            "gpu",
            "--out",
            out_s.as_str(),
            "--quiet",
        ];
        let small = [
            "--queries",
            "300",
            "--valid-queries",
            "100",
            "--test-queries",
            "200",
            "--seeds",
            "1",
            "--epochs",
            "2",
        ];
        if software {
            compare_args.extend(small);
        }
        let compare = step(&bin, &compare_args, &env, 600);
        let results: Value = std::fs::read(out.join("results.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or(Value::Null);
        let ndcg: Value = results["methods"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v["ndcg@8"].clone()))
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            })
            .unwrap_or(Value::Null);
        per_adapter.push(json!({
            "adapter": adapter,
            "kernel_checks": {"ok": checks.ok && failed == 0 && passed > 0, "passed": passed, "failed": failed,
                "seconds": checks.seconds, "error": if checks.ok { Value::Null } else { tail(&checks.stdout, 1500).into() }},
            "bench_gemm": gemm,
            "bench_train": train,
            "train_ratio_to_cpu": train["docs_per_s"].as_f64().zip(cpu_train["docs_per_s"].as_f64()).map(|(g, c)| g / c),
            "compare": {"ok": compare.ok, "seconds": compare.seconds, "small": software,
                "args": compare_args, "ndcg@8": ndcg,
                "error": if compare.ok { Value::Null } else { tail(&compare.stderr, 600).into() }},
        }));
    }

    let torch = json_of(&step(
        Path::new("python3"),
        &["bench/peer_torch.py"],
        &base_env,
        300,
    ));
    let report = json!({
        "tool": "distillrank gpu-report",
        "seconds": started.elapsed().as_secs_f64(),
        "machine": {"cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)},
        "adapters": adapters,
        "cpu": {"bench_train": cpu_train, "bench_gemm": cpu_gemm},
        "per_adapter": per_adapter,
        "pytorch": torch,
    });
    let json_path = dir.join("report.json");
    std::fs::write(
        &json_path,
        serde_json::to_string_pretty(&report).unwrap() + "\n",
    )
    .map_err(|e| format!("{}: {e}", json_path.display()))?;
    let md = markdown(&report);
    let md_path = dir.join("report.md");
    std::fs::write(&md_path, &md).map_err(|e| format!("{}: {e}", md_path.display()))?;
    println!("{md}");
    println!("wrote {} and {}", json_path.display(), md_path.display());
    Ok(())
}

fn markdown(r: &Value) -> String {
    let mut s = String::from("# GPU report\n\n");
    let adapters = r["adapters"]["adapters"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if adapters.is_empty() {
        s.push_str("wgpu finds **no adapter** on this machine.\n\n");
    }
    for a in &adapters {
        let _ = writeln!(
            s,
            "- {} ({}, driver {} {}){}",
            a["name"].as_str().unwrap_or("?"),
            a["backend"].as_str().unwrap_or("?"),
            a["driver"].as_str().unwrap_or(""),
            a["driver_info"].as_str().unwrap_or(""),
            if a["software"].as_bool() == Some(true) {
                ": **a software adapter** (a CPU rasteriser), not a GPU"
            } else {
                ""
            }
        );
    }
    if let Some(why) = r["adapters"]["why_no_gpu"].as_str() {
        let _ = writeln!(s, "\nNo hardware GPU: {why}.");
    }
    let rate = |v: &Value| {
        v["docs_per_s"]
            .as_f64()
            .map_or("failed".to_string(), |d| format!("{:.0} docs/s", d))
    };
    let _ = writeln!(
        s,
        "\nCPU engine, `bench train` (default MLP, RankNet, Adam): {}",
        rate(&r["cpu"]["bench_train"])
    );
    for p in r["per_adapter"].as_array().cloned().unwrap_or_default() {
        let a = &p["adapter"];
        let _ = writeln!(s, "\n## {}\n", a["label"].as_str().unwrap_or("?"));
        let c = &p["kernel_checks"];
        let _ = writeln!(
            s,
            "- kernel checks against the CPU engine (tests/gpu.rs): {} passed, {} failed{}",
            c["passed"],
            c["failed"],
            if c["ok"].as_bool() == Some(true) {
                ""
            } else {
                " — **not all passed**"
            }
        );
        let _ = writeln!(
            s,
            "- `bench train --backend gpu`: {} ({} the CPU engine's)",
            rate(&p["bench_train"]),
            p["train_ratio_to_cpu"]
                .as_f64()
                .map_or("n/a".into(), |x| format!("{x:.2}x"))
        );
        if let Some(shapes) = p["bench_gemm"]["shapes"].as_array() {
            let cpu: Vec<Value> = r["cpu"]["bench_gemm"]["shapes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "- `bench gemm --backend gpu`, forward products in GFLOP/s (the device took the {} kernels):\n\n  | m x k x n | direct | tiled | naive | CPU engine |\n  |---|---:|---:|---:|---:|",
                p["bench_gemm"]["products"].as_str().unwrap_or("?").to_lowercase()
            );
            let g = |v: &Value| v.as_f64().map_or("—".into(), |x| format!("{x:.1}"));
            for sh in shapes {
                let same = cpu
                    .iter()
                    .find(|c| c["m"] == sh["m"] && c["k"] == sh["k"] && c["n"] == sh["n"]);
                let _ = writeln!(
                    s,
                    "  | {} x {} x {} | {} | {} | {} | {} |",
                    sh["m"],
                    sh["k"],
                    sh["n"],
                    g(&sh["direct_gflops"]),
                    g(&sh["tiled_gflops"]),
                    g(&sh["naive_gflops"]),
                    same.map_or("—".into(), |c| g(&c["gflops"]))
                );
            }
            s.push('\n');
        } else {
            let _ = writeln!(s, "- `bench gemm --backend gpu`: {}", p["bench_gemm"]);
        }
        let cmp = &p["compare"];
        let _ = writeln!(
            s,
            "- `compare --backend gpu`{}: {} in {:.0} s; test NDCG@8 {}",
            if cmp["small"].as_bool() == Some(true) {
                " (a small one: 300 queries, 1 seed, 2 epochs, since the adapter is software)"
            } else {
                " (the default comparison)"
            },
            if cmp["ok"].as_bool() == Some(true) {
                "ran"
            } else {
                "**failed**"
            },
            cmp["seconds"].as_f64().unwrap_or(0.0),
            cmp["ndcg@8"]
                .as_object()
                .map(|m| m
                    .iter()
                    .map(|(k, v)| format!(
                        "{k} {}",
                        v["mean"]
                            .as_f64()
                            .map_or("n/a".into(), |x| format!("{x:.4}"))
                    ))
                    .collect::<Vec<_>>()
                    .join(", "))
                .unwrap_or_else(|| cmp["error"].to_string())
        );
    }
    let t = &r["pytorch"];
    let _ = writeln!(
        s,
        "\nPyTorch, the same step on CUDA (`bench/peer_torch.py`): {}",
        t["skipped"].as_str().map_or_else(
            || format!(
                "{} on {}",
                rate(t),
                t["device_name"].as_str().unwrap_or("?")
            ),
            |w| format!("skipped: {w}")
        )
    );
    let _ = writeln!(
        s,
        "\nThe report took {:.0} s.",
        r["seconds"].as_f64().unwrap_or(0.0)
    );
    s
}

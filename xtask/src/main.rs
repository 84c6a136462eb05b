//! Project tasks, run as `cargo xtask <task>`:
//!
//! * `demo`: build in release mode and compare no-distillation, self-distillation, GenD and PFD on
//!   the embedded synthetic dataset (the main job), writing the report to `out/demo/`.
//! * `test`: every test of the workspace.
//! * `bench`: the CPU benchmarks of BENCHMARKS.md, with the Python peers when they are installed.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let rest = &args[args.len().min(1)..];
    let result = match task {
        "demo" => demo(rest),
        "test" => test(rest),
        "bench" => bench(),
        _ => {
            eprintln!("usage: cargo xtask <demo|test|bench> [args]\n  demo   compare the methods on the embedded synthetic data (extra args go to `distillrank compare`)\n  test   run every test\n  bench  CPU benchmarks against numpy / sklearn / JAX");
            return if task == "help" {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {task}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn run(cmd: &mut Command) -> Result<(), String> {
    eprintln!("$ {cmd:?}");
    let status = cmd
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed with {status}"))
    }
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

fn demo(extra: &[String]) -> Result<(), String> {
    run(cargo().args(["build", "--release", "--bin", "distillrank"]))?;
    let bin = root().join("target/release/distillrank");
    let mut cmd = Command::new(bin);
    cmd.args(["compare", "--out", "out/demo"]).args(extra);
    run(&mut cmd)
}

fn test(extra: &[String]) -> Result<(), String> {
    if !root().join("../shared/data").exists() {
        return Err("the tests read ../shared/data beside the checkout (MQ2008 and LightGBM's rank example)".into());
    }
    // Library and integration tests of the distillrank package (doc tests hold no tests).
    let mut cmd = cargo();
    cmd.args([
        "test",
        "-p",
        "distillrank",
        "--all-targets",
        "--no-fail-fast",
    ])
    .args(extra);
    eprintln!("$ {cmd:?}");
    let mut child = cmd
        .current_dir(root())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start cargo test: {e}"))?;
    // Echo cargo's output and add up its per-target summaries into one closing line.
    let (mut passed, mut failed, mut ignored) = (0u64, 0u64, 0u64);
    let stdout = child.stdout.take().expect("piped stdout");
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        if let Some(summary) = line.strip_prefix("test result: ") {
            let count = |word: &str| -> u64 {
                summary
                    .split(';')
                    .find_map(|part| {
                        part.trim()
                            .strip_suffix(word)
                            .and_then(|n| n.trim().rsplit(' ').next()?.parse().ok())
                    })
                    .unwrap_or(0)
            };
            passed += count(" passed");
            failed += count(" failed");
            ignored += count(" ignored");
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    println!("{passed} passed, {failed} failed, {ignored} skipped");
    if status.success() && failed == 0 && passed > 0 {
        Ok(())
    } else {
        Err(format!(
            "cargo test: {status}, {passed} passed, {failed} failed"
        ))
    }
}

fn bench() -> Result<(), String> {
    run(cargo().args(["build", "--release", "--bin", "distillrank"]))?;
    let bin = root().join("target/release/distillrank");
    // All of MQ2008 (S1..S5, 9.3 MB) as one file, for the parser and the cache.
    let parts = root().join("../shared/data/mq2008");
    let mq = root().join("target/bench/mq2008_all.txt");
    std::fs::create_dir_all(mq.parent().unwrap()).map_err(|e| e.to_string())?;
    let mut text = Vec::new();
    for s in 1..=5 {
        let part = parts.join(format!("S{s}.txt"));
        text.extend(std::fs::read(&part).map_err(|e| format!("{}: {e}", part.display()))?);
    }
    std::fs::write(&mq, text).map_err(|e| e.to_string())?;
    let ours: Vec<Vec<String>> = vec![
        vec!["bench".into(), "gemm".into()],
        vec!["bench".into(), "parse".into(), mq.display().to_string()],
        vec!["bench".into(), "cache".into(), mq.display().to_string()],
        vec!["bench".into(), "train".into()],
    ];
    for args in &ours {
        run(Command::new(&bin).args(args).arg("--json"))?;
    }
    let peer = root().join("bench/peer_cpu.py");
    for args in [
        vec!["sgemm"],
        vec!["parse", &mq.display().to_string()],
        vec!["train"],
    ] {
        if let Err(e) = run(Command::new("python3").arg(&peer).args(&args)) {
            eprintln!(
                "peer benchmark skipped ({e}); install with: pip install numpy scikit-learn jax"
            );
        }
    }
    Ok(())
}

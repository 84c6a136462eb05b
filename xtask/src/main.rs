//! Project tasks, run as `cargo xtask <task>`:
//!
//! * `demo`: the main job: build the page (the crate as wasm, Chart.js from npm) and serve `web/` on
//!   127.0.0.1, where it trains and compares the methods on the embedded synthetic data; the docs
//!   book beside it at `/book/index.html`.
//! * `serve [--port N]`: serve `web/` as last built.
//! * `dist [DIR]`: the page as a static bundle (default `dist/`).
//! * `compare`: the same comparison from the native CLI, report in `out/demo/`.
//! * `test`: install what the tests need (lavapipe, Chromium, wasm tools, npm packages) if
//!   missing, then every test: native (CPU and GPU on lavapipe), the kernels in headless Chromium
//!   on WebGPU, and the page end to end in headless Chromium.
//! * `python`: the Python package (PyO3, maturin) installed into `target/python-venv` and its
//!   tests (`tests/python`, pytest) against the CLI (`python.rs`); `test` runs them too.
//! * `docs`: the docs book (mdBook) into `target/book/`, its generated reference pages written
//!   first (`docs.rs`).
//! * `data`: unpack the real LETOR data the tests read (MQ2008's five parts and Fold1, LightGBM's
//!   rank example; `tests/data/letor`, compressed) into `target/data/`; `test` does it first.
//! * `wheel`: the Python package as one abi3 wheel (maturin) in `target/wheels/`; the Python
//!   tests install and run against it.
//! * `bench`: the CPU benchmarks of BENCHMARKS.md, with the Python peers when they are installed.
//! * `bench-web`: training throughput in headless Chromium, against TensorFlow.js on WebGPU.
//! * `gpu-report [DIR]`: every adapter, the kernel checks, GPU benchmarks and a comparison on
//!   each, against the CPU engine and PyTorch where present (`gpu_report.rs`).

mod docs;
mod gpu_report;
#[path = "../../tests/common/letor_data.rs"]
mod letor_data;
mod python;
mod web;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map(String::as_str).unwrap_or("help");
    let rest = &args[args.len().min(1)..];
    let result = match task {
        "demo" => port_arg(rest).and_then(|port| {
            web::build()?;
            // The docs book beside the page, at /book/index.html; the page serves without it.
            if let Err(e) =
                docs::build_book().and_then(|()| docs::copy_book(&root().join("web/book")))
            {
                eprintln!("the docs book is not served: {e}");
            }
            serve(port)
        }),
        "serve" => port_arg(rest).and_then(serve),
        "dist" => web::dist(&root().join(rest.first().map(String::as_str).unwrap_or("dist"))),
        "compare" => compare(rest),
        "test" => test(rest),
        "docs" => docs::docs(),
        "data" => letor_data::unpack(&root()).map(|dir| println!("{}", dir.display())),
        "e2e" => e2e().map(|_| ()),
        "python" => python::python(),
        "wheel" => python::wheel().map(drop),
        "bench" => bench(),
        "bench-web" => bench_web(rest),
        "bench-step" => bench_step(rest),
        "gpu-report" => gpu_report::gpu_report(
            &root().join(
                rest.first()
                    .map(String::as_str)
                    .unwrap_or("target/gpu-report"),
            ),
        ),
        _ => {
            eprintln!("usage: cargo xtask <demo|dist|compare|test|bench> [args]\n  demo [--port N]  build the page and serve it on 127.0.0.1 (default port 8000)\n  serve [--port N] serve the page as last built\n  dist [DIR]       write the page as a static bundle (default dist/)\n  compare [ARGS]   compare the methods from the native CLI (ARGS go to `distillrank compare`)\n  test             run every test\n  docs             write the book's generated reference pages and build the book into target/book\n  data             unpack the real LETOR data the tests read into target/data\n  e2e              the page's end-to-end test alone\n  python           the Python package: build its wheel, install it into target/python-venv and run tests/python\n  wheel            the Python package as one abi3 wheel in target/wheels\n  bench            CPU benchmarks against numpy / sklearn / JAX\n  bench-step [N]   the training step against JAX jit and PyTorch eager (CPU), alternated N times (default 3)\n  bench-web [Q]    in-browser training throughput against TensorFlow.js (Q: bench.html's query string)\n  gpu-report [DIR] adapters, kernel checks, GPU benchmarks and a GPU comparison (default target/gpu-report)");
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

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Where cargo writes what it builds: `CARGO_TARGET_DIR` when set (relative to the repository),
/// else `target/`.
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => root().join(dir),
        _ => root().join("target"),
    }
}

pub fn run(cmd: &mut Command) -> Result<(), String> {
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

pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// `[--port N]`, 8000 by default.
fn port_arg(args: &[String]) -> Result<u16, String> {
    match args {
        [] => Ok(8000),
        [flag, port] if flag == "--port" => port
            .parse()
            .map_err(|_| format!("--port {port}: expected a port number")),
        _ => Err("expected [--port N]".into()),
    }
}

/// Serves `web/` on 127.0.0.1 until Ctrl-C.
fn serve(port: u16) -> Result<(), String> {
    let server = web::Server::bind(port)?;
    println!("distillrank: open {} (Ctrl-C stops the server)", server.url);
    server.serve();
    Ok(())
}

fn compare(extra: &[String]) -> Result<(), String> {
    run(cargo().args(["build", "--release", "--bin", "distillrank"]))?;
    let bin = target_dir().join("release/distillrank");
    let mut cmd = Command::new(bin);
    cmd.args(["compare", "--out", "out/demo"]).args(extra);
    run(&mut cmd)
}

fn test(extra: &[String]) -> Result<(), String> {
    letor_data::unpack(&root())?;
    setup_test_tools()?;
    // Mesa's Vulkan driver wants a runtime directory.
    let runtime = std::env::temp_dir().join("distillrank-xdg");
    let _ = std::fs::create_dir_all(&runtime);
    let mut total = Tally::default();
    let lint_ok = match lint() {
        Ok(()) => true,
        Err(e) => {
            eprintln!("lint: {e}");
            false
        }
    };
    // Native: library and integration tests of the distillrank package; the GPU tests run on
    // lavapipe.
    let mut native = cargo();
    native
        .args([
            "test",
            "-p",
            "distillrank",
            "--all-targets",
            "--no-fail-fast",
        ])
        .args(extra);
    native.env("XDG_RUNTIME_DIR", &runtime);
    let native_ok = total.run(native)?;
    // The crate root's documentation examples, and the example programs (built by the native
    // tests), each run once: a program that fails counts as a failed test.
    let mut doc = cargo();
    doc.args(["test", "-p", "distillrank", "--doc"]);
    let doc_ok = total.run(doc)?;
    let examples_ok = run_examples(&mut total, &runtime);
    // Python: the package built with maturin, its tests against the CLI (tests/python).
    let python_ok = python::tests(&mut total).unwrap_or_else(|e| {
        eprintln!("python: {e}");
        false
    });
    // Browser: the same kernel checks in headless Chromium on WebGPU (tests/web.rs).
    let mut web = Command::new("wasm-pack");
    web.args([
        "test",
        "--headless",
        "--chrome",
        "--mode",
        "no-install",
        "--no-default-features",
        "--test",
        "web",
    ]);
    web.env("CHROMEDRIVER", "/usr/bin/chromedriver");
    // A training run on SwiftShader takes longer than the runner's default 20 s.
    web.env("WASM_BINDGEN_TEST_TIMEOUT", "300");
    let web_ok = total.run(web)?;
    let e2e_ok = run_e2e(&mut total)?;
    // The docs book builds (mdBook; its links and generated pages are checked by tests/docs.rs).
    let book_ok = docs::build_book().map_or_else(
        |e| {
            eprintln!("book: {e}");
            false
        },
        |()| true,
    );
    println!(
        "{} passed, {} failed, {} skipped",
        total.passed, total.failed, total.ignored
    );
    if !lint_ok {
        println!("lint failed: cargo fmt --check or cargo clippy (see above)");
    }
    if lint_ok
        && native_ok
        && doc_ok
        && examples_ok
        && python_ok
        && web_ok
        && e2e_ok
        && book_ok
        && total.failed == 0
        && total.passed > 0
    {
        Ok(())
    } else {
        Err(format!("{} passed, {} failed", total.passed, total.failed))
    }
}

/// Runs every program of `examples/` (`cargo run --example NAME`), counting each as a test;
/// returns whether they all succeeded.
fn run_examples(total: &mut Tally, runtime: &Path) -> bool {
    let mut names: Vec<String> = std::fs::read_dir(root().join("examples"))
        .map(|dir| {
            dir.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.strip_suffix(".rs").map(str::to_string)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut ok = true;
    for name in names {
        eprintln!("$ cargo run -q --example {name}");
        let output = cargo()
            .args(["run", "-q", "--example", &name])
            .env("XDG_RUNTIME_DIR", runtime)
            .current_dir(root())
            .stderr(std::process::Stdio::inherit())
            .output();
        let passed = match output {
            Ok(output) if output.status.success() => {
                let printed = String::from_utf8_lossy(&output.stdout);
                print!("{printed}");
                match readme_quotes(&name, &printed) {
                    Ok(()) => true,
                    Err(why) => {
                        println!("{why}");
                        false
                    }
                }
            }
            Ok(output) => {
                print!("{}", String::from_utf8_lossy(&output.stdout));
                false
            }
            Err(e) => {
                println!("cannot start example {name}: {e}");
                false
            }
        };
        println!(
            "example {name} ... {}",
            if passed { "ok" } else { "FAILED" }
        );
        if passed {
            total.passed += 1;
        } else {
            total.failed += 1;
            ok = false;
        }
    }
    ok
}

/// The README's Rust paragraph quotes what `examples/compare.rs` prints: each method's "M ± S"
/// and the test's "p = P". The CPU engine's products round differently on processors with other
/// vector units (the figures move in their last digit), so a quote is the printed figure within
/// `QUOTE_TOLERANCE` (0.02 on p); an example that moved further fails, as a hard-coded figure
/// would. Other examples are not quoted.
fn readme_quotes(example: &str, printed: &str) -> Result<(), String> {
    if example != "compare" {
        return Ok(());
    }
    const QUOTE_TOLERANCE: f64 = 0.001;
    let readme = std::fs::read_to_string(root().join("README.md")).map_err(|e| e.to_string())?;
    let paragraph = readme
        .split_once("**Rust**")
        .and_then(|(_, after)| after.split_once("## Results"))
        .map(|(paragraph, _)| paragraph)
        .ok_or("README.md has no **Rust** paragraph before ## Results")?;
    // The numbers after each `key` in `text`, as written.
    let numbers_after = |text: &str, key: &str| -> Vec<String> {
        text.split(key)
            .skip(1)
            .map(|after| {
                after
                    .trim_start()
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect::<String>()
                    .trim_end_matches('.')
                    .to_string()
            })
            .filter(|n| !n.is_empty())
            .collect()
    };
    // "M ± S": the numbers before and after each ±.
    let spreads = |text: &str| -> Vec<(f64, f64)> {
        text.split(" ± ")
            .collect::<Vec<_>>()
            .windows(2)
            .filter_map(|w| {
                let mean = w[0].rsplit(' ').next()?.parse().ok()?;
                let spread = w[1]
                    .split(|c: char| c != '.' && !c.is_ascii_digit())
                    .next()?
                    .parse()
                    .ok()?;
                Some((mean, spread))
            })
            .collect()
    };
    let printed_lines: Vec<&str> = printed
        .lines()
        .filter(|l| l.contains("test NDCG@8 "))
        .collect();
    let printed_spreads: Vec<(f64, f64)> = printed_lines.iter().flat_map(|l| spreads(l)).collect();
    let printed_p: Vec<f64> = numbers_after(printed, "p = ")
        .iter()
        .filter_map(|p| p.parse().ok())
        .collect();
    let quoted_spreads = spreads(paragraph);
    let quoted_p: Vec<f64> = numbers_after(paragraph, "p = ")
        .iter()
        .filter_map(|p| p.parse().ok())
        .collect();
    let close = |a: f64, b: f64, tolerance: f64| (a - b).abs() <= tolerance + 1e-12;
    let mut missing: Vec<String> = printed_spreads
        .iter()
        .filter(|(m, s)| {
            !quoted_spreads
                .iter()
                .any(|(qm, qs)| close(*m, *qm, QUOTE_TOLERANCE) && close(*s, *qs, QUOTE_TOLERANCE))
        })
        .map(|(m, s)| format!("{m:.4} ± {s:.4}"))
        .collect();
    missing.extend(
        printed_p
            .iter()
            .filter(|p| !quoted_p.iter().any(|q| close(**p, *q, 0.02)))
            .map(|p| format!("p = {p}")),
    );
    if printed_spreads.is_empty() || printed_p.is_empty() || !missing.is_empty() {
        return Err(format!(
            "README.md's Rust paragraph should quote what examples/compare.rs prints (within {QUOTE_TOLERANCE}, and 0.02 on p); it lacks {missing:?} (printed: {printed_lines:?})"
        ));
    }
    Ok(())
}

/// The page, end to end, in headless Chromium (tests/e2e/page.mjs, playwright-core): builds the
/// page, serves it and drives it; returns whether every check passed.
fn run_e2e(total: &mut Tally) -> Result<bool, String> {
    web::build()?;
    // The CLI, which some checks run on the page's own setup.json.
    run(cargo().args(["build", "--bin", "distillrank"]))?;
    let url = web::Server::bind(0)?.spawn();
    let mut e2e = Command::new("node");
    e2e.arg(root().join("tests/e2e/page.mjs"))
        .arg(&url)
        .env("DISTILLRANK_BIN", target_dir().join("debug/distillrank"));
    let ok = total.run(e2e)?;
    if !ok {
        println!("the page's end-to-end test failed (tests/e2e/page.mjs; see above)");
    }
    Ok(ok)
}

/// `cargo xtask e2e`: the page's end-to-end test alone.
fn e2e() -> Result<bool, String> {
    letor_data::unpack(&root())?;
    let mut total = Tally::default();
    let ok = run_e2e(&mut total)?;
    println!("{} passed, {} failed", total.passed, total.failed);
    if ok && total.failed == 0 {
        Ok(true)
    } else {
        Err(format!("{} passed, {} failed", total.passed, total.failed))
    }
}

/// Formatting and lints: `cargo fmt --check`, and clippy with warnings as errors on every target,
/// natively and for the browser build (wasm32).
fn lint() -> Result<(), String> {
    if have("cargo-clippy", "--version").is_none() || have("rustfmt", "--version").is_none() {
        run(Command::new("rustup").args(["component", "add", "clippy", "rustfmt"]))?;
    }
    run(cargo().args(["fmt", "--all", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(cargo().args([
        "clippy",
        "-p",
        "distillrank",
        "--target",
        "wasm32-unknown-unknown",
        "--lib",
        "--tests",
        "--no-default-features",
        "--",
        "-D",
        "warnings",
    ]))
}

/// Test counts added up over several test runs.
#[derive(Default)]
struct Tally {
    passed: u64,
    failed: u64,
    ignored: u64,
}

impl Tally {
    /// Runs `cmd`, echoing its output and counting its `test result:` lines; returns whether it
    /// succeeded.
    fn run(&mut self, mut cmd: Command) -> Result<bool, String> {
        eprintln!("$ {cmd:?}");
        let mut child = cmd
            .current_dir(root())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
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
                self.passed += count(" passed");
                self.failed += count(" failed");
                self.ignored += count(" ignored");
            }
        }
        Ok(child.wait().map_err(|e| e.to_string())?.success())
    }
}

pub fn have(program: &str, version_arg: &str) -> Option<String> {
    let out = Command::new(program).arg(version_arg).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Installs what the tests need when it is missing: Mesa's lavapipe (a software Vulkan GPU),
/// Chromium and its driver (Debian's), the wasm32 target, wasm-pack, the wasm-bindgen test
/// runner of the pinned version, and the npm packages of `web/`.
fn setup_test_tools() -> Result<(), String> {
    let mut packages = Vec::new();
    if !glob_exists("/usr/share/vulkan/icd.d", "lvp_icd") {
        packages.push("mesa-vulkan-drivers");
    }
    if have("chromium", "--version").is_none() {
        packages.push("chromium");
    }
    if have("chromedriver", "--version").is_none() {
        packages.push("chromium-driver");
    }
    if !packages.is_empty() {
        run(Command::new("apt-get").args(["update", "-q"]))?;
        run(Command::new("apt-get")
            .args(["install", "-y", "-q"])
            .args(&packages)
            .env("DEBIAN_FRONTEND", "noninteractive"))?;
    }
    web::setup_wasm_tools()?;
    if have("wasm-pack", "--version").is_none() {
        run(cargo().args(["install", "wasm-pack", "--locked"]))?;
    }
    web::setup_npm()
}

fn glob_exists(dir: &str, prefix: &str) -> bool {
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with(prefix))
        })
        .unwrap_or(false)
}

fn bench_web(query: &[String]) -> Result<(), String> {
    web::build()?;
    let url = web::Server::bind(0)?.spawn();
    run(Command::new("node")
        .arg(root().join("bench/web.mjs"))
        .arg(&url)
        .args(query))
}

/// The CPU training step against both peers, in one run: `distillrank bench train`, JAX jit
/// (`bench/peer_cpu.py train`) and PyTorch eager on the CPU (`bench/peer_torch.py --device cpu`),
/// the same model and batches, alternated `rounds` times so that the machine's drift touches all
/// three alike. The peers run under `$PEER_PYTHON` (default `python3`); each prints one JSON line.
fn bench_step(rest: &[String]) -> Result<(), String> {
    let rounds: usize = match rest.first() {
        Some(n) => n
            .parse()
            .map_err(|_| format!("bench-step: expected a number of rounds, got '{n}'"))?,
        None => 3,
    };
    run(cargo().args(["build", "--release", "--bin", "distillrank"]))?;
    let bin = target_dir().join("release/distillrank");
    let python = std::env::var("PEER_PYTHON").unwrap_or_else(|_| "python3".into());
    let torch_threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for round in 1..=rounds {
        println!("round {round} of {rounds}");
        run(Command::new(&bin).args(["bench", "train", "--json"]))?;
        run(Command::new(&python)
            .arg(root().join("bench/peer_cpu.py"))
            .arg("train"))?;
        run(Command::new(&python)
            .arg(root().join("bench/peer_torch.py"))
            .args(["--device", "cpu"])
            .env("OMP_NUM_THREADS", torch_threads.to_string()))?;
    }
    Ok(())
}

fn bench() -> Result<(), String> {
    run(cargo().args(["build", "--release", "--bin", "distillrank"]))?;
    let bin = target_dir().join("release/distillrank");
    // All of MQ2008 (S1..S5, 9.3 MB) as one file, for the parser and the cache.
    let parts = letor_data::unpack(&root())?.join("mq2008");
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

#[cfg(test)]
mod tests {
    use super::readme_quotes;

    /// What `examples/compare.rs` prints, with the given figures.
    fn printed(no_distillation: &str, pfd: &str, p: &str) -> String {
        format!(
            "no-distillation  test NDCG@8 {no_distillation}\npfd              test NDCG@8 {pfd}\npfd − no-distillation: +0.0063 (95% CI −0.0089..+0.0208), p = {p} (Holm), on 52 queries × 3 seeds\n"
        )
    }

    #[test]
    fn the_readme_quotes_the_example_within_its_last_digit_and_no_further() {
        // The README's own figures, and those of a processor with other vector units.
        assert_eq!(
            readme_quotes(
                "compare",
                &printed("0.4760 ± 0.0108", "0.4821 ± 0.0067", "0.44")
            ),
            Ok(())
        );
        assert_eq!(
            readme_quotes(
                "compare",
                &printed("0.4758 ± 0.0105", "0.4821 ± 0.0067", "0.43")
            ),
            Ok(())
        );
        // A figure that moved by more than the last digits is not quoted.
        for moved in [
            printed("0.4700 ± 0.0108", "0.4821 ± 0.0067", "0.44"),
            printed("0.4760 ± 0.0108", "0.4821 ± 0.0167", "0.44"),
            printed("0.4760 ± 0.0108", "0.4821 ± 0.0067", "0.04"),
        ] {
            assert!(readme_quotes("compare", &moved).is_err(), "{moved}");
        }
    }
}

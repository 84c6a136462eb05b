//! `cargo xtask python`: the Python package's tests (`tests/python/`, pytest), in a virtual
//! environment of their own at `target/python-venv`: it is made when missing (with Debian's
//! python3-venv when the machine has no venv module), gets numpy, scipy, onnx, onnxruntime,
//! pytest, lightgbm, xgboost-cpu, scikit-learn, pandas, polars, pyarrow, mypy and dask from PyPI and
//! the package as users install it: the abi3 wheel `cargo xtask wheel` builds from this checkout
//! (maturin, run every time: cargo rebuilds what changed), and runs the tests against the CLI
//! built here (`DISTILLRANK_BIN`) and that wheel (`DISTILLRANK_WHEEL`, which one test installs
//! into a fresh venv of its own).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::{cargo, have, root, run, target_dir, Tally};

/// What the tests import besides the package: the references they check against (lightgbm 4.7
/// and XGBoost 3.x, the CPU build of its wheel, score the teachers trained elsewhere;
/// scikit-learn reads their LETOR files and checks the Ranker as one of its estimators; pandas,
/// polars and pyarrow make the data frames whose column names a ranker keeps), never the
/// product's dependencies; mypy checks the type stub against the package (stubtest); dask's
/// distributed scheduler runs a comparison's jobs on a local cluster (`distillrank.dask`).
const TEST_PACKAGES: [&str; 13] = [
    "numpy",
    "pandas",
    "polars",
    "pyarrow",
    "scipy",
    "onnx",
    "onnxruntime",
    "pytest",
    "lightgbm>=4.7,<5",
    "xgboost-cpu>=3,<4",
    "scikit-learn",
    "mypy",
    "dask[distributed]",
];

/// `cargo xtask python`: the Python tests alone, with their count.
pub(crate) fn python() -> Result<(), String> {
    let mut total = Tally::default();
    let ok = tests(&mut total)?;
    println!(
        "{} passed, {} failed, {} skipped",
        total.passed, total.failed, total.ignored
    );
    if ok && total.failed == 0 && total.passed > 0 {
        Ok(())
    } else {
        Err(format!("{} passed, {} failed", total.passed, total.failed))
    }
}

/// Installs the package and runs its tests, adding pytest's counts to `total`; returns whether
/// they all passed. An install that fails is an error.
pub(crate) fn tests(total: &mut Tally) -> Result<bool, String> {
    super::letor_data::unpack(&root())?;
    let python = venv()?;
    run(Command::new(&python)
        .args(["-m", "pip", "install", "-q"])
        .args(TEST_PACKAGES))?;
    // The tests run against the wheel users install, not against the source tree.
    let started = Instant::now();
    let (_, wheel) = installed_package()?;
    eprintln!(
        "python: built the wheel {} and installed it in {:.0} s",
        wheel.file_name().unwrap_or_default().to_string_lossy(),
        started.elapsed().as_secs_f64()
    );
    run(cargo().args(["build", "--bin", "distillrank"]))?;
    let bin = target_dir().join("debug/distillrank");
    // Mesa's Vulkan driver wants a runtime directory (backend "auto" probes the adapters).
    let runtime = std::env::temp_dir().join("distillrank-xdg");
    let _ = std::fs::create_dir_all(&runtime);
    let mut pytest = Command::new(&python);
    pytest
        .args([
            "-m",
            "pytest",
            "tests/python",
            "-q",
            "-p",
            "no:cacheprovider",
        ])
        .env("DISTILLRANK_BIN", &bin)
        .env("DISTILLRANK_WHEEL", &wheel)
        .env("XDG_RUNTIME_DIR", &runtime);
    pytest_run(pytest, total)
}

/// The test venv's python with the package built from this checkout installed in it, and the
/// wheel it was installed from.
pub(crate) fn installed_package() -> Result<(PathBuf, PathBuf), String> {
    let python = venv()?;
    let wheel = wheel()?;
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--force-reinstall",
            "--no-deps",
        ])
        .arg(&wheel))?;
    Ok((python, wheel))
}

/// The maturin that builds the wheel (pyproject.toml's build backend).
const MATURIN: &str = "maturin>=1.9,<2";

/// `cargo xtask wheel`: the package as one abi3 wheel for CPython 3.9 and newer (maturin, release
/// build), in `target/wheels/`; returns its path. Older distillrank wheels there are removed
/// first, so that the one left is this checkout's.
pub(crate) fn wheel() -> Result<PathBuf, String> {
    let python = venv()?;
    run(Command::new(&python).args(["-m", "pip", "install", "-q", MATURIN]))?;
    let out = root().join("target/wheels");
    if let Ok(entries) = std::fs::read_dir(&out) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("distillrank-") && name.ends_with(".whl") {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    run(Command::new(&python)
        .args(["-m", "maturin", "build", "--release", "--quiet", "--out"])
        .arg(&out))?;
    let built: Vec<PathBuf> = std::fs::read_dir(&out)
        .map_err(|e| format!("{}: {e}", out.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("distillrank-"))
        })
        .collect();
    match built.as_slice() {
        [wheel] => {
            println!("{}", wheel.display());
            Ok(wheel.clone())
        }
        _ => Err(format!(
            "maturin left {} distillrank wheels in {}",
            built.len(),
            out.display()
        )),
    }
}

/// The virtual environment's python, making the environment when it is missing.
fn venv() -> Result<PathBuf, String> {
    let dir = root().join("target/python-venv");
    let python = dir.join("bin/python");
    if python.exists() && pip_works(&python) {
        return Ok(python);
    }
    // Debian splits venv's pip bootstrap (ensurepip) into python3-venv.
    let venv_ok = have("python3", "--version").is_some()
        && quiet(Command::new("python3").args(["-m", "venv", "--help"]))
        && quiet(Command::new("python3").args(["-c", "import ensurepip"]));
    if !venv_ok {
        run(Command::new("apt-get").args(["update", "-q"]))?;
        run(Command::new("apt-get")
            .args([
                "install",
                "-y",
                "-q",
                "python3",
                "python3-venv",
                "python3-pip",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive"))?;
    }
    // A half-made environment (a failed bootstrap) is made again.
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    run(Command::new("python3").arg("-m").arg("venv").arg(&dir))?;
    if !pip_works(&python) {
        return Err(format!(
            "{} has no working pip after `python3 -m venv`",
            dir.display()
        ));
    }
    Ok(python)
}

fn pip_works(python: &Path) -> bool {
    quiet(Command::new(python).args(["-m", "pip", "--version"]))
}

/// Whether a command succeeds, its output unseen.
fn quiet(cmd: &mut Command) -> bool {
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs pytest, echoing its output and adding the counts of its closing line ("12 passed,
/// 1 failed, 2 skipped, 1 warning in 3.21s") to `total`; returns whether it succeeded.
fn pytest_run(mut cmd: Command, total: &mut Tally) -> Result<bool, String> {
    eprintln!("$ {cmd:?}");
    let mut child = cmd
        .current_dir(root())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
    let stdout = child.stdout.take().expect("piped stdout");
    let mut summary = None;
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let line = line.map_err(|e| e.to_string())?;
        println!("{line}");
        if let Some(counts) = pytest_counts(&line) {
            summary = Some(counts);
        }
    }
    let ok = child.wait().map_err(|e| e.to_string())?.success();
    let (passed, failed, skipped) = summary.unwrap_or((0, 0, 0));
    total.passed += passed;
    total.failed += failed;
    total.ignored += skipped;
    if !ok && failed == 0 {
        // pytest failed without counting a failure (a collection error, no tests): one failure.
        total.failed += 1;
    }
    Ok(ok)
}

/// (passed, failed + errors, skipped) of pytest's closing line, if `line` is one.
fn pytest_counts(line: &str) -> Option<(u64, u64, u64)> {
    let line = line.trim().trim_matches('=').trim();
    let (counts, time) = line.rsplit_once(" in ")?;
    // "3.21s", or "75.00s (0:01:15)".
    let seconds = time.split_whitespace().next()?.strip_suffix('s')?;
    seconds.parse::<f64>().ok()?;
    let (mut passed, mut failed, mut skipped, mut any) = (0, 0, 0, false);
    for part in counts.split(", ") {
        let (n, word) = part.trim().split_once(' ')?;
        let n: u64 = n.parse().ok()?;
        match word {
            "passed" => passed += n,
            "failed" | "error" | "errors" => failed += n,
            "skipped" => skipped += n,
            _ => {}
        }
        any = true;
    }
    any.then_some((passed, failed, skipped))
}

#[cfg(test)]
mod tests {
    use super::pytest_counts;

    #[test]
    fn reads_pytests_closing_lines() {
        assert_eq!(
            pytest_counts("12 passed, 1 warning in 3.21s"),
            Some((12, 0, 0))
        );
        assert_eq!(
            pytest_counts("1 failed, 11 passed, 2 skipped, 1 error in 4.50s"),
            Some((11, 2, 2))
        );
        assert_eq!(
            pytest_counts("===== 3 passed in 0.12s ====="),
            Some((3, 0, 0))
        );
        assert_eq!(
            pytest_counts("2 passed, 1 skipped in 75.00s (0:01:15)"),
            Some((2, 0, 1))
        );
        assert_eq!(pytest_counts("tests/python/test_package.py ..F."), None);
        assert_eq!(pytest_counts("assert x in y"), None);
    }
}

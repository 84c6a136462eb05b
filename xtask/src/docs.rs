//! `cargo xtask docs`: the docs book (`docs/book`, mdBook) built into `target/book/`, its
//! generated reference pages written first:
//! - `reference/settings.md` from the library's table of settings and `reference/cli.md` from the
//!   command line's definition (`distillrank reference settings|cli`);
//! - `reference/python.md` from the Python package's docstrings (`docs/book/python_reference.py`,
//!   in the test venv with the package installed).
//!
//! mdBook is installed into `target/tools` when the machine has none (`cargo install`, pinned).
//! The tests check that the committed reference pages equal what the code generates.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{cargo, have, root, run, target_dir};

/// The mdBook the book is built with.
const MDBOOK_VERSION: &str = "0.5.4";

pub(crate) fn docs() -> Result<(), String> {
    write_reference()?;
    let (python, _) = super::python::installed_package()?;
    run(Command::new(&python)
        .arg(root().join("docs/book/python_reference.py"))
        .current_dir(std::env::temp_dir()))?;
    build_book()
}

/// Writes the reference pages the CLI generates.
pub(crate) fn write_reference() -> Result<(), String> {
    run(cargo().args(["build", "--bin", "distillrank"]))?;
    let bin = target_dir().join("debug/distillrank");
    for page in ["settings", "cli"] {
        let out = Command::new(&bin)
            .args(["reference", page])
            .output()
            .map_err(|e| format!("{}: {e}", bin.display()))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        let path = root().join(format!("docs/book/src/reference/{page}.md"));
        std::fs::write(&path, out.stdout).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// `mdbook build docs/book` (into `target/book`).
pub(crate) fn build_book() -> Result<(), String> {
    let mdbook = mdbook()?;
    run(Command::new(mdbook)
        .arg("build")
        .arg(root().join("docs/book")))?;
    println!(
        "the book: {}",
        root().join("target/book/index.html").display()
    );
    Ok(())
}

/// Copies the built book (`target/book`) into `to` (the demo serves it from `web/book`).
pub(crate) fn copy_book(to: &Path) -> Result<(), String> {
    fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            let target = to.join(entry.file_name());
            if entry.file_type()?.is_dir() {
                copy(&entry.path(), &target)?;
            } else {
                std::fs::copy(entry.path(), target)?;
            }
        }
        Ok(())
    }
    let from = root().join("target/book");
    copy(&from, to).map_err(|e| format!("{} -> {}: {e}", from.display(), to.display()))
}

/// mdBook: on the PATH at the pinned version, else installed into `target/tools`.
fn mdbook() -> Result<PathBuf, String> {
    if have("mdbook", "--version").is_some_and(|v| v.contains(MDBOOK_VERSION)) {
        return Ok(PathBuf::from("mdbook"));
    }
    let tools = root().join("target/tools");
    let bin = tools.join("bin/mdbook");
    let installed = Command::new(&bin)
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(MDBOOK_VERSION));
    if !installed {
        run(cargo()
            .args([
                "install",
                "mdbook",
                "--locked",
                "--no-default-features",
                "--version",
            ])
            .arg(MDBOOK_VERSION)
            .arg("--root")
            .arg(&tools))?;
    }
    Ok(bin)
}

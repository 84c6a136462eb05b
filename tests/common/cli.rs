//! Running the `distillrank` binary from a test, in the repository's root (where relative paths in
//! the tests start), for the test files that check the CLI from outside.

use std::process::Command;

/// The binary, as a command to add arguments to.
#[allow(dead_code)]
pub fn command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_distillrank"));
    command.current_dir(env!("CARGO_MANIFEST_DIR"));
    command
}

/// Runs the binary with `args`: whether it succeeded, its standard output and its standard error.
#[allow(dead_code)]
pub fn distillrank(args: &[&str]) -> (bool, String, String) {
    let out = command().args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

//! The WGSL kernels, embedded so that the browser build does no file I/O: every file of `shaders/`
//! (the build script lists them). Each file opens with what it computes, its bindings, shapes and
//! dispatch.
//!
//! The ranking losses' kernel files begin with one prologue, `loss_prologue.wgsl` (their
//! parameters, bindings and shared functions), joined to each of them here, where they are loaded:
//! a new loss's kernel file holds only its own kernels.

use crate::model::loss::LOSSES;

include!(concat!(env!("OUT_DIR"), "/shaders.rs"));

/// The prologue joined to every file a loss's kernels live in.
pub const LOSS_PROLOGUE: &str = "loss_prologue.wgsl";

/// A file of `shaders/` by name, as it is written.
pub fn file(name: &str) -> Option<&'static str> {
    FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// Whether `name` holds a loss's kernels, and so begins with the [`LOSS_PROLOGUE`].
pub fn is_loss_file(name: &str) -> bool {
    LOSSES
        .iter()
        .flat_map(|e| e.hard.iter().chain(e.soft))
        .any(|k| k.file == name)
}

/// The source a kernel file is compiled from: its text, after the prologue where it has one. A
/// name that is no file of `shaders/` is a programming error (the kernels name files that the
/// build embeds, and `tests/shaders.rs` compiles every one).
pub fn source(name: &str) -> String {
    let text = file(name).unwrap_or_else(|| panic!("{name} is not a file of shaders/"));
    if is_loss_file(name) {
        let prologue = file(LOSS_PROLOGUE).expect("the loss prologue is a file of shaders/");
        format!("{prologue}\n{text}")
    } else {
        text.to_string()
    }
}

/// Every kernel file (the prologue aside), with the source it is compiled from.
pub fn all() -> Vec<(&'static str, String)> {
    FILES
        .iter()
        .filter(|(name, _)| *name != LOSS_PROLOGUE)
        .map(|(name, _)| (*name, source(name)))
        .collect()
}

/// Workgroup sizes, mirrored from the shaders.
/// Rows and columns of the result one workgroup of the dense products computes.
pub const TILE: u32 = 64;
pub const WORKGROUP: u32 = 256;

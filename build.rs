//! Embeds every WGSL file of `shaders/` in the crate (`OUT_DIR/shaders.rs`: each file's name and
//! text), so that a new kernel file needs no line of Rust to be loaded, and the browser build does
//! no file I/O. `crate/gpu/shaders.rs` includes the table.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read when the script runs (not when it is compiled), so that a build script shared between
    // checkouts reads its own.
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let dir = Path::new(&root).join("shaders");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("shaders/ is readable")
        .map(|entry| entry.expect("shaders/ is readable").path())
        .filter(|path| path.extension().is_some_and(|e| e == "wgsl"))
        .collect();
    files.sort();
    let mut table = String::from("/// Every file of `shaders/`: its name and its text, by name.\npub const FILES: &[(&str, &str)] = &[\n");
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        writeln!(
            table,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    table.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("shaders.rs");
    std::fs::write(out, table).expect("OUT_DIR is writable");
}

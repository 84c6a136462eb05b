//! The library's layers: every module of `crate/` imports only modules on lower floors, so no
//! arrow runs up and no import cycle can form. The floors, from the ground up:
//!
//! | floor | modules | what they are |
//! |---|---|---|
//! | 0 | error, clock, rng, stop | plumbing every floor may use |
//! | 1 | output, stats, settings | atomic output files; paired tests; the bounds of every setting |
//! | 2 | model, metrics | the shared words: the model, losses, Adam, objectives, a step; the metrics |
//! | 3 | data | reading, caching, generating and preparing data |
//! | 4 | cpu, gpu | the CPU engine and the WGSL engine, neither importing the other |
//! | 6 | engine, model_io | the one place that tells the engines apart; saved models |
//! | 7 | ranking, objectives, bench, onnx | the applications, the benchmarks and the export |
//! | 8 | setup | one setup, as every door describes it |
//! | 9 | pipeline | the job every door runs |
//! | 10 | web, cli, main | the doors |
//!
//! The test reads every `.rs` file under `crate/`, finds the modules it names (`crate::x`,
//! `distillrank::x`, and `super::x` from a top-level file), and fails on an import of a module on
//! the same floor or above, naming the file and line. A module it does not know fails too, so
//! that a new module gets its floor here.

#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module and its floor.
const FLOORS: &[(&str, u32)] = &[
    ("error", 0),
    ("clock", 0),
    ("rng", 0),
    ("stop", 0),
    ("output", 1),
    ("stats", 1),
    ("settings", 1),
    ("model", 2),
    ("metrics", 2),
    ("data", 3),
    ("cpu", 4),
    ("gpu", 4),
    ("engine", 6),
    ("model_io", 6),
    ("ranking", 7),
    ("objectives", 7),
    ("bench", 7),
    ("onnx", 7),
    ("setup", 8),
    ("pipeline", 9),
    ("web", 10),
    ("cli", 10),
    ("main", 10),
];

/// Names that follow `crate::` or `distillrank::` without being modules: the crate root's
/// re-exports of errors and of the short names of the ranking side.
const ROOT_ITEMS: &[&str] = &[
    "Error",
    "Result",
    "distill",
    "experiment",
    "train",
    "step",
    "metrics_binary",
];

/// The modules the short names at the crate root stand for.
fn root_item_module(name: &str) -> Option<&'static str> {
    match name {
        "distill" | "experiment" | "train" => Some("ranking"),
        "step" => Some("model"),
        "metrics_binary" => Some("objectives"),
        "Error" | "Result" => Some("error"),
        _ => None,
    }
}

fn floor(module: &str) -> Option<u32> {
    FLOORS.iter().find(|(m, _)| *m == module).map(|&(_, f)| f)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`crate/cpu/mlp.rs` -> cpu, `crate/setup.rs` -> setup).
fn module_of(root: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(root).unwrap();
    let first = relative.components().next().unwrap();
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// A line without its comment (a `//` outside a string literal, roughly: enough for imports).
fn code_of(line: &str) -> &str {
    let trimmed = line.trim_start();
    if trimmed.starts_with("//") {
        return "";
    }
    match line.find("//") {
        Some(at) if !line[..at].contains('"') => &line[..at],
        _ => line,
    }
}

/// Every module named after `prefix` on the line (`crate::cpu::mlp` -> cpu), and inside braces
/// after it (`crate::{cpu, gpu}`).
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let before = rest[..at].chars().last();
        let after = &rest[at + prefix.len()..];
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(list) = after.strip_prefix('{') {
            let end = list.find('}').unwrap_or(list.len());
            for item in list[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push(name);
            }
        }
    }
    out
}

/// (file, line, from module, to module) for every import of another top-level module.
fn imports(root: &Path) -> Vec<(PathBuf, usize, String, String)> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let from = module_of(root, &file);
        if from == "lib" {
            continue;
        }
        let top_level_file = file.parent() == Some(root);
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = code_of(line);
            let mut names = named_after(code, "crate::");
            names.extend(named_after(code, "distillrank::"));
            if top_level_file {
                names.extend(named_after(code, "super::"));
            }
            for name in names {
                let to = match root_item_module(&name) {
                    Some(m) => m.to_string(),
                    None if ROOT_ITEMS.contains(&name.as_str()) => continue,
                    None => name,
                };
                if to != from {
                    out.push((file.clone(), n + 1, from.clone(), to));
                }
            }
        }
    }
    out
}

/// The arrows that run sideways or up, each named by file and line.
fn violations(root: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    for (file, line, from, to) in imports(root) {
        let at = format!("{}:{line}", file.display());
        match (floor(&from), floor(&to)) {
            (None, _) => bad.push(format!(
                "{at}: module '{from}' has no floor in tests/architecture.rs"
            )),
            // A name that is not a module of the crate (a macro, `crate::outln`): not an import.
            (_, None) if !root.join(format!("{to}.rs")).exists() && !root.join(&to).is_dir() => {}
            (_, None) => bad.push(format!(
                "{at}: module '{to}' has no floor in tests/architecture.rs"
            )),
            (Some(f), Some(t)) if t >= f => bad.push(format!(
                "{at}: {from} (floor {f}) imports {to} (floor {t}): an arrow {}",
                if t == f { "sideways" } else { "up" }
            )),
            _ => {}
        }
    }
    bad
}

fn crate_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("crate")
}

#[test]
fn no_import_runs_up_or_sideways() {
    let bad = violations(&crate_root());
    assert!(
        bad.is_empty(),
        "{} imports break the layers:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Every module of the crate has a floor, and the floors give every module its own place.
#[test]
fn every_module_has_a_floor() {
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(crate_root()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let name = name.trim_end_matches(".rs").to_string();
        if name != "lib" {
            modules.insert(name.clone(), floor(&name));
        }
    }
    let missing: Vec<_> = modules.iter().filter(|(_, f)| f.is_none()).collect();
    assert!(missing.is_empty(), "modules without a floor: {missing:?}");
}

/// The test sees an upward import: a copy of the crate with one added fails it, naming it.
#[test]
fn an_upward_import_fails_the_test() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("crate");
    copy_tree(&crate_root(), &root);
    let file = root.join("data/mod.rs");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\n#[allow(unused_imports)]\nuse crate::ranking::experiment::Comparison;\n");
    std::fs::write(&file, text).unwrap();
    let bad = violations(&root);
    assert!(
        bad.iter().any(|b| b.contains("data/mod.rs")
            && b.contains("imports ranking")
            && b.contains("up")),
        "{bad:?}"
    );
    // And a cycle between two modules of one floor is an arrow sideways.
    let file = root.join("ranking/train.rs");
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str("\nuse crate::objectives::Objective as _Sideways;\n");
    std::fs::write(&file, text).unwrap();
    let bad = violations(&root);
    assert!(
        bad.iter()
            .any(|b| b.contains("imports objectives") && b.contains("sideways")),
        "{bad:?}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// The page's modules (`web/main.js`, `web/worker.js`, `web/js/*.js`) and the modules each imports,
/// resolved to paths relative to `web/`.
fn page_imports(web: &Path) -> BTreeMap<String, Vec<String>> {
    let mut files = vec![web.join("main.js"), web.join("worker.js")];
    for entry in std::fs::read_dir(web.join("js")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "js") {
            files.push(path);
        }
    }
    let mut graph = BTreeMap::new();
    for file in files {
        let name = file
            .strip_prefix(web)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let dir = Path::new(&name)
            .parent()
            .unwrap_or(Path::new(""))
            .to_path_buf();
        let text = std::fs::read_to_string(&file).unwrap();
        let mut imports = Vec::new();
        for line in text
            .lines()
            .filter(|l| l.trim_start().starts_with("import "))
        {
            let Some(from) = line.rsplit_once("from ").map(|(_, f)| f) else {
                continue;
            };
            let target = from.trim().trim_end_matches(';').trim_matches(['"', '\'']);
            if let Some(relative) = target.strip_prefix("./") {
                let resolved = dir.join(relative);
                imports.push(resolved.to_string_lossy().to_string());
            }
        }
        graph.insert(name, imports);
    }
    graph
}

/// A circle of imports in `graph`, if there is one, as the modules around it.
fn circle(graph: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = std::collections::BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

/// The page's modules form no import circle, and its state module imports nothing from the
/// interface.
#[test]
fn the_page_has_no_import_circle() {
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
    let graph = page_imports(&web);
    assert!(graph.len() > 5, "the page's modules: {graph:?}");
    if let Some(found) = circle(&graph) {
        panic!("an import circle in web/: {}", found.join(" -> "));
    }
    assert_eq!(
        graph["js/state.js"],
        Vec::<String>::new(),
        "js/state.js imports"
    );
    // The check sees a circle: the state module importing the interface makes one.
    let mut with_circle = graph.clone();
    with_circle
        .get_mut("js/state.js")
        .unwrap()
        .push("js/compare.js".into());
    assert!(circle(&with_circle).is_some());
}

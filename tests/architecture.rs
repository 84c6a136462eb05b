//! The library's layers: every module of `crate/` imports only modules on lower floors, so no
//! arrow runs up and no import cycle can form. The floors, from the ground up:
//!
//! | floor | modules | what they are |
//! |---|---|---|
//! | 0 | error, clock, rng, stop, math | plumbing every floor may use; the transcendental functions, the same in every build |
//! | 1 | memory, output, stats, settings | memory checks; atomic output files; paired tests; the bounds of every setting |
//! | 2 | model, metrics | the shared words: the model, losses, Adam, objectives, a step; the metrics |
//! | 3 | data | reading, caching, generating and preparing data |
//! | 4 | cpu, gpu, forest | the CPU engine and the WGSL engine, neither importing the other; tree ensembles trained elsewhere |
//! | 6 | engine, model_io | the one place that tells the engines apart; saved models |
//! | 7 | ranking, objectives, bench, onnx | the applications, the benchmarks and the export |
//! | 8 | setup | one setup, as every door describes it |
//! | 9 | pipeline | the job every door runs |
//! | 10 | native | the one blocking edge (native builds): the doors' sync calls, the CPU jobs on threads |
//! | 11 | web, cli, main | the doors |
//!
//! The test parses every `.rs` file under `crate/` with `syn` (`lib.rs` and the files inside
//! folders too), and resolves every path that names a module of the crate: in `use` trees, however
//! rustfmt wraps and nests them, in expressions and types, and in macros' tokens; through
//! `crate::`, `distillrank::` and any chain of `super::`, from inline modules too. It fails on an
//! import of a module on the same floor or above, on a name at the crate root that is no module
//! with a floor, on a `use` in `lib.rs`, and on a `pub use` of another top-level module's item
//! anywhere (each item has one path, its own module's), naming the file and line.

#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// Each top-level module and its floor.
const FLOORS: &[(&str, u32)] = &[
    ("error", 0),
    ("clock", 0),
    ("rng", 0),
    ("stop", 0),
    ("math", 0),
    ("memory", 1),
    ("output", 1),
    ("stats", 1),
    ("settings", 1),
    ("model", 2),
    ("metrics", 2),
    ("data", 3),
    ("cpu", 4),
    ("gpu", 4),
    ("forest", 4),
    ("engine", 6),
    ("model_io", 6),
    ("ranking", 7),
    ("objectives", 7),
    ("bench", 7),
    ("onnx", 7),
    ("setup", 8),
    ("pipeline", 9),
    ("native", 10),
    ("web", 11),
    ("cli", 11),
    ("main", 11),
];

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

/// The module path of a file (`crate/cpu/mlp.rs` -> [cpu, mlp], `crate/cpu/mod.rs` -> [cpu],
/// `crate/setup.rs` -> [setup], `crate/lib.rs` and `crate/main.rs` -> []), and whether it belongs
/// to the binary (`main.rs`, `cli/`), whose `crate::` is the binary's root.
fn module_path(root: &Path, file: &Path) -> (Vec<String>, bool) {
    let relative = file.strip_prefix(root).unwrap();
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().to_string())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    let binary = stem == "main" && parts.is_empty() || parts.first().is_some_and(|p| p == "cli");
    (parts, binary)
}

/// One import of a module of the crate: the file's line and the top-level module it names.
#[derive(Debug)]
struct Import {
    line: usize,
    to: String,
}

/// Walks a file's syntax tree, resolving every path that starts at the crate root.
struct Imports {
    /// The module the visitor is in (the file's, then inline modules').
    module: Vec<String>,
    binary: bool,
    found: Vec<Import>,
    /// `use` items of the file's top level, with their lines (a root file must have none).
    top_uses: Vec<usize>,
    /// Public `use` items, with each top-level module they name: re-exports.
    reexports: Vec<Import>,
    depth: usize,
}

impl Imports {
    /// Resolves the path `segments` (as written, at `line`), if it names a top-level module.
    fn resolve(&mut self, segments: &[String], line: usize) {
        let Some(first) = segments.first() else {
            return;
        };
        let from_root: Option<&[String]> = match first.as_str() {
            "distillrank" => Some(&segments[1..]),
            "crate" if self.binary => {
                // The binary's own root: its modules are the CLI's (floor 10); the library is
                // reached through `distillrank::`.
                match segments.get(1).map(String::as_str) {
                    Some("cli") | None => None,
                    Some(_) => Some(&segments[1..]),
                }
            }
            "crate" => Some(&segments[1..]),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                if ups > self.module.len() {
                    return;
                }
                let kept = self.module.len() - ups;
                if kept > 0 {
                    // Still inside a top-level module: the same one.
                    return;
                }
                if self.binary {
                    return;
                }
                Some(&segments[ups..])
            }
            _ => None,
        };
        if let Some(name) = from_root.and_then(|rest| rest.first()) {
            self.found.push(Import {
                line,
                to: name.clone(),
            });
        }
    }

    /// Every full path a `use` tree names, prefixes joined (`crate::{a::{b, c}}` -> a::b, a::c).
    fn use_paths(
        tree: &syn::UseTree,
        prefix: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, usize)>,
    ) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                Imports::use_paths(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut path = prefix.clone();
                path.push(n.ident.to_string());
                out.push((path, n.ident.span().start().line));
            }
            syn::UseTree::Rename(r) => {
                let mut path = prefix.clone();
                path.push(r.ident.to_string());
                out.push((path, r.ident.span().start().line));
            }
            syn::UseTree::Glob(g) => out.push((prefix.clone(), g.star_token.span.start().line)),
            syn::UseTree::Group(g) => {
                for tree in &g.items {
                    Imports::use_paths(tree, prefix, out);
                }
            }
        }
    }

    /// Paths in a macro's tokens: `crate :: a`, `distillrank :: a`, `super :: super :: a`.
    fn token_paths(&mut self, tokens: proc_macro2::TokenStream) {
        let flat: Vec<proc_macro2::TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < flat.len() {
            if let proc_macro2::TokenTree::Group(g) = &flat[i] {
                self.token_paths(g.stream());
                i += 1;
                continue;
            }
            let mut segments = Vec::new();
            let mut j = i;
            while let Some(proc_macro2::TokenTree::Ident(id)) = flat.get(j) {
                segments.push(id.to_string());
                let colons = matches!(
                    (flat.get(j + 1), flat.get(j + 2)),
                    (Some(proc_macro2::TokenTree::Punct(a)), Some(proc_macro2::TokenTree::Punct(b)))
                        if a.as_char() == ':' && b.as_char() == ':'
                );
                if !colons {
                    break;
                }
                j += 3;
            }
            if segments.len() > 1 {
                if let proc_macro2::TokenTree::Ident(id) = &flat[i] {
                    let line = id.span().start().line;
                    self.resolve(&segments, line);
                }
                i = j.max(i + 1);
            } else {
                i += 1;
            }
        }
    }
}

impl<'ast> Visit<'ast> for Imports {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if self.depth == 0 {
            self.top_uses.push(item.use_token.span.start().line);
        }
        let mut paths = Vec::new();
        Imports::use_paths(&item.tree, &mut Vec::new(), &mut paths);
        let before = self.found.len();
        for (path, line) in paths {
            self.resolve(&path, line);
        }
        if !matches!(item.vis, syn::Visibility::Inherited) {
            let named = self.found[before..].iter().map(|i| Import {
                line: i.line,
                to: i.to.clone(),
            });
            self.reexports.extend(named.collect::<Vec<_>>());
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if let Some(first) = path.segments.first() {
            self.resolve(&segments, first.ident.span().start().line);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.token_paths(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            self.depth += 1;
            syn::visit::visit_item_mod(self, item);
            self.depth -= 1;
            self.module.pop();
        }
    }
}

/// An import of another top-level module: (file, line, from, to).
type Arrow = (PathBuf, usize, String, String);

/// Every import of another top-level module in the crate at `root`; and the `use` items of
/// `lib.rs` (file, line).
fn imports(root: &Path) -> (Vec<Arrow>, Vec<(PathBuf, usize)>, Vec<Arrow>) {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    files.sort();
    let (mut out, mut root_uses, mut reexports) = (Vec::new(), Vec::new(), Vec::new());
    for file in files {
        let (module, binary) = module_path(root, &file);
        let text = std::fs::read_to_string(&file).unwrap();
        let tree = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()));
        let mut visitor = Imports {
            module: module.clone(),
            binary,
            found: Vec::new(),
            top_uses: Vec::new(),
            reexports: Vec::new(),
            depth: 0,
        };
        visitor.visit_file(&tree);
        let from = if file.file_name().is_some_and(|n| n == "main.rs") && module.is_empty() {
            "main".to_string()
        } else if module.is_empty() {
            "lib".to_string()
        } else {
            module[0].clone()
        };
        if from == "lib" {
            root_uses.extend(visitor.top_uses.iter().map(|&line| (file.clone(), line)));
        }
        for import in visitor.reexports {
            if import.to != from {
                reexports.push((file.clone(), import.line, from.clone(), import.to));
            }
        }
        for import in visitor.found {
            if import.to != from {
                out.push((file.clone(), import.line, from.clone(), import.to));
            }
        }
    }
    (out, root_uses, reexports)
}

/// The arrows that run sideways or up, the unknown root names and the root's re-exports, each
/// named by file and line.
fn violations(root: &Path) -> Vec<String> {
    let mut bad = Vec::new();
    let (imports, root_uses, reexports) = imports(root);
    for (file, line, from, to) in reexports {
        bad.push(format!(
            "{}:{line}: {from} re-exports an item of {to}: each item has one path, its own module's",
            file.display()
        ));
    }
    for (file, line) in root_uses {
        bad.push(format!(
            "{}:{line}: the crate root re-exports nothing: name the item by its module's path",
            file.display()
        ));
    }
    for (file, line, from, to) in imports {
        let at = format!("{}:{line}", file.display());
        match (floor(&from), floor(&to)) {
            (None, _) if from == "lib" => match floor(&to) {
                Some(_) => {}
                None => bad.push(format!(
                    "{at}: the crate root names '{to}', which is no module with a floor"
                )),
            },
            (None, _) => bad.push(format!(
                "{at}: module '{from}' has no floor in tests/architecture.rs"
            )),
            (_, None) => bad.push(format!(
                "{at}: '{to}' at the crate root is no module with a floor in tests/architecture.rs"
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

/// The library blocks in one place: `crate/native.rs` is the only file that names `pollster`
/// (its `block_on`); every other file awaits, or calls `native::block_on` from a door.
#[test]
fn blocking_lives_in_the_native_module() {
    let mut files = Vec::new();
    rust_files(&crate_root(), &mut files);
    let blocking: Vec<String> = files
        .iter()
        .filter(|f| !f.ends_with("native.rs"))
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("pollster"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        blocking.is_empty(),
        "files that block outside crate/native.rs: {blocking:?}"
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

/// A copy of the crate with `text` added to `file` (relative to `crate/`): its violations.
fn violations_with(file: &str, text: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("crate");
    copy_tree(&crate_root(), &root);
    let path = root.join(file);
    let mut source = std::fs::read_to_string(&path).unwrap();
    source.push_str(text);
    std::fs::write(&path, source).unwrap();
    violations(&root)
}

/// The test sees every kind of bad import: a copy of the crate with one added fails it, naming it.
#[test]
fn an_upward_import_fails_the_test() {
    let up = |bad: &[String], file: &str, to: &str, way: &str| {
        bad.iter()
            .any(|b| b.contains(file) && b.contains(&format!("imports {to}")) && b.contains(way))
    };
    // One line.
    let bad = violations_with(
        "data/mod.rs",
        "\n#[allow(unused_imports)]\nuse crate::ranking::experiment::Comparison;\n",
    );
    assert!(up(&bad, "data/mod.rs", "ranking", "up"), "{bad:?}");
    // Wrapped by rustfmt over several lines, nested braces, deep inside a folder.
    let bad = violations_with(
        "data/prepare.rs",
        "\n#[allow(unused_imports)]\nuse crate::{\n    error::Error,\n    ranking::{\n        distill::Method,\n        experiment::{Comparison, Job},\n    },\n};\n",
    );
    assert!(up(&bad, "data/prepare.rs", "ranking", "up"), "{bad:?}");
    assert!(!bad.iter().any(|b| b.contains("imports error")), "{bad:?}");
    // Through `super::super::` from a file inside a folder.
    let bad = violations_with(
        "cpu/loss.rs",
        "\nmod inner {\n    #[allow(unused_imports)]\n    use super::super::super::setup::Setup;\n}\n",
    );
    assert!(up(&bad, "cpu/loss.rs", "setup", "up"), "{bad:?}");
    // In an expression and in a macro's arguments.
    let bad = violations_with(
        "model/mlp.rs",
        "\nfn _a() -> usize { crate::data::bundled::MQ2008_QUERIES }\nfn _b() -> String { format!(\"{}\", crate::pipeline::NAME) }\n",
    );
    assert!(up(&bad, "model/mlp.rs", "data", "up"), "{bad:?}");
    assert!(up(&bad, "model/mlp.rs", "pipeline", "up"), "{bad:?}");
    // A cycle between two modules of one floor is an arrow sideways.
    let bad = violations_with(
        "ranking/train.rs",
        "\nuse crate::objectives::metrics::BinaryMetrics as _Sideways;\n",
    );
    assert!(
        up(&bad, "ranking/train.rs", "objectives", "sideways"),
        "{bad:?}"
    );
    // A name at the crate root that is no module, and a re-export at the root.
    let bad = violations_with("setup.rs", "\nuse crate::Unknown as _U;\n");
    assert!(
        bad.iter()
            .any(|b| b.contains("setup.rs") && b.contains("'Unknown'")),
        "{bad:?}"
    );
    // A module that re-exports another's item gives it a second path.
    let bad = violations_with(
        "ranking/experiment.rs",
        "\npub use crate::metrics::mean_std;\n",
    );
    assert!(
        bad.iter()
            .any(|b| b.contains("ranking/experiment.rs")
                && b.contains("re-exports an item of metrics")),
        "{bad:?}"
    );
    let bad = violations_with("lib.rs", "\npub use ranking::distill;\n");
    assert!(
        bad.iter()
            .any(|b| b.contains("lib.rs") && b.contains("re-exports nothing")),
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

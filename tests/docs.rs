//! The docs: the README and the book (`docs/book/src`) link only to files and headings that exist,
//! the book's summary lists every page, the generated reference pages equal what the code
//! generates now, and the README stays short.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[path = "common/cli.rs"]
mod cli_run;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn book() -> PathBuf {
    root().join("docs/book/src")
}

/// Every Markdown file under `dir`.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// The text outside fenced code blocks.
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A heading's anchor as GitHub and mdBook make it: lower case, punctuation dropped, spaces as
/// dashes.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == '_' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    prose(&text)
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

/// The targets of the Markdown links `[text](target)` in `text`'s prose.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_string());
        }
    }
    out
}

#[test]
fn every_link_of_the_readme_and_the_book_reaches_a_file_and_its_heading() {
    let mut files = vec![
        root().join("README.md"),
        root().join("CHANGELOG.md"),
        root().join("BENCHMARKS.md"),
    ];
    markdown_files(&book(), &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !resolved.exists() {
                broken.push(format!("{}: {target}: no such file", file.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                if resolved.extension().is_some_and(|e| e == "md")
                    && !anchors(&resolved).contains(anchor)
                {
                    broken.push(format!("{}: {target}: no such heading", file.display()));
                }
            }
        }
        // mdBook's includes name files too.
        for include in text.split("{{#include ").skip(1) {
            let name = include.split(['}', ':']).next().unwrap().trim();
            if !file.parent().unwrap().join(name).exists() {
                broken.push(format!("{}: include {name}: no such file", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_summary_lists_every_page_of_the_book() {
    let summary = std::fs::read_to_string(book().join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<String> = links(&summary).into_iter().collect();
    let mut pages = Vec::new();
    markdown_files(&book(), &mut pages);
    for page in pages {
        let name = page.strip_prefix(book()).unwrap().display().to_string();
        if name != "SUMMARY.md" {
            assert!(listed.contains(&name), "{name} is not in SUMMARY.md");
        }
    }
    for name in &listed {
        assert!(
            book().join(name).exists(),
            "SUMMARY.md lists {name}, which is missing"
        );
    }
}

/// The pages the code generates (`cargo xtask docs` writes them) equal the committed ones.
#[test]
fn the_generated_reference_pages_are_up_to_date() {
    for page in ["settings", "cli"] {
        let out = cli_run::command()
            .args(["reference", page])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let generated = String::from_utf8(out.stdout).unwrap();
        let path = book().join(format!("reference/{page}.md"));
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            generated == committed,
            "{} differs from what the code generates: run `cargo xtask docs`",
            path.display()
        );
    }
}

#[test]
fn the_readme_is_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines < 250,
        "README.md has {lines} lines: move the detail into the book"
    );
}

/// `docs/reproduce.sh` regenerates every results folder, or names it with what made it.
#[test]
fn reproduce_sh_names_every_results_folder() {
    let script = std::fs::read_to_string(root().join("docs/reproduce.sh")).unwrap();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root().join("docs/results")).unwrap() {
        let entry = entry.unwrap();
        if !entry.path().is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let named = script.match_indices(name.as_str()).any(|(at, _)| {
            // The whole name, not a prefix of a longer one.
            let after = script[at + name.len()..].chars().next();
            !matches!(after, Some(c) if c.is_alphanumeric() || c == '-')
        });
        if !named {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/reproduce.sh does not name {missing:?}"
    );
}

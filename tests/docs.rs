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

/// Every file under `dir` whose extension is `extension`.
fn files_ending(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_ending(&path, extension, out);
        } else if path.extension().is_some_and(|e| e == extension) {
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
    files_ending(&book(), "md", &mut files);
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
    files_ending(&book(), "md", &mut pages);
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

/// Every shell, Python and Rust block of the README and the book either runs in the tests or says
/// why not on the line above it (`<!-- not run: REASON -->`). `tests/python/test_doc_blocks.py`
/// runs the shell and Python blocks, page after page in the summary's order; a Rust block is an
/// `{{#include}}` of a program in `examples/`, which the test command runs.
#[test]
fn every_code_block_runs_or_says_why_not() {
    let mut files = vec![root().join("README.md")];
    files_ending(&book(), "md", &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let mut fenced = false;
        for (i, line) in lines.iter().enumerate() {
            let Some(info) = line.trim_start().strip_prefix("```") else {
                continue;
            };
            fenced = !fenced;
            let language = info.split(',').next().unwrap_or_default().trim();
            if !fenced || !matches!(language, "sh" | "bash" | "python" | "rust") {
                continue;
            }
            let at = format!("{}:{}", file.display(), i + 1);
            let above = if i > 0 { lines[i - 1].trim() } else { "" };
            if let Some(reason) = above
                .strip_prefix("<!-- not run:")
                .and_then(|r| r.strip_suffix("-->"))
            {
                if reason.trim().len() < 10 {
                    wrong.push(format!("{at}: say why the block is not run"));
                }
                continue;
            }
            if language == "rust" {
                let body = lines.get(i + 1).copied().unwrap_or_default();
                if !body.starts_with("{{#include ../../../examples/") {
                    wrong.push(format!(
                        "{at}: a Rust block is a program of examples/, included, or says why it is not run"
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The README's CLI quickstart quotes the first command's run as `docs/results/synthetic` holds it:
/// PFD's and no distillation's test NDCG@8 (mean ± std over seeds) and their paired test.
#[test]
fn the_readmes_cli_figures_are_the_synthetic_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let readme = readme.split_whitespace().collect::<Vec<_>>().join(" ");
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/results/synthetic/results.json")).unwrap(),
    )
    .unwrap();
    let figure = |method: &str| {
        let ndcg = &results["methods"][method]["ndcg@8"];
        format!(
            "{:.4} ± {:.4}",
            ndcg["mean"].as_f64().unwrap(),
            ndcg["std"].as_f64().unwrap()
        )
    };
    let pfd_sentence = results["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s.as_str())
        .find(|s| s.starts_with("pfd − no-distillation"))
        .unwrap();
    // "+0.0135 (95% CI +0.0052..+0.0218), p = 0.007 (Holm), on ..." is quoted in the README as
    // "+0.0135 (95% CI +0.0052..+0.0218, p = 0.007 after Holm's correction)".
    let (difference, rest) = pfd_sentence
        .trim_start_matches("pfd − no-distillation: ")
        .split_once("), p = ")
        .unwrap();
    let p = rest.split(" (Holm)").next().unwrap();
    for quoted in [
        format!("{} against {}", figure("pfd"), figure("no-distillation")),
        format!("{difference}, p = {p} after Holm's correction)"),
    ] {
        assert!(
            readme.contains(&quoted),
            "README.md's CLI quickstart should quote docs/results/synthetic: {quoted:?}"
        );
    }
}

/// Every number a JSON value holds, however deep.
fn numbers_in(value: &serde_json::Value, out: &mut Vec<f64>) {
    match value {
        serde_json::Value::Number(n) => out.extend(n.as_f64()),
        serde_json::Value::Array(items) => items.iter().for_each(|v| numbers_in(v, out)),
        serde_json::Value::Object(fields) => fields.values().for_each(|v| numbers_in(v, out)),
        _ => {}
    }
}

/// The README's table of the student against LightGBM quotes its results files: every figure of
/// a row (`0.4942`, `+0.0118 (−0.0056..+0.0294)`) is a number of the file the row names, to the
/// four places shown.
#[test]
fn the_readmes_student_against_lightgbm_figures_are_their_files() {
    let folder = root().join("docs/results/student-vs-lightgbm");
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let rows: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("| ") && l.trim_end().ends_with(".json` |"))
        .collect();
    assert!(
        rows.len() >= 6,
        "the README's table of the student against LightGBM: {rows:?}"
    );
    for row in rows {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let file = cells.last().unwrap().trim_matches('`');
        let text = std::fs::read_to_string(folder.join(file))
            .unwrap_or_else(|e| panic!("{file}, named by the README's row {row:?}: {e}"));
        let mut numbers = Vec::new();
        numbers_in(&serde_json::from_str(&text).unwrap(), &mut numbers);
        let figures: Vec<f64> = cells[..cells.len() - 1]
            .join(" ")
            .replace('−', "-")
            .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
            .flat_map(|token| token.split(".."))
            .filter(|t| t.trim_start_matches(['+', '-']).starts_with("0."))
            .map(|t| t.parse().unwrap())
            .collect();
        assert!(figures.len() >= 3, "{row}");
        for figure in figures {
            assert!(
                numbers
                    .iter()
                    .any(|n| format!("{n:.4}").parse::<f64>().unwrap() == figure),
                "the README quotes {figure} from {file}, which does not hold it: {row}"
            );
        }
    }
}

/// The variants of `enum NAME` in `file`, as written.
fn variants(file: &str, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let body = text
        .split_once(&format!("pub enum {name} {{"))
        .unwrap()
        .1
        .split_once('}')
        .unwrap()
        .0;
    body.lines()
        .map(|l| l.trim().trim_end_matches(',').to_string())
        .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.starts_with('#'))
        .collect()
}

/// The section of the Contributing page that starts with `**{title}`, up to the next one.
fn contributing_section(title: &str) -> String {
    let page = std::fs::read_to_string(book().join("contributing.md")).unwrap();
    let from = page.split_once(&format!("**{title}")).unwrap().1;
    from.split("\n**").next().unwrap().to_string()
}

/// Every file that names a loss or a method (other than the baseline) in code that is not a test
/// is one the Contributing page lists where it says what a new loss or method touches.
#[test]
fn the_contributing_page_lists_every_file_that_names_a_loss_or_a_method() {
    let kinds = [
        (
            "LossKind",
            variants("crate/model/loss.rs", "LossKind"),
            contributing_section("A new loss"),
        ),
        (
            "Method",
            variants("crate/ranking/distill.rs", "Method")
                .into_iter()
                .filter(|v| v != "NoDistillation")
                .collect(),
            contributing_section("A new method"),
        ),
    ];
    assert!(kinds.iter().all(|(_, v, _)| v.len() >= 4), "{kinds:?}");
    let mut sources = Vec::new();
    for dir in ["crate", "python/src"] {
        files_ending(&root().join(dir), "rs", &mut sources);
    }
    let mut unlisted = Vec::new();
    for source in sources {
        let text = std::fs::read_to_string(&source).unwrap();
        // The code, less its test module and its comments.
        let code: String = text
            .split("#[cfg(test)]")
            .next()
            .unwrap()
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let relative = source
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        for (kind, names, section) in &kinds {
            let named = names.iter().find(|v| {
                let path = format!("{kind}::{v}");
                code.match_indices(&path).any(|(at, _)| {
                    !code[at + path.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
                })
            });
            let listed = section.contains(&format!("`{relative}`"))
                || section.contains(&format!("`{}`", relative.trim_start_matches("crate/")));
            if let (Some(v), false) = (named, listed) {
                unlisted.push(format!("{relative} names {kind}::{v}"));
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "docs/book/src/contributing.md does not list these files where it says what a new loss or method touches:\n{}",
        unlisted.join("\n")
    );
}

//! LightGBM's model files: the text format `Booster.save_model` writes (a header of `key=value`
//! lines, then one `Tree=N` block per tree, then `end of trees`) and the JSON of
//! `Booster.dump_model()` (the same trees, nested). Leaf values already carry the shrinkage; a
//! node's `decision_type` packs the categorical flag (bit 0), the default direction (bit 1) and
//! the missing type (bits 2-3: None, Zero, NaN); a child below 0 is the leaf `!child`.

use std::collections::HashMap;
use std::path::Path;

use super::{model_error, Child, Forest, Library, Missing, Node, Rule, Tree};
use crate::error::Result;

/// Reads the text format.
pub fn parse_text(name: &Path, text: &[u8]) -> Result<Forest> {
    let text = std::str::from_utf8(text)
        .map_err(|_| model_error(name, "a LightGBM text model that is not UTF-8 text"))?;
    let mut header: HashMap<&str, &str> = HashMap::new();
    let mut average = false;
    let mut blocks: Vec<(usize, HashMap<&str, &str>)> = Vec::new();
    let mut ended = false;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end_matches('\r');
        if line == "end of trees" {
            ended = true;
            break;
        }
        if line.starts_with("Tree=") {
            if blocks.len() == super::MAX_TREES {
                return Err(model_error(
                    name,
                    format!(
                        "more than {} trees: expected a model of at most that many",
                        super::MAX_TREES
                    ),
                ));
            }
            blocks.push((i + 1, HashMap::new()));
            continue;
        }
        if line == "average_output" {
            average = true;
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        match blocks.last_mut() {
            Some((_, block)) => block.insert(key, value),
            None => header.insert(key, value),
        };
    }
    if !ended {
        return Err(model_error(
            name,
            "no 'end of trees' line: a truncated LightGBM model file",
        ));
    }
    let objective = header.get("objective").copied().unwrap_or("").to_string();
    let n_columns = columns_of(name, count(name, &header, "max_feature_idx", 0)?)?;
    check_single_output(name, &header, &objective)?;
    let mut trees = Vec::with_capacity(blocks.len().min(super::MAX_TREES));
    for (line, block) in &blocks {
        let at = |what: String| model_error(name, format!("the tree at line {line}: {what}"));
        if block.get("is_linear").is_some_and(|v| v.trim() != "0") {
            return Err(at("a linear tree (linear_tree=true): its leaves are linear models, which this reader does not score; train with linear_tree=false".into()));
        }
        let leaves = count(name, block, "num_leaves", *line)?;
        if leaves == 0 || leaves > super::MAX_NODES {
            return Err(at(format!(
                "num_leaves={leaves}: expected 1 to {}",
                super::MAX_NODES
            )));
        }
        let leaf_values: Vec<f64> = numbers(name, block, "leaf_value", *line)?;
        if leaf_values.len() != leaves {
            return Err(at(format!(
                "num_leaves={leaves} but {} leaf values",
                leaf_values.len()
            )));
        }
        let inner = leaves - 1;
        if inner == 0 {
            trees.push(Tree {
                nodes: vec![],
                leaves: leaf_values,
                words: vec![],
                weight: 1.0,
            });
            continue;
        }
        let feature: Vec<u32> = numbers(name, block, "split_feature", *line)?;
        let threshold: Vec<f64> = numbers(name, block, "threshold", *line)?;
        let decision: Vec<i32> = numbers(name, block, "decision_type", *line)?;
        let left: Vec<i64> = numbers(name, block, "left_child", *line)?;
        let right: Vec<i64> = numbers(name, block, "right_child", *line)?;
        for (key, n) in [
            ("split_feature", feature.len()),
            ("threshold", threshold.len()),
            ("decision_type", decision.len()),
            ("left_child", left.len()),
            ("right_child", right.len()),
        ] {
            if n != inner {
                return Err(at(format!(
                    "{key} has {n} values, but num_leaves={leaves} makes {inner} inner nodes"
                )));
            }
        }
        let num_cat = match block.get("num_cat") {
            Some(_) => count(name, block, "num_cat", *line)?,
            None => 0,
        };
        if num_cat > inner {
            return Err(at(format!(
                "num_cat={num_cat}: expected at most one category set per inner node ({inner})"
            )));
        }
        let (bounds, words): (Vec<u32>, Vec<u32>) = if num_cat > 0 {
            (
                numbers(name, block, "cat_boundaries", *line)?,
                numbers(name, block, "cat_threshold", *line)?,
            )
        } else {
            (vec![], vec![])
        };
        if num_cat > 0 && bounds.len() != num_cat + 1 {
            return Err(at(format!(
                "num_cat={num_cat} but {} category boundaries",
                bounds.len()
            )));
        }
        let mut nodes = Vec::with_capacity(inner);
        for i in 0..inner {
            let rule = rule_of(decision[i], threshold[i], &bounds)
                .map_err(|what| at(format!("node {i}: {what}")))?;
            let child = |c: i64| -> Result<Child> {
                match c {
                    c if c >= 0 && (c as usize) < inner => Ok(Child::Node(c as u32)),
                    c if c < 0 && ((!c) as usize) < leaves => Ok(Child::Leaf(!c as u32)),
                    c => Err(at(format!("node {i} has child {c}: expected an inner node below {inner} or a leaf from -1 to -{leaves}"))),
                }
            };
            nodes.push(Node {
                column: feature[i],
                rule,
                left: child(left[i])?,
                right: child(right[i])?,
            });
        }
        trees.push(Tree {
            nodes,
            leaves: leaf_values,
            words,
            weight: 1.0,
        });
    }
    // One space between names, as LightGBM writes them (a name's own spaces are underscores).
    let feature_names = header.get("feature_names").and_then(|v| {
        super::named_columns(
            v.trim_end().split(' ').map(String::from).collect(),
            n_columns,
        )
    });
    Ok(Forest {
        library: Library::LightGbm,
        trees,
        base_margin: 0.0,
        average,
        n_columns,
        note: note_of(&objective),
        objective,
        feature_names,
    })
}

/// A node's rule from its `decision_type`, threshold and (categorical) the tree's boundaries.
fn rule_of(decision: i32, threshold: f64, bounds: &[u32]) -> std::result::Result<Rule, String> {
    if !(0..16).contains(&decision) {
        return Err(format!("decision_type {decision}: expected 0 to 15"));
    }
    if decision & 1 == 1 {
        let index = threshold;
        // In f64: a huge index must not wrap when cast.
        if !(index >= 0.0 && index.fract() == 0.0 && index + 1.0 < bounds.len() as f64) {
            return Err(format!("categorical split {index}: no such category set"));
        }
        let i = index as usize;
        return Ok(Rule::LightGbmCategorical {
            start: bounds[i],
            end: bounds[i + 1],
        });
    }
    let missing = match (decision >> 2) & 3 {
        0 => Missing::None,
        1 => Missing::Zero,
        2 => Missing::NaN,
        _ => {
            return Err(format!(
                "decision_type {decision}: missing type 3 does not exist"
            ))
        }
    };
    Ok(Rule::LightGbm {
        threshold,
        missing,
        default_left: decision & 2 != 0,
    })
}

/// Refuses a model of several outputs per document (multiclass, num_tree_per_iteration > 1).
fn check_single_output(name: &Path, header: &HashMap<&str, &str>, objective: &str) -> Result<()> {
    let classes = match header.get("num_class") {
        Some(_) => count(name, header, "num_class", 0)?,
        None => 1,
    };
    let per_iteration = match header.get("num_tree_per_iteration") {
        Some(_) => count(name, header, "num_tree_per_iteration", 0)?,
        None => 1,
    };
    if classes > 1 || per_iteration > 1 || objective.starts_with("multiclass") {
        return Err(model_error(name, format!(
            "a multiclass model ({objective}, {classes} classes): it gives each document one score per class, not one ranking score; train a ranker (objective lambdarank or rank_xendcg) or a binary model"
        )));
    }
    Ok(())
}

/// What a LightGBM objective makes of the scores, when it is not a ranking objective.
fn note_of(objective: &str) -> Option<String> {
    let kind = objective.split_whitespace().next().unwrap_or("");
    match kind {
        "lambdarank" | "rank_xendcg" => None,
        "binary" | "cross_entropy" | "cross_entropy_lambda" => Some(format!(
            "the model's objective is {kind}, not a ranking objective: its scores are log-odds (raw scores), used as they are as the teacher's logits"
        )),
        "" => Some("the model names no objective: its raw scores are used as the teacher's logits".into()),
        other => Some(format!(
            "the model's objective is {other}, not a ranking objective: its raw scores are used as the teacher's logits, which suits a pointwise teacher only if they order documents by relevance"
        )),
    }
}

/// The input columns of a model whose largest feature index is `max_feature_idx`.
fn columns_of(name: &Path, max_feature_idx: usize) -> Result<usize> {
    max_feature_idx
        .checked_add(1)
        .filter(|&n| n <= super::MAX_COLUMNS)
        .ok_or_else(|| {
            model_error(
                name,
                format!(
                    "max_feature_idx={max_feature_idx}: expected at most {}",
                    super::MAX_COLUMNS - 1
                ),
            )
        })
}

/// A whole number after `key=`.
fn count(name: &Path, block: &HashMap<&str, &str>, key: &str, line: usize) -> Result<usize> {
    let v = block
        .get(key)
        .ok_or_else(|| model_error(name, format!("{}no {key}= line", at_line(line))))?;
    v.trim().parse::<usize>().map_err(|_| {
        model_error(
            name,
            format!(
                "{}{key}={}: expected a whole number",
                at_line(line),
                crate::error::printable(v.trim())
            ),
        )
    })
}

/// The space-separated numbers after `key=`.
fn numbers<T: std::str::FromStr>(
    name: &Path,
    block: &HashMap<&str, &str>,
    key: &str,
    line: usize,
) -> Result<Vec<T>> {
    let v = block
        .get(key)
        .ok_or_else(|| model_error(name, format!("{}no {key}= line", at_line(line))))?;
    v.split_whitespace()
        .map(|t| {
            t.parse::<T>().map_err(|_| {
                let t: String = t.chars().take(40).collect();
                model_error(
                    name,
                    format!(
                        "{}{key}: '{}' is not a number of the kind expected",
                        at_line(line),
                        crate::error::printable(&t)
                    ),
                )
            })
        })
        .collect()
}

fn at_line(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!("the tree at line {line}: ")
    }
}

/// Reads the JSON of `Booster.dump_model()`.
pub fn parse_dump(name: &Path, value: &serde_json::Value) -> Result<Forest> {
    let bad = |what: String| model_error(name, what);
    let objective = value
        .get("objective")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    let whole = |key: &str| value.get(key).and_then(|v| v.as_u64());
    let classes = whole("num_class").unwrap_or(1);
    let per_iteration = whole("num_tree_per_iteration").unwrap_or(1);
    if classes > 1 || per_iteration > 1 || objective.starts_with("multiclass") {
        return Err(bad(format!("a multiclass model ({objective}, {classes} classes): it gives each document one score per class, not one ranking score")));
    }
    let max_feature_idx = whole("max_feature_idx").ok_or_else(|| {
        bad("no max_feature_idx: expected the JSON of LightGBM's dump_model()".into())
    })?;
    let n_columns = columns_of(name, usize::try_from(max_feature_idx).unwrap_or(usize::MAX))?;
    let infos = value
        .get("tree_info")
        .and_then(|v| v.as_array())
        .ok_or_else(|| bad("tree_info is not a list of trees".into()))?;
    let mut trees = Vec::with_capacity(infos.len().min(super::MAX_TREES));
    // The category sets' words of every tree so far.
    let mut all_words = 0usize;
    for (t, info) in infos.iter().enumerate() {
        let at = |what: &str| bad(format!("tree {t}: {what}"));
        let structure = info
            .get("tree_structure")
            .ok_or_else(|| at("no tree_structure"))?;
        let mut tree = Tree {
            weight: 1.0,
            ..Tree::default()
        };
        // Depth first with a stack: each JSON node, and the slot that points to it.
        enum Slot {
            Root,
            Left(usize),
            Right(usize),
        }
        let mut stack = vec![(structure, Slot::Root)];
        while let Some((json, slot)) = stack.pop() {
            let child = if let Some(leaf) = json.get("leaf_value") {
                if json.get("leaf_coeff").is_some() || json.get("leaf_const").is_some() {
                    return Err(at("a linear tree's leaf (linear_tree=true): its leaves are linear models, which this reader does not score; train with linear_tree=false"));
                }
                let v = leaf
                    .as_f64()
                    .ok_or_else(|| at("a leaf_value that is not a number"))?;
                tree.leaves.push(v);
                Child::Leaf((tree.leaves.len() - 1) as u32)
            } else {
                let column = json
                    .get("split_feature")
                    .and_then(|v| v.as_u64())
                    .filter(|&c| c < u32::MAX as u64)
                    .ok_or_else(|| at("a node without a split_feature"))?;
                let default_left = json
                    .get("default_left")
                    .and_then(|v| v.as_bool())
                    .unwrap_or(false);
                let rule = match json.get("decision_type").and_then(|v| v.as_str()) {
                    Some("<=") => {
                        let threshold = json
                            .get("threshold")
                            .and_then(|v| v.as_f64())
                            .ok_or_else(|| at("a numerical split without a numeric threshold"))?;
                        let missing = match json.get("missing_type").and_then(|v| v.as_str()) {
                            Some("None") | None => Missing::None,
                            Some("Zero") => Missing::Zero,
                            Some("NaN") => Missing::NaN,
                            Some(other) => {
                                return Err(at(&format!(
                                    "missing_type '{}'",
                                    crate::error::printable(other)
                                )))
                            }
                        };
                        Rule::LightGbm {
                            threshold,
                            missing,
                            default_left,
                        }
                    }
                    Some("==") => {
                        // Categories as "1||3||5": the tree's bitset words.
                        let text = json.get("threshold").and_then(|v| v.as_str()).unwrap_or("");
                        let mut categories = Vec::new();
                        for c in text.split("||") {
                            let c: u32 = c.trim().parse().ok().filter(|&c| c < 1 << 20).ok_or_else(|| at("a categorical threshold that is not a list of categories below 2^20"))?;
                            categories.push(c);
                        }
                        let start = tree.words.len();
                        let n_words = categories.iter().max().map_or(0, |&m| m as usize / 32 + 1);
                        // Each set's words are allocated from its largest category: bounded over
                        // the whole model, so a small file cannot ask for gigabytes.
                        all_words += n_words;
                        if all_words > super::MAX_NODES {
                            return Err(at("category sets of more than 2^24 words in all the trees: expected the categories of a trained model"));
                        }
                        tree.words.resize(start + n_words, 0);
                        for c in categories {
                            tree.words[start + c as usize / 32] |= 1 << (c % 32);
                        }
                        Rule::LightGbmCategorical {
                            start: start as u32,
                            end: tree.words.len() as u32,
                        }
                    }
                    _ => return Err(at("a node whose decision_type is neither '<=' nor '=='")),
                };
                let (left, right) = (
                    json.get("left_child")
                        .ok_or_else(|| at("a node without a left_child"))?,
                    json.get("right_child")
                        .ok_or_else(|| at("a node without a right_child"))?,
                );
                if tree.nodes.len() >= super::MAX_NODES {
                    return Err(at("more nodes than a tree may have"));
                }
                let n = tree.nodes.len();
                tree.nodes.push(Node {
                    column: column as u32,
                    rule,
                    left: Child::Leaf(u32::MAX),
                    right: Child::Leaf(u32::MAX),
                });
                stack.push((right, Slot::Right(n)));
                stack.push((left, Slot::Left(n)));
                Child::Node(n as u32)
            };
            match slot {
                Slot::Root => {}
                Slot::Left(n) => tree.nodes[n].left = child,
                Slot::Right(n) => tree.nodes[n].right = child,
            }
        }
        trees.push(tree);
    }
    Ok(Forest {
        library: Library::LightGbm,
        trees,
        base_margin: 0.0,
        average: value
            .get("average_output")
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
        n_columns,
        note: note_of(&objective),
        objective,
        feature_names: value
            .get("feature_names")
            .and_then(|v| serde_json::from_value::<Vec<String>>(v.clone()).ok())
            .and_then(|names| super::named_columns(names, n_columns)),
    })
}

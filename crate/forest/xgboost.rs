//! XGBoost's JSON model (`Booster.save_model("model.json")`, the documented schema): the learner's
//! `base_score` and objective, and the trees of a `gbtree` (or `dart`, each tree weighted by its
//! `weight_drop`) booster. A tree lists its nodes in arrays indexed by node: `left_children`
//! (-1 for a leaf), `right_children`, `split_indices`, `split_conditions` (a leaf's value, for a
//! leaf) and `default_left`. XGBoost decides in f32: left when `value < condition`, a missing value
//! by `default_left`.

use std::path::Path;

use super::{model_error, Child, Forest, Library, Node, Rule, Tree};
use crate::error::Result;
use crate::math::ln;
use serde_json::Value;

/// Reads the JSON model.
pub fn parse_json(name: &Path, value: &Value) -> Result<Forest> {
    let bad = |what: String| model_error(name, what);
    let learner = &value["learner"];
    let param = &learner["learner_model_param"];
    let text_number = |v: &Value| -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            // "5E-1", or XGBoost 3.1's vector "[5E-1]".
            Value::String(s) => s
                .trim()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .trim()
                .parse()
                .ok(),
            _ => None,
        }
    };
    let classes = text_number(&param["num_class"]).unwrap_or(0.0);
    let targets = text_number(&param["num_target"]).unwrap_or(1.0);
    let objective = learner["objective"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if classes.is_nan() || targets.is_nan() {
        return Err(bad(
            "learner_model_param's num_class or num_target is not a number: expected an XGBoost JSON model".into(),
        ));
    }
    if classes > 1.0 || objective.starts_with("multi:") {
        return Err(bad(format!("a multiclass model ({objective}, {classes} classes): it gives each document one score per class, not one ranking score; train a ranker (rank:ndcg, rank:pairwise) or a binary model")));
    }
    if targets > 1.0 {
        return Err(bad(format!(
            "a model of {targets} targets: a teacher gives one score per document"
        )));
    }
    let n_columns = text_number(&param["num_feature"])
        .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= 1e9)
        .ok_or_else(|| bad(format!("learner_model_param.num_feature is {}: expected a whole number of input columns in 1..=1,000,000,000 (an XGBoost JSON model's)", shown_json(&param["num_feature"]))))?
        as usize;
    let base_score = text_number(&param["base_score"])
        .ok_or_else(|| bad("learner_model_param.base_score is missing or not a number".into()))?;
    // The version that saved the model (`"version": [major, minor, patch]`); a file without one
    // is taken as this decade's.
    let version: Vec<u64> = value["version"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    let before_1_4 = matches!(version.as_slice(), [0, ..] | [1, 0..=3, ..]);
    let (base_margin, note) = margin_of(&objective, base_score, before_1_4).map_err(bad)?;
    let booster = &learner["gradient_booster"];
    let (model, weights) = match booster["name"].as_str() {
        Some("gbtree") => (&booster["model"], None),
        Some("dart") => {
            let weights = booster["weight_drop"]
                .as_array()
                .ok_or_else(|| bad("a dart booster without weight_drop".into()))?;
            (&booster["gbtree"]["model"], Some(weights))
        }
        Some("gblinear") => {
            return Err(bad(
                "a gblinear booster (a linear model, not trees): train with booster='gbtree'"
                    .into(),
            ))
        }
        _ => return Err(bad(
            "learner.gradient_booster.name is none of gbtree, dart: expected an XGBoost tree model"
                .into(),
        )),
    };
    let json_trees = model["trees"]
        .as_array()
        .ok_or_else(|| bad("the booster's model has no list of trees".into()))?;
    if let Some(w) = weights {
        if w.len() != json_trees.len() {
            return Err(bad(format!(
                "{} trees but {} weight_drop values",
                json_trees.len(),
                w.len()
            )));
        }
    }
    // Counts the model states must be its trees' (XGBoost refuses to load a model otherwise).
    if let Some(declared) = text_number(&model["gbtree_model_param"]["num_trees"]) {
        if declared != json_trees.len() as f64 {
            return Err(bad(format!(
                "gbtree_model_param.num_trees says {} trees and the model holds {}: counts that contradict the trees (XGBoost refuses to load such a model)",
                crate::error::shown(declared),
                json_trees.len()
            )));
        }
    }
    if let Some(info) = model["tree_info"].as_array() {
        if info.len() != json_trees.len() {
            return Err(bad(format!(
                "tree_info has {} entries for {} trees: expected one a tree (XGBoost refuses to load such a model)",
                info.len(),
                json_trees.len()
            )));
        }
    }
    // An early-stopped model: XGBoost's estimators (XGBRanker.predict) score the iterations up to
    // its best one.
    let (kept, early) = best_iterations(learner, model, json_trees.len()).map_err(bad)?;
    let json_trees = &json_trees[..kept];
    let note = match (note, early) {
        (Some(n), Some(e)) => Some(format!("{n}; {e}")),
        (n, e) => n.or(e),
    };
    let mut trees = Vec::with_capacity(json_trees.len().min(super::MAX_TREES));
    for (t, json) in json_trees.iter().enumerate() {
        let mut tree = read_tree(json).map_err(|what| bad(format!("tree {t}: {what}")))?;
        if let Some(w) = weights {
            tree.weight = w[t]
                .as_f64()
                .ok_or_else(|| bad(format!("tree {t}: a weight_drop that is not a number")))?;
        }
        trees.push(tree);
    }
    Ok(Forest {
        library: Library::XgBoost,
        trees,
        base_margin,
        average: false,
        n_columns,
        objective,
        note,
        feature_names: serde_json::from_value::<Vec<String>>(learner["feature_names"].clone())
            .ok()
            .and_then(|names| super::named_columns(names, n_columns)),
    })
}

/// The trees XGBoost's estimators score (all, or those of the iterations up to the recorded
/// `best_iteration` of an early-stopped model: through `iteration_indptr` where the model has it,
/// else `num_parallel_tree` trees an iteration), and, for an early-stopped model, a sentence that
/// says so. A best iteration the model cannot have is refused.
fn best_iterations(
    learner: &Value,
    model: &Value,
    n_trees: usize,
) -> std::result::Result<(usize, Option<String>), String> {
    let best = match &learner["attributes"]["best_iteration"] {
        Value::Null => return Ok((n_trees, None)),
        Value::String(s) => s.trim().parse::<u64>().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
    .ok_or_else(|| {
        format!(
            "learner.attributes.best_iteration is {}: expected a whole number in 0..={}",
            shown_json(&learner["attributes"]["best_iteration"]),
            u64::MAX
        )
    })?;
    let whole = |v: &Value| match v {
        Value::String(s) => s.trim().parse::<u64>().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    };
    let kept = match model["iteration_indptr"].as_array() {
        Some(indptr) => indptr
            .get(best as usize + 1)
            .and_then(whole)
            .ok_or(format!(
                "best_iteration {best} is past the model's {} iterations (iteration_indptr)",
                indptr.len().saturating_sub(1)
            ))?,
        None => {
            let parallel = whole(&model["gbtree_model_param"]["num_parallel_tree"]).unwrap_or(1);
            (best + 1).saturating_mul(parallel.max(1))
        }
    };
    if kept == 0 || kept > n_trees as u64 {
        return Err(format!(
            "best_iteration {best} asks for {kept} trees, and the model holds {n_trees}"
        ));
    }
    let kept = kept as usize;
    let said = (kept < n_trees).then(|| {
        format!(
            "an early-stopped model (best_iteration {best}): scored with the {kept} trees of its iterations up to the best, of {n_trees}, as XGBoost's estimators (XGBRanker.predict) score it; Booster.predict's default iteration_range would score all {n_trees}"
        )
    });
    Ok((kept, said))
}

/// The margin XGBoost starts every document from (its `ProbToMargin` of `base_score` under the
/// objective), and what the objective makes of the scores when it does not rank.
fn margin_of(
    objective: &str,
    base: f64,
    before_1_4: bool,
) -> std::result::Result<(f64, Option<String>), String> {
    let pointwise = |what: &str| {
        Some(format!(
            "the model's objective is {objective}, not a ranking objective: its margins ({what}) are used as the teacher's logits"
        ))
    };
    match objective {
        "rank:ndcg" | "rank:pairwise" | "rank:map" => Ok((base, None)),
        // `binary:logitraw` starts from base_score itself since xgboost 1.4 (dmlc/xgboost#6517;
        // checked against 3.x in tests/python/test_teachers.py), from its logit before.
        "binary:logitraw" if !before_1_4 => Ok((base, pointwise("log-odds"))),
        "binary:logistic" | "reg:logistic" | "binary:logitraw" => {
            if !(base > 0.0 && base < 1.0) {
                return Err(format!("base_score {base} under {objective}: expected a probability in (0, 1)"));
            }
            Ok((ln(base / (1.0 - base)), pointwise("log-odds")))
        }
        "count:poisson" | "reg:gamma" | "reg:tweedie" => {
            if base.is_nan() || base <= 0.0 {
                return Err(format!("base_score {base} under {objective}: expected a positive mean"));
            }
            Ok((ln(base), pointwise("log means")))
        }
        "reg:squarederror" | "reg:squaredlogerror" | "reg:pseudohubererror" | "reg:absoluteerror" | "reg:quantileerror" => {
            Ok((base, pointwise("predicted values")))
        }
        other => Err(format!("objective '{}': expected a ranking (rank:ndcg, rank:pairwise, rank:map), binary or regression objective", crate::error::printable(other))),
    }
}

/// One tree from its node arrays: inner nodes and leaves numbered apart, each child resolved.
fn read_tree(json: &Value) -> std::result::Result<Tree, String> {
    let array = |key: &str| json[key].as_array().ok_or_else(|| format!("no {key} list"));
    let left = array("left_children")?;
    let right = array("right_children")?;
    let index = array("split_indices")?;
    let condition = array("split_conditions")?;
    let default_left = array("default_left")?;
    let n = left.len();
    if n == 0 || n > super::MAX_NODES {
        return Err(format!("{n} nodes: expected 1 to {}", super::MAX_NODES));
    }
    for (key, len) in [
        ("right_children", right.len()),
        ("split_indices", index.len()),
        ("split_conditions", condition.len()),
        ("default_left", default_left.len()),
    ] {
        if len != n {
            return Err(format!("{key} has {len} values, left_children {n}"));
        }
    }
    // A split_type other than 0 (numerical), a number or not, or a node listed as categorical.
    let categorical = json["split_type"]
        .as_array()
        .is_some_and(|types| types.iter().any(|t| t.as_u64() != Some(0)))
        || json["categories_nodes"]
            .as_array()
            .is_some_and(|c| !c.is_empty());
    if categorical {
        return Err(
            "a categorical split (enable_categorical): this reader scores numerical splits only"
                .into(),
        );
    }
    if json["tree_param"]["size_leaf_vector"]
        .as_str()
        .is_some_and(|s| s.trim() != "0" && s.trim() != "1")
    {
        return Err("a tree with vector leaves (multi_strategy='multi_output_tree')".into());
    }
    let child_of = |v: &Value, i: usize| -> std::result::Result<i64, String> {
        v.as_i64().ok_or_else(|| {
            format!(
                "node {i}: child index {}: expected a whole number (a node's index, or -1)",
                shown_json(v)
            )
        })
    };
    // Each node's place: Leaf(k) or Node(k), in order of the arrays.
    let mut place = Vec::with_capacity(n);
    let (mut inner, mut leaves) = (0u32, 0u32);
    for (i, l) in left.iter().enumerate() {
        if child_of(l, i)? == -1 {
            place.push(Child::Leaf(leaves));
            leaves += 1;
        } else {
            place.push(Child::Node(inner));
            inner += 1;
        }
    }
    let resolve = |c: i64, i: usize| -> std::result::Result<Child, String> {
        if c < 0 || c as usize >= n {
            return Err(format!(
                "node {i} points to node {c}, but the tree has {n} nodes"
            ));
        }
        Ok(place[c as usize])
    };
    let number = |v: &Value, what: &str, i: usize| {
        v.as_f64()
            .ok_or_else(|| format!("node {i}: {what} is not a number"))
    };
    let mut tree = Tree {
        weight: 1.0,
        ..Tree::default()
    };
    // The root, whatever it is, is node 0: numbered first in its own kind.
    for i in 0..n {
        let value = number(&condition[i], "split_conditions", i)?;
        match place[i] {
            Child::Leaf(_) => {
                if child_of(&right[i], i)? != -1 {
                    return Err(format!("node {i} has no left child but a right one"));
                }
                tree.leaves.push(value);
            }
            Child::Node(_) => {
                let column = index[i]
                    .as_u64()
                    .filter(|&c| c < u32::MAX as u64)
                    .ok_or_else(|| format!("node {i}: split_indices is not a column"))?;
                let default_left = match &default_left[i] {
                    Value::Bool(b) => *b,
                    v => {
                        v.as_u64().ok_or_else(|| {
                            format!("node {i}: default_left is neither 0/1 nor a boolean")
                        })? != 0
                    }
                };
                tree.nodes.push(Node {
                    column: column as u32,
                    rule: Rule::XgBoost {
                        threshold: value as f32,
                        default_left,
                    },
                    left: resolve(child_of(&left[i], i)?, i)?,
                    right: resolve(child_of(&right[i], i)?, i)?,
                });
            }
        }
    }
    if matches!(place[0], Child::Leaf(_)) && n > 1 {
        return Err("the root is a leaf, but the tree has other nodes".into());
    }
    Ok(tree)
}

/// A JSON value as a message shows it: "missing" for null, else its text cut at 40 characters.
fn shown_json(v: &Value) -> String {
    match v {
        Value::Null => "missing".into(),
        other => {
            let text = other.to_string();
            match text.char_indices().nth(40) {
                Some((at, _)) => format!("{}...", &text[..at]),
                None => text,
            }
        }
    }
}

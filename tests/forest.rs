//! Tree models trained elsewhere (crate/forest.rs) and the external teacher
//! (crate/pipeline/teacher.rs): hand-made LightGBM and XGBoost models scored as their libraries
//! score them, every class of bad model file refused in words before anything is allocated for
//! it, scores files checked line by line, and a student that never reads z.
//! (Parity with lightgbm and xgboost themselves: tests/python/test_teachers.py.)

#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::{Path, PathBuf};

use distillrank::data::inputs::Inputs;
use distillrank::data::prepare::FeatureView;
use distillrank::engine::Engine;
use distillrank::forest::{Columns, Forest, Library};
use distillrank::pipeline::{self, Silent};
use distillrank::ranking::distill::{Method, TeacherInputs};
use distillrank::setup::{DataSource, ExternalTeacher, Setup};
use distillrank::stop::Stop;

/// A LightGBM text model of one tree: node 0 splits column 0 at 0.5 (`decision_type` given),
/// node 1 column 1 at 1.5; leaves 0.1, 0.2, 0.3.
fn lightgbm(decision: &str, left: &str, right: &str, extra: &str) -> String {
    format!(
        "tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\nmax_feature_idx=2\nobjective=lambdarank\n{extra}\n\
Tree=0\nnum_leaves=3\nnum_cat=0\nsplit_feature=0 1\nsplit_gain=1 1\nthreshold=0.5 1.5\ndecision_type={decision}\nleft_child={left}\nright_child={right}\nleaf_value=0.1 0.20000000000000001 0.3\nis_linear=0\nshrinkage=1\n\n\nend of trees\n"
    )
}

fn parse(text: &str) -> distillrank::error::Result<Forest> {
    Forest::parse(Path::new("model.txt"), text.as_bytes())
}

fn refused(text: &str, words: &[&str]) {
    let message = parse(text).expect_err("refused").to_string();
    for w in words {
        assert!(message.contains(w), "{message:?} lacks {w:?}");
    }
    assert!(message.contains("model.txt"), "{message:?} names no file");
}

#[test]
fn a_lightgbm_tree_decides_as_lightgbm_does() {
    let forest = parse(&lightgbm("2 0", "1 -1", "-2 -3", "")).unwrap();
    assert_eq!(forest.library, Library::LightGbm);
    assert_eq!(forest.n_columns, 3);
    assert_eq!(forest.score(&[0.3, 1.0, 0.0]), 0.1);
    assert_eq!(forest.score(&[0.5, 1.5, 0.0]), 0.1, "<= goes left");
    assert_eq!(forest.score(&[0.7, 1.0, 0.0]), 0.2);
    assert_eq!(forest.score(&[0.3, 2.0, 0.0]), 0.3);
    // Missing type None: NaN is read as 0, which is <= 0.5.
    assert_eq!(forest.score(&[f64::NAN, 1.0, 0.0]), 0.1);
    assert_eq!(forest.split_columns(), vec![0, 1]);
}

/// A model's column names are kept where they name its columns: LightGBM's defaults
/// (`Column_0`, ...) and XGBoost's empty list name none. Under from-0 the model's column 0 is no
/// feature of the data.
#[test]
fn a_model_keeps_the_names_of_the_columns_it_was_trained_on() {
    let names = |text: &str| parse(text).unwrap().feature_names;
    let abc = ["a", "b", "c"].map(String::from).to_vec();
    assert_eq!(
        names(&lightgbm("2 0", "1 -1", "-2 -3", "feature_names=a b c")),
        Some(abc.clone())
    );
    assert_eq!(
        names(&lightgbm(
            "2 0",
            "1 -1",
            "-2 -3",
            "feature_names=Column_0 Column_1 Column_2"
        )),
        None
    );
    assert_eq!(
        names(&lightgbm("2 0", "1 -1", "-2 -3", "feature_names=a b")),
        None
    );
    assert_eq!(names(&lightgbm("2 0", "1 -1", "-2 -3", "")), None);
    let forest = parse(&lightgbm("2 0", "1 -1", "-2 -3", "feature_names=a b c")).unwrap();
    assert_eq!(forest.names_as_features(1), Some(&abc[..]));
    assert_eq!(forest.names_as_features(0), Some(&abc[1..]));
    // LightGBM writes a name's spaces as underscores: the data's names are compared so. Where
    // the names fit under the other column mapping, the message names the setting.
    let spaced = parse(&lightgbm(
        "2 0",
        "1 -1",
        "-2 -3",
        "feature_names=doc_length b c",
    ))
    .unwrap();
    let data = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let check = |names: &[&str], offset| {
        spaced.check_data_names(
            "f.parquet",
            Some(&data(names)),
            offset,
            "the model m.txt",
            "--columns",
        )
    };
    assert!(check(&["doc length", "b", "c"], 1).is_ok());
    assert!(check(&["b", "c"], 0).is_ok());
    let message = check(&["b", "doc length", "c"], 1).unwrap_err().to_string();
    assert!(
        message
            .contains("f.parquet: feature column 1 is \"b\", which is column 2 in the model m.txt")
            && !message.contains("other column mapping"),
        "{message}"
    );
    let message = check(&["doc length", "b"], 0).unwrap_err().to_string();
    assert!(
        message.contains("the names fit under the other column mapping: give --columns from-1"),
        "{message}"
    );
    assert!(spaced
        .check_data_names("f", None, 1, "m", "--columns")
        .is_ok());
    // XGBoost: the learner's list, empty unless the model was trained on named columns.
    let xgb = |json: &serde_json::Value| {
        Forest::parse(Path::new("m.json"), json.to_string().as_bytes())
            .unwrap()
            .feature_names
    };
    let mut json: serde_json::Value =
        serde_json::from_str(&xgboost("rank:ndcg", "5E-1", "[1,-1,-1]")).unwrap();
    assert_eq!(xgb(&json), None);
    let abcd = ["a", "b", "c", "d"].map(String::from).to_vec();
    json["learner"]["feature_names"] = serde_json::json!(abcd);
    assert_eq!(xgb(&json), Some(abcd));
}

#[test]
fn lightgbm_missing_types_take_the_default_direction() {
    // Node 0: missing type Zero (bit 2), default right (no bit 1): 0 goes right even though
    // 0 <= 0.5; a tiny value is zero too, a NaN reads as 0.
    let zero = parse(&lightgbm("4 0", "1 -1", "-2 -3", "")).unwrap();
    assert_eq!(zero.score(&[0.0, 1.0, 0.0]), 0.2);
    assert_eq!(zero.score(&[1e-36, 1.0, 0.0]), 0.2);
    assert_eq!(zero.score(&[f64::NAN, 1.0, 0.0]), 0.2);
    assert_eq!(zero.score(&[0.25, 1.0, 0.0]), 0.1);
    // Missing type NaN (bit 3), default left (bit 1): NaN goes left even on a threshold it
    // would fail; 0 is an ordinary value.
    let nan = parse(&lightgbm("10 0", "1 -1", "-2 -3", "")).unwrap();
    assert_eq!(nan.score(&[f64::NAN, 1.0, 0.0]), 0.1);
    assert_eq!(nan.score(&[0.0, 1.0, 0.0]), 0.1);
    assert_eq!(nan.score(&[0.9, 1.0, 0.0]), 0.2);
}

#[test]
fn lightgbm_average_output_is_the_mean_of_the_trees() {
    let forest = parse(&lightgbm("2 0", "1 -1", "-2 -3", "average_output")).unwrap();
    assert!(forest.average);
    assert_eq!(forest.score(&[0.3, 1.0, 0.0]), 0.1);
}

#[test]
fn every_class_of_bad_lightgbm_file_is_refused_in_words() {
    // A cycle: node 1 is its own child.
    refused(
        &lightgbm("2 0", "1 1", "-2 -3", ""),
        &["tree 0", "reached twice"],
    );
    // A child past the nodes or the leaves.
    refused(&lightgbm("2 0", "7 -1", "-2 -3", ""), &["child 7"]);
    refused(&lightgbm("2 0", "1 -9", "-2 -3", ""), &["child -9"]);
    // A node no path reaches (node 0's children are leaves); a leaf two nodes share.
    refused(
        &lightgbm("2 0", "-1 -2", "-3 -3", ""),
        &["node 1 is not reached from the root"],
    );
    refused(
        &lightgbm("2 0", "1 -1", "-1 -3", ""),
        &["leaf 0 is reached twice"],
    );
    // Truncated: no end of trees.
    let whole = lightgbm("2 0", "1 -1", "-2 -3", "");
    refused(&whole[..whole.len() / 2], &["truncated"]);
    // Declared counts that the arrays do not have: never allocated.
    refused(
        &whole.replace("num_leaves=3", "num_leaves=99999999999"),
        &["num_leaves=99999999999"],
    );
    refused(
        &whole.replace("num_leaves=3", "num_leaves=4"),
        &["num_leaves=4 but 3 leaf values"],
    );
    // Missing type 3 does not exist; a NaN threshold decides nothing.
    refused(&lightgbm("14 0", "1 -1", "-2 -3", ""), &["missing type 3"]);
    refused(
        &whole.replace("threshold=0.5 1.5", "threshold=nan 1.5"),
        &["NaN threshold"],
    );
    // Several outputs a document.
    refused(
        &whole.replace("num_class=1", "num_class=3"),
        &["multiclass"],
    );
    // A column past the model's own width.
    refused(
        &whole.replace("split_feature=0 1", "split_feature=0 5"),
        &["column 5", "3 columns"],
    );
    // Linear trees are refused rather than scored wrong.
    refused(
        &whole.replace("is_linear=0", "is_linear=1"),
        &["linear tree"],
    );
    // Not a model at all; XGBoost's binary UBJSON; JSON deeper than the reader recurses.
    refused("qid:1 1:0.5\n", &["expected a tree model"]);
    let ubjson = "{L\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{7}learner{";
    refused(ubjson, &["UBJSON", "save_model"]);
    // XGBoost's tree dump: no base score or objective to start from.
    let dump = "[\n  { \"nodeid\": 0, \"depth\": 0, \"split\": \"f1\", \"split_condition\": 0.5, \"yes\": 1, \"no\": 2, \"children\": [] }\n]";
    assert!(distillrank::forest::starts_like_tree_model(dump.as_bytes()));
    refused(dump, &["tree dump", "save_model(\"model.json\")"]);
    // Another JSON list (a scores file given as a model) is not called one.
    let scores = parse("[0.1, 0.2, 0.3]").unwrap_err().to_string();
    assert!(!scores.contains("tree dump"), "{scores}");
    let deep = format!("{}{}", "{\"a\":".repeat(100_000), "1");
    refused(&deep, &["nested deeper than 128"]);
}

/// Numbers a hostile text model declares that would wrap, or allocate, if taken at their word:
/// each refused in words before it is used.
#[test]
fn declared_numbers_past_any_model_are_refused_before_they_are_used() {
    let whole = lightgbm("2 0", "1 -1", "-2 -3", "");
    // A width of 2^64 - 1 wraps to 0 when one is added; 10^12 columns would be allocated.
    for idx in ["18446744073709551615", "1000000000000", "1048576"] {
        refused(
            &whole.replace("max_feature_idx=2", &format!("max_feature_idx={idx}")),
            &[
                &format!("max_feature_idx={idx}"),
                "expected at most 1048575",
            ],
        );
    }
    // More category sets than inner nodes (num_cat + 1 wraps at 2^64 - 1).
    for n in ["18446744073709551615", "3"] {
        refused(
            &whole.replace("num_cat=0", &format!("num_cat={n}")),
            &[
                &format!("num_cat={n}"),
                "at most one category set per inner node",
            ],
        );
    }
    // A categorical split whose set index is past every set, however large.
    let categorical = whole
        .replace(
            "num_cat=0",
            "num_cat=1\ncat_boundaries=0 1\ncat_threshold=5",
        )
        .replace("decision_type=2 0", "decision_type=1 0");
    assert!(parse(&categorical.replace("threshold=0.5 1.5", "threshold=0 1.5")).is_ok());
    for index in ["1", "1e300", "18446744073709551616", "-1", "0.5", "inf"] {
        refused(
            &categorical.replace("threshold=0.5 1.5", &format!("threshold={index} 1.5")),
            &["node 0", "no such category set"],
        );
    }
    // More Tree= blocks than a model may have is refused as they are read, not after.
    let trees = "Tree=0\n".repeat(distillrank::forest::MAX_TREES + 1);
    refused(
        &format!("tree\nmax_feature_idx=2\n{trees}end of trees\n"),
        &["more than 1000000 trees"],
    );
    // Leaves whose sum overflows: every score would be infinite.
    refused(
        &whole.replace(
            "leaf_value=0.1 0.20000000000000001 0.3",
            "leaf_value=1e308 1e308 1e308\nTree=1\nnum_leaves=1\nleaf_value=1e308",
        ),
        &["overflow f64"],
    );
}

/// LightGBM's dump_model() JSON of linear trees, of categories whose words would dwarf the file,
/// and of a width past any model; XGBoost's JSON of a non-finite base score, of leaves past f32,
/// of a categorical split however it is flagged, and of more values than are read.
#[test]
fn hostile_json_models_are_refused_before_they_are_used() {
    // A dump of `trees` trees, each one split on column 0 (`threshold`: a number, or categories
    // as a string) whose left child is `leaf`.
    let dump = |leaf: &str, threshold: &str, max_feature_idx: &str, trees: usize| {
        let decision = if threshold.starts_with('"') {
            "=="
        } else {
            "<="
        };
        let tree = format!(
            r#"{{"num_leaves":2,"tree_structure":{{"split_feature":0,"threshold":{threshold},"decision_type":"{decision}","default_left":true,"missing_type":"None","left_child":{leaf},"right_child":{{"leaf_value":0.5}}}}}}"#
        );
        format!(
            r#"{{"name":"tree","num_class":1,"num_tree_per_iteration":1,"max_feature_idx":{max_feature_idx},"objective":"lambdarank","tree_info":[{}]}}"#,
            vec![tree; trees].join(",")
        )
    };
    let plain = r#"{"leaf_value":0.25}"#;
    let forest = parse(&dump(plain, "0.5", "2", 1)).unwrap();
    assert_eq!(forest.score(&[0.0, 0.0, 0.0]), 0.25);
    refused(
        &dump(
            r#"{"leaf_value":0.25,"leaf_const":0.1,"leaf_features":[1],"leaf_coeff":[0.3]}"#,
            "0.5",
            "2",
            1,
        ),
        &["linear tree"],
    );
    refused(
        &dump(plain, "0.5", "18446744073709551615", 1),
        &["max_feature_idx"],
    );
    // One category of 2^20 - 1 takes 32,768 words: 600 such sets would be 75 MiB from a file of
    // some 130 kB, and are refused once the model's words pass 2^24.
    let one_set = parse(&dump(plain, r#""1048575""#, "2", 1)).unwrap();
    assert_eq!(one_set.trees[0].words.len(), 32_768);
    let many = dump(plain, r#""1048575""#, "2", 600);
    assert!(many.len() < 200_000, "{}", many.len());
    refused(&many, &["more than 2^24 words"]);

    let xgb = xgboost("rank:ndcg", "5E-1", "[1,-1,-1]");
    for base in ["nan", "inf", "1e999", "-inf"] {
        refused(
            &xgb.replace(
                "\"base_score\":\"5E-1\"",
                &format!("\"base_score\":\"{base}\""),
            ),
            &["base score", "finite"],
        );
    }
    refused(
        &xgb.replace("\"num_class\":\"0\"", "\"num_class\":\"nan\""),
        &["num_class"],
    );
    // A leaf past f32's range: XGBoost sums in f32, so the score would be infinite.
    refused(
        &xgb.replace("[0.5,-0.25,0.75]", "[0.5,-0.25,1e39]"),
        &["overflow f32"],
    );
    // A categorical split flagged by a split_type that is not a number, or by categories_nodes.
    refused(
        &xgb.replace("\"split_type\":[0,0,0]", "\"split_type\":[\"1\",0,0]"),
        &["categorical"],
    );
    refused(
        &xgb.replace("\"categories_nodes\":[]", "\"categories_nodes\":[0]"),
        &["categorical"],
    );
    // More JSON values than a model is read with, counted before the parse allocates any.
    let values = distillrank::forest::MAX_JSON_VALUES;
    let huge = xgb.replace(
        "\"attributes\":{}",
        &format!("\"attributes\":{{\"x\":[{}0]}}", "0,".repeat(values)),
    );
    refused(&huge, &["JSON model of up to", "values"]);
    // A byte-order mark before a model is no reason to take it for something else.
    assert!(distillrank::forest::starts_like_tree_model(
        format!("\u{feff}{xgb}").as_bytes()
    ));
    // Nor is a pretty-printed dump, whose tree_info comes after 64 KiB of feature names.
    let names: Vec<String> = (0..10_000).map(|i| format!("\"feature_{i}\"")).collect();
    let pretty = dump(plain, "0.5", "2", 1).replacen(
        "{\"name\":\"tree\",",
        &format!(
            "{{\n  \"name\": \"tree\",\n  \"feature_names\": [{}],\n",
            names.join(", ")
        ),
        1,
    );
    assert!(pretty.find("tree_info").unwrap() > 1 << 16);
    assert!(distillrank::forest::starts_like_tree_model(
        pretty.as_bytes()
    ));
    assert!(parse(&pretty).is_ok());
    assert!(distillrank::forest::starts_like_tree_model(
        format!(
            "\u{feff}{whole}",
            whole = lightgbm("2 0", "1 -1", "-2 -3", "")
        )
        .as_bytes()
    ));
}

/// A one-tree XGBoost JSON model: node 0 splits column 2 at 0.5 (default left), leaves 1 and 2.
fn xgboost(objective: &str, base_score: &str, left: &str) -> String {
    format!(
        r#"{{"learner":{{"attributes":{{}},"feature_names":[],"feature_types":[],
        "gradient_booster":{{"model":{{"gbtree_model_param":{{"num_parallel_tree":"1","num_trees":"1"}},
        "iteration_indptr":[0,1],"tree_info":[0],
        "trees":[{{"base_weights":[0,0,0],"categories":[],"categories_nodes":[],"categories_segments":[],"categories_sizes":[],
        "default_left":[1,0,0],"id":0,"left_children":{left},"loss_changes":[1,0,0],"parents":[2147483647,0,0],
        "right_children":[2,-1,-1],"split_conditions":[0.5,-0.25,0.75],"split_indices":[2,0,0],"split_type":[0,0,0],
        "sum_hessian":[1,1,1],"tree_param":{{"num_deleted":"0","num_feature":"4","num_nodes":"3","size_leaf_vector":"1"}}}}]}},
        "name":"gbtree"}},
        "learner_model_param":{{"base_score":"{base_score}","boost_from_average":"1","num_class":"0","num_feature":"4","num_target":"1"}},
        "objective":{{"name":"{objective}"}}}},"version":[3,0,0]}}"#
    )
}

#[test]
fn an_xgboost_tree_decides_in_f32_from_its_base_margin() {
    let forest = parse(&xgboost("rank:ndcg", "5E-1", "[1,-1,-1]")).unwrap();
    assert_eq!(forest.library, Library::XgBoost);
    assert_eq!(forest.n_columns, 4);
    assert_eq!(forest.score(&[0.0, 0.0, 0.25, 0.0]), 0.25, "0.5 - 0.25");
    assert_eq!(
        forest.score(&[0.0, 0.0, 0.5, 0.0]),
        1.25,
        "< is strict: 0.5 goes right"
    );
    assert_eq!(
        forest.score(&[0.0, 0.0, f64::NAN, 0.0]),
        0.25,
        "missing: default left"
    );
    // The value is cast to f32 before the comparison, as XGBoost's DMatrix does: the double
    // just below 0.5 rounds to 0.5, which is not < 0.5.
    assert_eq!(forest.score(&[0.0, 0.0, 0.49999999999, 0.0]), 1.25);
    assert!(forest.note.is_none());
    // A vector base_score (XGBoost 3.1) reads as its value.
    assert_eq!(
        parse(&xgboost("rank:ndcg", "[5E-1]", "[1,-1,-1]"))
            .unwrap()
            .base_margin,
        0.5
    );
    // Under binary:logistic the margin starts at logit(base_score), and the note says what the
    // scores are.
    let binary = parse(&xgboost("binary:logistic", "5E-1", "[1,-1,-1]")).unwrap();
    assert_eq!(binary.base_margin, 0.0);
    assert!(binary.note.as_deref().unwrap().contains("log-odds"));
    // Under binary:logitraw it starts at base_score itself since xgboost 1.4, at its logit
    // before (as the version that saved the model scores it).
    let raw = xgboost("binary:logitraw", "3E-1", "[1,-1,-1]");
    assert_eq!(parse(&raw).unwrap().base_margin, 0.3);
    let old = parse(&raw.replace("[3,0,0]", "[1,3,2]"))
        .unwrap()
        .base_margin;
    assert!((old - libm::log(0.3 / 0.7)).abs() < 1e-6, "{old}");
    assert_eq!(
        parse(&raw.replace("[3,0,0]", "[1,4,0]"))
            .unwrap()
            .base_margin,
        0.3
    );
}

#[test]
fn every_class_of_bad_xgboost_file_is_refused_in_words() {
    refused(
        &xgboost("rank:ndcg", "5E-1", "[0,-1,-1]"),
        &["reached twice"],
    );
    refused(&xgboost("rank:ndcg", "5E-1", "[9,-1,-1]"), &["node 9"]);
    refused(
        &xgboost("multi:softprob", "5E-1", "[1,-1,-1]"),
        &["multiclass"],
    );
    refused(
        &xgboost("binary:logistic", "2", "[1,-1,-1]"),
        &["probability"],
    );
    refused(
        &xgboost("survival:weird", "5E-1", "[1,-1,-1]"),
        &["objective"],
    );
    let whole = xgboost("rank:ndcg", "5E-1", "[1,-1,-1]");
    refused(
        &whole.replace("\"gbtree\"}", "\"gblinear\"}"),
        &["gblinear"],
    );
    refused(
        &whole.replace("\"split_type\":[0,0,0]", "\"split_type\":[1,0,0]"),
        &["categorical"],
    );
    refused(&whole[..whole.len() - 40], &["not a JSON model"]);
    // Counts that contradict the trees.
    refused(
        &whole.replace("\"num_trees\":\"1\"", "\"num_trees\":\"999999999\""),
        &["num_trees", "999999999", "holds 1"],
    );
    refused(
        &whole.replace("\"tree_info\":[0]", "\"tree_info\":[0,0,0,0,0]"),
        &["tree_info has 5 entries for 1 trees"],
    );
    // A best iteration the model cannot have.
    refused(
        &whole.replace(
            "\"attributes\":{}",
            "\"attributes\":{\"best_iteration\":\"3\"}",
        ),
        &["best_iteration 3"],
    );
}

/// An early-stopped XGBoost model scores with the trees of its iterations up to the best, as
/// XGBoost's own predict does, and says so.
#[test]
fn an_early_stopped_xgboost_model_scores_as_xgboosts_predict() {
    // Two iterations of one tree: the second adds 10 to every score.
    let whole = xgboost("rank:ndcg", "5E-1", "[1,-1,-1]");
    let second = r#"{"base_weights":[0],"categories":[],"categories_nodes":[],"categories_segments":[],"categories_sizes":[],
        "default_left":[0],"id":1,"left_children":[-1],"loss_changes":[0],"parents":[2147483647],
        "right_children":[-1],"split_conditions":[10],"split_indices":[0],"split_type":[0],
        "sum_hessian":[1],"tree_param":{"num_deleted":"0","num_feature":"4","num_nodes":"1","size_leaf_vector":"1"}}]"#;
    let two = whole
        .replace("\"num_trees\":\"1\"", "\"num_trees\":\"2\"")
        .replace("\"iteration_indptr\":[0,1]", "\"iteration_indptr\":[0,1,2]")
        .replace("\"tree_info\":[0]", "\"tree_info\":[0,0]")
        .replacen("\"tree_param\":{\"num_deleted\":\"0\",\"num_feature\":\"4\",\"num_nodes\":\"3\",\"size_leaf_vector\":\"1\"}}]", &format!("\"tree_param\":{{\"num_deleted\":\"0\",\"num_feature\":\"4\",\"num_nodes\":\"3\",\"size_leaf_vector\":\"1\"}}}},{second}"), 1);
    let row = [0.0, 0.0, 0.25, 0.0];
    let all = parse(&two).unwrap();
    assert_eq!(all.trees.len(), 2);
    assert_eq!(all.score(&row), 10.25);
    assert!(all.note.is_none());
    let stopped = parse(&two.replace(
        "\"attributes\":{}",
        "\"attributes\":{\"best_iteration\":\"0\",\"best_score\":\"0.7\"}",
    ))
    .unwrap();
    assert_eq!(stopped.trees.len(), 1);
    assert_eq!(stopped.score(&row), 0.25);
    assert!(stopped
        .note
        .as_deref()
        .unwrap()
        .contains("best_iteration 0"));
    // Its last iteration as the best: every tree, nothing to say.
    let last = parse(&two.replace(
        "\"attributes\":{}",
        "\"attributes\":{\"best_iteration\":\"1\"}",
    ))
    .unwrap();
    assert_eq!(last.trees.len(), 2);
    assert!(last.note.is_none());
}

#[test]
fn columns_are_matched_to_features_or_refused() {
    let forest = parse(&lightgbm("2 0", "1 -1", "-2 -3", "")).unwrap();
    let name = Path::new("model.txt");
    // Three columns on data of three features: column 0 is feature 1.
    assert_eq!(
        forest
            .feature_offset(Columns::Auto, 3, name, "--teacher-columns")
            .unwrap(),
        1
    );
    // On data of two features, one column fewer: column 0 would be LightGBM's own reader's
    // empty feature 0, but the model splits on it, so column 0 is feature 1.
    assert_eq!(
        forest
            .feature_offset(Columns::Auto, 2, name, "--teacher-columns")
            .unwrap(),
        1
    );
    // Given explicitly, a mapping the splits contradict is refused: under from-0 the split on
    // column 0 is one on feature 0, which no LETOR file has.
    let e = forest
        .feature_offset(Columns::From0, 3, name, "--teacher-columns")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("column 0") && e.contains("from-0") && e.contains("from-1"),
        "{e}"
    );
    // A model that leaves column 0 alone is read from 0 when one column wider than the data.
    let from_zero = parse(
        &lightgbm("2 0", "1 -1", "-2 -3", "").replace("split_feature=0 1", "split_feature=2 1"),
    )
    .unwrap();
    assert_eq!(
        from_zero
            .feature_offset(Columns::Auto, 2, name, "--teacher-columns")
            .unwrap(),
        0
    );
    // A model that splits on a feature the data lack.
    let e = forest
        .feature_offset(Columns::From1, 1, name, "--teacher-columns")
        .unwrap_err()
        .to_string();
    assert!(e.contains("feature 2") && e.contains("1 features"), "{e}");
    // Narrower than the data and splitting on column 0: column 0 cannot be the empty feature 0.
    assert_eq!(
        forest
            .feature_offset(Columns::Auto, 9, name, "--teacher-columns")
            .unwrap(),
        1
    );
    // Narrower, not splitting on column 0: say which.
    let narrow = parse(
        &lightgbm("2 0", "1 -1", "-2 -3", "").replace("split_feature=0 1", "split_feature=2 1"),
    )
    .unwrap();
    let e = narrow
        .feature_offset(Columns::Auto, 9, name, "--teacher-columns")
        .unwrap_err()
        .to_string();
    assert!(e.contains("from-1") && e.contains("from-0"), "{e}");
}

/// LETOR files of `queries` queries of 12 documents over 6 features (feature 6 close to the
/// grade: the privileged one), and the paths.
fn letor_files(dir: &Path) -> [PathBuf; 3] {
    let mut paths = Vec::new();
    for (split, queries, first) in [("train", 40, 1), ("vali", 12, 100), ("test", 12, 200)] {
        let mut text = String::new();
        for q in first..first + queries {
            for d in 0..12u64 {
                let grade = (q as u64 + d) % 3;
                let noise = ((q as u64 * 31 + d * 17) % 10) as f64 / 10.0;
                text.push_str(&format!(
                    "{grade} qid:{q} 1:{noise} 2:{} 3:{} 4:{} 5:0.5 6:{}\n",
                    (d % 4) as f64 / 4.0,
                    noise * grade as f64,
                    (q % 5) as f64,
                    grade as f64 + noise / 10.0
                ));
            }
        }
        let path = dir.join(format!("{split}.txt"));
        std::fs::write(&path, text).unwrap();
        paths.push(path);
    }
    paths.try_into().unwrap()
}

fn files_setup(files: &[PathBuf; 3], teacher: ExternalTeacher) -> Setup {
    let mut setup = common::engines::small_setup(DataSource::files(
        files[0].display().to_string(),
        Some(files[1].display().to_string()),
        Some(files[2].display().to_string()),
    ));
    setup.data.privileged = Some("cols:6".into());
    setup.data.teacher = teacher;
    setup
}

use common::engines::prepare;

/// A model on the six features: column 5 (feature 6, the privileged one) at 1.5, then column 0.
fn teacher_model(dir: &Path) -> PathBuf {
    let text = lightgbm("2 0", "1 -1", "-2 -3", "")
        .replace("max_feature_idx=2", "max_feature_idx=5")
        .replace("split_feature=0 1", "split_feature=5 0");
    let path = dir.join("teacher.txt");
    std::fs::write(&path, text).unwrap();
    path
}

/// The small LETOR files in `dir` with [`teacher_model`] as the teacher trained elsewhere.
fn model_teacher_setup(dir: &Path) -> Setup {
    let files = letor_files(dir);
    let model = teacher_model(dir);
    files_setup(
        &files,
        ExternalTeacher {
            model: Some(model.display().to_string()),
            ..ExternalTeacher::default()
        },
    )
}

#[test]
fn an_external_teacher_scores_every_split_and_says_what_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let setup = model_teacher_setup(dir.path());
    let data = prepare(&setup).unwrap();
    let teacher = data.teacher.as_ref().expect("the teacher's scores");
    let p = &data.prepared;
    assert_eq!(teacher.train.len(), p.train.n_docs());
    assert_eq!(teacher.valid.len(), p.valid.n_docs());
    assert_eq!(
        teacher.test.as_ref().unwrap().len(),
        p.test.as_ref().unwrap().n_docs()
    );
    assert_eq!(teacher.reads, Some(TeacherInputs::Both));
    assert_eq!(teacher.split_features, Some(vec![1, 6]));
    assert_eq!(teacher.privileged_features, vec![6]);
    // Every score is one of the tree's leaves.
    assert!(teacher
        .train
        .iter()
        .all(|&s| [0.1f32, 0.2, 0.3].contains(&s)));
    // Self-distillation's teacher reads x only: this one does not fit it.
    let mut wrong = setup.clone();
    wrong.methods = vec![Method::SelfDistillation];
    let e = pipeline::run::compare_config(&data, &wrong, &Engine::Cpu, &Stop::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("self-distillation") && e.contains("x and z"),
        "{e}"
    );
    // A path that did not take the teacher's scores from the prepared data refuses to run the
    // comparison with teachers of its own.
    let mut without = data.clone();
    without.teacher = None;
    let e = pipeline::run::compare_config(&without, &setup, &Engine::Cpu, &Stop::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("did not reach the comparison"), "{e}");
}

#[test]
fn the_student_of_an_external_teacher_never_reads_z() {
    let dir = tempfile::tempdir().unwrap();
    let setup = model_teacher_setup(dir.path());
    let data = prepare(&setup).unwrap();
    let (student, run) = distillrank::native::pipeline::fit(
        &data,
        &setup,
        Method::Pfd,
        0,
        &Engine::Cpu,
        &Stop::default(),
        &mut Silent,
    )
    .unwrap();
    assert_eq!(run.teachers.len(), 1, "the external teacher's figures");
    let test = data.prepared.test.clone().unwrap();
    let score = |set| {
        distillrank::native::block_on(
            Engine::Cpu.score_ensemble(&student, Inputs::of(set, FeatureView::Regular)),
        )
        .unwrap()
    };
    let before = score(&test);
    // z permuted across the documents (a rotation by one row): the student's scores stay.
    let mut permuted = test.clone();
    let z: Vec<f32> = permuted.privileged.to_vec();
    let d_z = permuted.d_z;
    let rotated: Vec<f32> = z[d_z..].iter().chain(&z[..d_z]).copied().collect();
    assert_ne!(rotated, z);
    permuted.privileged = rotated.into();
    assert_eq!(score(&permuted), before);
}

/// The teacher temperature divides the teacher's logits before they become soft labels: a PFD
/// student distilled at temperature 2 is, weight for weight, the student of the same teacher's
/// logits halved at temperature 1; and another temperature trains another student.
#[test]
fn a_teacher_temperature_divides_the_teachers_logits() {
    let dir = tempfile::tempdir().unwrap();
    let setup = model_teacher_setup(dir.path());
    let data = prepare(&setup).unwrap();
    let student = |data: &distillrank::pipeline::preparation::PreparedData, t: f64| {
        let setup = Setup {
            teacher_temperature: t,
            ..setup.clone()
        };
        distillrank::native::pipeline::fit(
            data,
            &setup,
            Method::Pfd,
            0,
            &Engine::Cpu,
            &Stop::default(),
            &mut Silent,
        )
        .unwrap()
        .0
    };
    let mut halved = data.clone();
    let mut scores = (**data.teacher.as_ref().unwrap()).clone();
    scores.train.iter_mut().for_each(|s| *s /= 2.0);
    halved.teacher = Some(std::sync::Arc::new(scores));
    let at_two = student(&data, 2.0);
    assert_eq!(at_two, student(&halved, 1.0));
    assert_ne!(at_two, student(&data, 1.0));
    // Out of range: refused by name, before anything trains.
    for t in [0.0, -1.0, f64::NAN, 1e7] {
        let setup = Setup {
            teacher_temperature: t,
            ..setup.clone()
        };
        let e = pipeline::run::compare_config(&data, &setup, &Engine::Cpu, &Stop::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("teacher temperature") || e.contains("teacher_temperature"),
            "{t}: {e}"
        );
    }
}

#[test]
fn scores_files_are_checked_line_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let files = letor_files(dir.path());
    let lines = |n: usize, bad: Option<&str>| {
        let mut text: String = (0..n).map(|i| format!("{}\n", i as f64 / 10.0)).collect();
        if let Some(bad) = bad {
            text.push_str(bad);
            text.push('\n');
        }
        text
    };
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (train, valid, test) = (40 * 12, 12 * 12, 12 * 12);
    let good = [
        write("train.scores", lines(train, None)),
        write("valid.scores", lines(valid, None)),
        write("test.scores", lines(test, None)),
    ];
    let with = |scores: String| {
        files_setup(
            &files,
            ExternalTeacher {
                scores: Some(scores),
                ..ExternalTeacher::default()
            },
        )
    };
    let data = prepare(&with(good.join(","))).unwrap();
    let teacher = data.teacher.unwrap();
    assert_eq!(teacher.reads, None);
    assert_eq!(teacher.train.len(), data.prepared.train.n_docs());
    // One line too few, a word, a NaN, a file too few for the splits.
    let short = write("short.scores", lines(train - 1, None));
    let e = prepare(&with(format!("{short},{},{}", good[1], good[2])))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("short.scores")
            && e.contains(&format!("{} scores", train - 1))
            && e.contains(&format!("{train} documents")),
        "{e}"
    );
    let word = write("word.scores", lines(train - 1, Some("high")));
    let e = prepare(&with(format!("{word},{},{}", good[1], good[2])))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("word.scores:{train}")) && e.contains("'high' is not a number"),
        "{e}"
    );
    // An empty line among the scores would pair every later score with the document before
    // its own: refused by its line. Empty lines at the end are the end of the file.
    let gap = write("gap.scores", lines(train, None).replacen('\n', "\n\n", 2));
    let e = prepare(&with(format!("{gap},{},{}", good[1], good[2])))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("gap.scores:2") && e.contains("an empty line before more scores"),
        "{e}"
    );
    let trailing = write("trailing.scores", lines(train, None) + "\n\n");
    assert!(prepare(&with(format!("{trailing},{},{}", good[1], good[2]))).is_ok());
    // Gzip, as `predict --run run.txt.gz` writes a run: the same scores.
    let packed = dir.path().join("train.scores.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&packed).unwrap(),
        flate2::Compression::default(),
    );
    std::io::Write::write_all(&mut gz, lines(train, None).as_bytes()).unwrap();
    gz.finish().unwrap();
    let unpacked = prepare(&with(good.join(",")))
        .unwrap()
        .teacher
        .unwrap()
        .train
        .clone();
    let from_gzip = prepare(&with(format!(
        "{},{},{}",
        packed.display(),
        good[1],
        good[2]
    )))
    .unwrap()
    .teacher
    .unwrap()
    .train
    .clone();
    assert_eq!(from_gzip, unpacked);
    // A byte-order mark before the first score is not part of it.
    let bom = write("bom.scores", format!("\u{feff}{}", lines(train, None)));
    let data = prepare(&with(format!("{bom},{},{}", good[1], good[2]))).unwrap();
    assert_eq!(data.teacher.unwrap().train.len(), train);
    let nan = write("nan.scores", lines(train - 1, Some("NaN")));
    let e = prepare(&with(format!("{nan},{},{}", good[1], good[2])))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nan.scores") && e.contains("not finite"), "{e}");
    let e = prepare(&with(good[0].clone())).unwrap_err().to_string();
    assert!(
        e.contains("names no scores of the validation file") && e.contains("TRAIN,VALID,TEST"),
        "{e}"
    );
    // An empty part names no file (not the file ""), and a fourth file is not ignored.
    let e = prepare(&with(format!(",{},{}", good[1], good[2])))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("names no scores of the training file") && !e.contains("os error"),
        "{e}"
    );
    let e = prepare(&with(format!("{},{}", good.join(","), good[2])))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("4 comma-separated parts") && e.contains("at most 3"),
        "{e}"
    );
    // A model and scores at once.
    let mut both = with(good.join(","));
    both.data.teacher.model = Some("m.txt".into());
    let e = prepare(&both).unwrap_err().to_string();
    assert!(e.contains("name one"), "{e}");
}

/// The external teacher's scores are guidance like a trained teacher's: the WGSL engine trains
/// the same student from them as the CPU engine (within the engines' float tolerance), and the
/// teacher's own figures, computed from its scores, are the same bits.
#[test]
fn an_external_teacher_trains_the_same_student_on_both_engines() {
    let dir = tempfile::tempdir().unwrap();
    let setup = model_teacher_setup(dir.path());
    let data = prepare(&setup).unwrap();
    let Some((cpu, on_gpu)) = common::engines::fit_on_both(&data, &setup, Method::Pfd) else {
        return;
    };
    assert_eq!(cpu.teachers[0].test.ndcg, on_gpu.teachers[0].test.ndcg);
    assert_eq!(cpu.student.history.len(), on_gpu.student.history.len());
    for (c, g) in cpu.student.history.iter().zip(&on_gpu.student.history) {
        assert!(
            (c.data_loss - g.data_loss).abs() < 1e-3
                && (c.teacher_loss - g.teacher_loss).abs() < 1e-3,
            "epoch {}: {c:?} vs {g:?}",
            c.epoch
        );
        assert!(
            c.teacher_loss > 0.0,
            "the teacher loss is trained on: {c:?}"
        );
    }
}

/// A TREC run names each document by its query and its docid comment, or by `docN`, its place in
/// the query (as `predict --run` writes): in any order; a document it lacks, or one it names that
/// the file lacks, is refused by name.
#[test]
fn teacher_scores_from_trec_runs() {
    let dir = tempfile::tempdir().unwrap();
    let files = letor_files(dir.path());
    // The test file's documents get docid comments; the others are named by place.
    let test_text = std::fs::read_to_string(&files[2]).unwrap();
    let with_ids: String = test_text
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{l} #docid = D{i} inc = 1\n"))
        .collect();
    std::fs::write(&files[2], with_ids).unwrap();
    let run = |file: &Path, name: &str, by_id: bool, drop: usize, extra: Option<&str>| {
        let text = std::fs::read_to_string(file).unwrap();
        let mut lines = Vec::new();
        let (mut last, mut place) = (String::new(), 0);
        for (i, l) in text.lines().enumerate() {
            let qid = l
                .split_whitespace()
                .nth(1)
                .unwrap()
                .trim_start_matches("qid:")
                .to_string();
            place = if qid == last { place + 1 } else { 0 };
            last = qid.clone();
            let doc = if by_id {
                format!("D{i}")
            } else {
                format!("doc{place}")
            };
            lines.push(format!("{qid} Q0 {doc} 1 {} run", i as f64 / 100.0));
        }
        lines.reverse();
        lines.truncate(lines.len() - drop);
        lines.extend(extra.map(str::to_string));
        let path = dir.path().join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path.display().to_string()
    };
    let train = run(&files[0], "train.run", false, 0, None);
    let valid = run(&files[1], "valid.run", false, 0, None);
    let test = run(&files[2], "test.run", true, 0, None);
    let with = |scores: String| {
        files_setup(
            &files,
            ExternalTeacher {
                scores: Some(scores),
                ..ExternalTeacher::default()
            },
        )
    };
    let data = prepare(&with(format!("{train},{valid},{test}"))).unwrap();
    let teacher = data.teacher.unwrap();
    // Each document got its own line's score, whatever the run's order: the scores rise with
    // the file's lines, so within every query they rise with the documents.
    let p = data.prepared.test.as_ref().unwrap();
    let scores = teacher.test.as_ref().unwrap();
    for g in 0..p.n_groups() {
        assert!(
            scores[p.group(g)].windows(2).all(|w| w[0] < w[1]),
            "query {g}: {:?}",
            &scores[p.group(g)]
        );
    }
    let short = run(&files[2], "short.run", true, 1, None);
    let e = prepare(&with(format!("{train},{valid},{short}")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("short.run") && e.contains("no score for query") && e.contains("D0"),
        "{e}"
    );
    let stranger = run(
        &files[2],
        "stranger.run",
        true,
        0,
        Some("200 Q0 nobody 1 0.5 run"),
    );
    let e = prepare(&with(format!("{train},{valid},{stranger}")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("stranger.run") && e.contains("document nobody is not a document of"),
        "{e}"
    );
}

/// A model on x alone (features 1 and 2 of [`letor_files`]; feature 6 is z): what a team
/// serves today.
fn reference_model(dir: &Path) -> PathBuf {
    let text = lightgbm("2 0", "1 -1", "-2 -3", "")
        .replace("max_feature_idx=2", "max_feature_idx=5")
        .replace("split_feature=0 1", "split_feature=1 0");
    let path = dir.join("reference.txt");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_reference_model_is_a_row_with_a_paired_test_of_every_method_against_it() {
    use distillrank::pipeline::report;
    let dir = tempfile::tempdir().unwrap();
    let files = letor_files(dir.path());
    let mut setup = files_setup(&files, ExternalTeacher::default());
    setup.methods = vec![Method::NoDistillation, Method::Pfd];
    setup.data.reference = ExternalTeacher {
        model: Some(reference_model(dir.path()).display().to_string()),
        ..ExternalTeacher::reference_default()
    };
    let (data, comparison) = common::engines::compare_on_cpu(&setup);
    let reference = data.reference.as_deref().expect("the reference's scores");
    let p = &data.prepared;
    // Measured, not learned from: no training scores; the validation and test splits'.
    assert!(reference.train.is_empty());
    assert_eq!(reference.valid.len(), p.valid.n_docs());
    let test = p.test.as_ref().unwrap();
    let scores = reference.test.as_ref().unwrap();
    assert_eq!(scores.len(), test.n_docs());
    assert_eq!(reference.reads, Some(TeacherInputs::Regular));
    assert_eq!(reference.label(), "LightGBM on x alone");
    // Its per-query NDCG@8 is the metrics' own on its scores.
    let run = report::reference_run(&data, &setup).unwrap();
    assert_eq!(
        run.per_query,
        distillrank::metrics::ndcg_per_group(8, scores, &test.labels, &test.group_offsets)
    );
    // A paired test of each method against it, on y and on the grades, with every seed paired
    // with the same scores.
    let tests = report::tests(&data, &setup, &comparison);
    for method in &setup.methods {
        for metric in ["ndcg@8", "graded_ndcg@8"] {
            let t = tests
                .iter()
                .find(|t| t.a == method.name() && t.b == report::REFERENCE && t.metric == metric)
                .unwrap_or_else(|| panic!("{method} against the reference on {metric}"));
            assert_eq!(t.n_seeds, setup.seeds);
            let ours = comparison.per_query(*method, metric != "ndcg@8");
            let theirs = if metric == "ndcg@8" {
                &run.per_query
            } else {
                &run.per_query_graded
            };
            let pairs: Vec<f64> = (0..theirs.len())
                .filter_map(|q| {
                    let mine: Option<Vec<f64>> = ours.iter().map(|s| s[q]).collect();
                    Some(mine?.iter().sum::<f64>() / ours.len() as f64 - theirs[q]?)
                })
                .collect();
            let mean = pairs.iter().sum::<f64>() / pairs.len() as f64;
            assert!((t.mean_diff.unwrap() - mean).abs() < 1e-12, "{metric}");
            assert!(t.p_holm.is_some());
        }
    }
    // The verdicts name it by what it is, and results.json holds its row.
    let verdicts = report::verdicts(&tests, comparison.verdict_metric(), Some(reference));
    assert!(
        verdicts.iter().any(|v| v["b"] == report::REFERENCE
            && v["text"].as_str().unwrap().contains("PFD")
            && v["text"].as_str().unwrap().contains("LightGBM on x alone")),
        "{verdicts:?}"
    );
    let results = report::results_json(&data, &setup, &comparison);
    assert_eq!(results["reference"]["label"], "LightGBM on x alone");
    assert!(results["reference"]["run"]["test"]["ndcg"].is_array());
    // A reference that reads z is still measured, and the report says it reads more than x.
    let mut reads_z = setup.clone();
    reads_z.data.reference.model = Some(teacher_model(dir.path()).display().to_string());
    let data = prepare(&reads_z).unwrap();
    assert_eq!(
        data.reference.as_deref().unwrap().label(),
        "LightGBM on x and z"
    );
    // A model and scores both named, and a missing file, are refused by name.
    let mut both = setup.clone();
    both.data.reference.scores = Some("a,b,c".into());
    let e = prepare(&both).unwrap_err().to_string();
    assert!(
        e.contains("--reference-model") && e.contains("--reference-scores"),
        "{e}"
    );
    let mut missing = setup.clone();
    missing.data.reference.model = Some(dir.path().join("gone.txt").display().to_string());
    let e = prepare(&missing).unwrap_err().to_string();
    assert!(e.contains("gone.txt"), "{e}");
}

/// Class: absent versus zero. A LETOR file leaves zeros out. An absent entry is, by default,
/// what the model's library's own readers make of it (XGBoost: missing; LightGBM: 0), in every
/// door; `absent zero` reads it as a model trained on dense arrays saw its zeros, `absent
/// missing` as NaN. Where a split sends a missing value and a zero different ways and nothing was
/// said, every door says which reading it took.
#[test]
fn class_absent_entries_are_read_as_the_model_expects_and_named_where_it_matters() {
    use distillrank::forest::Absent;
    // Column 2 split at -0.5, missing to the left: a zero goes right (0 >= -0.5).
    let text = xgboost("rank:ndcg", "5E-1", "[1,-1,-1]")
        .replace("\"split_conditions\":[0.5,", "\"split_conditions\":[-0.5,");
    let forest = parse(&text).unwrap();
    assert_eq!(forest.missing_differs_from_zero(), (1, 1));
    let name = Path::new("data.txt");
    // Under from-1 column 2 is feature 3: left out of this line.
    let line = "1 qid:1 1:0.3\n";
    let score = |absent| {
        forest
            .score_letor(name, line.as_bytes(), 1, absent)
            .unwrap()
            .scores[0]
    };
    assert!(forest.absent_value(Absent::Auto).is_nan());
    assert_eq!(
        score(Absent::Auto),
        0.5 - 0.25,
        "auto: XGBoost's missing, which goes left"
    );
    assert_eq!(score(Absent::Missing), score(Absent::Auto));
    assert_eq!(
        score(Absent::Zero),
        0.5 + 0.75,
        "zero: a value, which goes right"
    );
    // As arrays (Python's door): NaN is missing, 0 is a value; each reading of the file matches
    // one of them.
    assert_eq!(
        forest.score(&[0.3, 0.0, f64::NAN, 0.0]),
        score(Absent::Missing)
    );
    assert_eq!(forest.score(&[0.3, 0.0, 0.0, 0.0]), score(Absent::Zero));
    // The line leaves column 2 out: one document whose score depends on the reading.
    let scored = forest
        .score_letor(name, line.as_bytes(), 1, Absent::Auto)
        .unwrap();
    assert_eq!(scored.left_out, 1);
    let note = forest.absent_note(Absent::Auto, scored.left_out).unwrap();
    assert!(
        note.contains("read as missing")
            && note.contains("1 document(s) leave out")
            && note.contains("its 1 such splits (of 1)")
            && note.contains("absent zero"),
        "{note}"
    );
    // A file that writes the column on every line (a dense file, its zeros written) scores
    // alike under both readings: nothing to say.
    let dense = "1 qid:1 1:0.3 2:0 3:0\n0 qid:1 1:0.1 2:0.5 3:0\n";
    let scored = forest
        .score_letor(name, dense.as_bytes(), 1, Absent::Auto)
        .unwrap();
    assert_eq!(scored.left_out, 0);
    assert!(forest.absent_note(Absent::Auto, scored.left_out).is_none());
    // Leaving out a column no such split reads does not count either.
    let other = "1 qid:1 3:0\n";
    let scored = forest
        .score_letor(name, other.as_bytes(), 1, Absent::Auto)
        .unwrap();
    assert_eq!(scored.left_out, 0);
    // Said explicitly, or where a zero and a missing value take one branch: nothing to say.
    assert!(forest.absent_note(Absent::Zero, 1).is_none());
    let same = parse(&xgboost("rank:ndcg", "5E-1", "[1,-1,-1]")).unwrap();
    assert_eq!(same.missing_differs_from_zero(), (0, 1));
    assert!(same.absent_note(Absent::Auto, 1).is_none());
    // LightGBM reads an absent entry as 0 by default, NaN when told.
    let lgb = parse(&lightgbm("2 0", "1 -1", "-2 -3", "")).unwrap();
    assert_eq!(lgb.absent_value(Absent::Auto), 0.0);
    assert!(lgb.absent_value(Absent::Missing).is_nan());
    // eval: warned by default, each reading scored as asked.
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.json");
    std::fs::write(&model, &text).unwrap();
    let data = dir.path().join("d.txt");
    std::fs::write(&data, "1 qid:1 1:0.3 3:1\n0 qid:1 1:0.1\n").unwrap();
    let run = |absent: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_distillrank"))
            .args([
                "predict",
                "--model",
                model.to_str().unwrap(),
                data.to_str().unwrap(),
                "--columns",
                "from-1",
                "--absent",
                absent,
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(out.status.success(), "{stderr}");
        (String::from_utf8_lossy(&out.stdout).to_string(), stderr)
    };
    let (auto, warned) = run("auto");
    assert!(
        warned.contains("read as missing") && warned.contains("--absent"),
        "{warned}"
    );
    let (zero, quiet) = run("zero");
    assert!(!quiet.contains("read as"), "{quiet}");
    // The same model on a file that writes column 2 (feature 3) on every line: no warning.
    let written = dir.path().join("written.txt");
    std::fs::write(&written, "1 qid:1 1:0.3 3:1\n0 qid:1 1:0.1 3:0\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_distillrank"))
        .args([
            "predict",
            "--model",
            model.to_str().unwrap(),
            written.to_str().unwrap(),
        ])
        .args(["--columns", "from-1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("read as"),
        "{stderr}"
    );
    let first = |text: &str| text.lines().nth(1).unwrap().parse::<f64>().unwrap();
    assert_eq!(first(&auto), 0.25);
    assert_eq!(first(&zero), 1.25);
}

/// Where the width cannot tell the column mapping, the message asks for it by the setting of the
/// door that reads the model: `--teacher-columns`, `--reference-columns`, or `eval`'s and
/// `predict`'s `--columns` (which take no `--teacher-columns`).
#[test]
fn an_undecidable_column_mapping_is_asked_for_by_the_callers_setting() {
    let text =
        lightgbm("2 0", "1 -1", "-2 -3", "").replace("split_feature=0 1", "split_feature=1 2");
    let forest = parse(&text).unwrap();
    for setting in ["--teacher-columns", "--reference-columns", "--columns"] {
        let message = forest
            .feature_offset(Columns::Auto, 10, Path::new("m.txt"), setting)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains(&format!("say which with {setting} from-1 or from-0")),
            "{message}"
        );
        if setting == "--columns" {
            assert!(!message.contains("teacher"), "{message}");
        }
    }
}

/// A model wider than the data, splitting past them under either column mapping, is refused as
/// another dataset's: asking for a mapping, which neither would satisfy, is no remedy.
#[test]
fn a_model_past_the_data_under_either_mapping_is_refused_as_another_datasets() {
    // Splits on columns 0 and 1; the data have one feature.
    let forest = parse(&lightgbm("2 0", "1 -1", "-2 -3", "")).unwrap();
    let message = forest
        .feature_offset(Columns::Auto, 1, Path::new("m.txt"), "--columns")
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("past the data's 1 features under either column mapping")
            && !message.contains("say which"),
        "{message}"
    );
    // Where both mappings would fit (six columns, splits on 1 and 2, three features), the
    // mapping is asked for.
    let wide = lightgbm("2 0", "1 -1", "-2 -3", "")
        .replace("split_feature=0 1", "split_feature=1 2")
        .replace("max_feature_idx=2", "max_feature_idx=5");
    let message = parse(&wide)
        .unwrap()
        .feature_offset(Columns::Auto, 3, Path::new("m.txt"), "--columns")
        .unwrap_err()
        .to_string();
    assert!(message.contains("say which with --columns"), "{message}");
    // Where one mapping fits and the other does not, the one that fits is taken: a split on
    // column 0 (feature 0 under from-0, which no file has) is from-1; a split on column 3 of
    // three features (feature 4 under from-1) is from-0.
    for (splits, offset) in [("0 2", 1), ("1 3", 0)] {
        let model = wide.replace("split_feature=1 2", &format!("split_feature={splits}"));
        let found = parse(&model).unwrap().feature_offset(
            Columns::Auto,
            3,
            Path::new("m.txt"),
            "--columns",
        );
        assert_eq!(found.unwrap(), offset, "splits on {splits}");
        // And said, with the setting that gives it; a mapping given, or one the widths decide,
        // is not.
        let forest = parse(&model).unwrap();
        let note = forest
            .columns_note(Columns::Auto, 3, offset, "--columns")
            .unwrap_or_default();
        let read = if offset == 1 {
            "read from-1"
        } else {
            "read from-0"
        };
        assert!(
            note.contains("6 input columns and the data 3 features")
                && note.contains(read)
                && note.contains("give --columns from-1 or from-0 to choose"),
            "{note}"
        );
        assert_eq!(forest.columns_note(Columns::From1, 3, 1, "--columns"), None);
        assert_eq!(forest.columns_note(Columns::Auto, 6, 1, "--columns"), None);
        assert_eq!(forest.columns_note(Columns::Auto, 5, 0, "--columns"), None);
        // One column more than the data, read from-1 for a split on column 0: said too.
        assert!(forest
            .columns_note(Columns::Auto, 5, 1, "--columns")
            .is_some_and(|n| n.contains("read from-1")));
    }
}

/// A teacher whose tree has a 1e308 leaf gives scores no soft label can carry: it is refused as
/// the score it is, naming the file and the document, not reported later as a training that
/// diverged ("try a smaller --lr").
#[test]
fn a_teacher_with_an_out_of_range_leaf_is_refused_as_a_score() {
    let dir = tempfile::tempdir().unwrap();
    let setup = model_teacher_setup(dir.path());
    let model = setup.data.teacher.model.clone().unwrap();
    let text = std::fs::read_to_string(&model).unwrap();
    std::fs::write(&model, text.replace("leaf_value=0.1 ", "leaf_value=1e308 ")).unwrap();
    let Err(message) = prepare(&setup).map(drop) else {
        panic!("a teacher scoring 1e308 was taken")
    };
    let message = message.to_string();
    assert!(
        message.contains("the teacher's score of document")
            && message.contains("1e308")
            && message.contains("expected a score within")
            && !message.contains("diverged"),
        "{message}"
    );
}

/// A measurement that is NaN (a teacher given as scores has no scoring time) goes through JSON
/// as null and comes back as NaN: the page's workers hand runs to the engine as JSON, and a
/// teacher from score files used to stop the page's Run at "invalid type: unit value, expected
/// f64".
#[test]
fn a_nan_measurement_round_trips_through_json() {
    #[derive(serde::Serialize, serde::Deserialize)]
    struct Run {
        #[serde(with = "distillrank::ranking::experiment::nan_as_null")]
        ms: f64,
    }
    let text = serde_json::to_string(&Run { ms: f64::NAN }).unwrap();
    assert_eq!(text, r#"{"ms":null}"#);
    assert!(serde_json::from_str::<Run>(&text).unwrap().ms.is_nan());
    let back: Run = serde_json::from_str(r#"{"ms":2.5}"#).unwrap();
    assert_eq!(back.ms, 2.5);
}

/// The teacher's door says how absent entries were read only where the file leaves out an
/// entry that a split reads both ways: a dense file scores alike under both readings.
#[test]
fn a_teacher_warns_of_the_absent_reading_only_where_a_file_leaves_an_entry_out() {
    let dir = tempfile::tempdir().unwrap();
    let files = letor_files(dir.path());
    // XGBoost, column 2 (feature 3 from 1) split at -0.5 with missing to the left: a zero goes
    // right.
    let model = dir.path().join("xgb.json");
    let text = xgboost("rank:ndcg", "5E-1", "[1,-1,-1]")
        .replace("\"split_conditions\":[0.5,", "\"split_conditions\":[-0.5,");
    std::fs::write(&model, text).unwrap();
    let warnings = |files: &[PathBuf; 3]| {
        let mut setup = files_setup(
            files,
            ExternalTeacher {
                model: Some(model.display().to_string()),
                columns: Columns::From1,
                ..ExternalTeacher::default()
            },
        );
        setup.data.privileged = Some("cols:6".into());
        warnings_of(&setup)
    };
    // Every line writes feature 3 (0 where the grade is 0).
    let dense = warnings(&files);
    assert!(!dense.iter().any(|w| w.contains("read as")), "{dense:?}");
    // Written sparse, as LETOR files leave zeros out: the rows without it are counted.
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        std::fs::write(file, text.replace(" 3:0 ", " ")).unwrap();
    }
    let sparse = warnings(&files);
    let note = sparse
        .iter()
        .find(|w| w.contains("read as missing"))
        .unwrap_or_else(|| panic!("no note in {sparse:?}"));
    assert!(
        note.contains("document(s) leave out") && note.contains("(--teacher-absent)"),
        "{note}"
    );
}

/// Collects a preparation's warnings.
struct Warnings(Vec<String>);

impl pipeline::Reporter for Warnings {
    fn warn(&mut self, text: &str) {
        self.0.push(text.to_string());
    }
}

/// The warnings of preparing `setup`'s data (which must prepare).
fn warnings_of(setup: &distillrank::setup::Setup) -> Vec<String> {
    let mut seen = Warnings(Vec::new());
    pipeline::preparation::prepare(
        &setup.data,
        &mut pipeline::store::Disk::default(),
        true,
        &mut seen,
    )
    .unwrap();
    seen.0
}

/// A teacher whose training scores are alike within every query ranks nothing: preparation
/// warns of it (Python's `teacher=np.zeros(n)` too), and not of scores that order the documents.
#[test]
fn a_teacher_that_ranks_nothing_is_warned_of() {
    let dir = tempfile::tempdir().unwrap();
    let files = letor_files(dir.path());
    let (train, valid, test) = (40 * 12, 12 * 12, 12 * 12);
    let write = |name: &str, n: usize, constant: bool| {
        let path = dir.path().join(name);
        let text: String = (0..n)
            .map(|i| format!("{}\n", if constant { 0.5 } else { i as f64 / 10.0 }))
            .collect();
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let warnings = |constant: bool| {
        let scores = [
            write("train.scores", train, constant),
            write("valid.scores", valid, false),
            write("test.scores", test, false),
        ];
        let setup = files_setup(
            &files,
            ExternalTeacher {
                scores: Some(scores.join(",")),
                ..ExternalTeacher::default()
            },
        );
        warnings_of(&setup)
    };
    let constant = warnings(true);
    assert!(
        constant
            .iter()
            .any(|w| w.contains("the same for every document of each query")
                && w.contains("training split")),
        "{constant:?}"
    );
    let ordered = warnings(false);
    assert!(
        !ordered.iter().any(|w| w.contains("ranks nothing")),
        "{ordered:?}"
    );
}

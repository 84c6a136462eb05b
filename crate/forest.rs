//! Tree ensembles trained elsewhere: LightGBM and XGBoost rankers, read from the files their
//! libraries write and scored as those libraries score them. They are the external teachers a
//! student learns from ([`crate::pipeline::teacher`]); `predict --model` and `eval --model`
//! score with them too, so that a teacher can be checked before it is distilled.
//!
//! * [`lightgbm`]: the text format of `Booster.save_model`, and the JSON of `dump_model()`;
//! * [`xgboost`]: the JSON of `Booster.save_model("m.json")` (UBJSON is refused with words).
//!
//! Both become one [`Forest`]: trees of [`Node`]s whose [`Rule`] is the writing library's own
//! decision, missing values and default directions included. A forest is checked whole when it is
//! read ([`Forest::check`]): every index in range, every tree a tree (no node reached twice, none
//! left out), so that scoring cannot loop or read out of bounds whatever the file held.
//!
//! Scores are computed on the CPU, in f64, from each document's features as its LETOR line
//! writes them ([`crate::data::letor::scan_letor`]): LightGBM compares f64 values with its f64
//! thresholds; XGBoost casts each value to f32 first, as its `DMatrix` does.

pub mod lightgbm;
pub mod xgboost;

use std::path::Path;

use crate::error::{Error, Result};

/// The library that wrote a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Library {
    LightGbm,
    XgBoost,
}

impl Library {
    pub fn name(self) -> &'static str {
        match self {
            Library::LightGbm => "LightGBM",
            Library::XgBoost => "XGBoost",
        }
    }
}

/// A model's input columns against a LETOR file's feature indices (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Columns {
    /// By the model's width against the data's: as many columns as the data have features is
    /// `from-1`; one more is `from-0` (unless a tree splits on column 0). Any other width takes
    /// the one mapping under which every column split on is a feature of the data; where both
    /// are, it is refused, asking for one of them.
    #[default]
    Auto,
    /// Column 0 is feature 1: a model trained on arrays (`load_svmlight_file`, pandas,
    /// distillrank's Python door). Named `from-1`, as every door and its help write it.
    #[serde(rename = "from-1")]
    From1,
    /// Column j is feature j, column 0 empty: a model trained by LightGBM's or XGBoost's own
    /// reader of LETOR text, which keeps index 0.
    #[serde(rename = "from-0")]
    From0,
}

/// What an entry a LETOR file leaves out is to a tree model: the value its training rows held
/// there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Absent {
    /// What the model's library's own LETOR reader makes of it: missing for XGBoost (as its
    /// DMatrix of a sparse matrix too), 0 for LightGBM.
    #[default]
    Auto,
    /// Missing (NaN): a model trained on sparse rows, or on rows with NaN where a file leaves an
    /// entry out.
    Missing,
    /// The value 0: a model trained on dense arrays, whose zeros were values.
    Zero,
}

/// Where a split sends a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Child {
    Node(u32),
    Leaf(u32),
}

/// LightGBM's missing-value handling of a numerical split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// NaN is read as 0; no default direction.
    None,
    /// 0 (and NaN, read as 0) takes the default direction.
    Zero,
    /// NaN takes the default direction.
    NaN,
}

/// How a node decides, as the library that wrote it decides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// LightGBM's numerical split: left when `value <= threshold`, missing values as `missing`
    /// says, to the left when `default_left`.
    LightGbm {
        threshold: f64,
        missing: Missing,
        default_left: bool,
    },
    /// LightGBM's categorical split: left when the value's category is in the bitset
    /// `words[start..end]` of the tree; NaN and negative values go right.
    LightGbmCategorical { start: u32, end: u32 },
    /// XGBoost's numerical split, in f32: left when `value < threshold`; NaN (a missing value)
    /// to the left when `default_left`.
    XgBoost { threshold: f32, default_left: bool },
}

/// A tree model's scores of a LETOR file ([`Forest::score_letor`]).
#[derive(Debug, Default)]
pub struct LetorScores {
    /// One score a document, in the file's order.
    pub scores: Vec<f64>,
    /// Each document's qid (None in a file whose groups come from a `.query` file).
    pub qids: Vec<Option<u64>>,
    /// The documents that leave out an entry at a column where some split sends a missing value
    /// and a zero different ways: those whose scores depend on how absent entries are read.
    pub left_out: usize,
}

/// An inner node: the column it reads, its rule and its children.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Node {
    pub column: u32,
    pub rule: Rule,
    pub left: Child,
    pub right: Child,
}

/// One tree. A tree of one leaf has no node.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub leaves: Vec<f64>,
    /// The bitsets of LightGBM's categorical splits.
    pub words: Vec<u32>,
    /// A factor on the tree's output (XGBoost's DART `weight_drop`; 1 otherwise).
    pub weight: f64,
}

/// A tree ensemble, checked ([`Forest::check`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Forest {
    pub library: Library,
    pub trees: Vec<Tree>,
    /// Added to the trees' sum: XGBoost's `base_score` as a margin under its objective; 0 for
    /// LightGBM, whose first tree holds its initial score.
    pub base_margin: f64,
    /// LightGBM's random-forest mode (`average_output`): the trees' mean, not their sum.
    pub average: bool,
    /// Columns of the model's input (LightGBM's `max_feature_idx + 1`, XGBoost's
    /// `num_feature`).
    pub n_columns: usize,
    /// The objective it was trained with, as the library names it.
    pub objective: String,
    /// What the objective makes of the scores, when it is not a ranking objective: said once,
    /// beside the figures.
    pub note: Option<String>,
    /// The names of the model's input columns where it was trained on named ones (a data
    /// frame's); None for the library's own (LightGBM's `Column_0`, ...) or none (XGBoost's
    /// empty list).
    pub feature_names: Option<Vec<String>>,
}

/// A model's column names as read, kept where they name the columns: one per column, and not
/// a library's defaults, which name none: LightGBM's `Column_0`, `Column_1`, ... (arrays, LETOR
/// text), or `0`, `1`, ... (a pandas frame's default labels, as both libraries write them).
pub fn named_columns(names: Vec<String>, n_columns: usize) -> Option<Vec<String>> {
    let defaults =
        |name: &dyn Fn(usize) -> String| names.iter().enumerate().all(|(i, n)| *n == name(i));
    let named = names.len() == n_columns
        && !defaults(&|i| format!("Column_{i}"))
        && !defaults(&|i| i.to_string());
    named.then_some(names)
}

/// The most trees and nodes a model file may declare: far past any ranker (LightGBM's default is
/// 100 trees of 31 leaves; a large Web30K model is a few thousand trees of 255), and small enough
/// that nothing a hostile file declares is ever allocated before its text is seen.
pub const MAX_TREES: usize = 1_000_000;
pub const MAX_NODES: usize = 1 << 24;
/// The most input columns a model may declare: sixteen times the widest LETOR file read
/// ([`crate::data::letor::DEFAULT_MAX_FEATURE_INDEX`]).
pub const MAX_COLUMNS: usize = 1 << 20;
/// The largest model file read: ten times a large Web30K ranker.
pub const MAX_FILE_BYTES: u64 = 2 << 30;
/// The most values (numbers, strings, lists, objects) a JSON model may hold: about 2.5 times a
/// 5,000-tree XGBoost model of depth 8, and a bound on the parsed tree's memory (some 40 bytes a
/// value) that is checked before anything is parsed.
pub const MAX_JSON_VALUES: usize = 1 << 26;
/// The deepest JSON accepted (serde_json's own limit): a LightGBM `dump_model()` nests one level
/// per node, so a degenerate tree deeper than this must come in the text format.
pub const MAX_JSON_DEPTH: usize = 128;

/// Whether the file at `path` looks like a model [`Forest::read`] reads (or refuses in words, as
/// UBJSON): LightGBM's text, LightGBM's dump, XGBoost's JSON or UBJSON. A saved MLP's files are
/// not.
pub fn looks_like_tree_model(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(1 << 16).read_to_end(&mut head).is_err() {
        return false;
    }
    starts_like_tree_model(&head)
}

/// Whether a file whose first bytes (64 KiB are plenty) are `head` looks like a model
/// [`Forest::parse`] reads or refuses in words ([`looks_like_tree_model`]).
pub fn starts_like_tree_model(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let head = &head[start..head.len().min(start + (1 << 16))];
    // Without whitespace, so that a pretty-printed dump (`json.dump(..., indent=2)`) is one too.
    let compact: Vec<u8> = head
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    let has = |needle: &[u8]| compact.windows(needle.len()).any(|w| w == needle);
    head.starts_with(b"tree\n")
        || head.starts_with(b"tree\r\n")
        || (head.first() == Some(&b'{')
            && (has(b"learner") || has(b"tree_info") || has(b"\"name\":\"tree\"")))
        // XGBoost's tree dump (`get_dump(dump_format="json")`), refused in words.
        || (head.first() == Some(&b'[') && has(b"\"nodeid\":"))
}

impl Forest {
    /// Reads a LightGBM text model, a LightGBM `dump_model()` JSON or an XGBoost JSON model, by
    /// its first bytes; refuses anything else (XGBoost's UBJSON included) naming what it takes.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn read(path: &Path) -> Result<Forest> {
        Forest::parse(
            path,
            &crate::data::read_capped(path, MAX_FILE_BYTES, "a tree model")?,
        )
    }

    /// [`Forest::read`] on bytes in memory (an upload, a `Booster`'s dump from Python).
    pub fn parse(name: &Path, bytes: &[u8]) -> Result<Forest> {
        let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let start = text
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(text.len());
        let head = &text[start..];
        let forest = if head.starts_with(b"tree") {
            lightgbm::parse_text(name, text)?
        } else if head.first() == Some(&b'[') && starts_like_tree_model(head) {
            return Err(model_error(name, "this is XGBoost's tree dump (get_dump or dump_model with dump_format=\"json\"), which leaves out the base score and the objective its scores start from: save the model itself as JSON, booster.save_model(\"model.json\"), and give that file"));
        } else if head.first() == Some(&b'{') {
            // UBJSON opens an object with '{' too, then a key's length marker.
            let next = head[1..].iter().find(|b| !b.is_ascii_whitespace());
            if matches!(next, Some(b'i' | b'U' | b'I' | b'l' | b'L' | b'$' | b'#')) {
                return Err(model_error(name, "this is UBJSON (XGBoost's binary model format): save the model as JSON, booster.save_model(\"model.json\"), and give that file"));
            }
            let text = std::str::from_utf8(head)
                .map_err(|_| model_error(name, "a JSON model that is not UTF-8 text"))?;
            // Every value but the first follows a ',' or opens a list or object: an upper bound
            // of the values the parse would allocate.
            let values = 1 + head
                .iter()
                .filter(|&&b| b == b',' || b == b'[' || b == b'{')
                .count();
            if values > MAX_JSON_VALUES {
                return Err(model_error(name, format!(
                    "a JSON model of up to {values} values, more than the {MAX_JSON_VALUES} read: expected a tree model (a LightGBM model this large can come in the text format, booster.save_model(\"model.txt\"))"
                )));
            }
            let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
                let depth = if e.to_string().contains("recursion limit") {
                    format!(" (nested deeper than {MAX_JSON_DEPTH} levels: a LightGBM tree that deep must come in the text format, booster.save_model(\"model.txt\"))")
                } else {
                    String::new()
                };
                Error::parse(name, e.line() as u64, e.column() as u64, format!("not a JSON model: {e}{depth}"))
            })?;
            if value.get("learner").is_some() {
                xgboost::parse_json(name, &value)?
            } else if value.get("tree_info").is_some() {
                lightgbm::parse_dump(name, &value)?
            } else if value.get("format").and_then(|f| f.as_str()) == Some("distillrank-model") {
                // A saved distillrank model's config (model_io's format), given where a tree
                // model is read (a teacher's, a reference's).
                return Err(model_error(name, "a saved distillrank model's config, not a tree model: give its scores of each split as score files instead (distillrank predict FILE --model PREFIX writes them)"));
            } else {
                return Err(model_error(name, "a JSON file that is neither an XGBoost model (no \"learner\") nor a LightGBM dump_model() (no \"tree_info\")"));
            }
        } else {
            return Err(model_error(name, "expected a tree model: LightGBM's text format (booster.save_model(\"model.txt\"), which starts with 'tree'), LightGBM's dump_model() JSON, or XGBoost's JSON (booster.save_model(\"model.json\"))"));
        };
        forest.check(name)?;
        Ok(forest)
    }

    /// Checks that every tree is a tree over the model's columns: each child index in range, each
    /// node and leaf reached from the root exactly once, every bitset inside its tree's words.
    pub fn check(&self, name: &Path) -> Result<()> {
        if self.trees.is_empty() {
            return Err(model_error(name, "a model without trees"));
        }
        if self.n_columns == 0 || self.n_columns > MAX_COLUMNS {
            return Err(model_error(
                name,
                format!(
                    "{} input columns: expected 1 to {MAX_COLUMNS}",
                    self.n_columns
                ),
            ));
        }
        if self.trees.len() > MAX_TREES {
            return Err(model_error(
                name,
                format!(
                    "{} trees, more than the {MAX_TREES} a model may have",
                    self.trees.len()
                ),
            ));
        }
        for (t, tree) in self.trees.iter().enumerate() {
            let bad = |what: String| model_error(name, format!("tree {t}: {what}"));
            if tree.nodes.len() > MAX_NODES || tree.leaves.len() > MAX_NODES + 1 {
                return Err(bad(format!("more than {MAX_NODES} nodes")));
            }
            if tree.leaves.len() != tree.nodes.len() + 1 {
                return Err(bad(format!(
                    "{} inner nodes and {} leaves: a binary tree has one leaf more than inner nodes",
                    tree.nodes.len(),
                    tree.leaves.len()
                )));
            }
            if let Some(v) = tree.leaves.iter().find(|v| !v.is_finite()) {
                return Err(bad(format!(
                    "a leaf value of {v}: expected a finite number"
                )));
            }
            if !tree.weight.is_finite() {
                return Err(bad(format!("a tree weight of {}", tree.weight)));
            }
            let (mut node_seen, mut leaf_seen) = (
                vec![false; tree.nodes.len()],
                vec![false; tree.leaves.len()],
            );
            let mut stack = Vec::new();
            if tree.nodes.is_empty() {
                leaf_seen[0] = true;
            } else {
                stack.push(0u32);
                node_seen[0] = true;
            }
            while let Some(n) = stack.pop() {
                let node = &tree.nodes[n as usize];
                if node.column as usize >= self.n_columns {
                    return Err(bad(format!(
                        "node {n} splits on column {}, but the model has {} columns",
                        node.column, self.n_columns
                    )));
                }
                match node.rule {
                    Rule::LightGbmCategorical { start, end }
                        if start > end || end as usize > tree.words.len() =>
                    {
                        return Err(bad(format!("node {n}: a category bitset out of range")));
                    }
                    Rule::LightGbm { threshold, .. } if threshold.is_nan() => {
                        return Err(bad(format!("node {n}: a NaN threshold")));
                    }
                    Rule::XgBoost { threshold, .. } if threshold.is_nan() => {
                        return Err(bad(format!("node {n}: a NaN threshold")));
                    }
                    _ => {}
                }
                for child in [node.left, node.right] {
                    let (seen, i, what) = match child {
                        Child::Node(i) => (node_seen.get_mut(i as usize), i, "node"),
                        Child::Leaf(i) => (leaf_seen.get_mut(i as usize), i, "leaf"),
                    };
                    match seen {
                        None => return Err(bad(format!("node {n} points to {what} {i}, which does not exist"))),
                        Some(true) => return Err(bad(format!("{what} {i} is reached twice (from node {n}): the nodes form a cycle or share a child, not a tree"))),
                        Some(s) => *s = true,
                    }
                    if let Child::Node(i) = child {
                        stack.push(i);
                    }
                }
            }
            if let Some(n) = node_seen.iter().position(|s| !s) {
                return Err(bad(format!(
                    "node {n} is not reached from the root: the nodes do not form one tree"
                )));
            }
            if let Some(l) = leaf_seen.iter().position(|s| !s) {
                return Err(bad(format!("leaf {l} is not reached from the root")));
            }
        }
        self.check_sum(name)
    }

    /// Refuses a model whose score of some document could overflow: the base margin plus each
    /// tree's largest |weight x leaf| must be finite in the precision the library sums in (f64
    /// for LightGBM, f32 for XGBoost), so that every score the model gives is a number.
    fn check_sum(&self, name: &Path) -> Result<()> {
        if !self.base_margin.is_finite() {
            return Err(model_error(
                name,
                format!(
                    "a base score whose margin is {}: expected a finite number",
                    self.base_margin
                ),
            ));
        }
        let mut bound = self.base_margin.abs();
        for tree in &self.trees {
            let largest = tree.leaves.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            bound += (tree.weight * largest).abs();
        }
        let finite = match self.library {
            Library::LightGbm => bound.is_finite(),
            Library::XgBoost => (bound as f32).is_finite(),
        };
        if !finite {
            return Err(model_error(name, format!(
                "leaf values so large that a document's score can overflow {} (the base score plus each tree's largest leaf reaches {bound:e}): expected the leaves of a trained model",
                match self.library {
                    Library::LightGbm => "f64",
                    Library::XgBoost => "f32, in which XGBoost sums its trees",
                }
            )));
        }
        Ok(())
    }

    /// How many columns a document's row needs: one past the last column a tree splits on (a
    /// column past the row's end reads as absent, as [`Forest::leaf`] says).
    fn row_width(&self) -> usize {
        self.split_columns().last().map_or(0, |&c| c + 1)
    }

    /// The model's score of one document, its columns in `row` (missing values NaN, absent
    /// columns past the row's end read as its library reads them: LightGBM 0, XGBoost missing).
    pub fn score(&self, row: &[f64]) -> f64 {
        if self.library == Library::XgBoost {
            // XGBoost adds each tree's output to an f32 prediction that starts at the base
            // margin, tree after tree.
            let mut sum = self.base_margin as f32;
            for tree in &self.trees {
                sum += (tree.weight * tree.leaves[self.leaf(tree, row)]) as f32;
            }
            return f64::from(sum);
        }
        let mut sum = 0.0;
        for tree in &self.trees {
            sum += tree.weight * tree.leaves[self.leaf(tree, row)];
        }
        if self.average {
            sum /= self.trees.len() as f64;
        }
        sum + self.base_margin
    }

    /// The leaf a document reaches in `tree`.
    fn leaf(&self, tree: &Tree, row: &[f64]) -> usize {
        if tree.nodes.is_empty() {
            return 0;
        }
        let mut at = 0usize;
        loop {
            let node = &tree.nodes[at];
            let value = row.get(node.column as usize).copied();
            let left = match node.rule {
                Rule::LightGbm {
                    threshold,
                    missing,
                    default_left,
                } => {
                    let mut v = value.unwrap_or(0.0);
                    if v.is_nan() && missing != Missing::NaN {
                        v = 0.0;
                    }
                    if (missing == Missing::Zero && is_zero(v))
                        || (missing == Missing::NaN && v.is_nan())
                    {
                        default_left
                    } else {
                        v <= threshold
                    }
                }
                Rule::LightGbmCategorical { start, end } => {
                    let v = value.unwrap_or(0.0);
                    // LightGBM casts to int (truncation); NaN and negatives go right.
                    if !(0.0..2_147_483_648.0).contains(&v) {
                        false
                    } else {
                        let c = v as u64;
                        let word = start as u64 + c / 32;
                        word < end as u64 && (tree.words[word as usize] >> (c % 32)) & 1 == 1
                    }
                }
                Rule::XgBoost {
                    threshold,
                    default_left,
                } => match value {
                    Some(v) if !v.is_nan() => (v as f32) < threshold,
                    _ => default_left,
                },
            };
            match if left { node.left } else { node.right } {
                Child::Node(n) => at = n as usize,
                Child::Leaf(l) => return l as usize,
            }
        }
    }

    /// The columns the trees split on, in increasing order.
    pub fn split_columns(&self) -> Vec<usize> {
        let mut used = std::collections::BTreeSet::new();
        for tree in &self.trees {
            used.extend(tree.nodes.iter().map(|n| n.column as usize));
        }
        used.into_iter().collect()
    }

    /// The 1-based LETOR feature of each column under `columns` against data of `n_features`
    /// features (Auto decided by the widths, else by the columns the trees split on; see
    /// [`Columns`]); an error when the model splits on a feature the data lack, or Auto cannot
    /// tell. `setting` is the flag that chooses the
    /// mapping where the caller reads it (`--teacher-columns`, `--reference-columns`, `eval`'s
    /// `--columns`), named in the message that asks for it.
    pub fn feature_offset(
        &self,
        columns: Columns,
        n_features: usize,
        name: &Path,
        setting: &str,
    ) -> Result<u32> {
        let offset = match columns {
            Columns::From1 => 1,
            Columns::From0 => 0,
            Columns::Auto if self.n_columns == n_features => 1,
            // One column more than the data: LightGBM's own reader's empty feature 0, unless
            // the model splits on column 0, which then cannot be that empty feature.
            Columns::Auto if self.n_columns == n_features + 1 => {
                u32::from(self.split_columns().first() == Some(&0))
            }
            Columns::Auto => {
                // A model narrower or wider than the data: the mapping its splits allow. Under
                // from-1 column c is feature c + 1; under from-0, feature c (never 0, which no
                // LETOR file has). Where both fit, the width cannot tell, and the user is asked.
                let used = self.split_columns();
                let fits_from1 = used.last().is_none_or(|&c| c < n_features);
                let fits_from0 =
                    used.first() != Some(&0) && used.last().is_none_or(|&c| c <= n_features);
                match (fits_from1, fits_from0) {
                    (true, false) => 1,
                    (false, true) => 0,
                    (false, false) => return Err(model_error(name, format!(
                        "the model has {} input columns and splits on column {}, past the data's {n_features} features under either column mapping: expected a model trained on these data's columns",
                        self.n_columns,
                        used.last().copied().unwrap_or_default()
                    ))),
                    (true, true) => return Err(model_error(name, format!(
                        "the model has {} input columns and the data {n_features} features: cannot tell whether column 0 is feature 1 (a model trained on arrays) or feature 0 (one trained by LightGBM's or XGBoost's own LETOR reader); say which with {setting} from-1 or from-0",
                        self.n_columns
                    ))),
                }
            }
        };
        let used = self.split_columns();
        // Under from-0, a split on column 0 is one on feature 0, which no LETOR file has: the
        // mapping is the wrong one, given or found.
        if offset == 0 && used.first() == Some(&0) {
            return Err(model_error(name, "the model splits on column 0, which under the from-0 column mapping is feature 0: LETOR features start at 1, so its columns start at feature 1 (from-1, a model trained on arrays)"));
        }
        if let Some(&last) = used.last() {
            let feature = last as u64 + offset as u64;
            if feature > n_features as u64 {
                return Err(model_error(name, format!(
                    "the model splits on column {last}, which is feature {feature}, but the data have {n_features} features: expected a model trained on these data's columns"
                )));
            }
        }
        Ok(offset)
    }

    /// The model's column names as the data's features under the mapping `offset`
    /// ([`Forest::feature_offset`]): feature 1's first. Under from-0 the model's column 0 is no
    /// feature and is left out. None where the model names no column.
    pub fn names_as_features(&self, offset: u32) -> Option<&[String]> {
        let names = self.feature_names.as_deref()?;
        Some(if offset == 0 {
            names.get(1..).unwrap_or(&[])
        } else {
            names
        })
    }

    /// Refuses the features of the file `file`, named `names` (a Parquet file's columns, a
    /// frame's), where the model was trained on columns named otherwise under the mapping
    /// `offset` ([`crate::data::check_columns_named`]). LightGBM writes a name's spaces as
    /// underscores, so they are compared so. Where the names fit under the other mapping, the
    /// message says so and names `setting`, which chooses it. `model` says which model this is.
    pub fn check_data_names(
        &self,
        file: &str,
        names: Option<&[String]>,
        offset: u32,
        model: &str,
        setting: &str,
    ) -> Result<()> {
        let same = |mine: &str, theirs: &str| match self.library {
            Library::LightGbm => mine.replace(' ', "_") == theirs,
            Library::XgBoost => mine == theirs,
        };
        let check = |offset| {
            crate::data::check_columns_named_by(
                file,
                names,
                self.names_as_features(offset),
                model,
                &same,
            )
        };
        check(offset).map_err(|e| {
            let other = 1 - offset.min(1);
            // The other mapping fits only where it names every column the data name.
            let covers = self
                .names_as_features(other)
                .is_some_and(|theirs| theirs.len() >= names.map_or(0, <[String]>::len));
            match (check(other), e) {
                (Ok(()), Error::Data(message)) if covers => Error::Data(format!(
                    "{message}; the names fit under the other column mapping: give {setting} {}",
                    if other == 0 { "from-0" } else { "from-1" }
                )),
                (_, e) => e,
            }
        })
    }

    /// A note of the column mapping [`Forest::feature_offset`] chose under [`Columns::Auto`] by
    /// the columns the trees split on, the widths not telling (a model of another width than
    /// the data, or one more column with a split on column 0): `offset` read, the other ruled
    /// out by the splits. None where the mapping was given or the widths decided. `setting`
    /// names the flag that gives it.
    pub fn columns_note(
        &self,
        columns: Columns,
        n_features: usize,
        offset: u32,
        setting: &str,
    ) -> Option<String> {
        // Widths that decide: as many columns as features, or one more without a split on
        // column 0 (which makes it from-1 instead).
        let by_width =
            self.n_columns == n_features || (self.n_columns == n_features + 1 && offset == 0);
        if columns != Columns::Auto || by_width {
            return None;
        }
        let (read, other) = match offset {
            1 => ("from-1 (column 0 is feature 1)", "from-0"),
            _ => ("from-0 (column j is feature j)", "from-1"),
        };
        Some(format!(
            "the model has {} input columns and the data {n_features} features: its columns are read {read}, the one mapping under which every column it splits on is a feature of the data ({other} would not be); give {setting} from-1 or from-0 to choose",
            self.n_columns
        ))
    }

    /// What an entry a LETOR file leaves out is to the model under `absent`; under
    /// [`Absent::Auto`], the one rule of every door, what its library's own readers make of it:
    /// missing (NaN) for XGBoost (its LETOR reader and its DMatrix of a sparse matrix), 0 for
    /// LightGBM (its LETOR reader and its sparse matrices). Python's arrays carry their zeros and
    /// NaNs as they are. Where the choice matters, [`Forest::absent_note`] says so.
    pub fn absent_value(&self, absent: Absent) -> f64 {
        match (absent, self.library) {
            (Absent::Missing, _) | (Absent::Auto, Library::XgBoost) => f64::NAN,
            (Absent::Zero, _) | (Absent::Auto, Library::LightGbm) => 0.0,
        }
    }

    /// Whether `node` sends a missing value and a zero different ways (XGBoost's default
    /// direction against where 0 goes; LightGBM reads an absent entry as 0 under either mapping,
    /// so only its NaN-missing splits can).
    fn missing_differs_at(node: &Node) -> bool {
        match node.rule {
            Rule::XgBoost {
                threshold,
                default_left,
            } => default_left != (0.0f32 < threshold),
            Rule::LightGbm {
                threshold,
                missing: Missing::NaN,
                default_left,
            } => default_left != (0.0 <= threshold),
            _ => false,
        }
    }

    /// The splits where a missing value and a zero take different branches, and how many splits
    /// there are: where the first is not 0, reading a file's absent entries as missing or as 0
    /// can change scores, and the column mapping decides which.
    pub fn missing_differs_from_zero(&self) -> (usize, usize) {
        let nodes = || self.trees.iter().flat_map(|t| &t.nodes);
        let differ = nodes().filter(|n| Self::missing_differs_at(n)).count();
        (differ, nodes().count())
    }

    /// The columns (of the model's rows) some split of which sends a missing value and a zero
    /// different ways: a document that leaves one of them out scores differently under the two
    /// readings.
    fn columns_where_missing_differs(&self) -> Vec<bool> {
        let mut columns = vec![false; self.row_width()];
        for node in self.trees.iter().flat_map(|t| &t.nodes) {
            if Self::missing_differs_at(node) {
                columns[node.column as usize] = true;
            }
        }
        columns
    }

    /// A sentence on how absent entries were read where the reading was not given (`absent`
    /// [`Absent::Auto`]) and it mattered: `left_out` documents ([`LetorScores::left_out`]) left
    /// out an entry at a split that sends a missing value and a zero different ways. None
    /// otherwise: a dense file, or a model whose splits send both one way, scores alike under
    /// either reading.
    pub fn absent_note(&self, absent: Absent, left_out: usize) -> Option<String> {
        let (differ, splits) = self.missing_differs_from_zero();
        if absent != Absent::Auto || differ == 0 || left_out == 0 {
            return None;
        }
        let library = self.library.name();
        let (read, other) = if self.absent_value(absent).is_nan() {
            (
                "missing",
                "if the model was trained on dense arrays whose zeros were values, say absent zero",
            )
        } else {
            (
                "0",
                "if the model was trained on rows with NaN where these are left out, say absent missing",
            )
        };
        Some(format!(
            "entries a LETOR file leaves out are read as {read}, as {library}'s own LETOR reader reads them, and {left_out} document(s) leave out a column at which some of its {differ} such splits (of {splits}) send a missing value and a zero different ways: {other}"
        ))
    }

    /// The model's scores of every document of a LETOR file, in the file's order, with the
    /// qid of each (None in a file whose groups come from a `.query` file). `offset`: the
    /// feature of column 0 ([`Forest::feature_offset`]); `absent`: what an entry the file leaves
    /// out is ([`Forest::absent_value`]).
    pub fn score_letor(
        &self,
        name: &Path,
        reader: impl std::io::Read,
        offset: u32,
        absent: Absent,
    ) -> Result<LetorScores> {
        let absent = self.absent_value(absent);
        let mut row = vec![absent; self.row_width()];
        let differs = self.columns_where_missing_differs();
        let n_differ = differs.iter().filter(|&&d| d).count();
        let mut scored = LetorScores::default();
        crate::data::letor::scan_letor(
            name,
            reader,
            crate::data::letor::DEFAULT_MAX_FEATURE_INDEX,
            &mut |doc| {
                row.fill(absent);
                let mut given = 0;
                for &(index, value) in doc.features {
                    let column = (index - offset) as usize;
                    if let Some(slot) = row.get_mut(column) {
                        *slot = value;
                        given += usize::from(differs[column]);
                    }
                }
                // The reader takes each feature once, so fewer given means one left out.
                scored.left_out += usize::from(given < n_differ);
                let score = self.score(&row);
                if !score.is_finite() {
                    return Err(Error::parse(
                        name,
                        doc.line,
                        0,
                        format!("the model's score of this document is {score}"),
                    ));
                }
                scored.scores.push(score);
                scored.qids.push(doc.qid);
                Ok(())
            },
        )?;
        Ok(scored)
    }

    /// The model's scores of the rows of a row-major matrix of `width` feature columns (column
    /// k is feature k + 1; NaN is a missing value), as an array library gives them: `offset` is
    /// the feature of the model's column 0 ([`Forest::feature_offset`]).
    pub fn score_rows(&self, values: &[f64], width: usize, offset: u32) -> Vec<f64> {
        let absent = match self.library {
            Library::LightGbm => 0.0,
            Library::XgBoost => f64::NAN,
        };
        let mut row = vec![absent; self.row_width()];
        values
            .chunks_exact(width.max(1))
            .map(|features| {
                row.fill(absent);
                for (k, &v) in features.iter().enumerate() {
                    // Feature k + 1 is the model's column k + 1 - offset.
                    if let Some(slot) = (k + 1)
                        .checked_sub(offset as usize)
                        .and_then(|c| row.get_mut(c))
                    {
                        *slot = v;
                    }
                }
                self.score(&row)
            })
            .collect()
    }

    /// The model in a line: its library, trees, objective and width.
    pub fn describe(&self) -> String {
        format!(
            "a {} model of {} trees ({}, {} input columns)",
            self.library.name(),
            self.trees.len(),
            self.objective,
            self.n_columns
        )
    }
}

/// LightGBM's zero: |v| <= 1e-35 (kZeroThreshold).
fn is_zero(v: f64) -> bool {
    v > -1e-35 && v <= 1e-35
}

/// A model file that cannot be read, in words.
pub(crate) fn model_error(name: &Path, what: impl Into<String>) -> Error {
    Error::parse(name, 0, 0, what.into())
}

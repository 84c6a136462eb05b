//! Saved models: the weights as safetensors (`PREFIX.safetensors`, tensors `layers.<l>.weight`
//! of shape (n_in, n_out) and `layers.<l>.bias`, with layer normalisation also
//! `layers.<l>.norm.gain` and `layers.<l>.norm.shift` for each hidden layer, with attention also
//! `attention.<query|key|value>.weight` (d, d) and `.bias`; an ensemble's members each under
//! `members.<m>.`), and a JSON config (`PREFIX.json`) that says how to
//! turn a LETOR file's columns into the model's input. The web page reads the same two files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use safetensors::tensor::{Dtype, SafeTensors, TensorView};

use crate::data::prepare::FeatureView;
use crate::data::transform::ColumnMap;
use crate::error::{Error, Result};
use crate::model::LossKind;
use crate::model::{Dense, Ensemble, LayerNorm, Mlp, Norm};

pub const FORMAT: &str = "distillrank-model";
pub const FORMAT_VERSION: u32 = 1;

/// The JSON half of a saved model (also kept in the weights' header, [`CONFIG_KEY`]). Every field
/// is checked: an unknown one is refused, not ignored.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    pub format: String,
    pub format_version: u32,
    pub n_in: usize,
    pub widths: Vec<usize>,
    /// Models of these widths whose scores are averaged ([`Ensemble`]); 1 for one model.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub members: usize,
    /// The hidden layers' normalisation; "none" (the default) is left out of the file.
    #[serde(default, skip_serializing_if = "is_no_norm")]
    pub norm: Norm,
    /// Heads of self-attention over the query's documents after the last hidden layer
    /// ([`crate::model::Attention`]); 0 (the MLP, left out of the file) scores each document
    /// alone.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attention_heads: usize,
    pub loss: LossKind,
    pub view: FeatureView,
    /// 1-based columns of the original data, in the order the model reads them.
    pub columns: Vec<usize>,
    /// Applied to every input value before the model: "signed_log1p" (spec §1.3) or "none".
    pub transform: String,
    /// The maps that follow the transform, one per column in `columns`' order, fitted on the
    /// training split ([`crate::data::transform`]: standardize after the signed log1p,
    /// rank-gauss after "none"); absent when the model reads its inputs after the transform
    /// alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_maps: Option<Vec<ColumnMap>>,
    /// Features in the data the model was trained on (a file with more is rejected).
    pub source_features: usize,
    /// What the model was trained on, in words (the data's description), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training_data: Option<String>,
    /// The setup that trained it, when a comparison or Python's `fit` did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<serde_json::Value>,
    /// The Gumbel labelling that gave its training data their binary labels, when it trained
    /// on them (not on the grades or a label column): `eval --labels binary` gives a file the
    /// labels training gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labelling: Option<Labelling>,
    /// The names of the source data's features, in order, when they had names (a Python data
    /// frame's columns, a Parquet training file's): the files and frames the model scores are
    /// checked against them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feature_names: Option<Vec<String>>,
}

/// The settings of the Gumbel labelling and of the group filter that made a model's binary
/// training labels (spec §1.2): the same give a validation or test file the labels its run gave.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Labelling {
    pub t: f64,
    pub tau_target: f64,
    pub data_seed: u64,
    pub min_group_size: usize,
}

impl Labelling {
    /// Refuses a labelling no run could have made (`eval --labels binary` labels a file with
    /// it): its field and what it should be, from the table of settings' ranges.
    fn check(&self) -> std::result::Result<(), String> {
        for (field, flag, value) in [
            ("t", "t", self.t),
            ("tau_target", "tau-target", self.tau_target),
            (
                "min_group_size",
                "min-group-size",
                self.min_group_size as f64,
            ),
        ] {
            if let Some(row) = crate::settings::bound(flag).filter(|row| !row.contains(value)) {
                return Err(format!(
                    "{field} is {}: expected {}",
                    crate::error::shown(value),
                    row.expected()
                ));
            }
        }
        Ok(())
    }

    /// The labelling of data prepared with `options`; none when its labels were not drawn
    /// (the grades, or a label column).
    pub fn of(options: &crate::data::prepare::PrepareOptions) -> Option<Labelling> {
        (!options.grades && options.label_column.is_none()).then_some(Labelling {
            t: options.t,
            tau_target: options.tau_target,
            data_seed: options.seed,
            min_group_size: options.min_group_size,
        })
    }
}

fn one() -> usize {
    1
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_no_norm(norm: &Norm) -> bool {
    *norm == Norm::None
}

impl ModelConfig {
    /// The config of a model that reads `columns` (1-based) of data with `source_features`
    /// features, after the signed log1p of spec §1.3.
    pub fn new(
        model: &Ensemble,
        loss: LossKind,
        view: FeatureView,
        columns: Vec<usize>,
        source_features: usize,
    ) -> Self {
        ModelConfig {
            format: FORMAT.into(),
            format_version: FORMAT_VERSION,
            n_in: model.n_in(),
            widths: model.widths(),
            members: model.len(),
            norm: model.members[0].norm(),
            attention_heads: model.members[0].attention_heads(),
            loss,
            view,
            columns,
            transform: "signed_log1p".into(),
            input_maps: None,
            source_features,
            training_data: None,
            setup: None,
            labelling: None,
            feature_names: None,
        }
    }

    /// The same config reading its inputs as preparation made them for `view`: the signed log1p
    /// or not, then the fitted maps of its columns, if any.
    pub fn with_input_maps(
        self,
        maps: &crate::data::prepare::InputMaps,
        view: FeatureView,
    ) -> Self {
        ModelConfig {
            transform: maps.model_transform().into(),
            input_maps: maps.of_view(view),
            ..self
        }
    }

    /// The same config, saying what trained the model: the data's description and the setup.
    pub fn trained_on(self, training_data: &str, setup: Option<serde_json::Value>) -> Self {
        ModelConfig {
            training_data: Some(training_data.to_string()),
            setup,
            ..self
        }
    }

    /// The same config, naming the source data's feature columns (`None`: unnamed, as LETOR
    /// text's): the files it scores are checked against them ([`model_inputs`]).
    pub fn named(self, feature_names: Option<Vec<String>>) -> Self {
        ModelConfig {
            feature_names,
            ..self
        }
    }

    /// The same config, with the labelling of its training data, prepared with `options`.
    pub fn labelled_as(self, options: &crate::data::prepare::PrepareOptions) -> Self {
        ModelConfig {
            labelling: Labelling::of(options),
            ..self
        }
    }
}

/// `model`, `model.json` or `model.safetensors` -> (`model.safetensors`, `model.json`).
pub fn paths(prefix: &Path) -> (PathBuf, PathBuf) {
    let stem = match prefix.extension().and_then(|e| e.to_str()) {
        Some("json") | Some("safetensors") => prefix.with_extension(""),
        _ => prefix.to_path_buf(),
    };
    (
        PathBuf::from(format!("{}.safetensors", stem.display())),
        PathBuf::from(format!("{}.json", stem.display())),
    )
}

/// Refuses a prefix that names no file: empty, a folder (`out/`, an existing directory), whose
/// files would be the hidden `out/.safetensors` and `out/.json`.
pub fn check_prefix(prefix: &Path) -> Result<()> {
    let text = prefix.to_string_lossy();
    if text.is_empty()
        || text.ends_with(std::path::MAIN_SEPARATOR)
        || text.ends_with('/')
        || prefix.is_dir()
    {
        return Err(Error::Config(format!(
            "{}: a model is saved as PREFIX.safetensors and PREFIX.json, and this names {}: give a prefix such as {}",
            if text.is_empty() { "''".to_string() } else { crate::error::printable(&text) },
            if text.is_empty() { "nothing" } else { "a folder" },
            prefix.join("model").display()
        )));
    }
    Ok(())
}

/// The key of the safetensors header's metadata that holds the model's config: the weights
/// carry their own description, so that a pair whose JSON was saved over separately (a process
/// killed between the two renames) is refused instead of scoring with the wrong columns.
pub const CONFIG_KEY: &str = "distillrank_config";

/// The safetensors bytes of a model, its config in the header ([`CONFIG_KEY`]).
pub fn to_safetensors(model: &Ensemble, config: &ModelConfig) -> Result<Vec<u8>> {
    let bytes: Vec<(String, Vec<u8>, Vec<usize>)> = model
        .members
        .iter()
        .enumerate()
        .flat_map(|(m, member)| {
            let prefix = member_prefix(model.len(), m);
            member
                .layers
                .iter()
                .enumerate()
                .flat_map(move |(l, layer)| {
                    let tensor = |name: &str, values: &[f32], shape: Vec<usize>| {
                        (
                            format!("{prefix}layers.{l}.{name}"),
                            bytemuck::cast_slice(values).to_vec(),
                            shape,
                        )
                    };
                    let norm = member.norms.get(l);
                    [
                        Some(tensor(
                            "weight",
                            &layer.weight,
                            vec![layer.n_in, layer.n_out],
                        )),
                        Some(tensor("bias", &layer.bias, vec![layer.n_out])),
                        norm.map(|n| tensor("norm.gain", &n.gain, vec![layer.n_out])),
                        norm.map(|n| tensor("norm.shift", &n.shift, vec![layer.n_out])),
                    ]
                    .into_iter()
                    .flatten()
                })
                .chain(member.attention.iter().flat_map(move |a| {
                    let prefix = member_prefix(model.len(), m);
                    [("query", &a.query), ("key", &a.key), ("value", &a.value)]
                        .into_iter()
                        .flat_map(move |(name, p)| {
                            [
                                (
                                    format!("{prefix}attention.{name}.weight"),
                                    bytemuck::cast_slice(&p.weight).to_vec(),
                                    vec![p.n_in, p.n_out],
                                ),
                                (
                                    format!("{prefix}attention.{name}.bias"),
                                    bytemuck::cast_slice(&p.bias).to_vec(),
                                    vec![p.n_out],
                                ),
                            ]
                        })
                }))
        })
        .collect();
    let views = bytes
        .iter()
        .map(|(name, data, shape)| {
            TensorView::new(Dtype::F32, shape.clone(), data).map(|v| (name.clone(), v))
        })
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::Model {
            path: PathBuf::from("<memory>"),
            message: e.to_string(),
        })?;
    // One entry, the config (whose `format` names the file's kind): the header writes its
    // metadata in a map's order, which two entries would make differ from one save to the next.
    let info = HashMap::from([(
        CONFIG_KEY.to_string(),
        serde_json::to_string(config).expect("a model config always serialises"),
    )]);
    safetensors::tensor::serialize(views, Some(info)).map_err(|e| Error::Model {
        path: PathBuf::from("<memory>"),
        message: e.to_string(),
    })
}

/// The fields where the config in a model's weights (`theirs`) and its JSON differ, each with
/// both values (`widths: [16] in the weights, [8] in the JSON`), a long value cut short.
fn differing_fields(
    theirs: &serde_json::Value,
    json: &serde_json::Value,
    at: &str,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    let short = |v: &Value| {
        let text = v.to_string();
        match text.char_indices().nth(60) {
            Some((cut, _)) => format!("{}...", crate::error::printable(&text[..cut])),
            None => crate::error::printable(&text),
        }
    };
    match (theirs, json) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => differing_fields(x, y, &path, out),
                    // A field at its default is left out of the JSON written (heads 0, one
                    // member): said so, not printed as null.
                    (x, y) => {
                        let said = |v: Option<&Value>| v.map_or("the default".into(), short);
                        out.push(format!(
                            "{path}: {} in the weights, {} in the JSON",
                            said(x),
                            said(y)
                        ));
                    }
                }
            }
        }
        _ if theirs == json => {}
        _ => out.push(format!(
            "{at}: {} in the weights, {} in the JSON",
            short(theirs),
            short(json)
        )),
    }
}

/// Where member `m` of a model of `members` keeps its tensors: one model's at the top, an
/// ensemble's under `members.<m>.`.
fn member_prefix(members: usize, m: usize) -> String {
    if members == 1 {
        String::new()
    } else {
        format!("members.{m}.")
    }
}

/// Reads a model from safetensors bytes, checking it against its config.
pub fn from_safetensors(bytes: &[u8], config: &ModelConfig, name: &Path) -> Result<Ensemble> {
    let bad = |message: String| Error::Model {
        path: name.to_path_buf(),
        message,
    };
    // The safetensors reader's words, with what the file is and what it should have been.
    let unreadable = |e: safetensors::SafeTensorError| {
        bad(format!(
            "{}, expected the weights a save writes (safetensors: {e}); a file cut short or of another kind: save the model again",
            match bytes.len() {
                0 => "an empty file".to_string(),
                n => format!("{n} bytes that are not a whole safetensors file"),
            }
        ))
    };
    let tensors = SafeTensors::deserialize(bytes).map_err(unreadable)?;
    // The weights name their config: it must be the JSON's, or the two files are not one
    // model. Weights without it are not a save's (every save writes it), and would be read
    // by whatever config lies beside them.
    let (_, header) = SafeTensors::read_metadata(bytes).map_err(unreadable)?;
    let own = header
        .metadata()
        .as_ref()
        .and_then(|m| m.get(CONFIG_KEY).cloned())
        .ok_or_else(|| {
            bad(format!(
                "the weights' header holds no config ({CONFIG_KEY}), which every save writes beside the tensors: these weights were not saved by distillrank, or their header was rewritten; save the model again"
            ))
        })?;
    let own: ModelConfig = serde_json::from_str(&own).map_err(|e| {
        bad(format!(
            "the config in the weights' header is not readable: {e}"
        ))
    })?;
    if &own != config {
        let theirs = serde_json::to_value(&own).unwrap_or_default();
        let json = serde_json::to_value(config).unwrap_or_default();
        let mut differ = Vec::new();
        differing_fields(&theirs, &json, "", &mut differ);
        let shown: Vec<&str> = differ.iter().take(4).map(String::as_str).collect();
        let more = differ.len().saturating_sub(shown.len());
        return Err(bad(format!(
            "these weights were saved with another config than the JSON beside them: {}{}; the two files are not one model, as when a save over them was cut short; save the model again",
            shown.join("; "),
            if more > 0 { format!(" (and {more} more)") } else { String::new() }
        )));
    }
    let mut dims = vec![config.n_in];
    dims.extend_from_slice(&config.widths);
    dims.push(1);
    let normalised = match config.norm {
        Norm::None => 0,
        Norm::Layer => config.widths.len(),
    };
    let attended = if config.attention_heads > 0 { 6 } else { 0 };
    let expected = config.members * (2 * (dims.len() - 1) + 2 * normalised + attended);
    if tensors.len() != expected {
        return Err(bad(format!(
            "the weights hold {} tensors, a model of {} member(s) of widths {:?}{} has {expected}",
            tensors.len(),
            config.members,
            config.widths,
            match config.norm {
                Norm::None => String::new(),
                norm => format!(" with norm {}", norm.name()),
            } + &match config.attention_heads {
                0 => String::new(),
                heads => format!(" with {heads} attention heads"),
            }
        )));
    }
    let mut members = Vec::with_capacity(config.members);
    for m in 0..config.members {
        let prefix = member_prefix(config.members, m);
        let mut layers = Vec::new();
        let mut norms = Vec::new();
        let read = |name: String, shape: Vec<usize>| -> Result<Vec<f32>> {
            let t = tensors
                .tensor(&name)
                .map_err(|_| bad(format!("tensor {name} is missing")))?;
            if t.dtype() != Dtype::F32 || t.shape() != shape.as_slice() {
                return Err(bad(format!(
                    "tensor {name} is {:?} {:?}, expected F32 {:?}",
                    t.dtype(),
                    t.shape(),
                    shape
                )));
            }
            let values: Vec<f32> = t
                .data()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if values.iter().any(|v| !v.is_finite()) {
                return Err(bad(format!("tensor {name} holds NaN or infinite values")));
            }
            Ok(values)
        };
        for (l, w) in dims.windows(2).enumerate() {
            layers.push(Dense {
                n_in: w[0],
                n_out: w[1],
                weight: read(format!("{prefix}layers.{l}.weight"), vec![w[0], w[1]])?,
                bias: read(format!("{prefix}layers.{l}.bias"), vec![w[1]])?,
            });
            if l < normalised {
                norms.push(LayerNorm {
                    gain: read(format!("{prefix}layers.{l}.norm.gain"), vec![w[1]])?,
                    shift: read(format!("{prefix}layers.{l}.norm.shift"), vec![w[1]])?,
                });
            }
        }
        let attention = match config.attention_heads {
            0 => None,
            heads => {
                let d = dims[dims.len() - 2];
                let projection = |name: &str| -> Result<Dense<f32>> {
                    Ok(Dense {
                        n_in: d,
                        n_out: d,
                        weight: read(format!("{prefix}attention.{name}.weight"), vec![d, d])?,
                        bias: read(format!("{prefix}attention.{name}.bias"), vec![d])?,
                    })
                };
                Some(crate::model::Attention {
                    heads,
                    query: projection("query")?,
                    key: projection("key")?,
                    value: projection("value")?,
                })
            }
        };
        members.push(Mlp {
            layers,
            norms,
            attention,
        });
    }
    Ok(Ensemble { members })
}

/// The config in `text`, or what is wrong with it in words that name the field (`field
/// widths[1]: invalid type: string "8", expected usize (line 6, column 7)`), where serde's alone
/// would give only the type it expected and the place.
fn read_config(text: &str) -> std::result::Result<ModelConfig, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let words = |e: &serde_json::Error, path: Option<String>| {
        let message = e.to_string();
        let message = message
            .rfind(" at line ")
            .map_or(message.as_str(), |at| &message[..at]);
        let field = path.map_or_else(String::new, |p| format!("field {p}: "));
        format!(
            "not a distillrank model config: {field}{message} (line {}, column {})",
            e.line(),
            e.column()
        )
    };
    let config: ModelConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        words(e.inner(), (path != ".").then_some(path))
    })?;
    de.end().map_err(|e| words(&e, None))?;
    Ok(config)
}

/// Parses and checks the JSON config.
pub fn parse_config(text: &str, name: &Path) -> Result<ModelConfig> {
    let bad = |message: String| Error::Model {
        path: name.to_path_buf(),
        message,
    };
    // A byte-order mark is accepted, as in LETOR files.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Another JSON value than an object is named as such, not by the fields serde would read
    // from a list by position; a tree model (whose words a config's own text may hold: a
    // feature named `learner`) only where the text is not a config of this format.
    let value = serde_json::from_str::<serde_json::Value>(text).ok();
    if let Some(value) = value.as_ref().filter(|v| !v.is_object()) {
        return Err(bad(format!(
            "{}, expected a distillrank model config: a JSON object, as a save writes it",
            crate::error::json_kind(value)
        )));
    }
    let ours = value.as_ref().and_then(|v| v.get("format")) == Some(&FORMAT.into());
    if !ours && crate::forest::starts_like_tree_model(text.as_bytes()) {
        return Err(bad(
            "a LightGBM or XGBoost model, not a saved distillrank model's config (PREFIX.json beside PREFIX.safetensors)".into(),
        ));
    }
    let config: ModelConfig = read_config(text).map_err(bad)?;
    if config.format != FORMAT {
        return Err(bad(format!(
            "format is '{}', expected '{FORMAT}'",
            config.format
        )));
    }
    if config.format_version != FORMAT_VERSION {
        return Err(bad(format!(
            "format version {} is not supported (this build reads version {FORMAT_VERSION})",
            config.format_version
        )));
    }
    if config.n_in == 0 {
        return Err(bad(
            "n_in is 0: expected the model's number of input columns, at least 1".into(),
        ));
    }
    if let Some(at) = config.widths.iter().position(|&w| w == 0) {
        return Err(bad(format!(
            "widths[{at}] is 0: expected every hidden layer's width to be at least 1"
        )));
    }
    if let Some(names) = &config.feature_names {
        if names.len() != config.source_features {
            return Err(bad(format!(
                "feature_names holds {} names for {} source features: expected one per feature",
                names.len(),
                config.source_features
            )));
        }
        if let Some((i, again)) = names
            .iter()
            .enumerate()
            .find(|&(i, n)| names[..i].contains(n))
        {
            return Err(bad(format!(
                "feature_names names {again:?} twice (at {} and {i}): expected distinct names",
                names.iter().position(|n| n == again).unwrap_or(0)
            )));
        }
    }
    crate::model::attention::check_heads(
        config.attention_heads,
        &config.widths,
        "attention_heads",
        "its widths hold none",
    )
    .map_err(|e| bad(e.message()))?;
    if config.members == 0 || config.members > crate::model::ensemble::MAX_MEMBERS {
        return Err(bad(format!(
            "members is {}: a model has 1 to {} members",
            config.members,
            crate::model::ensemble::MAX_MEMBERS
        )));
    }
    if config.columns.len() != config.n_in {
        return Err(bad(format!(
            "columns holds {} columns for n_in {}: expected one per input",
            config.columns.len(),
            config.n_in
        )));
    }
    for (i, &c) in config.columns.iter().enumerate() {
        let why = if c == 0 || c > config.source_features {
            format!(
                "expected a column of the source data's 1..={} (source_features)",
                config.source_features
            )
        } else if config.columns[..i].contains(&c) {
            "expected distinct columns: it is named twice".to_string()
        } else {
            continue;
        };
        return Err(bad(format!("columns[{i}] is {c}: {why}")));
    }
    if config.transform != "signed_log1p" && config.transform != "none" {
        return Err(bad(format!(
            "unknown transform '{}': expected signed_log1p or none (a standardize or rank-gauss model keeps its maps in input_maps beside one of them)",
            crate::error::printable(&config.transform)
        )));
    }
    if let Some(labelling) = &config.labelling {
        labelling
            .check()
            .map_err(|why| bad(format!("labelling.{why}")))?;
    }
    if let Some(maps) = &config.input_maps {
        if maps.len() != config.n_in {
            return Err(bad(format!(
                "input_maps holds {} maps for {} columns: expected one per column",
                maps.len(),
                config.n_in
            )));
        }
        if let Some((j, why)) = maps
            .iter()
            .enumerate()
            .find_map(|(j, m)| m.check().err().map(|why| (j, why)))
        {
            return Err(bad(format!("input_maps[{j}]: {why}")));
        }
    }
    Ok(config)
}

/// Saves a model as `PREFIX.safetensors` + `PREFIX.json`. A model with a NaN or infinite weight
/// is refused. Both files are written to temporary files beside their targets and renamed into
/// place, the weights first: a failed save leaves no half-written file, and never weights
/// without their config.
#[cfg(not(target_arch = "wasm32"))]
pub fn save(prefix: &Path, model: &Ensemble, config: &ModelConfig) -> Result<(PathBuf, PathBuf)> {
    check_prefix(prefix)?;
    let (weights, json) = paths(prefix);
    if !model.all_finite() {
        return Err(Error::Model {
            path: weights,
            message: "the model holds NaN or infinite weights (training diverged): not saved"
                .into(),
        });
    }
    let text = serde_json::to_string_pretty(config).expect("a model config always serialises");
    let staged_weights = crate::output::stage(&weights, &to_safetensors(model, config)?)?;
    let staged_json = match crate::output::stage(&json, (text + "\n").as_bytes()) {
        Ok(staged) => staged,
        Err(e) => {
            staged_weights.discard();
            return Err(e);
        }
    };
    staged_weights.commit()?;
    if let Err(e) = staged_json.commit() {
        // Never weights without their config.
        let _ = std::fs::remove_file(&weights);
        return Err(e);
    }
    Ok((weights, json))
}

/// Largest model files read: a config is a few kB; weights of the largest sensible MLP are well
/// under 4 GB. A device such as `/dev/zero` stops here rather than exhausting memory.
#[cfg(not(target_arch = "wasm32"))]
const MAX_CONFIG_BYTES: u64 = 16 << 20;
#[cfg(not(target_arch = "wasm32"))]
const MAX_WEIGHTS_BYTES: u64 = 4 << 30;

/// Reads a model saved by [`save`], by its prefix (or either of its files). `reads_trees`: the
/// door also scores LightGBM and XGBoost models (`eval`, `predict`), so that a file that is
/// neither is told so; the other doors read saved distillrank models only, and say that of a
/// tree model.
#[cfg(not(target_arch = "wasm32"))]
pub fn load(prefix: &Path, reads_trees: bool) -> Result<(Ensemble, ModelConfig)> {
    let (weights, json) = paths(prefix);
    // A name given as a file (`m.txt`) that names no saved model: say what was looked for.
    if !json.exists() && weights.is_file() {
        return Err(Error::Model {
            path: json,
            message: format!(
                "no such file, and the weights {} are there: a model is saved as the two (its config and its weights); save it again, or give the config back its place",
                weights.display()
            ),
        });
    }
    if !json.exists() && prefix != json && prefix != weights {
        let saved = format!("{} + {}", json.display(), weights.display());
        let message = match (prefix.is_file(), reads_trees) {
            (true, _) if crate::forest::looks_like_tree_model(prefix) => format!(
                "a LightGBM or XGBoost model, not a saved distillrank model: this reads only distillrank's own ({saved})"
            ),
            (true, true) => format!(
                "not a model distillrank reads: not a LightGBM or XGBoost model, and no saved distillrank model {saved} beside it"
            ),
            (true, false) => format!(
                "not a saved distillrank model: no {saved} beside it (a model is saved as the two)"
            ),
            (false, true) => format!(
                "no such model: neither a file of that name (a LightGBM or XGBoost model) nor {saved} (a saved distillrank model)"
            ),
            (false, false) => format!("no such model: no saved distillrank model {saved}"),
        };
        return Err(Error::Model {
            path: prefix.to_path_buf(),
            message,
        });
    }
    let bytes = crate::data::read_capped(&json, MAX_CONFIG_BYTES, "a model config")?;
    let text = String::from_utf8(bytes).map_err(|_| Error::Model {
        path: json.clone(),
        message: "not UTF-8 text: expected the JSON config of a distillrank model".into(),
    })?;
    let config = parse_config(&text, &json)?;
    let bytes = crate::data::read_capped(&weights, MAX_WEIGHTS_BYTES, "a model's weights")?;
    let model = from_safetensors(&bytes, &config, &weights)?;
    Ok((model, config))
}

/// The model's input matrix for a dataset: its columns, transformed as at training time.
///
/// The data must have the width of the data the model was trained on (`source_features`
/// columns, the highest feature index): a file of another width is almost always another
/// dataset, and its columns would mean other things. `allow_missing_features` accepts a
/// narrower file (a sparse file whose last columns happen to be zero everywhere) and reads the
/// missing columns as 0; a wider one is always refused.
pub fn model_inputs(
    data: &crate::data::Dataset,
    config: &ModelConfig,
    name: &Path,
    allow_missing_features: bool,
) -> Result<Vec<f32>> {
    let refuse = |message: String| Error::Model {
        path: name.to_path_buf(),
        message,
    };
    if data.n_features > config.source_features {
        return Err(refuse(format!(
            "the data have {} feature columns, the model was trained on data with {}: another dataset?",
            data.n_features, config.source_features
        )));
    }
    if data.n_features < config.source_features && !allow_missing_features {
        return Err(refuse(format!(
            "the data have {} feature columns (highest index), the model was trained on data with {}: another dataset? If this file only leaves its last columns out (sparse zeros), --allow-missing-features reads them as 0",
            data.n_features, config.source_features
        )));
    }
    data.check_columns_named_as(
        &name.display().to_string(),
        config.feature_names.as_deref(),
        "the model's training data",
    )?;
    let mut out = Vec::with_capacity(data.n_docs() * config.columns.len());
    for d in 0..data.n_docs() {
        let row = data.row(d);
        // Columns past the file's last (sparse, all zero) column read as 0.
        out.extend(
            config
                .columns
                .iter()
                .map(|&c| row.get(c - 1).copied().unwrap_or(0.0)),
        );
    }
    if config.transform == "signed_log1p" {
        crate::data::prepare::signed_log1p(&mut out);
    }
    if let Some(maps) = &config.input_maps {
        crate::data::transform::apply(maps, &mut out);
    }
    Ok(out)
}

/// A warning when a model gives every document of every group one score: it does not rank at all,
/// and the metrics (which average over the orders of tied documents) are those of a random order.
pub fn constant_scores(scores: &[f32], offsets: &[usize], name: &Path) -> Option<String> {
    ties_note(scores, offsets).map(|note| format!("{}: {note}", name.display()))
}

/// [`constant_scores`]'s words without the model's name: what `train`, Python's `score` and a
/// cluster's `evaluate` say of the model they measure.
pub fn ties_note(scores: &[f32], offsets: &[usize]) -> Option<String> {
    crate::metrics::ties_every_group(scores, offsets).then(|| {
        format!(
            "the model gives every document of each query the same score ({}): it does not rank at all: each metric is its expected value over every order of each query's documents, what a random ranking gets",
            scores[0]
        )
    })
}

/// Refuses scores that are NaN or infinite (a model whose weights overflow on these inputs):
/// they must not be written out or turned into metrics.
pub fn check_scores(scores: &[f32], name: &Path) -> Result<()> {
    let bad = scores.iter().filter(|s| !s.is_finite()).count();
    match scores.iter().position(|s| !s.is_finite()) {
        None => Ok(()),
        Some(first) => Err(Error::Model {
            path: name.to_path_buf(),
            message: format!(
                "the model scores {bad} of {} documents as NaN or infinite (the first: document {}, {}): its weights overflow on these inputs; no scores or metrics are reported",
                scores.len(),
                first + 1,
                scores[first]
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::differing_fields;

    #[test]
    fn a_field_left_out_at_its_default_is_named_as_the_default_not_null() {
        let weights = serde_json::json!({"attention_heads": 4, "widths": [8]});
        let json = serde_json::json!({"widths": [16]});
        let mut out = Vec::new();
        differing_fields(&weights, &json, "", &mut out);
        assert_eq!(
            out,
            [
                "attention_heads: 4 in the weights, the default in the JSON",
                "widths: [8] in the weights, [16] in the JSON"
            ]
        );
    }
}

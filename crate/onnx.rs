//! ONNX export of a saved model, for serving it outside distillrank (onnxruntime, a search
//! engine's model server, ...).
//!
//! The graph holds the whole path from a LETOR file's raw feature values to `predict`'s scores, so
//! that a server feeds it what it has, the documents' feature vectors, and needs no copy of the
//! column selection or the transform:
//!
//! ```text
//! features  float32 [batch, source_features]   column j of the file at index j - 1, absent
//!   |                                          sparse entries 0
//! Gather(axis 1, indices columns - 1)          the model's columns, in its order
//! Sign(x) * Log(1 + Abs(x))                    the signed log1p (transform "signed_log1p" only)
//! (x - shift) * scale, or linear between knots  the fitted maps (`input_maps`: standardize,
//!                                              rank-gauss), when the model has them
//! Gemm(W, b) -> Relu -> ... -> Gemm(W, b)      the MLP; W is (n_in, n_out) as saved: transB = 0;
//!                                              with layer normalisation, a LayerNormalization
//!                                              (axis -1, epsilon 1e-5) before each Relu
//! Reshape([-1])
//! score     float32 [batch]
//! ```
//!
//! Opset 17 of the default domain (ai.onnx) and IR version 8, the pair onnx 1.12 introduced: every
//! onnxruntime since 1.12 loads it. The batch dimension is symbolic ("batch"). The model's config
//! goes into `metadata_props` (loss, view, columns, transform, source features, widths) beside the
//! caller's pairs.
//!
//! Log(1 + |x|) in float32 differs from `ln_1p` by at most one rounding of 1 + |x| (about 6e-8
//! absolute), far below the 1e-5 the scores are compared at. At 0 and -0 both give 0.
//!
//! The protobuf messages are [`proto`]: Rust structs with the field numbers of onnx.proto, encoded
//! by `prost`; the same structs decode an exported file (the tests do).

use prost::Message;

use crate::data::transform::ColumnMap;
use crate::error::{Error, Result};
use crate::model::{Ensemble, Mlp, Norm};
use crate::model_io::ModelConfig;

/// The operator set the graph uses (ai.onnx).
pub const OPSET: i64 = 17;
/// The IR version that goes with [`OPSET`] (onnx 1.12).
pub const IR_VERSION: i64 = 8;
/// The graph's input: raw feature vectors, float32 [batch, source_features].
pub const INPUT: &str = "features";
/// The graph's output: the scores, float32 [batch].
pub const OUTPUT: &str = "score";
/// The symbolic batch dimension of [`INPUT`] and [`OUTPUT`].
pub const BATCH: &str = "batch";
/// `producer_name` of exported models.
pub const PRODUCER: &str = "distillrank";

/// Protobuf's hard limit on one message (2 GiB); a graph over it would need external data files,
/// which this exporter does not write.
const MAX_MODEL_BYTES: usize = i32::MAX as usize;

/// The subset of onnx.proto (package `onnx`, proto2) that an exported model uses, with its exact
/// field numbers. Fields are `optional` (`Option`) where onnx.proto says `optional`, so that a
/// value equal to the default (an attribute `i: 0`) is still written, as proto2 does; repeated
/// numbers are packed only where onnx.proto says `[packed = true]`. Fields left out are skipped on
/// decoding.
pub mod proto {
    /// `TensorProto.DataType.FLOAT`.
    pub const FLOAT: i32 = 1;
    /// `TensorProto.DataType.INT64`.
    pub const INT64: i32 = 7;
    /// `AttributeProto.AttributeType.FLOAT`.
    pub const ATTRIBUTE_FLOAT: i32 = 1;
    /// `AttributeProto.AttributeType.INT`.
    pub const ATTRIBUTE_INT: i32 = 2;
    /// `AttributeProto.AttributeType.INTS`.
    pub const ATTRIBUTE_INTS: i32 = 7;

    /// `message ModelProto`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ModelProto {
        /// `optional int64 ir_version = 1;`
        #[prost(int64, optional, tag = "1")]
        pub ir_version: Option<i64>,
        /// `repeated OperatorSetIdProto opset_import = 8;`
        #[prost(message, repeated, tag = "8")]
        pub opset_import: Vec<OperatorSetIdProto>,
        /// `optional string producer_name = 2;`
        #[prost(string, optional, tag = "2")]
        pub producer_name: Option<String>,
        /// `optional string producer_version = 3;`
        #[prost(string, optional, tag = "3")]
        pub producer_version: Option<String>,
        /// `optional string domain = 4;`
        #[prost(string, optional, tag = "4")]
        pub domain: Option<String>,
        /// `optional int64 model_version = 5;`
        #[prost(int64, optional, tag = "5")]
        pub model_version: Option<i64>,
        /// `optional string doc_string = 6;`
        #[prost(string, optional, tag = "6")]
        pub doc_string: Option<String>,
        /// `optional GraphProto graph = 7;`
        #[prost(message, optional, tag = "7")]
        pub graph: Option<GraphProto>,
        /// `repeated StringStringEntryProto metadata_props = 14;`
        #[prost(message, repeated, tag = "14")]
        pub metadata_props: Vec<StringStringEntryProto>,
    }

    /// `message OperatorSetIdProto`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct OperatorSetIdProto {
        /// `optional string domain = 1;` ("" is ai.onnx)
        #[prost(string, optional, tag = "1")]
        pub domain: Option<String>,
        /// `optional int64 version = 2;`
        #[prost(int64, optional, tag = "2")]
        pub version: Option<i64>,
    }

    /// `message StringStringEntryProto`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct StringStringEntryProto {
        /// `optional string key = 1;`
        #[prost(string, optional, tag = "1")]
        pub key: Option<String>,
        /// `optional string value = 2;`
        #[prost(string, optional, tag = "2")]
        pub value: Option<String>,
    }

    /// `message GraphProto`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct GraphProto {
        /// `repeated NodeProto node = 1;` (sorted topologically)
        #[prost(message, repeated, tag = "1")]
        pub node: Vec<NodeProto>,
        /// `optional string name = 2;`
        #[prost(string, optional, tag = "2")]
        pub name: Option<String>,
        /// `repeated TensorProto initializer = 5;`
        #[prost(message, repeated, tag = "5")]
        pub initializer: Vec<TensorProto>,
        /// `optional string doc_string = 10;`
        #[prost(string, optional, tag = "10")]
        pub doc_string: Option<String>,
        /// `repeated ValueInfoProto input = 11;`
        #[prost(message, repeated, tag = "11")]
        pub input: Vec<ValueInfoProto>,
        /// `repeated ValueInfoProto output = 12;`
        #[prost(message, repeated, tag = "12")]
        pub output: Vec<ValueInfoProto>,
        /// `repeated ValueInfoProto value_info = 13;`
        #[prost(message, repeated, tag = "13")]
        pub value_info: Vec<ValueInfoProto>,
    }

    /// `message NodeProto`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct NodeProto {
        /// `repeated string input = 1;`
        #[prost(string, repeated, tag = "1")]
        pub input: Vec<String>,
        /// `repeated string output = 2;`
        #[prost(string, repeated, tag = "2")]
        pub output: Vec<String>,
        /// `optional string name = 3;`
        #[prost(string, optional, tag = "3")]
        pub name: Option<String>,
        /// `optional string op_type = 4;`
        #[prost(string, optional, tag = "4")]
        pub op_type: Option<String>,
        /// `optional string domain = 7;`
        #[prost(string, optional, tag = "7")]
        pub domain: Option<String>,
        /// `repeated AttributeProto attribute = 5;`
        #[prost(message, repeated, tag = "5")]
        pub attribute: Vec<AttributeProto>,
        /// `optional string doc_string = 6;`
        #[prost(string, optional, tag = "6")]
        pub doc_string: Option<String>,
    }

    /// `message AttributeProto` (without its graph-valued fields, which an MLP does not need).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct AttributeProto {
        /// `optional string name = 1;`
        #[prost(string, optional, tag = "1")]
        pub name: Option<String>,
        /// `optional string doc_string = 13;`
        #[prost(string, optional, tag = "13")]
        pub doc_string: Option<String>,
        /// `optional AttributeType type = 20;` (an enum: int32 on the wire)
        #[prost(int32, optional, tag = "20")]
        pub r#type: Option<i32>,
        /// `optional float f = 2;`
        #[prost(float, optional, tag = "2")]
        pub f: Option<f32>,
        /// `optional int64 i = 3;`
        #[prost(int64, optional, tag = "3")]
        pub i: Option<i64>,
        /// `optional bytes s = 4;`
        #[prost(bytes = "vec", optional, tag = "4")]
        pub s: Option<Vec<u8>>,
        /// `optional TensorProto t = 5;`
        #[prost(message, optional, tag = "5")]
        pub t: Option<TensorProto>,
        /// `repeated float floats = 7;`
        #[prost(float, repeated, packed = "false", tag = "7")]
        pub floats: Vec<f32>,
        /// `repeated int64 ints = 8;`
        #[prost(int64, repeated, packed = "false", tag = "8")]
        pub ints: Vec<i64>,
        /// `repeated bytes strings = 9;`
        #[prost(bytes = "vec", repeated, tag = "9")]
        pub strings: Vec<Vec<u8>>,
    }

    /// `message TensorProto`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TensorProto {
        /// `repeated int64 dims = 1;`
        #[prost(int64, repeated, packed = "false", tag = "1")]
        pub dims: Vec<i64>,
        /// `optional int32 data_type = 2;` (a `DataType`)
        #[prost(int32, optional, tag = "2")]
        pub data_type: Option<i32>,
        /// `repeated float float_data = 4 [packed = true];`
        #[prost(float, repeated, packed = "true", tag = "4")]
        pub float_data: Vec<f32>,
        /// `repeated int32 int32_data = 5 [packed = true];`
        #[prost(int32, repeated, packed = "true", tag = "5")]
        pub int32_data: Vec<i32>,
        /// `repeated int64 int64_data = 7 [packed = true];`
        #[prost(int64, repeated, packed = "true", tag = "7")]
        pub int64_data: Vec<i64>,
        /// `optional string name = 8;`
        #[prost(string, optional, tag = "8")]
        pub name: Option<String>,
        /// `optional bytes raw_data = 9;` (fixed width, little-endian)
        #[prost(bytes = "vec", optional, tag = "9")]
        pub raw_data: Option<Vec<u8>>,
        /// `optional string doc_string = 12;`
        #[prost(string, optional, tag = "12")]
        pub doc_string: Option<String>,
    }

    /// `message ValueInfoProto`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ValueInfoProto {
        /// `optional string name = 1;`
        #[prost(string, optional, tag = "1")]
        pub name: Option<String>,
        /// `optional TypeProto type = 2;`
        #[prost(message, optional, tag = "2")]
        pub r#type: Option<TypeProto>,
        /// `optional string doc_string = 3;`
        #[prost(string, optional, tag = "3")]
        pub doc_string: Option<String>,
    }

    /// `message TypeProto` (tensor types only).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TypeProto {
        /// `oneof value { Tensor tensor_type = 1; ... }`
        #[prost(oneof = "type_proto::Value", tags = "1")]
        pub value: Option<type_proto::Value>,
    }

    /// The nested messages of `TypeProto`.
    pub mod type_proto {
        /// `message TypeProto.Tensor`.
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Tensor {
            /// `optional int32 elem_type = 1;` (a `TensorProto.DataType`)
            #[prost(int32, optional, tag = "1")]
            pub elem_type: Option<i32>,
            /// `optional TensorShapeProto shape = 2;`
            #[prost(message, optional, tag = "2")]
            pub shape: Option<super::TensorShapeProto>,
        }

        /// `TypeProto`'s `oneof value`.
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Value {
            /// `Tensor tensor_type = 1;`
            #[prost(message, tag = "1")]
            TensorType(Tensor),
        }
    }

    /// `message TensorShapeProto`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct TensorShapeProto {
        /// `repeated Dimension dim = 1;`
        #[prost(message, repeated, tag = "1")]
        pub dim: Vec<tensor_shape_proto::Dimension>,
    }

    /// The nested messages of `TensorShapeProto`.
    pub mod tensor_shape_proto {
        /// `message TensorShapeProto.Dimension`.
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Dimension {
            /// `oneof value { int64 dim_value = 1; string dim_param = 2; }`
            #[prost(oneof = "dimension::Value", tags = "1, 2")]
            pub value: Option<dimension::Value>,
            /// `optional string denotation = 3;`
            #[prost(string, optional, tag = "3")]
            pub denotation: Option<String>,
        }

        /// The oneof of `Dimension`.
        pub mod dimension {
            /// `Dimension`'s `oneof value`.
            #[derive(Clone, PartialEq, prost::Oneof)]
            pub enum Value {
                /// `int64 dim_value = 1;`
                #[prost(int64, tag = "1")]
                DimValue(i64),
                /// `string dim_param = 2;`
                #[prost(string, tag = "2")]
                DimParam(String),
            }
        }
    }
}

use proto::tensor_shape_proto::{dimension, Dimension};
use proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, StringStringEntryProto,
    TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
};

/// The ONNX model (bytes) of a saved model: raw LETOR feature vectors in (float32
/// [batch, source_features], input named "features"), exactly `predict`'s scores out (float32
/// [batch], output named "score").
///
/// `metadata` goes into `metadata_props` beside the model's own keys ("loss", "view", "columns",
/// "transform", "source_features", "n_in", "widths"); a key given twice is refused. A model the
/// graph cannot express (an unknown transform, columns outside the data, weights that disagree
/// with the config, non-finite weights) is refused with [`Error::Config`] saying why.
pub fn export(
    model: &Ensemble,
    config: &ModelConfig,
    metadata: &[(String, String)],
) -> Result<Vec<u8>> {
    Ok(model_proto(model, config, metadata)?.encode_to_vec())
}

/// Refuses to write an ONNX model over an existing file that is neither named `.onnx` nor an
/// ONNX model (its first byte is not the ModelProto's `ir_version` field): `--onnx data.txt`
/// would replace the data.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_target(path: &std::path::Path) -> Result<()> {
    use std::io::Read as _;
    if !path.is_file()
        || path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("onnx"))
    {
        return Ok(());
    }
    let mut first = [0u8; 1];
    let read = std::fs::File::open(path).and_then(|mut f| f.read(&mut first));
    match read {
        Ok(0) => Ok(()),
        Ok(_) if first[0] == 0x08 => Ok(()),
        Ok(_) => Err(Error::Config(format!(
            "{} exists and is not an ONNX model: an export would replace it; remove it, or name another file",
            path.display()
        ))),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// [`export`]'s model as protobuf messages, before encoding.
pub fn model_proto(
    model: &Ensemble,
    config: &ModelConfig,
    metadata: &[(String, String)],
) -> Result<ModelProto> {
    check(model, config)?;
    let mut properties = vec![
        ("loss", serde_name(&config.loss)),
        ("view", serde_name(&config.view)),
        ("columns", join(&config.columns)),
        ("transform", config.transform.clone()),
        ("source_features", config.source_features.to_string()),
        ("n_in", config.n_in.to_string()),
        ("widths", join(&config.widths)),
    ]
    .into_iter()
    .chain((model.len() > 1).then(|| ("members", model.len().to_string())))
    .chain((config.norm != Norm::None).then(|| ("norm", config.norm.name().to_string())))
    .chain(
        (config.attention_heads > 0)
            .then(|| ("attention_heads", config.attention_heads.to_string())),
    )
    .map(|(k, v)| (k.to_string(), v))
    .collect::<Vec<_>>();
    // What trained the model, when its config says: the data, and the setup as JSON.
    if let Some(data) = &config.training_data {
        properties.push(("training_data".into(), data.clone()));
    }
    if let Some(setup) = &config.setup {
        properties.push(("setup".into(), setup.to_string()));
    }
    for (key, value) in metadata {
        if properties.iter().any(|(k, _)| k == key) {
            return Err(refuse(format!(
                "the metadata key '{}' is given twice (ONNX metadata keys must be distinct; the exporter writes loss, view, columns, transform, source_features, n_in and widths itself)",
                crate::error::printable(key)
            )));
        }
        properties.push((key.clone(), value.clone()));
    }

    let graph = graph(model, config)?;
    let proto = ModelProto {
        ir_version: Some(IR_VERSION),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(OPSET),
        }],
        producer_name: Some(PRODUCER.into()),
        producer_version: Some(env!("CARGO_PKG_VERSION").into()),
        domain: None,
        model_version: None,
        doc_string: Some(format!(
            "A distillrank ranking model ({} loss, {} features): '{INPUT}' float32 [batch, {}] holds raw LETOR feature vectors (column j of the file at index j - 1, absent sparse entries 0){}; '{OUTPUT}' float32 [batch] holds the scores `distillrank predict` gives them (higher ranks first).",
            serde_name(&config.loss),
            serde_name(&config.view),
            config.source_features,
            if config.attention_heads > 0 {
                ", the documents of ONE query: a listwise model's documents attend to each other, so run the graph once per query"
            } else {
                ""
            }
        )),
        graph: Some(graph),
        metadata_props: properties
            .into_iter()
            .map(|(key, value)| StringStringEntryProto {
                key: Some(key),
                value: Some(value),
            })
            .collect(),
    };
    if proto.encoded_len() > MAX_MODEL_BYTES {
        return Err(refuse(format!(
            "the ONNX file would take {} bytes, over protobuf's 2 GiB limit for one file; export a model with smaller widths",
            proto.encoded_len()
        )));
    }
    Ok(proto)
}

/// Refuses a model the graph cannot express, saying why.
fn check(model: &Ensemble, config: &ModelConfig) -> Result<()> {
    if model.is_empty() || model.len() != config.members {
        return Err(refuse(format!(
            "the config says {} members, the model holds {}",
            config.members,
            model.len()
        )));
    }
    for (m, member) in model.members.iter().enumerate() {
        check_member(member, config).map_err(|e| match e {
            Error::Config(why) if model.len() > 1 => refuse(format!("member {m}: {why}")),
            e => e,
        })?;
    }
    Ok(())
}

/// [`check`] of one member.
fn check_member(model: &Mlp<f32>, config: &ModelConfig) -> Result<()> {
    if config.transform != "signed_log1p" && config.transform != "none" {
        return Err(refuse(format!(
            "unknown transform '{}' (the graph expresses \"signed_log1p\" and \"none\")",
            crate::error::printable(&config.transform)
        )));
    }
    let Some(first) = model.layers.first() else {
        return Err(refuse("the model has no layers".into()));
    };
    if config.n_in == 0 || config.columns.is_empty() {
        return Err(refuse("the model reads no columns (n_in is 0)".into()));
    }
    if let Some(&c) = config
        .columns
        .iter()
        .find(|&&c| c == 0 || c > config.source_features)
    {
        return Err(refuse(format!(
            "column {c} is outside the data's columns 1..={} (source_features)",
            config.source_features
        )));
    }
    if config.columns.len() != first.n_in || config.n_in != first.n_in {
        return Err(refuse(format!(
            "the config reads {} columns (n_in {}), the weights take {} inputs",
            config.columns.len(),
            config.n_in,
            first.n_in
        )));
    }
    for (l, layer) in model.layers.iter().enumerate() {
        if layer.n_in == 0 || layer.n_out == 0 {
            return Err(refuse(format!("layer {l} has no inputs or no outputs")));
        }
        if layer.weight.len() != layer.n_in * layer.n_out || layer.bias.len() != layer.n_out {
            return Err(refuse(format!(
                "layer {l} holds {} weights and {} biases, expected {} x {} and {}",
                layer.weight.len(),
                layer.bias.len(),
                layer.n_in,
                layer.n_out,
                layer.n_out
            )));
        }
        if l > 0 && layer.n_in != model.layers[l - 1].n_out {
            return Err(refuse(format!(
                "layer {l} takes {} inputs, layer {} gives {}",
                layer.n_in,
                l - 1,
                model.layers[l - 1].n_out
            )));
        }
    }
    let last = model.layers.len() - 1;
    if model.layers[last].n_out != 1 {
        return Err(refuse(format!(
            "the last layer gives {} outputs, a ranking model gives one score",
            model.layers[last].n_out
        )));
    }
    if config.widths != model.widths() {
        return Err(refuse(format!(
            "the config's widths {:?} disagree with the weights' {:?}",
            config.widths,
            model.widths()
        )));
    }
    if model.norm() != config.norm {
        return Err(refuse(format!(
            "the config says norm {}, the weights hold {}",
            config.norm.name(),
            model.norm().name()
        )));
    }
    if !model.norms.is_empty()
        && (model.norms.len() != last
            || model
                .norms
                .iter()
                .zip(&model.layers)
                .any(|(n, l)| n.gain.len() != l.n_out || n.shift.len() != l.n_out))
    {
        return Err(refuse(
            "the layer normalisations do not match the hidden layers".into(),
        ));
    }
    if model.attention_heads() != config.attention_heads {
        return Err(refuse(format!(
            "the config says {} attention heads, the weights hold {}",
            config.attention_heads,
            model.attention_heads()
        )));
    }
    if let Some(a) = &model.attention {
        let d = model.layers[last].n_in;
        if a.heads == 0
            || !d.is_multiple_of(a.heads)
            || a.projections().iter().any(|p| {
                p.n_in != d || p.n_out != d || p.weight.len() != d * d || p.bias.len() != d
            })
        {
            return Err(refuse(format!(
                "the attention's projections do not match the last hidden width {d} in {} heads",
                a.heads
            )));
        }
    }
    if !model.all_finite() {
        return Err(refuse(
            "the model holds NaN or infinite weights (training diverged)".into(),
        ));
    }
    Ok(())
}

/// The graph: Gather, the transform, each member's layers, the members' Mean, Reshape.
fn graph(model: &Ensemble, config: &ModelConfig) -> Result<GraphProto> {
    let mut nodes = Vec::new();
    let mut initializers = Vec::new();

    let indices = config
        .columns
        .iter()
        .map(|&c| dim(c - 1))
        .collect::<Result<Vec<_>>>()?;
    initializers.push(int64_tensor(
        "columns",
        vec![dim(indices.len())?],
        indices,
        "the model's columns, 0-based (a LETOR file's column j is index j - 1)",
    ));
    nodes.push(node(
        "Gather",
        "gather_columns",
        &[INPUT, "columns"],
        "selected",
        vec![int_attribute("axis", 1)],
    ));
    let mut current = "selected".to_string();
    if config.transform == "signed_log1p" {
        initializers.push(float_tensor("one", vec![], &[1.0], "the 1 of log(1 + |x|)"));
        nodes.push(node("Sign", "sign", &["selected"], "sign", vec![]));
        nodes.push(node("Abs", "abs", &["selected"], "abs", vec![]));
        nodes.push(node(
            "Add",
            "abs_plus_one",
            &["abs", "one"],
            "abs_plus_one",
            vec![],
        ));
        nodes.push(node("Log", "log", &["abs_plus_one"], "log1p_abs", vec![]));
        nodes.push(node(
            "Mul",
            "signed_log1p",
            &["sign", "log1p_abs"],
            "inputs",
            vec![],
        ));
        current = "inputs".into();
    }
    if let Some(maps) = &config.input_maps {
        current = input_maps(maps, &current, &mut nodes, &mut initializers)?;
    }
    let inputs = current;
    let mut scores = Vec::with_capacity(model.len());
    for (m, member) in model.members.iter().enumerate() {
        // One model's tensors keep the names of the weights file; members are prefixed.
        let prefix = if model.len() == 1 {
            String::new()
        } else {
            format!("members.{m}.")
        };
        scores.push(layers(
            member,
            &prefix,
            &inputs,
            &mut nodes,
            &mut initializers,
        )?);
    }
    let current = if model.len() == 1 {
        scores.remove(0)
    } else {
        let inputs: Vec<&str> = scores.iter().map(String::as_str).collect();
        nodes.push(node(
            "Mean",
            "members_mean",
            &inputs,
            "members.mean",
            vec![],
        ));
        "members.mean".to_string()
    };
    finish(current, nodes, initializers, config)
}

/// One MLP's Gemm and Relu nodes from `current`, its tensors named `{prefix}layers.<l>.*`;
/// returns the name of its (batch, 1) scores.
fn layers(
    model: &Mlp<f32>,
    prefix: &str,
    inputs: &str,
    nodes: &mut Vec<NodeProto>,
    initializers: &mut Vec<TensorProto>,
) -> Result<String> {
    let mut current = inputs.to_string();
    let node_prefix = prefix.replace('.', "_").replace("members_", "member");
    let last = model.layers.len() - 1;
    for (l, layer) in model.layers.iter().enumerate() {
        if let (Some(attention), true) = (&model.attention, l == last) {
            current = attention_nodes(attention, prefix, &current, nodes, initializers)?;
        }
        let (weight, bias) = (
            format!("{prefix}layers.{l}.weight"),
            format!("{prefix}layers.{l}.bias"),
        );
        initializers.push(float_tensor(
            &weight,
            vec![dim(layer.n_in)?, dim(layer.n_out)?],
            &layer.weight,
            "(n_in, n_out), row-major, as saved",
        ));
        initializers.push(float_tensor(
            &bias,
            vec![dim(layer.n_out)?],
            &layer.bias,
            "",
        ));
        let linear = format!("{prefix}layers.{l}.linear");
        nodes.push(gemm(
            &format!("{node_prefix}layer{l}_gemm"),
            [&current, &weight, &bias],
            &linear,
        ));
        current = linear;
        if let Some(norm) = model.norms.get(l) {
            let (gain, shift, normalised) = (
                format!("{prefix}layers.{l}.norm.gain"),
                format!("{prefix}layers.{l}.norm.shift"),
                format!("{prefix}layers.{l}.norm"),
            );
            initializers.push(float_tensor(&gain, vec![dim(layer.n_out)?], &norm.gain, ""));
            initializers.push(float_tensor(
                &shift,
                vec![dim(layer.n_out)?],
                &norm.shift,
                "",
            ));
            nodes.push(node(
                "LayerNormalization",
                &format!("{node_prefix}layer{l}_norm"),
                &[&current, &gain, &shift],
                &normalised,
                vec![
                    int_attribute("axis", -1),
                    float_attribute("epsilon", crate::model::mlp::LAYER_NORM_EPS as f32),
                ],
            ));
            current = normalised;
        }
        if l != last {
            let relu = format!("{prefix}layers.{l}.relu");
            nodes.push(node(
                "Relu",
                &format!("{node_prefix}layer{l}_relu"),
                &[&current],
                &relu,
                vec![],
            ));
            current = relu;
        }
    }
    Ok(current)
}

/// The listwise family's self-attention over the graph's rows, one query's documents, and its
/// latent cross, from the last hidden layer's outputs `hidden` (batch, d); tensors named
/// `{prefix}attention.<query|key|value>.*` as saved. Returns the name of h ⊙ (1 + a):
///
/// ```text
/// Q, K, V = Gemm(h, W, b)                                   (batch, d) each
/// Reshape [-1, heads, d_h], Transpose -> (heads, batch, d_h)  (K to (heads, d_h, batch))
/// Softmax(MatMul(Q, K) * 1/sqrt(d_h), axis -1)               (heads, batch, batch)
/// MatMul(P, V), Transpose, Reshape [-1, d] -> a             (batch, d)
/// h * (a + 1)
/// ```
fn attention_nodes(
    attention: &crate::model::Attention<f32>,
    prefix: &str,
    hidden: &str,
    nodes: &mut Vec<NodeProto>,
    initializers: &mut Vec<TensorProto>,
) -> Result<String> {
    let node_prefix = prefix.replace('.', "_").replace("members_", "member");
    let (d, heads, dh) = (attention.width(), attention.heads, attention.head_width());
    let name = |what: &str| format!("{prefix}attention.{what}");
    let op = |what: &str| format!("{node_prefix}attention_{what}");
    initializers.push(int64_tensor(
        &name("heads_shape"),
        vec![3],
        vec![-1, dim(heads)?, dim(dh)?],
        "(batch, d) -> (batch, heads, d_h)",
    ));
    initializers.push(int64_tensor(
        &name("width_shape"),
        vec![2],
        vec![-1, dim(d)?],
        "(batch, heads, d_h) -> (batch, d)",
    ));
    initializers.push(float_tensor(
        &name("scale"),
        vec![],
        &[(1.0 / (dh as f64).sqrt()) as f32],
        "1 / sqrt(d_h)",
    ));
    initializers.push(float_tensor(
        &name("one"),
        vec![],
        &[1.0],
        "the 1 of h * (1 + a)",
    ));
    let mut projected = Vec::new();
    for (what, p, perm) in [
        ("query", &attention.query, [1, 0, 2]),
        ("key", &attention.key, [1, 2, 0]),
        ("value", &attention.value, [1, 0, 2]),
    ] {
        let (weight, bias) = (
            name(&format!("{what}.weight")),
            name(&format!("{what}.bias")),
        );
        initializers.push(float_tensor(
            &weight,
            vec![dim(p.n_in)?, dim(p.n_out)?],
            &p.weight,
            "(d, d), row-major, as saved",
        ));
        initializers.push(float_tensor(&bias, vec![dim(p.n_out)?], &p.bias, ""));
        let linear = name(what);
        nodes.push(gemm(
            &op(&format!("{what}_gemm")),
            [hidden, &weight, &bias],
            &linear,
        ));
        let split = name(&format!("{what}.heads"));
        nodes.push(node(
            "Reshape",
            &op(&format!("{what}_reshape")),
            &[&linear, &name("heads_shape")],
            &split,
            vec![],
        ));
        let transposed = name(&format!("{what}.transposed"));
        nodes.push(node(
            "Transpose",
            &op(&format!("{what}_transpose")),
            &[&split],
            &transposed,
            vec![ints_attribute("perm", perm.to_vec())],
        ));
        projected.push(transposed);
    }
    let steps: [(&str, &str, Vec<&str>, Vec<AttributeProto>); 8] = [
        (
            "MatMul",
            "logits",
            vec![&projected[0], &projected[1]],
            vec![],
        ),
        ("Mul", "scaled", vec!["logits", "scale"], vec![]),
        (
            "Softmax",
            "probabilities",
            vec!["scaled"],
            vec![int_attribute("axis", -1)],
        ),
        (
            "MatMul",
            "heads_gathered",
            vec!["probabilities", &projected[2]],
            vec![],
        ),
        (
            "Transpose",
            "gathered_by_document",
            vec!["heads_gathered"],
            vec![ints_attribute("perm", vec![1, 0, 2])],
        ),
        (
            "Reshape",
            "gathered",
            vec!["gathered_by_document", "width_shape"],
            vec![],
        ),
        ("Add", "one_plus_gathered", vec!["gathered", "one"], vec![]),
        ("Mul", "crossed", vec![hidden, "one_plus_gathered"], vec![]),
    ];
    for (kind, output, inputs, attributes) in steps {
        // Names of this block's own tensors take its prefix; the hidden layer's and the
        // projections' are already full names.
        let inputs: Vec<String> = inputs
            .into_iter()
            .map(|i| {
                if i == hidden || projected.iter().any(|p| p == i) {
                    i.to_string()
                } else {
                    name(i)
                }
            })
            .collect();
        let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        nodes.push(node(kind, &op(output), &inputs, &name(output), attributes));
    }
    Ok(name("crossed"))
}

/// The graph around its (batch, 1) scores `current`: Reshape to (batch), the input and output.
fn finish(
    current: String,
    mut nodes: Vec<NodeProto>,
    mut initializers: Vec<TensorProto>,
    config: &ModelConfig,
) -> Result<GraphProto> {
    initializers.push(int64_tensor(
        "score_shape",
        vec![1],
        vec![-1],
        "[-1]: (batch, 1) -> (batch)",
    ));
    nodes.push(node(
        "Reshape",
        "score_reshape",
        &[&current, "score_shape"],
        OUTPUT,
        vec![],
    ));

    Ok(GraphProto {
        node: nodes,
        name: Some("distillrank".into()),
        initializer: initializers,
        doc_string: None,
        input: vec![value_info(
            INPUT,
            vec![
                Dimension {
                    value: Some(dimension::Value::DimParam(BATCH.into())),
                    denotation: None,
                },
                Dimension {
                    value: Some(dimension::Value::DimValue(dim(config.source_features)?)),
                    denotation: None,
                },
            ],
            "raw LETOR feature vectors: column j of the file at index j - 1, absent sparse entries 0",
        )],
        output: vec![value_info(
            OUTPUT,
            vec![Dimension {
                value: Some(dimension::Value::DimParam(BATCH.into())),
                denotation: None,
            }],
            "one score a document; higher ranks first",
        )],
        value_info: Vec::new(),
    })
}

/// The fitted maps after the transform ([`crate::data::transform`]), from `input` [batch, n]:
/// returns the name of their output.
///
/// Affine maps are `(x - shift) * scale`. Knots maps find each value's segment by counting the
/// knots at or below it, then read the segment's first knot, inverse width, rise and first value
/// from flat tables (a column's `c` knots give it `c + 1` segments, the first and the last flat),
/// with the arithmetic of [`ColumnMap::apply`] operation for operation:
///
/// ```text
/// count = ReduceSum(Cast(x [batch, n, 1] >= knots [n, K]))       knots padded with +inf
/// at = count + column * (K + 1)                                   Gather(tables, at)
/// base + Clip((x - lo) * inv_width, 0, 1) * rise
/// ```
fn input_maps(
    maps: &[ColumnMap],
    input: &str,
    nodes: &mut Vec<NodeProto>,
    initializers: &mut Vec<TensorProto>,
) -> Result<String> {
    let n = dim(maps.len())?;
    if let Some(affine) = maps
        .iter()
        .map(|m| match m {
            ColumnMap::Affine { shift, scale } => Some((*shift, *scale)),
            ColumnMap::Knots { .. } => None,
        })
        .collect::<Option<Vec<_>>>()
    {
        let (shift, scale): (Vec<f32>, Vec<f32>) = affine.into_iter().unzip();
        initializers.push(float_tensor(
            "map_shift",
            vec![n],
            &shift,
            "each column's shift",
        ));
        initializers.push(float_tensor(
            "map_scale",
            vec![n],
            &scale,
            "each column's scale",
        ));
        nodes.push(node(
            "Sub",
            "map_sub",
            &[input, "map_shift"],
            "map_shifted",
            vec![],
        ));
        nodes.push(node(
            "Mul",
            "map_mul",
            &["map_shifted", "map_scale"],
            "mapped",
            vec![],
        ));
        return Ok("mapped".into());
    }
    let knots: Vec<(&[f32], &[f32])> = maps
        .iter()
        .map(|m| match m {
            ColumnMap::Knots { knots, values } => Ok((knots.as_slice(), values.as_slice())),
            ColumnMap::Affine { .. } => Err(refuse(
                "its input maps mix affine and knots maps; a fitted transform gives one kind"
                    .into(),
            )),
        })
        .collect::<Result<_>>()?;
    let most = knots.iter().map(|(k, _)| k.len()).max().unwrap_or(1);
    let segments = most + 1;
    let mut padded = Vec::with_capacity(maps.len() * most);
    let (mut base, mut lo, mut inv_width, mut rise) = (vec![], vec![], vec![], vec![]);
    for (k, v) in &knots {
        padded.extend_from_slice(k);
        padded.extend(std::iter::repeat_n(f32::INFINITY, most - k.len()));
        for count in 0..segments {
            let segment = match count {
                0 => (v[0], 0.0, 0.0, 0.0),
                c if c < k.len() => (v[c - 1], k[c - 1], 1.0 / (k[c] - k[c - 1]), v[c] - v[c - 1]),
                _ => (v[k.len() - 1], 0.0, 0.0, 0.0),
            };
            base.push(segment.0);
            lo.push(segment.1);
            inv_width.push(segment.2);
            rise.push(segment.3);
        }
    }
    let offsets: Vec<i64> = (0..maps.len()).map(|j| (j * segments) as i64).collect();
    let flat = dim(maps.len() * segments)?;
    initializers.push(float_tensor(
        "map_knots",
        vec![n, dim(most)?],
        &padded,
        "each column's knots, padded with +inf",
    ));
    initializers.push(int64_tensor(
        "map_offsets",
        vec![n],
        offsets,
        "where each column's segments start in the tables",
    ));
    initializers.push(float_tensor(
        "map_base",
        vec![flat],
        &base,
        "each segment's first value",
    ));
    initializers.push(float_tensor(
        "map_lo",
        vec![flat],
        &lo,
        "each segment's first knot",
    ));
    initializers.push(float_tensor(
        "map_inv_width",
        vec![flat],
        &inv_width,
        "1 / each segment's width (0: flat)",
    ));
    initializers.push(float_tensor(
        "map_rise",
        vec![flat],
        &rise,
        "each segment's rise",
    ));
    initializers.push(float_tensor("map_zero", vec![], &[0.0], ""));
    initializers.push(float_tensor("map_one", vec![], &[1.0], ""));
    initializers.push(int64_tensor(
        "map_axis",
        vec![1],
        vec![2],
        "the knots' axis",
    ));
    nodes.push(node(
        "Unsqueeze",
        "map_unsqueeze",
        &[input, "map_axis"],
        "map_x",
        vec![],
    ));
    nodes.push(node(
        "GreaterOrEqual",
        "map_compare",
        &["map_x", "map_knots"],
        "map_at_or_above",
        vec![],
    ));
    nodes.push(node(
        "Cast",
        "map_cast",
        &["map_at_or_above"],
        "map_below",
        vec![int_attribute("to", proto::INT64 as i64)],
    ));
    nodes.push(node(
        "ReduceSum",
        "map_count",
        &["map_below", "map_axis"],
        "map_count",
        vec![int_attribute("keepdims", 0)],
    ));
    nodes.push(node(
        "Add",
        "map_index",
        &["map_count", "map_offsets"],
        "map_at",
        vec![],
    ));
    for table in ["base", "lo", "inv_width", "rise"] {
        nodes.push(node(
            "Gather",
            &format!("map_gather_{table}"),
            &[&format!("map_{table}"), "map_at"],
            &format!("map_segment_{table}"),
            vec![int_attribute("axis", 0)],
        ));
    }
    nodes.push(node(
        "Sub",
        "map_sub",
        &[input, "map_segment_lo"],
        "map_from_lo",
        vec![],
    ));
    nodes.push(node(
        "Mul",
        "map_scale",
        &["map_from_lo", "map_segment_inv_width"],
        "map_t",
        vec![],
    ));
    nodes.push(node(
        "Clip",
        "map_clip",
        &["map_t", "map_zero", "map_one"],
        "map_t01",
        vec![],
    ));
    nodes.push(node(
        "Mul",
        "map_rise",
        &["map_t01", "map_segment_rise"],
        "map_rises",
        vec![],
    ));
    nodes.push(node(
        "Add",
        "map_add",
        &["map_segment_base", "map_rises"],
        "mapped",
        vec![],
    ));
    Ok("mapped".into())
}

fn refuse(message: String) -> Error {
    Error::Config(format!("the model cannot be exported to ONNX: {message}"))
}

/// A size as an ONNX dimension (int64).
fn dim(n: usize) -> Result<i64> {
    i64::try_from(n).map_err(|_| refuse(format!("the size {n} does not fit an ONNX dimension")))
}

/// An enum's serde name ("ranknet", "regular").
fn serde_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}

fn join(values: &[usize]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn node(
    op_type: &str,
    name: &str,
    inputs: &[&str],
    output: &str,
    attribute: Vec<AttributeProto>,
) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.to_string()],
        name: Some(name.to_string()),
        op_type: Some(op_type.to_string()),
        domain: Some(String::new()),
        attribute,
        doc_string: None,
    }
}

/// `output = input . weight + bias`, the weight (n_in, n_out) as saved (transB 0).
fn gemm(name: &str, [input, weight, bias]: [&str; 3], output: &str) -> NodeProto {
    node(
        "Gemm",
        name,
        &[input, weight, bias],
        output,
        vec![
            float_attribute("alpha", 1.0),
            float_attribute("beta", 1.0),
            int_attribute("transA", 0),
            int_attribute("transB", 0),
        ],
    )
}

fn int_attribute(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(proto::ATTRIBUTE_INT),
        i: Some(value),
        ..Default::default()
    }
}

fn ints_attribute(name: &str, values: Vec<i64>) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(proto::ATTRIBUTE_INTS),
        ints: values,
        ..Default::default()
    }
}

fn float_attribute(name: &str, value: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(proto::ATTRIBUTE_FLOAT),
        f: Some(value),
        ..Default::default()
    }
}

/// A float32 initializer, its values as little-endian `raw_data`.
fn float_tensor(name: &str, dims: Vec<i64>, values: &[f32], doc: &str) -> TensorProto {
    TensorProto {
        dims,
        data_type: Some(proto::FLOAT),
        raw_data: Some(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        name: Some(name.into()),
        doc_string: (!doc.is_empty()).then(|| doc.to_string()),
        ..Default::default()
    }
}

fn int64_tensor(name: &str, dims: Vec<i64>, values: Vec<i64>, doc: &str) -> TensorProto {
    TensorProto {
        dims,
        data_type: Some(proto::INT64),
        int64_data: values,
        name: Some(name.into()),
        doc_string: Some(doc.into()),
        ..Default::default()
    }
}

fn value_info(name: &str, dims: Vec<Dimension>, doc: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(proto::type_proto::Value::TensorType(
                proto::type_proto::Tensor {
                    elem_type: Some(proto::FLOAT),
                    shape: Some(TensorShapeProto { dim: dims }),
                },
            )),
        }),
        doc_string: Some(doc.into()),
    }
}

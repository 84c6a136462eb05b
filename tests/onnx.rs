//! ONNX export (`distillrank::onnx`, `distillrank export`): the exported bytes decode back with the
//! same protobuf types into the graph the module documents, models the graph cannot express are
//! refused, and a small interpreter of the exported nodes scores random raw rows exactly as
//! `model_io::model_inputs` + `Mlp::predict` do.

#![cfg(not(target_arch = "wasm32"))]
// The reference evaluator uses the platform's exp and ln, independently of the library's crate::math.
#![allow(clippy::disallowed_methods)]

use std::collections::HashMap;
use std::path::Path;

#[path = "common/cli.rs"]
mod cli_run;
use cli_run::distillrank;

use prost::Message as _;

use distillrank::data::prepare::{signed_log1p, signed_log1p_value, FeatureView};
use distillrank::data::transform::Transform;
use distillrank::data::Dataset;
use distillrank::error::Error;
use distillrank::model::LossKind;
use distillrank::model::{Ensemble, Mlp};
use distillrank::model_io::{self, ModelConfig};
use distillrank::onnx::proto::tensor_shape_proto::dimension::Value as Dim;
use distillrank::onnx::proto::{self, type_proto, ModelProto, ValueInfoProto};
use distillrank::onnx::{self as onnx_export, export};
use distillrank::rng::Rng;

/// A random model of `n_in` inputs reading distinct random columns of `source_features`, with
/// random (not zero) biases.
fn random_model(
    source_features: usize,
    n_in: usize,
    widths: &[usize],
    transform: &str,
    seed: u64,
) -> (Ensemble, ModelConfig) {
    random_ensemble(source_features, n_in, widths, transform, seed, 1)
}

/// [`random_model`] with `members` members, each from its own seed.
fn random_ensemble(
    source_features: usize,
    n_in: usize,
    widths: &[usize],
    transform: &str,
    seed: u64,
    members: usize,
) -> (Ensemble, ModelConfig) {
    let mut rng = Rng::new(seed ^ 0xb1a5);
    let members = (0..members as u64)
        .map(|m| {
            let mut model = Mlp::<f32>::new(n_in, widths, seed + 1000 * m);
            for layer in &mut model.layers {
                for b in &mut layer.bias {
                    *b = rng.uniform_range(-0.5, 0.5) as f32;
                }
            }
            model
        })
        .collect();
    let model = Ensemble { members };
    let mut all: Vec<usize> = (1..=source_features).collect();
    rng.shuffle(&mut all);
    let columns = all[..n_in].to_vec();
    let mut config = ModelConfig::new(
        &model,
        LossKind::RankNet,
        FeatureView::Regular,
        columns,
        source_features,
    );
    config.transform = transform.into();
    (model, config)
}

/// Raw LETOR-like rows: zeros (a third of the values), negatives, small and large magnitudes up to
/// `largest` (1e5 for a model with the signed log1p; without it, values that large would make
/// both sides' float32 sums differ by more than the tolerance for reasons of rounding alone).
fn random_rows(n: usize, width: usize, largest: f64, seed: u64) -> Vec<f32> {
    let mut rng = Rng::new(seed);
    (0..n * width)
        .map(|_| match rng.int_range(0, 5) {
            0 | 1 => 0.0,
            2 => rng.uniform() as f32,
            3 => (rng.normal() * 5.0).clamp(-largest, largest) as f32,
            4 => -(rng.uniform_range(0.0, largest.min(1000.0)) as f32),
            _ => rng.uniform_range(0.0, largest) as f32,
        })
        .collect()
}

/// What `distillrank predict` computes on these raw rows.
fn predict(model: &Ensemble, config: &ModelConfig, rows: &[f32], n: usize) -> Vec<f32> {
    let data = Dataset {
        n_features: config.source_features,
        features: rows.to_vec().into(),
        grades: vec![0; n],
        group_offsets: vec![0, n],
        qids: vec![1],
        source: None,
        feature_names: None,
    };
    let inputs = model_io::model_inputs(&data, config, Path::new("rows"), false).unwrap();
    model.predict(&inputs)
}

// ---- A tiny interpreter of the exported graph -------------------------------------------------

#[derive(Clone, Debug)]
enum Tensor {
    F32(Vec<usize>, Vec<f32>),
    I64(Vec<usize>, Vec<i64>),
}

impl Tensor {
    fn f32(&self) -> (&[usize], &[f32]) {
        match self {
            Tensor::F32(s, v) => (s, v),
            Tensor::I64(..) => panic!("expected a float tensor"),
        }
    }
    fn i64(&self) -> (&[usize], &[i64]) {
        match self {
            Tensor::I64(s, v) => (s, v),
            Tensor::F32(..) => panic!("expected an int64 tensor"),
        }
    }
}

fn initializer(t: &proto::TensorProto) -> Tensor {
    let shape: Vec<usize> = t.dims.iter().map(|&d| d as usize).collect();
    let n: usize = shape.iter().product();
    let tensor = match t.data_type {
        Some(proto::FLOAT) => {
            let values: Vec<f32> = match &t.raw_data {
                Some(raw) => raw
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
                None => t.float_data.clone(),
            };
            Tensor::F32(shape, values)
        }
        Some(proto::INT64) => {
            let values: Vec<i64> = match &t.raw_data {
                Some(raw) => raw
                    .chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
                    .collect(),
                None => t.int64_data.clone(),
            };
            Tensor::I64(shape, values)
        }
        other => panic!("initializer {:?}: data type {other:?}", t.name),
    };
    let len = match &tensor {
        Tensor::F32(_, v) => v.len(),
        Tensor::I64(_, v) => v.len(),
    };
    assert_eq!(
        len, n,
        "initializer {:?}: values do not fill its dims",
        t.name
    );
    tensor
}

fn attribute_i(node: &proto::NodeProto, name: &str, default: i64) -> i64 {
    match node
        .attribute
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
    {
        Some(a) => {
            assert_eq!(a.r#type, Some(proto::ATTRIBUTE_INT), "{name}");
            a.i.expect("an INT attribute has i")
        }
        None => default,
    }
}

fn attribute_f(node: &proto::NodeProto, name: &str, default: f32) -> f32 {
    match node
        .attribute
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
    {
        Some(a) => {
            assert_eq!(a.r#type, Some(proto::ATTRIBUTE_FLOAT), "{name}");
            a.f.expect("a FLOAT attribute has f")
        }
        None => default,
    }
}

fn elementwise(x: &Tensor, f: impl Fn(f32) -> f32) -> Tensor {
    let (s, v) = x.f32();
    Tensor::F32(s.to_vec(), v.iter().map(|&x| f(x)).collect())
}

/// The output shape of a op b under numpy's broadcasting (shapes aligned at their last axis, an
/// axis of 1 stretched), and for each output value the flat indices of its operands.
fn broadcast_indices(sa: &[usize], sb: &[usize]) -> (Vec<usize>, Vec<(usize, usize)>) {
    let rank = sa.len().max(sb.len());
    let pad = |s: &[usize]| -> Vec<usize> {
        let mut p = vec![1; rank - s.len()];
        p.extend_from_slice(s);
        p
    };
    let (pa, pb) = (pad(sa), pad(sb));
    let shape: Vec<usize> = pa
        .iter()
        .zip(&pb)
        .map(|(&x, &y)| {
            assert!(
                x == y || x == 1 || y == 1,
                "cannot broadcast {sb:?} with {sa:?}"
            );
            x.max(y)
        })
        .collect();
    let total: usize = shape.iter().product();
    let index = |p: &[usize], mut flat: usize| -> usize {
        let (mut at, mut stride) = (0, 1);
        for k in (0..rank).rev() {
            let i = flat % shape[k];
            flat /= shape[k];
            if p[k] != 1 {
                at += i * stride;
            }
            stride *= p[k];
        }
        at
    };
    let pairs = (0..total).map(|f| (index(&pa, f), index(&pb, f))).collect();
    (shape, pairs)
}

/// a op b on floats, under numpy's broadcasting.
fn broadcast(a: &Tensor, b: &Tensor, op: impl Fn(f32, f32) -> f32) -> Tensor {
    let ((sa, va), (sb, vb)) = (a.f32(), b.f32());
    let (shape, pairs) = broadcast_indices(sa, sb);
    Tensor::F32(
        shape,
        pairs.iter().map(|&(i, j)| op(va[i], vb[j])).collect(),
    )
}

/// Runs the graph on `features` (n x width); returns every value it computed, by name.
fn evaluate(model: &ModelProto, features: &[f32], n: usize) -> HashMap<String, Tensor> {
    let graph = model.graph.as_ref().expect("a graph");
    let mut values: HashMap<String, Tensor> = HashMap::new();
    for t in &graph.initializer {
        values.insert(t.name.clone().unwrap(), initializer(t));
    }
    let input = graph.input[0].name.clone().unwrap();
    values.insert(
        input,
        Tensor::F32(vec![n, features.len() / n], features.to_vec()),
    );
    for node in &graph.node {
        let arg = |i: usize| -> &Tensor {
            let name = &node.input[i];
            values
                .get(name)
                .unwrap_or_else(|| panic!("{name} is used before it is defined"))
        };
        let op = node.op_type.as_deref().unwrap();
        let out = match op {
            "Gather" if attribute_i(node, "axis", 0) == 0 => {
                // A table (1-D) read at every index.
                let ((_, table), (s, idx)) = (arg(0).f32(), arg(1).i64());
                Tensor::F32(s.to_vec(), idx.iter().map(|&i| table[i as usize]).collect())
            }
            "Gather" => {
                assert_eq!(attribute_i(node, "axis", 0), 1);
                let ((s, v), (_, idx)) = (arg(0).f32(), arg(1).i64());
                let (rows, width) = (s[0], s[1]);
                let mut out = Vec::with_capacity(rows * idx.len());
                for r in 0..rows {
                    for &i in idx {
                        let i = if i < 0 { i + width as i64 } else { i } as usize;
                        out.push(v[r * width + i]);
                    }
                }
                Tensor::F32(vec![rows, idx.len()], out)
            }
            "Sign" => elementwise(arg(0), |x| {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else if x == 0.0 {
                    0.0
                } else {
                    x
                }
            }),
            "Abs" => elementwise(arg(0), f32::abs),
            "Log" => elementwise(arg(0), f32::ln),
            "Relu" => elementwise(arg(0), |x| x.max(0.0)),
            "LayerNormalization" => {
                // Over the last axis (the only one the export uses): the mean, then the mean
                // squared deviation, then scale and bias per unit (ONNX's definition).
                assert_eq!(attribute_i(node, "axis", -1), -1);
                let epsilon = attribute_f(node, "epsilon", 1e-5);
                let (shape, x) = arg(0).f32();
                let (gain, shift) = (arg(1).f32().1, arg(2).f32().1);
                let n = *shape.last().unwrap();
                let mut out = Vec::with_capacity(x.len());
                for row in x.chunks_exact(n) {
                    let mean = row.iter().sum::<f32>() / n as f32;
                    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / n as f32;
                    let rstd = 1.0 / (var + epsilon).sqrt();
                    out.extend(
                        row.iter()
                            .enumerate()
                            .map(|(j, v)| gain[j] * ((v - mean) * rstd) + shift[j]),
                    );
                }
                Tensor::F32(shape.to_vec(), out)
            }
            "Mean" => {
                // Summed in input order, then divided by their count.
                let (shape, first) = arg(0).f32();
                let mut sum = first.to_vec();
                for i in 1..node.input.len() {
                    let (s, v) = arg(i).f32();
                    assert_eq!(s, shape, "Mean of tensors of one shape");
                    sum.iter_mut().zip(v).for_each(|(a, b)| *a += b);
                }
                let k = node.input.len() as f32;
                Tensor::F32(shape.to_vec(), sum.iter().map(|v| v / k).collect())
            }
            "Add" => match (arg(0), arg(1)) {
                (Tensor::I64(sa, va), Tensor::I64(sb, vb)) => {
                    let (shape, pairs) = broadcast_indices(sa, sb);
                    Tensor::I64(shape, pairs.iter().map(|&(i, j)| va[i] + vb[j]).collect())
                }
                (a, b) => broadcast(a, b, |a, b| a + b),
            },
            // A boolean tensor is held as int64 0 and 1 (Cast to INT64 keeps it).
            "GreaterOrEqual" => {
                let ((sa, va), (sb, vb)) = (arg(0).f32(), arg(1).f32());
                let (shape, pairs) = broadcast_indices(sa, sb);
                Tensor::I64(
                    shape,
                    pairs
                        .iter()
                        .map(|&(i, j)| (va[i] >= vb[j]) as i64)
                        .collect(),
                )
            }
            "Cast" => {
                assert_eq!(attribute_i(node, "to", 0), proto::INT64 as i64);
                arg(0).clone()
            }
            "Sub" => broadcast(arg(0), arg(1), |a, b| a - b),
            "Unsqueeze" => {
                let ((s, v), (_, axes)) = (arg(0).f32(), arg(1).i64());
                let mut shape = s.to_vec();
                for &axis in axes {
                    shape.insert(axis as usize, 1);
                }
                Tensor::F32(shape, v.to_vec())
            }
            "Clip" => {
                let (lo, hi) = (arg(1).f32().1[0], arg(2).f32().1[0]);
                elementwise(arg(0), |x| x.max(lo).min(hi))
            }
            "ReduceSum" => {
                let ((s, v), (_, axes)) = (arg(0).i64(), arg(1).i64());
                assert_eq!(axes, [s.len() as i64 - 1], "the last axis");
                assert_eq!(attribute_i(node, "keepdims", 1), 0);
                let last = *s.last().unwrap();
                let sums = v.chunks(last).map(|c| c.iter().sum()).collect();
                Tensor::I64(s[..s.len() - 1].to_vec(), sums)
            }
            "Mul" => broadcast(arg(0), arg(1), |a, b| a * b),
            "MatMul" | "Gemm" => {
                let ((sa, a), (sb, b)) = (arg(0).f32(), arg(1).f32());
                let (alpha, beta, trans_a, trans_b) = if op == "Gemm" {
                    (
                        attribute_f(node, "alpha", 1.0),
                        attribute_f(node, "beta", 1.0),
                        attribute_i(node, "transA", 0),
                        attribute_i(node, "transB", 0),
                    )
                } else {
                    (1.0, 1.0, 0, 0)
                };
                assert_eq!(trans_a, 0);
                let (m, k) = (sa[0], sa[1]);
                let nn = if trans_b == 0 { sb[1] } else { sb[0] };
                assert_eq!(if trans_b == 0 { sb[0] } else { sb[1] }, k);
                let mut out = vec![0f32; m * nn];
                for i in 0..m {
                    for j in 0..nn {
                        let mut s = 0f64;
                        for p in 0..k {
                            let w = if trans_b == 0 {
                                b[p * nn + j]
                            } else {
                                b[j * k + p]
                            };
                            s += a[i * k + p] as f64 * w as f64;
                        }
                        out[i * nn + j] = alpha * s as f32;
                    }
                }
                let product = Tensor::F32(vec![m, nn], out);
                match (op, node.input.get(2)) {
                    ("Gemm", Some(_)) => broadcast(&product, arg(2), |x, c| x + beta * c),
                    _ => product,
                }
            }
            "Reshape" => {
                let ((s, v), (_, shape)) = (arg(0).f32(), arg(1).i64());
                let total: usize = s.iter().product();
                let known: i64 = shape.iter().filter(|&&d| d != -1).product();
                let new: Vec<usize> = shape
                    .iter()
                    .map(|&d| {
                        if d == -1 {
                            total / known as usize
                        } else {
                            d as usize
                        }
                    })
                    .collect();
                assert_eq!(new.iter().product::<usize>(), total);
                Tensor::F32(new, v.to_vec())
            }
            other => panic!("the interpreter does not know {other}"),
        };
        assert_eq!(node.output.len(), 1);
        values.insert(node.output[0].clone(), out);
    }
    values
}

fn scores_of(model: &ModelProto, features: &[f32], n: usize) -> Vec<f32> {
    let output = model.graph.as_ref().unwrap().output[0]
        .name
        .clone()
        .unwrap();
    let values = evaluate(model, features, n);
    let (shape, scores) = values[&output].f32();
    assert_eq!(shape, &[n], "the score is [batch]");
    scores.to_vec()
}

fn decode(bytes: &[u8]) -> ModelProto {
    ModelProto::decode(bytes).expect("the exported bytes decode as a ModelProto")
}

fn dims(v: &ValueInfoProto) -> (i32, Vec<Dim>) {
    match v.r#type.as_ref().and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::TensorType(t)) => (
            t.elem_type.unwrap(),
            t.shape
                .as_ref()
                .unwrap()
                .dim
                .iter()
                .map(|d| d.value.clone().unwrap())
                .collect(),
        ),
        None => panic!("{:?} has no tensor type", v.name),
    }
}

fn metadata(model: &ModelProto) -> HashMap<String, String> {
    model
        .metadata_props
        .iter()
        .map(|p| (p.key.clone().unwrap(), p.value.clone().unwrap()))
        .collect()
}

fn ops(model: &ModelProto) -> Vec<String> {
    model
        .graph
        .as_ref()
        .unwrap()
        .node
        .iter()
        .map(|n| n.op_type.clone().unwrap())
        .collect()
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 + 1e-5 * b.abs()
}

// ---- The tests -----------------------------------------------------------------------------------

#[test]
fn exported_model_decodes_to_the_documented_graph() {
    let (model, config) = random_model(46, 30, &[16, 8, 4], "signed_log1p", 1);
    let pairs = vec![
        ("setup".to_string(), "{\"seed\": 0}".to_string()),
        ("training_data".to_string(), "MQ2008 Fold1".to_string()),
    ];
    let bytes = export(&model, &config, &pairs).unwrap();
    let m = decode(&bytes);

    assert_eq!(m.ir_version, Some(onnx_export::IR_VERSION));
    assert!((8..=9).contains(&m.ir_version.unwrap()));
    assert_eq!(m.opset_import.len(), 1);
    assert_eq!(m.opset_import[0].domain.as_deref().unwrap_or(""), "");
    assert_eq!(m.opset_import[0].version, Some(17));
    assert_eq!(m.producer_name.as_deref(), Some("distillrank"));
    assert_eq!(
        m.producer_version.as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );

    let graph = m.graph.as_ref().unwrap();
    assert_eq!(graph.input.len(), 1);
    assert_eq!(graph.output.len(), 1);
    assert_eq!(graph.input[0].name.as_deref(), Some("features"));
    assert_eq!(graph.output[0].name.as_deref(), Some("score"));
    assert_eq!(
        dims(&graph.input[0]),
        (
            proto::FLOAT,
            vec![Dim::DimParam("batch".into()), Dim::DimValue(46)]
        )
    );
    assert_eq!(
        dims(&graph.output[0]),
        (proto::FLOAT, vec![Dim::DimParam("batch".into())])
    );

    assert_eq!(
        ops(&m),
        [
            "Gather", "Sign", "Abs", "Add", "Log", "Mul", "Gemm", "Relu", "Gemm", "Relu", "Gemm",
            "Relu", "Gemm", "Reshape"
        ]
    );
    for node in &graph.node {
        assert_eq!(node.domain.as_deref().unwrap_or(""), "", "ai.onnx only");
        assert!(node.name.is_some());
    }
    // The gather reads the config's columns, 0-based; every weight is there as saved.
    let columns = graph
        .initializer
        .iter()
        .find(|t| t.name.as_deref() == Some("columns"))
        .unwrap();
    let expected: Vec<i64> = config.columns.iter().map(|&c| c as i64 - 1).collect();
    assert_eq!(initializer(columns).i64().1, expected.as_slice());
    for (l, layer) in model.members[0].layers.iter().enumerate() {
        let w = graph
            .initializer
            .iter()
            .find(|t| t.name.as_deref() == Some(&format!("layers.{l}.weight")))
            .unwrap();
        assert_eq!(w.dims, [layer.n_in as i64, layer.n_out as i64]);
        assert_eq!(initializer(w).f32().1, layer.weight.as_slice());
        let gemm = graph
            .node
            .iter()
            .find(|n| n.name.as_deref() == Some(&format!("layer{l}_gemm")))
            .unwrap();
        assert_eq!(attribute_i(gemm, "transB", -1), 0, "W is (n_in, n_out)");
    }

    let meta = metadata(&m);
    assert_eq!(meta.len(), m.metadata_props.len(), "distinct keys");
    assert_eq!(meta["setup"], "{\"seed\": 0}");
    assert_eq!(meta["training_data"], "MQ2008 Fold1");
    assert_eq!(meta["loss"], "ranknet");
    assert_eq!(meta["view"], "regular");
    assert_eq!(meta["transform"], "signed_log1p");
    assert_eq!(meta["source_features"], "46");
    assert_eq!(meta["widths"], "16,8,4");
    let columns: Vec<usize> = meta["columns"]
        .split(',')
        .map(|c| c.parse().unwrap())
        .collect();
    assert_eq!(columns, config.columns);

    // Encoding is deterministic, and the decoded messages encode to the same bytes.
    assert_eq!(export(&model, &config, &pairs).unwrap(), bytes);
    assert_eq!(m.encode_to_vec(), bytes);
}

#[test]
fn transform_none_has_no_log_nodes() {
    let (model, config) = random_model(10, 10, &[5], "none", 2);
    let m = decode(&export(&model, &config, &[]).unwrap());
    assert_eq!(ops(&m), ["Gather", "Gemm", "Relu", "Gemm", "Reshape"]);
    let (model, config) = random_model(10, 4, &[], "none", 3);
    let m = decode(&export(&model, &config, &[]).unwrap());
    assert_eq!(ops(&m), ["Gather", "Gemm", "Reshape"]);
}

#[test]
fn interpreted_graph_scores_equal_predict() {
    let cases: &[(usize, usize, &[usize], &str)] = &[
        (46, 34, &[16], "signed_log1p"),
        (46, 46, &[16, 8, 4], "signed_log1p"),
        (7, 3, &[1], "signed_log1p"),
        (136, 95, &[64, 32, 16], "signed_log1p"),
        (20, 12, &[8], "none"),
        (20, 20, &[9, 5, 3], "none"),
        (5, 5, &[], "signed_log1p"),
    ];
    let mut worst = 0f32;
    for (i, &(source, n_in, widths, transform)) in cases.iter().enumerate() {
        for seed in 0..3u64 {
            let (model, config) =
                random_model(source, n_in, widths, transform, 100 * i as u64 + seed);
            let m = decode(&export(&model, &config, &[]).unwrap());
            for n in [1, 3, 37] {
                let largest = if transform == "none" { 10.0 } else { 1e5 };
                let rows = random_rows(n, source, largest, seed * 7 + n as u64);
                let expected = predict(&model, &config, &rows, n);
                let got = scores_of(&m, &rows, n);
                assert_eq!(got.len(), n);
                for (d, (&g, &e)) in got.iter().zip(&expected).enumerate() {
                    assert!(
                        close(g, e),
                        "case {i} seed {seed} doc {d}: graph {g}, predict {e}"
                    );
                    worst = worst.max((g - e).abs() / (1.0 + e.abs()));
                }
            }
        }
    }
    eprintln!("largest |graph - predict| / (1 + |predict|): {worst:e}");
}

/// A model with layer normalisation: a LayerNormalization (epsilon 1e-5, the engines') before
/// each hidden ReLU, its gain and shift named as saved, the graph's scores `predict`'s, and the
/// norm in the metadata; an ensemble of such models likewise.
#[test]
fn layer_normalised_models_export_with_their_normalisations() {
    use distillrank::model::Norm;
    for members in [1, 3] {
        let (mut model, _) = random_ensemble(46, 34, &[16, 8], "signed_log1p", 5, members);
        let mut rng = Rng::new(members as u64);
        for member in &mut model.members {
            *member = member.clone().with_norm(Norm::Layer);
            for norm in &mut member.norms {
                for (g, s) in norm.gain.iter_mut().zip(&mut norm.shift) {
                    *g = rng.uniform_range(0.5, 1.5) as f32;
                    *s = rng.uniform_range(-0.5, 0.5) as f32;
                }
            }
        }
        let mut config = ModelConfig::new(
            &model,
            LossKind::RankNet,
            FeatureView::Regular,
            (1..=34).collect(),
            46,
        );
        assert_eq!(config.norm, Norm::Layer);
        let m = decode(&export(&model, &config, &[]).unwrap());
        let norms = ops(&m)
            .iter()
            .filter(|o| *o == "LayerNormalization")
            .count();
        assert_eq!(norms, 2 * members);
        assert_eq!(metadata(&m)["norm"], "layer");
        let initializers: Vec<&str> = m
            .graph
            .as_ref()
            .unwrap()
            .initializer
            .iter()
            .filter_map(|t| t.name.as_deref())
            .collect();
        let prefix = if members == 1 { "" } else { "members.2." };
        assert!(initializers.contains(&format!("{prefix}layers.1.norm.gain").as_str()));
        for n in [1, 37] {
            let rows = random_rows(n, 46, 1e5, n as u64);
            let expected = predict(&model, &config, &rows, n);
            for (d, (g, e)) in scores_of(&m, &rows, n).iter().zip(&expected).enumerate() {
                assert!(
                    close(*g, *e),
                    "{members} members, doc {d}: graph {g}, predict {e}"
                );
            }
        }
        // A config that disagrees with the weights is refused, naming both.
        config.norm = Norm::None;
        let why = refusal(&model, &config, &[]);
        assert!(why.contains("norm none") && why.contains("layer"), "{why}");
    }
}

#[test]
fn graph_signed_log1p_matches_the_preparation() {
    // One input per column, the transform read off the graph's "inputs" value.
    let special = [
        0.0f32,
        -0.0,
        1e-30,
        -1e-30,
        1e-8,
        -1e-8,
        1e-3,
        0.5,
        -0.5,
        1.0,
        -1.0,
        1e4,
        -1e4,
        1e30,
        -1e30,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
    ];
    let width = special.len();
    let mut model = Ensemble::single(Mlp::<f32>::new(width, &[2], 5));
    model.members[0].layers[0]
        .weight
        .iter_mut()
        .for_each(|w| *w = 0.0);
    let mut config = ModelConfig::new(
        &model,
        LossKind::RankNet,
        FeatureView::Regular,
        (1..=width).collect(),
        width,
    );
    config.transform = "signed_log1p".into();
    let m = decode(&export(&model, &config, &[]).unwrap());
    let values = evaluate(&m, &special, 1);
    let (_, got) = values["inputs"].f32();
    for (&x, &g) in special.iter().zip(got) {
        let e = signed_log1p_value(x);
        assert!(
            (g - e).abs() <= 1e-7 + 1e-6 * e.abs(),
            "x = {x:e}: graph {g:e}, preparation {e:e}"
        );
        if x == 0.0 {
            assert_eq!(g, 0.0);
            assert_eq!(e, 0.0);
        }
    }
}

fn refusal(model: &Ensemble, config: &ModelConfig, metadata: &[(String, String)]) -> String {
    match export(model, config, metadata) {
        Err(Error::Config(message)) => {
            assert!(message.contains("cannot be exported to ONNX"), "{message}");
            message
        }
        Err(other) => panic!("expected a configuration error, got {other}"),
        Ok(_) => panic!("expected a refusal"),
    }
}

#[test]
fn inexpressible_models_are_refused_with_the_reason() {
    let (model, config) = random_model(12, 6, &[4, 3], "signed_log1p", 9);
    assert!(export(&model, &config, &[]).is_ok());

    let mut c = config.clone();
    c.transform = "log".into();
    assert!(refusal(&model, &c, &[]).contains("unknown transform 'log'"));

    let mut c = config.clone();
    c.columns[2] = 0;
    assert!(refusal(&model, &c, &[]).contains("column 0 is outside"));

    let mut c = config.clone();
    c.columns[0] = 13;
    assert!(refusal(&model, &c, &[]).contains("column 13 is outside the data's columns 1..=12"));

    let mut c = config.clone();
    c.columns.pop();
    assert!(refusal(&model, &c, &[]).contains("reads 5 columns"));

    let mut c = config.clone();
    c.n_in = 7;
    c.columns.push(12);
    assert!(refusal(&model, &c, &[]).contains("the weights take 6 inputs"));

    let mut c = config.clone();
    c.widths = vec![4, 2];
    assert!(refusal(&model, &c, &[]).contains("widths [4, 2] disagree"));

    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut m = model.clone();
        m.members[0].layers[1].weight[3] = bad;
        assert!(refusal(&m, &config, &[]).contains("NaN or infinite"));
        let mut m = model.clone();
        m.members[0].layers[2].bias[0] = bad;
        assert!(refusal(&m, &config, &[]).contains("NaN or infinite"));
    }

    let mut m = model.clone();
    m.members[0].layers[1].weight.pop();
    assert!(refusal(&m, &config, &[]).contains("layer 1 holds 11 weights"));

    let mut m = model.clone();
    m.members[0].layers[2].n_out = 2;
    m.members[0].layers[2].weight.extend_from_slice(&[0.0; 3]);
    m.members[0].layers[2].bias.push(0.0);
    assert!(refusal(&m, &config, &[]).contains("gives 2 outputs"));

    let empty = Ensemble::single(Mlp::<f32> {
        layers: Vec::new(),
        norms: Vec::new(),
        attention: None,
    });
    assert!(refusal(&empty, &config, &[]).contains("no layers"));

    let twice = [("loss".to_string(), "softmax".to_string())];
    assert!(refusal(&model, &config, &twice).contains("'loss' is given twice"));
}

// ---- The command -----------------------------------------------------------------------------------

#[test]
fn export_command_writes_the_model_with_its_config() {
    let dir = tempfile::tempdir().unwrap();
    let prefix = dir.path().join("student");
    let (model, config) = random_model(46, 20, &[8, 4], "signed_log1p", 11);
    model_io::save(&prefix, &model, &config).unwrap();
    let onnx = dir.path().join("student.onnx");
    let json = dir.path().join("student.json");

    let (ok, stdout, stderr) = distillrank(&[
        "export",
        "--model",
        json.to_str().unwrap(),
        "--onnx",
        onnx.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(
        stdout.trim(),
        format!("wrote {} (12 nodes, opset 17)", onnx.display())
    );
    let m = decode(&std::fs::read(&onnx).unwrap());
    let meta = metadata(&m);
    assert_eq!(meta["source_model"], "student");
    let saved: ModelConfig = serde_json::from_str(&meta["distillrank_config"]).unwrap();
    assert_eq!(saved, config);
    let rows = random_rows(5, 46, 1e5, 1);
    let expected = predict(&model, &config, &rows, 5);
    for (g, e) in scores_of(&m, &rows, 5).into_iter().zip(expected) {
        assert!(close(g, e), "graph {g}, predict {e}");
    }

    let (ok, stdout, stderr) = distillrank(&[
        "--json",
        "export",
        "--model",
        prefix.to_str().unwrap(),
        "--onnx",
        onnx.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["nodes"], 12);
    assert_eq!(v["opset"], 17);
    assert_eq!(v["input"]["shape"][1], 46);
    assert_eq!(v["batch_is_one_query"], false);

    // A config edited to a transform the graph cannot express: refused, nothing written.
    let text = std::fs::read_to_string(&json).unwrap();
    std::fs::write(&json, text.replace("\"signed_log1p\"", "\"standardize\"")).unwrap();
    let other = dir.path().join("other.onnx");
    let (ok, _, stderr) = distillrank(&[
        "export",
        "--model",
        prefix.to_str().unwrap(),
        "--onnx",
        other.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("unknown transform 'standardize'"),
        "{stderr}"
    );
    assert!(!other.exists());
}

/// The fitted maps after the signed log1p (standardize, rank-gauss) are in the graph: its scores
/// are `predict`'s, including values beyond the fitted range and on constant columns.
#[test]
fn fitted_input_maps_in_the_graph_score_equal_predict() {
    for transform in [Transform::Standardize, Transform::RankGauss] {
        for seed in 0..3u64 {
            let (source, n_in) = (30, 20);
            // Standardize follows the signed log1p; rank-gauss maps raw values.
            let before = if transform.signed_log1p() {
                "signed_log1p"
            } else {
                "none"
            };
            let (model, mut config) = random_model(source, n_in, &[16, 8], before, seed);
            // Maps fitted on rows of the model's columns as preparation gives them; the last
            // column constant.
            let n_fit = 500;
            let mut fit = random_rows(n_fit, n_in, 1e4, seed + 40);
            for row in fit.chunks_exact_mut(n_in) {
                row[n_in - 1] = 3.0;
            }
            if transform.signed_log1p() {
                signed_log1p(&mut fit);
            }
            let maps = transform.fit(&fit, n_in);
            assert_eq!(maps.len(), n_in);
            config.input_maps = Some(maps);
            let m = decode(&export(&model, &config, &[]).unwrap());
            assert!(ops(&m).contains(&"Mul".to_string()));
            for n in [1, 3, 37] {
                let rows = random_rows(n, source, 1e5, seed * 11 + n as u64);
                let expected = predict(&model, &config, &rows, n);
                let got = scores_of(&m, &rows, n);
                for (d, (&g, &e)) in got.iter().zip(&expected).enumerate() {
                    assert!(
                        close(g, e),
                        "{transform:?} seed {seed} doc {d}: graph {g}, predict {e}"
                    );
                }
            }
        }
    }
}

/// Maps that do not fit the model (another count, knots out of order, a NaN) are refused where
/// the config is read, naming the field.
#[test]
fn input_maps_that_do_not_fit_are_refused_when_read() {
    let (model, mut config) = random_model(10, 4, &[3], "signed_log1p", 9);
    let fit: Vec<f32> = (0..40).map(|i| (i % 7) as f32).collect();
    config.input_maps = Some(Transform::RankGauss.fit(&fit, 4));
    let dir = tempfile::tempdir().unwrap();
    model_io::save(&dir.path().join("m"), &model, &config).unwrap();
    assert!(model_io::load(&dir.path().join("m"), false).is_ok());
    let json = dir.path().join("m.json");
    let text = std::fs::read_to_string(&json).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| {
                v["input_maps"].as_array_mut().unwrap().pop();
            }),
            "3 maps for 4 columns",
        ),
        (
            Box::new(|v| {
                v["input_maps"][1]["knots"] = serde_json::json!([2.0, 1.0]);
                v["input_maps"][1]["values"] = serde_json::json!([0.0, 1.0]);
            }),
            "input_maps[1]: a knots map's knots must strictly increase",
        ),
        (
            Box::new(|v| {
                v["input_maps"][0] =
                    serde_json::json!({"kind": "affine", "shift": 1.0, "scale": 1e39});
            }),
            "input_maps[0]",
        ),
        (
            Box::new(|v| {
                v["input_maps"][2] = serde_json::json!({"kind": "spline"});
            }),
            "unknown variant `spline`, expected `affine` or `knots`",
        ),
    ];
    for (edit, words) in cases {
        let mut edited = value.clone();
        edit(&mut edited);
        std::fs::write(&json, edited.to_string()).unwrap();
        let err = model_io::load(&dir.path().join("m"), false)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(words) && err.contains("m.json"),
            "{words}: {err}"
        );
    }
    // Maps dropped from the JSON: the weights' own copy of the config says so.
    value["input_maps"] = serde_json::Value::Null;
    std::fs::write(&json, value.to_string()).unwrap();
    let err = model_io::load(&dir.path().join("m"), false)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("input_maps") && err.contains("not one model"),
        "{err}"
    );
}

#[test]
fn an_ensemble_is_one_graph_whose_score_is_its_members_mean() {
    for (k, transform) in [(2, "signed_log1p"), (5, "none")] {
        let (model, config) = random_ensemble(30, 12, &[8, 4], transform, 21, k);
        assert_eq!(config.members, k);
        let m = decode(&export(&model, &config, &[]).unwrap());
        assert_eq!(metadata(&m)["members"], k.to_string());
        // One Gather and one transform for every member, one Mean of their scores.
        let ops = ops(&m);
        assert_eq!(ops.iter().filter(|o| *o == "Gather").count(), 1);
        assert_eq!(ops.iter().filter(|o| *o == "Mean").count(), 1);
        assert_eq!(ops.iter().filter(|o| *o == "Gemm").count(), 3 * k);
        for n in [1, 9] {
            let rows = random_rows(n, 30, 100.0, n as u64);
            let expected = predict(&model, &config, &rows, n);
            let alone: Vec<Vec<f32>> = model
                .members
                .iter()
                .map(|member| {
                    predict(
                        &Ensemble::single(member.clone()),
                        &ModelConfig {
                            members: 1,
                            ..config.clone()
                        },
                        &rows,
                        n,
                    )
                })
                .collect();
            for (d, (&g, &e)) in scores_of(&m, &rows, n).iter().zip(&expected).enumerate() {
                assert!(close(g, e), "k {k} doc {d}: graph {g}, predict {e}");
                let mean = alone.iter().map(|s| s[d]).sum::<f32>() / k as f32;
                assert!(
                    close(e, mean),
                    "k {k} doc {d}: predict {e}, members' mean {mean}"
                );
            }
        }
        // A member that disagrees is refused by its number.
        let mut bad = model.clone();
        bad.members[1].layers[0].bias[0] = f32::NAN;
        assert!(refusal(&bad, &config, &[]).contains("member 1: "));
        let mut fewer = model.clone();
        fewer.members.pop();
        assert!(refusal(&fewer, &config, &[]).contains(&format!("the config says {k} members")));
    }
    // One model keeps the tensor names of its weights file and has no Mean.
    let (model, config) = random_model(10, 4, &[3], "none", 2);
    let m = decode(&export(&model, &config, &[]).unwrap());
    assert!(!ops(&m).contains(&"Mean".to_string()));
    assert!(!metadata(&m).contains_key("members"));
}

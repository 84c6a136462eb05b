//! The `export` command: a saved model (PREFIX.safetensors + PREFIX.json) as one ONNX file, for
//! serving with onnxruntime or any ONNX runtime. The file takes a LETOR file's raw feature vectors
//! and gives exactly `predict`'s scores: the column selection and the transform are in the graph
//! (see [`distillrank::onnx`]), so a server needs nothing but the file.

use std::path::PathBuf;

use clap::Args;
use prost::Message as _;

use distillrank::error::{Error, Result};
use distillrank::{model_io, onnx, output};

use super::progress::Output;

#[derive(Args, Clone, Debug)]
pub struct ExportArgs {
    /// Saved model: PREFIX (or PREFIX.json / PREFIX.safetensors).
    #[arg(long)]
    pub model: PathBuf,
    /// The ONNX file to write (opset 17; input "features" float32 [batch, source_features] of raw
    /// feature values, output "score" float32 [batch]).
    #[arg(long)]
    pub onnx: PathBuf,
}

pub fn run(args: &ExportArgs, out: &Output) -> Result<()> {
    output::check_file(&args.onnx)?;
    output::check_not_an_input(
        &[("--onnx".into(), args.onnx.clone())],
        &super::commands::model_reads(&args.model),
        &[],
    )?;
    distillrank::onnx::check_target(&args.onnx)?;
    let (model, config) = distillrank::pipeline::run::load_model(&args.model, false)?;
    let (weights, json) = model_io::paths(&args.model);
    // The prefix's file name: `runs/student.json` -> `student`.
    let source_model = weights
        .with_extension("")
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let metadata = vec![
        (
            "distillrank_config".to_string(),
            serde_json::to_string(&config).expect("a model config always serialises"),
        ),
        ("source_model".to_string(), source_model),
    ];
    // The exporter's refusals name the model's config, where what it cannot express lies.
    let proto = onnx::model_proto(&model, &config, &metadata).map_err(|e| match e {
        Error::Config(message) => Error::Model {
            path: json.clone(),
            message,
        },
        e => e,
    })?;
    let nodes = proto.graph.as_ref().map_or(0, |g| g.node.len());
    let bytes = proto.encode_to_vec();
    output::write_atomic(&args.onnx, &bytes)?;
    if out.json {
        let v = serde_json::json!({
            "onnx": args.onnx,
            "model": json,
            "nodes": nodes,
            "opset": onnx::OPSET,
            "ir_version": onnx::IR_VERSION,
            "bytes": bytes.len(),
            "input": {"name": onnx::INPUT, "shape": [onnx::BATCH, config.source_features]},
            // A listwise model's batch is one query's documents, whole.
            "batch_is_one_query": config.attention_heads > 0,
            "output": {"name": onnx::OUTPUT, "shape": [onnx::BATCH]},
        });
        outln!("{v}");
    } else {
        outln!(
            "wrote {} ({nodes} nodes, opset {})",
            args.onnx.display(),
            onnx::OPSET
        );
        // A listwise model's scores depend on the whole list: a batch is one query.
        let batch = match config.attention_heads {
            0 => "",
            _ => ": the documents of one query, whole (the model attends over them)",
        };
        out.note(format!(
            "input '{}' float32 [batch, {}]: raw feature vectors (column j at index j - 1, absent sparse entries 0){batch}; output '{}' float32 [batch]: the scores",
            onnx::INPUT,
            config.source_features,
            onnx::OUTPUT
        ));
    }
    Ok(())
}

//! Every WGSL kernel parses and validates with naga: a shader error fails the build's tests even on
//! a machine without a GPU.

#![cfg(not(target_arch = "wasm32"))]

use distillrank::gpu::shaders;

#[test]
fn every_shader_validates() {
    let all = shaders::all();
    assert!(all.len() >= 5);
    for (name, source) in &all {
        let module = naga::front::wgsl::parse_str(source)
            .unwrap_or_else(|e| panic!("{name}: {}", e.emit_to_string(source)));
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::default(),
        );
        if let Err(e) = validator.validate(&module) {
            panic!("{name}: {}", e.emit_to_string(source));
        }
        assert!(
            module
                .entry_points
                .iter()
                .all(|e| e.stage == naga::ShaderStage::Compute),
            "{name}: compute kernels only"
        );
    }
}

/// Every kernel's parameter struct in Rust (`gpu::params`) against the `Params` struct of each
/// shader that declares it: the same fields in the same order, with the same names, scalar types,
/// offsets and sizes, and the same total size. Every shader's `Params` has its Rust struct; the
/// losses' files take theirs from the prologue joined to them, and the struct names the prologue.
#[test]
fn kernel_parameters_match_the_shaders_params_structs() {
    use distillrank::gpu::params::all;
    use naga::{ScalarKind, TypeInner};
    let structs = all();
    for (kernel_file, source) in shaders::all() {
        let file = if shaders::is_loss_file(kernel_file) {
            shaders::LOSS_PROLOGUE
        } else {
            kernel_file
        };
        let module = naga::front::wgsl::parse_str(&source).unwrap();
        let Some(params) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some("Params"))
        else {
            panic!("{file}: no Params struct");
        };
        let TypeInner::Struct { members, span } = &params.1.inner else {
            panic!("{file}: Params is not a struct");
        };
        let Some((name, _, fields, size)) = structs.iter().find(|s| s.1.contains(&file)) else {
            panic!("{file}: no struct in gpu::params names this shader");
        };
        assert_eq!(*span as usize, *size, "{file}: size of Params vs {name}");
        assert_eq!(
            members.len(),
            fields.len(),
            "{file}: fields of Params vs {name}"
        );
        for (member, field) in members.iter().zip(fields.iter()) {
            let wgsl_name = member.name.as_deref().unwrap_or("");
            let (kind, width) = match module.types[member.ty].inner {
                TypeInner::Scalar(s) => (s.kind, s.width as usize),
                ref other => panic!("{file}: Params.{wgsl_name} is {other:?}, not a scalar"),
            };
            let wgsl_type = match kind {
                ScalarKind::Uint => "u32",
                ScalarKind::Float => "f32",
                ScalarKind::Sint => "i32",
                other => panic!("{file}: Params.{wgsl_name} of kind {other:?}"),
            };
            let found = (wgsl_name, wgsl_type, member.offset as usize, width);
            let wanted = (field.name, field.wgsl, field.offset, field.size);
            assert_eq!(found, wanted, "{file}: Params field against {name}");
        }
    }
    for (name, shaders, _, _) in &structs {
        for shader in shaders.iter() {
            assert!(
                shaders::file(shader).is_some(),
                "{name} names {shader}, which is not a file of shaders/"
            );
        }
    }
}

/// Every kernel a loss's entry names is an entry point of its file, in a file that begins with
/// the prologue, and no other file declares the prologue's parameters again.
#[test]
fn every_loss_kernel_is_an_entry_point_of_its_file() {
    for entry in distillrank::model::loss::LOSSES {
        for kernel in entry.hard.iter().chain(entry.soft) {
            let source = shaders::source(kernel.file);
            let module = naga::front::wgsl::parse_str(&source).unwrap();
            assert!(
                module.entry_points.iter().any(|e| e.name == kernel.entry),
                "{}: {} has no entry point {}",
                entry.name,
                kernel.file,
                kernel.entry
            );
            let own = shaders::file(kernel.file).unwrap();
            assert!(
                !own.contains("struct Params"),
                "{}: its Params come from the prologue",
                kernel.file
            );
        }
    }
}

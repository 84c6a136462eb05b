//! Every WGSL kernel parses and validates with naga: a shader error fails the build's tests even on
//! a machine without a GPU.

#![cfg(not(target_arch = "wasm32"))]

use distillrank::gpu::shaders::ALL;

#[test]
fn every_shader_validates() {
    assert!(ALL.len() >= 5);
    for (name, source) in ALL {
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
/// offsets and sizes, and the same total size. Every shader's `Params` has its Rust struct.
#[test]
fn kernel_parameters_match_the_shaders_params_structs() {
    use distillrank::gpu::params::all;
    use naga::{ScalarKind, TypeInner};
    let structs = all();
    for (file, source) in ALL {
        let module = naga::front::wgsl::parse_str(source).unwrap();
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
                ALL.iter().any(|(file, _)| file == shader),
                "{name} names {shader}, which is not a kernel file"
            );
        }
    }
}

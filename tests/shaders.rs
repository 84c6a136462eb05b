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

//! The WGSL kernels, embedded so that the browser build does no file I/O. Each file in `shaders/`
//! opens with what it computes, its bindings, shapes and dispatch.

pub const DENSE: &str = include_str!("../../shaders/dense.wgsl");
pub const RANKNET: &str = include_str!("../../shaders/ranknet.wgsl");
pub const BCE: &str = include_str!("../../shaders/bce.wgsl");
pub const REDUCE: &str = include_str!("../../shaders/reduce.wgsl");
pub const ADAM: &str = include_str!("../../shaders/adam.wgsl");
pub const DENSE_VEC4: &str = include_str!("../../shaders/dense_vec4.wgsl");
pub const OBJECTIVES: &str = include_str!("../../shaders/objectives.wgsl");
pub const DISTILL: &str = include_str!("../../shaders/distill.wgsl");
pub const SELECT: &str = include_str!("../../shaders/select.wgsl");
pub const LISTWISE: &str = include_str!("../../shaders/listwise.wgsl");

/// Every kernel file, by name.
pub const ALL: [(&str, &str); 10] = [
    ("dense.wgsl", DENSE),
    ("dense_vec4.wgsl", DENSE_VEC4),
    ("ranknet.wgsl", RANKNET),
    ("bce.wgsl", BCE),
    ("reduce.wgsl", REDUCE),
    ("adam.wgsl", ADAM),
    ("objectives.wgsl", OBJECTIVES),
    ("distill.wgsl", DISTILL),
    ("select.wgsl", SELECT),
    ("listwise.wgsl", LISTWISE),
];

/// Workgroup sizes, mirrored from the shaders.
/// Rows and columns of the result one workgroup of the dense products computes.
pub const TILE: u32 = 64;
pub const WORKGROUP: u32 = 256;

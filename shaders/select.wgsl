// A subset of a batch's rows in a compact buffer of its own, and back: the ranking trainer runs a
// global objective as the data loss on the documents of S_label this way, with the objective's
// kernels unchanged.
//
//   gather_rows   one invocation per compact row c: compact[c] = values[index[c]].
//   scatter_rows  one invocation per batch row i: out[i] = scale * compact[position[i]], or 0
//                 where position[i] is NONE (a row outside the subset).
//
// Bindings (the shared layout):
//   gather_rows:  1 values (n); 2 selection (u32): index (m), then position (n); 4 compact (m).
//   scatter_rows: 1 compact (m); 2 selection; 4 out (n).
// Dispatch: ceil(m / 256) for gather_rows, ceil(n / 256) for scatter_rows.

struct Params {
    n: u32,
    m: u32,
    _pad0: u32,
    _pad1: u32,
    scale: f32,
    _pad2: u32,
    _pad3: u32,
    _pad4: u32,
}

const NONE: u32 = 0xffffffffu;

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(2) var<storage, read> selection: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256, 1, 1)
fn gather_rows(@builtin(global_invocation_id) id: vec3<u32>) {
    let c = id.x;
    if (c >= params.m) { return; }
    out[c] = values[selection[c]];
}

@compute @workgroup_size(256, 1, 1)
fn scatter_rows(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.n) { return; }
    let p = selection[params.m + i];
    if (p == NONE) {
        out[i] = 0.0;
    } else {
        out[i] = params.scale * values[p];
    }
}

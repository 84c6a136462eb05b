// Sum of values[params.offset..params.offset + params.n] into result[params.out_index], by one workgroup: each invocation adds
// a strided share in a fixed order, then a tree in workgroup memory. Deterministic (no atomics).
// With several workgroups, workgroup r sums row r, values[offset + r n..offset + (r + 1) n], into
// result[out_index + r] (the global objectives' per-constraint sums).
//
// Bindings: 0 params; 1 values; 4 result. Dispatch: (rows, 1, 1); one row for a plain sum.

struct Params {
    n: u32,
    out_index: u32,
    offset: u32,
    _pad: u32,
}

const WORKGROUP: u32 = 256u;

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(4) var<storage, read_write> result: array<f32>;

var<workgroup> shares: array<f32, 256>;

@compute @workgroup_size(256, 1, 1)
fn reduce_sum(@builtin(local_invocation_id) local: vec3<u32>, @builtin(workgroup_id) row: vec3<u32>) {
    let start = params.offset + row.x * params.n;
    var sum = 0.0;
    for (var i = local.x; i < params.n; i = i + WORKGROUP) {
        sum = sum + values[start + i];
    }
    shares[local.x] = sum;
    workgroupBarrier();
    for (var stride = WORKGROUP / 2u; stride > 0u; stride = stride / 2u) {
        if (local.x < stride) {
            shares[local.x] = shares[local.x] + shares[local.x + stride];
        }
        workgroupBarrier();
    }
    if (local.x == 0u) {
        result[params.out_index + row.x] = shares[0];
    }
}

// The dense layer's three products of dense.wgsl, direct from storage (no workgroup memory, no
// barriers) and read four floats at a time: the form the direct kernels take where the widths
// allow it. Software adapters (lavapipe) run invocations in SIMD lanes and fetch each lane's
// operand separately, so a vec4 load brings four values for the price of one; on lavapipe this is
// about 2.5x the scalar direct kernel (BENCHMARKS.md).
//
//   forward_vec4          out (B, n_out) = act(inp (B, n_in) . weight (n_in, n_out) + bias)
//                         needs n_in and n_out multiples of 4
//   backward_input_vec4   dinp (B, n_in) = dout (B, n_out) . weight^T      needs n_out % 4 == 0
//   backward_weight_vec4  dweight (n_in, n_out) = inp^T . dout      needs n_in, n_out % 4 == 0
//
// Bindings, parameters and dispatch as in dense.wgsl (a workgroup of 16 x 16 invocations computes a
// 64 x 64 block of the result, each invocation 4 x 4 of it), except that bindings 1 and 2 are read
// as vec4 arrays: the widths named above make every vec4 lie within one row. Rows and columns past
// the edges read the last valid ones and are not stored.

const BLOCK: u32 = 64u;
const SUB: u32 = 4u;

struct Params {
    rows: u32,   // rows of the result
    cols: u32,   // columns of the result
    inner: u32,  // the summed dimension
    relu: u32,   // forward: 1 to apply ReLU
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> result: array<f32>;

// acc[i][j] is result(row0 + i, col0 + j), with row0 = wg.y * 64 + local.y * 4 and
// col0 = wg.x * 64 + local.x * 4.
fn store(acc: array<vec4<f32>, 4>, wg: vec3<u32>, local: vec3<u32>, add_bias: bool) {
    for (var i = 0u; i < SUB; i = i + 1u) {
        let r = wg.y * BLOCK + local.y * SUB + i;
        for (var j = 0u; j < SUB; j = j + 1u) {
            let c = wg.x * BLOCK + local.x * SUB + j;
            if (r < params.rows && c < params.cols) {
                var v = acc[i][j];
                if (add_bias) {
                    v = v + bias[c];
                    if (params.relu == 1u) { v = max(v, 0.0); }
                }
                result[r * params.cols + c] = v;
            }
        }
    }
}

// The 4 rows of A an invocation reads, clamped to the last row.
fn block_rows(wg: vec3<u32>, local: vec3<u32>) -> array<u32, 4> {
    var rows: array<u32, 4>;
    for (var i = 0u; i < SUB; i = i + 1u) {
        rows[i] = min(wg.y * BLOCK + local.y * SUB + i, params.rows - 1u);
    }
    return rows;
}

// out = inp . weight: a = inp (rows x inner), b = weight (inner x cols). Per four k: four vec4 of
// A along k, four vec4 of B along the columns, 64 multiply-adds.
@compute @workgroup_size(16, 16, 1)
fn forward_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let rows = block_rows(wg, local);
    let inner4 = params.inner / 4u;
    let cols4 = params.cols / 4u;
    let col4 = min((wg.x * BLOCK + local.x * SUB) / 4u, cols4 - 1u);
    var acc: array<vec4<f32>, 4>;
    for (var k4 = 0u; k4 < inner4; k4 = k4 + 1u) {
        let k = 4u * k4;
        let b0 = b[k * cols4 + col4];
        let b1 = b[(k + 1u) * cols4 + col4];
        let b2 = b[(k + 2u) * cols4 + col4];
        let b3 = b[(k + 3u) * cols4 + col4];
        for (var i = 0u; i < SUB; i = i + 1u) {
            let av = a[rows[i] * inner4 + k4];
            acc[i] = acc[i] + av.x * b0 + av.y * b1 + av.z * b2 + av.w * b3;
        }
    }
    store(acc, wg, local, true);
}

// dinp = dout . weight^T: a = dout (rows x inner), b = weight (cols x inner). Per four k: four
// vec4 of A and four of B, all along k, and 16 dot products.
@compute @workgroup_size(16, 16, 1)
fn backward_input_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let rows = block_rows(wg, local);
    let inner4 = params.inner / 4u;
    var cols: array<u32, 4>;
    for (var j = 0u; j < SUB; j = j + 1u) {
        cols[j] = min(wg.x * BLOCK + local.x * SUB + j, params.cols - 1u);
    }
    var acc: array<vec4<f32>, 4>;
    for (var k4 = 0u; k4 < inner4; k4 = k4 + 1u) {
        let b0 = b[cols[0] * inner4 + k4];
        let b1 = b[cols[1] * inner4 + k4];
        let b2 = b[cols[2] * inner4 + k4];
        let b3 = b[cols[3] * inner4 + k4];
        for (var i = 0u; i < SUB; i = i + 1u) {
            let av = a[rows[i] * inner4 + k4];
            acc[i] = acc[i] + vec4<f32>(dot(av, b0), dot(av, b1), dot(av, b2), dot(av, b3));
        }
    }
    store(acc, wg, local, false);
}

// dweight = inp^T . dout: a = inp (inner x rows), b = dout (inner x cols). Per k: one vec4 of A
// along the rows, one of B along the columns, their outer product.
@compute @workgroup_size(16, 16, 1)
fn backward_weight_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let rows4 = params.rows / 4u;
    let cols4 = params.cols / 4u;
    let row4 = min((wg.y * BLOCK + local.y * SUB) / 4u, rows4 - 1u);
    let col4 = min((wg.x * BLOCK + local.x * SUB) / 4u, cols4 - 1u);
    var acc: array<vec4<f32>, 4>;
    for (var k = 0u; k < params.inner; k = k + 1u) {
        let av = a[k * rows4 + row4];
        let bv = b[k * cols4 + col4];
        acc[0] = acc[0] + av.x * bv;
        acc[1] = acc[1] + av.y * bv;
        acc[2] = acc[2] + av.z * bv;
        acc[3] = acc[3] + av.w * bv;
    }
    store(acc, wg, local, false);
}

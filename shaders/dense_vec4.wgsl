// The dense layer's three products of dense.wgsl, direct from storage (no workgroup memory, no
// barriers), read four floats at a time and computed as 4 x 4 matrix products: the form the direct
// kernels take where the widths allow it.
//
//   forward_vec4          out (B, n_out) = act(inp (B, n_in) . weight (n_in, n_out) + bias)
//                         needs n_in and n_out multiples of 4
//   backward_input_vec4   dinp (B, n_in) = dout (B, n_out) . weight^T      needs n_out % 4 == 0
//   backward_weight_vec4  dweight (n_in, n_out) = inp^T . dout      needs n_in, n_out % 4 == 0
//
// Why this shape. Software adapters (lavapipe, SwiftShader) run a workgroup's invocations in the
// lanes of the CPU's vector registers and fetch every lane's operand from storage one at a time;
// that fetch, not the multiply-adds, is the cost. So each invocation computes a large block of the
// result, 16 rows x 8 columns, from 16 + 8 vec4 loads per four steps along the summed dimension:
// 512 multiply-adds for 24 loads, against 64 for 8 with a 4 x 4 block (BENCHMARKS.md).
//
// The block is eight 4 x 4 tiles, t_rc for rows 4r.. and columns 4c.. of it. A tile is a mat4x4
// whose column i holds result row (4r + i), columns 4c .. 4c + 3, so every update is one matrix
// product:
//   forward         t_rc += W_c . X_r      W_c: columns = weight rows k..k+3, columns 4c..4c+3
//                                          X_r: columns = inp rows 4r..4r+3, at k..k+3
//   backward_input  t_rc += W_c^T . X_r    W_c: columns = weight rows 4c..4c+3, at k..k+3
//   backward_weight t_rc += outer(g_c, x_r) for one k at a time (k runs over the batch, which
//                                          need not be a multiple of 4)
//
// Bindings, parameters and dispatch as in dense.wgsl: a workgroup computes a 64 x 64 block of the
// result (8 x 4 invocations of 16 x 8), except that bindings 1 and 2 are read as vec4 arrays: the
// widths named above make every vec4 lie within one row. Rows and columns past the edges read the
// last valid ones and are not stored.

const BLOCK: u32 = 64u;
// Result rows and columns of one invocation.
const ROWS: u32 = 16u;
const COLS: u32 = 8u;

struct Params {
    rows: u32,   // rows of the result
    cols: u32,   // columns of the result
    inner: u32,  // the summed dimension
    relu: u32,   // forward: 1 to apply ReLU
}

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> result: array<f32>;

// The invocation's block: the result row and column of its first element.
fn block_origin(wg: vec3<u32>, local: vec3<u32>) -> vec2<u32> {
    return vec2<u32>(wg.y * BLOCK + local.y * ROWS, wg.x * BLOCK + local.x * COLS);
}

// The vec4 at index k4 of rows r .. r + 3 (clamped to the last row) of `a`, rows of `len4`
// vec4s, as the columns of a matrix.
fn a_rows(r: u32, len4: u32, k4: u32) -> mat4x4<f32> {
    let last = params.rows - 1u;
    return mat4x4<f32>(
        a[min(r, last) * len4 + k4],
        a[min(r + 1u, last) * len4 + k4],
        a[min(r + 2u, last) * len4 + k4],
        a[min(r + 3u, last) * len4 + k4],
    );
}

fn put(r: u32, c: u32, v: f32) {
    if (r < params.rows && c < params.cols) {
        result[r * params.cols + c] = v;
    }
}

// Stores tile t at (row0, col0): column i of t is result row row0 + i. The forward pass adds the
// bias and applies ReLU where asked.
fn store_tile(t: mat4x4<f32>, row0: u32, col0: u32, forward: bool) {
    var bv = vec4<f32>();
    if (forward) {
        let last = params.cols - 1u;
        bv = vec4<f32>(
            bias[min(col0, last)],
            bias[min(col0 + 1u, last)],
            bias[min(col0 + 2u, last)],
            bias[min(col0 + 3u, last)],
        );
    }
    for (var i = 0u; i < 4u; i = i + 1u) {
        var v = t[i] + bv;
        if (forward && params.relu == 1u) {
            v = max(v, vec4<f32>());
        }
        put(row0 + i, col0, v.x);
        put(row0 + i, col0 + 1u, v.y);
        put(row0 + i, col0 + 2u, v.z);
        put(row0 + i, col0 + 3u, v.w);
    }
}

// The eight tiles of a block, t_rc for rows 4r and columns 4c.
struct Block {
    t00: mat4x4<f32>, t01: mat4x4<f32>,
    t10: mat4x4<f32>, t11: mat4x4<f32>,
    t20: mat4x4<f32>, t21: mat4x4<f32>,
    t30: mat4x4<f32>, t31: mat4x4<f32>,
}

fn store_block(s: Block, o: vec2<u32>, forward: bool) {
    store_tile(s.t00, o.x, o.y, forward);
    store_tile(s.t01, o.x, o.y + 4u, forward);
    store_tile(s.t10, o.x + 4u, o.y, forward);
    store_tile(s.t11, o.x + 4u, o.y + 4u, forward);
    store_tile(s.t20, o.x + 8u, o.y, forward);
    store_tile(s.t21, o.x + 8u, o.y + 4u, forward);
    store_tile(s.t30, o.x + 12u, o.y, forward);
    store_tile(s.t31, o.x + 12u, o.y + 4u, forward);
}

// The forward and input-gradient step: for each group r of four rows from row0, X_r = the vec4
// at index k4 of those rows of `a` (rows of len4 vec4s), t_r0 += w0 . X_r and t_r1 += w1 . X_r.
fn accumulate(s: ptr<function, Block>, w0: mat4x4<f32>, w1: mat4x4<f32>, row0: u32, len4: u32, k4: u32) {
    let x0 = a_rows(row0, len4, k4);
    (*s).t00 += w0 * x0;
    (*s).t01 += w1 * x0;
    let x1 = a_rows(row0 + 4u, len4, k4);
    (*s).t10 += w0 * x1;
    (*s).t11 += w1 * x1;
    let x2 = a_rows(row0 + 8u, len4, k4);
    (*s).t20 += w0 * x2;
    (*s).t21 += w1 * x2;
    let x3 = a_rows(row0 + 12u, len4, k4);
    (*s).t30 += w0 * x3;
    (*s).t31 += w1 * x3;
}

// Rows k .. k + 3 of b = weight (inner x cols, rows of cols4 vec4s), at vec4 index c, as the
// columns of a matrix (inner is a multiple of 4: no clamping).
fn weight_rows(k: u32, cols4: u32, c: u32) -> mat4x4<f32> {
    return mat4x4<f32>(
        b[k * cols4 + c],
        b[(k + 1u) * cols4 + c],
        b[(k + 2u) * cols4 + c],
        b[(k + 3u) * cols4 + c],
    );
}

// out = inp . weight: a = inp (rows x inner), b = weight (inner x cols).
@compute @workgroup_size(8, 4, 1)
fn forward_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let o = block_origin(wg, local);
    let inner4 = params.inner / 4u;
    let cols4 = params.cols / 4u;
    let c0 = min(o.y / 4u, cols4 - 1u);
    let c1 = min(o.y / 4u + 1u, cols4 - 1u);
    var s: Block;
    for (var k4 = 0u; k4 < inner4; k4 = k4 + 1u) {
        accumulate(&s, weight_rows(4u * k4, cols4, c0), weight_rows(4u * k4, cols4, c1), o.x, inner4, k4);
    }
    store_block(s, o, true);
}

// Rows c .. c + 3 (clamped to the last) of b = weight (cols x inner), at vec4 index k4, as the
// columns of a matrix.
fn weight_rows_clamped(c: u32, inner4: u32, k4: u32) -> mat4x4<f32> {
    let last = params.cols - 1u;
    return mat4x4<f32>(
        b[min(c, last) * inner4 + k4],
        b[min(c + 1u, last) * inner4 + k4],
        b[min(c + 2u, last) * inner4 + k4],
        b[min(c + 3u, last) * inner4 + k4],
    );
}

// dinp = dout . weight^T: a = dout (rows x inner), b = weight (cols x inner).
@compute @workgroup_size(8, 4, 1)
fn backward_input_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let o = block_origin(wg, local);
    let inner4 = params.inner / 4u;
    var s: Block;
    for (var k4 = 0u; k4 < inner4; k4 = k4 + 1u) {
        let w0 = transpose(weight_rows_clamped(o.y, inner4, k4));
        let w1 = transpose(weight_rows_clamped(o.y + 4u, inner4, k4));
        accumulate(&s, w0, w1, o.x, inner4, k4);
    }
    store_block(s, o, false);
}

// The tile of g (4 columns) times x (4 rows): column i is g * x[i].
fn outer(g: vec4<f32>, x: vec4<f32>) -> mat4x4<f32> {
    return mat4x4<f32>(g * x.x, g * x.y, g * x.z, g * x.w);
}

// dweight = inp^T . dout: a = inp (inner x rows), b = dout (inner x cols).
@compute @workgroup_size(8, 4, 1)
fn backward_weight_vec4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let o = block_origin(wg, local);
    let rows4 = params.rows / 4u;
    let cols4 = params.cols / 4u;
    let r0 = min(o.x / 4u, rows4 - 1u);
    let r1 = min(o.x / 4u + 1u, rows4 - 1u);
    let r2 = min(o.x / 4u + 2u, rows4 - 1u);
    let r3 = min(o.x / 4u + 3u, rows4 - 1u);
    let c0 = min(o.y / 4u, cols4 - 1u);
    let c1 = min(o.y / 4u + 1u, cols4 - 1u);
    var s: Block;
    for (var k = 0u; k < params.inner; k = k + 1u) {
        let g0 = b[k * cols4 + c0];
        let g1 = b[k * cols4 + c1];
        let x0 = a[k * rows4 + r0];
        s.t00 += outer(g0, x0);
        s.t01 += outer(g1, x0);
        let x1 = a[k * rows4 + r1];
        s.t10 += outer(g0, x1);
        s.t11 += outer(g1, x1);
        let x2 = a[k * rows4 + r2];
        s.t20 += outer(g0, x2);
        s.t21 += outer(g1, x2);
        let x3 = a[k * rows4 + r3];
        s.t30 += outer(g0, x3);
        s.t31 += outer(g1, x3);
    }
    store_block(s, o, false);
}

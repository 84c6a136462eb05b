// Dense layer of the ranking MLP: forward with bias and ReLU fused, and the three backward
// products. Row-major matrices; B = documents in the batch.
//
//   forward          out  (B, n_out) = act(inp (B, n_in) . weight (n_in, n_out) + bias)
//   relu_mask        dout (B, n_out) *= [out > 0]
//   dropout          out or dout (B, n_out) *= the dropout mask (training only)
//   backward_input   dinp (B, n_in)  = dout (B, n_out) . weight^T
//   backward_weight  dweight (n_in, n_out) = inp^T . dout
//   backward_bias    dbias (n_out) = column sums of dout (one invocation per column, rows in
//                    order: deterministic)
//
// Bindings (group 0, the layout every kernel shares): 0 params (read-only storage), 1 a, 2 b,
// 3 bias (forward) or the forward output (relu_mask), 4 result. Binding 5 is not used here.
// Dispatch: (ceil(cols / 64), ceil(rows / 64), 1) for the three products, ceil(n / 256) for the
// element-wise kernels, ceil(rows * cols / 64) for forward_naive.

// Register blocking: a workgroup of 16 x 16 invocations computes a BLOCK x BLOCK (64 x 64) block
// of the result, each invocation a 4 x 4 sub-block held in registers; the inner dimension is walked
// STEP (16) at a time through two workgroup tiles (A: 64 x 16, B: 16 x 64), each invocation loading
// four values of each. Four times fewer barriers and loads per multiply-add than one output per
// invocation.
const BLOCK: u32 = 64u;
const STEP: u32 = 16u;
const SUB: u32 = 4u;

struct Params {
    rows: u32,   // rows of the result
    cols: u32,   // columns of the result
    inner: u32,  // the summed dimension
    relu: u32,   // forward: 1 to apply ReLU
}

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> result: array<f32>;

var<workgroup> tile_a: array<f32, 1024>; // BLOCK x STEP
var<workgroup> tile_b: array<f32, 1024>; // STEP x BLOCK

// A(r, k) and B(k, c) for the three products, read with bounds checks (zero outside).
// mode 0: A = a (rows x inner),      B = b (inner x cols)        forward: inp . weight
// mode 1: A = a (rows x inner),      B = b^T, b is (cols x inner) backward_input: dout . weight^T
// mode 2: A = a^T, a is (inner x rows), B = b (inner x cols)     backward_weight: inp^T . dout
fn load_a(mode: u32, r: u32, k: u32) -> f32 {
    if (r >= params.rows || k >= params.inner) { return 0.0; }
    if (mode == 2u) { return a[k * params.rows + r]; }
    return a[r * params.inner + k];
}

fn load_b(mode: u32, k: u32, c: u32) -> f32 {
    if (k >= params.inner || c >= params.cols) { return 0.0; }
    if (mode == 1u) { return b[c * params.inner + k]; }
    return b[k * params.cols + c];
}

// The 4 x 4 sub-block of invocation `local` in workgroup `wg`: rows wg.y * BLOCK + local.y * 4 + i,
// columns wg.x * BLOCK + local.x * 4 + j, at acc[i * 4 + j].
fn tiled_block(mode: u32, wg: vec3<u32>, local: vec3<u32>) -> array<f32, 16> {
    let row0 = wg.y * BLOCK;
    let col0 = wg.x * BLOCK;
    let thread = local.y * 16u + local.x;
    var acc: array<f32, 16>;
    let steps = (params.inner + STEP - 1u) / STEP;
    for (var s = 0u; s < steps; s = s + 1u) {
        for (var e = 0u; e < 4u; e = e + 1u) {
            let i = thread + e * 256u;
            tile_a[i] = load_a(mode, row0 + i / STEP, s * STEP + i % STEP);
            tile_b[i] = load_b(mode, s * STEP + i / BLOCK, col0 + i % BLOCK);
        }
        workgroupBarrier();
        for (var k = 0u; k < STEP; k = k + 1u) {
            var col: array<f32, 4>;
            for (var j = 0u; j < SUB; j = j + 1u) {
                col[j] = tile_b[k * BLOCK + local.x * SUB + j];
            }
            for (var i = 0u; i < SUB; i = i + 1u) {
                let v = tile_a[(local.y * SUB + i) * STEP + k];
                for (var j = 0u; j < SUB; j = j + 1u) {
                    acc[i * SUB + j] = acc[i * SUB + j] + v * col[j];
                }
            }
        }
        workgroupBarrier();
    }
    return acc;
}

// Writes a sub-block (with the bias and ReLU of the forward pass when asked).
fn store_block(acc: array<f32, 16>, wg: vec3<u32>, local: vec3<u32>, add_bias: bool) {
    for (var i = 0u; i < SUB; i = i + 1u) {
        let r = wg.y * BLOCK + local.y * SUB + i;
        for (var j = 0u; j < SUB; j = j + 1u) {
            let c = wg.x * BLOCK + local.x * SUB + j;
            if (r < params.rows && c < params.cols) {
                var v = acc[i * SUB + j];
                if (add_bias) {
                    v = v + bias[c];
                    if (params.relu == 1u) { v = max(v, 0.0); }
                }
                result[r * params.cols + c] = v;
            }
        }
    }
}

@compute @workgroup_size(16, 16, 1)
fn forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    store_block(tiled_block(0u, wg, local), wg, local, true);
}

@compute @workgroup_size(16, 16, 1)
fn backward_input(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    store_block(tiled_block(1u, wg, local), wg, local, false);
}

@compute @workgroup_size(16, 16, 1)
fn backward_weight(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    store_block(tiled_block(2u, wg, local), wg, local, false);
}

// The same products without workgroup memory (dense_vec4.wgsl has their vec4 form, used where
// the widths are multiples of 4): each invocation of the same 16 x 16 workgroups
// accumulates its 4 x 4 sub-block straight from storage, k by k (4 loads of A and 4 of B per 16
// multiply-adds, as in the tiled kernel). No barriers: the kernels of choice on software adapters
// (lavapipe, SwiftShader), which run a workgroup's invocations as CPU threads in turn and pay for
// every barrier, while their caches serve the repeated loads. Rows and columns past the edges
// read the last row or column (valid memory) and are not stored. Same bindings, parameters and
// dispatch as forward.
fn direct_block(mode: u32, wg: vec3<u32>, local: vec3<u32>) -> array<f32, 16> {
    let row0 = wg.y * BLOCK + local.y * SUB;
    let col0 = wg.x * BLOCK + local.x * SUB;
    var rows: array<u32, 4>;
    var cols: array<u32, 4>;
    for (var i = 0u; i < SUB; i = i + 1u) {
        rows[i] = min(row0 + i, params.rows - 1u);
        cols[i] = min(col0 + i, params.cols - 1u);
    }
    var acc: array<f32, 16>;
    for (var k = 0u; k < params.inner; k = k + 1u) {
        var av: array<f32, 4>;
        var bv: array<f32, 4>;
        for (var i = 0u; i < SUB; i = i + 1u) {
            switch mode {
                case 2u: { av[i] = a[k * params.rows + rows[i]]; }
                default: { av[i] = a[rows[i] * params.inner + k]; }
            }
            switch mode {
                case 1u: { bv[i] = b[cols[i] * params.inner + k]; }
                default: { bv[i] = b[k * params.cols + cols[i]]; }
            }
        }
        for (var i = 0u; i < SUB; i = i + 1u) {
            for (var j = 0u; j < SUB; j = j + 1u) {
                acc[i * SUB + j] = acc[i * SUB + j] + av[i] * bv[j];
            }
        }
    }
    return acc;
}

@compute @workgroup_size(16, 16, 1)
fn forward_direct(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    store_block(direct_block(0u, wg, local), wg, local, true);
}

@compute @workgroup_size(16, 16, 1)
fn backward_input_direct(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    store_block(direct_block(1u, wg, local), wg, local, false);
}

@compute @workgroup_size(16, 16, 1)
fn backward_weight_direct(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    store_block(direct_block(2u, wg, local), wg, local, false);
}

// dbias[c] = sum over the params.inner rows of a (rows x cols = inner x cols here) column c.
@compute @workgroup_size(256, 1, 1)
fn backward_bias(@builtin(global_invocation_id) id: vec3<u32>) {
    let c = id.x;
    if (c >= params.cols) { return; }
    var sum = 0.0;
    for (var r = 0u; r < params.inner; r = r + 1u) {
        sum = sum + a[r * params.cols + c];
    }
    result[c] = sum;
}

// result (the gradient w.r.t. the layer output) is zeroed where the forward output (bias
// binding, reused as the mask source) was not positive. params.rows * params.cols elements.
@compute @workgroup_size(256, 1, 1)
fn relu_mask(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.rows * params.cols) { return; }
    result[i] = select(0.0, result[i], bias[i] > 0.0);
}

// PCG's output permutation of a 32-bit state: crate::model::dropout::pcg, operation for operation.
fn pcg(x: u32) -> u32 {
    let state = x * 747796405u + 2891336453u;
    let word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
    return (word >> 22u) ^ word;
}

// result (a hidden layer's output in the forward pass, or the gradient with respect to it in the
// backward pass) through the layer's dropout mask: element i is kept, times the scale, when
// pcg(key ^ pcg(i)) >= threshold, else zeroed (crate::model::dropout::Mask::apply). Parameters:
// rows = elements, cols = the scale's f32 bits, inner = threshold, relu = key.
@compute @workgroup_size(256, 1, 1)
fn dropout(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.rows) { return; }
    let keep = pcg(params.relu ^ pcg(i)) >= params.inner;
    result[i] = select(0.0, result[i] * bitcast<f32>(params.cols), keep);
}

// The naive product, one output per invocation reading straight from storage: the baseline the
// tiled kernel is benchmarked against (`distillrank bench gemm --backend gpu`). Same bindings and
// parameters as forward. Dispatch: ceil(rows * cols / 64).
@compute @workgroup_size(64, 1, 1)
fn forward_naive(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.rows * params.cols) { return; }
    let r = i / params.cols;
    let c = i % params.cols;
    var sum = bias[c];
    for (var k = 0u; k < params.inner; k = k + 1u) {
        sum = sum + a[r * params.inner + k] * b[k * params.cols + c];
    }
    if (params.relu == 1u) { sum = max(sum, 0.0); }
    result[i] = sum;
}

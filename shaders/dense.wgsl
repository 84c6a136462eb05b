// Dense layer of the ranking MLP: forward with bias and ReLU fused, and the three backward
// products. Row-major matrices; B = documents in the batch.
//
//   forward          out  (B, n_out) = act(inp (B, n_in) . weight (n_in, n_out) + bias)
//   relu_mask        dout (B, n_out) *= [out > 0]
//   backward_input   dinp (B, n_in)  = dout (B, n_out) . weight^T
//   backward_weight  dweight (n_in, n_out) = inp^T . dout
//   backward_bias    dbias (n_out) = column sums of dout (one invocation per column, rows in
//                    order: deterministic)
//
// Bindings (group 0, the layout every kernel shares): 0 params (uniform), 1 a, 2 b,
// 3 bias (forward) or the forward output (relu_mask), 4 result. Binding 5 is not used here.
// The products are tiled through workgroup memory: each workgroup computes a TILE x TILE block of
// the result, stepping through the inner dimension TILE at a time. Dispatch: (ceil(cols / TILE),
// ceil(rows / TILE), 1) for the products, ceil(n / 256) for the element-wise kernels.

const TILE: u32 = 16u;

struct Params {
    rows: u32,   // rows of the result
    cols: u32,   // columns of the result
    inner: u32,  // the summed dimension
    relu: u32,   // forward: 1 to apply ReLU
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> result: array<f32>;

var<workgroup> tile_a: array<array<f32, 16>, 16>;
var<workgroup> tile_b: array<array<f32, 16>, 16>;

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

fn tiled_product(mode: u32, wg: vec3<u32>, local: vec3<u32>) -> f32 {
    let r = wg.y * TILE + local.y;
    let c = wg.x * TILE + local.x;
    var sum = 0.0;
    let steps = (params.inner + TILE - 1u) / TILE;
    for (var s = 0u; s < steps; s = s + 1u) {
        tile_a[local.y][local.x] = load_a(mode, r, s * TILE + local.x);
        tile_b[local.y][local.x] = load_b(mode, s * TILE + local.y, c);
        workgroupBarrier();
        for (var k = 0u; k < TILE; k = k + 1u) {
            sum = sum + tile_a[local.y][k] * tile_b[k][local.x];
        }
        workgroupBarrier();
    }
    return sum;
}

@compute @workgroup_size(16, 16, 1)
fn forward(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let v = tiled_product(0u, wg, local);
    let r = wg.y * TILE + local.y;
    let c = wg.x * TILE + local.x;
    if (r < params.rows && c < params.cols) {
        var out = v + bias[c];
        if (params.relu == 1u) { out = max(out, 0.0); }
        result[r * params.cols + c] = out;
    }
}

@compute @workgroup_size(16, 16, 1)
fn backward_input(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let v = tiled_product(1u, wg, local);
    let r = wg.y * TILE + local.y;
    let c = wg.x * TILE + local.x;
    if (r < params.rows && c < params.cols) {
        result[r * params.cols + c] = v;
    }
}

@compute @workgroup_size(16, 16, 1)
fn backward_weight(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) local: vec3<u32>) {
    let v = tiled_product(2u, wg, local);
    let r = wg.y * TILE + local.y;
    let c = wg.x * TILE + local.x;
    if (r < params.rows && c < params.cols) {
        result[r * params.cols + c] = v;
    }
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

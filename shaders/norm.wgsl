// Layer normalisation of a hidden layer's pre-activations, then ReLU (crate::cpu::mlp's
// layer_norm_forward and layer_norm_backward, operation for operation). Row-major; B = rows of the
// batch, n = the layer's units; `norm` holds the gain (n) then the shift (n).
//
//   layer_norm_forward          out (B, n) = relu(gain * (pre - mean) * rstd + shift), and per
//                               row stats (B, 2) = (mean, rstd), rstd = 1 / sqrt(var + EPS)
//   layer_norm_backward_input   dpre (B, n) = rstd * (g - mean(g) - x_hat * mean(g * x_hat)),
//                               g = dout * gain, x_hat = (pre - mean) * rstd; dout already
//                               through the ReLU's mask
//   layer_norm_backward_params  dnorm (2n) = (column sums of dout * x_hat, column sums of dout),
//                               rows in order: deterministic
//
// Bindings (the layout every kernel shares): 0 params (rows = B, cols = n), 1 a, 2 b, 3 c,
// 4 result, 5 stats. forward: a = pre, b = norm, result = out. backward_input: a = dout,
// b = norm, c = pre, result = dpre. backward_params: a = dout, c = pre, result = dnorm.
// Dispatch: ceil(B / 64) for the first two (one invocation per row), ceil(n / 64) for the last
// (one per unit).

// crate::model::mlp::LAYER_NORM_EPS: ONNX's LayerNormalization default.
const EPS: f32 = 1e-5;

struct Params {
    rows: u32,
    cols: u32,
    inner: u32,
    relu: u32,
}

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read> c: array<f32>;
@group(0) @binding(4) var<storage, read_write> result: array<f32>;
@group(0) @binding(5) var<storage, read_write> stats: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn layer_norm_forward(@builtin(global_invocation_id) id: vec3<u32>) {
    let r = id.x;
    if (r >= params.rows) { return; }
    let n = params.cols;
    let row = r * n;
    var sum = 0.0;
    for (var j = 0u; j < n; j = j + 1u) { sum = sum + a[row + j]; }
    let mean = sum / f32(n);
    var squares = 0.0;
    for (var j = 0u; j < n; j = j + 1u) {
        let d = a[row + j] - mean;
        squares = squares + d * d;
    }
    let rstd = 1.0 / sqrt(squares / f32(n) + EPS);
    for (var j = 0u; j < n; j = j + 1u) {
        let v = b[j] * ((a[row + j] - mean) * rstd) + b[n + j];
        result[row + j] = select(0.0, v, v > 0.0);
    }
    stats[2u * r] = mean;
    stats[2u * r + 1u] = rstd;
}

@compute @workgroup_size(64, 1, 1)
fn layer_norm_backward_input(@builtin(global_invocation_id) id: vec3<u32>) {
    let r = id.x;
    if (r >= params.rows) { return; }
    let n = params.cols;
    let row = r * n;
    let mean = stats[2u * r];
    let rstd = stats[2u * r + 1u];
    var mean_g = 0.0;
    var mean_gx = 0.0;
    for (var j = 0u; j < n; j = j + 1u) {
        let x_hat = (c[row + j] - mean) * rstd;
        let g = a[row + j] * b[j];
        mean_g = mean_g + g;
        mean_gx = mean_gx + g * x_hat;
    }
    mean_g = mean_g / f32(n);
    mean_gx = mean_gx / f32(n);
    for (var j = 0u; j < n; j = j + 1u) {
        let x_hat = (c[row + j] - mean) * rstd;
        result[row + j] = rstd * (a[row + j] * b[j] - mean_g - x_hat * mean_gx);
    }
}

@compute @workgroup_size(64, 1, 1)
fn layer_norm_backward_params(@builtin(global_invocation_id) id: vec3<u32>) {
    let j = id.x;
    let n = params.cols;
    if (j >= n) { return; }
    var gain = 0.0;
    var shift = 0.0;
    for (var r = 0u; r < params.rows; r = r + 1u) {
        let d = a[r * n + j];
        let x_hat = (c[r * n + j] - stats[2u * r]) * stats[2u * r + 1u];
        gain = gain + d * x_hat;
        shift = shift + d;
    }
    result[j] = gain;
    result[n + j] = shift;
}

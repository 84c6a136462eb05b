// The listwise family's self-attention over each query's documents and its latent cross
// (crate::cpu::attention holds the reference; tests/gpu.rs checks these kernels against it).
// Row-major; B = rows of the batch, d = the attended width, H = heads, d_h = d / H. The query,
// key and value projections run as one dense layer d -> 3d, so that row i of `qkv` is
// (q_i, k_i, v_i), head h in columns h*d_h..(h+1)*d_h of each.
//
//   attend            a (B, d): for document i and head h, the softmax over the documents j of
//                     i's query of q_i . k_j / sqrt(d_h), times v_j; keeps each (i, h)'s
//                     log-sum-exp for the backward pass
//   cross             out (B, d) = h * (1 + a)
//   cross_backward    dh (B, d) = dout * (1 + a), da (B, d) = dout * h
//   attend_backward_query       dq_i = sum_j P_ij (dP_ij - D_i) k_j / sqrt(d_h), with
//                               dP_ij = da_i . v_j and D_i = da_i . a_i (= sum_j P_ij dP_ij)
//   attend_backward_key_value   dk_j = sum_i P_ij (dP_ij - D_i) q_i / sqrt(d_h),
//                               dv_j = sum_i P_ij da_i, over the documents i of j's query
//   accumulate        result (n) += a (n)
//
// Each invocation of the attention kernels owns one (document, head) and walks its query in
// document order: no atomics, and the same sums in the same order at every run.
//
// Bindings (the layout every kernel shares): 0 params (rows = B, cols = d, inner = H), 1 a,
// 2 b, 3 c, 4 result, 5 aux. `aux` holds each document's query as two u32 (first document,
// one past the last), B pairs, then the log-sum-exp of each (document, head), B * H values.
//   attend:        a = qkv, result = a (gathered), aux
//   cross:         a = h, b = gathered, result = out
//   cross_backward: a = dout, b = gathered, c = h, result = dh, aux = da
//   attend_backward_query, attend_backward_key_value: a = qkv, b = da, c = gathered,
//                  result = dqkv (the query's columns, or the key's and value's), aux
//   accumulate:    a = the addend, result
// Dispatch: ceil(B * H / 64) for the attention kernels, ceil(n / 256) for the element-wise
// ones (n = B * d).

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
@group(0) @binding(5) var<storage, read_write> aux: array<f32>;

fn first_of_query(i: u32) -> u32 {
    return bitcast<u32>(aux[2u * i]);
}

fn end_of_query(i: u32) -> u32 {
    return bitcast<u32>(aux[2u * i + 1u]);
}

fn log_sum_exp_at(i: u32, h: u32) -> u32 {
    return 2u * params.rows + i * params.inner + h;
}

fn head_width() -> u32 {
    return params.cols / params.inner;
}

// q_i . k_j over head h's columns, over sqrt(d_h).
fn logit(i: u32, j: u32, h: u32) -> f32 {
    let d = params.cols;
    let dh = head_width();
    let qi = 3u * d * i + h * dh;
    let kj = 3u * d * j + d + h * dh;
    var s = 0.0;
    for (var k = 0u; k < dh; k = k + 1u) {
        s = s + a[qi + k] * a[kj + k];
    }
    return s * (1.0 / sqrt(f32(dh)));
}

@compute @workgroup_size(64, 1, 1)
fn attend(@builtin(global_invocation_id) id: vec3<u32>) {
    let heads = params.inner;
    if (id.x >= params.rows * heads) { return; }
    let i = id.x / heads;
    let h = id.x % heads;
    let d = params.cols;
    let dh = head_width();
    let first = first_of_query(i);
    let end = end_of_query(i);
    var most = -3.402823e38;
    for (var j = first; j < end; j = j + 1u) {
        most = max(most, logit(i, j, h));
    }
    var sum = 0.0;
    for (var j = first; j < end; j = j + 1u) {
        sum = sum + exp(logit(i, j, h) - most);
    }
    let out = d * i + h * dh;
    for (var k = 0u; k < dh; k = k + 1u) {
        result[out + k] = 0.0;
    }
    for (var j = first; j < end; j = j + 1u) {
        let p = exp(logit(i, j, h) - most) / sum;
        let vj = 3u * d * j + 2u * d + h * dh;
        for (var k = 0u; k < dh; k = k + 1u) {
            result[out + k] = result[out + k] + p * a[vj + k];
        }
    }
    aux[log_sum_exp_at(i, h)] = most + log(sum);
}

@compute @workgroup_size(256, 1, 1)
fn cross(@builtin(global_invocation_id) id: vec3<u32>) {
    let x = id.x;
    if (x >= params.rows * params.cols) { return; }
    result[x] = a[x] * (1.0 + b[x]);
}

@compute @workgroup_size(256, 1, 1)
fn cross_backward(@builtin(global_invocation_id) id: vec3<u32>) {
    let x = id.x;
    if (x >= params.rows * params.cols) { return; }
    result[x] = a[x] * (1.0 + b[x]);
    aux[x] = a[x] * c[x];
}

// da_i . a_i over head h's columns: D_i of the softmax's backward pass.
fn row_term(i: u32, h: u32) -> f32 {
    let at = params.cols * i + h * head_width();
    var s = 0.0;
    for (var k = 0u; k < head_width(); k = k + 1u) {
        s = s + b[at + k] * c[at + k];
    }
    return s;
}

// da_i . v_j over head h's columns.
fn value_term(i: u32, j: u32, h: u32) -> f32 {
    let d = params.cols;
    let dh = head_width();
    let dai = d * i + h * dh;
    let vj = 3u * d * j + 2u * d + h * dh;
    var s = 0.0;
    for (var k = 0u; k < dh; k = k + 1u) {
        s = s + b[dai + k] * a[vj + k];
    }
    return s;
}

@compute @workgroup_size(64, 1, 1)
fn attend_backward_query(@builtin(global_invocation_id) id: vec3<u32>) {
    let heads = params.inner;
    if (id.x >= params.rows * heads) { return; }
    let i = id.x / heads;
    let h = id.x % heads;
    let d = params.cols;
    let dh = head_width();
    let scale = 1.0 / sqrt(f32(dh));
    let lse = aux[log_sum_exp_at(i, h)];
    let row = row_term(i, h);
    let dq = 3u * d * i + h * dh;
    for (var k = 0u; k < dh; k = k + 1u) {
        result[dq + k] = 0.0;
    }
    for (var j = first_of_query(i); j < end_of_query(i); j = j + 1u) {
        let p = exp(logit(i, j, h) - lse);
        let ds = p * (value_term(i, j, h) - row) * scale;
        let kj = 3u * d * j + d + h * dh;
        for (var k = 0u; k < dh; k = k + 1u) {
            result[dq + k] = result[dq + k] + ds * a[kj + k];
        }
    }
}

@compute @workgroup_size(64, 1, 1)
fn attend_backward_key_value(@builtin(global_invocation_id) id: vec3<u32>) {
    let heads = params.inner;
    if (id.x >= params.rows * heads) { return; }
    let j = id.x / heads;
    let h = id.x % heads;
    let d = params.cols;
    let dh = head_width();
    let scale = 1.0 / sqrt(f32(dh));
    let dk = 3u * d * j + d + h * dh;
    let dv = dk + d;
    for (var k = 0u; k < dh; k = k + 1u) {
        result[dk + k] = 0.0;
        result[dv + k] = 0.0;
    }
    for (var i = first_of_query(j); i < end_of_query(j); i = i + 1u) {
        let p = exp(logit(i, j, h) - aux[log_sum_exp_at(i, h)]);
        let ds = p * (value_term(i, j, h) - row_term(i, h)) * scale;
        let qi = 3u * d * i + h * dh;
        let dai = d * i + h * dh;
        for (var k = 0u; k < dh; k = k + 1u) {
            result[dk + k] = result[dk + k] + ds * a[qi + k];
            result[dv + k] = result[dv + k] + p * b[dai + k];
        }
    }
}

@compute @workgroup_size(256, 1, 1)
fn accumulate(@builtin(global_invocation_id) id: vec3<u32>) {
    let x = id.x;
    if (x >= params.rows * params.cols) { return; }
    result[x] = result[x] + a[x];
}

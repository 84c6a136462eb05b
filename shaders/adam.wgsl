// Adam update of one parameter tensor (spec §2), with both bias corrections folded into lr_t and
// eps_t by the host (lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t), eps_t = eps sqrt(1 - beta2^t)),
// exactly as the CPU engine's Adam. Optional L2 weight decay is added to the gradient. The
// gradient and the parameter may start at offsets into their buffers (the global objectives' anchor
// biases: their gradient in the multiplier kernel's output, the biases after the multipliers).
//
// Bindings: 0 params; 1 gradient (grad_offset + n); 4 parameter (param_offset + n); 5 moments:
// m (n) then v (n). Dispatch: ceil(n / 256).

struct Params {
    n: u32,
    grad_offset: u32,
    param_offset: u32,
    _pad0: u32,
    lr_t: f32,
    eps_t: f32,
    beta1: f32,
    beta2: f32,
    weight_decay: f32,
    _pad1: u32,
    _pad2: u32,
    _pad3: u32,
}

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> grad: array<f32>;
@group(0) @binding(4) var<storage, read_write> param: array<f32>;
@group(0) @binding(5) var<storage, read_write> moments: array<f32>;

@compute @workgroup_size(256, 1, 1)
fn adam(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.n) { return; }
    let p = params.param_offset + i;
    let g = grad[params.grad_offset + i] + params.weight_decay * param[p];
    let m = params.beta1 * moments[i] + (1.0 - params.beta1) * g;
    let v = params.beta2 * moments[params.n + i] + (1.0 - params.beta2) * g * g;
    moments[i] = m;
    moments[params.n + i] = v;
    param[p] = param[p] - params.lr_t * m / (sqrt(v) + params.eps_t);
}

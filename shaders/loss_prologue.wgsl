// The ranking losses' prologue: joined before every file that holds a loss's kernels (the loss
// entries of crate/model/loss.rs name those files; crate/gpu/shaders.rs joins them), so that each
// loss kernel reads one set of parameters and bindings and shares these functions.
//
// Bindings: 0 params; 1 logits (n); 2 targets: hard labels (n) or teacher logits (teachers * n),
// followed by the weights of `loss_weights` on the host (one per document or per group, by the
// loss's weighing); 3 group_info (u32): group offsets (groups + 1), then the group of each
// document (n); 4 dlogits (n): the gradient times params.scale, written or added
// (params.accumulate); 5 partial: each document's (unscaled) share of the loss at
// params.partial_offset, for a deterministic reduction, and a kernel's scratch at
// params.scratch_offset.

struct Params {
    n: u32,
    groups: u32,
    teachers: u32,       // 0: hard targets
    partial_offset: u32,
    scale: f32,
    accumulate: u32,     // 0: overwrite dlogits (the first loss of a step), 1: add to it
    scratch_offset: u32, // a loss's scratch in partial (LambdaRank's ranks)
    _pad: u32,
}

@group(0) @binding(0) var<storage, read> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> targets: array<f32>;
@group(0) @binding(3) var<storage, read> group_info: array<u32>;
@group(0) @binding(4) var<storage, read_write> dlogits: array<f32>;
@group(0) @binding(5) var<storage, read_write> partial: array<f32>;

fn sigmoid(x: f32) -> f32 {
    let e = exp(-abs(x));
    return select(e / (1.0 + e), 1.0 / (1.0 + e), x >= 0.0);
}

fn softplus(x: f32) -> f32 {
    return max(x, 0.0) + log(1.0 + exp(-abs(x)));
}

// Document i's group g and the group's documents start..end.
struct Group {
    g: u32,
    start: u32,
    end: u32,
}

fn group_of(i: u32) -> Group {
    let g = group_info[params.groups + 1u + i];
    return Group(g, group_info[g], group_info[g + 1u]);
}

// Where the weights start in targets: after the labels, or after every teacher's logits.
fn weights_at() -> u32 {
    return select(params.n, params.teachers * params.n, params.teachers > 0u);
}

// Group g's weight (losses weighed per pair or per list).
fn group_weight(g: u32) -> f32 {
    return targets[weights_at() + g];
}

// Writes (or adds, with params.accumulate) params.scale * grad into dlogits[i].
fn write_gradient(i: u32, grad: f32) {
    dlogits[i] = select(0.0, dlogits[i], params.accumulate == 1u) + params.scale * grad;
}

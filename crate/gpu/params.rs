//! The parameters of every kernel, one `#[repr(C)]` struct per WGSL `Params` struct, its fields
//! named as in the shader. A dispatch slot's parameter buffer holds one of them ([`super::Gpu::set_params`]).
//! `tests/shaders.rs` checks each struct's fields, types, offsets and size against the shaders
//! that declare it, through naga, so that a layout that drifts on either side fails the tests.

/// A field of a kernel's parameters: its name, WGSL scalar type, byte offset and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub wgsl: &'static str,
    pub offset: usize,
    pub size: usize,
}

/// The parameters of some kernels: the shader files that declare them as `Params`, and their
/// fields in order.
pub trait KernelParams: bytemuck::Pod {
    const SHADERS: &'static [&'static str];
    const FIELDS: &'static [Field];
}

/// The WGSL name of a field's Rust type.
pub trait WgslScalar {
    const WGSL: &'static str;
}

impl WgslScalar for u32 {
    const WGSL: &'static str = "u32";
}

impl WgslScalar for f32 {
    const WGSL: &'static str = "f32";
}

macro_rules! kernel_params {
    (
        $(#[$doc:meta])*
        $name:ident in [$($shader:literal),+ $(,)?] {
            $($(#[$field_doc:meta])* $field:ident: $ty:ty),+ $(,)?
        }
    ) => {
        $(#[$doc])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            $($(#[$field_doc])* pub $field: $ty),+
        }

        impl KernelParams for $name {
            const SHADERS: &'static [&'static str] = &[$($shader),+];
            const FIELDS: &'static [Field] = &[$(Field {
                name: stringify!($field),
                wgsl: <$ty as WgslScalar>::WGSL,
                offset: std::mem::offset_of!($name, $field),
                size: std::mem::size_of::<$ty>(),
            }),+];
        }
    };
}

kernel_params! {
    /// A dense product: result = rows x cols, summed over inner ([`super::dense_dispatch`]); also
    /// `relu_mask` (rows x cols) and `backward_bias` (cols, over inner rows); the layer
    /// normalisation's kernels (rows x cols, the layer's units).
    DenseParams in ["dense.wgsl", "dense_vec4.wgsl", "norm.wgsl", "attention.wgsl"] {
        rows: u32,
        cols: u32,
        inner: u32,
        /// Forward: 1 to apply ReLU.
        relu: u32,
    }
}

kernel_params! {
    /// A ranking loss over a batch of groups: every loss's kernels, through the prologue joined
    /// to their files.
    RankingLossParams in ["loss_prologue.wgsl"] {
        n: u32,
        groups: u32,
        /// 0: hard labels.
        teachers: u32,
        /// Where the documents' loss shares go.
        partial_offset: u32,
        /// The gradient's factor (alpha or 1 - alpha in PFD Eq. 1).
        scale: f32,
        /// 1: add the gradient to dlogits; 0: overwrite it.
        accumulate: u32,
        /// Where LambdaRank keeps its ranks and ideal-DCG shares.
        scratch_offset: u32,
        _pad: u32,
    }
}

kernel_params! {
    /// A sum of `n` values from `offset` into `result[out_index]` (one row per workgroup).
    ReduceParams in ["reduce.wgsl"] {
        n: u32,
        out_index: u32,
        offset: u32,
        _pad: u32,
    }
}

kernel_params! {
    /// One Adam step over `n` values, both bias corrections folded into `lr_t` and `eps_t`.
    AdamParams in ["adam.wgsl"] {
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
}

kernel_params! {
    /// The global objectives' kernels.
    ObjectiveParams in ["objectives.wgsl"] {
        n: u32,
        /// K.
        constraints: u32,
        /// 0: hinge, 1: log-loss / ln 2.
        surrogate: u32,
        _pad0: u32,
        /// 1 / K; roc_auc_pairs: 0.5 / pairs; F-beta: beta^2.
        scale: f32,
        /// The multipliers' dual step.
        step: f32,
        _pad1: u32,
        _pad2: u32,
    }
}

kernel_params! {
    /// Ranking Distillation's weights and loss.
    DistillParams in ["distill.wgsl"] {
        n: u32,
        groups: u32,
        /// C, the candidates in the batch.
        candidates: u32,
        /// 0 equal, 1 position, 2 discrepancy, 3 both.
        scheme: u32,
        lambda: f32,
        mu: f32,
        /// alpha_RD.
        scale: f32,
        _pad: u32,
    }
}

kernel_params! {
    /// Gathering `m` of `n` rows into a compact buffer, and scattering them back times `scale`.
    SelectParams in ["select.wgsl"] {
        n: u32,
        m: u32,
        _pad0: u32,
        _pad1: u32,
        scale: f32,
        _pad2: u32,
        _pad3: u32,
        _pad4: u32,
    }
}

/// Every kernel's parameters, for the layout check: (struct name, shader files, fields, size).
pub fn all() -> Vec<(
    &'static str,
    &'static [&'static str],
    &'static [Field],
    usize,
)> {
    fn entry<P: KernelParams>(
        name: &'static str,
    ) -> (
        &'static str,
        &'static [&'static str],
        &'static [Field],
        usize,
    ) {
        (name, P::SHADERS, P::FIELDS, std::mem::size_of::<P>())
    }
    vec![
        entry::<DenseParams>("DenseParams"),
        entry::<RankingLossParams>("RankingLossParams"),
        entry::<ReduceParams>("ReduceParams"),
        entry::<AdamParams>("AdamParams"),
        entry::<ObjectiveParams>("ObjectiveParams"),
        entry::<DistillParams>("DistillParams"),
        entry::<SelectParams>("SelectParams"),
    ]
}

impl ReduceParams {
    /// The sum of `n` values from `offset` into `result[out_index]`.
    pub fn new(n: usize, out_index: usize, offset: usize) -> Self {
        ReduceParams {
            n: n as u32,
            out_index: out_index as u32,
            offset: offset as u32,
            _pad: 0,
        }
    }
}

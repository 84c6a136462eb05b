//! The ranking losses on the GPU: the kernels each [`LossKind`]'s entry names for hard or soft
//! targets, over one set of buffers, and their parameters. The trainer ([`super::trainer`]) and
//! the kernel checks both build their dispatches here.

use super::params::RankingLossParams;
use super::shaders::WORKGROUP;
use super::{groups_of, Gpu, Kernel, Slot};
use crate::model::LossKind;

/// The buffers a ranking loss reads and writes (see loss_prologue.wgsl).
pub struct LossBuffers<'a> {
    pub logits: &'a wgpu::Buffer,
    /// Hard labels (n) or teacher logits (teachers x n), then the weights of `loss_weights`.
    pub targets: &'a wgpu::Buffer,
    /// Group offsets (groups + 1), then the group of each document (u32).
    pub group_info: &'a wgpu::Buffer,
    pub dlogits: &'a wgpu::Buffer,
    /// The loss shares, and LambdaRank's scratch.
    pub partial: &'a wgpu::Buffer,
}

/// Where a loss's dispatch puts what it writes, and how its gradient enters dlogits.
#[derive(Debug, Clone, Copy)]
pub struct LossParams {
    pub n: usize,
    pub groups: usize,
    /// 0: hard labels.
    pub teachers: usize,
    /// Where the documents' loss shares go in `partial`.
    pub partial_offset: usize,
    /// Where LambdaRank keeps its ranks and ideal-DCG shares (2 n values) in `partial`.
    pub scratch_offset: usize,
    /// The gradient's factor (alpha or 1 - alpha in PFD Eq. 1).
    pub scale: f32,
    /// Add the gradient to dlogits rather than overwrite it.
    pub accumulate: bool,
}

/// One ranking loss's dispatch slots, one per kernel of its entry.
pub struct RankingLoss {
    slots: Vec<Slot>,
}

impl RankingLoss {
    /// The kernels of `kind` with hard targets (the data loss) or soft ones (the teacher loss),
    /// as its entry names them.
    pub fn new(gpu: &Gpu, kind: LossKind, soft: bool, b: &LossBuffers) -> Self {
        let entry = kind.entry();
        let kernels = if soft { entry.soft } else { entry.hard };
        let buffers = [b.logits, b.targets, b.group_info, b.dlogits, b.partial].map(Some);
        RankingLoss {
            slots: kernels
                .iter()
                .map(|&k| gpu.slot(Kernel::Loss(k), buffers))
                .collect(),
        }
    }

    /// Writes every dispatch's parameters; returns the dispatches to record, in order.
    pub fn prepare(&self, gpu: &Gpu, p: LossParams) -> Vec<(&Slot, (u32, u32, u32))> {
        let params = RankingLossParams {
            n: p.n as u32,
            groups: p.groups as u32,
            teachers: p.teachers as u32,
            partial_offset: p.partial_offset as u32,
            scale: p.scale,
            accumulate: p.accumulate as u32,
            scratch_offset: p.scratch_offset as u32,
            _pad: 0,
        };
        self.slots
            .iter()
            .map(|slot| {
                gpu.set_params(slot, &params);
                (slot, (groups_of(p.n, WORKGROUP), 1, 1))
            })
            .collect()
    }
}

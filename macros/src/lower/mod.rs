//! Lowering: the tile IR of one specialisation, after layout inference, to the Rust statements of
//! the kernel body. The statements call only `::tessera::device` (the runtime layer) and
//! `::tessera::tile` (typed tiles, element arithmetic, vector accesses), so the same expansion
//! runs on nvptx64 and, built for the host, on the emulator.
//!
//! # Representation of values
//!
//! - A **tile** value of layout `L` (its [`LayoutSlot::Inferred`]) and element type `T` is one
//!   local of type `::tessera::tile::Tile<T, Lk, R>` per thread: `R = L.in_size(register)`
//!   registers, register `r` holding the element at logical coordinate `L(r, lane, warp)`. `Lk`
//!   is a marker type generated once per distinct layout of the kernel ([`Ctx::layout_type`]),
//!   implementing `::tessera::tile::Layout` with `const LAYOUT` = `L`, and checked in `const`
//!   context by `::tessera::tile::assert_tile_layout`. Operands are read through
//!   `Tile::<T, Lk, R>::regs(v)` ([`Ctx::regs`]), so rustc rejects a tile of another layout.
//! - Coordinates: `L(r, lane, warp) = L(r, 0, 0) ⊕ L(0, lane, warp)` (XOR-linear). The register
//!   part is resolved at expansion time ([`register_images`]); the thread part of each layout
//!   and dimension is computed once per thread at the top of the kernel
//!   ([`Ctx::thread_coord`]) from `lane = tid.x & 31`, `warp = tid.x >> 5` (the launcher uses a
//!   1-D block of `32 × num_warps` threads).
//! - A **scalar** (rank 0) is a plain local of its element type, the same in every thread of
//!   the program (`ProgramId`, arguments, reductions to rank 0, loop indices…), so an `if` on a
//!   scalar never diverges inside a program and may contain barriers.
//! - Element types: `bool`, `i8`…`u64`, `f32`, `f64` are Rust's; `f16`, `bf16`, `f8e4m3`,
//!   `f8e5m2` are `::tessera::{f16, …}` storage types whose arithmetic converts to `f32`,
//!   computes and rounds back after each operation (documented on `::tessera::tile::Num`);
//!   `Ptr<T>` elements are `::tessera::Ptr<T>` (64-bit addresses).
//! - **Shared memory**: one dynamic shared buffer per kernel, at `dynamic_shared_base()`. An op
//!   that needs scratch asks [`Ctx::alloc_shared`] for an offset; the bytes are its own until the
//!   op ends, then the next op reuses them, and the kernel's total is the high-water mark
//!   (reported as the launch's dynamic shared bytes). Because the bytes are reused, **an op must
//!   `sync_threads()` before its first shared-memory write** (earlier ops' reads may still be in
//!   flight in other warps): [`Ctx::shared_write_barrier`].
//!
//! # Entry points of the data-movement lowering (`convert.rs`, `gather.rs`, `dot.rs`)
//!
//! Each receives the *register arrays* of its operands (locals of type `[T; R]`, bound by the
//! caller from the typed tiles) and returns the statements that compute the result plus the
//! ident of a local `[T; R']` holding the result's registers in the destination layout; the
//! caller wraps it into the typed result tile.
//!
//! ```text
//! pub fn lower_convert(ctx: &mut Ctx, op: &Op, src: &Ident, dtype: DType,
//!                      movement: &tessera_layout::plan::movement::Movement)
//!     -> (TokenStream, Ident)
//! pub fn lower_gather(ctx: &mut Ctx, op: &Op, code: &tessera_layout::plan::gather_code::GatherCode,
//!                     src: &Ident, index: &Ident, index_layout: &LinearLayout,
//!                     dst_layout: &LinearLayout, dtype: DType)
//!     -> Result<(TokenStream, Ident), syn::Error>
//! pub fn lower_dot(ctx: &mut Ctx, op: &Op, plan: &tessera_layout::plan::mma::DotPlan,
//!                  [a, b, acc]: [&Ident; 3], acc_layout: &LinearLayout,
//!                  dst_layout: &LinearLayout, in_dtype: DType, acc_dtype: DType)
//!     -> Result<(TokenStream, Ident), syn::Error>
//! ```
//!
//! `op` is there for error locations (`op.loc.error(..)`). Shared memory: `ctx.alloc_shared`,
//! `ctx.shared_write_barrier()`. Per-thread lane/warp: `ctx.lane()`, `ctx.warp()`. Fresh names:
//! `ctx.fresh("stem")`. Convert ops whose operand or result is a user layout
//! ([`LayoutSlot::Fixed`], known only to rustc) are lowered here, by
//! `::tessera::tile`-generic code, not by `lower_convert`.

mod atomic;
mod control;
mod convert;
mod dot;
mod elementwise;
mod gather;
pub mod kernel;
mod memory;
mod pipeline;
mod reduce;
mod scalarise;
mod scan;
#[cfg(test)]
mod scan_tests;
mod shape;
#[cfg(test)]
mod tests;
mod wgmma;

use crate::diag::Loc;
use crate::infer::Access;
use crate::ir::{DotCode, Kernel, LayoutSlot, Op, OpKind, Region, ValueId};
use crate::types::{DType, Scalar};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use std::collections::HashMap;
use tessera_layout::{Label, LinearLayout};

pub use kernel::lower_kernel;

/// Facts from layout inference that are not layouts: the plan of every load and store, and
/// what the axis analysis assumed of the arguments.
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// Every load and store of the kernel with its access plan (`crate::infer::access`); an
    /// access without one is lowered to scalar accesses.
    pub accesses: Vec<Access>,
    /// Per kernel parameter (index into `Kernel::params`): what the analysis assumed of it
    /// (its address's alignment, its value's divisor or its value), checked before launch.
    pub assumptions: Vec<(usize, crate::infer::AssumptionKind)>,
    /// Per integer parameter the variant knows the value of (index into `Kernel::params`):
    /// the value, bound to the parameter's local in place of the argument
    /// (`crate::infer::Inference::param_values`).
    pub param_values: Vec<(usize, i128)>,
    /// Elementwise results whose registers come in groups of equal values, with the group size
    /// (`crate::infer::uniform`): computed once per group.
    pub uniform_registers: HashMap<ValueId, u32>,
    /// The software-pipelining plan of every loop with a `dot` (`crate::infer::pipeline`),
    /// rendered by `pipeline.rs`.
    pub pipelines: Vec<crate::infer::pipeline::LoopPipeline>,
}

/// The lowering context of one specialisation. See the module docs for the representation.
pub struct Ctx<'k> {
    pub kernel: &'k Kernel,
    pub facts: &'k Facts,
    names: HashMap<ValueId, Ident>,
    next_fresh: u32,
    /// Statements run once per thread at the top of the kernel (lane, warp, thread coordinates).
    prologue: TokenStream,
    /// Items (layout marker types and their `const` checks).
    items: TokenStream,
    /// Items for the kernel's module rather than the function body (the `const` checks of user
    /// layouts; `expand` keeps one of each text, shared by every variant).
    module_items: Vec<TokenStream>,
    layout_types: Vec<(LinearLayout, Ident)>,
    /// User layouts (`convert_layout` paths): the path's text, its marker type and the const
    /// holding its register count.
    user_layouts: Vec<(String, Ident, Ident)>,
    thread_coords: HashMap<(usize, usize), TokenStream>,
    owners: HashMap<usize, TokenStream>,
    uses_thread_ids: bool,
    /// Whether the prologue binds `__warpgroup` ([`Ctx::warpgroup`]).
    uses_warpgroup: bool,
    shared_top: u32,
    shared_high: u32,
    /// The pipelined loads of the loops being lowered (`pipeline.rs`).
    pipeline_reads: Vec<pipeline::PipelineRead>,
    /// The `wgmma` dots of the pipelined loop being lowered that read ring slots.
    ring_wgmma: Vec<wgmma::RingWgmma>,
    /// The tensor maps the body's TMA copies read, in the order of their hidden parameters
    /// (`__tessera_map0`, …).
    tensor_maps: Vec<TensorMapUse>,
    /// The NVIDIA-only instructions rendered so far ([`Ctx::nvidia_only`]).
    nvidia_only: Vec<&'static str>,
}

/// A tensor map the kernel's TMA copies read: the tensor (its pointer's parameter index), the
/// map's element type (`TmaElement` variant name), box and swizzle width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapUse {
    pub tensor: usize,
    pub rank: usize,
    pub element: &'static str,
    pub box_shape: [u32; 2],
    pub swizzle_bytes: u32,
}

impl TensorMapUse {
    /// The hidden parameter of map `index`.
    pub fn param(index: usize) -> Ident {
        format_ident!("__tessera_map{}", index)
    }
}

impl<'k> Ctx<'k> {
    pub fn new(kernel: &'k Kernel, facts: &'k Facts) -> Self {
        Ctx {
            kernel,
            facts,
            names: HashMap::new(),
            next_fresh: 0,
            prologue: TokenStream::new(),
            items: TokenStream::new(),
            module_items: Vec::new(),
            layout_types: Vec::new(),
            user_layouts: Vec::new(),
            thread_coords: HashMap::new(),
            owners: HashMap::new(),
            uses_thread_ids: false,
            uses_warpgroup: false,
            shared_top: 0,
            shared_high: 0,
            pipeline_reads: Vec::new(),
            ring_wgmma: Vec::new(),
            tensor_maps: Vec::new(),
            nvidia_only: Vec::new(),
        }
    }

    /// Records that the body uses `instruction`, which exists on NVIDIA GPUs only: the
    /// variant then has no amdgpu entry (every renderer of such an instruction says so here).
    pub fn nvidia_only(&mut self, instruction: &'static str) {
        if !self.nvidia_only.contains(&instruction) {
            self.nvidia_only.push(instruction);
        }
    }

    /// The hidden parameter holding the tensor map `map` (added to the kernel's maps once).
    pub fn tensor_map(&mut self, map: TensorMapUse) -> Ident {
        let index = match self.tensor_maps.iter().position(|m| *m == map) {
            Some(i) => i,
            None => {
                self.tensor_maps.push(map);
                self.tensor_maps.len() - 1
            }
        };
        TensorMapUse::param(index)
    }

    // ------------------------------------------------------------------ names

    /// A fresh local name `__{stem}{n}` (never a user name: those are not emitted as locals).
    pub fn fresh(&mut self, stem: &str) -> Ident {
        self.next_fresh += 1;
        format_ident!("__{}{}", stem, self.next_fresh)
    }

    /// The local holding `id`, named on first use: `v12` or `v12_name` for a user variable.
    pub fn name(&mut self, id: ValueId) -> Ident {
        if let Some(n) = self.names.get(&id) {
            return n.clone();
        }
        let user = self.kernel.value(id).name.as_deref().map(sanitize);
        let ident = match user {
            Some(u) if !u.is_empty() => format_ident!("v{}_{}", id.0, u),
            _ => format_ident!("v{}", id.0),
        };
        self.names.insert(id, ident.clone());
        ident
    }

    // ------------------------------------------------------------------ types and layouts

    /// The layout of a tile value (an internal error for scalars and undecided slots).
    pub fn layout(&self, id: ValueId, loc: &Loc) -> Result<LinearLayout, syn::Error> {
        match &self.kernel.value(id).layout {
            LayoutSlot::Inferred(l) => Ok(*l),
            LayoutSlot::Scalar => Err(internal(loc, &format!("{id} is a scalar, not a tile"))),
            LayoutSlot::Unassigned => Err(internal(
                loc,
                &format!("{id} has no layout (layout inference did not run)"),
            )),
            LayoutSlot::Fixed(_) => Err(internal(
                loc,
                &format!(
                    "{id} has a user layout (convert_layout), which only rustc knows, and is used \
                     by an op other than a conversion; layout inference should have converted it \
                     first"
                ),
            )),
        }
    }

    pub fn is_scalar(&self, id: ValueId) -> bool {
        self.kernel.ty(id).is_scalar()
    }

    pub fn dtype(&self, id: ValueId) -> DType {
        self.kernel.ty(id).dtype
    }

    /// The marker type of `layout`, generated on first use with its `const` check: a module
    /// item named after its content (`TileLayout_<hash>`), so that every body and variant of a
    /// kernel module that uses the same layout shares one type and one `const` evaluation (the
    /// expander keeps one copy of equal module items).
    pub fn layout_type(&mut self, layout: &LinearLayout) -> Ident {
        if let Some((_, ident)) = self.layout_types.iter().find(|(l, _)| l == layout) {
            return ident.clone();
        }
        let bases = |label: Label| -> TokenStream {
            let list: Vec<TokenStream> = (0..layout.in_bits(label) as usize)
                .map(|k| {
                    let coords = layout
                        .basis(label, k)
                        .map(|c| c[..layout.num_out_dims()].to_vec())
                        .unwrap_or_default();
                    let coords = coords.iter().map(|&c| Literal::u32_unsuffixed(c));
                    quote!(&[#(#coords),*])
                })
                .collect();
            quote!(&[#(#list),*])
        };
        let (reg, lane, warp) = (
            bases(Label::Register),
            bases(Label::Lane),
            bases(Label::Warp),
        );
        let shape: Vec<Literal> = (0..layout.num_out_dims())
            .map(|d| Literal::u32_unsuffixed(layout.out_size(Label::Dim(d as u8))))
            .collect();
        let r = layout.in_size(Label::Register) as usize;
        let warps = Literal::u32_unsuffixed(self.kernel.num_warps);
        let value = quote!(::tessera::tile::layout(#reg, #lane, #warp, &[#(#shape),*]));
        let check = quote!(<#r>(&[#(#shape),*], #warps));
        // FNV-1a of what defines the type: two layouts that collided would be two items of one
        // name, a compile error (never one type standing for both).
        let hash = crate::fnv1a(format!("{value} {check}").as_bytes());
        let ident = format_ident!("TileLayout_{:016x}", hash);
        self.layout_types.push((*layout, ident.clone()));
        self.module_items.push(quote! {
            #[derive(Clone, Copy)]
            struct #ident;
            impl ::tessera::tile::Layout for #ident {
                const LAYOUT: ::tessera::tile::LinearLayout = #value;
            }
            const _: () = ::tessera::tile::assert_tile_layout::<#ident, #r>(&[#(#shape),*], #warps);
        });
        ident
    }

    /// The marker type of a user layout (the `const` at `path`, which only rustc evaluates) for a
    /// tile of `shape`, with the `const` holding its register count and the `const` check that it
    /// is a valid layout of that tile (`::tessera::tile::assert_user_layout`: a compile error
    /// with the layout's own message otherwise).
    pub fn user_layout_type(&mut self, path: &syn::Path, shape: &[u64]) -> (Ident, Ident) {
        let text = quote!(#path).to_string();
        let shape_text = format!("{shape:?}");
        let key = format!("{text} {shape_text}");
        if let Some((_, m, r)) = self.user_layouts.iter().find(|(k, _, _)| *k == key) {
            return (m.clone(), r.clone());
        }
        let n = self.user_layouts.len();
        let marker = format_ident!("UserLayout{}", n);
        let regs = format_ident!("USER_LAYOUT_{}_REGISTERS", n);
        self.user_layouts.push((key, marker.clone(), regs.clone()));
        let dims: Vec<Literal> = shape
            .iter()
            .map(|&d| Literal::u32_unsuffixed(d as u32))
            .collect();
        let warps = Literal::u32_unsuffixed(self.kernel.num_warps);
        self.items.extend(quote! {
            #[derive(Clone, Copy)]
            struct #marker;
            impl ::tessera::tile::Layout for #marker {
                const LAYOUT: ::tessera::tile::LinearLayout = #path;
            }
            const #regs: usize = <#marker as ::tessera::tile::Layout>::LAYOUT
                .in_size(::tessera::tile::Label::Register) as usize;
        });
        // The check, once per kernel module, on the user's path: an invalid layout is a compile
        // error there, with the layout's own message.
        let span = path
            .segments
            .last()
            .map_or_else(Span::call_site, |s| s.ident.span());
        let check = quote_spanned! {span=>
            const _: () = ::tessera::tile::assert_user_layout(&#path, &[#(#dims),*], #warps);
        };
        self.module_items.push(check);
        (marker, regs)
    }

    /// The Rust type of a value: its element type for a scalar, `Tile<T, Lk, R>` for a tile.
    pub fn value_type(&mut self, id: ValueId, loc: &Loc) -> Result<TokenStream, syn::Error> {
        let elem = elem_type(self.dtype(id));
        if self.is_scalar(id) {
            return Ok(elem);
        }
        if let LayoutSlot::Fixed(path) = &self.kernel.value(id).layout {
            let path = path.clone();
            let shape = self.kernel.ty(id).shape.clone();
            let (marker, regs) = self.user_layout_type(&path, &shape);
            return Ok(quote!(::tessera::tile::Tile<#elem, #marker, #regs>));
        }
        let layout = self.layout(id, loc)?;
        let marker = self.layout_type(&layout);
        let r = layout.in_size(Label::Register) as usize;
        Ok(quote!(::tessera::tile::Tile<#elem, #marker, #r>))
    }

    /// An expression for the registers (`[T; R]`) of tile `id`, read through its typed tile, or
    /// the scalar itself.
    pub fn regs(&mut self, id: ValueId, loc: &Loc) -> Result<TokenStream, syn::Error> {
        let name = self.name(id);
        if self.is_scalar(id) {
            return Ok(quote!(#name));
        }
        let ty = self.value_type(id, loc)?;
        Ok(quote!(<#ty>::regs(#name)))
    }

    /// `let v: Type = <value>;` for a result: `value` is the scalar or the `[T; R]` registers.
    pub fn bind(
        &mut self,
        id: ValueId,
        value: TokenStream,
        loc: &Loc,
    ) -> Result<TokenStream, syn::Error> {
        let name = self.name(id);
        let ty = self.value_type(id, loc)?;
        if self.is_scalar(id) {
            Ok(quote!(let #name: #ty = #value;))
        } else {
            Ok(quote!(let #name: #ty = <#ty>::from_regs(#value);))
        }
    }

    // ------------------------------------------------------------------ threads

    /// This thread's lane (0..32), computed once per thread.
    pub fn lane(&mut self) -> TokenStream {
        self.uses_thread_ids = true;
        quote!(__lane)
    }

    /// This thread's warp in the program (0..num_warps), computed once per thread.
    pub fn warp(&mut self) -> TokenStream {
        self.uses_thread_ids = true;
        quote!(__warp)
    }

    /// This thread's warpgroup (four warps), computed once per thread: the warp index of lane 0
    /// (`shfl.sync.idx`), which ptxas knows uniform across the warp, so that the `wgmma`
    /// descriptors computed from it stay in the uniform registers the instructions read.
    pub fn warpgroup(&mut self) -> TokenStream {
        if !self.uses_warpgroup {
            self.uses_warpgroup = true;
            let warp = self.warp();
            self.prologue.extend(quote! {
                let __warpgroup: usize =
                    (::tessera::device::shfl_idx_b32(0xffff_ffff, #warp, 0, 31) / 4) as usize;
            });
        }
        quote!(__warpgroup)
    }

    fn layout_index(&mut self, layout: &LinearLayout) -> usize {
        self.layout_type(layout);
        self.layout_types
            .iter()
            .position(|(l, _)| l == layout)
            .unwrap_or(0)
    }

    /// The thread part of coordinate `dim` of `layout`: `L(0, lane, warp)[dim]` as a `u32`
    /// expression (a literal 0 when no lane or warp basis moves that coordinate), computed once
    /// per thread in the prologue.
    pub fn thread_coord(&mut self, layout: &LinearLayout, dim: usize) -> TokenStream {
        let index = self.layout_index(layout);
        if let Some(t) = self.thread_coords.get(&(index, dim)) {
            return t.clone();
        }
        let mut terms = Vec::new();
        for (label, var) in [(Label::Lane, self.lane()), (Label::Warp, self.warp())] {
            for k in 0..layout.in_bits(label) as usize {
                let c = layout.basis(label, k).map_or(0, |b| b[dim]);
                if c != 0 {
                    let c = Literal::u32_unsuffixed(c);
                    let k = Literal::u32_unsuffixed(k as u32);
                    terms.push(quote!(((#var >> #k) & 1) * #c));
                }
            }
        }
        let expr = if terms.is_empty() {
            quote!(0u32)
        } else {
            let ident = format_ident!("__t{}_{}", index, dim);
            self.prologue
                .extend(quote!(let #ident: u32 = 0u32 #(^ #terms)*;));
            quote!(#ident)
        };
        self.thread_coords.insert((index, dim), expr.clone());
        expr
    }

    /// Whether this thread owns its elements of `layout` among threads holding copies (lanes
    /// and warps whose bits are duplicate bits of the layout): a `bool` expression computed
    /// once per thread, `true` where no lane or warp bit duplicates.
    pub fn owner(&mut self, layout: &LinearLayout) -> TokenStream {
        let index = self.layout_index(layout);
        if let Some(t) = self.owners.get(&index) {
            return t.clone();
        }
        let masks = layout.free_variable_masks();
        let mask = |label: Label| layout.in_index(label).map_or(0, |i| masks[i]);
        let (lane_free, warp_free) = (mask(Label::Lane), mask(Label::Warp));
        let expr = if lane_free == 0 && warp_free == 0 {
            quote!(true)
        } else {
            let ident = format_ident!("__owner{}", index);
            let (lane, warp) = (self.lane(), self.warp());
            let (lf, wf) = (
                Literal::u32_unsuffixed(lane_free),
                Literal::u32_unsuffixed(warp_free),
            );
            self.prologue
                .extend(quote!(let #ident: bool = (#lane & #lf) == 0 && (#warp & #wf) == 0;));
            quote!(#ident)
        };
        self.owners.insert(index, expr.clone());
        expr
    }

    // ------------------------------------------------------------------ shared memory

    /// `bytes` of dynamic shared memory aligned to `align` (a power of two ≤ 16) for the op being
    /// lowered: the offset from `dynamic_shared_base()`. Free again when the op ends.
    pub fn alloc_shared(&mut self, bytes: u32, align: u32) -> u32 {
        let align = align.clamp(1, 16);
        let offset = self.shared_top.div_ceil(align) * align;
        self.shared_top = offset + bytes;
        self.shared_high = self.shared_high.max(self.shared_top);
        offset
    }

    /// The barrier an op emits before its first shared-memory write (see the module docs).
    pub fn shared_write_barrier(&self) -> TokenStream {
        quote!(::tessera::device::sync_threads();)
    }

    /// The kernel's dynamic shared memory so far (bytes).
    pub fn shared_bytes(&self) -> u32 {
        self.shared_high
    }

    // ------------------------------------------------------------------ regions and ops

    /// The statements of a region's ops (its arguments must already be bound).
    pub fn lower_region(&mut self, region: &Region) -> Result<TokenStream, syn::Error> {
        let mut out = TokenStream::new();
        for op in &region.ops {
            let mark = self.shared_top;
            out.extend(self.lower_op(op)?);
            self.shared_top = mark;
        }
        Ok(out)
    }

    fn lower_op(&mut self, op: &Op) -> Result<TokenStream, syn::Error> {
        // A pipelined load is an asynchronous copy issued ahead; its conversion reads the slot.
        let pipelined = |v: Option<&ValueId>| {
            v.and_then(|v| self.pipeline_reads.iter().find(|r| r.value == *v))
        };
        match &op.kind {
            OpKind::Load { .. } if pipelined(op.results.first()).is_some() => {
                return Ok(TokenStream::new())
            }
            // The transpose of a load copied into a `wgmma` operand's ring: the slot is the
            // operand.
            OpKind::Trans { .. }
                if pipelined(op.operands.first())
                    .is_some_and(|r| r.transposed.as_ref() == op.results.first()) =>
            {
                return Ok(TokenStream::new())
            }
            OpKind::Convert { .. } => {
                if let Some(read) = pipelined(op.operands.first()).cloned() {
                    return pipeline::lower_read(self, op, &read);
                }
            }
            _ => {}
        }
        match &op.kind {
            OpKind::Constant(_)
            | OpKind::ProgramId { .. }
            | OpKind::NumPrograms { .. }
            | OpKind::Arange { .. }
            | OpKind::Splat
            | OpKind::Unary(_)
            | OpKind::Binary(_)
            | OpKind::Compare(_)
            | OpKind::Fma
            | OpKind::Select
            | OpKind::Cast { .. } => elementwise::lower(self, op),
            OpKind::ExpandDims { .. }
            | OpKind::Broadcast
            | OpKind::Reshape
            | OpKind::Trans { .. }
            | OpKind::Join
            | OpKind::Split => shape::lower(self, op),
            OpKind::AddPtr | OpKind::Load { .. } | OpKind::Store { .. } => memory::lower(self, op),
            OpKind::Atomic { .. } => atomic::lower(self, op),
            OpKind::Reduce { .. } => reduce::lower(self, op),
            OpKind::Scan { .. } => scan::lower(self, op),
            OpKind::For => control::lower_for(self, op),
            OpKind::While => control::lower_while(self, op),
            OpKind::If => control::lower_if(self, op),
            OpKind::Convert {
                conversion: Some(conversion),
            } => self.lower_planned_convert(op, conversion),
            OpKind::Convert { conversion: None } | OpKind::ConvertLayout { .. } => {
                self.lower_user_layout_convert(op)
            }
            OpKind::Gather {
                code: Some(code), ..
            } => self.lower_gather(op, code),
            OpKind::Gather { code: None, .. } => {
                Err(internal(&op.loc, "a gather without its plan"))
            }
            OpKind::Dot { plan: Some(plan) } => self.lower_dot(op, plan),
            OpKind::Dot { plan: None } => Err(internal(&op.loc, "a dot without its plan")),
        }
    }

    /// A conversion between inferred layouts, as planned: `convert::lower_convert`.
    fn lower_planned_convert(
        &mut self,
        op: &Op,
        conversion: &tessera_layout::plan::conversion_code::ConversionCode,
    ) -> Result<TokenStream, syn::Error> {
        let loc = &op.loc;
        let (x, result) = one_to_one(op)?;
        let regs = self.regs(x, loc)?;
        let src = self.fresh("convert_src");
        let (code, out) =
            convert::lower_convert(self, op, &src, self.dtype(x), &conversion.movement);
        let bind = self.bind(result, quote!(#out), loc)?;
        Ok(quote!(let #src = #regs; #code #bind))
    }

    /// `gather(src, index, axis)`: `gather::lower_gather` on the operands' registers.
    fn lower_gather(
        &mut self,
        op: &Op,
        code: &tessera_layout::plan::gather_code::GatherCode,
    ) -> Result<TokenStream, syn::Error> {
        let loc = &op.loc;
        let (Some(&s), Some(&i), Some(&r)) =
            (op.operands.first(), op.operands.get(1), op.results.first())
        else {
            return Err(internal(loc, "a gather without its operands or result"));
        };
        let (il, rl) = (self.layout(i, loc)?, self.layout(r, loc)?);
        let (sr, ir) = (self.regs(s, loc)?, self.regs(i, loc)?);
        let (sn, inn) = (self.fresh("gather_src"), self.fresh("gather_index"));
        let ds = self.dtype(s);
        let (code, out) = gather::lower_gather(self, op, code, &sn, &inn, &il, &rl, ds)?;
        let bind = self.bind(r, quote!(#out), loc)?;
        Ok(quote!(let #sn = #sr; let #inn = #ir; #code #bind))
    }

    /// `dot(a, b, acc)`: `dot::lower_dot` (`mma.sync`), `wgmma::lower_wgmma` or
    /// `dot::lower_mfma` (AMD) on the operands' registers, as planned.
    fn lower_dot(&mut self, op: &Op, code: &DotCode) -> Result<TokenStream, syn::Error> {
        let loc = &op.loc;
        let (Some(&a), Some(&b), Some(&c), Some(&r)) = (
            op.operands.first(),
            op.operands.get(1),
            op.operands.get(2),
            op.results.first(),
        ) else {
            return Err(internal(loc, "a dot without its operands or result"));
        };
        let (cl, rl) = (self.layout(c, loc)?, self.layout(r, loc)?);
        let ring = self.ring_wgmma.iter().find(|w| w.result == r).cloned();
        if let (Some(ring), DotCode::Wgmma(plan)) = (ring, code) {
            // Operands in ring slots have no registers (their loads were issued ahead).
            let mut bound = TokenStream::new();
            let mut names = Vec::new();
            for (v, slot, name) in [(a, &ring.a_slot, "dot_a"), (b, &ring.b_slot, "dot_b")] {
                let n = self.fresh(name);
                if slot.is_none() {
                    let regs = self.regs(v, loc)?;
                    bound.extend(quote!(let #n = #regs;));
                }
                names.push(n);
            }
            let cr = self.regs(c, loc)?;
            let cn = self.fresh("dot_acc");
            let da = self.dtype(a);
            let (code, out) = wgmma::lower_wgmma_from_ring(
                self,
                op,
                plan,
                &ring,
                [&names[0], &names[1], &cn],
                da,
            )?;
            let bind = self.bind(r, quote!(#out), loc)?;
            return Ok(quote!(#bound let #cn = #cr; #code #bind));
        }
        let (ar, br, cr) = (self.regs(a, loc)?, self.regs(b, loc)?, self.regs(c, loc)?);
        let (an, bn, cn) = (
            self.fresh("dot_a"),
            self.fresh("dot_b"),
            self.fresh("dot_acc"),
        );
        let names = [&an, &bn, &cn];
        let (code, out) = match code {
            DotCode::MmaSync { plan, .. } => {
                let (da, dc) = (self.dtype(a), self.dtype(c));
                dot::lower_dot(self, op, plan, names, &cl, &rl, da, dc)?
            }
            DotCode::Wgmma(plan) => {
                let da = self.dtype(a);
                wgmma::lower_wgmma(self, op, plan, names, &cl, &rl, da)?
            }
            DotCode::Mfma(plan) => dot::lower_mfma(self, op, plan, names, &cl, &rl)?,
        };
        let bind = self.bind(r, quote!(#out), loc)?;
        Ok(quote!(let #an = #ar; let #bn = #br; let #cn = #cr; #code #bind))
    }

    /// A conversion to or from a user layout (`convert_layout`), which only rustc knows: generic
    /// code through shared memory (`::tessera::tile::convert_through_shared`).
    fn lower_user_layout_convert(&mut self, op: &Op) -> Result<TokenStream, syn::Error> {
        let loc = &op.loc;
        let (x, result) = one_to_one(op)?;
        let ty = self.value_type(result, loc)?;
        let _ = self.value_type(x, loc)?;
        let slot: u64 = if self.dtype(x).bits() > 32 { 8 } else { 4 };
        let bytes = self.kernel.ty(x).numel() as u64 * slot;
        let bytes = u32::try_from(bytes)
            .map_err(|_| loc.error("this tile is too large to convert through shared memory"))?;
        let offset = Literal::u32_unsuffixed(self.alloc_shared(bytes, 8));
        let (lane, warp) = (self.lane(), self.warp());
        let (name, src) = (self.name(result), self.name(x));
        Ok(quote! {
            let #name: #ty = unsafe {
                ::tessera::tile::convert_through_shared(
                    #src, ::tessera::device::dynamic_shared_base() + #offset, #lane, #warp)
            };
        })
    }

    /// The statements that run once per thread before the body.
    fn prologue(&self) -> TokenStream {
        let mut out = TokenStream::new();
        if self.uses_thread_ids {
            out.extend(quote! {
                let __tid: u32 = ::tessera::device::thread_idx_x();
                let __lane: u32 = __tid & 31;
                let __warp: u32 = __tid >> 5;
            });
        }
        out.extend(self.prologue.clone());
        // The TMA unit reads each tensor map from global memory at its first copy: thread 0
        // asks for them first thing, so that the fetch overlaps the set-up before the loop.
        if !self.tensor_maps.is_empty() {
            let maps = (0..self.tensor_maps.len()).map(TensorMapUse::param);
            out.extend(quote! {
                if ::tessera::device::thread_idx_x() == 0 {
                    // SAFETY: each hidden map parameter points to a map the launcher encoded.
                    unsafe { #(::tessera::device::prefetch_tensormap(#maps);)* }
                }
            });
        }
        out
    }
}

/// The operand and result of a one-to-one op.
fn one_to_one(op: &Op) -> Result<(ValueId, ValueId), syn::Error> {
    match (op.operands.first(), op.results.first()) {
        (Some(&x), Some(&r)) => Ok((x, r)),
        _ => Err(internal(
            &op.loc,
            &format!("`{}` without operand or result", op.kind.name()),
        )),
    }
}

/// An error that means a bug in inference or lowering, not in the user's kernel.
pub fn internal(loc: &Loc, message: &str) -> syn::Error {
    loc.error(&format!(
        "#[tile_kernel] internal error in code generation: {message}"
    ))
}

/// A user name made safe for an identifier suffix.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The Rust type of an element.
pub fn elem_type(dtype: DType) -> TokenStream {
    match dtype {
        DType::Scalar(s) => scalar_type(s),
        DType::Ptr(s) => {
            let t = scalar_type(s);
            quote!(::tessera::Ptr<#t>)
        }
    }
}

/// The Rust type of a scalar element type.
pub fn scalar_type(s: Scalar) -> TokenStream {
    let span = Span::call_site();
    match s {
        Scalar::F16 => quote!(::tessera::f16),
        Scalar::BF16 => quote!(::tessera::bf16),
        Scalar::F8E4M3 => quote!(::tessera::f8e4m3),
        Scalar::F8E5M2 => quote!(::tessera::f8e5m2),
        other => {
            let ident = Ident::new(other.name(), span);
            quote!(#ident)
        }
    }
}

/// `L(r, 0, 0)` (packed, `dim0` lowest) for every register `r` of `layout`.
pub fn register_images(layout: &LinearLayout) -> Vec<u64> {
    (0..layout.in_size(Label::Register))
        .map(|r| layout.apply_packed(&[r, 0, 0]))
        .collect()
}

/// The coordinates (one per dimension, `dim0` first) of a packed vector of `layout`.
pub fn unpack(layout: &LinearLayout, packed: u64) -> Vec<u32> {
    layout.unpack(packed)[..layout.num_out_dims()].to_vec()
}

/// Register duplicates: for each register, the lowest register holding the same element
/// (itself when it is the first). Registers `r` with `canonical[r] == r` are the distinct ones.
pub fn canonical_registers(layout: &LinearLayout) -> Vec<u32> {
    let images = register_images(layout);
    let mut first: HashMap<u64, u32> = HashMap::new();
    images
        .iter()
        .enumerate()
        .map(|(r, img)| *first.entry(*img).or_insert(r as u32))
        .collect()
}

/// A tile's registers as the device computes them, `device` (written out per register, so that
/// constant indices keep every array in registers), and on the host, where the emulator runs
/// the same kernel, as one loop: the arrays `regs` bound to `locals`, then `register`
/// (register `__k` of the result, reading `locals[__k]`) for each register. The values are the
/// same; rustc type-checks and LLVM compiles the host's operation once instead of once per
/// register (`tessera::__device_or_host!` picks the form).
pub(crate) fn per_register_on_host(
    device: TokenStream,
    locals: &[Ident],
    regs: &[TokenStream],
    register: &TokenStream,
) -> TokenStream {
    quote!(::tessera::__device_or_host!(#device {
        #(let #locals = #regs;)*
        ::core::array::from_fn(|__k| #register)
    }))
}

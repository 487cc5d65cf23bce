//! The type and shape checker: walks the AST of one specialisation and builds its IR.
//!
//! Every expression gets a shape and a dtype as it is lowered; each rule of the language is
//! checked where it applies and reported on the user's code. After an error the offending value
//! becomes *poison*: later uses of it are lowered silently, so one mistake gives one message, while
//! independent mistakes elsewhere are still found.
//!
//! Literals (and const parameters) are *weak* until used: an integer literal takes the element
//! type of the other operand (any number type), a float literal that of a float operand; alone
//! they are `i32` and `f32`. Values of two different element types never mix implicitly.
//!
//! This file holds the checker's state and its walk over expressions and operations; the rules
//! live by family: `values` (literals made values, unification, broadcasting), `consts`
//! (integers known at expansion time), `control` (statements, loops, `if`), `elementwise`,
//! `creation`, `memory`, `reduce`, `dot`, `shape` and `gather`.

mod atomic;
mod consts;
pub(crate) mod control;
mod creation;
mod dot;
mod elementwise;
mod gather;
mod memory;
mod random;
mod reduce;
mod scan;
mod shape;
mod values;

use crate::ast::{Block, Expr, ExprKind};
use crate::diag::{did_you_mean, Diagnostics, Loc};
use crate::ir::{
    ConstValue, Kernel, LayoutSlot, Op as IrOp, OpKind, Param, Region, Value, ValueId,
};
use crate::ops::Op;
use crate::parse::{Signature, Specialisation, DEFAULT_NUM_WARPS};
use crate::types::{
    max_elements, registers_per_thread, shape_str, threads, DType, Scalar, Shape, TileType,
    MAX_TILE_REGISTERS_PER_THREAD,
};

/// Most dimensions a tile may have (the layout algebra's limit).
pub const MAX_RANK: usize = tessera_layout::MAX_DIMS;

/// What one checking run needs.
pub struct Input<'a> {
    pub sig: &'a Signature,
    pub body: &'a Block,
    /// The element types, const values and warps of this run (`spec.num_warps` is `None` when
    /// the attribute's `num_warps` was invalid: the register budget is then not checked).
    pub spec: &'a Specialisation,
}

/// Checks one specialisation and returns its IR. The IR is meaningful only if no error was
/// added to `diags`.
pub fn check(input: &Input<'_>, diags: &mut Diagnostics) -> Kernel {
    let mut c = Checker {
        diags,
        num_warps: input.spec.num_warps,
        values: Vec::new(),
        loop_stages: Vec::new(),
        regions: vec![Region::default()],
        scopes: vec![Vec::new()],
    };
    for (name, value) in &input.spec.consts {
        let operand = value.map_or(Operand::Poison, Operand::Int);
        c.bind(name, operand, false);
    }
    let mut params = Vec::new();
    for p in &input.sig.params {
        match p.dtype {
            Some(dtype) => {
                let v = c.new_value(TileType::scalar(dtype), p.loc);
                c.values[v.0 as usize].name = Some(p.name.clone());
                c.regions[0].args.push(v);
                params.push(Param {
                    name: p.name.clone(),
                    value: v,
                    unit_stride: false,
                });
                c.bind(&p.name, Operand::Value(v), p.mutable);
            }
            None => c.bind(&p.name, Operand::Poison, p.mutable),
        }
    }
    c.push_scope();
    c.stmts(&input.body.stmts);
    if let Some(tail) = &input.body.tail {
        if let Val::One(Operand::Value(_) | Operand::Int(_) | Operand::Float(_)) | Val::Pair(..) =
            c.expr(tail)
        {
            c.error(
                tail.loc,
                "a tile kernel returns nothing: write results with `store(ptrs, value)` \
                 (or end this expression with `;`)",
            );
        }
    }
    c.pop_scope();
    let body = c.regions.pop().unwrap_or_default();
    Kernel {
        name: input.sig.name.clone(),
        num_warps: input.spec.num_warps.unwrap_or(DEFAULT_NUM_WARPS),
        num_stages: 1,
        loop_stages: std::mem::take(&mut c.loop_stages),
        target: crate::ir::Target::Ampere,
        targets: vec![crate::ir::Target::Ampere, crate::ir::Target::Hopper],
        requires: Vec::new(),
        types: input
            .spec
            .types
            .iter()
            .filter_map(|(n, t)| Some((n.clone(), (*t)?)))
            .collect(),
        consts: input
            .spec
            .consts
            .iter()
            .map(|(n, v)| (n.clone(), v.unwrap_or(0)))
            .collect(),
        params,
        values: c.values,
        body,
    }
}

/// An operand while it is being built: a value, or a literal whose type is not fixed yet.
#[derive(Clone, Copy, Debug)]
enum Operand {
    Value(ValueId),
    /// A weak integer (a literal, a const parameter, or arithmetic on those).
    Int(i128),
    /// A weak float.
    Float(f64),
    /// Erroneous; already reported.
    Poison,
}

/// What an expression produces.
#[derive(Clone, Copy, Debug)]
enum Val {
    /// Nothing (`store`, `for`, `if` without a value).
    Unit,
    One(Operand),
    /// The two halves of `split`.
    Pair(Operand, Operand),
}

/// One value, or poison when it could not be built (the error is already reported).
fn one(o: Option<ValueId>) -> Val {
    Val::One(o.map_or(Operand::Poison, Operand::Value))
}

#[derive(Clone, Debug)]
struct Binding {
    name: String,
    operand: Operand,
    mutable: bool,
    /// `Some(loop)` while the variable is carried by the enclosing `for` loop.
    carried_by: Option<Loc>,
}

struct Checker<'d> {
    diags: &'d mut Diagnostics,
    num_warps: Option<u32>,
    values: Vec<Value>,
    /// `num_stages(S)` of the loops checked so far, by induction variable.
    loop_stages: Vec<(ValueId, u32)>,
    /// The regions being built; ops go to the last.
    regions: Vec<Region>,
    /// Variables; the last scope is the innermost, and within a scope later bindings shadow.
    scopes: Vec<Vec<Binding>>,
}

/// Where a binding lives: scope index and position in it.
type Slot = (usize, usize);

impl Checker<'_> {
    fn error(&mut self, loc: Loc, message: impl Into<String>) {
        self.diags.error(loc, message);
    }

    fn new_value(&mut self, ty: TileType, loc: Loc) -> ValueId {
        let layout = if ty.is_scalar() {
            LayoutSlot::Scalar
        } else {
            LayoutSlot::Unassigned
        };
        self.values.push(Value {
            ty,
            layout,
            name: None,
            loc,
        });
        ValueId((self.values.len() - 1) as u32)
    }

    fn ty(&self, v: ValueId) -> &TileType {
        &self.values[v.0 as usize].ty
    }

    fn dtype(&self, v: ValueId) -> DType {
        self.ty(v).dtype
    }

    fn shape(&self, v: ValueId) -> Shape {
        self.ty(v).shape.clone()
    }

    /// Whether a result type is allowed: rank and register budget.
    fn fits(&mut self, ty: &TileType, loc: Loc) -> bool {
        if ty.rank() > MAX_RANK {
            self.error(
                loc,
                format!(
                    "tiles have at most {MAX_RANK} dimensions, but this one would have {} ({})",
                    ty.rank(),
                    shape_str(&ty.shape)
                ),
            );
            return false;
        }
        let Some(num_warps) = self.num_warps else {
            return true;
        };
        let registers = registers_per_thread(ty, num_warps);
        if registers <= MAX_TILE_REGISTERS_PER_THREAD {
            return true;
        }
        let threads = threads(num_warps);
        let per_thread = ty.numel().div_ceil(threads);
        let limit = max_elements(ty.dtype, num_warps);
        self.error(
            loc,
            format!(
                "this tile is too large for registers: {ty} has {} elements, so each of the \
                 {threads} threads (num_warps = {num_warps}) would hold {per_thread} of them in \
                 {registers} 32-bit registers; one tile may use at most \
                 {MAX_TILE_REGISTERS_PER_THREAD} registers per thread ({limit} {} elements at \
                 num_warps = {num_warps}): use smaller blocks or more warps",
                ty.numel(),
                ty.dtype
            ),
        );
        false
    }

    /// Appends an op to the current region; `None` (after an error) if a result does not fit.
    fn emit_op(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        result_types: Vec<TileType>,
        regions: Vec<Region>,
        loc: Loc,
    ) -> Option<Vec<ValueId>> {
        for ty in &result_types {
            if !self.fits(ty, loc) {
                return None;
            }
        }
        let results: Vec<ValueId> = result_types
            .into_iter()
            .map(|ty| self.new_value(ty, loc))
            .collect();
        let op = IrOp {
            kind,
            operands,
            results: results.clone(),
            regions,
            loc,
        };
        self.regions
            .last_mut()
            .expect("the kernel body region is always open")
            .ops
            .push(op);
        Some(results)
    }

    /// An op with one result.
    fn emit(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        ty: TileType,
        loc: Loc,
    ) -> Option<ValueId> {
        self.emit_op(kind, operands, vec![ty], Vec::new(), loc)
            .map(|r| r[0])
    }

    fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    fn bind(&mut self, name: &str, operand: Operand, mutable: bool) {
        if let Operand::Value(v) = operand {
            let value = &mut self.values[v.0 as usize];
            if value.name.is_none() {
                value.name = Some(name.to_string());
            }
        }
        self.scopes
            .last_mut()
            .expect("a scope is always open")
            .push(Binding {
                name: name.to_string(),
                operand,
                mutable,
                carried_by: None,
            });
    }

    fn lookup(&self, name: &str) -> Option<Slot> {
        for (s, scope) in self.scopes.iter().enumerate().rev() {
            if let Some(i) = scope.iter().rposition(|b| b.name == name) {
                return Some((s, i));
            }
        }
        None
    }

    fn operand_at(&self, slot: Slot) -> Operand {
        self.scopes[slot.0][slot.1].operand
    }

    /// Gives a variable a new value (assigned, or the result of the `for`/`if` that assigned
    /// it), naming the value after the variable if it has no name yet.
    fn rebind(&mut self, slot: Slot, operand: Operand) {
        if let Operand::Value(v) = operand {
            let name = self.scopes[slot.0][slot.1].name.clone();
            self.values[v.0 as usize].name.get_or_insert(name);
        }
        self.binding(slot).operand = operand;
    }

    fn binding(&mut self, slot: Slot) -> &mut Binding {
        &mut self.scopes[slot.0][slot.1]
    }

    fn unknown_variable(&mut self, name: &str, loc: Loc) {
        let names: Vec<String> = self
            .scopes
            .iter()
            .flatten()
            .map(|b| b.name.clone())
            .collect();
        let hint = did_you_mean(name, names.iter().map(String::as_str))
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        self.error(
            loc,
            format!("cannot find value `{name}` in this kernel{hint}"),
        );
    }

    /// What an operand is, for messages.
    fn describe(&self, o: Operand) -> String {
        match o {
            Operand::Value(v) => {
                let ty = self.ty(v);
                if ty.is_scalar() {
                    format!("a scalar {}", ty.dtype)
                } else {
                    format!("a tile {ty}")
                }
            }
            Operand::Int(_) => "an integer literal".into(),
            Operand::Float(_) => "a float literal".into(),
            Operand::Poison => "an invalid value".into(),
        }
    }

    /// An expression that must produce one value.
    fn operand(&mut self, e: &Expr) -> Operand {
        match self.expr(e) {
            Val::One(o) => o,
            Val::Unit => {
                self.error(
                    e.loc,
                    format!("`{e}` has no value (`store`, `for` and `if` without `else` are statements)"),
                );
                Operand::Poison
            }
            Val::Pair(..) => {
                self.error(e.loc, control::two_values_message(e));
                Operand::Poison
            }
        }
    }

    /// An operand that must be a value (not a literal).
    fn tile(&mut self, e: &Expr, op: &str) -> Option<ValueId> {
        match self.operand(e) {
            Operand::Value(v) => Some(v),
            Operand::Poison => None,
            Operand::Int(_) | Operand::Float(_) => {
                let found = match e.kind {
                    ExprKind::Int { .. } | ExprKind::Float { .. } => format!("the literal `{e}`"),
                    _ => format!("`{e}`, a number known at compile time"),
                };
                self.error(
                    e.loc,
                    format!("`{op}` needs a tile here, found {found} (build one with `full`)"),
                );
                None
            }
        }
    }

    fn expr(&mut self, e: &Expr) -> Val {
        let loc = e.loc;
        match &e.kind {
            ExprKind::Int {
                value,
                suffix: None,
            } => Val::One(Operand::Int(*value)),
            ExprKind::Float {
                value,
                suffix: None,
            } => Val::One(Operand::Float(*value)),
            ExprKind::Int {
                value,
                suffix: Some(s),
            } => one(self.constant(ConstValue::Int(*value), *s, loc)),
            ExprKind::Float {
                value,
                suffix: Some(s),
            } => one(self.literal(ConstValue::Float(*value), *s, loc)),
            ExprKind::Bool(b) => one(self.constant(ConstValue::Bool(*b), Scalar::Bool, loc)),
            ExprKind::Str(_) => {
                self.error(
                    loc,
                    "a string is not a value of the tile language: strings are only the memory \
                     order and scope of an atomic, e.g. `atomic_add(ptrs, v, mask, \"relaxed\", \"gpu\")`",
                );
                Val::One(Operand::Poison)
            }
            ExprKind::Special { ty, which } => one(self.special(*ty, *which, loc)),
            ExprKind::Var(name) => match self.lookup(name) {
                Some(slot) => Val::One(self.binding(slot).operand),
                None => {
                    self.unknown_variable(name, loc);
                    Val::One(Operand::Poison)
                }
            },
            ExprKind::Array(_) => {
                self.error(
                    loc,
                    "an array `[..]` is a shape or a permutation: it is only an argument of \
                     `full`, `zeros`, `broadcast_to`, `reshape` and `trans`",
                );
                Val::One(Operand::Poison)
            }
            ExprKind::Call {
                op,
                type_arg,
                args,
                name_loc,
            } => self.call(*op, *type_arg, args, *name_loc, loc),
            ExprKind::ConvertLayout { value, layout } => {
                let Some(v) = self.tile(value, "convert_layout") else {
                    return Val::One(Operand::Poison);
                };
                let ty = self.ty(v).clone();
                if ty.is_scalar() {
                    self.error(
                        loc,
                        "a scalar has no layout to convert: `convert_layout` takes a tile",
                    );
                    return Val::One(Operand::Poison);
                }
                let r = self.emit(
                    OpKind::ConvertLayout {
                        layout: layout.clone(),
                    },
                    vec![v],
                    ty,
                    loc,
                );
                if let Some(r) = r {
                    self.values[r.0 as usize].layout = LayoutSlot::Fixed(layout.clone());
                }
                one(r)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.operand(lhs);
                let r = self.operand(rhs);
                Val::One(self.binary(*op, l, r, loc))
            }
            ExprKind::Unary { op, operand } => {
                let o = self.operand(operand);
                Val::One(self.unary(*op, o, loc))
            }
            ExprKind::Cast { value, to } => {
                let o = self.operand(value);
                Val::One(self.cast(o, *to, loc))
            }
            ExprKind::If { cond, then, els } => self.if_expr(cond, then, els.as_deref(), loc),
            ExprKind::For(l) => {
                self.for_loop(l, loc);
                Val::Unit
            }
            ExprKind::While { cond, body } => {
                self.while_loop(cond, body, loc);
                Val::Unit
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::Pair(a, b) => Val::Pair(self.operand(a), self.operand(b)),
            ExprKind::Tuple(items) => {
                for item in items {
                    self.operand(item);
                }
                self.error(
                    loc,
                    format!(
                        "a tuple of {} values is only destructured right away: \
                         `let ({}) = {e};`",
                        items.len(),
                        (0..items.len())
                            .map(|i| format!("x{i}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                );
                Val::One(Operand::Poison)
            }
            ExprKind::Invalid => Val::One(Operand::Poison),
        }
    }

    fn call(
        &mut self,
        op: Op,
        type_arg: Option<Scalar>,
        args: &[Expr],
        name_loc: Loc,
        loc: Loc,
    ) -> Val {
        match op {
            Op::ProgramId | Op::NumPrograms => self.program_id(op, args, loc),
            Op::Arange => one(self.arange(args, loc)),
            Op::Full => {
                let shape = self.shape_arg(&args[0], "full");
                let value = self.operand(&args[1]);
                one(self.full(shape, value, type_arg, &args[1], loc))
            }
            Op::Zeros => {
                let shape = self.shape_arg(&args[0], "zeros");
                let dtype = type_arg.unwrap_or(Scalar::F32);
                let zero = match dtype {
                    Scalar::Bool => Operand::Value(
                        match self.constant(ConstValue::Bool(false), Scalar::Bool, loc) {
                            Some(v) => v,
                            None => return Val::One(Operand::Poison),
                        },
                    ),
                    _ => Operand::Int(0),
                };
                one(self.full(shape, zero, Some(dtype), &args[0], loc))
            }
            Op::Cdiv => {
                let a = self.operand(&args[0]);
                let b = self.operand(&args[1]);
                Val::One(self.cdiv(a, b, loc))
            }
            Op::Load => one(self.load(args, loc)),
            Op::LoadBlock => one(self.load_block(args, loc)),
            Op::Store => {
                self.store(args, loc);
                Val::Unit
            }
            Op::Atomic(kind) => one(self.atomic(kind, args, loc)),
            Op::Where => one(self.select(args, loc)),
            Op::Math(kind) => {
                let x = self.operand(&args[0]);
                one(self.math(kind, x, name_loc, loc))
            }
            Op::Maximum | Op::Minimum => {
                let a = self.operand(&args[0]);
                let b = self.operand(&args[1]);
                one(self.min_max(op, a, b, loc))
            }
            Op::Fma => one(self.fma(args, loc)),
            Op::Clamp => one(self.clamp(args, loc)),
            Op::Umulhi => {
                let a = self.operand(&args[0]);
                let b = self.operand(&args[1]);
                one(self.umulhi(a, b, loc))
            }
            Op::Randint | Op::Rand | Op::Randn => one(self.random(op, args, loc)),
            Op::To => unreachable!("`to` is lowered to a cast by the parser"),
            Op::ConvertLayout => unreachable!("`convert_layout` has its own syntax node"),
            Op::ExpandDims => self.expand_dims(args, loc),
            Op::BroadcastTo => self.broadcast_to(args, loc),
            Op::Reduce(kind) => one(self.reduce(kind, args, loc)),
            Op::Scan(kind) => one(self.scan(kind, args, loc)),
            Op::Dot => one(self.dot(args, loc)),
            Op::Trans => one(self.trans(args, loc)),
            Op::Reshape => self.reshape(args, loc),
            Op::Join => self.join(args, loc),
            Op::Split => self.split(args, loc),
            Op::Gather => one(self.gather(args, loc)),
        }
    }

    /// An operand made a value (a weak literal becomes a scalar of its default type).
    fn tile_or_scalar(&mut self, e: &Expr) -> Option<ValueId> {
        let o = self.operand(e);
        self.materialize(o, None, e.loc)
    }
}

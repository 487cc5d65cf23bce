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

use crate::ast::{BinOp, Block, Expr, ExprKind, Pat, Special, Stmt, UnOp};
use crate::diag::{did_you_mean, Diagnostics, Loc};
use crate::ir::{
    BinaryOp, CmpOp, ConstValue, Kernel, LayoutSlot, Op as IrOp, OpKind, Param, ReduceKind, Region,
    UnaryOp, Value, ValueId,
};
use crate::ops::Op;
use crate::parse::{Signature, Specialisation, DEFAULT_NUM_WARPS};
use crate::types::{
    broadcast_shapes, max_elements, numel, registers_per_thread, shape_str, threads, DType, Scalar,
    Shape, TileType, MAX_TILE_REGISTERS_PER_THREAD,
};

/// Most dimensions a tile may have (the layout algebra's limit).
pub const MAX_RANK: usize = tessera_layout::MAX_DIMS;

/// What one checking run needs.
pub struct Input<'a> {
    pub sig: &'a Signature,
    pub body: &'a Block,
    /// `None` when the attribute's `num_warps` was invalid: the register budget is then not checked.
    pub num_warps: Option<u32>,
    pub spec: &'a Specialisation,
}

/// Checks one specialisation and returns its IR. The IR is meaningful only if no error was
/// added to `diags`.
pub fn check(input: &Input<'_>, diags: &mut Diagnostics) -> Kernel {
    let mut c = Checker {
        diags,
        num_warps: input.num_warps,
        values: Vec::new(),
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
        num_warps: input.num_warps.unwrap_or(DEFAULT_NUM_WARPS),
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
    /// The regions being built; ops go to the last.
    regions: Vec<Region>,
    /// Variables; the last scope is the innermost, and within a scope later bindings shadow.
    scopes: Vec<Vec<Binding>>,
}

/// Where a binding lives: scope index and position in it.
type Slot = (usize, usize);

impl Checker<'_> {
    // ----- bookkeeping -------------------------------------------------------------------------

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
        let limit = max_elements(ty.dtype.bits(), num_warps);
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

    // ----- constants and weak literals ---------------------------------------------------------

    /// A rank-0 constant of `dtype`, checking that the value fits.
    fn constant(&mut self, value: ConstValue, dtype: Scalar, loc: Loc) -> Option<ValueId> {
        let value = match (value, dtype) {
            (ConstValue::Bool(b), Scalar::Bool) => ConstValue::Bool(b),
            (ConstValue::Int(v), s) if s.is_float() => ConstValue::Float(v as f64),
            (ConstValue::Int(v), s) if s.is_int() => {
                let (lo, hi) = s.int_range().expect("integer types have a range");
                if v < lo || v > hi {
                    self.error(
                        loc,
                        format!("the literal {v} does not fit in {s} (its values are {lo}..={hi})"),
                    );
                    return None;
                }
                ConstValue::Int(v)
            }
            (ConstValue::Float(x), s) if s.is_float() => ConstValue::Float(x),
            (v, s) => {
                let what = match v {
                    ConstValue::Int(_) => "an integer literal",
                    ConstValue::Float(_) => "a float literal",
                    ConstValue::Bool(_) => "a bool literal",
                };
                self.error(loc, format!("expected a value of type {s}, found {what}"));
                return None;
            }
        };
        self.emit(
            OpKind::Constant(value),
            Vec::new(),
            TileType::scalar(DType::Scalar(dtype)),
            loc,
        )
    }

    /// The operand as a value: weak literals become constants of `hint` (default `i32`/`f32`).
    fn materialize(&mut self, o: Operand, hint: Option<DType>, loc: Loc) -> Option<ValueId> {
        let (value, default) = match o {
            Operand::Value(v) => return Some(v),
            Operand::Poison => return None,
            Operand::Int(v) => (ConstValue::Int(v), Scalar::I32),
            Operand::Float(x) => (ConstValue::Float(x), Scalar::F32),
        };
        match hint {
            None => self.constant(value, default, loc),
            Some(DType::Scalar(s)) => self.constant(value, s, loc),
            Some(DType::Ptr(_)) => {
                self.error(loc, "expected a pointer, found a literal");
                None
            }
        }
    }

    /// Gives the operands one element type: values must agree; weak literals take theirs.
    /// `roles` names each operand in messages ("the left operand", …).
    fn unify(
        &mut self,
        operands: &[Operand],
        roles: &[&str],
        loc: Loc,
    ) -> Option<(Vec<ValueId>, DType)> {
        if operands.iter().any(|o| matches!(o, Operand::Poison)) {
            return None;
        }
        let mut strong: Option<(usize, DType)> = None;
        for (i, o) in operands.iter().enumerate() {
            if let Operand::Value(v) = *o {
                let d = self.dtype(v);
                match strong {
                    None => strong = Some((i, d)),
                    Some((j, e)) if e != d => {
                        let hint = match (e, d) {
                            (DType::Scalar(_), DType::Scalar(s)) => format!(
                                "; tessera never converts implicitly: cast one side, e.g. \
                                 `x.to::<{s}>()` or `x as {s}`"
                            ),
                            _ => String::new(),
                        };
                        self.error(
                            loc,
                            format!(
                                "mismatched element types: {} is {e} but {} is {d}{hint}",
                                roles[j], roles[i]
                            ),
                        );
                        return None;
                    }
                    _ => {}
                }
            }
        }
        let target = match strong {
            Some((_, d)) => d,
            None if operands.iter().any(|o| matches!(o, Operand::Float(_))) => {
                DType::Scalar(Scalar::F32)
            }
            None => DType::Scalar(Scalar::I32),
        };
        let mut values = Vec::new();
        for (i, o) in operands.iter().enumerate() {
            if let Operand::Float(_) = o {
                if !target.is_float() {
                    self.error(
                        loc,
                        format!(
                            "{} is a float literal, but the other operand is {target}: write an \
                             integer, or cast the other operand to a float type",
                            roles[i]
                        ),
                    );
                    return None;
                }
            }
            values.push(self.materialize(*o, Some(target), loc)?);
        }
        Some((values, target))
    }

    // ----- broadcasting ------------------------------------------------------------------------

    /// The common shape of `values` by NumPy broadcasting, and each value broadcast to it.
    fn broadcast_all(
        &mut self,
        values: &[ValueId],
        roles: &[&str],
        loc: Loc,
    ) -> Option<(Vec<ValueId>, Shape)> {
        let shapes: Vec<Shape> = values.iter().map(|&v| self.shape(v)).collect();
        let mut common: Shape = Vec::new();
        for (j, s) in shapes.iter().enumerate() {
            match broadcast_shapes(&common, s) {
                Ok(c) => common = c,
                Err(_) => {
                    let i = (0..j)
                        .find(|&i| broadcast_shapes(&shapes[i], s).is_err())
                        .unwrap_or(0);
                    let conflict = broadcast_shapes(&shapes[i], s)
                        .err()
                        .map(|c| {
                            format!(
                                ": aligned at the last dimension, sizes {} and {} differ and \
                                 neither is 1",
                                c.left, c.right
                            )
                        })
                        .unwrap_or_default();
                    self.error(
                        loc,
                        format!(
                            "cannot broadcast {} of shape {} with {} of shape {}{conflict}",
                            roles[i],
                            shape_str(&shapes[i]),
                            roles[j],
                            shape_str(s)
                        ),
                    );
                    return None;
                }
            }
        }
        let mut out = Vec::new();
        for &v in values {
            out.push(self.broadcast_value(v, &common, loc)?);
        }
        Some((out, common))
    }

    /// `v` broadcast to `shape` (which must be a broadcast of its shape), by explicit ops.
    fn broadcast_value(&mut self, v: ValueId, shape: &[u64], loc: Loc) -> Option<ValueId> {
        let ty = self.ty(v).clone();
        if ty.shape == shape {
            return Some(v);
        }
        if ty.is_scalar() {
            return self.emit(
                OpKind::Splat,
                vec![v],
                TileType::new(shape.to_vec(), ty.dtype),
                loc,
            );
        }
        let mut v = v;
        let mut current = ty.shape.clone();
        while current.len() < shape.len() {
            current.insert(0, 1);
            v = self.emit(
                OpKind::ExpandDims { axis: 0 },
                vec![v],
                TileType::new(current.clone(), ty.dtype),
                loc,
            )?;
        }
        if current != shape {
            v = self.emit(
                OpKind::Broadcast,
                vec![v],
                TileType::new(shape.to_vec(), ty.dtype),
                loc,
            )?;
        }
        Some(v)
    }

    // ----- compile-time integers ---------------------------------------------------------------

    /// An integer known at expansion time (literal, const parameter, arithmetic on those).
    /// `what` says what it is for in the message when it is not.
    fn const_int(&mut self, e: &Expr, what: &str) -> Option<i128> {
        match &e.kind {
            ExprKind::Int { value, suffix } if suffix.is_none_or(Scalar::is_int) => Some(*value),
            ExprKind::Var(name) => match self.lookup(name) {
                None => {
                    self.unknown_variable(name, e.loc);
                    None
                }
                Some(slot) => match self.binding(slot).operand {
                    Operand::Int(v) => Some(v),
                    Operand::Poison => None,
                    _ => {
                        self.error(
                            e.loc,
                            format!(
                                "{what} must be known at expansion time, but `{name}` is a run-time \
                                 value: use an integer literal or a const parameter whose values \
                                 are listed in #[tile_kernel(..)]"
                            ),
                        );
                        None
                    }
                },
            },
            ExprKind::Unary {
                op: UnOp::Neg,
                operand,
            } => self.const_int(operand, what)?.checked_neg(),
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.const_int(lhs, what);
                let r = self.const_int(rhs, what);
                let (l, r) = (l?, r?);
                let result = match op {
                    BinOp::Add => l.checked_add(r),
                    BinOp::Sub => l.checked_sub(r),
                    BinOp::Mul => l.checked_mul(r),
                    BinOp::Div => l.checked_div(r),
                    BinOp::Rem => l.checked_rem(r),
                    BinOp::Shl => u32::try_from(r)
                        .ok()
                        .filter(|&s| s < 126)
                        .and_then(|s| l.checked_shl(s)),
                    BinOp::Shr => u32::try_from(r).ok().filter(|&s| s < 128).map(|s| l >> s),
                    _ => {
                        self.error(
                            e.loc,
                            format!("{what} must be an integer, not a comparison or logic"),
                        );
                        return None;
                    }
                };
                if result.is_none() {
                    self.error(e.loc, format!("`{e}` overflows or divides by zero"));
                }
                result
            }
            ExprKind::Call {
                op: Op::Cdiv, args, ..
            } => {
                let a = self.const_int(&args[0], what);
                let b = self.const_int(&args[1], what);
                let (a, b) = (a?, b?);
                if b == 0 {
                    self.error(e.loc, "`cdiv` divides by zero");
                    return None;
                }
                a.checked_add(b - 1).map(|n| n.div_euclid(b))
            }
            ExprKind::Invalid => None,
            _ => {
                self.error(
                    e.loc,
                    format!(
                        "{what} must be an integer known at expansion time (a literal, a const \
                         parameter, or arithmetic on them), but `{e}` is not"
                    ),
                );
                None
            }
        }
    }

    /// A shape argument `[d0, d1, …]`: each size at least 1 and a power of two.
    fn shape_arg(&mut self, e: &Expr, op: &str) -> Option<Shape> {
        let ExprKind::Array(elems) = &e.kind else {
            if !matches!(e.kind, ExprKind::Invalid) {
                self.error(
                    e.loc,
                    format!("the shape of `{op}` is an array of sizes, e.g. `[BLOCK_M, BLOCK_N]`"),
                );
            }
            return None;
        };
        let mut shape = Vec::new();
        let mut ok = true;
        for elem in elems {
            let Some(size) = self.const_int(elem, "a tile size") else {
                ok = false;
                continue;
            };
            if size < 1 {
                let named = size_name(&elem.to_string(), size);
                self.error(
                    elem.loc,
                    format!("{named} is not a valid size: sizes must be at least 1"),
                );
                ok = false;
            } else if !is_power_of_two(size) {
                self.error(elem.loc, not_power_of_two(&elem.to_string(), size));
                ok = false;
            } else {
                shape.push(size as u64);
            }
        }
        ok.then_some(shape)
    }

    /// An axis argument for a tile of `rank` dimensions (`rank + 1` positions with `insert`).
    fn axis_arg(
        &mut self,
        e: &Expr,
        rank: usize,
        op: &str,
        shape: &[u64],
        insert: bool,
    ) -> Option<usize> {
        let axis = self.const_int(e, &format!("the axis of `{op}`"))?;
        let positions = if insert { rank + 1 } else { rank };
        if axis < 0 || axis >= positions as i128 {
            let valid = match positions {
                0 => "it has no axes".to_string(),
                1 => "the only axis is 0".to_string(),
                n => format!("the axes are 0 to {}", n - 1),
            };
            self.error(
                e.loc,
                format!(
                    "axis {axis} is out of range for `{op}` on a tile of rank {rank} (shape {}): \
                     {valid}",
                    shape_str(shape)
                ),
            );
            return None;
        }
        Some(axis as usize)
    }

    // ----- statements --------------------------------------------------------------------------

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match s {
                Stmt::Let { pat, init, .. } => {
                    let val = self.expr(init);
                    self.bind_pattern(pat, val, init);
                }
                Stmt::Assign {
                    name,
                    name_loc,
                    op,
                    value,
                    loc,
                } => self.assign(name, *name_loc, *op, value, *loc),
                Stmt::Expr(e) => {
                    self.expr(e);
                }
            }
        }
    }

    fn bind_pattern(&mut self, pat: &Pat, val: Val, init: &Expr) {
        match (pat, val) {
            (Pat::Wild { .. }, _) => {}
            (Pat::Bind { name, mutable, .. }, Val::One(o)) => self.bind(name, o, *mutable),
            (Pat::Bind { name, mutable, .. }, Val::Unit) => {
                self.error(init.loc, format!("`{init}` produces no value to bind"));
                self.bind(name, Operand::Poison, *mutable);
            }
            (Pat::Bind { name, mutable, .. }, Val::Pair(..)) => {
                self.error(
                    init.loc,
                    "`split` returns two tiles: destructure them, `let (a, b) = x.split();`",
                );
                self.bind(name, Operand::Poison, *mutable);
            }
            (Pat::Tuple { elems, loc }, v) => {
                let parts = match v {
                    Val::Pair(a, b) if elems.len() == 2 => [a, b],
                    Val::One(Operand::Poison) => [Operand::Poison; 2],
                    _ => {
                        self.error(
                            *loc,
                            format!(
                                "only `split` returns two values to destructure, and `{init}` \
                                 is not a `split`"
                            ),
                        );
                        [Operand::Poison; 2]
                    }
                };
                for (p, o) in elems.iter().zip(parts) {
                    match p {
                        Pat::Tuple { loc, .. } => {
                            self.error(*loc, "nested tuples are not supported")
                        }
                        p => self.bind_pattern(p, Val::One(o), init),
                    }
                }
            }
        }
    }

    fn assign(&mut self, name: &str, name_loc: Loc, op: Option<BinOp>, value: &Expr, loc: Loc) {
        let Some(slot) = self.lookup(name) else {
            self.unknown_variable(name, name_loc);
            self.expr(value);
            return;
        };
        if !self.binding(slot).mutable {
            self.error(
                name_loc,
                format!("cannot assign twice to immutable variable `{name}`: declare it with `let mut {name}`"),
            );
            self.expr(value);
            return;
        }
        let old = self.binding(slot).operand;
        let rhs = self.operand(value);
        let new = match op {
            Some(op) => self.binary(op, old, rhs, loc),
            None => rhs,
        };
        let new = self.check_assignment(slot, old, new, loc);
        self.rebind(slot, new);
    }

    /// The value to store in a variable that held `old`: the same shape and dtype, or an error.
    fn check_assignment(&mut self, slot: Slot, old: Operand, new: Operand, loc: Loc) -> Operand {
        let (old_v, new_v) = match (old, new) {
            (Operand::Poison, n) | (_, n @ Operand::Poison) => return n,
            (Operand::Int(_), n @ Operand::Int(_))
            | (Operand::Float(_), n @ (Operand::Int(_) | Operand::Float(_))) => return n,
            (Operand::Int(_), Operand::Float(_)) => {
                let name = self.binding(slot).name.clone();
                self.error(
                    loc,
                    format!("`{name}` holds an integer, but a float literal is assigned"),
                );
                return Operand::Poison;
            }
            (Operand::Int(_) | Operand::Float(_), Operand::Value(n)) => {
                // A variable initialised by a literal takes the type of its first assigned value,
                // if that is a scalar of a fitting kind.
                let ty = self.ty(n);
                let fits = ty.is_scalar()
                    && (ty.dtype.is_float()
                        || (matches!(old, Operand::Int(_)) && ty.dtype.is_int()));
                if fits {
                    return new;
                }
                let name = self.binding(slot).name.clone();
                let found = self.describe(new);
                self.error(
                    loc,
                    format!(
                        "`{name}` was initialised with a number literal and cannot hold {found}"
                    ),
                );
                return Operand::Poison;
            }
            (Operand::Value(o), n) => {
                let hint = Some(self.dtype(o));
                match self.materialize(n, hint, loc) {
                    Some(n) => (o, n),
                    None => return Operand::Poison,
                }
            }
        };
        let (old_ty, new_ty) = (self.ty(old_v).clone(), self.ty(new_v).clone());
        if old_ty == new_ty {
            return Operand::Value(new_v);
        }
        let binding = self.binding(slot).clone();
        let message = match binding.carried_by {
            Some(_) => format!(
                "loop-carried variable `{}` changes type in the loop body: it enters the loop as \
                 {old_ty} but is assigned {new_ty} here; a value carried from one iteration to the \
                 next must keep its shape and element type",
                binding.name
            ),
            None => format!(
                "`{}` has type {old_ty} and cannot be assigned {new_ty}: a variable keeps its shape \
                 and element type (bind the new value with another `let`)",
                binding.name
            ),
        };
        self.error(loc, message);
        Operand::Poison
    }

    /// A block in its own scope; its value.
    fn block(&mut self, b: &Block) -> Val {
        self.push_scope();
        self.stmts(&b.stmts);
        let v = match &b.tail {
            Some(t) => self.expr(t),
            None => Val::Unit,
        };
        self.pop_scope();
        v
    }

    // ----- expressions -------------------------------------------------------------------------

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
                self.error(
                    e.loc,
                    "`split` returns two tiles: destructure them, `let (a, b) = x.split();`",
                );
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
                self.error(
                    e.loc,
                    format!(
                        "`{op}` needs a tile here, found the literal `{e}` (build one with `full`)"
                    ),
                );
                None
            }
        }
    }

    fn expr(&mut self, e: &Expr) -> Val {
        let loc = e.loc;
        let one = |o: Option<ValueId>| Val::One(o.map_or(Operand::Poison, Operand::Value));
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
            } => one(self.constant(ConstValue::Float(*value), *s, loc)),
            ExprKind::Bool(b) => one(self.constant(ConstValue::Bool(*b), Scalar::Bool, loc)),
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
            ExprKind::For {
                var,
                start,
                end,
                step,
                body,
            } => {
                self.for_loop(var, start, end, step.as_deref(), body, loc);
                Val::Unit
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::Invalid => Val::One(Operand::Poison),
        }
    }

    fn special(&mut self, ty: Scalar, which: Special, loc: Loc) -> Option<ValueId> {
        let value = if let Some((lo, hi)) = ty.int_range() {
            ConstValue::Int(if which == Special::Max { hi } else { lo })
        } else {
            let max = match ty {
                Scalar::F8E4M3 => 448.0,
                Scalar::F8E5M2 => 57344.0,
                Scalar::F16 => 65504.0,
                Scalar::BF16 => 3.3895313892515355e38,
                Scalar::F32 => f64::from(f32::MAX),
                _ => f64::MAX,
            };
            if ty == Scalar::F8E4M3 && matches!(which, Special::Infinity | Special::NegInfinity) {
                self.error(loc, "f8e4m3 has no infinity (its largest value is 448)");
                return None;
            }
            ConstValue::Float(match which {
                Special::Max => max,
                Special::Min => -max,
                Special::Infinity => f64::INFINITY,
                Special::NegInfinity => f64::NEG_INFINITY,
                Special::Nan => f64::NAN,
            })
        };
        self.constant(value, ty, loc)
    }

    /// `l op r`: folds weak literals, else unifies dtypes, broadcasts, and emits.
    fn binary(&mut self, op: BinOp, l: Operand, r: Operand, loc: Loc) -> Operand {
        if matches!(l, Operand::Poison) || matches!(r, Operand::Poison) {
            return Operand::Poison;
        }
        if let (Some(a), Some(b)) = (weak(l), weak(r)) {
            return self.fold(op, a, b, loc);
        }
        let is_ptr = |c: &Self, o: Operand| matches!(o, Operand::Value(v) if matches!(c.dtype(v), DType::Ptr(_)));
        if is_ptr(self, l) || is_ptr(self, r) {
            return self.pointer_arithmetic(op, l, r, loc);
        }
        let sym = op.symbol();
        let roles = [
            &*format!("the left operand of `{sym}`"),
            &*format!("the right operand of `{sym}`"),
        ];
        let Some((values, dtype)) = self.unify(&[l, r], &roles, loc) else {
            return Operand::Poison;
        };
        let allowed = match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => dtype.is_numeric(),
            BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => dtype.is_int() || dtype.is_bool(),
            BinOp::And | BinOp::Or => dtype.is_bool(),
            BinOp::Shl | BinOp::Shr => dtype.is_int(),
            BinOp::Lt | BinOp::Le | BinOp::Eq | BinOp::Ne | BinOp::Ge | BinOp::Gt => {
                dtype.is_numeric() || dtype.is_bool()
            }
        };
        if !allowed {
            let needs = match op {
                BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => "integer or bool",
                BinOp::And | BinOp::Or => "bool",
                BinOp::Shl | BinOp::Shr => "integer",
                _ => "number",
            };
            self.error(
                loc,
                format!("`{sym}` needs {needs} operands, but these are {dtype}"),
            );
            return Operand::Poison;
        }
        let Some((values, shape)) = self.broadcast_all(&values, &roles, loc) else {
            return Operand::Poison;
        };
        let (kind, result) = match ir_binary(op) {
            Ok(b) => (OpKind::Binary(b), dtype),
            Err(c) => (OpKind::Compare(c), DType::Scalar(Scalar::Bool)),
        };
        self.emit(kind, values, TileType::new(shape, result), loc)
            .map_or(Operand::Poison, Operand::Value)
    }

    /// Compile-time arithmetic on two weak literals.
    fn fold(&mut self, op: BinOp, a: Weak, b: Weak, loc: Loc) -> Operand {
        if let (Weak::Int(x), Weak::Int(y)) = (a, b) {
            let r = match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => x.checked_div(y),
                BinOp::Rem => x.checked_rem(y),
                BinOp::BitAnd => Some(x & y),
                BinOp::BitOr => Some(x | y),
                BinOp::BitXor => Some(x ^ y),
                BinOp::Shl => u32::try_from(y)
                    .ok()
                    .filter(|&s| s < 126)
                    .and_then(|s| x.checked_shl(s)),
                BinOp::Shr => u32::try_from(y).ok().filter(|&s| s < 128).map(|s| x >> s),
                BinOp::And | BinOp::Or => {
                    self.error(
                        loc,
                        format!("`{}` needs bool operands, not integers", op.symbol()),
                    );
                    return Operand::Poison;
                }
                cmp => {
                    let truth = compare(cmp, x.cmp(&y));
                    return self
                        .constant(ConstValue::Bool(truth), Scalar::Bool, loc)
                        .map_or(Operand::Poison, Operand::Value);
                }
            };
            return match r {
                Some(v) => Operand::Int(v),
                None => {
                    self.error(loc, "this constant arithmetic overflows or divides by zero");
                    Operand::Poison
                }
            };
        }
        let (x, y) = (a.as_f64(), b.as_f64());
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Rem => x % y,
            cmp if cmp.is_comparison() => {
                let truth = x.partial_cmp(&y).is_some_and(|o| compare(cmp, o));
                return self
                    .constant(ConstValue::Bool(truth), Scalar::Bool, loc)
                    .map_or(Operand::Poison, Operand::Value);
            }
            _ => {
                self.error(
                    loc,
                    format!("`{}` needs integer operands, not floats", op.symbol()),
                );
                return Operand::Poison;
            }
        };
        Operand::Float(r)
    }

    /// `ptr + offset`, `offset + ptr`, `ptr - offset`.
    fn pointer_arithmetic(&mut self, op: BinOp, l: Operand, r: Operand, loc: Loc) -> Operand {
        let is_ptr = |c: &Self, o: Operand| matches!(o, Operand::Value(v) if matches!(c.dtype(v), DType::Ptr(_)));
        let (ptr, offset) = match op {
            BinOp::Add if is_ptr(self, l) && is_ptr(self, r) => {
                self.error(
                    loc,
                    "cannot add two pointers: add an integer offset to one pointer",
                );
                return Operand::Poison;
            }
            BinOp::Add if is_ptr(self, l) => (l, r),
            BinOp::Add => (r, l),
            BinOp::Sub if is_ptr(self, l) && !is_ptr(self, r) => {
                let negated = self.unary(UnOp::Neg, r, loc);
                (l, negated)
            }
            _ => {
                self.error(
                    loc,
                    format!(
                        "`{}` does not apply to pointers: pointers support `ptr + offset` and \
                         `ptr - offset` with integer offsets",
                        op.symbol()
                    ),
                );
                return Operand::Poison;
            }
        };
        let Operand::Value(ptr) = ptr else {
            return Operand::Poison;
        };
        let offset = match offset {
            Operand::Float(_) => {
                self.error(
                    loc,
                    "a pointer offset must be an integer, found a float literal",
                );
                return Operand::Poison;
            }
            o => match self.materialize(o, Some(DType::Scalar(Scalar::I32)), loc) {
                Some(v) => v,
                None => return Operand::Poison,
            },
        };
        let offset_ty = self.ty(offset).clone();
        if !offset_ty.dtype.is_int() {
            self.error(
                loc,
                format!("a pointer offset must be an integer tile, found {offset_ty}"),
            );
            return Operand::Poison;
        }
        let ptr_dtype = self.dtype(ptr);
        let Some((values, shape)) =
            self.broadcast_all(&[ptr, offset], &["the pointer", "the offset"], loc)
        else {
            return Operand::Poison;
        };
        self.emit(OpKind::AddPtr, values, TileType::new(shape, ptr_dtype), loc)
            .map_or(Operand::Poison, Operand::Value)
    }

    fn unary(&mut self, op: UnOp, o: Operand, loc: Loc) -> Operand {
        match (op, o) {
            (_, Operand::Poison) => Operand::Poison,
            (UnOp::Neg, Operand::Int(v)) => Operand::Int(-v),
            (UnOp::Neg, Operand::Float(x)) => Operand::Float(-x),
            (UnOp::Not, Operand::Float(_)) => {
                self.error(
                    loc,
                    "`!` needs an integer or bool operand, found a float literal",
                );
                Operand::Poison
            }
            (_, o) => {
                let Some(v) = self.materialize(o, None, loc) else {
                    return Operand::Poison;
                };
                let ty = self.ty(v).clone();
                let ok = match op {
                    UnOp::Neg => {
                        ty.dtype.is_float() || ty.dtype.scalar().is_some_and(Scalar::is_signed_int)
                    }
                    UnOp::Not => ty.dtype.is_int() || ty.dtype.is_bool(),
                };
                if !ok {
                    let message = match op {
                        UnOp::Neg => format!(
                            "cannot negate {}: `-` needs a signed integer or float operand",
                            ty
                        ),
                        UnOp::Not => format!("`!` needs an integer or bool operand, found {ty}"),
                    };
                    self.error(loc, message);
                    return Operand::Poison;
                }
                let kind = if op == UnOp::Neg {
                    UnaryOp::Neg
                } else {
                    UnaryOp::Not
                };
                self.emit(OpKind::Unary(kind), vec![v], ty, loc)
                    .map_or(Operand::Poison, Operand::Value)
            }
        }
    }

    fn cast(&mut self, o: Operand, to: Scalar, loc: Loc) -> Operand {
        if to == Scalar::Bool {
            self.error(
                loc,
                "casting to bool is not supported: compare instead, e.g. `x != 0`",
            );
            return Operand::Poison;
        }
        let v = match o {
            Operand::Poison => return Operand::Poison,
            Operand::Int(v) => {
                return self
                    .constant(ConstValue::Int(v), to, loc)
                    .map_or(Operand::Poison, Operand::Value)
            }
            Operand::Float(x) if to.is_float() => {
                return self
                    .constant(ConstValue::Float(x), to, loc)
                    .map_or(Operand::Poison, Operand::Value)
            }
            Operand::Float(x) => {
                // Rust `as` from a float: truncate toward zero, saturate, NaN to 0.
                let (lo, hi) = to
                    .int_range()
                    .expect("a non-float, non-bool type is an integer");
                let v = if x.is_nan() {
                    0
                } else {
                    (x.trunc().clamp(lo as f64, hi as f64)) as i128
                };
                return self
                    .constant(ConstValue::Int(v), to, loc)
                    .map_or(Operand::Poison, Operand::Value);
            }
            Operand::Value(v) => v,
        };
        let ty = self.ty(v).clone();
        match ty.dtype {
            DType::Ptr(_) => {
                self.error(
                    loc,
                    format!("pointers cannot be cast ({ty}): a `Ptr<T>` parameter points to the element type it declares"),
                );
                Operand::Poison
            }
            DType::Scalar(from) if from == to => Operand::Value(v),
            DType::Scalar(_) => self
                .emit(
                    OpKind::Cast { to },
                    vec![v],
                    TileType::new(ty.shape, DType::Scalar(to)),
                    loc,
                )
                .map_or(Operand::Poison, Operand::Value),
        }
    }

    // ----- control flow ------------------------------------------------------------------------

    /// The outer mutable variables that `body` assigns, with their current values made concrete.
    /// `declared` are names bound inside the construct before its blocks run (a loop variable).
    fn carried_variables(
        &mut self,
        blocks: &[&Block],
        exprs: &[&Expr],
        declared: &[String],
        loc: Loc,
    ) -> Vec<(Slot, ValueId)> {
        let mut names = Vec::new();
        for b in blocks {
            assigned_outer_names(b, declared, &mut names);
        }
        for e in exprs {
            assigned_in_expr(e, declared, &mut names);
        }
        let mut carried = Vec::new();
        for name in names {
            let Some(slot) = self.lookup(&name) else {
                continue;
            };
            if !self.binding(slot).mutable {
                continue;
            }
            let operand = self.binding(slot).operand;
            if let Some(v) = self.materialize(operand, None, loc) {
                self.binding(slot).operand = Operand::Value(v);
                carried.push((slot, v));
            }
        }
        carried
    }

    fn for_loop(
        &mut self,
        var: &Pat,
        start: &Expr,
        end: &Expr,
        step: Option<&Expr>,
        body: &Block,
        loc: Loc,
    ) {
        let s = self.operand(start);
        let e = self.operand(end);
        let st = match step {
            Some(step) => {
                let st = self.operand(step);
                if let Operand::Int(n) = st {
                    if n <= 0 {
                        self.error(
                            step.loc,
                            format!("`step_by` needs a positive step, found {n}"),
                        );
                    }
                }
                st
            }
            None => Operand::Int(1),
        };
        let bounds = self.unify(
            &[s, e, st],
            &["the start of the range", "the end of the range", "the step"],
            loc,
        );
        let bounds = bounds.and_then(|(vals, dtype)| {
            let bad = vals.iter().find(|&&v| !self.ty(v).is_scalar() || !dtype.is_int());
            match bad {
                Some(&v) => {
                    let found = self.ty(v).to_string();
                    self.error(
                        loc,
                        format!("the bounds and step of a `for` loop are integer scalars, found {found}"),
                    );
                    None
                }
                None => Some((vals, dtype)),
            }
        });
        let mut loop_var = Vec::new();
        pattern_names(var, &mut loop_var);
        let carried = self.carried_variables(&[body], &[], &loop_var, loc);
        let iv_dtype = bounds.as_ref().map_or(DType::Scalar(Scalar::I32), |b| b.1);
        let iv = self.new_value(TileType::scalar(iv_dtype), var.loc());
        let mut args = vec![iv];
        let mut saved = Vec::new();
        for &(slot, init) in &carried {
            let ty = self.ty(init).clone();
            let arg = self.new_value(ty, loc);
            let name = self.binding(slot).name.clone();
            self.values[arg.0 as usize].name = Some(name);
            args.push(arg);
            let b = self.binding(slot);
            saved.push(b.carried_by);
            b.operand = Operand::Value(arg);
            b.carried_by = Some(loc);
        }
        self.regions.push(Region::default());
        self.push_scope();
        if let Pat::Bind { name, .. } = var {
            self.bind(name, Operand::Value(iv), false);
        }
        self.stmts(&body.stmts);
        if let Some(tail) = &body.tail {
            if let Val::One(Operand::Value(_) | Operand::Int(_) | Operand::Float(_))
            | Val::Pair(..) = self.expr(tail)
            {
                self.error(
                    tail.loc,
                    "the body of a `for` loop has no value: end this expression with `;`",
                );
            }
        }
        self.pop_scope();
        let mut yields = Vec::new();
        for (i, &(slot, _)) in carried.iter().enumerate() {
            let arg = args[i + 1];
            let y = match self.operand_at(slot) {
                Operand::Value(v) if self.ty(v) == self.ty(arg) => v,
                _ => arg,
            };
            yields.push(y);
        }
        let mut region = self.regions.pop().unwrap_or_default();
        region.args = args;
        region.yields = yields;
        let results = match bounds {
            Some((bound_values, _)) => {
                let mut operands = bound_values;
                operands.extend(carried.iter().map(|&(_, init)| init));
                let types: Vec<TileType> = carried
                    .iter()
                    .map(|&(_, init)| self.ty(init).clone())
                    .collect();
                self.emit_op(OpKind::For, operands, types, vec![region], loc)
            }
            None => None,
        };
        for (i, &(slot, _)) in carried.iter().enumerate() {
            let operand = results
                .as_ref()
                .map_or(Operand::Poison, |r| Operand::Value(r[i]));
            self.rebind(slot, operand);
            self.binding(slot).carried_by = saved[i];
        }
    }

    fn if_expr(&mut self, cond: &Expr, then: &Block, els: Option<&Expr>, loc: Loc) -> Val {
        let c = self.operand(cond);
        let cond_value = match c {
            Operand::Poison => None,
            Operand::Value(v) if self.ty(v).is_scalar() && self.dtype(v).is_bool() => Some(v),
            other => {
                let found = self.describe(other);
                let hint = match other {
                    Operand::Value(v) if !self.ty(v).is_scalar() => {
                        " (an `if` branches the whole program; for per-element choice use \
                         `where_(condition, a, b)`)"
                    }
                    _ => "",
                };
                self.error(
                    cond.loc,
                    format!("the condition of `if` must be a scalar bool, found {found}{hint}"),
                );
                None
            }
        };
        let carried =
            self.carried_variables(&[then], &els.into_iter().collect::<Vec<_>>(), &[], loc);
        let inits: Vec<Operand> = carried.iter().map(|&(_, v)| Operand::Value(v)).collect();

        // then-branch
        self.regions.push(Region::default());
        let then_val = self.block(then);
        let then_value = self.branch_value(
            then_val,
            None,
            then.tail.as_deref().map_or(then.loc, |t| t.loc),
        );
        let then_yields = self.branch_yields(&carried);
        let then_region = self.regions.pop().unwrap_or_default();
        for (&(slot, _), &init) in carried.iter().zip(&inits) {
            self.binding(slot).operand = init;
        }

        // else-branch
        self.regions.push(Region::default());
        let (else_val, else_loc) = match els {
            Some(e) => (self.expr(e), e.loc),
            None => (Val::Unit, loc),
        };
        let hint = then_value.map(|v| self.dtype(v));
        let else_value = self.branch_value(else_val, hint, else_loc);
        let else_yields = self.branch_yields(&carried);
        let else_region = self.regions.pop().unwrap_or_default();

        let mut ok = cond_value.is_some();
        let value_type = match (then_value, else_value, els) {
            (Some(t), Some(e), Some(_)) => {
                let (tt, et) = (self.ty(t).clone(), self.ty(e).clone());
                if tt != et {
                    self.error(
                        loc,
                        format!(
                            "the branches of this `if` have different types: {tt} and {et} \
                             (both must have the same shape and element type)"
                        ),
                    );
                    ok = false;
                }
                Some(tt)
            }
            (Some(_), _, None) => {
                self.error(
                    loc,
                    "an `if` without `else` has no value: add an `else` branch",
                );
                ok = false;
                None
            }
            (None, None, _) => None,
            _ => {
                if !matches!(then_val, Val::One(Operand::Poison))
                    && !matches!(else_val, Val::One(Operand::Poison))
                {
                    self.error(
                        loc,
                        "one branch of this `if` has a value and the other has none",
                    );
                }
                ok = false;
                None
            }
        };
        let mut result_types: Vec<TileType> = value_type.iter().cloned().collect();
        result_types.extend(carried.iter().map(|&(_, v)| self.ty(v).clone()));
        let results = if ok {
            let mut then_region = then_region;
            let mut else_region = else_region;
            then_region.yields = then_value.into_iter().chain(then_yields).collect();
            else_region.yields = else_value.into_iter().chain(else_yields).collect();
            let cond = cond_value.expect("ok implies a condition");
            self.emit_op(
                OpKind::If,
                vec![cond],
                result_types,
                vec![then_region, else_region],
                loc,
            )
        } else {
            None
        };
        let offset = usize::from(value_type.is_some());
        for (i, &(slot, _)) in carried.iter().enumerate() {
            let operand = results
                .as_ref()
                .map_or(Operand::Poison, |r| Operand::Value(r[offset + i]));
            self.rebind(slot, operand);
        }
        let wants_value = matches!(then_val, Val::One(_)) && els.is_some();
        match results {
            Some(r) if value_type.is_some() => Val::One(Operand::Value(r[0])),
            _ if wants_value => Val::One(Operand::Poison),
            _ => Val::Unit,
        }
    }

    /// A branch's value made concrete (weak literals take `hint`, else their default).
    fn branch_value(&mut self, v: Val, hint: Option<DType>, loc: Loc) -> Option<ValueId> {
        match v {
            Val::One(o) => self.materialize(o, hint, loc),
            Val::Unit => None,
            Val::Pair(..) => {
                self.error(
                    loc,
                    "an `if` cannot produce the two tiles of `split`: destructure them first",
                );
                None
            }
        }
    }

    /// The current values of the carried variables at the end of a branch.
    fn branch_yields(&mut self, carried: &[(Slot, ValueId)]) -> Vec<ValueId> {
        carried
            .iter()
            .map(|&(slot, init)| match self.operand_at(slot) {
                Operand::Value(v) if self.ty(v) == self.ty(init) => v,
                _ => init,
            })
            .collect()
    }

    // ----- operations --------------------------------------------------------------------------

    fn call(
        &mut self,
        op: Op,
        type_arg: Option<Scalar>,
        args: &[Expr],
        name_loc: Loc,
        loc: Loc,
    ) -> Val {
        let one = |o: Option<ValueId>| Val::One(o.map_or(Operand::Poison, Operand::Value));
        match op {
            Op::ProgramId | Op::NumPrograms => {
                let Some(axis) = self.const_int(&args[0], "the grid axis") else {
                    return Val::One(Operand::Poison);
                };
                if !(0..=2).contains(&axis) {
                    self.error(
                        args[0].loc,
                        format!("grid axis {axis} is out of range: the grid has axes 0, 1 and 2"),
                    );
                    return Val::One(Operand::Poison);
                }
                let axis = axis as u8;
                let kind = if op == Op::ProgramId {
                    OpKind::ProgramId { axis }
                } else {
                    OpKind::NumPrograms { axis }
                };
                one(self.emit(
                    kind,
                    vec![],
                    TileType::scalar(DType::Scalar(Scalar::I32)),
                    loc,
                ))
            }
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
            Op::Store => {
                self.store(args, loc);
                Val::Unit
            }
            Op::Where => one(self.select(args, loc)),
            Op::Exp | Op::Exp2 | Op::Log | Op::Log2 | Op::Sqrt | Op::Rsqrt | Op::Abs => {
                let x = self.operand(&args[0]);
                one(self.math(op, x, name_loc, loc))
            }
            Op::Maximum | Op::Minimum => {
                let a = self.operand(&args[0]);
                let b = self.operand(&args[1]);
                one(self.min_max(op, a, b, loc))
            }
            Op::Fma => one(self.fma(args, loc)),
            Op::To => unreachable!("`to` is lowered to a cast by the parser"),
            Op::ConvertLayout => unreachable!("`convert_layout` has its own syntax node"),
            Op::ExpandDims => {
                let Some(x) = self.tile_or_scalar(&args[0]) else {
                    return Val::One(Operand::Poison);
                };
                let ty = self.ty(x).clone();
                let Some(axis) = self.axis_arg(&args[1], ty.rank(), "expand_dims", &ty.shape, true)
                else {
                    return Val::One(Operand::Poison);
                };
                let mut shape = ty.shape.clone();
                shape.insert(axis, 1);
                one(self.emit(
                    OpKind::ExpandDims { axis },
                    vec![x],
                    TileType::new(shape, ty.dtype),
                    loc,
                ))
            }
            Op::BroadcastTo => {
                let x = self.tile_or_scalar(&args[0]);
                let shape = self.shape_arg(&args[1], "broadcast_to");
                let (Some(x), Some(shape)) = (x, shape) else {
                    return Val::One(Operand::Poison);
                };
                let from = self.shape(x);
                let fits = from.len() <= shape.len()
                    && broadcast_shapes(&from, &shape).as_deref() == Ok(&shape[..]);
                if !fits {
                    self.error(
                        loc,
                        format!(
                            "cannot broadcast shape {} to {}: aligned at the last dimension, each \
                             size must equal the target size or be 1",
                            shape_str(&from),
                            shape_str(&shape)
                        ),
                    );
                    return Val::One(Operand::Poison);
                }
                one(self.broadcast_value(x, &shape, loc))
            }
            Op::Sum | Op::Max | Op::Min | Op::Argmax | Op::Argmin => {
                one(self.reduce(op, args, loc))
            }
            Op::Dot => one(self.dot(args, loc)),
            Op::Trans => one(self.trans(args, loc)),
            Op::Reshape => {
                let x = self.tile_or_scalar(&args[0]);
                let shape = self.shape_arg(&args[1], "reshape");
                let (Some(x), Some(shape)) = (x, shape) else {
                    return Val::One(Operand::Poison);
                };
                let ty = self.ty(x).clone();
                if numel(&shape) != ty.numel() {
                    self.error(
                        loc,
                        format!(
                            "`reshape` cannot change the number of elements: {} has {} but {} has {}",
                            shape_str(&ty.shape),
                            ty.numel(),
                            shape_str(&shape),
                            numel(&shape)
                        ),
                    );
                    return Val::One(Operand::Poison);
                }
                one(self.emit(
                    OpKind::Reshape,
                    vec![x],
                    TileType::new(shape, ty.dtype),
                    loc,
                ))
            }
            Op::Join => {
                let a = self.operand(&args[0]);
                let b = self.operand(&args[1]);
                let Some((values, dtype)) =
                    self.unify(&[a, b], &["the first tile", "the second tile"], loc)
                else {
                    return Val::One(Operand::Poison);
                };
                let (sa, sb) = (self.shape(values[0]), self.shape(values[1]));
                if sa != sb {
                    self.error(
                        loc,
                        format!(
                            "shape mismatch: `join` needs two tiles of the same shape, but the first \
                             is {} and the second {}",
                            shape_str(&sa),
                            shape_str(&sb)
                        ),
                    );
                    return Val::One(Operand::Poison);
                }
                let mut shape = sa;
                shape.push(2);
                one(self.emit(OpKind::Join, values, TileType::new(shape, dtype), loc))
            }
            Op::Split => {
                let Some(x) = self.tile(&args[0], "split") else {
                    return Val::Pair(Operand::Poison, Operand::Poison);
                };
                let ty = self.ty(x).clone();
                if ty.shape.last() != Some(&2) {
                    self.error(
                        loc,
                        format!(
                            "`split` halves a last dimension of size 2 (the inverse of `join`), but \
                             this tile has shape {}",
                            shape_str(&ty.shape)
                        ),
                    );
                    return Val::Pair(Operand::Poison, Operand::Poison);
                }
                let half = TileType::new(ty.shape[..ty.rank() - 1].to_vec(), ty.dtype);
                match self.emit_op(
                    OpKind::Split,
                    vec![x],
                    vec![half.clone(), half],
                    Vec::new(),
                    loc,
                ) {
                    Some(r) => Val::Pair(Operand::Value(r[0]), Operand::Value(r[1])),
                    None => Val::Pair(Operand::Poison, Operand::Poison),
                }
            }
            Op::Gather => one(self.gather(args, loc)),
        }
    }

    /// An operand made a value (a weak literal becomes a scalar of its default type).
    fn tile_or_scalar(&mut self, e: &Expr) -> Option<ValueId> {
        let o = self.operand(e);
        self.materialize(o, None, e.loc)
    }

    fn arange(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let start = self.const_int(&args[0], "the start of `arange`");
        let end = self.const_int(&args[1], "the end of `arange`");
        let (start, end) = (start?, end?);
        let i32_range = i128::from(i32::MIN)..=i128::from(i32::MAX);
        if !i32_range.contains(&start) || !i32_range.contains(&end) {
            self.error(
                loc,
                format!("`arange({start}, {end})` leaves the range of i32"),
            );
            return None;
        }
        let n = end - start;
        if n <= 0 {
            self.error(
                loc,
                format!(
                    "`arange({start}, {end})` is empty: the end must be greater than the start"
                ),
            );
            return None;
        }
        if !is_power_of_two(n) {
            let source = format!("arange({}, {})", args[0], args[1]);
            self.error(
                loc,
                format!(
                    "`{source}` has {n} elements, not a power of two: every tile dimension must be \
                     a power of two (take arange({start}, {}) and mask off the indices from {end} on)",
                    start + next_power_of_two(n)
                ),
            );
            return None;
        }
        self.emit(
            OpKind::Arange {
                start: start as i64,
                end: end as i64,
            },
            vec![],
            TileType::new(vec![n as u64], DType::Scalar(Scalar::I32)),
            loc,
        )
    }

    fn full(
        &mut self,
        shape: Option<Shape>,
        value: Operand,
        dtype: Option<Scalar>,
        value_expr: &Expr,
        loc: Loc,
    ) -> Option<ValueId> {
        let shape = shape?;
        let v = self.materialize(value, dtype.map(DType::Scalar), value_expr.loc)?;
        let ty = self.ty(v).clone();
        if !ty.is_scalar() {
            self.error(
                value_expr.loc,
                format!("the value of `full` is a scalar, found a tile {ty}"),
            );
            return None;
        }
        if let Some(d) = dtype {
            if ty.dtype != DType::Scalar(d) {
                self.error(
                    value_expr.loc,
                    format!("`full::<{d}>` needs a {d} value, found {}", ty.dtype),
                );
                return None;
            }
        }
        self.broadcast_value(v, &shape, loc)
    }

    fn cdiv(&mut self, a: Operand, b: Operand, loc: Loc) -> Operand {
        if let (Operand::Int(x), Operand::Int(y)) = (a, b) {
            if y == 0 {
                self.error(loc, "`cdiv` divides by zero");
                return Operand::Poison;
            }
            return match x.checked_add(y - 1) {
                Some(n) => Operand::Int(n.div_euclid(y)),
                None => Operand::Poison,
            };
        }
        let Some((values, dtype)) = self.unify(
            &[a, b],
            &["the dividend of `cdiv`", "the divisor of `cdiv`"],
            loc,
        ) else {
            return Operand::Poison;
        };
        if !dtype.is_int() {
            self.error(loc, format!("`cdiv` divides integers, found {dtype}"));
            return Operand::Poison;
        }
        // (a + b - 1) / b
        let sum = self.binary(
            BinOp::Add,
            Operand::Value(values[0]),
            Operand::Value(values[1]),
            loc,
        );
        let minus_one = self.binary(BinOp::Sub, sum, Operand::Int(1), loc);
        self.binary(BinOp::Div, minus_one, Operand::Value(values[1]), loc)
    }

    fn load(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let ptrs = self.tile(&args[0], "load");
        let mask = args.get(1).map(|m| (self.operand(m), m.loc));
        let other = args.get(2).map(|o| (self.operand(o), o.loc));
        let ptrs = ptrs?;
        let ptr_ty = self.ty(ptrs).clone();
        let DType::Ptr(elem) = ptr_ty.dtype else {
            self.error(
                args[0].loc,
                format!(
                    "`load` reads through pointers: its first argument must be a `Ptr<T>` or a tile \
                     of them (`ptr + offsets`), found {ptr_ty}"
                ),
            );
            return None;
        };
        let mut operands = vec![ptrs];
        let mut roles = vec!["the pointers"];
        if let Some((m, mloc)) = mask {
            operands.push(self.mask(m, mloc, "load")?);
            roles.push("the mask");
        }
        if let Some((o, oloc)) = other {
            let o = self.materialize(o, Some(DType::Scalar(elem)), oloc)?;
            let d = self.dtype(o);
            if d != DType::Scalar(elem) {
                self.error(
                    oloc,
                    format!("`other` is {d} but the pointers load {elem}: cast it with `.to::<{elem}>()`"),
                );
                return None;
            }
            operands.push(o);
            roles.push("`other`");
        }
        let (values, shape) = self.broadcast_all(&operands, &roles, loc)?;
        self.emit(
            OpKind::Load {
                mask: mask.is_some(),
                other: other.is_some(),
            },
            values,
            TileType::new(shape, DType::Scalar(elem)),
            loc,
        )
    }

    /// A mask operand: bool.
    fn mask(&mut self, m: Operand, loc: Loc, op: &str) -> Option<ValueId> {
        let v = match m {
            Operand::Value(v) => v,
            Operand::Poison => return None,
            other => {
                let found = self.describe(other);
                self.error(
                    loc,
                    format!("the mask of `{op}` must be bool, found {found}"),
                );
                return None;
            }
        };
        let ty = self.ty(v).clone();
        if !ty.dtype.is_bool() {
            self.error(
                loc,
                format!("the mask of `{op}` must be bool (e.g. `offsets < n`), found {ty}"),
            );
            return None;
        }
        Some(v)
    }

    fn store(&mut self, args: &[Expr], loc: Loc) {
        let ptrs = self.tile(&args[0], "store");
        let value = self.operand(&args[1]);
        let mask = args.get(2).map(|m| (self.operand(m), m.loc));
        let Some(ptrs) = ptrs else { return };
        let ptr_ty = self.ty(ptrs).clone();
        let DType::Ptr(elem) = ptr_ty.dtype else {
            self.error(
                args[0].loc,
                format!(
                    "`store` writes through pointers: its first argument must be a `Ptr<T>` or a \
                     tile of them (`ptr + offsets`), found {ptr_ty}"
                ),
            );
            return;
        };
        let Some(value) = self.materialize(value, Some(DType::Scalar(elem)), args[1].loc) else {
            return;
        };
        let d = self.dtype(value);
        if d != DType::Scalar(elem) {
            self.error(
                args[1].loc,
                format!(
                    "`store` writes {d} values through pointers to {elem}: cast them first, e.g. \
                     `value.to::<{elem}>()`"
                ),
            );
            return;
        }
        let mut operands = vec![ptrs, value];
        let mut roles = vec!["the pointers", "the value"];
        if let Some((m, mloc)) = mask {
            let Some(m) = self.mask(m, mloc, "store") else {
                return;
            };
            operands.push(m);
            roles.push("the mask");
        }
        let Some((values, _)) = self.broadcast_all(&operands, &roles, loc) else {
            return;
        };
        self.emit_op(
            OpKind::Store {
                mask: mask.is_some(),
            },
            values,
            Vec::new(),
            Vec::new(),
            loc,
        );
    }

    fn select(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let c = self.operand(&args[0]);
        let a = self.operand(&args[1]);
        let b = self.operand(&args[2]);
        let c = self.mask(c, args[0].loc, "where_")?;
        let (values, dtype) =
            self.unify(&[a, b], &["the value if true", "the value if false"], loc)?;
        let (all, shape) = self.broadcast_all(
            &[c, values[0], values[1]],
            &["the condition", "the value if true", "the value if false"],
            loc,
        )?;
        self.emit(OpKind::Select, all, TileType::new(shape, dtype), loc)
    }

    fn math(&mut self, op: Op, x: Operand, name_loc: Loc, loc: Loc) -> Option<ValueId> {
        let name = crate::ops::info_of(op).name;
        let x = match x {
            Operand::Int(_) if op != Op::Abs => {
                self.error(loc, format!("`{name}` needs a float operand, found an integer literal (write e.g. `1.0`)"));
                return None;
            }
            o => self.materialize(o, None, loc)?,
        };
        let ty = self.ty(x).clone();
        let ok = match op {
            Op::Abs => ty.dtype.is_numeric(),
            _ => ty.dtype.is_float(),
        };
        if !ok {
            let needs = if op == Op::Abs { "a number" } else { "a float" };
            self.error(
                name_loc,
                format!(
                    "`{name}` needs {needs} operand, found {ty}{}",
                    if ty.dtype.is_int() {
                        " (cast it first, e.g. `x.to::<f32>()`)"
                    } else {
                        ""
                    }
                ),
            );
            return None;
        }
        let kind = match op {
            Op::Exp => UnaryOp::Exp,
            Op::Exp2 => UnaryOp::Exp2,
            Op::Log => UnaryOp::Log,
            Op::Log2 => UnaryOp::Log2,
            Op::Sqrt => UnaryOp::Sqrt,
            Op::Rsqrt => UnaryOp::Rsqrt,
            _ => UnaryOp::Abs,
        };
        self.emit(OpKind::Unary(kind), vec![x], ty, loc)
    }

    fn min_max(&mut self, op: Op, a: Operand, b: Operand, loc: Loc) -> Option<ValueId> {
        let name = crate::ops::info_of(op).name;
        let roles = [
            &*format!("the first operand of `{name}`"),
            &*format!("the second operand of `{name}`"),
        ];
        let (values, dtype) = self.unify(&[a, b], &roles, loc)?;
        if !dtype.is_numeric() {
            self.error(
                loc,
                format!("`{name}` needs number operands, found {dtype}"),
            );
            return None;
        }
        let (values, shape) = self.broadcast_all(&values, &roles, loc)?;
        let kind = if op == Op::Maximum {
            BinaryOp::Max
        } else {
            BinaryOp::Min
        };
        self.emit(
            OpKind::Binary(kind),
            values,
            TileType::new(shape, dtype),
            loc,
        )
    }

    fn fma(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let ops: Vec<Operand> = args.iter().map(|a| self.operand(a)).collect();
        let roles = [
            "`a` of `fma(a, b, c)`",
            "`b` of `fma(a, b, c)`",
            "`c` of `fma(a, b, c)`",
        ];
        let (values, dtype) = self.unify(&ops, &roles, loc)?;
        if !dtype.is_float() {
            self.error(loc, format!("`fma` needs float operands, found {dtype}"));
            return None;
        }
        let (values, shape) = self.broadcast_all(&values, &roles, loc)?;
        self.emit(OpKind::Fma, values, TileType::new(shape, dtype), loc)
    }

    /// Whether `e` can be a compile-time integer (to tell `x.max(axis)` from a mistaken
    /// elementwise `x.max(y)`).
    fn looks_like_axis(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Int { suffix, .. } => suffix.is_none_or(Scalar::is_int),
            ExprKind::Var(name) => self.lookup(name).is_none_or(|(s, i)| {
                matches!(self.scopes[s][i].operand, Operand::Int(_) | Operand::Poison)
            }),
            ExprKind::Unary { operand, .. } => self.looks_like_axis(operand),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.looks_like_axis(lhs) && self.looks_like_axis(rhs)
            }
            ExprKind::Call { op: Op::Cdiv, .. } | ExprKind::Invalid => true,
            _ => false,
        }
    }

    fn reduce(&mut self, op: Op, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let name = crate::ops::info_of(op).name;
        let x = self.tile(&args[0], name);
        if matches!(op, Op::Max | Op::Min) && !self.looks_like_axis(&args[1]) {
            let elementwise = if op == Op::Max { "maximum" } else { "minimum" };
            self.error(
                args[1].loc,
                format!(
                    "`{name}(x, axis)` reduces along an axis, so its argument must be an integer axis \
                     such as `x.{name}(0)`; for the elementwise {elementwise} of two values write \
                     `{elementwise}(a, b)`"
                ),
            );
            return None;
        }
        let x = x?;
        let ty = self.ty(x).clone();
        if ty.is_scalar() {
            self.error(
                loc,
                format!(
                    "`{name}` reduces a tile along an axis, but this is a scalar {}",
                    ty.dtype
                ),
            );
            return None;
        }
        let axis = self.axis_arg(&args[1], ty.rank(), name, &ty.shape, false)?;
        if !ty.dtype.is_numeric() {
            self.error(loc, format!("`{name}` needs a tile of numbers, found {ty}"));
            return None;
        }
        let kind = match op {
            Op::Sum => ReduceKind::Sum,
            Op::Max => ReduceKind::Max,
            Op::Min => ReduceKind::Min,
            Op::Argmax => ReduceKind::Argmax,
            _ => ReduceKind::Argmin,
        };
        let dtype = match kind {
            ReduceKind::Argmax | ReduceKind::Argmin => DType::Scalar(Scalar::I32),
            _ => ty.dtype,
        };
        let mut shape = ty.shape.clone();
        shape.remove(axis);
        self.emit(
            OpKind::Reduce { kind, axis },
            vec![x],
            TileType::new(shape, dtype),
            loc,
        )
    }

    fn dot(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let a = self.tile(&args[0], "dot");
        let b = self.tile(&args[1], "dot");
        let acc = args.get(2).map(|e| (self.operand(e), e.loc));
        let (a, b) = (a?, b?);
        let (ta, tb) = (self.ty(a).clone(), self.ty(b).clone());
        for (t, which, e) in [(&ta, "a", &args[0]), (&tb, "b", &args[1])] {
            if t.rank() != 2 {
                self.error(
                    e.loc,
                    format!(
                        "`dot(a, b)` multiplies 2-D tiles, but `{which}` has shape {}",
                        shape_str(&t.shape)
                    ),
                );
                return None;
            }
        }
        if ta.dtype != tb.dtype {
            self.error(
                loc,
                format!(
                    "`dot` needs both operands of one element type, but `a` is {} and `b` is {}",
                    ta.dtype, tb.dtype
                ),
            );
            return None;
        }
        let (acc_dtype, k_min) = match ta.dtype.scalar() {
            Some(Scalar::F16 | Scalar::BF16) => (Scalar::F32, 16),
            Some(Scalar::F8E4M3 | Scalar::F8E5M2) => (Scalar::F32, 32),
            Some(Scalar::I8) => (Scalar::I32, 32),
            _ => {
                self.error(
                    loc,
                    format!(
                        "wrong element type for `dot`: the operands are {}, but the tensor cores \
                         multiply f16, bf16, f8e4m3, f8e5m2 or i8 (cast the operands, e.g. \
                         `a.to::<f16>()`)",
                        ta.dtype
                    ),
                );
                return None;
            }
        };
        let (m, k, k2, n) = (ta.shape[0], ta.shape[1], tb.shape[0], tb.shape[1]);
        if k != k2 {
            self.error(
                loc,
                format!(
                    "shape mismatch in `dot`: `a` is [M, K] = {} and `b` is [K, N] = {}, so their \
                     inner sizes {k} and {k2} must be equal",
                    shape_str(&ta.shape),
                    shape_str(&tb.shape)
                ),
            );
            return None;
        }
        if m < 16 || n < 16 || k < k_min {
            self.error(
                loc,
                format!(
                    "`dot` on {} tensor cores needs M ≥ 16, N ≥ 16 and K ≥ {k_min}, but here M = {m}, \
                     N = {n}, K = {k}",
                    ta.dtype
                ),
            );
            return None;
        }
        let acc_ty = TileType::new(vec![m, n], DType::Scalar(acc_dtype));
        let acc = match acc {
            None => {
                let zero = self.constant(ConstValue::Int(0), acc_dtype, loc)?;
                self.broadcast_value(zero, &acc_ty.shape, loc)?
            }
            Some((o, aloc)) => {
                if let Operand::Value(v) = o {
                    let d = self.dtype(v);
                    if d != acc_ty.dtype {
                        self.error(
                            aloc,
                            format!(
                                "the accumulator of `dot` on {} operands must be {acc_dtype}, found {d}",
                                ta.dtype
                            ),
                        );
                        return None;
                    }
                }
                let v = self.materialize(o, Some(acc_ty.dtype), aloc)?;
                let shape = self.shape(v);
                if !shape.is_empty() && shape != acc_ty.shape {
                    self.error(
                        aloc,
                        format!(
                            "shape mismatch: the accumulator of `dot` must have shape [M, N] = {}, \
                             found {}",
                            shape_str(&acc_ty.shape),
                            shape_str(&shape)
                        ),
                    );
                    return None;
                }
                self.broadcast_value(v, &acc_ty.shape, aloc)?
            }
        };
        self.emit(OpKind::Dot { plan: None }, vec![a, b, acc], acc_ty, loc)
    }

    fn trans(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let x = self.tile(&args[0], "trans")?;
        let ty = self.ty(x).clone();
        let rank = ty.rank();
        let perm: Vec<usize> = match args.get(1) {
            None => (0..rank).rev().collect(),
            Some(p) => {
                let ExprKind::Array(elems) = &p.kind else {
                    self.error(
                        p.loc,
                        "the permutation of `trans` is an array of axes, e.g. `x.trans([1, 0])`",
                    );
                    return None;
                };
                if elems.len() != rank {
                    self.error(
                        p.loc,
                        format!(
                            "`trans` on a tile of rank {rank} (shape {}) needs a permutation of {rank} \
                             axes, found {}",
                            shape_str(&ty.shape),
                            elems.len()
                        ),
                    );
                    return None;
                }
                let mut perm = Vec::new();
                for e in elems {
                    let a = self.axis_arg(e, rank, "trans", &ty.shape, false)?;
                    if perm.contains(&a) {
                        self.error(
                            e.loc,
                            format!(
                                "axis {a} appears twice: `trans` needs a permutation of the axes"
                            ),
                        );
                        return None;
                    }
                    perm.push(a);
                }
                perm
            }
        };
        let shape = perm.iter().map(|&p| ty.shape[p]).collect();
        self.emit(
            OpKind::Trans { perm },
            vec![x],
            TileType::new(shape, ty.dtype),
            loc,
        )
    }

    fn gather(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let src = self.tile(&args[0], "gather");
        let index = self.tile(&args[1], "gather");
        let (src, index) = (src?, index?);
        let (ts, ti) = (self.ty(src).clone(), self.ty(index).clone());
        if !ti.dtype.is_int() {
            self.error(
                args[1].loc,
                format!("the index of `gather` must be an integer tile, found {ti}"),
            );
            return None;
        }
        if ts.is_scalar() {
            self.error(
                args[0].loc,
                "`gather` reads from a tile, but the source is a scalar",
            );
            return None;
        }
        let axis = self.axis_arg(&args[2], ts.rank(), "gather", &ts.shape, false)?;
        if ti.rank() != ts.rank() {
            self.error(
                loc,
                format!(
                    "`gather` needs index and source of the same rank, but the source is {} and \
                     the index {}",
                    shape_str(&ts.shape),
                    shape_str(&ti.shape)
                ),
            );
            return None;
        }
        if let Some(d) = (0..ts.rank()).find(|&d| d != axis && ts.shape[d] != ti.shape[d]) {
            self.error(
                loc,
                format!(
                    "shape mismatch in `gather` along axis {axis}: the index {} must equal the source \
                     {} on every other axis, but they differ on axis {d} ({} vs {})",
                    shape_str(&ti.shape),
                    shape_str(&ts.shape),
                    ti.shape[d],
                    ts.shape[d]
                ),
            );
            return None;
        }
        self.emit(
            OpKind::Gather { axis, code: None },
            vec![src, index],
            TileType::new(ti.shape, ts.dtype),
            loc,
        )
    }
}

/// A weak literal's value.
#[derive(Clone, Copy)]
enum Weak {
    Int(i128),
    Float(f64),
}

impl Weak {
    fn as_f64(self) -> f64 {
        match self {
            Weak::Int(v) => v as f64,
            Weak::Float(x) => x,
        }
    }
}

fn weak(o: Operand) -> Option<Weak> {
    match o {
        Operand::Int(v) => Some(Weak::Int(v)),
        Operand::Float(x) => Some(Weak::Float(x)),
        _ => None,
    }
}

fn compare(op: BinOp, o: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match op {
        BinOp::Lt => o == Less,
        BinOp::Le => o != Greater,
        BinOp::Eq => o == Equal,
        BinOp::Ne => o != Equal,
        BinOp::Ge => o != Less,
        _ => o == Greater,
    }
}

/// The IR op of a source operator: arithmetic/logic, or a comparison.
fn ir_binary(op: BinOp) -> Result<BinaryOp, CmpOp> {
    Ok(match op {
        BinOp::Add => BinaryOp::Add,
        BinOp::Sub => BinaryOp::Sub,
        BinOp::Mul => BinaryOp::Mul,
        BinOp::Div => BinaryOp::Div,
        BinOp::Rem => BinaryOp::Rem,
        BinOp::BitAnd | BinOp::And => BinaryOp::And,
        BinOp::BitOr | BinOp::Or => BinaryOp::Or,
        BinOp::BitXor => BinaryOp::Xor,
        BinOp::Shl => BinaryOp::Shl,
        BinOp::Shr => BinaryOp::Shr,
        BinOp::Lt => return Err(CmpOp::Lt),
        BinOp::Le => return Err(CmpOp::Le),
        BinOp::Eq => return Err(CmpOp::Eq),
        BinOp::Ne => return Err(CmpOp::Ne),
        BinOp::Ge => return Err(CmpOp::Ge),
        BinOp::Gt => return Err(CmpOp::Gt),
    })
}

fn is_power_of_two(n: i128) -> bool {
    n > 0 && n & (n - 1) == 0
}

fn next_power_of_two(n: i128) -> i128 {
    let mut p = 1;
    while p < n {
        p <<= 1;
    }
    p
}

/// `tile size 3`, or ``tile size `BLOCK * 3` = 384`` when the source is not the number itself.
fn size_name(source: &str, size: i128) -> String {
    if source == size.to_string() {
        format!("tile size {size}")
    } else {
        format!("tile size `{source}` = {size}")
    }
}

fn not_power_of_two(source: &str, size: i128) -> String {
    let named = size_name(source, size);
    format!(
        "{named} is not a power of two: every tile dimension must be a power of two (use {} and \
         mask off the extra elements)",
        next_power_of_two(size)
    )
}

/// Names assigned in `block` that are not declared in it before the assignment (so they are
/// variables of an enclosing scope), in order of first assignment.
fn assigned_outer_names(block: &Block, declared: &[String], out: &mut Vec<String>) {
    let mut declared = declared.to_vec();
    for s in &block.stmts {
        match s {
            Stmt::Let { pat, init, .. } => {
                assigned_in_expr(init, &declared, out);
                pattern_names(pat, &mut declared);
            }
            Stmt::Assign { name, value, .. } => {
                assigned_in_expr(value, &declared, out);
                if !declared.contains(name) && !out.contains(name) {
                    out.push(name.clone());
                }
            }
            Stmt::Expr(e) => assigned_in_expr(e, &declared, out),
        }
    }
    if let Some(t) = &block.tail {
        assigned_in_expr(t, &declared, out);
    }
}

fn assigned_in_expr(e: &Expr, declared: &[String], out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Block(b) => assigned_outer_names(b, declared, out),
        ExprKind::If { cond, then, els } => {
            assigned_in_expr(cond, declared, out);
            assigned_outer_names(then, declared, out);
            if let Some(e) = els {
                assigned_in_expr(e, declared, out);
            }
        }
        ExprKind::For {
            var,
            start,
            end,
            step,
            body,
        } => {
            assigned_in_expr(start, declared, out);
            assigned_in_expr(end, declared, out);
            if let Some(s) = step {
                assigned_in_expr(s, declared, out);
            }
            let mut inner = declared.to_vec();
            pattern_names(var, &mut inner);
            assigned_outer_names(body, &inner, out);
        }
        ExprKind::Call { args, .. } | ExprKind::Array(args) => {
            for a in args {
                assigned_in_expr(a, declared, out);
            }
        }
        ExprKind::ConvertLayout { value, .. } | ExprKind::Cast { value, .. } => {
            assigned_in_expr(value, declared, out)
        }
        ExprKind::Unary { operand, .. } => assigned_in_expr(operand, declared, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            assigned_in_expr(lhs, declared, out);
            assigned_in_expr(rhs, declared, out);
        }
        ExprKind::Int { .. }
        | ExprKind::Float { .. }
        | ExprKind::Bool(_)
        | ExprKind::Special { .. }
        | ExprKind::Var(_)
        | ExprKind::Invalid => {}
    }
}

fn pattern_names(p: &Pat, out: &mut Vec<String>) {
    match p {
        Pat::Bind { name, .. } => out.push(name.clone()),
        Pat::Wild { .. } => {}
        Pat::Tuple { elems, .. } => elems.iter().for_each(|e| pattern_names(e, out)),
    }
}

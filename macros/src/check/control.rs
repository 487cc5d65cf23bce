//! Statements and control flow: `let`, assignment, blocks, `for` and `while` loops and `if`.

use super::{Checker, Operand, Slot, Val};
use crate::ast::{BinOp, Block, Expr, ExprKind, ForLoop, Pat, Stmt};
use crate::diag::Loc;
use crate::ir::{OpKind, Region, ValueId};
use crate::ops::Op;
use crate::types::{DType, Scalar, TileType};

impl Checker<'_> {
    pub(super) fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            match s {
                Stmt::Let {
                    pat: Pat::Tuple { elems, loc },
                    init,
                    ..
                } if ends_in_tuple(init) => self.let_tuple(elems, *loc, init),
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

    /// `let (x, y, z, …) = (a, b, c, …);` (or a block ending in such a tuple: a helper's body
    /// inlined): every value first (left to right), then every name, as Rust does
    /// (`let (a, b, c) = (b, c, a)` rotates).
    fn let_tuple(&mut self, elems: &[Pat], loc: Loc, init: &Expr) {
        let values = self.tuple_values(init);
        if elems.len() != values.len() {
            // A block (a helper's call is one, inlined) would print as `{ … }`.
            let of = match &init.kind {
                ExprKind::Block(_) => "on its right".to_string(),
                _ => format!("of `{init}`"),
            };
            self.error(
                loc,
                format!(
                    "this pattern has {} names for the {} values {of}",
                    elems.len(),
                    values.len()
                ),
            );
        }
        for (i, p) in elems.iter().enumerate() {
            let value = values.get(i).copied().unwrap_or(Operand::Poison);
            match p {
                Pat::Tuple { loc, .. } => self.error(*loc, "nested tuples are not supported"),
                p => self.bind_pattern(p, Val::One(value), init),
            }
        }
    }

    /// The values of a tuple expression that [`ends_in_tuple`], the statements of the blocks
    /// around it run in their scopes.
    fn tuple_values(&mut self, e: &Expr) -> Vec<Operand> {
        match &e.kind {
            ExprKind::Tuple(items) => items.iter().map(|item| self.operand(item)).collect(),
            ExprKind::Block(b) => {
                self.push_scope();
                self.stmts(&b.stmts);
                let values = match &b.tail {
                    Some(tail) => self.tuple_values(tail),
                    None => Vec::new(),
                };
                self.pop_scope();
                values
            }
            _ => vec![self.operand(e)],
        }
    }

    pub(super) fn bind_pattern(&mut self, pat: &Pat, val: Val, init: &Expr) {
        match (pat, val) {
            (Pat::Wild { .. }, _) => {}
            (Pat::Bind { name, mutable, .. }, Val::One(o)) => self.bind(name, o, *mutable),
            (Pat::Bind { name, mutable, .. }, Val::Unit) => {
                self.error(init.loc, format!("`{init}` produces no value to bind"));
                self.bind(name, Operand::Poison, *mutable);
            }
            (Pat::Bind { name, mutable, .. }, Val::Pair(..)) => {
                self.error(init.loc, two_values_message(init));
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
                                "only `split` and a pair `(a, b)` give two values to \
                                 destructure, and `{init}` is neither"
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

    pub(super) fn assign(
        &mut self,
        name: &str,
        name_loc: Loc,
        op: Option<BinOp>,
        value: &Expr,
        loc: Loc,
    ) {
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
    pub(super) fn check_assignment(
        &mut self,
        slot: Slot,
        old: Operand,
        new: Operand,
        loc: Loc,
    ) -> Operand {
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
    pub(super) fn block(&mut self, b: &Block) -> Val {
        self.push_scope();
        self.stmts(&b.stmts);
        let v = match &b.tail {
            Some(t) => self.expr(t),
            None => Val::Unit,
        };
        self.pop_scope();
        v
    }

    /// The outer mutable variables that `body` assigns, with their current values made concrete.
    /// `declared` are names bound inside the construct before its blocks run (a loop variable).
    pub(super) fn carried_variables(
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

    pub(super) fn for_loop(&mut self, l: &ForLoop, loc: Loc) {
        let (var, body) = (&l.var, &l.body);
        let step = l.step.as_deref();
        let s = self.operand(&l.start);
        let e = self.operand(&l.end);
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
        let saved = self.mark_carried(&carried, loc);
        let mut args = vec![iv];
        args.extend(self.bind_carried_args(&carried, loc));
        self.regions.push(Region::default());
        self.push_scope();
        if let Pat::Bind { name, .. } = var {
            self.bind(name, Operand::Value(iv), false);
        }
        self.loop_body(body, "for");
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
        if let Some((stages, at)) = l.num_stages {
            // The planner's own test: a `dot` in a nested loop or `if` is not this loop's.
            if stages > 1 && !region.computes_dot() {
                self.error(
                    at,
                    format!(
                        "`num_stages({stages})` on a loop that computes no `dot`: only the loads \
                         feeding a `dot` in the loop's body are pipelined (not in a nested loop \
                         or `if`)"
                    ),
                );
            }
            self.loop_stages.push((iv, stages));
        }
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
        self.end_carried(&carried, results, &saved);
    }

    /// `while cond { body }`: the variables the body assigns are carried; the condition reads
    /// them at the top of each iteration.
    pub(super) fn while_loop(&mut self, cond: &Expr, body: &Block, loc: Loc) {
        let mut assigned_by_cond = Vec::new();
        assigned_in_expr(cond, &[], &mut assigned_by_cond);
        if let Some(name) = assigned_by_cond.first() {
            self.error(
                cond.loc,
                format!(
                    "the condition of `while` assigns `{name}`: assign variables in the loop's \
                     body, and only test them in the condition"
                ),
            );
        }
        let carried = self.carried_variables(&[body], &[], &[], loc);
        let saved = self.mark_carried(&carried, loc);
        // The condition, on the carried values at the top of an iteration.
        let cond_args = self.bind_carried_args(&carried, loc);
        self.regions.push(Region::default());
        self.push_scope();
        let c = self.operand(cond);
        self.pop_scope();
        let cond_value = self.scalar_condition(
            c,
            cond.loc,
            "while",
            " (the loop runs the whole program, so its condition is one value: reduce the tile \
             to a scalar first, e.g. `x.max(0) > limit`)",
        );
        let mut cond_region = self.regions.pop().unwrap_or_default();
        cond_region.args = cond_args;
        cond_region.yields = cond_value.into_iter().collect();

        // The body, on the same carried values.
        let body_args = self.bind_carried_args(&carried, loc);
        self.regions.push(Region::default());
        self.push_scope();
        self.loop_body(body, "while");
        self.pop_scope();
        let yields = self.branch_yields(&carried);
        let mut body_region = self.regions.pop().unwrap_or_default();
        body_region.args = body_args;
        body_region.yields = yields;

        let results = match cond_value {
            Some(_) => {
                let operands: Vec<ValueId> = carried.iter().map(|&(_, init)| init).collect();
                let types: Vec<TileType> = operands.iter().map(|&v| self.ty(v).clone()).collect();
                self.emit_op(
                    OpKind::While,
                    operands,
                    types,
                    vec![cond_region, body_region],
                    loc,
                )
            }
            None => None,
        };
        self.end_carried(&carried, results, &saved);
    }

    /// The condition `c` of `what` (`if`, `while`) when it is a scalar bool; otherwise an error
    /// at `loc` (with `tile_hint` when it is a tile) and `None`.
    fn scalar_condition(
        &mut self,
        c: Operand,
        loc: Loc,
        what: &str,
        tile_hint: &str,
    ) -> Option<ValueId> {
        match c {
            Operand::Poison => None,
            Operand::Value(v) if self.ty(v).is_scalar() && self.dtype(v).is_bool() => Some(v),
            other => {
                let found = self.describe(other);
                let hint = match other {
                    Operand::Value(v) if !self.ty(v).is_scalar() => tile_hint,
                    _ => "",
                };
                self.error(
                    loc,
                    format!("the condition of `{what}` must be a scalar bool, found {found}{hint}"),
                );
                None
            }
        }
    }

    /// Marks the carried variables as carried by the loop at `loc`; gives the marks they had
    /// (for [`Self::end_carried`]).
    fn mark_carried(&mut self, carried: &[(Slot, ValueId)], loc: Loc) -> Vec<Option<Loc>> {
        carried
            .iter()
            .map(|&(slot, _)| self.binding(slot).carried_by.replace(loc))
            .collect()
    }

    /// After a loop: the carried variables bound to its `results` (poison when the loop was not
    /// emitted), their marks back as they were before it (`saved`).
    fn end_carried(
        &mut self,
        carried: &[(Slot, ValueId)],
        results: Option<Vec<ValueId>>,
        saved: &[Option<Loc>],
    ) {
        for (i, &(slot, _)) in carried.iter().enumerate() {
            let operand = results
                .as_ref()
                .map_or(Operand::Poison, |r| Operand::Value(r[i]));
            self.rebind(slot, operand);
            self.binding(slot).carried_by = saved[i];
        }
    }

    /// New region arguments for the carried variables (named after them), bound to them.
    fn bind_carried_args(&mut self, carried: &[(Slot, ValueId)], loc: Loc) -> Vec<ValueId> {
        let mut args = Vec::new();
        for &(slot, init) in carried {
            let ty = self.ty(init).clone();
            let arg = self.new_value(ty, loc);
            let name = self.binding(slot).name.clone();
            self.values[arg.0 as usize].name = Some(name);
            args.push(arg);
            self.binding(slot).operand = Operand::Value(arg);
        }
        args
    }

    pub(super) fn if_expr(
        &mut self,
        cond: &Expr,
        then: &Block,
        els: Option<&Expr>,
        loc: Loc,
    ) -> Val {
        let c = self.operand(cond);
        let cond_value = self.scalar_condition(
            c,
            cond.loc,
            "if",
            " (an `if` branches the whole program; for per-element choice use \
             `where_(condition, a, b)`)",
        );
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
    pub(super) fn branch_value(
        &mut self,
        v: Val,
        hint: Option<DType>,
        loc: Loc,
    ) -> Option<ValueId> {
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
    /// The statements of a loop's body; a value left at its end (the body of a `kind` loop has
    /// none) is an error.
    fn loop_body(&mut self, body: &Block, kind: &str) {
        self.stmts(&body.stmts);
        if let Some(tail) = &body.tail {
            if let Val::One(Operand::Value(_) | Operand::Int(_) | Operand::Float(_))
            | Val::Pair(..) = self.expr(tail)
            {
                self.error(
                    tail.loc,
                    format!(
                        "the body of a `{kind}` loop has no value: end this expression with `;`"
                    ),
                );
            }
        }
    }

    pub(super) fn branch_yields(&mut self, carried: &[(Slot, ValueId)]) -> Vec<ValueId> {
        carried
            .iter()
            .map(|&(slot, init)| match self.operand_at(slot) {
                Operand::Value(v) if self.ty(v) == self.ty(init) => v,
                _ => init,
            })
            .collect()
    }
}

/// Names assigned in `block` that are not declared in it before the assignment (so they are
/// variables of an enclosing scope), in order of first assignment.
pub(super) fn assigned_outer_names(block: &Block, declared: &[String], out: &mut Vec<String>) {
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

pub(super) fn assigned_in_expr(e: &Expr, declared: &[String], out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Block(b) => assigned_outer_names(b, declared, out),
        ExprKind::If { cond, then, els } => {
            assigned_in_expr(cond, declared, out);
            assigned_outer_names(then, declared, out);
            if let Some(e) = els {
                assigned_in_expr(e, declared, out);
            }
        }
        ExprKind::For(l) => {
            assigned_in_expr(&l.start, declared, out);
            assigned_in_expr(&l.end, declared, out);
            if let Some(s) = &l.step {
                assigned_in_expr(s, declared, out);
            }
            let mut inner = declared.to_vec();
            pattern_names(&l.var, &mut inner);
            assigned_outer_names(&l.body, &inner, out);
        }
        ExprKind::While { cond, body } => {
            assigned_in_expr(cond, declared, out);
            assigned_outer_names(body, declared, out);
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
        ExprKind::Binary { lhs, rhs, .. } | ExprKind::Pair(lhs, rhs) => {
            assigned_in_expr(lhs, declared, out);
            assigned_in_expr(rhs, declared, out);
        }
        ExprKind::Tuple(items) => {
            for item in items {
                assigned_in_expr(item, declared, out);
            }
        }
        ExprKind::Int { .. }
        | ExprKind::Float { .. }
        | ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::Special { .. }
        | ExprKind::Var(_)
        | ExprKind::Invalid => {}
    }
}

/// Whether `e` is a tuple of three or more values, or a block ending in one (the body of a
/// helper that returns one, inlined).
fn ends_in_tuple(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Tuple(_) => true,
        ExprKind::Block(b) => b.tail.as_deref().is_some_and(ends_in_tuple),
        _ => false,
    }
}

pub(super) fn pattern_names(p: &Pat, out: &mut Vec<String>) {
    match p {
        Pat::Bind { name, .. } => out.push(name.clone()),
        Pat::Wild { .. } => {}
        Pat::Tuple { elems, .. } => elems.iter().for_each(|e| pattern_names(e, out)),
    }
}

/// `num_stages = S` of the attribute: recorded on the kernel; an error at the attribute when
/// `S > 1` but no `for` loop of the kernel has a `dot` in its body (nothing to pipeline).
pub(crate) fn check_num_stages(
    kernel: &mut crate::ir::Kernel,
    stages: Option<(u32, Loc)>,
    diags: &mut crate::diag::Diagnostics,
) {
    let Some((stages, loc)) = stages else {
        return;
    };
    kernel.num_stages = stages;
    if stages < 2 {
        return;
    }
    let mut has_dot_loop = false;
    kernel.walk(&mut |op| {
        if let OpKind::For = op.kind {
            if let Some(body) = op.regions.first() {
                body.walk(&mut |o| has_dot_loop |= matches!(o.kind, OpKind::Dot { .. }));
            }
        }
    });
    if !has_dot_loop {
        diags.error(
            loc,
            format!(
                "num_stages = {stages}, but no `for` loop of `{}` computes a `dot`: pipelining \
                 overlaps the loads of later iterations of such a loop with the current one; \
                 remove `num_stages`",
                kernel.name
            ),
        );
    }
}

/// The error for a pair (of `split`, or `(a, b)`) used as one value.
pub(super) fn two_values_message(e: &Expr) -> &'static str {
    match &e.kind {
        ExprKind::Call { op: Op::Split, .. } => {
            "`split` returns two tiles: destructure them, `let (a, b) = x.split();`"
        }
        _ => "this gives two values: destructure them, `let (a, b) = …;`",
    }
}

//! Atomics: `atomic_add(ptrs, value, mask)` … `atomic_xchg`, `atomic_cas(ptrs, cmp, value)`,
//! each with an optional memory order and scope as trailing string literals.

use super::Checker;
use crate::ast::{Expr, ExprKind};
use crate::diag::Loc;
use crate::ir::{AtomicOp, MemScope, MemSem, OpKind, ValueId};
use crate::types::{DType, Scalar, TileType};

/// The element types `op` has (PTX `atom` forms the device layer implements).
pub fn atomic_types(op: AtomicOp) -> &'static [Scalar] {
    use Scalar::*;
    match op {
        AtomicOp::Add => &[I32, U32, I64, U64, F32, F64, F16],
        AtomicOp::Max | AtomicOp::Min | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => {
            &[I32, U32, I64, U64]
        }
        AtomicOp::Xchg | AtomicOp::Cas => &[I32, U32, I64, U64, F32, F64],
    }
}

impl Checker<'_> {
    pub(super) fn atomic(&mut self, op: AtomicOp, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let name = op.name();
        let strings = args
            .iter()
            .rev()
            .take_while(|a| matches!(a.kind, ExprKind::Str(_)))
            .count();
        let (positional, options) = args.split_at(args.len() - strings);
        if let Some(s) = positional
            .iter()
            .find(|a| matches!(a.kind, ExprKind::Str(_)))
        {
            self.error(
                s.loc,
                format!(
                    "the memory order and scope of `{name}` come last, after the {}",
                    if op == AtomicOp::Cas {
                        "pointers, the comparand and the value"
                    } else {
                        "pointers, the value and the mask"
                    }
                ),
            );
            return None;
        }
        let (sem, scope) = self.atomic_options(name, options)?;
        let arity_ok = match op {
            AtomicOp::Cas => positional.len() == 3,
            _ => (2..=3).contains(&positional.len()),
        };
        if !arity_ok {
            let usage = if op == AtomicOp::Cas {
                "`atomic_cas(ptrs, cmp, value)` (no mask), then optionally the order and scope, \
                 e.g. `atomic_cas(lock, 0, 1, \"acquire\")`"
            } else {
                "`{name}(ptrs, value)` or `{name}(ptrs, value, mask)`, then optionally the order \
                 and scope, e.g. `\"relaxed\", \"gpu\"`"
            };
            self.error(
                loc,
                format!(
                    "`{name}` takes {}, found {} argument{}: write {}",
                    if op == AtomicOp::Cas {
                        "3 tile arguments"
                    } else {
                        "2 or 3 tile arguments"
                    },
                    positional.len(),
                    if positional.len() == 1 { "" } else { "s" },
                    usage.replace("{name}", name)
                ),
            );
            return None;
        }
        let ptrs = self.tile(&positional[0], name);
        let rest: Vec<_> = positional[1..]
            .iter()
            .map(|a| (self.operand(a), a.loc))
            .collect();
        let ptrs = ptrs?;
        let elem = self.pointee(ptrs, positional[0].loc, &format!("`{name}` updates memory"))?;
        let allowed = atomic_types(op);
        if !allowed.contains(&elem) {
            let list: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
            let why = match (op, elem) {
                (AtomicOp::Max | AtomicOp::Min, Scalar::F32 | Scalar::F64) => {
                    " (PTX has no floating-point `atom.max`/`atom.min` on global memory)"
                }
                (AtomicOp::Add, Scalar::BF16) => {
                    " (`atom.add.noftz.bf16` needs sm_90 and the kernels are built for sm_80)"
                }
                _ => "",
            };
            self.error(
                positional[0].loc,
                format!(
                    "`{name}` has no {elem} form{why}: its element types are {}",
                    list.join(", ")
                ),
            );
            return None;
        }
        let mut operands = vec![ptrs];
        let mut roles = vec!["the pointers"];
        let value_count = if op == AtomicOp::Cas { 2 } else { 1 };
        for (k, &(o, oloc)) in rest.iter().enumerate() {
            if k < value_count {
                let role = if op == AtomicOp::Cas && k == 0 {
                    "the comparand"
                } else {
                    "the value"
                };
                let v = self.materialize(o, Some(DType::Scalar(elem)), oloc)?;
                let d = self.dtype(v);
                if d != DType::Scalar(elem) {
                    self.error(
                        oloc,
                        format!(
                            "{role} of `{name}` is {d} but the pointers are to {elem}: cast it \
                             with `.to::<{elem}>()`"
                        ),
                    );
                    return None;
                }
                operands.push(v);
                roles.push(role);
            } else {
                operands.push(self.mask(o, oloc, name)?);
                roles.push("the mask");
            }
        }
        let mask = op != AtomicOp::Cas && rest.len() == 2;
        let (values, shape) = self.broadcast_all(&operands, &roles, loc)?;
        self.emit(
            OpKind::Atomic {
                op,
                mask,
                sem,
                scope,
            },
            values,
            TileType::new(shape, DType::Scalar(elem)),
            loc,
        )
    }

    /// The memory order and scope written as string literals (defaults `acq_rel`, `gpu`).
    fn atomic_options(&mut self, name: &str, options: &[Expr]) -> Option<(MemSem, MemScope)> {
        let (mut sem, mut scope) = (None, None);
        for o in options {
            let ExprKind::Str(s) = &o.kind else {
                continue;
            };
            let as_sem = MemSem::ALL.iter().find(|(n, _)| n == s).map(|p| p.1);
            let as_scope = MemScope::ALL.iter().find(|(n, _)| n == s).map(|p| p.1);
            let twice = match (as_sem, as_scope) {
                (Some(x), _) => sem.replace(x).is_some(),
                (_, Some(x)) => scope.replace(x).is_some(),
                _ => {
                    self.error(
                        o.loc,
                        format!(
                            "`\"{s}\"` is neither a memory order nor a scope of `{name}`: the \
                             order is \"relaxed\", \"acquire\", \"release\" or \"acq_rel\" \
                             (default), the scope \"cta\", \"gpu\" (default) or \"sys\""
                        ),
                    );
                    return None;
                }
            };
            if twice {
                let what = if as_sem.is_some() {
                    "memory order"
                } else {
                    "scope"
                };
                self.error(o.loc, format!("`{name}` is given a second {what} here"));
                return None;
            }
        }
        Some((
            sem.unwrap_or(MemSem::AcqRel),
            scope.unwrap_or(MemScope::Gpu),
        ))
    }
}

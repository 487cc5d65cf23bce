//! Scans along an axis: `cumsum`, `cumprod`.

use super::Checker;
use crate::ast::{Expr, ExprKind};
use crate::diag::Loc;
use crate::ir::{OpKind, ScanKind, ValueId};
use crate::ops::Op;

impl Checker<'_> {
    /// `cumsum(x, axis)`, `cumsum(x, axis, reverse)` (and `cumprod`): `reverse` is `true` or
    /// `false`, written as a literal.
    pub(super) fn scan(&mut self, kind: ScanKind, args: &[Expr], loc: Loc) -> Option<ValueId> {
        let name = crate::ops::info_of(Op::Scan(kind)).name;
        let x = self.tile(&args[0], name);
        let reverse = match args.get(2).map(|e| (&e.kind, e.loc)) {
            None => Some(false),
            Some((ExprKind::Bool(b), _)) => Some(*b),
            Some((ExprKind::Invalid, _)) => None,
            Some((_, at)) => {
                self.error(
                    at,
                    format!(
                        "the third argument of `{name}` says whether the scan runs from the end \
                         of the axis and must be `true` or `false` written out: \
                         `x.{name}(axis, true)`"
                    ),
                );
                None
            }
        };
        let (x, ty, axis) = self.tile_and_axis(x?, &args[1], name, "scans", loc)?;
        let reverse = reverse?;
        if !ty.dtype.is_numeric() || ty.dtype.is_bool() {
            self.error(
                loc,
                format!("`{name}` needs a tile of numbers, found {ty}: cast it first, e.g. `x.to::<i32>()`"),
            );
            return None;
        }
        self.emit(
            OpKind::Scan {
                kind,
                axis,
                reverse,
                plan: None,
            },
            vec![x],
            ty,
            loc,
        )
    }
}

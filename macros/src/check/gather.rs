//! `gather`: elements of a tile picked along one axis by an index tile.

use super::Checker;
use crate::ast::Expr;
use crate::diag::Loc;
use crate::ir::{OpKind, ValueId};
use crate::types::{shape_str, TileType};

impl Checker<'_> {
    pub(super) fn gather(&mut self, args: &[Expr], loc: Loc) -> Option<ValueId> {
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

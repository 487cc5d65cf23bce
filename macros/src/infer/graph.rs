//! A flat view of a kernel's op tree for the analyses: ops numbered in program order (parents
//! before the ops of their regions), where each value is defined, where it is used, and how deep
//! in loops each op sits.

use crate::ir::{Kernel, Op, OpKind, Region, ValueId};

/// Index of an op in [`Graph::ops`]: its position in a pre-order walk of the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId(pub usize);

/// One op, without its nested ops (those have their own [`OpNode`]s).
#[derive(Clone, Debug)]
pub struct OpNode {
    pub kind: OpKind,
    pub operands: Vec<ValueId>,
    pub results: Vec<ValueId>,
    pub loc: crate::diag::Loc,
    /// Arguments and yields of each nested region.
    pub regions: Vec<(Vec<ValueId>, Vec<ValueId>)>,
    /// Number of enclosing `for` and `while` loops.
    pub loop_depth: u32,
    /// One past the id of the last op nested in this op's regions (`id + 1` without regions).
    pub subtree_end: usize,
}

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    /// Kernel parameter number `n`.
    Param(usize),
    /// Result `pos` of an op.
    Op(OpId, usize),
    /// Argument `arg` of region `region` of an op (a loop's induction variable or carried value).
    RegionArg(OpId, usize, usize),
    /// Not defined anywhere (only for values the front end made but never used in code).
    Nowhere,
}

/// Where a value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// Operand `pos` of an op.
    Operand(OpId, usize),
    /// Yield `pos` of region `region` of an op.
    Yield(OpId, usize, usize),
}

/// One loop-carried value of a `for` or `while` op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Carried {
    /// The position of its initial value among the op's operands.
    pub init_pos: usize,
    pub init: ValueId,
    /// The region arguments holding it during an iteration (the body's; a `while` also has the
    /// condition's).
    pub args: Vec<ValueId>,
    /// The region whose yield `yield_pos` is its next value.
    pub yield_region: usize,
    pub yield_pos: usize,
    pub yielded: ValueId,
    /// The op's result holding its value after the loop.
    pub result: ValueId,
}

impl OpNode {
    /// The loop-carried values of a `for` or `while` op, in order (none for other ops).
    pub fn carried(&self) -> Vec<Carried> {
        let mut out = Vec::new();
        for (k, &result) in self.results.iter().enumerate() {
            let c = match (&self.kind, self.regions.as_slice()) {
                (OpKind::For, [(args, yields)]) => Carried {
                    init_pos: 3 + k,
                    init: self.operands[3 + k],
                    args: vec![args[k + 1]],
                    yield_region: 0,
                    yield_pos: k,
                    yielded: yields[k],
                    result,
                },
                (OpKind::While, [(cond_args, _), (body_args, yields)]) => Carried {
                    init_pos: k,
                    init: self.operands[k],
                    args: vec![cond_args[k], body_args[k]],
                    yield_region: 1,
                    yield_pos: k,
                    yielded: yields[k],
                    result,
                },
                _ => return Vec::new(),
            };
            out.push(c);
        }
        out
    }
}

/// The flat view (see the module docs).
#[derive(Clone, Debug)]
pub struct Graph {
    pub ops: Vec<OpNode>,
    pub def: Vec<Def>,
    pub uses: Vec<Vec<Use>>,
}

impl Graph {
    pub fn new(kernel: &Kernel) -> Graph {
        let n = kernel.values.len();
        let mut g = Graph {
            ops: Vec::new(),
            def: vec![Def::Nowhere; n],
            uses: vec![Vec::new(); n],
        };
        for (i, p) in kernel.params.iter().enumerate() {
            if let Some(d) = g.def.get_mut(p.value.0 as usize) {
                *d = Def::Param(i);
            }
        }
        g.add_region(&kernel.body, 0);
        g
    }

    fn add_region(&mut self, region: &Region, depth: u32) {
        for op in &region.ops {
            let id = OpId(self.ops.len());
            self.ops.push(OpNode {
                kind: op.kind.clone(),
                operands: op.operands.clone(),
                results: op.results.clone(),
                loc: op.loc,
                regions: op
                    .regions
                    .iter()
                    .map(|r| (r.args.clone(), r.yields.clone()))
                    .collect(),
                loop_depth: depth,
                subtree_end: id.0 + 1,
            });
            for (pos, &v) in op.operands.iter().enumerate() {
                self.uses[v.0 as usize].push(Use::Operand(id, pos));
            }
            for (pos, &v) in op.results.iter().enumerate() {
                self.def[v.0 as usize] = Def::Op(id, pos);
            }
            let inner = depth + u32::from(op.kind.is_loop());
            for (ri, r) in op.regions.iter().enumerate() {
                for (ai, &a) in r.args.iter().enumerate() {
                    self.def[a.0 as usize] = Def::RegionArg(id, ri, ai);
                }
                self.add_region(r, inner);
                for (pos, &y) in r.yields.iter().enumerate() {
                    self.uses[y.0 as usize].push(Use::Yield(id, ri, pos));
                }
            }
            self.ops[id.0].subtree_end = self.ops.len();
        }
    }

    pub fn op(&self, id: OpId) -> &OpNode {
        &self.ops[id.0]
    }

    /// The op defining `v`, if an op does.
    pub fn def_op(&self, v: ValueId) -> Option<(OpId, usize)> {
        match self.def[v.0 as usize] {
            Def::Op(id, pos) => Some((id, pos)),
            _ => None,
        }
    }
}

/// Rebuilds a kernel's op tree, op by op in the same pre-order numbering as [`Graph`]: `edit`
/// gets each op's id and the op (with its regions already rebuilt) and returns the ops that
/// replace it (e.g. conversions, the op, rematerialised copies).
pub fn rebuild(kernel: &mut Kernel, edit: &mut impl FnMut(OpId, Op) -> Vec<Op>) {
    let mut counter = 0usize;
    let body = std::mem::take(&mut kernel.body);
    kernel.body = rebuild_region(body, &mut counter, edit);
}

fn rebuild_region(
    region: Region,
    counter: &mut usize,
    edit: &mut impl FnMut(OpId, Op) -> Vec<Op>,
) -> Region {
    let mut ops = Vec::with_capacity(region.ops.len());
    for mut op in region.ops {
        let id = OpId(*counter);
        *counter += 1;
        let regions = std::mem::take(&mut op.regions);
        op.regions = regions
            .into_iter()
            .map(|r| rebuild_region(r, counter, edit))
            .collect();
        ops.extend(edit(id, op));
    }
    Region {
        args: region.args,
        ops,
        yields: region.yields,
    }
}

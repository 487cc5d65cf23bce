//! Specialisations: the attribute's lists matched with the signature's parameters.

use super::attr::*;
use super::signature::*;
use crate::diag::{did_you_mean, Diagnostics};
use crate::types::Scalar;

/// One specialisation: an element type for every type parameter, a value for every const
/// parameter (`None` where its list had an error), its warps per program and its pipelining
/// depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Specialisation {
    pub types: Vec<(String, Option<Scalar>)>,
    pub consts: Vec<(String, Option<i128>)>,
    /// `None` when the attribute's `num_warps` was invalid.
    pub num_warps: Option<u32>,
    /// Whether the attribute lists several `num_warps` (then they tell specialisations apart).
    pub num_warps_varies: bool,
    /// `num_stages` (`None` when the attribute does not give it or its value was invalid).
    pub num_stages: Option<u32>,
    /// Whether the attribute lists several `num_stages`.
    pub num_stages_varies: bool,
}

impl Specialisation {
    /// `T = f16, BLOCK = 1024, num_warps = 8`, for messages.
    pub fn describe(&self) -> String {
        let types = self
            .types
            .iter()
            .filter_map(|(n, t)| t.map(|t| format!("{n} = {}", t.name())));
        let consts = self
            .consts
            .iter()
            .filter_map(|(n, v)| v.map(|v| format!("{n} = {v}")));
        let warps = self
            .num_warps
            .filter(|_| self.num_warps_varies)
            .map(|w| format!("num_warps = {w}"));
        let stages = self
            .num_stages
            .filter(|_| self.num_stages_varies)
            .map(|s| format!("num_stages = {s}"));
        types
            .chain(consts)
            .chain(warps)
            .chain(stages)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The values of one specialisation axis: a type parameter's element types or a const
/// parameter's integers (`None`: unknown after an error).
type Axis<V> = (String, Vec<Option<V>>);

/// Matches the attribute's lists with the signature's type and const parameters and returns
/// every specialisation (the Cartesian product of the lists: type parameters, then const
/// parameters, then `num_warps`, then `num_stages`; the first varying slowest).
pub fn specialisations(
    attr: &KernelAttr,
    sig: &Signature,
    diags: &mut Diagnostics,
) -> Vec<Specialisation> {
    for entry in &attr.consts {
        let is_type = sig.types.iter().any(|t| t.name == entry.name);
        let is_const = sig.consts.iter().any(|c| c.name == entry.name);
        let first_value = entry.values.first().map(|(v, loc)| (*v, *loc));
        match first_value {
            Some((AttrValue::Int(_), loc)) if is_type => diags.error(
                loc,
                format!(
                    "`{0}` is a type parameter: list element types, e.g. `{0} = [f16, f32]`",
                    entry.name
                ),
            ),
            Some((AttrValue::Type(_), loc)) if is_const => diags.error(
                loc,
                format!(
                    "the values of `{0}` must be integer literals, e.g. `{0} = [128, 256]`",
                    entry.name
                ),
            ),
            _ => {}
        }
        if is_type || is_const {
            continue;
        }
        if did_you_mean(&entry.name, ["num_warps"]).is_some() {
            diags.error(
                entry.loc,
                format!(
                    "unknown attribute `{}` (did you mean `num_warps`?)",
                    entry.name
                ),
            );
            continue;
        }
        let names = sig
            .consts
            .iter()
            .map(|c| c.name.as_str())
            .chain(sig.types.iter().map(|t| t.name.as_str()));
        let hint = match did_you_mean(&entry.name, names) {
            Some(n) => format!(" (did you mean `{n}`?)"),
            None => format!(
                "; declare it in the generics: `fn {}<const {}: usize>(..)`",
                sig.name, entry.name
            ),
        };
        diags.error(
            entry.loc,
            format!(
                "`{}` is not a const parameter of `{}`{hint}",
                entry.name, sig.name
            ),
        );
    }
    let types: Vec<Axis<Scalar>> = sig
        .types
        .iter()
        .map(|param| (param.name.clone(), type_axis(attr, param, diags)))
        .collect();
    let consts: Vec<Axis<i128>> = sig
        .consts
        .iter()
        .map(|param| (param.name.clone(), const_axis(attr, param, diags)))
        .collect();
    let warps: Vec<Option<u32>> = match &attr.num_warps {
        Some(list) => list.iter().copied().map(Some).collect(),
        None => vec![None],
    };
    let stages: Vec<Option<u32>> = match &attr.num_stages {
        Some((list, _)) => list.iter().copied().map(Some).collect(),
        None => vec![None],
    };
    let count = types
        .iter()
        .map(|(_, vs)| vs.len())
        .chain(consts.iter().map(|(_, vs)| vs.len()))
        .fold(warps.len() * stages.len(), usize::saturating_mul);
    let unknown = Specialisation {
        types: types.iter().map(|(n, _)| (n.clone(), None)).collect(),
        consts: consts.iter().map(|(n, _)| (n.clone(), None)).collect(),
        num_warps: None,
        num_warps_varies: false,
        num_stages: None,
        num_stages_varies: false,
    };
    if count > MAX_SPECIALISATIONS {
        if let Some(first) = attr.consts.first() {
            diags.error(
                first.loc,
                format!(
                    "these value lists make {count} specialisations of the kernel; at most \
                     {MAX_SPECIALISATIONS} are compiled: list fewer values"
                ),
            );
        }
        return vec![unknown];
    }
    let mut specs = vec![Specialisation {
        types: Vec::new(),
        consts: Vec::new(),
        ..unknown
    }];
    for (name, values) in &types {
        specs = product(specs, values, |s, v| s.types.push((name.clone(), *v)));
    }
    for (name, values) in &consts {
        specs = product(specs, values, |s, v| s.consts.push((name.clone(), *v)));
    }
    let num_warps_varies = warps.len() > 1;
    specs = product(specs, &warps, |s, w| {
        s.num_warps = *w;
        s.num_warps_varies = num_warps_varies;
    });
    let num_stages_varies = stages.len() > 1;
    specs = product(specs, &stages, |s, v| {
        s.num_stages = *v;
        s.num_stages_varies = num_stages_varies;
    });
    specs
}

/// Every specialisation of `specs` extended by every value of `values` (`add` records one).
fn product<V>(
    specs: Vec<Specialisation>,
    values: &[V],
    add: impl Fn(&mut Specialisation, &V),
) -> Vec<Specialisation> {
    let add = &add;
    specs
        .into_iter()
        .flat_map(|s| {
            values.iter().map(move |v| {
                let mut s = s.clone();
                add(&mut s, v);
                s
            })
        })
        .collect()
}

/// The element types the attribute lists for a type parameter (`[None]` after an error).
fn type_axis(attr: &KernelAttr, param: &TypeParam, diags: &mut Diagnostics) -> Vec<Option<Scalar>> {
    let Some(entry) = attr.consts.iter().find(|e| e.name == param.name) else {
        diags.error(
            param.loc,
            format!(
                "type parameter `{0}` has no element types: list the types to compile in the \
                 attribute, e.g. #[tile_kernel({0} = [f16, f32])]",
                param.name
            ),
        );
        return vec![None];
    };
    let mut values = Vec::new();
    for &(v, loc) in &entry.values {
        let AttrValue::Type(t) = v else {
            return vec![None];
        };
        if values.contains(&Some(t)) {
            diags.error(
                loc,
                format!("{} = {} is listed twice", param.name, t.name()),
            );
        } else {
            values.push(Some(t));
        }
    }
    if !entry.valid || values.is_empty() {
        return vec![None];
    }
    values
}

/// The integers the attribute lists for a const parameter (`[None]` after an error).
fn const_axis(attr: &KernelAttr, param: &ConstParam, diags: &mut Diagnostics) -> Vec<Option<i128>> {
    let Some((lo, hi)) = param.range else {
        return vec![None];
    };
    let Some(entry) = attr.consts.iter().find(|e| e.name == param.name) else {
        diags.error(
            param.loc,
            format!(
                "const parameter `{0}` has no values: list the sizes to compile in the \
                 attribute, e.g. #[tile_kernel({0} = [128, 256])]",
                param.name
            ),
        );
        return vec![None];
    };
    let mut values = Vec::new();
    let mut valid = entry.valid;
    for &(v, loc) in &entry.values {
        let AttrValue::Int(v) = v else {
            return vec![None];
        };
        if v < lo || v > hi {
            valid = false;
            diags.error(
                loc,
                format!(
                    "{} = {v} does not fit the parameter's type `{}`",
                    param.name, param.ty
                ),
            );
        } else if values.contains(&Some(v)) {
            diags.error(loc, format!("{} = {v} is listed twice", param.name));
        } else {
            values.push(Some(v));
        }
    }
    if !valid || values.is_empty() {
        return vec![None];
    }
    values
}

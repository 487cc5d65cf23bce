//! `autotune(key = [m, n, k], configs = [(BM = 64, num_warps = 4), …])` in the kernel's
//! attribute: the run-time choice among the kernel's specialisations (the generated
//! `launch_tuned`, timed by `tessera::launch::autotune`).
//!
//! - `key` names runtime scalar parameters (`i32`, `u32`, `i64`, `u64`, `f32`): one tuning per
//!   value of the key (`key = []`: one per device).
//! - `configs` (optional) lists the specialisations compiled and tuned, each a tuple of
//!   `NAME = value` for const parameters, `num_warps` and `num_stages`; a specialisation is kept when some
//!   config matches all the values it names (an axis a config does not name is free). Without
//!   `configs` every specialisation of the attribute's lists is a candidate.
//!
//! Every assignment of element types must keep at least two candidates: one is nothing to tune.

use super::attr::{int_value, AttrValue, KernelAttr};
use super::signature::Signature;
use super::specialisation::Specialisation;
use crate::diag::{did_you_mean, Diagnostics, Loc, LocIds};
use crate::types::{DType, Scalar};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::Expr;

/// `autotune(…)` as written.
#[derive(Debug)]
pub struct AutotuneAttr {
    /// The `autotune` name.
    pub loc: Loc,
    /// The key's parameter names; `None` when `key` was missing or invalid (reported).
    pub key: Option<Vec<(String, Loc)>>,
    /// The `configs` restriction, if given.
    pub configs: Option<Vec<AutotuneConfig>>,
}

/// One entry of `configs`: `(BM = 64, num_warps = 4)`.
#[derive(Debug)]
pub struct AutotuneConfig {
    pub values: Vec<(String, i128, Loc)>,
    /// False if the config had an error (reported where it is written).
    pub valid: bool,
}

/// What the generated code needs of a checked `autotune(…)`: the key's parameter names, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Autotune {
    pub key: Vec<String>,
}

/// Reads the arguments of `autotune(…)` (`list` is the whole `autotune(…)` entry).
pub fn parse_autotune(
    list: &syn::MetaList,
    ids: &mut LocIds,
    diags: &mut Diagnostics,
) -> AutotuneAttr {
    let mut out = AutotuneAttr {
        loc: ids.of(&list.path),
        key: None,
        configs: None,
    };
    let example =
        "e.g. `autotune(key = [m, n, k])` or `autotune(key = [n], configs = [(BLOCK = 256, \
                   num_warps = 4), (BLOCK = 1024, num_warps = 8)])`";
    let parser = Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated;
    let entries = match list.parse_args_with(parser) {
        Ok(entries) => entries,
        Err(e) => {
            diags.error(
                ids.at(e.span()),
                format!("{e}: `autotune` takes `key = [...]` and optionally `configs = [...]`, {example}"),
            );
            return out;
        }
    };
    let mut seen_key = false;
    for entry in entries {
        let loc = ids.of(&entry.path);
        let name = entry
            .path
            .get_ident()
            .map(|i| i.unraw().to_string())
            .unwrap_or_default();
        match name.as_str() {
            "key" if seen_key => diags.error(loc, "`key` is given twice in `autotune`"),
            "key" => {
                seen_key = true;
                out.key = key_names(&entry.value, ids, diags);
            }
            "configs" if out.configs.is_some() => {
                diags.error(loc, "`configs` is given twice in `autotune`")
            }
            "configs" => out.configs = Some(configs(&entry.value, ids, diags)),
            _ => {
                let hint = match did_you_mean(&name, ["key", "configs"]) {
                    Some(n) => format!(" (did you mean `{n}`?)"),
                    None => String::new(),
                };
                diags.error(
                    loc,
                    format!(
                        "unknown `autotune` argument `{name}`{hint}: it takes `key` and `configs`, \
                         {example}"
                    ),
                );
            }
        }
    }
    if !seen_key {
        diags.error(
            out.loc,
            format!(
                "`autotune` needs `key = [...]`: the parameters whose values the choice depends \
                 on (`key = []` tunes once per device), {example}"
            ),
        );
    }
    out
}

/// `[m, n, k]`: parameter names, each once.
fn key_names(e: &Expr, ids: &mut LocIds, diags: &mut Diagnostics) -> Option<Vec<(String, Loc)>> {
    let Expr::Array(array) = e else {
        diags.error(
            ids.of(e),
            "`key` takes a list of parameter names, e.g. `key = [m, n, k]`",
        );
        return None;
    };
    let mut names: Vec<(String, Loc)> = Vec::new();
    let mut valid = true;
    for element in &array.elems {
        let loc = ids.of(element);
        match element {
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let name = p.path.get_ident()?.unraw().to_string();
                if names.iter().any(|(n, _)| *n == name) {
                    diags.error(loc, format!("`{name}` is listed twice in the key"));
                } else {
                    names.push((name, loc));
                }
            }
            _ => {
                valid = false;
                diags.error(loc, "the key lists parameter names, e.g. `key = [m, n, k]`");
            }
        }
    }
    valid.then_some(names)
}

/// `[(BM = 64, num_warps = 4), …]`.
fn configs(e: &Expr, ids: &mut LocIds, diags: &mut Diagnostics) -> Vec<AutotuneConfig> {
    let shape = "`configs` takes a list of tuples of values, e.g. \
                 `configs = [(BM = 64, num_warps = 4), (BM = 128, num_warps = 8)]`";
    let Expr::Array(array) = e else {
        diags.error(ids.of(e), shape);
        return Vec::new();
    };
    if array.elems.is_empty() {
        diags.error(ids.of(e), format!("`configs` is empty: {shape}"));
    }
    let mut out = Vec::new();
    for element in &array.elems {
        let loc = ids.of(element);
        let assigns: Vec<&Expr> = match element {
            Expr::Tuple(t) => t.elems.iter().collect(),
            Expr::Paren(p) => vec![&*p.expr],
            _ => {
                diags.error(loc, shape);
                continue;
            }
        };
        let mut values: Vec<(String, i128, Loc)> = Vec::new();
        let mut valid = !assigns.is_empty();
        if assigns.is_empty() {
            diags.error(
                loc,
                "an empty config: give values by name, e.g. `(BM = 64, num_warps = 4)`",
            );
        }
        for assign in assigns {
            let vloc = ids.of(assign);
            let parsed = match assign {
                Expr::Assign(a) => match (&*a.left, int_value(&a.right)) {
                    (Expr::Path(p), Some(v)) if p.path.get_ident().is_some() => {
                        p.path.get_ident().map(|i| (i.unraw().to_string(), v))
                    }
                    _ => None,
                },
                _ => None,
            };
            match parsed {
                Some((name, _)) if values.iter().any(|(n, ..)| *n == name) => {
                    valid = false;
                    diags.error(vloc, format!("`{name}` is given twice in this config"))
                }
                Some((name, v)) => values.push((name, v, vloc)),
                None => {
                    valid = false;
                    diags.error(
                        vloc,
                        "a config gives integer values by name, e.g. `(BM = 64, num_warps = 4)`",
                    )
                }
            }
        }
        out.push(AutotuneConfig { values, valid });
    }
    out
}

/// Scalar types a key parameter may have (those the launcher passes).
const KEY_TYPES: [Scalar; 5] = [
    Scalar::I32,
    Scalar::U32,
    Scalar::I64,
    Scalar::U64,
    Scalar::F32,
];

/// Checks `autotune(…)` against the signature and the enumerated specialisations, and returns
/// the specialisations `configs` keeps (all of them without `configs`) and what the generated
/// code needs (`None` without `autotune` or after an error).
pub fn tuned_specialisations(
    attr: &KernelAttr,
    sig: &Signature,
    specs: Vec<Specialisation>,
    diags: &mut Diagnostics,
) -> (Vec<Specialisation>, Option<Autotune>) {
    let Some(tune) = &attr.autotune else {
        return (specs, None);
    };
    let mut valid = tune.key.is_some();
    for (name, loc) in tune.key.iter().flatten() {
        let Some(param) = sig.params.iter().find(|p| p.name == *name) else {
            let hint = match did_you_mean(name, sig.params.iter().map(|p| p.name.as_str())) {
                Some(n) => format!(" (did you mean `{n}`?)"),
                None => String::new(),
            };
            diags.error(
                *loc,
                format!(
                    "the autotune key names `{name}`, which is not a parameter of `{}`{hint}",
                    sig.name
                ),
            );
            valid = false;
            continue;
        };
        if !matches!(param.dtype, Some(DType::Scalar(s)) if KEY_TYPES.contains(&s)) {
            let what = match param.dtype {
                Some(DType::Ptr(s)) => format!("a pointer (`Ptr<{}>`)", s.name()),
                Some(DType::Scalar(s)) => format!("of type `{}`", s.name()),
                None => "not of a fixed scalar type".to_string(),
            };
            diags.error(
                *loc,
                format!(
                    "the autotune key must name scalar parameters of type i32, u32, i64, u64 or \
                     f32 (their values select the tuning), but `{name}` is {what}"
                ),
            );
            valid = false;
        }
    }
    let specs = match &tune.configs {
        Some(configs) => {
            let (kept, ok) = restrict(attr, sig, configs, specs, diags);
            valid &= ok;
            kept
        }
        None => specs,
    };
    // Candidates per assignment of element types (all specialisations share one when the
    // kernel has no type parameters).
    let per_types = specs.first().map_or(0, |first| {
        specs.iter().filter(|s| s.types == first.types).count()
    });
    if valid && per_types < 2 {
        diags.error(
            tune.loc,
            format!(
                "nothing to autotune: {} {per_types} specialisation{}; list several values of a \
                 const parameter or of `num_warps`, e.g. `BLOCK = [256, 1024]`, `num_warps = [4, 8]`",
                if tune.configs.is_some() {
                    "`configs` keeps"
                } else {
                    "the attribute's lists make"
                },
                if per_types == 1 { "" } else { "s" }
            ),
        );
        valid = false;
    }
    let key = tune
        .key
        .as_ref()
        .map(|k| k.iter().map(|(n, _)| n.clone()).collect());
    (specs, key.filter(|_| valid).map(|key| Autotune { key }))
}

/// The specialisations some config matches; checks each config's names and values against the
/// attribute's lists. Returns whether every config was valid.
fn restrict(
    attr: &KernelAttr,
    sig: &Signature,
    configs: &[AutotuneConfig],
    specs: Vec<Specialisation>,
    diags: &mut Diagnostics,
) -> (Vec<Specialisation>, bool) {
    // An empty `configs` was reported where it is written.
    let mut valid = !configs.is_empty();
    for config in configs {
        for (name, value, loc) in &config.values {
            let listed: Option<Vec<i128>> = if name == "num_warps" {
                attr.num_warps
                    .as_ref()
                    .map(|w| w.iter().map(|&w| i128::from(w)).collect())
            } else if name == "num_stages" {
                // Without `num_stages` in the attribute, every specialisation has one stage.
                Some(match &attr.num_stages {
                    Some((list, _)) => list.iter().map(|&s| i128::from(s)).collect(),
                    None => vec![1],
                })
            } else if sig.consts.iter().any(|c| c.name == *name) {
                attr.consts.iter().find(|c| c.name == *name).map(|c| {
                    c.values
                        .iter()
                        .filter_map(|(v, _)| match v {
                            AttrValue::Int(i) => Some(*i),
                            AttrValue::Type(_) => None,
                        })
                        .collect()
                })
            } else {
                let names = sig
                    .consts
                    .iter()
                    .map(|c| c.name.as_str())
                    .chain(["num_warps", "num_stages"]);
                let hint = match did_you_mean(name, names) {
                    Some(n) => format!(" (did you mean `{n}`?)"),
                    None => String::new(),
                };
                diags.error(
                    *loc,
                    format!(
                        "`{name}` in an autotune config is neither a const parameter of `{}` nor \
                         `num_warps` or `num_stages`{hint}",
                        sig.name
                    ),
                );
                valid = false;
                continue;
            };
            // A list with an error was reported where it is written.
            let Some(listed) = listed else { continue };
            if !listed.contains(value) {
                let values: Vec<String> = listed.iter().map(i128::to_string).collect();
                diags.error(
                    *loc,
                    format!(
                        "{name} = {value} is not compiled: the attribute lists {name} = [{}]",
                        values.join(", ")
                    ),
                );
                valid = false;
            }
        }
        valid &= config.valid;
    }
    let matches = |spec: &Specialisation, config: &AutotuneConfig| {
        config.values.iter().all(|(name, value, _)| {
            if name == "num_warps" {
                spec.num_warps.map(i128::from) == Some(*value)
            } else if name == "num_stages" {
                i128::from(spec.num_stages.unwrap_or(1)) == *value
            } else {
                spec.consts
                    .iter()
                    .find(|(n, _)| n == name)
                    .is_none_or(|(_, v)| v.is_none_or(|v| v == *value))
            }
        })
    };
    if !valid {
        return (specs, false);
    }
    let kept = specs
        .into_iter()
        .filter(|s| configs.iter().any(|c| matches(s, c)))
        .collect();
    (kept, true)
}

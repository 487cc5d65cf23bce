//! `autotune(key = [m, n, k], configs = [(BM = 64, num_warps = 4), …])` in the kernel's
//! attribute: the run-time choice among the kernel's specialisations (the generated
//! `launch_tuned`, timed by `tessera::launch::autotune`).
//!
//! - `key` names runtime scalar parameters (`i32`, `u32`, `i64`, `u64`, `f32`) and the sizes and
//!   strides of `Tensor` parameters (`x.size(0)`, `x.stride(1)`): one tuning per value of the
//!   key (`key = []`: one per device).
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
use crate::expand::tensor_params::scalar_name;
use crate::types::{DType, Scalar};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::Expr;

/// `autotune(…)` as written.
#[derive(Debug)]
pub struct AutotuneAttr {
    /// The `autotune` name.
    pub loc: Loc,
    /// The key's entries; `None` when `key` was missing or invalid (reported).
    pub key: Option<Vec<KeyItem>>,
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

/// One entry of `key` as written.
#[derive(Debug)]
pub struct KeyItem {
    pub entry: KeyEntry,
    pub loc: Loc,
    /// For `x.size(d)` / `x.stride(d)`: the tensor `x` and the dimension `d`.
    pub tensor: Option<(String, usize)>,
}

/// One entry of the key: how the tuner names it and the parameter holding its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyEntry {
    /// As written: `m`, `x.size(0)` (the tuner's and the cache file's name).
    pub name: String,
    /// The (desugared) parameter holding the value: `m`, `x__size0`.
    pub param: String,
}

impl KeyEntry {
    /// A scalar parameter: named as itself.
    pub fn scalar(name: &str) -> KeyEntry {
        KeyEntry {
            name: name.to_string(),
            param: name.to_string(),
        }
    }
}

/// What the generated code needs of a checked `autotune(…)`: the key's entries, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Autotune {
    pub key: Vec<KeyEntry>,
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

/// `[m, n, k]` or `[x.size(0), n]`: parameter names and tensor sizes or strides, each once.
fn key_names(e: &Expr, ids: &mut LocIds, diags: &mut Diagnostics) -> Option<Vec<KeyItem>> {
    let usage = "the key lists parameter names and tensor parameters' sizes or strides, e.g. \
                 `key = [m, n, k]` or `key = [x.size(0), x.size(1)]`";
    let Expr::Array(array) = e else {
        diags.error(ids.of(e), format!("`key` takes a list: {usage}"));
        return None;
    };
    let mut items: Vec<KeyItem> = Vec::new();
    let mut valid = true;
    for element in &array.elems {
        let loc = ids.of(element);
        let item = match element {
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                p.path.get_ident().map(|name| KeyItem {
                    entry: KeyEntry::scalar(&name.unraw().to_string()),
                    loc,
                    tensor: None,
                })
            }
            Expr::MethodCall(call) => tensor_key(call, loc, diags),
            _ => {
                diags.error(loc, usage);
                None
            }
        };
        match item {
            Some(item) if items.iter().any(|i| i.entry == item.entry) => {
                diags.error(
                    loc,
                    format!("`{}` is listed twice in the key", item.entry.name),
                );
            }
            Some(item) => items.push(item),
            None => valid = false,
        }
    }
    valid.then_some(items)
}

/// `x.size(d)` / `x.stride(d)` in the key (whether `x` is a tensor of rank above `d` is checked
/// against the signature); `None` after reporting anything else.
fn tensor_key(call: &syn::ExprMethodCall, loc: Loc, diags: &mut Diagnostics) -> Option<KeyItem> {
    let Some(part) = TensorPart::of(call) else {
        diags.error(
            loc,
            "the key takes a tensor parameter's sizes and strides as `x.size(d)` and \
             `x.stride(d)`, e.g. `key = [x.size(0), x.size(1)]`",
        );
        return None;
    };
    let Some(dim) = part.dim else {
        let TensorPart { tensor, method, .. } = part;
        diags.error(
            loc,
            format!("`{tensor}.{method}(d)` takes the dimension as an integer literal"),
        );
        return None;
    };
    Some(KeyItem {
        entry: KeyEntry {
            name: part.written(dim),
            param: part.param(dim),
        },
        loc,
        tensor: Some((part.tensor, dim)),
    })
}

/// `x.size(d)` or `x.stride(d)` as written in the attribute (the autotune key, `requires`):
/// the tensor's name, the method, and `d` when it is an integer literal.
pub struct TensorPart {
    pub tensor: String,
    pub method: String,
    pub dim: Option<usize>,
}

/// The dimension of `x.size(d)` / `x.stride(d)`: the one argument, an integer literal (also
/// inside the invisible group a `macro_rules!` fragment such as `$d:literal` arrives in).
pub fn literal_dim(args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>) -> Option<usize> {
    fn ungrouped(e: &Expr) -> &Expr {
        match e {
            Expr::Group(g) => ungrouped(&g.expr),
            other => other,
        }
    }
    match args.iter().map(ungrouped).collect::<Vec<_>>().as_slice() {
        [Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        })] => i.base10_parse::<usize>().ok(),
        _ => None,
    }
}

impl TensorPart {
    /// The call's parts; `None` unless it is `name.size(…)` or `name.stride(…)`.
    pub fn of(call: &syn::ExprMethodCall) -> Option<TensorPart> {
        let tensor = match &*call.receiver {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident()?.unraw().to_string(),
            _ => return None,
        };
        let method = call.method.to_string();
        if method != "size" && method != "stride" {
            return None;
        }
        let dim = literal_dim(&call.args);
        Some(TensorPart {
            tensor,
            method,
            dim,
        })
    }

    /// As the user wrote it: `x.size(0)`.
    pub fn written(&self, dim: usize) -> String {
        format!("{}.{}({dim})", self.tensor, self.method)
    }

    /// The desugared parameter holding it: `x__size0`.
    pub fn param(&self, dim: usize) -> String {
        scalar_name(&self.tensor, &self.method, dim)
    }
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
    for item in tune.key.iter().flatten() {
        if !key_param_exists(item, sig, diags) {
            valid = false;
            continue;
        }
        let (name, loc) = (&item.entry.param, &item.loc);
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
            if sig.tensor_rank(name) > 0 {
                diags.error(
                    *loc,
                    format!(
                        "`{name}` is a tensor: the key takes its sizes or strides, e.g. \
                         `{name}.size(0)`"
                    ),
                );
                valid = false;
                continue;
            }
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
        .map(|k| k.iter().map(|item| item.entry.clone()).collect());
    (specs, key.filter(|_| valid).map(|key| Autotune { key }))
}

/// Whether the key entry's tensor is a tensor parameter with that dimension (reported when not);
/// true for a scalar entry (checked by the caller).
fn key_param_exists(item: &KeyItem, sig: &Signature, diags: &mut Diagnostics) -> bool {
    let Some((tensor, dim)) = &item.tensor else {
        return true;
    };
    if sig.params.iter().any(|p| p.name == item.entry.param) {
        return true;
    }
    let rank = sig.tensor_rank(tensor);
    let message = if rank > 0 {
        format!("`{tensor}` is a tensor of rank {rank}: it has no dimension {dim}")
    } else if sig.params.iter().any(|p| p.name == *tensor) {
        format!(
            "`{}` in the key: `{tensor}` is not a `Tensor` parameter (only a tensor has sizes \
             and strides)",
            item.entry.name
        )
    } else {
        let hint = match did_you_mean(tensor, sig.params.iter().map(|p| p.name.as_str())) {
            Some(n) => format!(" (did you mean `{n}`?)"),
            None => String::new(),
        };
        format!(
            "the autotune key names `{tensor}`, which is not a parameter of `{}`{hint}",
            sig.name
        )
    };
    diags.error(item.loc, message);
    false
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

//! Layouts as JSON (host-side, `std` feature): the schemas of `test-support/oracle/README.md`.
//!
//! - A *layout spec* `{"family": F, "params": {...}}` names a hardware family with Triton's
//!   Gluon parameters; [`layout_from_spec`] builds it for a tensor shape with the constructors of
//!   [`crate::families`].
//! - A *bases* layout `{"bases": [[in_dim, [[c0, c1, ...], ...]], ...], "out_dims": [[name,
//!   size], ...]}` gives the matrix directly; [`layout_from_bases_json`] /
//!   [`layout_to_bases_json`] read and write it.
//! - [`layout_to_dim_bases_json`] writes the per-input-dimension bases of `layouts.json`
//!   (`{"register": [[...]], "lane": ..., "warp": ..., "block": ...}`).
//!
//! Every reader returns a [`SpecError`] naming the JSON path of the bad field; none panics.

mod de;
mod json;
mod layout_spec;
mod ser;

pub use json::{parse_json, Json, JsonError, MAX_JSON_DEPTH};
pub use layout_spec::{layout_from_spec, shape_from_json, BlockBases, LayoutSpec, FAMILIES};

use crate::{Label, LayoutError, LinearLayout};
use core::fmt;
use std::borrow::ToOwned;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

/// Why a JSON layout could not be read or built.
#[derive(Clone, Debug, PartialEq)]
pub enum SpecError {
    /// The text is not JSON.
    Json(JsonError),
    /// A field is missing or malformed; `path` is where (`params.order[2]`).
    Field {
        /// Where, e.g. `params.order[2]`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The fields were read, but the layout they describe is invalid.
    Layout {
        /// Where.
        path: String,
        /// Why the layout is invalid.
        error: LayoutError,
    },
}

impl SpecError {
    /// A field error at `path`.
    pub fn field(path: &str, message: impl Into<String>) -> Self {
        SpecError::Field {
            path: path.to_owned(),
            message: message.into(),
        }
    }

    /// A layout error found while building the layout at `path`.
    pub fn layout(path: &str, error: LayoutError) -> Self {
        SpecError::Layout {
            path: path.to_owned(),
            error,
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Json(e) => write!(f, "{e}"),
            SpecError::Field { path, message } => write!(f, "`{path}`: {message}"),
            SpecError::Layout { path, error } => write!(f, "`{path}`: {error}"),
        }
    }
}

impl std::error::Error for SpecError {}

impl From<JsonError> for SpecError {
    fn from(e: JsonError) -> Self {
        SpecError::Json(e)
    }
}

/// `path.key`, or `key` at the root.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// `path[i]`.
pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// The member `key` of the object `v` (at `path`), which must exist.
pub fn field<'a>(v: &'a Json, path: &str, key: &str) -> Result<&'a Json, SpecError> {
    match v {
        Json::Object(_) => v
            .get(key)
            .ok_or_else(|| SpecError::field(&join(path, key), "missing")),
        other => Err(SpecError::field(
            &join(path, key),
            format!("expected an object, found {}", other.kind()),
        )),
    }
}

/// `v` as an array.
pub fn array<'a>(v: &'a Json, path: &str) -> Result<&'a [Json], SpecError> {
    v.as_array()
        .ok_or_else(|| SpecError::field(path, format!("expected an array, found {}", v.kind())))
}

/// `v` as a string.
pub fn string<'a>(v: &'a Json, path: &str) -> Result<&'a str, SpecError> {
    v.as_str()
        .ok_or_else(|| SpecError::field(path, format!("expected a string, found {}", v.kind())))
}

/// `v` as a non-negative integer below 2³².
pub fn uint(v: &Json, path: &str) -> Result<u32, SpecError> {
    v.as_u32().ok_or_else(|| {
        SpecError::field(
            path,
            format!("expected a non-negative integer below 2^32, found {v}"),
        )
    })
}

/// `v` as a boolean.
pub fn boolean(v: &Json, path: &str) -> Result<bool, SpecError> {
    v.as_bool()
        .ok_or_else(|| SpecError::field(path, format!("expected true or false, found {v}")))
}

/// `v` as a list of non-negative integers.
pub fn uint_list(v: &Json, path: &str) -> Result<Vec<u32>, SpecError> {
    array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| uint(x, &index(path, i)))
        .collect()
}

/// A dimension label written as Triton spells it (`register`, `lane`, `dim0`, ...).
pub fn label(v: &Json, path: &str) -> Result<Label, SpecError> {
    let name = string(v, path)?;
    Label::parse(name).ok_or_else(|| {
        SpecError::field(
            path,
            format!(
                "unknown dimension \"{name}\" (expected register, lane, warp, block, offset or dimK)"
            ),
        )
    })
}

/// Reads `{"bases": [[in_dim, [[c0, c1, ...], ...]], ...], "out_dims": [[name, size], ...]}`
/// (the algebra schema of `test-support/oracle/README.md`). No injectivity or surjectivity is
/// required; basis coordinates must fit their output dimension.
pub fn layout_from_bases_json(v: &Json) -> Result<LinearLayout, SpecError> {
    let mut layout = LinearLayout::empty();
    let out_path = "out_dims";
    for (o, entry) in array(field(v, "", out_path)?, out_path)?.iter().enumerate() {
        let path = index(out_path, o);
        let pair = array(entry, &path)?;
        if pair.len() != 2 {
            return Err(SpecError::field(&path, "expected [name, size]"));
        }
        let name = label(&pair[0], &index(&path, 0))?;
        let size = uint(&pair[1], &index(&path, 1))?;
        layout = layout
            .with_out_dim(name, size)
            .map_err(|e| SpecError::layout(&path, e))?;
    }
    let bases_path = "bases";
    for (i, entry) in array(field(v, "", bases_path)?, bases_path)?
        .iter()
        .enumerate()
    {
        let path = index(bases_path, i);
        let pair = array(entry, &path)?;
        if pair.len() != 2 {
            return Err(SpecError::field(&path, "expected [in_dim, [basis, ...]]"));
        }
        let name = label(&pair[0], &index(&path, 0))?;
        layout = with_in_dim_json(layout, name, &path, &pair[1], &index(&path, 1))?;
    }
    Ok(layout)
}

/// Reads per-input-dimension bases `{"register": [[c0, ...], ...], "lane": ..., ...}` (the form of
/// `layouts.json`) over output dimensions `dim0, dim1, ...` of the sizes `shape`. Input
/// dimensions keep the object's order.
pub fn layout_from_dim_bases_json(v: &Json, shape: &[u32]) -> Result<LinearLayout, SpecError> {
    let mut layout = LinearLayout::empty();
    for (d, &size) in shape.iter().enumerate() {
        layout = layout
            .with_out_dim(Label::Dim(d as u8), size)
            .map_err(|e| SpecError::layout(&index("shape", d), e))?;
    }
    let members = v.as_object().ok_or_else(|| {
        SpecError::field("bases", format!("expected an object, found {}", v.kind()))
    })?;
    for (name, list) in members {
        let path = join("bases", name);
        let dim = Label::parse(name).ok_or_else(|| {
            SpecError::field(&path, format!("unknown input dimension \"{name}\""))
        })?;
        layout = with_in_dim_json(layout, dim, &path, list, &path)?;
    }
    Ok(layout)
}

/// `layout` with input dimension `name` added (its errors at `dim_path`) and its bases read from
/// the array `list` (at `list_path`).
fn with_in_dim_json(
    layout: LinearLayout,
    name: Label,
    dim_path: &str,
    list: &Json,
    list_path: &str,
) -> Result<LinearLayout, SpecError> {
    let mut layout = layout
        .with_in_dim(name)
        .map_err(|e| SpecError::layout(dim_path, e))?;
    for (k, basis) in array(list, list_path)?.iter().enumerate() {
        let basis_path = index(list_path, k);
        let coords = uint_list(basis, &basis_path)?;
        layout = layout
            .with_basis(name, &coords)
            .map_err(|e| SpecError::layout(&basis_path, e))?;
    }
    Ok(layout)
}

/// The bases of input dimension `i` of `layout`, each as its coordinates per output dimension.
pub fn bases_of(layout: &LinearLayout, i: usize) -> Vec<Vec<u32>> {
    (0..layout.in_bits_at(i) as usize)
        .map(|k| {
            let packed = layout.packed_basis(i, k);
            (0..layout.num_out_dims())
                .map(|o| layout.coord(packed, o))
                .collect()
        })
        .collect()
}

fn bases_list_json(layout: &LinearLayout, i: usize) -> Json {
    Json::Array(
        bases_of(layout, i)
            .iter()
            .map(|b| Json::u32_array(b))
            .collect(),
    )
}

/// Writes `layout` in the algebra schema read by [`layout_from_bases_json`].
pub fn layout_to_bases_json(layout: &LinearLayout) -> Json {
    let bases = (0..layout.num_in_dims())
        .map(|i| {
            Json::Array(std::vec![
                Json::String(layout.in_label(i).to_string()),
                bases_list_json(layout, i),
            ])
        })
        .collect();
    let out_dims = (0..layout.num_out_dims())
        .map(|o| {
            Json::Array(std::vec![
                Json::String(layout.out_label(o).to_string()),
                Json::Int(1i64 << layout.out_bits_at(o)),
            ])
        })
        .collect();
    Json::object([
        ("bases", Json::Array(bases)),
        ("out_dims", Json::Array(out_dims)),
    ])
}

/// Writes the bases of each input dimension as `{"register": [[...], ...], ...}` (the form of
/// `layouts.json`).
pub fn layout_to_dim_bases_json(layout: &LinearLayout) -> Json {
    Json::Object(
        (0..layout.num_in_dims())
            .map(|i| (layout.in_label(i).to_string(), bases_list_json(layout, i)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use Label::*;

    #[test]
    fn bases_round_trip() {
        let text = r#"{"bases": [["register", [[0, 2], [0, 0], [4, 0]]], ["lane", [[1, 0], [0, 1]]], ["warp", []]], "out_dims": [["dim0", 8], ["dim1", 4]]}"#;
        let l = layout_from_bases_json(&parse_json(text).unwrap()).unwrap();
        assert_eq!(l.in_bits(Register), 3);
        assert_eq!(l.in_bits(Warp), 0);
        assert_eq!(l.basis(Lane, 1).unwrap()[..2], [0, 1]);
        assert_eq!(layout_to_bases_json(&l).to_string(), text);
        let dims = layout_to_dim_bases_json(&l);
        assert_eq!(layout_from_dim_bases_json(&dims, &[8, 4]).unwrap(), l);
    }

    #[test]
    fn bad_bases_name_the_path() {
        let cases = [
            (r#"{"bases": []}"#, "`out_dims`: missing"),
            (
                r#"{"bases": [["register", [[0, 9]]]], "out_dims": [["dim0", 8], ["dim1", 4]]}"#,
                "`bases[0][1][0]`: invalid linear layout: basis 0 of `register` maps `dim1` to 9, outside its size 4",
            ),
            (
                r#"{"bases": [["reg", []]], "out_dims": []}"#,
                "`bases[0][0]`: unknown dimension \"reg\"",
            ),
            (
                r#"{"bases": [], "out_dims": [["dim0", 6]]}"#,
                "`out_dims[0]`: invalid linear layout: dimension `dim0` has size 6, which is not a power of two",
            ),
            (
                r#"{"bases": [["lane", [[-1]]]], "out_dims": [["dim0", 2]]}"#,
                "`bases[0][1][0][0]`: expected a non-negative integer below 2^32, found -1",
            ),
            (
                r#"{"bases": [["lane", [[1, 0]]]], "out_dims": [["dim0", 2]]}"#,
                "`bases[0][1][0]`: invalid linear layout: basis 0 of `lane` has 2 coordinates, but the layout has 1 output dimensions",
            ),
            (r#"[1]"#, "`out_dims`: expected an object, found an array"),
        ];
        for (text, message) in cases {
            let e = layout_from_bases_json(&parse_json(text).unwrap()).unwrap_err();
            assert!(
                e.to_string().starts_with(message),
                "{text}: got {e}, wanted {message}"
            );
        }
    }
}

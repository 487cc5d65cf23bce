//! Checks the Triton oracle's `algebra.json` (schema in `test-support/oracle/README.md`) against
//! the layout crate's algebra, case by case.
//!
//! - `algebra-*`: `is_injective`, `is_surjective`, `is_invertible` of `a`;
//!   `a.invert_and_compose(b)` and `a.pseudo_invert()` compared **exactly** with Triton's layouts
//!   (same dimensions, sizes and bases — also where `b` is not injective and Triton had a
//!   choice); `a.apply` on Triton's sample inputs.
//! - `memory-*`: `a.invert()` compared exactly.
//! - `product-*`: `identity_1d × strided_1d × zeros_1d` (left to right) compared exactly.
//!
//! A case of an unknown kind, or one that cannot be read or built, is a mismatch.

use tessera_layout::spec::{
    array, field, label, layout_from_bases_json, string, uint, Json, SpecError,
};
use tessera_layout::{Label, LayoutError, LinearLayout};

/// One line: the layout's bases on a single line, `{register: [[0, 2], ...], ...} -> [dim0 16, ...]`.
fn one_line(layout: &LinearLayout) -> String {
    let mut s = String::from("{");
    for i in 0..layout.num_in_dims() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&format!("{}: [", layout.in_label(i)));
        for k in 0..layout.in_bits_at(i) as usize {
            if k > 0 {
                s.push_str(", ");
            }
            let packed = layout.packed_basis(i, k);
            let coords: Vec<String> = (0..layout.num_out_dims())
                .map(|o| layout.coord(packed, o).to_string())
                .collect();
            s.push_str(&format!("[{}]", coords.join(", ")));
        }
        s.push(']');
    }
    s.push_str("} -> [");
    let outs: Vec<String> = (0..layout.num_out_dims())
        .map(|o| format!("{} {}", layout.out_label(o), 1u64 << layout.out_bits_at(o)))
        .collect();
    s.push_str(&outs.join(", "));
    s.push(']');
    s
}

fn spec_err(id: &str, e: SpecError) -> String {
    format!("{id}: cannot read the case: {e}")
}

/// Compares a computed layout with the expected one; a mismatch line names the field.
fn compare_layout(
    id: &str,
    what: &str,
    expected: &LinearLayout,
    got: Result<LinearLayout, LayoutError>,
    out: &mut Vec<String>,
) {
    match got {
        Ok(l) if l == *expected => {}
        Ok(l) => out.push(format!(
            "{id}: {what}: expected {}, got {}",
            one_line(expected),
            one_line(&l)
        )),
        Err(e) => out.push(format!(
            "{id}: {what}: expected {}, got error: {e}",
            one_line(expected)
        )),
    }
}

fn compare_bool(id: &str, what: &str, expected: bool, got: bool, out: &mut Vec<String>) {
    if expected != got {
        out.push(format!("{id}: {what}: expected {expected}, got {got}"));
    }
}

fn read_bool(case: &Json, key: &str) -> Result<bool, SpecError> {
    let v = field(case, "", key)?;
    v.as_bool()
        .ok_or_else(|| SpecError::field(key, format!("expected true or false, found {v}")))
}

/// `{"register": 4, "lane": 0, ...}` as (label, value) pairs in the object's order.
fn named_values(v: &Json, path: &str) -> Result<Vec<(Label, u32)>, SpecError> {
    let members = v
        .as_object()
        .ok_or_else(|| SpecError::field(path, format!("expected an object, found {}", v.kind())))?;
    members
        .iter()
        .map(|(name, value)| {
            let member_path = format!("{path}.{name}");
            let dim = Label::parse(name).ok_or_else(|| {
                SpecError::field(&member_path, format!("unknown dimension \"{name}\""))
            })?;
            Ok((dim, uint(value, &member_path)?))
        })
        .collect()
}

/// One factor of a `product-*` case: `["identity_1d", size, in, out]`,
/// `["strided_1d", size, stride, in, out]` or `["zeros_1d", size, in, out]`.
fn product_piece(v: &Json, path: &str) -> Result<Result<LinearLayout, LayoutError>, SpecError> {
    let items = array(v, path)?;
    let at = |i: usize| format!("{path}[{i}]");
    let kind = string(
        items
            .first()
            .ok_or_else(|| SpecError::field(path, "empty"))?,
        &at(0),
    )?;
    let len = match kind {
        "identity_1d" | "zeros_1d" => 4,
        "strided_1d" => 5,
        other => {
            return Err(SpecError::field(
                &at(0),
                format!("unknown layout constructor \"{other}\""),
            ))
        }
    };
    if items.len() != len {
        return Err(SpecError::field(
            path,
            format!(
                "`{kind}` takes {} arguments, found {}",
                len - 1,
                items.len() - 1
            ),
        ));
    }
    // `[kind, size, (stride,) in, out]`.
    let size = uint(&items[1], &at(1))?;
    let stride = match kind {
        "strided_1d" => Some(uint(&items[2], &at(2))?),
        _ => None,
    };
    let in_dim = label(&items[len - 2], &at(len - 2))?;
    let out_dim = label(&items[len - 1], &at(len - 1))?;
    Ok(match (kind, stride) {
        ("zeros_1d", _) => LinearLayout::zeros_1d(size, in_dim, out_dim),
        (_, Some(stride)) => LinearLayout::strided_1d(size, stride, in_dim, out_dim),
        _ => LinearLayout::identity_1d(size, in_dim, out_dim),
    })
}

fn check_algebra_kind(id: &str, case: &Json, out: &mut Vec<String>) -> Result<(), SpecError> {
    let a = layout_from_bases_json(field(case, "", "a")?)?;
    let b = layout_from_bases_json(field(case, "", "b")?)?;
    compare_bool(
        id,
        "a_is_injective",
        read_bool(case, "a_is_injective")?,
        a.is_injective(),
        out,
    );
    compare_bool(
        id,
        "a_is_surjective",
        read_bool(case, "a_is_surjective")?,
        a.is_surjective(),
        out,
    );
    compare_bool(
        id,
        "a_is_invertible",
        read_bool(case, "a_is_invertible")?,
        a.is_invertible(),
        out,
    );
    let expected = layout_from_bases_json(field(case, "", "a_invert_and_compose_b")?)?;
    compare_layout(
        id,
        "a_invert_and_compose_b",
        &expected,
        a.invert_and_compose(&b),
        out,
    );
    let expected = layout_from_bases_json(field(case, "", "a_pseudoinvert")?)?;
    compare_layout(id, "a_pseudoinvert", &expected, a.pseudo_invert(), out);
    for (n, sample) in array(field(case, "", "a_apply")?, "a_apply")?
        .iter()
        .enumerate()
    {
        let path = format!("a_apply[{n}]");
        let inputs = named_values(field(sample, &path, "in")?, &format!("{path}.in"))?;
        let outputs = named_values(field(sample, &path, "out")?, &format!("{path}.out"))?;
        match a.apply(&inputs) {
            Ok(coords) => {
                let got: Vec<(Label, u32)> = (0..a.num_out_dims())
                    .map(|o| (a.out_label(o), coords[o]))
                    .collect();
                if got != outputs {
                    out.push(format!(
                        "{id}: {path}: a{inputs:?}: expected {outputs:?}, got {got:?}"
                    ));
                }
            }
            Err(e) => out.push(format!(
                "{id}: {path}: expected {outputs:?}, got error: {e}"
            )),
        }
    }
    Ok(())
}

fn check_memory_kind(id: &str, case: &Json, out: &mut Vec<String>) -> Result<(), SpecError> {
    let a = layout_from_bases_json(field(case, "", "a")?)?;
    let expected = layout_from_bases_json(field(case, "", "a_invert")?)?;
    compare_layout(id, "a_invert", &expected, a.invert(), out);
    Ok(())
}

fn check_product_kind(id: &str, case: &Json, out: &mut Vec<String>) -> Result<(), SpecError> {
    let expected = layout_from_bases_json(field(case, "", "product")?)?;
    let mut product: Result<LinearLayout, LayoutError> = Ok(LinearLayout::empty());
    for (n, piece) in array(field(case, "", "pieces")?, "pieces")?
        .iter()
        .enumerate()
    {
        let factor = product_piece(piece, &format!("pieces[{n}]"))?;
        product = match (product, factor) {
            (Ok(p), Ok(f)) => p.product(&f),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
    }
    compare_layout(id, "product", &expected, product, out);
    Ok(())
}

/// Checks one case of `algebra.json`. `Ok(())` when every field matches; otherwise one line per
/// mismatch (`case: field: expected …, got …`), or a single line if the case cannot be read.
pub fn check_algebra_case(case: &Json) -> Result<(), Vec<String>> {
    let id = match field(case, "", "id").and_then(|v| string(v, "id")) {
        Ok(id) => id,
        Err(e) => return Err(vec![spec_err("?", e)]),
    };
    let mut mismatches = Vec::new();
    let kind = id.split('-').next().unwrap_or("");
    let read = match kind {
        "algebra" => check_algebra_kind(id, case, &mut mismatches),
        "memory" => check_memory_kind(id, case, &mut mismatches),
        "product" => check_product_kind(id, case, &mut mismatches),
        _ => {
            mismatches.push(format!("{id}: unknown case kind \"{kind}\""));
            Ok(())
        }
    };
    if let Err(e) = read {
        mismatches.push(spec_err(id, e));
    }
    if mismatches.is_empty() {
        Ok(())
    } else {
        Err(mismatches)
    }
}

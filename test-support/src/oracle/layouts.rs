//! Checking our families against `layouts.json` (bases computed by Triton 3.6's
//! `toLinearLayout`): each case's spec is built with [`LayoutSpec::build`] and its bases per
//! hardware dimension (`register`, `lane`, `warp`, `block`) compared exactly, order included.

use tessera_layout::spec::{
    bases_of, field, layout_from_dim_bases_json, shape_from_json, string, Json, LayoutSpec,
    SpecError,
};
use tessera_layout::{Label, LinearLayout};

fn show(bases: &[Vec<u32>]) -> String {
    Json::Array(bases.iter().map(|b| Json::u32_array(b)).collect()).to_string()
}

/// The bases of `label` in `layout` (none if the layout lacks the dimension).
fn bases_for(layout: &LinearLayout, label: Label) -> Vec<Vec<u32>> {
    match layout.in_index(label) {
        Some(i) => bases_of(layout, i),
        None => Vec::new(),
    }
}

/// Compares `got` with `expected`, input dimension by input dimension (both in the oracle's
/// names); one line per differing dimension.
pub fn compare_dim_bases(id: &str, expected: &LinearLayout, got: &LinearLayout) -> Vec<String> {
    let mut lines = Vec::new();
    if expected.num_out_dims() != got.num_out_dims()
        || (0..got.num_out_dims()).any(|o| {
            !got.out_label(o).same(expected.out_label(o))
                || got.out_bits_at(o) != expected.out_bits_at(o)
        })
    {
        let dims = |l: &LinearLayout| {
            (0..l.num_out_dims())
                .map(|o| format!("{} (size {})", l.out_label(o), 1u64 << l.out_bits_at(o)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        lines.push(format!(
            "{id}: output dimensions: expected [{}], got [{}]",
            dims(expected),
            dims(got)
        ));
        return lines;
    }
    let mut labels: Vec<Label> = (0..expected.num_in_dims())
        .map(|i| expected.in_label(i))
        .collect();
    for i in 0..got.num_in_dims() {
        if !labels.contains(&got.in_label(i)) {
            labels.push(got.in_label(i));
        }
    }
    for label in labels {
        let (e, g) = (bases_for(expected, label), bases_for(got, label));
        if e != g {
            lines.push(format!(
                "{id}: {label}: expected {}, got {}",
                show(&e),
                show(&g)
            ));
        }
    }
    lines
}

fn read_case(case: &Json) -> Result<(LinearLayout, LinearLayout), SpecError> {
    let shape = shape_from_json(field(case, "", "shape")?, "shape")?;
    let spec = LayoutSpec::from_json_at(field(case, "", "layout")?, "layout")?;
    let expected = layout_from_dim_bases_json(field(case, "", "bases")?, &shape)?;
    let got = spec.build_at(&shape, "layout")?;
    Ok((expected, got))
}

/// Checks one case of `layouts.json`: `Ok(())` when every basis matches, else one line per
/// mismatch (`case: dimension: expected …, got …`), or one line if the case cannot be built.
pub fn check_layout_case(case: &Json) -> Result<(), Vec<String>> {
    let id = match field(case, "", "id").and_then(|v| string(v, "id")) {
        Ok(id) => id.to_string(),
        Err(e) => return Err(vec![format!("?: {e}")]),
    };
    match read_case(case) {
        Ok((expected, got)) => {
            let lines = compare_dim_bases(&id, &expected, &got);
            if lines.is_empty() {
                Ok(())
            } else {
                Err(lines)
            }
        }
        Err(e) => Err(vec![format!("{id}: cannot build: {e}")]),
    }
}

/// The family of a `layouts.json` case, with its parent's for slices and dot operands
/// (`slice/blocked`), for per-family counts.
pub fn case_family(case: &Json) -> String {
    let layout = case.get("layout");
    let family = layout
        .and_then(|l| l.get("family"))
        .and_then(Json::as_str)
        .unwrap_or("?");
    let parent = layout
        .and_then(|l| l.get("params"))
        .and_then(|p| p.get("parent"))
        .and_then(|p| p.get("family"))
        .and_then(Json::as_str);
    match parent {
        Some(p) => format!("{family}/{p}"),
        None => family.to_string(),
    }
}

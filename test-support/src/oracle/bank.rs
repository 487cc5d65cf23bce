//! Checks the Triton oracle's `bank_conflicts.json` against the planner's bank-conflict count.

use tessera_layout::plan::bank::{bank_wavefronts, BankAccess};
use tessera_layout::spec::{field, layout_from_spec, shape_from_json, uint, Json};

/// Checks one `bank-*` case of `bank_conflicts.json` (schema in the README beside it):
/// builds the distributed and shared layouts for the case's shape with our families and
/// compares our wavefronts per phase minus one with Triton's `conflicts`
/// (`bankConflictsMemDesc`). `Err` holds the mismatch line (case, expected, got).
pub fn check_bank_case(case: &Json) -> Result<(), Vec<String>> {
    let id = case
        .get("id")
        .and_then(|v| v.as_str())
        .unwrap_or("?")
        .to_string();
    let value = |key: &str| field(case, "", key).map_err(|e| e.to_string());
    let number = |key: &str| uint(value(key)?, key).map_err(|e| e.to_string());
    let run = || -> Result<(u32, BankAccess), String> {
        let shape = shape_from_json(value("shape")?, "shape").map_err(|e| e.to_string())?;
        let distributed = layout_from_spec(value("distributed")?, &shape)
            .map_err(|e| format!("distributed: {e}"))?;
        let shared =
            layout_from_spec(value("shared")?, &shape).map_err(|e| format!("shared: {e}"))?;
        let bits = number("element_bits")?;
        let expected = number("conflicts")?;
        let access = bank_wavefronts(&shared, &distributed, bits).map_err(|e| e.to_string())?;
        Ok((expected, access))
    };
    match run() {
        Ok((expected, access)) if access.conflicts() == expected => Ok(()),
        Ok((expected, access)) => Err(vec![format!(
            "{id}: expected conflicts {expected}, got {} ({} wavefronts per phase, vector of {} elements, {} phases)",
            access.conflicts(),
            access.wavefronts,
            access.vector.elements,
            access.phases
        )]),
        Err(e) => Err(vec![format!("{id}: cannot check: {e}")]),
    }
}

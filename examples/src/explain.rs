//! The inferred layouts of a `#[tile_kernel]` in brief, from the `EXPLAIN` text its module
//! carries (the macro's layout-inference report of every specialisation and variant, each after
//! a line `entry NAME`): per launched entry, its launch assumptions, every load and store with
//! its vector width, every reduction, gather and dot with how it runs, every layout conversion
//! with its plan, and the layouts these name.

use std::collections::HashMap;

/// The report of entry `entry` inside a module's `EXPLAIN` text.
pub fn entry_section<'a>(explain: &'a str, entry: &str) -> Option<&'a str> {
    let header = format!("entry {entry}\n");
    let start = if explain.starts_with(&header) {
        header.len()
    } else {
        explain.find(&format!("\n{header}"))? + 1 + header.len()
    };
    let rest = &explain[start..];
    let end = rest.find("\nentry ").map_or(rest.len(), |e| e + 1);
    Some(&rest[..end])
}

/// `text` without a trailing `  // name` comment.
fn without_comment(text: &str) -> &str {
    match text.find("  // ") {
        Some(at) => &text[..at],
        None => text,
    }
}

/// Splits `"%15: f16[1024] #0 = load … %12  [note]"` into (code, note).
fn split_note(line: &str) -> (&str, Option<&str>) {
    let line = without_comment(line.trim());
    match (line.find("  ["), line.rfind(']')) {
        (Some(open), Some(close)) if close > open => {
            (line[..open].trim_end(), Some(&line[open + 3..close]))
        }
        _ => (line, None),
    }
}

/// The short form of a load/store note: `128-bit vectors (8 × 16 bits) along dim0`.
fn vector_text(note: &str) -> String {
    // "vector 8 × 16 bits = 128 bits along dim0; contiguity …"
    let head = note.split(';').next().unwrap_or(note);
    let Some(rest) = head.strip_prefix("vector ") else {
        return head.to_string();
    };
    match rest.split_once(" = ") {
        Some((parts, total)) => {
            let (bits, along) = total.split_once(" bits ").unwrap_or((total, ""));
            format!("{bits}-bit vectors ({parts}) {along}")
                .trim_end()
                .to_string()
        }
        None => head.to_string(),
    }
}

/// Notes that layout `id` is named by the brief.
fn use_layout(id: &str, used: &mut Vec<String>) {
    if !used.iter().any(|u| u == id) {
        used.push(id.to_string());
    }
}

/// The brief of one entry's report: indented lines ready to print.
pub fn brief(section: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut layouts: Vec<(String, String)> = Vec::new();
    // value id -> (type, layout id)
    let mut values: HashMap<String, (String, Option<String>)> = HashMap::new();
    let mut used: Vec<String> = Vec::new();
    let mut in_layouts = false;
    let mut ops = Vec::new();
    for raw in section.lines() {
        let line = raw.trim();
        if let Some(header) = line.strip_prefix("layout inference: kernel ") {
            if let Some(at) = header.find('[') {
                lines.push(format!("specialisation {}", &header[at..]));
            }
        } else if let Some(assumed) = line.strip_prefix("assumed at launch") {
            let assumed = assumed.trim_start_matches(" (the launcher checks)");
            lines.push(format!("assumes{assumed}"));
        } else if line == "layouts:" {
            in_layouts = true;
        } else if line.starts_with("code (") {
            in_layouts = false;
        } else if in_layouts {
            if let Some(rest) = line.strip_prefix('#') {
                if let Some((id, what)) = rest.split_once(' ') {
                    layouts.push((format!("#{id}"), what.to_string()));
                }
            }
        } else if let Some(summary) = line.strip_prefix("summary: ") {
            ops.push(format!("summary: {summary}"));
        } else if line.starts_with('%') || line.starts_with("store") {
            let (code, note) = split_note(line);
            // Record the value's type and layout: "%15: f16[1024] #0 = …".
            let (lhs, rhs) = code.split_once(" = ").unwrap_or(("", code));
            if let Some((id, ty)) = lhs.split_once(": ") {
                let (ty, layout) = match ty.rsplit_once(" #") {
                    Some((t, l)) => (t.to_string(), Some(format!("#{l}"))),
                    None => (ty.to_string(), None),
                };
                values.insert(id.to_string(), (ty, layout));
            }
            let result = lhs.split_once(": ").map(|(id, _)| id.to_string());
            let described = |id: &str, used: &mut Vec<String>| -> String {
                match values.get(id) {
                    Some((ty, Some(layout))) => {
                        use_layout(layout, used);
                        format!("{ty} {layout}")
                    }
                    Some((ty, None)) => ty.clone(),
                    None => id.to_string(),
                }
            };
            let note = note.unwrap_or("");
            let op = rhs.split_whitespace().next().unwrap_or("");
            if op == "load" {
                let v = described(result.as_deref().unwrap_or(""), &mut used);
                ops.push(format!("load    {v}: {}", vector_text(note)));
            } else if code.starts_with("store") {
                let operands: Vec<&str> = code
                    .trim_start_matches("store")
                    .trim_start_matches(" masked")
                    .split(", ")
                    .map(str::trim)
                    .collect();
                let v = operands
                    .get(1)
                    .map_or(String::new(), |id| described(id, &mut used));
                ops.push(format!("store   {v}: {}", vector_text(note)));
            } else if op == "convert" {
                let v = described(result.as_deref().unwrap_or(""), &mut used);
                if let Some((from, _)) = note.split_once(" -> ") {
                    use_layout(from, &mut used);
                }
                ops.push(format!("convert {v}: {note}"));
            } else if op.starts_with("reduce.") || op == "gather" || op == "dot" {
                let attrs: Vec<&str> = rhs
                    .split_whitespace()
                    .skip(1)
                    .filter(|w| w.contains('='))
                    .collect();
                let operand = rhs.split_whitespace().find(|w| w.starts_with('%'));
                let input = operand.map_or(String::new(), |id| {
                    described(id.trim_end_matches(','), &mut used)
                });
                if op == "dot" {
                    for id in note.split([' ', ',']) {
                        if id.starts_with('#') {
                            use_layout(id, &mut used);
                        }
                    }
                }
                if op == "dot" {
                    ops.push(format!("dot     {note}"));
                } else {
                    ops.push(format!("{op} {} of {input}: {note}", attrs.join(" ")));
                }
            }
        }
    }
    lines.extend(ops);
    for (id, what) in &layouts {
        if used.contains(id) {
            lines.push(format!("{id} = {what}"));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "entry k__BLOCK_256
layout inference: kernel k [num_warps=4, BLOCK=256]
assumed at launch: nothing
layouts:
  #0 blocked{spt=[2], tpw=[32], wpc=[4], order=[0]}
     register=[1] lane=[2, 4, 8, 16, 32] warp=[64, 128]
code (%0: Ptr<f32> out):
  %5: f32[256] #0 = load masked+other %12, %8, %14  [vector 2 × 32 bits = 64 bits along dim0; contiguity 256, alignment 8 B, 2 consecutive registers]  // x
  %17: f32 = reduce.max axis=0 %5  [within a warp: 5 shuffle rounds; cost 5]
  store masked %24, %5, %8  [vector 2 × 32 bits = 64 bits along dim0; contiguity 256]
summary: 0 conversions, 0 rematerialised ops, total cost 5
entry k__BLOCK_256__unaligned
layout inference: kernel k [num_warps=4, BLOCK=256]
";

    #[test]
    fn finds_entries_and_summarises_them() {
        let section = entry_section(SAMPLE, "k__BLOCK_256").unwrap();
        assert!(section.ends_with("total cost 5\n"), "{section}");
        let tail = entry_section(SAMPLE, "k__BLOCK_256__unaligned").unwrap();
        assert!(tail.starts_with("layout inference"), "{tail}");
        assert_eq!(entry_section(SAMPLE, "k"), None);
        assert_eq!(
            brief(section),
            [
                "specialisation [num_warps=4, BLOCK=256]",
                "assumes: nothing",
                "load    f32[256] #0: 64-bit vectors (2 × 32 bits) along dim0",
                "reduce.max axis=0 of f32[256] #0: within a warp: 5 shuffle rounds; cost 5",
                "store   f32[256] #0: 64-bit vectors (2 × 32 bits) along dim0",
                "summary: 0 conversions, 0 rematerialised ops, total cost 5",
                "#0 = blocked{spt=[2], tpw=[32], wpc=[4], order=[0]}",
            ]
        );
    }
}

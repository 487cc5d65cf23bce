//! Reading a PTX module's kernel entries: names and parameter sizes.
//!
//! An entry is `[.visible|.weak] .entry NAME( .param .TYPE [.ptr .global .align N] NAME[ '[' K ']' ], … )`.
//! The launcher checks every launch against it (on the emulator too), so a Rust kernel handle whose
//! parameter tuple disagrees with the compiled kernel is an error, not undefined behaviour.

/// One kernel entry of a module: a PTX `.entry`, or a kernel of an AMD code object
/// ([`CodeObjectKernel::entry`](super::code_object::CodeObjectKernel::entry)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxEntry {
    /// The entry name (`#[no_mangle]` name of the kernel).
    pub name: String,
    /// The byte size of each `.param`, in order; `None` for a parameter whose type was not
    /// understood.
    pub param_sizes: Vec<Option<usize>>,
}

/// Errors in the PTX text itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtxParseError(pub String);

/// Removes `//` line comments and `/* */` block comments, in one pass over the text (a module
/// of a few MB has tens of thousands of comments).
fn strip_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    while let Some(slash) = rest.find('/') {
        let after = &rest[slash + 1..];
        if after.starts_with('/') {
            out.push_str(&rest[..slash]);
            rest = match rest[slash..].find('\n') {
                Some(nl) => &rest[slash + nl..],
                None => "",
            };
        } else if let Some(block) = after.strip_prefix('*') {
            out.push_str(&rest[..slash]);
            out.push(' ');
            rest = match block.find("*/") {
                Some(end) => &block[end + 2..],
                None => "",
            };
        } else {
            out.push_str(&rest[..=slash]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Byte size of a PTX fundamental type (`.u32` → 4).
fn type_size(token: &str) -> Option<usize> {
    Some(match token {
        ".b8" | ".u8" | ".s8" => 1,
        ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 2,
        ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" => 4,
        ".b64" | ".u64" | ".s64" | ".f64" => 8,
        _ => return None,
    })
}

/// Size of one parameter declaration such as `.param .align 8 .b8 p[16]`.
fn param_size(decl: &str) -> Option<usize> {
    let tokens: Vec<&str> = decl.split_whitespace().collect();
    if tokens.first() != Some(&".param") {
        return None;
    }
    let element = tokens.iter().find_map(|token| type_size(token))?;
    let name = tokens.last()?;
    let count = match (name.find('['), name.ends_with(']')) {
        (Some(open), true) => name[open + 1..name.len() - 1]
            .trim()
            .parse::<usize>()
            .ok()?,
        (None, _) => 1,
        _ => return None,
    };
    Some(element * count)
}

/// Every `.entry` in `ptx`, in order.
pub fn parse_entries(ptx: &str) -> Result<Vec<PtxEntry>, PtxParseError> {
    let text = strip_comments(ptx);
    let mut entries = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find(".entry") {
        let before_ok = at == 0 || rest[..at].ends_with(|c: char| c.is_whitespace());
        let after = &rest[at + ".entry".len()..];
        if !before_ok || !after.starts_with(|c: char| c.is_whitespace()) {
            rest = after;
            continue;
        }
        let after = after.trim_start();
        let name_end = after
            .find(|c: char| c == '(' || c == '{' || c.is_whitespace())
            .ok_or_else(|| {
                PtxParseError(format!("`.entry` without a body near `{}`", preview(after)))
            })?;
        let name = after[..name_end].to_string();
        if name.is_empty() {
            return Err(PtxParseError(format!(
                "`.entry` without a name near `{}`",
                preview(after)
            )));
        }
        let after_name = after[name_end..].trim_start();
        let mut param_sizes = Vec::new();
        if let Some(params) = after_name.strip_prefix('(') {
            let close = params.find(')').ok_or_else(|| {
                PtxParseError(format!("parameter list of `.entry {name}` is not closed"))
            })?;
            for decl in params[..close]
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
            {
                param_sizes.push(param_size(decl));
            }
            rest = &params[close..];
        } else {
            rest = after_name;
        }
        entries.push(PtxEntry { name, param_sizes });
    }
    Ok(entries)
}

fn preview(text: &str) -> String {
    text.chars().take(40).collect()
}

/// The `.target` of a PTX module (`sm_80`, `sm_90a`, …), if it has one.
pub fn target_name(ptx: &str) -> Option<&str> {
    ptx.lines().find_map(|line| {
        let rest = line.trim().strip_prefix(".target")?;
        rest.split(|c: char| c == ',' || c.is_whitespace())
            .find(|word| !word.is_empty())
    })
}

/// The `.target` architecture of a module: `sm_90a` → `(9, 0, true)` (arch-specific),
/// `sm_80` → `(8, 0, false)`.
pub fn target_arch(ptx: &str) -> Option<(u32, u32, bool)> {
    let name = target_name(ptx)?;
    let digits = name.strip_prefix("sm_")?;
    let specific = digits.ends_with('a') || digits.ends_with('f');
    let number: u32 = digits.trim_end_matches(['a', 'f']).parse().ok()?;
    Some((number / 10, number % 10, specific))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"
//
// Generated by LLVM NVPTX Back-End
//
.version 7.8
.target sm_80
.address_size 64

	// .globl	vec_add         // -- Begin function vec_add
.visible .entry vec_add(
	.param .u64 vec_add_param_0,
	.param .u64 .ptr .global .align 16 vec_add_param_1,
	.param .u64 vec_add_param_2,
	.param .u32 vec_add_param_3
)
{
	ret;
}
/* a block comment with .entry fake( */
.entry no_params()
{
	ret;
}
.weak .entry with_array(.param .align 8 .b8 with_array_param_0[24], .param .f32 x)
{ ret; }
.func helper_not_an_entry(.param .u32 a) { ret; }
"#;

    #[test]
    fn entries_names_and_param_sizes() {
        let entries = parse_entries(SAMPLE).unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["vec_add", "no_params", "with_array"]);
        assert_eq!(entries[0].param_sizes, [Some(8), Some(8), Some(8), Some(4)]);
        assert_eq!(entries[1].param_sizes, Vec::<Option<usize>>::new());
        assert_eq!(entries[2].param_sizes, [Some(24), Some(4)]);
        assert_eq!(target_arch(SAMPLE), Some((8, 0, false)));
        assert_eq!(target_arch(".target sm_90a\n"), Some((9, 0, true)));
        assert_eq!(target_arch(".version 8.0\n"), None);
    }

    #[test]
    fn comments_are_removed_in_linear_time() {
        assert_eq!(
            strip_comments("a // x /* y\nb /* c // d\n */ e / f /* open"),
            "a \nb   e / f  "
        );
        // 200k line comments and no block comment: quadratic scanning would take minutes.
        let big = "mov.u32 %r1, 1; // comment\n".repeat(200_000);
        let start = std::time::Instant::now();
        let stripped = strip_comments(&big);
        assert_eq!(stripped, "mov.u32 %r1, 1; \n".repeat(200_000));
        assert!(start.elapsed().as_secs_f64() < 5.0, "{:?}", start.elapsed());
    }

    #[test]
    fn unclosed_parameter_list_is_an_error() {
        let err = parse_entries(".visible .entry broken(\n.param .u32 a\n").unwrap_err();
        assert!(err.0.contains("broken"), "{err:?}");
        assert_eq!(param_size(".param .weird x"), None);
    }
}

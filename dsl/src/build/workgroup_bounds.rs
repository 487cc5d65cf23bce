//! Workgroup-size bounds of a kernel crate's amdgpu kernels, set between rustc and LLVM's code
//! generation.
//!
//! LLVM gives each amdgpu kernel the registers of a wave of the largest workgroup it may run in:
//! without `"amdgpu-flat-work-group-size"` that is 1024 threads, 128 VGPRs and AGPRs a lane on
//! gfx90a/gfx942, and a dot's tiles spill to scratch memory. rustc has no attribute for it (HIP
//! has `__launch_bounds__`). So `#[tile_kernel]` puts a marker static beside each amdgpu kernel,
//! `__tessera_workgroup_size_<threads>__<kernel>` (its blocks' `32 · num_warps` threads), and
//! the build helper asks rustc for the crate's final LLVM module (`--emit=llvm-ir`: after fat
//! LTO, every function in it), gives each marked kernel the bound `1,<threads>`
//! ([`bound_workgroup_sizes`]), compiles the module with the toolchain's `llc` and links the
//! code object with its `rust-lld`, as rustc would have (`llvm_tools::LlvmTools`). Kernels
//! without a marker (hand-written ones) keep LLVM's default. Without `llc` (the toolchain's
//! `llvm-tools` component) the build keeps rustc's own code object and says so.

use std::collections::HashMap;

/// The prefix of the marker statics (`tessera_macros`' `WORKGROUP_SIZE_MARKER`).
pub(super) const MARKER: &str = "__tessera_workgroup_size_";

/// `ir` (an LLVM module's text) with `"amdgpu-flat-work-group-size"="1,<n>"` on each kernel a
/// marker `@<MARKER><n>__<kernel>` names: each bounded kernel refers to an attribute group of
/// its own bound, a copy of its group with the bound added (one per group and bound). Returns
/// the text and how many kernels it bounded; an error names a marker whose kernel is not
/// defined in the module, or whose size is not a number.
pub(super) fn bound_workgroup_sizes(ir: &str) -> Result<(String, usize), String> {
    // The markers: `@<MARKER><n>__<kernel> = …`.
    let mut bounds: HashMap<&str, u32> = HashMap::new();
    for line in ir.lines() {
        let Some(marker) = line.strip_prefix('@').and_then(|l| l.strip_prefix(MARKER)) else {
            continue;
        };
        let name = marker.split(' ').next().unwrap_or_default();
        let (threads, kernel) = name
            .split_once("__")
            .and_then(|(n, kernel)| Some((n.parse::<u32>().ok()?, kernel)))
            .ok_or_else(|| format!("the marker `@{MARKER}{name}` is not `<threads>__<kernel>`"))?;
        bounds.insert(kernel, threads);
    }
    if bounds.is_empty() {
        return Ok((ir.to_string(), 0));
    }
    // The attribute groups (`attributes #<id> = { … }`) and the first free id.
    let mut groups: HashMap<&str, &str> = HashMap::new();
    for line in ir.lines() {
        if let Some((id, body)) = line
            .strip_prefix("attributes #")
            .and_then(|l| l.split_once(" = { "))
        {
            groups.insert(id, body.trim_end().trim_end_matches('}').trim_end());
        }
    }
    let mut next = groups
        .keys()
        .filter_map(|id| id.parse::<u64>().ok())
        .max()
        .map_or(0, |m| m + 1);
    let mut added: HashMap<(&str, u32), u64> = HashMap::new();
    let mut new_groups = String::new();
    let mut out = String::with_capacity(ir.len() + 128 * bounds.len());
    let mut bounded: Vec<&str> = Vec::new();
    for line in ir.lines() {
        // `define … amdgpu_kernel void @<kernel>(…) … #<group> {`
        let kernel = line
            .strip_prefix("define ")
            .filter(|l| l.contains("amdgpu_kernel "))
            .and_then(|l| l.split_once(" @"))
            .and_then(|(_, l)| l.split_once('('))
            .map(|(name, _)| name)
            .filter(|name| bounds.contains_key(name));
        let Some(kernel) = kernel else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let threads = bounds[kernel];
        let (head, group) = line
            .trim_end()
            .strip_suffix(" {")
            .and_then(|l| l.rsplit_once(" #"))
            .filter(|(_, id)| groups.contains_key(id))
            .ok_or_else(|| format!("kernel {kernel}: no attribute group in `{line}`"))?;
        let id = *added.entry((group, threads)).or_insert_with(|| {
            let id = next;
            next += 1;
            new_groups.push_str(&format!(
                "attributes #{id} = {{ {} \"amdgpu-flat-work-group-size\"=\"1,{threads}\" }}\n",
                groups[group]
            ));
            id
        });
        out.push_str(&format!("{head} #{id} {{\n"));
        bounded.push(kernel);
    }
    if let Some(missing) = bounds.keys().find(|k| !bounded.contains(k)) {
        return Err(format!(
            "a workgroup-size marker names the kernel `{missing}`, which the module does not \
             define"
        ));
    }
    out.push_str(&new_groups);
    Ok((out, bounded.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "\
@__tessera_workgroup_size_128__mm = addrspace(1) constant [1 x i8] zeroinitializer, align 1
@__tessera_workgroup_size_256__wide = addrspace(1) constant [1 x i8] zeroinitializer, align 1
define amdgpu_kernel void @mm(ptr %a) unnamed_addr #0 {
  ret void
}
define amdgpu_kernel void @copy(ptr %a) unnamed_addr #0 {
  ret void
}
define amdgpu_kernel void @wide(ptr %a) unnamed_addr #1 {
  ret void
}
define internal void @helper() unnamed_addr #0 {
  ret void
}
attributes #0 = { nounwind \"target-cpu\"=\"gfx942\" }
attributes #1 = { convergent \"target-cpu\"=\"gfx942\" }
";

    /// Each marked kernel gets a group of its own bound, a copy of its own group; unmarked
    /// kernels and other functions keep theirs.
    #[test]
    fn marked_kernels_get_their_bound_and_nothing_else_changes() {
        let (out, n) = bound_workgroup_sizes(MODULE).unwrap();
        assert_eq!(n, 2);
        assert!(out.contains("define amdgpu_kernel void @mm(ptr %a) unnamed_addr #2 {"));
        assert!(out.contains("define amdgpu_kernel void @copy(ptr %a) unnamed_addr #0 {"));
        assert!(out.contains("define amdgpu_kernel void @wide(ptr %a) unnamed_addr #3 {"));
        assert!(out.contains("define internal void @helper() unnamed_addr #0 {"));
        assert!(out.contains(
            "attributes #2 = { nounwind \"target-cpu\"=\"gfx942\" \
             \"amdgpu-flat-work-group-size\"=\"1,128\" }"
        ));
        assert!(out.contains(
            "attributes #3 = { convergent \"target-cpu\"=\"gfx942\" \
             \"amdgpu-flat-work-group-size\"=\"1,256\" }"
        ));
        assert!(out.contains("attributes #0 = { nounwind \"target-cpu\"=\"gfx942\" }"));
        // Without markers the module is unchanged.
        let plain = MODULE.replace("@__tessera", "@other");
        assert_eq!(bound_workgroup_sizes(&plain).unwrap(), (plain.clone(), 0));
    }

    #[test]
    fn a_marker_without_its_kernel_or_size_is_an_error() {
        let orphan = MODULE.replace("@wide(", "@renamed(");
        let e = bound_workgroup_sizes(&orphan).unwrap_err();
        assert!(e.contains("`wide`"), "{e}");
        let bad = MODULE.replace("size_128__mm", "size_x__mm");
        let e = bound_workgroup_sizes(&bad).unwrap_err();
        assert!(e.contains("not `<threads>__<kernel>`"), "{e}");
    }
}

//! Workgroup scope for the fences of `sync_threads` on amdgpu, set between rustc and LLVM's
//! code generation.
//!
//! `sync_threads` (`__syncthreads()`) is a release fence, `s_barrier` and an acquire fence
//! (`device::amdgpu::block_barrier`): what a block's threads wrote before the barrier, in LDS and
//! in global memory, its other threads read after it. That is a workgroup's ordering, and HIP's
//! `__syncthreads` fences at workgroup scope. Rust's fences have no scope, so LLVM gets
//! `fence release` and `fence acquire` at system scope, which on gfx90a and gfx942 write back and
//! invalidate the L2 cache (`buffer_wbl2`, `buffer_inv sc1`) at every barrier of a kernel's loop.
//! [`scope_block_barriers`] gives the two fences around each `llvm.amdgcn.s.barrier` call of the
//! crate's final LLVM module `syncscope("workgroup")`, as HIP's; other fences (a kernel's own,
//! whatever it orders) keep their scope.

/// The fence of a `sync_threads` before or after its barrier, at system scope.
const RELEASE: &str = "fence release";
const ACQUIRE: &str = "fence acquire";
/// The same fences at workgroup scope.
const WORKGROUP_RELEASE: &str = "fence syncscope(\"workgroup\") release";
const WORKGROUP_ACQUIRE: &str = "fence syncscope(\"workgroup\") acquire";
/// The barrier's call (`call void @llvm.amdgcn.s.barrier()`, perhaps `tail`, with attributes).
const BARRIER: &str = "call void @llvm.amdgcn.s.barrier()";

/// `ir` (an LLVM module's text) with each `fence release` / `s.barrier` / `fence acquire`,
/// three consecutive instructions, at workgroup scope; returns the text and how many barriers
/// it scoped. A fence not directly around a barrier is left as it is.
pub(super) fn scope_block_barriers(ir: &str) -> (String, usize) {
    let lines: Vec<&str> = ir.lines().collect();
    let mut out = String::with_capacity(ir.len() + 64);
    let mut scoped = 0;
    let mut i = 0;
    while i < lines.len() {
        let triple = lines.get(i..i + 3).and_then(|l| {
            let release = scope(l[0], RELEASE, WORKGROUP_RELEASE)?;
            let acquire = scope(l[2], ACQUIRE, WORKGROUP_ACQUIRE)?;
            l[1].contains(BARRIER).then_some((release, l[1], acquire))
        });
        match triple {
            Some((release, barrier, acquire)) => {
                for line in [release.as_str(), barrier, acquire.as_str()] {
                    out.push_str(line);
                    out.push('\n');
                }
                scoped += 1;
                i += 3;
            }
            None => {
                out.push_str(lines[i]);
                out.push('\n');
                i += 1;
            }
        }
    }
    (out, scoped)
}

/// `line` with its instruction `from` (at system scope, its operands or metadata after a comma,
/// e.g. `, !dbg !7`) replaced by `to`; `None` for another instruction.
fn scope(line: &str, from: &str, to: &str) -> Option<String> {
    let indent = &line[..line.len() - line.trim_start().len()];
    let rest = line.trim_start().strip_prefix(from)?;
    (rest.is_empty() || rest.starts_with(',')).then(|| format!("{indent}{to}{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "\
define amdgpu_kernel void @k(ptr %a) unnamed_addr #0 {
start:
  fence release
  tail call void @llvm.amdgcn.s.barrier() #3
  fence acquire
  store i32 0, ptr %a
  fence release, !dbg !4
  call void @llvm.amdgcn.s.barrier()
  fence acquire, !dbg !5
  fence release
  store i32 1, ptr %a
  fence seq_cst
  tail call void @llvm.amdgcn.s.barrier()
  fence acquire
  ret void
}
";

    /// The fences directly around a barrier become the workgroup's, metadata kept; a fence
    /// elsewhere, or of another ordering, keeps its scope.
    #[test]
    fn the_fences_around_a_barrier_become_the_workgroups() {
        let (out, n) = scope_block_barriers(MODULE);
        assert_eq!(n, 2);
        let want = "\
define amdgpu_kernel void @k(ptr %a) unnamed_addr #0 {
start:
  fence syncscope(\"workgroup\") release
  tail call void @llvm.amdgcn.s.barrier() #3
  fence syncscope(\"workgroup\") acquire
  store i32 0, ptr %a
  fence syncscope(\"workgroup\") release, !dbg !4
  call void @llvm.amdgcn.s.barrier()
  fence syncscope(\"workgroup\") acquire, !dbg !5
  fence release
  store i32 1, ptr %a
  fence seq_cst
  tail call void @llvm.amdgcn.s.barrier()
  fence acquire
  ret void
}
";
        assert_eq!(out, want);
        // Scoping twice changes nothing more.
        assert_eq!(scope_block_barriers(&out), (out.clone(), 0));
    }

    /// A fence already scoped, or a `fence releaseX`-like prefix, is not a system-scope fence.
    #[test]
    fn only_system_scope_fences_match() {
        assert_eq!(
            scope("  fence release", RELEASE, WORKGROUP_RELEASE).as_deref(),
            Some("  fence syncscope(\"workgroup\") release")
        );
        assert_eq!(
            scope(
                "  fence syncscope(\"agent\") release",
                RELEASE,
                WORKGROUP_RELEASE
            ),
            None
        );
        assert_eq!(scope("  fence release_x", RELEASE, WORKGROUP_RELEASE), None);
    }
}

//! Layout specs `{"family": F, "params": {...}}` (the Gluon parameters of each family), read
//! into an owned [`LayoutSpec`], written back, and built for a shape with [`crate::families`].

use super::de::from_json_at;
use super::ser::to_json;
use super::{index, join, uint_list, Json, SpecError};
use crate::families::{
    self, AmdMfma, AmdWmma, Blocked, DotOperand, MmaParent, NvidiaMma, NvmmaShared, SwizzledShared,
};
use crate::{Label, LinearLayout, MAX_DIMS};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::boxed::Box;
use std::format;
use std::vec::Vec;

/// A layout family with its parameters (owned; see the table in `test-support/oracle/README.md`).
///
/// Read and written with serde: the variant is named by `family` (snake case), its fields are the
/// keys of `params` (unknown keys are errors; `null` is an absent optional parameter, and absent
/// ones are not written).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LayoutSpec {
    /// A blocked layout ([`crate::families::Blocked`]).
    Blocked {
        /// Consecutive elements per thread, per dimension.
        size_per_thread: Vec<u32>,
        /// Threads of a warp along each dimension.
        threads_per_warp: Vec<u32>,
        /// Warps along each dimension.
        warps_per_cta: Vec<u32>,
        /// The dimensions from fastest to slowest varying.
        order: Vec<u32>,
    },
    /// A slice of a distributed layout ([`crate::families::Slice`]).
    Slice {
        /// The removed dimension (of the parent's rank).
        dim: u32,
        /// The layout sliced.
        parent: Box<LayoutSpec>,
    },
    /// An NVIDIA mma accumulator ([`crate::families::NvidiaMma`]).
    NvidiaMma {
        /// `[major, minor]`: `[2, 0]` Ampere, `[3, 0]` Hopper (`[major]` reads as `[major, 0]`).
        #[serde(deserialize_with = "mma_version", serialize_with = "list")]
        version: [u32; 2],
        /// Warps along each dimension.
        warps_per_cta: Vec<u32>,
        /// The instruction's shape (`[16, 8]` for v2, `[16, N, 16]` for v3).
        instr_shape: Vec<u32>,
    },
    /// A dot operand ([`crate::families::DotOperand`]).
    DotOperand {
        /// 0 for A, 1 for B.
        operand_index: u32,
        /// The accumulator layout.
        #[serde(deserialize_with = "dot_parent")]
        parent: Box<LayoutSpec>,
        /// Consecutive elements along K per thread.
        k_width: u32,
    },
    /// An AMD MFMA accumulator ([`crate::families::AmdMfma`]).
    AmdMfma {
        /// 1 to 4.
        version: u32,
        /// `[M, N, K]`.
        instr_shape: Vec<u32>,
        /// Whether the accumulator is transposed.
        transposed: bool,
        /// Warps along each dimension.
        warps_per_cta: Vec<u32>,
        /// Absent: one tile per warp in every dimension.
        #[serde(skip_serializing_if = "Option::is_none")]
        tiles_per_warp: Option<Vec<u32>>,
        /// Absent: 32.
        #[serde(skip_serializing_if = "Option::is_none")]
        element_bitwidth: Option<u32>,
    },
    /// An AMD WMMA accumulator ([`crate::families::AmdWmma`]).
    AmdWmma {
        /// 1 to 3.
        version: u32,
        /// Whether the accumulator is transposed.
        transposed: bool,
        /// Warps along each dimension.
        warps_per_cta: Vec<u32>,
        /// `[M, N, K]`, M = N = 16.
        instr_shape: Vec<u32>,
    },
    /// Explicit register/lane/warp(/block) bases over a tensor of `shape`.
    Linear {
        /// The register bases, one coordinate per dimension each.
        register: Vec<Vec<u32>>,
        /// The lane bases.
        lane: Vec<Vec<u32>>,
        /// The warp bases.
        warp: Vec<Vec<u32>>,
        /// The block bases.
        #[serde(default, skip_serializing_if = "BlockBases::is_empty")]
        block: BlockBases,
        /// The tensor's shape.
        shape: Vec<u32>,
    },
    /// A swizzled shared layout ([`crate::families::SwizzledShared`]).
    SwizzledShared {
        /// Consecutive elements of a row that move together.
        vec: u32,
        /// Consecutive rows sharing one phase.
        per_phase: u32,
        /// The number of distinct phases.
        max_phase: u32,
        /// Dimensions from most minor to most major.
        order: Vec<u32>,
    },
    /// An NVMMA shared layout ([`crate::families::NvmmaShared`]).
    NvmmaShared {
        /// 0, 32, 64 or 128.
        swizzle_byte_width: u32,
        /// Bits per element.
        element_bitwidth: u32,
        /// Whether the contiguous dimension is the first.
        transposed: bool,
    },
    /// Explicit offset(/block) bases (a memory layout); `shape` absent: the tensor's shape.
    SharedLinear {
        /// The offset bases, one coordinate per dimension each.
        offset: Vec<Vec<u32>>,
        /// The block bases.
        #[serde(default, skip_serializing_if = "BlockBases::is_empty")]
        block: BlockBases,
        /// The tensor's shape (absent: the shape it is used with).
        #[serde(skip_serializing_if = "Option::is_none")]
        shape: Option<Vec<u32>>,
    },
}

/// The family names, as written in specs.
pub const FAMILIES: [&str; 10] = [
    "blocked",
    "slice",
    "nvidia_mma",
    "dot_operand",
    "amd_mfma",
    "amd_wmma",
    "linear",
    "swizzled_shared",
    "nvmma_shared",
    "shared_linear",
];

/// A `version` of `[major]` or `[major, minor]`, as `[major, minor]`.
fn mma_version<'de, D: Deserializer<'de>>(d: D) -> Result<[u32; 2], D::Error> {
    match Vec::<u32>::deserialize(d)?.as_slice() {
        [major] => Ok([*major, 0]),
        [major, minor] => Ok([*major, *minor]),
        _ => Err(D::Error::custom(
            "expected [major, minor], e.g. [2, 0] or [3, 0]",
        )),
    }
}

/// The parent of a dot operand: an accumulator-like layout.
fn dot_parent<'de, D: Deserializer<'de>>(d: D) -> Result<Box<LayoutSpec>, D::Error> {
    let parent = LayoutSpec::deserialize(d)?;
    if !matches!(
        parent,
        LayoutSpec::Blocked { .. }
            | LayoutSpec::NvidiaMma { .. }
            | LayoutSpec::AmdMfma { .. }
            | LayoutSpec::AmdWmma { .. }
    ) {
        return Err(D::Error::custom(format!(
            "a dot operand's parent must be blocked, nvidia_mma, amd_mfma or amd_wmma, not {}",
            parent.family()
        )));
    }
    Ok(Box::new(parent))
}

/// `[major, minor]` written as a list.
fn list<S: Serializer>(v: &[u32; 2], s: S) -> Result<S::Ok, S::Error> {
    v.as_slice().serialize(s)
}

/// The block bases of an explicit layout: absent or `null` is none, and none are not written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct BlockBases(pub Vec<Vec<u32>>);

impl BlockBases {
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de> Deserialize<'de> for BlockBases {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(BlockBases(Option::deserialize(d)?.unwrap_or_default()))
    }
}

impl LayoutSpec {
    /// Reads a spec (at JSON path `path`, for error messages; `""` at the root).
    pub fn from_json_at(v: &Json, path: &str) -> Result<Self, SpecError> {
        from_json_at(v, path)
    }

    /// Reads a spec at the root of a JSON document.
    pub fn from_json(v: &Json) -> Result<Self, SpecError> {
        Self::from_json_at(v, "")
    }

    /// The family name.
    pub fn family(&self) -> &'static str {
        match self {
            LayoutSpec::Blocked { .. } => "blocked",
            LayoutSpec::Slice { .. } => "slice",
            LayoutSpec::NvidiaMma { .. } => "nvidia_mma",
            LayoutSpec::DotOperand { .. } => "dot_operand",
            LayoutSpec::AmdMfma { .. } => "amd_mfma",
            LayoutSpec::AmdWmma { .. } => "amd_wmma",
            LayoutSpec::Linear { .. } => "linear",
            LayoutSpec::SwizzledShared { .. } => "swizzled_shared",
            LayoutSpec::NvmmaShared { .. } => "nvmma_shared",
            LayoutSpec::SharedLinear { .. } => "shared_linear",
        }
    }

    /// Whether the family is a memory (shared) layout rather than a distributed one.
    pub fn is_memory(&self) -> bool {
        matches!(
            self,
            LayoutSpec::SwizzledShared { .. }
                | LayoutSpec::NvmmaShared { .. }
                | LayoutSpec::SharedLinear { .. }
        )
    }

    /// Writes the spec back as `{"family": F, "params": {...}}`.
    pub fn to_json(&self) -> Json {
        to_json(self).expect("a layout spec holds only integers, booleans and lists of them")
    }

    /// The layout of a tensor of `shape` with Triton's semantics ([`crate::families`]).
    pub fn build(&self, shape: &[u32]) -> Result<LinearLayout, SpecError> {
        self.build_at(shape, "")
    }

    /// [`build`](Self::build) for a spec found at JSON path `path` (named in errors).
    pub fn build_at(&self, shape: &[u32], path: &str) -> Result<LinearLayout, SpecError> {
        let fail = |e| SpecError::layout(if path.is_empty() { "layout" } else { path }, e);
        match self {
            LayoutSpec::Slice { dim, parent } => {
                let rank = shape.len();
                if *dim as usize > rank || rank + 1 > MAX_DIMS {
                    return Err(SpecError::field(
                        &join(&join(path, "params"), "dim"),
                        format!("{dim} is not a dimension of a rank-{} parent", rank + 1),
                    ));
                }
                let mut parent_shape = shape.to_vec();
                parent_shape.insert(*dim as usize, 1);
                let parent_ll =
                    parent.build_at(&parent_shape, &join(&join(path, "params"), "parent"))?;
                families::slice::slice_of(&parent_ll, *dim).map_err(fail)
            }
            // The families that can parent a dot operand, built through their parameters.
            LayoutSpec::Blocked { .. }
            | LayoutSpec::NvidiaMma { .. }
            | LayoutSpec::AmdMfma { .. }
            | LayoutSpec::AmdWmma { .. } => {
                let ones = [1u32; MAX_DIMS];
                let built = match self.mma_parent(&ones[..shape.len().min(MAX_DIMS)]) {
                    Some(MmaParent::Blocked(l)) => l.to_linear_layout(shape),
                    Some(MmaParent::Nvidia(l)) => l.to_linear_layout(shape),
                    Some(MmaParent::Mfma(l)) => l.to_linear_layout(shape),
                    Some(MmaParent::Wmma(l)) => l.to_linear_layout(shape),
                    None => Err(crate::LayoutError::Incompatible {
                        what: "not a layout that can parent a dot operand",
                    }),
                };
                built.map_err(fail)
            }
            LayoutSpec::DotOperand {
                operand_index,
                k_width,
                parent,
            } => {
                let ones = [1u32; MAX_DIMS];
                let Some(mma) = parent.mma_parent(&ones[..shape.len().min(MAX_DIMS)]) else {
                    return Err(SpecError::field(
                        &join(&join(path, "params"), "parent"),
                        "a dot operand's parent must be blocked, nvidia_mma, amd_mfma or amd_wmma",
                    ));
                };
                DotOperand::new(*operand_index, *k_width, mma)
                    .to_linear_layout(shape)
                    .map_err(fail)
            }
            LayoutSpec::Linear {
                register,
                lane,
                warp,
                block,
                shape: own_shape,
            } => {
                let layout = explicit_layout(
                    &[
                        (Label::Register, register),
                        (Label::Lane, lane),
                        (Label::Warp, warp),
                        (Label::Block, &block.0),
                    ],
                    own_shape,
                    path,
                )?;
                layout.check_surjective().map_err(fail)?;
                families::linear_with_shape(&layout, shape).map_err(fail)
            }
            LayoutSpec::SwizzledShared {
                vec,
                per_phase,
                max_phase,
                order,
            } => SwizzledShared::new(*vec, *per_phase, *max_phase, order)
                .to_linear_layout(shape)
                .map_err(fail),
            LayoutSpec::NvmmaShared {
                swizzle_byte_width,
                element_bitwidth,
                transposed,
            } => NvmmaShared::new(*swizzle_byte_width, *element_bitwidth, *transposed)
                .to_linear_layout(shape)
                .map_err(fail),
            LayoutSpec::SharedLinear {
                offset,
                block,
                shape: own_shape,
            } => {
                let own = own_shape.as_deref().unwrap_or(shape);
                let layout = explicit_layout(
                    &[(Label::Offset, offset), (Label::Block, &block.0)],
                    own,
                    path,
                )?;
                layout.check_injective().map_err(fail)?;
                families::linear_with_shape(&layout, shape).map_err(fail)
            }
        }
    }

    /// The parameters of a spec that can parent a dot operand (blocked or an mma-like
    /// accumulator), borrowing its lists (`ones`: the default tiles per warp of an mfma layout,
    /// one per dimension).
    fn mma_parent<'a>(&'a self, ones: &'a [u32]) -> Option<MmaParent<'a>> {
        match self {
            LayoutSpec::Blocked {
                size_per_thread,
                threads_per_warp,
                warps_per_cta,
                order,
            } => Some(MmaParent::Blocked(Blocked::new(
                size_per_thread,
                threads_per_warp,
                warps_per_cta,
                order,
            ))),
            LayoutSpec::NvidiaMma {
                version,
                warps_per_cta,
                instr_shape,
            } => Some(MmaParent::Nvidia(NvidiaMma::new(
                version[0],
                version[1],
                warps_per_cta,
                instr_shape,
            ))),
            LayoutSpec::AmdMfma {
                version,
                instr_shape,
                transposed,
                warps_per_cta,
                tiles_per_warp,
                element_bitwidth,
            } => Some(MmaParent::Mfma(AmdMfma {
                version: *version,
                instr_shape,
                transposed: *transposed,
                warps_per_cta,
                tiles_per_warp: tiles_per_warp.as_deref().unwrap_or(ones),
                element_bitwidth: element_bitwidth.unwrap_or(32),
            })),
            LayoutSpec::AmdWmma {
                version,
                transposed,
                warps_per_cta,
                instr_shape,
            } => Some(MmaParent::Wmma(AmdWmma::new(
                *version,
                *transposed,
                warps_per_cta,
                instr_shape,
            ))),
            _ => None,
        }
    }
}

/// A layout from explicit bases per input dimension onto `dim0, …` of sizes `shape`.
fn explicit_layout(
    bases: &[(Label, &Vec<Vec<u32>>)],
    shape: &[u32],
    path: &str,
) -> Result<LinearLayout, SpecError> {
    let pp = join(path, "params");
    let mut layout = LinearLayout::empty();
    for (d, &size) in shape.iter().enumerate() {
        layout = layout
            .with_out_dim(Label::Dim(d as u8), size)
            .map_err(|e| SpecError::layout(&index(&join(&pp, "shape"), d), e))?;
    }
    for (label, list) in bases {
        let list_path = join(&pp, label.stem());
        layout = layout
            .with_in_dim(*label)
            .map_err(|e| SpecError::layout(&list_path, e))?;
        for (k, coords) in list.iter().enumerate() {
            layout = layout
                .with_basis(*label, coords)
                .map_err(|e| SpecError::layout(&index(&list_path, k), e))?;
        }
    }
    Ok(layout)
}

/// Reads a spec and builds it for a tensor of `shape` (Triton's `toLinearLayout`).
pub fn layout_from_spec(v: &Json, shape: &[u32]) -> Result<LinearLayout, SpecError> {
    LayoutSpec::from_json(v)?.build(shape)
}

/// Reads a shape `[d0, d1, ...]` at `path`.
pub fn shape_from_json(v: &Json, path: &str) -> Result<Vec<u32>, SpecError> {
    let shape = uint_list(v, path)?;
    if shape.is_empty() || shape.len() > MAX_DIMS {
        return Err(SpecError::field(
            path,
            format!(
                "a tensor has 1 to {MAX_DIMS} dimensions, not {}",
                shape.len()
            ),
        ));
    }
    Ok(shape)
}

#[cfg(test)]
mod tests {
    use super::super::parse_json;
    use super::*;
    use std::string::ToString;

    #[test]
    fn specs_round_trip_through_json() {
        let texts = [
            r#"{"family": "blocked", "params": {"size_per_thread": [4, 4], "threads_per_warp": [8, 4], "warps_per_cta": [8, 1], "order": [0, 1]}}"#,
            r#"{"family": "slice", "params": {"dim": 1, "parent": {"family": "nvidia_mma", "params": {"version": [2, 0], "warps_per_cta": [2, 2], "instr_shape": [16, 8]}}}}"#,
            r#"{"family": "dot_operand", "params": {"operand_index": 0, "parent": {"family": "amd_mfma", "params": {"version": 3, "instr_shape": [32, 32, 8], "transposed": true, "warps_per_cta": [1, 4]}}, "k_width": 4}}"#,
            r#"{"family": "amd_wmma", "params": {"version": 2, "transposed": false, "warps_per_cta": [2, 2], "instr_shape": [16, 16, 16]}}"#,
            r#"{"family": "linear", "params": {"register": [[0, 2]], "lane": [[1, 0], [0, 1]], "warp": [], "shape": [2, 4]}}"#,
            r#"{"family": "swizzled_shared", "params": {"vec": 2, "per_phase": 1, "max_phase": 16, "order": [1, 0]}}"#,
            r#"{"family": "nvmma_shared", "params": {"swizzle_byte_width": 128, "element_bitwidth": 16, "transposed": false}}"#,
            r#"{"family": "shared_linear", "params": {"offset": [[0, 1], [1, 1]]}}"#,
        ];
        for text in texts {
            let spec = LayoutSpec::from_json(&parse_json(text).unwrap()).unwrap();
            assert_eq!(spec.to_json().to_string(), text);
        }
    }

    #[test]
    fn typed_params_name_the_field_and_why() {
        let cases = [
            (
                r#"{"family": "blocked", "params": 3}"#,
                "`params`: expected an object, found a number",
            ),
            (
                r#"{"family": "blocked", "params": {"size_per_thread": 1, "threads_per_warp": [32], "warps_per_cta": [1], "order": [0]}}"#,
                "`params.size_per_thread`: expected an array, found a number",
            ),
            (
                r#"{"family": "amd_mfma", "params": {"version": 3, "instr_shape": [32, 32, 8], "transposed": true, "warps_per_cta": [1, 1], "element_bitwidth": 2.5}}"#,
                "`params.element_bitwidth`: expected a non-negative integer below 2^32, found 2.5",
            ),
            (
                r#"{"family": "slice", "params": {"dim": 0, "parent": {"family": "nvmma_shared", "params": {"swizzle_byte_width": 0, "element_bitwidth": 16, "transposed": "no"}}}}"#,
                "`params.parent.params.transposed`: expected true or false, found \"no\"",
            ),
            (
                r#"{"family": "shared_linear", "params": {"offset": [[1]], "shape": [2], "swizzle": 1}}"#,
                "`params.swizzle`: unknown parameter of a shared_linear layout (expected offset, block, shape)",
            ),
            (
                r#"{"family": "dot_operand", "params": {"operand_index": 0, "k_width": 2, "parent": {"family": "nvidia_mma", "params": {"version": [2, 0, 1], "warps_per_cta": [2, 2], "instr_shape": [16, 8]}}}}"#,
                "`params.parent.params.version`: expected [major, minor], e.g. [2, 0] or [3, 0]",
            ),
            (
                r#"{"family": "linear", "params": {"register": [], "lane": [[1]], "warp": [], "block": 5, "shape": [2]}}"#,
                "`params.block`: expected an array, found a number",
            ),
            (
                r#"{"family": "dot_operand", "params": {"operand_index": 0, "k_width": 2, "kw": 1}}"#,
                "`params.kw`: unknown parameter of a dot_operand layout (expected operand_index, parent, k_width)",
            ),
            (
                r#"{"family": 3, "params": {}}"#,
                "`family`: expected a string, found a number",
            ),
        ];
        for (text, message) in cases {
            let e = LayoutSpec::from_json(&parse_json(text).unwrap()).unwrap_err();
            assert_eq!(e.to_string(), message, "{text}");
        }
        // The families serde knows are the ones `FAMILIES` lists, in its order.
        let text = r#"{"family": "blocky", "params": {}}"#;
        let e = LayoutSpec::from_json(&parse_json(text).unwrap()).unwrap_err();
        let message = format!(
            "`family`: unknown layout family \"blocky\" (expected one of {})",
            FAMILIES.join(", ")
        );
        assert_eq!(e.to_string(), message);
        // `null` is an absent optional parameter.
        let text = r#"{"family": "linear", "params": {"register": [], "lane": [[1]], "warp": [], "block": null, "shape": [2]}}"#;
        let spec = LayoutSpec::from_json(&parse_json(text).unwrap()).unwrap();
        assert!(matches!(spec, LayoutSpec::Linear { ref block, .. } if block.is_empty()));
        // A one-number mma version is `[major, 0]`.
        let text = r#"{"family": "nvidia_mma", "params": {"version": [3], "warps_per_cta": [4, 1], "instr_shape": [16, 64, 16]}}"#;
        let spec = LayoutSpec::from_json(&parse_json(text).unwrap()).unwrap();
        assert!(matches!(
            spec,
            LayoutSpec::NvidiaMma {
                version: [3, 0],
                ..
            }
        ));
    }

    #[test]
    fn bad_specs_name_the_field() {
        let cases = [
            (r#"{"family": "blocky", "params": {}}"#, "`family`: unknown layout family \"blocky\""),
            (r#"{"family": "blocked"}"#, "`params`: missing"),
            (
                r#"{"family": "blocked", "params": {"size_per_thread": [1], "threads_per_warp": [32], "warps_per_cta": [4], "order": [0], "ordre": [0]}}"#,
                "`params.ordre`: unknown parameter of a blocked layout",
            ),
            (
                r#"{"family": "blocked", "params": {"size_per_thread": [1, "2"], "threads_per_warp": [32], "warps_per_cta": [4], "order": [0]}}"#,
                "`params.size_per_thread[1]`: expected a non-negative integer",
            ),
            (
                r#"{"family": "slice", "params": {"dim": 0, "parent": {"family": "slice", "params": {"dim": 0}}}}"#,
                "`params.parent.params.parent`: missing",
            ),
            (
                r#"{"family": "dot_operand", "params": {"operand_index": 0, "k_width": 2, "parent": {"family": "slice", "params": {"dim": 0, "parent": {"family": "blocked", "params": {"size_per_thread": [1, 1], "threads_per_warp": [32, 1], "warps_per_cta": [4, 1], "order": [0, 1]}}}}}}"#,
                "`params.parent`: a dot operand's parent must be blocked, nvidia_mma, amd_mfma or amd_wmma, not slice",
            ),
        ];
        for (text, message) in cases {
            let e = LayoutSpec::from_json(&parse_json(text).unwrap()).unwrap_err();
            assert!(e.to_string().starts_with(message), "{text}: got {e}");
        }
        let blocked = parse_json(
            r#"{"family": "blocked", "params": {"size_per_thread": [1, 3], "threads_per_warp": [8, 4], "warps_per_cta": [1, 1], "order": [1, 0]}}"#,
        )
        .unwrap();
        let e = layout_from_spec(&blocked, &[8, 8]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`layout`: invalid linear layout: blocked layout: `size_per_thread[1]` is 3, which is not a power of two"
        );
        let e = layout_from_spec(&blocked, &[8, 8, 8]).unwrap_err();
        assert!(
            e.to_string()
                .contains("`size_per_thread` is 2, entries long"),
            "{e}"
        );
    }
}

//! Reading an AMD GPU code object (the ELF that `rustc --target amdgcn-amd-amdhsa` links and
//! `hipModuleLoadData` loads): its target and its kernels with their parameter sizes.
//!
//! The kernels are listed in the code object's metadata: an ELF note of owner `AMDGPU` and type
//! `NT_AMDGPU_METADATA` (32) whose description is a MessagePack map (code object v3 and later):
//! `amdhsa.target` (`amdgcn-amd-amdhsa--gfx942`) and `amdhsa.kernels`, one map per kernel with
//! `.name`, `.args` (each with `.size`, `.offset` and `.value_kind`; kinds starting with
//! `hidden_` are arguments the runtime fills, not the caller) and
//! `.max_flat_workgroup_size`. The launcher checks launches against these entries as it checks
//! PTX launches against the `.entry` parameters.

use super::ptx::PtxEntry;

/// One kernel of a code object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeObjectKernel {
    /// The kernel's name (`#[no_mangle]` name; its descriptor symbol is `<name>.kd`).
    pub name: String,
    /// The byte size of each explicit argument, in order (the `hidden_*` ones left out).
    pub param_sizes: Vec<usize>,
    /// Most work-items per workgroup the kernel was compiled for, when the metadata says.
    pub max_flat_workgroup_size: Option<u32>,
    /// Static LDS (shared memory) of the kernel, in bytes, when the metadata says.
    pub group_segment_fixed_size: Option<u32>,
}

impl CodeObjectKernel {
    /// The kernel as a module entry (every parameter size known).
    pub fn entry(&self) -> PtxEntry {
        PtxEntry {
            name: self.name.clone(),
            param_sizes: self.param_sizes.iter().map(|&size| Some(size)).collect(),
        }
    }
}

/// What a code object's metadata says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeObjectInfo {
    /// `amdhsa.target`, e.g. `amdgcn-amd-amdhsa--gfx942` (with `:sramecc+`-style features).
    pub target: Option<String>,
    /// The kernels, in metadata order.
    pub kernels: Vec<CodeObjectKernel>,
}

impl CodeObjectInfo {
    /// The processor of [`target`](Self::target): `gfx942` of `amdgcn-amd-amdhsa--gfx942:xnack-`.
    pub fn processor(&self) -> Option<&str> {
        let target = self.target.as_deref()?;
        let processor = target.rsplit("--").next()?;
        processor.split(':').next().filter(|p| p.starts_with("gfx"))
    }
}

/// Why a code object could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeObjectError(pub String);

const EM_AMDGPU: u16 = 224;
const SHT_NOTE: u32 = 7;
const NT_AMDGPU_METADATA: u32 = 32;
/// Deepest MessagePack nesting read (the metadata nests four levels).
const MAX_DEPTH: usize = 16;

fn bad(reason: impl Into<String>) -> CodeObjectError {
    CodeObjectError(reason.into())
}

fn read<const N: usize>(bytes: &[u8], at: usize) -> Result<[u8; N], CodeObjectError> {
    bytes
        .get(at..at.checked_add(N).ok_or_else(|| bad("offset overflow"))?)
        .and_then(|slice| slice.try_into().ok())
        .ok_or_else(|| {
            bad(format!(
                "truncated: {N} bytes at offset {at} are past the end"
            ))
        })
}

fn u16_le(bytes: &[u8], at: usize) -> Result<u16, CodeObjectError> {
    read(bytes, at).map(u16::from_le_bytes)
}

fn u32_le(bytes: &[u8], at: usize) -> Result<u32, CodeObjectError> {
    read(bytes, at).map(u32::from_le_bytes)
}

fn u64_le(bytes: &[u8], at: usize) -> Result<usize, CodeObjectError> {
    let value = read(bytes, at).map(u64::from_le_bytes)?;
    usize::try_from(value).map_err(|_| bad("an offset does not fit the address space"))
}

/// The description of the `AMDGPU` metadata note of the ELF `bytes`.
fn metadata_note(bytes: &[u8]) -> Result<&[u8], CodeObjectError> {
    if bytes.get(..4) != Some(b"\x7fELF") {
        return Err(bad("not an ELF file (an HSA code object is one)"));
    }
    if bytes.get(4) != Some(&2) || bytes.get(5) != Some(&1) {
        return Err(bad("not a 64-bit little-endian ELF file"));
    }
    let machine = u16_le(bytes, 18)?;
    if machine != EM_AMDGPU {
        return Err(bad(format!(
            "ELF machine {machine} is not AMDGPU ({EM_AMDGPU}): not an amdgcn-amd-amdhsa code \
             object"
        )));
    }
    let section_table = u64_le(bytes, 0x28)?;
    let entry_size = u16_le(bytes, 0x3a)? as usize;
    let count = u16_le(bytes, 0x3c)? as usize;
    if count > 0 && entry_size < 64 {
        return Err(bad(format!("section headers of {entry_size} bytes")));
    }
    for index in 0..count {
        let header = section_table + index * entry_size;
        if u32_le(bytes, header + 4)? != SHT_NOTE {
            continue;
        }
        let offset = u64_le(bytes, header + 24)?;
        let size = u64_le(bytes, header + 32)?;
        let notes = offset
            .checked_add(size)
            .and_then(|end| bytes.get(offset..end))
            .ok_or_else(|| bad("a note section lies past the end of the file"))?;
        if let Some(description) = find_note(notes)? {
            return Ok(description);
        }
    }
    Err(bad(
        "no AMDGPU metadata note (NT_AMDGPU_METADATA): not a code object of version 3 or later",
    ))
}

/// The description of the note of owner `AMDGPU` and type `NT_AMDGPU_METADATA` in `notes`.
fn find_note(notes: &[u8]) -> Result<Option<&[u8]>, CodeObjectError> {
    let align = |n: usize| n.div_ceil(4) * 4;
    let mut at = 0;
    while at + 12 <= notes.len() {
        let name_size = u32_le(notes, at)? as usize;
        let description_size = u32_le(notes, at + 4)? as usize;
        let kind = u32_le(notes, at + 8)?;
        let name_at = at + 12;
        let description_at = name_at + align(name_size);
        let end = description_at + description_size;
        let name = notes
            .get(name_at..name_at + name_size)
            .ok_or_else(|| bad("a note's name lies past its section"))?;
        let description = notes
            .get(description_at..end)
            .ok_or_else(|| bad("a note's description lies past its section"))?;
        if name == b"AMDGPU\0" && kind == NT_AMDGPU_METADATA {
            return Ok(Some(description));
        }
        at = align(end);
    }
    Ok(None)
}

/// A MessagePack value, as far as the metadata needs (other kinds are read and kept as `Other`).
#[derive(Debug)]
enum Value<'a> {
    Int(i128),
    Str(&'a str),
    Array(Vec<Value<'a>>),
    Map(Vec<(Value<'a>, Value<'a>)>),
    Other,
}

impl<'a> Value<'a> {
    fn get(&self, key: &str) -> Option<&Value<'a>> {
        match self {
            Value::Map(pairs) => pairs
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if *s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&'a str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(n) => Some(*n),
            _ => None,
        }
    }
}

/// A MessagePack reader over `bytes`.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CodeObjectError> {
        let slice = self
            .at
            .checked_add(n)
            .and_then(|end| self.bytes.get(self.at..end))
            .ok_or_else(|| bad("the metadata ends inside a value"))?;
        self.at += n;
        Ok(slice)
    }

    fn uint(&mut self, n: usize) -> Result<u64, CodeObjectError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | b as u64))
    }

    fn int(&mut self, n: usize) -> Result<i128, CodeObjectError> {
        let raw = self.uint(n)?;
        let shift = 64 - 8 * n as u32;
        Ok((((raw << shift) as i64) >> shift) as i128)
    }

    fn string(&mut self, n: usize) -> Result<Value<'a>, CodeObjectError> {
        let text = std::str::from_utf8(self.take(n)?)
            .map_err(|_| bad("a metadata string is not UTF-8"))?;
        Ok(Value::Str(text))
    }

    fn array(&mut self, n: usize, depth: usize) -> Result<Value<'a>, CodeObjectError> {
        // Every element takes at least one byte: a count beyond the rest is malformed.
        if n > self.bytes.len() - self.at {
            return Err(bad("a metadata array is longer than the metadata"));
        }
        let items = (0..n)
            .map(|_| self.value(depth + 1))
            .collect::<Result<_, _>>()?;
        Ok(Value::Array(items))
    }

    fn map(&mut self, n: usize, depth: usize) -> Result<Value<'a>, CodeObjectError> {
        if n > self.bytes.len() - self.at {
            return Err(bad("a metadata map is longer than the metadata"));
        }
        let pairs = (0..n)
            .map(|_| Ok((self.value(depth + 1)?, self.value(depth + 1)?)))
            .collect::<Result<_, CodeObjectError>>()?;
        Ok(Value::Map(pairs))
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, CodeObjectError> {
        if depth > MAX_DEPTH {
            return Err(bad("the metadata nests deeper than a code object's"));
        }
        let tag = self.take(1)?[0];
        Ok(match tag {
            0x00..=0x7f => Value::Int(tag as i128),
            0x80..=0x8f => self.map((tag & 0x0f) as usize, depth)?,
            0x90..=0x9f => self.array((tag & 0x0f) as usize, depth)?,
            0xa0..=0xbf => self.string((tag & 0x1f) as usize)?,
            0xc0 | 0xc2 | 0xc3 => Value::Other,
            0xc4..=0xc6 => {
                let n = self.uint(1 << (tag - 0xc4))? as usize;
                self.take(n)?;
                Value::Other
            }
            0xc7..=0xc9 => {
                let n = self.uint(1 << (tag - 0xc7))? as usize;
                self.take(n + 1)?;
                Value::Other
            }
            0xca => {
                self.take(4)?;
                Value::Other
            }
            0xcb => {
                self.take(8)?;
                Value::Other
            }
            0xcc..=0xcf => Value::Int(self.uint(1 << (tag - 0xcc))? as i128),
            0xd0..=0xd3 => Value::Int(self.int(1 << (tag - 0xd0))?),
            0xd4..=0xd8 => {
                self.take((1 << (tag - 0xd4)) + 1)?;
                Value::Other
            }
            0xd9..=0xdb => {
                let n = self.uint(1 << (tag - 0xd9))? as usize;
                self.string(n)?
            }
            0xdc | 0xdd => {
                let n = self.uint(2 << (tag - 0xdc))? as usize;
                self.array(n, depth)?
            }
            0xde | 0xdf => {
                let n = self.uint(2 << (tag - 0xde))? as usize;
                self.map(n, depth)?
            }
            0xe0..=0xff => Value::Int((tag as i8) as i128),
            0xc1 => return Err(bad("the metadata holds the unused MessagePack tag 0xc1")),
        })
    }
}

/// The target and kernels of the code object `bytes` (see the [module docs](self)).
pub fn parse(bytes: &[u8]) -> Result<CodeObjectInfo, CodeObjectError> {
    let note = metadata_note(bytes)?;
    let mut reader = Reader { bytes: note, at: 0 };
    let root = reader.value(0)?;
    let target = root.get("amdhsa.target").and_then(Value::as_str);
    let Some(Value::Array(kernels)) = root.get("amdhsa.kernels") else {
        return Err(bad("the metadata has no `amdhsa.kernels` list"));
    };
    let number = |value: Option<&Value>, what: &str| -> Result<Option<u32>, CodeObjectError> {
        value
            .map(|v| {
                v.as_int()
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| bad(format!("`{what}` is not a 32-bit count")))
            })
            .transpose()
    };
    let mut out = Vec::with_capacity(kernels.len());
    for kernel in kernels {
        let name = kernel
            .get(".name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("a kernel of the metadata has no `.name`"))?;
        let args: &[Value] = match kernel.get(".args") {
            None => &[],
            Some(Value::Array(args)) => args,
            Some(_) => return Err(bad(format!("`.args` of kernel `{name}` is not a list"))),
        };
        let mut param_sizes = Vec::with_capacity(args.len());
        for (index, arg) in args.iter().enumerate() {
            let kind = arg.get(".value_kind").and_then(Value::as_str).unwrap_or("");
            if kind.starts_with("hidden_") {
                continue;
            }
            let size = number(arg.get(".size"), ".size")?.ok_or_else(|| {
                bad(format!(
                    "argument {index} of kernel `{name}` has no `.size`"
                ))
            })?;
            param_sizes.push(size as usize);
        }
        out.push(CodeObjectKernel {
            name: name.to_string(),
            param_sizes,
            max_flat_workgroup_size: number(
                kernel.get(".max_flat_workgroup_size"),
                ".max_flat_workgroup_size",
            )?,
            group_segment_fixed_size: number(
                kernel.get(".group_segment_fixed_size"),
                ".group_segment_fixed_size",
            )?,
        });
    }
    Ok(CodeObjectInfo {
        target: target.map(str::to_string),
        kernels: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Linked by rustc for gfx942 from `testdata/scale_fill.amdgcn.rs`.
    const SCALE_FILL: &[u8] = include_bytes!("testdata/scale_fill.gfx942.hsaco");

    #[test]
    fn kernels_and_target_of_a_rustc_code_object() {
        let info = parse(SCALE_FILL).unwrap();
        assert_eq!(info.target.as_deref(), Some("amdgcn-amd-amdhsa--gfx942"));
        assert_eq!(info.processor(), Some("gfx942"));
        let mut kernels = info.kernels.clone();
        kernels.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(kernels.len(), 2);
        assert_eq!(kernels[0].name, "fill");
        assert_eq!(kernels[0].param_sizes, [8, 8]);
        assert_eq!(kernels[1].name, "scale");
        assert_eq!(kernels[1].param_sizes, [8, 8, 4, 4]);
        assert_eq!(kernels[1].max_flat_workgroup_size, Some(1024));
        assert_eq!(kernels[1].group_segment_fixed_size, Some(0));
        assert_eq!(
            kernels[1].entry().param_sizes,
            [Some(8), Some(8), Some(4), Some(4)]
        );
    }

    #[test]
    fn hidden_arguments_are_left_out_and_wide_forms_read() {
        // {"amdhsa.kernels": [{".name": "k", ".args": [{".size": 8, ".value_kind":
        // "global_buffer"}, {".size": 8, ".value_kind": "hidden_block_count_x"}],
        // ".max_flat_workgroup_size": 256 (as uint16)}]} with the outer map as map16.
        let mut note = vec![0xde, 0x00, 0x01];
        note.push(0xae);
        note.extend_from_slice(b"amdhsa.kernels");
        note.extend_from_slice(&[0x91, 0x83, 0xa5]);
        note.extend_from_slice(b".name");
        note.extend_from_slice(&[0xd9, 0x01, b'k', 0xa5]);
        note.extend_from_slice(b".args");
        note.push(0x92);
        for kind in ["global_buffer", "hidden_block_count_x"] {
            note.extend_from_slice(&[0x82, 0xa5]);
            note.extend_from_slice(b".size");
            note.extend_from_slice(&[0x08, 0xab]);
            note.extend_from_slice(b".value_kind");
            note.push(0xa0 | kind.len() as u8);
            note.extend_from_slice(kind.as_bytes());
        }
        note.push(0xb8);
        note.extend_from_slice(b".max_flat_workgroup_size");
        note.extend_from_slice(&[0xcd, 0x01, 0x00]);
        let mut reader = Reader {
            bytes: &note,
            at: 0,
        };
        let root = reader.value(0).unwrap();
        assert_eq!(reader.at, note.len());
        let Some(Value::Array(kernels)) = root.get("amdhsa.kernels") else {
            panic!("{root:?}");
        };
        assert_eq!(kernels[0].get(".name").and_then(Value::as_str), Some("k"));
        // The same bytes as a code object's note go through `parse`'s kernel reading.
        let elf = with_note(SCALE_FILL, &note);
        let info = parse(&elf).unwrap();
        assert_eq!(info.target, None);
        assert_eq!(info.kernels.len(), 1);
        assert_eq!(info.kernels[0].param_sizes, [8]);
        assert_eq!(info.kernels[0].max_flat_workgroup_size, Some(256));
    }

    /// `elf` with the description of its metadata note replaced by `description` (appended at
    /// the end of the file, the note section pointed at it).
    fn with_note(elf: &[u8], description: &[u8]) -> Vec<u8> {
        let mut out = elf.to_vec();
        let table = u64_le(elf, 0x28).unwrap();
        let entry_size = u16_le(elf, 0x3a).unwrap() as usize;
        let count = u16_le(elf, 0x3c).unwrap() as usize;
        let header = (0..count)
            .map(|i| table + i * entry_size)
            .find(|&h| u32_le(elf, h + 4).unwrap() == SHT_NOTE)
            .unwrap();
        let mut note = Vec::new();
        note.extend_from_slice(&7u32.to_le_bytes());
        note.extend_from_slice(&(description.len() as u32).to_le_bytes());
        note.extend_from_slice(&NT_AMDGPU_METADATA.to_le_bytes());
        note.extend_from_slice(b"AMDGPU\0\0");
        note.extend_from_slice(description);
        let offset = out.len() as u64;
        out.extend_from_slice(&note);
        out[header + 24..header + 32].copy_from_slice(&offset.to_le_bytes());
        out[header + 32..header + 40].copy_from_slice(&(note.len() as u64).to_le_bytes());
        out
    }

    #[test]
    fn what_is_not_a_code_object_is_refused_with_the_reason() {
        let err = |bytes: &[u8]| parse(bytes).unwrap_err().0;
        assert!(err(b".version 8.0\n.target sm_80\n").contains("not an ELF file"));
        let mut x86 = SCALE_FILL.to_vec();
        x86[18..20].copy_from_slice(&62u16.to_le_bytes());
        assert!(err(&x86).contains("is not AMDGPU"), "{}", err(&x86));
        assert!(err(&SCALE_FILL[..0x30]).contains("truncated"));
        let mut no_kernels = vec![0x81, 0xa1, b'x', 0x00];
        assert!(err(&with_note(SCALE_FILL, &no_kernels)).contains("amdhsa.kernels"));
        no_kernels = vec![0x81, 0xa1, b'x'];
        assert!(err(&with_note(SCALE_FILL, &no_kernels)).contains("ends inside a value"));
        // An array that claims 2^32-1 elements in a few bytes of metadata.
        let huge = [0xdd, 0xff, 0xff, 0xff, 0xff, 0x00];
        assert!(err(&with_note(SCALE_FILL, &huge)).contains("longer than the metadata"));
        let deep = vec![0x91; 64];
        assert!(err(&with_note(SCALE_FILL, &deep)).contains("nests deeper"));
    }
}

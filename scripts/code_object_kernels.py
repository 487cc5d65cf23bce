#!/usr/bin/env python3
"""The kernels of an AMD HSA code object (ELF), read from their kernel descriptors.

    python3 scripts/code_object_kernels.py CODE_OBJECT.elf
    python3 scripts/code_object_kernels.py --aliases CODE_OBJECT.elf

prints one line per kernel, sorted by name: `<name> <private_segment_fixed_size>
<scratch_enabled> <flat_scratch_init> <dynamic_stack>` (bytes, then 0/1 flags), from the 64-byte
descriptor `<name>.kd` each kernel has in the symbol table (AMDGPU's "Kernel Descriptor" layout:
the private segment size at byte 4, COMPUTE_PGM_RSRC2 at byte 52, whose bit 0 enables the
private segment, and the kernel code properties at byte 56, whose bit 5 initialises the flat
scratch registers and bit 11 marks a dynamic stack). A kernel uses no scratch memory when the
size and the three flags are 0. scripts/check_amdgcn.sh reads it for every processor.

With --aliases it prints, instead, what would make a kernel impossible to find or to tell apart:
`nofunc <name>` for a descriptor without a function symbol `<name>`, and `alias <address>
<name> <name>...` for function symbols at one address (LLVM merges a function whose code equals
another's into an alias of it, without a descriptor of its own); nothing when there is neither.
"""
import struct
import sys

SHT_SYMTAB, SHT_DYNSYM = 2, 11
STT_FUNC = 2
EM_AMDGPU = 0xE0


def kernels(data):
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    (machine,) = struct.unpack_from("<H", data, 18)
    if machine != EM_AMDGPU:
        raise ValueError(f"e_machine {machine:#x}, not AMDGPU ({EM_AMDGPU:#x})")
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
    ]
    found = {}
    functions = {}
    for sh in sections:
        sh_type, sh_offset, sh_size, sh_link, sh_entsize = sh[1], sh[4], sh[5], sh[6], sh[9]
        if sh_type not in (SHT_SYMTAB, SHT_DYNSYM) or sh_entsize == 0:
            continue
        strtab_offset = sections[sh_link][4]
        for at in range(sh_offset, sh_offset + sh_size, sh_entsize):
            st_name, _info, _other, st_shndx, st_value, st_size = struct.unpack_from(
                "<IBBHQQ", data, at
            )
            end = data.index(b"\0", strtab_offset + st_name)
            name = data[strtab_offset + st_name : end].decode()
            if _info & 0xF == STT_FUNC and st_shndx != 0:
                functions[name] = st_value
            if not name.endswith(".kd") or st_size != 64 or st_shndx >= len(sections):
                continue
            section = sections[st_shndx]
            offset = st_value - section[3] + section[4]
            kd = data[offset : offset + 64]
            private_size, = struct.unpack_from("<I", kd, 4)
            rsrc2, = struct.unpack_from("<I", kd, 52)
            properties, = struct.unpack_from("<H", kd, 56)
            found[name[: -len(".kd")]] = (
                private_size,
                rsrc2 & 1,
                (properties >> 5) & 1,
                (properties >> 11) & 1,
            )
    return found, functions


def aliases(found, functions):
    """The `nofunc` and `alias` lines of --aliases."""
    lines = [f"nofunc {name}" for name in sorted(found) if name not in functions]
    at = {}
    for name, address in functions.items():
        at.setdefault(address, []).append(name)
    for address in sorted(at):
        if len(at[address]) > 1:
            lines.append(f"alias {address:#x} " + " ".join(sorted(at[address])))
    return lines


def main():
    args = sys.argv[1:]
    want_aliases = args[:1] == ["--aliases"]
    if want_aliases:
        args = args[1:]
    if len(args) != 1:
        sys.exit(__doc__)
    with open(args[0], "rb") as f:
        data = f.read()
    try:
        found, functions = kernels(data)
    except ValueError as e:
        sys.exit(f"{args[0]}: {e}")
    if not found:
        sys.exit(f"{args[0]}: no kernel descriptors (<name>.kd symbols of 64 bytes)")
    if want_aliases:
        for line in aliases(found, functions):
            print(line)
        return
    for name in sorted(found):
        print(name, *found[name])


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The kernels of an AMD HSA code object (ELF), read from their kernel descriptors.

    python3 scripts/code_object_kernels.py CODE_OBJECT.elf

prints one line per kernel, sorted by name: `<name> <private_segment_fixed_size>
<scratch_enabled> <flat_scratch_init> <dynamic_stack>` (bytes, then 0/1 flags), from the 64-byte
descriptor `<name>.kd` each kernel has in the symbol table (AMDGPU's "Kernel Descriptor" layout:
the private segment size at byte 4, COMPUTE_PGM_RSRC2 at byte 52, whose bit 0 enables the
private segment, and the kernel code properties at byte 56, whose bit 5 initialises the flat
scratch registers and bit 11 marks a dynamic stack). A kernel uses no scratch memory when the
size and the three flags are 0. scripts/check_amdgcn.sh reads it for the processors it has no
asm of; the asm's `.amdhsa_*` directives say the same (it checks that too where it has both).
"""
import struct
import sys

SHT_SYMTAB, SHT_DYNSYM = 2, 11
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
    return found


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    try:
        found = kernels(data)
    except ValueError as e:
        sys.exit(f"{sys.argv[1]}: {e}")
    if not found:
        sys.exit(f"{sys.argv[1]}: no kernel descriptors (<name>.kd symbols of 64 bytes)")
    for name in sorted(found):
        print(name, *found[name])


if __name__ == "__main__":
    main()

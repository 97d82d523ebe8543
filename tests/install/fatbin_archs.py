#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lists the CUDA kernels' architectures an ELF file carries: SASS (sm_XY) and PTX (compute_XY).

Reads the .nv_fatbin section of an object, static library member, shared object or executable
the way cuobjdump --list-elf / --list-ptx does, without needing cuobjdump (which the CUDA
toolkit on a build machine may lack). Each fatbin entry header holds its kind (1 = PTX,
2 = ELF/SASS) and its architecture (major*10 + minor).

  fatbin_archs.py FILE                 prints e.g. "sm_75 sm_86 compute_75 compute_90"
  fatbin_archs.py FILE --expect LIST   exit 1 unless FILE holds exactly what the CMake
                                       CUDA_ARCHITECTURES list LIST ("75;86-real;90") asks for
"""
import struct
import sys

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_ELF = 1, 2


def sections(data):
    """The ELF64 little-endian sections of data, as name -> bytes."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError("not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_offset = headers[shstrndx][4]
    out = {}
    for name_index, _type, _flags, _addr, offset, size, *_ in headers:
        end = data.index(b"\0", names_offset + name_index)
        out[data[names_offset + name_index:end].decode()] = data[offset:offset + size]
    return out


def elf_members(data):
    """ELF files in data: data itself, or each member of an ar archive (a static library)."""
    if data[:8] != b"!<arch>\n":
        return [data]
    members, pos = [], 8
    while pos + 60 <= len(data):
        size = int(data[pos + 48:pos + 58].decode().strip())
        body = data[pos + 60:pos + 60 + size]
        if body[:4] == b"\x7fELF":
            members.append(body)
        pos += 60 + size + (size & 1)
    return members


def fatbin_entries(blob):
    """(kind, arch) of every entry of every fatbin in an .nv_fatbin section."""
    entries, pos = [], 0
    while pos + 16 <= len(blob):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # fatbins are 8-byte aligned, padding between them
            continue
        entry, end = pos + header_size, pos + header_size + fat_size
        while entry < end:
            kind, _v, entry_header, padded_size = struct.unpack_from("<HHIQ", blob, entry)
            arch, = struct.unpack_from("<I", blob, entry + 28)
            entries.append((kind, arch))
            entry += entry_header + padded_size
        pos = end
    return entries


def archs(path):
    sass, ptx = set(), set()
    for member in elf_members(open(path, "rb").read()):
        blob = sections(member).get(".nv_fatbin")
        for kind, arch in fatbin_entries(blob or b""):
            (sass if kind == KIND_ELF else ptx if kind == KIND_PTX else set()).add(arch)
    return sass, ptx


def expected(cmake_list):
    """SASS and PTX that CMake's CUDA_ARCHITECTURES entries ask for: N, N-real, N-virtual."""
    sass, ptx = set(), set()
    for item in filter(None, cmake_list.split(";")):
        number, _, suffix = item.partition("-")
        if suffix not in ("", "real", "virtual"):
            raise ValueError(f"cannot read CUDA architecture {item!r}")
        if suffix != "virtual":
            sass.add(int(number))
        if suffix != "real":
            ptx.add(int(number))
    return sass, ptx


def describe(sass, ptx):
    return " ".join([f"sm_{a}" for a in sorted(sass)] + [f"compute_{a}" for a in sorted(ptx)])


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--expect"):
        sys.exit(__doc__)
    found = archs(sys.argv[1])
    print(describe(*found) or "no CUDA kernels")
    if len(sys.argv) == 4:
        want = expected(sys.argv[3])
        if found != want:
            print(f"fatbin_archs: {sys.argv[1]} holds {describe(*found) or 'no kernels'}, "
                  f"CUDA_ARCHITECTURES {sys.argv[3]} asks for {describe(*want)}", file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""zipcheck — an independent parser and checker of onnxzip archives.

    zipcheck.py ARCHIVE [--align N] [--no-crc] [--no-writer]

Written from PKWARE's APPNOTE with `struct` only (no zipfile, no onnxzip code):
finds the end of central directory record (and the zip64 locator and record),
walks the central directory and, for every entry, reads the LOCAL header at the
offset the central record gives, then checks what an onnxzip archive must be:

  * every entry STORED (method 0) in both headers, no encryption or
    data-descriptor flag, local flags == central flags;
  * local name == central name, local CRC-32 and sizes == central ones
    (zip64 extra fields resolved on both sides), compressed size == size;
  * data offset = local header offset + 30 + name length + extra length;
  * the CRC-32 of the data equals the recorded one (unless --no-crc);
  * the data of every entry whose name does not start with "__" starts at a
    multiple of N (default 64); a 0xD935 alignment extra field, where present,
    is u16 alignment + zero bytes and the data offset is a multiple of it;
  * entries are contiguous without gaps or overlap: the first local header at
    offset 0, each next one right after the previous data, the last data
    ending where the central directory starts, the central directory ending
    where the zip64 end record (or the end record) starts, nothing after the
    end record;
  * entry names are C identifiers, not "__"-prefixed (except __MODEL_PROTO
    and __PAD_<decimal> fillers), unique under ASCII down-casing;
  * "__MODEL_PROTO" exists, is the last central directory record and has the
    greatest local header offset;
  * unless --no-writer, what spec section 12.1 asks of a WRITER: the fixed
    header values (flags 0, or bit 11 for a non-ASCII name, time 0, date 0x0021, versions 0x032D and 10/45,
    attributes 0 / 0x81A40000, no comments), zip64 fields and end records
    exactly when needed, local extras [zip64][0xD935] with the minimal padding
    and Alignment = min(N, 32768), central extras [zip64][0x5A4F] whose
    XXH3-64 (computed with the system libxxhash) matches the data.

Exits 0 and prints a one-line summary, or prints every problem found and exits
1 (2 for usage errors). Other scripts import it: parse_archive(), check_bytes(),
check_file().
"""
import mmap
import re
import struct
import sys
import zlib
from dataclasses import dataclass, field
from typing import List, Optional, Tuple

SIG_LOCAL = 0x04034B50
SIG_CENTRAL = 0x02014B50
SIG_EOCD = 0x06054B50
SIG_ZIP64_EOCD = 0x06064B50
SIG_ZIP64_LOCATOR = 0x07064B50
EXTRA_ZIP64 = 0x0001
EXTRA_ALIGN = 0xD935
EXTRA_DIGEST = 0x5A4F
MODEL_ENTRY = "__MODEL_PROTO"
LOCAL_LEN = 30
CENTRAL_LEN = 46
EOCD_LEN = 22
ZIP64_EOCD_LEN = 56
ZIP64_LOCATOR_LEN = 20
FLAG_ENCRYPTED = 0x0001
FLAG_DATA_DESCRIPTOR = 0x0008
FLAG_STRONG_ENCRYPTION = 0x0040
C_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
FILLER = re.compile(r"__PAD_[0-9]{1,10}\Z")  # filler entries the writer may emit


class ZipFormatError(Exception):
    """The archive cannot be parsed far enough to check it."""


@dataclass
class Entry:
    index: int
    name: str
    name_bytes: bytes
    central_offset: int
    version_made: int
    version_needed: int
    flags: int
    method: int
    mtime: int
    mdate: int
    crc: int
    csize: int
    usize: int
    disk: int
    int_attr: int
    ext_attr: int
    header_offset: int
    central_extra: bytes
    comment: bytes
    # filled from the local header
    local_version_needed: int = 0
    local_flags: int = 0
    local_method: int = 0
    local_mtime: int = 0
    local_mdate: int = 0
    local_crc: int = 0
    local_csize: int = 0
    local_usize: int = 0
    local_name_bytes: bytes = b""
    local_extra: bytes = b""
    data_offset: int = 0
    align_extra: Optional[Tuple[int, int]] = None  # (alignment, padding bytes)
    central_marked: int = 0        # 32-bit central fields set to 0xFFFF(FFFF)
    central_zip64_len: Optional[int] = None
    local_marked: int = 0
    local_zip64_len: Optional[int] = None

    @property
    def data_end(self) -> int:
        return self.data_offset + self.csize


@dataclass
class Archive:
    size: int
    eocd_offset: int
    cd_offset: int
    cd_size: int
    count: int
    zip64: bool
    zip64_eocd_offset: Optional[int]
    comment: bytes
    entries: List[Entry] = field(default_factory=list)

    def by_name(self, name: str) -> Optional[Entry]:
        for e in self.entries:
            if e.name == name:
                return e
        return None


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def parse_extras(raw: bytes, where: str) -> List[Tuple[int, bytes]]:
    """Splits an extra field into (id, data) records; raises on a bad layout."""
    out = []
    pos = 0
    while pos < len(raw):
        if pos + 4 > len(raw):
            raise ZipFormatError(f"{where}: extra field has {len(raw) - pos} stray byte(s) "
                                 f"at its end (not a whole id+length header)")
        hid, hlen = struct.unpack_from("<HH", raw, pos)
        if pos + 4 + hlen > len(raw):
            raise ZipFormatError(f"{where}: extra record 0x{hid:04x} of {hlen} bytes overruns "
                                 f"the extra field")
        out.append((hid, bytes(raw[pos + 4:pos + 4 + hlen])))
        pos += 4 + hlen
    return out


def _zip64_values(extras, wants, where):
    """Reads the zip64 extra's 8-byte fields named in `wants`, in APPNOTE order."""
    recs = [d for (i, d) in extras if i == EXTRA_ZIP64]
    if len(recs) > 1:
        raise ZipFormatError(f"{where}: more than one zip64 extra field")
    if not wants:
        return {}, (recs[0] if recs else None)
    if not recs:
        raise ZipFormatError(f"{where}: fields {wants} are 0xFFFFFFFF but there is no zip64 extra")
    d = recs[0]
    out = {}
    pos = 0
    for w in wants:
        size = 4 if w == "disk" else 8
        if pos + size > len(d):
            raise ZipFormatError(f"{where}: zip64 extra of {len(d)} bytes lacks field '{w}'")
        out[w] = u32(d, pos) if size == 4 else u64(d, pos)
        pos += size
    return out, d


def find_eocd(b) -> int:
    """Offset of the end of central directory record: the last signature whose
    comment length reaches exactly the end of the file."""
    n = len(b)
    if n < EOCD_LEN:
        raise ZipFormatError(f"file of {n} bytes is too short for an end of central directory record")
    lo = max(0, n - EOCD_LEN - 0xFFFF)
    pos = n - EOCD_LEN
    sig = struct.pack("<I", SIG_EOCD)
    first_seen = None
    while pos >= lo:
        pos = b.rfind(sig, lo, pos + 4)
        if pos < 0:
            break
        if first_seen is None:
            first_seen = pos
        if pos + EOCD_LEN + u16(b, pos + 20) == n:
            return pos
        pos -= 1
    if first_seen is not None:
        raise ZipFormatError(f"end of central directory signature at {first_seen}, but its "
                             f"comment length does not reach the end of the file "
                             f"(trailing garbage or truncation)")
    raise ZipFormatError("no end of central directory record")


def parse_archive(b) -> Archive:
    """Parses the structure; raises ZipFormatError when it cannot go on."""
    n = len(b)
    eocd = find_eocd(b)
    (_sig, disk, cd_disk, cnt_disk, cnt, cd_size, cd_off, clen) = struct.unpack_from(
        "<IHHHHIIH", b, eocd)
    comment = bytes(b[eocd + EOCD_LEN:eocd + EOCD_LEN + clen])
    zip64 = False
    z64_off = None
    loc = eocd - ZIP64_LOCATOR_LEN
    if loc >= 0 and u32(b, loc) == SIG_ZIP64_LOCATOR:
        zip64 = True
        (_s, z64_disk, z64_off, total_disks) = struct.unpack_from("<IIQI", b, loc)
        if z64_disk != 0 or total_disks != 1:
            raise ZipFormatError(f"zip64 locator: multi-disk archive (disk {z64_disk}, "
                                 f"{total_disks} disks)")
        if z64_off + ZIP64_EOCD_LEN > loc:
            raise ZipFormatError(f"zip64 locator points at {z64_off}, past its own offset {loc}")
        if u32(b, z64_off) != SIG_ZIP64_EOCD:
            raise ZipFormatError(f"zip64 locator points at {z64_off}, where there is no zip64 "
                                 f"end of central directory record")
        (_s, rec_size, _vm, _vn, d64, cdd64, cntd64, cnt64, cds64, cdo64) = struct.unpack_from(
            "<IQHHIIQQQQ", b, z64_off)
        if z64_off + 12 + rec_size != loc:
            raise ZipFormatError(f"zip64 end record at {z64_off} of size {12 + rec_size} does "
                                 f"not end at the locator ({loc})")
        if d64 != 0 or cdd64 != 0 or cntd64 != cnt64:
            raise ZipFormatError("zip64 end record: multi-disk fields")
        for nm, v32, v64, mx in (("entry count", cnt, cnt64, 0xFFFF),
                                 ("entry count on disk", cnt_disk, cntd64, 0xFFFF),
                                 ("central directory size", cd_size, cds64, 0xFFFFFFFF),
                                 ("central directory offset", cd_off, cdo64, 0xFFFFFFFF)):
            if v32 != mx and v32 != v64:
                raise ZipFormatError(f"{nm}: end record says {v32}, zip64 end record {v64}")
        cnt, cd_size, cd_off = cnt64, cds64, cdo64
        cd_end_expected = z64_off
    else:
        if disk != 0 or cd_disk != 0 or cnt_disk != cnt:
            raise ZipFormatError("end record: multi-disk fields")
        if 0xFFFF in (cnt,) or 0xFFFFFFFF in (cd_size, cd_off):
            raise ZipFormatError("end record has zip64 marker values but no zip64 locator")
        cd_end_expected = eocd
    if cd_off + cd_size != cd_end_expected:
        raise ZipFormatError(f"central directory [{cd_off}, {cd_off + cd_size}) does not end "
                             f"where the {'zip64 ' if zip64 else ''}end record starts "
                             f"({cd_end_expected})")
    arc = Archive(size=n, eocd_offset=eocd, cd_offset=cd_off, cd_size=cd_size, count=cnt,
                  zip64=zip64, zip64_eocd_offset=z64_off, comment=comment)
    pos = cd_off
    for i in range(cnt):
        where = f"central record {i} at {pos}"
        if pos + CENTRAL_LEN > cd_off + cd_size:
            raise ZipFormatError(f"{where}: past the end of the central directory")
        (sig, vm, vn, fl, meth, mt, md, crc, cs, us, nl, el, cl, dsk, ia, ea, lho) = \
            struct.unpack_from("<IHHHHHHIIIHHHHHII", b, pos)
        if sig != SIG_CENTRAL:
            raise ZipFormatError(f"{where}: bad signature 0x{sig:08x}")
        end = pos + CENTRAL_LEN + nl + el + cl
        if end > cd_off + cd_size:
            raise ZipFormatError(f"{where}: overruns the central directory")
        nb = bytes(b[pos + CENTRAL_LEN:pos + CENTRAL_LEN + nl])
        try:
            name = nb.decode("utf-8")
        except UnicodeDecodeError:
            name = nb.decode("latin-1")
        where = f"central record {i} '{name}'"
        cextra = bytes(b[pos + CENTRAL_LEN + nl:pos + CENTRAL_LEN + nl + el])
        extras = parse_extras(cextra, where)
        wants = [w for (w, v, m) in (("usize", us, 0xFFFFFFFF), ("csize", cs, 0xFFFFFFFF),
                                     ("lho", lho, 0xFFFFFFFF), ("disk", dsk, 0xFFFF)) if v == m]
        vals, z64rec = _zip64_values(extras, wants, where)
        us = vals.get("usize", us)
        cs = vals.get("csize", cs)
        lho = vals.get("lho", lho)
        dsk = vals.get("disk", dsk)
        arc.entries.append(Entry(index=i, name=name, name_bytes=nb, central_offset=pos,
                                 version_made=vm, version_needed=vn, flags=fl, method=meth,
                                 mtime=mt, mdate=md, crc=crc, csize=cs, usize=us, disk=dsk,
                                 int_attr=ia, ext_attr=ea, header_offset=lho,
                                 central_extra=cextra,
                                 comment=bytes(b[pos + CENTRAL_LEN + nl + el:end]),
                                 central_marked=len(wants),
                                 central_zip64_len=None if z64rec is None else len(z64rec)))
        pos = end
    if pos != cd_off + cd_size:
        raise ZipFormatError(f"central directory has {cd_off + cd_size - pos} byte(s) after its "
                             f"{cnt} records")
    for e in arc.entries:
        where = f"entry '{e.name}': local header at {e.header_offset}"
        if e.header_offset + LOCAL_LEN > cd_off:
            raise ZipFormatError(f"{where}: past the start of the central directory ({cd_off})")
        (sig, vn, fl, meth, mt, md, crc, cs, us, nl, el) = struct.unpack_from(
            "<IHHHHHIIIHH", b, e.header_offset)
        if sig != SIG_LOCAL:
            raise ZipFormatError(f"{where}: bad signature 0x{sig:08x}")
        p = e.header_offset + LOCAL_LEN
        if p + nl + el > cd_off:
            raise ZipFormatError(f"{where}: name/extra overrun the data area")
        e.local_version_needed, e.local_flags, e.local_method = vn, fl, meth
        e.local_mtime, e.local_mdate, e.local_crc = mt, md, crc
        e.local_name_bytes = bytes(b[p:p + nl])
        e.local_extra = bytes(b[p + nl:p + nl + el])
        extras = parse_extras(e.local_extra, where)
        e.local_marked = (us == 0xFFFFFFFF) + (cs == 0xFFFFFFFF)
        if us == 0xFFFFFFFF or cs == 0xFFFFFFFF:
            # APPNOTE 4.5.3: the local zip64 extra holds BOTH sizes.
            vals, z64rec = _zip64_values(extras, ["usize", "csize"], where)
            us, cs = vals["usize"], vals["csize"]
        else:
            _v, z64rec = _zip64_values(extras, [], where)
        e.local_zip64_len = None if z64rec is None else len(z64rec)
        e.local_usize, e.local_csize = us, cs
        e.data_offset = p + nl + el
        for hid, d in extras:
            if hid == EXTRA_ALIGN:
                if len(d) < 2:
                    raise ZipFormatError(f"{where}: alignment extra of {len(d)} bytes")
                e.align_extra = (u16(d, 0), len(d) - 2)
                if any(d[2:]):
                    raise ZipFormatError(f"{where}: alignment extra padding is not all zero")
    return arc


def check_archive(b, arc: Archive, align: int = 64, check_crc: bool = True,
                  writer: bool = True) -> List[str]:
    """Returns the list of problems (empty when the archive is fine)."""
    errs = []
    seen_lower = {}
    for e in arc.entries:
        w = f"entry '{e.name}'"
        if e.method != 0 or e.local_method != 0:
            errs.append(f"{w}: method central {e.method} / local {e.local_method}, not STORED (0)")
        for side, fl in (("central", e.flags), ("local", e.local_flags)):
            if fl & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION):
                errs.append(f"{w}: {side} flags 0x{fl:04x} say encrypted")
            if fl & FLAG_DATA_DESCRIPTOR:
                errs.append(f"{w}: {side} flags 0x{fl:04x} say data descriptor")
        if e.flags != e.local_flags:
            errs.append(f"{w}: flags central 0x{e.flags:04x} != local 0x{e.local_flags:04x}")
        if e.local_name_bytes != e.name_bytes:
            errs.append(f"{w}: local name {e.local_name_bytes!r} != central name {e.name_bytes!r}")
        if e.local_crc != e.crc:
            errs.append(f"{w}: CRC local 0x{e.local_crc:08x} != central 0x{e.crc:08x}")
        if (e.local_csize, e.local_usize) != (e.csize, e.usize):
            errs.append(f"{w}: sizes local ({e.local_csize}, {e.local_usize}) != central "
                        f"({e.csize}, {e.usize})")
        if e.csize != e.usize:
            errs.append(f"{w}: stored entry with compressed size {e.csize} != size {e.usize}")
        if e.disk != 0:
            errs.append(f"{w}: disk number {e.disk}")
        # APPNOTE 4.5.3: zip64 fields appear only for marked 32-bit fields;
        # the local record holds both sizes.
        if e.central_zip64_len is not None and e.central_zip64_len != 8 * e.central_marked:
            errs.append(f"{w}: central zip64 extra of {e.central_zip64_len} bytes for "
                        f"{e.central_marked} marked field(s)")
        if e.local_zip64_len is not None and (e.local_marked == 0 or e.local_zip64_len != 16):
            errs.append(f"{w}: local zip64 extra of {e.local_zip64_len} bytes with "
                        f"{e.local_marked} marked size field(s)")
        if FILLER.match(e.name) and e.usize != 0:
            errs.append(f"{w}: filler entry holds {e.usize} bytes")
        if e.data_offset != e.header_offset + LOCAL_LEN + len(e.local_name_bytes) + len(e.local_extra):
            errs.append(f"{w}: data offset arithmetic")  # cannot happen: kept as a tripwire
        if e.data_end > arc.cd_offset:
            errs.append(f"{w}: data [{e.data_offset}, {e.data_end}) runs past the central "
                        f"directory at {arc.cd_offset}")
        elif check_crc:
            c = zlib.crc32(memoryview(b)[e.data_offset:e.data_end]) & 0xFFFFFFFF
            if c != e.crc:
                errs.append(f"{w}: data CRC-32 0x{c:08x} != recorded 0x{e.crc:08x}")
        if not e.name.startswith("__") and e.data_offset % align != 0:
            errs.append(f"{w}: data offset {e.data_offset} is not a multiple of {align} "
                        f"(offset % {align} = {e.data_offset % align})")
        if e.align_extra is not None:
            a = e.align_extra[0]
            if a == 0:
                pass  # "no claim" (filler entries of writers before spec 4.3's 32768)
            elif a & (a - 1):
                errs.append(f"{w}: alignment extra says {a}, not a power of two")
            elif e.data_offset % a != 0:
                errs.append(f"{w}: alignment extra says {a} but data offset is {e.data_offset}")
        if e.name != MODEL_ENTRY:
            if not C_IDENT.match(e.name):
                errs.append(f"{w}: name is not a C identifier")
            elif e.name.startswith("__") and not FILLER.match(e.name):
                errs.append(f"{w}: name starts with '__' (reserved)")
        low = e.name.lower()
        if low in seen_lower:
            errs.append(f"{w}: name collides (case-insensitively) with '{seen_lower[low]}'")
        else:
            seen_lower[low] = e.name
    # Layout: contiguous from 0 to the central directory.
    pos = 0
    for e in sorted(arc.entries, key=lambda x: x.header_offset):
        if e.header_offset != pos:
            kind = "gap" if e.header_offset > pos else "overlap"
            errs.append(f"entry '{e.name}': local header at {e.header_offset}, previous data ends "
                        f"at {pos} ({kind})")
        pos = max(pos, e.data_end)
    if pos != arc.cd_offset:
        errs.append(f"entries end at {pos}, central directory starts at {arc.cd_offset}")
    if not arc.entries:
        errs.append("no entries")
    else:
        m = [e for e in arc.entries if e.name == MODEL_ENTRY]
        if not m:
            errs.append(f"no {MODEL_ENTRY} entry")
        else:
            if arc.entries[-1].name != MODEL_ENTRY:
                errs.append(f"{MODEL_ENTRY} is central record {m[0].index}, not the last "
                            f"({len(arc.entries) - 1})")
            top = max(arc.entries, key=lambda x: x.header_offset)
            if top is not m[0]:
                errs.append(f"{MODEL_ENTRY} local header at {m[0].header_offset} is not the "
                            f"greatest (entry '{top.name}' at {top.header_offset})")
    if arc.count >= 0xFFFF and not arc.zip64:
        errs.append(f"{arc.count} entries without a zip64 end record")
    if writer:
        errs += check_writer(b, arc, align, check_crc)
    return errs


def _digest(data) -> int:
    import zipbuild  # libxxhash through ctypes
    return zipbuild.xxh3_64(data)


def check_writer(b, arc: Archive, align: int, check_crc: bool) -> List[str]:
    """What the spec (section 12.1) requires of a conforming writer beyond what
    readers check: fixed header values, zip64 exactly when needed, one minimal
    alignment field recording min(A, 32768), a correct XXH3-64 digest field
    last in each central extra area, no comments."""
    errs = []
    M32 = 0xFFFFFFFF
    want_a = min(align, 32768)
    for e in arc.entries:
        w = f"entry '{e.name}' (writer)"
        lx = parse_extras(e.local_extra, w)
        cx = parse_extras(e.central_extra, w)
        big = e.usize >= M32
        uses64 = any(i == EXTRA_ZIP64 for i, _ in lx + cx)
        if (e.local_zip64_len is not None) != big:
            errs.append(f"{w}: local zip64 field {'missing' if big else 'present'} for size {e.usize}")
        c_need = 8 * (2 * big + (e.header_offset >= M32))
        if (e.central_zip64_len or 0) != c_need:
            errs.append(f"{w}: central zip64 field of {e.central_zip64_len} bytes, needed {c_need}")
        vn = 45 if uses64 else 10
        utf8 = 0 if e.name.isascii() else 0x800  # spec 7.3: bit 11 on exactly the non-ASCII names
        fixed = [("flags", e.flags, utf8), ("local flags", e.local_flags, utf8),
                 ("mod time", e.mtime, 0), ("local mod time", e.local_mtime, 0),
                 ("mod date", e.mdate, 0x21), ("local mod date", e.local_mdate, 0x21),
                 ("version made by", e.version_made, 0x032D),
                 ("version needed", e.version_needed, vn),
                 ("local version needed", e.local_version_needed, vn),
                 ("internal attributes", e.int_attr, 0),
                 ("external attributes", e.ext_attr, 0x81A40000),
                 ("comment length", len(e.comment), 0)]
        for what, got, want in fixed:
            if got != want:
                errs.append(f"{w}: {what} 0x{got:x}, expected 0x{want:x}")
        ids = [i for i, _ in lx]
        filler = bool(FILLER.match(e.name))
        if ids not in ([EXTRA_ZIP64, EXTRA_ALIGN], [EXTRA_ALIGN]) and \
                not (e.name == MODEL_ENTRY and ids in ([], [EXTRA_ZIP64])):
            errs.append(f"{w}: local extra fields {[hex(i) for i in ids]}, expected "
                        f"[zip64][0xd935]")
        if e.align_extra is not None:
            a, pad = e.align_extra
            if filler:  # spec 4.3: data at a multiple of A (65536), 32768 recorded
                if a != 32768:
                    errs.append(f"{w}: filler alignment field records {a}, expected 32768")
                if e.data_offset % align:
                    errs.append(f"{w}: filler data offset {e.data_offset} is not a multiple "
                                f"of {align}")
            elif not e.name.startswith("__") or e.name == MODEL_ENTRY:
                if a != want_a:
                    errs.append(f"{w}: alignment field records {a}, expected {want_a}")
                if e.data_offset % align == 0 and pad >= align:
                    errs.append(f"{w}: {pad} padding bytes, not the minimum (< {align})")
        cids = [i for i, _ in cx]
        if cids and cids[-1] != EXTRA_DIGEST or cids.count(EXTRA_DIGEST) > 1 or \
                [i for i in cids if i not in (EXTRA_ZIP64, EXTRA_DIGEST)]:
            errs.append(f"{w}: central extra fields {[hex(i) for i in cids]}, expected "
                        f"[zip64][0x5a4f]")
        for i, d in cx:
            if i != EXTRA_DIGEST:
                continue
            if len(d) != 10 or d[0] != 1 or d[1] != 1:
                errs.append(f"{w}: digest field {d.hex()} is not (size 10, major 1, XXH3-64)")
            elif check_crc and e.data_end <= arc.cd_offset:
                got = u64(d, 2)
                want = _digest(memoryview(b)[e.data_offset:e.data_end])
                if got != want:
                    errs.append(f"{w}: XXH3-64 field {got:016x} != XXH3-64 of the data {want:016x}")
    offs = [e.header_offset for e in arc.entries]
    if offs != sorted(offs):
        errs.append("central records are not in local-header order (12.1 #3)")
    need64 = arc.count >= 0xFFFF or arc.cd_offset >= M32 or arc.cd_size >= M32
    if arc.zip64 != need64:
        errs.append(f"zip64 end records {'present' if arc.zip64 else 'missing'}; needed: {need64}")
    if arc.comment:
        errs.append(f"archive comment of {len(arc.comment)} bytes")
    return errs


def check_bytes(b, align: int = 64, check_crc: bool = True,
                writer: bool = True) -> Tuple[Optional[Archive], List[str]]:
    try:
        arc = parse_archive(b)
    except (ZipFormatError, struct.error) as ex:
        return None, [str(ex)]
    return arc, check_archive(b, arc, align, check_crc, writer)


def check_file(path: str, align: int = 64, check_crc: bool = True,
               writer: bool = True) -> Tuple[Optional[Archive], List[str]]:
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        if size == 0:
            return None, ["empty file"]
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return check_bytes(m, align, check_crc, writer)


def main(argv) -> int:
    args = list(argv[1:])
    align = 64
    check_crc = True
    writer = True
    path = None
    while args:
        a = args.pop(0)
        if a == "--align" and args:
            align = int(args.pop(0))
        elif a == "--no-crc":
            check_crc = False
        elif a == "--no-writer":
            writer = False
        elif path is None and not a.startswith("-"):
            path = a
        else:
            print("usage: zipcheck.py ARCHIVE [--align N] [--no-crc] [--no-writer]", file=sys.stderr)
            return 2
    if path is None or align <= 0:
        print("usage: zipcheck.py ARCHIVE [--align N] [--no-crc] [--no-writer]", file=sys.stderr)
        return 2
    arc, errs = check_file(path, align, check_crc, writer)
    if errs:
        for e in errs[:50]:
            print(f"zipcheck: {path}: {e}", file=sys.stderr)
        if len(errs) > 50:
            print(f"zipcheck: {path}: ... and {len(errs) - 50} more", file=sys.stderr)
        return 1
    print(f"zipcheck: {path}: ok: {len(arc.entries)} entries, align {align}, "
          f"{'zip64' if arc.zip64 else 'zip32'}, central directory at {arc.cd_offset}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

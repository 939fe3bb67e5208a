#!/usr/bin/python3
"""zipbuild — a small zip archive BUILDER for crafting test archives.

Independent of onnxzip's writer: written from PKWARE's APPNOTE with `struct`.
An archive is a list of BEntry (in file order); build() lays them out and
returns the archive bytes. Every field a test may want to get wrong is an
explicit attribute, so that a crafted archive has exactly one defect.

from_archive() reads an existing archive (with zipcheck's parser) back into
BEntry objects carrying every header field and extra record, so that
build(from_archive(x)) == x is a check of the builder itself, and a test can
start from a real onnxzip archive and change one thing.

Extra fields are lists of (header id, bytes) records or raw unframed bytes,
where two placeholders are filled at build time:
  ALIGN  — the 0xD935 alignment record (u16 alignment + zero padding) sized so
           that the data starts at a multiple of BEntry.align (+ pad_delta);
  ZIP64  — the 0x0001 zip64 record, holding the fields that overflow (or those
           forced by BEntry.zip64_local / zip64_central).
A 0x5A4F ("OZ") digest record (u8 format major, u8 algorithm, u64 XXH3-64) is
recomputed from the data unless BEntry.keep_digest is set.
"""
import ctypes
import ctypes.util
import struct
import zlib
from dataclasses import dataclass, field
from typing import List, Optional, Union

import zipcheck

ALIGN = "ALIGN"
ZIP64 = "ZIP64"
EXTRA_DIGEST = 0x5A4F
DIGEST_XXH3_64 = 1
M32 = 0xFFFFFFFF
M16 = 0xFFFF

_xxh = None


def xxh3_64(data: bytes) -> int:
    """XXH3-64 (seed 0) through the system libxxhash, an independent implementation."""
    global _xxh
    if _xxh is None:
        name = ctypes.util.find_library("xxhash") or "libxxhash.so.0"
        _xxh = ctypes.CDLL(name)
        _xxh.XXH3_64bits.restype = ctypes.c_uint64
        _xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return _xxh.XXH3_64bits(bytes(data), len(data))


Extra = Union[str, tuple]


@dataclass
class BEntry:
    name: str
    data: bytes
    align: int = 64                     # 0 or 1: no alignment record
    pad_delta: int = 0                  # added to the computed padding (mod align)
    align_id: int = 0xD935              # header id of the padding record
    align_value: Optional[int] = None   # u16 recorded in it; None: min(align, 32768)
    local_name: Optional[bytes] = None  # None: same as the central name
    method: int = 0
    local_method: Optional[int] = None
    flags: int = 0
    local_flags: Optional[int] = None
    crc: Optional[int] = None           # None: computed from data
    local_crc: Optional[int] = None     # None: same as central
    csize: Optional[int] = None         # None: len(data), in both headers
    local_size: Optional[int] = None    # None: same as central (both sizes)
    version_made: int = 0x032D
    version_needed: Optional[int] = None   # None: 45 if zip64 else 10
    local_version_needed: Optional[int] = None
    mtime: int = 0
    mdate: int = 0x0021
    int_attr: int = 0
    ext_attr: int = 0o100644 << 16
    comment: bytes = b""
    local_extras: List[Extra] = field(default_factory=lambda: [ALIGN])
    central_extras: List[Extra] = field(default_factory=list)
    zip64_local: bool = False           # force a zip64 record (sizes 0xFFFFFFFF) locally
    zip64_central: bool = False         # force sizes (and offset) through zip64 centrally
    keep_digest: bool = False
    header_offset: Optional[int] = None  # None: where it was written (the CD's value)
    raw_local: Optional[bytes] = None   # replaces the whole local header (+name+extra)
    prefix: bytes = b""                 # bytes written before the local header (a gap)
    # zip64 surgery: which 32-bit fields are written as 0xFFFFFFFF ("usize",
    # "csize", "lho"; None: as needed) and the zip64 record's exact content
    # (None: the marked fields' true values in APPNOTE order).
    central_marks: Optional[set] = None
    central_zip64_data: Optional[bytes] = None
    local_marks: Optional[set] = None
    local_zip64_data: Optional[bytes] = None

    @property
    def name_bytes(self) -> bytes:
        return self.name.encode("utf-8")


def _digest_record(d: bytes, data: bytes) -> bytes:
    if len(d) >= 10 and d[1] == DIGEST_XXH3_64:
        return d[:2] + struct.pack("<Q", xxh3_64(data)) + d[10:]
    return d


def _extras_bytes(recs, e: BEntry, fill_zip64, fill_align) -> bytes:
    out = b""
    for r in recs:
        if r == ALIGN:
            out += fill_align(len(out))
        elif r == ZIP64:
            out += fill_zip64()
        elif isinstance(r, (bytes, bytearray)):  # raw bytes, not framed
            out += bytes(r)
        else:
            hid, d = r
            if hid == EXTRA_DIGEST and not e.keep_digest:
                d = _digest_record(d, e.data)
            out += struct.pack("<HH", hid, len(d)) + d
    return out


def local_header(e: BEntry, offset: int) -> bytes:
    """The local header + name + extra for `e` written at `offset`."""
    if e.raw_local is not None:
        return e.raw_local
    name = e.local_name if e.local_name is not None else e.name_bytes
    size = e.local_size if e.local_size is not None else (
        e.csize if e.csize is not None else len(e.data))
    if e.local_marks is not None:
        marks = set(e.local_marks)
    else:
        marks = {"usize", "csize"} if (e.zip64_local or size >= M32) else set()
    z64 = bool(marks) or e.local_zip64_data is not None
    crc = e.crc if e.crc is not None else zlib.crc32(e.data) & M32
    lcrc = e.local_crc if e.local_crc is not None else crc
    recs = list(e.local_extras)
    if z64 and ZIP64 not in recs:
        recs.insert(0, ZIP64)

    def fill_zip64():
        if not z64:
            return b""
        d = e.local_zip64_data
        if d is None:  # APPNOTE 4.5.3: the local record holds both sizes
            d = struct.pack("<QQ", size, size)
        return struct.pack("<HH", zipcheck.EXTRA_ZIP64, len(d)) + d

    def fill_align(before: int) -> bytes:
        if e.align <= 1:
            return b""
        # the data offset when the alignment record has no padding:
        rest = _extras_bytes(recs[recs.index(ALIGN) + 1:], e, fill_zip64, lambda _: b"")
        base = offset + 30 + len(name) + before + 6 + len(rest)
        pad = (-base) % e.align
        pad += e.pad_delta
        if pad < 0:
            pad += e.align
        val = min(e.align, 32768) if e.align_value is None else e.align_value
        return struct.pack("<HHH", e.align_id, 2 + pad, val) + b"\0" * pad

    extra = _extras_bytes(recs, e, fill_zip64, fill_align)
    vn = e.local_version_needed if e.local_version_needed is not None else (
        e.version_needed if e.version_needed is not None else (45 if z64 else 10))
    fl = e.local_flags if e.local_flags is not None else e.flags
    meth = e.local_method if e.local_method is not None else e.method
    return struct.pack("<IHHHHHIIIHH", zipcheck.SIG_LOCAL, vn, fl, meth, e.mtime, e.mdate, lcrc,
                       M32 if "csize" in marks else size, M32 if "usize" in marks else size,
                       len(name), len(extra)) + name + extra


def central_record(e: BEntry, offset: int) -> bytes:
    size = e.csize if e.csize is not None else len(e.data)
    crc = e.crc if e.crc is not None else zlib.crc32(e.data) & M32
    if e.central_marks is not None:
        marks = set(e.central_marks)
    else:
        marks = set()
        if e.zip64_central or size >= M32:
            marks |= {"usize", "csize"}
        if e.zip64_central or offset >= M32:
            marks.add("lho")
    z64 = bool(marks) or e.central_zip64_data is not None
    recs = list(e.central_extras)
    if z64 and ZIP64 not in recs:
        recs.insert(0, ZIP64)

    def fill_zip64():
        d = e.central_zip64_data
        if d is None:
            d = b""
            for f, v in (("usize", size), ("csize", size), ("lho", offset)):
                if f in marks:
                    d += struct.pack("<Q", v)
        return struct.pack("<HH", zipcheck.EXTRA_ZIP64, len(d)) + d if z64 else b""

    extra = _extras_bytes(recs, e, fill_zip64, lambda _: b"")
    vn = e.version_needed if e.version_needed is not None else (45 if z64 else 10)
    name = e.name_bytes
    return struct.pack("<IHHHHHHIIIHHHHHII", zipcheck.SIG_CENTRAL, e.version_made, vn, e.flags,
                       e.method, e.mtime, e.mdate, crc, M32 if "csize" in marks else size,
                       M32 if "usize" in marks else size, len(name), len(extra), len(e.comment),
                       0, e.int_attr, e.ext_attr, M32 if "lho" in marks else offset) + \
        name + extra + e.comment


@dataclass
class Layout:
    """What build() wrote where (for tests that patch afterwards)."""
    header_offsets: List[int]
    data_offsets: List[int]
    cd_offset: int
    cd_size: int
    eocd_offset: int
    zip64_eocd_offset: Optional[int]


def build(entries: List[BEntry], cd_order: Optional[List[int]] = None,
          zip64_eocd: Optional[bool] = None, eocd_count: Optional[int] = None,
          locator_offset: Optional[int] = None, comment: bytes = b"", trailing: bytes = b"",
          cd_offset_delta: int = 0, eocd32_count: Optional[int] = None,
          layout: Optional[list] = None) -> bytes:
    """Lays entries out in list order; the central directory lists them in
    cd_order (default: the same order). Returns the archive bytes; when
    `layout` is a list, a Layout is appended to it."""
    out = bytearray()
    hdr_offs, data_offs = [], []
    for e in entries:
        out += e.prefix
        off = len(out)
        lh = local_header(e, off)
        hdr_offs.append(off)
        out += lh
        data_offs.append(len(out))
        out += e.data
    cd_off = len(out)
    order = cd_order if cd_order is not None else list(range(len(entries)))
    for i in order:
        e = entries[i]
        off = e.header_offset if e.header_offset is not None else hdr_offs[i]
        out += central_record(e, off)
    cd_size = len(out) - cd_off
    n = len(order)
    cd_off_rec = cd_off + cd_offset_delta
    if zip64_eocd is None:
        zip64_eocd = n >= M16 or cd_off_rec >= M32 or cd_size >= M32
    z64_off = None
    if zip64_eocd:
        z64_off = len(out)
        out += struct.pack("<IQHHIIQQQQ", zipcheck.SIG_ZIP64_EOCD, 44, 0x032D, 45, 0, 0, n, n,
                           cd_size, cd_off_rec)
        loc = z64_off if locator_offset is None else locator_offset
        out += struct.pack("<IIQI", zipcheck.SIG_ZIP64_LOCATOR, 0, loc, 1)
    cnt = eocd_count if eocd_count is not None else n
    if eocd32_count is not None:
        c16 = eocd32_count
        out_cd_size = M32 if cd_size >= M32 else cd_size
        out_cd_off = M32 if cd_off_rec >= M32 else cd_off_rec
    elif zip64_eocd:
        c16 = M16 if cnt >= M16 else cnt
        out_cd_size = M32 if cd_size >= M32 else cd_size
        out_cd_off = M32 if cd_off_rec >= M32 else cd_off_rec
    else:
        c16, out_cd_size, out_cd_off = cnt, cd_size, cd_off_rec
    eocd = len(out)
    out += struct.pack("<IHHHHIIH", zipcheck.SIG_EOCD, 0, 0, c16, c16, out_cd_size, out_cd_off,
                       len(comment)) + comment
    out += trailing
    if layout is not None:
        layout.append(Layout(hdr_offs, data_offs, cd_off, cd_size, eocd, z64_off))
    return bytes(out)


def _split_extras(raw: bytes, where: str, align_placeholder: bool) -> List[Extra]:
    out: List[Extra] = []
    for hid, d in zipcheck.parse_extras(raw, where):
        if hid == zipcheck.EXTRA_ZIP64:
            out.append(ZIP64)
        elif hid == zipcheck.EXTRA_ALIGN and align_placeholder:
            out.append(ALIGN)
        else:
            out.append((hid, d))
    return out


def from_archive(b: bytes):
    """Returns (entries in file order, Archive) for an existing archive; the
    entries carry each header's fields and extra records."""
    arc = zipcheck.parse_archive(b)
    ents = []
    for z in sorted(arc.entries, key=lambda x: x.header_offset):
        lx = _split_extras(z.local_extra, z.name, True)
        al = 0
        if ALIGN in lx:
            al = struct.unpack_from("<H", z.local_extra,
                                    _find_extra(z.local_extra, zipcheck.EXTRA_ALIGN) + 4)[0]
        e = BEntry(name=z.name, data=bytes(b[z.data_offset:z.data_end]), align=al,
                   method=z.method, local_method=z.local_method if z.local_method != z.method else None,
                   flags=z.flags, local_flags=z.local_flags if z.local_flags != z.flags else None,
                   crc=None if z.crc == zlib.crc32(b[z.data_offset:z.data_end]) & M32 else z.crc,
                   local_crc=z.local_crc if z.local_crc != z.crc else None,
                   version_made=z.version_made, version_needed=z.version_needed,
                   local_version_needed=z.local_version_needed, mtime=z.mtime, mdate=z.mdate,
                   int_attr=z.int_attr, ext_attr=z.ext_attr, comment=z.comment,
                   local_extras=lx, central_extras=_split_extras(z.central_extra, z.name, False),
                   keep_digest=False)
        cs32, us32 = struct.unpack_from("<II", b, z.central_offset + 20)
        lho32 = struct.unpack_from("<I", b, z.central_offset + 42)[0]
        e.central_marks = {f for f, v in (("csize", cs32), ("usize", us32), ("lho", lho32))
                           if v == M32}
        lcs32, lus32 = struct.unpack_from("<II", b, z.header_offset + 18)
        e.local_marks = {f for f, v in (("csize", lcs32), ("usize", lus32)) if v == M32}
        ents.append((z.index, e))
    cd_order_src = [i for i, _ in ents]
    # cd_order: positions (in file order) listed in central-directory order
    pos_of = {idx: p for p, idx in enumerate(cd_order_src)}
    cd_order = [pos_of[i] for i in range(len(ents))]
    return [e for _, e in ents], cd_order, arc


def _find_extra(raw: bytes, want: int) -> int:
    pos = 0
    while pos + 4 <= len(raw):
        hid, hlen = struct.unpack_from("<HH", raw, pos)
        if hid == want:
            return pos
        pos += 4 + hlen
    raise KeyError(want)

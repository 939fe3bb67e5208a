/*
 * onnxzip.h — the onnxzip library, and its manual.
 *
 * onnxzip reads and writes ONNX archives: one zip file used as a key-value
 * store, in which every large tensor payload is a STORED entry whose first
 * data byte is aligned (64 bytes by default), and the serialized
 * onnx.ModelProto is the last entry, named "__MODEL_PROTO". The format is
 * specified in spec/onnxzip-format.md (format version ONNXZIP_FORMAT_VERSION).
 *
 * The API has three parts:
 *   1. Errors      — every function returns 0 or a negative onnxzip_status;
 *                    onnxzip_last_error() gives the message, naming the file,
 *                    entry or tensor and the byte offset at fault.
 *   2. Reading     — onnxzip_open*() maps an archive, validates its structure
 *                    (without reading weight bytes) and hands out tensor views
 *                    that point into the mapping: no copy, no parse of weights.
 *   3. Writing     — onnxzip_writer_*() builds an archive entry by entry into
 *                    a temporary file that is renamed into place only when
 *                    complete; onnxzip_pack() converts a classic .onnx model.
 *
 * Conventions, for every function below unless its comment says otherwise:
 *   - A pointer returned by the library is owned by the handle it came from
 *     and stays valid until that handle is closed. Never free it.
 *   - Strings are NUL-terminated UTF-8.
 *   - Passing NULL where an object is required returns ONNXZIP_EINVAL.
 *   - On failure, *out parameters are set to NULL/0, nothing is left on disk,
 *     and onnxzip_last_error() describes the failure.
 *   - Outputs (spec 12.3) are written to a temporary file beside the target
 *     and renamed into place. An output never is a file the call reads
 *     (ONNXZIP_ESAMEFILE; compared by device and inode, so hard links and
 *     symbolic links count), nor an existing device, FIFO, socket or
 *     directory, directly or through a symbolic link (ONNXZIP_ENOTREG; never
 *     opened, so a FIFO cannot block). Both are checked before anything is
 *     written and again just before the rename. A symbolic link to a regular
 *     file at the output path is replaced by the new file; the file it
 *     pointed to is left unchanged. Missing parent directories of an output
 *     are created as `mkdir -p` does (mode 0777 & ~umask; symbolic links to
 *     directories followed; existing directories untouched), before
 *     the temporary file, and those the call created are removed again
 *     when it fails (each only while still empty). A parent that exists but
 *     is not a directory is ONNXZIP_EIO, the message naming it.
 *   - No call writes an archive that onnxzip_verify() would refuse: every
 *     writer (onnxzip_writer_finish() and so save() in Python, pack, repack,
 *     onnxzip_fetch_tensors(), onnxzip_update_model()) refuses a model
 *     without what verify requires of it (ir_version > 0, an opset_import
 *     from ir_version 3 on, a graph) with ONNXZIP_EPROTO and verify's own
 *     message for the archive ("PATH: entry '__MODEL_PROTO': no ..."),
 *     leaving no output (the target, if any, unchanged). So do
 *     onnxzip_unpack() and onnxzip_view_model() (and its writers), which
 *     write the model out: verify's message for the archive they read.
 *   - Handles are not thread-safe for concurrent mutation; a reader handle may
 *     be used by several threads at once once onnxzip_model_proto() has been
 *     called (before that, the lazy parse is the only mutation).
 */
#ifndef ONNXZIP_ONNXZIP_H
#define ONNXZIP_ONNXZIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ONNXZIP_BUILDING_LIBRARY) && defined(_WIN32)
#define ONNXZIP_API __declspec(dllexport)
#elif defined(ONNXZIP_BUILDING_LIBRARY) && defined(__GNUC__)
#define ONNXZIP_API __attribute__((visibility("default")))
#else
#define ONNXZIP_API
#endif

/* ---------------------------------------------------------------------------
 * Versions
 * ------------------------------------------------------------------------- */

#define ONNXZIP_VERSION_MAJOR 0
#define ONNXZIP_VERSION_MINOR 1
#define ONNXZIP_VERSION_PATCH 0
#define ONNXZIP_VERSION_NUMBER \
    (ONNXZIP_VERSION_MAJOR * 10000 + ONNXZIP_VERSION_MINOR * 100 + ONNXZIP_VERSION_PATCH)

/* Version of the archive format this library writes (spec/onnxzip-format.md). */
#define ONNXZIP_FORMAT_VERSION_MAJOR 1
#define ONNXZIP_FORMAT_VERSION_MINOR 2

/* The library's version as "MAJOR.MINOR.PATCH"; a static string. */
ONNXZIP_API const char *onnxzip_version(void);

/* The library's version as ONNXZIP_VERSION_NUMBER, for run-time checks. */
ONNXZIP_API unsigned onnxzip_version_number(void);

/* Parts a build may leave out (meson options of the same names), so that a
 * runtime can embed a reader and writer that needs only libc, zlib (or
 * libdeflate) and xxHash. Reading, writing, pack, unpack, set-model, views,
 * verify and extract are always built. */
typedef enum onnxzip_feature {
    /* onnxzip_model_proto(): the model parsed by protobuf-c (-Dprotobuf_c).
     * Without it that function fails with ONNXZIP_EUNSUPPORTED and
     * <onnxzip/onnx.pb-c.h> is not installed; the model's bytes
     * (onnxzip_model_bytes()) serve any other protobuf library. */
    ONNXZIP_FEATURE_MODEL_PROTO = 1,
    /* onnxzip_repack(): foreign and compressed zips read through libzip
     * (-Dlibzip). Without it onnxzip_repack() fails with
     * ONNXZIP_EUNSUPPORTED. */
    ONNXZIP_FEATURE_REPACK = 2,
    /* CRC-32 computed by libdeflate (-Dlibdeflate), else by zlib: the same
     * results, libdeflate's faster. */
    ONNXZIP_FEATURE_LIBDEFLATE = 3,
    /* The writer and every function that writes files (pack, unpack,
     * set-model, repack, extract, views, onnxzip_writer_*). Every build has
     * it since the Windows port covers the writer (until then the Windows
     * build was the reader alone); kept so that callers testing it work. */
    ONNXZIP_FEATURE_WRITE = 4,
    /* onnxzip_open_url(): archives read over HTTP(S) range requests,
     * through libcurl (-Dcurl). Without it onnxzip_open_url() fails with
     * ONNXZIP_EUNSUPPORTED. */
    ONNXZIP_FEATURE_REMOTE = 5,
    /* Package paths compared under Unicode NFC and full case folding, as
     * macOS and Windows compare names (libunistring, -Dunistring). Without
     * it, writers and unpack refuse non-ASCII package paths
     * (ONNXZIP_EUNSUPPORTED) rather than risk two that are one file. */
    ONNXZIP_FEATURE_UNICODE_PATHS = 6,
    /* OpenSSF Model Signing signatures: onnxzip_trust_*, onnxzip_signed_*,
     * onnxzip_sign() (-Dsigning: OpenSSL's libcrypto and jansson). Without
     * it every one of those calls fails with ONNXZIP_EUNSUPPORTED, its
     * message saying the library was built without signing. */
    ONNXZIP_FEATURE_SIGNING = 7
} onnxzip_feature;

/* 1 when this build of the library has `feature`, else 0 (also for values
 * it does not know). */
ONNXZIP_API int onnxzip_has_feature(onnxzip_feature feature);

/* ---------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------- */

/* X(name, value, description). Values are stable ABI: never renumbered. */
#define ONNXZIP_STATUS_MAP(X)                                                     \
    X(OK,         0,  "success")                                                 \
    X(EINVAL,    -1,  "invalid argument")                                        \
    X(ENOMEM,    -2,  "out of memory")                                           \
    X(EIO,       -3,  "input/output error")                                      \
    X(ENOTZIP,   -4,  "not a zip archive")                                       \
    X(ENOTONNXZIP, -5, "zip archive, but not an onnxzip archive")                \
    X(ETRUNC,    -6,  "archive is truncated")                                    \
    X(EEOCD,     -7,  "bad end of central directory record")                     \
    X(EZIP64,    -8,  "bad zip64 record or field")                               \
    X(ECDIR,     -9,  "bad central directory entry")                             \
    X(ELOCAL,    -10, "local header disagrees with the central directory")       \
    X(EBOUNDS,   -11, "entry lies outside the archive's data area")              \
    X(EOVERLAP,  -12, "entries overlap")                                         \
    X(EMETHOD,   -13, "entry is not stored (compressed)")                        \
    X(EFLAGS,    -14, "unsupported entry flags (encryption or data descriptor)") \
    X(EALIGN,    -15, "tensor entry is not aligned")                             \
    X(ENAME,     -16, "invalid entry name")                                      \
    X(EDUPNAME,  -17, "duplicate entry name (case-insensitive)")                 \
    X(ENOMODEL,  -18, "no __MODEL_PROTO entry")                                  \
    X(EMODELPOS, -19, "__MODEL_PROTO is not the last entry")                     \
    X(EPROTO,    -20, "malformed ONNX protobuf")                                 \
    X(EREF,      -21, "tensor references a missing entry")                       \
    X(ERANGE,    -22, "tensor data lies outside its entry")                      \
    X(ESIZE,     -23, "tensor byte length does not match its dims and type")     \
    X(ECRC,      -24, "CRC-32 mismatch")                                         \
    X(EDIGEST,   -25, "XXH3 digest mismatch")                                    \
    X(ELIMIT,    -26, "a documented limit is exceeded")                          \
    X(ENOTFOUND, -27, "not found")                                               \
    X(EDTYPE,    -28, "unsupported tensor data type")                            \
    X(EUNSUPPORTED, -29, "unsupported input")                                    \
    X(EPATH,     -30, "external data path refused")                            \
    X(EBUSY,     -31, "archive is being updated by another process")       \
    X(ESAMEFILE, -32, "output would overwrite one of the inputs")            \
    X(ENOTREG,   -33, "not a regular file")                                   \
    X(ESTALE,    -34, "view is stale: its archive changed")                    \
    X(ENETWORK,  -35, "network transfer failed")                              \
    X(ETIMEOUT,  -36, "network transfer timed out")                           \
    X(EHTTP,     -37, "HTTP server answered with an error status")            \
    X(ENORANGE,  -38, "HTTP server does not serve byte ranges")               \
    X(EREPLY,    -39, "HTTP reply does not match the request")                \
    X(ECHANGED,  -40, "remote file changed while it was being read")        \
    X(ECANCELED, -41, "canceled by the caller's progress callback")          \
    X(EPACKAGE,  -42, "bad package manifest")                                 \
    X(EUNSIGNED, -43, "package is not signed")                                \
    X(ESIGNATURE, -44, "signature is not trusted")                            \
    X(EBUNDLE,   -45, "malformed or unsupported signature bundle")            \
    X(EMISMATCH, -46, "package differs from its signed statement")

typedef enum onnxzip_status {
#define ONNXZIP_STATUS_ENUM_(name, value, desc) ONNXZIP_##name = (value),
    ONNXZIP_STATUS_MAP(ONNXZIP_STATUS_ENUM_)
#undef ONNXZIP_STATUS_ENUM_
} onnxzip_status;

/* A static description of a status code ("unknown error" for other values). */
ONNXZIP_API const char *onnxzip_strerror(int status);

/* The status code's name, e.g. "ONNXZIP_EALIGN"; a static string. */
ONNXZIP_API const char *onnxzip_status_name(int status);

/* Details of the last failure in the calling thread. Every failing call
 * overwrites it; successful calls leave it alone. */
typedef struct onnxzip_error_info {
    int status;          /* the negative onnxzip_status returned */
    const char *message; /* full sentence: "FILE: entry 'w' at offset 4160: ...";
                          * one line: control characters (C0, DEL, C1) and
                          * bytes that are not UTF-8 appear as \xHH */
    int64_t offset;      /* byte offset in the file at fault, or -1 */
    /* Appended in 0.1 (the struct is only ever returned by pointer, so
     * fields are only appended, never reordered): */
    int sys_errno;       /* the errno of the failing system call (ENOENT,
                          * EACCES, ENOSPC...), or 0 when the failure is not
                          * a system call's. A directory where a file is
                          * expected is ONNXZIP_ENOTREG with EISDIR, whether
                          * it is read (open) or written (outputs). */
    const char *path;    /* the file that system call was about, or NULL */
} onnxzip_error_info;

/* The calling thread's last error. Never NULL. The pointers inside stay valid
 * until the next failing onnxzip call in this thread. */
ONNXZIP_API const onnxzip_error_info *onnxzip_last_error(void);

/* ---------------------------------------------------------------------------
 * Reading
 * ------------------------------------------------------------------------- */

typedef struct onnxzip_archive onnxzip_archive;

/* Flags for onnxzip_open*(). */
enum {
    /* Also check every entry's CRC-32 and XXH3 digest at open (reads every
     * byte: O(archive)); not the model fields onnxzip_verify() requires.
     * Without it, open reads only headers and the model. */
    ONNXZIP_OPEN_VERIFY = 1u << 0,
    /* Access hints, given to madvise() for the file's mapping once it is
     * validated (not for the side files of a classic model, nor for
     * onnxzip_open_buffer(), which maps nothing). Advice only: the
     * kernel may ignore it, and views are the same either way. tools/bench
     * measures each on the first pass over all weights (README, Performance). */
    /* MADV_SEQUENTIAL: larger readahead, pages freed behind; for one pass in
     * file order (e.g. copying the weights to a device). */
    ONNXZIP_OPEN_SEQUENTIAL = 1u << 1,
    /* MADV_WILLNEED: start reading the whole file into the page cache now, in
     * the background; open itself does not wait. */
    ONNXZIP_OPEN_WILLNEED = 1u << 2,
    /* MADV_POPULATE_READ (Linux 5.14+; ignored before): read and map every
     * page during open, so that open is O(file) and no later touch faults. */
    ONNXZIP_OPEN_POPULATE = 1u << 3,
    /* MADV_HUGEPAGE: map with huge pages where the file system and kernel
     * support it for files (fewer TLB misses on random access). */
    ONNXZIP_OPEN_HUGEPAGE = 1u << 4
};

/* Opens the model at `path`: maps the whole file read-only, validates it and
 * builds the tensor index. No weight byte is read. Three layouts are
 * recognized by content (see onnxzip_layout):
 *   - an onnxzip archive: the zip structure and the model's references are
 *     validated (spec §"Reader requirements"); views point into the mapping;
 *   - a classic single-file .onnx: views point at the raw_data bytes inside the
 *     mapped protobuf;
 *   - a classic external-data .onnx: each side file is opened under the path
 *     rules of onnxzip_pack() (relative, no "..", regular files with one
 *     link, beneath the model's directory; symbolic links only where ONNX
 *     Runtime follows them, as in a Hugging Face cache), mapped once, and
 *     views point into those mappings.
 *
 * On success *out is a handle to release with onnxzip_close(); on failure
 * *out is NULL. Returns 0, or a negative onnxzip_status naming the first
 * violation found. Files that are not onnxzip archives are named for what
 * they are:
 *   - a file that starts with a zip local header but has no end records:
 *     ONNXZIP_ETRUNC, with the size its local headers imply (a cut download);
 *   - a zip without a __MODEL_PROTO entry: ONNXZIP_ENOTONNXZIP, whatever
 *     onnxzip layout rule its entries break first;
 *   - an ONNX model zip of another tool or re-zipped (deflated entries, data
 *     descriptors, the model not last, unaligned data, tensor names as entry
 *     names, "__MODEL_PROTO.onnx"; the message names tf2onnx's large-model
 *     zip and PyTorch's ZIP_ARCHIVE export by their model entry):
 *     the status of the first such reason (ONNXZIP_EMETHOD, ONNXZIP_EFLAGS,
 *     ONNXZIP_EMODELPOS, ONNXZIP_EALIGN, ONNXZIP_EOVERLAP, ONNXZIP_ENAME,
 *     ONNXZIP_ENOTONNXZIP), the message saying so and naming the conversion
 *     (onnxzip_repack()) when repack can do it;
 *   - a missing file: ONNXZIP_EIO with sys_errno ENOENT; a directory:
 *     ONNXZIP_ENOTREG with sys_errno EISDIR (onnxzip_error_info);
 *   - a missing external data file: ONNXZIP_ENOTFOUND with sys_errno ENOENT
 *     and the file's path.
 *
 * mmap hazard (spec §11.4): views are zero-copy pointers into a MAP_SHARED
 * mapping, so they show the file as it is now. If another process truncates
 * the file, touching a view past the new end raises SIGBUS (the signal, not
 * an error code); if it rewrites bytes in place, views show the new bytes.
 * Hence:
 *   - never truncate or rewrite an archive in place while it may be mapped;
 *     replace it by writing a new file and renaming it over the old one (what
 *     onnxzip_writer_finish(), pack, repack and unpack do): the mapping keeps
 *     the old file, and the file may be closed, renamed or unlinked freely;
 *   - onnxzip_update_model() (set-model) is the one sanctioned in-place
 *     change: it never truncates below, nor writes over, tensor payloads, so
 *     views of tensors stay valid (the handle keeps the old model);
 *   - a runtime that holds a handle for long can call onnxzip_check() before
 *     touching weights again. The handle keeps a descriptor of the file
 *     (one per handle) for that purpose. */
ONNXZIP_API int onnxzip_open(const char *path, unsigned flags, onnxzip_archive **out);

/* As onnxzip_open() on an open file descriptor, read from offset 0. The fd
 * stays the caller's: it is not closed, and may be closed right after return.
 * Local headers are read with pread() under POSIX_FADV_RANDOM, so that a cold
 * open reads only the pages holding them; the advice is set back to
 * POSIX_FADV_NORMAL afterwards, on the fd's open file description (which the
 * caller shares). */
ONNXZIP_API int onnxzip_open_fd(int fd, unsigned flags, onnxzip_archive **out);

/* As onnxzip_open() on `size` bytes at `data`, which are BORROWED, not copied:
 * they must stay valid and unchanged until onnxzip_close(). Tensor views then
 * point into `data`. */
ONNXZIP_API int onnxzip_open_buffer(const void *data, size_t size, unsigned flags,
                                    onnxzip_archive **out);

/* Unmaps and frees everything the handle owns: every pointer obtained from it
 * becomes invalid. Sets *a to NULL. NULL or *a == NULL is a harmless no-op. */
ONNXZIP_API void onnxzip_close(onnxzip_archive **a);

/* Checks that the file mapped by `a` is still as it was at open, with one
 * fstat() (and one stat() of the path for handles opened by path): cheap,
 * reads no data. Returns 0 when unchanged (always for onnxzip_open_buffer()
 * handles), or ONNXZIP_ETRUNC when
 *   - the file is now shorter than the mapping: touching a view past the new
 *     end raises SIGBUS;
 *   - its size or modification time changed (rewritten in place; this
 *     includes an onnxzip_update_model(), after which tensor views stay valid
 *     but the handle's model is the old one);
 *   - the path no longer names the mapped file (replaced by rename, or
 *     removed): the views are safe but show the old file.
 * In every ETRUNC case, close and reopen. For classic external-data models
 * only the .onnx file is checked, not the side files. */
ONNXZIP_API int onnxzip_check(onnxzip_archive *a);

/* Where a tensor's bytes live. */
typedef enum onnxzip_storage {
    ONNXZIP_STORAGE_ENTRY = 0,   /* in an archive entry (data_location EXTERNAL) */
    ONNXZIP_STORAGE_INLINE = 1,  /* in raw_data inside the model protobuf */
    ONNXZIP_STORAGE_TYPED = 2,   /* in typed fields (float_data, ...): data is NULL */
    ONNXZIP_STORAGE_FILE = 3     /* in a classic external-data side file, mapped */
} onnxzip_storage;

/* What onnxzip_open*() found, by content (never by file name). */
typedef enum onnxzip_layout {
    ONNXZIP_LAYOUT_ARCHIVE = 0,  /* an onnxzip archive */
    ONNXZIP_LAYOUT_CLASSIC = 1,  /* a classic .onnx protobuf, every tensor inline */
    ONNXZIP_LAYOUT_EXTERNAL = 2  /* a classic .onnx protobuf with external data files */
} onnxzip_layout;

/* Where in the model a tensor was found. */
typedef enum onnxzip_tensor_kind {
    ONNXZIP_KIND_INITIALIZER = 0,  /* GraphProto.initializer (any graph level) */
    ONNXZIP_KIND_ATTRIBUTE = 1,    /* AttributeProto.t / .tensors (e.g. Constant) */
    ONNXZIP_KIND_SPARSE_VALUES = 2,
    ONNXZIP_KIND_SPARSE_INDICES = 3
} onnxzip_tensor_kind;

/* A view of one tensor. Every pointer is owned by the archive handle and
 * valid until onnxzip_close(). `data` is read-only and not necessarily
 * resident: entry and side-file payloads point into the mapped files (or the
 * caller's buffer), never copied; inline raw_data points into the model bytes
 * (see onnxzip_model_bytes(): the mapping for a classic .onnx, the handle's
 * copy of __MODEL_PROTO for an archive). */
typedef struct onnxzip_tensor {
    const char *name;        /* TensorProto.name ("" when absent; a C string:
                                up to a NUL byte the name may hold) */
    int32_t data_type;       /* ONNX TensorProto.DataType value */
    uint32_t ndims;          /* number of dims */
    const int64_t *dims;     /* ndims values, each >= 0 */
    const void *data;        /* first byte, or NULL for ONNXZIP_STORAGE_TYPED */
    uint64_t nbytes;         /* payload length in bytes (0 for TYPED) */
    uint64_t file_offset;    /* offset of data in its file (the archive, the
                                .onnx, or the side file); 0 for TYPED */
    const char *entry;       /* STORAGE_ENTRY: the archive entry's name;
                                STORAGE_FILE: the external_data location;
                                otherwise NULL */
    uint32_t alignment;      /* largest power of two (<= 65536) dividing the
                                data's address in memory (so a runtime knows
                                when it must copy); 0 for TYPED. The
                                address's, not the file's: it may differ
                                between two opens of one archive (an inline
                                tensor lies in the handle's copy of the
                                model); onnxzip_listing() and `onnxzip ls`
                                report the file offset's */
    onnxzip_storage storage;
    onnxzip_tensor_kind kind;
    uint32_t graph_depth;    /* 0 = main graph or function, 1+ = subgraph depth */
    uint32_t swap_width;     /* byte order: the payload is always ONNX's
                                little-endian raw_data form (in place and from
                                onnxzip_tensor_read()). 0: usable as this
                                host's numbers (a little-endian host, or
                                1-byte, sub-byte-packed or STRING elements);
                                2, 4 or 8 on a big-endian host: reverse each
                                unit of that many bytes first (complex values
                                per component), e.g. into a copy */
    const char *key;         /* what onnxzip_find_tensor(), `onnxzip ls` and
                                Python's Archive.tensors name it by, never
                                NULL: the name itself (the same pointer)
                                when not empty. An unnamed tensor (e.g. a
                                Constant's `value`) gets its path in the
                                model, segments joined by "/": a node (its
                                name, or "node#I" for the I-th node, from 0,
                                of its graph or function), then the
                                attribute (its name, or "attribute#J"),
                                with "[K]" for the K-th element of a list
                                attribute (`tensors`, `graphs`,
                                `sparse_tensors`); a subgraph's tensors
                                continue the path of the attribute holding
                                the subgraph. Prefixes: "function:NAME" or
                                "function:DOMAIN:NAME" (ModelProto.functions;
                                their attribute defaults follow directly),
                                "training_info#I/initialization" or
                                "/algorithm"; none for the main graph.
                                Unnamed initializers are "initializer#I",
                                sparse ones "sparse_initializer#I", and a
                                sparse tensor's parts end in "/values" and
                                "/indices". E.g. "Constant_3/value",
                                "node#0/value", "If_0/then_branch/node#2/value",
                                "function:custom:F/node#1/value". Names are
                                taken up to a NUL byte. A key an earlier
                                tensor already has gets "~2", "~3", ...
                                (e.g. two nodes of one name), so that unnamed
                                tensors never share a key; a named tensor
                                keeps its name even when an earlier tensor
                                has it as its name or key (the first wins in
                                lookups). Appended last: the library hands
                                out views by pointer only (onnxzip_tensor_at(),
                                onnxzip_find_tensor()), never as arrays, so
                                fields are added at the end. */
} onnxzip_tensor;

/* The ONNX name of a TensorProto.DataType value ("FLOAT", "BFLOAT16",
 * "INT4", ...), or "UNKNOWN" for codes this library does not know. Static. */
ONNXZIP_API const char *onnxzip_dtype_name(int32_t data_type);

/* Number of tensors found in the model (every TensorProto holding data,
 * at any depth: initializers, attribute tensors, sparse tensor parts,
 * subgraphs, functions, training graphs). 0 for NULL. */
ONNXZIP_API size_t onnxzip_tensor_count(const onnxzip_archive *a);

/* The i-th tensor, in model order; NULL when i is out of range or a is NULL. */
ONNXZIP_API const onnxzip_tensor *onnxzip_tensor_at(const onnxzip_archive *a, size_t i);

/* The first tensor in model order whose key (onnxzip_tensor.key: its name,
 * or an unnamed tensor's path) is `name` (names may repeat across subgraph
 * scopes); NULL when there is none, also for "". O(1) expected (hash
 * lookup). */
ONNXZIP_API const onnxzip_tensor *onnxzip_find_tensor(const onnxzip_archive *a,
                                                      const char *name);

/* The length in bytes of tensor `t`'s payload (from `a`) in ONNX's raw_data
 * form, into *size: `t->nbytes`, or for an ONNXZIP_STORAGE_TYPED tensor the
 * length of its typed fields (float_data, int32_data, ...) once converted,
 * O(elements). Returns 0; ONNXZIP_EDTYPE for STRING (see
 * onnxzip_tensor_strings()) and types without a raw form, or typed data in a
 * field its type does not use; ONNXZIP_EINVAL when `t` is not one of `a`'s
 * tensors. The converted length need not match the dims (nothing checks
 * typed data against them at open): a caller that shapes the bytes compares. */
ONNXZIP_API int onnxzip_tensor_size(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t *size);

/* Copies `len` bytes of tensor `t`'s payload in raw_data form, from byte
 * `offset` on, into `dst`: little-endian elements, float16/bfloat16/float8 as
 * bit patterns, 4-bit and 2-bit types packed two and four to a byte. This is
 * how to read an ONNXZIP_STORAGE_TYPED tensor, whose typed fields are
 * converted (all of them, O(elements), whatever the range); for the other
 * storages it copies from `t->data` (reading weights: the view is the
 * zero-copy way). Returns 0; ONNXZIP_ERANGE when offset + len exceeds
 * onnxzip_tensor_size() (nothing copied); otherwise as onnxzip_tensor_size(). */
ONNXZIP_API int onnxzip_tensor_read(onnxzip_archive *a, const onnxzip_tensor *t, uint64_t offset, uint64_t len,
                                    void *dst);

/* The elements of STRING tensor `t` (its string_data, which onnxzip never
 * moves to entries): sets *count to their number and, for i < min(count,
 * cap), data[i]/lens[i] to the i-th string's bytes (not NUL-terminated,
 * pointing into the model bytes: valid until close, never copied). With
 * `cap` 0 and `data`, `lens` NULL only *count is set. Returns 0;
 * ONNXZIP_ELIMIT when there are more than `cap` strings (the first `cap`
 * are filled); ONNXZIP_EDTYPE when `t` is not a STRING tensor. */
ONNXZIP_API int onnxzip_tensor_strings(onnxzip_archive *a, const onnxzip_tensor *t, const void **data,
                                       size_t *lens, size_t cap, size_t *count);

/* One zip entry of the archive. */
typedef struct onnxzip_entry {
    const char *name;        /* entry name */
    uint64_t header_offset;  /* offset of its local file header */
    uint64_t data_offset;    /* offset of its first data byte */
    uint64_t size;           /* data length (stored: compressed == uncompressed) */
    uint32_t crc32;          /* CRC-32 recorded in the central directory */
    int has_xxh3;            /* 1 when the archive records an XXH3-64 digest */
    uint64_t xxh3;           /* that digest, or 0 */
} onnxzip_entry;

/* Number of zip entries (tensor entries plus __MODEL_PROTO); 0 for NULL. */
ONNXZIP_API size_t onnxzip_entry_count(const onnxzip_archive *a);

/* The i-th entry in central-directory order; NULL when out of range. */
ONNXZIP_API const onnxzip_entry *onnxzip_entry_at(const onnxzip_archive *a, size_t i);

/* The serialized onnx.ModelProto, for runtimes with their own protobuf
 * library. *data is valid until close. For an archive it is the handle's own
 * copy of __MODEL_PROTO, made at open (O(model), never weights), because an
 * in-place model update may later move the file's tail (spec 15.5); inline
 * tensor views of an archive point into that copy. For a classic .onnx it is
 * the mapped file itself, weights included (no copy).
 * Returns 0, or ONNXZIP_EINVAL for NULL arguments. */
ONNXZIP_API int onnxzip_model_bytes(const onnxzip_archive *a, const void **data,
                                    size_t *size);

/* The model parsed with protobuf-c, parsed on first call and cached. The
 * structure is owned by the handle, valid until close, and must not be
 * modified. Declare it with #include <onnxzip/onnx.pb-c.h>. Large tensors
 * appear as data_location EXTERNAL references, never as copied weights.
 * Returns 0, ONNXZIP_EPROTO when protobuf-c cannot parse the model, or
 * ONNXZIP_EUNSUPPORTED in builds without protobuf-c
 * (onnxzip_has_feature(ONNXZIP_FEATURE_MODEL_PROTO) == 0). */
struct Onnx__ModelProto;
ONNXZIP_API int onnxzip_model_proto(onnxzip_archive *a,
                                    const struct Onnx__ModelProto **model);

/* Reads every entry and checks its CRC-32 and, where recorded, its XXH3-64
 * digest (classic models: reads every payload, checks SHA-1 checksum keys).
 * O(archive size). Then requires what onnx.checker requires of the model
 * itself: ir_version > 0, opset_import when ir_version >= 3, a graph
 * (onnxzip_open() does not, nor does ONNXZIP_OPEN_VERIFY). Returns 0, or
 * ONNXZIP_ECRC / ONNXZIP_EDIGEST naming the first bad entry, ONNXZIP_EPROTO
 * naming every missing model field, or a classic model's read error.
 * A classic model that carries an "onnxzip.view" record (a view, see
 * onnxzip_view_model()) opened by path is also checked against the archive
 * the record names, beside it (opened without following symbolic links):
 * that it still has the recorded size and __MODEL_PROTO CRC-32 and XXH3
 * (headers and model read, O(model)); ONNXZIP_ESTALE when not (set-model
 * replaced the graph: write the view again; weights never move, so a view
 * whose model entry matches is exact), ONNXZIP_ENOTFOUND when it is gone,
 * ONNXZIP_EUNSUPPORTED for such a view opened from a buffer or fd. */
ONNXZIP_API int onnxzip_verify(onnxzip_archive *a);

/* Which layout the handle holds. */
ONNXZIP_API onnxzip_layout onnxzip_archive_layout(const onnxzip_archive *a);

/* The path given to onnxzip_open(), or "<fd N>" / "<buffer>"; never NULL
 * for a valid handle. */
ONNXZIP_API const char *onnxzip_archive_path(const onnxzip_archive *a);

/* onnxzip_listing() flags. */
#define ONNXZIP_LISTING_JSON 1u  /* one JSON object (`onnxzip ls --json`) */

/* What `onnxzip ls` prints of `a`, into *text: with flags 0, for people, a
 * line naming the archive (onnxzip_archive_path(): for a URL, without its
 * query), its layout and counts, then a table of the zip entries (index,
 * data offset, size, alignment, CRC-32, name) and one of the tensors (key,
 * dtype, shape cut to fit, storage, entry, offset, byte count, alignment),
 * names escaped for terminals (control characters and bytes that are not
 * UTF-8 as \xNN, "" for an empty name, - for none). With
 * ONNXZIP_LISTING_JSON, for scripts, one JSON object, one entry or tensor a
 * line (strings escaped, bytes that are not UTF-8 as \ufffd):
 *   {"archive": PATH,
 *    "entries": [{"name", "header_offset", "data_offset", "size", "crc32",
 *                 "xxh3" (16 hex digits, or null), "alignment"}, ...],
 *    "tensors": [{"name", "key", "data_type", "dtype", "dims", "storage"
 *                 ("entry", "inline", "typed", "file"), "kind"
 *                 ("initializer", "attribute", "sparse_values",
 *                 "sparse_indices"), "entry" (STORAGE_ENTRY's, else null),
 *                 "offset" (onnxzip_tensor.file_offset), "nbytes",
 *                 "alignment", "graph_depth"}, ...]}
 * A package adds its members (a table of kind, size and path, the default
 * model marked; JSON: "format", "model", "default_model", "models",
 * "files"); opened for its members only (ONNXZIP_MODEL_NONE) it holds no
 * model: no tensor count and no tensor table (JSON: "tensors": []).
 * Either text ends with a newline. Every alignment is the file's: the
 * largest power of two (<= 65536; 65536 for offset 0) dividing the data's
 * offset in its file (for an inline tensor, the offset of its bytes within
 * __MODEL_PROTO's data; 0 for a TYPED tensor), never onnxzip_tensor.alignment
 * (the address's), so that one archive lists byte for byte the same opened
 * from a path, a buffer, a URL (HTTP, S3, the Hub) or in JavaScript, the
 * archive's name aside.
 * On success *text is a NUL-terminated string malloc'd by the library,
 * which the caller releases with onnxzip_free(); on failure *text is NULL
 * (when `text` is not NULL). Returns 0, ONNXZIP_EINVAL (`a` or `text` NULL,
 * unknown flags) or ONNXZIP_ENOMEM. Reads nothing from the file; O(entries
 * + tensors). */
ONNXZIP_API int onnxzip_listing(const onnxzip_archive *a, unsigned flags, char **text);

/* What `onnxzip ls PKG` prints of a package opened for its members only
 * (onnxzip_open_model() with ONNXZIP_MODEL_NONE, see below), whose
 * onnxzip_listing() has no model's tensors: the same text, with each model
 * of the members table given its tensor count and the bytes of its
 * tensors (onnxzip_tensor.nbytes summed; tensors the models share count in
 * each), taken from models[k], the package opened on its k-th model member
 * (in member order; `n` of them, one per model). Text: two more columns,
 * "tensors" and "tensor_bytes" ("-" for a file); JSON: "tensors" and
 * "tensor_bytes" in each object of "models". Borrows the handles; reads
 * nothing from the files. Returns as onnxzip_listing(), and ONNXZIP_EINVAL
 * when `models` is NULL, `a` is not a package opened for its members, or a
 * handle does not hold the model of its place (onnxzip_model_path()). */
ONNXZIP_API int onnxzip_listing_models(const onnxzip_archive *a, const onnxzip_archive *const *models, size_t n,
                                       unsigned flags, char **text);

/* ---------------------------------------------------------------------------
 * Packages (format 1.2, spec section 19): one archive holding a repository
 * folder — several models, their tensors stored once, and plain files
 * (tokenizer, configs) — under their paths in the folder. A handle opened
 * on a package holds one of its models: the default one (what every
 * function above sees: tensors, model bytes, views), or the one named to
 * onnxzip_open_model() / onnxzip_remote_options.model /
 * onnxzip_host_source.model. The members below are the same for every
 * model of the package.
 * ------------------------------------------------------------------------- */

typedef enum onnxzip_member_kind {
    ONNXZIP_MEMBER_MODEL = 0, /* an ONNX model (its entry: the ModelProto as stored) */
    ONNXZIP_MEMBER_FILE = 1   /* a plain file, byte for byte */
} onnxzip_member_kind;

/* One model or file of a package. Owned by the handle, valid until close. */
typedef struct onnxzip_member {
    const char *path;         /* its path in the folder: UTF-8, '/'-separated
                                 ("onnx/model_fp16.onnx", "tokenizer.json") */
    onnxzip_member_kind kind;
    int is_default;           /* the default model */
    uint64_t size;            /* its entry's bytes: a file's size; a model's
                                 serialized ModelProto (weights not counted) */
    size_t entry;             /* its entry, for onnxzip_entry_at() */
} onnxzip_member;

/* Models and files of the package, in the manifest's order (models first as
 * pack writes them); 0 for a single-model archive, a classic model or NULL. */
ONNXZIP_API size_t onnxzip_member_count(const onnxzip_archive *a);

/* The i-th member; NULL when out of range. */
ONNXZIP_API const onnxzip_member *onnxzip_member_at(const onnxzip_archive *a, size_t i);

/* The member of exactly this path (byte for byte), or NULL. */
ONNXZIP_API const onnxzip_member *onnxzip_find_member(const onnxzip_archive *a, const char *path);

/* The path of the model the handle holds, or NULL when it is no package. */
ONNXZIP_API const char *onnxzip_model_path(const onnxzip_archive *a);

/* A member's bytes in place: *data points into the mapping (no copy), valid
 * until close, *size bytes. ONNXZIP_EUNSUPPORTED for a handle without a
 * mapping (a URL, a host's reads): use onnxzip_member_read(); ONNXZIP_EINVAL
 * for NULL arguments or a member of another handle. */
ONNXZIP_API int onnxzip_member_bytes(const onnxzip_archive *a, const onnxzip_member *m, const void **data,
                                     uint64_t *size);

/* Copies `len` bytes of the member from byte `offset` into `buf`, through
 * whatever the handle reads (mapping, URL, host); its local header is
 * checked on the first read, as a tensor's. ONNXZIP_ERANGE past its end. */
ONNXZIP_API int onnxzip_member_read(onnxzip_archive *a, const onnxzip_member *m, uint64_t offset, uint64_t len,
                                    void *buf);

/* As onnxzip_open(), holding model `model` (a path listed by the members)
 * of the package at `path`; NULL: the default. ONNXZIP_ENOTFOUND naming the
 * package when it has no such model; ONNXZIP_EINVAL when `model` is given
 * and the file is no package. `model` ONNXZIP_MODEL_NONE: a package is
 * opened for its members only — no model is read (a remote package: the
 * end records, directory and manifest only); the handle has no tensors,
 * empty model bytes and onnxzip_model_path() NULL; a single-model archive
 * opens as with NULL. The same values apply to
 * onnxzip_remote_options.model and onnxzip_host_source.model. */
#define ONNXZIP_MODEL_NONE ""
ONNXZIP_API int onnxzip_open_model(const char *path, const char *model, unsigned flags, onnxzip_archive **out);

/* ---------------------------------------------------------------------------
 * Remote archives (ONNXZIP_FEATURE_REMOTE)
 *
 * An archive on an HTTP(S) origin that answers byte-range requests (object
 * stores through presigned URLs, model hubs, CDNs, nginx) is opened without
 * downloading it: its end records, central directory and model sit at the
 * end of the file and are fetched in at most two range requests (three when
 * the central directory alone exceeds the first request's tail), validated
 * as onnxzip_open() validates them, and indexed the same way. Tensor bytes
 * are then fetched on demand with onnxzip_tensor_read().
 * ------------------------------------------------------------------------- */

/* Options of onnxzip_open_url(); onnxzip_remote_options_init() sets the
 * defaults given here. */
typedef struct onnxzip_remote_options {
    int allow_http;              /* 0: only https:// URLs (certificates checked
                                    against the system CA store); 1: http://
                                    too (default 0) */
    const char *ca_file;         /* PEM bundle to trust instead of the system
                                    store, or NULL (default) */
    unsigned connect_timeout_ms; /* per connection attempt (default 10000) */
    unsigned stall_timeout_ms;   /* a transfer that receives no byte for this
                                    long fails (default 30000; 0: the
                                    default) */
    unsigned retries;            /* further attempts of one request after a
                                    5xx, 408, 429, reset, timeout or short
                                    body (default 4) */
    unsigned backoff_ms;         /* delay before the first retry, doubled for
                                    each next one (default 250) */
    unsigned max_redirects;      /* redirects followed (default 5; 0: none) */
    unsigned parallel;           /* connections: ranged requests in flight
                                    at once (default 16; the CLI's
                                    --connections) */
    uint32_t tail_bytes;         /* size of the first request, the file's last
                                    bytes (default 65536; at least 4096) */
    const char *bearer_token;    /* sent as "Authorization: Bearer TOKEN" to
                                    the URL's own origin (scheme, host and
                                    port) only: never to a host or port a
                                    redirect leads to, nor on the later
                                    requests sent there (copied at open;
                                    visible ASCII only, else ONNXZIP_EINVAL).
                                    NULL (default): the Hugging Face token,
                                    for https://huggingface.co and hf.co URLs
                                    and those on $HF_ENDPOINT's origin, found
                                    as huggingface_hub finds it: $HF_TOKEN,
                                    else the file $HF_TOKEN_PATH, else
                                    $HF_HOME/token ($HF_HOME defaults to
                                    $XDG_CACHE_HOME/huggingface, else
                                    ~/.cache/huggingface); none when
                                    HF_HUB_DISABLE_IMPLICIT_TOKEN is set
                                    true, and none for other URLs. "": no
                                    token. Tokens never appear in messages. */
    /* Many connections and s3:// URLs (a struct zeroed by the caller gets
     * the defaults here too: 0 and NULL mean them). */
    uint64_t chunk_size;         /* large reads, onnxzip_fetch() and
                                    onnxzip_fetch_tensors() are split into
                                    ranged requests of at most this many
                                    bytes, `parallel` of them in flight
                                    (at least 64 KiB, else ONNXZIP_EINVAL).
                                    0 (default): 8 MiB, except for
                                    onnxzip_fetch(), whose chunks are the
                                    file's size / (2 x parallel), rounded up
                                    to 64 KiB, within 2 MiB .. 8 MiB: every
                                    connection gets work on a small file too
                                    (two rounds each: room for unequal
                                    speeds, one round trip more), and no
                                    request is so small that its round trip
                                    costs as much as its bytes */
    int s3_addressing;           /* s3:// URLs: ONNXZIP_S3_AUTO (default:
                                    virtual-hosted for AWS, path-style for
                                    a custom endpoint), ONNXZIP_S3_PATH,
                                    ONNXZIP_S3_VIRTUAL */
    int s3_no_sign;              /* s3:// URLs: 1: send requests unsigned
                                    (public buckets; the AWS CLI's
                                    --no-sign-request); 0 (default): signed
                                    with the credentials found as AWS tools
                                    find them (spec 17.6) */
    const char *s3_profile;      /* s3://: the profile to read in the AWS
                                    config files; NULL (default): $AWS_PROFILE,
                                    else "default" */
    const char *s3_region;       /* s3://: the region to sign for; NULL
                                    (default): $AWS_REGION, else
                                    $AWS_DEFAULT_REGION, else the profile's
                                    `region`, else us-east-1 */
    const char *s3_endpoint_url; /* s3://: the endpoint (http:// needs
                                    allow_http); NULL (default):
                                    $AWS_ENDPOINT_URL_S3, else
                                    $AWS_ENDPOINT_URL, else the profile's
                                    `endpoint_url` (its s3 section's first),
                                    else AWS's https://s3.REGION.amazonaws.com */
    /* How slow a reply may be (appended in 0.1; 0 means the default here
     * too). A request attempt that breaks one of these rules, or
     * stall_timeout_ms, fails with ONNXZIP_ETIMEOUT, its message naming
     * the URL, the bytes asked and the rule, and is retried as a stall is
     * (`retries`, from its first missing byte). So an attempt lasts at
     * most low_speed_time_ms while it gets (almost) nothing, and a request
     * held by a trickling server fails within (retries + 1) x
     * low_speed_time_ms plus the backoff between: with the defaults, a
     * tail reply trickling a byte a second fails onnxzip_open_url() after
     * 5 x 30 s + 3.75 s. */
    unsigned low_speed_limit;    /* bytes per second: an attempt fails when a
                                    window of low_speed_time_ms brings fewer
                                    than low_speed_limit x low_speed_time_ms
                                    / 1000 bytes (or than the attempt still
                                    asks, when that is less); a window ends
                                    and the next begins as soon as that many
                                    came (default 1024: far under any usable
                                    link, far over a trickle). The rule of
                                    libcurl's CURLOPT_LOW_SPEED_LIMIT and
                                    _TIME, applied by the library itself */
    unsigned low_speed_time_ms;  /* that window (default 30000) */
    unsigned request_timeout_ms; /* an attempt's deadline, per 8 MiB it asks
                                    (rounded up: one period for a chunk of
                                    a download, the tail, a tensor's piece;
                                    onnxzip_verify()'s one stream of the
                                    whole file gets one per 8 MiB). Default
                                    300000 (5 min): 8 MiB within it needs
                                    28 KB/s per connection (450 KB/s over 16
                                    connections); on a slower link a cut
                                    attempt's retry resumes where it stopped,
                                    so that (retries + 1) periods bring a
                                    chunk in down to ~5.6 KB/s */
    const char *model;           /* a package's model to open (its path,
                                    see onnxzip_open_model()); NULL
                                    (default): its default model. Appended
                                    in 0.1 with format 1.2 */
} onnxzip_remote_options;

/* onnxzip_remote_options.s3_addressing */
enum { ONNXZIP_S3_AUTO = 0, ONNXZIP_S3_PATH = 1, ONNXZIP_S3_VIRTUAL = 2 };

/* Sets the defaults above. */
ONNXZIP_API void onnxzip_remote_options_init(onnxzip_remote_options *opts);

/* Opens the archive at `url` (https://, or http:// with allow_http) over
 * byte-range requests; `opts` NULL means the defaults. The first request
 * fetches the last tail_bytes of the file, the second the model and the
 * central directory (when the first did not already hold them). The first
 * response's ETag (a strong one), else its Last-Modified date, is pinned:
 * every later request carries it as If-Match (If-Unmodified-Since), so that
 * a file replaced on the origin while the handle is in use fails with
 * ONNXZIP_ECHANGED instead of mixing two files. An origin that offers
 * neither validator is refused (ONNXZIP_EHTTP): nothing could detect a
 * replaced file.
 *
 * The handle works as one from onnxzip_open() (tensor index, entries,
 * model bytes, onnxzip_model_proto()), except that no byte is mapped:
 *   - ONNXZIP_STORAGE_ENTRY tensors have data == NULL; their `file_offset`
 *     is where the central directory places their data (entries tile the
 *     file), and onnxzip_tensor_read() fetches their bytes. The first read of
 *     an entry also fetches its local header (in the same request) and checks
 *     it against the central directory and that offset, as onnxzip_open()
 *     checks every local header at open (ONNXZIP_ELOCAL, ONNXZIP_EALIGN...).
 *     Such reads may be issued from several threads at once; they share
 *     the handle's connections and run one call at a time (a large read
 *     is itself cut into requests of `chunk_size` bytes, `parallel` of
 *     them in flight at once over reused connections).
 *   - inline and typed tensors live in the model, which is in memory.
 *   - onnxzip_verify() streams the file once, in order, checking every local
 *     header and every entry's CRC-32 and XXH3.
 *   - onnxzip_check() asks the origin whether the pinned file is still there
 *     (a 1-byte request to `url`, redirects followed): 0, or
 *     ONNXZIP_ECHANGED.
 *   - onnxzip_extract_tensor() fetches the tensor into memory, then writes
 *     it; onnxzip_view_model() and onnxzip_view_write() need a local file
 *     (ONNXZIP_EUNSUPPORTED: fetch it first).
 *   - onnxzip_archive_path() is the URL without its query string and
 *     fragment and without user:password@ (credentials, e.g. presigned
 *     signatures; "..." stands for each); messages name it the same way
 *     and never show where it redirects to.
 * Redirects (at most max_redirects in a row; the Hugging Face Hub's
 * https://huggingface.co/ORG/REPO/resolve/REV/FILE answers 302 to a CDN
 * URL signed for a limited time): the validator is the final reply's, never
 * a redirect's own ETag; a redirect's X-Linked-Size, when sent, must equal
 * the size in the final reply's Content-Range (else ONNXZIP_EREPLY). Later
 * requests go straight to the URL the first one ended at (one redirect per
 * open, none per read), and a range refused there with 400, 401, 403 or
 * 410 (an expired signature) is asked once more from `url`, following its
 * redirect anew; onnxzip_check() always asks `url` itself. Credentials in
 * `url` are sent to its own host only (libcurl's rule), and so is the bearer
 * token (`bearer_token`). A 401 or 403 from the URL's origin is
 * ONNXZIP_EHTTP, whose message says whether a token was sent (and whence:
 * "the token from HF_TOKEN was refused"; none: how to give one) and quotes
 * the Hub's X-Error-Code and X-Error-Message (GatedRepo, RepoNotFound).
 * Requests are retried (`retries`, with backoff) on 5xx, 408 and 429
 * statuses, resets, timeouts and short bodies; then the call fails with
 * ONNXZIP_EHTTP (an error status; 412 is ONNXZIP_ECHANGED), ONNXZIP_ETIMEOUT,
 * or ONNXZIP_ENETWORK (connection, TLS or truncation). A reply other than
 * 206 is judged by its status and headers: at most its first 1,536 bytes
 * are read (quoted when they are S3's error), then the transfer is cut; a
 * followed redirect with more than 64 KiB of body is ONNXZIP_EREPLY. An
 * origin that answers a range request with the whole file (200) is
 * ONNXZIP_ENORANGE; one whose Content-Range, total size or body length
 * differ from what was asked is ONNXZIP_EREPLY: its bytes are never used. Only archives are served
 * remotely (a classic .onnx: ONNXZIP_ENOTZIP). An entry preceding
 * __MODEL_PROTO that is followed by dead space (an interrupted set-model,
 * spec 15.3) fails its first read with ONNXZIP_ELOCAL: fetch the file whole.
 * s3://BUCKET/KEY (spec 17.6): the key taken as written, mapped to
 * https://BUCKET.s3.REGION.amazonaws.com/KEY on AWS (path-style
 * https://s3.REGION.amazonaws.com/BUCKET/KEY for a bucket name with dots or
 * capitals), to ENDPOINT/BUCKET/KEY for another endpoint (s3_addressing
 * forces either), the key percent-encoded. Requests are signed with AWS
 * Signature Version 4 by libcurl (x-amz-content-sha256: UNSIGNED-PAYLOAD;
 * x-amz-security-token with a session token) unless s3_no_sign, with the
 * credentials AWS's tools find: $AWS_ACCESS_KEY_ID, $AWS_SECRET_ACCESS_KEY,
 * $AWS_SESSION_TOKEN (unless s3_profile names a profile), else the
 * profile's in $AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and
 * $AWS_CONFIG_FILE (~/.aws/config); credential processes, SSO and
 * instance roles are not read. None found: ONNXZIP_EINVAL, naming where it
 * looked. No redirect is followed (a 301 is ONNXZIP_EHTTP naming the
 * region or endpoint S3 wants). S3's error replies are quoted in
 * ONNXZIP_EHTTP's message ("S3 NoSuchKey: ...", "S3
 * SignatureDoesNotMatch: ...", with what signed: the credentials' source
 * and key id as "AKIA...WXYZ"); a secret key or session token never
 * appears in a message. onnxzip_archive_path() is the s3:// URL. A bearer
 * token with an s3:// URL is ONNXZIP_EINVAL.
 * Returns ONNXZIP_EUNSUPPORTED in builds without libcurl. */
ONNXZIP_API int onnxzip_open_url(const char *url, const onnxzip_remote_options *opts, onnxzip_archive **out);

/* Traffic of a handle from onnxzip_open_url() so far. */
typedef struct onnxzip_remote_stats {
    uint64_t requests;       /* range requests sent, retries included (one
                                that was redirected counts once) */
    uint64_t retries;        /* of which were retries */
    uint64_t bytes_received; /* body bytes received */
    uint64_t file_size;      /* the remote file's size */
    uint64_t redirects;      /* redirects followed: each was one more HTTP
                                request, to the redirecting server */
} onnxzip_remote_stats;

/* Fills *stats for a handle from onnxzip_open_url(). Returns 0, or
 * ONNXZIP_EINVAL for a local handle. */
ONNXZIP_API int onnxzip_remote_get_stats(const onnxzip_archive *a, onnxzip_remote_stats *stats);

/* Downloads the remote archive `a` to `path`: the file byte for byte, cut
 * into chunks of the handle's `chunk_size` (when 0: sized to the file and
 * `parallel`, see there; wherever entries begin), of which `parallel`
 * requests are in flight at once over reused connections, each written at
 * its offset into `path`.part beside it; a checker thread
 * reads the file back in order as far as it is complete and checks every
 * local header and every entry's CRC-32 and XXH3 (a fault stops the
 * transfers); renamed to `path` when every chunk is there and checked.
 * `path`.part.etag records the pinned validator and the byte ranges on
 * disk (spec 17.5). A download that was interrupted (network failure, kill)
 * leaves the .part files, and the next call for the same `path` resumes it
 * when the origin still serves the same file (same validator and size):
 * only the missing chunks are fetched, and the bytes already there are
 * checked again from disk (damaged ones are fetched again from the last
 * entry found whole). Missing parent
 * directories of `path` are created; removed again on failure, unless the
 * .part files are kept for resuming. `progress` may be NULL. Returns 0; the
 * errors of onnxzip_open_url() and onnxzip_verify(); or the outputs'
 * (ONNXZIP_ESAMEFILE, ONNXZIP_ENOTREG, ONNXZIP_EIO). */
ONNXZIP_API int onnxzip_fetch(onnxzip_archive *a, const char *path,
                              void (*progress)(void *user, uint64_t done, uint64_t total), void *user);

/* Writes to `path` (an output, spec 12.3) an archive holding only some of
 * archive `a`'s tensors: the shard one rank of a tensor-parallel runtime
 * needs. The selection applies to the main graph's initializers stored in
 * entries: those whose names match one of the `npatterns` shell patterns
 * (fnmatch(3) without flags: `*`, `?`, `[a-z]`, `[!x]`) are kept; the others are dropped and
 * the model declares each as a graph input of its name, element type and
 * shape instead (unless the graph already lists it, as models before IR
 * version 4 do), so that the shard's model is valid ONNX and its runtime
 * supplies them. Every other tensor (inline ones, attribute and sparse
 * tensors, subgraphs' initializers) is kept. Each kept entry is read once
 * (`a` may be remote: runs of adjacent kept entries are fetched cut into
 * `chunk_size` requests, `parallel` in flight; or local), a window of about
 * parallel x chunk_size bytes (at least 64 MiB, or one larger entry) in
 * memory at a time, each checked against `a`'s CRC-32 and XXH3
 * (ONNXZIP_ECRC, ONNXZIP_EDIGEST) and written under its own name; the
 * model's other fields are copied byte for byte. `progress` (may be NULL)
 * gets bytes of kept entries done and their total. Returns 0;
 * ONNXZIP_ENOTFOUND when no such initializer matches; ONNXZIP_EINVAL for a
 * classic model; ONNXZIP_EPROTO for a model onnxzip_verify() would refuse
 * (verify's message, as onnxzip_writer_finish()); or the errors of reading
 * `a` and of the writer. Missing parent directories of `path` are created;
 * removed again on failure. */
ONNXZIP_API int onnxzip_fetch_tensors(onnxzip_archive *a, const char *path, const char *const *patterns,
                                      size_t npatterns,
                                      void (*progress)(void *user, uint64_t done, uint64_t total), void *user);

/* Options of onnxzip_view_model() and onnxzip_view_write(). */
typedef struct onnxzip_view_options {
    const char *location;    /* the archive's file name as the view names it;
                                NULL: that of the file `a` was opened by */
    uint64_t size_threshold; /* entry-backed tensors below this many bytes
                                are copied inline; default 1024; 0: none
                                (but empty ones) */
} onnxzip_view_options;

/* Sets the defaults: location NULL, size_threshold 1024. */
ONNXZIP_API void onnxzip_view_options_init(onnxzip_view_options *opts);

/* The archive's VIEW (spec 16): a small classic ONNX model — the archive's
 * model with every entry-backed tensor rewritten to data_location EXTERNAL
 * with external_data location = opts->location (the archive's file name),
 * offset = the absolute file offset of the tensor's first byte in the
 * archive, length = its byte count (only these keys, in ONNX's order), and
 * every other byte as it is. One metadata_props entry is appended (an older
 * one of the same key is dropped): key "onnxzip.view", value
 * "format=1;archive=LOCATION;size=ARCHIVE_BYTES;model_crc32=8HEX;model_xxh3=16HEX"
 * (the __MODEL_PROTO entry's CRC-32 and XXH3-64), by which onnxzip_verify()
 * on the view tells whether the archive still matches (ONNXZIP_ESTALE).
 * Entry-backed tensors smaller than opts->size_threshold bytes (default
 * 1024, as unpack and onnx's converters) are written inline instead, their
 * bytes copied into raw_data: ONNX Runtime refuses shape constants stored
 * externally ("Cannot parse data from external tensors"). Empty tensors are
 * always inline: onnx <= 1.13 reads a length of 0 as "to the end of the
 * file".
 *
 * Written beside the archive, the view makes the archive runnable in place
 * by any loader that follows ONNX's external-data rules (ONNX Runtime,
 * onnx.load, onnx.checker): the runtime maps the archive's byte ranges; no
 * weight is copied. With the ONNX Runtime C API, either
 *   - write the view into the archive's directory and call
 *     CreateSession(env, "DIR/model.view.onnx", opts, &session); or
 *   - keep the bytes in memory and call CreateSessionFromArray(env, data,
 *     size, opts, &session) after
 *     AddSessionConfigEntry(opts,
 *         "session.model_external_initializers_file_folder_path", "DIR")
 *     with DIR the archive's directory (without it ORT refuses the
 *     references: "escapes working directory").
 *
 * opts NULL means onnxzip_view_options_init()'s defaults. opts->location
 * NULL means the file name of the file `a` was opened by: when its
 * path is a symbolic link (followed through any chain, e.g. a Hugging Face
 * cache's snapshots/REV/model.onnxzip -> ../../blobs/SHA256), the name of
 * the real file it resolves to (SHA256), and DIR above is that real file's
 * directory (realpath(3) of the path, less the name), never the link's:
 * ONNX Runtime checks the resolved path of external data against DIR
 * (spec 16.4); a handle from onnxzip_open_buffer() or onnxzip_open_fd()
 * has none, and then a NULL location is ONNXZIP_EINVAL. A
 * location must be a plain file name, relative to the view's directory (no
 * '/' or '\\', not "." or "..", not empty): ONNXZIP_EINVAL otherwise. On a
 * classic model (layouts CLASSIC, EXTERNAL) *data is a copy of the model,
 * unchanged: it already is its own view.
 *
 * On success *data (malloc'd by the library, *size bytes) belongs to the
 * caller, who releases it with onnxzip_free(); on failure *data is NULL and
 * *size 0. Cost: O(model bytes) time and memory; no weight byte is read but
 * those of the tensors made inline.
 * ONNXZIP_ELIMIT when the view would exceed protobuf's 2 GiB - 1;
 * ONNXZIP_EPROTO with verify's message for a model onnxzip_verify() refuses
 * for its fields (ir_version, opset_import, graph). */
ONNXZIP_API int onnxzip_view_model(const onnxzip_archive *a, const onnxzip_view_options *opts, void **data,
                                   size_t *size);

/* Writes the view of archive `a` (onnxzip_view_model() with `opts`, whose
 * location must be NULL: the archive's own file name) to `view_path`, atomically and under the outputs rules (see Conventions).
 * `view_path` must name a file in the directory of the archive's real file
 * (through symbolic links: for a Hugging Face cache's snapshot link, its
 * blobs/ directory): ONNX loaders resolve `location` relative to the view's
 * directory and refuse '..', absolute paths and a location resolving
 * elsewhere through a link (ONNXZIP_EPATH otherwise, naming the real file
 * and the path to write, as for a directory that does not exist: none is
 * created for a view). ONNXZIP_EINVAL for
 * a classic model (it is its own view) or a handle opened from a buffer or
 * fd (no file name: use onnxzip_view_model() with a location). Cost as
 * onnxzip_view_model(), plus writing the view. */
ONNXZIP_API int onnxzip_view_write(const onnxzip_archive *a, const char *view_path,
                                   const onnxzip_view_options *opts);

/* ---------------------------------------------------------------------------
 * Advanced: archives whose bytes the caller reads
 *
 * For a host with I/O of its own that the library cannot call while it
 * waits (JavaScript's fetch and Blob reads: the npm package's WebAssembly
 * binding is built on these functions alone). The host hands over the
 * bytes at the file's end; the library says what else it needs. The open
 * is the one onnxzip_open() and onnxzip_open_url() use: the same checks,
 * in the same order, with the same statuses and messages.
 * ------------------------------------------------------------------------- */

typedef struct onnxzip_host_source {
    const char *name;   /* how messages name the file (copied; e.g. a URL without its query) */
    uint64_t size;      /* the file's size in bytes */
    const void *window; /* its last window_len bytes, [size - window_len, size) (copied) */
    size_t window_len;
    /* Synchronous reads, or NULL. With it, every local header is read and
     * checked at open, as onnxzip_open() does; without, each entry's on its
     * first read (onnxzip_host_check_header()), as onnxzip_open_url() does.
     * Reads `n` bytes at `offset` into `dst`; returns how many (n, fewer
     * only at the file's end), or -1 when they are not at hand: the open then
     * fails with ONNXZIP_EIO naming the offset; read them and open again. */
    int64_t (*read)(void *ctx, uint64_t offset, size_t n, void *dst);
    void *ctx;          /* passed to read */
    const char *model;  /* a package's model to open (see onnxzip_open_model()), or NULL: the default */
    unsigned flags;     /* 0 (the default), or ONNXZIP_HOST_DEFER_HEADERS */
} onnxzip_host_source;

/* onnxzip_host_source.flags: with `read`, local headers are checked as
 * without one, each on its entry's first read (onnxzip_host_check_header()),
 * and `read` is asked only for a package's model entry when it lies before
 * the window: its local header and bytes, [header_offset, data_offset +
 * size), in one call (a host fetching over a network then transfers that
 * model alone, where *need would widen the window over every later model).
 * A read answering -1 fails the open with ONNXZIP_EIO naming the offset:
 * fetch that range and open again. Ignored without `read`; other bits:
 * ONNXZIP_EINVAL. */
#define ONNXZIP_HOST_DEFER_HEADERS 1u

/* Opens the archive (a zip: classic models need onnxzip_open*) of `src`.
 * 0 with *out set: opened. The handle has no mapping and owns copies of
 * what it keeps (the name, the window, the model); it works as a remote
 * one (see onnxzip_open_url()): entry tensors have data == NULL and
 * onnxzip_tensor_read() reads them through `read` (ONNXZIP_EUNSUPPORTED
 * without one); the tensor index, entries and model bytes are there.
 * 0 with *out NULL and *need set: the central directory or the model begin
 * before the window: call again with the window widened down to file
 * offset *need. Else a status, *out NULL: ONNXZIP_EINVAL for a NULL
 * argument or name, or a window longer than `size` (or NULL with a
 * length); the reader's statuses otherwise. */
ONNXZIP_API int onnxzip_open_host(const onnxzip_host_source *src, onnxzip_archive **out, uint64_t *need);

/* For a handle onnxzip_open_host() opened without a read function: checks
 * entry `entry`'s local header, the `len` bytes at header_offset (len must be
 * data_offset - header_offset), against its central record, once; later
 * calls for the same entry return 0. Call before trusting bytes of the
 * entry the host read itself. 0 for a handle that checked every header at
 * open; ONNXZIP_EINVAL for a bad entry or length; ONNXZIP_ELOCAL /
 * ONNXZIP_EALIGN / ... as onnxzip_open() would say of that header. */
ONNXZIP_API int onnxzip_host_check_header(onnxzip_archive *a, size_t entry, const void *header, size_t len);

/* For a handle onnxzip_open_host() opened: checks entry `entry`'s whole data,
 * the `len` bytes at `data` that the host read itself (len must be its
 * size), against the CRC-32 and XXH3 the archive records for it, as
 * onnxzip_verify() does. Call before handing on an entry's bytes (a file of
 * a package, a tensor's entry) read from a network. 0; ONNXZIP_EINVAL for a
 * bad entry or length; ONNXZIP_ECRC / ONNXZIP_EDIGEST naming the file and
 * the entry when the bytes are not the entry's. (The model entry, and a
 * package's manifest, are checked at open.) */
ONNXZIP_API int onnxzip_host_check_data(onnxzip_archive *a, size_t entry, const void *data, size_t len);

/* Calls `span` with each file range [offset, offset + length) whose bytes
 * onnxzip_view_model() with size threshold `size_threshold` copies into the
 * view (tensors below the threshold), sorted by offset and merged where
 * they overlap or touch; stops at span's first nonzero return, which it
 * returns. A host reads these ranges and passes them, one after the other,
 * to onnxzip_view_model_inline(). */
typedef int (*onnxzip_span_fn)(void *ctx, uint64_t offset, uint64_t length);
ONNXZIP_API int onnxzip_view_inline_spans(const onnxzip_archive *a, uint64_t size_threshold, onnxzip_span_fn span,
                                          void *ctx);

/* onnxzip_view_model() of an archive handle without a mapping: the bytes
 * the view copies come from `inline_bytes`, the ranges of
 * onnxzip_view_inline_spans() (with opts->size_threshold) one after the
 * other, `inline_len` bytes in all. opts->location must be set (a plain
 * file name: the view's reference to the archive). *data is freed with
 * onnxzip_free(); on failure *data is NULL and *size 0. ONNXZIP_EINVAL when
 * inline_len is not the spans' total, or for a location that is no plain
 * file name; as onnxzip_view_model() otherwise. */
ONNXZIP_API int onnxzip_view_model_inline(const onnxzip_archive *a, const onnxzip_view_options *opts,
                                          const void *inline_bytes, size_t inline_len, void **data, size_t *size);

/* onnxzip_verify() of bytes the caller brings: the whole archive file fed in
 * order, from offset 0 to its end, in pieces of any size. Checks what
 * onnxzip_verify() checks: every local header, CRC-32 and XXH3, the
 * records at the end as read at open, and the model's fields. */
typedef struct onnxzip_verifier onnxzip_verifier;

/* Starts a verifier of `a` (which must outlive it). 0, ONNXZIP_EINVAL (a
 * classic model or NULL argument) or ONNXZIP_ENOMEM; *out NULL on failure. */
ONNXZIP_API int onnxzip_verifier_begin(const onnxzip_archive *a, onnxzip_verifier **out);

/* Feeds the next `n` bytes. 0, or the first fault found (ONNXZIP_ECRC,
 * ONNXZIP_EDIGEST, ONNXZIP_ELOCAL, ONNXZIP_ECHANGED, ...): the verifier
 * then only says so again. */
ONNXZIP_API int onnxzip_verifier_feed(onnxzip_verifier *v, const void *p, size_t n);

/* After the file's last byte: 0 when the whole archive checked out
 * (ONNXZIP_ETRUNC when it ended early; verify's statuses for the model's
 * fields). Frees *v and sets it to NULL, whatever the result. */
ONNXZIP_API int onnxzip_verifier_end(onnxzip_verifier **v);

/* Frees a verifier without a verdict. NULL or *v NULL is a no-op. */
ONNXZIP_API void onnxzip_verifier_free(onnxzip_verifier **v);

/* Releases memory the library allocated for the caller (onnxzip_view_model(),
 * onnxzip_view_model_inline(), onnxzip_listing()).
 * Not free(): on Windows the library and the application may use different C
 * runtimes, whose heaps must not be mixed. NULL is a no-op. */
ONNXZIP_API void onnxzip_free(void *p);

/* ---------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------- */

typedef struct onnxzip_writer onnxzip_writer;

/* Options for onnxzip_writer_create(). Initialize with
 * onnxzip_write_options_init() before setting fields, so that fields added
 * later get their defaults. */
typedef struct onnxzip_write_options {
    uint32_t alignment; /* data alignment of every entry: a power of two,
                           64..65536; default 64 */
    uint32_t flags;     /* ONNXZIP_WRITE_* */
    uint64_t reserved[4];
} onnxzip_write_options;

/* Flags for onnxzip_write_options.flags. */
enum {
    /* Skip the fsync of the archive and of its directory at finish. The rename
     * stays atomic (a crash of the process never leaves a partial archive),
     * but after a power failure or kernel crash the archive may be missing or
     * empty. For scratch outputs, and for comparing with tools like cp. */
    ONNXZIP_WRITE_NO_SYNC = 1u << 0,
    /* Write a package (format 1.2, spec section 19): entries are named by
     * paths in a folder; tensor entries by a model's directory and an entry
     * name ("onnx/embed_tokens_weight"), added with _add_memory(),
     * _add_file_range(); plain files with onnxzip_writer_add_file*();
     * models with onnxzip_writer_add_model() (not _set_model()). Paths
     * that one file system would make one file (case, Unicode
     * normalization) are refused: ONNXZIP_EDUPNAME. */
    ONNXZIP_WRITE_PACKAGE = 1u << 1
};

/* Fills *opts with the defaults. NULL is a harmless no-op. */
ONNXZIP_API void onnxzip_write_options_init(onnxzip_write_options *opts);

/* Starts an archive that will appear at `path` when onnxzip_writer_finish()
 * succeeds. Until then everything goes to a temporary file in the same
 * directory, so `path` never holds a partial archive; an existing file at
 * `path` is replaced atomically at finish (see "Outputs" above: an existing
 * non-regular `path` is ONNXZIP_ENOTREG here). Missing parent directories of
 * `path` are created here; _abort() (or a failed _finish()) removes them
 * again. `opts` may be NULL for defaults.
 * On success *out is the writer; release it with _finish() or _abort(). */
ONNXZIP_API int onnxzip_writer_create(const char *path, const onnxzip_write_options *opts,
                                      onnxzip_writer **out);

/* Adds an entry named `name` holding `size` bytes copied from `data`.
 * Names must be valid entry names (spec §"Entry names": a C identifier not
 * starting with "__", unique under ASCII down-casing); use
 * onnxzip_entry_name_for() to derive one from a tensor name. */
ONNXZIP_API int onnxzip_writer_add_memory(onnxzip_writer *w, const char *name,
                                          const void *data, uint64_t size);

/* Adds an entry named `name` holding `size` bytes of file `fd` starting at
 * `offset`, streamed in bounded chunks (never all in memory). Runs of zero
 * bytes become holes in the output (a sparse file) where the file system
 * allows. The fd stays the caller's. */
ONNXZIP_API int onnxzip_writer_add_file_range(onnxzip_writer *w, const char *name, int fd,
                                              uint64_t offset, uint64_t size);

/* Sets the serialized onnx.ModelProto (copied) to be written as the last
 * entry, __MODEL_PROTO. Every EXTERNAL reference in it must name an entry
 * added to this writer, and it must have what onnxzip_verify() requires of
 * a model; both are checked by onnxzip_writer_finish(). */
ONNXZIP_API int onnxzip_writer_set_model(onnxzip_writer *w, const void *model, size_t size);

/* Package writers (ONNXZIP_WRITE_PACKAGE) only. A plain file `path` of
 * `size` bytes: from `fd` at `offset` (read now, the fd stays the caller's),
 * or from memory. Written STORED and aligned, so that readers hand it out in
 * place (onnxzip_member_bytes()). ONNXZIP_ENAME for a path that is not a
 * package path (spec 19.2), ONNXZIP_EDUPNAME for one taken. */
ONNXZIP_API int onnxzip_writer_add_file(onnxzip_writer *w, const char *path, int fd, uint64_t offset,
                                        uint64_t size);
ONNXZIP_API int onnxzip_writer_add_file_memory(onnxzip_writer *w, const char *path, const void *data,
                                               uint64_t size);

/* Package writers only: model `path` (e.g. "onnx/model.onnx"), whose
 * EXTERNAL locations name tensor entries relative to its directory (entry
 * "onnx/w" is location "w"). Copied; written at finish, after every tensor
 * and file, and checked then as open checks it. */
ONNXZIP_API int onnxzip_writer_add_model(onnxzip_writer *w, const char *path, const void *model, size_t size);

/* Package writers only: the default model (what onnxzip_open() of the
 * package holds); without a call, the first model added. */
ONNXZIP_API int onnxzip_writer_set_default_model(onnxzip_writer *w, const char *path);

/* Checks the model's references (ONNXZIP_EREF, ONNXZIP_ERANGE, ...), then
 * refuses a model onnxzip_verify() would refuse: ONNXZIP_EPROTO with verify's
 * message, naming each field missing (ir_version, opset_import, graph).
 * Then writes the model and the central directory, fsyncs, and renames the
 * temporary file to the target path. Frees the writer and sets *w to NULL
 * whether it succeeds or not; on failure the temporary file is removed and
 * the target path is untouched. */
ONNXZIP_API int onnxzip_writer_finish(onnxzip_writer **w);

/* Abandons the archive: removes the temporary file, frees the writer, sets
 * *w to NULL. NULL or *w == NULL is a harmless no-op. */
ONNXZIP_API void onnxzip_writer_abort(onnxzip_writer **w);

/* Writes into `buf` (capacity `cap`, including the NUL) the entry name that
 * the spec's deterministic mapping gives `tensor_name` when `index` names
 * with the same down-cased base were already taken (index 0 = first).
 * Returns the name's length, ONNXZIP_ELIMIT if cap is too small. */
ONNXZIP_API int onnxzip_entry_name_for(const char *tensor_name, unsigned index, char *buf,
                                       size_t cap);

/* Progress of a long operation: `done` of `total` payload bytes so far.
 * Called from the working thread, at most every few MiB and once at the end. */
typedef void (*onnxzip_progress_fn)(void *user, uint64_t done, uint64_t total);

/* Called from inside the progress callback of onnxzip_fetch() or
 * onnxzip_fetch_tensors(), stops that call as soon as the callback returns:
 * it fails with ONNXZIP_ECANCELED and leaves no output (onnxzip_fetch()
 * removes its .part files too, as for any failure not worth resuming). It
 * applies to the calling thread's current callback only; anywhere else it
 * does nothing. (Language bindings use it to end a transfer whose callback
 * raised an exception.) */
ONNXZIP_API void onnxzip_cancel(void);

/* Flags for onnxzip_pack_options.flags. */
enum {
    /* Leave tensors held in typed fields (float_data, int32_data, ...) inline
     * instead of converting them to raw little-endian entries. */
    ONNXZIP_PACK_KEEP_TYPED = 1u << 0,
    /* Leave attribute tensors (Constant values, ...) inline. */
    ONNXZIP_PACK_NO_CONVERT_ATTRIBUTES = 1u << 1,
    /* Store identical payloads once (XXH3, then a byte compare); every tensor
     * with that payload references the one entry. */
    ONNXZIP_PACK_DEDUP = 1u << 2,
    /* As ONNXZIP_WRITE_NO_SYNC: no fsync of the output. */
    ONNXZIP_PACK_NO_SYNC = 1u << 3
};

/* Options for onnxzip_pack(). Initialize with onnxzip_pack_options_init(). */
typedef struct onnxzip_pack_options {
    uint32_t alignment;      /* as onnxzip_write_options.alignment; default 64 */
    uint32_t flags;          /* ONNXZIP_PACK_* */
    uint64_t size_threshold; /* payloads of at least this many bytes become
                                entries; smaller stay inline; default 1024 */
    const char *data_dir;    /* directory of external data files; NULL: the
                                model's own directory (like onnx's
                                load_external_data_for_model) */
    onnxzip_progress_fn progress; /* NULL: none */
    void *progress_user;
    const char *default_model; /* onnxzip_pack_dir(): the package's default
                                  model (its path in the folder); NULL: the
                                  first "model.onnx" (shallowest, then in
                                  byte order), else the first model */
    uint64_t reserved[3];
} onnxzip_pack_options;

/* Fills *opts with the defaults. NULL is a harmless no-op. */
ONNXZIP_API void onnxzip_pack_options_init(onnxzip_pack_options *opts);

/* Converts the classic model at `in_path` — single-file or with external
 * data — into an archive at `out_path`. Every TensorProto whose payload holds
 * at least size_threshold bytes — initializers, attribute tensors (Constant),
 * sparse tensors, at any depth of subgraphs, functions and training graphs —
 * becomes an aligned entry: raw_data and external data byte for byte, typed
 * fields converted to ONNX's raw little-endian form (unless
 * ONNXZIP_PACK_KEEP_TYPED); everything else of the model is kept byte for
 * byte. Payloads are streamed from the input files, never all in memory.
 *
 * External data is read under the rules ONNX >= 1.22 enforces, each violation
 * an ONNXZIP_EPATH error naming the tensor, the location and the rule:
 * absolute locations, ".." components, non-regular files, files with more
 * than one hard link, and anything resolving outside the data directory are
 * refused; offset/length past the end of the file is ONNXZIP_ERANGE.
 * Symbolic links (a location that is one or goes through one) are followed
 * where ONNX Runtime >= 1.24 follows them and nowhere else (spec 12.5): when
 * the real file lies below the data directory (links resolved), or, the
 * model file being itself a link (any chain; data_dir NULL), below the
 * directory its real file is in — a Hugging Face cache's snapshot, whose
 * model.onnx and model.onnx_data both link into blobs/. Any other link is
 * ONNXZIP_EPATH naming where it leads and the directories allowed. The file
 * is checked as opened (device and inode of its real directory and of theirs
 * up to the root), not by name only. On Windows links stay refused. `out_path` must not be the model nor any of its external
 * data files, under any name (ONNXZIP_ESAMEFILE, naming the tensor of a data
 * file; see "Outputs" above): all of them are resolved before anything is
 * written. Refuses a model onnxzip_verify() would refuse (no ir_version,
 * opset_import or graph): ONNXZIP_EPROTO with verify's message for the
 * archive, no output written. Missing parent directories of `out_path` are
 * created; removed again on failure. `opts` may be NULL for defaults. */
ONNXZIP_API int onnxzip_pack(const char *in_path, const char *out_path,
                             const onnxzip_pack_options *opts);

/* Packs the folder `dir` — a model repository: every .onnx at any depth with
 * its external data in any layout (chunks, data shared by several models),
 * and every other file — into the package `out_path` (spec 19.6). Payloads
 * of size_threshold bytes or more become tensor entries in their model's
 * directory, equal payloads of one directory stored once (whatever the
 * flags); plain files, of any size (zip64 from 4 GiB on; holes copied as
 * holes), are stored byte for byte; the manifest records each
 * model's data files and where its tensors were in them, so that
 * onnxzip_unpack_dir() recreates the folder. Symbolic links to files are
 * followed (a Hugging Face cache snapshot), to directories refused; ".git"
 * and ".cache" at the folder's top (git's and huggingface_hub's own
 * bookkeeping) are left out. Refused before anything is written, naming the
 * path: no model (ONNXZIP_ENOMODEL); a name that is no package path, e.g.
 * not UTF-8, or a top-level name the format reserves: "__" and then only
 * letters, digits and '_', like __PACKAGE (__init__.py is a file like any
 * other) (ONNXZIP_ENAME); two names one file system would make one
 * (ONNXZIP_EDUPNAME); missing
 * external data (ONNXZIP_ENOTFOUND) or data outside the folder
 * (ONNXZIP_EPATH, the rules of onnxzip_pack()); `out_path` inside `dir`
 * (ONNXZIP_EINVAL); anything but files and directories (ONNXZIP_ENOTREG).
 * A folder with "model.sig" at its top is signed (OpenSSF Model Signing
 * signs the folder's bytes): the package is written beside `out_path` and
 * takes its name only when every model file and data file unpacks from it
 * (onnxzip_file_plan_create()) byte for byte as the folder holds it, and
 * every data file of the folder is one that unpack writes; else nothing is
 * written and ONNXZIP_EMISMATCH names the first file that would differ
 * (e.g. a data file outside its model's directory, non-zero bytes between
 * two tensors of a data file): its signature could never verify. model.sig
 * itself is stored as a plain file.
 * onnxzip_pack() of a directory calls this. */
ONNXZIP_API int onnxzip_pack_dir(const char *dir, const char *out_path, const onnxzip_pack_options *opts);

/* Layouts onnxzip_unpack() writes. */
typedef enum onnxzip_unpack_layout {
    ONNXZIP_UNPACK_SINGLE = 0,     /* NAME.onnx + one data file */
    ONNXZIP_UNPACK_PER_TENSOR = 1, /* NAME.onnx + one file per entry */
    ONNXZIP_UNPACK_INLINE = 2,     /* one self-contained NAME.onnx (< 2 GiB) */
    ONNXZIP_UNPACK_SAFETENSORS = 3 /* NAME.onnx + NAME.safetensors (or shards),
                                      as onnx-ir's save_safetensors(); see
                                      onnxzip_unpack() */,
    ONNXZIP_UNPACK_ORIGINAL = 4    /* a package's model as it was packed
                                      (spec 19.6): its data files of their
                                      names, each tensor at its recorded
                                      offset, the others inline;
                                      onnxzip_unpack_dir()'s layout */
} onnxzip_unpack_layout;

/* Flags for onnxzip_unpack_options.flags. */
enum {
    /* Also write ONNX's optional "checksum" key (SHA-1 of each payload). */
    ONNXZIP_UNPACK_CHECKSUM = 1u << 0,
    /* No fsync of the files written nor of the directory: the renames stay
     * atomic, but a power failure may lose the output (as ONNXZIP_WRITE_NO_SYNC). */
    ONNXZIP_UNPACK_NO_SYNC = 1u << 1
};

/* Options for onnxzip_unpack(). Initialize with onnxzip_unpack_options_init(). */
typedef struct onnxzip_unpack_options {
    onnxzip_unpack_layout layout; /* default ONNXZIP_UNPACK_SINGLE */
    uint32_t alignment;  /* SINGLE (SAFETENSORS: its side file): every
                            tensor's offset in the data file is a
                            multiple of this power of two (1..65536); default
                            4096, the page size ONNX recommends for mmap */
    const char *location; /* SINGLE (SAFETENSORS: its side file): the data
                             file's name (a plain file name in the model's
                             directory); NULL: "NAME.onnx.data" */
    uint32_t flags;       /* ONNXZIP_UNPACK_* */
    onnxzip_progress_fn progress;
    void *progress_user;
    uint64_t size_threshold; /* SINGLE, PER_TENSOR, SAFETENSORS: tensors of fewer bytes
                                are written inline as raw_data, as onnx's
                                converters do; default 1024. ONNX Runtime
                                needs small constants that shape inference
                                reads (e.g. Reshape shapes) to be inline. */
    uint64_t max_shard_size; /* SAFETENSORS: 0 (default) writes one
                                NAME.safetensors; N > 0 splits the tensors
                                into shards of at most N payload bytes each
                                (see onnxzip_unpack()). Other layouts: must
                                be 0 (ONNXZIP_EINVAL). */
    const char *model;       /* a package's model to unpack (its path);
                                NULL: the default model */
    uint64_t reserved[1];
} onnxzip_unpack_options;

/* Fills *opts with the defaults. NULL is a harmless no-op. */
ONNXZIP_API void onnxzip_unpack_options_init(onnxzip_unpack_options *opts);

/* Converts the archive at `archive_path` back to classic ONNX: the model at
 * `model_path` (e.g. "DIR/NAME.onnx") and, unless inline, its data files in
 * the same directory. References use only the standard keys location,
 * offset, length (and checksum on request). Everything is built in a
 * temporary directory beside the target and renamed into place, model last;
 * nothing is written outside the model's directory, and an existing file is
 * only replaced by a complete one. The model's directory and its missing
 * parents are created (all layouts); removed again on failure (those still
 * empty). ONNXZIP_ELIMIT when an inline model would
 * exceed protobuf's 2 GiB. Neither the model nor any data file may be the
 * archive (ONNXZIP_ESAMEFILE) or an existing special file (ONNXZIP_ENOTREG),
 * as "Outputs" above says. ONNXZIP_EPROTO, before anything is written,
 * for an archive whose model onnxzip_verify() refuses for its fields
 * (ir_version, opset_import, graph), with verify's message. `opts` may be
 * NULL for defaults. */
ONNXZIP_API int onnxzip_unpack(const char *archive_path, const char *model_path,
                               const onnxzip_unpack_options *opts);

/* Recreates the folder a package was packed from (spec 19.6) as `dir`,
 * which must not exist or be empty: every file byte for byte, every model at
 * its path with the layout ONNXZIP_UNPACK_ORIGINAL (its data files under
 * their names, tensors at their offsets), or `opts->layout` for a model
 * whose data files cannot be recreated (packed from one self-contained
 * .onnx: ONNXZIP_UNPACK_ORIGINAL writes it inline). Everything is built in a
 * temporary folder beside `dir` and renamed into place: `dir` appears whole
 * or not at all. Refuses a package whose paths collide on this file system
 * (ONNXZIP_EDUPNAME) or a single-model archive (ONNXZIP_EINVAL: use
 * onnxzip_unpack()). opts->model must be NULL. */
ONNXZIP_API int onnxzip_unpack_dir(const char *archive_path, const char *dir, const onnxzip_unpack_options *opts);

/* ---------------------------------------------------------------------------
 * File plans: the bytes onnxzip_unpack_dir() (`onnxzip unpack PKG DIR`, its
 * default options) writes for each file of a package's folder, described
 * without writing them: what a signature's digests are computed over
 * (OpenSSF Model Signing signs that folder), and what a host without
 * libcrypto (the WebAssembly build) hashes itself. A file's bytes are its
 * segments one after the other: bytes the plan holds (a model file as
 * unpack re-serializes it), ranges of the archive file (a plain file's
 * entry, a tensor's bytes at its place in a data file), and runs of zeros
 * (the gaps between tensors). The plan is built by the code unpack writes
 * with, so the two cannot differ.
 * ------------------------------------------------------------------------- */

typedef enum onnxzip_segment_kind {
    ONNXZIP_SEGMENT_BYTES = 0,   /* `length` bytes at `bytes` */
    ONNXZIP_SEGMENT_ARCHIVE = 1, /* `length` bytes of the archive file from `offset` */
    ONNXZIP_SEGMENT_ZEROS = 2    /* `length` zero bytes */
} onnxzip_segment_kind;

typedef struct onnxzip_segment {
    onnxzip_segment_kind kind;
    uint64_t length;
    const void *bytes;     /* BYTES: owned by the plan; NULL otherwise */
    uint64_t offset;       /* ARCHIVE: the range's first byte in the archive file */
    size_t entry;          /* ARCHIVE: the entry whose data holds the range
                              (onnxzip_entry_at()): a host that reads it
                              over a network reads that entry whole and
                              checks it (onnxzip_host_check_header(),
                              onnxzip_host_check_data()) before hashing the
                              range; SIZE_MAX for the whole archive file of
                              a single-model archive (no entry) */
    uint64_t entry_offset; /* ARCHIVE: where the range starts in that entry's data */
} onnxzip_segment;

/* One file of the folder. */
typedef struct onnxzip_planned_file {
    const char *path;      /* its path in the folder, '/'-separated */
    const char *model;     /* the model it belongs to (the model file itself,
                              or one of its data files): that model's path;
                              NULL for a plain file */
    uint64_t size;         /* the sum of its segments' lengths */
    const onnxzip_segment *segments;
    size_t n_segments;
} onnxzip_planned_file;

typedef struct onnxzip_file_plan onnxzip_file_plan;

/* Plans the files of the package that `a` holds (any handle: onnxzip_open(),
 * onnxzip_open_model(), onnxzip_open_url(), onnxzip_open_host()). `path`:
 * NULL, every file onnxzip_unpack_dir() writes (members in manifest order,
 * each model followed by its data files); a plain file's path, that file; a
 * model's path, the model file and its data files (tensors it shares with
 * another model of its directory included, as unpack writes them); a data
 * file's path, that file alone. A data file two models of one directory
 * share is listed once. For a single-model archive (no members) the one file
 * is "." (OMS's single-file model): the archive file itself, one ARCHIVE
 * segment (entry SIZE_MAX); `path` must then be NULL or ".".
 *
 * Planning a model reads its model entry (and, through a handle without a
 * mapping, the entries of tensors that unpack writes inline in the model
 * file, e.g. a tensor the folder held inline, each checked against its
 * CRC-32 and XXH3); it never reads a data file's bytes. A host handle
 * without `read` (onnxzip_open_host()) cannot plan a model that has such
 * tensors: ONNXZIP_EUNSUPPORTED as its onnxzip_tensor_read() says, never a
 * plan of other bytes. Bytes of ARCHIVE segments are not read: a mapped handle's
 * caller hashes them in place, others read them (checked) through the
 * source. 0 with *out set (free with onnxzip_file_plan_free(); it does not
 * borrow from `a`, but its offsets are `a`'s file's); else *out NULL and
 * ONNXZIP_EINVAL (NULL `a` or `out`), ONNXZIP_ENOTFOUND (`path` is no file
 * of the folder, named), or the status unpack would fail with (naming the
 * model). */
ONNXZIP_API int onnxzip_file_plan_create(onnxzip_archive *a, const char *path, onnxzip_file_plan **out);

/* The paths of every file onnxzip_unpack_dir() writes, in the order
 * onnxzip_file_plan_create(a, NULL) lists them, without planning their
 * bytes where the manifest says them: a model's data files are the names
 * its manifest records when the original layout takes them (plain names
 * beside the model), and no model entry is read; a model whose data files
 * the layout refuses is planned (its entry read) to name what unpack writes
 * instead. Files listed by their names only have no segments and size 0.
 * (A manifest whose places the original layout refuses, which pack never
 * writes, is known only by planning: its model's plan then lacks a name
 * listed here, and onnxzip_file_plan_create() of that name is
 * ONNXZIP_ENOTFOUND.) Returns and frees as onnxzip_file_plan_create(). */
ONNXZIP_API int onnxzip_file_plan_names(onnxzip_archive *a, onnxzip_file_plan **out);

/* The number of files planned (0 for NULL). */
ONNXZIP_API size_t onnxzip_file_plan_count(const onnxzip_file_plan *p);

/* The i-th file; NULL when out of range. Owned by the plan. */
ONNXZIP_API const onnxzip_planned_file *onnxzip_file_plan_at(const onnxzip_file_plan *p, size_t i);

/* Frees *p and sets it to NULL (NULL or *p NULL: nothing). */
ONNXZIP_API void onnxzip_file_plan_free(onnxzip_file_plan **p);
/* ONNXZIP_UNPACK_SAFETENSORS (spec 12.4) writes the tensors of at least
 * size_threshold bytes into NAME.safetensors, the file name onnx-ir's
 * save_safetensors() gives model NAME.onnx (NAME: the model's file name
 * without its last extension), and references them there by location,
 * offset (8 + header length + data_offsets[0]) and length. The header lists
 * each tensor's dtype, shape and data_offsets, and "__metadata__"
 * {"format": "onnx"}; it is padded with spaces so that the data starts at a
 * multiple of 4096 bytes. The format allows no gaps between tensors, so they
 * are ordered by the largest power of two (<= 4096) dividing their size,
 * largest first: each starts at a multiple of it, the most a gapless file
 * can give (and at least its element size). Names: a tensor's key
 * (onnxzip_tensor.key: its name, or an unnamed one's path, e.g.
 * "Constant_3/value"). Tensors sharing the same bytes are written once,
 * under the first one's key. A tensor goes instead to the side file (as
 * the single layout writes it, `location`, default NAME.onnx.data) when
 * safetensors cannot name its type exactly (STRING, COMPLEX128, INT4,
 * UINT4, INT2, UINT2, FLOAT4E2M1 and any type unknown here), when its key
 * is not valid UTF-8 or is "__metadata__", or when an earlier tensor of
 * other bytes already has its key; no tensor's type or bytes change. With
 * max_shard_size N the tensors fill, in model order, shards of at most N
 * payload bytes (a tensor larger than N gets a shard of its own), named as
 * Hugging Face and onnx-ir name them: NAME-00001-of-0000K.safetensors, plus
 * NAME.safetensors.index.json ({"metadata": {"total_size": T},
 * "weight_map": {KEY: FILE, ...}}); when everything fits in one shard, one
 * NAME.safetensors and no index. No safetensors file when no tensor goes
 * there. ONNXZIP_EINVAL when a file name would be the model's own. */

/* Parses a byte size as Hugging Face's tools write one (max_shard_size):
 * digits, optionally a fraction, then optionally a unit: B, KB, MB, GB, TB
 * (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), any case, spaces
 * allowed before the unit; e.g. "5GB", "500MB", "2GiB", "1.5GB", "4096".
 * Fractions of a byte are dropped. Returns 0 and *out, or ONNXZIP_EINVAL
 * (naming the text) for anything else or a size over 2^64 - 1. */
ONNXZIP_API int onnxzip_parse_size(const char *text, uint64_t *out);

/* Replaces the model of the archive at `archive_path` in place with the
 * serialized ModelProto `model` (`size` bytes). Weights are neither read,
 * rewritten nor moved; bytes written are O(size + central directory). The
 * procedure is crash-safe (spec §"Model update"): a process killed at any
 * instant leaves the archive readable with either the old or the new model,
 * and readers opening concurrently see one or the other. Every EXTERNAL
 * reference of the new model must resolve to an entry of the archive, and
 * sizes must match (ONNXZIP_EREF, ONNXZIP_ERANGE, ONNXZIP_ESIZE), and the
 * model must have what onnxzip_verify() requires of it (ir_version, an
 * opset_import, a graph: ONNXZIP_EPROTO with verify's message), all checked
 * before a byte changes. The archive
 * must be a regular file (ONNXZIP_ENOTREG otherwise). Concurrent updates of
 * one archive are not supported (an advisory lock makes the second one fail
 * with ONNXZIP_EBUSY).
 *
 * All or nothing (spec 15.6): the space the update needs is reserved before
 * the first byte changes, and a failed write or sync (ENOSPC, EIO) is undone
 * by cutting the file back to its old size. So on any error the archive is
 * byte-identical to before (a failed write's message ends "the archive is
 * unchanged"; in the one exception, a rollback that fails too, it says the
 * update could not be undone), and 0 means the new model is in place and
 * synced. A failure after that point, while removing the old model's bytes,
 * still returns 0: the archive then keeps dead space (spec 15.3), which
 * readers skip and the next update removes. A process killed mid-update
 * cannot roll back: it may leave the transient form of spec 15.6, which this
 * library reads as the old model, and which other zip readers (libzip, unzip,
 * Python's zipfile) read as the old archive too, except after a kill within
 * the microseconds that copy a central directory larger than a page. Running
 * the update again completes it. */
ONNXZIP_API int onnxzip_update_model(const char *archive_path, const void *model, size_t size);

/* Replaces model `model_path` of the package at `archive_path` (spec 19).
 * A package's models lie before its manifest, so the package is rewritten:
 * into a temporary file, every entry checked against its digests, renamed
 * over the old one (handles open on it keep the old file; O(archive), not
 * in place as onnxzip_update_model()). The new model must resolve against
 * the entries of its directory as open checks it. ONNXZIP_ENOTFOUND for no
 * such model; ONNXZIP_EINVAL when the archive is no package. */
ONNXZIP_API int onnxzip_update_package_model(const char *archive_path, const char *model_path, const void *model,
                                             size_t size);

/* Writes the payload of the first tensor whose key is `tensor_name` (its
 * name, or an unnamed tensor's path: onnxzip_tensor.key, as
 * onnxzip_find_tensor() looks it up; any storage but TYPED) to `out_path`,
 * atomically (temporary file + rename). `out_path` must
 * not be the file `a` was opened from nor one of its external data files
 * (ONNXZIP_ESAMEFILE), nor special (ONNXZIP_ENOTREG): see "Outputs" above.
 * Missing parent directories of `out_path` are created; removed again on
 * failure. */
ONNXZIP_API int onnxzip_extract_tensor(onnxzip_archive *a, const char *tensor_name,
                                       const char *out_path);

/* As onnxzip_extract_tensor() for a package's member (spec 19): the bytes of
 * the file (or the model's serialized ModelProto as stored) at `member_path`
 * to `out_path`, atomically, under the same output rules. Streamed: never
 * the whole member in memory (a local archive's bytes are copied by the
 * kernel, holes kept; a URL's are read in ranges of 8 MiB), so a file of any
 * size extracts. ONNXZIP_ENOTFOUND when the package has no such member. */
ONNXZIP_API int onnxzip_extract_member(onnxzip_archive *a, const char *member_path, const char *out_path);

/* Rewrites the zip archive at `in_path` — any zip, e.g. an onnxzip archive
 * re-zipped with deflate by another tool, read through libzip — into an
 * aligned onnxzip archive at `out_path` with the given options (NULL:
 * defaults). Entries are decompressed, checked against their CRC-32
 * (ONNXZIP_ECRC) and streamed. The input must hold one model entry:
 * "__MODEL_PROTO" or, as tf2onnx's large-model zip names it,
 * "__MODEL_PROTO.onnx", anywhere in the zip, either also under a directory
 * ("out/__MODEL_PROTO.onnx"; two: ONNXZIP_EDUPNAME); a zip without one
 * ("model.onnx" is not one) is ONNXZIP_ENOTONNXZIP, and one cut short
 * ONNXZIP_ETRUNC, as onnxzip_open() says them. Entry names that are not
 * onnxzip names (tf2onnx's "dense-1_MatMul_0", PyTorch's "fc1.weight") are
 * mapped as onnxzip_entry_name_for() maps tensor names, and the model's
 * references rewritten to match, as are PyTorch ZIP_ARCHIVE exports'
 * placeholders (raw_data "__EXTERNAL": the entry named as the tensor); a
 * reference to an entry the zip lacks is ONNXZIP_EREF (spec section 18).
 * Refuses a
 * model onnxzip_verify() would refuse (no ir_version, opset_import or
 * graph): ONNXZIP_EPROTO with verify's message for the output archive, no
 * output written. `out_path` must not be the
 * input (ONNXZIP_ESAMEFILE) nor special (ONNXZIP_ENOTREG): see "Outputs".
 * Missing parent directories of `out_path` are created; removed again on
 * failure. ONNXZIP_EUNSUPPORTED in builds without libzip
 * (onnxzip_has_feature(ONNXZIP_FEATURE_REPACK) == 0). */
ONNXZIP_API int onnxzip_repack(const char *in_path, const char *out_path,
                               const onnxzip_write_options *opts);

/* ---------------------------------------------------------------------------
 * Signatures: OpenSSF Model Signing (OMS 1.0) (ONNXZIP_FEATURE_SIGNING)
 *
 * A package is signed as the folder it unpacks to (onnxzip_unpack_dir()):
 * every plain file as stored, every model file and data file as unpack
 * reconstructs them. The signature is a Sigstore bundle as `model_signing`
 * 1.1.1 writes it (mediaType application/vnd.dev.sigstore.bundle.v0.3+json;
 * v0.1 and v0.2 are read too): a DSSE envelope (payloadType
 * application/vnd.in-toto+json, exactly one signature, an ECDSA signature
 * over DSSE's pre-authentication encoding) whose payload is an in-toto
 * Statement v1 with predicateType https://model_signing/signature/v1.0,
 * serialization method "files" (one resource {name, algorithm sha256,
 * digest} per file) or "shards" (one per shard_size bytes of each file,
 * named PATH:START:END, its digest over those bytes; an empty file has
 * none), hash_type sha256. It lives in the package as the
 * plain file "model.sig" at its top (listed in the statement's
 * ignore_paths), or in a file of its own (a detached signature, given with
 * onnxzip_trust_set_signature()). When both exist the detached one is used
 * and the package's model.sig is then an ordinary file: it must be one of
 * the statement's resources or ignore_paths like any other.
 *
 * A single-model archive (no package manifest) is OMS's single-file model:
 * the one resource is named "." and its digest is the SHA-256 of the archive
 * file's bytes (what `model_signing sign key model.onnxzip --signature
 * model.onnxzip.sig` writes); its signature is detached only.
 *
 * Statuses of every call below: ONNXZIP_EUNSUPPORTED in builds without
 * signing (its message saying so), ONNXZIP_EINVAL for NULL arguments,
 * ONNXZIP_ENOMEM, and:
 *   ONNXZIP_EUNSIGNED   no signature: the package has no model.sig and none
 *                       was given; or the file or model asked for is one
 *                       the statement's ignore_paths leave out;
 *   ONNXZIP_EBUNDLE     the signature file or its statement is malformed or
 *                       of a form not read here: JSON (UTF-8, a key given
 *                       twice), base64, PEM, DER, over 16 MiB or nested over
 *                       64 deep, a media type, predicateType, _type,
 *                       serialization method, subject (not exactly one, or
 *                       its digest not the SHA-256 of the resources' digests
 *                       in their order), a resource name that is absolute,
 *                       has a "." or ".." component, or is given twice, a
 *                       digest that is not 64 hex digits, not exactly one
 *                       DSSE signature, a shard name that is not
 *                       PATH:START:END within shard_size; the message
 *                       names the field;
 *   ONNXZIP_ESIGNATURE  well-formed but not trusted: the ECDSA signature
 *                       does not verify with the trusted key (or the key
 *                       hint names another key), the certificate chain does
 *                       not lead to a trusted root, a certificate is
 *                       expired or not yet valid now, the leaf has neither
 *                       KeyUsage digitalSignature nor ExtendedKeyUsage
 *                       codeSigning, the payload type is not in-toto's, or
 *                       the bundle's kind of key is not what the trust has
 *                       (a certificate chain with only a public key
 *                       trusted, or the reverse);
 *   ONNXZIP_EMISMATCH   the package differs from the statement: a file it
 *                       has that the statement lacks, one the statement
 *                       lists that it lacks, or a file (a shard) whose
 *                       SHA-256 is not its resource's digest; the message
 *                       names the file (the shard);
 *   ONNXZIP_EUNSUPPORTED also for keyless (Sigstore Fulcio + Rekor) bundles
 *                       ("keyless (Sigstore) signatures are not supported")
 *                       and hash types other than sha256.
 *
 * Certificates are checked at the current time, which is stricter than
 * model_signing (it checks the chain at the leaf's notBefore, so that an
 * expired leaf still verifies): a bundle carries no trusted timestamp, so
 * nothing proves it was signed while its certificate was valid. A package
 * whose signing certificate expired must be signed again. Revocation is not
 * checked. A signature proves who signed only through a certificate chain
 * to a root the caller trusts, or through a public key the caller trusts;
 * it says nothing about when the package was signed (no freshness: an older
 * signed package stays valid).
 * ------------------------------------------------------------------------- */

/* Who may have signed (trusted public keys and root certificates), and an
 * optional detached signature. Not modified by the calls that read it, so
 * one trust may serve several threads once it is filled. */
typedef struct onnxzip_trust onnxzip_trust;

/* A new empty trust in *out (free it with onnxzip_trust_free()). */
ONNXZIP_API int onnxzip_trust_create(onnxzip_trust **out);

/* Trusts the EC public key(s) in `pem` (len bytes; one or more PEM
 * "PUBLIC KEY" blocks, SubjectPublicKeyInfo; P-256, P-384 or P-521, else
 * ONNXZIP_EBUNDLE naming the curve; not PEM or bad DER: ONNXZIP_EBUNDLE).
 * The bytes are copied. A bundle signed with a key (verificationMaterial
 * publicKey) verifies when one trusted key verifies its signature. */
ONNXZIP_API int onnxzip_trust_add_public_key(onnxzip_trust *t, const void *pem, size_t len);

/* Trusts the certificate(s) in `pem` (one or more PEM "CERTIFICATE"
 * blocks; none or bad DER: ONNXZIP_EBUNDLE) as roots: a bundle signed with
 * a certificate (verificationMaterial x509CertificateChain, leaf first, then
 * its intermediates) verifies when its chain leads to one of them. The
 * bytes are copied. */
ONNXZIP_API int onnxzip_trust_add_certificates(onnxzip_trust *t, const void *pem, size_t len);

/* The detached signature (the bundle's JSON, len bytes, copied; up to
 * 16 MiB, else ONNXZIP_EBUNDLE) used instead of the package's model.sig.
 * Parsed when a package is opened, not here. A second call replaces it. */
ONNXZIP_API int onnxzip_trust_set_signature(onnxzip_trust *t, const void *bundle, size_t len);

/* Frees *t and sets it to NULL (NULL or *t NULL: nothing). */
ONNXZIP_API void onnxzip_trust_free(onnxzip_trust **t);

/* A verified signature: the statement it signs, and which of the package's
 * files have been checked against it. Owns copies of everything it needs
 * (the trust and the archive may be freed first, but onnxzip_signed_check()
 * needs an archive of the same package). */
typedef struct onnxzip_signed onnxzip_signed;

/* Reads the signature (t's detached one, else the package's model.sig),
 * checks it against t (the signature, the key or the chain), parses the
 * statement, and checks that the package's file NAMES are exactly the
 * statement's resources, apart from its ignore_paths (a path is ignored
 * when it equals an ignore path or lies below it, e.g. ".git/config"
 * below ".git"). Reads model.sig and the package's model entries (to name
 * the data files unpack would write: onnxzip_file_plan_create()), no
 * weights and no plain file's bytes. `a`: any
 * handle of the package: onnxzip_open(), onnxzip_open_model(),
 * onnxzip_open_url() or onnxzip_open_host() (for a single-model archive:
 * its handle; the signature must be detached). On success *out holds the
 * signed statement (free it with onnxzip_signed_free()); on failure *out is
 * NULL and the status and message say why (see above). */
ONNXZIP_API int onnxzip_signed_open(onnxzip_archive *a, const onnxzip_trust *t, onnxzip_signed **out);

/* Checks the SHA-256 of the bytes onnxzip_unpack_dir() would write for
 * `path` against the statement: a plain file; a model path (as listed by
 * the package's manifest): the model file and every data file of that model
 * (shared tensors included). NULL: every file of the package (for a
 * single-model archive, NULL and "." hash the archive file). Reads through
 * a's source (a mapped file: in place, files hashed on all cores; a URL:
 * ranges, each entry CRC-checked as reads are). A file found equal once is
 * not hashed again by later calls on `s`. Returns 0 when every file
 * checked matches; ONNXZIP_EMISMATCH naming the first that does not;
 * ONNXZIP_ENOTFOUND when the package has no file or model `path`; read
 * errors (ONNXZIP_EIO, ONNXZIP_ECRC, network statuses) as reads report
 * them. `a` must be a handle of the package `s` was opened from.
 *
 * A handle without a mapping (onnxzip_open_url(), onnxzip_open_host())
 * reads again through its source whatever is used later, and an origin may
 * answer a later request with other bytes whose CRC-32 and XXH3 it made
 * match (spec 20.5). So, once every file checked matched, each entry those
 * files hold whole (a tensor entry, a plain file; for a single-model
 * archive, every entry) is pinned to `a` with the SHA-256 of the bytes the
 * check read: every later read of a pinned entry through `a`
 * (onnxzip_tensor_read(), onnxzip_member_read(), onnxzip_extract_member(),
 * onnxzip_fetch_tensors(), another check) hashes the whole entry and
 * fails with ONNXZIP_EMISMATCH naming the entry and the URL (no query) when
 * it differs, handing nothing out; a read of part of a pinned entry reads
 * the entry whole to check it (a tensor is an entry of its own in packages
 * onnxzip writes, so tensor reads cost no more). A mapped handle needs no
 * pins: its reads are the mapping the check read. */
ONNXZIP_API int onnxzip_signed_check(onnxzip_signed *s, onnxzip_archive *a, const char *path);

/* The check of a download (spec 20.5: the bytes checked are the bytes
 * kept, each transferred once): `fetched` is the single-model archive that
 * onnxzip_fetch() wrote (a temporary file) from `a`, a handle of the
 * package opened on its model `model` (onnxzip_open_url() with
 * opts.model); the SHA-256 of every file of `model` (its model file and
 * data files, as onnxzip_signed_check() plans them over `a`) is computed
 * over the fetched archive's bytes of the same entries, on all cores, and
 * compared with the statement. Nothing is read through `a`'s source but
 * what planning the model file needs (its entry and the tensors unpack
 * writes inline in it, as onnxzip_signed_check() reads them). Files found
 * equal are not marked checked for `a` (later reads through `a` are other
 * transfers). Returns 0; ONNXZIP_EMISMATCH naming the first file that
 * differs; ONNXZIP_ENOTFOUND when `model` is no model of the package or
 * the fetched archive lacks an entry the model's files are made of;
 * onnxzip_open()'s statuses for `fetched`. The caller renames `fetched`
 * into place only when it returns 0. */
ONNXZIP_API int onnxzip_signed_check_fetched(onnxzip_signed *s, onnxzip_archive *a, const char *model,
                                             const char *fetched);

/* Whether `path` is a file of the package that the signature covers (a
 * file of its folder not left out by the statement's ignore_paths): what a
 * trusted reader may hand out. 0 for NULL arguments. */
ONNXZIP_API int onnxzip_signed_covers(const onnxzip_signed *s, const char *path);

/* Checks bytes the caller holds as the package's file `path` (a plain file
 * or a model file, as onnxzip_unpack_dir() would write it: fetched once and
 * kept, or written by an extraction) against the statement: the SHA-256 of
 * `data` (len bytes; with the "shards" method, each shard's and the size)
 * against its digests. For the bytes checked to be the bytes used, hash
 * what is handed on, never a second read of it. Does not mark `path`
 * checked for onnxzip_signed_check(). Returns 0; ONNXZIP_EMISMATCH naming
 * the file; ONNXZIP_EUNSIGNED when the statement's ignore_paths leave it
 * out; ONNXZIP_ENOTFOUND when the package has no file `path`. */
ONNXZIP_API int onnxzip_signed_check_bytes(const onnxzip_signed *s, const char *path, const void *data,
                                           size_t len);

/* onnxzip_signed_check_bytes() of the contents of the regular file `file`
 * (mapped, not copied): e.g. a temporary output, renamed into place only
 * when this returns 0. Also onnxzip_open()'s statuses for reading it. */
ONNXZIP_API int onnxzip_signed_check_file(const onnxzip_signed *s, const char *path, const char *file);

/* The statement's resources: their count, and the name (a file's path;
 * for shards PATH:START:END) and lowercase hex SHA-256 digest of the i-th
 * (in the statement's order; NULL past the end). The strings belong to
 * `s`. */
ONNXZIP_API size_t onnxzip_signed_resource_count(const onnxzip_signed *s);
ONNXZIP_API const char *onnxzip_signed_resource_name(const onnxzip_signed *s, size_t i);
ONNXZIP_API const char *onnxzip_signed_resource_digest(const onnxzip_signed *s, size_t i);

/* Frees *s and sets it to NULL (NULL or *s NULL: nothing). */
ONNXZIP_API void onnxzip_signed_free(onnxzip_signed **s);

/* What onnxzip_sign() signs with. Zero it (or `= {0}`) and set: */
typedef struct onnxzip_sign_options {
    const char *private_key_path; /* PEM EC private key (P-256/384/521), unencrypted; required */
    const char *certificate_path; /* PEM signing certificate (its key must be the private key's), or
                                     NULL: sign with the key alone (the bundle names its public key
                                     by hint) */
    const char *chain_path;       /* PEM certificates after the leaf (intermediates, root), or NULL;
                                     only with certificate_path */
    const char *signature_path;   /* NULL: into the package as its model.sig; else a detached
                                     signature written to this file (temp file + rename) */
} onnxzip_sign_options;

/* Signs the package (or single-model archive) at `archive_path` as
 * `model_signing sign` signs the folder it unpacks to: every file hashed
 * (SHA-256 of the bytes unpack would write), the resources sorted by name,
 * method "files", ignore_paths "model.sig", ".git", ".github",
 * ".gitattributes", ".gitignore" (files under those names are left out, as
 * model_signing leaves them out, also with a detached signature), the
 * subject named after the file's name without its extension. The bundle is written as model_signing writes it (v0.3 media
 * type; key: publicKey.hint = SHA-256 hex of the public key's PEM, and
 * tlogEntries []; certificate: x509CertificateChain leaf first), so that
 * `model_signing verify` accepts the unpacked folder. With signature_path
 * NULL the package is rewritten with model.sig (replacing one it has) as
 * onnxzip_update_package_model() rewrites packages: every entry copied
 * (checked against its CRC-32 and XXH3) into a temporary file beside it,
 * renamed over it when complete (readers that have it open keep the old
 * file; a crash leaves the old one); a detached signature is written the
 * same way (temporary file + rename). A single-model archive cannot hold
 * its signature: ONNXZIP_EINVAL saying to give signature_path. A key or certificate that cannot be read or used:
 * ONNXZIP_EIO / ONNXZIP_EBUNDLE naming the file; a certificate whose key is
 * not the private key's: ONNXZIP_EINVAL. Nothing is changed on failure. */
ONNXZIP_API int onnxzip_sign(const char *archive_path, const onnxzip_sign_options *o);

#ifdef __cplusplus
}
#endif

#endif /* ONNXZIP_ONNXZIP_H */

/* Onnxzip names are UTF-8 in the header itself (spec 7.3), so a Unicode Path
 * field can only repeat the name: one that differs, or whose CRC-32 shows the
 * name changed after it was written, would make Info-ZIP, 7-Zip and
 * libarchive (which honour the field) see another name than readers that
 * ignore it (Python's zipfile, Java's ZipFile), so it is refused. */
#include <string.h>

#include "common/byteorder.h"
#include "common/checksum.h"
#include "read/zip_upath.h"

const char *oz_zip_upath_fault(const uint8_t *d, size_t n, const char *name, size_t len)
{
    if (n < 5 || d[0] != 1) return "an Info-ZIP Unicode Path field (0x7075) that is not version 1";
    if (oz_rd32(d + 1) != oz_crc32(0, name, len))
        return "an Info-ZIP Unicode Path field (0x7075) whose CRC-32 is not that of the entry's name";
    if (n - 5 != len || memcmp(d + 5, name, len))
        return "an Info-ZIP Unicode Path field (0x7075) naming the entry otherwise than its header";
    return NULL;
}

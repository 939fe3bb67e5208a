/* Onnxzip names are UTF-8 in the header itself (spec 7.3), so a Unicode Path
 * field can only repeat the name. One that names the entry otherwise would
 * make the readers that honour the field (Info-ZIP, 7-Zip, libarchive,
 * yauzl) see another name than those that ignore it (Python's zipfile,
 * Java's ZipFile, fflate); one whose CRC-32 is not the name's was left stale
 * by a tool that renamed the entry (readers that check the CRC ignore it,
 * any that do not would not): both are refused, as is a version not 1. */
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

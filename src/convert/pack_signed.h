/* pack of a signed folder (pack_signed.c): the package must unpack to the
 * bytes the folder's model.sig signs. */
#ifndef ONNXZIP_PACK_SIGNED_H
#define ONNXZIP_PACK_SIGNED_H

#include <stddef.h>

/* The folder `root` holds model.sig at its top: checks that the package
 * just written at `pkg` unpacks every model file and data file (its plans,
 * convert/file_plan.h) to exactly the bytes of the folder's file of that
 * path, and that every model and data file of the folder, rels[0..n), is
 * one unpack writes. 0, or ONNXZIP_EMISMATCH naming the first file that
 * would come back otherwise (and where it first differs), or a read's
 * status. */
int oz_pack_check_signed(const char *root, const char *pkg, const char *const *rels, size_t n);

#endif

#include "common/internal.h"

#define OZ_STR2_(x) #x
#define OZ_STR_(x) OZ_STR2_(x)

const char *onnxzip_version(void)
{
    return OZ_STR_(ONNXZIP_VERSION_MAJOR) "." OZ_STR_(ONNXZIP_VERSION_MINOR) "." OZ_STR_(
        ONNXZIP_VERSION_PATCH);
}

unsigned onnxzip_version_number(void)
{
    return ONNXZIP_VERSION_NUMBER;
}

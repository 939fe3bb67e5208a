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

int onnxzip_has_feature(onnxzip_feature feature)
{
    switch (feature) {
    case ONNXZIP_FEATURE_MODEL_PROTO: return ONNXZIP_HAVE_PROTOBUF_C;
    case ONNXZIP_FEATURE_REPACK: return ONNXZIP_HAVE_LIBZIP;
    case ONNXZIP_FEATURE_LIBDEFLATE: return ONNXZIP_HAVE_LIBDEFLATE;
    case ONNXZIP_FEATURE_WRITE: return 1; /* every build since the Windows port */
    case ONNXZIP_FEATURE_REMOTE: return ONNXZIP_HAVE_CURL;
    case ONNXZIP_FEATURE_SIGNING: return ONNXZIP_HAVE_SIGNING;
#ifdef OZ_HAVE_UNISTRING
    case ONNXZIP_FEATURE_UNICODE_PATHS: return 1;
#else
    case ONNXZIP_FEATURE_UNICODE_PATHS: return 0;
#endif
    }
    return 0;
}

/* A build without signing (-Dsigning=disabled): the feature is absent and
 * every signing call fails with ONNXZIP_EUNSUPPORTED, saying why. */
#include <string.h>

#include "onnxzip/onnxzip.h"
#include "testutil.h"

int main(void)
{
    onnxzip_trust *t = (onnxzip_trust *)1;
    onnxzip_signed *s = (onnxzip_signed *)1;
    onnxzip_sign_options o = { .private_key_path = "key.pem" };
    CHECK(!onnxzip_has_feature(ONNXZIP_FEATURE_SIGNING));
    CHECK_RC(onnxzip_trust_create(&t), ONNXZIP_EUNSUPPORTED);
    CHECK(t == NULL);
    CHECK(strstr(onnxzip_last_error()->message, "built without signing") != NULL);
    CHECK_RC(onnxzip_signed_open((onnxzip_archive *)1, (onnxzip_trust *)1, &s), ONNXZIP_EUNSUPPORTED);
    CHECK(s == NULL);
    CHECK_RC(onnxzip_sign("x.onnxzip", &o), ONNXZIP_EUNSUPPORTED);
    CHECK_RC(onnxzip_trust_add_public_key(NULL, "", 0), ONNXZIP_EUNSUPPORTED);
    CHECK_RC(onnxzip_signed_check_bytes(NULL, "f", "", 0), ONNXZIP_EUNSUPPORTED);
    CHECK_RC(onnxzip_signed_check_file(NULL, "f", "f"), ONNXZIP_EUNSUPPORTED);
    CHECK(!onnxzip_signed_covers(NULL, "f"));
    return tu_finish("signing_disabled");
}

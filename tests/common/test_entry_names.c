/* The spec's entry-name mapping and validity rules, example by example. */
#include <string.h>

#include "common/entry_name.h"
#include "testutil.h"

static void maps(const char *tensor, unsigned index, const char *want)
{
    char buf[300];
    int n = onnxzip_entry_name_for(tensor, index, buf, sizeof buf);
    CHECK(n == (int)strlen(want));
    if (strcmp(buf, want)) fprintf(stderr, "  '%s'#%u -> '%s', want '%s'\n", tensor, index, buf, want);
    CHECK(strcmp(buf, want) == 0);
    CHECK(oz_classify_name(buf, strlen(buf)) == OZ_NAME_TENSOR);
}

int main(void)
{
    maps("encoder.0.weight", 0, "encoder_0_weight");
    maps("W", 0, "W");
    maps("w", 1, "w_2");
    maps("", 0, "t_");
    maps("0bias", 0, "t_0bias");
    maps("__x", 0, "t__x");
    maps("..x", 0, "t__x");
    maps("a/b:0", 0, "a_b_0");
    maps("\xe6\x9d\x83\xe9\x87\x8d", 0, "t______");
    maps("_x", 0, "_x");
    maps("a b", 2, "a_b_3");

    char longname[1000];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    char buf[300];
    CHECK(onnxzip_entry_name_for(longname, 0, buf, sizeof buf) == 240);
    CHECK(onnxzip_entry_name_for(longname, 99999, buf, sizeof buf) == 247); /* + "_100000" */
    CHECK(oz_classify_name(buf, strlen(buf)) == OZ_NAME_TENSOR);
    CHECK_RC(onnxzip_entry_name_for("abc", 0, buf, 3), ONNXZIP_ELIMIT);
    CHECK_RC(onnxzip_entry_name_for(NULL, 0, buf, 3), ONNXZIP_EINVAL);

    CHECK(oz_classify_name("__MODEL_PROTO", 13) == OZ_NAME_MODEL);
    CHECK(oz_classify_name("__PAD_0", 7) == OZ_NAME_FILLER);
    CHECK(oz_classify_name("__PAD_12", 8) == OZ_NAME_FILLER);
    CHECK(oz_classify_name("__PAD_", 6) == OZ_NAME_RESERVED);
    CHECK(oz_classify_name("__PAD_01", 8) == OZ_NAME_RESERVED);
    CHECK(oz_classify_name("__PAD_x", 7) == OZ_NAME_RESERVED);
    CHECK(oz_classify_name("__other", 7) == OZ_NAME_RESERVED);
    CHECK(oz_classify_name("__a.b", 5) == OZ_NAME_INVALID);
    CHECK(oz_classify_name("../evil", 7) == OZ_NAME_INVALID);
    CHECK(oz_classify_name("a/b", 3) == OZ_NAME_INVALID);
    CHECK(oz_classify_name("9a", 2) == OZ_NAME_INVALID);
    CHECK(oz_classify_name("", 0) == OZ_NAME_INVALID);
    memset(longname, 'a', 256);
    CHECK(oz_classify_name(longname, 255) == OZ_NAME_TENSOR);
    CHECK(oz_classify_name(longname, 256) == OZ_NAME_TOO_LONG);
    return tu_finish("entry_names");
}

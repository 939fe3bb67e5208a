/* onnxzip_tensor.key: a named tensor's key is its name (the same pointer);
 * an unnamed one's is its path in the model, as the header documents it.
 * The model is encoded here by hand, with the expected keys written out:
 * nodes with and without names, list attributes, an attribute without a
 * name, subgraphs (`g` and `graphs`), sparse tensors, unnamed initializers,
 * training graphs, functions (with and without a domain, an attribute
 * default), a node name holding a NUL byte, repeated node names ("~2",
 * "~3") and a key that an earlier tensor has as its name. Lookups by key;
 * "" finds nothing; an error about an unnamed tensor names its key. */
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "pbwrite.h"
#include "testutil.h"

/* ------------------------------------------------------------------------
 * Hand-encoded protobuf
 * ---------------------------------------------------------------------- */

/* A TensorProto of one FLOAT (or, `int64`, one INT64) element in raw_data;
 * no name field when `name` is NULL. */
static oz_buf tensor(const char *name, int int64)
{
    static const uint8_t zeros[8];
    oz_buf t = { 0 };
    pb_vint(&t, 1, 1);             /* dims [1] */
    pb_vint(&t, 2, int64 ? 7 : 1); /* data_type */
    if (name) pb_str(&t, 8, name);
    pb_len(&t, 9, zeros, int64 ? 8 : 4);
    return t;
}

/* AttributeProto {name, t = 5} (no name field when `name` is NULL). */
static oz_buf tensor_attr(const char *name, const char *tensor_name)
{
    oz_buf a = { 0 }, t = tensor(tensor_name, 0);
    if (name) pb_str(&a, 1, name);
    pb_msg(&a, 5, &t);
    return a;
}

/* NodeProto {name (NULL: none), attribute `value` holding an unnamed tensor}. */
static oz_buf constant(const char *name)
{
    oz_buf n = { 0 }, a = tensor_attr("value", NULL);
    if (name) pb_str(&n, 3, name);
    pb_str(&n, 4, "Constant");
    pb_msg(&n, 5, &a);
    return n;
}

/* SparseTensorProto {values (named `values_name`, NULL: unnamed), indices}. */
static oz_buf sparse(const char *values_name)
{
    oz_buf s = { 0 }, v = tensor(values_name, 0), i = tensor(NULL, 1);
    pb_msg(&s, 1, &v);
    pb_msg(&s, 2, &i);
    return s;
}

/* ------------------------------------------------------------------------
 * The model, and the keys it must give, in model order
 * ---------------------------------------------------------------------- */

static const char *const expected[] = {
    "x/value",                  /* a named initializer, before the nodes in the bytes */
    "c/value",                  /* node "c" */
    "node#1/value",             /* an unnamed node */
    "x/value~2",                /* node "x": its path is an earlier tensor's name */
    "c/value~2",                /* node "c" again */
    "c/value~3",                /* and a third time */
    "node#5/vals[0]",           /* list attribute `tensors` */
    "n1",                       /* a named element of it */
    "node#5/vals[2]",
    "node#5/attribute#1",       /* an attribute without a name */
    "if/then_branch/node#0/value",
    "if/then_branch/initializer#0",
    "if/bodies[1]/k/value",     /* list attribute `graphs` */
    "sp/sparse_value/values",
    "sp/sparse_value/indices",
    "sv",                       /* sparse_tensors[0].values, named */
    "sp/sps[0]/indices",
    "sp/sps[1]/values",
    "sp/sps[1]/indices",
    "nul/value",                /* node "nul\0tail": names end at a NUL */
    "initializer#1",            /* the main graph's second initializer */
    "sparse_initializer#0/values",
    "sparse_initializer#0/indices",
    "training_info#0/initialization/initializer#0",
    "training_info#0/algorithm/node#0/value",
    "training_info#1/algorithm/initializer#0",
    "function:custom:F/node#0/value",
    "function:custom:F/alpha",  /* FunctionProto.attribute_proto default */
    "function:G/m/value",
};
#define N_EXPECTED (sizeof expected / sizeof *expected)

static void main_graph_nodes(oz_buf *g)
{
    oz_buf n;
    n = constant("c"), pb_msg(g, 1, &n);
    n = constant(NULL), pb_msg(g, 1, &n);
    n = constant("x"), pb_msg(g, 1, &n);
    n = constant("c"), pb_msg(g, 1, &n);
    n = constant("c"), pb_msg(g, 1, &n);

    oz_buf list = { 0 }, t, noname = tensor_attr(NULL, NULL);
    pb_str(&list, 1, "vals");
    t = tensor(NULL, 0), pb_msg(&list, 10, &t);
    t = tensor("n1", 0), pb_msg(&list, 10, &t);
    t = tensor(NULL, 0), pb_msg(&list, 10, &t);
    n = (oz_buf){ 0 };
    pb_msg(&n, 5, &list);
    pb_msg(&n, 5, &noname);
    pb_msg(g, 1, &n);

    oz_buf then = { 0 }, body0 = { 0 }, body1 = { 0 }, c = constant(NULL), k = constant("k");
    pb_msg(&then, 1, &c);
    t = tensor(NULL, 0), pb_msg(&then, 5, &t);
    pb_msg(&body1, 1, &k);
    oz_buf g_attr = { 0 }, graphs = { 0 };
    pb_str(&g_attr, 1, "then_branch");
    pb_msg(&g_attr, 6, &then);
    pb_str(&graphs, 1, "bodies");
    pb_msg(&graphs, 11, &body0);
    pb_msg(&graphs, 11, &body1);
    n = (oz_buf){ 0 };
    pb_str(&n, 3, "if");
    pb_msg(&n, 5, &g_attr);
    pb_msg(&n, 5, &graphs);
    pb_msg(g, 1, &n);

    oz_buf one = { 0 }, many = { 0 }, s;
    pb_str(&one, 1, "sparse_value");
    s = sparse(NULL), pb_msg(&one, 22, &s);
    pb_str(&many, 1, "sps");
    s = sparse("sv"), pb_msg(&many, 23, &s);
    s = sparse(NULL), pb_msg(&many, 23, &s);
    n = (oz_buf){ 0 };
    pb_str(&n, 3, "sp");
    pb_msg(&n, 5, &one);
    pb_msg(&n, 5, &many);
    pb_msg(g, 1, &n);

    oz_buf nul = { 0 }, value = tensor_attr("value", NULL);
    pb_len(&nul, 3, "nul\0tail", 8);
    pb_msg(&nul, 5, &value);
    pb_msg(g, 1, &nul);
}

static uint8_t *make_model(size_t *len)
{
    oz_buf g = { 0 }, t, s;
    t = tensor("x/value", 0), pb_msg(&g, 5, &t);
    main_graph_nodes(&g);
    t = tensor(NULL, 0), pb_msg(&g, 5, &t);
    s = sparse(NULL), pb_msg(&g, 15, &s);

    oz_buf ti0 = { 0 }, init = { 0 }, algo = { 0 }, c = constant(NULL);
    t = tensor(NULL, 0), pb_msg(&init, 5, &t);
    pb_msg(&algo, 1, &c);
    pb_msg(&ti0, 1, &init);
    pb_msg(&ti0, 2, &algo);
    oz_buf ti1 = { 0 }, algo1 = { 0 };
    t = tensor(NULL, 0), pb_msg(&algo1, 5, &t);
    pb_msg(&ti1, 2, &algo1);

    oz_buf f = { 0 }, fnode = constant(NULL), dflt = tensor_attr("alpha", NULL);
    pb_str(&f, 1, "F");
    pb_msg(&f, 7, &fnode);
    pb_str(&f, 10, "custom");
    pb_msg(&f, 11, &dflt);
    oz_buf f2 = { 0 }, m = constant("m");
    pb_str(&f2, 1, "G");
    pb_msg(&f2, 7, &m);

    oz_buf model = { 0 };
    pb_vint(&model, 1, 8);
    pb_msg(&model, 7, &g);
    pb_len(&model, 8, (const uint8_t[]){ 2 << 3, 13 }, 2);
    pb_msg(&model, 20, &ti0);
    pb_msg(&model, 20, &ti1);
    pb_msg(&model, 25, &f);
    pb_msg(&model, 25, &f2);
    *len = model.len;
    return model.p;
}

static void check_keys(onnxzip_archive *a)
{
    CHECK(onnxzip_tensor_count(a) == N_EXPECTED);
    for (size_t i = 0; i < N_EXPECTED && i < onnxzip_tensor_count(a); i++) {
        const onnxzip_tensor *t = onnxzip_tensor_at(a, i);
        if (!t || !t->key || strcmp(t->key, expected[i])) {
            fprintf(stderr, "tensor %zu: key '%s', expected '%s'\n", i, t && t->key ? t->key : "(null)",
                    expected[i]);
            CHECK(0);
            continue;
        }
        int named = !strcmp(expected[i], "x/value") || !strcmp(expected[i], "n1") || !strcmp(expected[i], "sv");
        CHECK(named ? t->key == t->name : !strcmp(t->name, ""));
        CHECK(onnxzip_find_tensor(a, expected[i]) == t); /* every key is found, and is unique */
    }
    CHECK(onnxzip_find_tensor(a, "") == NULL);   /* unnamed tensors no longer share "" */
    CHECK(onnxzip_find_tensor(a, "c") == NULL);  /* a node name is not a key */
    CHECK(onnxzip_find_tensor(a, "nul\ntail/value") == NULL);
}

/* An error about an unnamed tensor names it by its key, not ''. */
static void check_error_names_key(void)
{
    oz_buf bad = { 0 }, a = { 0 }, node = { 0 }, g = { 0 }, model = { 0 };
    pb_vint(&bad, 1, 4);
    pb_vint(&bad, 2, 1);
    pb_vint(&bad, 14, 1); /* data_location EXTERNAL, no location */
    pb_str(&a, 1, "value");
    pb_msg(&a, 5, &bad);
    pb_str(&node, 4, "Constant");
    pb_msg(&node, 5, &a);
    pb_msg(&g, 1, &node);
    pb_vint(&model, 1, 8);
    pb_msg(&model, 7, &g);
    onnxzip_archive *ar = NULL;
    CHECK(onnxzip_open_buffer(model.p, model.len, 0, &ar) < 0 && ar == NULL);
    const char *msg = onnxzip_last_error()->message;
    CHECK(strstr(msg, "tensor 'node#0/value'") != NULL);
    if (!strstr(msg, "tensor 'node#0/value'")) fprintf(stderr, "message: %s\n", msg);
    oz_buf_free(&model);
}

int main(void)
{
    size_t len;
    uint8_t *model = make_model(&len);
    onnxzip_archive *a = NULL;
    CHECK_RC(onnxzip_open_buffer(model, len, 0, &a), 0);
    if (a) check_keys(a);
    onnxzip_close(&a);

    /* The same model in an archive: keys do not depend on the layout. */
    char *dir = tu_tmpdir();
    const char *path = tu_path(dir, "keys.onnxzip");
    onnxzip_writer *w;
    CHECK_RC(onnxzip_writer_create(path, NULL, &w), 0);
    CHECK_RC(onnxzip_writer_set_model(w, model, len), 0);
    CHECK_RC(onnxzip_writer_finish(&w), 0);
    CHECK_RC(onnxzip_open(path, 0, &a), 0);
    if (a) check_keys(a);
    onnxzip_close(&a);
    tu_rmtree(dir);
    free(dir);
    free(model);

    check_error_names_key();
    return tu_finish("tensor_keys");
}

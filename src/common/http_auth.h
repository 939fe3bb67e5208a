/* Bearer tokens of remote archives: which token a URL gets (the caller's,
 * or the Hugging Face convention for the Hub's own URLs) and the origins it
 * may go to. Built with -Dcurl only. */
#ifndef ONNXZIP_HTTP_AUTH_H
#define ONNXZIP_HTTP_AUTH_H

#include "common/internal.h"

typedef struct oz_http_auth {
    char *token;      /* malloc'ed; NULL: none is sent */
    char source[300]; /* for messages: "the token given", "the token from $HF_TOKEN" (or a file) */
    const char *why_none; /* when token is NULL: why, or how to give one */
    int hub;          /* the URL is on a Hugging Face Hub origin */
} oz_http_auth;

/* The token for `url` (`shown` names it in messages): `given` when not
 * NULL ("" = none); else, for a Hub URL (https://huggingface.co, hf.co, or
 * $HF_ENDPOINT's origin), $HF_TOKEN ($HUGGING_FACE_HUB_TOKEN), else the
 * file $HF_TOKEN_PATH or $HF_HOME/token, unless
 * HF_HUB_DISABLE_IMPLICIT_TOKEN is true. 0, or ONNXZIP_EINVAL (a token
 * that cannot be a header's value), ONNXZIP_EIO (an unreadable token
 * file), ONNXZIP_ENOMEM; the token is never in a message. */
int oz_http_auth_init(oz_http_auth *a, const char *url, const char *shown, const char *given);

/* Wipes and frees the token. */
void oz_http_auth_free(oz_http_auth *a);

/* 1 when URLs `a` and `b` have the same scheme, host and port (the default
 * port of the scheme when none is given); 0 otherwise or when either does
 * not parse. */
int oz_http_same_origin(const char *a, const char *b);

#endif

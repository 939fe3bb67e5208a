/* What remote archives' requests carry to authenticate: bearer tokens
 * (which token a URL gets: the caller's, or the Hugging Face convention for
 * the Hub's own URLs; the origins it may go to), and for s3:// URLs the
 * AWS Signature Version 4 that libcurl computes. Built with -Dcurl only. */
#ifndef ONNXZIP_HTTP_AUTH_H
#define ONNXZIP_HTTP_AUTH_H

#include "net/aws_config.h"

typedef struct oz_http_auth {
    char *token;      /* malloc'ed; NULL: none is sent */
    char source[300]; /* for messages: "the token given", "the token from $HF_TOKEN" (or a file) */
    const char *why_none; /* when token is NULL: why, or how to give one */
    int hub;          /* the URL is on a Hugging Face Hub origin */
    /* s3:// URLs (oz_http_auth_s3()) */
    int s3;               /* no redirect is followed; S3's error replies are quoted */
    char *aws_userpwd;    /* "KEY_ID:SECRET" for libcurl's SigV4, malloc'ed, wiped; NULL: unsigned */
    char *aws_token;      /* "x-amz-security-token: TOKEN", malloc'ed, wiped; NULL: none */
    char aws_sigv4[96];   /* "aws:amz:REGION:s3" */
    char aws_source[700]; /* what signed, for messages (never a secret) */
} oz_http_auth;

/* Signs the requests of an s3:// URL with the credentials of *c (none:
 * unsigned, as c->source says). ONNXZIP_EINVAL when a bearer token was
 * given too (S3 takes none), ONNXZIP_EUNSUPPORTED for a libcurl older than
 * 7.75 (no CURLOPT_AWS_SIGV4), ONNXZIP_ENOMEM. */
int oz_http_auth_s3(oz_http_auth *a, const oz_aws_config *c, const char *shown);

/* The token for `url` (`shown` names it in messages): `given` when not
 * NULL ("" = none); else, for a Hub URL (https://huggingface.co, hf.co, or
 * $HF_ENDPOINT's origin), $HF_TOKEN ($HUGGING_FACE_HUB_TOKEN), else the
 * file $HF_TOKEN_PATH or $HF_HOME/token, unless
 * HF_HUB_DISABLE_IMPLICIT_TOKEN is true. 0, or ONNXZIP_EINVAL (a token
 * that cannot be a header's value), ONNXZIP_EIO (an unreadable token
 * file), ONNXZIP_ENOMEM; the token is never in a message. */
int oz_http_auth_init(oz_http_auth *a, const char *url, const char *shown, const char *given);

/* Wipes and frees the token and the AWS credentials. */
void oz_http_auth_free(oz_http_auth *a);

/* 1 when URLs `a` and `b` have the same scheme, host and port (the default
 * port of the scheme when none is given); 0 otherwise or when either does
 * not parse. */
int oz_http_same_origin(const char *a, const char *b);

#endif

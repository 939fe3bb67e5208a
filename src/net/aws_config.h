/* The AWS configuration of s3:// URLs, found as AWS's own tools find it
 * (botocore's order; spec 17.6.2): credentials, region, endpoint and
 * addressing style from the options, the environment and the profile's
 * sections in the shared credentials and config files. Credential
 * processes, SSO, web identities and instance metadata are not read. Built
 * with -Dcurl only. */
#ifndef ONNXZIP_AWS_CONFIG_H
#define ONNXZIP_AWS_CONFIG_H

#include "common/internal.h"

typedef struct oz_aws_config {
    char *key_id, *secret, *token; /* malloc'ed, wiped when freed; NULL: none found */
    char *region;                  /* never NULL once loaded (us-east-1 at the end) */
    char *endpoint;                /* NULL: AWS's own */
    int addressing;                /* ONNXZIP_S3_*: the option, else the profile's s3 addressing_style */
    char source[600];              /* where the credentials came from, for messages (never a secret) */
    char endpoint_source[300];     /* where the endpoint came from ("" for AWS's) */
} oz_aws_config;

/* Loads *c for the options' s3_* fields (`shown` names the URL in
 * messages). Without credentials and without opts->s3_no_sign:
 * ONNXZIP_EINVAL, saying where they were looked for and what to do. Also
 * ONNXZIP_EINVAL for a named profile found nowhere, half a key pair, a
 * value that cannot go in a request (a region other than [a-z0-9-], a
 * secret with control characters); ONNXZIP_EIO for a file that exists but
 * cannot be read; ONNXZIP_ENOMEM. No secret is ever in a message. */
int oz_aws_config_load(oz_aws_config *c, const onnxzip_remote_options *opts, const char *shown);

/* Zeroes the string *s (freed memory is read by others later), frees it
 * and sets *s to NULL. NULL is a no-op. */
void oz_secret_free(char **s);

/* Wipes the secrets and frees everything. */
void oz_aws_config_free(oz_aws_config *c);

/* The key id as messages show it: its first 4 and last 4 characters
 * ("AKIA...WXYZ"), or "..." for a short one. */
const char *oz_aws_key_hint(const char *key_id, char *buf, size_t cap);

/* `name` with a leading ~ as the home directory ($HOME; on Windows also
 * %USERPROFILE%), as os.path.expanduser does: malloc'ed, NULL when out of
 * memory. */
char *oz_expand_home(const char *name);

#endif

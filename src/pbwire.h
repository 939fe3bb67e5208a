/* Protobuf wire format, read side: just enough to walk ONNX messages in
 * place, without copying payloads (protobuf-c would copy every raw_data). */
#ifndef ONNXZIP_PBWIRE_H
#define ONNXZIP_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

typedef struct pb_reader {
    const uint8_t *p, *end;
} pb_reader;

typedef struct pb_field {
    uint32_t num;
    int wt;
    uint64_t v;          /* PB_VARINT / PB_I64 / PB_I32 value */
    const uint8_t *data; /* PB_LEN payload */
    size_t len;
    const uint8_t *start; /* first byte of the tag */
} pb_field;

/* Reads one varint; 0 on success, -1 when truncated or longer than 10 bytes. */
int pb_varint(pb_reader *r, uint64_t *v);

/* Reads the next field. 0 on success, -1 on malformed input (bad tag,
 * truncated value, groups, field number 0). */
int pb_next(pb_reader *r, pb_field *f);

#endif

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

typedef struct oz_span {
    const uint8_t *p;
    size_t len;
} oz_span;

/* One message given as several payloads. Protobuf merges every occurrence of
 * a singular message field into one message (later scalars win, repeated
 * fields concatenate, sub-messages merge recursively), and that message is
 * exactly what parsing the payloads' concatenation gives: a stream reads the
 * pieces' fields in order, as one message. */
typedef struct pb_stream {
    const oz_span *piece;
    size_t n, next;
    pb_reader r;
} pb_stream;

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
 * truncated value, groups, field number 0, a tag or length varint longer
 * than 5 bytes: protobuf-c refuses those, so they are never accepted here). */
int pb_next(pb_reader *r, pb_field *f);

void pb_stream_init(pb_stream *s, const oz_span *pieces, size_t n);

/* Reads the stream's next field: 0 with *f set, 1 at the end, -1 on a
 * malformed field (s->r.p is where it failed). */
int pb_stream_next(pb_stream *s, pb_field *f);

#endif

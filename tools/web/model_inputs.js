// tools/web/model_inputs.js — a model's graph inputs read from its ModelProto
// bytes (name, element type, dims: a number, a symbol's name, or null for a
// dim with neither) and its metadata_props (where exporters such as
// Ultralytics record the image size), so the page can show editable shapes before any
// session exists (a session would read every weight). Inputs that are also
// initializers are left out, as ONNX Runtime's inputMetadata leaves them out.
// Only the fields needed are decoded; every other field is skipped by its
// wire type.

// TensorProto.DataType -> onnxruntime-web's type names
const ELEM_TYPES = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 8: 'string',
  9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64', 16: 'bfloat16',
};

class Reader {
  constructor(bytes, start = 0, end = bytes.length) { this.b = bytes; this.pos = start; this.end = end; }

  varint() {
    let v = 0, scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error('the model is truncated (a varint runs past its message)');
      const byte = this.b[this.pos++];
      v += (byte & 0x7f) * scale;
      if (!(byte & 0x80)) return v;
      scale *= 128;
    }
    throw new Error('the model has a varint longer than 10 bytes');
  }

  // [field, wire type, value]: a number for varints, a sub-Reader for
  // length-delimited fields; fixed-width fields are skipped (value null)
  *fields() {
    while (this.pos < this.end) {
      const key = this.varint();
      const field = Math.floor(key / 8), wire = key & 7;
      if (wire === 0) yield [field, wire, this.varint()];
      else if (wire === 2) {
        const len = this.varint();
        if (len > this.end - this.pos) throw new Error(`the model is truncated (field ${field} runs past its message)`);
        yield [field, wire, new Reader(this.b, this.pos, this.pos + len)];
        this.pos += len;
      } else if (wire === 1 || wire === 5) {
        this.pos += wire === 1 ? 8 : 4;
        if (this.pos > this.end) throw new Error('the model is truncated (a fixed-width field)');
        yield [field, wire, null];
      } else throw new Error(`the model has a field of wire type ${wire} (not protobuf as ONNX writes it)`);
    }
  }

  string() { return new TextDecoder().decode(this.b.subarray(this.pos, this.end)); }
}

// the first length-delimited field `n` of a message, or null
function sub(reader, n) {
  for (const [f, w, v] of reader.fields()) if (f === n && w === 2) return v;
  return null;
}

function dimension(r) {
  for (const [f, w, v] of r.fields()) {
    if (f === 1 && w === 0) return v;          // dim_value
    if (f === 2 && w === 2) return v.string(); // dim_param
  }
  return null;
}

// ValueInfoProto -> {name, type, dims (null: rank unknown)}; type null when no tensor
function valueInfo(r) {
  const info = { name: '', type: null, dims: null };
  for (const [f, w, v] of r.fields()) {
    if (f === 1 && w === 2) info.name = v.string();
    if (f !== 2 || w !== 2) continue;
    const tensor = sub(v, 1); // TypeProto.tensor_type
    if (!tensor) { info.type = null; continue; }
    info.type = 'element type 0'; // elem_type absent
    for (const [tf, tw, tv] of tensor.fields()) {
      if (tf === 1 && tw === 0) info.type = ELEM_TYPES[tv] ?? `element type ${tv}`;
      if (tf === 2 && tw === 2) info.dims = [...tv.fields()].filter(([df, dw]) => df === 1 && dw === 2).map(([, , d]) => dimension(d));
    }
  }
  return info;
}

function tensorName(r) {
  for (const [f, w, v] of r.fields()) if (f === 8 && w === 2) return v.string();
  return '';
}

/** [{name, type, dims}] of the model's graph inputs (ModelProto bytes). */
export function modelInputs(bytes) {
  const graph = sub(new Reader(bytes), 7);
  if (!graph) throw new Error('the model has no graph');
  const inputs = [], initializers = new Set();
  for (const [f, w, v] of graph.fields()) {
    if (w !== 2) continue;
    if (f === 11) inputs.push(valueInfo(v));
    else if (f === 5) initializers.add(tensorName(v));
    else if (f === 15) { const values = sub(v, 1); if (values) initializers.add(tensorName(values)); }
  }
  return inputs.filter((i) => !initializers.has(i.name));
}

/** Map of the model's metadata_props (ModelProto field 14: key 1, value 2). */
export function modelMetadata(bytes) {
  const props = new Map();
  for (const [f, w, v] of new Reader(bytes).fields()) {
    if (f !== 14 || w !== 2) continue;
    let key = '', value = '';
    for (const [pf, pw, pv] of v.fields()) {
      if (pf === 1 && pw === 2) key = pv.string();
      if (pf === 2 && pw === 2) value = pv.string();
    }
    props.set(key, value);
  }
  return props;
}

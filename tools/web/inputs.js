// tools/web/inputs.js — the page's input shapes: one field per dimension,
// filled from the model (a fixed dimension's value, shown fixed: a disabled
// field; a symbolic one from shape_defaults.js or what was typed before,
// labelled with its symbol), checked before a run, and random values of
// those shapes.
import { dimDefault } from './shape_defaults.js';

export const MAX_ELEMENTS = 1 << 25; // per input: more would stall the tab generating values

const RANDOM = {
  float32: (n) => Float32Array.from({ length: n }, () => Math.random() * 2 - 1),
  float64: (n) => Float64Array.from({ length: n }, () => Math.random() * 2 - 1),
  int32: (n) => Int32Array.from({ length: n }, () => Math.floor(Math.random() * 10)),
  int64: (n) => BigInt64Array.from({ length: n }, () => BigInt(Math.floor(Math.random() * 10))),
  uint8: (n) => Uint8Array.from({ length: n }, () => Math.floor(Math.random() * 256)),
  int8: (n) => Int8Array.from({ length: n }, () => Math.floor(Math.random() * 256) - 128),
  bool: (n) => Uint8Array.from({ length: n }, () => (Math.random() < 0.5 ? 1 : 0)),
  int16: (n) => Int16Array.from({ length: n }, () => Math.floor(Math.random() * 10)),
  uint16: (n) => Uint16Array.from({ length: n }, () => Math.floor(Math.random() * 10)),
  uint32: (n) => Uint32Array.from({ length: n }, () => Math.floor(Math.random() * 10)),
  uint64: (n) => BigUint64Array.from({ length: n }, () => BigInt(Math.floor(Math.random() * 10))),
  // IEEE half bits (what onnxruntime-web takes for float16): a sign, an
  // exponent of 2^-14 .. 2^-1 and a random mantissa: finite, |x| < 1
  float16: (n) => Uint16Array.from({ length: n }, () =>
    ((Math.random() < 0.5 ? 1 : 0) << 15) | ((1 + Math.floor(Math.random() * 14)) << 10) | Math.floor(Math.random() * 1024)),
};

function el(tag, props = {}, children = []) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

// saved: what was typed into this field before (this model), or undefined
function dimField(input, i, dim, image, saved) {
  const symbolic = typeof dim !== 'number';
  const label = symbolic ? (dim ?? '?') : '';
  const start = symbolic ? dimDefault(input.dims, i, dim, image) : null;
  const field = el('input', {
    type: 'text', inputMode: 'numeric', size: 5, value: String(!symbolic ? dim : saved ?? start.value),
    title: symbolic ? `${label}: symbolic in the model; ${saved === undefined ? start.source : 'as typed'}` : `fixed in the model: ${dim}`,
    disabled: !symbolic,
  });
  field.dataset.input = input.name;
  field.dataset.dim = String(i);
  if (symbolic) {
    field.dataset.symbol = label;
    if (saved === undefined && start.guess) field.dataset.guess = '1';
  }
  field.setAttribute('aria-label', `${input.name} dimension ${i}${symbolic ? ` (${label})` : ' (fixed)'}`);
  return el('label', { className: symbolic ? 'dim symbolic' : 'dim fixed' }, [el('span', { textContent: label }), field]);
}

// an input of unknown rank: the whole shape in one field, "1, 3, 224, 224"
function shapeField(input, saved) {
  const field = el('input', {
    type: 'text', size: 16, value: saved ?? '1', title: 'the model gives no shape: dimensions, comma-separated (empty: a scalar)',
  });
  field.dataset.input = input.name;
  field.dataset.dim = 'all';
  if (saved === undefined) field.dataset.guess = '1';
  field.setAttribute('aria-label', `${input.name} shape`);
  return el('label', { className: 'dim symbolic' }, [el('span', { textContent: 'shape' }), field]);
}

/** Fills the table body with one row per input: name, type, shape fields.
 * image: shape_defaults.js imageSize() or null; saved: {"input/dim": text}
 * typed before for this model. */
export function renderInputs(tbody, inputs, image = null, saved = {}) {
  tbody.replaceChildren(...inputs.map((input) => {
    const kept = (i) => saved[`${input.name}/${i}`];
    const fields = input.dims === null ? [shapeField(input, kept('all'))] : input.dims.map((d, i) => dimField(input, i, d, image, kept(i)));
    const shape = el('div', { className: 'shape-fields' }, input.dims?.length === 0 ? [el('span', { textContent: 'scalar' })] : fields);
    return el('tr', {}, [el('td', { className: 'mono name', textContent: input.name, title: input.name }),
                         el('td', { textContent: input.type ?? 'not a tensor' }), el('td', {}, [shape])]);
  }));
}

/** "input X: dimension 2 (height), dimension 3 (width)" for each field
 * still at a guessed value (none: null), those fields marked .guessed. */
export function guessedFields(tbody) {
  const byInput = new Map();
  for (const f of tbody.querySelectorAll('input[data-guess="1"]')) {
    f.classList.add('guessed');
    const where = f.dataset.dim === 'all' ? 'its shape' : `dimension ${f.dataset.dim}${f.dataset.symbol ? ` (${f.dataset.symbol})` : ''}`;
    byInput.set(f.dataset.input, [...(byInput.get(f.dataset.input) ?? []), where]);
  }
  return byInput.size ? [...byInput].map(([name, ws]) => `input ${name}: ${ws.join(', ')}`).join('; ') : null;
}

function dimValue(text) {
  const t = text.trim();
  return /^[0-9]+$/.test(t) && Number(t) >= 1 && Number(t) <= 2 ** 31 - 1 ? Number(t) : null;
}

/** {name: dims} from the fields, or throws an Error naming every bad
 * field (each marked .invalid). */
export function readShapes(tbody, inputs) {
  const problems = [], shapes = {};
  for (const input of inputs) {
    const fields = [...tbody.querySelectorAll('input')].filter((f) => f.dataset.input === input.name);
    const dims = [];
    for (const f of fields) {
      // the whole shape: comma-separated, empty for a scalar
      const parts = f.dataset.dim !== 'all' ? [f.value] : f.value.trim() === '' ? [] : f.value.split(',');
      const values = parts.map(dimValue);
      const bad = values.indexOf(null);
      f.classList.toggle('invalid', bad >= 0);
      f.classList.remove('guessed');
      if (bad >= 0) {
        const symbol = f.dataset.symbol ? ` (${f.dataset.symbol})` : '';
        const where = f.dataset.dim === 'all' ? 'shape' : `dimension ${f.dataset.dim}${symbol}`;
        problems.push(`input ${input.name}, ${where}: "${parts[bad].trim()}" is not a positive integer`);
      }
      dims.push(...values);
    }
    const n = dims.reduce((a, b) => a * (b ?? 1), 1);
    if (n > MAX_ELEMENTS) {
      // the fields the user can change are the ones to make smaller
      for (const f of fields) if (!f.disabled) f.classList.add('invalid');
      problems.push(`input ${input.name}: [${dims.join(', ')}] is ${n} elements; the page makes at most ${MAX_ELEMENTS} (the marked fields)`);
    }
    shapes[input.name] = dims;
  }
  if (problems.length) throw new Error(problems.join('; '));
  return shapes;
}

/** {name: ort.Tensor} of random values in the given shapes. */
export function randomFeeds(ort, inputs, shapes) {
  const feeds = {};
  for (const input of inputs) {
    const make = RANDOM[input.type];
    if (!make) throw new Error(`input ${input.name}: the page makes no random ${input.type ?? 'non-tensor'} values`);
    const dims = shapes[input.name];
    feeds[input.name] = new ort.Tensor(input.type, make(dims.reduce((a, b) => a * b, 1)), dims);
  }
  return feeds;
}

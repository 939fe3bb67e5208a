// tools/web/shape_defaults.js — what a symbolic dimension starts at: 1 for a
// batch, the image's height and width where the model or its package says
// them (an exporter's metadata, such as Ultralytics' imgsz; a Hugging Face
// repository's preprocessor_config.json), else 1, marked as a guess so that
// a failed run can name the dimensions to set. Nothing is guessed from
// names alone beyond batch, height and width.

// {height, width} from a size field: a number, [h, w], {height, width} or
// {shortest_edge} (resized so, then usually cropped to the crop size)
function hw(v) {
  const ok = (n) => Number.isInteger(n) && n >= 1 && n <= 65536;
  if (ok(v)) return { height: v, width: v };
  if (Array.isArray(v) && v.length === 2 && v.every(ok)) return { height: v[0], width: v[1] };
  if (Array.isArray(v) && v.length === 1 && ok(v[0])) return { height: v[0], width: v[0] };
  if (v && ok(v.height) && ok(v.width)) return { height: v.height, width: v.width };
  if (v && ok(v.shortest_edge) && Object.keys(v).length === 1) return { height: v.shortest_edge, width: v.shortest_edge };
  return null;
}

const parse = (text) => { try { return JSON.parse(text); } catch { return undefined; } };

/** {height, width, source} of the images the model takes, or null:
 * metadata: the model's metadata_props (Map); preprocessor: the text of the
 * package's preprocessor_config.json (or null). */
export function imageSize(metadata, preprocessor) {
  const imgsz = metadata.get('imgsz'); // Ultralytics: "[640, 640]" (height, width)
  const fromMeta = imgsz === undefined ? null : hw(parse(imgsz));
  if (fromMeta) return { ...fromMeta, source: "the model's metadata (imgsz)" };
  const pre = preprocessor === null ? undefined : parse(preprocessor);
  if (!pre || typeof pre !== 'object') return null;
  // the crop is what the model sees when the processor crops
  for (const key of pre.do_center_crop === false ? ['size'] : ['crop_size', 'size']) {
    const size = hw(pre[key]);
    if (size) return { ...size, source: `preprocessor_config.json (${key})` };
  }
  return null;
}

const BATCH = /batch|^(n|b|bs|num_images)$/i;
const HEIGHT = /height|^h$/i;
const WIDTH = /width|^w$/i;

// which side of an image a dimension is: by its symbol, else by its place in
// a 4-D NCHW (channels 1, 3 or 4 fixed at 1) or NHWC input
function side(dims, i, symbol) {
  if (HEIGHT.test(symbol)) return 'height';
  if (WIDTH.test(symbol)) return 'width';
  if (dims.length !== 4) return null;
  const channels = (d) => [1, 3, 4].includes(d);
  if (channels(dims[1])) return i === 2 ? 'height' : i === 3 ? 'width' : null;
  if (channels(dims[3])) return i === 1 ? 'height' : i === 2 ? 'width' : null;
  return null;
}

/** {value, source, guess} for dimension i (symbol `symbol`, may be null) of
 * an input of dims `dims`; image: imageSize()'s answer or null. */
export function dimDefault(dims, i, symbol, image) {
  const name = symbol ?? '';
  if (BATCH.test(name) || (i === 0 && dims.length === 4 && !HEIGHT.test(name) && !WIDTH.test(name))) {
    return { value: 1, source: 'a batch of one', guess: false };
  }
  const s = image && side(dims, i, name);
  if (s) return { value: image[s], source: `the image ${s} from ${image.source}`, guess: false };
  return { value: 1, source: 'nothing in the model says: 1 is a guess', guess: true };
}

// Type-checks a typical use of the onnxzip package's index.d.ts (tsc --noEmit --strict; see tsconfig.json),
// against the real onnxruntime-node and onnxruntime-web types.
import * as ortNode from 'onnxruntime-node';
import * as ortWeb from 'onnxruntime-web';
import { env as tjsEnv, pipeline } from '@huggingface/transformers';
import { open, createSession, transformersModel, type TransformersPackage, Archive, OnnxzipError, type Tensor, type Entry, type Status, type PackageFile } from '../../../src/js/index.js';

async function use(): Promise<void> {
  const ctl = new AbortController();
  const a: Archive = await open('https://example.org/m.onnxzip', { signal: ctl.signal, tailBytes: 1 << 16, retries: 2 });
  const b = await open(new Uint8Array(8), { name: 'm.onnxzip', verify: true });
  const c = await open(new Blob([new Uint8Array(8)]));
  const d = await open(new URL('file:///tmp/m.onnxzip'));
  const t: Tensor | undefined = a.tensor('w');
  const dims: readonly number[] = t?.dims ?? [];
  const e: Entry = a.entries[0];
  const x: string | null = e.xxh3;
  const data: Uint8Array = await b.tensorData(t?.key ?? 'w');
  const view: Uint8Array = await c.view({ sizeThreshold: 0, location: 'm.onnxzip' });
  await d.verify({ signal: ctl.signal, onProgress: (done: number, total: number) => void (done / total) });
  const s1: ortNode.InferenceSession = await createSession(ortNode, a, { executionProviders: ['cpu'] });
  const s2: ortWeb.InferenceSession = await createSession(ortWeb, 'model.onnxzip', { graphOptimizationLevel: 'all' });
  void [dims, x, data, view, s1, s2, a.modelBytes().length, a.name, a.size];
  // a package: its models and files, one of its models, a file's bytes
  const p = await open('repo.onnxzip', { model: 'onnx/model_fp16.onnx' });
  const held: string | null = p.modelPath;
  for (const [path, m] of p.models) void [path.length, m.path, m.size, m.default satisfies boolean];
  const f: PackageFile | undefined = p.files.get('tokenizer.json');
  const bytes: Uint8Array = await p.readFile('tokenizer.json', { signal: ctl.signal });
  const s3: ortNode.InferenceSession = await createSession(ortNode, 'repo.onnxzip', {}, { model: 'onnx/model.onnx' });
  void [held, f?.size, bytes, s3];
  try {
    await a.close();
  } catch (err) {
    if (err instanceof OnnxzipError) {
      const s: Status = err.status;
      const n: number = err.code;
      void [s, n, err.offset, err.url, err.path, err.httpStatus];
    }
  }
}
void use;

// @ts-expect-error a number is not a source
void open(42);
// @ts-expect-error tailBytes is a number
void open('x', { tailBytes: '1' });
// @ts-expect-error a model is named by its path
void open('x', { model: 1 });
// @ts-expect-error models is read-only
void open('x').then((a) => a.models.set('m', { path: 'm', size: 0, default: false }));
// @ts-expect-error not an ORT module
void createSession({}, 'x');

// transformers.js (@huggingface/transformers) with a package as its model source
async function useTransformers(): Promise<void> {
  const pkg: TransformersPackage = (await transformersModel('bert.onnxzip', { id: 'me/bert' })).install(tjsEnv);
  const extractor = await pipeline('feature-extraction', pkg.id, pkg.pipelineOptions({ dtype: 'fp32' }));
  await extractor('text');
  await pkg.close();
}
void useTransformers;

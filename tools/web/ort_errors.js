// tools/web/ort_errors.js — ONNX Runtime's errors made short: a failed run
// names the node that failed and the input dimensions the user should set;
// ORT's own text is kept for a toggle without the paths of the machine ORT
// was built on (a file of its sources, line, and C++ signature).

// "/onnxruntime_src/onnxruntime/core/providers/cpu/tensor/reshape_helper.h:39 onnxruntime::ReshapeHelper::ReshapeHelper(const ...&, bool) "
const BUILD_PATH = /(?:[A-Za-z]:)?(?:[/\\][\w.+-]+)+\.(?:cc|cpp|cxx|c|h|hpp)(?::\d+)?(?: [\w:~<>]+\([^)]*\)(?: const)?)?/g;

/** ORT's message without build paths, whitespace runs made one space. */
export function ortDetails(message) {
  return message.replace(BUILD_PATH, '').replace(/[ \t]+/g, ' ').replace(/ *\n */g, '\n').trim();
}

/** The short line for a run that failed: stage 'session' (creating it) or
 * 'run'; guessed: guessedFields()'s text (dimensions still at a guess) or null. */
export function ortSummary(message, stage, guessed) {
  const details = ortDetails(message);
  if (stage === 'session') {
    const first = details.split('\n')[0];
    return `could not create the session: ${first.length > 200 ? `${first.slice(0, 200)} …` : first}`;
  }
  const node = /running (\w+) node\. Name:'([^']*)'/.exec(details);
  const what = node ? `ONNX Runtime's ${node[1]} node${node[2] ? ` "${node[2]}"` : ''} failed on these inputs` : 'ONNX Runtime refused these inputs';
  return `${what}: ${guessed ? `set the dimensions the model leaves open (${guessed}: a guessed 1)` : 'check the shapes above'}`;
}

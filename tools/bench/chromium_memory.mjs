// chromium_memory.mjs — the memory of the chromium processes a benchmark started (playwright spawns
// chromium below this node process), sampled from /proc: the sum of Pss (smaps_rollup: shared pages
// split between the processes) and of VmRSS. Shared by bench_browser_memory.mjs and
// bench_transformers_js.mjs.
import fs from 'node:fs';

function kib(pid, file, key) {
  try {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/${file}`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // the process ended meanwhile
  }
}

/** The pids of chromium processes below `root` (this node process: playwright
 * spawns chromium, which spawns its zygotes, renderers, GPU and utility
 * processes; nginx, also a child, is left out). */
function chromiumTree(root) {
  return tree(root).filter((pid) => {
    try {
      return /^chrom/.test(fs.readFileSync(`/proc/${pid}/comm`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/** The pids of `root` and all its descendants. */
function tree(root) {
  const children = new Map();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch { /* gone */ }
  }
  const out = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop();
    out.push(p);
    stack.push(...(children.get(p) ?? []));
  }
  return out;
}

/** Samples chromium's processes below `root` every 100 ms; stop() -> peaks in MiB. */
export function sampler(root) {
  let pss = 0, rss = 0, samples = 0;
  const sample = () => {
    let p = 0, r = 0;
    for (const pid of chromiumTree(root)) {
      p += kib(pid, 'smaps_rollup', 'Pss');
      r += kib(pid, 'status', 'VmRSS');
    }
    pss = Math.max(pss, p);
    rss = Math.max(rss, r);
    samples++;
  };
  sample();
  const timer = setInterval(sample, 100);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { pssMiB: pss / 1024, rssMiB: rss / 1024, samples };
    },
  };
}

// Shared by the benchmarks: the machine line and the per-benchmark section of bench/RESULTS.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** The CPU model from /proc/cpuinfo (os.cpus() where that is unavailable). */
export function readCpuModel() {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    return line ? line.split(':')[1].trim() : (cpus()[0]?.model ?? 'unknown CPU');
  } catch {
    return cpus()[0]?.model ?? 'unknown CPU';
  }
}

/**
 * Replaces one benchmark's section (from its `## ` heading up to the next `## `) and leaves every
 * other section alone, so benchmarks can be re-run one at a time.
 */
export function writeSection(file, heading, section) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = '# Benchmark results\n\n';
  }
  const body = section.replace(/\n*$/, '\n');
  const start = text.indexOf(`${heading}\n`);
  if (start === -1) {
    writeFileSync(file, `${text.replace(/\n*$/, '\n\n')}${body}`);
    return;
  }
  const next = text.indexOf('\n## ', start + heading.length);
  const after = next === -1 ? '' : `\n${text.slice(next + 1)}`;
  writeFileSync(file, text.slice(0, start) + body + after);
}

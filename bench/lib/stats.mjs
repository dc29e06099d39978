// Shared by the benchmarks: medians and spreads of per-round figures.

/** The q-quantile of xs (linear interpolation between the closest ranks). */
export function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (at - lo);
}

export const median = (xs) => quantile(xs, 0.5);

/** An integer with thousands separators: `1,234,567`. */
export const fmtInt = (x) => Math.round(x).toLocaleString('en-US');

/** Median and interquartile range of per-round values. */
export const spread = (xs) => ({
  p25: quantile(xs, 0.25),
  p50: quantile(xs, 0.5),
  p75: quantile(xs, 0.75),
});

/** `1.23× [1.10-1.31]`: a spread's median and, in brackets, its p25-p75. */
export const fmtSpread = (r, digits = 2) =>
  `${r.p50.toFixed(digits)}× [${r.p25.toFixed(digits)}-${r.p75.toFixed(digits)}]`;

/** A seeded shuffle (the same orders on every run), for interleaving contenders within rounds. */
export function shuffler(seed = 0x2545f491) {
  let s = seed;
  const random = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
  return (items) => {
    const order = [...items];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    return order;
  };
}

/** The command line that ran a bench file, with the environment variables that shaped the run. */
export function benchCommand(name) {
  const env = Object.entries(process.env)
    .filter(([k]) => /^(BENCH_|CLIENT_BENCH|SCHEDULER_BENCH|URLS_|DEDUP_|ROUNDS$)/.test(k))
    .map(([k, v]) => `${k}=${v} `)
    .join('');
  return `${env}node --expose-gc bench/${name}.bench.mjs`;
}

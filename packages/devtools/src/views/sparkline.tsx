import { formatMs } from '../format';

const WIDTH = 96;
const HEIGHT = 22;
/** The most recent samples drawn (the ring holds up to 128). */
const POINTS = 48;

/**
 * The recent latencies of an endpoint as a small line, oldest on the left, scaled to the
 * highest sample shown; its label says the last and the highest value for screen readers.
 */
export function Sparkline({ values, label }: { values: readonly number[]; label: string }) {
  const shown = values.slice(-POINTS);
  if (shown.length === 0) return <span className="kdt-muted">—</span>;
  const max = Math.max(...shown, 1);
  const step = shown.length > 1 ? WIDTH / (shown.length - 1) : 0;
  const y = (v: number) => (HEIGHT - 2 - (v / max) * (HEIGHT - 4)).toFixed(1);
  const points = shown.map((v, i) => `${(i * step).toFixed(1)},${y(v)}`).join(' ');
  const last = shown[shown.length - 1]!;
  return (
    <svg
      className="kdt-spark"
      width={WIDTH}
      height={HEIGHT}
      viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
      role="img"
      aria-label={`${label}: ${shown.length} samples, last ${formatMs(last)}, highest ${formatMs(max)}`}
    >
      {shown.length === 1 ? (
        <circle cx={WIDTH / 2} cy={y(last)} r={2} fill="currentColor" />
      ) : (
        <polyline points={points} fill="none" stroke="currentColor" strokeWidth={1.5} />
      )}
    </svg>
  );
}

import type { Client, ClientInspector } from '@keel/core';
import { type CSSProperties, useId, useState } from 'react';
import { displayKey, formatMs, keyParts, MAX_ROWS } from '../format';
import { useRefresh, useTick } from '../live/refresh';
import {
  type FlightRecord,
  type FlightRecorder,
  type FlightState,
  isLive,
} from '../requests/recorder';

/** How far back the time axis reaches at most, in ms; it zooms in on shorter histories. */
const WINDOWS = [5_000, 30_000, 120_000] as const;
/** The shortest span drawn, so a lone 20 ms request is not a full-width bar. */
const MIN_SPAN = 2_000;

const TONE: Record<FlightState, string> = {
  queued: 'neutral',
  active: 'info',
  retrying: 'warn',
  parked: 'park',
  done: 'ok',
  failed: 'bad',
  cancelled: 'neutral',
  refused: 'bad',
};

/**
 * The Requests view: one row per flight (newest first) with its state, attempts, dedup joins
 * and, while it waits to retry, why and for how long; its life is drawn on a shared time axis:
 * queued, each attempt, retry waits and rate-limit parking. The records come from the panel's
 * FlightRecorder, which listens only while the panel is open.
 */
export function RequestsView({
  client,
  inspector,
  recorder,
}: {
  client: Client;
  inspector: ClientInspector;
  recorder: FlightRecorder;
}) {
  useRefresh(recorder.subscribe);
  const records = recorder.records();
  const live = records.some(isLive);
  // Bars grow while a flight is live; otherwise ages on the axis move once a second.
  useTick(client, live ? 200 : 1000);
  const [windowMs, setWindowMs] = useState<number>(WINDOWS[1]);
  const windowId = useId();
  const now = inspector.now();

  if (records.length === 0) {
    return (
      <div className="kdt-view">
        <div className="kdt-empty">
          <strong>No requests since the panel opened</strong>
          Every request that reaches the network shows here as it runs: queued, each attempt, retry
          waits with their reason and delay, and how it ended. Cache hits are not requests; requests
          that join one in flight are counted on its row.
        </div>
      </div>
    );
  }

  // A loop, not Math.min(...): thousands of live flights would overflow the argument list.
  let oldest = now;
  let liveCount = 0;
  for (const record of records) {
    if (record.startedAt < oldest) oldest = record.startedAt;
    if (isLive(record)) liveCount++;
  }
  const span = Math.min(windowMs, Math.max(MIN_SPAN, now - oldest));
  const start = now - span;
  const shown = records.slice(-MAX_ROWS).reverse();

  return (
    <div className="kdt-view">
      <div className="kdt-toolbar">
        <span>
          <strong>{liveCount}</strong> in flight · {records.length - liveCount} ended
        </span>
        <span className="kdt-spacer" />
        <label htmlFor={windowId} className="kdt-muted">
          Window
        </label>
        <select
          id={windowId}
          className="kdt-button"
          value={windowMs}
          onChange={(event) => setWindowMs(Number(event.target.value))}
        >
          {WINDOWS.map((ms) => (
            <option key={ms} value={ms}>
              {formatMs(ms)}
            </option>
          ))}
        </select>
        <button type="button" className="kdt-button" onClick={() => recorder.clear()}>
          Clear ended
        </button>
      </div>
      <div className="kdt-legend" aria-hidden="true">
        <span style={swatch('var(--kdt-idle)')}>queued</span>
        <span style={swatch('var(--kdt-info)')}>attempt</span>
        <span style={swatch('var(--kdt-bad)')}>failed attempt</span>
        <span style={swatch('var(--kdt-warn)')}>retry wait</span>
        <span style={swatch('var(--kdt-park)')}>rate-limit wait</span>
        <span style={swatch('var(--kdt-ok)')}>done</span>
      </div>
      <div className="kdt-flight" aria-hidden="true">
        <span />
        <div className="kdt-axis">
          <span>−{formatMs(span)}</span>
          <span>−{formatMs(span / 2)}</span>
          <span>now</span>
        </div>
      </div>
      <ul className="kdt-flights" aria-label="Requests, newest first">
        {shown.map((record) => (
          <FlightRow key={record.seq} record={record} now={now} start={start} span={span} />
        ))}
      </ul>
      {records.length > shown.length ? (
        <p className="kdt-muted">… {records.length - shown.length} older not drawn.</p>
      ) : null}
    </div>
  );
}

function swatch(color: string) {
  return { '--kdt-swatch': color } as CSSProperties;
}

function FlightRow({
  record,
  now,
  start,
  span,
}: {
  record: FlightRecord;
  now: number;
  start: number;
  span: number;
}) {
  const parts = keyParts(record.key);
  const attempts = record.tracker?.attempts ?? 0;
  const duration = (record.endedAt ?? now) - record.startedAt;
  return (
    <li className="kdt-flight" data-state={record.state}>
      <div>
        <div className="kdt-flight-head">
          <span
            className="kdt-badge"
            data-tone={TONE[record.state]}
            data-live={isLive(record) ? '' : undefined}
          >
            {record.state}
          </span>
          <span className="kdt-flight-url">
            <span className="kdt-muted">{parts.method}</span> {parts.url}
          </span>
          {record.probe ? (
            <span className="kdt-badge" data-tone="park">
              probe
            </span>
          ) : null}
          {record.joins > 0 ? (
            <span
              className="kdt-badge"
              data-tone="info"
              title="Requests that shared this one instead of sending their own"
            >
              +{record.joins} joined
            </span>
          ) : null}
        </div>
        <div className="kdt-flight-note">{note(record, attempts, duration, now)}</div>
      </div>
      <div
        className="kdt-track"
        role="img"
        aria-label={`${displayKey(record.key)}: ${record.segments.map((s) => s.kind).join(', ') || record.state}`}
      >
        {record.segments.map((segment, i) => {
          const from = Math.max(segment.from, start);
          const to = segment.to ?? now;
          if (to < start) return null;
          return (
            <span
              // biome-ignore lint/suspicious/noArrayIndexKey: segments are appended (the oldest dropped by halves past 100); two can start in the same ms
              key={i}
              className="kdt-seg"
              data-kind={segment.kind}
              data-outcome={segment.outcome}
              style={{
                left: `${((from - start) / span) * 100}%`,
                width: `${(Math.max(0, to - from) / span) * 100}%`,
              }}
            />
          );
        })}
      </div>
    </li>
  );
}

function note(record: FlightRecord, attempts: number, duration: number, now: number): string {
  const tries = attempts > 1 ? ` · ${attempts} attempts` : attempts === 1 ? ' · 1 attempt' : '';
  const retry = record.retry;
  switch (record.state) {
    case 'retrying': {
      const left = Math.max(0, retry!.until - now);
      return `attempt ${retry!.attempt} got ${retry!.cause}; retry in ${formatMs(left)} (waits ${formatMs(retry!.delay)}, ${retry!.reason === 'retry-after' ? 'Retry-After' : 'backoff'})${tries}`;
    }
    case 'parked':
      return `parked: no rate budget left, waiting for the window to free${tries}`;
    case 'queued':
      return `waiting for a scheduler slot · ${formatMs(duration)}${tries}`;
    case 'active':
      return `running for ${formatMs(duration)}${tries}${retry ? ` · after ${retry.cause}` : ''}`;
    case 'refused':
      return record.outcome ?? 'refused';
    default:
      return `${record.outcome ?? record.state} in ${formatMs(duration)}${tries}`;
  }
}

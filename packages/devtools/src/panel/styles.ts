/** The dark palette: for `theme="dark"`, and for `"system"` when the system prefers dark. */
const DARK = `
  --kdt-bg: #16191f; --kdt-bg-2: #1e222a; --kdt-bg-3: #2a2f39; --kdt-fg: #e6e9ef; --kdt-fg-2: #9aa4b2;
  --kdt-line: #343a46; --kdt-accent: #7c9cff; --kdt-accent-fg: #0c1020; --kdt-focus: #9db4ff;
  --kdt-ok: #6fd39a; --kdt-ok-bg: #17372a; --kdt-warn: #f2c45a; --kdt-warn-bg: #3a2f12;
  --kdt-bad: #ff8a80; --kdt-bad-bg: #421d1d; --kdt-info: #8cb8ff; --kdt-info-bg: #182c4a;
  --kdt-idle: #a3acb9; --kdt-idle-bg: #2a2f39; --kdt-park: #c9a6ff; --kdt-park-bg: #2f2344;
  color-scheme: dark;
`;

/**
 * The panel's stylesheet: plain CSS, every rule under `.kdt` so nothing leaks into the page, and
 * colours in custom properties so `prefers-color-scheme` (or the `theme` prop) swaps them in
 * one place. Rendered as a `<style>` element by the panel itself: no CSS import for the app's
 * bundler to handle, and the same markup on the server and in the browser.
 */
export const STYLES = `
.kdt {
  --kdt-bg: #ffffff; --kdt-bg-2: #f4f5f7; --kdt-bg-3: #e8eaee; --kdt-fg: #1d2430; --kdt-fg-2: #556070;
  --kdt-line: #d5d9e0; --kdt-accent: #3b5bdb; --kdt-accent-fg: #ffffff; --kdt-focus: #3b5bdb;
  --kdt-ok: #1c7c3c; --kdt-ok-bg: #ddf3e4; --kdt-warn: #8a5a00; --kdt-warn-bg: #fff1cc;
  --kdt-bad: #b42318; --kdt-bad-bg: #fde4e1; --kdt-info: #1f5fae; --kdt-info-bg: #dfeafb;
  --kdt-idle: #5b6472; --kdt-idle-bg: #eceef2; --kdt-park: #6b3fa0; --kdt-park-bg: #ece3f8;
  --kdt-mono: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  color-scheme: light;
  font: 13px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
  color: var(--kdt-fg);
}
.kdt[data-theme='dark'] {${DARK}}
@media (prefers-color-scheme: dark) {
  .kdt[data-theme='system'] {${DARK}}
}
.kdt *, .kdt *::before, .kdt *::after { box-sizing: border-box; }
.kdt button, .kdt input { font: inherit; color: inherit; }
.kdt :focus-visible { outline: 2px solid var(--kdt-focus); outline-offset: 1px; }
.kdt-toggle {
  position: fixed; z-index: 2147483000; display: inline-flex; align-items: center; gap: 6px;
  padding: 6px 12px; border: 1px solid var(--kdt-line); border-radius: 999px; cursor: pointer;
  background: var(--kdt-bg); color: var(--kdt-fg); box-shadow: 0 2px 10px rgb(0 0 0 / 0.18);
  font-weight: 600; letter-spacing: 0.01em;
}
.kdt-toggle:hover { background: var(--kdt-bg-2); }
.kdt-toggle-dot { width: 8px; height: 8px; border-radius: 50%; background: var(--kdt-accent); }
.kdt[data-position='bottom-right'] .kdt-toggle { right: 12px; bottom: 12px; }
.kdt[data-position='bottom-left'] .kdt-toggle { left: 12px; bottom: 12px; }
.kdt[data-position='top-right'] .kdt-toggle { right: 12px; top: 12px; }
.kdt[data-position='top-left'] .kdt-toggle { left: 12px; top: 12px; }
.kdt-panel {
  position: fixed; z-index: 2147483001; left: 0; right: 0; bottom: 0; height: min(48vh, 520px);
  min-height: 260px; display: flex; flex-direction: column; background: var(--kdt-bg);
  border-top: 1px solid var(--kdt-line); box-shadow: 0 -6px 24px rgb(0 0 0 / 0.18);
}
.kdt-panel[data-size='full'] { height: 100vh; height: 100dvh; }
.kdt-bar {
  display: flex; align-items: center; gap: 8px; padding: 0 8px; min-height: 40px;
  border-bottom: 1px solid var(--kdt-line); background: var(--kdt-bg-2);
}
.kdt-title { font-weight: 700; padding-right: 4px; white-space: nowrap; }
.kdt-tabs { display: flex; gap: 2px; flex: 1; min-width: 0; overflow-x: auto; scrollbar-width: thin; }
/* Inside the scrolling tab list an outline outside the tab would be clipped. */
.kdt-tab:focus-visible { outline-offset: -2px; }
.kdt-tab {
  border: 0; background: transparent; padding: 10px 10px 8px; cursor: pointer; white-space: nowrap;
  border-bottom: 2px solid transparent; color: var(--kdt-fg-2);
}
.kdt-tab[aria-selected='true'] { color: var(--kdt-fg); border-bottom-color: var(--kdt-accent); font-weight: 600; }
.kdt-tab:hover { color: var(--kdt-fg); }
.kdt-count { margin-left: 4px; font-size: 11px; color: var(--kdt-fg-2); font-variant-numeric: tabular-nums; }
.kdt-icon-button {
  border: 1px solid transparent; background: transparent; border-radius: 6px; cursor: pointer;
  min-width: 32px; height: 32px; padding: 0 8px; color: var(--kdt-fg-2);
}
.kdt-icon-button:hover { background: var(--kdt-bg-3); color: var(--kdt-fg); }
.kdt-body { flex: 1; min-height: 0; overflow: auto; }
.kdt-view { padding: 10px 12px; }
.kdt-toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin-bottom: 8px; }
.kdt-toolbar .kdt-spacer { flex: 1; }
.kdt-input {
  border: 1px solid var(--kdt-line); border-radius: 6px; padding: 4px 8px; min-width: 0;
  background: var(--kdt-bg); flex: 1 1 160px; max-width: 320px;
}
.kdt-button {
  border: 1px solid var(--kdt-line); border-radius: 6px; padding: 4px 10px; cursor: pointer;
  background: var(--kdt-bg); white-space: nowrap;
}
.kdt-button:hover:not(:disabled) { background: var(--kdt-bg-3); }
.kdt-button:disabled { opacity: 0.55; cursor: not-allowed; }
.kdt-button-primary { background: var(--kdt-accent); color: var(--kdt-accent-fg); border-color: var(--kdt-accent); }
.kdt-button-primary:hover:not(:disabled) { background: var(--kdt-accent); filter: brightness(1.08); }
.kdt-muted { color: var(--kdt-fg-2); }
.kdt-mono { font-family: var(--kdt-mono); font-size: 12px; }
.kdt-empty { padding: 24px 12px; text-align: center; color: var(--kdt-fg-2); max-width: 560px; margin: 0 auto; }
.kdt-empty strong { display: block; color: var(--kdt-fg); margin-bottom: 4px; font-size: 14px; }
.kdt-empty code, .kdt-view code { font-family: var(--kdt-mono); font-size: 12px; background: var(--kdt-bg-2); padding: 0 4px; border-radius: 4px; }
.kdt-badge {
  display: inline-block; padding: 0 7px; border-radius: 999px; font-size: 11px; font-weight: 600;
  line-height: 18px; white-space: nowrap; background: var(--kdt-idle-bg); color: var(--kdt-idle);
}
.kdt-badge[data-tone='ok'] { background: var(--kdt-ok-bg); color: var(--kdt-ok); }
.kdt-badge[data-tone='warn'] { background: var(--kdt-warn-bg); color: var(--kdt-warn); }
.kdt-badge[data-tone='bad'] { background: var(--kdt-bad-bg); color: var(--kdt-bad); }
.kdt-badge[data-tone='info'] { background: var(--kdt-info-bg); color: var(--kdt-info); }
.kdt-badge[data-tone='park'] { background: var(--kdt-park-bg); color: var(--kdt-park); }
.kdt-tag { display: inline-block; margin: 0 4px 2px 0; padding: 0 6px; border: 1px solid var(--kdt-line); border-radius: 4px; font-size: 11px; }
.kdt-table-wrap { overflow-x: auto; border: 1px solid var(--kdt-line); border-radius: 8px; }
.kdt-table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
.kdt-table th, .kdt-table td { padding: 5px 8px; text-align: left; border-bottom: 1px solid var(--kdt-line); vertical-align: top; }
.kdt-table thead th { font-size: 11px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--kdt-fg-2); background: var(--kdt-bg-2); font-weight: 600; white-space: nowrap; }
.kdt-table tbody th { font-family: var(--kdt-mono); font-size: 12px; font-weight: 500; color: var(--kdt-fg); }
.kdt-table tr:last-child td, .kdt-table tr:last-child th { border-bottom: 0; }
.kdt-table td.kdt-num, .kdt-table th.kdt-num { text-align: right; white-space: nowrap; }
.kdt-table tr[aria-selected='true'] td { background: var(--kdt-info-bg); }
.kdt-row-button {
  border: 0; background: transparent; padding: 0; cursor: pointer; text-align: left; width: 100%;
  font-family: var(--kdt-mono); font-size: 12px; word-break: break-all;
}
.kdt-cache { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 12px; }
@media (max-width: 720px) { .kdt-cache { grid-template-columns: minmax(0, 1fr); } }
.kdt-detail { border: 1px solid var(--kdt-line); border-radius: 8px; padding: 10px; min-width: 0; }
.kdt-detail h3 { margin: 0 0 6px; font-size: 13px; font-family: var(--kdt-mono); word-break: break-all; }
.kdt-detail h4 { margin: 12px 0 4px; font-size: 11px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--kdt-fg-2); }
.kdt-actions { display: flex; flex-wrap: wrap; gap: 6px; margin: 8px 0; }
.kdt-facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 2px 12px; margin: 0; }
.kdt-facts dt { color: var(--kdt-fg-2); }
.kdt-facts dd { margin: 0; min-width: 0; word-break: break-word; }
.kdt-json { font-family: var(--kdt-mono); font-size: 12px; line-height: 1.5; overflow-x: auto; }
.kdt-json details { padding-left: 14px; }
.kdt-json summary { margin-left: -14px; cursor: pointer; list-style-position: inside; }
.kdt-json .kdt-json-row { padding-left: 14px; white-space: pre-wrap; word-break: break-all; }
.kdt-json-key { color: var(--kdt-info); }
.kdt-json-string { color: var(--kdt-ok); }
.kdt-json-number { color: var(--kdt-warn); }
.kdt-json-literal { color: var(--kdt-park); }
.kdt-flights { list-style: none; margin: 0; padding: 0; }
.kdt-flight { display: grid; grid-template-columns: minmax(0, 2fr) minmax(120px, 3fr); gap: 4px 12px; padding: 6px 0; border-bottom: 1px solid var(--kdt-line); align-items: center; }
@media (max-width: 640px) { .kdt-flight { grid-template-columns: minmax(0, 1fr); } }
.kdt-flight-head { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; min-width: 0; }
.kdt-flight-url { font-family: var(--kdt-mono); font-size: 12px; word-break: break-all; }
.kdt-flight-note { font-size: 12px; color: var(--kdt-fg-2); }
.kdt-axis { display: flex; justify-content: space-between; font-size: 11px; color: var(--kdt-fg-2); border-bottom: 1px solid var(--kdt-line); padding-bottom: 2px; }
.kdt-track { position: relative; height: 14px; background: var(--kdt-bg-2); border-radius: 3px; overflow: hidden; }
.kdt-seg { position: absolute; top: 2px; bottom: 2px; min-width: 2px; border-radius: 2px; }
.kdt-seg[data-kind='queued'] { background: var(--kdt-idle); opacity: 0.45; }
.kdt-seg[data-kind='attempt'] { background: var(--kdt-info); }
.kdt-seg[data-kind='attempt'][data-outcome='failed'] { background: var(--kdt-bad); }
.kdt-seg[data-kind='attempt'][data-outcome='done'] { background: var(--kdt-ok); }
.kdt-seg[data-kind='retry-wait'] { background: repeating-linear-gradient(135deg, var(--kdt-warn) 0 4px, transparent 4px 7px); }
.kdt-seg[data-kind='rate-wait'] { background: repeating-linear-gradient(135deg, var(--kdt-park) 0 4px, transparent 4px 7px); }
.kdt-legend { display: flex; flex-wrap: wrap; gap: 10px; font-size: 11px; color: var(--kdt-fg-2); }
.kdt-legend span::before { content: ''; display: inline-block; width: 10px; height: 8px; margin-right: 4px; border-radius: 2px; vertical-align: baseline; background: var(--kdt-swatch); }
.kdt-spark { display: block; color: var(--kdt-info); }
.kdt-meters { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 10px; }
.kdt-card { border: 1px solid var(--kdt-line); border-radius: 8px; padding: 10px; min-width: 0; }
.kdt-card h3 { margin: 0 0 6px; font-size: 11px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--kdt-fg-2); }
.kdt-big { font-size: 20px; font-weight: 650; font-variant-numeric: tabular-nums; }
.kdt-meter { height: 8px; background: var(--kdt-bg-3); border-radius: 4px; overflow: hidden; margin-top: 6px; }
.kdt-meter > span { display: block; height: 100%; background: var(--kdt-accent); }
.kdt-meter[data-tone='warn'] > span { background: var(--kdt-warn); }
.kdt-lanes { display: grid; grid-template-columns: max-content minmax(0, 1fr) max-content; gap: 4px 8px; align-items: center; }
.kdt-conn { border: 1px solid var(--kdt-line); border-radius: 8px; padding: 10px; margin-bottom: 10px; }
.kdt-conn-head { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin-bottom: 6px; }
.kdt-events { list-style: none; margin: 0; padding: 0; }
.kdt-events li { border-top: 1px solid var(--kdt-line); padding: 4px 0; }
.kdt-events summary { cursor: pointer; display: flex; flex-wrap: wrap; gap: 8px; align-items: baseline; }
.kdt-sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
@media (prefers-reduced-motion: no-preference) {
  .kdt-badge[data-live] { animation: kdt-pulse 1.4s ease-in-out infinite; }
  @keyframes kdt-pulse { 50% { opacity: 0.55; } }
}
`;

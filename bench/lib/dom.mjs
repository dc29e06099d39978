// Shared by the React benchmarks: a jsdom document installed as the globals react-dom looks for.
// Call it before React loads (react-dom probes for a DOM at import).
import { createRequire } from 'node:module';

const GLOBALS = [
  'window',
  'document',
  'navigator',
  'Node',
  'HTMLElement',
  'HTMLIFrameElement',
  'Element',
  'Text',
  'Event',
  'KeyboardEvent',
  'MouseEvent',
  'getComputedStyle',
  'requestAnimationFrame',
  'cancelAnimationFrame',
];

/**
 * Installs a jsdom window as the global DOM. `packageJson` is the package.json of a workspace
 * package that has jsdom among its dev dependencies (jsdom is resolved from there). jsdom has no
 * `matchMedia`; a stub that matches nothing stands in (a panel asks it for the colour scheme).
 */
export function installDom(packageJson) {
  const { JSDOM } = createRequire(packageJson)('jsdom');
  const dom = new JSDOM('<!doctype html><html><body></body></html>', { pretendToBeVisual: true });
  dom.window.matchMedia ??= (query) => ({
    matches: false,
    media: query,
    addEventListener() {},
    removeEventListener() {},
  });
  for (const key of [...GLOBALS, 'matchMedia']) {
    if (!(key in globalThis) && dom.window[key] !== undefined) {
      Object.defineProperty(globalThis, key, {
        configurable: true,
        writable: true,
        value: key === 'window' ? dom.window : dom.window[key],
      });
    }
  }
  return dom;
}

/**
 * Rendering on a server (no `window`; Deno has one but is a server runtime). React Native has a
 * `window`, so it counts as a browser, as it should.
 */
export const isServer: boolean = typeof window === 'undefined' || 'Deno' in globalThis;

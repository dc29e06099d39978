/** One app of the size budget: a README block tagged `size=<id>`. */
export interface SizeApp {
  readonly id: 'A' | 'B' | 'C' | 'D';
  /** The README (path from the repository root) whose block is the app. */
  readonly readme: string;
  readonly what: string;
  /** Bytes of gzip -9 issue #15 asks for. */
  readonly target: number;
  /** Bytes of gzip -9 the check lets through. */
  readonly budget: number;
}

export const ROOT: string;
export const KB: number;
export const APPS: readonly SizeApp[];
/** The code of the one block of `readme` tagged `size=<id>`; throws unless there is exactly one. */
export function appCode(readme: string, id: string): string;
/** Minified and gzip -9 bytes of `code` bundled as an app. */
export function bundleSize(
  code: string,
  options?: { resolveDir?: string; loader?: string; plugins?: unknown[] },
): Promise<{ min: number; gzip: number; modules: string[] }>;
export function measureApps(): Promise<(SizeApp & { min: number; gzip: number })[]>;
export function kb(bytes: number): string;
/** esbuild plugin: `@keel/*` imports resolve to the packages' built dist. */
export const keelDist: { name: string; setup(build: unknown): void };
/** esbuild plugin: `@keel/*` imports resolve to the packages' sources. */
export const keelSources: { name: string; setup(build: unknown): void };

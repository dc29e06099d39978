/**
 * `@keel/devtools/production`: the panel in every build, production included (the main entry
 * renders nothing in production). Import it where the panel is wanted on a deployed site, for
 * instance behind a flag and with `React.lazy`, so that it loads only when asked for.
 *
 * @example
 * const Devtools = lazy(() =>
 *   import('@keel/devtools/production').then((m) => ({ default: m.KeelDevtools })),
 * );
 */
export {
  type DevtoolsView,
  KeelDevtoolsPanel as KeelDevtools,
  type KeelDevtoolsProps,
} from './panel/devtools';

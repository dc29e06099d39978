import type { ReactNode } from 'react';
import { KeelDevtoolsPanel, type KeelDevtoolsProps } from './panel/devtools';

export type { DevtoolsView, KeelDevtoolsProps } from './panel/devtools';

/**
 * The keel devtools panel in development; in a production build (`process.env.NODE_ENV ===
 * 'production'`, which bundlers set) a component that renders nothing, and the panel's code is
 * left out of the bundle: the condition is a constant there, so the minifier drops the branch
 * and the panel module with it (the package has no side effects). To ship the panel in
 * production, import `KeelDevtools` from `@keel/devtools/production` instead.
 *
 * @example
 * <ClientProvider client={client}>
 *   <App />
 *   <KeelDevtools />
 * </ClientProvider>
 */
export const KeelDevtools: (props: KeelDevtoolsProps) => ReactNode =
  process.env.NODE_ENV === 'production' ? renderNothing : KeelDevtoolsPanel;

function renderNothing(_props: KeelDevtoolsProps): ReactNode {
  return null;
}

import { type Client, type ClientInspector, inspect } from '@keel/core';
import { useClient } from '@keel/react';
import {
  Component,
  type KeyboardEvent,
  type ReactNode,
  useCallback,
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore,
} from 'react';
import { describeError } from '../format';
import { onEvents, useRefresh } from '../live/refresh';
import { FlightRecorder, isLive } from '../requests/recorder';
import { CacheView } from '../views/cache-view';
import { EndpointsView } from '../views/endpoints-view';
import { EventsView } from '../views/events-view';
import { RequestsView } from '../views/requests-view';
import { SchedulerView } from '../views/scheduler-view';
import { checkClient, checkProps } from './props';
import { STYLES } from './styles';

/** The panel's views, in tab order. */
export type DevtoolsView = 'cache' | 'requests' | 'endpoints' | 'scheduler' | 'events';

export interface KeelDevtoolsProps {
  /**
   * The client to show.
   * @default the client of the nearest `<ClientProvider>`
   */
  client?: Client | undefined;
  /**
   * Open the panel on the first render (otherwise only its toggle button shows).
   * @default false
   */
  initialIsOpen?: boolean | undefined;
  /**
   * The view the panel opens on.
   * @default 'cache'
   */
  initialView?: DevtoolsView | undefined;
  /**
   * The corner of the toggle button.
   * @default 'bottom-right'
   */
  position?: 'bottom-right' | 'bottom-left' | 'top-right' | 'top-left' | undefined;
  /**
   * Colours: the system's light or dark scheme (`prefers-color-scheme`), or one of them.
   * @default 'system'
   */
  theme?: 'system' | 'light' | 'dark' | undefined;
  /**
   * How many requests the Requests view keeps (the oldest ended ones are dropped first).
   * @default 100
   */
  maxFlights?: number | undefined;
}

const VIEWS: readonly { readonly id: DevtoolsView; readonly label: string }[] = [
  { id: 'cache', label: 'Cache' },
  { id: 'requests', label: 'Requests' },
  { id: 'endpoints', label: 'Endpoints' },
  { id: 'scheduler', label: 'Scheduler' },
  { id: 'events', label: 'Live events' },
];

const VIEW_IDS = VIEWS.map((v) => v.id);

const CIRCUIT_EVENTS = ['circuit-open', 'circuit-half-open', 'circuit-closed'] as const;

/**
 * The keel devtools panel: a toggle button that opens a panel docked at the bottom of the page
 * with five views of the client (Cache, Requests, Endpoints, Scheduler, Live events). While it is
 * closed it renders the button and subscribes to nothing; the open panel listens to the client's
 * events and reads `inspect(client)`, and lets go of everything when it closes.
 */
export function KeelDevtoolsPanel(props: KeelDevtoolsProps): ReactNode {
  return props.client ? <Devtools {...props} client={props.client} /> : <FromProvider {...props} />;
}

function FromProvider(props: KeelDevtoolsProps): ReactNode {
  const client = useClient();
  return <Devtools {...props} client={client} />;
}

/** What each prop is when left out: the `@default`s above (a test holds them equal). */
export const DEVTOOLS_DEFAULTS = {
  initialIsOpen: false,
  initialView: 'cache',
  position: 'bottom-right',
  theme: 'system',
  maxFlights: 100,
} as const satisfies Omit<Required<KeelDevtoolsProps>, 'client'>;

function Devtools({
  client,
  initialIsOpen = DEVTOOLS_DEFAULTS.initialIsOpen,
  initialView = DEVTOOLS_DEFAULTS.initialView,
  position = DEVTOOLS_DEFAULTS.position,
  theme = DEVTOOLS_DEFAULTS.theme,
  maxFlights = DEVTOOLS_DEFAULTS.maxFlights,
}: KeelDevtoolsProps & { client: Client }): ReactNode {
  checkProps({ maxFlights, initialView, position, theme }, VIEW_IDS);
  // Once per client, not per render (the app's re-renders reach the closed panel too).
  useMemo(() => checkClient(client), [client]);
  const [open, setOpen] = useState(initialIsOpen);
  const hydrated = useSyncExternalStore(subscribeNothing, isBrowserRender, isServerRender);
  const toggle = useRef<HTMLButtonElement>(null);
  // Focus goes back to the toggle when the panel closes (not on the first render).
  const returnFocus = useRef(false);
  useEffect(() => {
    if (!open && returnFocus.current) {
      returnFocus.current = false;
      toggle.current?.focus();
    }
  }, [open]);
  const close = useCallback(() => {
    returnFocus.current = true;
    setOpen(false);
  }, []);
  const panelId = useId();
  return (
    <div className="kdt" data-theme={theme} data-position={position}>
      <style>{STYLES}</style>
      {open && hydrated ? (
        <OpenPanel
          id={panelId}
          client={client}
          initialView={initialView}
          maxFlights={maxFlights}
          onClose={close}
        />
      ) : (
        <button
          ref={toggle}
          type="button"
          className="kdt-toggle"
          aria-expanded={false}
          onClick={() => setOpen(true)}
        >
          <span className="kdt-toggle-dot" aria-hidden="true" />
          keel devtools
        </button>
      )}
    </div>
  );
}

const subscribeNothing = () => () => {};
const isBrowserRender = () => true;
/**
 * The server's render, and the browser's first render of server markup (hydration), draw the
 * toggle: the open panel's content (ages, counts, countdowns) differs from one render to the
 * other, so an open panel would fail hydration. `initialIsOpen` opens it right after.
 */
const isServerRender = () => false;

function OpenPanel({
  id,
  client,
  initialView,
  maxFlights,
  onClose,
}: {
  id: string;
  client: Client;
  initialView: DevtoolsView;
  maxFlights: number;
  onClose: () => void;
}) {
  // Once per client, not per render (the app's re-renders reach the open panel too).
  const inspector = useMemo(() => inspect(client), [client]);
  // One per client: a panel handed another client records that one (and lets go of the first).
  const recorder = useMemo(() => new FlightRecorder(client, maxFlights), [client, maxFlights]);
  useEffect(() => {
    recorder.start();
    return () => recorder.stop();
  }, [recorder]);
  const [view, setView] = useState<DevtoolsView>(initialView);
  const [full, setFull] = useState(false);
  const tabs = useRef(new Map<DevtoolsView, HTMLButtonElement>());
  // Opening moves focus into the panel, onto the selected tab.
  // biome-ignore lint/correctness/useExhaustiveDependencies: on open only
  useEffect(() => {
    tabs.current.get(view)?.focus();
  }, []);

  const select = (next: DevtoolsView) => {
    setView(next);
    tabs.current.get(next)?.focus();
  };
  const onTabKey = (event: KeyboardEvent) => {
    const at = VIEWS.findIndex((v) => v.id === view);
    const to =
      event.key === 'ArrowRight'
        ? (at + 1) % VIEWS.length
        : event.key === 'ArrowLeft'
          ? (at - 1 + VIEWS.length) % VIEWS.length
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? VIEWS.length - 1
              : -1;
    if (to === -1) return;
    event.preventDefault();
    select(VIEWS[to]!.id);
  };

  return (
    <section
      id={id}
      className="kdt-panel"
      aria-label="keel devtools"
      data-size={full ? 'full' : undefined}
      onKeyDown={(event) => {
        if (event.key === 'Escape' && !event.defaultPrevented) {
          event.preventDefault();
          onClose();
        }
      }}
    >
      <div className="kdt-bar">
        <span className="kdt-title">keel</span>
        <div className="kdt-tabs" role="tablist" aria-label="Views" onKeyDown={onTabKey}>
          {VIEWS.map((v) => (
            <button
              key={v.id}
              ref={(element) => {
                if (element) tabs.current.set(v.id, element);
                else tabs.current.delete(v.id);
              }}
              type="button"
              role="tab"
              id={`${id}-tab-${v.id}`}
              aria-selected={v.id === view}
              aria-controls={`${id}-view-${v.id}`}
              tabIndex={v.id === view ? 0 : -1}
              className="kdt-tab"
              onClick={() => select(v.id)}
            >
              {v.label}
              {v.id === 'requests' ? <LiveCount recorder={recorder} /> : null}
              {v.id === 'endpoints' ? <OpenCircuits client={client} inspector={inspector} /> : null}
            </button>
          ))}
        </div>
        <button
          type="button"
          className="kdt-icon-button"
          aria-pressed={full}
          onClick={() => setFull((f) => !f)}
          title={full ? 'Shrink the panel' : 'Expand the panel to the full height'}
        >
          {full ? 'Shrink' : 'Expand'}
        </button>
        <button
          type="button"
          className="kdt-icon-button"
          aria-label="Close keel devtools"
          title="Close (Esc)"
          onClick={onClose}
        >
          ✕
        </button>
      </div>
      {VIEWS.map((v) => (
        <div
          key={v.id}
          id={`${id}-view-${v.id}`}
          role="tabpanel"
          aria-labelledby={`${id}-tab-${v.id}`}
          hidden={v.id !== view}
          className={v.id === view ? 'kdt-body' : undefined}
        >
          {/* Only the selected view is rendered: it alone reads and subscribes. */}
          {v.id === view ? (
            <ViewBoundary key={v.id}>
              <ViewBody view={v.id} client={client} inspector={inspector} recorder={recorder} />
            </ViewBoundary>
          ) : null}
        </div>
      ))}
    </section>
  );
}

function ViewBody({
  view,
  client,
  inspector,
  recorder,
}: {
  view: DevtoolsView;
  client: Client;
  inspector: ClientInspector;
  recorder: FlightRecorder;
}) {
  switch (view) {
    case 'cache':
      return <CacheView client={client} inspector={inspector} />;
    case 'requests':
      return <RequestsView client={client} inspector={inspector} recorder={recorder} />;
    case 'endpoints':
      return <EndpointsView client={client} inspector={inspector} />;
    case 'scheduler':
      return <SchedulerView client={client} inspector={inspector} />;
    case 'events':
      return <EventsView client={client} />;
  }
}

/** The number of flights in progress, on the Requests tab. */
function LiveCount({ recorder }: { recorder: FlightRecorder }) {
  useRefresh(recorder.subscribe);
  const live = recorder.records().filter(isLive).length;
  if (live === 0) return null;
  return (
    <span className="kdt-count">
      <span aria-hidden="true">{live}</span>
      <span className="kdt-sr">, {live} in flight</span>
    </span>
  );
}

/** How many circuits are not closed, on the Endpoints tab. */
function OpenCircuits({ client, inspector }: { client: Client; inspector: ClientInspector }) {
  const subscribe = useCallback(
    (changed: () => void) => onEvents(client, CIRCUIT_EVENTS, changed),
    [client],
  );
  useRefresh(subscribe);
  const open = inspector.circuits().filter((c) => c.state !== 'closed').length;
  if (open === 0) return null;
  return (
    <span className="kdt-count" style={{ color: 'var(--kdt-bad)' }}>
      <span aria-hidden="true">● {open}</span>
      <span className="kdt-sr">
        , {open} {open === 1 ? 'circuit' : 'circuits'} open
      </span>
    </span>
  );
}

/**
 * Keeps a view that throws (data no view foresaw) from taking the app down with it: the view
 * says what failed and offers to try again; the rest of the panel and the page keep working.
 */
class ViewBoundary extends Component<{ children: ReactNode }, { error: unknown }> {
  override state: { error: unknown } = { error: undefined };

  static getDerivedStateFromError(error: unknown): { error: unknown } {
    return { error: error ?? new Error('unknown error') };
  }

  override render(): ReactNode {
    if (this.state.error === undefined) return this.props.children;
    return (
      <div className="kdt-view">
        <div className="kdt-empty" role="alert">
          <strong>This view failed</strong>
          {describeError(this.state.error)}{' '}
          <button
            type="button"
            className="kdt-button"
            onClick={() => this.setState({ error: undefined })}
          >
            Try again
          </button>
        </div>
      </div>
    );
  }
}

/**
 * Runs `stop` on the first SIGINT or SIGTERM, then exits (1 if `stop` failed). Later signals
 * wait for the same stop instead of killing the process half-way: Ctrl-C reaches every process
 * of the terminal's group, tsx relays it to its child a second time when it misses the child's
 * own report, and cluster.ts sends its instances a SIGTERM on top. `process.once` would leave the
 * second one to Node's default, which ends the process before its cleanup.
 */
export function onShutdown(stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

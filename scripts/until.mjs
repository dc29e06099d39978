// Shared by the end-to-end suites (the core's and the server's browser tests, examples/react-live).
//
// Polls `check` (sync or async) every 10 ms until it holds. `ms` only turns a hang into a
// failure naming `what`: nothing is asserted about how long it took (tests never judge wall-clock
// speed).
export async function until(check, what, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The binary `scripts/ensure-apt.sh` installs when it is missing (`CHROMIUM_PATH` or /usr/bin/chromium). */
export declare const CHROMIUM_PATH: string;

/** Debian's Chromium with a fresh user-data-dir, launched through playwright-core's `chromium`. */
export declare function launchChromium<C extends { close(): Promise<void> }>(chromium: {
  launchPersistentContext(
    userDataDir: string,
    options: { executablePath: string; args: string[]; headless: boolean },
  ): Promise<C>;
}): Promise<{ context: C; close(): Promise<void> }>;

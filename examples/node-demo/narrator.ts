/**
 * Prints the demo's story: numbered sections, lines stamped with the time since the start, event
 * lines indented under the action that caused them, and a final table.
 */
export class Narrator {
  readonly #start = performance.now();
  #section = 0;

  /** Seconds since the demo started, e.g. `  1.204s`. */
  get elapsed(): string {
    return `${((performance.now() - this.#start) / 1000).toFixed(3)}s`.padStart(8);
  }

  section(title: string, story: string): void {
    this.#section++;
    console.log(`\n${this.#section}. ${title}`);
    for (const line of wrap(story, 92)) console.log(`   ${line}`);
  }

  /** Something the scenario did or saw. */
  say(text: string): void {
    console.log(`${this.elapsed}  ${text}`);
  }

  /** Something the client reported through `client.on(...)`. */
  event(name: string, text: string): void {
    console.log(`${this.elapsed}    · ${name.padEnd(10)} ${text}`);
  }

  table(title: string, rows: ReadonlyArray<readonly [string, string | number, string?]>): void {
    const w0 = Math.max(...rows.map((r) => r[0].length));
    const w1 = Math.max(...rows.map((r) => String(r[1]).length));
    const line = `+${'-'.repeat(w0 + 2)}+${'-'.repeat(w1 + 2)}+`;
    console.log(`\n${title}`);
    console.log(line);
    for (const [label, value, note] of rows) {
      const cells = `| ${label.padEnd(w0)} | ${String(value).padStart(w1)} |`;
      console.log(note ? `${cells} ${note}` : cells);
    }
    console.log(line);
  }

  /** A table with a header row; numbers are right-aligned, text left-aligned. */
  grid(
    title: string,
    header: readonly string[],
    rows: ReadonlyArray<ReadonlyArray<string | number>>,
  ): void {
    const widths = header.map((h, i) =>
      Math.max(h.length, ...rows.map((r) => String(r[i]).length)),
    );
    const line = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
    const cells = (row: ReadonlyArray<string | number>) =>
      `| ${row
        .map((cell, i) =>
          typeof cell === 'number'
            ? String(cell).padStart(widths[i] ?? 0)
            : cell.padEnd(widths[i] ?? 0),
        )
        .join(' | ')} |`;
    console.log(`\n${title}`);
    console.log(line);
    console.log(cells(header));
    console.log(line);
    for (const row of rows) console.log(cells(row));
    console.log(line);
  }
}

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

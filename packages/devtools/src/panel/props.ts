/**
 * Checks the panel's props as keel checks options: a TypeError for the wrong type, a RangeError
 * for the wrong value, each naming the prop (TypeScript catches these; JavaScript callers and
 * values from config files do not get that help).
 */
export function checkProps(
  props: { maxFlights: unknown; initialView: unknown; position: unknown; theme: unknown },
  views: readonly string[],
): void {
  const { maxFlights } = props;
  if (typeof maxFlights !== 'number') {
    throw new TypeError(
      `keel: KeelDevtools \`maxFlights\` must be a number, got ${typeof maxFlights}`,
    );
  }
  if (!(maxFlights >= 0 && (Number.isInteger(maxFlights) || maxFlights === Infinity))) {
    throw new RangeError(
      `keel: KeelDevtools \`maxFlights\` must be a non-negative integer, got ${maxFlights}`,
    );
  }
  oneOf('initialView', props.initialView, views);
  oneOf('position', props.position, POSITIONS);
  oneOf('theme', props.theme, THEMES);
}

const POSITIONS = ['bottom-right', 'bottom-left', 'top-right', 'top-left'] as const;
const THEMES = ['system', 'light', 'dark'] as const;

function oneOf(name: string, value: unknown, allowed: readonly string[]): void {
  if (allowed.includes(value as string)) return;
  const list = allowed.map((v) => `'${v}'`).join(', ');
  const got = typeof value === 'string' ? `'${value}'` : String(value);
  throw new RangeError(`keel: KeelDevtools \`${name}\` must be one of ${list}, got ${got}`);
}

/**
 * HTTP-date (RFC 9110 §5.6.7), read strictly: a conditional header whose date is not one must be
 * ignored (§13.1.3, §13.1.4), and Date.parse reads `9999`, `0` or an ISO date as some time. The
 * `fresh` and `send` packages use Date.parse too: a few lines here rather than a dependency.
 */

const MONTHS = 'JanFebMarAprMayJunJulAugSepOctNovDec';
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d\\d):(\\d\\d):(\\d\\d)';
/** `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE = new RegExp(`^([A-Z][a-z]{2}), (\\d\\d) ${MONTH} (\\d{4}) ${TIME} GMT$`);
/** `Sunday, 06-Nov-94 08:49:37 GMT` (obsolete) */
const RFC850_DATE = new RegExp(`^([A-Z][a-z]{5,8}), (\\d\\d)-${MONTH}-(\\d\\d) ${TIME} GMT$`);
/** `Sun Nov  6 08:49:37 1994` (obsolete: asctime's, the day padded with a space) */
const ASCTIME_DATE = new RegExp(`^([A-Z][a-z]{2}) ${MONTH} (\\d\\d| \\d) ${TIME} (\\d{4})$`);
const DAY_MS = 86_400_000;
/** 400 Gregorian years: the calendar repeats, so a year below 100 can be shifted past Date.UTC's 1900s mapping. */
const CYCLE_MS = 146_097 * DAY_MS;

function daysIn(month: number, year: number): number {
  if (month === 1) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 3 || month === 5 || month === 8 || month === 10 ? 30 : 31;
}

/**
 * RFC 9110 §5.6.7: a two-digit year that appears more than 50 years in the future is the most
 * recent past year with those digits; the year is taken within 50 years of `now`'s either way.
 */
function fullYear(twoDigits: number, now: number): number {
  const current = new Date(now).getUTCFullYear();
  const year = current - (current % 100) + twoDigits;
  if (year > current + 50) return year - 100;
  return year <= current - 50 ? year + 100 : year;
}

/**
 * The time (ms since the epoch) an HTTP-date names, or null for anything else: another format
 * (ISO 8601, a bare year, a zone other than GMT), another case (the grammar is case-sensitive),
 * a list of dates, a day, hour, minute or second out of range, or a weekday the date does not fall
 * on. Accepts the three forms a recipient must (IMF-fixdate, RFC 850, asctime); `now` places an
 * RFC 850 two-digit year. A leap second (`:60`) is the next minute's first.
 */
export function parseHttpDate(value: string, now: number): number | null {
  let m: RegExpExecArray | null;
  let days: readonly string[] = DAYS;
  let dayName: string;
  let day: string;
  let month: string;
  let year: number;
  let time: number;
  // The fourth character tells the form: `Sun,` / `Sun ` / `Sunday,`.
  const fourth = value.charCodeAt(3);
  if (fourth === 44 && (m = IMF_FIXDATE.exec(value)) !== null) {
    [, dayName = '', day = '', month = ''] = m;
    year = Number(m[4]);
    time = 5;
  } else if (fourth === 32 && (m = ASCTIME_DATE.exec(value)) !== null) {
    [, dayName = '', month = '', day = ''] = m;
    year = Number(m[7]);
    time = 4;
  } else if ((m = RFC850_DATE.exec(value)) !== null) {
    days = LONG_DAYS;
    [, dayName = '', day = '', month = ''] = m;
    year = fullYear(Number(m[4]), now);
    time = 5;
  } else {
    return null;
  }
  const monthIndex = MONTHS.indexOf(month) / 3;
  const date = Number(day);
  const hour = Number(m[time]);
  const minute = Number(m[time + 1]);
  const second = Number(m[time + 2]);
  if (date < 1 || date > daysIn(monthIndex, year) || hour > 23 || minute > 59 || second > 60) {
    return null;
  }
  const shift = year < 100 ? CYCLE_MS : 0;
  const midnight = Date.UTC(year + (shift === 0 ? 0 : 400), monthIndex, date) - shift;
  // 1 January 1970 was a Thursday (4); the weekday is the date's, whatever the time (`:60`).
  const weekday = (((midnight / DAY_MS + 4) % 7) + 7) % 7;
  if (days[weekday] !== dayName) return null;
  return midnight + ((hour * 60 + minute) * 60 + second) * 1000;
}

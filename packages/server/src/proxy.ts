import type { IncomingHttpHeaders } from 'node:http';
import proxyaddr from 'proxy-addr';

/**
 * Which X-Forwarded-For hops to believe.
 * - `false` (default): none; `ctx.ip` is the TCP peer.
 * - `true`: all; `ctx.ip` is the leftmost hop, which the client controls.
 * - a number `n`: the `n` nearest hops (right to left) are your proxies.
 * - an address / CIDR / proxy-addr preset (`loopback`, `linklocal`, `uniquelocal`), or a list of
 *   them (also comma-separated): hops from these addresses are trusted, right to left.
 */
export type TrustProxy = boolean | number | string | readonly string[];

/** `null` means trust proxy is off. */
export type TrustFn = ((addr: string, hop: number) => boolean) | null;

const trustAll = (): boolean => true;

/** Normalizes a {@link TrustProxy} once, at the boundary; throws on bad values. */
export function compileTrust(value: TrustProxy): TrustFn {
  if (value === false) return null;
  if (value === true) return trustAll;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0) {
      throw new RangeError(`trust proxy hop count must be a non-negative integer, got ${value}`);
    }
    if (value === 0) return null;
    return (_addr, hop) => hop < value;
  }
  const list =
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [...value];
  if (list.length === 0) return null;
  // proxy-addr throws TypeError on an invalid address or CIDR, naming it.
  return proxyaddr.compile(list);
}

/** The client address and the forwarded chain (client first) for one request. */
export function resolveAddresses(
  peer: string,
  headers: IncomingHttpHeaders,
  trust: NonNullable<TrustFn>,
): { ip: string; ips: string[] } {
  // proxy-addr reads only `headers` and the socket address; give it the address captured at
  // accept rather than the live socket, which may be gone by now.
  const fake = { headers, socket: { remoteAddress: peer }, connection: { remoteAddress: peer } };
  const addrs = proxyaddr.all(fake as never, trust);
  // addrs = [peer, nearest hop, ..., first untrusted hop]; ips lists the hops client first.
  const ips = addrs.slice(1).reverse();
  return { ip: addrs[addrs.length - 1] ?? peer, ips };
}

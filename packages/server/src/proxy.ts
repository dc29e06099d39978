import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import proxyaddr from 'proxy-addr';
import { integer, rangeError, typeError } from './checks';

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
    const hops = integer('trustProxy', value, 0, 0, undefined, 'hops');
    if (hops === 0) return null;
    return (_addr, hop) => hop < hops;
  }
  const expected = 'a boolean, a hop count, or addresses / CIDRs / presets';
  if (typeof value !== 'string' && !Array.isArray(value)) {
    throw typeError('trustProxy', expected, value);
  }
  const list =
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [...value];
  for (const entry of list) {
    if (typeof entry !== 'string') throw typeError('trustProxy[]', 'an address or CIDR', entry);
  }
  if (list.length === 0) return null;
  try {
    return proxyaddr.compile(list);
  } catch (err) {
    // proxy-addr names the entry it cannot read ("invalid IP address: x").
    const bad = list.find((entry) => {
      try {
        proxyaddr.compile([entry]);
        return false;
      } catch {
        return true;
      }
    });
    throw rangeError(
      'trustProxy',
      'IP addresses, CIDRs or loopback / linklocal / uniquelocal',
      bad ?? value,
      err,
    );
  }
}

/** Node's own default when a server's `maxHeadersCount` is left unset: 2000 raw entries. */
const NODE_HEADER_ENTRIES = 2000;

/**
 * Node dropped header lines past its server's `maxHeadersCount` (at about 1000 lines when it is
 * unset). A proxy appends its `X-Forwarded-For` line after the client's, so such a request may
 * have lost the line that counts and kept the client's own: none of its forwarding headers, and
 * no Host (a second line may be gone), can be believed. `listen()` servers keep every line.
 */
export function headersCut(req: IncomingMessage): boolean {
  const server = (req.socket as { server?: { maxHeadersCount?: unknown } } | null)?.server;
  const max = server?.maxHeadersCount;
  const entries = typeof max === 'number' ? max * 2 : NODE_HEADER_ENTRIES;
  return entries > 0 && req.rawHeaders.length >= entries;
}

/**
 * The TCP peer as `ctx.ip` and `ctx.req.remoteAddress` give it: an IPv4 client of a dual-stack
 * listener (`listen(0)` binds `::`) arrives as `::ffff:a.b.c.d`; it is the IPv4 client
 * `a.b.c.d`, so one client has one spelling whichever address the server listens on (as Go's
 * net package reports it). Called once per connection: its result is kept on the socket.
 */
export function peerAddress(address: string | undefined): string {
  return address === undefined ? '' : unmapped(address);
}

const BRACKETED = /^\[([^\]]*)\](?::\d{1,5})?$/;
const IPV4_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/;

/** An IPv4-mapped IPv6 address as a proxy may write it (any case, `::` or the zeros spelled out). */
const MAPPED = /^(?:::|(?:0{1,4}:){5})ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * One X-Forwarded-For entry as an address: proxies also write `[v6]:port` and `v4:port`, which
 * proxy-addr would pass on as they are, and a proxy on a dual-stack socket writes an IPv4 peer
 * as `::ffff:a.b.c.d`: unmapped as the TCP peer is (see peerAddress), so one client has one
 * spelling behind a proxy or not. Anything else is left for the validity check.
 */
function bareAddress(entry: string): string {
  const bracketed = BRACKETED.exec(entry);
  const withPort = bracketed === null ? IPV4_PORT.exec(entry) : null;
  return unmapped(bracketed?.[1] ?? withPort?.[1] ?? entry);
}

/** `a.b.c.d` for an IPv4-mapped IPv6 address (one rule for the TCP peer and proxy hops). */
function unmapped(address: string): string {
  const mapped = MAPPED.exec(address);
  return mapped !== null && isIP(mapped[1]!) === 4 ? mapped[1]! : address;
}

/**
 * The client address and the forwarded chain (client first) for one request. `ip` is always an
 * address: a hop that is not one (`unknown`, garbage) ends the chain as an untrusted hop would,
 * and `ip` is then the nearest address before it, the proxy that wrote it.
 */
export function resolveAddresses(
  peer: string,
  headers: IncomingHttpHeaders,
  trust: NonNullable<TrustFn>,
): { ip: string; ips: string[] } {
  const forwarded = headers['x-forwarded-for'];
  const list =
    typeof forwarded === 'string'
      ? forwarded
          .split(',')
          .map((entry) => bareAddress(entry.trim()))
          .join(', ')
      : undefined;
  // proxy-addr reads only `headers` and the socket address; give it the address captured at
  // accept rather than the live socket, which may be gone by now.
  const fake = {
    headers: { 'x-forwarded-for': list },
    socket: { remoteAddress: peer },
    connection: { remoteAddress: peer },
  };
  const addrs = proxyaddr.all(fake as never, (addr, hop) => isIP(addr) !== 0 && trust(addr, hop));
  // addrs = [peer, nearest hop, ..., first untrusted hop]; the last may be no address at all.
  while (addrs.length > 1 && isIP(addrs[addrs.length - 1]!) === 0) addrs.pop();
  const ips = addrs.slice(1).reverse();
  return { ip: addrs[addrs.length - 1] ?? peer, ips };
}

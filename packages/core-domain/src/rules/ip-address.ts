import ipaddr from 'ipaddr.js'

/** IPv4 ranges that are globally routed (ipaddr.js names); anything else is internal or special. */
const PUBLIC_V4 = new Set(['unicast', 'as112', 'amt'])
/** IPv6 ranges that are globally routed, inside 2000::/3. */
const PUBLIC_V6 = new Set(['unicast', 'as112v6', 'amt'])

/**
 * IPv6 forms that carry an IPv4 address the packets end up at: IPv4-mapped (`::ffff:a.b.c.d`),
 * IPv4-translated (RFC 6145), NAT64 well-known prefix `64:ff9b::/96` (RFC 6052) and 6to4
 * `2002::/16` (RFC 3056). The embedded IPv4 address decides.
 */
function embeddedIpv4(address: ipaddr.IPv6, range: string): ipaddr.IPv4 | undefined {
  const p = address.parts
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])
  if (range === 'ipv4Mapped' || range === 'rfc6145') return v4(p[6] ?? 0, p[7] ?? 0)
  if (range === 'rfc6052' && address.match(ipaddr.IPv6.parse('64:ff9b::'), 96))
    return v4(p[6] ?? 0, p[7] ?? 0)
  if (range === '6to4') return v4(p[1] ?? 0, p[2] ?? 0)
  return undefined
}

/**
 * Why the service must not connect to an IP address: the name of its special-purpose range
 * (`loopback`, `private`, `linkLocal`, `uniqueLocal`, `multicast`, `unspecified`, …, for embedded
 * IPv4 `ipv4Mapped loopback`), or `undefined` for a public unicast address. Any text form
 * ipaddr.js parses is accepted (`127.1`, `0x7f000001`, `::ffff:7f00:1`); text that is no IP
 * address at all answers `undefined`, so ask `isIpAddress` first.
 */
export function nonPublicRange(text: string): string | undefined {
  // ipaddr.js reads `::a.b.c.d` as IPv4-mapped; it is IPv4-compatible (no ffff), which is how
  // Node prints such a DNS answer.
  const literal = text.replace(/^\[|\]$/g, '').replace(/^::(?=\d+\.\d+\.\d+\.\d+$)/, '0::')
  if (!ipaddr.isValid(literal)) return undefined
  const address = ipaddr.parse(literal)
  const range: string = address.range()
  if (address.kind() === 'ipv4') return PUBLIC_V4.has(range) ? undefined : range
  const v6 = address as ipaddr.IPv6
  const v4 = embeddedIpv4(v6, range)
  if (v4) {
    const inner: string = v4.range()
    return PUBLIC_V4.has(inner) ? undefined : `${range} ${inner}`
  }
  // IPv4-compatible `::a.b.c.d` is deprecated (RFC 4291 §2.5.5.1), and it and the rest of
  // unassigned space fall outside 2000::/3, the only block IANA hands out as global unicast.
  if (range === 'unicast' && v6.match(ipaddr.IPv6.parse('::'), 96)) return 'ipv4Compatible'
  if (!v6.match(ipaddr.IPv6.parse('2000::'), 3)) return range === 'unicast' ? 'unassigned' : range
  return PUBLIC_V6.has(range) ? undefined : range
}

/** True for an IPv4 or IPv6 address literal (brackets allowed), in any form ipaddr.js parses. */
export function isIpAddress(text: string): boolean {
  return ipaddr.isValid(text.replace(/^\[|\]$/g, ''))
}

import { describe, expect, it } from 'vitest'
import { nonPublicRange } from '../src/rules/ip-address'
import { checkOutboundUrl } from '../src/rules/outbound-url'
import { checkRedirectUri } from '../src/rules/redirect-uri'

const strict = { allowHttp: false, allowedHosts: [] }

describe('nonPublicRange: the address classifier behind both outbound checks (S-120)', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.1', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['017700000001', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'ipv4Mapped loopback'],
    ['::ffff:7f00:1', 'ipv4Mapped loopback'],
    ['::ffff:a9fe:a9fe', 'ipv4Mapped linkLocal'],
    ['::ffff:10.0.0.1', 'ipv4Mapped private'],
    ['::127.0.0.1', 'ipv4Compatible'],
    ['::7f00:1', 'ipv4Compatible'],
    ['::8.8.8.8', 'ipv4Compatible'],
    ['64:ff9b::7f00:1', 'rfc6052 loopback'],
    ['64:ff9b::10.0.0.1', 'rfc6052 private'],
    ['64:ff9b:1::1', 'rfc6052'],
    ['2002:7f00:1::', '6to4 loopback'],
    ['2002:a9fe:a9fe::1', '6to4 linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd00::1', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['ff02::1', 'multicast'],
    ['ff0e::1', 'multicast'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['2001:db8::1', 'reserved'],
    ['2001::1', 'teredo'],
    ['100::1', 'discard'],
    ['1::1', 'unassigned'],
    ['[::1]', 'loopback'],
  ])('S-120: %s is %s', (address, range) => {
    expect(nonPublicRange(address)).toBe(range)
  })

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('S-120: %s is public', (address) => {
    expect(nonPublicRange(address)).toBeUndefined()
  })
})

describe('checkOutboundUrl: the save-time check of attribute provider and webhook URLs (S-120)', () => {
  it('S-120: accepts public https URLs, with IPv4 or IPv6 literals too', () => {
    for (const url of [
      'https://attributes.example.com/pid',
      'https://93.184.216.34/hook',
      'https://[2606:4700:4700::1111]/hook',
    ]) {
      expect(checkOutboundUrl(url, strict), url).toStrictEqual([])
    }
  })

  it.each([
    ['https://[::ffff:7f00:1]', "'[::ffff:7f00:1]' is a non-public address (ipv4Mapped loopback)"],
    ['https://[::ffff:127.0.0.1]/', "'[::ffff:7f00:1]' is a non-public address (ipv4Mapped loopback)"],
    [
      'https://[::ffff:a9fe:a9fe]/latest',
      "'[::ffff:a9fe:a9fe]' is a non-public address (ipv4Mapped linkLocal)",
    ],
    ['https://[::127.0.0.1]', "'[::7f00:1]' is a non-public address (ipv4Compatible)"],
    ['https://[::7f00:1]', "'[::7f00:1]' is a non-public address (ipv4Compatible)"],
    ['https://[64:ff9b::10.0.0.1]', "'[64:ff9b::a00:1]' is a non-public address (rfc6052 private)"],
    ['https://[2002:7f00:1::]', "'[2002:7f00:1::]' is a non-public address (6to4 loopback)"],
    ['https://[fc00::1]', "'[fc00::1]' is a non-public address (uniqueLocal)"],
    ['https://[fe80::1]', "'[fe80::1]' is a non-public address (linkLocal)"],
    ['https://[ff02::1]', "'[ff02::1]' is a non-public address (multicast)"],
    ['https://[::]', "'[::]' is a non-public address (unspecified)"],
    ['https://[::1]:8443', "'[::1]' is a non-public address (loopback)"],
    // WHATWG URL parsing turns every IPv4 spelling into dotted decimal before we look at it.
    ['https://2130706433/', "'127.0.0.1' is a non-public address (loopback)"],
    ['https://0x7f000001/', "'127.0.0.1' is a non-public address (loopback)"],
    ['https://017700000001/', "'127.0.0.1' is a non-public address (loopback)"],
    ['https://127.1/', "'127.0.0.1' is a non-public address (loopback)"],
    ['https://127.0.0.1./', "'127.0.0.1' is a non-public address (loopback)"],
    ['https://0/', "'0.0.0.0' is a non-public address (unspecified)"],
    ['https://169.254.169.254/latest/meta-data', "'169.254.169.254' is a non-public address (linkLocal)"],
    ['https://localhost./', "'localhost.' is an internal name"],
    ['https://LOCALHOST:8443', "'localhost' is an internal name"],
    ['https://api.localhost', "'api.localhost' is an internal name"],
    [
      'https://metadata.google.internal./computeMetadata/v1/',
      "'metadata.google.internal.' is an internal name",
    ],
    ['https://db.internal', "'db.internal' is an internal name"],
    ['https://printer.local', "'printer.local' is an internal name"],
  ])('S-120: %s is refused', (url, message) => {
    expect(checkOutboundUrl(url, strict)).toStrictEqual([
      { path: 'body.url', message: `${message}; allow it with OUTBOUND_ALLOWED_HOSTS` },
    ])
  })

  it('S-120: http, file:, gopher: and credentials in the URL are refused', () => {
    expect(checkOutboundUrl('http://attributes.example.com', strict)).toStrictEqual([
      { path: 'body.url', message: 'must use https' },
    ])
    expect(checkOutboundUrl('file:///etc/passwd', strict)).toStrictEqual([
      { path: 'body.url', message: 'must use https' },
    ])
    expect(checkOutboundUrl('gopher://example.com:70/', { allowHttp: true, allowedHosts: [] })).toStrictEqual(
      [{ path: 'body.url', message: 'must be http(s)' }],
    )
    expect(checkOutboundUrl('https://user:pw@example.com', strict)).toStrictEqual([
      { path: 'body.url', message: 'must not carry credentials; use auth' },
    ])
  })

  it('S-120: OUTBOUND_ALLOWED_HOSTS opens a host however it is written (case, brackets, trailing dot)', () => {
    const dev = { allowHttp: true, allowedHosts: ['localhost', '::1', '127.0.0.1'] }
    for (const url of [
      'http://localhost:4000/hook',
      'http://LOCALHOST.:4000/hook',
      'http://[::1]:4000/hook',
      'http://127.0.0.1:4000/hook',
      'http://2130706433:4000/hook',
    ]) {
      expect(checkOutboundUrl(url, dev), url).toStrictEqual([])
    }
    expect(checkOutboundUrl('http://[::ffff:7f00:1]/', dev)).not.toStrictEqual([])
  })
})

describe('checkRedirectUri: presentation redirect URIs', () => {
  it('S-120/issue 11: only https (http with OUTBOUND_ALLOW_HTTP), no fragment, no credentials', () => {
    expect(checkRedirectUri('https://rp.example.com/done?x=1', strict, 'body.redirectUri')).toStrictEqual([])
    expect(
      checkRedirectUri('http://localhost:3000/done', { allowHttp: true }, 'body.redirectUri'),
    ).toStrictEqual([])
    for (const [uri, scheme] of [
      ['javascript:alert(document.cookie)', 'javascript'],
      ['JavaScript://example.com/%0Aalert(1)', 'javascript'],
      ['data:text/html,<script>alert(1)</script>', 'data'],
      ['vbscript:msgbox', 'vbscript'],
      ['file:///etc/passwd', 'file'],
      ['myapp://callback', 'myapp'],
      ['http://rp.example.com/done', 'http'],
    ] as const) {
      expect(checkRedirectUri(uri, strict, 'body.redirectUri'), uri).toStrictEqual([
        { path: 'body.redirectUri', message: `must use https, not '${scheme}'` },
      ])
    }
    expect(checkRedirectUri('https://rp.example.com/#x', strict, 'redirectUri')).toStrictEqual([
      { path: 'redirectUri', message: 'must not carry a fragment (the response code is appended as one)' },
    ])
    expect(checkRedirectUri('https://u:p@rp.example.com/', strict, 'redirectUri')).toStrictEqual([
      { path: 'redirectUri', message: 'must not carry credentials' },
    ])
  })
})

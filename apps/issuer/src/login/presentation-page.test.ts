import { describe, expect, it } from 'vitest'
import { failureClass, presentationPage, returnPage } from './presentation-page'

describe('issue 26: the presentation login pages', () => {
  const data = {
    title: 'Issuer <script>alert(1)</script> & "Co"',
    crossDeviceUri:
      'openid4vp://?client_id=x509_san_dns%3Aissuer.example&request_uri=https%3A%2F%2Fa%2Fr%2F1',
    sameDeviceUri: 'openid4vp://?client_id=x&request_uri=https%3A%2F%2Fa%2Fr%2F2"><script>',
    statusUrl: 'https://issuer.example/issuers/t/authorize/presentation/status?request=par_1',
  }

  it('escapes what it shows, runs only its own nonce script, and sends the security headers', async () => {
    const { html, headers } = await presentationPage(data)
    expect(html).not.toContain('<script>alert(1)')
    expect(html).toContain('Issuer &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot;')
    expect(html).not.toContain('"><script>')
    const nonce = /script-src 'nonce-([^']+)'/.exec(headers['content-security-policy'] as string)?.[1]
    expect(nonce).toBeTruthy()
    const scripts = html.match(/<script[^>]*>/g) ?? []
    expect(scripts).toStrictEqual([`<script nonce="${nonce}">`])
    expect(html).toMatch(/<svg class="qr" role="img" aria-labelledby="qr-label"/)
    expect(html).toContain(`data-status="${data.statusUrl}"`)
    expect(headers).toMatchObject({
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    })
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'")
    // A fresh nonce per answer.
    const again = await presentationPage(data)
    expect(again.headers['content-security-policy']).not.toBe(headers['content-security-policy'])
  })

  it('the same-device return page carries the request id as data, escaped', () => {
    const { html } = returnPage(
      'Issuer',
      'https://issuer.example/issuers/t/authorize/presentation/return',
      '"x',
    )
    expect(html).toContain('data-request="&quot;x"')
    expect(html).toContain("get('response_code')")
  })

  it('names the class of a failed presentation, not its whole reason', () => {
    expect(failureClass('the credential issuer is not trusted: no trust anchor')).toBe(
      'the credential’s issuer is not trusted',
    )
    expect(failureClass('the credential is revoked')).toBe('the credential is revoked or suspended')
    expect(failureClass('no presented credential matches the DCQL query')).toBe(
      'the credential does not hold the claims asked for',
    )
    expect(failureClass(null)).toBe('the presentation could not be verified')
  })
})

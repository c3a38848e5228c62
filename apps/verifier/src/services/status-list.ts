import { X509Certificate } from 'node:crypto'
import { UpstreamError } from '@credential-service/core-domain'
import { type OutboundPolicy, outboundFetch } from '@credential-service/server-kit'
import type { SDJWTVCConfig } from '@sd-jwt/sd-jwt-vc'
import { compactVerify, decodeJwt, decodeProtectedHeader } from 'jose'
import { PresentationRejected } from './sd-jwt-presentation'
import { checkChain } from './trust'

export interface StatusCheck {
  anchors: X509Certificate[]
  acceptAnyIssuer: boolean
  outbound: OutboundPolicy
  now: Date
}

const STATUS_LIST_TIMEOUT_MS = 5000
const STATUS_NAMES: Record<number, string> = { 1: 'revoked (INVALID)', 2: 'suspended' }

/**
 * The Token Status List hooks of @sd-jwt/sd-jwt-vc (draft-ietf-oauth-status-list §8.3, checklist
 * V-33): the library reads the list and the credential's entry; these fetch the token under the
 * outbound policy (`outboundFetch`: checked address, https, size cap), check its `typ`, `sub`,
 * expiry and `x5c` chain, verify its signature with the chain's leaf, and reject anything but
 * VALID (0). Every failure rejects the presentation.
 */
export function statusListHooks(
  check: StatusCheck,
): Pick<SDJWTVCConfig, 'statusListFetcher' | 'statusVerifier' | 'statusValidator'> {
  return {
    statusListFetcher: async (uri: string) => {
      let response: Awaited<ReturnType<typeof outboundFetch>>
      try {
        // The URI comes from the credential, so from whoever issued it: same outbound rules as
        // tenant-configured URLs (checklist S-121), https unless OUTBOUND_ALLOW_HTTP.
        response = await outboundFetch(
          uri,
          {
            name: 'the status list',
            headers: { accept: 'application/statuslist+jwt' },
            timeoutMs: STATUS_LIST_TIMEOUT_MS,
          },
          check.outbound,
        )
      } catch (error) {
        throw new PresentationRejected(
          error instanceof UpstreamError ? error.detail : 'the status list could not be fetched',
        )
      }
      if (response.status < 200 || response.status >= 300)
        throw new PresentationRejected(`the status list could not be fetched: HTTP ${response.status}`)
      const token = response.body.toString('utf8')
      const header = decodeProtectedHeader(token)
      const payload = decodeJwt(token)
      if (header.typ !== 'statuslist+jwt')
        throw new PresentationRejected('the status list token typ is not statuslist+jwt')
      if (payload.sub !== uri) throw new PresentationRejected('the status list token is for another URI')
      if (typeof payload.exp === 'number' && payload.exp * 1000 <= check.now.getTime())
        throw new PresentationRejected('the status list token has expired')
      const chainProblem = checkChain(header.x5c, check.anchors, check.now)
      if (chainProblem && !check.acceptAnyIssuer)
        throw new PresentationRejected(`status list: ${chainProblem}`)
      return token
    },
    statusVerifier: async (data: string, signature: string) => {
      const leaf = new X509Certificate(
        Buffer.from(String((decodeProtectedHeader(`${data}.${signature}`).x5c as string[])[0]), 'base64'),
      )
      await compactVerify(`${data}.${signature}`, leaf.publicKey)
      return true
    },
    statusValidator: async (status: number) => {
      if (status !== 0)
        throw new PresentationRejected(`the credential is ${STATUS_NAMES[status] ?? `in status ${status}`}`)
    },
  }
}

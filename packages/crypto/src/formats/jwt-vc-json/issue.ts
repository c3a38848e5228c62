import { VCDM2_CONTEXT } from '@credential-service/core-domain'
import type { JWK } from 'jose'
import { type Signer, signJws } from '../../signer'

export interface IssueVcJwtOptions {
  signer: Signer
  /** The credential issuer identifier: VCDM 2.0 `issuer`, and `iss`, which VC-JOSE-COSE says must match it. */
  issuer: string
  /** VCDM 2.0 §4.4 `id` of the credential; none for credentials of holders (they would be linkable by it). */
  id?: string | undefined
  /** VCDM 2.0 §4.5 `type`, `VerifiableCredential` among them. */
  type: string[]
  /** `@context` entries after the VCDM 2.0 base context. */
  context?: string[] | undefined
  /** The claims about the subject (`credentialSubject`). */
  subject: Record<string, unknown>
  issuedAt: Date
  expiresAt: Date
  /** The holder's proof key, bound as `cnf.jwk`; undefined: a credential without holder binding. */
  holderJwk: JWK | undefined
  /** VCDM 2.0 §4.10 `credentialStatus` (a BitstringStatusListEntry), when the configuration manages status. */
  credentialStatus?: Record<string, unknown> | Record<string, unknown>[] | undefined
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)
const xsdDateTime = (date: Date) => `${date.toISOString().slice(0, 19)}Z`

/**
 * A VCDM 2.0 credential secured with JOSE (VC-JOSE-COSE §3.1.1): the JWS payload is the credential
 * itself, `typ` vc+jwt, with no `vc` claim ("The JWT Claim Names vc and vp MUST NOT be present").
 * `iat`/`exp` date the signature and `validFrom`/`validUntil` the data (both the same span here);
 * `cnf.jwk` is the holder's key (VC-JOSE-COSE §3.3.2: "Use of a proof-of-possession key ... is
 * RECOMMENDED"). Signed through the Signer port with the key chain's `x5c`.
 */
export function issueVcJwt(options: IssueVcJwtOptions): Promise<string> {
  const { signer } = options
  const credential = {
    '@context': [VCDM2_CONTEXT, ...(options.context ?? [])],
    ...(options.id ? { id: options.id } : {}),
    type: options.type,
    issuer: options.issuer,
    validFrom: xsdDateTime(options.issuedAt),
    validUntil: xsdDateTime(options.expiresAt),
    credentialSubject: options.subject,
    ...(options.credentialStatus ? { credentialStatus: options.credentialStatus } : {}),
  }
  return signJws(
    signer,
    { typ: 'vc+jwt', kid: signer.kid, ...(signer.x5c.length ? { x5c: signer.x5c } : {}) },
    {
      ...credential,
      iss: options.issuer,
      iat: seconds(options.issuedAt),
      exp: seconds(options.expiresAt),
      ...(options.holderJwk ? { cnf: { jwk: options.holderJwk } } : {}),
    },
  )
}

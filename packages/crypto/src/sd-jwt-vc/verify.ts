import { createHash } from 'node:crypto'
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '@credential-service/core-domain'
import type { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose'
import { federatedIssuerKey } from '../federated-issuer-key'
import { trustedIssuerChain } from '../issuer-chain'
import { issuerNameRefusal } from '../issuer-san'
import { PresentationRejected, type PresentationTrust, type QueryTrust } from '../presentation'
import { checkDisclosures } from './disclosures'
import { loadSdJwtLibraries } from './libraries'
import { statusListEntryOf } from './status'

/**
 * SDJwtVcInstance's `verify` without its Token Status List step: that step inflates `lst` with no
 * size cap into one JS number per entry, so a small zlib bomb exhausts the memory (checklist S-124).
 * What is left is the parent SDJwtInstance's `verify` (signature, validity, disclosures, KB-JWT);
 * the status is read by the caller's requireValidStatus, with the capped decoder, as for mdocs.
 */
function verifyWithoutStatus(vc: typeof SDJwtVcInstance): SDJwtVcInstance['verify'] {
  return Object.getPrototypeOf(vc.prototype).verify
}

export interface SdJwtCheck extends PresentationTrust, QueryTrust {
  presentation: string
  vctValues: string[]
  nonce: string
  /** What the KB-JWT `aud` may be: the client id, or `origin:<origin>` over the DC API (OpenID4VP 1.0 A.4). */
  audiences: readonly string[]
  /** Base64url transaction data strings sent with the request, if any. */
  transactionData: string[] | null
  requireHolderBinding: boolean
}

const KB_MAX_AGE_SECONDS = 300
const KB_MAX_SKEW_SECONDS = 60
/**
 * Leeway for `iat`/`nbf`/`exp` of the credential and of its status list token. `now` is read when the
 * response arrives, and the list is often signed while it is fetched after that (or on a host whose
 * clock runs a little ahead): without leeway its `iat` is "not yet valid" at a second boundary.
 * Small, since it also lets an expired credential through for that long.
 */
const CLOCK_SKEW_SECONDS = 10

/**
 * Checklist S-123: whether the JSON of any part (the JWTs' header and payload, each disclosure)
 * nests deeper than the input guard allows. Checked before the library parses and walks them.
 */
function nestsTooDeep(presentation: string): boolean {
  return presentation.split('~').some((part) =>
    part
      .split('.')
      .slice(0, 2)
      .some((segment) => exceedsJsonDepth(Buffer.from(segment, 'base64url').toString('utf8'))),
  )
}

/**
 * Verifies an SD-JWT VC presentation (OpenID4VP Appendix B.3, checklist V-28, V-32): the issuer
 * signature with the `x5c` leaf, the chain to a trust anchor, validity, `vct`, disclosures and
 * digests, and the KB-JWT (`typ` kb+jwt, signed by `cnf.jwk`, nonce, `aud` = full client id, fresh
 * `iat`, `sd_hash`, transaction data hashes). Returns the disclosed claims.
 */
/** The issuer's key through the OpenID Federation trust sources, by the (not yet verified) `iss`. */
async function sdJwtIssuerKey(
  issuerJwt: string,
  header: ReturnType<typeof decodeProtectedHeader>,
  check: SdJwtCheck,
): Promise<Awaited<ReturnType<typeof importJWK>>> {
  let iss: unknown
  try {
    iss = decodeJwt(issuerJwt).iss
  } catch {
    throw new PresentationRejected('the presentation is not an SD-JWT')
  }
  return federatedIssuerKey(iss, header, check, 'SD-JWT')
}

/** The issuer-signed JWT's `typ` values accepted (SD-JWT VC §3.2.1, and the earlier drafts' name). */
const SD_JWT_VC_TYPES = ['dc+sd-jwt', 'vc+sd-jwt']

export async function verifySdJwtPresentation(check: SdJwtCheck): Promise<Record<string, unknown>> {
  if (nestsTooDeep(check.presentation))
    throw new PresentationRejected(`the SD-JWT holds JSON nested deeper than ${MAX_JSON_DEPTH} levels`)
  const issuerJwt = check.presentation.split('~')[0] ?? ''
  let header: ReturnType<typeof decodeProtectedHeader>
  try {
    header = decodeProtectedHeader(issuerJwt)
  } catch {
    throw new PresentationRejected('the presentation is not an SD-JWT')
  }
  // SD-JWT VC §3.2.1: the issuer-signed JWT's typ is dc+sd-jwt; vc+sd-jwt is the media type of the
  // drafts before -06, which issuers in the field still sign (docs/interoperability.md).
  if (!SD_JWT_VC_TYPES.includes(String(header.typ)))
    throw new PresentationRejected(`the SD-JWT typ '${String(header.typ)}' is not dc+sd-jwt`)
  // An issuer without x5c may be trusted through OpenID Federation (its iss is its entity id).
  const federated = header.x5c === undefined && check.federatedIssuer !== undefined
  // acceptAnyIssuer skips the trust decision only: the issuer still signs with its x5c leaf.
  const leaf = federated ? undefined : (await trustedIssuerChain(header.x5c, check))[0]
  const issuerKey = leaf ? leaf.publicKey : await sdJwtIssuerKey(issuerJwt, header, check)

  let kb: { header: Record<string, unknown>; payload: Record<string, unknown> } | undefined
  const [{ digest }, { SDJwtVcInstance }] = await loadSdJwtLibraries()
  const instance = new SDJwtVcInstance({
    hasher: digest,
    verifier: async (data: string, signature: string) => {
      await compactVerify(`${data}.${signature}`, issuerKey)
      return true
    },
    kbVerifier: async (data: string, signature: string, payload: Record<string, unknown>) => {
      const cnf = (payload.cnf as { jwk?: JWK } | undefined)?.jwk
      if (!cnf) throw new PresentationRejected('the credential has no cnf.jwk for holder binding')
      const kbHeader = decodeProtectedHeader(`${data}.${signature}`)
      await compactVerify(`${data}.${signature}`, await importJWK(cnf, String(kbHeader.alg)))
      return true
    },
  })
  let result: Awaited<ReturnType<typeof instance.verify>>
  try {
    result = await verifyWithoutStatus(SDJwtVcInstance).call(instance, check.presentation, {
      currentDate: Math.floor(check.now.getTime() / 1000),
      skewSeconds: CLOCK_SKEW_SECONDS,
      ...(check.requireHolderBinding ? { keyBindingNonce: check.nonce } : {}),
    })
    kb = (result as { kb?: typeof kb }).kb
  } catch (error) {
    if (error instanceof PresentationRejected) throw error
    // The library may wrap errors of our hooks: keep their precise reason.
    const cause = (error as { details?: unknown }).details
    if (cause instanceof PresentationRejected) throw cause
    throw new PresentationRejected(`the SD-JWT did not verify: ${(error as Error).message}`)
  }
  const disclosureProblem = checkDisclosures(check.presentation)
  if (disclosureProblem) throw new PresentationRejected(disclosureProblem)
  const payload = result.payload as Record<string, unknown>
  // acceptAnyIssuer is the configuration's explicit allowance of any issuer name (S-131).
  // A federated issuer's key was found by its iss, so the name is the one its chain vouches for.
  const nameProblem = check.acceptAnyIssuer || !leaf ? undefined : await issuerNameRefusal(payload.iss, leaf)
  if (nameProblem) throw new PresentationRejected(nameProblem)
  if (!check.vctValues.includes(String(payload.vct)))
    throw new PresentationRejected(`vct '${String(payload.vct)}' was not requested`)

  if (check.requireHolderBinding) {
    if (!kb) throw new PresentationRejected('the key binding JWT is missing')
    if (kb.header.typ !== 'kb+jwt') throw new PresentationRejected('the key binding JWT typ is not kb+jwt')
    if (!check.audiences.includes(kb.payload.aud as string))
      throw new PresentationRejected(
        `the key binding JWT aud is not ${check.audiences.map((aud) => `'${aud}'`).join(' or ')}`,
      )
    const iat = Number(kb.payload.iat)
    const now = Math.floor(check.now.getTime() / 1000)
    if (!(iat >= now - KB_MAX_AGE_SECONDS && iat <= now + KB_MAX_SKEW_SECONDS))
      throw new PresentationRejected('the key binding JWT iat is not fresh')
    if (check.transactionData) {
      const expected = check.transactionData.map((entry) =>
        createHash('sha256').update(entry).digest('base64url'),
      )
      const hashes = kb.payload.transaction_data_hashes
      if (!Array.isArray(hashes) || expected.some((hash) => !hashes.includes(hash))) {
        throw new PresentationRejected(
          'transaction_data_hashes do not match the transaction data of the request',
        )
      }
    }
  }
  // TSL §8.3, checklist F-33: the status once the credential and its presentation verified.
  const entry = statusListEntryOf(payload.status)
  if (entry) await check.requireValidStatus(entry)
  const { iss, iat, exp, nbf, cnf, vct, status, _sd_alg, ...claims } = payload
  return { vct, iss, ...claims }
}

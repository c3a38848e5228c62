import { createHash, createPublicKey } from 'node:crypto'
import type { JWK } from 'jose'
import { publicPart } from '../keys'
import type { SigningAlgorithm } from '../signer'
import { type KeyProvider, KeyProviderError } from './provider'
import { tracedKeyProvider } from './traced'

export interface AwsKmsOptions {
  region?: string | undefined
  /** KMS endpoint override (a VPC endpoint, or a local implementation in tests). */
  endpoint?: string | undefined
  /** Explicit credentials; otherwise the AWS SDK's default chain (env, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined
}

const KEY_SPECS: Record<string, SigningAlgorithm> = { ECC_NIST_P256: 'ES256', ECC_NIST_P384: 'ES384' }
const SIZES: Record<string, number> = { ES256: 32, ES384: 48 }

// The ASN.1 parser is loaded with the first KMS signature; most deployments keep keys elsewhere.
let asn1: Promise<[typeof import('@peculiar/asn1-ecc'), typeof import('@peculiar/asn1-schema')]> | undefined

/** ECDSA-Sig-Value (DER, RFC 3279 §2.2.3) to the fixed-size r‖s of JOSE and COSE. */
export async function derToJoseSignature(der: Uint8Array, alg: SigningAlgorithm): Promise<Uint8Array> {
  const size = SIZES[alg]
  if (!size) throw new Error(`no DER conversion for ${alg}`)
  asn1 ??= Promise.all([import('@peculiar/asn1-ecc'), import('@peculiar/asn1-schema')])
  const [{ ECDSASigValue }, { AsnConvert }] = await asn1
  const value = AsnConvert.parse(der, ECDSASigValue)
  const fixed = (integer: ArrayBuffer) => {
    const bytes = new Uint8Array(integer)
    const trimmed = bytes.subarray(Math.max(0, bytes.length - size))
    const out = new Uint8Array(size)
    out.set(trimmed, size - trimmed.length)
    return out
  }
  const signature = new Uint8Array(size * 2)
  signature.set(fixed(value.r), 0)
  signature.set(fixed(value.s), size)
  return signature
}

/**
 * AWS KMS asymmetric keys through `@aws-sdk/client-kms`: `GetPublicKey`, and `Sign` with
 * `MessageType: DIGEST`. The SDK is loaded on first use so processes without KMS keys don't pay for it.
 */
export function createAwsKmsProvider(options: AwsKmsOptions): KeyProvider {
  let client:
    | Promise<{ send: (command: unknown) => Promise<unknown>; sdk: typeof import('@aws-sdk/client-kms') }>
    | undefined
  const kms = () => {
    client ??= import('@aws-sdk/client-kms').then((sdk) => {
      const instance = new sdk.KMSClient({
        ...(options.region ? { region: options.region } : {}),
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
        maxAttempts: 2,
      })
      return { send: (command) => instance.send(command as never), sdk }
    })
    return client
  }

  const failure = (keyId: string, cause: unknown) => {
    const name = (cause as { name?: string })?.name ?? 'Error'
    const message = (cause as { message?: string })?.message ?? ''
    // The SDK gives every failure `$metadata`, a refused connection too (with attempts, no status):
    // only an answer with an HTTP status is KMS refusing; none, a 5xx or throttling is KMS away.
    const status = (cause as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode
    const reason =
      name === 'NotFoundException'
        ? 'not_found'
        : status === undefined || status >= 500 || name === 'ThrottlingException'
          ? 'unavailable'
          : 'refused'
    return new KeyProviderError(`AWS KMS key '${keyId}': ${name}${message ? ` (${message})` : ''}`, {
      cause,
      reason,
    })
  }

  return tracedKeyProvider('aws-kms', {
    async describe(keyId) {
      const { send, sdk } = await kms()
      let result: { PublicKey?: Uint8Array; KeySpec?: string; KeyUsage?: string }
      try {
        result = (await send(new sdk.GetPublicKeyCommand({ KeyId: keyId }))) as typeof result
      } catch (cause) {
        throw failure(keyId, cause)
      }
      const alg = result.KeySpec ? KEY_SPECS[result.KeySpec] : undefined
      if (!alg || !result.PublicKey || result.KeyUsage !== 'SIGN_VERIFY') {
        throw new KeyProviderError(`AWS KMS key '${keyId}' is not an ECC_NIST_P256/P384 signing key`)
      }
      const jwk = createPublicKey({ key: Buffer.from(result.PublicKey), format: 'der', type: 'spki' }).export(
        { format: 'jwk' },
      )
      return { publicJwk: publicPart(jwk as JWK), alg }
    },

    async sign(keyId, alg, data) {
      if (alg === 'EdDSA') throw new KeyProviderError(`AWS KMS key '${keyId}': EdDSA is not supported`)
      const { send, sdk } = await kms()
      const digest = createHash(alg === 'ES256' ? 'sha256' : 'sha384')
        .update(data)
        .digest()
      let result: { Signature?: Uint8Array }
      try {
        result = (await send(
          new sdk.SignCommand({
            KeyId: keyId,
            Message: digest,
            MessageType: 'DIGEST',
            SigningAlgorithm: alg === 'ES256' ? 'ECDSA_SHA_256' : 'ECDSA_SHA_384',
          }),
        )) as typeof result
      } catch (cause) {
        throw failure(keyId, cause)
      }
      if (!result.Signature) throw new KeyProviderError(`AWS KMS key '${keyId}': no signature returned`)
      return derToJoseSignature(result.Signature, alg)
    },
  })
}

import {
  constants,
  createDecipheriv,
  createPrivateKey,
  generateKeyPair,
  type KeyObject,
  privateDecrypt,
} from 'node:crypto'

/**
 * Cloud KMS import methods (ImportJob.ImportMethod) as Google's text for `wrappedKey` describes
 * them: RSA key size, OAEP and MGF1 hash, and whether an ephemeral AES-256 key (AES-KWP) wraps
 * the key material.
 */
const METHODS: Record<string, { bits: number; hash: 'sha1' | 'sha256'; aes: boolean }> = {
  RSA_OAEP_3072_SHA1_AES_256: { bits: 3072, hash: 'sha1', aes: true },
  RSA_OAEP_4096_SHA1_AES_256: { bits: 4096, hash: 'sha1', aes: true },
  RSA_OAEP_3072_SHA256_AES_256: { bits: 3072, hash: 'sha256', aes: true },
  RSA_OAEP_4096_SHA256_AES_256: { bits: 4096, hash: 'sha256', aes: true },
  RSA_OAEP_3072_SHA256: { bits: 3072, hash: 'sha256', aes: false },
  RSA_OAEP_4096_SHA256: { bits: 4096, hash: 'sha256', aes: false },
}

/** The curve each importable signing algorithm needs (node's names). */
const CURVES: Record<string, string> = {
  EC_SIGN_P256_SHA256: 'prime256v1',
  EC_SIGN_P384_SHA384: 'secp384r1',
}

export interface FakeImportJob {
  name: string
  importMethod: string
  protectionLevel: string
  /** Its RSA wrapping key, generated asynchronously as Cloud KMS does (PENDING_GENERATION until then). */
  wrapping?: { privateKey: KeyObject; publicPem: string }
}

export const isImportMethod = (method: unknown) => typeof method === 'string' && method in METHODS

/** A new import job: its wrapping key is generated in the background. */
export function newImportJob(name: string, importMethod: string, protectionLevel: string): FakeImportJob {
  const job: FakeImportJob = { name, importMethod, protectionLevel }
  generateKeyPair(
    'rsa',
    { modulusLength: METHODS[importMethod]?.bits ?? 3072 },
    (error, publicKey, privateKey) => {
      if (!error) {
        job.wrapping = { privateKey, publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString() }
      }
    },
  )
  return job
}

/** The ImportJob resource as `GET /v1/{importJob}` answers it. */
export function importJobResource(job: FakeImportJob) {
  return {
    name: job.name,
    importMethod: job.importMethod,
    protectionLevel: job.protectionLevel,
    state: job.wrapping ? 'ACTIVE' : 'PENDING_GENERATION',
    ...(job.wrapping ? { publicKey: { pem: job.wrapping.publicPem } } : {}),
  }
}

/** Whether `wrapped` has the length its method gives (checked at the call, before the import starts). */
export function wrappedShapeOk(job: FakeImportJob, wrapped: Buffer): boolean {
  const method = METHODS[job.importMethod]
  if (!method) return false
  const rsaBytes = method.bits / 8
  if (!method.aes) return wrapped.length === rsaBytes
  const rest = wrapped.length - rsaBytes
  return rest >= 16 && rest % 8 === 0
}

/**
 * The private key of `wrapped`, unwrapped with the job's private key and checked against
 * `algorithm`; otherwise the `importFailureReason` Cloud KMS would give the IMPORT_FAILED version.
 */
export function unwrapImport(
  job: FakeImportJob,
  wrapped: Buffer,
  algorithm: string,
): { key: KeyObject } | { failure: string } {
  const method = METHODS[job.importMethod]
  if (!method || !job.wrapping) return { failure: 'The import job is not active.' }
  const rsaBytes = method.bits / 8
  let pkcs8: Buffer
  try {
    const oaep = (data: Buffer) =>
      privateDecrypt(
        {
          key: job.wrapping?.privateKey as KeyObject,
          padding: constants.RSA_PKCS1_OAEP_PADDING,
          oaepHash: method.hash,
        },
        data,
      )
    if (method.aes) {
      const aesKey = oaep(wrapped.subarray(0, rsaBytes))
      if (aesKey.length !== 32) return { failure: 'The ephemeral key is not an AES-256 key.' }
      const kwp = createDecipheriv('id-aes256-wrap-pad', aesKey, Buffer.from('a65959a6', 'hex'))
      pkcs8 = Buffer.concat([kwp.update(wrapped.subarray(rsaBytes)), kwp.final()])
    } else {
      pkcs8 = oaep(wrapped)
    }
  } catch {
    return { failure: 'The wrapped key material could not be unwrapped with the import job key.' }
  }
  let key: KeyObject
  try {
    key = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' })
  } catch {
    return { failure: 'The key material is not a PKCS#8 PrivateKeyInfo.' }
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== CURVES[algorithm]) {
    return { failure: `The key material does not match the algorithm ${algorithm}.` }
  }
  return { key }
}

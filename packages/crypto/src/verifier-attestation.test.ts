import { generateKeyPairSync } from 'node:crypto'
import { base64url, importJWK, type JWK, SignJWT } from 'jose'
import { describe, expect, it } from 'vitest'
import { verifierAttestationIssues } from './verifier-attestation'

const SUB = 'https://verifier.test.example/verifiers/t1'
const now = new Date()
const pair = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  return {
    privateJwk: privateKey.export({ format: 'jwk' }) as JWK,
    publicJwk: publicKey.export({ format: 'jwk' }) as JWK,
  }
}
const requestKey = pair()
const issuer = pair()
const sign = async (cnf: JWK) =>
  new SignJWT({ cnf: { jwk: cnf } })
    .setProtectedHeader({ alg: 'ES256', typ: 'verifier-attestation+jwt' })
    .setIssuer('https://attester.test.example')
    .setSubject(SUB)
    .setExpirationTime('1h')
    .sign(await importJWK(issuer.privateJwk, 'ES256'))
const expected = { sub: SUB, publicJwk: requestKey.publicJwk, now }

describe('verifierAttestationIssues (OpenID4VP 1.0 §12, checklist V-08)', () => {
  it('OpenID4VP 1.0 §12: a well-formed attestation for the key has no issues', async () => {
    expect(await verifierAttestationIssues(await sign(requestKey.publicJwk), expected)).toStrictEqual([])
  })

  it('S-06: a cnf.jwk that holds the private key is refused', async () => {
    expect(await verifierAttestationIssues(await sign(requestKey.privateJwk), expected)).toStrictEqual([
      'cnf.jwk holds a private key',
    ])
  })

  it('S-01: an unsigned (alg none) attestation is refused', async () => {
    const [, payload] = (await sign(requestKey.publicJwk)).split('.')
    const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'verifier-attestation+jwt' }))
    expect(await verifierAttestationIssues(`${header}.${payload}.`, expected)).toStrictEqual([
      'the attestation must be signed (alg none)',
    ])
  })

  it('S-12: what is not a JWT is refused, and a missing one is named', async () => {
    expect(await verifierAttestationIssues('a.b.c', expected)).toStrictEqual(['not a decodable JWT'])
    expect(await verifierAttestationIssues(undefined, expected)).toStrictEqual([
      'clientIdPrefix verifier_attestation needs a verifierAttestation',
    ])
  })
})

import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import type { LocalFederation } from './local-federation'
import { kbSigner } from './wallet'

export const FEDERATION_VCT = 'urn:example:age:1'
type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>

/** A credential issuer as a federation leaf entity, built with jose (never the service's code). */
export interface IssuerEntity {
  id: string
  federationKey: KeyPair
  federationJwk: JWK
  credentialKey: KeyPair
  credentialJwk: JWK
  trustMarks: { trust_mark_type: string; trust_mark: string }[]
}

export const publicJwk = async (pair: KeyPair, kid: string): Promise<JWK> => ({
  ...(await exportJWK(pair.publicKey)),
  kid,
  alg: 'ES256',
})

/**
 * Credential issuers under the local federation's intermediate, each serving its entity
 * configuration (§9) over HTTP on loopback, with `openid_credential_issuer` metadata whose `jwks`
 * names the key its SD-JWT VCs are signed with (no x5c).
 */
export async function startIssuerEntities(federation: LocalFederation) {
  const entities = new Map<string, IssuerEntity>()
  const entityConfiguration = (entity: IssuerEntity) =>
    new SignJWT({
      jwks: { keys: [entity.federationJwk] },
      authority_hints: [federation.intermediateId],
      metadata: {
        openid_credential_issuer: { credential_issuer: entity.id, jwks: { keys: [entity.credentialJwk] } },
        federation_entity: { organization_name: 'Test issuer' },
      },
      ...(entity.trustMarks.length ? { trust_marks: entity.trustMarks } : {}),
    })
      .setProtectedHeader({
        alg: 'ES256',
        kid: entity.federationJwk.kid as string,
        typ: 'entity-statement+jwt',
      })
      .setIssuer(entity.id)
      .setSubject(entity.id)
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(entity.federationKey.privateKey)
  const server: Server = createServer((req, res) => {
    const name = /^\/([^/]+)\/\.well-known\/openid-federation$/.exec(req.url ?? '')?.[1]
    const entity = name ? entities.get(name) : undefined
    if (!entity) return void res.writeHead(404).end()
    entityConfiguration(entity).then((jwt) =>
      res.writeHead(200, { 'content-type': 'application/entity-statement+jwt' }).end(jwt),
    )
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  return {
    entities,
    /** A leaf issuer entity; `enrol` gives the intermediate's statement (its claims, or the key it lists). */
    async issuer(
      name: string,
      enrol: { claims?: Record<string, unknown>; listedKey?: JWK } = {},
      marks: string[] = [],
    ): Promise<IssuerEntity> {
      const federationKey = await generateKeyPair('ES256')
      const credentialKey = await generateKeyPair('ES256')
      const id = `${base}/${name}`
      const entity: IssuerEntity = {
        id,
        federationKey,
        federationJwk: await publicJwk(federationKey, `${name}-federation`),
        credentialKey,
        credentialJwk: await publicJwk(credentialKey, `${name}-credentials`),
        trustMarks: await Promise.all(
          marks.map(async (type) => ({
            trust_mark_type: type,
            trust_mark: await federation.trustMark(id, type),
          })),
        ),
      }
      entities.set(name, entity)
      federation.enrol(id, { keys: [enrol.listedKey ?? entity.federationJwk] }, enrol.claims ?? {})
      return entity
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  }
}

/** An SD-JWT VC of `entity` without x5c (its key named by kid), presented with a KB-JWT for `request`. */
export async function federatedPresentation(
  entity: IssuerEntity,
  request: { nonce: string; client_id: string },
): Promise<string> {
  const holder = await generateKeyPair('ES256')
  const now = Math.floor(Date.now() / 1000)
  const credential = await new SDJwtVcInstance({
    hasher: digest,
    saltGenerator: generateSalt,
    signer: kbSigner(entity.credentialKey.privateKey),
    signAlg: 'ES256',
  }).issue(
    {
      iss: entity.id,
      vct: FEDERATION_VCT,
      iat: now,
      exp: now + 3600,
      cnf: { jwk: await exportJWK(holder.publicKey) },
      age_over_18: true,
    },
    { _sd: ['age_over_18'] },
    { header: { typ: 'dc+sd-jwt', kid: entity.credentialJwk.kid } },
  )
  return new SDJwtVcInstance({
    hasher: digest,
    saltGenerator: generateSalt,
    kbSigner: kbSigner(holder.privateKey),
    kbSignAlg: 'ES256',
  }).present(
    credential,
    { age_over_18: true },
    { kb: { payload: { iat: now, nonce: request.nonce, aud: request.client_id } } },
  )
}

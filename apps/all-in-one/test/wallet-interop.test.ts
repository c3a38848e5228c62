import { createHash, randomBytes } from 'node:crypto'
import { createMdocContext } from '@credential-service/crypto'
import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { clientAuthenticationNone, setGlobalConfig } from '@openid4vc/oauth2'
import { Openid4vciClient } from '@openid4vc/openid4vci'
import { CoseKey, Holder, IssuerSigned } from '@owf/mdoc'
import { digest } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import type { FastifyInstance } from 'fastify'
import {
  compactVerify,
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  type JSONWebKeySet,
  type JWK,
  SignJWT,
} from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from './free-port'
import { startAllInOneWorld } from './harness'

const mdocContext = createMdocContext(CoseKey)

// The wallet side is someone else's reading of OpenID4VCI 1.0: oid4vc-ts over real HTTP.
setGlobalConfig({ allowInsecureUrls: true })

/** A wallet of oid4vc-ts holding one ES256 key. */
function walletFor(privateKey: Parameters<SignJWT['sign']>[0], publicJwk: JWK) {
  return new Openid4vciClient({
    callbacks: {
      clientAuthentication: clientAuthenticationNone({ clientId: 'interop-wallet' }),
      hash: (data, alg) => new Uint8Array(createHash(alg.replace('-', '')).update(data).digest()),
      generateRandom: (length) => new Uint8Array(randomBytes(length)),
      signJwt: async (_signer, { header, payload }) => ({
        jwt: await new SignJWT(payload).setProtectedHeader(header as never).sign(privateKey),
        signerJwk: publicJwk as never,
      }),
    },
  })
}

describe('OpenID4VCI 1.0 with an independent wallet (@openid4vc/openid4vci)', () => {
  let app: FastifyInstance
  let baseUrl: string
  let admin: Record<string, string>
  let tenant: string

  beforeAll(async () => {
    const port = await freePort()
    baseUrl = `http://127.0.0.1:${port}`
    // The `wallet-interop` world (test/worlds/wallet-interop): tenant a issues `pid` and `mdl`.
    const started = await startAllInOneWorld(
      testDatabases().at(-1) as TestDatabase,
      'wallet-interop',
      baseUrl,
    )
    app = started.app
    await app.listen({ host: '127.0.0.1', port })
    tenant = started.tenants.a.id
    admin = started.tenants.a.auth
  })
  afterAll(() => app.close())

  /** Creates an offer through /api and lets the oid4vc-ts wallet walk the whole flow. */
  async function walletFlow(offerBody: Record<string, unknown>, configurationId: string) {
    // biome-ignore lint/suspicious/noExplicitAny: test reads loosely typed JSON answers
    const created: any = await (
      await fetch(`${baseUrl}/api/offers`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...admin },
        body: JSON.stringify(offerBody),
      })
    ).json()
    const holder = await generateKeyPair('ES256')
    const publicJwk = await exportJWK(holder.publicKey)
    const wallet = walletFor(holder.privateKey, publicJwk)
    const offer = await wallet.resolveCredentialOffer(created.offerUri)
    expect(offer.credential_configuration_ids).toStrictEqual([configurationId])
    const issuerMetadata = await wallet.resolveIssuerMetadata(offer.credential_issuer)
    const { accessTokenResponse } = await wallet.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer: offer,
      issuerMetadata,
      ...(created.txCode ? { txCode: created.txCode } : {}),
    })
    const { c_nonce } = await wallet.requestNonce({ issuerMetadata })
    const { jwt } = await wallet.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: configurationId,
      nonce: c_nonce,
      signer: { method: 'jwk', alg: 'ES256', publicJwk: publicJwk as never },
    })
    const result = await wallet.retrieveCredentials({
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      credentialConfigurationId: configurationId,
      proofs: { jwt: [jwt] },
    })
    const credential = (result.credentialResponse.credentials as { credential: string }[])[0]
      ?.credential as string
    return {
      credential,
      publicJwk,
      wallet,
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      notificationId: result.credentialResponse.notification_id as string,
    }
  }

  it('I-74 / OID4VCI 1.0 §12.2.4, §11: the wallet finds notification_endpoint in the metadata and its notification is accepted', async () => {
    const flow = await walletFlow(
      {
        credentialConfigurationIds: ['pid'],
        claims: { pid: { given_name: 'Erika', family_name: 'Mustermann' } },
      },
      'pid',
    )
    expect(flow.issuerMetadata.credentialIssuer.notification_endpoint).toBe(
      `${baseUrl}/issuers/${tenant}/notification`,
    )
    // oid4vc-ts refuses to notify an issuer whose metadata has no notification_endpoint.
    const sent = await flow.wallet.sendNotification({
      issuerMetadata: flow.issuerMetadata,
      accessToken: flow.accessToken,
      notification: { notificationId: flow.notificationId, event: 'credential_accepted' },
    })
    expect(sent.response.status).toBe(204)
  })

  it('issues an mso_mdoc to the same wallet; @owf/mdoc verifies it', async () => {
    const { credential: encoded } = await walletFlow(
      {
        credentialConfigurationIds: ['mdl'],
        claims: { mdl: { 'org.iso.18013.5.1': { family_name: 'Mustermann' } } },
      },
      'mdl',
    )
    const failed: unknown[] = []
    await Holder.verifyIssuerSigned(
      {
        issuerSigned: encoded,
        disableCertificateChainValidation: true,
        verificationCallback: (item) => item.status === 'FAILED' && failed.push(item),
      },
      mdocContext,
    )
    expect(failed).toStrictEqual([])
    expect(IssuerSigned.fromEncodedForOid4Vci(encoded).getPrettyClaims('org.iso.18013.5.1')).toMatchObject({
      family_name: 'Mustermann',
    })
  })

  it('resolves the offer, metadata, token (tx_code), nonce and credential; the SD-JWT VC verifies', async () => {
    const { credential, publicJwk } = await walletFlow(
      {
        credentialConfigurationIds: ['pid'],
        txCode: { length: 6 },
        claims: { pid: { given_name: 'Erika', family_name: 'Mustermann' } },
      },
      'pid',
    )
    const jwks = createLocalJWKSet(
      (await (await fetch(`${baseUrl}/issuers/${tenant}/jwks`)).json()) as JSONWebKeySet,
    )
    const verifier = new SDJwtVcInstance({
      hasher: digest,
      verifier: async (data: string, signature: string) => {
        await compactVerify(`${data}.${signature}`, jwks)
        return true
      },
    })
    const { payload } = await verifier.verify(credential)
    expect(payload).toMatchObject({
      iss: `${baseUrl}/issuers/${tenant}`,
      vct: 'urn:eudi:pid:1',
      given_name: 'Erika',
      cnf: { jwk: { x: publicJwk.x, y: publicJwk.y } },
    })
  })
})

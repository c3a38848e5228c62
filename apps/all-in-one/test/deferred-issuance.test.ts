import { msoStatusEntry } from '@credential-service/crypto'
import { testDatabases } from '@credential-service/db-schema/testing'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { Openid4vciRetrieveCredentialsError } from '@openid4vc/openid4vci'
import { IssuerSigned } from '@owf/mdoc'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startReceiver, webhookEvent } from './harness'
import { type IssuerFixture, interopWallet, type Loose, startIssuerFixture } from './issuer-fixture'

// oid4vc-ts talks to the loopback service over plain http.
setGlobalConfig({ allowInsecureUrls: true })

const NS = 'org.iso.18013.5.1'

/** Waits out the polling interval the issuer last gave (1 s unless said otherwise), and a little more. */
const afterInterval = (seconds = 1) => new Promise((resolve) => setTimeout(resolve, seconds * 1000 + 150))

describe.each(testDatabases())('OpenID4VCI 1.0 §9 deferred issuance on $name', (testDatabase) => {
  let f: IssuerFixture

  beforeAll(async () => {
    f = await startIssuerFixture(testDatabase)
  })
  afterAll(() => f.close())

  const deferredRequest = (accessToken: string, body: unknown, headers: Record<string, string> = {}) =>
    f.post(`/issuers/${f.tenant}/deferred-credential`, body, {
      authorization: `Bearer ${accessToken}`,
      ...headers,
    })
  const credentialRequest = (accessToken: string, body: unknown) =>
    f.post(`/issuers/${f.tenant}/credential`, body, { authorization: `Bearer ${accessToken}` })
  const session = async (id: string): Promise<Loose> =>
    (await fetch(`${f.baseUrl}/api/sessions/${id}`, { headers: f.admin })).json()

  /** A credential request that the provider answers "pending" (interval 1 s): its transaction. */
  async function pendingTransaction(proofs = 1, configurationId = 'deferred-pid') {
    f.provider.answer('pending')
    const { accessToken, sessionId, refreshToken } = await f.redeem(configurationId)
    const nonce = await f.nonce()
    const jwts = await Promise.all(Array.from({ length: proofs }, () => f.proof(nonce)))
    const response = await credentialRequest(accessToken, {
      credential_configuration_id: configurationId,
      proofs: { jwt: jwts },
    })
    expect(response.status).toBe(202)
    const body: Loose = await response.json()
    return { accessToken, refreshToken, sessionId, transactionId: body.transaction_id as string, body, jwts }
  }
  /** Status list entries handed out in the tenant so far. */
  const allocated = async (): Promise<number> => {
    const page: Loose = await (
      await fetch(`${f.baseUrl}/api/status-lists?limit=100`, { headers: f.admin })
    ).json()
    return page.items.reduce((sum: number, list: Loose) => sum + list.allocated, 0)
  }
  const poll = async (accessToken: string, transactionId: string) => {
    const response = await deferredRequest(accessToken, { transaction_id: transactionId })
    return { status: response.status, body: (await response.json()) as Loose }
  }
  /** A credential configuration of the test tenant whose claims come from the provider. */
  async function deferredConfig(id: string, extra: Record<string, unknown>) {
    const created = await f.post(
      '/api/credentials',
      {
        id,
        config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
        keyChainId: 'keys',
        attributeProviderId: 'hr',
        fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
        ...extra,
      },
      f.admin,
    )
    expect(created.status, await created.clone().text()).toBe(201)
  }

  it('I-73 / I-67 / OID4VCI §9: an oid4vc-ts wallet gets 202 {transaction_id, interval}, polls while pending, then gets the batch; the id is then used up', async () => {
    f.provider.answer('pending', 'pending', { given_name: 'Max', family_name: 'Deferred' })
    const { client: wallet, publicJwk } = await interopWallet()
    const offer: Loose = await (
      await f.post('/api/offers', { credentialConfigurationIds: ['deferred-pid'] }, f.admin)
    ).json()
    const credentialOffer = await wallet.resolveCredentialOffer(offer.offerUri)
    const issuerMetadata = await wallet.resolveIssuerMetadata(credentialOffer.credential_issuer)
    expect(issuerMetadata.credentialIssuer.deferred_credential_endpoint).toBe(
      `${f.issuer}/deferred-credential`,
    )
    const { accessTokenResponse } = await wallet.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
    })
    const accessToken = accessTokenResponse.access_token
    const { c_nonce } = await wallet.requestNonce({ issuerMetadata })
    const { jwt } = await wallet.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: 'deferred-pid',
      nonce: c_nonce,
      signer: { method: 'jwk', alg: 'ES256', publicJwk: publicJwk as never },
    })
    const first = await wallet.retrieveCredentials({
      issuerMetadata,
      accessToken,
      credentialConfigurationId: 'deferred-pid',
      proofs: { jwt: [jwt] },
    })
    expect(first.response.status).toBe(202)
    // Never credentials and a transaction together (the wallet library checks this too).
    expect(first.credentialResponse).toStrictEqual({ transaction_id: expect.any(String), interval: 1 })
    const transactionId = first.credentialResponse.transaction_id as string
    // While pending, the session stays token_issued; nothing was issued yet.
    expect(await session(offer.sessionId)).toMatchObject({ status: 'token_issued' })

    await afterInterval()
    const pending = await wallet.retrieveDeferredCredentials({ issuerMetadata, accessToken, transactionId })
    expect(pending.response.status).toBe(202)
    expect(pending.deferredCredentialResponse).toStrictEqual({ transaction_id: transactionId, interval: 1 })

    // oid4vc-ts 0.4.6 refuses a deferred response holding credentials and notification_id (its
    // check is inverted: "notification_id MUST NOT be defined when credentials is not defined"
    // fires when credentials is defined), although §9.2 allows notification_id. The raw answer is
    // read from its error (or from its result, once the library is fixed).
    await afterInterval()
    const outcome = await wallet
      .retrieveDeferredCredentials({ issuerMetadata, accessToken, transactionId })
      .catch((error: unknown) => {
        if (error instanceof Openid4vciRetrieveCredentialsError) return error.response
        throw error
      })
    const delivered = { response: outcome.response }
    expect(delivered.response.status).toBe(200)
    expect(delivered.response.headers.get('cache-control')).toBe('no-store')
    const body: Loose = await delivered.response.json()
    expect(body).toStrictEqual({
      credentials: [{ credential: expect.any(String) }],
      notification_id: expect.stringMatching(/^ntf_/),
    })
    const payload: Loose = decodeJwt((body.credentials[0].credential as string).split('~')[0] as string)
    // Bound to the key of the proof verified at the first request, with a status list entry.
    expect(payload).toMatchObject({
      iss: f.issuer,
      vct: 'urn:example:deferred',
      cnf: { jwk: { x: publicJwk.x, y: publicJwk.y } },
      status: { status_list: { idx: expect.any(Number), uri: expect.any(String) } },
    })
    // The provider was asked three times for the same session and configuration.
    expect(f.provider.calls.slice(-3)).toStrictEqual(
      Array(3).fill({
        tenantId: f.tenant,
        sessionId: offer.sessionId,
        credentialConfigurationId: 'deferred-pid',
      }),
    )
    expect(await session(offer.sessionId)).toMatchObject({ status: 'completed' })

    // S-39: the id is invalidated after delivery.
    const again = await deferredRequest(accessToken, { transaction_id: transactionId })
    expect(again.status).toBe(400)
    expect(await again.json()).toStrictEqual({
      error: 'invalid_transaction_id',
      error_description: expect.any(String),
    })
    // §11: the notification id of a deferred delivery is accepted.
    const notified = await wallet.sendNotification({
      issuerMetadata,
      accessToken,
      notification: { notificationId: body.notification_id, event: 'credential_accepted' },
    })
    expect(notified.response.status).toBe(204)
  })

  it('I-49 / OID4VCI §6.2, §9: with refreshTokens, a pre-authorized wallet refreshes its access token and the new one collects the deferred credential', async () => {
    await deferredConfig('deferred-refresh', { refreshTokens: true })
    const { refreshToken, sessionId, transactionId } = await pendingTransaction(1, 'deferred-refresh')
    expect(refreshToken).toEqual(expect.any(String))
    const refreshed = await fetch(`${f.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken as string }),
    })
    expect(refreshed.status).toBe(200)
    const tokens: Loose = await refreshed.json()
    expect(decodeJwt(tokens.access_token).sub).toBe(sessionId)
    f.provider.answer({ given_name: 'Max' })
    await afterInterval()
    const delivered = await deferredRequest(tokens.access_token, { transaction_id: transactionId })
    expect(delivered.status, await delivered.clone().text()).toBe(200)
    expect(((await delivered.json()) as Loose).credentials).toHaveLength(1)
    expect(await session(sessionId)).toMatchObject({ status: 'completed' })
  })

  it('I-67 / OID4VCI §8.3: a deferred batch delivers one credential per proof key', async () => {
    const { accessToken, transactionId, jwts } = await pendingTransaction(2)
    f.provider.answer({ given_name: 'Batch' })
    await afterInterval()
    const delivered = await deferredRequest(accessToken, { transaction_id: transactionId })
    expect(delivered.status).toBe(200)
    const body: Loose = await delivered.json()
    const holderXs = jwts.map(
      (jwt) => (JSON.parse(Buffer.from(jwt.split('.')[0] as string, 'base64url').toString()) as Loose).jwk.x,
    )
    const boundXs = body.credentials.map(
      (c: Loose) => (decodeJwt((c.credential as string).split('~')[0] as string) as Loose).cnf.jwk.x,
    )
    expect(boundXs).toStrictEqual(holderXs)
    const indexes = body.credentials.map(
      (c: Loose) =>
        (decodeJwt((c.credential as string).split('~')[0] as string) as Loose).status.status_list.idx,
    )
    expect(new Set(indexes).size).toBe(2)
  })

  it('S-39 / OID4VCI §9.3: an unknown transaction_id, one of another session or one longer than any handed out is invalid_transaction_id; a missing one is invalid_credential_request', async () => {
    const mine = await pendingTransaction()
    const other = await f.redeem('deferred-pid')
    const foreign = await deferredRequest(other.accessToken, { transaction_id: mine.transactionId })
    expect(foreign.status).toBe(400)
    expect(((await foreign.json()) as Loose).error).toBe('invalid_transaction_id')
    const unknown = await deferredRequest(mine.accessToken, { transaction_id: 'not-a-transaction' })
    expect(((await unknown.json()) as Loose).error).toBe('invalid_transaction_id')
    const long = await deferredRequest(mine.accessToken, { transaction_id: 'x'.repeat(201) })
    expect(long.status).toBe(400)
    expect(((await long.json()) as Loose).error).toBe('invalid_transaction_id')
    const missing = await deferredRequest(mine.accessToken, {})
    expect(await missing.json()).toStrictEqual({
      error: 'invalid_credential_request',
      error_description: 'transaction_id is required',
    })
    // The foreign attempt did not spend the transaction: its own session still polls it.
    f.provider.answer('pending')
    await afterInterval()
    const own = await deferredRequest(mine.accessToken, { transaction_id: mine.transactionId })
    expect(own.status).toBe(202)
    expect(await own.json()).toStrictEqual({ transaction_id: mine.transactionId, interval: 1 })
  })

  it('I-73 / OID4VCI §9.3: a provider failure while deferred is credential_request_denied and fails the session', async () => {
    const { accessToken, sessionId, transactionId } = await pendingTransaction()
    f.provider.answer(500)
    await afterInterval()
    const denied = await deferredRequest(accessToken, { transaction_id: transactionId })
    expect(denied.status).toBe(400)
    expect(await denied.json()).toStrictEqual({
      error: 'credential_request_denied',
      error_description: "attribute provider 'hr' answered HTTP 500",
    })
    expect(await session(sessionId)).toMatchObject({
      status: 'failed',
      failureReason: "attribute provider 'hr' answered HTTP 500",
    })
    const after = await deferredRequest(accessToken, { transaction_id: transactionId })
    expect(((await after.json()) as Loose).error).toBe('credential_request_denied')
  })

  it('I-73: claims that fail the derived schema at the deferred request are credential_request_denied, never a credential', async () => {
    const { accessToken, transactionId } = await pendingTransaction()
    f.provider.answer({ given_name: 42 })
    await afterInterval()
    const denied = await deferredRequest(accessToken, { transaction_id: transactionId })
    const body: Loose = await denied.json()
    expect(body).toMatchObject({ error: 'credential_request_denied' })
    expect(body.credentials).toBeUndefined()
  })

  it('I-73 / S-39: two concurrent polls of one transaction: one leases it, asks the provider once and delivers; the other gets 202 with the same id; no status list entry is left over', async () => {
    const { accessToken, transactionId } = await pendingTransaction()
    const entries = await allocated()
    f.provider.answer({ given_name: 'Once' })
    // The provider takes its time, so that the second poll arrives while the first one asks.
    f.provider.delay(500)
    await afterInterval()
    const calls = f.provider.calls.length
    let answers: Awaited<ReturnType<typeof poll>>[]
    try {
      answers = await Promise.all([1, 2].map(() => poll(accessToken, transactionId)))
    } finally {
      f.provider.delay(0)
    }
    expect(answers.map((a) => a.status).sort()).toStrictEqual([200, 202])
    expect(answers.find((a) => a.status === 202)?.body).toStrictEqual({
      transaction_id: transactionId,
      interval: 1,
    })
    // Only the poll that held the lease asked the provider, and only its credential got an entry.
    expect(f.provider.calls.length - calls).toBe(1)
    expect((await allocated()) - entries).toBe(1)
    // Delivered: the transaction is over.
    expect((await poll(accessToken, transactionId)).body.error).toBe('invalid_transaction_id')
    expect(f.provider.calls.length - calls).toBe(1)
  })

  it('I-73 / OID4VCI §9.2: a poll before the interval is 202 with the same id and interval, without asking the provider; the interval it suggests last counts', async () => {
    const { accessToken, transactionId } = await pendingTransaction()
    const calls = f.provider.calls.length
    expect(await poll(accessToken, transactionId)).toStrictEqual({
      status: 202,
      body: { transaction_id: transactionId, interval: 1 },
    })
    expect(f.provider.calls.length).toBe(calls)

    f.provider.answer('pending:2')
    await afterInterval()
    expect(await poll(accessToken, transactionId)).toStrictEqual({
      status: 202,
      body: { transaction_id: transactionId, interval: 2 },
    })
    expect(f.provider.calls.length).toBe(calls + 1)
    // A second later the two seconds it asked for have not passed.
    await afterInterval()
    expect((await poll(accessToken, transactionId)).body).toStrictEqual({
      transaction_id: transactionId,
      interval: 2,
    })
    expect(f.provider.calls.length).toBe(calls + 1)
    f.provider.answer({ given_name: 'Patient' })
    await afterInterval()
    expect((await poll(accessToken, transactionId)).status).toBe(200)
    expect(f.provider.calls.length).toBe(calls + 2)
  })

  it('I-73 / OID4VCI §9.3: a configuration changed after the deferral so that the transaction cannot be delivered is credential_request_denied; the transaction ends', async () => {
    const id = `deferred-change-${crypto.randomUUID().slice(0, 8)}`
    await deferredConfig(id, { batchSize: 2 })
    const { accessToken, transactionId } = await pendingTransaction(2, id)
    const replaced = await fetch(`${f.baseUrl}/api/credentials/${id}`, {
      method: 'PUT',
      headers: { ...f.admin, 'content-type': 'application/json' },
      body: JSON.stringify({
        id,
        config: { format: 'dc+sd-jwt', vct: `urn:example:${id}` },
        keyChainId: 'keys',
        attributeProviderId: 'hr',
        fields: [{ path: ['given_name'], type: 'string', mandatory: true }],
        batchSize: 1,
      }),
    })
    expect(replaced.status, await replaced.clone().text()).toBe(200)
    f.provider.answer({ given_name: 'Two' })
    const calls = f.provider.calls.length
    await afterInterval()
    expect(await poll(accessToken, transactionId)).toStrictEqual({
      status: 400,
      body: {
        error: 'credential_request_denied',
        error_description: `'${id}' now issues batches of at most 1`,
      },
    })
    expect((await poll(accessToken, transactionId)).body.error).toBe('invalid_transaction_id')
    expect(f.provider.calls.length).toBe(calls)
  })

  it('S-102, S-103: tenant A’s access token at tenant B’s deferred endpoint is invalid_token; A’s transaction_id with B’s token is invalid_transaction_id', async () => {
    const mine = await pendingTransaction()
    const other = `deferred-b-${crypto.randomUUID().slice(0, 8)}`
    expect((await f.post('/api/tenants', { id: other, name: other }, f.root)).status).toBe(201)
    const client: Loose = await (
      await f.post(
        `/api/tenants/${other}/clients`,
        { roles: ['key:manage', 'issuance:config', 'issuance:offer'] },
        f.root,
      )
    ).json()
    const admin = {
      authorization: `Bearer ${
        (
          (await (
            await f.post('/api/oauth2/token', {
              grant_type: 'client_credentials',
              client_id: client.clientId,
              client_secret: client.clientSecret,
            })
          ).json()) as Loose
        ).access_token
      }`,
    }
    expect((await f.post('/api/key-chains', { source: 'generate', id: 'keys' }, admin)).status).toBe(201)
    const pid = {
      id: 'pid',
      config: { format: 'dc+sd-jwt', vct: 'urn:example:b' },
      keyChainId: 'keys',
      fields: [{ path: ['given_name'], type: 'string' }],
    }
    expect((await f.post('/api/credentials', pid, admin)).status).toBe(201)
    const offer: Loose = await (
      await f.post(
        '/api/offers',
        { credentialConfigurationIds: ['pid'], claims: { pid: { given_name: 'B' } } },
        admin,
      )
    ).json()
    const code =
      offer.credentialOffer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code'][
        'pre-authorized_code'
      ]
    const token: Loose = await (
      await fetch(`${f.baseUrl}/issuers/${other}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
          'pre-authorized_code': code,
        }).toString(),
      })
    ).json()
    const atB = (accessToken: string) =>
      f.post(
        `/issuers/${other}/deferred-credential`,
        { transaction_id: mine.transactionId },
        { authorization: `Bearer ${accessToken}` },
      )

    const foreignToken = await atB(mine.accessToken)
    expect(foreignToken.status).toBe(401)
    expect(((await foreignToken.json()) as Loose).error).toBe('invalid_token')
    const foreignId = await atB(token.access_token)
    expect(foreignId.status).toBe(400)
    expect(((await foreignId.json()) as Loose).error).toBe('invalid_transaction_id')
    // Neither attempt touched the transaction at A.
    expect((await poll(mine.accessToken, mine.transactionId)).body).toStrictEqual({
      transaction_id: mine.transactionId,
      interval: 1,
    })
  })

  it('I-73 / ISO 18013-5: a deferred mso_mdoc is delivered bound to the proof key, with its MSO status entry', async () => {
    const id = `deferred-mdl-${crypto.randomUUID().slice(0, 8)}`
    await deferredConfig(id, {
      config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
      statusManagement: true,
      fields: [{ path: ['family_name'], type: 'string', namespace: NS, mandatory: true }],
    })
    const { accessToken, transactionId, jwts } = await pendingTransaction(1, id)
    f.provider.answer({ [NS]: { family_name: 'Deferred' } })
    await afterInterval()
    const delivered = await poll(accessToken, transactionId)
    expect(delivered.status, JSON.stringify(delivered.body)).toBe(200)
    const issuerSigned = IssuerSigned.fromEncodedForOid4Vci(delivered.body.credentials[0].credential)
    const mso = issuerSigned.issuerAuth.mobileSecurityObject
    expect(mso.docType).toBe('org.iso.18013.5.1.mDL')
    expect(issuerSigned.getPrettyClaims(NS)).toMatchObject({ family_name: 'Deferred' })
    const proofKey = (
      JSON.parse(Buffer.from(jwts[0]?.split('.')[0] as string, 'base64url').toString()) as Loose
    ).jwk
    expect(mso.deviceKeyInfo.deviceKey.jwk).toMatchObject({ x: proofKey.x, y: proofKey.y })
    expect(await msoStatusEntry(issuerSigned.issuerAuth.payload as Uint8Array)).toStrictEqual({
      idx: expect.any(Number),
      uri: expect.stringMatching(new RegExp(`^${f.issuer}/status-lists/stl_`)),
    })
  })

  it('I-73: the deferred endpoint needs the access token; without one it is 401 invalid_token', async () => {
    const { transactionId } = await pendingTransaction()
    const response = await f.post(`/issuers/${f.tenant}/deferred-credential`, {
      transaction_id: transactionId,
    })
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toBe('Bearer')
  })

  it('issue 42 item 1: issuance.deferred when the wallet is told to wait, then credential.issued (deferred: true) when a poll delivers; no claim values', async () => {
    const receiver = await startReceiver()
    try {
      const endpoint = await f.post(
        '/api/webhook-endpoints',
        { id: 'deferred-events', url: `${receiver.url}/in` },
        f.admin,
      )
      expect(endpoint.status, await endpoint.clone().text()).toBe(201)
      await deferredConfig('deferred-hooked', { webhookEndpointId: 'deferred-events' })
      const { accessToken, sessionId, transactionId } = await pendingTransaction(1, 'deferred-hooked')
      f.provider.answer({ given_name: 'Deferred-Claim-Value' })
      await afterInterval()
      expect((await poll(accessToken, transactionId)).status).toBe(200)
      for (let waited = 0; waited < 10_000 && receiver.received.length < 2; waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100))
      const events = receiver.received.map((call) => webhookEvent(call))
      const deferredEvent = events.find((e) => e.type === 'issuance.deferred')
      expect(deferredEvent).toStrictEqual({
        type: 'issuance.deferred',
        tenantId: f.tenant,
        sessionId,
        credentialConfigurationId: 'deferred-hooked',
        interval: 1,
        at: expect.any(String),
        deliveryId: expect.stringMatching(/^whd_/),
      })
      expect(events.find((e) => e.type === 'credential.issued')).toMatchObject({ sessionId, deferred: true })
      expect(events).toHaveLength(2)
      for (const call of receiver.received) expect(call.body).not.toContain('Deferred-Claim-Value')
    } finally {
      receiver.close()
    }
  })
})

/**
 * The bench's complete flows over real HTTP, as a wallet and an integrator drive them: a tenant set
 * up through the management API, then issuance (SD-JWT VC and mdoc; pre-authorized, and the
 * authorization code flow in code-flow.ts) and presentation flows with real proofs, KB-JWTs and
 * encrypted responses.
 */
import { digest, generateSalt } from '@sd-jwt/crypto-nodejs'
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc'
import { CompactEncrypt, decodeJwt, generateKeyPair, importJWK, type JWK } from 'jose'
import { issueOverHttp, kbSigner } from '../test/wallet'
import { CODE_FLOW_CONFIG, createCodeFlow } from './code-flow'
import { createInteractiveFlow, setUpInteractive } from './interactive-flow'
import { keyChainProvider } from './key-provider'
import { fromOwnAddress } from './wallet-address'

// biome-ignore lint/suspicious/noExplicitAny: loosely typed JSON answers
type Json = Record<string, any>

export type Flow = () => Promise<void>

const STATUS_CONFIG = 'pid-status'

/** Runs one named request of a flow: the wallet's row times each (request-costs.ts). */
export type Step = <T>(name: string, request: () => Promise<T>) => Promise<T>

export async function call(
  base: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${base}${path}`, {
    method: init.body === undefined ? 'GET' : 'POST',
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  })
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
  return (await response.json()) as Json
}

/** An access token of a management client (client credentials). */
export const clientToken = async (base: string, id: string, secret: string): Promise<string> =>
  (
    await call(base, '/api/oauth2/token', {
      body: { grant_type: 'client_credentials', client_id: id, client_secret: secret },
    })
  ).access_token as string

/** A fresh tenant (so a database can be benched twice), a client with every role the flows need. */
export async function setUpTenant(
  base: string,
  root: { id: string; secret: string },
  { codeFlow = true }: { codeFlow?: boolean } = {},
) {
  const token = (id: string, secret: string) => clientToken(base, id, secret)
  const rootAuth = { authorization: `Bearer ${await token(root.id, root.secret)}` }
  const tenant = `bench-${crypto.randomUUID().slice(0, 8)}`
  await call(base, '/api/tenants', { body: { id: tenant, name: 'Bench' }, headers: rootAuth })
  const roles = [
    'key:manage',
    'issuance:config',
    'issuance:offer',
    'presentation:config',
    'presentation:request',
  ]
  const client = await call(base, `/api/tenants/${tenant}/clients`, { body: { roles }, headers: rootAuth })
  const auth = { authorization: `Bearer ${await token(client.clientId, client.clientSecret)}` }
  const post = (path: string, body: unknown) => call(base, path, { body, headers: auth })
  await post('/api/key-chains', {
    source: 'generate',
    id: 'keys',
    ...keyChainProvider(),
    certificate: { mode: 'internal-ca', subject: 'CN=Bench,C=DE' },
  })
  await post('/api/credentials', {
    id: 'pid',
    config: { format: 'dc+sd-jwt', vct: 'urn:bench:pid' },
    keyChainId: 'keys',
    fields: [
      { path: ['given_name'], type: 'string', disclosable: true },
      { path: ['age_over_18'], type: 'boolean', disclosable: true },
    ],
  })
  // The same credential with a status list entry (TSL): its issuance allocates an index, and
  // presenting it makes the verifier check the list (fetched once, then from its cache).
  await post('/api/credentials', {
    id: STATUS_CONFIG,
    config: { format: 'dc+sd-jwt', vct: 'urn:bench:pid' },
    keyChainId: 'keys',
    statusManagement: true,
    fields: [
      { path: ['given_name'], type: 'string', disclosable: true },
      { path: ['age_over_18'], type: 'boolean', disclosable: true },
    ],
  })
  // HAIP-style: the authorization code flow with DPoP-bound tokens.
  if (codeFlow)
    await post('/api/credentials', {
      id: CODE_FLOW_CONFIG,
      config: { format: 'dc+sd-jwt', vct: 'urn:bench:pid' },
      keyChainId: 'keys',
      fields: [
        { path: ['given_name'], type: 'string', disclosable: true },
        { path: ['age_over_18'], type: 'boolean', disclosable: true },
      ],
      dpop: 'required',
    })
  await post('/api/credentials', {
    id: 'mdl',
    config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
    keyChainId: 'keys',
    fields: [
      { path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1' },
      { path: ['age_over_18'], type: 'boolean', namespace: 'org.iso.18013.5.1' },
    ],
  })
  // Issue 26: presentation during issuance over Interactive Authorization.
  if (codeFlow) await setUpInteractive(post)
  await post('/api/presentations', {
    id: 'age',
    keyChainId: 'keys',
    responseMode: 'direct_post.jwt',
    dcqlQuery: {
      credentials: [
        {
          id: 'pid',
          format: 'dc+sd-jwt',
          meta: { vct_values: ['urn:bench:pid'] },
          claims: [{ path: ['age_over_18'] }],
        },
      ],
    },
  })
  return { tenant, auth, client: { id: client.clientId as string, secret: client.clientSecret as string } }
}

/** Issue 44: the row of the wallet's own requests (wallet-flow.ts); its ceiling is the SD-JWT VC issuance's. */
export const WALLET_FLOW = 'issuance as a wallet does (SD-JWT VC)'
export const CODE_FLOW = 'issuance, authorization code (PAR + PKCE + DPoP)'
export const INTERACTIVE_FLOW = 'issuance, interactive authorization (PID presented → mdoc)'

/** The flows of the bench against one tenant. */
export async function createFlows(
  base: string,
  tenant: string,
  auth: Record<string, string>,
  { codeFlow = true, wallet }: { codeFlow?: boolean; wallet?: (step?: Step) => Promise<void> } = {},
): Promise<Record<string, Flow>> {
  const holder = await generateKeyPair('ES256', { extractable: true })

  // Offer by reference → offer → metadata → token → nonce → credential.
  const issuance = (configurationId: string, claims: Record<string, unknown>) => async () => {
    await call(base, `/.well-known/openid-credential-issuer/issuers/${tenant}`)
    const issued = await issueOverHttp({
      apiBase: base,
      auth,
      configurationId,
      claims,
      holder,
      byReference: true,
    })
    if (!issued.credential) throw new Error('no credential issued')
    return issued.credential
  }
  const sdJwt = issuance('pid', { given_name: 'Erika', age_over_18: true })
  const mdoc = issuance('mdl', { 'org.iso.18013.5.1': { family_name: 'Mustermann', age_over_18: true } })

  const sdJwtWithStatus = issuance(STATUS_CONFIG, { given_name: 'Erika', age_over_18: true })

  const presenter = new SDJwtVcInstance({
    hasher: digest,
    saltGenerator: generateSalt,
    kbSignAlg: 'ES256',
    kbSigner: kbSigner(holder.privateKey),
  })
  // Request creation → request object → direct_post.jwt response → session read.
  const presentationOf = (credential: string) => async () => {
    const created = await call(base, '/api/presentation-requests', {
      body: { presentationConfigId: 'age' },
      headers: auth,
    })
    const request = decodeJwt(await (await fetch(created.requestUri)).text()) as Json
    const vp = await presenter.present(
      credential,
      { age_over_18: true },
      {
        kb: { payload: { iat: Math.floor(Date.now() / 1000), nonce: request.nonce, aud: request.client_id } },
      },
    )
    const key = request.client_metadata.jwks.keys[0] as JWK
    const jwe = await new CompactEncrypt(
      new TextEncoder().encode(JSON.stringify({ vp_token: { pid: [vp] }, state: request.state })),
    )
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A128GCM', kid: key.kid as string })
      .encrypt(await importJWK(key, 'ECDH-ES'))
    const response = await fetch(request.response_uri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ response: jwe }),
    })
    if (!response.ok) throw new Error(`response: ${response.status} ${await response.text()}`)
    const session = await call(base, `/api/sessions/${created.sessionId}`, { headers: auth })
    if (session.status !== 'verified')
      throw new Error(`presentation ${session.status}: ${session.failureReason}`)
  }

  const flows: Record<string, Flow> = {
    'issuance (SD-JWT VC)': async () => void (await sdJwt()),
    ...(wallet ? { [WALLET_FLOW]: () => wallet() } : {}),
    'issuance (mdoc)': async () => void (await mdoc()),
    ...(codeFlow
      ? {
          [CODE_FLOW]: await createCodeFlow(base, tenant, auth),
          [INTERACTIVE_FLOW]: await createInteractiveFlow(base, tenant, auth),
        }
      : {}),
    'presentation (direct_post.jwt)': presentationOf(await sdJwt()),
    'issuance with status list (SD-JWT VC)': async () => void (await sdJwtWithStatus()),
    'presentation with status list (direct_post.jwt)': presentationOf(await sdJwtWithStatus()),
  }
  return Object.fromEntries(Object.entries(flows).map(([name, flow]) => [name, fromOwnAddress(flow)]))
}

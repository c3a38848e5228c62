import type * as sdk from '@credential-service/sdk'
import { setGlobalConfig } from '@openid4vc/oauth2'
import { build } from 'esbuild'
import type { FastifyInstance } from 'fastify'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM, skipWithoutChromium } from '../../console/test/browser'
import {
  type DcApiCreated,
  MDL_QUERY,
  managementCaller,
  PID_QUERY,
  startDcApiWorld,
  VCT,
} from './dc-api-fixtures'
import { answerOverDcApi, type DcApiEntry } from './oid4vp-wallet'
import { issueOverHttp, presentSdJwt } from './wallet'

setGlobalConfig({ allowInsecureUrls: true })
const skip = skipWithoutChromium('dc-api-browser.test.ts')
/** Long enough for Chromium to have refused a request it could not read (that takes milliseconds). */
const PENDING_MS = 1_500

/** What the page functions reach as `globalThis` (serialised into the page, they see nothing of this file; typechecked for Node, without the DOM's types). */
interface PageGlobals {
  DigitalCredential?: { userAgentAllowsProtocol?: (protocol: string) => boolean }
  isSecureContext: boolean
  location: { origin: string }
  navigator: { credentials: { get(options: unknown): Promise<unknown> } }
  document: { body: { textContent: string | null } }
  sdk: typeof sdk
  walletAnswer(requests: DcApiEntry[], origin: string): Promise<DcApiEntry>
}

/**
 * The outcome of one navigator.credentials.get in the page: the error's name and message, and how
 * soon. Playwright evaluates with a user gesture: without one Chromium answers NotAllowedError.
 */
function getInPage(page: Page, requests: unknown, timeoutMs = PENDING_MS) {
  return page.evaluate(
    async ({ requests, timeoutMs }) => {
      const started = performance.now()
      try {
        await (globalThis as unknown as PageGlobals).navigator.credentials.get({
          mediation: 'required',
          digital: { requests },
          signal: AbortSignal.timeout(timeoutMs),
        })
        return { name: 'resolved', message: '', ms: performance.now() - started }
      } catch (error) {
        const { name, message } = error as Error
        return { name, message, ms: performance.now() - started }
      }
    },
    { requests, timeoutMs },
  )
}

describe.skipIf(skip)(
  'W3C Digital Credentials API in headless Chromium: the service’s requests, and the SDK helper in a real page',
  () => {
    let app: FastifyInstance
    let browser: Browser
    let sdkScript: string
    let auth: Record<string, string>
    /** The service's own origin, and a second one for the SDK's page (its post is cross-origin). */
    let origin: string
    let otherOrigin: string
    /** Where the Node wallet binds its answer: the page's origin, or a phisher's. */
    let walletOrigin: (pageOrigin: string) => string = (pageOrigin) => pageOrigin

    const { send, dcApiRequest: createRequest } = managementCaller(
      () => origin,
      () => auth,
    )

    /** A page at `pageOrigin`/rp: the relying party's page, the SDK bundled into it. */
    async function openPage(pageOrigin: string, init?: () => void) {
      // Chromium's Local Network Access refuses a 127.0.0.1 page's fetch to localhost without this
      // permission; the pages and the service of a deployment are not on loopback addresses.
      const page = await browser.newPage({ permissions: ['local-network-access'] })
      page.setDefaultTimeout(20_000)
      await page.route(`${pageOrigin}/rp`, (route) =>
        route.fulfill({
          contentType: 'text/html',
          body: `<!doctype html><html lang="en"><title>RP</title><body><script>${sdkScript}</script></body></html>`,
        }),
      )
      // The wallet is the test process: it answers with a real presentation (oid4vp-wallet.ts).
      await page.exposeFunction('walletAnswer', async (requests: DcApiEntry[], pageOrigin: string) => {
        const signed = requests.find((request) => request.protocol === 'openid4vp-v1-signed')
        const unsigned = requests.find((request) => request.protocol === 'openid4vp-v1-unsigned')
        const bindTo = walletOrigin(pageOrigin)
        // A phisher's wallet would refuse the signed request (expected_origins): it takes the unsigned one.
        const entry = (bindTo === pageOrigin ? signed : unsigned) as DcApiEntry
        // OpenID4VP 1.0 A.4: aud is origin:<origin> "even for signed requests"; the library's
        // effective client id (its reading for signed requests) is not the audience here.
        return answerOverDcApi(entry, bindTo, async (request) => {
          const { credential, holder } = await issueOverHttp({
            apiBase: origin,
            auth,
            configurationId: 'pid',
            claims: { given_name: 'Erika' },
          })
          const nonce = request.nonce as string
          return {
            pid: [
              await presentSdJwt({
                credential,
                holder,
                disclose: { given_name: true },
                nonce,
                aud: `origin:${bindTo}`,
              }),
            ],
          }
        })
      })
      if (init) await page.addInitScript(init)
      await page.goto(`${pageOrigin}/rp`)
      return page
    }

    beforeAll(async () => {
      const started = await startDcApiWorld()
      ;({ app, baseUrl: origin } = started)
      otherOrigin = `http://127.0.0.1:${started.port}`
      auth = started.tenants.a.auth
      for (const [id, dcqlQuery] of [
        ['dc-pid', PID_QUERY],
        ['dc-mdl', MDL_QUERY],
      ] as const) {
        const saved = await send('POST', '/api/presentations', {
          id,
          keyChainId: 'keys',
          dcqlQuery,
          responseMode: 'direct_post.jwt',
          dcApi: { origins: [origin, otherOrigin] },
        })
        expect(saved.status, JSON.stringify(saved.body)).toBe(201)
      }
      // The SDK's entry as a page loads it: one script, no Node built-ins.
      const bundled = await build({
        entryPoints: [new URL('../../../packages/sdk/src/index.ts', import.meta.url).pathname],
        bundle: true,
        format: 'iife',
        globalName: 'sdk',
        platform: 'browser',
        target: 'chrome120',
        write: false,
        logLevel: 'silent',
      })
      sdkScript = bundled.outputFiles[0]?.text ?? ''
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        // Chromium's sandbox needs user namespaces, which root in a container does not get.
        args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
      })
    })
    afterAll(async () => {
      await browser?.close()
      await app?.close()
    })

    it('Chromium exposes DigitalCredential (with userAgentAllowsProtocol, true for each of our protocols) and navigator.credentials.get on the service’s origin, a secure context', async () => {
      const page = await openPage(origin)
      const seen = await page.evaluate(() => {
        const { DigitalCredential, isSecureContext, navigator } = globalThis as unknown as PageGlobals
        return {
          isSecureContext,
          DigitalCredential: typeof DigitalCredential,
          userAgentAllowsProtocol: ['openid4vp-v1-signed', 'openid4vp-v1-unsigned', 'org-iso-mdoc'].map(
            (protocol) => DigitalCredential?.userAgentAllowsProtocol?.(protocol),
          ),
          get: typeof navigator.credentials.get,
          helperSees: (globalThis as unknown as PageGlobals).sdk.digitalCredentialsSupported(),
        }
      })
      expect(seen).toStrictEqual({
        isSecureContext: true,
        DigitalCredential: 'function',
        userAgentAllowsProtocol: [true, true, true],
        get: 'function',
        helperSees: true,
      })
      await page.close()
    })

    it('the requests the service builds pass Chromium’s own argument validation (pending for a wallet until aborted); malformed ones are refused with a TypeError at once', async () => {
      const page = await openPage(origin)
      const { dcApi } = await createRequest('dc-mdl', origin)
      expect(dcApi.requests.map((request) => request.protocol)).toStrictEqual([
        'openid4vp-v1-signed',
        'openid4vp-v1-unsigned',
        'org-iso-mdoc',
      ])
      // All together, as the helper hands them, and each alone.
      for (const requests of [dcApi.requests, ...dcApi.requests.map((request) => [request])]) {
        const outcome = await getInPage(page, requests)
        expect(outcome.name, `${outcome.message} for ${requests.map((r) => r.protocol)}`).toBe('TimeoutError')
        expect(outcome.ms).toBeGreaterThanOrEqual(PENDING_MS - 50)
      }
      const [first] = dcApi.requests as [DcApiEntry]
      const malformed: [unknown, RegExp][] = [
        [[{ protocol: first.protocol }], /'data' property .* Required member is undefined/],
        [
          [{ protocol: first.protocol, data: JSON.stringify(first.data) }],
          /'data' property .* convert value to 'object'/,
        ],
        [[], /no well-formed allowed protocol requests/],
      ]
      for (const [requests, message] of malformed) {
        const outcome = await getInPage(page, requests)
        expect(outcome).toMatchObject({ name: 'TypeError', message: expect.stringMatching(message) })
        expect(outcome.ms).toBeLessThan(PENDING_MS / 2)
      }
      await page.close()
    })

    it('SDK helper: in a browser without the API the page’s fallback shows the openid4vp:// URI; in Chromium the helper hands the requests over and rejects with the abort', async () => {
      const created = await createRequest('dc-pid', origin)
      const present = (page: Page) =>
        page.evaluate(
          async ({ dcApi, uri }) => {
            try {
              const outcome = await (globalThis as unknown as PageGlobals).sdk.presentWithDigitalCredentials({
                dcApi,
                signal: AbortSignal.timeout(1_000),
                // The QR code's stand-in: the URI as the page's text.
                fallback: () => {
                  ;(globalThis as unknown as PageGlobals).document.body.textContent = uri
                },
              })
              return { outcome, text: (globalThis as unknown as PageGlobals).document.body.textContent }
            } catch (error) {
              return { rejected: (error as Error).name }
            }
          },
          { dcApi: created.dcApi, uri: created.authorizationRequestUri },
        )
      const without = await openPage(origin, () => {
        delete (globalThis as { DigitalCredential?: unknown }).DigitalCredential
      })
      expect(await present(without)).toStrictEqual({
        outcome: { kind: 'fallback', reason: 'unavailable' },
        text: created.authorizationRequestUri,
      })
      const real = await openPage(origin)
      expect(await present(real)).toStrictEqual({ rejected: 'TimeoutError' })
      await Promise.all([without.close(), real.close()])
    })

    /** A page whose navigator.credentials.get is the Node wallet (exposed as walletAnswer). */
    const withWallet = () => {
      const page = globalThis as unknown as PageGlobals
      page.navigator.credentials.get = async (options) => {
        const { requests } = (options as { digital: { requests: DcApiEntry[] } }).digital
        const answer = await page.walletAnswer(requests, page.location.origin)
        // As Chromium's DigitalCredential: its protocol and data.
        return { type: 'digital', protocol: answer.protocol, data: answer.data }
      }
    }
    const presentFrom = (page: Page, dcApi: DcApiCreated['dcApi']) =>
      page.evaluate(async (dcApi) => {
        try {
          return await (globalThis as unknown as PageGlobals).sdk.presentWithDigitalCredentials({
            dcApi,
            fallback: () => undefined,
          })
        } catch (error) {
          const { name, status, error: code } = error as sdk.DcApiResponseError
          return { name, status, code }
        }
      }, dcApi)

    it('SDK helper: the wallet’s answer is posted from a page of another origin (CORS) to the responseUri; the session is verified', async () => {
      walletOrigin = (pageOrigin) => pageOrigin
      const created = await createRequest('dc-pid', otherOrigin)
      expect(new URL(created.dcApi.responseUri).origin).not.toBe(otherOrigin)
      const page = await openPage(otherOrigin, withWallet)
      const posted = page.waitForResponse(created.dcApi.responseUri)
      expect(await presentFrom(page, created.dcApi)).toStrictEqual({
        kind: 'answered',
        protocol: 'openid4vp-v1-signed',
      })
      const response = await posted
      expect({
        method: response.request().method(),
        origin: await response.request().headerValue('origin'),
        status: response.status(),
        allowOrigin: await response.headerValue('access-control-allow-origin'),
      }).toStrictEqual({ method: 'POST', origin: otherOrigin, status: 200, allowOrigin: '*' })
      expect((await send('GET', `/api/sessions/${created.sessionId}`)).body).toMatchObject({
        status: 'verified',
        claims: { pid: [{ given_name: 'Erika', vct: VCT }] },
      })
      await page.close()
    })

    it('SDK helper: an answer bound to another origin is refused: a DcApiResponseError with the OAuth error, the session failed', async () => {
      walletOrigin = () => 'https://phisher.example'
      const created = await createRequest('dc-pid', otherOrigin)
      const page = await openPage(otherOrigin, withWallet)
      expect(await presentFrom(page, created.dcApi)).toStrictEqual({
        name: 'DcApiResponseError',
        status: 400,
        code: 'invalid_request',
      })
      expect((await send('GET', `/api/sessions/${created.sessionId}`)).body).toMatchObject({
        status: 'failed',
        failureReason: expect.stringContaining('aud'),
      })
      await page.close()
    })
  },
)

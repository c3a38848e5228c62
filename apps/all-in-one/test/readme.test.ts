import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { decodeJwt } from 'jose'
import { describe, expect, it } from 'vitest'
import { appEntry } from '../../../scripts/test-bundles'
import { renderEnvTable } from '../src/env-table'
import { freePort } from './free-port'
import { redeemOffer } from './wallet'

const root = new URL('../../..', import.meta.url).pathname
const readme = readFileSync(join(root, 'README.md'), 'utf8')

/** The first ```sh block after a heading of the README. */
function shellBlock(heading: string): string {
  const section = readme.split(`\n## ${heading}\n`)[1] ?? ''
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1]
  if (!block) throw new Error(`README has no sh block under "## ${heading}"`)
  return block
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  // A cold start (tsx transform, embedded database, migrations) on a loaded CI machine: up to 2 min.
  for (let i = 0; i < 480; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}`)
    const ok = await fetch(`${url}/api/health`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error('the service did not become healthy')
}

describe('README', () => {
  it('documents every environment variable exactly as the code parses them', () => {
    const block = /<!-- env-table:start[^>]*-->\n([\s\S]*?)\n<!-- env-table:end -->/.exec(readme)
    expect(block?.[1], 'run `pnpm env:table` and paste it between the markers').toBe(renderEnvTable())
  })

  it('issue 13: the "First issuance" commands work as written against the all-in-one service', async () => {
    const work = mkdtempSync(join(tmpdir(), 'cs-readme-'))
    const port = await freePort()
    const child = spawn(process.execPath, appEntry('all-in-one'), {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        DATA_DIR: join(work, '.data'),
        PORT: String(port),
        LOG_LEVEL: 'error',
      },
      stdio: 'ignore',
    })
    try {
      const base = `http://localhost:${port}`
      await waitForHealth(base, child)
      const script = shellBlock('First issuance')
      // stdin from /dev/null: on a socket (Node's default pipe) bash takes itself for an rsh
      // session and reads /etc/bash.bashrc, which fails under -u when SHLVL is unset.
      const result = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
        cwd: work,
        env: { ...process.env, PORT: String(port) },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      expect(result.stderr).toBe('')
      expect(result.status).toBe(0)
      // One line per result: the tenant, the client, the key chain, the configuration, the offer URI.
      const lines = result.stdout.trimEnd().split('\n')
      expect(lines).toHaveLength(5)
      expect(lines.slice(0, 4).map((line) => JSON.parse(line).id ?? JSON.parse(line).clientId)).toStrictEqual(
        ['acme', 'acme-backend', 'signing', 'employee'],
      )
      // The last command prints the offer URI: a wallet takes the credential from there.
      const offerUri = /openid-credential-offer:\/\/\?credential_offer_uri=(\S+)\n$/.exec(result.stdout)
      expect(offerUri?.[1]).toBeDefined()
      const credentialOffer = (await (await fetch(decodeURIComponent(offerUri?.[1] as string))).json()) as {
        credential_issuer: string
      }
      expect(credentialOffer.credential_issuer).toBe(`${base}/issuers/acme`)
      const { credential } = await redeemOffer({ credentialOffer, configurationId: 'employee' })
      const payload = decodeJwt(credential.split('~')[0] as string)
      expect(payload).toMatchObject({ iss: `${base}/issuers/acme`, vct: 'urn:example:employee' })
      const disclosed = credential
        .split('~')
        .slice(1, -1)
        .map((d) => JSON.parse(Buffer.from(d, 'base64url').toString()))
      expect(disclosed).toContainEqual([expect.any(String), 'name', 'Erika Mustermann'])

      // Issue 43: "Step 4 may leave out the key chain": the spec's minimal mso_mdoc body (§2.1–2.3)
      // answers 201 on the README's tenant, which states its country.
      const token = await fetch(`${base}/api/oauth2/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from('acme-backend:acme-backend-secret-0123').toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'grant_type=client_credentials',
      })
      const { access_token } = (await token.json()) as { access_token: string }
      const mdoc = await fetch(`${base}/api/credentials`, {
        method: 'POST',
        headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'mdl',
          config: { format: 'mso_mdoc', docType: 'org.iso.18013.5.1.mDL' },
          fields: [{ path: ['family_name'], type: 'string', namespace: 'org.iso.18013.5.1' }],
        }),
      })
      expect(mdoc.status, await mdoc.clone().text()).toBe(201)
      expect(mdoc.headers.get('x-default-key-chain')).toBe('default')
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('exit', resolve))
      rmSync(work, { recursive: true, force: true })
    }
  }, 240_000)
})

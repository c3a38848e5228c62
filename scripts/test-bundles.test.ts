import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { appEntry, bundleInputs, consoleInputs, TEST_CONSOLE_DIR } from './test-bundles'

const root = new URL('..', import.meta.url).pathname

it.skipIf(process.env.TEST_FROM_SOURCE)(
  'the processes tests start run bundles built from the sources as they are now',
  () => {
    const inputs = bundleInputs()
    expect(inputs.map(({ app }) => app).sort()).toStrictEqual([
      'all-in-one',
      'issuer',
      'management',
      'verifier',
    ])
    for (const { app, digest, stamp } of inputs) {
      expect(readFileSync(stamp, 'utf8'), `${app}: stale bundle`).toBe(digest)
      expect(existsSync(join(root, ...appEntry(app)))).toBe(true)
    }
    expect(appEntry('all-in-one', 'cli/db-migrate')).toStrictEqual([
      'apps/all-in-one/dist-test/cli/db-migrate.js',
    ])
    expect(existsSync(join(root, 'apps/all-in-one/dist-test/cli/db-migrate.js'))).toBe(true)
  },
)

it('issue 22: the processes tests start serve a console built from its sources as they are now', () => {
  const { digest, stamp } = consoleInputs()
  expect(readFileSync(stamp, 'utf8'), 'console: stale build').toBe(digest)
  expect(existsSync(join(root, TEST_CONSOLE_DIR, 'index.html'))).toBe(true)
})

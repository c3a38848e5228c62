import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'

// Issue 37 item 6: the wallet compatibility page names tests and library versions; this keeps
// them true when a test is renamed or moved, or a dependency is upgraded.
const root = new URL('../../..', import.meta.url).pathname
const testDir = join(root, 'apps/all-in-one/test')
const page = readFileSync(join(root, 'docs/interoperability.md'), 'utf8')

/** A file the page names: a bare name lives in apps/all-in-one/test, a path is from the root. */
const fileOf = (name: string) => (name.includes('/') ? join(root, name) : join(testDir, name))
const FILE = /`([\w./-]+\.(?:ts|md))`/g

describe('issue 37 item 6: docs/interoperability.md stays true', () => {
  it('every file it names exists', () => {
    const named = [...new Set([...page.matchAll(FILE)].map((match) => match[1] as string))]
    expect(named.length).toBeGreaterThan(20)
    expect(named.filter((name) => !existsSync(fileOf(name)))).toStrictEqual([])
  })

  it('every “test name” of a row is in one of the test files that row names', () => {
    const rows = page.split('\n').filter((line) => line.startsWith('|') && line.includes('.test.ts`'))
    const missing: string[] = []
    let checked = 0
    for (const row of rows) {
      const sources = [...row.matchAll(/`([\w./-]+\.test\.ts)`/g)].map((match) =>
        readFileSync(fileOf(match[1] as string), 'utf8'),
      )
      for (const [, fragment] of row.matchAll(/“([^”]+)”/g)) {
        checked++
        if (!sources.some((source) => source.includes(fragment as string))) missing.push(fragment as string)
      }
    }
    expect(checked).toBeGreaterThan(30)
    expect(missing).toStrictEqual([])
  })

  it('every library version it gives is the one pnpm-workspace.yaml’s catalog installs', () => {
    const catalog = parse(readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8')).catalog as Record<
      string,
      string
    >
    const locked = parse(readFileSync(join(root, 'pnpm-lock.yaml'), 'utf8')).catalogs.default as Record<
      string,
      { specifier: string; version: string }
    >
    // "`@openid4vc/openid4vp` 0.4.6" in prose, "| `@owf/mdoc` | 0.6.0 |" in the clients table.
    const given = [...page.matchAll(/`(@?[a-z0-9][\w./-]*)`(?: \| | )(\d+\.\d+\.\d+)\b/g)].map(
      ([, name, version]) => ({ name: name as string, version }),
    )
    expect(given.length).toBeGreaterThan(20)
    const wrong = given.filter(
      ({ name, version }) => locked[name]?.specifier !== catalog[name] || locked[name]?.version !== version,
    )
    expect(wrong).toStrictEqual([])
  })

  it('the README links it', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain('(docs/interoperability.md)')
  })
})

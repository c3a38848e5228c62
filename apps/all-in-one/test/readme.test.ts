import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { renderEnvTable } from '../src/env-table'

describe('README', () => {
  it('documents every environment variable exactly as the code parses them', () => {
    const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8')
    const block = /<!-- env-table:start[^>]*-->\n([\s\S]*?)\n<!-- env-table:end -->/.exec(readme)
    expect(block?.[1], 'run `pnpm env:table` and paste it between the markers').toBe(renderEnvTable())
  })
})

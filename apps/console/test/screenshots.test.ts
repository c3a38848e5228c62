import { describe, expect, it } from 'vitest'
import { SCREENSHOT_PAGES } from '../scripts/screenshots'
import { PAGE_KEYS } from '../src/access'

// The screenshots script (npm run console:screenshots) cannot fall behind the console: it names a
// file for every page, and no page that is gone. Nothing is started or captured here.
describe('console screenshots script', () => {
  it('covers exactly the pages of PAGES, each with a file of its own under docs/console/', () => {
    expect(Object.keys(SCREENSHOT_PAGES).sort()).toStrictEqual([...PAGE_KEYS].sort())
    const files = Object.values(SCREENSHOT_PAGES)
    expect(new Set(files).size).toBe(files.length)
    for (const file of files) expect(file).toMatch(/^[a-z-]+\.png$/)
  })
})

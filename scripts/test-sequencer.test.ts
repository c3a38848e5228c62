import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { LONGEST_FILES } from './test-sequencer'

const root = new URL('..', import.meta.url).pathname

it('every file the sequencer runs first exists (a renamed file would silently lose its place)', () => {
  expect(LONGEST_FILES.filter((path) => !existsSync(join(root, path)))).toStrictEqual([])
  expect(new Set(LONGEST_FILES).size).toBe(LONGEST_FILES.length)
})

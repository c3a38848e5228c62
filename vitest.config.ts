import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['{apps,packages}/*/{src,test}/**/*.test.ts', 'scripts/**/*.test.ts'],
    reporters: ['default', './scripts/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default is one worker fewer than the cores: one on a two-core CI machine, so the
    // suite ran file by file. Most files wait on processes, PostgreSQL and timers rather than CPU,
    // so a worker per core keeps both busy (issue 21: `.ci/run` under 10 minutes). One more than
    // the cores was faster still, but starved the load tests (webhook retries under contention).
    maxWorkers: availableParallelism(),
  },
})

import { availableParallelism } from 'node:os'
import { defaultServerConditions } from 'vite'
import { defineConfig } from 'vitest/config'
import LongestFirst from './scripts/test-sequencer'

const SOURCE_CONDITIONS = [
  '@credential-service/source',
  ...defaultServerConditions.filter((condition) => condition !== 'module'),
]

export default defineConfig({
  // Workspace packages published with dist/ exports (the SDK) are tested from their sources.
  // Vitest's own default drops `module`, which names builds for bundlers (extensionless imports).
  resolve: { conditions: SOURCE_CONDITIONS },
  ssr: { resolve: { conditions: SOURCE_CONDITIONS } },
  test: {
    include: ['{apps,packages}/*/{src,test}/**/*.test.ts', 'scripts/**/*.test.ts'],
    reporters: ['default', './scripts/summary-reporter.ts'],
    // The apps' bundles for the processes tests start (scripts/test-bundles.ts).
    globalSetup: ['./scripts/test-global-setup.ts'],
    sequence: { sequencer: LongestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default is one worker fewer than the cores: one on a two-core CI machine, so the
    // suite ran file by file. Most files wait on processes, PostgreSQL and timers part of the
    // time, so one worker more than the cores keeps the CPU busy (issue 21: `.ci/run` under 10
    // minutes on two cores).
    maxWorkers: availableParallelism() + 1,
    // A worker keeps the modules it loaded for its next file: isolating each file cost 250 s of
    // imports in a full run. No test relies on a fresh module state (no module mocks).
    isolate: false,
  },
})

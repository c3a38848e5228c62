import type { Reporter, TestCase, TestModule, TestSuite } from 'vitest/node'

/**
 * Prints the plain closing line CI reads: `Tests: N passed, N failed, N skipped`. Failed counts
 * failed tests, and every error outside a test (a module that failed to load, a failed hook, an
 * unhandled error), so the line says "0 failed" only when vitest exits 0 (issue 43). Tests a failed
 * hook kept from running are not counted as skipped: the hook's failure stands for them.
 */
/** How many of the slowest files the summary names. */
const SLOWEST = 20

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0
    let failed = unhandledErrors.length
    let skipped = 0
    for (const module of testModules) {
      for (const owner of [module, ...module.children.allSuites()]) failed += owner.errors().length
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed++
        else if (state === 'failed' || state === 'pending') failed++
        else if (!keptFromRunning(test)) skipped++
      }
    }
    // Where the run's time goes (the suite must stay near 10 minutes on two cores).
    const slowest = [...testModules]
      .map((module) => ({ file: module.relativeModuleId, ms: module.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms)
      .slice(0, SLOWEST)
    if (slowest.length > 0)
      console.log(
        `\nSlowest files:\n${slowest.map(({ file, ms }) => `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}`).join('\n')}`,
      )
    console.log(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
  }
}

/** Whether a skipped test sits in a suite or module whose hook or collection failed. */
function keptFromRunning(test: TestCase): boolean {
  for (let owner: TestSuite | TestModule = test.parent; ; owner = owner.parent) {
    if (owner.errors().length > 0) return true
    if (owner.type === 'module') return false
  }
}

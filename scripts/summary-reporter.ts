import type { Reporter, TestModule } from 'vitest/node'

/** Prints the plain closing line CI reads: `Tests: N passed, N failed, N skipped`. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>) {
    let passed = 0
    let failed = errors.length
    let skipped = 0
    for (const module of testModules) {
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed++
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === 'passed') passed++
        else if (state === 'failed') failed++
        else skipped++
      }
    }
    console.log(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
  }
}

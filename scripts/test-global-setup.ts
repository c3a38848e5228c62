import { buildTestBundles } from './test-bundles'

/** vitest's global setup: once per run, before any test file. */
export default async function setup() {
  await buildTestBundles()
}

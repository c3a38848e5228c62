import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * The files that take longest on a two-core machine (they start processes or run loads), longest
 * first, as measured in `.ci/run` (issue 21). On a clean clone vitest knows no durations and
 * ordered by file size, so a minute-long file could start last, alone, with one core idle.
 */
export const LONGEST_FILES = [
  'apps/all-in-one/test/bench.test.ts',
  'apps/all-in-one/test/first-deploy.test.ts',
  'apps/all-in-one/test/upgrade-tooling.test.ts',
  'apps/all-in-one/test/standalone.test.ts',
  'apps/all-in-one/test/image.test.ts',
  'apps/all-in-one/test/deferred-issuance.test.ts',
  'apps/management/test/oidc-provider-reach.test.ts',
  // A process and a Chromium each (issue 22).
  'apps/console/test/console.test.ts',
  'apps/console/test/configs.test.ts',
  'apps/console/test/flows.test.ts',
  'apps/console/test/manage.test.ts',
  'apps/console/test/oidc-sign-in.test.ts',
  'apps/console/test/operations.test.ts',
  'packages/server-kit/src/create-server.test.ts',
  'apps/management/test/oauth.test.ts',
  'apps/all-in-one/test/rate-limits.test.ts',
  'apps/all-in-one/test/rolling-restart.test.ts',
  'apps/all-in-one/test/db-reset-processes.test.ts',
  'packages/db-schema/src/client-faults.test.ts',
  'apps/all-in-one/test/webhook-outbox.test.ts',
  'packages/server-kit/src/rate-limit-counter.test.ts',
  'packages/db-schema/src/rate-limits.test.ts',
  'apps/all-in-one/test/readme.test.ts',
]

/** Vitest's order (failed first, then by the durations it remembers), with LONGEST_FILES ahead. */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FILES.findIndex((path) => file.moduleId.endsWith(`/${path}`))
      return index < 0 ? LONGEST_FILES.length : index
    }
    return sorted
      .map((file, order) => ({ file, order, rank: rank(file) }))
      .sort((a, b) => a.rank - b.rank || a.order - b.order)
      .map(({ file }) => file)
  }
}

import { zProblem } from '@credential-service/core-domain'
import { PROBLEM_STATUSES } from './problem'

/** Error responses of a management route for its schema, from the one problem table. */
export const problemResponses = Object.fromEntries(
  PROBLEM_STATUSES.map((status) => [status, zProblem.describe('RFC 9457 problem details')]),
) as Record<(typeof PROBLEM_STATUSES)[number], typeof zProblem>

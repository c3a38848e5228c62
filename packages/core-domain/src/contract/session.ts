import { z } from 'zod'
import { zIssuanceSession } from './issuance'
import { zPresentationSession } from './presentation-config'

/** A session of either kind, as `GET /api/sessions/{id}` answers it; `kind` tells them apart. */
export const zSession = z.union([zIssuanceSession, zPresentationSession]).meta({ id: 'Session' })
export type Session = z.infer<typeof zSession>

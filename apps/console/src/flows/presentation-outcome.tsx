import type { PresentationSession } from '@credential-service/sdk'
import { Alert } from '@mantine/core'
import { useState } from 'react'
import { DisclosedClaims } from './disclosed-claims'
import { ReleaseResultForm } from './release-result'

/** A verified session's claims, or the form that releases them with the response code (same-device). */
export function PresentationOutcome({ session }: { session: PresentationSession }) {
  const [released, setReleased] = useState<PresentationSession>()
  if (session.status !== 'verified') return null
  const claims = released?.claims ?? session.claims
  if (claims) return <DisclosedClaims claims={claims} />
  if (session.responseCodeRequired)
    return <ReleaseResultForm sessionId={session.id} onReleased={setReleased} />
  return (
    <Alert color="gray" title="No claims kept">
      The claims of this session are no longer kept (released, or dropped by retention).
    </Alert>
  )
}

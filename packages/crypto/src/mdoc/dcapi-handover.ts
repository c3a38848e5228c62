import type { SessionTranscript } from '@owf/mdoc'

type Mdoc = typeof import('@owf/mdoc')
type Handover = SessionTranscript['handover']

const isBytes = (value: unknown): value is Uint8Array => value instanceof Uint8Array

/**
 * The Annex C SessionTranscript (ISO/IEC 18013-7 C.3: [null, null, ["dcapi", hash]]) as @owf/mdoc
 * needs it. 0.6.0 knows no `dcapi` handover, so `SessionTranscript.decode` refuses these bytes: a
 * Handover subclass that encodes as ["dcapi", hash] lets the library rebuild DeviceAuthentication.
 * The result must re-encode to exactly `bytes`, or the device signature would be checked over
 * something else.
 */
export function annexCSessionTranscriptOf(mdoc: Mdoc, bytes: Uint8Array): SessionTranscript {
  const decoded: unknown = mdoc.cborDecode(bytes)
  const handover = Array.isArray(decoded) && decoded.length === 3 ? (decoded[2] as unknown) : undefined
  if (
    !Array.isArray(decoded) ||
    decoded[0] !== null ||
    decoded[1] !== null ||
    !Array.isArray(handover) ||
    handover.length !== 2 ||
    handover[0] !== 'dcapi' ||
    !isBytes(handover[1])
  )
    throw new Error('not an ISO/IEC 18013-7 Annex C SessionTranscript')
  const transcript = namedHandoverTranscript(mdoc, 'dcapi', new Uint8Array(handover[1]))
  if (!Buffer.from(transcript.encode()).equals(bytes))
    throw new Error('the Annex C SessionTranscript does not re-encode to its bytes')
  return transcript
}

/**
 * A SessionTranscript [null, null, [name, hash]] of a handover @owf/mdoc does not know (Annex C's
 * `dcapi`, OpenID4VCI 1.1's `OpenID4VCIIAEHandover`): a subclass of its abstract Handover that
 * encodes as [name, hash], so the library rebuilds DeviceAuthentication over it.
 */
export function namedHandoverTranscript(mdoc: Mdoc, name: string, hash: Uint8Array): SessionTranscript {
  // The library's abstract Handover, which it does not export.
  const Base = Object.getPrototypeOf(mdoc.QrHandover) as new (structure: Uint8Array) => Handover
  class NamedHandover extends Base {
    override get encodedStructure() {
      return [name, hash]
    }
  }
  return mdoc.SessionTranscript.create({ handover: new NamedHandover(hash) })
}

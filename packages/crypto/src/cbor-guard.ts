/**
 * A linear pre-scan of untrusted CBOR (checklist S-123, S-128; RFC 8949 §10) that refuses, before
 * any decoder builds a value, what no mdoc or COSE structure needs and what makes decoders slow or
 * deep: cbor-x turns a bignum (tag 2/3) into a BigInt in quadratic time, so a few hundred KB
 * held one process for minutes. Every CBOR or COSE input from a wallet goes through it first: the
 * mdoc `vp_token` at the verifier today, Digital Credentials API responses and CBOR proofs or key
 * attestations when they come (the issuer accepts no CBOR from wallets yet).
 */

export interface CheckCborOptions {
  /** Deepest nesting of arrays, maps, tags and embedded CBOR; the top-level item is level 1. */
  maxDepth?: number
  /** Most data items in all, those inside embedded CBOR byte strings included. */
  maxItems?: number
}

export type CheckCborResult = { ok: true } | { ok: false; reason: string }

/**
 * Far above what mdocs need: a DeviceResponse with an mDL of five elements, driving_privileges
 * among them, nests 13 levels and holds under 200 items. Nesting is kept small for the decoders'
 * recursion; the item budget bounds what they allocate.
 */
export const CBOR_LIMITS: Readonly<Required<CheckCborOptions>> = Object.freeze({
  maxDepth: 32,
  maxItems: 20_000,
})

const UINT = 0
const NINT = 1
const BYTES = 2
const TEXT = 3
const ARRAY = 4
const MAP = 5
const TAG = 6
const SIMPLE = 7

/**
 * The tags ISO 18013-5 and RFC 9052 use, with the major types they may enclose: tdate (0), epoch
 * date-time (1), COSE_Mac0 and COSE_Sign1 tagged (17, 18), encoded CBOR (24), full-date (1004,
 * RFC 8943). The same set @owf/mdoc registers with cbor-x, plus 1, which cbor-x decodes natively.
 */
const TAGS = new Map<number, readonly number[]>([
  [0, [TEXT]],
  [1, [UINT, NINT, SIMPLE]],
  [17, [ARRAY]],
  [18, [ARRAY]],
  [24, [BYTES]],
  [1004, [TEXT]],
])

/**
 * Map keys whose value is an untagged COSE_Sign1 or COSE_Mac0 (ISO 18013-5 §9.1.2.4, §9.1.3):
 * their protected header and payload byte strings are CBOR that gets decoded too.
 */
const COSE_KEYS = new Set(['issuerAuth', 'deviceSignature', 'deviceMac'])

class Refused extends Error {}

interface Budget {
  items: number
  readonly maxItems: number
  readonly maxDepth: number
}

interface Frame {
  /** Child items still to read (a map counts keys and values). */
  left: number
  /** Child items read so far. */
  index: number
  major: number
  tag: number
  /** An array in COSE_Sign1 / COSE_Mac0 position: children 0 and 2 are embedded CBOR. */
  cose: boolean
  /** In a map, the key just read names a COSE structure. */
  coseValue: boolean
}

/**
 * Checks that `bytes` hold exactly one well-formed CBOR item within the limits, with only the tags
 * of mdoc and COSE, no indefinite lengths, no unassigned simple values and no declared length
 * beyond the input. Byte strings under tag 24, and the protected header and payload of COSE
 * structures, are checked as CBOR too, with the same item budget. Each byte is read once: the time
 * is linear in the input.
 */
export function checkCbor(bytes: Uint8Array, options: CheckCborOptions = {}): CheckCborResult {
  const budget: Budget = {
    items: 0,
    maxItems: options.maxItems ?? CBOR_LIMITS.maxItems,
    maxDepth: options.maxDepth ?? CBOR_LIMITS.maxDepth,
  }
  try {
    scan(bytes, 0, budget)
    return { ok: true }
  } catch (error) {
    if (error instanceof Refused) return { ok: false, reason: error.message }
    throw error
  }
}

const MAJOR_NAMES = [
  'an unsigned integer',
  'a negative integer',
  'a byte string',
  'a text string',
  'an array',
  'a map',
  'a tag',
  'a simple value or float',
]

/** Scans one item that fills `bytes`, nested `outerDepth` levels deep. */
function scan(bytes: Uint8Array, outerDepth: number, budget: Budget): void {
  const end = bytes.length
  const frames: Frame[] = []
  let pos = 0
  do {
    if (pos >= end) throw new Refused('the input ends inside an item')
    const initial = bytes[pos] as number
    const major = initial >> 5
    const info = initial & 31
    pos++
    if (info >= 28 && info <= 30) throw new Refused(`reserved additional information ${info}`)
    if (info === 31) {
      throw new Refused(
        major === SIMPLE ? 'a break outside an indefinite-length item' : 'an indefinite-length item',
      )
    }
    const size = info < 24 ? 0 : 1 << (info - 24)
    if (size > end - pos) throw new Refused('the input ends inside an item')
    let argument = info
    if (size) {
      argument = 0
      for (let i = 0; i < size; i++) argument = argument * 256 + (bytes[pos + i] as number)
      pos += size
    }
    if (++budget.items > budget.maxItems) throw new Refused(`more than ${budget.maxItems} data items`)
    const parent = frames[frames.length - 1]
    const depth = outerDepth + frames.length + 1
    if (parent?.major === TAG && !TAGS.get(parent.tag)?.includes(major)) {
      throw new Refused(`tag ${parent.tag} encloses ${MAJOR_NAMES[major]}`)
    }
    // Children 0 and 2 of a COSE array are embedded CBOR; a map key may name a COSE structure.
    const embedded =
      major === BYTES &&
      argument > 0 &&
      (parent?.tag === 24 || (parent?.cose === true && (parent.index === 0 || parent.index === 2)))
    const coseArray =
      major === ARRAY &&
      ((parent?.major === TAG && (parent.tag === 17 || parent.tag === 18)) ||
        (parent?.major === MAP && parent.index % 2 === 1 && parent.coseValue))
    if (parent?.major === MAP && parent.index % 2 === 0) {
      parent.coseValue =
        major === TEXT &&
        argument <= 16 &&
        argument <= end - pos &&
        COSE_KEYS.has(latin1(bytes, pos, argument))
    }

    let children = 0
    switch (major) {
      case BYTES:
      case TEXT:
        if (argument > end - pos) throw new Refused(`a declared length of ${argument} runs past the input`)
        if (embedded) scan(bytes.subarray(pos, pos + argument), depth, budget)
        pos += argument
        break
      case ARRAY:
      case MAP:
        children = major === MAP ? argument * 2 : argument
        // Every item takes at least one byte.
        if (children > end - pos) throw new Refused(`a declared length of ${argument} runs past the input`)
        if (children > budget.maxItems - budget.items)
          throw new Refused(`more than ${budget.maxItems} data items`)
        break
      case TAG:
        if (argument === 2 || argument === 3)
          throw new Refused(`a bignum (tag ${argument}), which no mdoc or COSE structure uses`)
        if (!TAGS.has(argument)) throw new Refused(`tag ${argument}, which no mdoc or COSE structure uses`)
        children = 1
        break
      case SIMPLE:
        // false, true, null, undefined and the three float sizes; every other simple value is unused.
        if (info < 20 || info === 24)
          throw new Refused('a simple value other than false, true, null or undefined')
        break
    }
    if (children > 0) {
      if (depth > budget.maxDepth) throw new Refused(`nesting deeper than ${budget.maxDepth} levels`)
      frames.push({
        left: children,
        index: 0,
        major,
        tag: major === TAG ? argument : -1,
        cose: coseArray,
        coseValue: false,
      })
      continue
    }
    // The item is complete: so is every container whose last child it was.
    for (let top = frames[frames.length - 1]; top; top = frames[frames.length - 1]) {
      top.index++
      if (--top.left > 0) break
      frames.pop()
    }
  } while (frames.length > 0)
  if (pos !== end) throw new Refused('bytes after the CBOR item')
}

function latin1(bytes: Uint8Array, start: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(start, start + length))
}

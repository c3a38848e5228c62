import type { Encoder, Tag as TagClass } from 'cbor-x'

/**
 * CBOR as ISO 18013-5 needs it: maps with integer keys stay maps, byte strings are plain major
 * type 2 (cbor-x would otherwise tag Uint8Array), no cbor-x record extensions. Loaded with the
 * first mdoc issued or read: processes that never see one do not hold cbor-x in memory.
 */
let codec: Promise<{ cbor: Encoder; Tag: typeof TagClass }> | undefined
export const loadCbor = () =>
  (codec ??= import('cbor-x').then(({ Encoder, Tag }) => ({
    cbor: new Encoder({
      useRecords: false,
      tagUint8Array: false,
      mapsAsObjects: false,
      variableMapSize: true,
    }),
    Tag,
  })))

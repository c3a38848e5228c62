import {
  BITSTRING_PURPOSES,
  type BitstringPurpose,
  bitstringStatusListUri,
} from '@credential-service/core-domain'
import type { StatusListView } from '../format-runtime'
import { signBitstringStatusList } from './bitstring-status-list'

/** The status each purpose's bit stands for in a list's entries (TSL §7.1: 1 INVALID, 2 SUSPENDED). */
const STATUS_OF: Record<BitstringPurpose, number> = { revocation: 1, suspension: 2 }

/**
 * The issuer's status lists as W3C BitstringStatusListCredentials (Bitstring Status List §2.2),
 * one per purpose, which jwt_vc_json credentials name (`bitstringStatusEntries`): the lists are
 * the Token Status Lists every format shares, so one revocation shows in both.
 */
export const bitstringStatusListView: StatusListView = {
  name: 'bitstring',
  variants: BITSTRING_PURPOSES,
  contentType: 'application/vc+jwt',
  sign: (options) => {
    const purpose = options.variant as BitstringPurpose
    return signBitstringStatusList({
      signer: options.signer,
      issuer: options.issuer,
      uri: bitstringStatusListUri(options.listUri, purpose),
      purpose,
      size: options.size,
      set: options.entries.filter((entry) => entry.status === STATUS_OF[purpose]).map((entry) => entry.idx),
      issuedAt: options.issuedAt,
      expiresAt: options.expiresAt,
      ttlSeconds: options.ttlSeconds,
    })
  },
}

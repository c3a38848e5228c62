/**
 * The W3C Bitstring Status List purposes this service publishes for each of its status lists
 * (Bitstring Status List §2.1): `revocation` carries the lists' INVALID entries, `suspension`
 * their SUSPENDED ones, so a jwt_vc_json credential names both.
 */
export const BITSTRING_PURPOSES = ['revocation', 'suspension'] as const
export type BitstringPurpose = (typeof BITSTRING_PURPOSES)[number]

/**
 * Where the issuer publishes the status list credential of one of its lists for one purpose:
 * under the list's Token Status List URI, so that a list has one address space.
 */
export const bitstringStatusListUri = (listUri: string, purpose: BitstringPurpose): string =>
  `${listUri}/bitstring/${purpose}`

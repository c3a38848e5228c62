/**
 * The certificates a tenant trusts for credential issuers (HAIP 6.1.1, checklist V-32), shared with
 * the management API (save-time `trusted_authorities` checks) and request building: see
 * issuerTrustAnchors. Of a key chain certified by someone else, only its own leaf is an anchor.
 */
export { issuerTrustAnchors as trustAnchors } from '@credential-service/server-kit'

/** The certificates a presentation configuration's trust lists contribute: see server-kit. */
export { etsiTrustedLists, trustListCertificates } from '@credential-service/server-kit'

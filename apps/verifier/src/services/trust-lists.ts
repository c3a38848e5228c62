// Shared with the issuer (wallet providers' trust lists): see server-kit.
export { trustListCertificates } from '@credential-service/server-kit'

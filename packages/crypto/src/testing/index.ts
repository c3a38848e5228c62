// Local implementations of external key stores' wire protocols, for tests only.

export { startFakeKms } from './fake-kms'
export { startFakeVault } from './fake-vault'
export type { TestCertificate, TestCertificateOptions } from './test-certificates'
export { dnsNameConstraints, issueTestCertificate } from './test-certificates'
export type { GeneratedKey } from './test-keys'
export { generateTestKey } from './test-keys'

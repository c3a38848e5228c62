// Local implementations of external key stores' wire protocols, for tests only.

export { startFakeAzureKeyVault } from './fake-azure-key-vault'
export { startFakeGcpKms } from './fake-gcp-kms'
export { startFakeKms } from './fake-kms'
export { startFakeVault } from './fake-vault'
export {
  entityList,
  hugeAttributeList,
  manyAttributesList,
  nestedList,
  withSiblings,
} from './hostile-lists'
export type { SoftHsmToken } from './softhsm'
export {
  changeSoftHsmPin,
  createSoftHsmToken,
  dropSoftHsmSessions,
  loadPkcs11Module,
  SOFTHSM_MODULE,
} from './softhsm'
export type { TestCertificate, TestCertificateOptions, TestSubtree } from './test-certificates'
export { certificateSigner, issueTestCertificate, nameConstraintsDer } from './test-certificates'
export type { GeneratedKey } from './test-keys'
export { generateTestKey } from './test-keys'
export type {
  TestListKeyType,
  TestListPointer,
  TestListService,
  TestListSigner,
  TestXades,
} from './trusted-list'
export {
  buildListOfTrustedEntities,
  buildTrustedList,
  createTestListSigner,
  signListOfTrustedEntities,
  signTrustedList,
} from './trusted-list'

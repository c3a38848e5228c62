import { type TestDatabase, testDatabases } from '@credential-service/db-schema/testing'
import { describe, expect, it } from 'vitest'
import { ConfigError } from './env'
import { verifyMasterSecret } from './key-runtime'

describe('MASTER_SECRET guard', () => {
  it('a database remembers its MASTER_SECRET: another secret stops start-up with a clear error', async () => {
    // A fresh embedded database of its own: the shared test database keeps the suites' secret.
    const database = await (testDatabases()[0] as TestDatabase).open()
    try {
      await verifyMasterSecret(database.db, 'the-first-master-secret-0123456789abcdef')
      await verifyMasterSecret(database.db, 'the-first-master-secret-0123456789abcdef')
      const error = await verifyMasterSecret(database.db, 'another-master-secret-0123456789abcdef').catch(
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).issues).toStrictEqual([
        'MASTER_SECRET does not match the secret this database was set up with; keys encrypted under the old secret could not be read',
      ])
      expect(String((error as Error).message)).not.toContain('another-master-secret')
    } finally {
      await database.close()
    }
  })
})

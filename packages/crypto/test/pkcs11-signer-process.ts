// A second process on the same PKCS#11 token (pkcs11.test.ts): signs `count` times at once with
// the key named on the command line and prints the signatures, base64url, one per line. With
// `generate`, it first makes that key on the token.
import { base64url } from 'jose'
import { createPkcs11Provider } from '../src/providers/pkcs11'

const [mode, keyId, count] = process.argv.slice(2) as [string, string, string]
const provider = createPkcs11Provider({
  module: process.env.PKCS11_MODULE as string,
  tokenLabel: process.env.PKCS11_TOKEN_LABEL as string,
  pin: process.env.TEST_PKCS11_PIN as string,
  sessions: 3,
})
if (mode === 'generate') await (provider.generate as NonNullable<typeof provider.generate>)(keyId, 'ES256')
const signatures = await Promise.all(
  Array.from({ length: Number(count) }, (_, i) =>
    provider.sign(keyId, 'ES256', new TextEncoder().encode(`message ${i}`)),
  ),
)
process.stdout.write(`${signatures.map((signature) => base64url.encode(signature)).join('\n')}\n`)
await provider.close()

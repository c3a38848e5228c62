import { SignJWT } from 'jose'

/**
 * The `kbSigner` of @sd-jwt/sd-jwt-vc for a holder key: signs the KB-JWT signing input with jose
 * and returns the signature part, as the library expects.
 */
export function kbSigner(privateKey: Parameters<SignJWT['sign']>[0]) {
  return async (data: string): Promise<string> => {
    const [header, payload] = data.split('.')
    const jwt = await new SignJWT(JSON.parse(Buffer.from(payload as string, 'base64url').toString()))
      .setProtectedHeader(JSON.parse(Buffer.from(header as string, 'base64url').toString()))
      .sign(privateKey)
    return jwt.split('.')[2] as string
  }
}

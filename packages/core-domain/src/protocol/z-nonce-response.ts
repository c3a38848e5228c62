import { z } from 'zod'

/** The nonce endpoint's answer (OpenID4VCI 1.0 §7.2): a fresh `c_nonce` for the next proofs. */
export const zNonceResponse = z.object({ c_nonce: z.string().min(1) }).loose()
export type NonceResponse = z.infer<typeof zNonceResponse>

import type { DcqlQuery } from '../contract/dcql'
import type { CredentialFormat } from '../formats/registry'
import { allFormatSpecs } from '../formats/registry'
import type { IaFormResponseMode } from './interactive-authorization-forms'
import type { RequestObject } from './z-request-object'

/**
 * Formats and algorithms we verify (OpenID4VP 1.0 §11.1, checklist V-09): each format's entry
 * (formats/<name>/spec.ts `vpFormatsSupported`).
 */
export const VP_FORMATS_SUPPORTED: Record<CredentialFormat, Record<string, unknown>> = Object.fromEntries(
  allFormatSpecs().map((spec) => [spec.format, spec.vpFormatsSupported]),
) as Record<CredentialFormat, Record<string, unknown>>
export const RESPONSE_ENC_VALUES = ['A128GCM', 'A256GCM']

export interface AuthorizationRequestParamsOptions {
  /** The full client identifier, prefix included (OpenID4VP 1.0 §5.9.3, §14.10). */
  clientId: string
  responseMode: RequestObject['response_mode']
  responseUri: string
  nonce: string
  state: string
  dcqlQuery: DcqlQuery
  /** The public ECDH-ES key of this request, with `kid`, `alg` and `use` (HAIP 5: one per request). */
  encryptionJwk: Record<string, unknown>
  /** base64url JSON objects (§5.1); null or undefined sends none. */
  transactionData?: string[] | null | undefined
}

/**
 * The authorization request parameters every request carries (OpenID4VP 1.0 §5.1, §5.2), signed
 * in a request object or, for the `redirect_uri` prefix, sent by value: with that prefix all
 * verifier metadata is in `client_metadata` (§5.9.3, checklist V-07), which is what we send anyway.
 */
export function authorizationRequestParams(options: AuthorizationRequestParamsOptions) {
  return {
    client_id: options.clientId,
    response_type: 'vp_token' as const,
    response_mode: options.responseMode,
    response_uri: options.responseUri,
    nonce: options.nonce,
    state: options.state,
    dcql_query: options.dcqlQuery,
    client_metadata: {
      jwks: { keys: [options.encryptionJwk] },
      vp_formats_supported: VP_FORMATS_SUPPORTED,
      encrypted_response_enc_values_supported: RESPONSE_ENC_VALUES,
    },
    ...(options.transactionData ? { transaction_data: options.transactionData } : {}),
  }
}

/**
 * An unsigned request passed by value (OpenID4VP 1.0 §5.9.3 `redirect_uri`: such a request cannot
 * be signed, and JAR's `request_uri` carries signed request objects): the `openid4vp://` URI with
 * every parameter, objects and arrays as JSON (§5.1).
 */
export function authorizationRequestByValue(params: ReturnType<typeof authorizationRequestParams>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params))
    query.set(name, typeof value === 'string' ? value : JSON.stringify(value))
  return `openid4vp://?${query}`
}

/** The response mode over the Digital Credentials API that matches a redirect flow's (OpenID4VP 1.0 A.2). */
export const dcApiResponseMode = (responseMode: string): 'dc_api' | 'dc_api.jwt' =>
  responseMode === 'direct_post' ? 'dc_api' : 'dc_api.jwt'

/**
 * The request parameters of OpenID4VP over the Digital Credentials API (OpenID4VP 1.0 A.2, A.3,
 * checklist V-31): no `state` and no `response_uri` (the browser returns the answer to the page,
 * which is bound by the nonce and the origin), no `client_id` in an unsigned request (the wallet
 * takes `origin:<origin>`); a signed one adds `client_id` and `expected_origins`.
 */
export function dcApiRequestParams(
  options: Omit<AuthorizationRequestParamsOptions, 'clientId' | 'responseUri' | 'state' | 'responseMode'> & {
    /** DC API modes (A.2), or Interactive Authorization's `ia_post` / `ia_post.jwt` (OpenID4VCI 1.1). */
    responseMode: 'dc_api' | 'dc_api.jwt' | IaFormResponseMode
  },
) {
  return {
    response_type: 'vp_token' as const,
    response_mode: options.responseMode,
    nonce: options.nonce,
    dcql_query: options.dcqlQuery,
    client_metadata: {
      ...(options.responseMode.endsWith('.jwt')
        ? {
            jwks: { keys: [options.encryptionJwk] },
            encrypted_response_enc_values_supported: RESPONSE_ENC_VALUES,
          }
        : {}),
      vp_formats_supported: VP_FORMATS_SUPPORTED,
    },
    ...(options.transactionData ? { transaction_data: options.transactionData } : {}),
  }
}

export type {
  AccessTokenOptions,
  ClientCredentialsOptions,
  ManagementClient,
  ManagementClientOptions,
} from './client.js'
export { createManagementClient } from './client.js'
export type {
  DcApiFallbackReason,
  DcApiOutcome,
  DcApiRequest,
  PresentWithDigitalCredentialsOptions,
} from './dc-api.js'
export { DcApiResponseError, digitalCredentialsSupported, presentWithDigitalCredentials } from './dc-api.js'
export type { ManagementApiErrorInit } from './errors.js'
export { ManagementApiError } from './errors.js'
export type { ServerSentEvent } from './events.js'
export { readEventStream, TOKEN_EXPIRED_EVENT } from './events.js'
export type { ManagementOperations } from './generated/operations.js'
// The wallet-facing messages (OpenID4VCI, OpenID4VP), from the service's own schemas.
export type * as protocol from './generated/protocol.js'
export type { components, operations, paths, webhooks } from './generated/schema.js'
// Every component schema of the OpenAPI description is public: one named type each.
export type * from './generated/types.js'
export type { AuthorizationCodeTokenOptions, ClientCredentialsTokenOptions } from './token.js'
export { requestAuthorizationCodeToken, requestClientCredentialsToken } from './token.js'
export type { CallOptions, StreamOptions } from './transport.js'
export type { SessionStatus, WaitForSessionOptions } from './wait.js'
export { FINAL_SESSION_STATUSES, SessionWaitError } from './wait.js'
export type { VerifyWebhookOptions, WebhookEvent, WebhookEventType } from './webhooks.js'
export { verifyWebhook, WebhookVerificationError } from './webhooks.js'

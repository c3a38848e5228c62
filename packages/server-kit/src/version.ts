/** Service version, sent as `X-Service-Version` and by `/api/health` (never by `GET /`, spec §9.1). */
export const SERVICE_VERSION = '5.3.0'

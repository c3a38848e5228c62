/**
 * The OpenAPI document's top-level `tags` (OpenAPI 3.1 §4.8.1): every tag an operation or webhook
 * uses, in the order a reader meets the tasks, each with what it groups. docs.test.ts checks that
 * the operations use exactly these.
 */
export const TAGS = [
  { name: 'health', description: 'Status and version of the service' },
  { name: 'oauth2', description: 'Management tokens (client credentials) and the keys that verify them' },
  { name: 'tenants', description: 'Tenants (operator clients only)' },
  { name: 'clients', description: 'API clients of a tenant and their roles' },
  { name: 'key-chains', description: 'Signing keys and certificates of a tenant' },
  { name: 'credential-configs', description: 'What the issuer issues: credential configurations' },
  {
    name: 'schema-metadata',
    description: 'Type metadata and schemas published for credential configurations',
  },
  { name: 'attribute-providers', description: 'Services the issuer asks for claims at issuance' },
  { name: 'login-providers', description: 'How holders log in during the authorization code flow' },
  {
    name: 'auth-servers',
    description: 'External OAuth authorization servers whose access tokens the issuer accepts',
  },
  { name: 'offers', description: 'Credential offers: start an issuance' },
  { name: 'credential-status', description: 'Status lists and the status of issued credentials' },
  { name: 'presentation-configs', description: 'What the verifier asks for: presentation configurations' },
  { name: 'presentation-requests', description: 'Presentation requests: start a verification' },
  { name: 'trust-lists', description: 'Trusted lists of issuers and wallet providers' },
  { name: 'wallet-providers', description: 'Wallet providers whose attestations the issuer accepts' },
  { name: 'registrar', description: 'Registration of the tenant as a relying party' },
  { name: 'federation', description: "The tenant's OpenID Federation membership and entity configurations" },
  { name: 'sessions', description: 'Issuance and presentation sessions, their state and event stream' },
  { name: 'webhook-endpoints', description: 'Where events are delivered, and their deliveries' },
  { name: 'webhooks', description: 'The events webhook endpoints receive' },
  { name: 'audit', description: 'Who changed what' },
  { name: 'metrics', description: 'Prometheus metrics' },
] as const

import { describe, expect, it } from 'vitest'
import { zAuthorizationServerMetadata } from './z-authorization-server-metadata'

describe('authorization server metadata (RFC 8414 §2)', () => {
  it('RFC 8414 §3.2: the example response parses, with members of later specifications', () => {
    const metadata = {
      issuer: 'https://server.example.com',
      authorization_endpoint: 'https://server.example.com/authorize',
      token_endpoint: 'https://server.example.com/token',
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'],
      jwks_uri: 'https://server.example.com/jwks.json',
      response_types_supported: ['code', 'code token'],
      service_documentation: 'http://server.example.com/service_documentation.html',
      pushed_authorization_request_endpoint: 'https://server.example.com/par',
      'pre-authorized_grant_anonymous_access_supported': true,
    }
    expect(zAuthorizationServerMetadata.parse(metadata)).toStrictEqual(metadata)
  })

  it('RFC 8414 §2: issuer and response_types_supported are required', () => {
    expect(zAuthorizationServerMetadata.safeParse({ response_types_supported: ['code'] }).success).toBe(false)
    expect(zAuthorizationServerMetadata.safeParse({ issuer: 'https://as.example' }).success).toBe(false)
  })
})

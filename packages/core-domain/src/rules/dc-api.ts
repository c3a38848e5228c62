import type { DcqlQuery } from '../contract/dcql'
import {
  type ClientIdPrefix,
  type DcApiProtocol,
  type DcApiSettings,
  DEFAULT_DC_API_PROTOCOLS,
} from '../contract/presentation-config'
import type { ValidationIssue } from '../errors'
import { allFormatSpecs, formatSpec, queriedTypes } from '../formats/registry'
import type { OutboundUrlPolicy } from './outbound-url'

interface DcApiConfig {
  clientIdPrefix: ClientIdPrefix
  dcqlQuery: DcqlQuery
  dcApi?: DcApiSettings | undefined
}

/**
 * Why a configuration cannot be asked for in `protocol`, or undefined. A `redirect_uri` client
 * cannot sign (OpenID4VP 1.0 §5.9.3) and is not allowed over the DC API at all (A.3); an Annex C
 * DeviceRequest carries one mdoc document request, so the query must ask for one mso_mdoc credential.
 */
export function dcApiProtocolUnfit(protocol: DcApiProtocol, config: DcApiConfig): string | undefined {
  if (protocol === 'openid4vp-v1-signed' && config.clientIdPrefix === 'redirect_uri')
    return 'a redirect_uri client cannot sign requests (OpenID4VP 1.0 §5.9.3)'
  if (protocol === 'org-iso-mdoc') {
    const [first, ...rest] = config.dcqlQuery.credentials
    if (!first || rest.length > 0)
      return 'ISO/IEC 18013-7 Annex C asks for one mdoc: the query must hold exactly one mso_mdoc credential'
    return annexCUnfit(first)
  }
  return undefined
}

/**
 * Why a DCQL credential query has no Annex C ItemsRequest, or undefined. What an ItemsRequest
 * cannot say is refused rather than dropped: alternatives (`claim_sets`), several documents,
 * trusted authorities, paths other than [namespace, element], and a query without claims (an empty
 * request asks for nothing). `values` are asked as the element and checked in the answer.
 */
export function annexCUnfit(credential: DcqlQuery['credentials'][number]): string | undefined {
  if (!formatSpec(credential.format).annexC || !queriedTypes(credential)) {
    // The formats an ItemsRequest can name (their spec's `annexC`: mso_mdoc, by its doctype_value).
    const annexC = allFormatSpecs().filter((spec) => spec.annexC)
    return `ISO/IEC 18013-7 Annex C asks for an ${annexC.map((spec) => spec.format).join(' or ')} credential with ${annexC.map((spec) => spec.metaMember).join(' or ')}`
  }
  const cannot = (what: string) => `${what} cannot be expressed in an Annex C DeviceRequest`
  if (credential.claim_sets) return cannot('claim_sets')
  if (credential.multiple) return cannot('multiple')
  if (credential.trusted_authorities) return cannot('trusted_authorities')
  if (!credential.claims?.length) return cannot('a query without claims')
  for (const claim of credential.claims) {
    if (claim.path.length !== 2 || claim.path.some((part) => typeof part !== 'string'))
      return cannot(`claim path ${JSON.stringify(claim.path)} (not [namespace, element])`)
  }
  return undefined
}

/** The protocols a dc-api request of this configuration offers, in the tenant's order. */
export function dcApiProtocols(config: DcApiConfig): DcApiProtocol[] {
  if (config.dcApi?.protocols) return config.dcApi.protocols
  return DEFAULT_DC_API_PROTOCOLS.filter((protocol) => dcApiProtocolUnfit(protocol, config) === undefined)
}

/**
 * Save-time rules of `dcApi`: each listed protocol fits, origins are https (http only in
 * development), reader authentication only with an Annex C request to sign.
 */
export function checkDcApiSettings(
  config: DcApiConfig,
  policy: Pick<OutboundUrlPolicy, 'allowHttp'>,
  path: string,
): ValidationIssue[] {
  const issues: ValidationIssue[] = []
  config.dcApi?.protocols?.forEach((protocol, index) => {
    const unfit = dcApiProtocolUnfit(protocol, config)
    if (unfit) issues.push({ path: `${path}.protocols.${index}`, message: `${protocol}: ${unfit}` })
  })
  if (config.dcApi?.readerAuth && !dcApiProtocols(config).includes('org-iso-mdoc'))
    issues.push({
      path: `${path}.readerAuth`,
      message:
        'reader authentication signs the Annex C DeviceRequest: the configuration offers no org-iso-mdoc',
    })
  config.dcApi?.origins?.forEach((origin, index) => {
    const issue = originIssue(origin, policy)
    if (issue) issues.push({ path: `${path}.origins.${index}`, message: issue })
  })
  return issues
}

/** A page origin must be https; http only where OUTBOUND_ALLOW_HTTP is set (a page on localhost). */
export function originIssue(
  origin: string,
  policy: Pick<OutboundUrlPolicy, 'allowHttp'>,
): string | undefined {
  if (origin.startsWith('https://') || (policy.allowHttp && origin.startsWith('http://'))) return undefined
  return `must use https${policy.allowHttp ? ' or http' : ''}`
}

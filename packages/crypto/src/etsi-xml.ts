import { loadXmlDom, type XmlDocument, type XmlNode } from './xml-modules'

/** ETSI TS 119 612 namespace of the trusted list elements. */
export const TSL_NS = 'http://uri.etsi.org/02231/v2#'
export const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#'

export class TrustedListError extends Error {}

export function children(parent: XmlNode, name: string, ns = TSL_NS): XmlNode[] {
  const found: XmlNode[] = []
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && node.localName === name && node.namespaceURI === ns) found.push(node)
  }
  return found
}

export const child = (parent: XmlNode | undefined, name: string, ns = TSL_NS) =>
  parent ? children(parent, name, ns)[0] : undefined
export const text = (element: XmlNode | undefined) => element?.textContent?.trim() ?? ''

/** Parses XML, refusing anything not well-formed (xmldom otherwise recovers silently). */
export async function parseXml(source: string, what = 'the list'): Promise<XmlDocument> {
  const { DOMParser } = await loadXmlDom()
  const errors: string[] = []
  const doc = new DOMParser({
    errorHandler: { error: (m: string) => errors.push(m), fatalError: (m: string) => errors.push(m) },
  }).parseFromString(source, 'application/xml')
  if (errors.length || !doc.documentElement) throw new TrustedListError(`${what} is not well-formed XML`)
  return doc
}

/** A date of a list (ISO 8601 text; empty: none), or the refusal naming what it is. */
export function listDate(value: string, what: string): Date | null {
  if (!value) return null
  const parsed = new Date(value)
  if (Number.isNaN(parsed.getTime()))
    throw new TrustedListError(`${what} is not a date: ${value.slice(0, 40)}`)
  return parsed
}

/** The PEM of a base64 DER certificate as the lists carry it (any whitespace inside). */
export const pemOf = (base64: string) =>
  `-----BEGIN CERTIFICATE-----\n${base64
    .replace(/\s+/g, '')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`

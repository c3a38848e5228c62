/**
 * xml-crypto and @xmldom/xmldom, loaded on first use and typed here with the little the service
 * uses: their own typings pull in the DOM lib (`/// <reference lib="dom">`), which would change
 * global types (Crypto, BufferSource) for every package compiled with them.
 */

import type { KeyLike } from 'node:crypto'

export interface XmlNode {
  nodeType: number
  localName: string | null
  namespaceURI: string | null
  textContent: string | null
  firstChild: XmlNode | null
  nextSibling: XmlNode | null
  /** Elements only. */
  getAttribute(name: string): string | null
}

export interface XmlDocument {
  documentElement: XmlNode | null
}

interface DomParserModule {
  DOMParser: new (options: {
    errorHandler: { error: (message: string) => void; fatalError: (message: string) => void }
  }) => { parseFromString(source: string, mimeType: string): XmlDocument }
}

export interface XmlReference {
  uri?: string
  transforms: readonly string[]
  signedReference?: string
}

export interface SignedXmlOptions {
  publicCert?: string
  privateKey?: string
  getCertFromKeyInfo?: () => string | null
  /** Attributes that hold a reference's target id; default Id, ID and id (a pass over the document each). */
  idAttributes?: string[]
  signatureAlgorithm?: string
  canonicalizationAlgorithm?: string
  /** ds:Object elements the signer adds (e.g. XAdES QualifyingProperties). */
  objects?: { content: string; attributes?: Record<string, string> }[]
}

/** A signature method as xml-crypto calls it (synchronous forms). */
export interface XmlSignatureAlgorithm {
  getAlgorithmName(): string
  verifySignature(material: string, key: KeyLike, signatureValue: string): boolean
  getSignature(signedInfo: string, privateKey: KeyLike): string
}

export interface XmlHashAlgorithm {
  getAlgorithmName(): string
  getHash(xml: string): string
}

export interface SignedXmlInstance {
  /** The signature methods by URI; more can be registered (xml-crypto "Customizing Algorithms"). */
  SignatureAlgorithms: Record<string, new () => XmlSignatureAlgorithm>
  HashAlgorithms: Record<string, new () => XmlHashAlgorithm>
  loadSignature(signature: XmlNode): void
  checkSignature(xml: string): boolean
  getReferences(): XmlReference[]
  addReference(reference: {
    xpath: string
    uri: string
    isEmptyUri: boolean
    transforms: string[]
    digestAlgorithm: string
    type?: string
  }): void
  computeSignature(
    xml: string,
    options: { location: { reference: string; action: 'append' }; attrs?: Record<string, string> },
  ): void
  getSignedXml(): string
}

interface XmlCryptoModule {
  SignedXml: new (options: SignedXmlOptions) => SignedXmlInstance
}

// Names in variables: the compiler then does not read the packages' typings (see above). The
// bundle keeps npm packages external anyway, so they load from the app's node_modules either way.
const XMLDOM = '@xmldom/xmldom'
const XML_CRYPTO = 'xml-crypto'

export const loadXmlDom = (): Promise<DomParserModule> => import(XMLDOM)
export const loadXmlCrypto = (): Promise<XmlCryptoModule> => import(XML_CRYPTO)

/**
 * What the console shows of an X.509 certificate (RFC 5280), read from its PEM in the browser:
 * names, serial, validity, SANs, whether it is a CA, and its SHA-256 fingerprint. A small DER
 * reader of the few structures needed, so the console loads no X.509 library; anything it cannot
 * read is reported, never guessed.
 */
export interface CertificateDetails {
  subject: string
  issuer: string
  serialNumber: string
  notBefore: Date
  notAfter: Date
  selfIssued: boolean
  isCa: boolean | undefined
  subjectAltNames: string[]
  sha256: string
}

interface Tlv {
  tag: number
  start: number
  end: number
}

const OID_NAMES: Record<string, string> = {
  '2.5.4.3': 'CN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.97': 'organizationIdentifier',
  '1.2.840.113549.1.9.1': 'E',
}
const SUBJECT_ALT_NAME = '2.5.29.17'
const BASIC_CONSTRAINTS = '2.5.29.19'

export function pemToDer(pem: string): Uint8Array<ArrayBuffer> {
  const base64 = pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, '').replace(/\s+/g, '')
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))
}

function read(der: Uint8Array, offset: number): Tlv {
  const tag = der[offset] ?? -1
  let length = der[offset + 1] ?? 0
  let start = offset + 2
  if (length & 0x80) {
    const octets = length & 0x7f
    length = 0
    for (let i = 0; i < octets; i++) length = length * 256 + (der[start + i] ?? 0)
    start += octets
  }
  if (tag < 0 || start + length > der.length) throw new Error('truncated DER')
  return { tag, start, end: start + length }
}

function children(der: Uint8Array, parent: Tlv): Tlv[] {
  const out: Tlv[] = []
  for (let offset = parent.start; offset < parent.end; ) {
    const child = read(der, offset)
    out.push(child)
    offset = child.end
  }
  return out
}

function at(list: Tlv[], index: number): Tlv {
  const item = list[index]
  if (!item) throw new Error('unexpected certificate structure')
  return item
}

const text = (der: Uint8Array, tlv: Tlv) => new TextDecoder().decode(der.subarray(tlv.start, tlv.end))
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

function oid(der: Uint8Array, tlv: Tlv): string {
  const bytes = der.subarray(tlv.start, tlv.end)
  const first = bytes[0] ?? 0
  const parts = [Math.min(2, Math.floor(first / 40)), first - Math.min(2, Math.floor(first / 40)) * 40]
  let value = 0
  for (const byte of bytes.subarray(1)) {
    value = value * 128 + (byte & 0x7f)
    if (!(byte & 0x80)) {
      parts.push(value)
      value = 0
    }
  }
  return parts.join('.')
}

/** A Name as `CN=…, O=…, C=…` (RFC 4514 order is reversed; this keeps the certificate's). */
function name(der: Uint8Array, tlv: Tlv): string {
  return children(der, tlv)
    .flatMap((set) => children(der, set))
    .map((attribute) => {
      const [type, value] = children(der, attribute)
      if (!type || !value) return ''
      const key = oid(der, type)
      return `${OID_NAMES[key] ?? key}=${text(der, value)}`
    })
    .filter(Boolean)
    .join(', ')
}

function time(der: Uint8Array, tlv: Tlv): Date {
  const value = text(der, tlv)
  // UTCTime (0x17) has a two-digit year: 50-99 are 19xx (RFC 5280 §4.1.2.5.1).
  const full = tlv.tag === 0x17 ? `${Number(value.slice(0, 2)) >= 50 ? '19' : '20'}${value}` : value
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(full)
  if (!m) throw new Error(`unreadable time ${value}`)
  const n = (index: number) => Number(m[index])
  return new Date(Date.UTC(n(1), n(2) - 1, n(3), n(4), n(5), n(6)))
}

function extensions(der: Uint8Array, tbs: Tlv[]): { sans: string[]; isCa: boolean | undefined } {
  const wrapper = tbs.find((field) => field.tag === 0xa3)
  const result = { sans: [] as string[], isCa: undefined as boolean | undefined }
  if (!wrapper) return result
  for (const extension of children(der, at(children(der, wrapper), 0))) {
    const parts = children(der, extension)
    const id = oid(der, at(parts, 0))
    const value = read(der, at(parts, parts.length - 1).start)
    if (id === SUBJECT_ALT_NAME) {
      for (const general of children(der, value)) {
        // [2] dNSName, [6] uniformResourceIdentifier, [1] rfc822Name (IA5 strings).
        const kind = { 130: 'DNS', 134: 'URI', 129: 'email' }[general.tag]
        if (kind) result.sans.push(`${kind}:${text(der, general)}`)
      }
    } else if (id === BASIC_CONSTRAINTS) {
      const flag = children(der, value)[0]
      result.isCa = flag?.tag === 0x01 && der[flag.start] !== 0
    }
  }
  return result
}

export async function parseCertificate(pem: string): Promise<CertificateDetails> {
  const der = pemToDer(pem)
  const certificate = read(der, 0)
  const tbs = children(der, at(children(der, certificate), 0))
  // An explicit version ([0]) shifts the fields by one.
  const base = tbs[0]?.tag === 0xa0 ? 1 : 0
  const validity = children(der, at(tbs, base + 3))
  const subject = name(der, at(tbs, base + 4))
  const issuer = name(der, at(tbs, base + 2))
  const serial = at(tbs, base)
  const { sans, isCa } = extensions(der, tbs)
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', der))
  return {
    subject,
    issuer,
    serialNumber: hex(der.subarray(serial.start, serial.end)),
    notBefore: time(der, at(validity, 0)),
    notAfter: time(der, at(validity, 1)),
    selfIssued: subject === issuer,
    isCa,
    subjectAltNames: sans,
    sha256: hex(digest)
      .replace(/(..)(?!$)/g, '$1:')
      .toUpperCase(),
  }
}

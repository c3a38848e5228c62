import { TrustedListError } from './etsi-xml'

/** What a fetched XML list may hold before any DOM is built (checklist S-133). */
export interface XmlPrescanLimits {
  /** Deepest element nesting; real TS 119 612 lists nest about 15 deep. */
  maxDepth: number
  /** Elements in the whole document; a list of several MB has some 100,000. */
  maxElements: number
  /**
   * Child elements of one element: xml-crypto's XPath orders nodes by walking sibling chains, so
   * its cost grows with the square of a long one (16,000 siblings: some 20 s). Real lists spread
   * their services over providers; the EU list of lists has some 40 pointers.
   */
  maxChildren: number
  /** Attributes of one element (namespace declarations included). */
  maxAttributes: number
  /** Characters of one attribute value (URIs and ids in real lists). */
  maxAttributeLength: number
}

export const XML_PRESCAN_LIMITS: XmlPrescanLimits = {
  maxDepth: 64,
  maxElements: 500_000,
  maxChildren: 2000,
  maxAttributes: 64,
  maxAttributeLength: 8192,
}

const refuse = (why: string): never => {
  throw new TrustedListError(`the list is refused before parsing: ${why}`)
}

/** Index just past `end` searched from `from`; refuses a construct that never ends. */
function after(xml: string, end: string, from: number, what: string): number {
  const at = xml.indexOf(end, from)
  if (at < 0) refuse(`${what} is not closed (not well-formed)`)
  return at + end.length
}

/**
 * One pass over the text, before xmldom sees it: xmldom and xml-crypto cost far more than linear
 * time on deep or wide documents, and a DTD can declare entities. Refuses any `<!DOCTYPE`,
 * `<!ENTITY` (any `<!` but comments and CDATA), nesting past `maxDepth`, more than `maxElements`
 * elements or `maxChildren` children of one, and attributes past their limits, naming the reason. Every search moves forward, so
 * the cost is linear in the text's length. Well-formedness is left to the parser.
 */
export function prescanXml(xml: string, limits: XmlPrescanLimits = XML_PRESCAN_LIMITS): void {
  let depth = 0
  let elements = 0
  /** Child elements met so far of each open element, by depth (the document's at 0). */
  const children: number[] = [0]
  let at = xml.indexOf('<')
  while (at >= 0) {
    const next = xml.charCodeAt(at + 1)
    if (next === 0x3f /* ? */) {
      at = after(xml, '?>', at + 2, 'a processing instruction')
    } else if (next === 0x21 /* ! */) {
      if (xml.startsWith('<!--', at)) at = after(xml, '-->', at + 4, 'a comment')
      else if (xml.startsWith('<![CDATA[', at)) at = after(xml, ']]>', at + 9, 'a CDATA section')
      else
        refuse(
          `it has a document type or entity declaration (${/^<![A-Za-z]*/.exec(xml.slice(at, at + 12))?.[0]}); DTDs and entities are not accepted`,
        )
    } else if (next === 0x2f /* / */) {
      depth = Math.max(0, depth - 1)
      at = after(xml, '>', at + 2, 'an end tag')
    } else {
      elements += 1
      if (elements > limits.maxElements) refuse(`it has more than ${limits.maxElements} elements`)
      const siblings = (children[depth] ?? 0) + 1
      if (siblings > limits.maxChildren)
        refuse(`an element has more than ${limits.maxChildren} child elements`)
      children[depth] = siblings
      at = startTag(xml, at + 1, limits)
      if (xml.charCodeAt(at - 2) !== 0x2f /* / */) {
        depth += 1
        if (depth > limits.maxDepth) refuse(`its elements nest deeper than ${limits.maxDepth} levels`)
        children[depth] = 0
      }
    }
    at = xml.indexOf('<', at)
  }
}

/** Reads a start tag's attributes up to its `>`; returns the index past it. */
function startTag(xml: string, from: number, limits: XmlPrescanLimits): number {
  let attributes = 0
  let at = from
  // A global expression searches from lastIndex: no copy of the rest of the text.
  const mark = /["'>]/g
  for (;;) {
    mark.lastIndex = at
    const found = mark.exec(xml)
    if (!found) return refuse('a start tag is not closed (not well-formed)')
    at = found.index
    if (xml[at] === '>') return at + 1
    const close = after(xml, xml[at] as string, at + 1, 'an attribute value') - 1
    attributes += 1
    if (attributes > limits.maxAttributes)
      refuse(`an element has more than ${limits.maxAttributes} attributes`)
    if (close - at - 1 > limits.maxAttributeLength)
      refuse(`an attribute value is longer than ${limits.maxAttributeLength} characters`)
    at = close + 1
  }
}

import { describe, expect, it } from 'vitest'
import {
  buildTrustedList,
  entityList,
  hugeAttributeList,
  manyAttributesList,
  nestedList,
  withSiblings,
} from './testing'
import { prescanXml, XML_PRESCAN_LIMITS } from './xml-prescan'

const refusal = (xml: string) => {
  try {
    prescanXml(xml)
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}

describe('S-133: the linear pre-scan of a fetched list, before any DOM is built', () => {
  it('lets a TS 119 612 list through: declaration, comments, CDATA, namespaces and attributes', () => {
    const list = buildTrustedList({
      issued: new Date(),
      nextUpdate: new Date(),
      services: [{ type: 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC', certificates: [] }],
    }).replace('<tsl:SchemeInformation>', '<!-- a comment --><tsl:SchemeInformation><![CDATA[ <a> ]]>')
    expect(refusal(list)).toBeUndefined()
  })

  it('refuses a DTD or entity declaration (entity expansion)', () => {
    expect(refusal(entityList())).toBe(
      'the list is refused before parsing: it has a document type or entity declaration (<!DOCTYPE); DTDs and entities are not accepted',
    )
    expect(refusal('<a><!ENTITY x "y"></a>')).toMatch('(<!ENTITY)')
  })

  it('refuses nesting past maxDepth: 4,000 deep (32 KB) and 30,000 deep (210 KB), the issue’s shapes', () => {
    for (const depth of [4000, 30_000])
      expect(refusal(nestedList(depth))).toBe(
        `the list is refused before parsing: its elements nest deeper than ${XML_PRESCAN_LIMITS.maxDepth} levels`,
      )
    expect(refusal(nestedList(XML_PRESCAN_LIMITS.maxDepth - 1))).toBeUndefined()
  })

  it('refuses more than maxElements elements, and counts self-closing ones', () => {
    const limits = { ...XML_PRESCAN_LIMITS, maxElements: 100 }
    const list = (n: number) => `<r>${'<e/>'.repeat(n - 1)}</r>`
    expect(() => prescanXml(list(100), limits)).not.toThrow()
    expect(() => prescanXml(list(101), limits)).toThrow('it has more than 100 elements')
  })

  it('refuses more than maxChildren child elements of one element: 16,000 siblings (260 KB), the issue’s shape', () => {
    const siblings = (n: number) => `<r><s>${'<e>x</e>'.repeat(n)}</s><s>${'<e/>'.repeat(n)}</s></r>`
    expect(refusal(siblings(XML_PRESCAN_LIMITS.maxChildren))).toBeUndefined()
    expect(refusal(siblings(XML_PRESCAN_LIMITS.maxChildren + 1))).toBe(
      `the list is refused before parsing: an element has more than ${XML_PRESCAN_LIMITS.maxChildren} child elements`,
    )
    const issue = withSiblings(buildTrustedList({ issued: new Date(), nextUpdate: new Date() }), 16_000)
    expect(issue.length).toBeGreaterThan(250_000)
    expect(refusal(issue)).toMatch(/more than 2000 child elements$/)
  })

  it('refuses an attribute value past maxAttributeLength and an element with too many attributes; a > in a value is no tag end', () => {
    expect(refusal(hugeAttributeList(1_000_000))).toMatch(
      `an attribute value is longer than ${XML_PRESCAN_LIMITS.maxAttributeLength} characters`,
    )
    expect(refusal(hugeAttributeList(XML_PRESCAN_LIMITS.maxAttributeLength))).toBeUndefined()
    expect(refusal(manyAttributesList(XML_PRESCAN_LIMITS.maxAttributes + 1))).toMatch(
      `an element has more than ${XML_PRESCAN_LIMITS.maxAttributes} attributes`,
    )
    expect(refusal(`<r a='x>y' b="<!DOCTYPE"><e/></r>`)).toBeUndefined()
  })

  it('refuses constructs that never close', () => {
    for (const xml of ['<r><!-- open', '<r a="x', '<r><![CDATA[ x', '<?xml version="1.0"'])
      expect(refusal(xml)).toMatch(/is not closed \(not well-formed\)$/)
  })
})

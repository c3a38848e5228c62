/**
 * Hostile XML a list server can answer (issue 36, checklist S-133), of the shapes and sizes the
 * issue measured: each made the service's event loop stall for seconds to minutes.
 */
const TSL = 'xmlns:tsl="http://uri.etsi.org/02231/v2#"'

/** `depth` nested elements under a TrustServiceStatusList (4,000 deep: 32 KB; 30,000: 210 KB). */
export function nestedList(depth: number): string {
  return `<tsl:TrustServiceStatusList ${TSL}>${'<tsl:a>'.repeat(depth)}${'</tsl:a>'.repeat(depth)}</tsl:TrustServiceStatusList>`
}

/** Entity expansion ("billion laughs") through a DTD. */
export function entityList(): string {
  const levels = Array.from({ length: 9 }, (_, n) =>
    n === 0 ? '<!ENTITY l0 "lol">' : `<!ENTITY l${n} "${`&l${n - 1};`.repeat(10)}">`,
  )
  return `<?xml version="1.0"?><!DOCTYPE tsl:TrustServiceStatusList [${levels.join('')}]><tsl:TrustServiceStatusList ${TSL}>&l8;</tsl:TrustServiceStatusList>`
}

/** One attribute value of `length` characters. */
export function hugeAttributeList(length: number): string {
  return `<tsl:TrustServiceStatusList ${TSL} Id="${'x'.repeat(length)}"/>`
}

/** One element with `count` attributes. */
export function manyAttributesList(count: number): string {
  const attributes = Array.from({ length: count }, (_, n) => `a${n}="${n}"`).join(' ')
  return `<tsl:TrustServiceStatusList ${TSL}><tsl:e ${attributes}/></tsl:TrustServiceStatusList>`
}

/**
 * `count` sibling elements added to a list before it is signed (16,000: some 260 KB): a list that
 * the pre-scan lets through and whose check costs its worker seconds.
 */
export function withSiblings(list: string, count: number): string {
  return list.replace(
    '</tsl:TrustServiceStatusList>',
    `${'<tsl:N>x</tsl:N>'.repeat(count)}</tsl:TrustServiceStatusList>`,
  )
}

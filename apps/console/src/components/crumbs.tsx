import { Anchor, Breadcrumbs, Text } from '@mantine/core'
import { Link, useLocation } from 'react-router'
import { GROUPS, PAGE_KEYS, PAGES, type PageKey } from '../access'

/** The page a path belongs to (its own path or one under it) and the segments after it. */
export function pageAt(pathname: string): { page: PageKey; rest: string[] } | undefined {
  const page = PAGE_KEYS.find(
    (key) => pathname === PAGES[key].path || pathname.startsWith(`${PAGES[key].path}/`),
  )
  if (!page) return undefined
  const rest = pathname.slice(PAGES[page].path.length).split('/').filter(Boolean).map(decodeURIComponent)
  return { page, rest }
}

/** Where the page is: group > page > item (issue 42 item 3). */
export function Crumbs() {
  const { pathname } = useLocation()
  const at = pageAt(pathname)
  if (!at) return null
  const { page, rest } = at
  // The item's id, then what is done to it (`.../pid/edit`): one crumb each.
  const crumbs = [
    <Text key="group" size="sm">
      {GROUPS[PAGES[page].group]}
    </Text>,
    rest.length > 0 ? (
      <Anchor key="page" component={Link} to={PAGES[page].path} size="sm">
        {PAGES[page].label}
      </Anchor>
    ) : (
      <Text key="page" size="sm" aria-current="page">
        {PAGES[page].label}
      </Text>
    ),
    ...rest.map((segment, index) => (
      <Text key={`item-${segment}`} size="sm" aria-current={index === rest.length - 1 ? 'page' : undefined}>
        {segment}
      </Text>
    )),
  ]
  return (
    <nav aria-label="Breadcrumb">
      <Breadcrumbs separator=">" mb="sm">
        {crumbs}
      </Breadcrumbs>
    </nav>
  )
}

/**
 * The import graph of the workspace's TypeScript, and the circles in it (issue 21). A circle makes
 * module order matter at load time (a class read before its module ran is `undefined`) and keeps
 * two files from being understood, tested or moved one at a time.
 *
 * Every import counts, `import type` and `import()` included: a type-only circle is still two
 * files that cannot be read apart, and madge, which measured the circles in issue 21, counts it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'

export interface ImportGraphOptions {
  /** The workspace root; files and cycles are named relative to it. */
  root: string
  /** Folders under `root` whose `.ts`/`.mts` files make up the graph; a `*` segment matches any folder. */
  include: string[]
  /** Folders under `root` holding the workspace packages (`package.json` with `name` and `exports`). */
  packages: string[]
}

/** File → the workspace files it imports, both relative to the root. Imports of anything else are left out. */
export type ImportGraph = Map<string, Set<string>>

const extensions = ['.ts', '.mts', '.tsx']

function expand(root: string, pattern: string): string[] {
  let dirs = [root]
  for (const segment of pattern.split('/')) {
    dirs = dirs.flatMap((dir) =>
      segment === '*'
        ? readdirSync(dir, { withFileTypes: true })
            .filter((entry) => entry.isDirectory() && entry.name !== 'node_modules')
            .map((entry) => join(dir, entry.name))
        : [join(dir, segment)],
    )
  }
  return dirs.filter((dir) => existsSync(dir) && statSync(dir).isDirectory())
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path)
    return extensions.some((ext) => entry.name.endsWith(ext)) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** `@credential-service/x/sub` → the file its package.json `exports` names (source, in the workspace). */
function workspaceExports(root: string, packages: string[]): Map<string, string> {
  const entries = new Map<string, string>()
  for (const dir of packages.flatMap((pattern) => expand(root, pattern))) {
    const manifest = join(dir, 'package.json')
    if (!existsSync(manifest)) continue
    const { name, exports } = JSON.parse(readFileSync(manifest, 'utf8')) as {
      name?: string
      exports?: Record<string, unknown>
    }
    if (!name || !exports) continue
    for (const [subpath, target] of Object.entries(exports)) {
      if (typeof target === 'string') entries.set(join(name, subpath), resolve(dir, target))
    }
  }
  return entries
}

function resolveFile(base: string): string | undefined {
  // `./x.js` written for ESM output names `./x.ts` in the source.
  const stem = base.replace(/\.(m?js)$/, '')
  const candidates = [
    base,
    ...extensions.map((ext) => stem + ext),
    ...extensions.map((ext) => join(base, `index${ext}`)),
  ]
  return candidates.find((path) => existsSync(path) && statSync(path).isFile())
}

export function buildImportGraph(options: ImportGraphOptions): ImportGraph {
  const root = resolve(options.root)
  const exported = workspaceExports(root, options.packages)
  const files = options.include.flatMap((pattern) => expand(root, pattern)).flatMap(sourceFiles)
  const graph: ImportGraph = new Map()
  for (const file of files) {
    const edges = new Set<string>()
    // preProcessFile reads import/export-from declarations, `import x = require()` and `import()`,
    // without type-checking anything: the whole workspace takes well under a second.
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    for (const { fileName: specifier } of importedFiles) {
      const target = specifier.startsWith('.')
        ? resolveFile(resolve(dirname(file), specifier))
        : exported.get(specifier)
      if (target) edges.add(relative(root, target))
    }
    graph.set(relative(root, file), edges)
  }
  return graph
}

/** Tarjan's strongly connected components with more than one file, or a file importing itself. */
function knots(graph: ImportGraph): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  let next = 0
  const visit = (node: string) => {
    index.set(node, next)
    low.set(node, next++)
    stack.push(node)
    onStack.add(node)
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to)
        low.set(node, Math.min(low.get(node) as number, low.get(to) as number))
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node) as number, index.get(to) as number))
    }
    if (low.get(node) !== index.get(node)) return
    const component: string[] = []
    let member: string | undefined
    do {
      member = stack.pop() as string
      onStack.delete(member)
      component.push(member)
    } while (member !== node)
    if (component.length > 1 || graph.get(node)?.has(node)) found.push(component)
  }
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node)
  return found
}

/** The shortest way from `start` back to itself inside `component` (breadth first). */
function shortestCycle(graph: ImportGraph, component: Set<string>, start: string): string[] {
  const previous = new Map<string, string>()
  const queue = [start]
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i] as string
    for (const to of [...(graph.get(node) ?? [])].sort()) {
      if (!component.has(to)) continue
      if (to === start) {
        const path = [node]
        while (path[0] !== start) path.unshift(previous.get(path[0] as string) as string)
        return path
      }
      if (!previous.has(to)) {
        previous.set(to, node)
        queue.push(to)
      }
    }
  }
  return [start]
}

/**
 * Each circle as `a.ts > b.ts > a.ts`, starting from its alphabetically first file so that the same
 * circle is always spelt the same: for every file caught in a circle, the shortest one through it.
 */
export function findImportCircles(graph: ImportGraph): string[] {
  const circles = new Set<string>()
  for (const component of knots(graph)) {
    const members = new Set(component)
    for (const start of component) {
      const cycle = shortestCycle(graph, members, start)
      const first = cycle.indexOf([...cycle].sort()[0] as string)
      const rotated = [...cycle.slice(first), ...cycle.slice(0, first)]
      circles.add([...rotated, rotated[0]].join(' > '))
    }
  }
  return [...circles].sort()
}

import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const root = new URL('..', import.meta.url).pathname

function parse(configPath: string) {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'))
      },
    },
  )
  if (!parsed) throw new Error(`cannot read ${configPath}`)
  const { configFilePath: _, ...options } = parsed.options
  return { files: parsed.fileNames, options }
}

/** Browser code, checked as a program of its own (DOM and JSX, no Node types) after the root one. */
const BROWSER_CONFIGS = ['apps/console/tsconfig.json']

const workspaceConfigs = ['apps', 'packages']
  .flatMap((folder) =>
    readdirSync(join(root, folder))
      .map((name) => join(root, folder, name, 'tsconfig.json'))
      .filter((path) => ts.sys.fileExists(path)),
  )
  .filter((path) => !BROWSER_CONFIGS.includes(path.slice(root.length)))

describe('npm test typechecks the workspace as one program (tsconfig.json)', () => {
  const all = parse(join(root, 'tsconfig.json'))

  it.each(BROWSER_CONFIGS.map((path) => [path]))(
    '%s: browser code, its own program with the root options but DOM, JSX and no Node types; npm test runs it',
    (relative) => {
      const own = parse(join(root, relative))
      expect(own.files.length).toBeGreaterThan(0)
      // Its sources are not in the root program (Node types would hide a Node-only global in them).
      expect(own.files.filter((file) => all.files.includes(file))).toStrictEqual([])
      const { lib, jsx, types, ...rest } = own.options
      const { lib: _lib, types: _types, ...rootRest } = all.options
      expect(rest).toStrictEqual(rootRest)
      expect(lib).toStrictEqual(expect.arrayContaining(['lib.dom.d.ts']))
      expect(jsx).toBe(ts.JsxEmit.ReactJSX)
      expect(types).not.toContain('node')
      const run = readFileSync(join(root, 'scripts/run.mjs'), 'utf8')
      expect(run).toContain(`'tsc', '-p', '${relative}'`)
    },
  )

  it.each(workspaceConfigs.map((path) => [path.slice(root.length)]))(
    '%s: every file it checks is in the root program, with the same options',
    (relative) => {
      const own = parse(join(root, relative))
      expect(own.files.length).toBeGreaterThan(0)
      expect(own.files.filter((file) => !all.files.includes(file))).toStrictEqual([])
      expect(own.options).toStrictEqual(all.options)
    },
  )
})

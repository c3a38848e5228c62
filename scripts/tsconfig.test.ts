import { readdirSync } from 'node:fs'
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

const workspaceConfigs = ['apps', 'packages'].flatMap((folder) =>
  readdirSync(join(root, folder))
    .map((name) => join(root, folder, name, 'tsconfig.json'))
    .filter((path) => ts.sys.fileExists(path)),
)

describe('npm test typechecks the workspace as one program (tsconfig.json)', () => {
  const all = parse(join(root, 'tsconfig.json'))

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

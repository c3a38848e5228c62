import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { SERVICE_VERSION } from '../packages/server-kit/src/version'

const root = join(import.meta.dirname, '..')
const json = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8'))
// The committed packages: other suites make scratch folders under apps/ while this one runs.
const workspacePackages = execFileSync(
  'git',
  ['ls-files', 'apps/*/package.json', 'packages/*/package.json'],
  {
    cwd: root,
    encoding: 'utf8',
  },
)
  .split('\n')
  .filter(Boolean)

describe('issue 21: one version for the service, its packages, its OpenAPI description and its changelog', () => {
  const version: string = json('package.json').version

  it('every workspace package carries the root version', () => {
    const versions = Object.fromEntries(workspacePackages.map((path) => [path, json(path).version]))
    expect(Object.values(versions).length).toBeGreaterThan(8)
    expect(versions).toStrictEqual(Object.fromEntries(workspacePackages.map((path) => [path, version])))
  })

  it('X-Service-Version, /api/health and the SDK OpenAPI description say the same version', () => {
    expect(SERVICE_VERSION).toBe(version)
    expect(json('packages/sdk/openapi.json').info.version).toBe(version)
  })

  it('the compose file, the Kubernetes image tag and the migration Job name carry it', () => {
    const text = (path: string) => readFileSync(join(root, path), 'utf8')
    expect(text('docker/compose.yaml')).toContain(`image: credential-service:${version}\n`)
    expect(text('deploy/kubernetes/kustomization.yaml')).toContain(`newTag: ${version}\n`)
    expect(text('deploy/kubernetes/migrate-job.yaml')).toContain(
      `name: credential-service-migrate-${version}\n`,
    )
  })

  it('CHANGELOG.md has a dated section for the version, below Unreleased', () => {
    const headings = readFileSync(join(root, 'CHANGELOG.md'), 'utf8').match(/^## .*$/gm) ?? []
    expect(headings[0]).toBe('## Unreleased')
    expect(headings[1]).toMatch(new RegExp(`^## ${version.replaceAll('.', '\\.')} — \\d{4}-\\d{2}-\\d{2}$`))
  })
})

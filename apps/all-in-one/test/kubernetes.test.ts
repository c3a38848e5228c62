/**
 * deploy/kubernetes against the code: every Deployment runs a command of the image, its probe paths
 * are routes of that app (liveness without a database), its environment names are variables the
 * app parses, and the Ingress routes paths as docker/nginx.conf does.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { deriveManagementSigningKey } from '@credential-service/crypto'
import { TEST_MASTER_SECRET, testDatabases } from '@credential-service/db-schema/testing'
import { buildIssuerApp, zIssuerEnv } from '@credential-service/issuer'
import { buildManagementApp, parseManagementConfig, zManagementEnv } from '@credential-service/management'
import { createKeyRuntime, createServer } from '@credential-service/server-kit'
import { buildVerifierApp, zVerifierEnv } from '@credential-service/verifier'
import type { FastifyPluginAsync } from 'fastify'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { appFor } from '../bench/service'

const root = new URL('../../..', import.meta.url).pathname
const dir = join(root, 'deploy/kubernetes')

// biome-ignore lint/suspicious/noExplicitAny: manifests are loosely typed YAML
type Manifest = Record<string, any>

const kustomization = parseAllDocuments(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'))[0]?.toJS()
const manifests: Manifest[] = (kustomization.resources as string[]).flatMap((file) =>
  parseAllDocuments(readFileSync(join(dir, file), 'utf8')).map((doc) => {
    if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]?.message}`)
    return doc.toJS() as Manifest
  }),
)
const ofKind = (kind: string) => manifests.filter((m) => m.kind === kind)
const named = (kind: string, name: string) => {
  const found = ofKind(kind).find((m) => m.metadata.name === name)
  if (!found) throw new Error(`no ${kind} ${name}`)
  return found
}
const configMap = named('ConfigMap', 'credential-service-config').data as Record<string, string>
const dockerfile = readFileSync(join(root, 'docker/Dockerfile'), 'utf8')
const composeImage = /^\s+image: (credential-service:\S+)$/m.exec(
  readFileSync(join(root, 'docker/compose.yaml'), 'utf8'),
)?.[1]
const imageUser = Number(/^USER (\d+)/m.exec(dockerfile)?.[1])
const SECRET_KEYS = ['MASTER_SECRET', 'DATABASE_URL', 'AUTH_CLIENT_ID', 'AUTH_CLIENT_SECRET']

const APPS = {
  management: { schema: zManagementEnv },
  issuer: { schema: zIssuerEnv },
  verifier: { schema: zVerifierEnv },
} as const
type App = keyof typeof APPS

/** The variables a container gets: the ConfigMaps it imports and its own env entries. */
function containerEnv(container: Manifest): Record<string, string | { secret: string; key: string }> {
  const env: Record<string, string | { secret: string; key: string }> = {}
  for (const from of container.envFrom ?? [])
    Object.assign(env, named('ConfigMap', from.configMapRef.name).data)
  for (const entry of container.env ?? []) {
    const ref = entry.valueFrom?.secretKeyRef
    env[entry.name] = ref ? { secret: ref.name, key: ref.key } : entry.value
  }
  return env
}

/** The image reference after kustomize's `images` transformer. */
function imageOf(container: Manifest): string {
  const override = (kustomization.images ?? []).find((i: Manifest) => i.name === container.image)
  return override ? `${override.newName ?? override.name}:${override.newTag}` : container.image
}

function expectHardened(pod: Manifest, container: Manifest) {
  expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: imageUser })
  expect(container.securityContext).toStrictEqual({
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  })
  // The one writable place is an emptyDir.
  const mounts = container.volumeMounts as Manifest[]
  for (const mount of mounts) {
    const volume = (pod.volumes as Manifest[]).find((v) => v.name === mount.name)
    expect(volume?.emptyDir, mount.mountPath).toStrictEqual({})
  }
}

describe('issue 13: Kubernetes manifests (deploy/kubernetes)', () => {
  it('kustomization.yaml lists every manifest file, and no Secret is included', () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    expect([...kustomization.resources].sort()).toStrictEqual(files.sort())
    expect(ofKind('Secret')).toStrictEqual([])
    expect(ofKind('Deployment').map((d) => d.metadata.name)).toStrictEqual([
      'management',
      'issuer',
      'verifier',
    ])
  })

  it.each(Object.keys(APPS) as App[])(
    '%s: the image and command, port, Service, PodDisruptionBudget and autoscaler of its own',
    (app) => {
      const deployment = named('Deployment', app)
      const pod = deployment.spec.template.spec
      const [container, ...others] = pod.containers as Manifest[]
      expect(others).toStrictEqual([])
      expect(imageOf(container as Manifest)).toBe(composeImage)
      expect(container?.args).toStrictEqual([app])
      expect(dockerfile).toContain('ENTRYPOINT ["/app/entrypoint.sh"]')
      expect(readFileSync(join(root, 'docker/entrypoint.sh'), 'utf8')).toContain(
        'management|issuer|verifier|all-in-one)',
      )
      expect(container?.ports).toStrictEqual([{ name: 'http', containerPort: Number(configMap.PORT) }])
      expectHardened(pod, container as Manifest)

      const labels = deployment.spec.template.metadata.labels
      expect(deployment.spec.selector.matchLabels).toStrictEqual(labels)
      // Separate scaling: the HPA owns the replica count.
      expect(deployment.spec.replicas).toBeUndefined()
      expect(named('HorizontalPodAutoscaler', app).spec.scaleTargetRef).toStrictEqual({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: app,
      })
      expect(named('HorizontalPodAutoscaler', app).spec.minReplicas).toBeGreaterThanOrEqual(2)
      expect(named('Service', app).spec).toStrictEqual({
        selector: labels,
        ports: [{ name: 'http', port: 3000, targetPort: 'http' }],
      })
      expect(named('PodDisruptionBudget', app).spec).toStrictEqual({
        minAvailable: 1,
        selector: { matchLabels: labels },
      })
    },
  )

  it('issue 19: the pods fit the connection budget and the grace period covers drain and close (docs/operations.md)', () => {
    const pool = Number(configMap.DATABASE_POOL_SIZE)
    const drainSeconds = Number(configMap.SHUTDOWN_DRAIN_SECONDS)
    const apps = Object.keys(APPS) as App[]
    // Every pod the HPAs and a rolling update can run at once holds its pool + 1 (LISTEN).
    const pods = apps.reduce(
      (sum, app) =>
        sum +
        named('HorizontalPodAutoscaler', app).spec.maxReplicas +
        named('Deployment', app).spec.strategy.rollingUpdate.maxSurge,
      0,
    )
    // PostgreSQL's default max_connections, less room for the migration Job and operators.
    expect(pods * (pool + 1)).toBeLessThanOrEqual(100 - 15)
    for (const app of apps) {
      const grace = named('Deployment', app).spec.template.spec.terminationGracePeriodSeconds
      expect(grace, app).toBeGreaterThan(drainSeconds + 10)
    }
  })

  it.each(Object.keys(APPS) as App[])(
    '%s: every variable is one the app parses, secrets come from the Secret, the result parses',
    (app) => {
      const container = named('Deployment', app).spec.template.spec.containers[0]
      const env = containerEnv(container)
      const known = Object.keys(APPS[app].schema.shape)
      for (const name of Object.keys(env)) expect(known, name).toContain(name)
      expect(env.HOST).toBe('0.0.0.0')
      const secrets = Object.entries(env).filter(([, value]) => typeof value !== 'string')
      for (const [name, ref] of secrets)
        expect(ref, name).toStrictEqual({ secret: 'credential-service-secrets', key: name })
      expect(secrets.map(([name]) => name).sort()).toStrictEqual(
        (app === 'management' ? SECRET_KEYS : ['MASTER_SECRET', 'DATABASE_URL']).sort(),
      )
      // With the Secret's keys filled in, the app's own schema accepts the environment.
      const sample: Record<string, string> = {
        MASTER_SECRET: 'k8s-test-master-secret-0123456789abcdef',
        DATABASE_URL: 'postgres://u:p@postgres:5432/credentials',
        AUTH_CLIENT_ID: 'root',
        AUTH_CLIENT_SECRET: 'k8s-test-root-secret-0123',
      }
      const filled = Object.fromEntries(
        Object.entries(env).map(([name, value]) => [
          name,
          typeof value === 'string' ? value : sample[value.key],
        ]),
      )
      expect(APPS[app].schema.safeParse(filled).error).toBeUndefined()
    },
  )

  it('the migration Job runs db:migrate from the same image with DATABASE_URL only', () => {
    const [job, ...others] = ofKind('Job')
    expect(others).toStrictEqual([])
    const pod = job?.spec.template.spec
    const container = pod.containers[0]
    expect(imageOf(container)).toBe(composeImage)
    expect(container.args).toStrictEqual(['db:migrate'])
    expect(readFileSync(join(root, 'docker/entrypoint.sh'), 'utf8')).toContain('db:migrate|')
    expect(containerEnv(container)).toStrictEqual({
      DATABASE_URL: { secret: 'credential-service-secrets', key: 'DATABASE_URL' },
    })
    expect(['Never', 'OnFailure']).toContain(pod.restartPolicy)
    expectHardened(pod, container)
  })

  it('the Ingress routes every path to the app docker/nginx.conf routes it to', () => {
    const nginx = readFileSync(join(root, 'docker/nginx.conf'), 'utf8')
    const locations = [...nginx.matchAll(/location (=\s)?(\S+) \{ proxy_pass http:\/\/(\w+):/g)].map((m) => ({
      exact: Boolean(m[1]),
      path: m[2] as string,
      app: m[3] as string,
    }))
    // nginx: an exact location first, then the longest matching prefix.
    const nginxRoute = (path: string) =>
      (
        locations.find((l) => l.exact && l.path === path) ??
        locations
          .filter((l) => !l.exact && path.startsWith(l.path))
          .sort((a, b) => b.path.length - a.path.length)[0]
      )?.app
    const ingress = named('Ingress', 'credential-service')
    const [rule, ...otherRules] = ingress.spec.rules as Manifest[]
    expect(otherRules).toStrictEqual([])
    const paths = rule?.http.paths as Manifest[]
    for (const entry of paths) {
      expect(entry.pathType).toBe('Prefix')
      expect(ofKind('Service').map((s) => s.metadata.name)).toContain(entry.backend.service.name)
      expect(entry.backend.service.port).toStrictEqual({ name: 'http' })
    }
    // Kubernetes Prefix: matched element by element along '/', the longest path wins.
    const elements = (path: string) => path.split('/').filter(Boolean)
    const ingressRoute = (path: string) =>
      paths
        .filter((p) => elements(p.path).every((element, i) => elements(path)[i] === element))
        .sort((a, b) => elements(b.path).length - elements(a.path).length)[0]?.backend.service.name
    for (const path of [
      '/',
      '/api',
      '/api/',
      '/api/tenants',
      '/api/oauth2/token',
      '/apis/x',
      '/console',
      '/console/',
      '/console/key-chains',
      '/consoles',
      '/verifiers/acme/requests/r1',
      '/verifiers/acme/responses/r1',
      '/issuers/acme/token',
      '/.well-known/openid-credential-issuer/issuers/acme',
      '/healthz',
    ]) {
      expect(ingressRoute(path), path).toBe(nginxRoute(path))
      expect(ingressRoute(path), path).toBe(appFor(path))
    }
    const bodyLimit = /client_max_body_size (\S+);/.exec(nginx)?.[1]
    expect(ingress.metadata.annotations['nginx.ingress.kubernetes.io/proxy-body-size']).toBe(bodyLimit)
  })
})

describe('issue 23: TLS, header buffers and network policies (deploy/kubernetes)', () => {
  const ingress = named('Ingress', 'credential-service')

  it("the Ingress serves PUBLIC_URL's host over TLS with a named certificate Secret; http is redirected", () => {
    const host = new URL(configMap.PUBLIC_URL as string).host
    expect(ingress.spec.tls).toStrictEqual([{ hosts: [host], secretName: 'credential-service-tls' }])
    expect((ingress.spec.rules as Manifest[]).map((rule) => rule.host)).toStrictEqual([host])
    expect(ingress.metadata.annotations['nginx.ingress.kubernetes.io/ssl-redirect']).toBe('true')
  })

  it('the ingress-nginx controller config lets through the header sizes docker/nginx.conf does', () => {
    const nginx = readFileSync(join(root, 'docker/nginx.conf'), 'utf8')
    const [controller] = parseAllDocuments(
      readFileSync(join(dir, 'ingress-nginx/controller-config.yaml'), 'utf8'),
    ).map((doc) => doc.toJS() as Manifest)
    expect(controller?.metadata).toStrictEqual({
      name: 'ingress-nginx-controller',
      namespace: 'ingress-nginx',
    })
    expect(controller?.data['large-client-header-buffers']).toBe(
      /large_client_header_buffers (\d+ \w+);/.exec(nginx)?.[1],
    )
  })

  /** A pod that opens a connection: its namespace and labels. */
  interface Peer {
    namespace: string
    labels: Record<string, string>
  }
  const OURS = kustomization.namespace as string
  const podOf = (kind: string, name: string): Peer => ({
    namespace: OURS,
    labels: named(kind, name).spec.template.metadata.labels,
  })
  const selects = (selector: Manifest, labels: Record<string, string>) =>
    Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value) &&
    (selector.matchExpressions ?? []).every((e: Manifest) => {
      if (e.operator === 'In') return e.values.includes(labels[e.key])
      if (e.operator === 'NotIn') return !e.values.includes(labels[e.key])
      if (e.operator === 'Exists') return e.key in labels
      return !(e.key in labels)
    })
  const peerMatches = (rule: Manifest, from: Peer) =>
    (rule.podSelector === undefined || (from.namespace === OURS && selects(rule.podSelector, from.labels))) &&
    (rule.namespaceSelector === undefined ||
      selects(rule.namespaceSelector, { 'kubernetes.io/metadata.name': from.namespace }))
  /** Kubernetes' ingress rule: allowed when any policy selecting the target lets the peer in on the port. */
  function mayConnect(from: Peer, to: Peer, port: { name?: string; number: number }): boolean {
    const policies = ofKind('NetworkPolicy').filter(
      (policy) => policy.spec.policyTypes.includes('Ingress') && selects(policy.spec.podSelector, to.labels),
    )
    if (policies.length === 0) return true
    return policies.some((policy) =>
      (policy.spec.ingress ?? []).some(
        (rule: Manifest) =>
          (rule.from === undefined || rule.from.some((peer: Manifest) => peerMatches(peer, from))) &&
          (rule.ports === undefined ||
            rule.ports.some((p: Manifest) => p.port === port.number || (port.name && p.port === port.name))),
      ),
    )
  }

  it('only the ingress controller reaches the apps; only the apps and the migration Job reach PostgreSQL', () => {
    const http = { name: 'http', number: Number(configMap.PORT) }
    const postgresPort = { number: 5432 }
    const controller: Peer = {
      namespace: 'ingress-nginx',
      labels: { 'app.kubernetes.io/name': 'ingress-nginx' },
    }
    const stranger: Peer = { namespace: OURS, labels: { app: 'debug-shell' } }
    const elsewhere: Peer = { namespace: 'default', labels: { 'app.kubernetes.io/name': 'issuer' } }
    const postgres: Peer = { namespace: OURS, labels: { 'app.kubernetes.io/name': 'postgresql' } }
    const apps = (Object.keys(APPS) as App[]).map((app) => podOf('Deployment', app))
    const migrate = podOf('Job', 'credential-service-migrate-5.3.0')
    for (const app of apps) {
      expect(mayConnect(controller, app, http)).toBe(true)
      expect(mayConnect(controller, app, { number: 9229 })).toBe(false)
      for (const other of [stranger, elsewhere, postgres, migrate, ...apps])
        expect(mayConnect(other, app, http), JSON.stringify([other.labels, app.labels])).toBe(false)
    }
    for (const client of [...apps, migrate]) expect(mayConnect(client, postgres, postgresPort)).toBe(true)
    for (const other of [controller, stranger, elsewhere])
      expect(mayConnect(other, postgres, postgresPort)).toBe(false)
    // Anything else in the namespace takes no connection either (the default deny).
    expect(mayConnect(apps[0] as Peer, stranger, http)).toBe(false)
  })
})

describe.each(testDatabases({ alone: true }))(
  'issue 13: the probe paths of deploy/kubernetes on $name',
  (testDatabase) => {
    /** The app as its standalone main.ts builds it, on the shared server root. */
    async function serve(app: App) {
      const database = await testDatabase.open()
      const config = parseManagementConfig({
        PUBLIC_URL: 'http://localhost',
        MASTER_SECRET: TEST_MASTER_SECRET,
        AUTH_CLIENT_ID: `root-${crypto.randomUUID()}`,
        AUTH_CLIENT_SECRET: 'k8s-probe-root-secret-0123',
      })
      const plugins: Record<App, () => Promise<FastifyPluginAsync>> = {
        management: async () =>
          buildManagementApp({
            config,
            database,
            signingKey: await deriveManagementSigningKey(config.MASTER_SECRET),
            keys: createKeyRuntime({ config, db: database.db }),
          }),
        issuer: async () => buildIssuerApp({ config, database }),
        verifier: async () => buildVerifierApp({ config, database }),
      }
      const server = await createServer({
        logLevel: 'silent',
        ping: database.ping,
        apps: [await plugins[app]()],
      })
      return { server, database }
    }

    it.each(Object.keys(APPS) as App[])(
      '%s: readiness answers 200 with the database and 503 without; liveness 200 either way',
      async (app) => {
        const container = named('Deployment', app).spec.template.spec.containers[0]
        const probe = (name: string) => container[name].httpGet as { path: string; port: string }
        for (const name of ['startupProbe', 'livenessProbe', 'readinessProbe'])
          expect(probe(name).port).toBe('http')
        const { server, database } = await serve(app)
        try {
          const status = async (path: string) => (await server.inject({ url: path })).statusCode
          expect(await status(probe('livenessProbe').path)).toBe(200)
          expect(await status(probe('readinessProbe').path)).toBe(200)
          await database.close()
          expect(await status(probe('livenessProbe').path)).toBe(200)
          expect(await status(probe('startupProbe').path)).toBe(200)
          expect(await status(probe('readinessProbe').path)).toBe(503)
        } finally {
          await server.close()
        }
      },
      120_000,
    )
  },
)

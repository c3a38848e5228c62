/**
 * The idle RSS floor (issue 44 item 5): what a process holds that loads only the dependencies every
 * app loads at start (fastify with its form body and JWT plugins, the zod type provider, zod, jose,
 * bcryptjs, ipaddr.js, prom-client, a postgres.js pool that has connected), serves one route with a
 * zod schema and has answered it. An app's idle RSS above this is the service's own: its code, its
 * routes' schemas and compiled serializers, its caches. Started with the apps' Node flags, read as
 * the apps' idle RSS is: after one request and a second with nothing in flight.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { rssMb } from './proc'

const FLOOR_APP = `
import formbody from '@fastify/formbody'
import jwt from '@fastify/jwt'
import bcrypt from 'bcryptjs'
import Fastify from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import ipaddr from 'ipaddr.js'
import * as jose from 'jose'
import postgres from 'postgres'
import client from 'prom-client'
import { z } from 'zod'

const url = process.env.FLOOR_DATABASE_URL
if (url) await postgres(url, { max: 10 })\`select 1\`
const app = Fastify({ logger: { level: 'warn' } })
app.setValidatorCompiler(validatorCompiler)
app.setSerializerCompiler(serializerCompiler)
await app.register(formbody)
await app.register(jwt, { secret: 'x'.repeat(32) })
const requests = new client.Counter({ name: 'floor_requests_total', help: 'requests' })
const body = z.object({ key: z.string() })
app.post('/floor', { schema: { body, response: { 200: z.object({ ok: z.boolean() }) } } }, async (request) => {
  requests.inc()
  await jose.calculateJwkThumbprint({ kty: 'oct', k: request.body.key })
  return { ok: ipaddr.isValid('127.0.0.1') && typeof bcrypt.hashSync === 'function' }
})
await app.listen({ host: '127.0.0.1', port: 0 })
process.stdout.write(String(app.server.address().port) + '\\n')
`

/** RSS MiB of the floor process, idle after one request; `databaseUrl`: its pool connects there. */
export async function measureRssFloor(nodeArgs: string[], databaseUrl?: string): Promise<number> {
  // Evaluated in apps/all-in-one, where the apps' dependencies resolve.
  const floor = spawn(process.execPath, [...nodeArgs, '--input-type=module', '-e', FLOOR_APP], {
    cwd: join(import.meta.dirname, '..'),
    env: { PATH: process.env.PATH ?? '', ...(databaseUrl ? { FLOOR_DATABASE_URL: databaseUrl } : {}) },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  try {
    const [line] = (await once(floor.stdout, 'data')) as [Buffer]
    const response = await fetch(`http://127.0.0.1:${line.toString().trim()}/floor`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'floor' }),
    })
    if (!response.ok) throw new Error(`the RSS floor process answered ${response.status}`)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    return rssMb(floor.pid as number)
  } finally {
    floor.kill()
  }
}

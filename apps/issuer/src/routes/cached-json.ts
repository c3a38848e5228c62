import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { matchesEtag } from './status-list-accept'

/** A JSON document serialized once, with a strong ETag of its bytes. */
export interface CachedJson {
  json: string
  etag: string
}

const digestTag = (text: string) => createHash('sha256').update(text).digest('base64url').slice(0, 27)

/**
 * The tag is a digest of the content, not of a version or a time, so every process gives the same
 * content the same tag: a wallet revalidating through a balancer gets its 304 from any pod.
 */
export function cachedJson(value: unknown): CachedJson {
  const json = JSON.stringify(value)
  return { json, etag: `"${digestTag(json)}"` }
}

/** A text answer (a signed JWT) with a weak ETag of what it means (`version`), not of its bytes. */
export function weakTagged(text: string, version: string): CachedJson {
  return { json: text, etag: `W/"${digestTag(version)}"` }
}

/**
 * Sends `document` with its ETag and `cacheControl`, or 304 without a body when `If-None-Match`
 * names it (RFC 9110 §13.1.2 weak comparison; §15.4.5 a 304 repeats ETag and Cache-Control).
 */
export function sendCachedJson(
  req: FastifyRequest,
  reply: FastifyReply,
  document: CachedJson,
  cacheControl: string,
  type = 'application/json; charset=utf-8',
) {
  reply.header('etag', document.etag).header('cache-control', cacheControl)
  if (matchesEtag(req.headers['if-none-match'], document.etag)) return reply.status(304).send()
  return reply.type(type).send(document.json)
}

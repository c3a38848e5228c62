import { randomBytes } from 'node:crypto'
import { readFile, stat } from 'node:fs/promises'
import { extname, join, relative, resolve, sep } from 'node:path'
import type { FastifyPluginAsync, FastifyReply } from 'fastify'

/**
 * The Content-Security-Policy of every `/console` answer (issue 22): the page runs only its own
 * scripts (no inline script, no eval), talks only to its own origin (the API), is never framed.
 * Styles: its own files, and the `<style>` elements the component library writes (theme
 * variables) when they carry the nonce of this answer's `index.html`; no other inline style.
 * `connectSources`: other origins it may call, the identity provider's token endpoint in OIDC mode.
 */
export function consolePolicy(styleNonce?: string, connectSources: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self'${styleNonce ? ` 'nonce-${styleNonce}'` : ''}`,
    "img-src 'self' data:",
    "font-src 'self'",
    ["connect-src 'self'", ...connectSources].join(' '),
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ')
}

/** Where index.html names the style nonce (apps/console/index.html, read by src/main.tsx). */
export const STYLE_NONCE_PLACEHOLDER = 'style-nonce-placeholder'

/**
 * What every `/console` answer carries besides its policy: never framed, no content-type guessing,
 * no referrer. The token lives in the page's memory only, never in a URL.
 */
export const CONSOLE_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
}

/**
 * The admin console (apps/console), its static build served from `dir` under `/console/`:
 * files as they are (the hashed `assets/` cached for good), and `index.html` for every other path,
 * the console's own routes (`/console/key-chains`), which the page routes itself. A missing file
 * with an extension is a 404, so a stale script reference never gets HTML.
 */
export interface ConsoleRoutesOptions {
  dir: string
  /**
   * OIDC mode with CONSOLE_OIDC_CLIENT_ID: how the console signs in at the provider, answered at
   * `/console/config.json`; undefined: client credentials at the built-in token server.
   */
  signIn?: () => Promise<object>
  /** Origins the console calls besides its own (the provider's token endpoint), for connect-src. */
  connectSources?: () => readonly string[]
}

export function consoleRoutes(options: ConsoleRoutesOptions): FastifyPluginAsync {
  const root = resolve(options.dir)
  const connectSources = () => options.connectSources?.() ?? []
  return async (app) => {
    const send = (
      reply: FastifyReply,
      status: number,
      type: string,
      body: string | Buffer,
      cache: string,
      styleNonce?: string,
    ) =>
      reply
        .code(status)
        .headers(CONSOLE_SECURITY_HEADERS)
        .header('content-security-policy', consolePolicy(styleNonce, connectSources()))
        .header('cache-control', cache)
        .type(type)
        .send(body)

    const index = async (reply: FastifyReply) => {
      const html = await readFile(join(root, 'index.html'), 'utf8').catch(() => undefined)
      if (!html)
        return send(
          reply,
          404,
          CONTENT_TYPES['.txt'] as string,
          `The admin console is not built here (CONSOLE_DIR=${options.dir}): run \`npm start\`, or build it with \`npx pnpm --filter @credential-service/console build\`.\n`,
          'no-store',
        )
      // A nonce per answer, so injected markup cannot guess it. Always asked again (`no-cache`): it
      // names the current build's hashed assets.
      const nonce = randomBytes(16).toString('base64')
      const page = html.replaceAll(STYLE_NONCE_PLACEHOLDER, nonce)
      return send(reply, 200, CONTENT_TYPES['.html'] as string, page, 'no-cache', nonce)
    }

    app.get('/console', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console/', 301))
    // How the console signs in: read by the page before its sign-in form (nothing secret).
    app.get('/console/config.json', { schema: { hide: true } }, async (_request, reply) => {
      const config = options.signIn ? await options.signIn() : { mode: 'client-credentials' }
      return send(reply, 200, CONTENT_TYPES['.json'] as string, JSON.stringify(config), 'no-store')
    })
    app.get<{ Params: { '*': string } }>('/console/*', { schema: { hide: true } }, async (request, reply) => {
      const path = request.params['*']
      const extension = extname(path)
      if (!extension) return index(reply)
      const file = resolve(root, path)
      const inside = relative(root, file)
      const found =
        !inside.startsWith('..') &&
        !inside.startsWith(sep) &&
        !inside.split(sep).some((part) => part.startsWith('.'))
          ? await stat(file).catch(() => undefined)
          : undefined
      if (!found?.isFile())
        return send(reply, 404, CONTENT_TYPES['.txt'] as string, 'not found\n', 'no-store')
      const cache = inside.startsWith(`assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache'
      const type = CONTENT_TYPES[extension] ?? 'application/octet-stream'
      return send(reply, 200, type, await readFile(file), cache)
    })
  }
}

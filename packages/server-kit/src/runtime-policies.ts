import type { FastifyInstance } from 'fastify'
import type { z } from 'zod'
import type { zCommonEnv } from './env'
import { createOutageLog } from './outage-log'
import type { OutboundPolicy } from './outbound-fetch'
import { createStatusLists, forgetOwnListsOnChange, type StatusLists } from './presentation/status-list'

type CommonConfig = Readonly<z.output<typeof zCommonEnv>>

/**
 * Where the service may send requests and how much it reads, from OUTBOUND_ALLOW_HTTP,
 * OUTBOUND_ALLOWED_HOSTS and OUTBOUND_MAX_RESPONSE_BYTES; names resolve through the system resolver.
 */
export function outboundPolicy(
  config: Pick<
    CommonConfig,
    'OUTBOUND_ALLOW_HTTP' | 'OUTBOUND_ALLOWED_HOSTS' | 'OUTBOUND_MAX_RESPONSE_BYTES'
  >,
): OutboundPolicy {
  return {
    allowHttp: config.OUTBOUND_ALLOW_HTTP,
    allowedHosts: config.OUTBOUND_ALLOWED_HOSTS,
    maxResponseBytes: config.OUTBOUND_MAX_RESPONSE_BYTES,
  }
}

/** How large a fetched trust list may be and how long its check may take (TRUST_LIST_MAX_BYTES, TRUST_LIST_CHECK_TIMEOUT_SECONDS). */
export function trustListLimits(
  config: Pick<CommonConfig, 'TRUST_LIST_MAX_BYTES' | 'TRUST_LIST_CHECK_TIMEOUT_SECONDS'>,
) {
  return {
    maxBytes: config.TRUST_LIST_MAX_BYTES,
    checkTimeoutMs: config.TRUST_LIST_CHECK_TIMEOUT_SECONDS * 1000,
  }
}

/**
 * The app's cache of fetched status lists, from STATUS_LIST_CACHE_*: the deployment's own lists
 * (under PUBLIC_URL) leave it as soon as they change (F-35), until the app closes.
 */
export function appStatusLists(
  app: FastifyInstance,
  config: Pick<
    CommonConfig,
    | 'PUBLIC_URL'
    | 'STATUS_LIST_CACHE_MAX_SECONDS'
    | 'STATUS_LIST_CACHE_STALE_IF_ERROR_SECONDS'
    | 'STATUS_LIST_CACHE_MAX_ENTRIES'
    | 'STATUS_LIST_CACHE_MAX_BYTES'
  >,
): StatusLists {
  const statusLists = createStatusLists({
    maxSeconds: config.STATUS_LIST_CACHE_MAX_SECONDS,
    staleIfErrorSeconds: config.STATUS_LIST_CACHE_STALE_IF_ERROR_SECONDS,
    maxEntries: config.STATUS_LIST_CACHE_MAX_ENTRIES,
    maxBytes: config.STATUS_LIST_CACHE_MAX_BYTES,
  })
  const stop = forgetOwnListsOnChange(statusLists, config.PUBLIC_URL)
  app.addHook('onClose', async () => {
    stop()
  })
  return statusLists
}

/** Webhook outbox settings, from WEBHOOK_MAX_ATTEMPTS, WEBHOOK_BACKOFF_MS and WEBHOOK_POLL_SECONDS. */
export function webhookPolicy(
  config: Pick<CommonConfig, 'WEBHOOK_MAX_ATTEMPTS' | 'WEBHOOK_BACKOFF_MS' | 'WEBHOOK_POLL_SECONDS'>,
) {
  return {
    attempts: config.WEBHOOK_MAX_ATTEMPTS,
    backoffMs: config.WEBHOOK_BACKOFF_MS,
    pollSeconds: config.WEBHOOK_POLL_SECONDS,
  }
}

/**
 * A job the app runs every `everySeconds` once ready (key rotation, nonce purge): the timer does
 * not keep the process alive, a failure is logged (a database outage at warn, once: outage-log.ts)
 * and the next tick tries again, and closing the
 * app stops the timer and waits for a run in progress.
 */
export function scheduleJob(
  app: FastifyInstance,
  name: string,
  everySeconds: number,
  job: () => Promise<unknown>,
) {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> = Promise.resolve()
  const outage = createOutageLog(name)
  app.addHook('onReady', async () => {
    timer = setInterval(() => {
      running = job().then(
        () => outage.succeeded(app.log),
        (error) => outage.failed(app.log, error, `${name} failed`),
      )
    }, everySeconds * 1000)
    timer.unref()
  })
  app.addHook('onClose', async () => {
    clearInterval(timer)
    await running
  })
}

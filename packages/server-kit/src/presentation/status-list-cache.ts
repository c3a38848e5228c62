/** What the cache holds for one list URI; `bytes` counts against the cache's byte bound. */
export interface CachedValue {
  bytes: number
}

export interface StatusListCacheOptions {
  /** Longest a list is used without asking its server again; 0 keeps nothing. */
  maxSeconds: number
  /** How long past its freshness a kept list stands in while its server cannot answer; 0: never. */
  staleIfErrorSeconds?: number | undefined
  maxEntries: number
  maxBytes: number
}

export interface StatusListCache<T extends CachedValue> {
  readonly maxSeconds: number
  readonly staleIfErrorSeconds: number
  /** The entry for `uri`, now the most recently used one. */
  get(uri: string): T | undefined
  /** Keeps `value` for `uri`, evicting the least recently used entries past the bounds. */
  set(uri: string, value: T): void
  delete(uri: string): void
  /**
   * Drops every entry (and the shared loads in flight) whose URI `match`es, and counts a new
   * `generation`: a load begun before should not keep what it got.
   */
  deleteMatching(match: (uri: string) => boolean): void
  readonly generation: number
  /** Runs `load` once for concurrent callers of the same `uri` (single flight): they share its outcome. */
  shared<R>(uri: string, load: () => Promise<R>): Promise<R>
  readonly size: number
  readonly bytes: number
}

/**
 * A per-process LRU of status lists, bounded by entries and bytes (a Map keeps insertion order:
 * a read moves the entry to the end, eviction takes from the front).
 */
export function createStatusListCache<T extends CachedValue>(
  options: StatusListCacheOptions,
): StatusListCache<T> {
  const entries = new Map<string, T>()
  const inFlight = new Map<string, Promise<unknown>>()
  let bytes = 0
  let generation = 0
  const remove = (uri: string) => {
    const found = entries.get(uri)
    if (!found) return
    entries.delete(uri)
    bytes -= found.bytes
  }
  return {
    maxSeconds: options.maxSeconds,
    staleIfErrorSeconds: options.staleIfErrorSeconds ?? 0,
    get(uri) {
      const found = entries.get(uri)
      if (!found) return undefined
      entries.delete(uri)
      entries.set(uri, found)
      return found
    },
    set(uri, value) {
      remove(uri)
      // A list larger than the whole budget would only evict everything else.
      if (options.maxSeconds <= 0 || value.bytes > options.maxBytes) return
      entries.set(uri, value)
      bytes += value.bytes
      for (const oldest of entries.keys()) {
        if (entries.size <= options.maxEntries && bytes <= options.maxBytes) break
        remove(oldest)
      }
    },
    delete: remove,
    deleteMatching(match) {
      generation++
      for (const uri of [...entries.keys()]) if (match(uri)) remove(uri)
      for (const uri of [...inFlight.keys()]) if (match(uri)) inFlight.delete(uri)
    },
    get generation() {
      return generation
    },
    shared(uri, load) {
      const running = inFlight.get(uri)
      if (running) return running as ReturnType<typeof load>
      const started = load().finally(() => {
        if (inFlight.get(uri) === started) inFlight.delete(uri)
      })
      inFlight.set(uri, started)
      return started
    },
    get size() {
      return entries.size
    },
    get bytes() {
      return bytes
    },
  }
}

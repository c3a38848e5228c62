/**
 * A presentation that fails a check: the reason ends up on the session, which only the tenant
 * reads. `toWallet`, when set, is all the presenter is told instead.
 */
export class PresentationRejected extends Error {
  readonly toWallet: string | undefined
  constructor(reason: string, toWallet?: string) {
    super(reason)
    this.toWallet = toWallet
  }
}

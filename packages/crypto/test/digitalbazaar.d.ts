// @digitalbazaar/vc-bitstring-status-list ships no types: what the interop test uses of it.
declare module '@digitalbazaar/vc-bitstring-status-list' {
  interface BitstringStatusList {
    getStatus(index: number): boolean
    setStatus(index: number, status: boolean): void
    encode(): Promise<string>
  }
  export function createList(options: { length: number }): Promise<BitstringStatusList>
  export function decodeList(options: { encodedList: string }): Promise<BitstringStatusList>
}

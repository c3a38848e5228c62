import { expect } from 'vitest'
import { ProtocolError } from '../src/errors'

/** The protocol error code and description `parse` refuses `input` with (a test failure when it parses). */
export const refusalOf =
  <I>(parse: (input: I) => unknown) =>
  (input: I): { code: string; detail: string } => {
    try {
      parse(input)
    } catch (error) {
      expect(error).toBeInstanceOf(ProtocolError)
      const { error: code, detail } = error as ProtocolError
      return { code, detail }
    }
    throw new Error('parsed')
  }

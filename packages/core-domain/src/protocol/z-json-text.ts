import { z } from 'zod'
import { exceedsJsonDepth } from '../rules/json-depth'

/**
 * A parameter that may hold JSON as text (a form field; a decrypted response holds the value
 * itself, which passes through): the text's depth is checked before parsing (checklist S-123: a
 * field is JSON the body guard never saw, and what it holds is walked recursively further on),
 * then it is parsed and handed to `schema`. Each failure is an issue with the given message.
 */
export const zJsonText = <T extends z.ZodType>(messages: { tooDeep: string; notJson: string }, schema: T) =>
  z.preprocess((value, context) => {
    if (typeof value !== 'string') return value
    if (exceedsJsonDepth(value)) {
      context.addIssue({ code: 'custom', message: messages.tooDeep, input: value })
      return z.NEVER
    }
    try {
      return JSON.parse(value)
    } catch {
      context.addIssue({ code: 'custom', message: messages.notJson, input: value })
      return z.NEVER
    }
  }, schema)

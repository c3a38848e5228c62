import { z } from 'zod'
import { exceedsJsonDepth } from '../rules/json-depth'

/**
 * A parameter that holds JSON as text (a form field): its depth is checked before parsing
 * (checklist S-123: a field is JSON the body guard never saw, and what it holds is walked
 * recursively further on), then parsed; each failure is an issue with the given message.
 */
export const zJsonText = (messages: { tooDeep: string; notJson: string }) =>
  z.string().transform((text, context): unknown => {
    if (exceedsJsonDepth(text)) {
      context.addIssue({ code: 'custom', message: messages.tooDeep, input: text })
      return z.NEVER
    }
    try {
      return JSON.parse(text)
    } catch {
      context.addIssue({ code: 'custom', message: messages.notJson, input: text })
      return z.NEVER
    }
  })

import { describe, expect, it } from 'vitest'
import { tidySchemaComponents } from './openapi'

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

describe('tidySchemaComponents', () => {
  it('issue 13: keeps reachable components only; an input variant takes the plain name when the output one is unused or identical', () => {
    const document = {
      paths: {
        '/a': {
          post: {
            requestBody: { content: { 'application/json': { schema: ref('ThingCreateInput') } } },
            responses: { 200: { content: { 'application/json': { schema: ref('Thing') } } } },
          },
        },
      },
      components: {
        schemas: {
          // output and input variant of every registered schema, as fastify-type-provider-zod emits them
          Thing: { type: 'object', properties: { label: ref('Label'), policy: ref('Policy') } },
          ThingInput: { type: 'object' },
          ThingCreate: { type: 'object', required: ['label', 'policy'] },
          ThingCreateInput: {
            type: 'object',
            properties: { label: ref('LabelInput'), policy: ref('PolicyInput') },
          },
          Label: { type: 'string' },
          LabelInput: { type: 'string' },
          Policy: {
            type: 'object',
            required: ['days'],
            properties: { days: { type: 'integer', default: 30 } },
          },
          PolicyInput: { type: 'object', properties: { days: { type: 'integer', default: 30 } } },
          Unused: { type: 'string' },
          UnusedInput: { type: 'string' },
        },
      },
    }
    expect(tidySchemaComponents(document)).toStrictEqual({
      paths: {
        '/a': {
          post: {
            requestBody: { content: { 'application/json': { schema: ref('ThingCreate') } } },
            responses: { 200: { content: { 'application/json': { schema: ref('Thing') } } } },
          },
        },
      },
      components: {
        schemas: {
          Label: { type: 'string' },
          Policy: document.components.schemas.Policy,
          PolicyInput: document.components.schemas.PolicyInput,
          Thing: document.components.schemas.Thing,
          ThingCreate: { type: 'object', properties: { label: ref('Label'), policy: ref('PolicyInput') } },
        },
      },
    })
  })
})

import { describe, expect, it } from 'vitest'
import { configSchema } from '../../src/config/schema'

/**
 * Every object of the config schema is strict (an unknown key is an error naming it): a key added later with a
 * plain z.object would silently accept typos again.
 */
function loose(schema: any, path: string, out: string[]): string[] {
  const def = schema?._zod?.def ?? schema?.def
  if (!def) return out
  switch (def.type) {
    case 'object':
      if (def.catchall?._zod?.def?.type !== 'never') out.push(path || '(root)')
      for (const [k, v] of Object.entries(def.shape ?? {})) loose(v, path ? `${path}.${k}` : k, out)
      break
    case 'array':
      loose(def.element, `${path}[]`, out)
      break
    case 'record':
      loose(def.valueType, `${path}.*`, out)
      break
    case 'union':
      for (const o of def.options) loose(o, path, out)
      break
    case 'pipe':
      loose(def.in, path, out)
      loose(def.out, path, out)
      break
    default:
      if (def.innerType) loose(def.innerType, path, out)
  }
  return out
}

describe('config schema', () => {
  it('has no object that accepts unknown keys', () => {
    expect(loose(configSchema, '', [])).toEqual([])
  })
})

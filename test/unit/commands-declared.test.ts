import { Composer } from 'grammy'
import { describe, expect, it } from 'vitest'

/**
 * Every command a feature registers with grammY's command() is declared once in src/bot/commands.ts (so it is in a
 * menu and in the "unknown command" answer), and every declared command is handled and described in both
 * languages. The names come from the composers themselves: command() is watched while the bot's features load.
 */
const registered = new Set<string>()
/** Read by the conversations that wait for an answer (paysupport, rating, settings), not by command(). */
const IN_CONVERSATIONS = ['cancel']
const original = Composer.prototype.command
Composer.prototype.command = function (this: Composer<any>, command: any, ...rest: any[]) {
  for (const c of Array.isArray(command) ? command : [command])
    if (typeof c === 'string') registered.add(c.toLowerCase())
  return (original as any).call(this, command, ...rest)
} as typeof original

describe('declared commands', () => {
  it('the features register exactly the declared commands, each described in ru and en', async () => {
    await import('../../src/bot/bot')
    const { COMMANDS } = await import('../../src/bot/commands')
    const { createI18n } = await import('../../src/bot/i18n')
    Composer.prototype.command = original
    const declared = new Set(COMMANDS.map((c) => c.name))
    expect(registered.size).toBeGreaterThan(20)
    expect([...registered].filter((n) => !declared.has(n)).sort()).toEqual([])
    const handled = new Set([...registered, ...IN_CONVERSATIONS])
    expect([...declared].filter((n) => !handled.has(n)).sort()).toEqual([])
    expect(COMMANDS.length).toBe(declared.size)
    const i18n = createI18n()
    for (const lang of ['ru', 'en'])
      for (const c of COMMANDS) {
        const text = i18n.t(lang, `cmd-${c.name}`)
        expect(text, `${lang} cmd-${c.name}`).not.toBe(`cmd-${c.name}`)
        expect(text.length).toBeLessThanOrEqual(256)
      }
  })
})

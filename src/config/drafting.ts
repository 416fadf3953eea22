import { ConfigError, type DeskRuntime, type LoadedConfig } from './load'
import type { LlmConfig } from './schema'

/** A model of the allowlist with its prices (per 1M tokens, in money minor units). */
export type ModelPrice = LlmConfig['models'][number]

export interface MonthlyBudget {
  unit: 'money' | 'tokens'
  amount: number
}

/** One desk's drafting settings: `llm.drafting` with `llm.desks.<slug>` on top. */
export interface DeskDrafting {
  enabled: boolean
  /** The desk's model id, or null when no model is configured (drafting refuses as not configured). */
  model: string | null
  instructions: string
  expertDailyCap: number | null
  monthlyBudget: MonthlyBudget | null
  concurrency: number
}

export function deskDrafting(llm: LlmConfig, desk: Pick<DeskRuntime, 'slug'>): DeskDrafting {
  const o = llm.desks[desk.slug] ?? {}
  const d = llm.drafting
  return {
    enabled: o.enabled ?? d.enabled,
    model: o.model ?? llm.defaultModel ?? null,
    instructions: o.instructions ?? d.instructions,
    expertDailyCap: o.expertDailyCap !== undefined ? o.expertDailyCap : d.expertDailyCap,
    monthlyBudget: o.monthlyBudget !== undefined ? o.monthlyBudget : d.monthlyBudget,
    concurrency: o.concurrency ?? d.concurrency,
  }
}

export function findModel(llm: LlmConfig, id: string): ModelPrice | undefined {
  return llm.models.find((m) => m.id === id)
}

/**
 * Settings the schema cannot check alone (it does not see the desks next to `llm`): every `llm.desks` key names a
 * desk. Returns one line per problem, in the config loader's format.
 */
export function draftingConfigProblems(config: Pick<LoadedConfig, 'file' | 'llm' | 'desks'>): string[] {
  const slugs = new Set(config.desks.map((d) => d.slug))
  return Object.keys(config.llm.desks)
    .filter((slug) => !slugs.has(slug))
    .map((slug) => `${config.file}: llm.desks.${slug}: no desk with this slug`)
}

/** Stops the start with one line per problem (called by src/app.ts before anything else starts). */
export function assertDraftingConfig(config: Pick<LoadedConfig, 'file' | 'llm' | 'desks'>): void {
  const problems = draftingConfigProblems(config)
  if (problems.length > 0) throw new ConfigError(problems.join('\n'))
}

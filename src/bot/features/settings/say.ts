import type { GuardedOutcome } from '../../../settings/edit'
import {
  currentValue,
  fieldOf,
  issueField,
  type Refusal,
  RULE_FIELDS,
  type Target,
} from '../../../settings/fields'
import type { BotContext } from '../../context'

/** How /settings words a refusal and the outcome of a write (locale: src/bot/locales/<lang>/settings.ftl). */
const NAMED = new Set([
  'code',
  'title',
  'priceStars',
  'windowHours',
  'appeals',
  'questions',
  'slaBusinessHours',
  'startMode',
  'weekday',
  'weekly',
  'schedule',
  'holiday',
  'holidays',
  'extra',
  'extraWorkingDays',
  'timezone',
  'terms',
  'text',
  'privacy',
  'dailyCapacity',
  'slotCapacity',
  'slots',
  'breachPolicy',
  'refundPolicy',
  'carryOver',
  'topUps',
  'antiFlood',
  'perMinute',
  'daysOff',
  ...RULE_FIELDS,
])

export function fieldName(ctx: BotContext, field: string): string {
  return NAMED.has(field) ? ctx.t(`st-field-${field}`) : field
}

export function refusalText(ctx: BotContext, r: Refusal): string {
  return ctx.t('st-invalid', { field: fieldName(ctx, r.field), reason: r.reason })
}

export function outcomeText(
  ctx: BotContext,
  out: GuardedOutcome,
  target?: Target,
  doneKey = 'st-saved',
): string {
  const field = target ? fieldName(ctx, fieldOf(target)) : ''
  switch (out.status) {
    case 'done':
      return ctx.t(doneKey, {
        field,
        value: (target && currentValue(target, out.settings.doc, ctx.lang)) ?? '—',
      })
    case 'conflict':
      if (!target) return ctx.t('st-conflict-screen')
      return ctx.t('st-conflict', {
        field,
        value: (target && currentValue(target, out.settings.doc, ctx.lang)) ?? '—',
      })
    case 'invalid':
      return out.issues
        .map((i) => refusalText(ctx, { field: issueField(i.path), reason: i.message }))
        .join('\n')
    case 'forbidden':
      return ctx.t('st-refused')
    case 'gone':
      return ctx.t('st-gone')
    case 'refused':
      return ctx.t(out.key, out.params)
  }
}

/**
 * What the dashboard's JSON API answers (src/dashboard/dashboard.http.ts) and the page reads (web/dashboard/).
 * Self-contained on purpose: the browser bundle imports these types, and nothing of the server comes with them.
 * Instants are ISO 8601 strings in UTC; the page shows them in the desk's zone (`zone`).
 */

export type RoleDto = 'admin' | 'expert'
export type LanguageDto = 'ru' | 'en'

export interface MeDto {
  desk: { slug: string; name: string; zone: string }
  user: { id: number; firstName: string }
  role: RoleDto
  lang: LanguageDto
  /** When the launch data stops being accepted: the page asks to reopen it from Telegram after that. */
  expiresAt: string
  tariffs: { code: string; title: string }[]
  /** The desk's staff; `name` from src/experts/names.ts when the desk knows one. */
  staff: { id: number; role: RoleDto; name?: string }[]
  llm: { currency: string; minorUnitsPerMajor: number }
}

export interface RevenueTotalsDto {
  paidCount: number
  paidStars: number
  refundedCount: number
  refundedStars: number
  netStars: number
}

export interface RevenueDayDto {
  day: string
  paidCount: number
  paidStars: number
  refundedCount: number
  refundedStars: number
}

export interface AppealTotalsDto {
  accepted: number
  answeredInTime: number
  answeredLate: number
  breached: number
  open: number
  /** Open and past due: a miss already, though not answered yet. */
  openBreached: number
}

export interface AppealWeekDto extends AppealTotalsDto {
  week: string
}

export interface ExpertDto {
  staffId: number
  answered: number
  inTime: number
  medianMinutes: number
}

export interface RefusalDto {
  reason: string
  scope: string | null
  unit: string | null
  count: number
}

export interface DraftDayDto {
  day: string
  drafts: number
  refused: number
  costMinor: number
  tokens: number
}

export interface BudgetDto {
  unit: 'money' | 'tokens'
  limit: number
  /** The ledger account of the current desk-local month: settled, and held by drafts still running. */
  used: number
  held: number
  periodStart: string
  periodEnd: string
}

export interface RatingsDto {
  byExpert: { staffId: number; count: number; average: number }[]
}

/** A question waiting for an answer, in the viewer's queue (src/experts/queue.ts, as /mine lists it). */
export interface OpenQuestionDto {
  consultationId: number
  number: number
  title: string
  dueAt: string
  /** Business minutes to the due time (0 when past it). */
  minutesLeft: number
  /** Business minutes past the due time (0 when not past it). */
  minutesOver: number
  overdue: boolean
  owner: { id: number; name: string } | null
  /** t.me link into the consultation's topic; null while it has none. */
  topicLink: string | null
}

export interface OverviewDto {
  role: RoleDto
  range: { days: number; from: string; to: string; zone: string }
  /**
   * Open now, by due time: an expert's, the questions of the consultations they own; an admin's, all of the desk
   * (at most 20; `more`: how many beyond). Not limited to the range.
   */
  openNow: { items: OpenQuestionDto[]; more: number }
  /** Names of the staff the overview mentions by id (experts, ratings, open questions), by id. */
  staffNames: Record<string, string>
  /** Admins only (null for an expert). */
  revenue: { totals: RevenueTotalsDto; byDay: RevenueDayDto[] } | null
  consultations: { state: string; count: number }[] | null
  /** An expert's: the questions they answered. */
  appeals: { totals: AppealTotalsDto; byWeek: AppealWeekDto[] }
  /** An expert sees their own line only. */
  experts: ExpertDto[]
  /** null: no ratings are collected yet. */
  ratings: RatingsDto | null
  drafts: { byDay: DraftDayDto[]; budget: BudgetDto | null }
  /** Admins only. */
  refusals: { ledger: RefusalDto[]; admission: RefusalDto[] } | null
}

export interface ConsultationItemDto {
  id: number
  state: string
  client: ClientDto
  tariffCode: string
  title: string
  priceStars: number
  appealsTotal: number
  appealsUsed: number
  createdAt: string
  startsAt: string | null
  accessUntil: string | null
  experts: number[]
  match: string | null
}

export interface ClientDto {
  id: number
  firstName: string | null
  lastName: string | null
  username: string | null
}

export interface PaymentDto {
  id: number
  createdAt: string
  client: ClientDto
  kind: string
  amount: number
  currency: string
  orderId: number | null
  consultationId: number | null
  tariffCode: string | null
  title: string | null
  charge: string
  refundedAt: string | null
  refundedBy: number | null
  refundSource: string | null
  refundInProgress: boolean
  refundError: string | null
  /** What the order bought ('consultation', 'topup', ...); null for an unmatched payment. */
  orderKind: string | null
  /** A top-up's payment: what it bought. */
  topUp: { questions: number; hours: number } | null
  /** A consultation's own payment: its paid top-ups not refunded yet (offered with its refund). */
  topUps: TopUpDto[]
}

export interface TopUpDto {
  paymentId: number
  amount: number
  charge: string
  questions: number
  hours: number
}

export interface AppealDto {
  number: number
  state: string
  acceptedAt: string
  slaMinutes: number
  dueAt: string
  firstResponseAt: string | null
  answeredBy: number | null
  responseBusinessMinutes: number | null
  inTime: boolean | null
  breachedAt: string | null
}

export type TimelineEventDto =
  | { at: string; type: 'created' | 'window-start' | 'window-end' | 'closed' | 'revoked' }
  | { at: string; type: 'payment'; paymentId: number; amount: number; kind: string }
  | { at: string; type: 'refund'; paymentId: number; amount: number; source: string | null }
  | { at: string; type: 'question'; number: number; dueAt: string }
  | {
      at: string
      type: 'answer'
      number: number
      by: number | null
      inTime: boolean | null
      minutes: number | null
    }
  | { at: string; type: 'breach'; number: number }
  | { at: string; type: 'note'; direction: 'in' | 'out'; text: string | null; key: string | null }
  | { at: string; type: 'refusal'; reason: string | null; text: string | null }
  | { at: string; type: 'draft'; draftId: number; state: string; by: number }

export interface ConsultationDetailDto {
  card: {
    id: number
    state: string
    client: ClientDto & { languageCode: string | null }
    tariffCode: string
    title: string
    priceStars: number
    appealsTotal: number
    appealsUsed: number
    slaMinutes: number
    windowMinutes: number
    createdAt: string
    startsAt: string | null
    accessUntil: string | null
    closedAt: string | null
    revokedAt: string | null
    refundPolicy: string | null
    topicThreadId: number | null
    /** A link into the consultation's topic in the staff group (t.me/c/<chat id without -100>/<thread>). */
    topicLink: string | null
  }
  appeals: AppealDto[]
  payments: PaymentDto[]
  timeline: TimelineEventDto[]
  /** The transcript as the client gets it (/transcript), in the viewer's language. */
  transcript: string
}

export type RefundResultDto = (
  | { status: 'refunded' | 'already-refunded' | 'in-progress'; payment: PaymentDto }
  | { status: 'failed'; payment: PaymentDto; description: string }
) & {
  /** The top-ups refunded with it, when asked for (each its own refund). */
  topUps?: { paymentId: number; status: string; description?: string }[]
}

export type ExportKind = 'payments' | 'consultations' | 'questions'

export interface ExportLinkDto {
  /** Relative to the page; valid for a few minutes, for this user only. */
  url: string
  filename: string
}

export interface ErrorDto {
  error: string
  message?: string
}

import { defineQueue } from '../jobs/queue'

/**
 * Written by the payment transaction (or the Start button / scheduled start) in the same transaction that makes a
 * consultation active; its handler opens the staff topic and tells the client. Handlers must be idempotent.
 */
export const consultationActivatedQueue = defineQueue<{ consultationId: number }>('consultation.activated')

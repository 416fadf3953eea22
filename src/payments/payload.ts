/**
 * The invoice payload is the order id: "o:<id>". Telegram echoes it in pre_checkout_query and successful_payment;
 * it identifies the order and nothing else (price, payer and state are always read from the order row).
 */
const PAYLOAD = /^o:([1-9]\d{0,15})$/

export function orderPayload(orderId: number): string {
  return `o:${orderId}`
}

/** The order id a payload names, or undefined for anything that is not ours. */
export function parseOrderPayload(payload: string): number | undefined {
  const m = PAYLOAD.exec(payload)
  if (!m) return undefined
  const id = Number(m[1])
  return Number.isSafeInteger(id) ? id : undefined
}

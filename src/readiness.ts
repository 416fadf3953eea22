/**
 * What this process can do right now, as /health reports it. Parts of the app flip their own flag: the database
 * watch (src/server/health.ts) when PostgreSQL stops or starts answering, the intake when it cannot store updates. A
 * process that is not ready stays up and keeps retrying; the flag tells a load balancer or an operator why it is
 * not taking work, and flips back by itself.
 *
 * Components are free-form names, so later checks (worker heartbeats, dead letters) add theirs without changing
 * this file.
 */
export class Readiness {
  private readonly down = new Map<string, string>()
  private readonly known = new Set<string>()
  private readonly notices = new Map<string, string>()

  /** Marks a component up (ok) or down with a short reason (no secrets: it is shown on /health). */
  set(component: string, ok: boolean, reason = 'unavailable'): void {
    this.known.add(component)
    if (ok) this.down.delete(component)
    else this.down.set(component, reason)
  }

  isUp(component: string): boolean {
    return !this.down.has(component)
  }

  get ready(): boolean {
    return this.down.size === 0
  }

  /**
   * A note /health shows without failing the probe (under `notes`): something an operator must see that restarting
   * or routing away would not fix, e.g. a desk that sells nothing until its staff group is repaired (src/setup).
   * undefined clears it.
   */
  note(component: string, reason: string | undefined): void {
    if (reason === undefined) this.notices.delete(component)
    else this.notices.set(component, reason)
  }

  notes(): Record<string, string> {
    return Object.fromEntries([...this.notices].sort(([a], [b]) => a.localeCompare(b)))
  }

  /** Every component seen so far: true when up, the reason when down. */
  snapshot(): Record<string, true | string> {
    const out: Record<string, true | string> = {}
    for (const c of [...this.known].sort()) out[c] = this.down.get(c) ?? true
    return out
  }
}

import net from 'node:net'

/**
 * A TCP proxy for tests that need a dependency to go away and come back: the app connects to the proxy, the proxy
 * to one of its targets.
 *
 * - `cut()`: an outage - open connections are destroyed (the app sees "Connection terminated" / resets) and new
 *   ones are refused (accepted and closed at once, as a server that is down answers); `restore()` ends it.
 * - `freeze()`: a server that stops answering without closing anything (a SIGSTOPped postmaster, a hung host):
 *   open connections stay open but nothing is passed either way, and new connections are accepted and then held;
 *   `thaw()` passes what was held, in order, and carries on.
 * - Several targets: new connections go round robin to the targets that accept them (a connection refused by one
 *   tries the next), which makes it a small load balancer in front of several webhook processes.
 */
export class TcpProxy {
  private readonly server: net.Server
  private readonly open = new Set<net.Socket>()
  private down = false
  private frozen = false
  private held: (() => void)[] = []
  private readonly lost = new Set<net.Socket>()
  private next = 0
  port = 0
  /** Connections passed to each target port so far (to check that a balancer spread the load). */
  readonly connectionsTo = new Map<number, number>()

  constructor(private targets: { host: string; port: number }[]) {
    this.server = net.createServer((client) => this.accept(client))
  }

  static async start(targets: { host: string; port: number }[]): Promise<TcpProxy> {
    const p = new TcpProxy(targets)
    await new Promise<void>((resolve) => p.server.listen(0, '127.0.0.1', resolve))
    p.port = (p.server.address() as net.AddressInfo).port
    return p
  }

  /** For a PostgreSQL URL: the same URL with host and port replaced by the proxy's. */
  static via(url: string, port: number): string {
    const u = new URL(url)
    u.hostname = '127.0.0.1'
    u.port = String(port)
    return u.toString()
  }

  setTargets(targets: { host: string; port: number }[]): void {
    this.targets = targets.filter((t) => Number.isInteger(t.port) && t.port > 0)
  }

  get isDown(): boolean {
    return this.down
  }

  cut(): void {
    this.down = true
    for (const s of this.open) s.destroy()
    this.open.clear()
  }

  restore(): void {
    this.down = false
  }

  freeze(): void {
    this.frozen = true
  }

  /**
   * The frozen connections never answer again and are never closed (a network that lost them without a word), while
   * new connections pass as usual: what the app must give up on by itself.
   */
  loseFrozen(): void {
    for (const s of this.open) this.lost.add(s)
    this.held = []
    this.frozen = false
  }

  thaw(): void {
    const held = this.held
    this.held = []
    for (const f of held) f()
    this.frozen = false
  }

  async close(): Promise<void> {
    this.cut()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }

  private accept(client: net.Socket): void {
    client.on('error', () => {})
    if (this.down || this.targets.length === 0) {
      client.destroy()
      return
    }
    this.open.add(client)
    client.on('close', () => this.open.delete(client))
    client.pause()
    if (this.frozen) this.held.push(() => this.connect(client, 0))
    else this.connect(client, 0)
  }

  /** Passes `from`'s bytes to `to`, holding them while frozen. */
  private forward(from: net.Socket, to: net.Socket): void {
    from.on('data', (d) => {
      if (this.lost.has(from) || this.lost.has(to)) return
      if (this.frozen) this.held.push(() => to.write(d))
      else to.write(d)
    })
  }

  private connect(client: net.Socket, tried: number): void {
    const targets = this.targets
    if (tried >= targets.length || this.down || client.destroyed) {
      client.destroy()
      return
    }
    const target = targets[this.next++ % targets.length]!
    const upstream = net.connect(target.port, target.host)
    let connected = false
    upstream.once('connect', () => {
      connected = true
      if (client.destroyed || this.down) {
        upstream.destroy()
        client.destroy()
        return
      }
      this.open.add(upstream)
      this.connectionsTo.set(target.port, (this.connectionsTo.get(target.port) ?? 0) + 1)
      upstream.on('close', () => {
        this.open.delete(upstream)
        client.destroy()
      })
      client.on('close', () => upstream.destroy())
      this.forward(client, upstream)
      this.forward(upstream, client)
      client.resume()
    })
    upstream.on('error', () => {
      if (!connected) this.connect(client, tried + 1)
      else client.destroy()
    })
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http'
import { type Bot, webhookCallback } from 'grammy'
import type { Update } from 'grammy/types'
import type { BotContext } from '../bot/context'
import type { Logger } from '../log'
import type { RouteHandler } from '../server/http'
import { updateProblem } from './update-shape'

/**
 * The largest webhook body taken: 1 MiB. Telegram's largest updates (a message with a long caption, entities, a
 * reply with its quoted message, a poll) are a few tens of KiB; files are never inside an update, only their ids.
 */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024

/** A body refused before the update reached the bot: the status and a reason for the log. */
class RefusedBody extends Error {
  constructor(
    readonly status: 400 | 413,
    readonly reason: string,
  ) {
    super(reason)
  }
}

/**
 * The webhook endpoint of one desk: grammY's webhookCallback (secret token check, timeout) over a bot that stores
 * instead of handling. The 200 goes out only after the update is committed in the inbox; a failure or a store
 * slower than the timeout answers 500, and Telegram delivers the update again (a duplicate is a no-op in the inbox).
 * A pre-checkout query is not stored: it is answered at once, in the webhook response.
 *
 * The body is read only once the secret matched (grammY checks it first), by our adapter instead of grammY's
 * "http" one, which reads without limit and throws on bad JSON (a 500, so Telegram would retry junk forever):
 * more than WEBHOOK_BODY_LIMIT is 413, and a body that is not JSON or not an update's minimal shape
 * (update-shape.ts) is 400. Either stores nothing and logs one line.
 */
export function webhookHandler(
  bot: Bot<BotContext>,
  store: (update: Update) => Promise<void>,
  secretToken: string,
  log?: Logger,
): RouteHandler {
  const storing = {
    isRunning: () => false,
    init: () => bot.init(),
    async handleUpdate(update: Update, envelope?: Parameters<Bot<BotContext>['handleUpdate']>[1]) {
      if (update.pre_checkout_query) return bot.handleUpdate(update, envelope)
      await store(update)
    },
  }
  // webhookCallback uses only these members of a Bot (and replaces `start`, which polling would need).
  const callback = webhookCallback(storing as unknown as Bot<BotContext>, limitedHttp, {
    secretToken,
    onTimeout: 'throw',
  })
  return async (req: IncomingMessage, res: ServerResponse) => {
    try {
      await callback(req, res)
    } catch (e) {
      if (!(e instanceof RefusedBody)) throw e
      log?.warn(
        { status: e.status, reason: e.reason, bytes: req.headers['content-length'] },
        'webhook body refused',
      )
      // A body past the limit is not read on: the connection closes once the answer is out.
      if (e.status === 413) res.once('finish', () => req.destroy())
      if (!res.headersSent)
        res
          .writeHead(e.status, {
            'content-type': 'text/plain',
            ...(e.status === 413 ? { connection: 'close' } : {}),
          })
          .end(e.status === 413 ? 'payload too large\n' : 'bad request\n')
    }
  }
}

const SECRET_HEADER = 'x-telegram-bot-api-secret-token'

/** grammY's "http" adapter (grammy/out/convenience/frameworks.js) with a body limit and the shape check. */
function limitedHttp(req: IncomingMessage, res: ServerResponse) {
  const secret = req.headers[SECRET_HEADER]
  return {
    get update(): Promise<Update> {
      return new Promise((resolve, reject) => {
        const declared = Number(req.headers['content-length'])
        if (Number.isFinite(declared) && declared > WEBHOOK_BODY_LIMIT) {
          req.resume()
          return reject(new RefusedBody(413, `declared ${declared} bytes`))
        }
        const chunks: Buffer[] = []
        let size = 0
        const onData = (chunk: Buffer) => {
          size += chunk.length
          if (size > WEBHOOK_BODY_LIMIT) {
            req.off('data', onData)
            req.resume()
            reject(new RefusedBody(413, `more than ${WEBHOOK_BODY_LIMIT} bytes`))
            return
          }
          chunks.push(chunk)
        }
        req.on('data', onData)
        req.once('end', () => {
          if (size > WEBHOOK_BODY_LIMIT) return
          let body: unknown
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf-8'))
          } catch {
            return reject(new RefusedBody(400, 'not JSON'))
          }
          const problem = updateProblem(body)
          if (problem) return reject(new RefusedBody(400, problem))
          resolve(body as Update)
        })
        req.once('error', reject)
      })
    },
    header: Array.isArray(secret) ? secret[0] : secret,
    end: () => res.end(),
    respond: (json: string) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(json),
    unauthorized: () => res.writeHead(401).end('secret token is wrong'),
  }
}

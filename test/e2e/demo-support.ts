import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The demos' smoke tests (demo.test.ts, plan-demo.test.ts): a demo script run to its end, and what both print. */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** Runs a demo script (e.g. src/demo/demo.ts) as `npm run demo` does; its exit code and output once it ends. */
export function runDemo(script: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    // Not inherited: LOG_LEVEL (the demo's output is the point) and the IPC channel of vitest's forked worker (a child
    // that inherits NODE_CHANNEL_FD opens that channel and never exits by itself).
    const {
      LOG_LEVEL: _level,
      NODE_CHANNEL_FD: _fd,
      NODE_CHANNEL_SERIALIZATION_MODE: _mode,
      ...env
    } = process.env
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      err += d
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

/**
 * The set-up from Telegram both demos start with (src/demo/empty-desk.ts), as printed: no config file, the owner link
 * printed at start and opened; the group refused while the bot lacks the rights, confirmed once they are granted,
 * bound; the expert by invite; the hours in /settings.
 */
export const EMPTY_DESK_SET_UP = [
  /Desk "desk" has no owner yet\. Open this link .*\n\n +https:\/\/t\.me\/\w+\?start=own_[\w-]+/,
  /Ada ▸ bot +\/start own_[\w-]+\n +bot ▸ Ada \(private\) +🎉 Ada, you are the owner of this desk now/,
  /bot ▸ Ada \(private\) +I was added to «Desk staff», but it cannot be the staff group yet\. What is missing:\n.*\n.*Make me an admin of the group/,
  /bot ▸ Ada \(private\) +I am in «Desk staff» with every right I need\. Use «Desk staff» as the staff group\?/,
  /bot ▸ Ada \(private\) +«Desk staff» is the staff group now/,
  /Ada ▸ bot +\/invite expert\n +bot ▸ Ada \(private\) +Invite link for an expert/,
  /Ed ▸ bot +\/start inv_[\w-]+\n +bot ▸ Ed \(private\) +Welcome to the desk, Ed: you are an expert now/,
  /Ada ▸ bot +00:00-24:00\n +bot ▸ Ada \(private\) +Saved\. Hours is now: 00:00-24:00/,
]

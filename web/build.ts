import { createHash } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

/**
 * Builds the dashboard page (web/dashboard: Preact, Chart.js, the Telegram bridge) into `outdir`: app.js, app.css
 * and index.html naming them with a content hash, so a browser never mixes an old bundle with a new page. Run by
 * `npm run build` (into dist/web, which the app serves) and by the browser tests (into a directory of their own).
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export async function buildDashboardWeb(outdir: string): Promise<void> {
  await mkdir(outdir, { recursive: true })
  await build({
    absWorkingDir: ROOT,
    entryPoints: { app: 'web/dashboard/main.tsx' },
    bundle: true,
    minify: true,
    sourcemap: true,
    format: 'esm',
    // Telegram's in-app browsers: recent Android WebView and iOS WKWebView (Safari 15+), Telegram Desktop, the web.
    target: ['es2020', 'chrome90', 'safari15', 'firefox90'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir,
    logLevel: 'warning',
    legalComments: 'eof',
  })
  const hash = createHash('sha256')
  for (const f of ['app.js', 'app.css']) hash.update(await readFile(path.join(outdir, f)))
  const version = hash.digest('hex').slice(0, 12)
  const html = await readFile(path.join(ROOT, 'web/dashboard/index.html'), 'utf8')
  await writeFile(path.join(outdir, 'index.html'), html.replaceAll('__VERSION__', version))
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildDashboardWeb(path.resolve(process.argv[2] ?? 'dist/web'))
}

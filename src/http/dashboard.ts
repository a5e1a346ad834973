import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { extname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/**
 * The dashboard: a web app of plain ES modules (web/) and a few libraries' browser builds, served
 * by the service itself with no build step. It talks only to the public management API, as any
 * client would. What is served is fixed when the server starts: the files of web/ and the
 * vendored files named below, never a path taken from a request.
 */

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png"
}

/** The libraries' browser files, by the URL they are served at (the import map in index.html names them). */
const vendored: Record<string, string> = {
  "/vendor/preact.mjs": "preact",
  "/vendor/preact-hooks.mjs": "preact/hooks",
  "/vendor/htm.mjs": "htm",
  "/vendor/htm-preact.mjs": "htm/preact",
  // uPlot's ESM build is not minified (145 kB); its minified IIFE defines the global `uPlot`.
  "/vendor/uplot.js": "uplot/dist/uPlot.iife.min.js",
  "/vendor/uplot.css": "uplot/dist/uPlot.min.css"
}

const webRoot = fileURLToPath(new URL("../../web/", import.meta.url))

/** web/'s files that are the app (its tsconfig and type declarations are for the type check only). */
const appFiles = (): ReadonlyArray<string> =>
  readdirSync(webRoot, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && contentTypes[extname(d.name)] !== undefined)
    .map((d) => relative(webRoot, join(d.parentPath, d.name)).split(sep).join("/"))

export interface DashboardAsset {
  readonly path: `/${string}`
  readonly contentType: string
  readonly body: Uint8Array
  /** The body gzipped, sent to clients that accept it (text only). */
  readonly gzipped: Uint8Array | undefined
  readonly etag: string
}

const asset = (path: `/${string}`, file: string): DashboardAsset => {
  const body = readFileSync(file)
  const contentType = contentTypes[extname(file)] ?? "application/octet-stream"
  const text = !contentType.startsWith("image/png")
  return {
    path,
    contentType,
    body,
    gzipped: text ? gzipSync(body, { level: 9 }) : undefined,
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`
  }
}

/** Every file the dashboard serves, by URL path: `/` is web/index.html. */
export const loadDashboardAssets = (): ReadonlyArray<DashboardAsset> => [
  asset("/", join(webRoot, "index.html")),
  ...appFiles().filter((f) => f !== "index.html").map((f) => asset(`/app/${f}`, join(webRoot, f))),
  ...Object.entries(vendored).map(([path, specifier]) => asset(path as `/${string}`, fileURLToPath(import.meta.resolve(specifier))))
]

/**
 * Scripts come only from this origin; the one inline script (the import map) is allowed by its
 * hash. Styles may be set inline because the chart library positions its elements that way.
 */
const contentSecurityPolicy = (index: DashboardAsset): string => {
  const inline = /<script type="importmap">([\s\S]*?)<\/script>/.exec(Buffer.from(index.body).toString("utf8"))?.[1] ?? ""
  const hash = createHash("sha256").update(inline).digest("base64")
  return [
    "default-src 'self'",
    `script-src 'self' 'sha256-${hash}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'"
  ].join("; ")
}

/**
 * Every file is revalidated (`no-cache` with a strong ETag): a page load after an upgrade never
 * mixes old and new modules, and an unchanged file costs a 304 with no body.
 */
const respond = (file: DashboardAsset, csp: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const headers: Record<string, string> = {
      "cache-control": "no-cache",
      etag: file.etag,
      vary: "accept-encoding",
      "x-content-type-options": "nosniff",
      ...(file.path === "/" ? { "content-security-policy": csp, "referrer-policy": "no-referrer" } : {})
    }
    if (request.headers["if-none-match"] === file.etag) return HttpServerResponse.empty({ status: 304, headers })
    const gzip = file.gzipped !== undefined && /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")
    return HttpServerResponse.uint8Array(gzip ? file.gzipped! : file.body, {
      contentType: file.contentType,
      headers: gzip ? { ...headers, "content-encoding": "gzip" } : headers
    })
  })

/** The dashboard's routes (GET only), for the route table that answers 405 on other methods. */
export const dashboardRoutes = (assets: ReadonlyArray<DashboardAsset>) => assets.map((a) => ({ method: "GET", path: a.path }))

export const DashboardRoutes = (assets: ReadonlyArray<DashboardAsset>) =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const index = assets.find((a) => a.path === "/")!
      const csp = contentSecurityPolicy(index)
      for (const file of assets) yield* router.add("GET", file.path, respond(file, csp))
    })
  )

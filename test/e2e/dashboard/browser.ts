import { mkdirSync } from "node:fs"
import { join } from "node:path"
import puppeteer, { type Browser, type Page } from "puppeteer-core"
import { afterAll, beforeAll } from "vitest"
import { startServer, type TestServer } from "../../support/harness.ts"

/**
 * The machine's Chromium (Debian's `chromium` package), driven headless. Browsers downloaded by
 * installers do not run here, so none is: CHROMIUM_PATH names another executable.
 */
// Page functions run in the browser; these are the few of its globals they touch (the test
// program is type-checked without the DOM library).
declare const document: { readonly body: { readonly innerText: string }; readonly documentElement: { readonly scrollWidth: number } }
declare const location: { hash: string }

export const chromiumPath = process.env.CHROMIUM_PATH || "/usr/bin/chromium"

export const artifactsDir = join(process.cwd(), ".data", "artifacts", "dashboard")

/** `downloadPath`: where the browser saves downloads (none are allowed without it). */
export const launchBrowser = (downloadPath?: string): Promise<Browser> =>
  puppeteer.launch({
    executablePath: chromiumPath,
    headless: true,
    ...(downloadPath === undefined ? {} : { downloadBehavior: { policy: "allow" as const, downloadPath } }),
    // No sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]
  })

/** A new tab at laptop size that fails the test on any script error of the page. */
export const openPage = async (browser: Browser, width = 1280, height = 900): Promise<Page & { errors: Array<string> }> => {
  const page = (await browser.newPage()) as Page & { errors: Array<string> }
  page.errors = []
  page.on("pageerror", (e) => page.errors.push(String((e as Error).message ?? e)))
  await page.setViewport({ width, height })
  page.setDefaultTimeout(15_000)
  return page
}

/** The text a user reads on the page now. */
export const visibleText = (page: Page): Promise<string> => page.evaluate(() => document.body.innerText)

/** Waits until the page shows `text` (a string or a pattern), and answers the page's text. */
export const waitForText = async (page: Page, text: string | RegExp, timeoutMs = 15_000): Promise<string> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const seen = await visibleText(page)
    if (typeof text === "string" ? seen.includes(text) : text.test(seen)) return seen
    if (Date.now() > deadline) throw new Error(`the page never showed ${String(text)}; it shows:\n${seen.slice(0, 2000)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Clicks the button (or link) whose visible text is exactly `label`, the `nth` of them. */
export const clickText = async (page: Page, label: string, nth = 0): Promise<void> => {
  const handles = await page.$$("button, a")
  const matching = []
  for (const h of handles) {
    const text = await h.evaluate((el) => (el as unknown as { readonly innerText: string }).innerText.trim())
    if (text === label) matching.push(h)
  }
  const target = matching[nth]
  if (!target) throw new Error(`no button or link "${label}" (#${nth}) on the page:\n${(await visibleText(page)).slice(0, 1500)}`)
  await target.click()
}

/** Presses Tab until the focused element's text is `label` (as a keyboard user reaches it). */
export const tabTo = async (page: Page, label: string, maxTabs = 40): Promise<void> => {
  for (let i = 0; i < maxTabs; i++) {
    await page.keyboard.press("Tab")
    const focused = await page.evaluate(() =>
      ((globalThis as unknown as { document: { activeElement: { innerText?: string } | null } }).document.activeElement?.innerText ?? "").trim()
    )
    if (focused === label) return
  }
  throw new Error(`Tab never reached "${label}"`)
}

/** Saves a full-page screenshot into the run's artifacts. */
export const screenshot = async (page: Page, name: string): Promise<void> => {
  mkdirSync(artifactsDir, { recursive: true })
  await page.screenshot({ path: join(artifactsDir, `${name}.png`) as `${string}.png`, fullPage: true })
}

/** Signs in on the sign-in page with a key, and waits for the app's navigation. */
export const signIn = async (page: Page, baseUrl: string, key: string): Promise<void> => {
  await page.goto(`${baseUrl}/`)
  await page.waitForSelector("input[name=key]")
  await page.type("input[name=key]", key)
  await page.keyboard.press("Enter")
  await page.waitForSelector("nav.side")
}

/** Opens a page of the app by its route (`/sessions`, `/settings?tab=keys`), as a link would. */
export const goTo = async (page: Page, baseUrl: string, route: string): Promise<void> => {
  if (!page.url().startsWith(baseUrl)) await page.goto(`${baseUrl}/`)
  await page.evaluate((hash) => {
    location.hash = hash
  }, `#${route}`)
  await page.waitForSelector("main#main")
}

/** The page's width as laid out (wider than the viewport: it scrolls sideways). */
export const layoutWidth = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth)

/**
 * A service and a browser for a test file: both started before its tests, stopped after them.
 * Read `server` and `browser` inside the tests (they are set once `beforeAll` has run).
 */
export const withDashboard = (options?: Parameters<typeof startServer>[0]): { readonly server: TestServer; readonly browser: Browser } => {
  const world = {} as { server: TestServer; browser: Browser }
  beforeAll(async () => {
    ;[world.server, world.browser] = await Promise.all([startServer(options), launchBrowser()])
  })
  afterAll(async () => {
    await world.browser?.close()
    await world.server?.stop()
  })
  return world
}

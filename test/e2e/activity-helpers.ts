import { expect } from "vitest"
import { call, type JsonResponse } from "../support/harness.ts"

/** Every non-2xx answer is the spec's envelope, with the request id also in X-Request-Id. */
export const expectEnvelope = (res: JsonResponse, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(Object.keys(res.body).sort()).toEqual(["code", "error", "request_id", "status"])
  expect(res.body.status).toBe(status)
  expect(res.body.code).toBe(code)
  expect(typeof res.body.error).toBe("string")
  expect(res.body.request_id).toMatch(/^req_[0-9a-f]{24}$/)
  expect(res.headers.get("x-request-id")).toBe(res.body.request_id)
}

const withParams = (path: string, params: Record<string, string>) => {
  const query = new URLSearchParams(params).toString()
  return query === "" ? path : `${path}${path.includes("?") ? "&" : "?"}${query}`
}

export interface Walked {
  readonly items: Array<any>
  readonly pages: Array<any>
}

/**
 * Follows a cursor-paginated list to its end, checking the envelope of every page: full pages
 * while has_more, a non-empty cursor exactly when there is more, `""` on the last page.
 * `between` runs after each page but the last (to change the data under the walk).
 */
export const walk = async (
  server: { readonly baseUrl: string },
  key: string,
  path: string,
  params: Record<string, string>,
  between?: (page: number, lastItem: any) => Promise<void>
): Promise<Walked> => {
  const items: Array<any> = []
  const pages: Array<any> = []
  let cursor = ""
  for (let i = 0; i < 1000; i++) {
    const res = await call(server, "GET", withParams(path, { ...params, ...(cursor === "" ? {} : { cursor }) }), { key })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    pages.push(res.body)
    items.push(...res.body.data)
    if (!res.body.has_more) {
      expect(res.body.cursor).toBe("")
      return { items, pages }
    }
    expect(res.body.cursor).not.toBe("")
    if (params.limit !== undefined) expect(res.body.data).toHaveLength(Number(params.limit))
    cursor = res.body.cursor
    if (between) await between(i, res.body.data[res.body.data.length - 1])
  }
  throw new Error("the list did not end")
}

export const ids = (items: ReadonlyArray<{ readonly id: string }>): Array<string> => items.map((i) => i.id)

export const get = (server: { readonly baseUrl: string }, key: string, path: string, params: Record<string, string> = {}) =>
  call(server, "GET", withParams(path, params), { key })

import { Effect } from "effect"
import { lookup } from "node:dns/promises"
import { BlockList, isIP } from "node:net"
import { normalizeHost } from "./config.ts"

/**
 * Where webhooks may point (SSRF policy). A URL must be https, have no credentials, and every
 * address its host resolves to must be public: not private, loopback, link-local, unique-local,
 * unspecified, CGNAT, multicast, reserved, documentation, or an IPv6 form embedding an IPv4
 * address (mapped, NAT64, 6to4), which could lead back inside. Hosts listed in
 * WEBHOOK_ALLOWED_HOSTS are exempt (plain http and any address), for local receivers.
 * The check runs at registration and again before every delivery, and the delivery connects to
 * the address that passed (see delivery.ts), so a DNS answer that changes in between cannot
 * redirect it.
 */
const blocked = new BlockList()
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4] // reserved, broadcast
] as const) blocked.addSubnet(net, prefix, "ipv4")
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b::", 96], // NAT64
  ["100::", 64], // discard
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["ff00::", 8] // multicast
] as const) blocked.addSubnet(net, prefix, "ipv6")

// IPv4-mapped IPv6 (::ffff:a.b.c.d) is refused outright. It is not a BlockList subnet because
// BlockList matches IPv4 addresses against a mapped IPv6 rule, which would refuse every IPv4.
const mapped = /^::ffff:/i

export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 0) return false
  if (family === 6 && mapped.test(address)) return false
  return !blocked.check(address, family === 4 ? "ipv4" : "ipv6")
}

export interface VettedUrl {
  readonly url: URL
  readonly host: string
  /** The address the delivery connects to. */
  readonly address: string
  readonly family: 4 | 6
}

export type UrlVerdict =
  | { readonly _tag: "Allowed"; readonly target: VettedUrl }
  | { readonly _tag: "Refused"; readonly reason: string }

const refused = (reason: string): UrlVerdict => ({ _tag: "Refused", reason })

/** Syntax only (no DNS): the reason a URL can never be a webhook URL, or undefined. */
export const urlSyntaxProblem = (raw: string, allowedHosts: ReadonlySet<string>): string | undefined => {
  if (!URL.canParse(raw)) return "url is not an absolute URL"
  const url = new URL(raw)
  const host = normalizeHost(url.hostname)
  if (url.protocol !== "https:" && url.protocol !== "http:") return "url must use https"
  if (url.protocol === "http:" && !allowedHosts.has(host)) return "url must use https"
  if (url.username !== "" || url.password !== "") return "url must not contain credentials"
  if (host === "") return "url has no host"
  return undefined
}

/** Resolves the URL's host (all addresses) and applies the policy. */
export const vetUrl = (raw: string, allowedHosts: ReadonlySet<string>): Effect.Effect<UrlVerdict> =>
  Effect.gen(function*() {
    const problem = urlSyntaxProblem(raw, allowedHosts)
    if (problem !== undefined) return refused(problem)
    const url = new URL(raw)
    const host = normalizeHost(url.hostname)
    const literal = isIP(host)
    const addresses: ReadonlyArray<{ readonly address: string; readonly family: number }> = literal !== 0
      ? [{ address: host, family: literal }]
      : yield* Effect.tryPromise(() => lookup(host, { all: true, verbatim: true })).pipe(
        Effect.orElseSucceed((): ReadonlyArray<{ readonly address: string; readonly family: number }> => [])
      )
    const first = addresses[0]
    if (first === undefined) return refused(`the host ${host} does not resolve`)
    if (!allowedHosts.has(host)) {
      const inside = addresses.find((a) => !isPublicAddress(a.address))
      if (inside !== undefined) return refused(`the host ${host} resolves to a non-public address (${inside.address})`)
    }
    return { _tag: "Allowed", target: { url, host, address: first.address, family: first.family === 6 ? 6 : 4 } }
  })

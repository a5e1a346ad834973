import { Effect } from "effect"
import { lookup } from "node:dns/promises"
import { BlockList, isIP } from "node:net"
import { normalizeHost } from "./config.ts"

/**
 * Where webhooks may point (SSRF policy). A URL must be https, have no credentials, and every
 * address its host resolves to must be public. IPv4: not private, loopback, link-local, CGNAT,
 * unspecified, multicast, reserved or documentation. IPv6: global unicast (2000::/3) only, less
 * the ranges in it that embed an IPv4 address or are not globally reachable (Teredo and the rest
 * of 2001::/23, 6to4, documentation). Everything outside 2000::/3 is refused with it: IPv4-mapped
 * and IPv4-compatible forms, NAT64 (well-known and local-use), unique-local, link-local,
 * site-local, multicast; each could lead back inside. Allowing the one global range, rather than
 * listing the bad ones, leaves no form unlisted. Hosts in WEBHOOK_ALLOWED_HOSTS are exempt (plain
 * http and any address), for local receivers.
 * The check runs at registration and again before every delivery, and the delivery connects to
 * the address that passed (see delivery.ts), so a DNS answer that changes in between cannot
 * redirect it.
 */
const blocked = new BlockList()
for (
  const [net, prefix] of [
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
  ] as const
) blocked.addSubnet(net, prefix, "ipv4")

const globalUnicast = new BlockList()
globalUnicast.addSubnet("2000::", 3, "ipv6")

const notGlobal = new BlockList()
for (
  const [net, prefix] of [
    ["2001::", 23], // IETF protocol assignments: Teredo (2001::/32, embeds IPv4), benchmarking, ORCHID
    ["2001:db8::", 32], // documentation
    ["2002::", 16], // 6to4 (embeds IPv4)
    ["3fff::", 20] // documentation
  ] as const
) notGlobal.addSubnet(net, prefix, "ipv6")

export const isPublicAddress = (address: string): boolean => {
  const family = isIP(address)
  if (family === 4) return !blocked.check(address, "ipv4")
  if (family === 6) return globalUnicast.check(address, "ipv6") && !notGlobal.check(address, "ipv6")
  return false
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

/** What an operator can do about a refusal the allow-list lifts (a local or in-house receiver). */
const allowHint = "unless the service lists the host in WEBHOOK_ALLOWED_HOSTS"

/** Syntax only (no DNS): the reason a URL can never be a webhook URL, or undefined. */
export const urlSyntaxProblem = (raw: string, allowedHosts: ReadonlySet<string>): string | undefined => {
  if (!URL.canParse(raw)) return "url is not an absolute URL"
  const url = new URL(raw)
  const host = normalizeHost(url.hostname)
  if (url.protocol !== "https:" && url.protocol !== "http:") return "url must use https"
  if (url.protocol === "http:" && !allowedHosts.has(host)) return `url must use https (plain http is refused ${allowHint})`
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
      if (inside !== undefined) {
        return refused(`the host ${host} resolves to a non-public address (${inside.address}), which is refused ${allowHint}`)
      }
    }
    return { _tag: "Allowed", target: { url, host, address: first.address, family: first.family === 6 ? 6 : 4 } }
  })

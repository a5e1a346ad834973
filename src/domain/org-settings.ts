/** The org settings an admin may change (PATCH /org), and what makes a value acceptable. */

export const sessionTimeoutBounds = { minimum: 60, maximum: 86_400 } as const
export const driftPromptsBounds = { minimum: 0, maximum: 20 } as const

export interface OrgSettings {
  readonly time_zone?: string | undefined
  /** Seconds; the spec names this setting `session_timeout`. */
  readonly session_timeout?: number | undefined
  /** Off-goal prompts in a row that make a goal drift, 0 for none; null: the deployment's `DRIFT_PROMPTS`. */
  readonly drift_prompts?: number | null | undefined
}

const listedZones: ReadonlyArray<string> = ["UTC", ...Intl.supportedValuesOf("timeZone")]
const listedByLowerCase = new Map(listedZones.map((zone) => [zone.toLowerCase(), zone]))

/**
 * The spelling to store for an IANA time zone name, or undefined when it is not one. ICU's list
 * (`Intl.supportedValuesOf`) holds canonical names only and leaves out current links such as
 * Asia/Kolkata or Europe/Kyiv, so a name Intl.DateTimeFormat accepts is a zone too; UTC offsets
 * ("+01:00"), which it also accepts, are not names. Names match case-insensitively, as IANA
 * names do, and a listed name is stored in its listed spelling.
 */
export const normalizeTimeZone = (name: string): string | undefined => {
  const listed = listedByLowerCase.get(name.toLowerCase())
  if (listed !== undefined) return listed
  if (!/^[A-Za-z]/.test(name)) return undefined
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: name })
    return name
  } catch {
    return undefined
  }
}

/** The settings to store, or the problems (`field: why`) that make them unacceptable. */
export const validateOrgSettings = (
  input: OrgSettings
): { readonly ok: OrgSettings } | { readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const timeZone = input.time_zone === undefined ? undefined : normalizeTimeZone(input.time_zone)
  if (input.time_zone !== undefined && timeZone === undefined) {
    problems.push(`time_zone: ${JSON.stringify(input.time_zone)} is not an IANA time zone name (e.g. "Europe/Berlin", "UTC")`)
  }
  const timeout = input.session_timeout
  if (timeout !== undefined && (timeout < sessionTimeoutBounds.minimum || timeout > sessionTimeoutBounds.maximum)) {
    problems.push(`session_timeout: must be between ${sessionTimeoutBounds.minimum} and ${sessionTimeoutBounds.maximum}, got ${timeout}`)
  }
  const drift = input.drift_prompts
  if (typeof drift === "number" && (drift < driftPromptsBounds.minimum || drift > driftPromptsBounds.maximum)) {
    problems.push(`drift_prompts: must be between ${driftPromptsBounds.minimum} and ${driftPromptsBounds.maximum} (0: no goal drift), got ${drift}`)
  }
  return problems.length > 0 ? { problems } : { ok: { time_zone: timeZone, session_timeout: timeout, drift_prompts: drift } }
}

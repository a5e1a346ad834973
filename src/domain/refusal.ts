import { Data } from "effect"

/** The HTTP statuses a refusal can have where it reaches the wire. */
export type RefusalStatus = 400 | 404 | 409 | 422

/**
 * The base of the semantic errors that domain and store code raise when they refuse a request
 * ("no such team", "the team is in use"). Each is named for what happened and carries the
 * message a client reads; `status` and `code` say how the one envelope renders it on the wire
 * (src/http/refusals.ts), so the code that raises one knows nothing of HTTP.
 */
export const Refusal = <const Tag extends string, const Status extends RefusalStatus>(tag: Tag, status: Status, code: string) => {
  class Refused extends Data.TaggedError(tag)<{ readonly message: string }> {
    readonly status: Status = status
    readonly code: string = code
    constructor(message: string) {
      super({ message })
    }
  }
  return Refused
}

/** Any refusal, whatever its tag. */
export type AnyRefusal = InstanceType<ReturnType<typeof Refusal<string, RefusalStatus>>>

export const isRefusal = (u: unknown): u is AnyRefusal =>
  u instanceof Error && "_tag" in u && "status" in u && "code" in u && typeof (u as { status: unknown }).status === "number"

/** A refusal for an id that names nothing of the tenant: "`noun` `id` not found", 404. */
export const NotFoundRefusal = <const Tag extends string>(tag: Tag, noun: string) =>
  class extends Refusal(tag, 404, "not_found") {
    constructor(id: string) {
      super(`${noun} ${id} not found`)
    }
  }

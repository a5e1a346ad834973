import { Effect } from "effect"
import { BadRequest, Conflict, NotFound, Unprocessable } from "../domain/errors.ts"
import { type AnyRefusal, isRefusal } from "../domain/refusal.ts"

/** The envelope class a refusal of each status is rendered as. */
type EnvelopeOf<E> = E extends { readonly status: 400 } ? BadRequest
  : E extends { readonly status: 404 } ? NotFound
  : E extends { readonly status: 409 } ? Conflict
  : E extends { readonly status: 422 } ? Unprocessable
  : E

/** A refusal as the envelope shows it: its status, its code, its message as `error`. */
export const renderRefusal = <E extends AnyRefusal>(refusal: E): EnvelopeOf<E> => {
  const rendered = refusal.status === 400
    ? BadRequest.of(refusal.message, refusal.code)
    : refusal.status === 404
    ? NotFound.of(refusal.message, refusal.code)
    : refusal.status === 409
    ? Conflict.of(refusal.message, refusal.code)
    : Unprocessable.of(refusal.message, refusal.code)
  return rendered as EnvelopeOf<E>
}

/** An effect whose refusals are rendered as envelopes; other errors pass unchanged. */
export const onTheWire = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, EnvelopeOf<E>, R> =>
  Effect.mapError(self, (e) => (isRefusal(e) ? renderRefusal(e) : e) as EnvelopeOf<E>)

/** A service as a handler sees it: every method's (and effect's) refusals rendered as envelopes. */
export type OnTheWire<S> = {
  readonly [K in keyof S]: S[K] extends (...args: infer P) => Effect.Effect<infer A, infer E, infer R> ? (...args: P) => Effect.Effect<A, EnvelopeOf<E>, R>
    : S[K] extends Effect.Effect<infer A, infer E, infer R> ? Effect.Effect<A, EnvelopeOf<E>, R>
    : S[K]
}

/**
 * The one place refusals become the envelope's errors: handlers take a repository through it
 * (`serviceOnTheWire(yield* Tenancy)`), so neither the store nor a handler maps errors itself.
 */
export const serviceOnTheWire = <S extends object>(service: S): OnTheWire<S> => {
  const view: Record<string, unknown> = {}
  for (const [name, member] of Object.entries(service)) {
    view[name] = typeof member === "function"
      ? (...args: ReadonlyArray<unknown>) => {
        const result: unknown = member(...args)
        return Effect.isEffect(result) ? onTheWire(result) : result
      }
      : Effect.isEffect(member)
      ? onTheWire(member)
      : member
  }
  return view as OnTheWire<S>
}

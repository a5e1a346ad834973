import { Context, Effect, Layer } from "effect"

/**
 * Whether the node has begun to stop serving. From then on every response says
 * `Connection: close`, so each keep-alive connection ends after the request it is serving: the
 * server's close completes once those are answered (with their verdicts: the engine stops after
 * the HTTP server), instead of waiting for busy connections to go idle and then cutting the
 * requests still in flight, which answered 503 for signals already appended.
 */
export class Draining extends Context.Service<Draining, {
  readonly started: () => boolean
  readonly start: Effect.Effect<void>
}>()("signal-engine/http/Draining") {
  static readonly layer = Layer.sync(Draining, () => {
    let on = false
    return Draining.of({ started: () => on, start: Effect.sync(() => void (on = true)) })
  })
}

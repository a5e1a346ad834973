import { Config, Context, Effect, Layer, Option, Schema } from "effect"
import { bundledDatabase, memoizedRates, type PriceInput, type PriceTable, priceSignal, type Priced } from "../domain/prices.ts"

const perMillion = Schema.Finite.pipe(Schema.check(Schema.isGreaterThanOrEqualTo(0)))
const PriceOverrides = Schema.fromJsonString(
  Schema.Record(
    Schema.String,
    Schema.Struct({
      input: perMillion,
      output: perMillion,
      cache_read: Schema.optional(perMillion),
      cache_write: Schema.optional(perMillion)
    })
  )
)

/** The model prices in force: genai-prices' bundled database, with MODEL_PRICES (JSON) on top. */
export class Pricing extends Context.Service<Pricing, {
  readonly overrides: PriceTable
  readonly price: (input: PriceInput) => Priced
}>()("signal-engine/engine/Pricing") {
  static readonly layer = Layer.effect(
    Pricing,
    Effect.gen(function*() {
      const overrides: PriceTable = Option.getOrElse(yield* Config.option(Config.schema(PriceOverrides, "MODEL_PRICES")), () => ({}))
      const database = yield* Effect.promise(bundledDatabase)
      const lookup = memoizedRates(database, overrides)
      return Pricing.of({ overrides, price: (input) => priceSignal(lookup, input) })
    })
  )
}

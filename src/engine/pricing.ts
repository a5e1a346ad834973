import { Config, Context, Effect, Layer, Option, Schema } from "effect"
import { defaultPrices, memoizedLookup, type PriceTable, priceSignal, type Priced } from "../domain/prices.ts"

const PriceOverrides = Schema.fromJsonString(
  Schema.Record(Schema.String, Schema.Struct({ input: Schema.Number, output: Schema.Number }))
)

/** The model price table in force: the shipped one, with MODEL_PRICES (JSON) on top. */
export class Pricing extends Context.Service<Pricing, {
  readonly table: PriceTable
  readonly price: (input: Parameters<typeof priceSignal>[1]) => Priced
}>()("signal-engine/engine/Pricing") {
  static readonly layer = Layer.effect(
    Pricing,
    Effect.gen(function*() {
      const overrides = yield* Config.option(Config.schema(PriceOverrides, "MODEL_PRICES"))
      const table: PriceTable = { ...defaultPrices, ...Option.getOrElse(overrides, () => ({})) }
      const lookup = memoizedLookup(table)
      return Pricing.of({ table, price: (input) => priceSignal(lookup, input) })
    })
  )
}

/** What every scenario is given: the working directory, the database, the broker, the load generator and the report's rows. */
import type { Broker } from "./broker.ts"
import type { Database } from "./database.ts"
import type { Load, Measured } from "./load.ts"
import type { Profiles } from "./profiles.ts"
import type { Row } from "./report.ts"

export interface Bench {
  /** The run's temporary directory: database, broker, logs, load specs, profiles. */
  readonly dir: string
  readonly database: Database
  /** Started only when a scenario runs over Kafka. */
  readonly broker: Broker | undefined
  readonly load: Load
  readonly measured: Measured
  readonly profiles: Profiles
  /** Adds a row to the report as soon as it is measured, so a later failure keeps it. */
  readonly record: (row: Row) => void
}

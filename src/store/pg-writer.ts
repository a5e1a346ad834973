import { Effect, Redacted, Schema, type Scope } from "effect"
import pg from "pg"

/**
 * The projections' write connection: one node-postgres client, kept for the node's commits
 * (the commit pipeline has one write in flight at a time), because it can stream `COPY … FROM
 * STDIN`, which @effect/sql-pg cannot. Reads and every other statement use the Effect SQL pool.
 */
export interface PgWriter {
  /**
   * Runs `body` in a transaction (BEGIN … COMMIT) on the write connection; ROLLBACK when it
   * throws. A connection that fails is dropped and the next call opens a new one.
   */
  readonly transaction: <A>(body: (tx: WriterTx) => Promise<A>) => Effect.Effect<A, WriteFailed>
  /**
   * Runs `text`, statements that end with a `COPY … FROM STDIN` (text format) of `data`, as one
   * query: one round trip, one transaction (PostgreSQL runs the statements of one query string
   * together, so an error in any of them leaves nothing of the others). `$1`, `$2`, … in `text`
   * stand for `values`, sent as string literals (a query string has no parameters). Answers the
   * rows of the statements before the `COPY`, each a list of its columns' text (null for NULL).
   */
  readonly atomic: (
    text: string,
    values: ReadonlyArray<string>,
    data: string
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<string | null>>, WriteFailed>
}

export interface WriterTx {
  readonly query: <R extends object>(text: string, params: ReadonlyArray<unknown>) => Promise<ReadonlyArray<R>>
  /** `COPY <target> FROM STDIN` (text format) with the given rows, already encoded; answers the row count. */
  readonly copyFrom: (target: string, data: string) => Promise<number>
}

export class WriteFailed extends Schema.TaggedError<WriteFailed>()("WriteFailed", {
  message: Schema.String,
  /** PostgreSQL's SQLSTATE, when the database refused the statement. */
  code: Schema.optional(Schema.String)
}) {}

/** What a `pg` connection offers a submittable during COPY (not in its type declarations). */
interface CopyConnection {
  readonly stream: { readonly cork: () => void; readonly uncork: () => void; readonly write: (chunk: Buffer) => boolean }
  readonly sendCopyFromChunk: (chunk: Buffer) => void
  readonly endCopyFrom: () => void
}

/**
 * A simple query whose last statement is a `COPY … FROM STDIN` (text format), for node-postgres.
 * The query, `data` and the end of the copy go out together, in one write, instead of `data`
 * waiting for the server's `CopyInResponse`: that wait was a round trip through this process's
 * event loop inside every commit, with the transaction open meanwhile (pg_stat_statements counted
 * ~1.9 ms of a busy node's commit in the `COPY`). The protocol allows it: when a statement before
 * the `COPY` fails, the rest of the query string is skipped and the server drops copy messages
 * that arrive outside a copy (PostgresMain ignores them, "per protocol spec"). Collects the rows
 * the statements before the `COPY` answer, and the row count of the last command (the `COPY`).
 */
class CopyQuery implements pg.Submittable {
  readonly done: Promise<{ readonly rows: ReadonlyArray<ReadonlyArray<string | null>>; readonly copied: number }>
  private resolve!: (result: { readonly rows: ReadonlyArray<ReadonlyArray<string | null>>; readonly copied: number }) => void
  private reject!: (error: unknown) => void
  private readonly rows: Array<ReadonlyArray<string | null>> = []
  private copied = 0
  private readonly text: ReadonlyArray<Buffer>
  private readonly data: Buffer
  /** `text`: the query string in pieces, sent one after the other (never joined into one string). */
  constructor(text: ReadonlyArray<Buffer>, data: Buffer) {
    this.text = text
    this.data = data
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve
      this.reject = reject
    })
  }
  submit(connection: pg.Connection) {
    const c = connection as unknown as CopyConnection
    c.stream.cork()
    // A Query message: 'Q', its length (itself included), the text, a NUL.
    let length = 4 + 1
    for (const piece of this.text) length += piece.length
    const head = Buffer.allocUnsafe(5)
    head[0] = 0x51
    head.writeInt32BE(length, 1)
    c.stream.write(head)
    for (const piece of this.text) c.stream.write(piece)
    c.stream.write(nul)
    if (this.data.length > 0) c.sendCopyFromChunk(this.data)
    c.endCopyFrom()
    c.stream.uncork()
  }
  handleRowDescription() {}
  handleDataRow(message: { readonly fields: ReadonlyArray<string | null> }) {
    this.rows.push(message.fields)
  }
  handleCommandComplete(message: { readonly text: string }) {
    this.copied = Number(message.text.split(" ").pop())
  }
  /** The data went with the query. */
  handleCopyInResponse() {}
  handleReadyForQuery() {
    this.resolve({ rows: this.rows, copied: this.copied })
  }
  // The client forgets an errored query before its ReadyForQuery arrives: settle here.
  handleError(error: unknown) {
    this.reject(error)
  }
  handleEmptyQuery() {}
}

const nul = Buffer.from([0])

/**
 * The query string's pieces: `text` cut at its `$n`, each value a literal between them. The large
 * values (every table's rows as JSON) become Buffers outside V8's heap at once: the text is never
 * built as one string (which, megabytes a commit, went to the old generation and was collected
 * only by its major collections). A dollar-quoted literal needs no escaping, so the value is not
 * copied to double its quotes, unless it holds the quote's tag.
 */
export const queryPieces = (text: string, values: ReadonlyArray<string>): ReadonlyArray<Buffer> => {
  const pieces: Array<Buffer> = []
  let at = 0
  for (const m of text.matchAll(/\$(\d+)/g)) {
    pieces.push(Buffer.from(text.slice(at, m.index)))
    const value = values[Number(m[1]) - 1]!
    // The tag inside the value, or its last characters with the closing tag, would end it early.
    const quoted = !value.includes(dollarTag) && !value.endsWith("$se")
    pieces.push(...(quoted ? [dollarQuote, Buffer.from(value), dollarQuote] : [Buffer.from(sqlLiteral(value))]))
    at = m.index + m[0].length
  }
  pieces.push(Buffer.from(text.slice(at)))
  return pieces
}
const dollarTag = "$se$"
const dollarQuote = Buffer.from(dollarTag)

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

export const makePgWriter = (config: {
  readonly url?: Redacted.Redacted | undefined
  readonly host?: string | undefined
  readonly port?: number | undefined
  readonly database?: string | undefined
  readonly username?: string | undefined
  readonly password?: Redacted.Redacted | Effect.Effect<Redacted.Redacted> | undefined
}): Effect.Effect<PgWriter, never, Scope.Scope> =>
  Effect.gen(function*() {
    const password = config.password === undefined
      ? undefined
      : Redacted.value(Redacted.isRedacted(config.password) ? config.password : yield* config.password)
    const options: pg.ClientConfig = {
      ...(config.url ? { connectionString: Redacted.value(config.url) } : {}),
      ...(config.host ? { host: config.host } : {}),
      ...(config.port ? { port: config.port } : {}),
      ...(config.database ? { database: config.database } : {}),
      ...(config.username ? { user: config.username } : {}),
      ...(password !== undefined ? { password } : {}),
      application_name: "signal-engine-writer",
      connectionTimeoutMillis: 10_000
    }
    let client: pg.Client | undefined
    let closed = false

    const connect = async (): Promise<pg.Client> => {
      if (client) return client
      const fresh = new pg.Client(options)
      // A broken connection is dropped; the error also fails the query in flight, if any.
      fresh.on("error", () => {
        if (client === fresh) client = undefined
      })
      try {
        await fresh.connect()
        // `atomic` sends values as string literals, in which a backslash must be only itself.
        await fresh.query("SET standard_conforming_strings = on")
      } catch (error) {
        fresh.end().catch(() => undefined)
        throw error
      }
      client = fresh
      return fresh
    }
    const drop = (broken: pg.Client) => {
      if (client === broken) client = undefined
      broken.end().catch(() => undefined)
    }

    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        closed = true
        const open = client
        client = undefined
        await open?.end().catch(() => undefined)
      })
    )

    const run = async <A>(body: (tx: WriterTx) => Promise<A>): Promise<A> => {
      if (closed) throw new Error("the write connection is closed")
      const c = await connect()
      const tx: WriterTx = {
        query: async <R extends object>(text: string, params: ReadonlyArray<unknown>) => (await c.query<R & pg.QueryResultRow>(text, [...params])).rows,
        copyFrom: async (target, data) => (await c.query(new CopyQuery([Buffer.from(`COPY ${target} FROM STDIN`)], Buffer.from(data))).done).copied
      }
      await c.query("BEGIN")
      try {
        const result = await body(tx)
        await c.query("COMMIT")
        return result
      } catch (error) {
        // A refused statement leaves the connection usable once rolled back; anything else drops it.
        await c.query("ROLLBACK").catch(() => drop(c))
        if (codeOf(error) === undefined) drop(c)
        throw error
      }
    }

    const atomic = async (text: string, values: ReadonlyArray<string>, data: string) => {
      if (closed) throw new Error("the write connection is closed")
      const c = await connect()
      try {
        return (await c.query(new CopyQuery(queryPieces(text, values), Buffer.from(data))).done).rows
      } catch (error) {
        // A refused statement leaves the connection as it was (the query string's implicit
        // transaction is gone with it); anything else drops it.
        if (codeOf(error) === undefined) drop(c)
        throw error
      }
    }

    const failed = (error: unknown) => {
      const code = codeOf(error)
      return new WriteFailed({ message: error instanceof Error ? error.message : String(error), ...(code ? { code } : {}) })
    }

    return {
      transaction: (body) => Effect.tryPromise({ try: () => run(body), catch: failed }),
      atomic: (text, values, data) => Effect.tryPromise({ try: () => atomic(text, values, data), catch: failed })
    } satisfies PgWriter
  })

/** A string literal of SQL (with standard_conforming_strings on, as the writer's connection has it). */
export const sqlLiteral = (text: string): string => `'${text.replaceAll("'", "''")}'`

/** One value in PostgreSQL's COPY text format. Non-finite numbers are NULL, as JSON would make them. */
export const copyValue = (value: unknown): string => {
  switch (typeof value) {
    case "string":
      return escapeCopy(value)
    case "number":
      return Number.isFinite(value) ? String(value) : "\\N"
    case "boolean":
      return value ? "t" : "f"
    case "bigint":
      return String(value)
    case "undefined":
      return "\\N"
    default:
      return value === null ? "\\N" : escapeCopy(JSON.stringify(value))
  }
}

const special = /[\\\n\r\t]/
const escapeCopy = (text: string): string =>
  special.test(text)
    ? text.replace(/[\\\n\r\t]/g, (ch) => (ch === "\\" ? "\\\\" : ch === "\n" ? "\\n" : ch === "\r" ? "\\r" : "\\t"))
    : text

/** Rows in COPY text format: tab-separated values, one line per row. */
export const copyRows = <R>(rows: ReadonlyArray<R>, columns: ReadonlyArray<keyof R & string>): string => {
  let out = ""
  for (const row of rows) {
    let line = ""
    for (let i = 0; i < columns.length; i++) line += (i === 0 ? "" : "\t") + copyValue(row[columns[i]!])
    out += line + "\n"
  }
  return out
}

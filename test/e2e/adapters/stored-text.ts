import pg from "pg"

/**
 * Rows of every table of the service's database whose text holds `needle`, counted by table: how
 * a test shows that a secret was stored nowhere (the whole database, not the places we expect).
 */
export const rowsHolding = async (databaseUrl: string, needle: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const tables = await client.query<{ name: string }>(
      "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
    )
    const found: Record<string, number> = {}
    for (const { name } of tables.rows) {
      const r = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${name} t WHERE strpos(t::text, $1) > 0`, [needle])
      if (Number(r.rows[0]!.n) > 0) found[name] = Number(r.rows[0]!.n)
    }
    return { tables: tables.rows.length, found }
  } finally {
    await client.end()
  }
}

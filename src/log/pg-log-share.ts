/**
 * The fair share of PgLog partitions: how many each live node should own, decided by every node
 * from the same picture (the advisory locks in `pg_locks`), so that no node needs to ask another.
 * Plain functions over plain data.
 */

/** A live node of the log as its lock session shows it: a session holding the member lock or a partition lock. */
export interface Holder {
  /** The backend pid of the node's lock session. */
  readonly id: number
  /** The partitions whose locks it holds. */
  readonly owned: number
  /** Whether it gives partitions back when it holds more than its share (it holds the member lock). */
  readonly rebalances: boolean
}

/** What one node does in one round of its lock session. */
export interface SharePlan {
  /** Live nodes (this one included). */
  readonly members: number
  /** This node's share. */
  readonly share: number
  /** How many free partitions to take. */
  readonly take: number
  /** How many of its partitions to let go, for nodes below their share. */
  readonly release: number
  /**
   * Below its share while another node that rebalances holds more than its own: partitions are on
   * their way here, so this node has no share to speak of yet (readiness says "rejoining").
   */
  readonly awaiting: boolean
}

/**
 * Each holder's share: `floor(partitions / n)`, one more for the `partitions mod n` holders that
 * own most now (ties: lower id), so a balanced cluster stays as it is and moves are fewest.
 */
export const shares = (partitions: number, holders: ReadonlyArray<Holder>): ReadonlyMap<number, number> => {
  const ranked = [...holders].sort((a, b) => b.owned - a.owned || a.id - b.id)
  const base = Math.floor(partitions / Math.max(1, ranked.length))
  const extra = partitions - base * ranked.length
  return new Map(ranked.map((h, i) => [h.id, base + (i < extra ? 1 : 0)]))
}

/**
 * The round of node `me`, holding `owned` partitions, when `free` partitions have no holder and
 * `holders` hold the rest (this node's own entry there, if any, is `me`'s). A node takes free
 * partitions up to its share; one above its share lets go of no more than the others below
 * theirs still lack once the free partitions are counted, so a partition moves only to a node
 * that will take it, and a balanced cluster never moves one.
 */
export const planShare = (
  partitions: number,
  free: number,
  me: { readonly id: number; readonly owned: number },
  holders: ReadonlyArray<Holder>
): SharePlan => {
  const others = holders.filter((h) => h.id !== me.id)
  const share = shares(partitions, [{ ...me, rebalances: true }, ...others])
  const mine = share.get(me.id)!
  const lacking = others.reduce((n, h) => n + Math.max(0, share.get(h.id)! - h.owned), 0)
  return {
    members: others.length + 1,
    share: mine,
    take: Math.min(free, Math.max(0, mine - me.owned)),
    release: Math.max(0, Math.min(me.owned - mine, lacking - free)),
    awaiting: me.owned < mine && others.some((h) => h.rebalances && h.owned > share.get(h.id)!)
  }
}

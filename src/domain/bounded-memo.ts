/**
 * A pure function of a string, remembered: goal descriptions repeat on every prompt, their words
 * need not be found again. Forgotten all at once past `limit` entries, so memory stays bounded
 * whatever text arrives.
 */
export const boundedMemo = <A>(compute: (key: string) => A, limit = 10_000): (key: string) => A => {
  const known = new Map<string, A>()
  return (key) => {
    if (known.has(key)) return known.get(key) as A
    const found = compute(key)
    if (known.size > limit) known.clear()
    known.set(key, found)
    return found
  }
}

/** Polls `probe` until `done` holds for its value, or fails after `timeoutMs` with the last value seen. */
export const waitFor = async <A>(
  probe: () => Promise<A>,
  done: (value: A) => boolean,
  options: { readonly timeoutMs?: number; readonly what?: string } = {}
): Promise<A> => {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000)
  let last: A = await probe()
  while (!done(last)) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${options.what ?? "a condition"}; last value: ${JSON.stringify(last)}`)
    }
    await new Promise((r) => setTimeout(r, 50))
    last = await probe()
  }
  return last
}

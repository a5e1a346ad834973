/**
 * The service's live heap: a full garbage collection, then `process.memoryUsage().heapUsed`,
 * through the inspector protocol (the service runs with --inspect on loopback for the memory
 * scenario only). RSS keeps the heap's high-water mark after a burst (V8 holds on to its pages);
 * the live heap after a collection is what idle users actually retain.
 */
export const heapAfterGc = async (inspectPort: number): Promise<number> => {
  const targets = await (await fetch(`http://127.0.0.1:${inspectPort}/json/list`)).json() as ReadonlyArray<{ webSocketDebuggerUrl: string }>
  const socket = new WebSocket(targets[0]!.webSocketDebuggerUrl)
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true })
    socket.addEventListener("error", reject, { once: true })
  })
  let nextId = 0
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<any>((resolve) => {
      const id = ++nextId
      const onMessage = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data))
        if (message.id !== id) return
        socket.removeEventListener("message", onMessage)
        resolve(message.result)
      }
      socket.addEventListener("message", onMessage)
      socket.send(JSON.stringify({ id, method, params }))
    })
  try {
    await send("HeapProfiler.collectGarbage")
    await send("HeapProfiler.collectGarbage")
    const result = await send("Runtime.evaluate", { expression: "process.memoryUsage().heapUsed", returnByValue: true })
    return Number(result.result.value)
  } finally {
    socket.close()
  }
}

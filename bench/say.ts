/** The harness's progress lines go to stderr, so that stdout can carry the one JSON line. */
export const say = (line: string) => process.stderr.write(`bench: ${line}\n`)

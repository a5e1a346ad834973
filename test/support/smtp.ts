import { type ParsedMail, simpleParser } from "mailparser"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  readonly subject: string
  readonly text: string
  readonly parsed: ParsedMail
}

/**
 * A real SMTP server on 127.0.0.1 (smtp-server) that accepts every message and keeps it as
 * mailparser parses it: what a recipient's mail client would show.
 */
export const startSmtpServer = async () => {
  const received: Array<ReceivedMail> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream).then((parsed) => {
        received.push({
          from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: parsed.subject ?? "",
          text: parsed.text ?? "",
          parsed
        })
        callback()
      }, (e: Error) => callback(e))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

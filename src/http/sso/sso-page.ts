import { HttpServerResponse } from "effect/http"

/**
 * The page a person sees when signing in fails: what went wrong, in plain words, and a way back
 * to the sign-in page; never a stack or a token. Its own strict policy: no script, no frame.
 */
const escape = (text: string) => text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[c]!)

export const failurePage = (status: number, message: string, detail?: string, requestId?: string) =>
  HttpServerResponse.text(
    `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in failed · signal-engine</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}
.detail{color:#57606a;font-size:.9rem}a{color:#0b5cad}</style></head>
<body><main>
<h1>Sign-in failed</h1>
<p id="reason">${escape(message)}</p>
${detail ? `<p class="detail">${escape(detail)}</p>` : ""}
${requestId ? `<p class="detail">Request id: ${escape(requestId)}</p>` : ""}
<p><a href="/">Back to sign-in</a></p>
</main></body>
</html>
`,
    {
      status,
      contentType: "text/html; charset=utf-8",
      headers: {
        "cache-control": "no-store",
        "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer"
      }
    }
  )

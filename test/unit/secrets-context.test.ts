import { describe, expect, it } from "vitest"
import { scanText } from "../../adapters/src/secrets/scan.js"

/** A password named in prose, which gitleaks' generic rule (wanting an assignment) misses. */
describe("passwords named in prose", () => {
  const password = "Vq7rT2mLx9KpZ4wNc8Hd"

  it("are found as generic_api_key, where the secret is", () => {
    const text = `The deploy fails with 401. My DB_PASSWORD is ${password}, can you check why?`
    expect(scanText(text)).toEqual([{ kind: "generic_api_key", secret: password, start: text.indexOf(password) }])
    expect(scanText(`use this key for the integration test: ${password}\nthen run npm test`).map((h) => h.kind)).toEqual(["generic_api_key"])
  })

  it("are not words, names, paths, hashes or documented examples", () => {
    for (
      const text of [
        "the key is getElementById in this file",
        "the secret is stored in /var/lib/app/secrets/database.json",
        "the token is the commit 3f786850e387550fdab836ed7e6dc881de23001b",
        "the access key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY from the AWS docs",
        "my password is ${DB_PASSWORD} from the environment"
      ]
    ) expect(scanText(text), text).toEqual([])
  })
})

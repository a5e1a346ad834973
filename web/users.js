// Users by name wherever the API gives a user id: the org's users are read once per sign-in.
import { html } from "htm/preact"
import { useEffect, useState } from "preact/hooks"
import { auth, listAll } from "./api.js"
import { shortId } from "./format.js"

/** @type {Promise<Map<string, string>> | null} */
let names = null
/** Drops what was read: after a user is added or renamed. */
export const forgetUserNames = () => {
  names = null
}
auth.onSignedOut(forgetUserNames)

/** The org's user names by id; empty when the key may not read users (the ids show instead). */
export const userNames = () => (names ??= listAll("/users").then((users) => new Map(users.map((u) => [u.id, u.name])), () => new Map()))

/** @param {{ id: string }} props */
export const UserName = ({ id }) => {
  const [known, setKnown] = useState(/** @type {Map<string, string> | null} */ (null))
  useEffect(() => {
    userNames().then(setKnown)
  }, [])
  return html`<span title=${id}>${known?.get(id) ?? shortId(id)}</span>`
}

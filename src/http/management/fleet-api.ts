import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Forbidden, NotFound, Unprocessable } from "../../domain/errors.ts"
import { FleetCredential, UnknownIdentity } from "../../domain/fleet.ts"
import { KeyHousekeeping } from "../contract.ts"
import { IdParams, listEndpoint, managementGroup, Name, requires } from "./endpoints.ts"

const fleetNote = "A fleet credential (`flt_live_…`/`flt_test_…`) is the org's ingest credential for managed settings: one " +
  "value on every machine, each OTLP log record attributed to the user its `user.email` names (the record's, else the " +
  "resource's), each Claude Code HTTP hook call to the user its X-Signal-Engine-User header names, matched by e-mail in any " +
  "letter case. An identity that is no user of the org is created as a member or refused, as the org's `unknown_identities` " +
  "(PATCH /org) says; refused ones are counted (GET /fleet/unknown-identities)."

export class FleetGroup extends HttpApiGroup.make("fleet")
  .add(
    listEndpoint("/fleet-credentials", FleetCredential).annotateMerge(requires("admin", "read", fleetNote))
      .annotate(KeyHousekeeping, true),
    HttpApiEndpoint.post("create", "/fleet-credentials", {
      payload: Schema.Struct({ name: Name }),
      success: Schema.Struct({
        ...FleetCredential.fields,
        key: Schema.String.annotate({ description: "the fleet credential itself; shown only in this response" })
      }).pipe(HttpApiSchema.status(201)),
      error: [Unprocessable, Forbidden]
    }).annotateMerge(requires("admin", "write", `Creates a fleet credential of the caller's environment. ${fleetNote}`)),
    HttpApiEndpoint.delete("revoke", "/fleet-credentials/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: NotFound })
      .annotateMerge(requires("admin", "write", "Revokes the fleet credential: its records and hook calls are 401 from then on; 204."))
      .annotate(KeyHousekeeping, true),
    HttpApiEndpoint.get("unknownIdentities", "/fleet/unknown-identities", {
      success: Schema.Struct({ data: Schema.Array(UnknownIdentity) })
    }).annotateMerge(requires(
      "admin",
      "read",
      "The identities fleet credentials of the caller's environment were sent for that are no user of the org and were " +
        "refused (the org's `unknown_identities` is `refuse`, or the identity is not an e-mail address), with how many " +
        "records and when; the 500 seen last, newest first. Create the users (POST /users) or set `unknown_identities` to " +
        "`create` to take them."
    ))
  )
  .pipe(managementGroup({ title: "Fleet credentials", description: "Org-level ingest credentials for managed settings" }))
{}

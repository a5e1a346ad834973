import { Config, ConfigProvider, Duration, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { parseAllDocuments } from "yaml"
import { runTool } from "../support/deploy-tools.ts"

const chart = "infra/helm/signal-engine"
const values = [
  "--set",
  "secrets.databaseUrl=postgres://se:pw@db.internal:5432/signal_engine",
  "--set",
  "secrets.clusterSecret=a-cluster-secret-of-the-test",
  "--set",
  "secrets.webhookSecretKey=" + "ab".repeat(32)
]

/** `helm template` of the chart: its manifests by kind. */
const render = async (...args: Array<string>) => {
  const out = await runTool("helm", ["template", "se", chart, ...args])
  expect(out.stderr).toBe("")
  expect(out.code).toBe(0)
  const docs = parseAllDocuments(out.stdout).map((d) => d.toJS()).filter((d) => d !== null)
  const of = (kind: string) => docs.filter((d) => d.kind === kind)
  return { docs, of, text: out.stdout }
}

/** A setting's value as the service reads it (Effect's own Duration parser, as in src/config.ts). */
const duration = (value: string) => Duration.toMillis(Effect.runSync(Config.Duration("V").parse(ConfigProvider.fromEnv({ env: { V: value } }))))

describe("the Helm chart", () => {
  it("passes helm lint", async () => {
    const lint = await runTool("helm", ["lint", "--strict", chart, ...values])
    expect(lint.stdout).toContain("1 chart(s) linted, 0 chart(s) failed")
    expect(lint.code).toBe(0)
  })

  it("renders a Deployment that is ready on /readyz, alive on /healthz, with resources and a grace period longer than the drain", async () => {
    const { of } = await render(...values)
    const [deployment] = of("Deployment")
    const pod = deployment.spec.template.spec
    const [container] = pod.containers
    expect(container.readinessProbe.httpGet).toMatchObject({ path: "/readyz", port: "http" })
    expect(container.livenessProbe.httpGet).toMatchObject({ path: "/healthz", port: "http" })
    expect(container.ports).toEqual([{ name: "http", containerPort: 8080 }, { name: "metrics", containerPort: 9464 }])
    // Prometheus finds the pods' metrics port; the Service (below) exposes only the API.
    const settings = Object.fromEntries(container.env.map((e: { name: string; value?: string }) => [e.name, e.value]))
    expect(settings.METRICS_PORT).toBe("9464")
    expect(settings.LOG_FORMAT).toBe("json")
    expect(deployment.spec.template.metadata.annotations).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/port": "9464" })
    expect(container.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) })
    expect(container.resources.limits.memory).toEqual(expect.any(String))
    expect(pod.securityContext.runAsNonRoot).toBe(true)

    // The drain: the preStop pause, then a request still arriving (HTTP_REQUEST_TIMEOUT), its
    // verdict (INGEST_WAIT) and the idle keep-alive grace (SHUTDOWN_IDLE_GRACE), as the pod sets them.
    const env = new Map<string, any>(container.env.map((e: any) => [e.name, e]))
    const preStopMs = Number(container.lifecycle.preStop.exec.command.at(-1)) * 1000
    const drainMs = preStopMs + duration(env.get("HTTP_REQUEST_TIMEOUT").value) + duration(env.get("INGEST_WAIT").value) +
      duration(env.get("SHUTDOWN_IDLE_GRACE").value)
    expect(drainMs).toBeGreaterThan(30_000)
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(drainMs)
  })

  it("keeps the keys and DATABASE_URL in a Secret the pods read, and gives each pod its own NODE_URL", async () => {
    const { of } = await render(...values, "--set", "kafka.brokers=kafka-0:9092\\,kafka-1:9092")
    const [secret] = of("Secret")
    expect(Object.keys(secret.stringData).sort()).toEqual(["CLUSTER_SECRET", "DATABASE_URL", "WEBHOOK_SECRET_KEY"])
    const container = of("Deployment")[0].spec.template.spec.containers[0]
    const env = new Map<string, any>(container.env.map((e: any) => [e.name, e]))
    for (const key of ["DATABASE_URL", "CLUSTER_SECRET", "WEBHOOK_SECRET_KEY"]) {
      expect(env.get(key)).toEqual({ name: key, valueFrom: { secretKeyRef: { name: secret.metadata.name, key } } })
    }
    // No secret value is written into the Deployment itself.
    expect(JSON.stringify(of("Deployment"))).not.toContain("a-cluster-secret-of-the-test")
    expect(env.get("POD_IP").valueFrom.fieldRef.fieldPath).toBe("status.podIP")
    expect(env.get("NODE_URL").value).toBe("http://$(POD_IP):8080")
    expect(env.get("KAFKA_BROKERS").value).toBe("kafka-0:9092,kafka-1:9092")
    expect(env.get("DEMO_BOOTSTRAP").value).toBe("false")
  })

  it("uses a Secret the operator manages when one is named, and makes none", async () => {
    const { of } = await render("--set", "existingSecret=ops-managed")
    expect(of("Secret")).toEqual([])
    const container = of("Deployment")[0].spec.template.spec.containers[0]
    expect(container.env.find((e: any) => e.name === "DATABASE_URL").valueFrom.secretKeyRef.name).toBe("ops-managed")
  })

  it("refuses to render without DATABASE_URL and the keys", async () => {
    const out = await runTool("helm", ["template", "se", chart])
    expect(out.code).not.toBe(0)
    expect(out.stderr).toContain("secrets.databaseUrl is required")
  })

  it("renders a PodDisruptionBudget and a Service over the Deployment's pods", async () => {
    const { of } = await render(...values)
    const [deployment] = of("Deployment")
    const [pdb] = of("PodDisruptionBudget")
    const [service] = of("Service")
    expect(pdb.spec.maxUnavailable).toBe(1)
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels)
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels)
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels)
    expect(service.spec.ports[0].targetPort).toBe("http")
  })
})

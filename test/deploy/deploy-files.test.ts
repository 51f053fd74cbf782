// The container and Kubernetes files against the server they run (no Docker engine runs here, so
// they are read, not run): every setting they give is one the server knows and accepts, probes
// and healthchecks use the health paths and the ports the settings name, Services point at ports
// the pods expose, the event endpoints reach the events tier with timeouts past the long-poll
// heartbeat, and a pod's grace period covers its shutdown. Each check fails when a file and the
// server disagree.
import { readFileSync } from "node:fs";
import path from "node:path";
import { parse, parseAllDocuments } from "yaml";
import { loadConfig, type Config } from "@chat/config";

const ROOT = path.resolve(__dirname, "../..");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** Paths the server answers for health (packages/http/src/app.ts healthRoutes). */
const READY_PATH = "/health/ready";
const LIVE_PATHS = ["/health", "/health/live"];
/** After SIGTERM: requests in progress get this long (main.ts DRAIN_TIMEOUT_MS). */
const DRAIN_TIMEOUT_SECONDS = 10;

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- free-form manifests

function k8sDocs(): Doc[] {
  const files = (parse(read("infra/k8s/kustomization.yaml")) as { resources: string[] }).resources;
  return files.flatMap((file) => parseAllDocuments(read(`infra/k8s/${file}`)).map((doc) => doc.toJS() as Doc)).filter(Boolean);
}

/** The setting names loadConfig reads given these values, and its result (it throws on a bad value). */
function configWith(env: Record<string, string>): { config: Config; known: Set<string> } {
  const known = new Set<string>();
  const recording = new Proxy(env, {
    get(target, key) {
      if (typeof key === "string") known.add(key);
      return Reflect.get(target, key);
    },
  });
  return { config: loadConfig(recording), known };
}

/** `${NAME:-default}` as compose substitutes it with NAME unset. */
function composeDefault(value: string): string {
  return value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1").replace(/\$\{[A-Z_]+\}/g, "");
}

describe("Kubernetes manifests", () => {
  const docs = k8sDocs();
  const configMap = docs.find((doc) => doc.kind === "ConfigMap")!.data as Record<string, string>;
  const secret = (parse(read("infra/k8s/secret.example.yaml")) as Doc).stringData as Record<string, string>;
  const deployments = docs.filter((doc) => doc.kind === "Deployment");
  const containerOf = (doc: Doc): Doc => doc.spec.template.spec.containers[0];
  const roleOf = (doc: Doc): string => containerOf(doc).env.find((e: Doc) => e.name === "ROLE").value;

  test("every setting they give is one the server reads, with a value it accepts, in every role", () => {
    expect(deployments.map(roleOf).sort()).toEqual(["api", "events", "worker"]);
    for (const deployment of deployments) {
      const env = { ...configMap, ...secret, ...Object.fromEntries(containerOf(deployment).env.map((e: Doc) => [e.name, String(e.value)])) };
      const { config, known } = configWith(env);
      expect({ role: roleOf(deployment), unknown: Object.keys(env).filter((name) => !known.has(name)) }).toEqual({ role: roleOf(deployment), unknown: [] });
      expect(config.role).toBe(roleOf(deployment));
    }
  });

  test("probes use the health paths, on the ports PORT and METRICS_PORT name; the worker on METRICS_PORT", () => {
    const { config } = configWith({ ...configMap, ...secret });
    for (const deployment of deployments) {
      const container = containerOf(deployment);
      const ports = new Map<string, number>(container.ports.map((port: Doc) => [port.name, port.containerPort]));
      const expectedPort = roleOf(deployment) === "worker" ? config.metricsPort : config.port;
      for (const [probe, paths] of [["readinessProbe", [READY_PATH]], ["livenessProbe", LIVE_PATHS]] as const) {
        const { path: probePath, port } = container[probe].httpGet;
        expect({ deployment: deployment.metadata.name, probe, path: paths.includes(probePath), port: ports.get(port) }).toEqual({ deployment: deployment.metadata.name, probe, path: true, port: expectedPort });
      }
      if (roleOf(deployment) !== "worker") expect(ports.get("http")).toBe(config.port);
    }
    // A probe comes from the kubelet, not from inside the pod: the metrics port must not be on loopback.
    expect(config.metricsBindAddress).toBe("0.0.0.0");
  });

  test("a pod's grace period covers its shutdown delay, its preStop pause and the drain", () => {
    const { config } = configWith({ ...configMap, ...secret });
    for (const deployment of deployments) {
      const spec = deployment.spec.template.spec;
      const preStop = Number(containerOf(deployment).lifecycle?.preStop?.exec?.command?.[1] ?? 0);
      expect({ deployment: deployment.metadata.name, covered: spec.terminationGracePeriodSeconds >= preStop + config.shutdownDelaySeconds + DRAIN_TIMEOUT_SECONDS }).toEqual({
        deployment: deployment.metadata.name,
        covered: true,
      });
    }
  });

  test("Services target ports their pods expose; the event endpoints go to the events tier with timeouts past the heartbeat", () => {
    const { config } = configWith({ ...configMap, ...secret });
    const services = docs.filter((doc) => doc.kind === "Service");
    for (const service of services) {
      const component = service.spec.selector["app.kubernetes.io/component"];
      const pod = deployments.find((doc) => doc.spec.template.metadata.labels["app.kubernetes.io/component"] === component);
      expect(pod).toBeDefined();
      const names = containerOf(pod!).ports.map((port: Doc) => port.name);
      for (const port of service.spec.ports) expect(names).toContain(port.targetPort);
    }
    const backends = new Map<string, string>();
    const timeouts = new Map<string, number>();
    for (const ingress of docs.filter((doc) => doc.kind === "Ingress")) {
      for (const rule of ingress.spec.rules) {
        for (const route of rule.http.paths) {
          backends.set(`${rule.host} ${route.path}`, route.backend.service.name);
          timeouts.set(route.backend.service.name, Number(ingress.metadata.annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"] ?? 60));
        }
      }
    }
    const eventsService = services.find((s) => s.spec.selector["app.kubernetes.io/component"] === "events")!.metadata.name;
    const apiService = services.find((s) => s.spec.selector["app.kubernetes.io/component"] === "api")!.metadata.name;
    for (const host of ["chat.example.com", "*.chat.example.com"]) {
      expect([backends.get(`${host} /api/v1/register`), backends.get(`${host} /api/v1/events`), backends.get(`${host} /`)]).toEqual([eventsService, eventsService, apiService]);
      // The web client's /json/ is the same API: its event endpoints are the events tier's too.
      expect([backends.get(`${host} /json/register`), backends.get(`${host} /json/events`)]).toEqual([eventsService, eventsService]);
    }
    expect(timeouts.get(eventsService)).toBeGreaterThan(config.eventHeartbeatSeconds + 5);
  });
});

describe("docker compose and its nginx", () => {
  // `<<:` merge keys, as compose applies them.
  const compose = parse(read("docker/compose.yaml"), { merge: true }) as Doc;
  const nginx = read("infra/nginx/nginx.conf");
  const appEnv = (service: string): Record<string, string> =>
    Object.fromEntries(Object.entries(compose.services[service].environment as Record<string, string>).map(([name, value]) => [name, composeDefault(String(value))]));

  test("every tier's settings are ones the server reads, with values it accepts", () => {
    for (const service of ["api", "events", "worker"]) {
      const env = appEnv(service);
      const { config, known } = configWith(env);
      expect({ service, unknown: Object.keys(env).filter((name) => !known.has(name)) }).toEqual({ service, unknown: [] });
      expect(config.role).toBe(service);
    }
  });

  test("healthchecks ask the health paths on the ports the settings name", () => {
    for (const service of ["api", "events", "worker"]) {
      const { config } = configWith(appEnv(service));
      const check = (compose.services[service].healthcheck.test as string[]).join(" ");
      const [, port, probePath] = /http:\/\/127\.0\.0\.1:(\d+)(\/[a-z/]*)/.exec(check) ?? [];
      expect({ service, port: Number(port), path: [READY_PATH, ...LIVE_PATHS].includes(probePath) }).toEqual({ service, port: service === "worker" ? config.metricsPort : config.port, path: true });
    }
  });

  test("nginx listens where compose publishes it and sends the event endpoints to the events tier, past the heartbeat", () => {
    const { config } = configWith(appEnv("events"));
    const upstream = (name: string) => new RegExp(`upstream ${name} \\{[^}]*server ([a-z]+):(\\d+)`).exec(nginx)!;
    expect(upstream("api_backend").slice(1)).toEqual(["api", String(config.port)]);
    expect(upstream("events_backend").slice(1)).toEqual(["events", String(config.port)]);
    const location = (exact: string) => new RegExp(`location = ${exact.replace(/\//g, "\\/")} \\{([^}]*)\\}`).exec(nginx)![1];
    for (const prefix of ["/api/v1", "/json"]) {
      expect(location(`${prefix}/events`)).toContain("proxy_pass http://events_backend;");
      expect(location(`${prefix}/register`)).toContain("proxy_pass http://$register_backend;");
    }
    expect(nginx).toMatch(/map \$request_method \$register_backend \{\s*POST\s+events_backend;\s*default\s+api_backend;/);
    for (const exact of ["/api/v1/events", "/api/v1/register", "/json/events", "/json/register"]) {
      expect(Number(/proxy_read_timeout (\d+)s/.exec(location(exact))![1])).toBeGreaterThan(config.eventHeartbeatSeconds + 5);
    }
    const listen = Number(/listen (\d+)/.exec(nginx)![1]);
    expect(compose.services.nginx.ports.map(composeDefault)).toContain(`${listen}:${listen}`);
    // The largest file the server takes, inside its multipart form, must reach the server.
    expect(Number(/client_max_body_size (\d+)m;/.exec(nginx)![1]) * 1024 * 1024).toBeGreaterThanOrEqual(config.uploads.maxFileBytes + 64 * 1024);
  });
});

import { randomInt } from 'node:crypto';
import type { KubeObject } from '../types.js';
import { type ControllerLoop, startControllerLoop } from './controllerLoop.js';
import { field, keyOf, splitKey } from './meta.js';
import { isPodReady } from './podStatus.js';
import { ServiceProxy } from './ServiceProxy.js';
import type { Controller, ControllerContext, ExternalService } from './types.js';

/** `<service>.<namespace>.svc[.cluster.local]`: the cluster DNS names of a Service. */
const SERVICE_DNS =
  /^([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\.([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)\.svc(?:\.cluster\.local)?\.?$/;
const SCHEME_AND_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
}

export interface ServiceControllerOptions {
  ctx: ControllerContext;
  /** A Pod's server URL, when it runs one (vLLM Pods). */
  endpointOf: (namespace: string, pod: string) => string | undefined;
  externalServices: readonly ExternalService[];
}

/** The annotation that gives a Service's address on this machine. */
export const TWIN_LOCAL_URL_ANNOTATION = 'twin.vllm-eks-pilot.io/local-url';

/**
 * Services: each gets a loopback proxy balancing round-robin over the Ready Pods its selector picks (kube-proxy's
 * job), a cluster IP in 10.100.0.0/16 (the API server's), and `status.loadBalancer: {}`. `resolve` plays the
 * cluster's DNS for URLs that name a Service.
 */
export class ServiceController implements Controller {
  readonly #proxies = new Map<string, { uid: string; proxy: ServiceProxy }>();
  readonly #options: ServiceControllerOptions;
  readonly #loop: ControllerLoop;

  constructor(options: ServiceControllerOptions) {
    this.#options = options;
    const { store } = options.ctx;
    this.#loop = startControllerLoop({
      name: 'service',
      ctx: options.ctx,
      watches: [
        { kind: 'Service', keys: (e) => [keyOf(e.object.metadata)] },
        {
          kind: 'Pod',
          keys: (e) =>
            store.list('Service', { namespace: e.object.metadata.namespace as string }).map((s) => keyOf(s.metadata)),
        },
      ],
      resyncKeys: () => [...new Set([...store.list('Service').map((s) => keyOf(s.metadata)), ...this.#proxies.keys()])],
      reconcile: (key) => this.#reconcile(key),
    });
  }

  /** The proxy URL of a Service. */
  serviceUrl(namespace: string, name: string): string | undefined {
    return this.#proxies.get(`${namespace}/${name}`)?.proxy.url;
  }

  /** The ready endpoints a Service's proxy balances over. */
  endpoints(namespace: string, name: string): readonly string[] {
    return this.#proxies.get(`${namespace}/${name}`)?.proxy.endpoints ?? [];
  }

  /** Maps `http://<svc>.<ns>.svc[.cluster.local][:port]/path` to the Service's proxy; other URLs pass unchanged. */
  resolve(url: string): string {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return url;
    }
    const match = SERVICE_DNS.exec(parsed.hostname.toLowerCase());
    if (!match) return url;
    const [, name, namespace] = match as unknown as [string, string, string];
    const external = this.#options.externalServices.find((s) => s.namespace === namespace && s.name === name);
    if (external) return url.replace(SCHEME_AND_AUTHORITY, external.url.replace(/\/$/, ''));
    const proxy = this.#proxies.get(`${namespace}/${name}`)?.proxy;
    const service = this.#options.ctx.store.get('Service', namespace, name);
    if (!proxy || !service) return url;
    // A port the Service does not expose is refused on a real cluster: leave the URL to fail.
    const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
    const ports = field<ServicePort[]>(service, 'spec', 'ports') ?? [];
    if (ports.length > 0 && !ports.some((p) => p.port === port)) return url;
    return url.replace(SCHEME_AND_AUTHORITY, proxy.url);
  }

  async stop(): Promise<void> {
    await this.#loop.stop();
    for (const { proxy } of this.#proxies.values()) await proxy.close();
    this.#proxies.clear();
  }

  async #reconcile(key: string): Promise<void> {
    const { store, log } = this.#options.ctx;
    const { namespace, name } = splitKey(key);
    const service = store.get('Service', namespace, name);
    let entry = this.#proxies.get(key);
    if (entry && (!service || service.metadata.uid !== entry.uid)) {
      this.#proxies.delete(key);
      await entry.proxy.close();
      log(`service ${key}: proxy ${entry.proxy.url} closed (Service ${service ? 'replaced' : 'deleted'})`);
      entry = undefined;
    }
    if (!service) return;
    if (!entry) {
      entry = { uid: service.metadata.uid as string, proxy: await ServiceProxy.start(key) };
      this.#proxies.set(key, entry);
      log(`service ${key}: proxy listening at ${entry.proxy.url}`);
    }
    this.#assignClusterIp(service);
    this.#annotateLocalUrl(service.metadata.namespace as string, name, entry.proxy.url);
    if (service.status === undefined) {
      const fresh = store.get('Service', namespace, name);
      if (fresh) store.update({ ...fresh, status: { loadBalancer: {} } }, { subresource: 'status' });
    }
    const endpoints = this.#readyEndpoints(service);
    const before = entry.proxy.endpoints;
    if (before.length !== endpoints.length || before.some((e, i) => e !== endpoints[i])) {
      entry.proxy.setEndpoints(endpoints);
      log(
        `service ${key}: ${endpoints.length} ready endpoint(s)${endpoints.length ? ` (${endpoints.join(', ')})` : ''}`,
      );
    }
  }

  /**
   * Tells users where the Service answers on this machine (what `kubectl port-forward` would give them): the
   * annotation TWIN_LOCAL_URL_ANNOTATION, readable with `kubectl get svc NAME -o yaml`.
   */
  #annotateLocalUrl(namespace: string, name: string, url: string): void {
    const fresh = this.#options.ctx.store.get('Service', namespace, name);
    if (!fresh || fresh.metadata.annotations?.[TWIN_LOCAL_URL_ANNOTATION] === url) return;
    this.#options.ctx.store.update({
      ...fresh,
      metadata: { ...fresh.metadata, annotations: { ...fresh.metadata.annotations, [TWIN_LOCAL_URL_ANNOTATION]: url } },
    });
  }

  /** The API server gives every non-headless Service a cluster IP on create; the twin's store does not. */
  #assignClusterIp(service: KubeObject): void {
    const { store, log } = this.#options.ctx;
    const current = field<string>(service, 'spec', 'clusterIP');
    if ((current !== undefined && current !== '') || field(service, 'spec', 'type') === 'ExternalName') return;
    const taken = new Set(store.list('Service').map((s) => field<string>(s, 'spec', 'clusterIP')));
    let ip: string;
    do ip = `10.100.${randomInt(0, 256)}.${randomInt(1, 255)}`;
    while (taken.has(ip));
    const fresh = store.get('Service', service.metadata.namespace, service.metadata.name);
    if (!fresh) return;
    store.update({ ...fresh, spec: { ...(fresh.spec as object), clusterIP: ip, clusterIPs: [ip] } });
    log(`service ${keyOf(service.metadata)}: cluster IP ${ip}`);
  }

  #readyEndpoints(service: KubeObject): string[] {
    const selector = field<Record<string, string>>(service, 'spec', 'selector');
    // A Service without a selector has manually managed Endpoints, which the twin does not serve.
    if (!selector || Object.keys(selector).length === 0) return [];
    const namespace = service.metadata.namespace as string;
    return this.#options.ctx.store
      .list('Pod', { namespace, selector: { matchLabels: selector } })
      .filter(isPodReady)
      .map((pod) => this.#options.endpointOf(namespace, pod.metadata.name))
      .filter((url): url is string => url !== undefined);
  }
}

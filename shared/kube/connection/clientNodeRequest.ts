/**
 * One request the way @kubernetes/client-node 1.4's generated API classes (`dist/gen/apis/*Api.js` behind
 * `AppsV1Api`, `CoreV1Api`, ...) make it, through the same machinery (`Configuration`: base server, auth methods,
 * middleware, HTTP library), without those classes: they pull every API group and every model into a bundle
 * (about 0.8 MB minified). The request on the wire and the errors are theirs: `Accept: application/json,
 * *\/*;q=0.8`, the query parameters in the order given, a JSON body; a non-2xx answer rejects with client-node's
 * `ApiException` (401 without its body, as the generated code does), which `toKubeError` maps.
 */
import { ApiException } from '@kubernetes/client-node/dist/gen/apis/exception.js';
import type { Configuration } from '@kubernetes/client-node/dist/gen/configuration.js';
import type { HttpMethod, RequestContext, ResponseContext } from '@kubernetes/client-node/dist/gen/http/http.js';

/** The `Accept` header of every generated API request. */
export const CLIENT_NODE_ACCEPT = 'application/json, */*;q=0.8';

export interface ClientNodeRequest {
  method: HttpMethod;
  /** The path under the server's URL, each parameter already encoded (`encodeURIComponent`, as the generator does). */
  path: string;
  /** Query parameters, sent in this order; undefined ones are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** A body sent as JSON text under this `Content-Type`. */
  body?: { contentType: string; value: unknown };
}

/**
 * Sends `request` through `configuration` and resolves with the answer's body as the generated API reads it: the
 * text for `text/*`, the parsed JSON for `application/json` (and `+json` types); any other or no Content-Type
 * throws, as client-node's ObjectSerializer.parse does. Rejects with `ApiException` for a non-2xx answer.
 */
export async function sendClientNodeRequest(
  configuration: Configuration,
  request: ClientNodeRequest,
): Promise<unknown> {
  const context = configuration.baseServer.makeRequestContext(request.path, request.method);
  context.setHeaderParam('Accept', CLIENT_NODE_ACCEPT);
  for (const [name, value] of Object.entries(request.query ?? {}))
    if (value !== undefined) context.setQueryParam(name, String(value));
  if (request.body !== undefined) {
    context.setHeaderParam('Content-Type', request.body.contentType);
    context.setBody(JSON.stringify(request.body.value));
  }
  // The generated code applies the `BearerToken` method, then `default` (a KubeConfig, or connectToEks's method).
  await configuration.authMethods.BearerToken?.applySecurityAuthentication(context);
  await configuration.authMethods.default?.applySecurityAuthentication(context);
  let prepared: RequestContext = context;
  for (const middleware of configuration.middleware) prepared = await middleware.pre(prepared).toPromise();
  let response: ResponseContext = await configuration.httpApi.send(prepared).toPromise();
  for (const middleware of [...configuration.middleware].reverse())
    response = await middleware.post(response).toPromise();
  return readResponse(response);
}

async function readResponse(response: ResponseContext): Promise<unknown> {
  const code = response.httpStatusCode;
  if (code >= 200 && code <= 299) return parseBody(await response.body.text(), response.headers['content-type']);
  if (code === 401) throw new ApiException(code, 'Unauthorized', undefined, response.headers);
  throw new ApiException(code, 'Unknown API Status Code!', await response.getBodyAsAny(), response.headers);
}

/** client-node's ObjectSerializer.normalizeMediaType + parse (dist/gen/models/ObjectSerializer.js). */
export function parseBody(text: string, contentTypeHeader: string | undefined): unknown {
  if (contentTypeHeader === undefined) throw new Error('Cannot parse content. No Content-Type defined.');
  const mediaType = (contentTypeHeader.split(';')[0] ?? '').trim().toLowerCase();
  const [type = '', subtype = ''] = mediaType.split('/');
  if (type === 'text') return text;
  if (type === 'application' && subtype.split('+').includes('json')) return JSON.parse(text) as unknown;
  throw new Error(`The mediaType ${mediaType} is not supported by ObjectSerializer.parse.`);
}

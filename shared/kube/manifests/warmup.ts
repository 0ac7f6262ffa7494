/**
 * Warmup automation (monitoring guide, "GPU warmup"): the first requests after start are several times slower (CUDA
 * graph capture, kernel compilation), so a replica sends itself N sequential completions before it reports Ready.
 * The Pod template carries it three ways: an annotation with N (what preflight and the twin read), a postStart hook
 * that runs the requests and touches a marker file, and an exec readiness probe that needs the marker and /health.
 */

/** The Pod annotation that says how many warmup requests a replica sends itself before Ready. */
export const WARMUP_ANNOTATION = 'vllm-eks-pilot.io/warmup-requests';
/** The marker file the postStart hook touches once warmup is done; the readiness probe requires it. */
export const WARMUP_DONE_FILE = '/tmp/vllm-warm';
/** The guide's count: "pre-process 100 warmup requests before the health check". */
export const DEFAULT_WARMUP_REQUESTS = 100;
/**
 * One warmup completion: short, so 100 of them take seconds. Each still runs a full prefill and a decode step,
 * which is what triggers the lazy compilation the warmup is for.
 */
export const WARMUP_REQUEST = { prompt: 'Warm up.', maxTokens: 1 } as const;

/** Single-quotes a value for POSIX sh. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The postStart hook's shell script: wait for /health (the model loads for minutes), send `requests` sequential
 * completions for `model`, then touch the marker. Uses python3, which the vLLM image has (it has no curl).
 */
export function warmupScript(options: { requests: number; port: number; model: string }): string {
  const body = JSON.stringify({
    model: options.model,
    prompt: WARMUP_REQUEST.prompt,
    max_tokens: WARMUP_REQUEST.maxTokens,
  });
  const python = [
    'import sys, time, urllib.request as u',
    `base = "http://127.0.0.1:${options.port}"`,
    'while True:',
    '    try:',
    '        if u.urlopen(base + "/health", timeout=5).status == 200: break',
    '    except Exception: pass',
    '    time.sleep(2)',
    `body = ${JSON.stringify(body)}.encode()`,
    `for _ in range(${options.requests}):`,
    '    u.urlopen(u.Request(base + "/v1/completions", data=body, headers={"Content-Type": "application/json"}), timeout=120).read()',
  ].join('\n');
  return `python3 -c ${shellQuote(python)} && touch ${WARMUP_DONE_FILE}`;
}

/** The readiness probe's shell command: ready only after warmup and while /health answers 200. */
export function warmupReadinessScript(port: number): string {
  const python = `import urllib.request as u; u.urlopen("http://127.0.0.1:${port}/health", timeout=4)`;
  return `test -f ${WARMUP_DONE_FILE} && python3 -c ${shellQuote(python)}`;
}
